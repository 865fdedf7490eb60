//! Filesystems: mounts, inodes and the namespace, and open files. A regular file's data
//! lives in its address_space (the page cache) and, once written back, on its block device
//! at a contiguous extent allocated when the file is created.

mod read_write;

pub use read_write::{Errno, IoProgress, OpenFlags};

use crate::block::Block;
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
    /// Bytes reserved for it on the device.
    pub extent: u64,
    pub linked: bool,
    pub opens: u32,
}

#[derive(Clone, Debug)]
pub struct MountPoint {
    pub source: String,
    pub at: String,
    pub fstype: String,
    pub dev: Option<u32>,
    pub size_limit: Option<u64>,
    /// Bytes of file data on it.
    pub used: u64,
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
}

/// Per-open-file readahead state (struct file_ra_state).
#[derive(Clone, Copy, Debug, Default)]
pub struct RaState {
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    /// Index after the last page read (ra->prev_pos), or u64::MAX before any read.
    pub prev_index: u64,
}

#[derive(Clone, Debug)]
pub struct OpenFile {
    pub target: Target,
    pub pos: u64,
    pub flags: OpenFlags,
    pub ra: RaState,
}

#[derive(Default)]
pub struct Fs {
    pub mounts: Vec<MountPoint>,
    pub inodes: Vec<Inode>,
    pub names: BTreeMap<String, u32>,
}

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

impl Fs {
    pub fn mount(&mut self, m: &memtwin_machine::Mount, block: &Block) -> Result<(), String> {
        let dev = if m.fstype == "tmpfs" {
            None
        } else {
            let name = m.source.trim_start_matches("/dev/");
            Some(block.find(name).ok_or_else(|| format!("mount {}: no block device {}", m.mountpoint, m.source))?)
        };
        self.mounts.push(MountPoint {
            source: m.source.clone(),
            at: normalize("/", &m.mountpoint),
            fstype: m.fstype.clone(),
            dev,
            size_limit: m.size_bytes,
            used: 0,
        });
        Ok(())
    }

    /// The mount a path lives on (longest matching mount point).
    pub fn mount_of(&self, path: &str) -> Option<u32> {
        let mut best: Option<(usize, u32)> = None;
        for (i, m) in self.mounts.iter().enumerate() {
            let at = m.at.as_str();
            let inside = at == "/" || path == at || path.starts_with(&format!("{at}/"));
            if inside && best.is_none_or(|(l, _)| at.len() > l) {
                best = Some((at.len(), i as u32));
            }
        }
        best.map(|(_, i)| i)
    }

    pub fn lookup(&self, path: &str) -> Option<u32> {
        self.names.get(path).copied()
    }
}
