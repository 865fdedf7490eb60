//! Open file descriptions and descriptor tables (fs/file.c, fs/file_table.c,
//! include/linux/fdtable.h).
//!
//! Two levels, as in the kernel. An open file description (`OpenFile`, struct file) holds
//! what one open(2) made: the target, the offset (f_pos), the flags and the readahead state
//! (f_ra, struct file_ra_state) — so two opens of one file read ahead independently. It
//! lives in the system's `FileTable` with a reference count (f_count). A task's
//! `FdTable` (struct fdtable) maps descriptors to descriptions; dup, dup2 and fork share a
//! description (and so its offset and readahead window); the last reference releases it
//! (fput -> __fput). Descriptors 0-2 are the standard streams, which the model routes
//! through the task's sinks (terminal, pipe, capture buffer): they are not in the table,
//! and open(2) allocates from 3.

use super::{OpenFile, Target};
use super::read_write::Errno;
use crate::Kernel;
use memtwin_engine::TaskId;

/// The first descriptor the table allocates (0-2: the standard streams).
pub const FIRST_FD: usize = 3;

/// The open file descriptions of the system, by id; a freed slot is reused.
#[derive(Default)]
pub struct FileTable {
    files: Vec<Option<(OpenFile, u32)>>,
    free: Vec<u32>,
}

impl FileTable {
    /// alloc_file: a new description with one reference.
    pub fn alloc(&mut self, f: OpenFile) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.files[id as usize] = Some((f, 1));
                id
            }
            None => {
                self.files.push(Some((f, 1)));
                (self.files.len() - 1) as u32
            }
        }
    }
    pub fn get(&self, id: u32) -> Option<&OpenFile> {
        self.files.get(id as usize)?.as_ref().map(|(f, _)| f)
    }
    pub fn get_mut(&mut self, id: u32) -> Option<&mut OpenFile> {
        self.files.get_mut(id as usize)?.as_mut().map(|(f, _)| f)
    }
    /// f_count: the descriptors (in any task) that refer to description `id`.
    pub fn count(&self, id: u32) -> u32 {
        self.files.get(id as usize).and_then(|f| f.as_ref()).map_or(0, |(_, c)| *c)
    }
    /// get_file: one more reference.
    fn get_ref(&mut self, id: u32) {
        if let Some(Some((_, c))) = self.files.get_mut(id as usize) {
            *c += 1;
        }
    }
    /// fput: one reference less; the description when that was the last one.
    fn put(&mut self, id: u32) -> Option<OpenFile> {
        let slot = self.files.get_mut(id as usize)?;
        let (_, c) = slot.as_mut()?;
        *c -= 1;
        if *c > 0 {
            return None;
        }
        self.free.push(id);
        slot.take().map(|(f, _)| f)
    }
    /// Descriptions open now.
    pub fn nr_open(&self) -> usize {
        self.files.iter().filter(|f| f.is_some()).count()
    }
}

/// A task's descriptor table: descriptor -> open file description id.
#[derive(Clone, Debug, Default)]
pub struct FdTable {
    fds: Vec<Option<u32>>,
}

impl FdTable {
    /// The description behind `fd`.
    #[inline]
    pub fn get(&self, fd: usize) -> Option<u32> {
        self.fds.get(fd).copied().flatten()
    }
    /// alloc_fd: the lowest free descriptor at or above `from` (FIRST_FD at least).
    fn alloc(&mut self, from: usize) -> usize {
        let from = from.max(FIRST_FD);
        if self.fds.len() < from {
            self.fds.resize(from, None);
        }
        match self.fds[from..].iter().position(|f| f.is_none()) {
            Some(i) => from + i,
            None => {
                self.fds.push(None);
                self.fds.len() - 1
            }
        }
    }
    fn install(&mut self, fd: usize, id: u32) -> Option<u32> {
        if self.fds.len() <= fd {
            self.fds.resize(fd + 1, None);
        }
        self.fds[fd].replace(id)
    }
    fn take(&mut self, fd: usize) -> Option<u32> {
        self.fds.get_mut(fd)?.take()
    }
    /// The open descriptors, lowest first: (fd, description id).
    pub fn iter(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.fds.iter().enumerate().filter_map(|(fd, f)| f.map(|id| (fd, id)))
    }
    /// Open descriptors.
    pub fn len(&self) -> usize {
        self.iter().count()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Kernel {
    /// The open file description behind `tid`'s descriptor `fd`.
    pub fn file(&self, tid: TaskId, fd: usize) -> Option<&OpenFile> {
        self.fs.files.get(self.tasks[tid as usize].files.get(fd)?)
    }
    /// The same, to change (its offset: lseek; its readahead state).
    pub fn file_mut(&mut self, tid: TaskId, fd: usize) -> Result<&mut OpenFile, Errno> {
        let id = self.tasks[tid as usize].files.get(fd).ok_or(Errno::EBADF)?;
        self.fs.files.get_mut(id).ok_or(Errno::EBADF)
    }

    /// fd_install of a new description at the lowest free descriptor (open(2)).
    pub(crate) fn fd_install_new(&mut self, tid: TaskId, f: OpenFile) -> usize {
        let id = self.fs.files.alloc(f);
        let files = &mut self.tasks[tid as usize].files;
        let fd = files.alloc(FIRST_FD);
        files.install(fd, id);
        fd
    }

    /// lseek(fd, pos, SEEK_SET): the description's offset, shared with every descriptor
    /// that refers to it.
    pub fn sys_lseek(&mut self, tid: TaskId, fd: usize, pos: u64) -> Result<u64, Errno> {
        self.charge_sys(tid, self.machine.cpu_model.syscall_ns);
        self.file_mut(tid, fd)?.pos = pos;
        Ok(pos)
    }

    /// dup(2): the lowest free descriptor refers to the same description.
    pub fn sys_dup(&mut self, tid: TaskId, fd: usize) -> Result<usize, Errno> {
        let id = self.tasks[tid as usize].files.get(fd).ok_or(Errno::EBADF)?;
        self.charge_sys(tid, self.machine.cpu_model.syscall_ns);
        self.fs.files.get_ref(id);
        let files = &mut self.tasks[tid as usize].files;
        let new = files.alloc(FIRST_FD);
        files.install(new, id);
        Ok(new)
    }

    /// dup2(2): `new` refers to `old`'s description; what `new` referred to is closed
    /// first (do_dup2). dup2 of a descriptor onto itself does nothing. The standard
    /// streams are the task's sinks, not descriptors of the table: EBADF for 0-2.
    pub fn sys_dup2(&mut self, tid: TaskId, old: usize, new: usize) -> Result<usize, Errno> {
        let id = self.tasks[tid as usize].files.get(old).ok_or(Errno::EBADF)?;
        if new < FIRST_FD {
            return Err(Errno::EBADF);
        }
        self.charge_sys(tid, self.machine.cpu_model.syscall_ns);
        if old == new {
            return Ok(new);
        }
        self.fs.files.get_ref(id);
        if let Some(prev) = self.tasks[tid as usize].files.install(new, id) {
            self.fput(prev, true);
        }
        Ok(new)
    }

    /// close(2): the descriptor goes; the description goes with its last reference.
    pub fn sys_close(&mut self, tid: TaskId, fd: usize) -> Result<(), Errno> {
        let id = self.tasks[tid as usize].files.take(fd).ok_or(Errno::EBADF)?;
        self.fput(id, true);
        Ok(())
    }

    /// fput: drop one reference to description `id`; the last one releases the file
    /// (__fput: the last close of an unlinked file frees it). `may_wait`: as in
    /// `file_release_inode`.
    fn fput(&mut self, id: u32, may_wait: bool) {
        if let Some(f) = self.fs.files.put(id) {
            if let Target::Inode(ino) = f.target {
                self.file_release_inode(ino, may_wait);
            }
        }
    }

    /// dup_fd (copy_files without CLONE_FILES): a forked child gets a copy of its parent's
    /// table, each description one reference more.
    pub(crate) fn dup_fd(&mut self, parent: TaskId, child: TaskId) {
        let table = self.tasks[parent as usize].files.clone();
        for (_, id) in table.iter() {
            self.fs.files.get_ref(id);
        }
        self.tasks[child as usize].files = table;
    }

    /// exit_files: every descriptor of the task is closed.
    pub(crate) fn exit_files(&mut self, tid: TaskId) {
        let table = std::mem::take(&mut self.tasks[tid as usize].files);
        for (_, id) in table.iter() {
            self.fput(id, false);
        }
    }

    /// /proc/PID/fd: each open descriptor and what it refers to (proc_fd_link's path:
    /// the file's path, the device node, "/dev/null", ...), lowest first.
    pub fn proc_pid_fd(&self, tid: TaskId) -> Vec<(usize, String)> {
        let t = &self.tasks[tid as usize];
        t.files
            .iter()
            .filter_map(|(fd, id)| {
                let f = self.fs.files.get(id)?;
                let link = match f.target {
                    Target::Inode(ino) => {
                        let i = &self.fs.inodes[ino as usize];
                        if i.linked { i.path.clone() } else { format!("{} (deleted)", i.path) }
                    }
                    Target::BlockDev(d) => format!("/dev/{}", self.block.devs[d as usize].disk.name),
                    Target::Zero => "/dev/zero".into(),
                    Target::Null => "/dev/null".into(),
                    Target::Random => "/dev/urandom".into(),
                    Target::ProcRo => "/proc".into(),
                };
                Some((fd, link))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fd_table_allocates_the_lowest_free_descriptor() {
        let mut t = FdTable::default();
        assert_eq!(t.alloc(0), 3);
        t.install(3, 10);
        assert_eq!(t.alloc(0), 4);
        t.install(4, 11);
        t.install(5, 12);
        assert_eq!(t.take(4), Some(11));
        assert_eq!(t.alloc(0), 4, "a closed descriptor is reused first");
        assert_eq!(t.alloc(6), 6);
        assert_eq!(t.iter().collect::<Vec<_>>(), vec![(3, 10), (5, 12)]);
    }

    #[test]
    fn file_table_counts_references() {
        let mut ft = FileTable::default();
        let f = OpenFile { target: Target::Null, pos: 0, flags: Default::default(), ra: Default::default(), advice: Default::default() };
        let a = ft.alloc(f.clone());
        ft.get_ref(a);
        assert_eq!(ft.count(a), 2);
        assert!(ft.put(a).is_none());
        assert!(ft.put(a).is_some(), "the last reference releases it");
        assert_eq!(ft.nr_open(), 0);
        assert_eq!(ft.alloc(f), a, "the slot is reused");
    }
}
