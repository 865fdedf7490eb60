//! The nodes of page-cache trees as `radix_tree_node` slab objects (lib/radix-tree.c,
//! lib/xarray.c): one per 64 cached indices and one per 64 nodes above, none for a file
//! whose only page is its first. A real 6.18 kernel added no object for 5,000 one-page files
//! read, 4,908-4,914 for 5,000 two-page files, and charged them to the reader's cgroup
//! (docs/slab.md, validation/manual/radix-tree-6.18/).

mod common;
use common::{nth_value, run_on};

/// The /proc/slabinfo line of the cache (its first number: active objects).
const NODES: &str = "radix_tree_node ";

/// A 256 MiB file: 1,024 leaves, 16 nodes above them and a root; 200 two-page files one
/// node each; 200 one-page files none; all of them go with the files.
#[test]
fn page_cache_trees_hold_one_node_per_64_pages_and_none_for_a_lone_first_page() {
    let script = "grep ^radix_tree_node /proc/slabinfo
dd if=/dev/zero of=/root/big bs=1M count=256 status=none
grep ^radix_tree_node /proc/slabinfo
for i in $(seq 1 200); do dd if=/dev/zero of=/root/two$i bs=8k count=1 status=none; done
grep ^radix_tree_node /proc/slabinfo
for i in $(seq 1 200); do dd if=/dev/zero of=/root/one$i bs=4k count=1 status=none; done
grep ^radix_tree_node /proc/slabinfo
rm /root/big
for i in $(seq 1 200); do rm /root/two$i /root/one$i; done
grep ^radix_tree_node /proc/slabinfo
";
    for (era, machine, sets) in [("linux-6.x", "default", vec![]), ("linux-5.4", "default", vec!["kernel=linux-5.4"]), ("linux-2.6.39", "seed-004", vec!["ram=2G"])] {
        let r = run_on(script, machine, &sets);
        let t = &r.transcript;
        let base = nth_value(t, NODES, 0);
        assert_eq!(nth_value(t, NODES, 1), base + 1024 + 16 + 1, "{era}:\n{t}");
        assert_eq!(nth_value(t, NODES, 2), base + 1041 + 200, "{era}: one per two-page file:\n{t}");
        assert_eq!(nth_value(t, NODES, 3), base + 1041 + 200, "{era}: none for a one-page file:\n{t}");
        assert_eq!(nth_value(t, NODES, 4), base, "{era}: freed with the files:\n{t}");
    }
}

/// 2.4 finds cached pages through a hash table: there is no radix_tree_node cache.
#[test]
fn linux_2_4_has_no_radix_tree_node_cache() {
    let r = run_on("dd if=/dev/zero of=/root/f bs=1M count=8 status=none\ncat /proc/slabinfo\n", "seed-002", &[]);
    assert!(!r.transcript.contains("radix_tree_node"), "{}", r.transcript);
}

/// 6.x charges the nodes to the cgroup that caches the pages (XA_FLAGS_ACCOUNT): 500
/// two-page files read cold in a cgroup add 500 nodes to its kernel memory.
#[test]
fn nodes_are_charged_to_the_readers_cgroup_on_6x() {
    let script = "for i in $(seq 1 500); do dd if=/dev/zero of=/root/two$i bs=8k count=1 status=none; done
sync
echo 1 > /proc/sys/vm/drop_caches
mkdir /sys/fs/cgroup/memory/r
cat /sys/fs/cgroup/memory/r/memory.kmem.usage_in_bytes
for i in $(seq 1 500); do cgexec -g memory:r cat /root/two$i > /dev/null; done
cat /sys/fs/cgroup/memory/r/memory.kmem.usage_in_bytes
";
    let r = run_on(script, "default", &["cgroup=v1"]);
    let t = &r.transcript;
    let v: Vec<u64> = t.lines().filter(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_digit())).map(|l| l.parse().unwrap()).collect();
    assert_eq!(v.len(), 2, "{t}");
    // 576 bytes, SLUB's free pointer and the obj_cgroup pointer each, in whole pages (the
    // real 6.18: 2,888-2,892 kB for 4,908-4,914 nodes, 589 bytes a node).
    let want = 500 * 584;
    assert!((want..=want + 2 * 4096).contains(&(v[1] - v[0])), "kmem {} -> {}:\n{t}", v[0], v[1]);
}
