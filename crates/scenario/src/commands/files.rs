//! File commands: cp, cat, rm, sync, echo.

use memtwin_kernel::fs::{normalize, OpenFlags};
use memtwin_kernel::{Kernel, Program, Sink, Step, TaskId};
use std::collections::HashMap;

/// cp's copy buffer (coreutils io_blksize: 128 KiB).
const CP_BUF: u64 = 128 * 1024;

pub struct Cp {
    src: String,
    dst: String,
    src_arg: String,
    dst_arg: String,
    fds: Option<(usize, usize)>,
    got: u64,
    written: u64,
    faulted: bool,
    /// -r / -R / -a: copy a directory tree. The (source, destination) files still to copy,
    /// built from the tree when the copy starts (directories are made as found).
    recursive: bool,
    queue: Option<Vec<(String, String)>>,
}

impl Cp {
    pub fn parse(args: &[String], cwd: &str) -> Result<Cp, String> {
        let ops: Vec<&String> = args.iter().filter(|a| !a.starts_with('-') || a.as_str() == "-").collect();
        let mut recursive = false;
        for a in args.iter().filter(|a| a.starts_with('-') && a.len() > 1) {
            match a.as_str() {
                "-f" | "--force" => {}
                "-r" | "-R" | "--recursive" | "-a" | "--archive" | "-rf" | "-fr" => recursive = true,
                _ => return Err(format!("cp: unsupported option '{a}' (supported: cp [-f] [-r] SOURCE DEST)")),
            }
        }
        if ops.len() != 2 {
            return Err("cp: expected exactly SOURCE and DEST (cp [-f] [-r] SOURCE DEST)".into());
        }
        Ok(Cp {
            src: normalize(cwd, ops[0]),
            dst: normalize(cwd, ops[1]),
            src_arg: ops[0].clone(),
            dst_arg: ops[1].clone(),
            fds: None,
            got: 0,
            written: 0,
            faulted: false,
            recursive,
            queue: None,
        })
    }

    /// cp -r: make the destination directories and list the files to copy, in directory
    /// order (copy_dir: readdir, then each entry). DEST that exists as a directory
    /// receives SOURCE's name inside it, as cp does.
    fn plan_tree(&mut self, k: &mut Kernel, me: TaskId) -> Result<(), String> {
        let base = if k.fs.is_dir(&self.dst) {
            format!("{}/{}", self.dst.trim_end_matches('/'), memtwin_kernel::fs::base_name(&self.src))
        } else {
            self.dst.clone()
        };
        let mut files = Vec::new();
        let mut stack = vec![(self.src.clone(), base)];
        while let Some((s, d)) = stack.pop() {
            if k.fs.is_dir(&s) {
                if !k.fs.is_dir(&d) {
                    k.sys_mkdir(&d).map_err(|e| format!("cp: cannot create directory '{d}': {}", e.strerror()))?;
                }
                let entries = k.sys_readdir(&s).map_err(|e| format!("cp: cannot access '{s}': {}", e.strerror()))?;
                for (name, _) in entries.into_iter().rev() {
                    stack.push((format!("{}/{name}", s.trim_end_matches('/')), format!("{}/{name}", d.trim_end_matches('/'))));
                }
            } else {
                files.push((s, d));
            }
        }
        let _ = me;
        files.reverse();
        self.queue = Some(files);
        Ok(())
    }
}

impl Program for Cp {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.recursive && self.fds.is_none() {
            if self.queue.is_none() {
                if !k.fs.exists(&self.src) {
                    k.eprint(me, &format!("cp: cannot stat '{}': No such file or directory\n", self.src_arg));
                    return Step::Exit(1);
                }
                if let Err(m) = self.plan_tree(k, me) {
                    k.eprint(me, &format!("{m}\n"));
                    return Step::Exit(1);
                }
            }
            // The next file of the tree (files are copied one after the other).
            match self.queue.as_mut().and_then(|q| q.pop()) {
                Some((s, d)) => {
                    self.src_arg = s.clone();
                    self.dst_arg = d.clone();
                    self.src = s;
                    self.dst = d;
                    self.got = 0;
                    self.written = 0;
                }
                None => return Step::Exit(0),
            }
        } else if !self.recursive && self.fds.is_none() && k.fs.is_dir(&self.src) {
            k.eprint(me, &format!("cp: -r not specified; omitting directory '{}'\n", self.src_arg));
            return Step::Exit(1);
        }
        let (i, o) = match self.fds {
            Some(f) => f,
            None => {
                let i = match k.sys_open(me, &self.src, OpenFlags { read: true, ..Default::default() }) {
                    Ok((fd, _)) => fd,
                    Err(e) => {
                        k.eprint(me, &format!("cp: cannot stat '{}': {}\n", self.src_arg, e.strerror()));
                        return Step::Exit(1);
                    }
                };
                let o = match k.sys_open(me, &self.dst, OpenFlags { write: true, create: true, trunc: true, ..Default::default() }) {
                    Ok((fd, wait)) => {
                        self.fds = Some((i, fd));
                        if let Some(t) = wait {
                            return Step::SleepUntil { t, io: true };
                        }
                        fd
                    }
                    Err(e) => {
                        k.eprint(me, &format!("cp: cannot create regular file '{}': {}\n", self.dst_arg, e.strerror()));
                        return Step::Exit(1);
                    }
                };
                self.fds = Some((i, o));
                (i, o)
            }
        };
        if !self.faulted {
            self.faulted = true;
            if let Err((_, s)) = k.fault_anon_pages(me, 0, CP_BUF / 4096) {
                self.faulted = false;
                return s;
            }
        }
        if self.got == self.written {
            self.got = 0;
            self.written = 0;
            match k.sys_read(me, i, CP_BUF) {
                Ok(r) => {
                    if r.bytes == 0 && r.wait.is_none() {
                        let _ = k.sys_close(me, i);
                        let _ = k.sys_close(me, o);
                        if self.recursive {
                            // On to the next file of the tree.
                            self.fds = None;
                            return Step::Cpu { user: 2_000, sys: 0 };
                        }
                        return Step::Exit(0);
                    }
                    self.got = r.bytes;
                    if let Some(w) = r.wait {
                        return w;
                    }
                }
                Err(e) => {
                    k.eprint(me, &format!("cp: error reading '{}': {}\n", self.src_arg, e.strerror()));
                    return Step::Exit(1);
                }
            }
        }
        match k.sys_write(me, o, self.got - self.written) {
            Ok(r) => {
                self.written += r.bytes;
                if let Some(w) = r.wait {
                    return w;
                }
            }
            Err(e) => {
                k.eprint(me, &format!("cp: error writing '{}': {}\n", self.dst_arg, e.strerror()));
                let _ = k.sys_close(me, i);
                let _ = k.sys_close(me, o);
                return Step::Exit(1);
            }
        }
        Step::Cpu { user: 2_000, sys: 0 }
    }
}

/// What cat reads.
enum CatSource {
    /// A simulated file: read through the page cache (its contents are not modelled).
    File(String),
    /// Output captured from an earlier command's redirection.
    Capture(u32),
    /// A /proc or /sys file rendered from the model (commands/procfiles.rs).
    Proc(String),
    ProcSys(String),
    /// A file of the cgroup filesystem.
    Cgroup(String),
    /// /proc/PID/cgroup (None: /proc/self).
    ProcCgroup(Option<u32>),
    /// /proc/pressure/{cpu,memory,io} (absent before 4.20).
    ProcPressure(&'static str),
}

pub struct Cat {
    sources: Vec<CatSource>,
    cur: usize,
    fd: Option<usize>,
    status: i32,
    /// stdout redirected to a file: its descriptor once open, and bytes read but not yet
    /// written.
    out_fd: Option<usize>,
    unwritten: u64,
}

/// The shell opened stdout's file (`> PATH` truncates, `>> PATH` appends): cat writes to it.
fn open_stdout(k: &mut Kernel, me: TaskId) -> Result<Option<usize>, String> {
    let Some((path, append)) = k.tasks[me as usize].stdout_file.clone() else { return Ok(None) };
    let flags = OpenFlags { write: true, create: true, trunc: !append, append, ..Default::default() };
    match k.sys_open(me, &path, flags) {
        Ok((fd, _)) => Ok(Some(fd)),
        Err(e) => Err(format!("bash: {path}: {}\n", e.strerror())),
    }
}

impl Cat {
    pub fn parse(args: &[String], cwd: &str, captures: &HashMap<String, u32>) -> Result<Cat, String> {
        let mut sources = Vec::new();
        for a in args {
            if a.starts_with('-') && a.len() > 1 {
                return Err(format!("cat: unsupported option '{a}' (supported: cat FILE...)"));
            }
            let p = normalize(cwd, a);
            let s = match p.as_str() {
                "/proc/pressure/cpu" => CatSource::ProcPressure("cpu"),
                "/proc/pressure/memory" => CatSource::ProcPressure("memory"),
                "/proc/pressure/io" => CatSource::ProcPressure("io"),
                x if x.starts_with("/proc/sys/") => CatSource::ProcSys(x["/proc/sys/".len()..].replace('/', ".")),
                "/proc/self/cgroup" => CatSource::ProcCgroup(None),
                x if x.starts_with("/proc/") && x.ends_with("/cgroup") && x[6..x.len() - 7].parse::<u32>().is_ok() => {
                    CatSource::ProcCgroup(x[6..x.len() - 7].parse().ok())
                }
                x if super::cgroup::is_cgroup_path(x) => CatSource::Cgroup(x.to_string()),
                x if x.starts_with("/proc/") || x.starts_with("/sys/") => {
                    super::procfiles::check(x, None)?;
                    CatSource::Proc(x.to_string())
                }
                x => match captures.get(x) {
                    Some(&b) => CatSource::Capture(b),
                    None => CatSource::File(p),
                },
            };
            sources.push(s);
        }
        if sources.is_empty() {
            return Err("cat: reading standard input is not supported (cat FILE...)".into());
        }
        Ok(Cat { sources, cur: 0, fd: None, status: 0, out_fd: None, unwritten: 0 })
    }
}

impl Cat {
    /// Write what was read to stdout's file; `Some` when the task must wait or stop.
    fn flush(&mut self, k: &mut Kernel, me: TaskId) -> Option<Step> {
        let out = self.out_fd?;
        while self.unwritten > 0 {
            match k.sys_write(me, out, self.unwritten) {
                Ok(r) => {
                    self.unwritten -= r.bytes.min(self.unwritten);
                    if let Some(w) = r.wait {
                        return Some(w);
                    }
                    if r.bytes == 0 {
                        return Some(Step::Yield);
                    }
                }
                Err(e) => {
                    // cat: write error: No space left on device
                    k.eprint(me, &format!("cat: write error: {}\n", e.strerror()));
                    if let Some(fd) = self.fd.take() {
                        let _ = k.sys_close(me, fd);
                    }
                    let _ = k.sys_close(me, out);
                    return Some(Step::Exit(1));
                }
            }
        }
        None
    }
}

impl Program for Cat {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.cur == 0 && self.out_fd.is_none() && self.fd.is_none() {
            match open_stdout(k, me) {
                Ok(fd) => self.out_fd = fd,
                Err(msg) => {
                    k.eprint(me, &msg);
                    return Step::Exit(1);
                }
            }
        }
        if let Some(s) = self.flush(k, me) {
            return s;
        }
        while self.cur < self.sources.len() {
            match &self.sources[self.cur] {
                CatSource::Proc(path) => {
                    let checked = super::procfiles::check(path, Some(k.machine.kernel));
                    match checked.and_then(|()| super::procfiles::read(k, me, path)) {
                        Ok(t) => k.print(me, &t),
                        Err(e) => {
                            let e = if e.ends_with('\n') { e } else { format!("{e}\n") };
                            k.eprint(me, &e);
                            self.status = 1;
                        }
                    }
                }
                CatSource::ProcPressure(res) => match k.pressure(res) {
                    Some(t) => k.print(me, &t),
                    None => {
                        k.eprint(me, &format!("cat: /proc/pressure/{res}: No such file or directory\n"));
                        self.status = 1;
                    }
                },
                CatSource::ProcSys(name) => match k.sysctl.get(name).ok().filter(|_| super::sysctl::era_has_key(k.machine.kernel, name)).ok_or(()) {
                    Ok(v) => k.print(me, &format!("{v}\n")),
                    Err(_) => {
                        k.eprint(me, &format!("cat: /proc/sys/{}: No such file or directory\n", name.replace('.', "/")));
                        self.status = 1;
                    }
                },
                CatSource::Capture(b) => {
                    let t = k.buffers[*b as usize].clone();
                    k.print(me, &t);
                }
                CatSource::Cgroup(path) => match k.cgroup_read_now(path) {
                    Ok(t) => k.print(me, &t),
                    Err(memtwin_kernel::cgroup::CgError::Errno(e)) => {
                        k.eprint(me, &format!("cat: {path}: {}\n", e.strerror()));
                        self.status = 1;
                    }
                    Err(memtwin_kernel::cgroup::CgError::Unmodelled(m)) => {
                        k.eprint(me, &format!("memtwin: {m}\n"));
                        self.status = 1;
                    }
                },
                CatSource::ProcCgroup(pid) => {
                    let t = match pid {
                        None => Some(me),
                        Some(p) => (0..k.tasks.len() as TaskId).find(|&t| k.tasks[t as usize].pid == *p && k.tasks[t as usize].exit_code.is_none()),
                    };
                    match t {
                        Some(t) => {
                            let s = k.proc_pid_cgroup(t);
                            k.print(me, &s);
                        }
                        None => {
                            k.eprint(me, &format!("cat: /proc/{}/cgroup: No such file or directory\n", pid.unwrap_or(0)));
                            self.status = 1;
                        }
                    }
                }
                CatSource::File(path) => {
                    let fd = match self.fd {
                        Some(fd) => fd,
                        None => match k.sys_open(me, path, OpenFlags { read: true, ..Default::default() }) {
                            Ok((fd, _)) => {
                                self.fd = Some(fd);
                                fd
                            }
                            Err(e) => {
                                let p = path.clone();
                                k.eprint(me, &format!("cat: {}: {}\n", p, e.strerror()));
                                self.status = 1;
                                self.cur += 1;
                                continue;
                            }
                        },
                    };
                    match k.sys_read(me, fd, 128 * 1024) {
                        Ok(r) if r.bytes == 0 && r.wait.is_none() => {
                            let _ = k.sys_close(me, fd);
                            self.fd = None;
                        }
                        Ok(r) => {
                            if self.out_fd.is_some() {
                                self.unwritten = r.bytes;
                                if let Some(s) = self.flush(k, me) {
                                    return s;
                                }
                            } else if k.tasks[me as usize].stdout == Sink::Terminal {
                                // n_tty write: the bytes are copied into the tty; what a
                                // device produces reaches the terminal (a file's contents
                                // are not modelled).
                                k.charge_sys(me, (r.bytes as f64 / k.machine.cpu_model.copy_bw * 1e9) as u64);
                                if path == "/dev/urandom" || path == "/dev/random" {
                                    let bytes: Vec<u8> = (0..r.bytes).map(|_| k.rng.next_u64() as u8).collect();
                                    k.print(me, &String::from_utf8_lossy(&bytes));
                                }
                            }
                            if let Some(w) = r.wait {
                                return w;
                            }
                            return Step::Cpu { user: 1_000, sys: 0 };
                        }
                        Err(e) => {
                            k.eprint(me, &format!("cat: {}: {}\n", path, e.strerror()));
                            self.status = 1;
                            let _ = k.sys_close(me, fd);
                            self.fd = None;
                        }
                    }
                }
            }
            self.cur += 1;
        }
        if let Some(fd) = self.out_fd.take() {
            let _ = k.sys_close(me, fd);
        }
        Step::Exit(self.status)
    }
}

pub struct Rm {
    paths: Vec<(String, String)>,
    force: bool,
    cur: usize,
    status: i32,
}

impl Rm {
    pub fn parse(args: &[String], cwd: &str) -> Result<Rm, String> {
        let mut force = false;
        let mut paths = Vec::new();
        for a in args {
            if a.starts_with('-') && a.len() > 1 {
                for c in a[1..].chars() {
                    match c {
                        'f' => force = true,
                        'r' | 'R' | 'v' => {}
                        _ => return Err(format!("rm: unsupported option '-{c}' (supported: -f, -r)")),
                    }
                }
            } else {
                paths.push((normalize(cwd, a), a.clone()));
            }
        }
        if paths.is_empty() && !force {
            return Err("rm: missing operand".into());
        }
        Ok(Rm { paths, force, cur: 0, status: 0 })
    }
}

impl Program for Rm {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        while self.cur < self.paths.len() {
            let (p, given) = self.paths[self.cur].clone();
            self.cur += 1;
            match k.sys_unlink(me, &p) {
                Ok(Some(t)) if t > k.now => return Step::SleepUntil { t, io: true },
                Ok(_) => {}
                Err(e) => {
                    if !self.force {
                        k.eprint(me, &format!("rm: cannot remove '{}': {}\n", given, e.strerror()));
                        self.status = 1;
                    }
                }
            }
        }
        Step::Exit(self.status)
    }
}

/// sync(1): with no operand, ask the flushers to write everything and wait until nothing is
/// dirty or under writeback. `sync FILE...` fsyncs each file (`-d`: fdatasync, the same in
/// the model, which keeps no separate metadata writes); `sync -f FILE...` is syncfs(2) of
/// each file's filesystem: every dirty file on it is written and waited for.
pub struct Sync {
    started: bool,
    files: Vec<(String, String)>,
    syncfs: bool,
    /// Per-file mode: the wait for the files' writeback (None once it is over).
    wait: Option<Step>,
}

impl Sync {
    pub fn parse(args: &[String], cwd: &str) -> Result<Sync, String> {
        let mut s = Sync { started: false, files: Vec::new(), syncfs: false, wait: None };
        for a in args {
            match a.as_str() {
                "-f" | "--file-system" => s.syncfs = true,
                "-d" | "--data" => {}
                o if o.starts_with('-') => return Err(format!("sync: unsupported option '{o}' (supported: sync [-d|-f] [FILE]...)")),
                p => s.files.push((normalize(cwd, p), p.to_string())),
            }
        }
        if s.syncfs && s.files.is_empty() {
            // coreutils: --file-system with no file is sync of the current directory's fs.
            s.files.push((normalize(cwd, "."), ".".into()));
        }
        Ok(s)
    }

    fn fsync_path(k: &mut Kernel, me: TaskId, path: &str) -> Result<Option<Step>, memtwin_kernel::fs::Errno> {
        let (fd, _) = k.sys_open(me, path, OpenFlags { read: true, ..Default::default() })?;
        let r = k.sys_fsync(me, fd);
        let _ = k.sys_close(me, fd);
        r
    }
}

impl Program for Sync {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if !self.files.is_empty() {
            if !self.started {
                self.started = true;
                let mut status = 0;
                let mut waits = Vec::new();
                for (p, given) in self.files.clone() {
                    let targets: Vec<String> = if self.syncfs {
                        let Some(mount) = k.fs.mount_of(&p) else {
                            k.eprint(me, &format!("sync: error opening '{given}': No such file or directory\n"));
                            status = 1;
                            continue;
                        };
                        let mut v: Vec<String> = k
                            .fs
                            .inodes
                            .iter()
                            .filter(|i| i.linked && i.mount == mount && {
                                let m = &k.mm.mappings[i.mapping as usize];
                                m.nr_dirty + m.nr_writeback > 0
                            })
                            .map(|i| i.path.clone())
                            .collect();
                        v.sort();
                        v
                    } else {
                        vec![p.clone()]
                    };
                    for t in targets {
                        match Self::fsync_path(k, me, &t) {
                            Ok(Some(w)) => waits.push(w),
                            Ok(None) => {}
                            Err(e) => {
                                k.eprint(me, &format!("sync: error opening '{given}': {}\n", e.strerror()));
                                status = 1;
                            }
                        }
                    }
                }
                if status != 0 {
                    return Step::Exit(status);
                }
                self.wait = memtwin_kernel::wait::Wait::all_of(waits, k.block.submitted);
            }
            if let Some(w) = self.wait.take() {
                return w;
            }
            return Step::Exit(0);
        }
        if !self.started {
            self.started = true;
            k.request_sync();
            // sync_filesystem: the journals commit (metadata made so far is durable).
            k.sync_filesystems();
        }
        if k.mm.stat.dirty + k.mm.stat.writeback == 0 {
            // sync(2) returned: the flushers go back to background/periodic writeback
            // (otherwise data dirtied later would be written at once, as if synced).
            k.writeback.sync_requested = false;
            return Step::Exit(0);
        }
        // wait_sb_inodes: asleep until the writeback completions leave nothing dirty or
        // under writeback.
        Step::Wait(memtwin_kernel::wait::Wait::sync_inodes())
    }
}

pub struct Echo {
    text: String,
}

impl Echo {
    pub fn new(args: &[String]) -> Echo {
        let (newline, rest) = match args.first().map(|s| s.as_str()) {
            Some("-n") => (false, &args[1..]),
            _ => (true, args),
        };
        let mut text = rest.join(" ");
        if newline {
            text.push('\n');
        }
        Echo { text }
    }
}

impl Program for Echo {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let t = std::mem::take(&mut self.text);
        k.print(me, &t);
        Step::Exit(0)
    }
}
