//! Filesystem rules on a booted machine: tmpfs limits and accounting, mounts, and what a
//! crash or a reboot keeps.

use super::{MountOpts, OpenFlags};
use crate::mm::PAGE_SIZE;
use super::Errno;
use crate::{Kernel, Program, Sink, Step, TaskId};
use memtwin_engine::NS_PER_SEC;

fn boot() -> Kernel {
    let m = memtwin_machine::preset("default").expect("preset");
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

struct Script<F: FnMut(&mut Kernel, TaskId) -> Option<Step>>(F);
impl<F: FnMut(&mut Kernel, TaskId) -> Option<Step>> Program for Script<F> {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        (self.0)(k, me).unwrap_or(Step::Exit(0))
    }
}

fn run_task<F: FnMut(&mut Kernel, TaskId) -> Option<Step> + 'static>(k: &mut Kernel, f: F) {
    let t = k.spawn("test", "test", Box::new(Script(f)), Sink::Null, Sink::Null);
    let limit = k.now + 3600 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.task_exited(t));
    assert!(k.task_exited(t), "task did not finish");
}

/// Write `bytes` to `path` in 1 MiB writes; returns (bytes written, the error that stopped it).
fn write(k: &mut Kernel, path: &str, bytes: u64) -> (u64, Option<Errno>) {
    let path = path.to_string();
    let out = std::rc::Rc::new(std::cell::Cell::new((0u64, None)));
    let o = out.clone();
    let mut fd = None;
    run_task(k, move |k, me| {
        let f = match fd {
            Some(f) => f,
            None => match k.sys_open(me, &path, OpenFlags { write: true, create: true, trunc: true, ..Default::default() }) {
                Ok((f, _)) => *fd.insert(f),
                Err(e) => {
                    o.set((0, Some(e)));
                    return None;
                }
            },
        };
        let (done, _) = o.get();
        if done >= bytes {
            k.sys_close(me, f).unwrap();
            return None;
        }
        match k.sys_write(me, f, (bytes - done).min(1 << 20)) {
            Ok(r) => {
                o.set((done + r.bytes, None));
                Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
            }
            Err(e) => {
                o.set((done, Some(e)));
                k.sys_close(me, f).unwrap();
                None
            }
        }
    });
    out.get()
}

fn mount_ram(k: &mut Kernel, opts: &str) {
    if !k.fs.is_dir("/mnt/ram") {
        k.sys_mkdir("/mnt/ram").unwrap();
    }
    k.sys_mount_tmpfs("tmpfs", "/mnt/ram", &MountOpts::parse(opts).unwrap()).unwrap();
}

#[test]
fn dev_shm_is_mounted_at_half_of_memtotal() {
    let k = boot();
    let mi = k.fs.mount_at("/dev/shm").expect("/dev/shm mounted at boot");
    let m = &k.fs.mounts[mi as usize];
    assert!(m.is_tmpfs());
    assert_eq!(m.size_limit, Some(k.mm.managed / 2 * PAGE_SIZE));
    let s = k.statfs(mi);
    assert_eq!(s.blocks, k.mm.managed / 2);
    assert_eq!(s.bfree, s.blocks);
    assert!(k.fs.is_dir("/root") && k.fs.is_dir("/mnt") && k.fs.is_dir("/tmp"));
}

#[test]
fn tmpfs_pages_are_shmem_and_the_limit_cuts_writes_page_by_page() {
    let mut k = boot();
    mount_ram(&mut k, "size=1536k");
    let shmem0 = k.mm.stat.shmem;
    let file0 = k.mm.stat.file_pages;
    let (n, err) = write(&mut k, "/mnt/ram/x", 4 << 20);
    assert_eq!(n, 1536 << 10, "the write stops where the filesystem is full");
    assert_eq!(err, Some(Errno::ENOSPC));
    assert_eq!(k.mm.stat.shmem - shmem0, 384);
    assert_eq!(k.mm.stat.file_pages - file0, 384, "shmem pages are in Cached");
    assert_eq!(k.mm.stat.dirty, 0, "tmpfs pages are never counted as Dirty");
    let st = k.sys_stat("/mnt/ram/x").unwrap();
    assert_eq!(st.size, 1536 << 10, "what was written stays");
    // drop_caches leaves tmpfs alone.
    k.drop_caches(3);
    assert_eq!(k.mm.stat.shmem - shmem0, 384);
    // Unlink frees the pages and the space.
    run_task(&mut k, |k, me| {
        k.sys_unlink(me, "/mnt/ram/x").unwrap();
        None
    });
    assert_eq!(k.mm.stat.shmem, shmem0);
    assert_eq!(k.statfs(k.fs.mount_at("/mnt/ram").unwrap()).bfree, 384);
}

#[test]
fn nr_inodes_limits_files_and_the_root_directory_counts() {
    let mut k = boot();
    mount_ram(&mut k, "size=1m,nr_inodes=3");
    assert_eq!(write(&mut k, "/mnt/ram/a", 4096), (4096, None));
    assert_eq!(write(&mut k, "/mnt/ram/b", 4096), (4096, None));
    assert_eq!(write(&mut k, "/mnt/ram/c", 4096), (0, Some(Errno::ENOSPC)));
    assert_eq!(k.sys_mkdir("/mnt/ram/d"), Err(Errno::ENOSPC));
}

#[test]
fn umount_frees_pages_and_is_refused_while_busy() {
    let mut k = boot();
    let shmem0 = k.mm.stat.shmem;
    mount_ram(&mut k, "size=64m");
    write(&mut k, "/mnt/ram/x", 8 << 20);
    assert_eq!(k.mm.stat.shmem - shmem0, 2048);
    // Busy: a file on it is open.
    let t = k.spawn("holder", "holder", Box::new(Script(|_, _| Some(Step::Block { io: false }))), Sink::Null, Sink::Null);
    let (fd, _) = k.sys_open(t, "/mnt/ram/x", OpenFlags { read: true, ..Default::default() }).unwrap();
    assert_eq!(k.sys_umount("/mnt/ram"), Err(Errno::EBUSY));
    k.sys_close(t, fd).unwrap();
    assert_eq!(k.sys_umount("/mnt/ram"), Ok(()));
    assert_eq!(k.mm.stat.shmem, shmem0);
    assert!(k.fs.lookup("/mnt/ram/x").is_none());
    assert_eq!(k.fs.mount_of("/mnt/ram"), Some(0), "the directory is on / again");
    assert_eq!(k.sys_umount("/mnt/ram"), Err(Errno::EINVAL));
    assert_eq!(k.sys_umount("/nonexistent"), Err(Errno::ENOENT));
    assert_eq!(k.sys_umount("/"), Err(Errno::EBUSY));
    // Stacked mounts: the newer one hides the older, umount uncovers it.
    mount_ram(&mut k, "size=1m");
    write(&mut k, "/mnt/ram/lower", 4096);
    mount_ram(&mut k, "size=2m");
    assert!(k.fs.lookup("/mnt/ram/lower").is_none());
    k.sys_umount("/mnt/ram").unwrap();
    assert!(k.fs.lookup("/mnt/ram/lower").is_some());
}

#[test]
fn remount_resizes_but_not_below_what_is_used() {
    let mut k = boot();
    write(&mut k, "/dev/shm/x", 2 << 20);
    k.sys_remount("/dev/shm", &MountOpts::parse("remount,size=384m").unwrap()).unwrap();
    let mi = k.fs.mount_at("/dev/shm").unwrap();
    assert_eq!(k.fs.mounts[mi as usize].size_limit, Some(384 << 20));
    assert!(k.fs.lookup("/dev/shm/x").is_some(), "remount keeps the files");
    assert_eq!(k.sys_remount("/dev/shm", &MountOpts::parse("remount,size=1m").unwrap()), Err(Errno::EINVAL));
    assert_eq!(k.sys_remount("/mnt", &MountOpts::parse("remount,size=1m").unwrap()), Err(Errno::EINVAL));
}

#[test]
fn creating_a_file_needs_its_directory() {
    let mut k = boot();
    assert_eq!(write(&mut k, "/nodir/x", 4096), (0, Some(Errno::ENOENT)));
    k.sys_mkdir("/data").unwrap();
    assert_eq!(write(&mut k, "/data/x", 4096), (4096, None));
    assert_eq!(k.sys_mkdir("/data"), Err(Errno::EEXIST));
    assert_eq!(k.sys_mkdir("/data/x/y"), Err(Errno::ENOTDIR));
    let names: Vec<String> = k.sys_readdir("/data").unwrap().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, vec!["x".to_string()]);
}

#[test]
fn crash_keeps_what_reached_the_disk_and_reboot_keeps_everything() {
    let mut k = boot();
    write(&mut k, "/root/synced", 16 << 20);
    run_task(&mut k, |k, _| {
        k.request_sync();
        k.sync_filesystems();
        None
    });
    let until = k.now + 5 * NS_PER_SEC;
    k.run_until(until, &mut |k| k.mm.stat.dirty + k.mm.stat.writeback == 0);
    assert_eq!(k.mm.stat.dirty + k.mm.stat.writeback, 0);
    k.writeback.sync_requested = false;
    write(&mut k, "/root/unsynced", 16 << 20);
    write(&mut k, "/dev/shm/tmp", 16 << 20);
    // Within the journal's 5 s the new name is not committed: the file would not exist.
    let img = k.disk_image(false);
    assert_eq!(img.file_size("/dev/sda", "/root/synced"), Some(16 << 20));
    assert_eq!(img.file_size("/dev/sda", "/root/unsynced"), None);
    let until = k.now + 10 * NS_PER_SEC;
    k.run_until(until, &mut |_| false);
    let img = k.disk_image(false);
    assert_eq!(img.file_size("/dev/sda", "/root/unsynced"), Some(0), "committed name, data still dirty");
    // Power loss: the clock carries on, tmpfs is empty, the unsynced file is empty.
    let t = k.now;
    let mut k2 = Kernel::reboot_from(&mut k, false).unwrap();
    assert_eq!(k2.now, t);
    assert!(k2.fs.lookup("/dev/shm/tmp").is_none());
    assert_eq!(k2.mm.stat.shmem, 0);
    assert_eq!(k2.sys_stat("/root/synced").unwrap().size, 16 << 20);
    assert_eq!(k2.sys_stat("/root/unsynced").unwrap().size, 0);
    assert_eq!(k2.mm.mappings[k2.fs.inodes[k2.fs.lookup("/root/synced").unwrap() as usize].mapping as usize].nrpages, 0, "nothing cached after a boot");
    // A clean reboot after more unsynced writes keeps them whole.
    write(&mut k2, "/root/late", 8 << 20);
    let mut k3 = Kernel::reboot_from(&mut k2, true).unwrap();
    assert_eq!(k3.sys_stat("/root/late").unwrap().size, 8 << 20);
    assert_eq!(k3.sys_stat("/root/synced").unwrap().size, 16 << 20);
    // The restored files can be read (from the disk) and rewritten.
    assert_eq!(write(&mut k3, "/root/synced", 4096), (4096, None));
}

#[test]
fn writes_past_the_largest_file_fail_with_efbig() {
    let mut k = boot();
    let t = k.spawn("t", "t", Box::new(Script(|_, _| Some(Step::Block { io: false }))), Sink::Null, Sink::Null);
    let (fd, _) = k.sys_open(t, "/dev/shm/x", OpenFlags { write: true, create: true, ..Default::default() }).unwrap();
    k.file_mut(t, fd).unwrap().pos = u64::MAX - 10;
    assert_eq!(k.sys_write(t, fd, 1 << 20), Err(Errno::EFBIG));
}

#[test]
fn direct_writes_are_on_disk_when_they_complete() {
    let mut k = boot();
    let mut fd = None;
    let mut left = 8u64 << 20;
    run_task(&mut k, move |k, me| {
        let f = *fd.get_or_insert_with(|| {
            k.sys_open(me, "/root/d", OpenFlags { write: true, create: true, direct: true, ..Default::default() }).unwrap().0
        });
        if left == 0 {
            k.sys_close(me, f).unwrap();
            return None;
        }
        let r = k.sys_write(me, f, left.min(1 << 20)).unwrap();
        left -= r.bytes;
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    });
    assert_eq!(k.mm.stat.dirty, 0, "O_DIRECT leaves nothing dirty");
    let ino = k.fs.lookup("/root/d").unwrap();
    assert_eq!(k.fs.inodes[ino as usize].disk_size, 8 << 20);
    assert!(k.fs.direct_writes.is_empty());
    let until = k.now + 6 * NS_PER_SEC;
    k.run_until(until, &mut |_| false);
    assert_eq!(k.disk_image(false).file_size("/dev/sda", "/root/d"), Some(8 << 20));
}

/// The system time charged to a task by `calls` read(2) or write(2) calls of `bs` bytes
/// on `path` (opened with `flags`), counted from the calls themselves (mm/cost.rs).
fn sys_of_calls(k: &mut Kernel, path: &str, flags: OpenFlags, write: bool, bs: u64, calls: u64) -> u64 {
    let path = path.to_string();
    let out = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let o = out.clone();
    run_task(k, move |k, me| {
        let (f, _) = k.sys_open(me, &path, flags).unwrap();
        for _ in 0..calls {
            // The work of the call itself: time spun on lru_lock (a drain of the LRU-add
            // batch meeting the previous task's hold at the same instant) is left out.
            let t = &k.tasks[me as usize];
            let before = t.pending_sys - t.lock_wait_ns;
            let r = if write { k.sys_write(me, f, bs) } else { k.sys_read(me, f, bs) };
            let r = r.unwrap();
            assert_eq!(r.bytes, bs, "a whole call");
            assert!(r.wait.is_none(), "no I/O wait on tmpfs");
            let t = &k.tasks[me as usize];
            o.set(o.get() + (t.pending_sys - t.lock_wait_ns) - before);
        }
        k.sys_close(me, f).unwrap();
        None
    });
    out.get()
}

/// Each read(2)/write(2) costs one system call entry and exit: moving the same megabyte in
/// 4 KiB calls costs 255 more entries than in one 1 MiB call (dd's bs), and nothing else
/// differs (the per-page copies and lookups are the same).
#[test]
fn syscall_cost_scales_with_the_number_of_calls() {
    let mut k = boot();
    mount_ram(&mut k, "size=64m");
    let c = k.machine.cpu_model.clone();
    let w = OpenFlags { write: true, create: true, trunc: true, ..Default::default() };
    let r = OpenFlags::default();
    let w_big = sys_of_calls(&mut k, "/mnt/ram/a", w, true, 1 << 20, 1);
    let w_small = sys_of_calls(&mut k, "/mnt/ram/b", w, true, 4096, 256);
    assert_eq!(w_small - w_big, 255 * c.syscall_ns, "write: {w_small} vs {w_big}");
    let r_big = sys_of_calls(&mut k, "/mnt/ram/a", r, false, 1 << 20, 1);
    let r_small = sys_of_calls(&mut k, "/mnt/ram/b", r, false, 4096, 256);
    assert_eq!(r_small - r_big, 255 * c.syscall_ns, "read: {r_small} vs {r_big}");
    // Cached read: a lookup and a copy-out per page; write: allocation, insertion in the
    // tree and on the LRU, a lookup and a copy-in per page.
    let page_read = c.page_cache_ns + crate::mm::cost::copy_out_ns(&c, 4096);
    assert_eq!(r_big, c.syscall_ns + 256 * page_read);
    let page_write = c.page_alloc_ns + crate::mm::cost::page_cache_insert_ns(&c) + c.page_cache_ns + crate::mm::cost::copy_in_ns(&c, 4096);
    assert_eq!(w_big, c.syscall_ns + 256 * page_write);
}

/// A buffered write to a disk filesystem pays the filesystem's write_begin/write_end per
/// page (block reservation, buffer heads, journal); a tmpfs write does not.
#[test]
fn a_disk_filesystem_write_pays_its_own_work_per_page_tmpfs_does_not() {
    let mut k = boot();
    mount_ram(&mut k, "size=64m");
    let c = k.machine.cpu_model.clone();
    let w = OpenFlags { write: true, create: true, trunc: true, ..Default::default() };
    let tmpfs = sys_of_calls(&mut k, "/mnt/ram/f", w, true, 64 << 10, 1);
    let disk = sys_of_calls(&mut k, "/root/f", w, true, 64 << 10, 1);
    assert_eq!(disk - tmpfs, 16 * c.fs_write_page_ns, "{disk} vs {tmpfs}");
}

/// ext4's auto_da_alloc "replace via truncate" heuristic: a file truncated to 0 and
/// rewritten has its dirty pages submitted when it is closed (ext4_truncate sets
/// EXT4_STATE_DA_ALLOC_CLOSE, ext4_release_file -> filemap_flush); a new file's wait for
/// the flusher. The close does not wait for the writes.
#[test]
fn ext4_flushes_a_file_rewritten_after_truncation_on_close() {
    for (preset, fstype) in [("default", "ext4"), ("seed-002", "ext3")] {
        let mut k = Kernel::boot(memtwin_machine::preset(preset).unwrap(), 1).unwrap();
        let root = k.fs.mounts.iter().find(|m| m.at == "/").unwrap();
        assert_eq!(root.fstype, fstype);
        let dirty_of = |k: &Kernel, path: &str| {
            let ino = k.fs.lookup(path).unwrap();
            let m = &k.mm.mappings[k.fs.inodes[ino as usize].mapping as usize];
            (m.nr_dirty, m.nr_writeback)
        };
        // New file: still dirty after the close.
        assert_eq!(write(&mut k, "/root/f", 4 << 20).0, 4 << 20);
        let (dirty, _) = dirty_of(&k, "/root/f");
        assert_eq!(dirty, 1024, "{preset}: a new file waits for the flusher");
        // Rewritten with O_TRUNC: ext4 submits every dirty page at the close.
        assert_eq!(write(&mut k, "/root/f", 4 << 20).0, 4 << 20);
        let (dirty, writeback) = dirty_of(&k, "/root/f");
        if fstype == "ext4" {
            assert_eq!(dirty, 0, "{preset}: flushed at close");
            assert!(writeback > 0, "{preset}: not waited for");
            assert!(!k.fs.inodes[k.fs.lookup("/root/f").unwrap() as usize].flush_on_close, "the state is cleared");
        } else {
            assert_eq!((dirty, writeback), (1024, 0), "{preset}: ext3 has no delayed allocation");
        }
    }
}

/// XFS flushes on close after any truncate down (XFS_ITRUNCATED, xfs_release), not only to
/// size 0, and forgets it once writeback has run on the file (xfs_vm_writepages).
#[test]
fn xfs_flushes_on_close_after_a_truncate_down_unless_writeback_ran() {
    let mut m = memtwin_machine::preset("default").unwrap();
    for mt in m.mounts.iter_mut().filter(|mt| mt.fstype == "ext4") {
        mt.fstype = "xfs".into();
    }
    let mut k = Kernel::boot(m, 1).unwrap();
    let dirty_of = |k: &Kernel, path: &str| {
        let ino = k.fs.lookup(path).unwrap();
        k.mm.mappings[k.fs.inodes[ino as usize].mapping as usize].nr_dirty
    };
    assert_eq!(write(&mut k, "/root/f", 4 << 20).0, 4 << 20);
    assert_eq!(dirty_of(&k, "/root/f"), 1024, "a new file waits for the flusher");
    // Rewritten with O_TRUNC (a truncate down): flushed at the close.
    assert_eq!(write(&mut k, "/root/f", 4 << 20).0, 4 << 20);
    assert_eq!(dirty_of(&k, "/root/f"), 0);
    // Truncated down, then written back before the close: the flag is gone.
    let ino = k.fs.lookup("/root/f").unwrap();
    k.truncate_inode(ino, 4096);
    assert!(k.fs.inodes[ino as usize].flush_on_close);
    let mapping = k.fs.inodes[ino as usize].mapping;
    k.writeback_mapping(mapping, u64::MAX, None);
    assert!(!k.fs.inodes[ino as usize].flush_on_close, "xfs_vm_writepages clears XFS_ITRUNCATED");
}
