//! What reached the disk, and what a crash or a reboot leaves of the filesystems.
//!
//! Two things must be on the disk for a file to survive a power loss:
//!
//! * its data: a page is on the disk once the write carrying it completed (writeback or
//!   O_DIRECT). Each inode keeps `disk_size`, the end of the data that completed, capped by
//!   i_size — ext4's i_disksize, which data=ordered mode only advances once the data is
//!   written. Dirty pages still in the page cache are lost, so a file written less than
//!   dirty_expire_centisecs (30 s) before the crash, and never synced, comes back short or
//!   empty (the well-known zero-length files after a crash on delalloc filesystems).
//! * its metadata (the name, the unlink, the directory): a change is durable once the
//!   journal commits the transaction holding it. jbd2 commits the running transaction
//!   `commit=` seconds (5 by default) after it started, and at once on sync/fsync/unmount
//!   (jbd2's kjournald2 timer, ext4_sync_fs). ext2 has no journal: its metadata buffers go
//!   out with ordinary writeback, modelled as a commit every dirty_expire (30 s).
//!
//! Simplifications: truncation shortens `disk_size` at once (ext4 journals the truncate and
//! orders it before later data); the contents of pages are not modelled, only sizes.
//! tmpfs keeps nothing: its pages are memory.

use super::{DirectWrite, MountPoint};
use crate::block::{Dir, ReqKind, Request};
use crate::mm::PAGE_SIZE;
use crate::Kernel;
use memtwin_engine::{Ns, NS_PER_SEC};

/// A filesystem's journal, reduced to when metadata changes become durable.
#[derive(Clone, Debug, Default)]
pub struct Journal {
    /// How long after its first change the running transaction commits; 0: never on its
    /// own (tmpfs: nothing is ever written).
    pub interval: Ns,
    /// Sequence number of the last metadata change.
    pub seq: u64,
    /// Changes up to this sequence number are committed.
    pub committed: u64,
    /// When the running transaction got its first change, if one is open.
    pub tx_start: Option<Ns>,
}

impl Journal {
    /// ext3/ext4/xfs: jbd2's default commit interval (JBD2_DEFAULT_MAX_COMMIT_AGE, 5 s);
    /// ext2: dirty metadata buffers expire like data (30 s); tmpfs: none.
    pub fn for_fstype(fstype: &str) -> Journal {
        let interval = match fstype {
            "tmpfs" => 0,
            "ext2" => 30 * NS_PER_SEC,
            _ => 5 * NS_PER_SEC,
        };
        Journal { interval, ..Default::default() }
    }

    /// Commit the running transaction if its commit time came by `now`.
    pub fn advance(&mut self, now: Ns) {
        if let Some(start) = self.tx_start {
            if self.interval > 0 && now >= start + self.interval {
                self.committed = self.seq;
                self.tx_start = None;
            }
        }
    }

    /// A metadata change at `now`: it joins the running transaction. Returns its sequence.
    pub fn note(&mut self, now: Ns) -> u64 {
        self.advance(now);
        self.seq += 1;
        if self.tx_start.is_none() {
            self.tx_start = Some(now);
        }
        self.seq
    }

    /// Commit everything now (sync, fsync, unmount).
    pub fn commit(&mut self, now: Ns) {
        self.advance(now);
        self.committed = self.seq;
        self.tx_start = None;
    }

    pub fn is_durable(&self, seq: u64) -> bool {
        seq <= self.committed
    }
}

/// The files and directories one disk filesystem holds on its device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskFs {
    /// The device it lives on, as mounted ("/dev/sda").
    pub source: String,
    pub dirs: Vec<String>,
    /// (path, size in bytes).
    pub files: Vec<(String, u64)>,
}

/// What the disks hold when the machine stops.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskImage {
    pub filesystems: Vec<DiskFs>,
}

impl DiskImage {
    /// The size of `path` on the filesystem of device `source`, if the file is there.
    pub fn file_size(&self, source: &str, path: &str) -> Option<u64> {
        self.filesystems.iter().find(|f| f.source == source)?.files.iter().find(|(p, _)| p == path).map(|&(_, s)| s)
    }
}

impl Kernel {
    /// A block request completed (called from `io_done`): the data of a finished write is
    /// on the disk.
    pub(crate) fn fs_io_done(&mut self, r: &Request) {
        if r.dir != Dir::Write {
            return;
        }
        match r.kind {
            ReqKind::Writeback { mapping, index, n } => {
                if let Some(&ino) = self.fs.by_mapping.get(&mapping) {
                    self.data_reached_disk(ino, (index as u64 + n as u64) * PAGE_SIZE);
                }
            }
            ReqKind::Direct { .. } => {
                let w = &self.fs.direct_writes;
                if let Some(i) = w.iter().position(|w| w.dev == r.dev && w.done_at == r.done_at) {
                    let DirectWrite { ino, end, .. } = self.fs.direct_writes.swap_remove(i);
                    self.data_reached_disk(ino, end);
                }
            }
            _ => {}
        }
    }

    /// Data of `ino` up to byte `end` is on the disk: i_disksize advances (never past i_size).
    fn data_reached_disk(&mut self, ino: u32, end: u64) {
        let i = &mut self.fs.inodes[ino as usize];
        if i.linked {
            i.disk_size = i.disk_size.max(end.min(i.size));
        }
    }

    /// sync(2)'s sync_filesystem for every mounted filesystem: the journals commit (the
    /// data itself is written by the flushers `request_sync` wakes).
    pub fn sync_filesystems(&mut self) {
        let now = self.now;
        for m in self.fs.mounts.iter_mut().filter(|m| m.active) {
            m.journal.commit(now);
        }
    }

    /// What the disk filesystems hold if the machine stops now. `clean`: an orderly
    /// shutdown (everything was synced and the filesystems unmounted): the files as they
    /// are. Otherwise a power loss: committed metadata and the data that completed.
    pub fn disk_image(&mut self, clean: bool) -> DiskImage {
        let now = self.now;
        let mut img = DiskImage::default();
        for mi in 0..self.fs.mounts.len() {
            if self.fs.mounts[mi].dev.is_none() {
                continue;
            }
            if clean {
                self.fs.mounts[mi].journal.commit(now);
            } else {
                self.fs.mounts[mi].journal.advance(now);
            }
            let mp: &MountPoint = &self.fs.mounts[mi];
            let j = &mp.journal;
            let mut fsimg = DiskFs { source: mp.source.clone(), ..Default::default() };
            for ((m, path), &seq) in &self.fs.dirs {
                if *m as usize == mi && j.is_durable(seq) {
                    fsimg.dirs.push(path.clone());
                }
            }
            // Per path, the newest inode whose creation is durable and whose unlink is not.
            let mut files: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
            for ino in self.fs.inodes.iter().filter(|i| i.mount as usize == mi) {
                let created = j.is_durable(ino.created_seq);
                let gone = ino.unlinked_seq.is_some_and(|s| j.is_durable(s));
                if !created || gone {
                    continue;
                }
                let size = if clean { ino.size } else { ino.disk_size };
                let e = files.entry(ino.path.as_str()).or_insert((ino.created_seq, size));
                if ino.created_seq >= e.0 {
                    *e = (ino.created_seq, size);
                }
            }
            fsimg.files = files.into_iter().map(|(p, (_, s))| (p.to_string(), s)).collect();
            if let Some(f) = img.filesystems.iter_mut().find(|f| f.source == fsimg.source) {
                f.dirs.extend(fsimg.dirs);
                f.files.extend(fsimg.files);
            } else {
                img.filesystems.push(fsimg);
            }
        }
        img
    }

    /// Fill the freshly booted filesystems with what a disk image holds: the files come
    /// back with their sizes, on the disk only (nothing cached).
    pub fn restore_disk_image(&mut self, img: &DiskImage) {
        for f in &img.filesystems {
            let Some(mi) = self.fs.mounts.iter().position(|m| m.active && m.dev.is_some() && m.source == f.source) else {
                continue;
            };
            let mi = mi as u32;
            for d in &f.dirs {
                self.fs.dirs.entry((mi, d.clone())).or_insert(0);
            }
            for (path, size) in &f.files {
                if self.fs.names.contains_key(&(mi, path.clone())) {
                    continue;
                }
                // Parent directories of a durable file are durable too (made before it).
                let mut p = super::parent_of(path).to_string();
                while p != "/" && p != self.fs.mounts[mi as usize].at {
                    self.fs.dirs.entry((mi, p.clone())).or_insert(0);
                    p = super::parent_of(&p).to_string();
                }
                let ino = self.new_inode(mi, path, 0);
                let extent = size.div_ceil(PAGE_SIZE) * PAGE_SIZE;
                let i = &mut self.fs.inodes[ino as usize];
                i.size = *size;
                i.disk_size = *size;
                i.extent = extent;
                self.fs.mounts[mi as usize].used += extent;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_commits_after_interval_or_on_demand() {
        let mut j = Journal::for_fstype("ext4");
        let a = j.note(NS_PER_SEC);
        assert!(!j.is_durable(a));
        let b = j.note(3 * NS_PER_SEC);
        j.advance(5 * NS_PER_SEC);
        assert!(!j.is_durable(a), "commits 5 s after the transaction started");
        j.advance(6 * NS_PER_SEC);
        assert!(j.is_durable(a) && j.is_durable(b));
        let c = j.note(7 * NS_PER_SEC);
        j.commit(7 * NS_PER_SEC);
        assert!(j.is_durable(c));
        // A change after an expired transaction starts a new one; the old one committed.
        let d = j.note(8 * NS_PER_SEC);
        let e = j.note(14 * NS_PER_SEC);
        assert!(j.is_durable(d) && !j.is_durable(e));
        assert_eq!(Journal::for_fstype("tmpfs").interval, 0);
    }
}
