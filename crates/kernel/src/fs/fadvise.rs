//! posix_fadvise(2) (mm/fadvise.c), the advice benchmarks use to start from a cold cache.

use super::{Fadvice, Target};
use crate::Kernel;
use memtwin_engine::TaskId;

use super::read_write::Errno;

impl Kernel {
    /// POSIX_FADV_NORMAL, _RANDOM and _SEQUENTIAL (generic_fadvise): NORMAL gives the file
    /// the device's readahead again, RANDOM sets FMODE_RANDOM (page_cache_sync_ra then
    /// reads only what a read asks for, force_page_cache_ra, and keeps no window),
    /// SEQUENTIAL doubles the file's ra_pages. The advice is the open file's: other opens
    /// of the file keep theirs.
    pub fn sys_fadvise(&mut self, tid: TaskId, fd: usize, advice: Fadvice) -> Result<(), Errno> {
        let f = self.file_mut(tid, fd)?;
        f.advice = advice;
        self.charge_sys(tid, self.machine.cpu_model.syscall_ns);
        Ok(())
    }

    /// POSIX_FADV_DONTNEED over the whole file (generic_fadvise): start writeback of its
    /// dirty pages without waiting (__filemap_fdatawrite_range, WB_SYNC_NONE), then drop the
    /// pages that are clean, unlocked and not under writeback (invalidate_mapping_pages).
    /// Pages of a mapped file stay. Returns the pages dropped.
    pub fn sys_fadvise_dontneed(&mut self, tid: TaskId, fd: usize) -> Result<u64, Errno> {
        let f = self.file(tid, fd).ok_or(Errno::EBADF)?;
        let m = match f.target {
            Target::Inode(ino) => self.fs.inodes[ino as usize].mapping,
            Target::BlockDev(d) => self.block.devs[d as usize].mapping,
            _ => return Ok(0),
        };
        self.charge_sys(tid, self.machine.cpu_model.syscall_ns);
        // shmem has no writeback and invalidate_mapping_pages cannot drop its pages.
        if self.mm.mappings[m as usize].swap_backed() {
            return Ok(0);
        }
        if self.mm.mappings[m as usize].nr_dirty > 0 {
            self.writeback_mapping(m, u64::MAX, Some(tid));
        }
        // Pages just read or written wait in this CPU's LRU-add batch: drain it first, and
        // every CPU's when some were still in a batch (generic_fadvise).
        if self.profile.fadvise_drains_lru {
            self.lru_add_drain();
        }
        let (mut dropped, in_batch) = self.invalidate_mapping_pages_nr(m);
        if in_batch > 0 && self.profile.fadvise_drains_lru {
            self.lru_add_drain_all();
            dropped += self.invalidate_mapping_pages(m);
        }
        self.charge_sys(tid, dropped * self.machine.cpu_model.page_cache_ns);
        Ok(dropped)
    }
}

#[cfg(test)]
mod tests {
    use crate::fs::{Fadvice, OpenFlags};
    use crate::mm::Slot;
    use crate::{Kernel, Program, Sink, Step, TaskId};
    use memtwin_engine::NS_PER_SEC;

    struct Script<F: FnMut(&mut Kernel, TaskId) -> Option<Step>>(F);
    impl<F: FnMut(&mut Kernel, TaskId) -> Option<Step>> Program for Script<F> {
        fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
            (self.0)(k, me).unwrap_or(Step::Exit(0))
        }
    }

    fn cached_pages(k: &Kernel, path: &str) -> u64 {
        let m = k.fs.inodes[k.fs.lookup(path).unwrap() as usize].mapping;
        let mut n = 0;
        let mut at = 0;
        while let Some((i, s)) = k.mm.next_slot(m, at, u64::MAX) {
            n += matches!(s, Slot::Page(_)) as u64;
            at = i + 1;
        }
        n
    }

    /// Dirty pages survive DONTNEED (their writeback is started); once clean they go.
    #[test]
    fn dontneed_starts_writeback_and_drops_clean_pages() {
        let mut k = Kernel::boot(memtwin_machine::preset("default").unwrap(), 1).unwrap();
        k.debug_invariants = true;
        let mut fd = None;
        let mut written = 0u64;
        let mut dropped = Vec::new();
        let total = 8u64 << 20;
        let t = k.spawn(
            "t",
            "t",
            Box::new(Script(move |k: &mut Kernel, me| {
                let f = *fd.get_or_insert_with(|| k.sys_open(me, "/root/f", OpenFlags { read: true, write: true, create: true, ..Default::default() }).unwrap().0);
                if written < total {
                    let r = k.sys_write(me, f, total - written).unwrap();
                    written += r.bytes;
                    return Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }));
                }
                if dropped.is_empty() {
                    dropped.push(k.sys_fadvise_dontneed(me, f).unwrap());
                    assert_eq!(dropped[0], 0, "dirty pages are not dropped");
                    assert!(k.mm.mappings[k.fs.inodes[k.fs.lookup("/root/f").unwrap() as usize].mapping as usize].nr_dirty == 0, "writeback started");
                    return Some(Step::SleepUntil { t: k.now + 5 * NS_PER_SEC, io: false });
                }
                let n = k.sys_fadvise_dontneed(me, f).unwrap();
                assert_eq!(n, total / 4096, "every clean page is dropped");
                None
            })),
            Sink::Null,
            Sink::Null,
        );
        k.run_until(k.now + 60 * NS_PER_SEC, &mut |k| k.task_exited(t));
        assert!(k.task_exited(t));
        assert_eq!(cached_pages(&k, "/root/f"), 0);
    }

    /// Read requests the disk takes for a cold 16 MiB file read in 64 KiB reads under
    /// `advice`.
    fn read_requests_under(advice: Fadvice) -> u64 {
        let mut k = Kernel::boot(memtwin_machine::preset("default").unwrap(), 1).unwrap();
        let total = 16u64 << 20;
        let (mut st, mut fd, mut at, mut ios0) = (0, 0, 0u64, 0u64);
        let reads = std::rc::Rc::new(std::cell::Cell::new(0u64));
        let out = reads.clone();
        let t = k.spawn(
            "t",
            "t",
            Box::new(Script(move |k: &mut Kernel, me| {
                let dev = k.fs.mount_of("/root/f").and_then(|m| k.fs.mounts[m as usize].dev).unwrap_or(0) as usize;
                if st == 0 {
                    fd = k.sys_open(me, "/root/f", OpenFlags { read: true, write: true, create: true, ..Default::default() }).unwrap().0;
                    st = 1;
                }
                if st == 1 {
                    if at < total {
                        let r = k.sys_write(me, fd, total - at).unwrap();
                        at += r.bytes;
                        return Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }));
                    }
                    st = 2;
                    if let Ok(Some(w)) = k.sys_fsync(me, fd) {
                        return Some(w);
                    }
                }
                if st == 2 {
                    k.sys_fadvise_dontneed(me, fd).unwrap();
                    assert_eq!(cached_pages(k, "/root/f"), 0);
                    k.sys_fadvise(me, fd, advice).unwrap();
                    k.file_mut(me, fd).unwrap().pos = 0;
                    ios0 = k.block.devs[dev].stats_at(k.now).ios[0];
                    at = 0;
                    st = 3;
                }
                if at < total {
                    let r = k.sys_read(me, fd, 64 << 10).unwrap();
                    at += r.bytes;
                    return Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }));
                }
                out.set(k.block.devs[dev].stats_at(k.now).ios[0] - ios0);
                None
            })),
            Sink::Null,
            Sink::Null,
        );
        k.run_until(k.now + 120 * NS_PER_SEC, &mut |k| k.task_exited(t));
        assert!(k.task_exited(t));
        reads.get()
    }

    /// generic_fadvise: RANDOM reads what is asked for (force_page_cache_ra, no window),
    /// SEQUENTIAL doubles the file's readahead window, NORMAL is the device's.
    #[test]
    fn fadvise_random_reads_only_the_request_and_sequential_doubles_the_window() {
        let normal = read_requests_under(Fadvice::Normal);
        let seq = read_requests_under(Fadvice::Sequential);
        let random = read_requests_under(Fadvice::Random);
        // 16 MiB in 64 KiB reads: RANDOM one request per read; NORMAL read_ahead_kb windows.
        assert_eq!(random, 256, "one 64 KiB request per read");
        assert!(normal < random, "readahead windows are larger than the reads: {normal}");
        assert!((normal as f64 / seq as f64 - 2.0).abs() < 0.15, "normal {normal} vs sequential {seq} requests");
    }
}

impl Kernel {
    /// fallocate(fd, 0, 0, len) (ext4_fallocate): reserve blocks for the first `len` bytes
    /// and extend i_size; no page enters the page cache. On tmpfs (shmem_fallocate) the
    /// pages themselves would be allocated, which is not modelled: refused with EOPNOTSUPP.
    pub fn sys_fallocate(&mut self, tid: TaskId, fd: usize, len: u64) -> Result<Option<memtwin_engine::Ns>, Errno> {
        let f = self.file(tid, fd).ok_or(Errno::EBADF)?;
        let Target::Inode(ino) = f.target else { return Err(Errno::EINVAL) };
        let mount = self.fs.inodes[ino as usize].mount;
        if self.fs.mounts[mount as usize].is_tmpfs() {
            return Err(Errno::EOPNOTSUPP);
        }
        let before = (self.fs.inodes[ino as usize].extent, self.fs.mounts[mount as usize].used);
        let got = self.reserve_blocks_for(ino, 0, len)?;
        if got < len {
            // All or nothing: give back what was reserved.
            self.fs.inodes[ino as usize].extent = before.0;
            self.fs.mounts[mount as usize].used = before.1;
            return Err(Errno::ENOSPC);
        }
        let i = &mut self.fs.inodes[ino as usize];
        i.size = i.size.max(len);
        i.disk_size = i.disk_size.max(len);
        Ok(None)
    }

    /// ftruncate(fd, size): shrinking drops the cached pages past the end; growing makes a
    /// hole (no blocks, no pages).
    pub fn sys_ftruncate(&mut self, tid: TaskId, fd: usize, size: u64) -> Result<Option<memtwin_engine::Ns>, Errno> {
        let f = self.file(tid, fd).ok_or(Errno::EBADF)?;
        let Target::Inode(ino) = f.target else { return Err(Errno::EINVAL) };
        if size < self.fs.inodes[ino as usize].size {
            return Ok(self.truncate_inode(ino, size));
        }
        self.fs.inodes[ino as usize].size = size;
        self.file_update_time(ino);
        Ok(None)
    }
}
