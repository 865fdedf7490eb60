//! Filesystems: mounts, inodes and the namespace, and open files. A regular file's data
//! lives in its address_space (the page cache) and, once written back, on its block device
//! at a contiguous extent allocated when the file is created. tmpfs files live only in
//! their address_space (shmem pages: swap-backed, in Shmem and Cached).
//!
//! * `read_write`: open/read/write/fsync/unlink/truncate (fs/open.c, fs/read_write.c).
//! * `namespace`: mount/umount/remount, mkdir, stat, readdir, statfs (fs/namespace.c,
//!   mm/shmem.c's mount options, fs/statfs.c).
//! * `persist`: what reached the disk — per-inode persisted size, the journal's commits —
//!   and the disk image a crash or a reboot leaves behind.

pub mod buffer;
pub mod dcache;
mod fadvise;
pub mod file;
pub mod inode;
pub mod namei;
pub mod nfsd;
pub mod vfs;
mod namespace;
mod persist;
mod read_write;
#[cfg(test)]
mod tests;

pub use namespace::{memparse, FileKind, MountOpts, Stat, StatFs, TmpfsSize, MOUNT_OPTIONS};
pub use file::{FdTable, FileTable};
pub use persist::{DiskFs, DiskImage, Journal};
pub use read_write::{Errno, IoProgress, OpenFlags};

use crate::block::Block;
use memtwin_engine::Ns;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct Inode {
    pub path: String,
    pub mapping: u32,
    /// Size as the file system reports it (i_size).
    pub size: u64,
    /// Index of the mount it lives on.
    pub mount: u32,
    /// Byte offset of its data on the device.
    pub disk_base: u64,
    /// Bytes reserved for it on the device (tmpfs: bytes of pages charged to the mount).
    pub extent: u64,
    pub linked: bool,
    pub opens: u32,
    /// Journal sequence of the transaction that created / unlinked it (see `persist`).
    pub created_seq: u64,
    pub unlinked_seq: Option<u64>,
    /// Bytes of the file that are on the disk (i_disksize of the data that completed
    /// writeback or a direct write); what a crash leaves.
    pub disk_size: u64,
    /// atime, mtime, ctime and birth time (i_atime, i_mtime, i_ctime, i_crtime), ns since boot.
    pub times: [memtwin_engine::Ns; 4],
    /// Permission bits of i_mode (0644 for a new file: open's 0666 under umask 022).
    pub perm: u16,
    /// Flush at the next release of one of its files (filemap_flush of its delayed-
    /// allocation pages): ext4's EXT4_STATE_DA_ALLOC_CLOSE, set when ext4_truncate leaves
    /// it empty (the auto_da_alloc "replace via truncate" heuristic), cleared at release;
    /// XFS's XFS_ITRUNCATED, set by any truncate down (xfs_setattr_size), cleared at
    /// release or when writeback runs on it (xfs_vm_writepages).
    pub flush_on_close: bool,
}

#[derive(Clone, Debug)]
pub struct MountPoint {
    pub source: String,
    pub at: String,
    pub fstype: String,
    pub dev: Option<u32>,
    /// tmpfs: the size limit in bytes (a whole number of pages); None: unlimited (size=0).
    /// Disk filesystems: None (their size is the device's).
    pub size_limit: Option<u64>,
    /// tmpfs: the inode limit (nr_inodes); None: unlimited.
    pub nr_inodes: Option<u64>,
    /// Bytes of file data on it.
    pub used: u64,
    /// Inodes in use (files and directories, the root directory included).
    pub inodes_used: u64,
    /// Unmounted mounts stay in the table (inodes refer to mounts by index) but are inactive.
    pub active: bool,
    /// Mount options as /proc/mounts shows them (after rw).
    pub options: String,
    /// The filesystem's journal (ext3/ext4/xfs; ext2 and tmpfs have none that matters).
    pub journal: Journal,
}

impl MountPoint {
    pub fn is_tmpfs(&self) -> bool {
        self.fstype == "tmpfs"
    }
}

/// What an open file refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Inode(u32),
    /// A block device opened directly (/dev/vda): its own page cache, "Buffers".
    BlockDev(u32),
    Zero,
    Null,
    Random,
    /// A read-only /proc file (/proc/meminfo, /proc/vmstat, ...) opened for writing:
    /// root may open it, but it has no write handler.
    ProcRo,
}

/// The /proc files memtwin shows that have no write handler (seq_file, read-only).
pub const PROC_READ_ONLY: &[&str] = &["/proc/meminfo", "/proc/vmstat", "/proc/stat", "/proc/loadavg", "/proc/uptime", "/proc/swaps"];

/// Per-open-file readahead state (struct file_ra_state, the file's f_ra).
#[derive(Clone, Copy, Debug, Default)]
pub struct RaState {
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    /// The page of ra->prev_pos (the byte after the last read since 5.12; its last page
    /// before), or u64::MAX before any read.
    pub prev_index: u64,
}

impl RaState {
    /// The page of the window that gets PG_readahead: async_size pages before its end.
    pub fn mark(&self) -> Option<u64> {
        (self.size > 0 && self.async_size > 0).then(|| self.start + self.size - self.async_size)
    }
}

/// posix_fadvise's access-pattern advice on an open file (generic_fadvise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fadvice {
    /// POSIX_FADV_NORMAL: the device's readahead (bdi ra_pages).
    #[default]
    Normal,
    /// POSIX_FADV_RANDOM: FMODE_RANDOM, a miss reads what was asked for.
    Random,
    /// POSIX_FADV_SEQUENTIAL: the file's ra_pages is twice the device's.
    Sequential,
}

/// An open file description (struct file): one open(2)'s target, offset (f_pos), flags,
/// readahead state (f_ra) and fadvise advice. Descriptors refer to it through `FdTable`
/// (file.rs).
#[derive(Clone, Debug)]
pub struct OpenFile {
    pub target: Target,
    pub pos: u64,
    pub flags: OpenFlags,
    pub ra: RaState,
    pub advice: Fadvice,
}

/// A direct write in flight: when it completes, `end` bytes of inode `ino` are on disk.
#[derive(Clone, Copy, Debug)]
pub struct DirectWrite {
    pub dev: u32,
    pub done_at: Ns,
    pub ino: u32,
    pub end: u64,
}

#[derive(Default)]
pub struct Fs {
    pub mounts: Vec<MountPoint>,
    pub inodes: Vec<Inode>,
    /// Linked files by (mount, absolute path): a file hidden by a mount on top of its
    /// directory keeps its entry under the mount it lives on.
    pub names: BTreeMap<(u32, String), u32>,
    /// Directories by (mount, absolute path), with the journal sequence that created them.
    /// A mount's root is a directory without an entry here.
    pub dirs: BTreeMap<(u32, String), u64>,
    /// Page-cache mapping -> inode, for writeback completions.
    pub by_mapping: crate::idhash::IdMap<u32, u32>,
    pub direct_writes: Vec<DirectWrite>,
    /// The open file descriptions (struct file) of every task, by id (file.rs).
    pub files: FileTable,
}

/// Directories of the root filesystem at boot (a minimal distribution's tree).
pub const BOOT_DIRS: &[&str] = &[
    "/dev", "/dev/shm", "/etc", "/home", "/mnt", "/opt", "/proc", "/root", "/run", "/srv", "/sys", "/tmp", "/usr",
    "/var", "/var/tmp",
];

/// Normalise a path against the working directory: absolute, no `.`/`..`, no `//`.
pub fn normalize(cwd: &str, path: &str) -> String {
    let full = if path.starts_with('/') { path.to_string() } else { format!("{cwd}/{path}") };
    let mut parts: Vec<&str> = Vec::new();
    for c in full.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The directory holding `path` ("/" for "/" itself).
pub fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The last component of `path` ("/" for "/").
pub fn base_name(path: &str) -> &str {
    if path == "/" {
        return "/";
    }
    path.rsplit('/').next().unwrap_or(path)
}

impl Fs {
    /// Mount a filesystem of the machine file at boot. A tmpfs without a size gets the
    /// kernel's default later (`Kernel::mount_boot_defaults`, which knows MemTotal).
    pub fn mount(&mut self, m: &memtwin_machine::Mount, block: &Block) -> Result<(), String> {
        let dev = if m.fstype == "tmpfs" {
            None
        } else {
            let name = m.source.trim_start_matches("/dev/");
            Some(block.find(name).ok_or_else(|| format!("mount {}: no block device {}", m.mountpoint, m.source))?)
        };
        let at = normalize("/", &m.mountpoint);
        let options = if m.fstype == "tmpfs" { String::new() } else { "relatime".to_string() };
        self.mounts.push(MountPoint {
            source: m.source.clone(),
            at,
            fstype: m.fstype.clone(),
            dev,
            size_limit: m.size_bytes.map(|b| b.div_ceil(crate::mm::PAGE_SIZE) * crate::mm::PAGE_SIZE),
            nr_inodes: None,
            used: 0,
            inodes_used: 1,
            active: true,
            options,
            journal: Journal::for_fstype(&m.fstype),
        });
        Ok(())
    }

    /// A directory that exists from boot (durable: sequence 0), with its parents.
    pub(crate) fn add_boot_dir(&mut self, path: &str) {
        let mut p = String::new();
        for c in path.split('/').filter(|c| !c.is_empty()) {
            p.push('/');
            p.push_str(c);
            if let Some(m) = self.mount_under(&p) {
                self.dirs.entry((m, p.clone())).or_insert(0);
            }
        }
    }

    /// The mount a path lives on: the longest matching active mount point, the most
    /// recent one when several are stacked on the same directory.
    pub fn mount_of(&self, path: &str) -> Option<u32> {
        let mut best: Option<(usize, u32)> = None;
        for (i, m) in self.mounts.iter().enumerate() {
            if !m.active {
                continue;
            }
            let at = m.at.as_str();
            let inside = at == "/" || path == at || (path.starts_with(at) && path.as_bytes().get(at.len()) == Some(&b'/'));
            if inside && best.is_none_or(|(l, _)| at.len() >= l) {
                best = Some((at.len(), i as u32));
            }
        }
        best.map(|(_, i)| i)
    }

    /// The mount `path` would be on without the mounts at `path` itself: where the
    /// directory a filesystem is mounted on lives.
    pub fn mount_under(&self, path: &str) -> Option<u32> {
        let mut best: Option<(usize, u32)> = None;
        for (i, m) in self.mounts.iter().enumerate() {
            let at = m.at.as_str();
            if !m.active || at == path {
                continue;
            }
            let inside = at == "/" || (path.starts_with(at) && path.as_bytes().get(at.len()) == Some(&b'/'));
            if inside && best.is_none_or(|(l, _)| at.len() >= l) {
                best = Some((at.len(), i as u32));
            }
        }
        best.map(|(_, i)| i)
    }

    /// The active mount whose mount point is exactly `path` (the topmost one).
    pub fn mount_at(&self, path: &str) -> Option<u32> {
        self.mounts.iter().enumerate().rev().find(|(_, m)| m.active && m.at == path).map(|(i, _)| i as u32)
    }

    /// The linked regular file at `path`, if any.
    pub fn lookup(&self, path: &str) -> Option<u32> {
        let m = self.mount_of(path)?;
        self.names.get(&(m, path.to_string())).copied()
    }

    /// Is `path` a directory (a mount's root or a directory made on the filesystem)?
    pub fn is_dir(&self, path: &str) -> bool {
        if path == "/" {
            return true;
        }
        match self.mount_of(path) {
            Some(m) => self.mounts[m as usize].at == path || self.dirs.contains_key(&(m, path.to_string())),
            None => false,
        }
    }

    /// Is anything (file or directory) at `path`?
    pub fn exists(&self, path: &str) -> bool {
        self.is_dir(path) || self.lookup(path).is_some()
    }
}

#[cfg(test)]
mod path_tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(normalize("/root", "../mnt//ram/./x"), "/mnt/ram/x");
        assert_eq!(parent_of("/mnt/ram"), "/mnt");
        assert_eq!(parent_of("/mnt"), "/");
        assert_eq!(base_name("/mnt/ram"), "ram");
        assert_eq!(base_name("/"), "/");
    }
}
