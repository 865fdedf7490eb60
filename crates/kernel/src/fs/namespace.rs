//! The namespace: mounting and unmounting tmpfs (fs/namespace.c, mm/shmem.c's
//! shmem_parse_one / shmem_reconfigure), directories, stat and readdir, and statfs for df.

use super::{base_name, parent_of, Journal, MountPoint, BOOT_DIRS};
use super::read_write::Errno;
use crate::mm::PAGE_SIZE;
use crate::Kernel;

/// tmpfs size= as given: bytes, or a percentage of RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmpfsSize {
    Bytes(u64),
    Percent(u64),
}

/// Parsed `-o` options of mount(8) for tmpfs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MountOpts {
    pub remount: bool,
    /// size=: 0 means unlimited.
    pub size: Option<TmpfsSize>,
    /// nr_inodes=: 0 means unlimited.
    pub nr_inodes: Option<u64>,
    /// mode= (octal) of the root directory.
    pub mode: Option<u32>,
    /// Generic flags kept for the mount table (nosuid, nodev, noexec, noatime...).
    pub flags: Vec<String>,
}

/// Options accepted in `-o`, for error messages.
pub const MOUNT_OPTIONS: &str =
    "remount, size=N[k|m|g|%], nr_inodes=N[k|m|g], mode=OCTAL, uid=, gid=, rw, defaults, nosuid, suid, nodev, dev, noexec, exec, noatime, relatime, strictatime, nodiratime, async, inode64";

/// memparse(): a number with an optional k/m/g/t/p/e suffix (binary).
pub fn memparse(s: &str) -> Option<u64> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    let n: u64 = s[..end].parse().ok()?;
    let shift = match &s[end..] {
        "" => 0,
        "k" | "K" => 10,
        "m" | "M" => 20,
        "g" | "G" => 30,
        "t" | "T" => 40,
        "p" | "P" => 50,
        "e" | "E" => 60,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

impl MountOpts {
    /// Parse a comma-separated option string as mount(8) passes it to tmpfs.
    pub fn parse(opts: &str) -> Result<MountOpts, String> {
        let mut o = MountOpts::default();
        for opt in opts.split(',').filter(|s| !s.is_empty()) {
            let (key, val) = match opt.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (opt, None),
            };
            match (key, val) {
                ("remount", None) => o.remount = true,
                ("size", Some(v)) => {
                    let size = match v.strip_suffix('%') {
                        Some(p) => match p.parse::<u64>() {
                            Ok(p) => TmpfsSize::Percent(p),
                            Err(_) => return Err(format!("bad tmpfs size '{v}' (a size like 384m, 2g, or a percentage of RAM like 50%)")),
                        },
                        None => TmpfsSize::Bytes(memparse(v).ok_or_else(|| {
                            format!("bad tmpfs size '{v}' (a size like 384m, 2g, or a percentage of RAM like 50%)")
                        })?),
                    };
                    o.size = Some(size);
                }
                ("nr_inodes", Some(v)) => {
                    o.nr_inodes = Some(memparse(v).ok_or_else(|| format!("bad tmpfs nr_inodes '{v}' (a number like 1000 or 1m)"))?)
                }
                ("mode", Some(v)) => {
                    o.mode = Some(u32::from_str_radix(v, 8).map_err(|_| format!("bad tmpfs mode '{v}' (octal, like 1777)"))?)
                }
                ("uid" | "gid", Some(v)) if v.parse::<u32>().is_ok() => {}
                (
                    "rw" | "defaults" | "nosuid" | "suid" | "nodev" | "dev" | "noexec" | "exec" | "noatime" | "relatime"
                    | "strictatime" | "nodiratime" | "async" | "inode64",
                    None,
                ) => {
                    if !matches!(key, "rw" | "defaults" | "async") && !o.flags.iter().any(|f| f == key) {
                        o.flags.push(key.to_string());
                    }
                }
                _ => return Err(format!("unsupported mount option '{opt}' (supported: {MOUNT_OPTIONS})")),
            }
        }
        Ok(o)
    }
}

/// What stat(2) reports, reduced to what ls and stat print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Regular,
    Directory,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    pub kind: FileKind,
    pub size: u64,
    /// 512-byte blocks allocated (st_blocks).
    pub blocks: u64,
    pub nlink: u64,
    /// st_mode: type and permission bits.
    pub mode: u32,
    pub ino: u64,
    /// Index of the mount it is on.
    pub mount: u32,
    /// atime, mtime, ctime, birth time: ns since boot (directories: the mount's time, 0).
    pub times: [memtwin_engine::Ns; 4],
}

/// statfs(2) for df, in 4 KiB blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatFs {
    pub bsize: u64,
    pub blocks: u64,
    pub bfree: u64,
    pub bavail: u64,
    pub files: u64,
    pub ffree: u64,
}

/// tmpfs directories report 20 bytes per entry (BOGO_DIRENT_SIZE), 40 when empty.
const BOGO_DIRENT_SIZE: u64 = 20;

impl Kernel {
    /// After the machine's filesystems are mounted: tmpfs mounts without a size get the
    /// kernel's default, the root filesystem gets its usual directories, and /dev/shm is
    /// mounted as systemd does on every boot (tmpfs, default size: half of RAM).
    pub(crate) fn mount_boot_defaults(&mut self) {
        let (blocks, inodes) = self.tmpfs_defaults();
        for i in 0..self.fs.mounts.len() {
            let m = &mut self.fs.mounts[i];
            if !m.is_tmpfs() {
                continue;
            }
            if m.size_limit.is_none() {
                m.size_limit = Some(blocks * PAGE_SIZE);
            }
            m.nr_inodes = Some(inodes);
            let m = m.clone();
            self.fs.mounts[i].options = self.mount_options_string(&m, &[]);
        }
        if self.fs.mount_of("/").is_none() {
            return;
        }
        let points: Vec<String> = self.fs.mounts.iter().map(|m| m.at.clone()).filter(|a| a != "/").collect();
        for d in BOOT_DIRS.iter().map(|s| s.to_string()).chain(points) {
            self.fs.add_boot_dir(&d);
        }
        if self.fs.mount_at("/dev/shm").is_none() {
            self.fs.mounts.push(MountPoint {
                source: "tmpfs".into(),
                at: "/dev/shm".into(),
                fstype: "tmpfs".into(),
                dev: None,
                size_limit: Some(blocks * PAGE_SIZE),
                nr_inodes: Some(inodes),
                used: 0,
                inodes_used: 1,
                active: true,
                // systemd mounts it nosuid,nodev,strictatime,mode=1777.
                options: "nosuid,nodev,inode64".into(),
                journal: Journal::for_fstype("tmpfs"),
            });
        }
    }

    /// shmem_default_max_blocks (totalram_pages / 2) and shmem_default_max_inodes
    /// (min(totalram, free buffer pages) / 2).
    pub fn tmpfs_defaults(&self) -> (u64, u64) {
        let total = self.mm.managed;
        (total / 2, total.saturating_sub(self.mm.wmark.high) / 2)
    }

    fn tmpfs_size_bytes(&self, s: TmpfsSize) -> u64 {
        let pages = match s {
            TmpfsSize::Bytes(b) => b.div_ceil(PAGE_SIZE),
            // shmem_parse_one: size=N% is N percent of totalram_pages.
            TmpfsSize::Percent(p) => self.mm.managed.saturating_mul(p) / 100,
        };
        pages.saturating_mul(PAGE_SIZE)
    }

    /// The options /proc/mounts shows after "rw" (shmem_show_options: size and nr_inodes
    /// only when they differ from the defaults).
    fn mount_options_string(&self, m: &MountPoint, flags: &[String]) -> String {
        let mut parts: Vec<String> = flags.iter().filter(|f| *f != "strictatime").cloned().collect();
        if !flags.iter().any(|f| f.ends_with("atime")) {
            parts.push("relatime".into());
        }
        let (def_blocks, def_inodes) = self.tmpfs_defaults();
        match m.size_limit {
            Some(b) if b == def_blocks * PAGE_SIZE => {}
            Some(b) => parts.push(format!("size={}k", b / 1024)),
            None => parts.push("size=0k".into()),
        }
        match m.nr_inodes {
            Some(n) if n == def_inodes => {}
            Some(n) => parts.push(format!("nr_inodes={n}")),
            None => parts.push("nr_inodes=0".into()),
        }
        parts.push("inode64".into());
        parts.join(",")
    }

    /// mount -t tmpfs -o OPTS SOURCE TARGET. The target must be a directory; a new mount
    /// on a directory that already is a mount point stacks on top and hides it.
    pub fn sys_mount_tmpfs(&mut self, source: &str, target: &str, opts: &MountOpts) -> Result<(), Errno> {
        let target = super::normalize("/", target);
        if !self.fs.is_dir(&target) {
            return Err(if self.fs.lookup(&target).is_some() { Errno::ENOTDIR } else { Errno::ENOENT });
        }
        let (def_blocks, def_inodes) = self.tmpfs_defaults();
        let size_limit = match opts.size {
            None => Some(def_blocks * PAGE_SIZE),
            Some(s) => match self.tmpfs_size_bytes(s) {
                0 => None,
                b => Some(b),
            },
        };
        let nr_inodes = match opts.nr_inodes {
            None => Some(def_inodes),
            Some(0) => None,
            Some(n) => Some(n),
        };
        let mut mp = MountPoint {
            source: source.to_string(),
            at: target,
            fstype: "tmpfs".into(),
            dev: None,
            size_limit,
            nr_inodes,
            used: 0,
            inodes_used: 1,
            active: true,
            options: String::new(),
            journal: Journal::for_fstype("tmpfs"),
        };
        mp.options = self.mount_options_string(&mp, &opts.flags);
        self.fs.mounts.push(mp);
        Ok(())
    }

    /// mount -o remount,... TARGET: shmem_reconfigure. A tmpfs cannot shrink below what it
    /// holds (EINVAL); its contents stay.
    pub fn sys_remount(&mut self, target: &str, opts: &MountOpts) -> Result<(), Errno> {
        let target = super::normalize("/", target);
        let Some(mi) = self.fs.mount_at(&target) else {
            return Err(Errno::EINVAL);
        };
        let mi = mi as usize;
        if !self.fs.mounts[mi].is_tmpfs() {
            if opts.size.is_some() || opts.nr_inodes.is_some() || opts.mode.is_some() {
                return Err(Errno::EINVAL);
            }
            return Ok(());
        }
        let mut size_limit = self.fs.mounts[mi].size_limit;
        if let Some(s) = opts.size {
            size_limit = match self.tmpfs_size_bytes(s) {
                0 => None,
                b => Some(b),
            };
        }
        let mut nr_inodes = self.fs.mounts[mi].nr_inodes;
        if let Some(n) = opts.nr_inodes {
            nr_inodes = if n == 0 { None } else { Some(n) };
        }
        let m = &self.fs.mounts[mi];
        // "Too small a size for current use" / "Too few inodes for current use".
        if size_limit.is_some_and(|l| l < m.used) || nr_inodes.is_some_and(|n| n < m.inodes_used) {
            return Err(Errno::EINVAL);
        }
        // shmem_reconfigure cannot turn a limit into "unlimited" once set.
        if m.size_limit.is_some() && size_limit.is_none() || m.nr_inodes.is_some() && nr_inodes.is_none() {
            return Err(Errno::EINVAL);
        }
        let mut flags: Vec<String> = m.options.split(',').filter(|f| !f.contains('=') && *f != "inode64").map(String::from).collect();
        if !m.options.contains("atime") {
            // Mounted strictatime (systemd's /dev/shm): nothing shown, and it stays so.
            flags.push("strictatime".into());
        }
        for f in &opts.flags {
            if !flags.contains(f) {
                flags.push(f.clone());
            }
        }
        let m = &mut self.fs.mounts[mi];
        m.size_limit = size_limit;
        m.nr_inodes = nr_inodes;
        let m = self.fs.mounts[mi].clone();
        self.fs.mounts[mi].options = self.mount_options_string(&m, &flags);
        Ok(())
    }

    /// umount TARGET: the topmost mount on TARGET goes; a tmpfs takes its files with it
    /// (their pages are freed). EBUSY if a file on it is open or another filesystem is
    /// mounted below it; EINVAL if TARGET is not a mount point; ENOENT if it does not
    /// exist. Disk filesystems are not unmounted by the model (EPERM).
    pub fn sys_umount(&mut self, target: &str) -> Result<(), Errno> {
        let target = super::normalize("/", target);
        let Some(mi) = self.fs.mount_at(&target) else {
            return Err(if self.fs.exists(&target) { Errno::EINVAL } else { Errno::ENOENT });
        };
        if target == "/" {
            return Err(Errno::EBUSY);
        }
        let busy_files = self.fs.inodes.iter().any(|i| i.mount == mi && i.opens > 0);
        let prefix = format!("{target}/");
        let submounts = self.fs.mounts.iter().enumerate().any(|(i, m)| m.active && i as u32 != mi && m.at.starts_with(&prefix));
        if busy_files || submounts {
            return Err(Errno::EBUSY);
        }
        if !self.fs.mounts[mi as usize].is_tmpfs() {
            return Err(Errno::EPERM);
        }
        // shmem_evict_inode for every file: pages (and swap entries) freed at once.
        let names: Vec<((u32, String), u32)> =
            self.fs.names.iter().filter(|((m, _), _)| *m == mi).map(|(k, &v)| (k.clone(), v)).collect();
        for (key, ino) in names {
            self.fs.names.remove(&key);
            self.fs.inodes[ino as usize].linked = false;
            self.evict_inode(ino);
        }
        self.fs.dirs.retain(|(m, _), _| *m != mi);
        let m = &mut self.fs.mounts[mi as usize];
        m.active = false;
        m.used = 0;
        m.inodes_used = 0;
        Ok(())
    }

    /// mkdir(2).
    pub fn sys_mkdir(&mut self, path: &str) -> Result<(), Errno> {
        let path = super::normalize("/", path);
        if self.fs.exists(&path) {
            return Err(Errno::EEXIST);
        }
        let parent = parent_of(&path);
        if !self.fs.is_dir(parent) {
            return Err(if self.fs.lookup(parent).is_some() { Errno::ENOTDIR } else { Errno::ENOENT });
        }
        let mi = self.fs.mount_of(&path).ok_or(Errno::ENOENT)?;
        let m = &self.fs.mounts[mi as usize];
        if m.nr_inodes.is_some_and(|n| m.inodes_used >= n) {
            return Err(Errno::ENOSPC);
        }
        let now = self.now;
        let m = &mut self.fs.mounts[mi as usize];
        m.inodes_used += 1;
        let seq = m.journal.note(now);
        self.fs.dirs.insert((mi, path), seq);
        Ok(())
    }

    /// stat(2) of a file or directory.
    /// chmod(2) on a file: the permission bits change and so does ctime (notify_change ->
    /// setattr_copy). Directories keep their modes (they have no inode objects here).
    pub fn sys_chmod(&mut self, path: &str, perm: u32) -> Result<(), Errno> {
        let path = super::normalize("/", path);
        if let Some(ino) = self.fs.lookup(&path) {
            let now = self.now;
            let i = &mut self.fs.inodes[ino as usize];
            i.perm = (perm & 0o7777) as u16;
            i.times[2] = now;
            return Ok(());
        }
        if self.fs.is_dir(&path) { Ok(()) } else { Err(Errno::ENOENT) }
    }

    /// utimensat(2) on a file (touch): each time that is given is set (UTIME_OMIT for the
    /// others); ctime moves to now (notify_change sets ATTR_CTIME). Directories keep theirs.
    pub fn sys_utimens(&mut self, path: &str, atime: Option<memtwin_engine::Ns>, mtime: Option<memtwin_engine::Ns>) -> Result<(), Errno> {
        let path = super::normalize("/", path);
        if let Some(ino) = self.fs.lookup(&path) {
            let now = self.now;
            let t = &mut self.fs.inodes[ino as usize].times;
            if let Some(a) = atime {
                t[0] = a;
            }
            if let Some(m) = mtime {
                t[1] = m;
            }
            t[2] = now;
            return Ok(());
        }
        if self.fs.is_dir(&path) { Ok(()) } else { Err(Errno::ENOENT) }
    }

    pub fn sys_stat(&self, path: &str) -> Result<Stat, Errno> {
        let path = super::normalize("/", path);
        if let Some(ino) = self.fs.lookup(&path) {
            let i = &self.fs.inodes[ino as usize];
            return Ok(Stat {
                kind: FileKind::Regular,
                size: i.size,
                blocks: i.extent / 512,
                nlink: 1,
                mode: 0o100000 | i.perm as u32,
                ino: ino as u64 + 12,
                mount: i.mount,
                times: i.times,
            });
        }
        if !self.fs.is_dir(&path) {
            let parent = parent_of(&path);
            return Err(if !self.fs.is_dir(parent) && self.fs.lookup(parent).is_some() { Errno::ENOTDIR } else { Errno::ENOENT });
        }
        let mi = self.fs.mount_of(&path).unwrap_or(0);
        let m = &self.fs.mounts[mi as usize];
        let subdirs = self.child_dirs(&path).len() as u64;
        let is_root = m.at == path;
        let (size, blocks) = if m.is_tmpfs() {
            let entries = self.child_files(&path).len() as u64 + subdirs;
            (2 * BOGO_DIRENT_SIZE + entries * BOGO_DIRENT_SIZE, 0)
        } else {
            (4096, 8)
        };
        let sticky = (m.is_tmpfs() && is_root) || (path == "/tmp" || path == "/var/tmp");
        let mode = if sticky { 0o41777 } else { 0o40755 };
        let ino = if is_root { if m.is_tmpfs() { 1 } else { 2 } } else {
            // A stable number from the path (directories have no inode objects here).
            path.bytes().fold(1009u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64)) % 100_000 + 100
        };
        Ok(Stat { kind: FileKind::Directory, size, blocks, nlink: 2 + subdirs, mode, ino, mount: mi, times: [0; 4] })
    }

    /// Directories directly inside `dir` (on the filesystem `dir` is on, plus the mount
    /// points of filesystems mounted there).
    fn child_dirs(&self, dir: &str) -> Vec<String> {
        let Some(mi) = self.fs.mount_of(dir) else { return Vec::new() };
        let mut out: Vec<String> = self
            .fs
            .dirs
            .keys()
            .filter(|(m, p)| *m == mi && p != dir && parent_of(p) == dir)
            .map(|(_, p)| p.clone())
            .collect();
        for m in self.fs.mounts.iter().filter(|m| m.active && m.at != "/" && m.at != dir && parent_of(&m.at) == dir) {
            if !out.contains(&m.at) {
                out.push(m.at.clone());
            }
        }
        out.sort();
        out
    }

    fn child_files(&self, dir: &str) -> Vec<(String, u32)> {
        let Some(mi) = self.fs.mount_of(dir) else { return Vec::new() };
        self.fs
            .names
            .iter()
            .filter(|((m, p), _)| *m == mi && parent_of(p) == dir)
            .map(|((_, p), &ino)| (p.clone(), ino))
            .collect()
    }

    /// The entries of a directory, sorted by name: (name, stat).
    pub fn sys_readdir(&self, dir: &str) -> Result<Vec<(String, Stat)>, Errno> {
        let dir = super::normalize("/", dir);
        let st = self.sys_stat(&dir)?;
        if st.kind != FileKind::Directory {
            return Err(Errno::ENOTDIR);
        }
        let mut out = Vec::new();
        for d in self.child_dirs(&dir) {
            if let Ok(s) = self.sys_stat(&d) {
                out.push((base_name(&d).to_string(), s));
            }
        }
        for (p, _) in self.child_files(&dir) {
            if let Ok(s) = self.sys_stat(&p) {
                out.push((base_name(&p).to_string(), s));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Blocks (4 KiB) of a disk filesystem: (total on the device, metadata overhead not
    /// reported in f_blocks, blocks used by a fresh filesystem, reserved for root, inodes).
    /// ext2/3/4 as mke2fs lays them out: an inode of 256 bytes per 16 KiB (inode tables
    /// take 1/64 of the disk), two bitmap blocks per 32768-block group, and a journal
    /// (ext2fs_default_journal_size) on ext3/ext4; 5% reserved for root. xfs: a log of
    /// 1/2048 of the disk (64 MiB..2 GiB... clamped), no reserve.
    fn disk_fs_geometry(&self, m: &MountPoint) -> (u64, u64, u64, u64, u64) {
        let bytes = m.dev.map_or(0, |d| self.block.devs[d as usize].disk.size_bytes);
        let n = bytes / 4096;
        match m.fstype.as_str() {
            "xfs" => {
                let log = (n / 2048).clamp(2560, 524_288).min(n / 4);
                (n, log, (n / 1024).max(6), 0, n / 4)
            }
            fstype => {
                let inode_tables = n / 64;
                let bitmaps = n.div_ceil(32768) * 2;
                let journal = if fstype == "ext2" {
                    0
                } else {
                    match n {
                        0..2048 => 0,
                        2048..32768 => 1024,
                        32768..262_144 => 4096,
                        262_144..524_288 => 8192,
                        524_288..4_194_304 => 16384,
                        4_194_304..8_388_608 => 32768,
                        8_388_608..16_777_216 => 65536,
                        16_777_216..33_554_432 => 131_072,
                        _ => 262_144,
                    }
                };
                let overhead = (inode_tables + bitmaps + journal).min(n);
                (n, overhead, (n / 4096).max(6), n * 5 / 100, n / 4)
            }
        }
    }

    /// statfs(2) of mount `mi`.
    pub fn statfs(&self, mi: u32) -> StatFs {
        let m = &self.fs.mounts[mi as usize];
        if m.is_tmpfs() {
            // shmem_statfs: an unlimited tmpfs reports zero blocks.
            let blocks = m.size_limit.map_or(0, |l| l / PAGE_SIZE);
            let bfree = blocks.saturating_sub(m.used / PAGE_SIZE);
            let files = m.nr_inodes.unwrap_or(0);
            return StatFs { bsize: PAGE_SIZE, blocks, bfree, bavail: bfree, files, ffree: files.saturating_sub(m.inodes_used) };
        }
        let (n, overhead, base, reserved, inodes) = self.disk_fs_geometry(m);
        let blocks = n - overhead;
        let bfree = blocks.saturating_sub(base + m.used / PAGE_SIZE);
        let bavail = bfree.saturating_sub(reserved);
        // Reserved inodes (1..10) and lost+found are in use on a fresh ext4.
        let files_used = 11 + m.inodes_used;
        StatFs { bsize: PAGE_SIZE, blocks, bfree, bavail, files: inodes, ffree: inodes.saturating_sub(files_used) }
    }

    /// Bytes of file data mount `mi` can hold (root may use the reserved blocks).
    pub(crate) fn fs_capacity(&self, mi: u32) -> u64 {
        let m = &self.fs.mounts[mi as usize];
        if m.is_tmpfs() {
            return m.size_limit.unwrap_or(u64::MAX);
        }
        let (n, overhead, base, _, _) = self.disk_fs_geometry(m);
        n.saturating_sub(overhead + base) * PAGE_SIZE
    }

    /// The mounts df and mount list: every active mount (stacked ones included: df shows
    /// only the topmost of each mount point, `mount` all of them).
    pub fn active_mounts(&self) -> Vec<u32> {
        (0..self.fs.mounts.len() as u32).filter(|&i| self.fs.mounts[i as usize].active).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmpfs_options() {
        let o = MountOpts::parse("remount,size=384m,nr_inodes=10k,nosuid").unwrap();
        assert!(o.remount);
        assert_eq!(o.size, Some(TmpfsSize::Bytes(384 << 20)));
        assert_eq!(o.nr_inodes, Some(10 << 10));
        assert_eq!(o.flags, vec!["nosuid".to_string()]);
        assert_eq!(MountOpts::parse("size=50%").unwrap().size, Some(TmpfsSize::Percent(50)));
        assert!(MountOpts::parse("size=12q").is_err());
        let e = MountOpts::parse("huge=always").unwrap_err();
        assert!(e.contains("huge=always") && e.contains("size="), "{e}");
        assert!(MountOpts::parse("ro").is_err());
        assert_eq!(memparse("2g"), Some(2 << 30));
        assert_eq!(memparse("g"), None);
    }
}
