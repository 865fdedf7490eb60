//! The memory and process tools of tutorials and runbooks: dmesg, ps, uptime, nproc, kill,
//! fallocate, truncate, chmod, du. They read the model (or change a file's size) and print
//! what util-linux, procps-ng and coreutils print.

use memtwin_kernel::fs::{normalize, OpenFlags};
use memtwin_kernel::{Kernel, Ns, Program, Step, TaskId};
use memtwin_tools::{DmesgOptions, DmesgRecord, PsOptions, PsTaskExtra};

/// Wall-clock time of day at boot (10:00:00, as top shows), on 2026-11-23.
pub const BOOT_WALL_CLOCK_S: u64 = 10 * 3600;
pub const BOOT_EPOCH_S: u64 = 1_795_428_000 - 1_795_428_000 % 86400 + BOOT_WALL_CLOCK_S;

/// Cost of reading /proc for one listing.
const PROC_READ_NS: u64 = 200_000;

// ---- dmesg ------------------------------------------------------------------------------

pub struct Dmesg {
    o: DmesgOptions,
}

impl Dmesg {
    pub fn parse(args: &[String]) -> Result<Dmesg, String> {
        Ok(Dmesg { o: memtwin_tools::parse_dmesg_args(args)? })
    }
}

/// 2.4 kernels logged no time stamps (printk times are 2.6.11+): dmesg prints the bare
/// messages there, and -T has nothing to convert.
fn dmesg_era(o: &mut DmesgOptions, k: &Kernel) -> Result<(), String> {
    if k.machine.kernel == memtwin_machine::KernelProfile::Linux24 {
        if o.time == memtwin_tools::DmesgTime::Ctime {
            return Err("dmesg: -T: the 2.4 kernel's log has no time stamps\n".into());
        }
        o.time = memtwin_tools::DmesgTime::None;
    }
    Ok(())
}

impl Program for Dmesg {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        k.charge_sys(me, PROC_READ_NS);
        if let Err(e) = dmesg_era(&mut self.o, k) {
            k.eprint(me, &e);
            return Step::Exit(1);
        }
        if !self.o.clear_only {
            let recs: Vec<DmesgRecord> = k.log.records.iter().map(|r| DmesgRecord { ts_ns: r.ts, level: r.level, text: &r.text }).collect();
            let text = memtwin_tools::dmesg(&recs, &self.o, BOOT_EPOCH_S);
            k.print(me, &text);
        }
        if self.o.clear_only || self.o.clear_after {
            // syslog(SYSLOG_ACTION_CLEAR / READ_CLEAR).
            k.log.clear();
        }
        Step::Exit(0)
    }
}

// ---- ps, uptime, nproc --------------------------------------------------------------------

pub struct Ps {
    o: PsOptions,
}

impl Ps {
    pub fn parse(args: &[String]) -> Result<Ps, String> {
        Ok(Ps { o: memtwin_tools::parse_ps_args(args)? })
    }
}

/// What ps reads beside the snapshot: parent, terminal, session and foreground flags.
/// The scenario's shell is not a task of the model: its children show PPID 1 and the
/// terminal pts/0; init is the session leader on no terminal; ps itself runs in the
/// foreground.
fn ps_extra(k: &Kernel, s: &memtwin_procfs::Snapshot, me: TaskId) -> Vec<PsTaskExtra> {
    let my_pid = k.tasks[me as usize].pid;
    s.tasks
        .iter()
        .map(|t| {
            let user_cmd = !t.kthread && t.pid != 1;
            PsTaskExtra {
                ppid: if t.kthread || t.pid == 1 { 0 } else { 1 },
                tty: if user_cmd { Some("pts/0".into()) } else { None },
                session_leader: t.pid == 1,
                foreground: t.pid == my_pid,
            }
        })
        .collect()
}

impl Program for Ps {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let s = k.snapshot();
        let extra = ps_extra(k, &s, me);
        let text = memtwin_tools::ps(&s, &extra, &self.o, BOOT_WALL_CLOCK_S);
        k.print(me, &text);
        k.charge_sys(me, PROC_READ_NS * s.tasks.len() as u64 / 8);
        // ps exits 1 when a -p / -C selection matched nothing.
        let selected = s.tasks.iter().any(|t| self.o.pids.contains(&t.pid) || self.o.names.contains(&t.comm));
        if (!self.o.pids.is_empty() || !self.o.names.is_empty()) && !selected {
            return Step::Exit(1);
        }
        Step::Exit(0)
    }
}

pub struct Uptime;

impl Uptime {
    pub fn parse(args: &[String]) -> Result<Uptime, String> {
        match args.first() {
            None => Ok(Uptime),
            Some(a) => Err(format!("uptime: unsupported argument '{a}' (uptime takes no arguments here)")),
        }
    }
}

impl Program for Uptime {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let s = k.snapshot();
        let wall = BOOT_WALL_CLOCK_S + k.now / 1_000_000_000;
        let text = memtwin_tools::uptime_line(&s, wall, 1);
        k.print(me, &text);
        Step::Exit(0)
    }
}

pub struct Nproc {
    all: bool,
}

impl Nproc {
    pub fn parse(args: &[String]) -> Result<Nproc, String> {
        let mut all = false;
        for a in args {
            match a.as_str() {
                "--all" => all = true,
                o => return Err(format!("nproc: unsupported argument '{o}' (supported: nproc [--all])")),
            }
        }
        Ok(Nproc { all })
    }
}

impl Program for Nproc {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let _ = self.all; // Every CPU of the machine is online and allowed.
        let n = k.machine.cpus;
        k.print(me, &format!("{n}\n"));
        Step::Exit(0)
    }
}

// ---- fallocate, truncate, chmod, du -----------------------------------------------------

/// Sizes as util-linux and coreutils take them for -l / -s: K, M, G (1024s), KB, MB (1000s),
/// KiB, MiB, ...
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..end].parse().ok()?;
    let mult: u64 = match &s[end..] {
        "" => 1,
        "K" | "k" | "KiB" => 1 << 10,
        "M" | "m" | "MiB" => 1 << 20,
        "G" | "g" | "GiB" => 1 << 30,
        "T" | "t" | "TiB" => 1 << 40,
        "KB" | "kB" => 1000,
        "MB" => 1000_000,
        "GB" => 1000_000_000,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// fallocate -l SIZE FILE (util-linux) and truncate -s SIZE FILE (coreutils): give a file
/// its size. fallocate reserves the blocks (counted in df at once); truncate makes a
/// sparse file. Neither touches the page cache.
pub struct SetSize {
    tool: &'static str,
    size: u64,
    /// truncate's size modifier (coreutils: '+' extend by, '-' reduce by, '<' at most, '>'
    /// at least, '/' round down to a multiple of, '%' round up to one): the new size is
    /// worked out from the file's size when truncate runs.
    modifier: Option<char>,
    path: String,
    given: String,
    done: bool,
}

impl SetSize {
    pub fn parse(tool: &'static str, args: &[String], cwd: &str) -> Result<SetSize, String> {
        let flag = if tool == "fallocate" { "-l" } else { "-s" };
        let usage = format!("{tool} {flag} SIZE FILE");
        let mut size = None;
        let mut modifier = None;
        let mut path = None;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let v = if a == flag || (tool == "fallocate" && a == "--length") || (tool == "truncate" && a == "--size") {
                Some(it.next().ok_or(format!("{tool}: option requires an argument -- '{}' ({usage})", &flag[1..]))?.clone())
            } else if let Some(v) = a.strip_prefix(flag).filter(|v| !v.is_empty()) {
                Some(v.to_string())
            } else if let Some(v) = a.strip_prefix(if tool == "fallocate" { "--length=" } else { "--size=" }) {
                Some(v.to_string())
            } else if a.starts_with('-') && a.len() > 1 {
                return Err(format!("{tool}: unsupported option '{a}' ({usage})"));
            } else {
                if path.is_some() {
                    return Err(format!("{tool}: unexpected number of arguments ({usage})"));
                }
                path = Some(a.clone());
                None
            };
            if let Some(mut v) = v {
                if tool == "truncate" {
                    if let Some(c) = v.chars().next().filter(|c| "+-<>/%".contains(*c)) {
                        modifier = Some(c);
                        v = v[1..].to_string();
                    }
                }
                size = Some(parse_size(&v).ok_or(if tool == "fallocate" {
                    format!("fallocate: invalid length value specified")
                } else {
                    format!("truncate: Invalid number: '{v}'")
                })?);
            }
        }
        let size = size.ok_or(if tool == "fallocate" { "fallocate: no length argument specified".to_string() } else { "truncate: you must specify either '--size' or '--reference'".to_string() })?;
        let given = path.ok_or(format!("{tool}: no filename specified ({usage})"))?;
        if size == 0 && tool == "fallocate" {
            return Err("fallocate: invalid length value specified".into());
        }
        if size == 0 && matches!(modifier, Some('/') | Some('%')) {
            return Err("truncate: division by zero".into());
        }
        Ok(SetSize {
            tool,
            size,
            modifier,
            path: normalize(cwd, &given),
            given,
            done: false,
        })
    }
}

impl Program for SetSize {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.done {
            return Step::Exit(0);
        }
        self.done = true;
        let fd = match k.sys_open(me, &self.path, OpenFlags { write: true, create: true, ..Default::default() }) {
            Ok((fd, _)) => fd,
            Err(e) => {
                let msg = if self.tool == "fallocate" {
                    format!("fallocate: cannot open {}: {}\n", self.given, e.strerror())
                } else {
                    format!("truncate: cannot open '{}' for writing: {}\n", self.given, e.strerror())
                };
                k.eprint(me, &msg);
                return Step::Exit(1);
            }
        };
        if let Some(m) = self.modifier {
            // coreutils' do_ftruncate: relative to the size fstat gives (0 for a file it
            // just created); reducing below 0 gives 0.
            let cur = k.sys_stat(&self.path).map_or(0, |st| st.size);
            let n = self.size;
            self.size = match m {
                '+' => cur.saturating_add(n),
                '-' => cur.saturating_sub(n),
                '<' => cur.min(n),
                '>' => cur.max(n),
                '/' => cur / n * n,
                _ => cur.div_ceil(n) * n,
            };
        }
        let r = if self.tool == "fallocate" {
            k.sys_fallocate(me, fd, self.size)
        } else {
            k.sys_ftruncate(me, fd, self.size)
        };
        let _ = k.sys_close(me, fd);
        match r {
            Ok(wait) => match wait {
                Some(t) if t > k.now => Step::SleepUntil { t, io: true },
                _ => Step::Cpu { user: 0, sys: 20_000 },
            },
            Err(e) => {
                let msg = if self.tool == "fallocate" {
                    format!("fallocate: fallocate failed: {}\n", e.strerror())
                } else {
                    format!("truncate: failed to truncate '{}' at {} bytes: {}\n", self.given, self.size, e.strerror())
                };
                k.eprint(me, &msg);
                Step::Exit(1)
            }
        }
    }
}

/// chmod MODE FILE...: the permission bits of files change (ls -l and stat show them);
/// they have no effect on memory. Directories keep their modes.
pub struct Chmod {
    mode: String,
    paths: Vec<(String, String)>,
}

/// chmod's mode for a file whose bits are `cur`: octal digits, or symbolic clauses
/// (`u+x`, `go-w`, `a=r`, `+x`, `u=rw,g=r,o=`) as coreutils' mode_compile/mode_adjust read
/// them (an omitted "who" is "a" masked by the umask, 022).
pub fn chmod_mode(spec: &str, cur: u32, is_dir: bool) -> Option<u32> {
    if !spec.is_empty() && spec.chars().all(|c| c.is_digit(8)) {
        return u32::from_str_radix(spec, 8).ok().filter(|m| *m <= 0o7777);
    }
    const UMASK: u32 = 0o022;
    let mut mode = cur & 0o7777;
    for clause in spec.split(',') {
        let b = clause.as_bytes();
        let mut i = 0;
        let mut who = 0u32;
        while i < b.len() && b"ugoa".contains(&b[i]) {
            who |= match b[i] {
                b'u' => 0o4700,
                b'g' => 0o2070,
                b'o' => 0o1007,
                _ => 0o7777,
            };
            i += 1;
        }
        let masked = who == 0;
        if masked {
            who = 0o7777;
        }
        if i >= b.len() {
            return None;
        }
        while i < b.len() {
            let op = b[i];
            if !b"+-=".contains(&op) {
                return None;
            }
            i += 1;
            let mut bits = 0u32;
            if i < b.len() && b"ugo".contains(&b[i]) {
                // Copy another class's bits (u=g).
                let src = match b[i] {
                    b'u' => (mode >> 6) & 7,
                    b'g' => (mode >> 3) & 7,
                    _ => mode & 7,
                };
                bits = src * 0o111;
                i += 1;
            } else {
                while i < b.len() && b"rwxXst".contains(&b[i]) {
                    bits |= match b[i] {
                        b'r' => 0o444,
                        b'w' => 0o222,
                        b'x' => 0o111,
                        b'X' if is_dir || mode & 0o111 != 0 => 0o111,
                        b'X' => 0,
                        b's' => 0o6000,
                        _ => 0o1000,
                    };
                    i += 1;
                }
            }
            let mut affected = bits & who;
            if masked {
                affected &= !UMASK;
            }
            match op {
                b'+' => mode |= affected,
                b'-' => mode &= !affected,
                _ => {
                    let keep = if masked { !who | UMASK } else { !who };
                    mode = (mode & keep & 0o7777) | affected;
                }
            }
        }
    }
    Some(mode)
}

impl Chmod {
    pub fn parse(args: &[String], cwd: &str) -> Result<Chmod, String> {
        let mut it = args.iter().filter(|a| !matches!(a.as_str(), "-R" | "-v" | "-f" | "-c"));
        let mode = it.next().ok_or("chmod: missing operand")?;
        if chmod_mode(mode, 0o644, false).is_none() {
            return Err(format!("chmod: invalid mode: '{mode}'"));
        }
        let paths: Vec<(String, String)> = it.map(|p| (normalize(cwd, p), p.clone())).collect();
        if paths.is_empty() {
            return Err(format!("chmod: missing operand after '{mode}'"));
        }
        Ok(Chmod { mode: mode.clone(), paths })
    }
}

impl Program for Chmod {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let mut status = 0;
        for (p, given) in &self.paths {
            let st = match k.sys_stat(p) {
                Ok(st) => st,
                Err(_) => {
                    k.eprint(me, &format!("chmod: cannot access '{given}': No such file or directory\n"));
                    status = 1;
                    continue;
                }
            };
            let is_dir = st.kind == memtwin_kernel::fs::FileKind::Directory;
            if let Some(m) = chmod_mode(&self.mode, st.mode, is_dir) {
                let _ = k.sys_chmod(p, m);
            }
        }
        Step::Exit(status)
    }
}

/// touch [-a] [-m] [-c] [-r REF | -d DATE | -t STAMP] FILE...: creates missing files (an
/// empty inode, as open(O_CREAT) does) and sets access and modification times
/// (utimensat), to now unless a time is given.
pub struct Touch {
    atime: bool,
    mtime: bool,
    create: bool,
    when: TouchTime,
    paths: Vec<(String, String)>,
}

enum TouchTime {
    Now,
    /// Seconds since the epoch.
    At(u64),
    Reference(String, String),
}

/// Days since 1970-01-01 of a proleptic Gregorian date (days_from_civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn epoch_of(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> Option<u64> {
    let ok = (1..=12).contains(&mo) && (1..=31).contains(&d) && (0..24).contains(&h) && (0..60).contains(&mi) && (0..=60).contains(&s);
    let t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
    (ok && t >= 0).then_some(t as u64)
}

/// `-d`: `@SECONDS`, `YYYY-MM-DD`, `YYYY-MM-DD HH:MM[:SS]` (or with a `T`), in UTC.
fn parse_touch_date(v: &str) -> Option<u64> {
    if let Some(n) = v.strip_prefix('@') {
        return n.parse().ok();
    }
    let v = v.trim();
    let (date, time) = match v.split_once([' ', 'T']) {
        Some((d, t)) => (d, t.trim()),
        None => (v, "00:00:00"),
    };
    let d: Vec<i64> = date.split('-').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    let t: Vec<i64> = time.split(':').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    if d.len() != 3 || !(2..=3).contains(&t.len()) {
        return None;
    }
    epoch_of(d[0], d[1], d[2], t[0], t[1], *t.get(2).unwrap_or(&0))
}

/// `-t [[CC]YY]MMDDhhmm[.ss]` (posixtime), in UTC.
fn parse_touch_stamp(v: &str, now_year: i64) -> Option<u64> {
    let (main, ss) = match v.split_once('.') {
        Some((m, s)) if s.len() == 2 => (m, s.parse().ok()?),
        Some(_) => return None,
        None => (v, 0),
    };
    if !main.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = |s: &str| s.parse::<i64>().ok();
    let (y, rest) = match main.len() {
        8 => (now_year, main),
        10 => {
            let yy = n(&main[..2])?;
            (if yy < 69 { 2000 + yy } else { 1900 + yy }, &main[2..])
        }
        12 => (n(&main[..4])?, &main[4..]),
        _ => return None,
    };
    epoch_of(y, n(&rest[..2])?, n(&rest[2..4])?, n(&rest[4..6])?, n(&rest[6..8])?, ss)
}

impl Touch {
    pub fn parse(args: &[String], cwd: &str) -> Result<Touch, String> {
        const USAGE: &str = "touch [-a] [-m] [-c] [-r FILE | -d DATE | -t STAMP] FILE...";
        let mut t = Touch { atime: false, mtime: false, create: true, when: TouchTime::Now, paths: Vec::new() };
        let mut it = args.iter();
        let mut opts_done = false;
        let boot_year = 2026;
        while let Some(a) = it.next() {
            if opts_done || a == "-" || !a.starts_with('-') {
                t.paths.push((normalize(cwd, a), a.clone()));
                continue;
            }
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) if a.starts_with("--") => (n.to_string(), Some(v.to_string())),
                _ => (a.clone(), None),
            };
            let mut value = |flag: &str| -> Result<String, String> {
                if let Some(v) = inline.clone() {
                    return Ok(v);
                }
                if a.len() > 2 && !a.starts_with("--") {
                    return Ok(a[2..].to_string());
                }
                it.next().cloned().ok_or(format!("touch: option requires an argument -- '{flag}' ({USAGE})"))
            };
            match name.as_str() {
                "--" => opts_done = true,
                "-a" => t.atime = true,
                "-m" => t.mtime = true,
                "-c" | "--no-create" => t.create = false,
                "-am" | "-ma" => (t.atime, t.mtime) = (true, true),
                "-h" | "--no-dereference" | "-f" => {}
                n if n.starts_with("-r") || n == "--reference" => {
                    let r = value("r")?;
                    t.when = TouchTime::Reference(normalize(cwd, &r), r);
                }
                n if n.starts_with("-d") || n == "--date" => {
                    let v = value("d")?;
                    t.when = TouchTime::At(parse_touch_date(&v).ok_or(format!("touch: invalid date format '{v}' (accepted: @SECONDS, YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], UTC)"))?);
                }
                n if n.starts_with("-t") => {
                    let v = value("t")?;
                    t.when = TouchTime::At(parse_touch_stamp(&v, boot_year).ok_or(format!("touch: invalid date format '{v}'"))?);
                }
                _ => return Err(format!("touch: unsupported option '{a}' ({USAGE})")),
            }
        }
        if t.paths.is_empty() {
            return Err("touch: missing file operand".into());
        }
        if let TouchTime::At(s) = t.when {
            if s < BOOT_EPOCH_S {
                return Err(format!("touch: a time before the machine booted ({s} < {BOOT_EPOCH_S} s since the epoch) is not modelled: file times are kept from boot on"));
            }
        }
        if !t.atime && !t.mtime {
            (t.atime, t.mtime) = (true, true);
        }
        Ok(t)
    }
}

impl Program for Touch {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let mut status = 0;
        let mut sys: Ns = 0;
        let paths = std::mem::take(&mut self.paths);
        for (p, given) in &paths {
            let when = match &self.when {
                TouchTime::Now => k.now,
                TouchTime::At(s) => (s - BOOT_EPOCH_S) * 1_000_000_000,
                TouchTime::Reference(r, rg) => match k.sys_stat(r) {
                    Ok(st) => st.times[1],
                    Err(e) => {
                        k.eprint(me, &format!("touch: failed to get attributes of '{rg}': {}\n", e.strerror()));
                        return Step::Exit(1);
                    }
                },
            };
            if k.sys_stat(p).is_err() {
                if !self.create {
                    continue;
                }
                match k.sys_open(me, p, OpenFlags { write: true, create: true, ..Default::default() }) {
                    Ok((fd, _)) => {
                        let _ = k.sys_close(me, fd);
                    }
                    Err(e) => {
                        k.eprint(me, &format!("touch: cannot touch '{given}': {}\n", e.strerror()));
                        status = 1;
                        continue;
                    }
                }
            }
            let _ = k.sys_utimens(p, self.atime.then_some(when), self.mtime.then_some(when));
            sys += 5_000;
        }
        if status == 0 && sys > 0 {
            // The open/utimensat system calls; the exit follows.
            self.paths.clear();
            return Step::Cpu { user: 0, sys };
        }
        Step::Exit(status)
    }
}

/// du [-s] [-h] [-k] PATH...: blocks allocated to files (1 KiB units, or -h sizes).
pub struct Du {
    human: bool,
    summarize: bool,
    apparent: bool,
    paths: Vec<(String, String)>,
    /// The next operand, the exit status so far, and the walk of a generated tree in
    /// progress (resumable: it waits for metadata reads and slab memory).
    next: usize,
    status: i32,
    tree: Option<TreeDu>,
}

/// du over a generated file tree (fs/namei.rs): fts's walk as du does it — getdents of
/// each directory, then fstatat of each entry — through the dentry and inode caches.
struct TreeDu {
    path: String,
    given: String,
    started: bool,
    total: u64,
    stack: Vec<DuFrame>,
    lines: Vec<(String, u64)>,
}

struct DuFrame {
    dir: memtwin_kernel::fs::namei::Fh,
    shown: String,
    cookie: Option<u64>,
    entries: Vec<memtwin_kernel::fs::namei::DirEntry>,
    at: usize,
    bytes: u64,
}

impl TreeDu {
    /// Advance the walk: Ok when done, Err(step) to wait first.
    fn run(&mut self, k: &mut Kernel, me: TaskId, apparent: bool, summarize: bool) -> Result<(), Result<Step, String>> {
        use memtwin_kernel::fs::namei::VfsErr;
        let own = |st: &memtwin_kernel::fs::Stat| if apparent { st.size } else { st.blocks * 512 };
        let fail = |e: VfsErr, what: &str| match e {
            VfsErr::Wait(s) => Ok(s),
            VfsErr::Errno(e) => Err(format!("du: cannot access '{what}': {}\n", e.strerror())),
        };
        if !self.started {
            let st = k.vfs_stat(me, &self.path).map_err(|e| fail(e, &self.given))?;
            let fh = k.vfs_path_lookup(me, &self.path).map_err(|e| fail(e, &self.given))?;
            self.started = true;
            self.total = own(&st);
            if st.kind == memtwin_kernel::fs::FileKind::Directory {
                self.stack.push(DuFrame { dir: fh, shown: self.given.clone(), cookie: Some(0), entries: Vec::new(), at: 0, bytes: own(&st) });
            }
        }
        loop {
            let Some(top) = self.stack.last_mut() else { return Ok(()) };
            if top.at < top.entries.len() {
                let e = &top.entries[top.at];
                let st = k.vfs_statat(me, top.dir, &e.name).map_err(|err| fail(err, &format!("{}/{}", top.shown, e.name)))?;
                top.at += 1;
                if e.is_dir {
                    let shown = format!("{}/{}", top.shown.trim_end_matches('/'), e.name);
                    let dir = memtwin_kernel::fs::namei::Fh { sb: top.dir.sb, ino: e.ino };
                    self.stack.push(DuFrame { dir, shown, cookie: Some(0), entries: Vec::new(), at: 0, bytes: own(&st) });
                } else {
                    top.bytes += own(&st);
                }
                continue;
            }
            if let Some(c) = top.cookie {
                let (entries, next) = k.vfs_readdir(me, top.dir, c, 4096).map_err(|e| fail(e, &top.shown))?;
                top.entries = entries;
                top.at = 0;
                top.cookie = next;
                continue;
            }
            let done = self.stack.pop().unwrap();
            match self.stack.last_mut() {
                Some(parent) => {
                    parent.bytes += done.bytes;
                    if !summarize {
                        self.lines.push((done.shown, done.bytes));
                    }
                }
                None => self.total = done.bytes,
            }
        }
    }
}

impl Du {
    pub fn parse(args: &[String], cwd: &str) -> Result<Du, String> {
        let mut d = Du { human: false, summarize: false, apparent: false, paths: Vec::new(), next: 0, status: 0, tree: None };
        for a in args {
            if a == "--apparent-size" {
                d.apparent = true;
            } else if let Some(fl) = a.strip_prefix('-').filter(|f| !f.is_empty() && !f.starts_with('-')) {
                for c in fl.chars() {
                    match c {
                        'h' => d.human = true,
                        's' => d.summarize = true,
                        'k' => d.human = false,
                        c => return Err(format!("du: unsupported option '-{c}' (supported: -s, -h, -k, --apparent-size)")),
                    }
                }
            } else if a.starts_with('-') {
                return Err(format!("du: unrecognized option '{a}' (supported: -s, -h, -k, --apparent-size)"));
            } else {
                d.paths.push((normalize(cwd, a), a.clone()));
            }
        }
        if d.paths.is_empty() {
            d.paths.push((normalize(cwd, "."), ".".into()));
        }
        Ok(d)
    }
}

/// coreutils human_ceiling with -h: "1.0G", "512M", "4.0K", "0".
fn du_human(bytes: u64) -> String {
    if bytes == 0 {
        return "0".into();
    }
    let units = ["", "K", "M", "G", "T", "P"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        return format!("{bytes}");
    }
    if v < 10.0 {
        let r = (v * 10.0).ceil() / 10.0;
        if r < 10.0 {
            return format!("{r:.1}{}", units[u]);
        }
    }
    format!("{}{}", v.ceil() as u64, units[u])
}

impl Du {
    /// Bytes under `path` (its own blocks and, for a directory, everything below it);
    /// subdirectories are listed after their contents, as du prints them.
    fn walk(&self, k: &Kernel, path: &str, shown: &str, st: &memtwin_kernel::fs::Stat, out: &mut Vec<(String, u64)>) -> u64 {
        let own = if self.apparent { st.size } else { st.blocks * 512 };
        if st.kind != memtwin_kernel::fs::FileKind::Directory {
            return own;
        }
        let mut total = own;
        if let Ok(list) = k.sys_readdir(path) {
            for (name, s) in list {
                let child = format!("{}/{name}", path.trim_end_matches('/'));
                let child_shown = format!("{}/{name}", shown.trim_end_matches('/'));
                let b = self.walk(k, &child, &child_shown, &s, out);
                if !self.summarize && s.kind == memtwin_kernel::fs::FileKind::Directory {
                    out.push((child_shown, b));
                }
                total += b;
            }
        }
        total
    }
}

impl Program for Du {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let fmt = |human: bool, b: u64| if human { du_human(b) } else { b.div_ceil(1024).to_string() };
        loop {
            if let Some(w) = &mut self.tree {
                match w.run(k, me, self.apparent, self.summarize) {
                    Ok(()) => {
                        let mut out = String::new();
                        for (n, b) in std::mem::take(&mut w.lines) {
                            out.push_str(&format!("{}\t{n}\n", fmt(self.human, b)));
                        }
                        out.push_str(&format!("{}\t{}\n", fmt(self.human, w.total), w.given));
                        k.print(me, &out);
                        self.tree = None;
                    }
                    Err(Ok(step)) => return step,
                    Err(Err(msg)) => {
                        k.eprint(me, &msg);
                        self.status = 1;
                        self.tree = None;
                    }
                }
            }
            let Some((p, given)) = self.paths.get(self.next).cloned() else { return Step::Exit(self.status) };
            self.next += 1;
            if k.vfs.tree_of(&p).is_some() {
                self.tree = Some(TreeDu { path: p, given, started: false, total: 0, stack: Vec::new(), lines: Vec::new() });
                continue;
            }
            let st = match k.sys_stat(&p) {
                Ok(s) => s,
                Err(e) => {
                    k.eprint(me, &format!("du: cannot access '{given}': {}\n", e.strerror()));
                    self.status = 1;
                    continue;
                }
            };
            let mut entries: Vec<(String, u64)> = Vec::new();
            let total = self.walk(k, &p, &given, &st, &mut entries);
            let mut out = String::new();
            for (n, b) in entries {
                out.push_str(&format!("{}\t{n}\n", fmt(self.human, b)));
            }
            out.push_str(&format!("{}\t{given}\n", fmt(self.human, total)));
            k.print(me, &out);
        }
    }
}

// ---- fincore, vmtouch, pmap -------------------------------------------------------------

/// Resident pages of a file and its size in pages (filemap: the page index, read only).
fn residency(k: &Kernel, path: &str) -> Option<(u64, u64, u32)> {
    let ino = k.fs.lookup(path)?;
    let i = &k.fs.inodes[ino as usize];
    let pages = i.size.div_ceil(4096);
    // Walk only the entries present (xa_find), not the whole range.
    let (mut res, mut at) = (0u64, 0u64);
    while let Some((idx, slot)) = k.mm.next_slot(i.mapping, at, pages) {
        at = idx + 1;
        res += matches!(slot, memtwin_kernel::mm::Slot::Page(_)) as u64;
    }
    Some((res, pages, i.mapping))
}

/// fincore FILE... (util-linux 2.38): RES PAGES SIZE FILE, a libsmartcols table.
pub struct Fincore {
    files: Vec<(String, String)>,
    bytes: bool,
}

impl Fincore {
    pub fn parse(args: &[String], cwd: &str) -> Result<Fincore, String> {
        let mut f = Fincore { files: Vec::new(), bytes: false };
        for a in args {
            match a.as_str() {
                "-b" | "--bytes" => f.bytes = true,
                o if o.starts_with('-') => return Err(format!("fincore: unsupported option '{o}' (supported: fincore [-b] FILE...)")),
                p => f.files.push((normalize(cwd, p), p.to_string())),
            }
        }
        if f.files.is_empty() {
            return Err("fincore: no file specified".into());
        }
        Ok(f)
    }
}

impl Program for Fincore {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let mut rows = Vec::new();
        let mut status = 0;
        let size = |b: u64, bytes: bool| if bytes { b.to_string() } else { memtwin_tools::size_to_human(b) };
        for (p, given) in &self.files {
            match residency(k, p) {
                Some((res, _pages, _)) => {
                    let fsize = k.fs.inodes[k.fs.lookup(p).unwrap_or(0) as usize].size;
                    rows.push(vec![size(res * 4096, self.bytes), res.to_string(), size(fsize, self.bytes), given.clone()]);
                }
                None => {
                    k.eprint(me, &format!("fincore: failed to open: {given}: No such file or directory\n"));
                    status = 1;
                }
            }
        }
        // mincore(2) over the file: one page-cache lookup per page.
        k.charge_sys(me, rows.len() as u64 * 50_000);
        if !rows.is_empty() {
            let t = memtwin_tools::smartcols(&["RES", "PAGES", "SIZE", "FILE"], &[true, true, true, false], &rows);
            k.print(me, &t);
        }
        Step::Exit(status)
    }
}

/// vmtouch [-v] FILE... (1.3.1): resident pages of files. -t / -e (touch, evict) are
/// refused: use cat/dd to read a file in, and dd iflag=nocache or drop_caches to evict.
pub struct Vmtouch {
    files: Vec<(String, String)>,
    verbose: bool,
}

impl Vmtouch {
    pub fn parse(args: &[String], cwd: &str) -> Result<Vmtouch, String> {
        let mut v = Vmtouch { files: Vec::new(), verbose: false };
        for a in args {
            match a.as_str() {
                "-v" => v.verbose = true,
                "-t" | "-e" | "-l" | "-L" | "-d" => {
                    return Err(format!("vmtouch: {a} is not modelled (vmtouch [-v] FILE... reports residency; read a file with cat or dd to load it, evict with dd iflag=nocache or drop_caches)"))
                }
                o if o.starts_with('-') => return Err(format!("vmtouch: unsupported option '{o}' (supported: vmtouch [-v] FILE...)")),
                p => v.files.push((normalize(cwd, p), p.to_string())),
            }
        }
        if v.files.is_empty() {
            return Err("vmtouch: no files or directories specified".into());
        }
        Ok(v)
    }
}

/// vmtouch's pretty_print_size: integer K/M/G.
fn vmtouch_size(b: u64) -> String {
    if b < 1024 {
        return b.to_string();
    }
    let k = b / 1024;
    if k < 1024 {
        return format!("{k}K");
    }
    let m = k / 1024;
    if m < 1024 {
        return format!("{m}M");
    }
    format!("{}G", m / 1024)
}

impl Program for Vmtouch {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let start = k.now;
        let (mut files, mut dirs, mut res_t, mut pages_t) = (0u64, 0u64, 0u64, 0u64);
        let mut out = String::new();
        // vmtouch crawls directories (depth first, in directory order).
        let mut list: Vec<(String, String)> = Vec::new();
        let mut stack: Vec<(String, String)> = self.files.iter().rev().cloned().collect();
        while let Some((p, given)) = stack.pop() {
            if k.fs.is_dir(&p) {
                dirs += 1;
                if let Ok(entries) = k.sys_readdir(&p) {
                    for (name, _) in entries.into_iter().rev() {
                        let child = format!("{}/{name}", p.trim_end_matches('/'));
                        stack.push((child.clone(), format!("{}/{name}", given.trim_end_matches('/'))));
                    }
                }
            } else {
                list.push((p, given));
            }
        }
        for (p, given) in &list {
            let Some((res, pages, m)) = residency(k, p) else {
                k.eprint(me, &format!("vmtouch: WARNING: unable to open {given} (No such file or directory), skipping\n"));
                continue;
            };
            files += 1;
            res_t += res;
            pages_t += pages;
            if self.verbose {
                // 60 buckets: 'O' all resident, 'o' some, ' ' none.
                let mut bar = String::new();
                for b in 0..60u64 {
                    let (lo, hi) = (b * pages / 60, ((b + 1) * pages / 60).max(b * pages / 60 + 1).min(pages));
                    let n = (lo..hi).filter(|&i| k.mm.page(m, i).is_some()).count() as u64;
                    bar.push(if pages == 0 || n == 0 { ' ' } else if n == hi - lo { 'O' } else { 'o' });
                }
                out.push_str(&format!("{given}\n[{bar}] {res}/{pages}\n"));
            }
        }
        if self.verbose {
            out.push('\n');
        }
        out.push_str(&format!("           Files: {files}\n     Directories: {dirs}\n"));
        out.push_str(&format!("  Resident Pages: {res_t}/{pages_t}  {}/{}  ", vmtouch_size(res_t * 4096), vmtouch_size(pages_t * 4096)));
        if pages_t > 0 {
            out.push_str(&format!("{}%", super::dd::format_g_prec(100.0 * res_t as f64 / pages_t as f64, 3)));
        }
        out.push('\n');
        let cost = pages_t * 20 + 30_000;
        k.charge_sys(me, cost);
        let elapsed = (k.now - start + cost) as f64 / 1e9;
        out.push_str(&format!("         Elapsed: {} seconds\n", super::dd::format_g_prec(elapsed, 5)));
        k.print(me, &out);
        Step::Exit(if files + dirs == 0 { 1 } else { 0 })
    }
}

/// pmap -x PID (procps-ng 4.0.2): the task's mappings with Kbytes, RSS and Dirty.
pub struct Pmap {
    pids: Vec<u32>,
}

impl Pmap {
    pub fn parse(args: &[String]) -> Result<Pmap, String> {
        let mut x = false;
        let mut pids = Vec::new();
        for a in args {
            match a.as_str() {
                "-x" | "--extended" => x = true,
                o if o.starts_with('-') => return Err(format!("pmap: unsupported option '{o}' (supported: pmap -x PID...)")),
                p => pids.push(p.parse().map_err(|_| format!("pmap: invalid pid '{p}' (pmap -x PID...)"))?),
            }
        }
        if !x {
            return Err("pmap: only the extended format is modelled (pmap -x PID...)".into());
        }
        if pids.is_empty() {
            return Err("pmap: argument missing (pmap -x PID...)".into());
        }
        Ok(Pmap { pids })
    }
}

impl Program for Pmap {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let mut status = 0;
        for &pid in &self.pids {
            let Some(tid) = (0..k.tasks.len()).find(|&i| k.tasks[i].pid == pid && k.tasks[i].exit_code.is_none() && !k.tasks[i].reaped) else {
                status = 42;
                continue;
            };
            let t = &k.tasks[tid];
            let mut out = format!("{pid}:   {}\nAddress           Kbytes     RSS   Dirty Mode  Mapping\n", if t.kthread { String::new() } else { t.cmdline.clone() });
            // (address, kbytes, rss kB, dirty kB, mode, name)
            let mut rows: Vec<(u64, u64, u64, u64, &str, String)> = Vec::new();
            if let Some(m) = t.anon_mapping {
                let s = &k.mm.mappings[m as usize];
                let size_kb = t.vm_kb.max(s.nrpages * 4);
                // Anonymous pages are dirty once written (the model writes every page it faults).
                rows.push((0x0000_7f00_0000_0000, size_kb, s.nrpages * 4, s.nrpages * 4, "rw---", "  [ anon ]".into()));
            }
            let mut addr = 0x0000_7f80_0000_0000u64;
            for &m in &t.vmas {
                let s = &k.mm.mappings[m as usize];
                if !s.live {
                    continue;
                }
                let name = match s.kind {
                    memtwin_kernel::mm::MappingKind::Shmem => "zero (deleted)".to_string(),
                    _ => k.fs.by_mapping.get(&m).map(|&ino| memtwin_kernel::fs::base_name(&k.fs.inodes[ino as usize].path).to_string()).unwrap_or_else(|| "libc.so.6".into()),
                };
                let kb = (s.extent * 4).max(s.nrpages * 4);
                let mode = if s.exec { "r-x--" } else if s.kind == memtwin_kernel::mm::MappingKind::Shmem { "rw-s-" } else { "r----" };
                rows.push((addr, kb, s.nrpages * 4, s.nr_dirty * 4, mode, name));
                addr += (kb * 1024).div_ceil(1 << 21) * (1 << 21) + (1 << 21);
            }
            rows.sort_by_key(|r| r.0);
            let (mut tk, mut tr, mut td) = (0, 0, 0);
            for (a, kb, rss, dirty, mode, name) in rows {
                out.push_str(&format!("{a:016x} {kb:>7} {rss:>7} {dirty:>7} {mode} {name}\n"));
                tk += kb;
                tr += rss;
                td += dirty;
            }
            out.push_str(&format!("---------------- ------- ------- ------- \ntotal kB {tk:>15} {tr:>7} {td:>7}\n"));
            k.print(me, &out);
        }
        Step::Exit(status)
    }
}

// ---- sar ----------------------------------------------------------------------------------

/// `uname -r` of a typical distribution kernel of each profile (sar's banner).
pub fn release_of(era: memtwin_machine::KernelProfile) -> &'static str {
    use memtwin_machine::KernelProfile::*;
    match era {
        Linux6 => "6.1.0-13-amd64",
        Linux58 => "5.8.0-63-generic",
        Linux5Pre59 => "5.4.0-150-generic",
        Linux2639 => "2.6.32-71.el6.x86_64",
        Linux24 => "2.4.21-37.ELsmp",
    }
}

fn hms(k: &Kernel) -> String {
    let w = BOOT_WALL_CLOCK_S + k.now / 1_000_000_000;
    format!("{:02}:{:02}:{:02}", w / 3600 % 24, w / 60 % 60, w % 60)
}

/// sar -r|-B|-W|-S INTERVAL COUNT (sysstat 12.6): the model's counters sampled at each
/// interval. Without an interval sar reads sadc's daily file, which is not collected here.
pub struct Sar {
    reports: Vec<memtwin_tools::SarReport>,
    interval: Ns,
    count: u64,
    samples: Vec<memtwin_procfs::Snapshot>,
    times: Vec<String>,
    next: Ns,
}

const SAR_USAGE: &str = "sar [-r] [-B] [-W] [-S] INTERVAL COUNT";



impl Sar {
    pub fn parse(args: &[String]) -> Result<Sar, String> {
        use memtwin_tools::SarReport::*;
        let mut reports = Vec::new();
        let mut nums = Vec::new();
        for a in args {
            match a.as_str() {
                "-r" => reports.push(Memory),
                "-B" => reports.push(Paging),
                "-W" => reports.push(Swapping),
                "-S" => reports.push(SwapSpace),
                o if o.starts_with('-') => return Err(format!("sar: option {o} is not modelled ({SAR_USAGE}: memory, paging, swapping, swap space)")),
                n => nums.push(n.parse::<u64>().map_err(|_| format!("sar: invalid interval or count '{n}' ({SAR_USAGE})"))?),
            }
        }
        if reports.is_empty() {
            return Err(format!("sar: the CPU report (default) is not modelled; give -r, -B, -W or -S ({SAR_USAGE})"));
        }
        let (interval, count) = match nums[..] {
            [i, c] if i > 0 && c > 0 => (i, c),
            [] => return Err(format!("sar: without an interval sar reads sadc's daily data file, which is not collected here ({SAR_USAGE})")),
            _ => return Err(format!("sar: give an interval and a count ({SAR_USAGE})")),
        };
        // sysstat's activity order: swapping, paging, memory, swap space.
        let order = |r: &memtwin_tools::SarReport| match r {
            Swapping => 0,
            Paging => 1,
            Memory => 2,
            SwapSpace => 3,
        };
        reports.sort_by_key(order);
        reports.dedup();
        Ok(Sar { reports, interval: interval * 1_000_000_000, count, samples: Vec::new(), times: Vec::new(), next: 0 })
    }
}

impl Program for Sar {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.samples.is_empty() {
            k.print(me, &memtwin_tools::sar_banner(release_of(k.machine.kernel), "11/23/2026", k.machine.cpus));
            self.samples.push(k.snapshot());
            self.times.push(hms(k));
            self.next = k.now + self.interval;
            return Step::SleepUntil { t: self.next, io: false };
        }
        if k.now < self.next {
            return Step::SleepUntil { t: self.next, io: false };
        }
        k.charge_sys(me, PROC_READ_NS);
        let cur = k.snapshot();
        let now = hms(k);
        let n = self.samples.len();
        let prev = &self.samples[n - 1];
        let mut out = String::new();
        let single = self.reports.len() == 1;
        for (i, &r) in self.reports.iter().enumerate() {
            if !single && (n > 1 || i > 0) {
                out.push('\n');
            }
            if !single || n == 1 {
                out.push_str(&memtwin_tools::sar_header(r, &self.times[n - 1]));
            }
            out.push_str(&memtwin_tools::sar_row(r, prev, &cur, &now));
        }
        k.print(me, &out);
        self.samples.push(cur);
        self.times.push(now);
        if self.samples.len() as u64 > self.count {
            let mut avg = String::new();
            for (i, &r) in self.reports.iter().enumerate() {
                if !single {
                    avg.push('\n');
                    avg.push_str(&memtwin_tools::sar_header(r, "Average:"));
                } else if i == 0 {
                    avg.push('\n');
                }
                avg.push_str(&memtwin_tools::sar_average(r, &self.samples));
            }
            if single {
                // A single report: the blank line sits before Average only when rows repeat
                // the header; sysstat prints "Average:" right after the last row.
                avg = avg.trim_start_matches('\n').to_string();
            }
            k.print(me, &avg);
            return Step::Exit(0);
        }
        self.next += self.interval;
        Step::SleepUntil { t: self.next, io: false }
    }
}

// ---- reclaimstat ------------------------------------------------------------------------

/// `reclaimstat [--reset] [--ns]`: every reclaim invocation since boot (or the last reset),
/// per path: kswapd, classic direct reclaim, split reclaim's page and slab reclaim (docs/
/// seed-004.md). Latency from entering reclaim to leaving it, with its lock-wait part.
/// The model's own tool: no kernel has such a counter file.
pub struct Reclaimstat {
    reset: bool,
    raw_ns: bool,
}

impl Reclaimstat {
    pub fn parse(args: &[String]) -> Result<Reclaimstat, String> {
        let mut r = Reclaimstat { reset: false, raw_ns: false };
        for a in args {
            match a.as_str() {
                "--reset" | "-z" => r.reset = true,
                "--ns" => r.raw_ns = true,
                o => return Err(format!("reclaimstat: unsupported argument '{o}' (supported: reclaimstat [--ns] [-z|--reset])")),
            }
        }
        Ok(r)
    }
}

/// A duration with three significant digits and a unit (ns, us, ms, s).
pub fn human_ns(ns: f64) -> String {
    if ns < 1e3 {
        return format!("{ns:.0}ns");
    }
    let (v, unit) = if ns < 1e6 {
        (ns / 1e3, "us")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let s = if v >= 100.0 { format!("{v:.0}") } else if v >= 10.0 { format!("{v:.1}") } else { format!("{v:.2}") };
    format!("{s}{unit}")
}

/// The table `reclaimstat` prints for `stats`.
pub fn reclaim_table(stats: &memtwin_kernel::ReclaimStats, raw_ns: bool) -> String {
    use memtwin_kernel::ReclaimKind;
    let f = |ns: f64| if raw_ns { format!("{}", ns.round() as u64) } else { human_ns(ns) };
    let mut out = format!(
        "{:<11}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n",
        "path", "count", "mean", "p50", "p99", "max", "wait_avg", "wait_max"
    );
    for kind in ReclaimKind::ALL {
        let l = stats.latency_of(kind);
        let w = stats.lock_wait_of(kind);
        if l.count == 0 {
            out.push_str(&format!("{:<11}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n", kind.name(), 0, "-", "-", "-", "-", "-", "-"));
            continue;
        }
        out.push_str(&format!(
            "{:<11}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n",
            kind.name(),
            l.count,
            f(l.mean_ns),
            f(l.p50_ns as f64),
            f(l.p99_ns as f64),
            f(l.max_ns as f64),
            f(w.mean_ns),
            f(w.max_ns as f64)
        ));
    }
    out
}

impl Program for Reclaimstat {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.reset {
            k.reclaim.stats.clear();
        } else {
            let t = reclaim_table(&k.reclaim.stats, self.raw_ns);
            k.print(me, &t);
        }
        Step::Exit(0)
    }
}
