//! The LRU locks on the NFS server's own path: dput and iput take the dentry and inode LRU
//! locks when they put an object on the LRU or take one off it (2.6.39 fs/dcache.c
//! dentry_lru_add / dentry_lru_del, fs/inode.c inode_lru_list_add; 6.x list_lru_add /
//! list_lru_del). Shapes only: the waits come from the queueing of the threads.

use memtwin_kernel::fs::nfsd::{SfsConfig, SFS97_FILES_PER_DIR, SFS97_FILE_SIZES};
use memtwin_kernel::{Kernel, NS_PER_SEC};

/// The attribute storm over `files` files from 600 load processes against `threads` nfsd
/// threads on the seed-004 server with `ram` of memory; returns the kernel afterwards.
fn storm(kernel: &str, ram: &str, threads: u32, files: u64) -> Kernel {
    let mut m = memtwin_machine::preset("seed-004").expect("preset");
    for s in [format!("ram={ram}"), "boot_anon=20M".into(), "boot_file=20M".into(), format!("kernel={kernel}")] {
        memtwin_machine::apply_set(&mut m, &s).unwrap();
    }
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.nfsd_set_threads(threads);
    let spec = memtwin_machine::TreeSpec { at: "/export".into(), files, files_per_dir: SFS97_FILES_PER_DIR, dirs_per_dir: SFS97_FILES_PER_DIR, file_size: 4096, seed: 1 };
    let sb = k.add_tree(spec, Some(SFS97_FILE_SIZES.to_vec()), 1).unwrap() as u32;
    let cfg = SfsConfig {
        ops: 0,
        procs: 600,
        clients: 2,
        warmup: 0,
        runtime: u64::MAX / 4,
        mix: Vec::new(),
        storm: true,
        sb,
        files,
        access_pct: 100,
        seed: 1,
    };
    k.sfs_start(cfg).unwrap();
    let limit = k.now + 600 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.nfsd.load.as_ref().is_some_and(|l| l.done()));
    assert!(k.nfsd.load.as_ref().unwrap().done(), "the storm did not finish");
    k
}

/// The LRU is lazy (a dentry stays listed while in use): a dput takes the lock only for a
/// dentry not listed yet, so a storm that fits in memory takes it about once per new
/// dentry (a cached inode's final iput comes only when its dentry goes, which no
/// reclaim does here). A second storm over the same cached files takes it not at all.
#[test]
fn dput_takes_the_lru_lock_once_per_new_dentry_not_per_use() {
    for kernel in ["linux-2.6.39", "linux-6.x"] {
        let mut k = storm(kernel, "2G", 64, 30_000);
        let s = &k.vfs.stats;
        let (locks, misses) = (s.put_lru_locks, s.lookup_misses);
        assert!(misses >= 30_000, "{kernel}: {misses} lookup misses");
        // One per new dentry put on the LRU (the files and their directories).
        assert!(locks >= misses && locks <= misses + misses / 10, "{kernel}: {locks} lock acquisitions for {misses} new dentries");
        // Again over the same files: every dentry is listed already.
        let files = k.nfsd.load.as_ref().unwrap().cfg.files;
        let sb = k.nfsd.load.as_ref().unwrap().cfg.sb;
        let cfg = SfsConfig { ops: 0, procs: 600, clients: 2, warmup: 0, runtime: u64::MAX / 4, mix: Vec::new(), storm: true, sb, files, access_pct: 100, seed: 2 };
        k.sfs_start(cfg).unwrap();
        let limit = k.now + 600 * NS_PER_SEC;
        k.run_until(limit, &mut |k| k.nfsd.load.as_ref().is_some_and(|l| l.done()));
        assert_eq!(k.vfs.stats.put_lru_locks, locks, "{kernel}: a cached dentry's dput took the LRU lock");
    }
}

/// With the global dcache_lru_lock every nfsd thread that puts a new dentry on the LRU
/// queues behind the others: the mean wait per acquisition grows with the number of
/// threads running at once (32 CPUs: up to 32 of them).
#[test]
fn per_dput_lock_wait_grows_with_the_number_of_nfsd_threads() {
    let mean_wait = |threads: u32| {
        let k = storm("linux-2.6.39", "2G", threads, 60_000);
        let s = &k.vfs.stats;
        s.put_lru_wait_ns as f64 / s.put_lru_locks.max(1) as f64
    };
    let (few, many) = (mean_wait(2), mean_wait(32));
    eprintln!("mean wait per dput-path LRU lock: 2 threads {few:.1} ns, 32 threads {many:.1} ns");
    assert!(many > 4.0 * few.max(1.0), "2 threads {few:.1} ns, 32 threads {many:.1} ns");
}

/// 2.6.39's dentry walk (__shrink_dcache_sb) calls cond_resched_lock after each entry:
/// without CONFIG_PREEMPT it gives dcache_lru_lock up only when its CPU must reschedule,
/// which the scheduler tick decides (check_preempt_tick). The walk therefore looks again at
/// least once a tick: with 256 threads tasks wait for CPUs and each hold ends with the
/// walker's time slice (sched_slice), the walk going on at its next turn; with 32 threads
/// on 32 CPUs nobody waits, and the walker keeps its CPU and walks on each tick (the
/// threads queued on the lock meanwhile are let through first). Before, a walk started
/// while no task waited for a CPU held the lock to its end however busy the CPUs became.
#[test]
fn a_dentry_walk_gives_the_lru_lock_up_when_its_slice_ends() {
    use memtwin_engine::sched::TICK_NS;
    use memtwin_kernel::mm::shrinker::ShrinkLock;
    let longest_hold = |threads: u32| {
        let mut k = storm("linux-2.6.39", "384M", threads, 400_000);
        let lock = k.shrink.lock(ShrinkLock::DcacheLru).clone();
        // sched_slice with 8 tasks a CPU or more: min_granularity.
        (lock.max_hold_ns, lock.hold_ns, k.sched.fair.granularity, k.vfs.cost.lru_hold)
    };
    let (few, total, _, lru_hold) = longest_hold(32);
    let (cut, _, slice, _) = longest_hold(256);
    eprintln!("longest dcache_lru_lock hold: 32 threads {few} ns (held {total} ns in all), 256 threads {cut} ns (slice {slice} ns, tick {TICK_NS} ns)");
    // The walks are long (384 MB: tens of thousands of dentries each) ...
    assert!(total > 4 * TICK_NS, "32 threads: the lock was held {total} ns in all");
    // ... and looked at need_resched each tick.
    assert!(few <= TICK_NS + lru_hold, "32 threads: longest hold {few} ns, tick {TICK_NS} ns");
    // The slice at the end (a task's slice is at most sched_latency), one entry over.
    assert!(cut <= 2 * slice + lru_hold, "256 threads: longest hold {cut} ns, slice {slice} ns");
}
