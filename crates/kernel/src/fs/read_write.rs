//! The system calls tasks use on files (fs/open.c, fs/read_write.c, mm/filemap.c's read
//! and write paths, fs/direct-io.c). Calls are resumable: a call that must wait returns the
//! bytes done so far and the step to take; the caller calls again for the rest.

use super::{normalize, parent_of, DirectWrite, Inode, OpenFile, RaState, Target};
use crate::block::{Dir, ReqKind};
use crate::delayacct::SysWork;
use crate::mm::{cost, MappingKind, Slot, PAGE_SIZE};
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::{Ns, TaskId, NS_PER_SEC};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenFlags {
    pub read: bool,
    pub write: bool,
    pub create: bool,
    pub trunc: bool,
    pub append: bool,
    /// O_DIRECT: bypass the page cache.
    pub direct: bool,
}

#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errno {
    ENOENT,
    ENOSPC,
    EISDIR,
    EINVAL,
    EBADF,
    EACCES,
    EBUSY,
    ENOMEM,
    EPERM,
    EEXIST,
    ENOTDIR,
    EROFS,
    EFBIG,
    EIO,
    EOPNOTSUPP,
    ENODEV,
    ENOTTY,
}

impl Errno {
    /// The error's number on Linux (errno-base.h, errno.h).
    pub fn code(self) -> i32 {
        match self {
            Errno::EPERM => 1,
            Errno::ENOENT => 2,
            Errno::EIO => 5,
            Errno::EBADF => 9,
            Errno::ENOMEM => 12,
            Errno::EACCES => 13,
            Errno::EBUSY => 16,
            Errno::EEXIST => 17,
            Errno::ENOTDIR => 20,
            Errno::EISDIR => 21,
            Errno::EINVAL => 22,
            Errno::EFBIG => 27,
            Errno::ENOSPC => 28,
            Errno::EROFS => 30,
            Errno::EOPNOTSUPP => 95,
            Errno::ENODEV => 19,
            Errno::ENOTTY => 25,
        }
    }

    /// strerror(3) text.
    pub fn strerror(self) -> &'static str {
        match self {
            Errno::ENOENT => "No such file or directory",
            Errno::EIO => "Input/output error",
            Errno::ENOSPC => "No space left on device",
            Errno::EISDIR => "Is a directory",
            Errno::EINVAL => "Invalid argument",
            Errno::EBADF => "Bad file descriptor",
            Errno::EACCES => "Permission denied",
            Errno::EBUSY => "Device or resource busy",
            Errno::ENOMEM => "Cannot allocate memory",
            Errno::EPERM => "Operation not permitted",
            Errno::EEXIST => "File exists",
            Errno::ENOTDIR => "Not a directory",
            Errno::EROFS => "Read-only file system",
            Errno::EFBIG => "File too large",
            Errno::EOPNOTSUPP => "Operation not supported",
            Errno::ENODEV => "No such device",
            Errno::ENOTTY => "Inappropriate ioctl for device",
        }
    }
}

/// The outcome of (part of) a read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoProgress {
    pub bytes: u64,
    /// The task must take this step (sleep) before calling again for the rest.
    pub wait: Option<Step>,
    /// A read reached the end of the file.
    pub eof: bool,
}

impl IoProgress {
    fn done(bytes: u64) -> IoProgress {
        IoProgress { bytes, wait: None, eof: false }
    }
}

#[inline]
fn ns_for(bytes: u64, bw: f64) -> Ns {
    (bytes as f64 / bw * NS_PER_SEC as f64) as Ns
}

/// Page-cache reads copy at most this much per call, so a task's step stays short.
const MAX_PAGES_PER_CALL: u64 = 256;

impl Kernel {
    /// open(2). `path` is absolute. Returns the descriptor and, when truncating a file under
    /// writeback, the time until which the caller waits (truncate waits for writeback).
    pub fn sys_open(&mut self, tid: TaskId, path: &str, flags: OpenFlags) -> Result<(usize, Option<Ns>), Errno> {
        let path = normalize("/", path);
        let mut wait = None;
        let target = match path.as_str() {
            "/dev/zero" => Target::Zero,
            "/dev/null" => Target::Null,
            "/dev/urandom" | "/dev/random" => Target::Random,
            // Root may open a read-only /proc file for writing (the mode check passes with
            // CAP_DAC_OVERRIDE); the write then fails.
            p if flags.write && !flags.read && crate::fs::PROC_READ_ONLY.contains(&p) => Target::ProcRo,
            p if p.starts_with("/dev/") && self.block.find(&p[5..]).is_some() => {
                Target::BlockDev(self.block.find(&p[5..]).unwrap_or(0))
            }
            p => {
                if self.fs.is_dir(p) {
                    return Err(Errno::EISDIR);
                }
                match self.fs.lookup(p) {
                    Some(ino) => {
                        if flags.trunc && flags.write {
                            wait = self.truncate_inode(ino, 0);
                        }
                        Target::Inode(ino)
                    }
                    None if flags.create => Target::Inode(self.create_inode(p)?),
                    None => return Err(Errno::ENOENT),
                }
            }
        };
        if let Target::Inode(ino) = target {
            self.fs.inodes[ino as usize].opens += 1;
        }
        let mut of = OpenFile { target, pos: 0, flags, ra: RaState { prev_index: u64::MAX, ..Default::default() }, advice: Default::default() };
        if flags.append {
            if let Target::Inode(ino) = target {
                of.pos = self.fs.inodes[ino as usize].size;
            }
        }
        self.charge_sys(tid, self.machine.cpu_model.syscall_ns * 4);
        // get_unused_fd_flags + fd_install: the lowest free descriptor, a new description.
        Ok((self.fd_install_new(tid, of), wait))
    }

    /// O_CREAT of a new file: its directory must exist; tmpfs charges an inode
    /// (shmem_reserve_inode: ENOSPC past nr_inodes).
    fn create_inode(&mut self, path: &str) -> Result<u32, Errno> {
        let parent = parent_of(path);
        if !self.fs.is_dir(parent) {
            return Err(if self.fs.lookup(parent).is_some() { Errno::ENOTDIR } else { Errno::ENOENT });
        }
        let mount = self.fs.mount_of(path).ok_or(Errno::ENOENT)?;
        let mp = &self.fs.mounts[mount as usize];
        if mp.nr_inodes.is_some_and(|n| mp.inodes_used >= n) {
            return Err(Errno::ENOSPC);
        }
        let now = self.now;
        let seq = self.fs.mounts[mount as usize].journal.note(now);
        Ok(self.new_inode(mount, path, seq))
    }

    /// A linked, empty inode at `path` on `mount` (created in journal transaction `seq`).
    pub(crate) fn new_inode(&mut self, mount: u32, path: &str, seq: u64) -> u32 {
        let m = &self.fs.mounts[mount as usize];
        let (kind, dev) = if m.is_tmpfs() { (MappingKind::Shmem, None) } else { (MappingKind::File, m.dev) };
        let ino = self.fs.inodes.len() as u32;
        // Each file's blocks are contiguous; files are far apart (seeks between files).
        let disk_base = (ino as u64 + 1) << 36;
        let mapping = self.mm.new_mapping(kind, dev, disk_base);
        self.fs.inodes.push(Inode {
            path: path.to_string(),
            mapping,
            size: 0,
            mount,
            disk_base,
            extent: 0,
            linked: true,
            opens: 0,
            created_seq: seq,
            unlinked_seq: None,
            disk_size: 0,
            times: [self.now; 4],
            perm: 0o644,
            flush_on_close: false,
        });
        self.fs.names.insert((mount, path.to_string()), ino);
        self.fs.by_mapping.insert(mapping, ino);
        self.mm.mappings[mapping as usize].fs_buffers = crate::fs::buffer::fs_write_buffers(self.machine.kernel, &self.fs.mounts[mount as usize].fstype);
        self.fs.mounts[mount as usize].inodes_used += 1;
        ino
    }

    /// __fput of a description of inode `ino`: the last release of an unlinked file
    /// frees it.
    /// The last reference to a file on inode `ino` goes. `may_wait`: the closing task's
    /// step may end in a wait (close(2), dup2); not so for the exit path.
    pub(super) fn file_release_inode(&mut self, ino: u32, may_wait: bool) {
        let i = &mut self.fs.inodes[ino as usize];
        if std::mem::take(&mut i.flush_on_close) {
            // ext4_release_file -> ext4_alloc_da_blocks (xfs_release on XFS):
            // filemap_flush (WB_SYNC_NONE) submits the file's dirty pages now, without
            // waiting for them to be written, so that a file rewritten after truncation is
            // not left empty on disk for the dirty_expire interval. Nothing to do without
            // delayed-allocation pages. Submitting does wait for request slots: close(2)
            // returns once all but a queue's worth of the file are written.
            let m = i.mapping;
            match self.current {
                Some(t) if may_wait && self.tasks[t as usize].wait_after.is_none() => {
                    if !self.filemap_flush_submit(m, t) {
                        self.tasks[t as usize].wait_after = Some(crate::wait::Wait::flush_submit(m));
                    }
                }
                cur => self.filemap_fdatawrite(m, cur),
            }
        }
        let i = &mut self.fs.inodes[ino as usize];
        i.opens -= 1;
        if !i.linked && i.opens == 0 {
            self.evict_inode(ino);
        }
    }

    /// unlink(2). Returns when the caller may go on (eviction waits for writeback).
    pub fn sys_unlink(&mut self, tid: TaskId, path: &str) -> Result<Option<Ns>, Errno> {
        let path = normalize("/", path);
        let Some(ino) = self.fs.lookup(&path) else {
            return Err(if self.fs.is_dir(&path) { Errno::EISDIR } else { Errno::ENOENT });
        };
        let mount = self.fs.inodes[ino as usize].mount;
        self.fs.names.remove(&(mount, path));
        self.charge_sys(tid, self.machine.cpu_model.syscall_ns * 10);
        let now = self.now;
        let seq = self.fs.mounts[mount as usize].journal.note(now);
        let i = &mut self.fs.inodes[ino as usize];
        i.linked = false;
        i.unlinked_seq = Some(seq);
        if i.opens == 0 {
            let m = i.mapping;
            let wait = self.block.writeback_completion(m);
            let pages = self.mm.mappings[m as usize].nrpages;
            self.charge_sys(tid, pages * self.machine.cpu_model.page_cache_ns);
            self.evict_inode(ino);
            // evict -> truncate_inode_pages_final waits for the writeback in flight.
            return Ok(self.wait_for_writeback_of(m, wait));
        }
        Ok(None)
    }

    /// evict(): the inode's page cache and its blocks go.
    pub(super) fn evict_inode(&mut self, ino: u32) {
        let m = self.fs.inodes[ino as usize].mapping;
        self.truncate_mapping(m, 0);
        let mount = self.fs.inodes[ino as usize].mount;
        let used = self.fs.inodes[ino as usize].extent;
        let mp = &mut self.fs.mounts[mount as usize];
        mp.used -= used;
        mp.inodes_used = mp.inodes_used.saturating_sub(1);
        self.fs.inodes[ino as usize].size = 0;
        self.fs.inodes[ino as usize].extent = 0;
        self.fs.by_mapping.remove(&m);
        self.mm.release_mapping(m);
    }

    /// file_update_time: a write or truncate sets mtime and ctime to now.
    pub(crate) fn file_update_time(&mut self, ino: u32) {
        let now = self.now;
        let t = &mut self.fs.inodes[ino as usize].times;
        t[1] = now;
        t[2] = now;
    }

    /// touch_atime with relatime (the default mount option, relatime_need_update): atime
    /// moves only when it is not newer than mtime or ctime, or is a day old; noatime never.
    pub(crate) fn touch_atime(&mut self, ino: u32) {
        let now = self.now;
        let mount = self.fs.inodes[ino as usize].mount;
        let opts = &self.fs.mounts[mount as usize].options;
        // One pass over the options (this runs on every read).
        let (mut noatime, mut strict) = (false, false);
        for o in opts.as_bytes().split(|&b| b == b',') {
            noatime |= o == b"noatime";
            strict |= o == b"strictatime";
        }
        if noatime {
            return;
        }
        let t = &mut self.fs.inodes[ino as usize].times;
        const DAY: memtwin_engine::Ns = 24 * 3600 * 1_000_000_000;
        if strict || t[0] <= t[1] || t[0] <= t[2] || now.saturating_sub(t[0]) >= DAY {
            t[0] = now;
        }
    }

    /// truncate to `size` bytes: pages past it leave the page cache at once (dirty ones are
    /// cancelled). Direct transfers in flight on the inode are waited for (inode_dio_wait),
    /// and truncate_inode_pages waits for pages under writeback (folio_wait_writeback):
    /// a task truncating in its step sleeps in that wait once the step's CPU work is done
    /// (`WaitOn::FdataWait` on the mapping's writeback in flight, `Task::wait_after`), and
    /// None is returned; outside a task's step, the time that writeback completes.
    pub fn truncate_inode(&mut self, ino: u32, size: u64) -> Option<Ns> {
        let i = &self.fs.inodes[ino as usize];
        let m = i.mapping;
        let wait = if self.mm.mappings[m as usize].nr_writeback > 0 {
            self.block.writeback_completion(m)
        } else {
            None
        };
        // inode_dio_wait (ext4_setattr, xfs_setattr_size; ext3/ext4's setattr in 2.6.39):
        // direct transfers in flight on the inode, from any task, end first.
        let dio = self.block.dio_completion(ino);
        self.truncate_mapping(m, size.div_ceil(PAGE_SIZE));
        self.file_update_time(ino);
        let fstype = self.fs.mounts[self.fs.inodes[ino as usize].mount as usize].fstype.as_str();
        let (ext4, xfs) = (fstype == "ext4", fstype == "xfs");
        let i = &mut self.fs.inodes[ino as usize];
        let old = i.size;
        i.size = i.size.min(size);
        i.disk_size = i.disk_size.min(size);
        if ext4 && i.size == 0 {
            // ext4_truncate: "if (inode->i_size == 0 && !test_opt(sb, NO_AUTO_DA_ALLOC))
            // ext4_set_inode_state(inode, EXT4_STATE_DA_ALLOC_CLOSE)" (2.6.30+).
            i.flush_on_close = true;
        }
        if xfs && size <= old && !(old == 0 && size == 0) {
            // xfs_setattr_size: "Truncated down ... we mark this inode and flush it when
            // the file is closed" (an empty file truncated to 0 is short-circuited).
            i.flush_on_close = true;
        }
        let new_extent = i.size.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        let freed = i.extent.saturating_sub(new_extent);
        i.extent = i.extent.min(new_extent);
        let mount = i.mount;
        self.fs.mounts[mount as usize].used -= freed;
        match dio {
            Some(d) => self.inode_dio_wait(ino, m, wait.map_or(d, |w| w.max(d))),
            None => self.wait_for_writeback_of(m, wait),
        }
    }

    /// The caller must wait for the direct transfers on inode `ino` and the writeback of its
    /// mapping `m` in flight, all done at `due`: as a wait path of the task whose step this
    /// is (None returned), else the time.
    fn inode_dio_wait(&mut self, ino: u32, m: u32, due: Ns) -> Option<Ns> {
        match self.current {
            Some(t) => {
                let w = crate::wait::Wait::inode_dio_wait(ino, m, self.block.submitted);
                self.tasks[t as usize].wait_after = Some(w);
                None
            }
            None => Some(due),
        }
    }

    /// The caller must wait for mapping `m`'s writeback in flight, due at `due`: as a wait
    /// path of the task whose step this is (None returned), else the time.
    fn wait_for_writeback_of(&mut self, m: u32, due: Option<Ns>) -> Option<Ns> {
        match (self.current, due) {
            (Some(t), Some(_)) => {
                let w = crate::wait::Wait::fdatawait(Some(m), self.block.submitted);
                self.tasks[t as usize].wait_after = Some(w);
                None
            }
            _ => due,
        }
    }

    /// Reserve blocks for a write of `len` bytes at `pos`. Returns how many bytes fit: the
    /// write is cut at the page where the filesystem fills up (shmem_inode_acct_blocks
    /// fails page by page, so a write that crosses the limit is short) and ENOSPC when
    /// not one more page fits.
    pub(crate) fn reserve_blocks_for(&mut self, ino: u32, pos: u64, len: u64) -> Result<u64, Errno> {
        self.reserve_blocks(ino, pos, len)
    }

    fn reserve_blocks(&mut self, ino: u32, pos: u64, len: u64) -> Result<u64, Errno> {
        // s_maxbytes: MAX_LFS_FILESIZE (generic_write_check_limits); the filesystem's free
        // space is the limit that matters below it.
        let max_bytes = crate::mm::page::MAX_LFS_FILESIZE;
        if pos >= max_bytes {
            return Err(Errno::EFBIG);
        }
        let len = len.min(max_bytes - pos);
        let i = &self.fs.inodes[ino as usize];
        let end = pos + len;
        let need = end.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        if need <= i.extent {
            return Ok(len);
        }
        let mount = i.mount as usize;
        let extent = i.extent;
        let cap = self.fs_capacity(mount as u32);
        let free = cap.saturating_sub(self.fs.mounts[mount].used);
        let grant = (need - extent).min(free / PAGE_SIZE * PAGE_SIZE);
        let new_extent = extent + grant;
        let allowed = new_extent.saturating_sub(pos).min(len);
        if allowed == 0 {
            return Err(Errno::ENOSPC);
        }
        self.fs.mounts[mount].used += grant;
        self.fs.inodes[ino as usize].extent = new_extent;
        Ok(allowed)
    }

    /// Whether a buffered read of `len` bytes at the file's offset would have to wait
    /// (a read under IOCB_NOWAIT: generic_file_buffered_read returns -EAGAIN before any
    /// readahead when a page is missing or locked). Only page-cache files can say no.
    pub fn read_would_block(&self, tid: TaskId, fd: usize, len: u64) -> bool {
        let Some(f) = self.file(tid, fd) else { return false };
        let (m, size) = match f.target {
            Target::Inode(ino) => (self.fs.inodes[ino as usize].mapping, self.fs.inodes[ino as usize].size),
            Target::BlockDev(d) => (self.block.devs[d as usize].mapping, u64::MAX),
            _ => return false,
        };
        let end = (f.pos + len).min(size);
        let mut at = f.pos;
        while at < end {
            match self.mm.slot(m, at / PAGE_SIZE) {
                Slot::Page(p) if !self.mm.pages.locked(p) => at = (at / PAGE_SIZE + 1) * PAGE_SIZE,
                _ => return true,
            }
        }
        false
    }

    /// read(2) of up to `len` bytes; counts the call and its bytes for /proc/PID/io
    /// (add_rchar, inc_syscr in fs/read_write.c).
    pub fn sys_read(&mut self, tid: TaskId, fd: usize, len: u64) -> Result<IoProgress, Errno> {
        let r = self.do_sys_read(tid, fd, len);
        if r.is_ok() {
            if let Some(Target::Inode(ino)) = self.file(tid, fd).map(|f| f.target) {
                self.touch_atime(ino);
            }
        }
        let t = &mut self.tasks[tid as usize];
        t.syscr += 1;
        if let Ok(p) = &r {
            t.rchar += p.bytes;
        }
        r
    }

    fn do_sys_read(&mut self, tid: TaskId, fd: usize, len: u64) -> Result<IoProgress, Errno> {
        let f = self.file_mut(tid, fd)?;
        let (target, pos, direct) = (f.target, f.pos, f.flags.direct);
        let cpu = &self.machine.cpu_model;
        let (syscall_ns, zero_bw, copy_bw) = (cpu.syscall_ns, cpu.zero_bw, cpu.copy_bw);
        self.charge_sys(tid, syscall_ns);
        match target {
            Target::Zero => {
                // clear_user of the caller's buffer.
                self.charge_sys_for(tid, ns_for(len, zero_bw), SysWork::Copy);
                Ok(IoProgress::done(len))
            }
            Target::Null => Ok(IoProgress { bytes: 0, wait: None, eof: true }),
            // Opened write-only.
            Target::ProcRo => Err(Errno::EBADF),
            Target::Random => {
                // get_random_bytes: a ChaCha20 stream at ~1/10 of copy speed.
                self.charge_sys(tid, ns_for(len, copy_bw / 10.0));
                Ok(IoProgress::done(len))
            }
            Target::Inode(ino) => {
                let i = &self.fs.inodes[ino as usize];
                let (m, size) = (i.mapping, i.size);
                let mount = &self.fs.mounts[i.mount as usize];
                let dev = mount.dev;
                if direct {
                    if let Some(d) = dev {
                        let base = i.disk_base;
                        // kiocb_write_and_wait (generic_file_read_iter with IOCB_DIRECT):
                        // dirty cached pages of the range reach the disk first.
                        if let Some(w) = self.direct_write_and_wait(tid, m, pos, pos + len) {
                            return Ok(IoProgress { bytes: 0, wait: Some(w), eof: false });
                        }
                        return Ok(self.direct_io(
                            tid,
                            fd,
                            d,
                            base,
                            pos,
                            len.min(size.saturating_sub(pos)),
                            Dir::Read,
                            Some(ino),
                        ));
                    }
                }
                self.filemap_read(tid, fd, m, size, len)
            }
            Target::BlockDev(d) => {
                let size = self.block.devs[d as usize].disk.size_bytes;
                if direct {
                    return Ok(self.direct_io(tid, fd, d, 0, pos, len.min(size.saturating_sub(pos)), Dir::Read, None));
                }
                let m = self.block.devs[d as usize].mapping;
                self.filemap_read(tid, fd, m, size, len)
            }
        }
    }

    /// filemap_read: copy from the page cache, reading missing pages in through readahead.
    fn filemap_read(&mut self, tid: TaskId, fd: usize, m: u32, size: u64, len: u64) -> Result<IoProgress, Errno> {
        let pos = self.file_mut(tid, fd)?.pos;
        if pos >= size || len == 0 {
            return Ok(IoProgress { bytes: 0, wait: None, eof: pos >= size });
        }
        let end = (pos + len).min(size).min(pos + MAX_PAGES_PER_CALL * PAGE_SIZE - pos % PAGE_SIZE);
        let cpu_copy = self.machine.cpu_model.copy_bw;
        let lookup_ns = self.machine.cpu_model.page_cache_ns;
        let mut at = pos;
        let mut wait = None;
        let shmem = self.mm.mappings[m as usize].swap_backed();
        while at < end {
            let index = at / PAGE_SIZE;
            let chunk = (PAGE_SIZE - at % PAGE_SIZE).min(end - at);
            let slot = self.mm.slot(m, index);
            if shmem {
                // shmem_file_read_iter: a hole reads as the zero page (nothing is
                // allocated); a swapped-out page is swapped in first (shmem_swapin_folio),
                // and a page being swapped in is waited for.
                match slot {
                    Slot::Page(p) if !self.mm.pages.locked(p) => {}
                    Slot::Empty | Slot::Shadow(_) => {
                        self.charge_sys(tid, lookup_ns + ns_for(chunk, cpu_copy));
                        at += chunk;
                        continue;
                    }
                    _ => match self.touch(tid, m, index, false) {
                        Ok(()) => continue,
                        Err(step) => {
                            wait = Some(step);
                            break;
                        }
                    },
                }
            }
            if !shmem && !self.per_page_io && matches!(slot, Slot::Page(_)) {
                let to = self.filemap_read_run(tid, m, at, end)?;
                if to > at {
                    at = to;
                    continue;
                }
            }
            if let Slot::Page(p) = slot {
                // filemap_get_pages -> filemap_readahead: the page carries the mark. A page
                // still being read counts too (filemap_get_read_batch takes it and stops
                // there): the next window starts before the wait.
                if self.mm.pages.readahead(p) {
                    let req = ((pos + len).min(size) - at).div_ceil(PAGE_SIZE);
                    self.page_cache_async_ra(tid, fd, m, index, p, req, size);
                }
            }
            match slot {
                Slot::Page(p) if !self.mm.pages.locked(p) => {
                    self.mark_page_accessed(p);
                    self.charge_sys(tid, lookup_ns);
                    self.charge_sys_for(tid, ns_for(chunk, cpu_copy), SysWork::Copy);
                    at += chunk;
                }
                Slot::Page(p) => {
                    // filemap_update_page -> folio_wait_locked: asleep until the read of
                    // the page completes.
                    wait = Some(self.folio_wait_locked(tid, m, index, p));
                    break;
                }
                _ => {
                    let req_pages = (end - at).div_ceil(PAGE_SIZE).max(((pos + len).min(size) - at).div_ceil(PAGE_SIZE));
                    match self.page_cache_sync_ra(tid, fd, m, index, req_pages, size) {
                        Ok(()) => {}
                        Err(step) => {
                            wait = Some(step);
                            break;
                        }
                    }
                    // Loop again: the page is now present (locked, being read).
                }
            }
        }
        let done = at - pos;
        // ra->prev_pos: the byte after the read (5.12+), or the last page read.
        let prev_index = if self.profile.ra_prev_pos_after_read { at / PAGE_SIZE } else { at.saturating_sub(1) / PAGE_SIZE };
        let f = self.file_mut(tid, fd)?;
        f.pos = at;
        if done > 0 {
            f.ra.prev_index = prev_index;
        }
        Ok(IoProgress { bytes: done, wait, eof: false })
    }

    /// filemap_read's loop over a run of cached, uptodate pages from `at` (below `end`):
    /// for each page exactly what the per-page step does — folio_mark_accessed, the lookup
    /// and the copy to user space charged — with the charges summed. The run stops before
    /// the page that carries PG_readahead (the per-page step starts the next window there)
    /// and at the first page missing or locked. Returns where it stopped.
    fn filemap_read_run(&mut self, tid: TaskId, m: u32, mut at: u64, end: u64) -> Result<u64, Errno> {
        let c = &self.machine.cpu_model;
        let (cpu_copy, lookup_ns) = (c.copy_bw, c.page_cache_ns);
        let page_copy_ns = ns_for(PAGE_SIZE, cpu_copy);
        let (mut lookup, mut copy) = (0, 0);
        while at < end {
            let index = at / PAGE_SIZE;
            let Slot::Page(p) = self.mm.slot(m, index) else { break };
            if self.mm.pages.locked(p) || self.mm.pages.readahead(p) {
                break;
            }
            let chunk = (PAGE_SIZE - at % PAGE_SIZE).min(end - at);
            self.mark_page_accessed(p);
            lookup += lookup_ns;
            copy += if chunk == PAGE_SIZE { page_copy_ns } else { ns_for(chunk, cpu_copy) };
            at += chunk;
        }
        self.charge_sys(tid, lookup);
        self.charge_sys_for(tid, copy, SysWork::Copy);
        Ok(at)
    }

    /// write(2) of up to `len` bytes; counts the call and its bytes for /proc/PID/io
    /// (add_wchar, inc_syscw).
    pub fn sys_write(&mut self, tid: TaskId, fd: usize, len: u64) -> Result<IoProgress, Errno> {
        let r = self.do_sys_write(tid, fd, len);
        if r.as_ref().is_ok_and(|p| p.bytes > 0) {
            if let Some(Target::Inode(ino)) = self.file(tid, fd).map(|f| f.target) {
                self.file_update_time(ino);
            }
        }
        let t = &mut self.tasks[tid as usize];
        t.syscw += 1;
        if let Ok(p) = &r {
            t.wchar += p.bytes;
        }
        r
    }

    fn do_sys_write(&mut self, tid: TaskId, fd: usize, len: u64) -> Result<IoProgress, Errno> {
        let f = self.file_mut(tid, fd)?;
        let (target, pos, direct) = (f.target, f.pos, f.flags.direct);
        self.charge_sys(tid, self.machine.cpu_model.syscall_ns);
        match target {
            Target::Null | Target::Zero | Target::Random => Ok(IoProgress::done(len)),
            // proc_reg_write: no proc_write handler -> -EIO.
            Target::ProcRo => Err(Errno::EIO),
            Target::Inode(ino) => {
                let len = self.reserve_blocks(ino, pos, len)?;
                let end = pos + len;
                let i = &self.fs.inodes[ino as usize];
                let m = i.mapping;
                let dev = self.fs.mounts[i.mount as usize].dev;
                if direct {
                    if let Some(d) = dev {
                        let base = i.disk_base;
                        // Cached pages of the range are written and waited for, then dropped
                        // (kiocb_invalidate_pages: filemap_write_and_wait_range, then
                        // invalidate_inode_pages2_range).
                        if let Some(w) = self.direct_write_and_wait(tid, m, pos, end) {
                            return Ok(IoProgress { bytes: 0, wait: Some(w), eof: false });
                        }
                        self.invalidate_range(m, pos / PAGE_SIZE, end.div_ceil(PAGE_SIZE));
                        let p = self.direct_io(tid, fd, d, base, pos, len, Dir::Write, Some(ino));
                        let i = &mut self.fs.inodes[ino as usize];
                        i.size = i.size.max(pos + p.bytes);
                        return Ok(p);
                    }
                }
                let p = self.generic_perform_write(tid, fd, m, len)?;
                let i = &mut self.fs.inodes[ino as usize];
                i.size = i.size.max(pos + p.bytes);
                Ok(p)
            }
            Target::BlockDev(d) => {
                let size = self.block.devs[d as usize].disk.size_bytes;
                if pos >= size {
                    return Err(Errno::ENOSPC);
                }
                let len = len.min(size - pos);
                if direct {
                    let m = self.block.devs[d as usize].mapping;
                    if let Some(w) = self.direct_write_and_wait(tid, m, pos, pos + len) {
                        return Ok(IoProgress { bytes: 0, wait: Some(w), eof: false });
                    }
                    self.invalidate_range(m, pos / PAGE_SIZE, (pos + len).div_ceil(PAGE_SIZE));
                    return Ok(self.direct_io(tid, fd, d, 0, pos, len, Dir::Write, None));
                }
                let m = self.block.devs[d as usize].mapping;
                self.generic_perform_write(tid, fd, m, len)
            }
        }
    }

    /// generic_perform_write: copy into page-cache pages (allocating them), mark them
    /// accessed and dirty, then let balance_dirty_pages throttle the writer.
    fn generic_perform_write(&mut self, tid: TaskId, fd: usize, m: u32, len: u64) -> Result<IoProgress, Errno> {
        let pos = self.file_mut(tid, fd)?.pos;
        let end = pos + len.min(MAX_PAGES_PER_CALL * PAGE_SIZE - pos % PAGE_SIZE);
        let mut at = pos;
        let mut wait = None;
        let shmem = self.mm.mappings[m as usize].swap_backed();
        let buffers = !shmem && self.write_begin_buffers(m);
        if !shmem && !self.per_page_io {
            (at, wait) = self.perform_write_run(tid, m, at, end, buffers);
        }
        while at < end && wait.is_none() {
            let index = at / PAGE_SIZE;
            let chunk = (PAGE_SIZE - at % PAGE_SIZE).min(end - at);
            if shmem {
                // shmem_write_begin -> shmem_get_folio(SGP_WRITE): a swapped-out page is
                // swapped in (and its swap copy dropped) before it is written.
                let slot = self.mm.slot(m, index);
                let busy = matches!(slot, Slot::Page(p) if self.mm.pages.locked(p));
                if busy || matches!(slot, Slot::Swap(_)) {
                    match self.touch(tid, m, index, true) {
                        Ok(()) => continue,
                        Err(step) => {
                            wait = Some(step);
                            break;
                        }
                    }
                }
            }
            let p = match self.mm.slot(m, index) {
                Slot::Page(p) => p,
                _ => match self.page_cache_alloc(tid) {
                    Ok(p) => {
                        self.filemap_add_page(m, index, p, false);
                        self.charge_sys(tid, cost::page_cache_insert_ns(&self.machine.cpu_model));
                        p
                    }
                    Err(step) => {
                        wait = Some(step);
                        break;
                    }
                },
            };
            if self.mm.pages.locked(p) {
                // A read of this page is in flight: write_begin's folio_lock waits for it.
                wait = Some(self.folio_wait_locked(tid, m, index, p));
                break;
            }
            // write_begin: create_empty_buffers on a page without buffer heads.
            if buffers {
                if let Err(step) = self.attach_page_buffers(Some(tid), p) {
                    wait = Some(step);
                    break;
                }
            }
            // The lookup (grab_cache_page_write_begin), a disk filesystem's write_begin/
            // write_end (tmpfs has none), and copy_from_user into the page.
            let c = &self.machine.cpu_model;
            let ns = c.page_cache_ns + if shmem { 0 } else { c.fs_write_page_ns };
            self.charge_sys(tid, ns);
            self.charge_sys_for(tid, cost::copy_in_ns(&self.machine.cpu_model, chunk), SysWork::Copy);
            self.write_mark_accessed(p);
            self.set_page_dirty(tid, p);
            at += chunk;
        }
        let done = at - pos;
        self.file_mut(tid, fd)?.pos = at;
        // shmem's backing_dev has no writeback (no BDI_CAP_WRITEBACK): tmpfs writers are
        // never throttled by balance_dirty_pages_ratelimited.
        if wait.is_none() && done > 0 && !self.mm.mappings[m as usize].swap_backed() {
            if let Some(pause) = self.balance_dirty_pages(tid) {
                // balance_dirty_pages: io_schedule_timeout(pause) in TASK_KILLABLE.
                let on = crate::wait::WaitOn::Timeout { until: self.now + pause };
                wait = Some(Step::Wait(crate::wait::Wait { on, reason: crate::delayacct::WaitReason::DirtyThrottle, io: true }));
            }
        }
        Ok(IoProgress { bytes: done, wait, eof: false })
    }

    /// generic_perform_write's loop over the pages of a disk file's mapping from `at` to
    /// `end`: for each page exactly what the per-page step does (the page found or
    /// allocated and inserted, write_begin/write_end and the copy charged, marked accessed
    /// before 4.7, dirtied), with the costs read once and the charges summed. Returns
    /// where it stopped and, if it stopped early, what the writer waits for (the
    /// allocation, or the read of a locked page).
    fn perform_write_run(&mut self, tid: TaskId, m: u32, mut at: u64, end: u64, buffers: bool) -> (u64, Option<Step>) {
        let c = &self.machine.cpu_model;
        let insert_ns = cost::page_cache_insert_ns(c);
        let write_ns = c.page_cache_ns + c.fs_write_page_ns;
        let page_copy_ns = cost::copy_in_ns(c, PAGE_SIZE);
        let (mut sys, mut copy) = (0, 0);
        let mut wait = None;
        while at < end {
            let index = at / PAGE_SIZE;
            let chunk = (PAGE_SIZE - at % PAGE_SIZE).min(end - at);
            let p = match self.mm.slot(m, index) {
                Slot::Page(p) => p,
                _ => match self.page_cache_alloc(tid) {
                    Ok(p) => {
                        self.filemap_add_page(m, index, p, false);
                        sys += insert_ns;
                        p
                    }
                    Err(step) => {
                        wait = Some(step);
                        break;
                    }
                },
            };
            if self.mm.pages.locked(p) {
                wait = Some(self.folio_wait_locked(tid, m, index, p));
                break;
            }
            if buffers {
                if let Err(step) = self.attach_page_buffers(Some(tid), p) {
                    wait = Some(step);
                    break;
                }
            }
            sys += write_ns;
            copy += if chunk == PAGE_SIZE { page_copy_ns } else { cost::copy_in_ns(&self.machine.cpu_model, chunk) };
            self.write_mark_accessed(p);
            self.set_page_dirty(tid, p);
            at += chunk;
        }
        self.charge_sys(tid, sys);
        self.charge_sys_for(tid, copy, SysWork::Copy);
        (at, wait)
    }

    /// filemap_write_and_wait_range before an O_DIRECT transfer of bytes [start, end) of
    /// mapping `m` (all eras: 2.4 generic_file_direct_IO's filemap_fdatasync + fdatawait,
    /// 2.6.39 generic_file_direct_write, 6.x kiocb_invalidate_pages / kiocb_write_and_wait):
    /// if cached pages of the range are dirty or under writeback, the file's dirty pages are
    /// written (the model's writeback walks the whole mapping, the kernel only the range)
    /// and the caller waits for that writeback; None when the range is clean. The transfer
    /// is retried after the wait.
    fn direct_write_and_wait(&mut self, tid: TaskId, m: u32, start: u64, end: u64) -> Option<Step> {
        let (mut dirty, mut writeback) = (false, false);
        let mut at = start / PAGE_SIZE;
        let last = end.div_ceil(PAGE_SIZE);
        while let Some((index, slot)) = self.mm.next_slot(m, at, last) {
            if let Slot::Page(p) = slot {
                dirty |= self.mm.pages.dirty(p);
                writeback |= self.mm.pages.writeback(p);
            }
            if dirty {
                break;
            }
            at = index + 1;
        }
        if !dirty && !writeback {
            return None;
        }
        self.filemap_fdatawrite(m, Some(tid));
        let upto = self.block.submitted;
        if !self.block.writeback_in_flight(Some(m), upto) {
            return None;
        }
        Some(Step::Wait(crate::wait::Wait::fdatawait(Some(m), upto)))
    }

    /// O_DIRECT: the transfer goes straight to the device; the caller waits for it. Its
    /// requests carry the file's inode (`ino`; a truncation waits for them, inode_dio_wait),
    /// and a write to a file puts its data on the disk when each request completes.
    #[allow(clippy::too_many_arguments)]
    fn direct_io(&mut self, tid: TaskId, fd: usize, dev: u32, base: u64, pos: u64, len: u64, dir: Dir, ino: Option<u32>) -> IoProgress {
        if len == 0 {
            return IoProgress { bytes: 0, wait: None, eof: true };
        }
        let max = self.block.devs[dev as usize].disk.model.max_request_bytes.max(PAGE_SIZE);
        let mut off = 0;
        while off < len {
            let n = (len - off).min(max);
            let kind = ReqKind::Direct {
                ino: ino.unwrap_or(crate::block::NO_INODE),
            };
            let done_at = self.submit_bio(dev, dir, base + pos + off, n, kind, Some(tid));
            if let (Some(ino), Dir::Write) = (ino, dir) {
                self.fs.direct_writes.push(DirectWrite { dev, done_at, ino, end: pos + off + n });
            }
            self.charge_sys(tid, self.machine.cpu_model.io_request_ns);
            off += n;
        }
        let t = &mut self.tasks[tid as usize];
        match dir {
            Dir::Read => t.read_bytes += len,
            Dir::Write => t.write_bytes += len,
        }
        if let Ok(f) = self.file_mut(tid, fd) {
            f.pos = pos + len;
        }
        // The synchronous direct I/O wait: asleep until the transfer's requests complete.
        let w = crate::wait::Wait {
            on: crate::wait::WaitOn::DirectIo { task: tid, upto: self.block.submitted },
            reason: crate::delayacct::WaitReason::Blkio,
            io: true,
        };
        IoProgress { bytes: len, wait: Some(Step::Wait(w)), eof: false }
    }

    /// fsync(2): write the file's dirty pages from the caller and wait for them; the
    /// journal commits (ext4_sync_file -> jbd2_complete_transaction). The wait
    /// (file_write_and_wait_range -> filemap_fdatawait_range) is for this file's writeback
    /// in flight when the call made its last submission: other files' writeback, and
    /// writeback of this file started later, are not waited for. None: nothing to wait for.
    pub fn sys_fsync(&mut self, tid: TaskId, fd: usize) -> Result<Option<Step>, Errno> {
        let f = self.file_mut(tid, fd)?;
        let m = match f.target {
            Target::Inode(ino) => {
                let mount = self.fs.inodes[ino as usize].mount as usize;
                let now = self.now;
                self.fs.mounts[mount].journal.commit(now);
                self.fs.inodes[ino as usize].mapping
            }
            Target::BlockDev(d) => self.block.devs[d as usize].mapping,
            _ => return Ok(None),
        };
        self.filemap_fdatawrite(m, Some(tid));
        let upto = self.block.submitted;
        if !self.block.writeback_in_flight(Some(m), upto) {
            return Ok(None);
        }
        Ok(Some(Step::Wait(crate::wait::Wait::fdatawait(Some(m), upto))))
    }

    /// Count a major page-cache miss read for the task (/proc/PID/io read_bytes).
    pub(crate) fn account_read(&mut self, tid: TaskId, bytes: u64) {
        self.tasks[tid as usize].read_bytes += bytes;
    }
}
