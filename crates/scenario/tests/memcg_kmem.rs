//! Kernel memory in memory cgroups (6.x): the dentries and inodes a task caches are charged
//! to its cgroup object by object (obj_cgroup_charge), sit on the cgroup's own LRU lists
//! (memcg-aware list_lru), and the cgroup's reclaim frees them. The expectations come from
//! the objects' sizes (/proc/slabinfo's objsize plus the 8-byte obj_cgroup pointer) and the
//! tree's layout; a real 6.18 kernel's figures for the same `du` are in docs/memcg.md.

mod common;
use common::{keyed, nth_value, number, output_of, outputs_of};

const TREE_FILES: u64 = 200_000;
/// Directories of a 30-ary tree over 200,000 files in leaves of 30: 6667 + 223 + 8 + 1;
/// the top one (/export) is the boot's, not the cgroup's.
const TREE_DIRS_CHARGED: u64 = 6667 + 223 + 8;

fn machine() -> String {
    format!("{}/../../examples/file-tree-6x.toml", env!("CARGO_MANIFEST_DIR"))
}

fn run(text: &str, sets: &[&str]) -> String {
    common::run_on(text, &machine(), sets).transcript
}

/// objsize of a cache in /proc/slabinfo (the object's slot).
fn objsize(t: &str, cache: &str) -> u64 {
    let l = t.lines().find(|l| l.starts_with(&format!("{cache} "))).unwrap_or_else(|| panic!("no {cache} in /proc/slabinfo"));
    l.split_whitespace().nth(3).unwrap().parse().unwrap()
}

fn meminfo_kb(lines: &[&str], field: &str) -> u64 {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .map(|v| v.trim().trim_end_matches("kB").trim().parse().unwrap())
        .unwrap_or_else(|| panic!("no {field} in {lines:?}"))
}

const DU: &str = "mkdir /sys/fs/cgroup/memory/du
LIMIT
cat /proc/slabinfo
grep -E '^slabs_scanned' /proc/vmstat
cgexec -g memory:du du -s /export
grep ^radix_tree_node /proc/slabinfo
cat /sys/fs/cgroup/memory/du/memory.usage_in_bytes
cat /sys/fs/cgroup/memory/du/memory.max_usage_in_bytes
cat /sys/fs/cgroup/memory/du/memory.kmem.usage_in_bytes
cat /sys/fs/cgroup/memory/du/memory.stat
grep -E '^slabs_scanned' /proc/vmstat
grep -E '^(Slab|SReclaimable)' /proc/meminfo
";

/// Usage is the pages counted in memory.stat plus what the per-CPU charge stocks hold: at
/// most a batch (MEMCG_CHARGE_BATCH, 64 pages on 6.x) on each of the machine's 2 CPUs.
fn assert_stock(usage: u64, counted: u64, stat: &[&str]) {
    assert!(usage >= counted && usage - counted <= 2 * 64 * 4096, "usage {usage}, pages counted {counted}: {stat:?}");
}

fn du(limit: Option<&str>) -> String {
    let set = limit.map(|l| format!("echo {l} > /sys/fs/cgroup/memory/du/memory.limit_in_bytes")).unwrap_or_default();
    run(&DU.replace("LIMIT", &set), &[])
}

#[test]
fn du_charges_every_dentry_and_inode_it_caches_to_its_cgroup() {
    let t = du(None);
    let dentry = objsize(&t, "dentry") + 8;
    let inode = objsize(&t, "ext4_inode_cache") + 8;
    let objects = TREE_FILES + TREE_DIRS_CHARGED;
    let stat = output_of(&t, "cat /sys/fs/cgroup/memory/du/memory.stat");
    // Each directory and inode-table block du read has its buffer head (104 bytes and the
    // obj_cgroup pointer), charged with the page; a block of ext4's inode-table readahead
    // window no inode read touched has none yet.
    let blocks = keyed(&stat, "cache") / 4096;
    let (bh_min, bh_max) = (blocks * 99 / 100 * 112, blocks * 112);
    // And the nodes of the block device's page-cache tree that its new pages needed (an
    // object of radix_tree_node each, charged to the task that inserted the page).
    let nodes = (nth_value(&t, "radix_tree_node ", 1) - nth_value(&t, "radix_tree_node ", 0)) * (objsize(&t, "radix_tree_node") + 8);
    assert!(nodes > 0);
    let expected = objects * (dentry + inode) + nodes;
    let kmem = number(&t, "cat /sys/fs/cgroup/memory/du/memory.kmem.usage_in_bytes");
    // Charged by the page: what the objects need, rounded up to a page.
    assert!(kmem >= expected + bh_min && kmem < expected + bh_max + 4096, "kmem {kmem}, objects need {expected} ({objects} x ({dentry} + {inode}) + {nodes} of tree nodes), buffer heads {bh_min}..{bh_max}");
    // memory.usage_in_bytes is the page cache du read (directory and inode-table blocks,
    // charged to it as well) plus the kernel memory, plus what the CPUs' charge stocks hold.
    let usage = number(&t, "cat /sys/fs/cgroup/memory/du/memory.usage_in_bytes");
    assert_stock(usage, keyed(&stat, "cache") + kmem, &stat);
    // The blocks: one directory block per directory, 256-byte inodes 16 to a block.
    let blocks = (TREE_DIRS_CHARGED + 1) + (objects + 1).div_ceil(16);
    let cache_pages = keyed(&stat, "cache") / 4096;
    assert!(cache_pages >= blocks && cache_pages < blocks + blocks / 20, "cache {cache_pages} pages for {blocks} metadata blocks");
    // No limit, no reclaim.
    let scanned = output_of(&t, "grep -E '^slabs_scanned' /proc/vmstat");
    assert_eq!(scanned[0], scanned_after(&t)[0], "{t}");
}

fn scanned_after(t: &str) -> Vec<&str> {
    // The second grep of slabs_scanned.
    let prompt = "# grep -E '^slabs_scanned' /proc/vmstat";
    let i = t.match_indices(prompt).nth(1).expect("two greps").0;
    t[i..].lines().skip(1).take_while(|l| !l.starts_with("# ")).collect()
}

fn slabs_scanned(lines: &[&str]) -> u64 {
    lines[0].split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn at_its_limit_the_cgroup_reclaims_its_own_dentries_and_inodes() {
    let free = du(None);
    let t = du(Some("64M"));
    let limit = 64 << 20;
    let du_line = |t: &str| output_of(t, "cgexec -g memory:du du -s /export")[0].to_string();
    assert_eq!(du_line(&t), du_line(&free), "du sees the same tree");
    let usage = number(&t, "cat /sys/fs/cgroup/memory/du/memory.usage_in_bytes");
    let peak = number(&t, "cat /sys/fs/cgroup/memory/du/memory.max_usage_in_bytes");
    let kmem = number(&t, "cat /sys/fs/cgroup/memory/du/memory.kmem.usage_in_bytes");
    assert!(usage <= limit && peak == limit, "usage {usage}, peak {peak}");
    // Without the limit du's objects need 3.4 times the limit: the cgroup's reclaim had to
    // free most of them, through the super block's shrinker on the cgroup's own lists.
    let before = slabs_scanned(&output_of(&t, "grep -E '^slabs_scanned' /proc/vmstat"));
    let after = slabs_scanned(&scanned_after(&t));
    let free_kmem = number(&free, "cat /sys/fs/cgroup/memory/du/memory.kmem.usage_in_bytes");
    assert!(free_kmem > 3 * limit, "{free_kmem}");
    assert!(after - before > (free_kmem - kmem) / 2000, "slabs_scanned {before} -> {after}");
    // What stays charged is mostly objects (they are 77% of what du charges without a
    // limit), not only page cache: reclaim in the cgroup balances the two.
    assert!(kmem > limit / 4 && kmem < limit, "kmem {kmem} of a {limit} limit");
    // The cgroup's reclaim freed its own objects: the system's Slab grew by about what the
    // cgroup holds, not by what du cached in total.
    let slab = |t: &str| meminfo_kb(&output_of(t, "grep -E '^(Slab|SReclaimable)' /proc/meminfo"), "Slab") * 1024;
    assert!(slab(&t) < slab(&free) / 3, "Slab {} with the limit, {} without", slab(&t), slab(&free));
}

#[test]
fn v2_memory_stat_shows_the_slab_and_kernel_memory_of_the_cgroup() {
    let t = run(
        "mkdir /sys/fs/cgroup/du
cgexec -g memory:du du -s /export
cat /sys/fs/cgroup/du/memory.current
cat /sys/fs/cgroup/du/memory.stat
",
        &["cgroup=v2"],
    );
    let stat = output_of(&t, "cat /sys/fs/cgroup/du/memory.stat");
    let current = number(&t, "cat /sys/fs/cgroup/du/memory.current");
    let (kernel, slab, recl, unrecl) = (keyed(&stat, "kernel"), keyed(&stat, "slab"), keyed(&stat, "slab_reclaimable"), keyed(&stat, "slab_unreclaimable"));
    assert_stock(current, keyed(&stat, "file") + kernel, &stat);
    assert_eq!((slab, unrecl), (recl, 0), "dentries and inodes are reclaimable slab");
    // `kernel` is whole pages, `slab` the objects' bytes.
    assert!(kernel >= slab && kernel < slab + 4096, "kernel {kernel}, slab {slab}");
    assert!(slab > 200 * (TREE_FILES + TREE_DIRS_CHARGED), "{slab}");
}

#[test]
fn a_removed_cgroups_dentries_stay_cached_as_its_parents() {
    let t = run(
        "mkdir /sys/fs/cgroup/memory/du
cgexec -g memory:du du -s /export
grep -E '^Slab' /proc/meminfo
rmdir /sys/fs/cgroup/memory/du
grep -E '^Slab:' /proc/meminfo
mkdir /sys/fs/cgroup/memory/again
cat /sys/fs/cgroup/memory/again/memory.kmem.usage_in_bytes
echo 2 > /proc/sys/vm/drop_caches
grep -E '^Slab:' /proc/meminfo
",
        &[],
    );
    let slab = |cmd: &str| meminfo_kb(&output_of(&t, cmd), "Slab");
    let cached = slab("grep -E '^Slab' /proc/meminfo");
    assert_eq!(slab("grep -E '^Slab:' /proc/meminfo"), cached, "rmdir frees no object (memcg_reparent_list_lrus)");
    // A cgroup made after it (its id reused) starts with nothing charged.
    assert_eq!(number(&t, "cat /sys/fs/cgroup/memory/again/memory.kmem.usage_in_bytes"), 0);
    // The reparented objects are the root's now, and reclaimable there.
    let dropped = t.lines().filter(|l| l.starts_with("Slab:")).last().unwrap();
    let after: u64 = dropped.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(after < cached / 4, "Slab {cached} kB -> {after} kB after drop_caches 2");
}

#[test]
fn on_5x_a_cgroup_gets_its_own_copies_of_the_caches_charged_by_the_slab_page() {
    // 5.4 and 5.8 (memcg_kmem_get_cache, memcg_charge_slab): du's dentries and inodes go to
    // the cgroup's copies "dentry(N:du)" and "ext4_inode_cache(N:du)" (made on its first
    // object, which itself still comes from the root cache); the cgroup is charged their
    // slab pages, used or not; /proc/slabinfo adds the copies to the root caches' lines.
    // rmdir gives the copies to the parent with their objects; a new cgroup of the same
    // name gets new copies for what it caches next.
    for kernel in ["linux-5.8", "linux-5.4"] {
        let t = run(
            "mkdir /sys/fs/cgroup/memory/du
cgexec -g memory:du du -s /export
cat /sys/fs/cgroup/memory/du/memory.usage_in_bytes
cat /sys/fs/cgroup/memory/du/memory.kmem.usage_in_bytes
head -1 /sys/fs/cgroup/memory/du/memory.kmem.slabinfo
grep -E '^(dentry|ext4_inode_cache)[(]' /sys/fs/cgroup/memory/du/memory.kmem.slabinfo
cat /sys/fs/cgroup/memory/du/memory.stat
grep -E '^(dentry|ext4_inode_cache) ' /proc/slabinfo
rmdir /sys/fs/cgroup/memory/du
grep -E '^(dentry|ext4_inode_cache) ' /proc/slabinfo
mkdir /sys/fs/cgroup/memory/du
wc -c < /sys/fs/cgroup/memory/du/memory.kmem.slabinfo
echo 2 > /proc/sys/vm/drop_caches
cgexec -g memory:du du -s /export/d1
grep -E '^(dentry|ext4_inode_cache)[(]' /sys/fs/cgroup/memory/du/memory.kmem.slabinfo
",
            &[&format!("kernel={kernel}")],
        );
        assert_eq!(output_of(&t, "head -1 /sys/fs/cgroup/memory/du/memory.kmem.slabinfo"), ["slabinfo - version: 2.1"], "{kernel}");
        let copies = outputs_of(&t, "grep -E '^(dentry|ext4_inode_cache)[(]' /sys/fs/cgroup/memory/du/memory.kmem.slabinfo");
        let first = &copies[0];
        let line = |lines: &[&str], name: &str| -> Vec<u64> {
            let l = lines.iter().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{kernel}: no {name} in {lines:?}"));
            l.split_whitespace().skip(1).filter_map(|w| w.parse().ok()).collect()
        };
        let (d, i) = (line(first, "dentry("), line(first, "ext4_inode_cache("));
        // One object of each went to the root cache while the copy was being made.
        let objects = TREE_FILES + TREE_DIRS_CHARGED;
        assert_eq!(d[0], objects - 1, "{kernel}: dentries in the copy");
        assert_eq!(i[0], objects - 1, "{kernel}: inodes in the copy");
        // Charged by the slab page: num_slabs x pagesperslab of both copies.
        let pages = d[8] * d[4] + i[8] * i[4];
        let kmem = number(&t, "cat /sys/fs/cgroup/memory/du/memory.kmem.usage_in_bytes");
        assert_eq!(kmem, pages * 4096, "{kernel}");
        let stat = output_of(&t, "cat /sys/fs/cgroup/memory/du/memory.stat");
        assert_stock(number(&t, "cat /sys/fs/cgroup/memory/du/memory.usage_in_bytes"), keyed(&stat, "cache") + kmem, &stat);
        // /proc/slabinfo lists root caches only, the copies' objects included.
        let slabinfo = outputs_of(&t, "grep -E '^(dentry|ext4_inode_cache) ' /proc/slabinfo");
        assert!(slabinfo[0].iter().all(|l| !l.contains('(')), "{slabinfo:?}");
        assert!(line(&slabinfo[0], "dentry ")[0] > d[0], "{kernel}: {slabinfo:?}");
        // rmdir: the objects stay cached.
        assert_eq!(slabinfo[0], slabinfo[1], "{kernel}");
        // The new cgroup starts without copies and gets new ones (a later serial number).
        assert_eq!(number(&t, "wc -c < /sys/fs/cgroup/memory/du/memory.kmem.slabinfo"), 0, "{kernel}");
        let name = |lines: &[&str]| lines.iter().find(|l| l.starts_with("dentry(")).map(|l| l.split_whitespace().next().unwrap().to_string()).unwrap();
        assert_ne!(name(&copies[0]), name(&copies[1]), "{kernel}");
        assert!(name(&copies[1]).ends_with(":du)"), "{kernel}");
    }
}

#[test]
fn on_2639_nothing_of_the_slab_is_charged() {
    // 2.6.39 has no kmem accounting (3.8+): the cgroup is charged only the page cache du
    // read, and no kmem file exists.
    let t = run(
        "mkdir /sys/fs/cgroup/memory/du
cgexec -g memory:du du -s /export
cat /sys/fs/cgroup/memory/du/memory.usage_in_bytes
cat /sys/fs/cgroup/memory/du/memory.stat
",
        &["kernel=linux-2.6.39"],
    );
    let stat = output_of(&t, "cat /sys/fs/cgroup/memory/du/memory.stat");
    assert_stock(number(&t, "cat /sys/fs/cgroup/memory/du/memory.usage_in_bytes"), keyed(&stat, "cache"), &stat);
}

#[test]
fn global_reclaim_shrinks_each_cgroups_own_lists() {
    // A cgroup without a limit holds du's 276 MB of objects on its own lists; then a
    // 3 GB write outside any cgroup fills the 1 GB machine. kswapd's shrink_node visits
    // every cgroup (shrink_node_memcgs -> shrink_slab for each): the cgroup's dentries and
    // inodes go as the root's would.
    let t = run(
        "mkdir /sys/fs/cgroup/memory/du
cgexec -g memory:du du -s /export
cat /sys/fs/cgroup/memory/du/memory.kmem.usage_in_bytes
dd if=/dev/zero of=/big bs=1M count=3000
cat /sys/fs/cgroup/memory/du/memory.kmem.usage_in_bytes
",
        &["ram=1G"],
    );
    let kmem: Vec<u64> = t
        .match_indices("# cat /sys/fs/cgroup/memory/du/memory.kmem.usage_in_bytes\n")
        .map(|(i, p)| t[i + p.len()..].lines().next().unwrap().trim().parse().unwrap())
        .collect();
    assert!(kmem[0] > 256 << 20, "{kmem:?}");
    assert!(kmem[1] < kmem[0] / 4, "the cgroup kept its objects under global reclaim: {kmem:?}");
}

#[test]
fn v1_kmem_files_read_and_reset_as_on_6x() {
    let t = run(
        "mkdir /sys/fs/cgroup/memory/du
cgexec -g memory:du du -s /export
cat /sys/fs/cgroup/memory/du/memory.kmem.failcnt
wc -c /sys/fs/cgroup/memory/du/memory.kmem.slabinfo
echo 2 > /proc/sys/vm/drop_caches
echo 0 > /sys/fs/cgroup/memory/du/memory.kmem.max_usage_in_bytes
cat /sys/fs/cgroup/memory/du/memory.kmem.usage_in_bytes
cat /sys/fs/cgroup/memory/du/memory.kmem.max_usage_in_bytes
grep ^cache /sys/fs/cgroup/memory/du/memory.stat
",
        &[],
    );
    // No kmem limit can be set on 6.x: nothing fails against one.
    assert_eq!(number(&t, "cat /sys/fs/cgroup/memory/du/memory.kmem.failcnt"), 0);
    // Per-cgroup slab caches went in 5.9: the file is there and empty.
    assert_eq!(output_of(&t, "wc -c /sys/fs/cgroup/memory/du/memory.kmem.slabinfo")[0].trim(), "0 /sys/fs/cgroup/memory/du/memory.kmem.slabinfo");
    // drop_caches 2 frees the cgroup's unused objects (uncharged); the buffer heads of the
    // metadata blocks still cached stay; the peak, reset, is the usage left.
    let usage = number(&t, "cat /sys/fs/cgroup/memory/du/memory.kmem.usage_in_bytes");
    let cache: u64 = output_of(&t, "grep ^cache /sys/fs/cgroup/memory/du/memory.stat")[0].split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(usage < (1 << 20) + cache / 4096 * 112, "{usage}");
    assert_eq!(number(&t, "cat /sys/fs/cgroup/memory/du/memory.kmem.max_usage_in_bytes"), usage);
    // The limit file is refused by name, as not modelled (6.x accepts a write and ignores it).
    let e = memtwin_scenario::run(&memtwin_scenario::RunOptions {
        script_path: Some("t.sh".into()),
        script_text: Some("mkdir /sys/fs/cgroup/memory/du\ncat /sys/fs/cgroup/memory/du/memory.kmem.limit_in_bytes\n".into()),
        machine: machine(),
        ..Default::default()
    })
    .err()
    .expect("refused");
    assert!(e.to_string().contains("t.sh:2: the cgroup file 'memory.kmem.limit_in_bytes' is not modelled"), "{e}");
}
