//! The VFS caches on a booted machine with a generated tree.

use super::*;
use crate::{Program, Sink};
use memtwin_engine::NS_PER_SEC;
use memtwin_machine::{KernelProfile, TreeSpec};
use memtwin_procfs::VmItem;

fn boot_with(files: u64, per_dir: u64, kernel: KernelProfile) -> Kernel {
    let mut m = memtwin_machine::preset("default").expect("preset");
    m.kernel = kernel;
    m.trees.push(TreeSpec { at: "/export".into(), files, files_per_dir: per_dir, dirs_per_dir: 30, file_size: 8192, seed: 1 });
    Kernel::boot(m, 1).expect("boot")
}

struct Ops<F: FnMut(&mut Kernel, TaskId) -> Option<VfsErr>>(F);
impl<F: FnMut(&mut Kernel, TaskId) -> Option<VfsErr>> Program for Ops<F> {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        match (self.0)(k, me) {
            None => Step::Exit(0),
            Some(VfsErr::Wait(s)) => s,
            Some(VfsErr::Errno(_)) => Step::Yield,
        }
    }
}

/// Run `op` in a task until it completes; its result.
fn run<T: 'static + Clone, F: FnMut(&mut Kernel, TaskId) -> VfsOp<T> + 'static>(k: &mut Kernel, mut op: F) -> Result<T, Errno> {
    let out = std::rc::Rc::new(std::cell::RefCell::new(None));
    let o = out.clone();
    let t = k.spawn(
        "t",
        "t",
        Box::new(Ops(move |k: &mut Kernel, me| match op(k, me) {
            Ok(v) => {
                *o.borrow_mut() = Some(Ok(v));
                None
            }
            Err(VfsErr::Errno(e)) => {
                *o.borrow_mut() = Some(Err(e));
                None
            }
            Err(w) => Some(w),
        })),
        Sink::Null,
        Sink::Null,
    );
    let limit = k.now + 3600 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.task_exited(t));
    let r = out.borrow_mut().take().expect("finished");
    r
}

fn buffers(k: &Kernel) -> u64 {
    k.mm.stat.buffers
}
/// Objects in use in the dentry and inode caches.
fn vfs_slab(k: &Kernel) -> u64 {
    k.mm.slab.counts(k.vfs.dentry_cache).active_objs + k.mm.slab.counts(k.vfs.inode_cache).active_objs
}

#[test]
fn stat_miss_reads_dir_and_inode_blocks_then_hits() {
    let mut k = boot_with(10_000, 100, KernelProfile::Linux6);
    let (b0, s0) = (buffers(&k), vfs_slab(&k));
    let st = run(&mut k, |k, me| k.vfs_stat(me, "/export/d0/d5/f7")).unwrap();
    assert_eq!(st.kind, FileKind::Regular);
    assert_eq!(st.size, 8192);
    let v = &k.vfs.stats;
    // Three components missed: each read its directory block(s) and an inode-table block.
    assert_eq!(v.lookup_misses, 3);
    assert!(v.dir_block_reads >= 3 && v.itable_block_reads >= 1, "{v:?}");
    assert!(buffers(&k) > b0, "Buffers grow on a miss");
    assert!(vfs_slab(&k) > s0, "dentries and inodes take slab pages");
    let (reads, t0) = (k.vfs.stats.dir_block_reads + k.vfs.stats.itable_block_reads, k.now);
    // Again: all hits, no I/O, microseconds.
    run(&mut k, |k, me| k.vfs_stat(me, "/export/d0/d5/f7")).unwrap();
    assert_eq!(k.vfs.stats.dir_block_reads + k.vfs.stats.itable_block_reads, reads);
    assert_eq!(k.vfs.stats.lookup_misses, 3);
    assert!(k.now - t0 < NS_PER_SEC / 1000);
    // A neighbour in the same directory: its inode shares the inode-table block.
    let bufs = buffers(&k);
    run(&mut k, |k, me| k.vfs_stat(me, "/export/d0/d5/f6")).unwrap();
    assert_eq!(buffers(&k), bufs);
}

#[test]
fn negative_dentries_answer_enoent_from_the_cache() {
    let mut k = boot_with(1000, 100, KernelProfile::Linux6);
    assert_eq!(run(&mut k, |k, me| k.vfs_stat(me, "/export/d0/nosuch")), Err(Errno::ENOENT));
    assert_eq!(run(&mut k, |k, me| k.vfs_stat(me, "/export/d0/f100")), Err(Errno::ENOENT));
    let sb = &k.vfs.sbs[0];
    assert_eq!(sb.dcache.nr_negative, 2);
    let misses = k.vfs.stats.lookup_misses;
    assert_eq!(run(&mut k, |k, me| k.vfs_stat(me, "/export/d0/nosuch")), Err(Errno::ENOENT));
    assert_eq!(k.vfs.stats.lookup_misses, misses);
    assert_eq!(k.vfs.stats.negative_hits, 1);
}

#[test]
fn unlink_leaves_a_negative_dentry_and_frees_the_inode() {
    let mut k = boot_with(1000, 100, KernelProfile::Linux6);
    let dir = run(&mut k, |k, me| k.vfs_path_lookup(me, "/export/d3")).unwrap();
    let f = run(&mut k, move |k, me| k.vfs_lookup(me, dir, "f4")).unwrap();
    let inodes = k.vfs.sbs[0].icache.nr_inodes;
    run(&mut k, move |k, me| k.vfs_unlink(me, dir, "f4")).unwrap();
    assert_eq!(k.vfs.sbs[0].icache.nr_inodes, inodes - 1);
    assert_eq!(run(&mut k, move |k, me| k.vfs_getattr(me, f)), Err(Errno::ENOENT));
    assert_eq!(run(&mut k, |k, me| k.vfs_stat(me, "/export/d3/f4")), Err(Errno::ENOENT));
    let (entries, _) = run(&mut k, move |k, me| k.vfs_readdir(me, dir, 0, 1000)).unwrap();
    assert_eq!(entries.len(), 99);
}

#[test]
fn drop_caches_2_frees_unused_dentries_and_inodes() {
    let mut k = boot_with(10_000, 100, KernelProfile::Linux2639);
    let s0 = vfs_slab(&k);
    run(&mut k, |k, me| {
        for d in 0..4 {
            for f in 0..100 {
                k.vfs_stat(me, &format!("/export/d0/d{d}/f{f}"))?;
            }
        }
        Ok(())
    })
    .unwrap();
    let sb = &k.vfs.sbs[0];
    assert_eq!(sb.icache.nr_inodes, 1 + 1 + 4 + 400);
    let grown = vfs_slab(&k);
    assert!(grown >= s0 + 2 * 405, "{s0} -> {grown}");
    let slab_pages = k.mm.slab.pages(true);
    k.drop_caches(2);
    // The objects go to their slabs after an RCU grace period.
    assert!(k.rcu.pending() > 0);
    k.rcu_barrier();
    let sb = &k.vfs.sbs[0];
    // Only the pinned root dentry is left. Of the inodes, fewer than 100 unused ones may
    // stay: 2.6.39's count is (nr_unused / 100) * vfs_cache_pressure, 0 below 100.
    assert_eq!(sb.dcache.live(), 1);
    assert!(sb.icache.nr_inodes < 101, "{}", sb.icache.nr_inodes);
    assert!(vfs_slab(&k) < s0, "the tree's objects and the idle system's unused ones go");
    assert!(k.mm.slab.pages(true) < slab_pages);
}

#[test]
fn prune_icache_steals_page_cache_2_6_39() {
    let mut k = boot_with(1000, 100, KernelProfile::Linux2639);
    let f = run(&mut k, |k, me| k.vfs_path_lookup(me, "/export/d1/f2")).unwrap();
    assert_eq!(run(&mut k, move |k, me| k.vfs_read(me, f, 0, 8192)), Ok(8192));
    let cached = k.mm.stat.file_pages;
    // The dentry goes first (two passes: the first only clears DCACHE_REFERENCED), which
    // leaves its inode unused on the inode LRU with its pages.
    k.shrink_dcache(1000);
    k.shrink_dcache(1000);
    assert_eq!(k.vfs.sbs[0].dcache.live(), 1);
    let before = k.vm.get(VmItem::Pginodesteal);
    let mut freed = 0;
    for _ in 0..4 {
        freed += k.shrink_icache(false, 1000).freed;
    }
    assert_eq!(k.vm.get(VmItem::Pginodesteal) - before, 2);
    assert_eq!(k.vm.get(VmItem::KswapdInodesteal), 0);
    assert!(k.mm.stat.file_pages + 2 <= cached);
    // d1's and f2's inodes; the root's is pinned.
    assert_eq!(freed, 2);
}

/// prune_icache drops inode_lru_lock while it invalidates an unused inode's pages and
/// takes it again afterwards (2.6.39: `spin_unlock(&inode_lru_lock); ...
/// invalidate_mapping_pages(...); spin_lock(&inode_lru_lock)`): the lock is held for the
/// walk and once more per such inode, never for the pages.
#[test]
fn prune_icache_invalidates_pages_with_the_lru_lock_dropped() {
    let mut k = boot_with(1000, 100, KernelProfile::Linux2639);
    let files = 50;
    for i in 0..files {
        let f = run(&mut k, move |k, me| k.vfs_path_lookup(me, &format!("/export/d1/f{i}"))).unwrap();
        assert_eq!(run(&mut k, move |k, me| k.vfs_read(me, f, 0, 8192)), Ok(8192));
    }
    k.shrink_dcache(10_000);
    k.shrink_dcache(10_000);
    let lock = |k: &mut Kernel| k.shrink.lock(crate::mm::shrinker::ShrinkLock::InodeLru).hold_ns;
    let (held0, steal0) = (lock(&mut k), k.vm.get(VmItem::Pginodesteal));
    let out = k.shrink_icache(false, 10_000);
    let (held, reap) = (lock(&mut k) - held0, k.vm.get(VmItem::Pginodesteal) - steal0);
    assert_eq!(reap, 2 * files, "each file's two pages");
    let (hold, page) = (k.vfs.cost.lru_hold, k.machine.cpu_model.page_cache_ns);
    assert!(page > 0 && out.scanned >= files);
    assert_eq!(held, (out.scanned + files) * hold, "the walk, then one re-take per file");
    assert!(out.cpu_ns >= held + reap * page, "the invalidation is the pruner's work outside the lock");
}

#[test]
fn pages_pin_the_inode_on_6x() {
    let mut k = boot_with(1000, 100, KernelProfile::Linux6);
    let f = run(&mut k, |k, me| k.vfs_path_lookup(me, "/export/d1/f2")).unwrap();
    run(&mut k, move |k, me| k.vfs_read(me, f, 0, 8192)).unwrap();
    // The first drop only clears the file dentry's DCACHE_REFERENCED (drop_slab stops
    // when a pass frees nothing); the second frees the dentries and the directory inode.
    k.drop_caches(2);
    k.drop_caches(2);
    // The file's inode keeps its pages and stays (mapping_shrinkable is false).
    assert_eq!(k.vfs.sbs[0].icache.nr_inodes, 2);
    assert_eq!(k.vm.get(VmItem::Pginodesteal), 0);
}

#[test]
fn shrinker_count_follows_vfs_cache_pressure() {
    let mut k = boot_with(10_000, 100, KernelProfile::Linux2639);
    run(&mut k, |k, me| {
        for f in 0..100 {
            k.vfs_stat(me, &format!("/export/d0/d0/f{f}"))?;
        }
        Ok(())
    })
    .unwrap();
    // The 100 files are unused; their inodes are pinned by the dentries. The two
    // directories are listed too: each was unused for a moment (its walk waited for a read
    // before its first child existed) and in-use dentries leave d_lru only when the
    // shrinker finds them, as nr_unused counts them in the kernel.
    assert_eq!(k.vfs.nr_unused(), (102, 0));
    let (d, _) = k.vfs_shrink_count();
    k.sysctl.vfs_cache_pressure = 200;
    assert_eq!(k.vfs_shrink_count().0, 2 * d);
}

#[test]
fn global_lru_lock_serialises_concurrent_pruners_2_6_39() {
    let mut k = boot_with(10_000, 100, KernelProfile::Linux2639);
    run(&mut k, |k, me| {
        for d in 0..10 {
            for f in 0..100 {
                k.vfs_stat(me, &format!("/export/d0/d{d}/f{f}"))?;
            }
        }
        Ok(())
    })
    .unwrap();
    // Two reclaimers at the same instant: the second waits for the first's hold.
    let a = k.shrink_dcache(128);
    let b = k.shrink_dcache(128);
    assert_eq!(a.lock_wait_ns, 0);
    assert!(b.lock_wait_ns > 0 && b.lock_wait_ns >= a.scanned * k.vfs.cost.lru_hold, "{a:?} {b:?}");
}

#[test]
fn host_memory_follows_what_is_cached() {
    // A ten-million-file tree: declaring it costs nothing per file.
    let mut k = boot_with(10_000_000, 30, KernelProfile::Linux6);
    assert_eq!(k.vfs.sbs[0].dcache.live(), 1);
    let n = 100_000u64;
    let mut next = 0;
    run(&mut k, move |k, me| {
        // Every file of the first n/30 leaf directories, by handle (nfsd's GETATTR); a
        // wait resumes at the file that waited.
        while next < n {
            let ino = k.vfs.sbs[0].tree.as_ref().unwrap().ino_of(Node::File(next));
            k.vfs_getattr(me, Fh { sb: 0, ino })?;
            next += 1;
        }
        Ok(())
    })
    .unwrap();
    let sb = &k.vfs.sbs[0];
    let cached = sb.dcache.live() + sb.icache.nr_inodes;
    assert!(cached >= 2 * n && cached < 2 * n + 2 * n / 10, "{cached}");
    let host = sb.dcache.host_bytes() + sb.icache.host_bytes();
    // Proportional to the cached part: a few tens of bytes per object, not per file.
    assert!((host as u64) < 64 * cached, "{host} bytes for {cached} objects");
}

/// The handle of file `f` and of its directory in the tree of super block 0.
fn fh_of(k: &Kernel, f: u64) -> (Fh, Fh) {
    let t = k.vfs.sbs[0].tree.as_ref().unwrap();
    let dir = Node::Dir { depth: t.leaf_depth(), idx: f / t.spec.files_per_dir };
    (Fh { sb: 0, ino: t.ino_of(Node::File(f)) }, Fh { sb: 0, ino: t.ino_of(dir) })
}

#[test]
fn write_dirties_page_cache_and_commit_writes_it_back() {
    let mut k = boot_with(300, 30, KernelProfile::Linux2639);
    let (fh, _) = fh_of(&k, 7);
    let dirty0 = k.mm.stat.dirty;
    // Cut to 100 bytes, then generic_perform_write: 2 pages dirtied (4 KiB at 2 KiB spans
    // pages 0 and 1), and the file grows to the write's end.
    run(&mut k, move |k, me| k.vfs_setattr(me, fh, Some(100))).unwrap();
    let n = run(&mut k, move |k, me| k.vfs_write(me, fh, 2048, 4096)).unwrap();
    assert_eq!(n, 4096);
    assert!(k.mm.stat.dirty >= dirty0 + 2, "dirty {} -> {}", dirty0, k.mm.stat.dirty);
    let st = run(&mut k, move |k, me| k.vfs_getattr(me, fh)).unwrap();
    assert_eq!(st.size, 6144);
    // A write past the file's slot on the disk (its generated 8 KiB) is refused.
    assert_eq!(run(&mut k, move |k, me| k.vfs_write(me, fh, 8192, 4096)), Err(Errno::EFBIG));
    // COMMIT writes the file's pages and waits for them: none of its pages stay dirty.
    let m = run(&mut k, move |k, me| k.vfs_open(me, fh)).unwrap();
    assert!(k.mm.mappings[m as usize].nr_dirty >= 2);
    let r = run(&mut k, move |k, me| match k.vfs_commit(me, fh) {
        Ok(Some(t)) => Err(VfsErr::Wait(Step::SleepUntil { t, io: true })),
        other => other,
    });
    assert_eq!(r, Ok(None));
    assert_eq!(k.mm.mappings[m as usize].nr_dirty, 0);
}

#[test]
fn remove_then_create_brings_the_name_back_empty_and_other_names_are_refused() {
    let mut k = boot_with(300, 30, KernelProfile::Linux2639);
    let (fh, dir) = fh_of(&k, 35);
    let used0 = k.fs.mounts[k.vfs.sbs[0].mount as usize].inodes_used;
    run(&mut k, move |k, me| k.vfs_unlink(me, dir, "f5")).unwrap();
    assert_eq!(run(&mut k, move |k, me| k.vfs_getattr(me, fh)), Err(Errno::ENOENT));
    // The cached negative dentry answers the lookup.
    assert_eq!(run(&mut k, move |k, me| k.vfs_lookup(me, dir, "f5")), Err(Errno::ENOENT));
    let new = run(&mut k, move |k, me| k.vfs_create(me, dir, "f5")).unwrap();
    assert_eq!(new, fh);
    let st = run(&mut k, move |k, me| k.vfs_getattr(me, fh)).unwrap();
    assert_eq!(st.size, 0);
    assert_eq!(k.fs.mounts[k.vfs.sbs[0].mount as usize].inodes_used, used0);
    assert_eq!(run(&mut k, move |k, me| k.vfs_create(me, dir, "f5")), Err(Errno::EEXIST));
    assert_eq!(run(&mut k, move |k, me| k.vfs_create(me, dir, "notes.txt")), Err(Errno::EOPNOTSUPP));
    // The directory block and the inode-table block are dirty metadata (Buffers).
    assert!(k.mm.stat.dirty > 0);
}

#[test]
fn setattr_truncates_and_readlink_reads_fast_symlinks_only() {
    let mut k = boot_with(300, 30, KernelProfile::Linux2639);
    k.vfs.sbs[0].tree.as_mut().unwrap().symlinks_per_dir = 1;
    let (fh, _) = fh_of(&k, 40);
    let st = run(&mut k, move |k, me| k.vfs_setattr(me, fh, Some(100))).unwrap();
    assert_eq!(st.size, 100);
    assert_eq!(run(&mut k, move |k, me| k.vfs_readlink(me, fh)), Err(Errno::EINVAL));
    // The last entry of each directory is a symlink to the entry before it.
    let (link, _) = fh_of(&k, 59);
    assert_eq!(run(&mut k, move |k, me| k.vfs_readlink(me, link)), Ok("f28".to_string()));
    let st = run(&mut k, move |k, me| k.vfs_getattr(me, link)).unwrap();
    assert_eq!((st.mode, st.size), (0o120777, 3));
}

#[test]
fn readdirplus_caches_every_entry_of_the_directory() {
    let mut k = boot_with(300, 30, KernelProfile::Linux2639);
    let (_, dir) = fh_of(&k, 60);
    let before = vfs_slab(&k);
    let (entries, next) = run(&mut k, move |k, me| k.vfs_readdirplus(me, dir, 0, 30)).unwrap();
    assert_eq!((entries.len(), next), (30, None));
    // 30 dentries and 30 inodes (plus the directory's ancestry).
    assert!(vfs_slab(&k) >= before + 60, "{} -> {}", before, vfs_slab(&k));
    let misses = k.vfs.stats.lookup_misses;
    run(&mut k, move |k, me| k.vfs_readdirplus(me, dir, 0, 30)).unwrap();
    assert_eq!(k.vfs.stats.lookup_misses, misses, "the second pass hits");
}
