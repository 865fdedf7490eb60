//! Buffer heads of page-cache pages (fs/buffer.c): which pages carry one per block, per era,
//! and that they go with the page. A real 6.18 kernel (ext4) added 65,520 `buffer_head`
//! objects for a 256 MiB file written, none for a 128 MiB file read cold (docs/slab.md).

mod common;
use common::{nth_value, run_on};

/// Active objects of `buffer_head` in the nth /proc/slabinfo line for it.
fn bh_after(t: &str, nth: usize) -> u64 {
    nth_value(t, "buffer_head ", nth)
}

/// ext4 on 6.x: a written page gets its buffer head (write_begin), a page read cold does not
/// (mpage_readahead), and they go with the pages (drop_caches, unlink).
#[test]
fn written_pages_carry_buffer_heads_and_pages_read_cold_do_not() {
    let script = "grep ^buffer_head /proc/slabinfo
dd if=/dev/zero of=/root/f bs=1M count=256 status=none
grep ^buffer_head /proc/slabinfo
sync
echo 1 > /proc/sys/vm/drop_caches
grep ^buffer_head /proc/slabinfo
cat /root/f > /dev/null
grep ^buffer_head /proc/slabinfo
rm /root/f
grep ^buffer_head /proc/slabinfo
";
    // 2.6.39 on seed 004's machine, whose root is ext3 (the era's filesystem: it writes
    // through buffer heads as ext4 does), at 2 GB.
    for (era, machine, sets) in [("linux-6.x", "default", vec![]), ("linux-5.4", "default", vec!["kernel=linux-5.4"]), ("linux-2.6.39", "seed-004", vec!["ram=2G"])] {
        let r = run_on(script, machine, &sets);
        let t = &r.transcript;
        let base = bh_after(t, 0);
        assert_eq!(bh_after(t, 1), base + 65536, "{era}: one per page written:\n{t}");
        assert_eq!(bh_after(t, 2), base, "{era}: dropped with the pages:\n{t}");
        assert_eq!(bh_after(t, 3), base, "{era}: none for a cold read:\n{t}");
        assert_eq!(bh_after(t, 4), base, "{era}:\n{t}");
    }
}

/// 2.4: block_read_full_page gives every page a block filesystem reads its buffer heads.
#[test]
fn on_2_4_a_page_read_carries_buffer_heads_too() {
    let r = run_on("dd if=/dev/zero of=/root/f bs=1M count=8 status=none\nreboot\ngrep ^buffer_head /proc/slabinfo\ncat /root/f > /dev/null\ngrep ^buffer_head /proc/slabinfo\n", "seed-002", &[]);
    let t = &r.transcript;
    assert_eq!(bh_after(t, 1), bh_after(t, 0) + 2048, "{t}");
}

/// Metadata read through the buffer cache (directory and inode-table blocks): one buffer
/// head per block-device page the filesystem used, the pages counted in Buffers.
#[test]
fn metadata_blocks_carry_buffer_heads() {
    let machine = format!("{}/../../examples/file-tree-6x.toml", env!("CARGO_MANIFEST_DIR"));
    let r = run_on(
        "grep ^buffer_head /proc/slabinfo\ngrep Buffers /proc/meminfo\ndu -s /export\ngrep ^buffer_head /proc/slabinfo\ngrep Buffers /proc/meminfo\n",
        &machine,
        &[],
    );
    let t = &r.transcript;
    let added = bh_after(t, 1) - bh_after(t, 0);
    let pages = (nth_value(t, "Buffers:", 1) - nth_value(t, "Buffers:", 0)) / 4;
    assert!(pages > 10_000, "{t}");
    // Every block du's inode and directory reads used; a block of ext4's inode-table
    // readahead window that no inode read touched has none yet.
    assert!(added <= pages && added * 100 >= pages * 99, "{added} buffer heads for {pages} pages:\n{t}");
}

/// 6.x charges a buffer head to the cgroup of the page it belongs to (__GFP_ACCOUNT), and
/// the charge stays within the cgroup's limit (it reclaims first).
#[test]
fn buffer_heads_are_charged_to_the_pages_cgroup_on_6x() {
    let script = "mkdir /sys/fs/cgroup/memory/w
echo 64M > /sys/fs/cgroup/memory/w/memory.limit_in_bytes
cgexec -g memory:w dd if=/dev/zero of=/root/f bs=1M count=16 status=none
cat /sys/fs/cgroup/memory/w/memory.kmem.usage_in_bytes
grep -E '^slab_reclaimable' /sys/fs/cgroup/memory/w/memory.stat
cgexec -g memory:w dd if=/dev/zero of=/root/g bs=1M count=256 status=none
cat /sys/fs/cgroup/memory/w/memory.max_usage_in_bytes
";
    let r = run_on(script, "default", &["cgroup=v1"]);
    let t = &r.transcript;
    let kmem: u64 = t.lines().find(|l| l.chars().all(|c| c.is_ascii_digit()) && !l.is_empty()).unwrap().parse().unwrap();
    // 4096 objects of 104 bytes and the obj_cgroup pointer: about 112 pages; and the
    // file's 65 page-cache tree nodes (576 bytes, SLUB's free pointer, the pointer).
    let bh_and_nodes = 4096 * 112 + 65 * 584;
    assert!((bh_and_nodes..=bh_and_nodes + 3 * 4096).contains(&kmem), "kmem {kmem}:\n{t}");
    let max: u64 = t.lines().last().unwrap().parse().unwrap();
    assert!(max <= 64 << 20, "the limit holds: {max}\n{t}");
}
