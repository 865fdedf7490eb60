//! Filesystem administration: mount, umount, df, ls, stat, mkdir — util-linux and coreutils
//! output layouts for the simulated filesystems (tmpfs and the machine's disks).

use memtwin_kernel::fs::{normalize, Errno, FileKind, MountOpts, Stat, MOUNT_OPTIONS};
use memtwin_kernel::{Kernel, Program, Sink, Step, TaskId};

/// mount(8) and umount(8) exit status for a failed mount (MNT_EX_FAIL).
const MNT_EX_FAIL: i32 = 32;

/// Wall-clock seconds and nanoseconds of a time since boot (the machine boots at
/// 10:00:00 UTC on 2026-11-23).
fn wall(t: memtwin_kernel::Ns) -> (i64, u32) {
    (super::memtools::BOOT_EPOCH_S as i64 + (t / 1_000_000_000) as i64, (t % 1_000_000_000) as u32)
}

/// ls -l's recent-file time, `%b %e %H:%M` ("Nov 23 10:05").
fn ls_date(t: memtwin_kernel::Ns) -> String {
    const MON: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let (s, _) = wall(t);
    let (_, m, d) = memtwin_engine::civil_from_days(s.div_euclid(86400));
    let sod = s.rem_euclid(86400);
    format!("{} {:>2} {:02}:{:02}", MON[m as usize - 1], d, sod / 3600, sod / 60 % 60)
}

/// stat's `%y`-style time: "2026-11-23 10:00:05.123456789 +0000".
fn stat_time(t: memtwin_kernel::Ns) -> String {
    let (s, ns) = wall(t);
    let (y, m, d) = memtwin_engine::civil_from_days(s.div_euclid(86400));
    let sod = s.rem_euclid(86400);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{ns:09} +0000", sod / 3600, sod / 60 % 60, sod % 60)
}

/// gnulib human_readable as df -h and ls -h use it: powers of 1024 with K, M, G... suffixes,
/// one decimal below 10, rounded up (human_ceiling); plain digits below 1024.
pub fn human_ceil(n: u64) -> String {
    const UNITS: [&str; 8] = ["K", "M", "G", "T", "P", "E", "Z", "Y"];
    if n < 1024 {
        return n.to_string();
    }
    let n = n as u128;
    let mut e = 0usize;
    let mut div: u128 = 1;
    while n / (div * 1024) >= 1 && e < UNITS.len() {
        div *= 1024;
        e += 1;
    }
    // n / div is in [1, 1024).
    if n < div * 10 {
        let tenths = (n * 10).div_ceil(div);
        if tenths < 100 {
            return format!("{}.{}{}", tenths / 10, tenths % 10, UNITS[e - 1]);
        }
        return format!("10{}", UNITS[e - 1]);
    }
    let amt = n.div_ceil(div);
    if amt >= 1024 && e < UNITS.len() {
        return format!("1.0{}", UNITS[e]);
    }
    format!("{amt}{}", UNITS[e - 1])
}

fn errno_exit(k: &mut Kernel, me: TaskId, msg: String, code: i32) -> Step {
    k.eprint(me, &format!("{msg}\n"));
    Step::Exit(code)
}

// ---- mount -------------------------------------------------------------------------------

enum MountAction {
    List,
    Tmpfs { source: String, target: String, opts: MountOpts },
    Remount { target: String, opts: MountOpts },
}

pub struct Mount {
    action: MountAction,
}

const MOUNT_USAGE: &str = "mount [-t tmpfs] [-o OPTIONS] SOURCE DIR, mount -o remount,OPTIONS DIR, or mount";

impl Mount {
    pub fn parse(args: &[String], cwd: &str) -> Result<Mount, String> {
        let mut fstype: Option<String> = None;
        let mut opts: Vec<String> = Vec::new();
        let mut pos: Vec<&String> = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            let mut value = |flag: &str| -> Result<String, String> {
                i += 1;
                args.get(i).cloned().ok_or_else(|| format!("mount: option '{flag}' requires an argument"))
            };
            match a.as_str() {
                "-t" | "--types" => fstype = Some(value(a)?),
                "-o" | "--options" => opts.push(value(a)?),
                s if s.starts_with("-t") && s.len() > 2 => fstype = Some(s[2..].to_string()),
                s if s.starts_with("-o") && s.len() > 2 => opts.push(s[2..].to_string()),
                s if s.starts_with("--types=") => fstype = Some(s["--types=".len()..].to_string()),
                s if s.starts_with("--options=") => opts.push(s["--options=".len()..].to_string()),
                s if s.starts_with('-') && s.len() > 1 => {
                    return Err(format!("mount: unsupported option '{s}' (supported: {MOUNT_USAGE})"));
                }
                _ => pos.push(a),
            }
            i += 1;
        }
        let o = MountOpts::parse(&opts.join(",")).map_err(|e| format!("mount: {e}"))?;
        if let Some(t) = &fstype {
            if t != "tmpfs" {
                return Err(format!(
                    "mount: unsupported filesystem type '{t}' (supported: -t tmpfs; disk filesystems are mounted by the machine file's [[mount]] entries)"
                ));
            }
        }
        if o.remount {
            return match pos.as_slice() {
                [target] => Ok(Mount { action: MountAction::Remount { target: normalize(cwd, target), opts: o } }),
                [_, target] => Ok(Mount { action: MountAction::Remount { target: normalize(cwd, target), opts: o } }),
                _ => Err(format!("mount: remount needs the mount point: mount -o remount,OPTIONS DIR (options: {MOUNT_OPTIONS})")),
            };
        }
        match pos.as_slice() {
            [] if fstype.is_none() && opts.is_empty() => Ok(Mount { action: MountAction::List }),
            [source, target] => {
                if fstype.is_none() {
                    return Err(format!(
                        "mount: give the filesystem type: mount -t tmpfs -o size=N {source} {target} (only tmpfs can be mounted here)"
                    ));
                }
                Ok(Mount { action: MountAction::Tmpfs { source: source.to_string(), target: normalize(cwd, target), opts: o } })
            }
            _ => Err(format!("mount: expected SOURCE and DIR ({MOUNT_USAGE}); mounting from /etc/fstab is not modelled")),
        }
    }
}

impl Program for Mount {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        k.charge_sys(me, k.machine.cpu_model.syscall_ns * 20);
        match &self.action {
            MountAction::List => {
                let mut out = String::new();
                for mi in k.active_mounts() {
                    let m = &k.fs.mounts[mi as usize];
                    out.push_str(&format!("{} on {} type {} (rw,{})\n", m.source, m.at, m.fstype, m.options));
                }
                k.print(me, &out);
                Step::Exit(0)
            }
            MountAction::Tmpfs { source, target, opts } => match k.sys_mount_tmpfs(source, target, opts) {
                Ok(()) => Step::Exit(0),
                Err(Errno::ENOTDIR) => errno_exit(k, me, format!("mount: {target}: mount point is not a directory."), MNT_EX_FAIL),
                Err(_) => errno_exit(k, me, format!("mount: {target}: mount point does not exist."), MNT_EX_FAIL),
            },
            MountAction::Remount { target, opts } => match k.sys_remount(target, opts) {
                Ok(()) => Step::Exit(0),
                Err(_) => errno_exit(k, me, format!("mount: {target}: mount point not mounted or bad option."), MNT_EX_FAIL),
            },
        }
    }
}

// ---- umount ------------------------------------------------------------------------------

pub struct Umount {
    targets: Vec<String>,
}

impl Umount {
    pub fn parse(args: &[String], cwd: &str) -> Result<Umount, String> {
        let mut targets = Vec::new();
        for a in args {
            if a.starts_with('-') && a.len() > 1 {
                return Err(format!("umount: unsupported option '{a}' (supported: umount DIR...)"));
            }
            targets.push(normalize(cwd, a));
        }
        if targets.is_empty() {
            return Err("umount: bad usage (umount DIR...)".into());
        }
        Ok(Umount { targets })
    }
}

impl Program for Umount {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let mut status = 0;
        for t in &self.targets {
            k.charge_sys(me, k.machine.cpu_model.syscall_ns * 20);
            let msg = match k.sys_umount(t) {
                Ok(()) => continue,
                Err(Errno::EBUSY) => format!("umount: {t}: target is busy."),
                Err(Errno::EINVAL) => format!("umount: {t}: not mounted."),
                Err(Errno::EPERM) => format!("umount: {t}: unmounting a disk filesystem is not modelled (only tmpfs)"),
                Err(_) => format!("umount: {t}: no mount point specified."),
            };
            k.eprint(me, &format!("{msg}\n"));
            status = MNT_EX_FAIL;
        }
        Step::Exit(status)
    }
}

// ---- df ------------------------------------------------------------------------------------

pub struct Df {
    human: bool,
    inodes: bool,
    fstype: bool,
    /// (as given, absolute).
    paths: Vec<(String, String)>,
}

impl Df {
    pub fn parse(args: &[String], cwd: &str) -> Result<Df, String> {
        let mut d = Df { human: false, inodes: false, fstype: false, paths: Vec::new() };
        for a in args {
            if let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty() && !f.starts_with('-')) {
                for c in flags.chars() {
                    match c {
                        'h' => d.human = true,
                        'k' => d.human = false,
                        'i' => d.inodes = true,
                        'T' => d.fstype = true,
                        _ => return Err(format!("df: unsupported option '-{c}' (supported: -h, -k, -i, -T)")),
                    }
                }
                continue;
            }
            match a.as_str() {
                "--human-readable" => d.human = true,
                "--inodes" => d.inodes = true,
                "--print-type" => d.fstype = true,
                s if s.starts_with("--") => return Err(format!("df: unsupported option '{s}' (supported: -h, -k, -i, -T)")),
                _ => d.paths.push((a.clone(), normalize(cwd, a))),
            }
        }
        Ok(d)
    }

    fn num(&self, v: u64, bytes_per_unit: u64) -> String {
        if self.human {
            human_ceil(v.saturating_mul(bytes_per_unit))
        } else if bytes_per_unit == 1 {
            v.to_string()
        } else {
            // 1K blocks, rounded up.
            (v as u128 * bytes_per_unit as u128).div_ceil(1024).to_string()
        }
    }
}

/// df's Use%: used / (used + available), rounded up; "-" when both are 0.
fn pcent(used: u64, avail: u64) -> String {
    let total = used as u128 + avail as u128;
    if total == 0 {
        return "-".into();
    }
    let u100 = used as u128 * 100;
    format!("{}%", u100 / total + u128::from(!u100.is_multiple_of(total)))
}

impl Program for Df {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let mut status = 0;
        let mut mounts: Vec<u32> = Vec::new();
        if self.paths.is_empty() {
            // Every mount point once, the topmost mount on it.
            for mi in k.active_mounts() {
                let at = &k.fs.mounts[mi as usize].at;
                if k.fs.mount_at(at) == Some(mi) {
                    mounts.push(mi);
                }
            }
        } else {
            for (given, abs) in &self.paths {
                k.charge_sys(me, k.machine.cpu_model.syscall_ns * 4);
                // A mounted device names the filesystem on it.
                if let Some(mi) = k.active_mounts().into_iter().find(|&i| k.fs.mounts[i as usize].dev.is_some() && k.fs.mounts[i as usize].source == *abs) {
                    mounts.push(mi);
                    continue;
                }
                match k.sys_stat(abs) {
                    Ok(st) => mounts.push(st.mount),
                    Err(e) => {
                        k.eprint(me, &format!("df: {given}: {}\n", e.strerror()));
                        status = 1;
                    }
                }
            }
        }
        let header: Vec<&str> = match (self.inodes, self.human) {
            (true, _) => vec!["Inodes", "IUsed", "IFree", "IUse%"],
            (false, true) => vec!["Size", "Used", "Avail", "Use%"],
            (false, false) => vec!["1K-blocks", "Used", "Available", "Use%"],
        };
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut head = vec!["Filesystem".to_string()];
        if self.fstype {
            head.push("Type".into());
        }
        head.extend(header.iter().map(|s| s.to_string()));
        head.push("Mounted on".into());
        rows.push(head);
        for mi in mounts {
            let s = k.statfs(mi);
            let m = &k.fs.mounts[mi as usize];
            let mut row = vec![m.source.clone()];
            if self.fstype {
                row.push(m.fstype.clone());
            }
            if self.inodes {
                let used = s.files - s.ffree;
                row.push(self.num(s.files, 1));
                row.push(self.num(used, 1));
                row.push(self.num(s.ffree, 1));
                row.push(pcent(used, s.ffree));
            } else {
                let used = s.blocks - s.bfree;
                row.push(self.num(s.blocks, s.bsize));
                row.push(self.num(used, s.bsize));
                row.push(self.num(s.bavail, s.bsize));
                row.push(pcent(used, s.bavail));
            }
            row.push(m.at.clone());
            rows.push(row);
        }
        // Column widths: at least df's minimums (Filesystem 14, Type 4, numbers 5, Use% 4).
        let ncol = rows[0].len();
        let mut min = vec![14];
        if self.fstype {
            min.push(4);
        }
        min.extend([5, 5, 5, 4, 0]);
        let widths: Vec<usize> = (0..ncol).map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0).max(min[c])).collect();
        let left = |c: usize| c == 0 || (self.fstype && c == 1) || c == ncol - 1;
        let mut out = String::new();
        for r in &rows {
            let mut line = String::new();
            for (c, cell) in r.iter().enumerate() {
                if c > 0 {
                    line.push(' ');
                }
                if c == ncol - 1 {
                    line.push_str(cell);
                } else if left(c) {
                    line.push_str(&format!("{cell:<w$}", w = widths[c]));
                } else {
                    line.push_str(&format!("{cell:>w$}", w = widths[c]));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        if rows.len() > 1 || self.paths.is_empty() {
            k.print(me, &out);
        }
        Step::Exit(status)
    }
}

// ---- ls ------------------------------------------------------------------------------------

pub struct Ls {
    long: bool,
    human: bool,
    dir_itself: bool,
    one: bool,
    paths: Vec<(String, String)>,
}

impl Ls {
    pub fn parse(args: &[String], cwd: &str) -> Result<Ls, String> {
        let mut l = Ls { long: false, human: false, dir_itself: false, one: false, paths: Vec::new() };
        for a in args {
            if let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty() && !f.starts_with('-')) {
                for c in flags.chars() {
                    match c {
                        'l' => l.long = true,
                        'h' => l.human = true,
                        'd' => l.dir_itself = true,
                        '1' => l.one = true,
                        'a' | 'A' => {}
                        _ => return Err(format!("ls: unsupported option '-{c}' (supported: -l, -h, -d, -1, -a)")),
                    }
                }
                continue;
            }
            if a.starts_with("--") {
                return Err(format!("ls: unsupported option '{a}' (supported: -l, -h, -d, -1, -a)"));
            }
            l.paths.push((a.clone(), normalize(cwd, a)));
        }
        if l.paths.is_empty() {
            l.paths.push((".".into(), normalize(cwd, ".")));
        }
        Ok(l)
    }

    fn mode_string(st: &Stat) -> String {
        let mut s = String::with_capacity(10);
        s.push(if st.kind == FileKind::Directory { 'd' } else { '-' });
        let m = st.mode;
        for (i, ch) in ['r', 'w', 'x', 'r', 'w', 'x', 'r', 'w', 'x'].iter().enumerate() {
            let bit = 1 << (8 - i);
            s.push(if m & bit != 0 { *ch } else { '-' });
        }
        if m & 0o1000 != 0 {
            let last = s.pop().unwrap_or('-');
            s.push(if last == 'x' { 't' } else { 'T' });
        }
        s
    }

    fn size_str(&self, n: u64) -> String {
        if self.human { human_ceil(n) } else { n.to_string() }
    }

    /// Long lines for (name, stat) entries, with the columns aligned.
    fn long_lines(&self, entries: &[(String, Stat)]) -> String {
        let wl = entries.iter().map(|(_, s)| s.nlink.to_string().len()).max().unwrap_or(1);
        let ws = entries.iter().map(|(_, s)| self.size_str(s.size).len()).max().unwrap_or(1);
        let mut out = String::new();
        for (name, st) in entries {
            out.push_str(&format!(
                "{} {:>wl$} root root {:>ws$} {} {name}\n",
                Self::mode_string(st),
                st.nlink,
                self.size_str(st.size),
                ls_date(st.times[1])
            ));
        }
        out
    }

    /// Short listing: one name per line into a file or pipe; columns (ls -C, 80 wide) on
    /// the terminal.
    fn short_lines(&self, names: &[String], terminal: bool) -> String {
        if names.is_empty() {
            return String::new();
        }
        if self.one || !terminal {
            return names.iter().map(|n| format!("{n}\n")).collect();
        }
        const WIDTH: usize = 80;
        let n = names.len();
        let mut best = (1, vec![0usize]);
        for cols in (1..=n).rev() {
            let rows = n.div_ceil(cols);
            let cols_used = n.div_ceil(rows);
            let mut widths = vec![0usize; cols_used];
            for (i, name) in names.iter().enumerate() {
                let c = i / rows;
                widths[c] = widths[c].max(name.chars().count() + if c + 1 < cols_used { 2 } else { 0 });
            }
            if widths.iter().sum::<usize>() <= WIDTH || cols == 1 {
                best = (rows, widths);
                break;
            }
        }
        let (rows, widths) = best;
        let mut out = String::new();
        for r in 0..rows {
            let mut line = String::new();
            for (c, w) in widths.iter().enumerate() {
                if let Some(name) = names.get(c * rows + r) {
                    line.push_str(&format!("{name:<w$}"));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// The entries of /proc/PID/fd (proc_readfd_common): the task's open descriptors, the
/// standard streams 0-2 first (the model keeps them as the task's sinks), in ls's name
/// order. None: `abs` is not such a directory.
fn proc_fd_names(k: &Kernel, me: TaskId, abs: &str) -> Option<Result<Vec<String>, String>> {
    let pid = abs.strip_prefix("/proc/")?.strip_suffix("/fd")?;
    let pid = if pid == "self" { k.tasks[me as usize].pid } else { pid.parse().ok()? };
    let Some(tid) = (0..k.tasks.len()).find(|&i| k.tasks[i].pid == pid && k.tasks[i].exit_code.is_none() && !k.tasks[i].reaped) else {
        return Some(Err("No such file or directory".into()));
    };
    let tid = tid as TaskId;
    let std = if k.tasks[tid as usize].kthread { 0 } else { 3 };
    let mut names: Vec<String> = (0..std).map(|fd| fd.to_string()).chain(k.proc_pid_fd(tid).into_iter().map(|(fd, _)| fd.to_string())).collect();
    names.sort();
    Some(Ok(names))
}

impl Program for Ls {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let terminal = k.tasks[me as usize].stdout == Sink::Terminal;
        let mut status = 0;
        let mut files: Vec<(String, Stat)> = Vec::new();
        let mut dirs: Vec<(String, String)> = Vec::new();
        for (given, abs) in &self.paths {
            k.charge_sys(me, k.machine.cpu_model.syscall_ns * 4);
            if let Some(r) = proc_fd_names(k, me, abs) {
                match r {
                    Ok(names) if !self.long => {
                        k.charge_sys(me, k.machine.cpu_model.syscall_ns * (2 + names.len() as u64));
                        let out = self.short_lines(&names, terminal);
                        k.print(me, &out);
                    }
                    Ok(_) => {
                        k.eprint(me, &format!("ls: {given}: -l of a /proc/PID/fd directory is not modelled (ls {given} lists the descriptors; cat /proc/PID/fdinfo is not modelled)\n"));
                        status = 2;
                    }
                    Err(e) => {
                        k.eprint(me, &format!("ls: cannot access '{given}': {e}\n"));
                        status = 2;
                    }
                }
                continue;
            }
            match k.sys_stat(abs) {
                Ok(st) if st.kind == FileKind::Directory && !self.dir_itself => dirs.push((given.clone(), abs.clone())),
                Ok(st) => files.push((given.clone(), st)),
                Err(e) => {
                    k.eprint(me, &format!("ls: cannot access '{given}': {}\n", e.strerror()));
                    status = 2;
                }
            }
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        dirs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = String::new();
        if !files.is_empty() {
            if self.long {
                out.push_str(&self.long_lines(&files));
            } else {
                let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
                out.push_str(&self.short_lines(&names, terminal));
            }
        }
        let headers = self.paths.len() > 1;
        for (i, (given, abs)) in dirs.iter().enumerate() {
            if !out.is_empty() || i > 0 {
                out.push('\n');
            }
            if headers {
                out.push_str(&format!("{given}:\n"));
            }
            let entries = match k.sys_readdir(abs) {
                Ok(e) => e,
                Err(e) => {
                    k.eprint(me, &format!("ls: cannot open directory '{given}': {}\n", e.strerror()));
                    status = 2;
                    continue;
                }
            };
            k.charge_sys(me, k.machine.cpu_model.syscall_ns * (2 + entries.len() as u64));
            if self.long {
                let blocks: u64 = entries.iter().map(|(_, s)| s.blocks).sum();
                let total_bytes = blocks * 512;
                let total = if self.human { human_ceil(total_bytes) } else { total_bytes.div_ceil(1024).to_string() };
                out.push_str(&format!("total {total}\n"));
                out.push_str(&self.long_lines(&entries));
            } else {
                let names: Vec<String> = entries.iter().map(|(n, _)| n.clone()).collect();
                out.push_str(&self.short_lines(&names, terminal));
            }
        }
        k.print(me, &out);
        Step::Exit(status)
    }
}

// ---- stat ----------------------------------------------------------------------------------

pub struct StatCmd {
    /// None: the default layout.
    format: Option<String>,
    newline: bool,
    files: Vec<(String, String)>,
}

const STAT_SPECS: &str = "%s %n %b %B %F %a %A %h %i %o %u %U %g %G %x %y %z %w %X %Y %Z %W %%";

impl StatCmd {
    pub fn parse(args: &[String], cwd: &str) -> Result<StatCmd, String> {
        let mut format = None;
        let mut newline = true;
        let mut files = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if a == "-c" || a == "--format" {
                i += 1;
                format = Some(args.get(i).cloned().ok_or("stat: option '-c' requires an argument")?);
            } else if let Some(f) = a.strip_prefix("--format=") {
                format = Some(f.to_string());
            } else if let Some(f) = a.strip_prefix("--printf=") {
                format = Some(f.replace("\\n", "\n").replace("\\t", "\t"));
                newline = false;
            } else if let Some(f) = a.strip_prefix("-c").filter(|f| !f.is_empty()) {
                format = Some(f.to_string());
            } else if a.starts_with('-') && a.len() > 1 {
                return Err(format!("stat: unsupported option '{a}' (supported: stat -c FORMAT FILE..., --printf=FORMAT)"));
            } else {
                files.push((a.clone(), normalize(cwd, a)));
            }
            i += 1;
        }
        if files.is_empty() {
            return Err("stat: missing operand (stat [-c FORMAT] FILE...)".into());
        }
        let Some(format) = format else {
            return Ok(StatCmd { format: None, newline, files });
        };
        let mut chars = format.chars();
        while let Some(c) = chars.next() {
            if c == '%' {
                match chars.next() {
                    Some(s) if "snbBFaAhiouUgGxyzwXYZW%".contains(s) => {}
                    Some(s) => return Err(format!("stat: unsupported format '%{s}' (supported: {STAT_SPECS})")),
                    None => return Err("stat: format ends with a lone '%'".into()),
                }
            }
        }
        if files.is_empty() {
            return Err("stat: missing operand (stat -c FORMAT FILE...)".into());
        }
        Ok(StatCmd { format: Some(format), newline, files })
    }

    /// coreutils 9.1's default layout (statx: birth time shown).
    fn default_layout(k: &Kernel, name: &str, st: &Stat) -> String {
        let m = &k.fs.mounts[st.mount as usize];
        // A disk's device number; tmpfs mounts get anonymous ones (0:N).
        let (maj, min) = match m.dev {
            Some(d) => {
                let disk = &k.block.devs[d as usize].disk;
                (disk.major, disk.minor)
            }
            None => (0, 30 + st.mount),
        };
        let kind = match (st.kind, st.size) {
            (FileKind::Directory, _) => "directory",
            (FileKind::Regular, 0) => "regular empty file",
            (FileKind::Regular, _) => "regular file",
        };
        let [a, mo, c, b] = st.times;
        format!(
            "  File: {name}\n  Size: {:<10}\tBlocks: {:<10} IO Block: {:<6} {kind}\nDevice: {maj},{min}\tInode: {:<11} Links: {}\n\
             Access: ({:04o}/{})  Uid: (    0/    root)   Gid: (    0/    root)\n\
             Access: {}\nModify: {}\nChange: {}\n Birth: {}\n",
            st.size,
            st.blocks,
            4096,
            st.ino,
            st.nlink,
            st.mode & 0o7777,
            Ls::mode_string(st),
            stat_time(a),
            stat_time(mo),
            stat_time(c),
            stat_time(b)
        )
    }

    fn render(&self, name: &str, st: &Stat) -> String {
        let mut out = String::new();
        let mut chars = self.format.as_deref().unwrap_or("").chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('s') => out.push_str(&st.size.to_string()),
                Some('n') => out.push_str(name),
                Some('b') => out.push_str(&st.blocks.to_string()),
                Some('B') => out.push_str("512"),
                Some('F') => out.push_str(match (st.kind, st.size) {
                    (FileKind::Directory, _) => "directory",
                    (FileKind::Regular, 0) => "regular empty file",
                    (FileKind::Regular, _) => "regular file",
                }),
                Some('a') => out.push_str(&format!("{:o}", st.mode & 0o7777)),
                Some('A') => out.push_str(&Ls::mode_string(st)),
                Some('h') => out.push_str(&st.nlink.to_string()),
                Some('i') => out.push_str(&st.ino.to_string()),
                Some('o') => out.push_str("4096"),
                Some('u') | Some('g') => out.push('0'),
                Some('U') | Some('G') => out.push_str("root"),
                // Times: human-readable (%x %y %z %w) and seconds since the epoch (%X %Y %Z %W).
                Some(c @ ('x' | 'y' | 'z' | 'w')) => out.push_str(&stat_time(st.times["xyzw".find(c).unwrap_or(0)])),
                Some(c @ ('X' | 'Y' | 'Z' | 'W')) => out.push_str(&wall(st.times["XYZW".find(c).unwrap_or(0)]).0.to_string()),
                Some('%') => out.push('%'),
                _ => {}
            }
        }
        if self.newline {
            out.push('\n');
        }
        out
    }
}

impl Program for StatCmd {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let mut status = 0;
        let mut out = String::new();
        for (given, abs) in &self.files {
            k.charge_sys(me, k.machine.cpu_model.syscall_ns * 4);
            match k.sys_stat(abs) {
                Ok(st) if self.format.is_none() => out.push_str(&Self::default_layout(k, given, &st)),
                Ok(st) => out.push_str(&self.render(given, &st)),
                Err(e) => {
                    k.print(me, &std::mem::take(&mut out));
                    k.eprint(me, &format!("stat: cannot statx '{given}': {}\n", e.strerror()));
                    status = 1;
                }
            }
        }
        k.print(me, &out);
        Step::Exit(status)
    }
}

// ---- mkdir ---------------------------------------------------------------------------------

pub struct Mkdir {
    parents: bool,
    dirs: Vec<(String, String)>,
}

impl Mkdir {
    pub fn parse(args: &[String], cwd: &str) -> Result<Mkdir, String> {
        let mut m = Mkdir { parents: false, dirs: Vec::new() };
        for a in args {
            match a.as_str() {
                "-p" | "--parents" => m.parents = true,
                s if s.starts_with('-') && s.len() > 1 => {
                    return Err(format!("mkdir: unsupported option '{s}' (supported: mkdir [-p] DIR...)"))
                }
                _ => m.dirs.push((a.clone(), normalize(cwd, a))),
            }
        }
        if m.dirs.is_empty() {
            return Err("mkdir: missing operand (mkdir [-p] DIR...)".into());
        }
        Ok(m)
    }
}

impl Program for Mkdir {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let mut status = 0;
        for (given, abs) in &self.dirs {
            k.charge_sys(me, k.machine.cpu_model.syscall_ns * 10);
            if super::cgroup::is_cgroup_path(abs) {
                match super::cgroup::cgroup_mkdir(k, abs, self.parents) {
                    Ok(()) => {}
                    Err(memtwin_kernel::cgroup::CgError::Errno(e)) => {
                        k.eprint(me, &format!("mkdir: cannot create directory '{given}': {}\n", e.strerror()));
                        status = 1;
                    }
                    Err(memtwin_kernel::cgroup::CgError::Unmodelled(m)) => {
                        k.eprint(me, &format!("memtwin: {m}\n"));
                        status = 1;
                    }
                }
                continue;
            }
            let r = if self.parents {
                let mut p = String::new();
                let mut r = Ok(());
                for c in abs.split('/').filter(|c| !c.is_empty()) {
                    p.push('/');
                    p.push_str(c);
                    if k.fs.is_dir(&p) {
                        continue;
                    }
                    r = k.sys_mkdir(&p);
                    if r.is_err() {
                        break;
                    }
                }
                r
            } else {
                k.sys_mkdir(abs)
            };
            if let Err(e) = r {
                k.eprint(me, &format!("mkdir: cannot create directory '{given}': {}\n", e.strerror()));
                status = 1;
            }
        }
        Step::Exit(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_ceiling_like_df() {
        assert_eq!(human_ceil(0), "0");
        assert_eq!(human_ceil(40), "40");
        assert_eq!(human_ceil(4096), "4.0K");
        assert_eq!(human_ceil(384 << 20), "384M");
        assert_eq!(human_ceil((384 << 20) + 1), "385M");
        // 4008528 KiB = 3.823 GiB -> 3.9G (rounded up).
        assert_eq!(human_ceil(4008528 * 1024), "3.9G");
        assert_eq!(human_ceil(10 << 30), "10G");
        assert_eq!(human_ceil((10 << 30) - 1), "10G");
        assert_eq!(human_ceil((1 << 30) - 1), "1.0G");
        assert_eq!(human_ceil(1023 << 20), "1023M");
    }

    #[test]
    fn use_percent() {
        assert_eq!(pcent(0, 0), "-");
        assert_eq!(pcent(0, 10), "0%");
        assert_eq!(pcent(1, 1000), "1%");
        assert_eq!(pcent(96, 0), "100%");
    }

    #[test]
    fn parse_errors_name_what_is_supported() {
        let e = Mount::parse(&["-t".into(), "ext4".into(), "/dev/sdb".into(), "/mnt".into()], "/").err().unwrap();
        assert!(e.contains("tmpfs"), "{e}");
        let e = Mount::parse(&["-o".into(), "huge=always".into(), "tmpfs".into(), "/mnt".into()], "/").err().unwrap();
        assert!(e.contains("size="), "{e}");
        assert!(Df::parse(&["-x".into()], "/").is_err());
        assert!(StatCmd::parse(&["-c".into(), "%C".into(), "f".into()], "/").is_err());
        assert!(StatCmd::parse(&["f".into()], "/").is_ok(), "the default layout");
        assert!(StatCmd::parse(&[], "/").is_err());
    }
}
