//! Text tools (GNU coreutils, grep, sed, gawk behaviour on the common options): they read
//! standard input (a pipe, a here-document, `< file`) or files, and write standard output.
//! Files are read through the page cache like any read(2); the text of a file is what a
//! redirection wrote to it (`echo ... > f`), a /proc file's contents, or, for data written
//! by dd/cp/fio whose bytes are not modelled, NUL bytes of the file's size. Each byte costs
//! the CPU time of the tool's inner loop from the machine's cost model: a memchr-class scan
//! (the memory-copy bandwidth) for grep/head/tail/cat/wc -l, a per-character loop
//! (stdio_char_ns) for tools that look at every character (awk, sed, tr, cut, sort, wc -w).

mod awk;
mod grep;
mod lines;
mod misc;
mod sed;

pub use misc::{printf_format, Emit, Noop};

use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::pipe::PipeRead;
use memtwin_kernel::{Kernel, Program, Sink, Step, TaskId};
use std::collections::HashMap;

use super::Cmd;

/// The text tools, in the order the README lists them.
pub const TEXT_COMMANDS: &[&str] = &[
    "grep", "egrep", "fgrep", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "awk", "sed", "tee", "xargs", "seq", "yes",
    "printf", "basename", "dirname", "sleep",
];

/// A command's standard input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// The terminal: a script's commands read end of file from it.
    Tty,
    /// The read end of the pipe the shell attached.
    Pipe,
    /// A here-document, here-string or the text a loop reads.
    Text(String),
    /// A file written by a redirection (its capture buffer).
    Buffer(u32),
    /// A file read through the page cache (or a /proc file).
    File(String),
}

/// What `build` needs to know of the shell.
pub struct Ctx<'a> {
    pub cwd: &'a str,
    pub captures: &'a HashMap<String, u32>,
    /// The machine, when building at run time (None when checking a script before it runs).
    pub k: Option<&'a Kernel>,
}

/// Build a text tool; `None` if `name` is not one.
pub fn build(name: &str, args: &[String], ctx: &Ctx<'_>, stdin: Input) -> Option<Result<Cmd, String>> {
    let r = match name {
        "grep" | "egrep" | "fgrep" => grep::build(name, args, ctx, stdin),
        "head" | "tail" | "wc" | "sort" | "uniq" | "cut" | "tr" | "tee" | "cat" => {
            if name == "cat" && args.iter().any(|a| !a.starts_with('-') || a == "-") && !args.iter().any(|a| a == "-") && stdin != Input::Pipe {
                // cat of files: the data path (page cache to file or terminal).
                return None;
            }
            lines::build(name, args, ctx, stdin)
        }
        "awk" | "gawk" | "mawk" => awk::build(args, ctx, stdin),
        "sed" => sed::build(args, ctx, stdin),
        "echo" | "printf" | "seq" | "yes" | "basename" | "dirname" | "xargs" | "sleep" | "true" | "false" => misc::build(name, args, ctx, stdin),
        _ => return None,
    };
    Some(r)
}

/// cat writing into a pipe: the filter form (it reads standard input too).
pub fn build_cat(args: &[String], ctx: &Ctx<'_>, stdin: Input) -> Result<Cmd, String> {
    lines::build("cat", args, ctx, stdin)
}

/// The text of a /proc file the model renders, if `path` is one.
pub fn proc_text(k: &Kernel, path: &str) -> Option<String> {
    match path {
        // The era's layout (2.4's starts with the "total: used: free:" table and has no
        // MemAvailable), as `cat` prints it.
        "/proc/meminfo" => super::procfiles::read(k, 0, path).ok(),
        "/proc/vmstat" => k.vmstat_text(),
        // PSI (4.20+), brought up to date by the runner before a command that names one.
        "/proc/pressure/cpu" | "/proc/pressure/memory" | "/proc/pressure/io" => k.pressure_shown(&path["/proc/pressure/".len()..]),
        // Files that depend on no reader (None where the era has no such file).
        "/proc/cpuinfo" | "/proc/buddyinfo" | "/proc/pagetypeinfo" => super::procfiles::read(k, 0, path).ok(),
        p if p.starts_with("/proc/sys/") => {
            let name = p["/proc/sys/".len()..].replace('/', ".");
            // A key the era did not have is a missing file (vm.dirty_ratio on 2.4).
            k.sysctl.get(&name).ok().filter(|_| super::sysctl::era_has_key(k.machine.kernel, &name)).map(|v| format!("{v}\n"))
        }
        _ => None,
    }
}

/// Whether `path` names a /proc or /sys file the model renders for this era (the files of
/// `procfiles`, which `cat` reads, those of `proc_text`, and the cgroup files).
pub fn is_proc_file(k: &Kernel, path: &str) -> bool {
    if super::cgroup::is_cgroup_path(path) {
        // A memory cgroup's files (memory.stat, memory.current, ...), as `cat` reads them.
        return k.cgroup_read(path).is_ok();
    }
    proc_text(k, path).is_some()
        || ((path.starts_with("/proc/") || path.starts_with("/sys/")) && super::procfiles::check(path, Some(k.machine.kernel)).is_ok())
}

/// The text of a /proc or /sys file as the task `me` reads it (`/proc/self` is the reader);
/// `None` when the file does not exist (for this era, or no such PID).
pub fn proc_text_as(k: &Kernel, me: Option<TaskId>, path: &str) -> Option<String> {
    if super::cgroup::is_cgroup_path(path) {
        return k.cgroup_read(path).ok();
    }
    if let Some(t) = proc_text(k, path) {
        return Some(t);
    }
    if !is_proc_file(k, path) || (path.starts_with("/proc/self/") && me.is_none()) {
        return None;
    }
    super::procfiles::read(k, me.unwrap_or(0), path).ok()
}

/// Whether a redirection may write to a /proc or /sys file: the sysctls under /proc/sys
/// are writable (then `echo VALUE >` sets them); other /proc files the model shows are
/// read-only (open fails with EACCES as bash reports it: "Permission denied"); anything
/// else does not exist there (ENOENT).
pub fn special_write_check(abs: &str) -> Result<(), String> {
    if abs.starts_with("/proc/sys/") {
        return Ok(());
    }
    if abs.starts_with("/sys/") {
        return Err("No such file or directory".into());
    }
    const READ_ONLY: &[&str] = &["/proc/meminfo", "/proc/vmstat", "/proc/loadavg", "/proc/stat", "/proc/uptime", "/proc/swaps", "/proc/zoneinfo", "/proc/buddyinfo", "/proc/pagetypeinfo", "/proc/diskstats", "/proc/pressure/memory", "/proc/slabinfo", "/proc/cpuinfo", "/proc/version", "/proc/mounts", "/proc/kmsg"];
    if READ_ONLY.contains(&abs) || abs == "/proc" || abs.starts_with("/proc/self/") || abs.split('/').nth(2).is_some_and(|p| p.chars().all(|c| c.is_ascii_digit())) {
        return Err("Permission denied".into());
    }
    Err("No such file or directory".into())
}

// ---- Reading input ------------------------------------------------------------------------

/// One operand to read.
enum Src {
    Stdin(Input),
    /// Text and the bytes read; the operand's name as given, if it is a file's.
    Text(Vec<u8>, usize, Option<String>),
    /// (path as given, absolute path, text if a redirection wrote it, open fd, bytes read)
    File { given: String, abs: String, text: Option<u32>, fd: Option<usize>, pos: usize },
    Missing(String),
    /// A /proc or /sys file the model renders, read when the tool reaches it (so that
    /// /proc/self is the reading tool and the figures are those of that instant).
    Proc { given: String, abs: String },
}

/// A chunk of input.
pub enum Chunk {
    Data(Vec<u8>),
    /// The current operand ended (the next one follows); `Eof` when all did.
    EndOfOperand,
    Eof,
    Wait(Step),
    /// An operand could not be read: the tool's message (without the tool name).
    Error(String),
}

/// Reads the operands (or standard input) in turn.
pub struct Reader {
    srcs: Vec<Src>,
    cur: usize,
    /// A read returned data and a sleep (the I/O it waited for): taken before reading on.
    pub pending_wait: Option<Step>,
}

/// Largest piece read at once (a pipe holds 64 KiB; coreutils read 128 KiB).
const CHUNK: u64 = 64 * 1024;

impl Reader {
    /// `operands` as written ("-" is standard input); none means standard input.
    pub fn new(operands: &[String], ctx: &Ctx<'_>, stdin: Input) -> Reader {
        let mut srcs = Vec::new();
        if operands.is_empty() {
            srcs.push(Src::Stdin(stdin.clone()));
        }
        for o in operands {
            if o == "-" {
                srcs.push(Src::Stdin(stdin.clone()));
                continue;
            }
            let abs = memtwin_kernel::fs::normalize(ctx.cwd, o);
            if ctx.k.is_some_and(|k| is_proc_file(k, &abs)) {
                srcs.push(Src::Proc { given: o.clone(), abs });
            } else if abs.starts_with("/proc/") || abs.starts_with("/sys/") {
                srcs.push(Src::Missing(o.clone()));
            } else {
                srcs.push(Src::File { given: o.clone(), abs: abs.clone(), text: ctx.captures.get(&abs).copied(), fd: None, pos: 0 });
            }
        }
        Reader { srcs, cur: 0, pending_wait: None }
    }

    /// The name of the operand that just ended (after `Chunk::EndOfOperand`).
    pub fn prev_name(&self) -> Option<&str> {
        match self.srcs.get(self.cur.checked_sub(1)?)? {
            Src::File { given, .. } => Some(given),
            Src::Text(_, _, Some(given)) => Some(given),
            _ => None,
        }
    }

    /// Stop reading the current operand; `true` if it was the last.
    pub fn skip_operand(&mut self, k: &mut Kernel, me: TaskId) -> bool {
        if let Some(Src::File { fd: Some(f), .. }) = self.srcs.get_mut(self.cur) {
            let _ = k.sys_close(me, *f);
        }
        self.cur += 1;
        self.cur >= self.srcs.len()
    }

    /// Number of operands.
    pub fn operands(&self) -> usize {
        self.srcs.len()
    }

    /// Whether the operand being read is given by name (for `grep`'s file prefixes).
    pub fn current_name(&self) -> Option<&str> {
        match self.srcs.get(self.cur)? {
            Src::File { given, .. } => Some(given),
            Src::Missing(g) => Some(g),
            Src::Proc { given, .. } => Some(given),
            Src::Text(_, _, Some(given)) => Some(given),
            _ => None,
        }
    }

    pub fn next(&mut self, k: &mut Kernel, me: TaskId) -> Chunk {
        let Some(src) = self.srcs.get_mut(self.cur) else { return Chunk::Eof };
        match src {
            Src::Missing(g) => {
                let m = format!("{g}: No such file or directory");
                self.cur += 1;
                Chunk::Error(m)
            }
            Src::Proc { given, abs } => match proc_text_as(k, Some(me), abs) {
                Some(t) => {
                    *src = Src::Text(t.into_bytes(), 0, Some(std::mem::take(given)));
                    self.next(k, me)
                }
                None => {
                    let m = format!("{given}: No such file or directory");
                    self.cur += 1;
                    Chunk::Error(m)
                }
            },
            Src::Text(t, pos, _) => {
                if *pos >= t.len() {
                    self.cur += 1;
                    return Chunk::EndOfOperand;
                }
                let end = (*pos + CHUNK as usize).min(t.len());
                let d = t[*pos..end].to_vec();
                *pos = end;
                Chunk::Data(d)
            }
            Src::Stdin(inp) => match inp {
                Input::Tty => {
                    self.cur += 1;
                    Chunk::EndOfOperand
                }
                Input::Pipe => match k.stdin_read(me, CHUNK as usize) {
                    PipeRead::Data(d) => Chunk::Data(d),
                    PipeRead::Eof => {
                        self.cur += 1;
                        Chunk::EndOfOperand
                    }
                    PipeRead::Wait(s) => Chunk::Wait(s),
                },
                Input::Text(t) => {
                    let t = std::mem::take(t).into_bytes();
                    *src = Src::Text(t, 0, None);
                    self.next(k, me)
                }
                Input::Buffer(b) => {
                    let t = k.buffers[*b as usize].clone().into_bytes();
                    *src = Src::Text(t, 0, None);
                    self.next(k, me)
                }
                Input::File(p) => {
                    let abs = p.clone();
                    if let Some(t) = proc_text_as(k, Some(me), &abs) {
                        *src = Src::Text(t.into_bytes(), 0, None);
                    } else {
                        *src = Src::File { given: abs.clone(), abs, text: None, fd: None, pos: 0 };
                    }
                    self.next(k, me)
                }
            },
            Src::File { given, abs, text: Some(b), pos, .. } if abs.starts_with("/dev/fd/") => {
                // `<(...)`: the output the shell kept (a pipe in bash, not a file).
                let _ = given;
                let t = k.buffers[*b as usize].as_bytes();
                if *pos >= t.len() {
                    self.cur += 1;
                    return Chunk::EndOfOperand;
                }
                let end = (*pos + CHUNK as usize).min(t.len());
                let d = t[*pos..end].to_vec();
                *pos = end;
                Chunk::Data(d)
            }
            Src::File { given, abs, text, fd, pos } => {
                let f = match fd {
                    Some(f) => *f,
                    None => {
                        if k.fs.is_dir(abs) {
                            let m = format!("{given}: Is a directory");
                            self.cur += 1;
                            return Chunk::Error(m);
                        }
                        match k.sys_open(me, abs, OpenFlags { read: true, ..Default::default() }) {
                            Ok((f, _)) => {
                                *fd = Some(f);
                                f
                            }
                            Err(e) => {
                                let m = format!("{given}: {}", e.strerror());
                                self.cur += 1;
                                return Chunk::Error(m);
                            }
                        }
                    }
                };
                match k.sys_read(me, f, CHUNK) {
                    Ok(r) if r.bytes == 0 && r.wait.is_none() => {
                        let _ = k.sys_close(me, f);
                        self.cur += 1;
                        Chunk::EndOfOperand
                    }
                    Ok(r) => {
                        let n = r.bytes as usize;
                        let mut d = vec![0u8; n];
                        if let Some(b) = text {
                            let t = k.buffers[*b as usize].as_bytes();
                            let s = (*pos).min(t.len());
                            let e = (*pos + n).min(t.len());
                            d[..e - s].copy_from_slice(&t[s..e]);
                        }
                        *pos += n;
                        match r.wait {
                            // The data arrives when the read completes; hand it over now and
                            // sleep before the next read.
                            Some(w) if n == 0 => Chunk::Wait(w),
                            Some(w) => {
                                self.pending_wait = Some(w);
                                Chunk::Data(d)
                            }
                            None => Chunk::Data(d),
                        }
                    }
                    Err(e) => {
                        let m = format!("{given}: {}", e.strerror());
                        let _ = k.sys_close(me, f);
                        self.cur += 1;
                        Chunk::Error(m)
                    }
                }
            }
        }
    }
}

// ---- The program that runs a filter -------------------------------------------------------

/// A text tool's work on its input.
pub trait Filter {
    /// A piece of input; `false` stops reading (head has what it needs).
    fn data(&mut self, d: &[u8], out: &mut Vec<u8>) -> bool;
    /// Data of a new operand starts (head's `==> f <==` headers).
    fn begin_operand(&mut self, _name: Option<&str>, _out: &mut Vec<u8>) {}
    /// An operand ended (tools that report per file: wc, grep -c with several files).
    fn end_operand(&mut self, _name: Option<&str>, _out: &mut Vec<u8>) {}
    /// All input read (or reading stopped): the exit status.
    fn finish(&mut self, out: &mut Vec<u8>) -> i32;
    /// A run-time error to report on standard error (awk's), once.
    fn take_error(&mut self) -> Option<String> {
        None
    }
    /// User CPU per input byte: `true` for a per-character loop, `false` for a memchr scan.
    fn per_char(&self) -> bool {
        false
    }
}

pub struct FilterProg {
    tool: &'static str,
    reader: Reader,
    filter: Box<dyn Filter>,
    out: Vec<u8>,
    sent: usize,
    done: bool,
    status: i32,
    /// Status for unreadable operands (2 for grep, 1 for the others).
    error_status: i32,
    errors: bool,
    /// The operand whose data started (for `begin_operand`).
    begun: Option<usize>,
    /// Stopped reading early (head): the rest of the input is not read.
    stopped: bool,
    quiet_errors: bool,
}

impl FilterProg {
    pub fn new(tool: &'static str, reader: Reader, filter: Box<dyn Filter>) -> FilterProg {
        FilterProg { tool, reader, filter, out: Vec::new(), sent: 0, done: false, status: 0, error_status: 1, errors: false, begun: None, stopped: false, quiet_errors: false }
    }

    pub fn error_status(mut self, s: i32) -> FilterProg {
        self.error_status = s;
        self
    }

    /// `grep -s`: unreadable files give no message (the status still says so).
    pub fn quiet_errors(mut self) -> FilterProg {
        self.quiet_errors = true;
        self
    }
}

impl Program for FilterProg {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        // Output first: a full pipe stops the tool until the reader makes room.
        if self.sent < self.out.len() {
            let room = k.stdout_pipe_room(me);
            if room == 0 {
                return k.pipe_wait_room(me);
            }
            let n = room.min(self.out.len() - self.sent);
            let piece = self.out[self.sent..self.sent + n].to_vec();
            k.print_bytes(me, &piece);
            self.sent += n;
            if self.sent < self.out.len() {
                return k.pipe_wait_room(me);
            }
            self.out.clear();
            self.sent = 0;
        }
        if let Some(m) = self.filter.take_error() {
            k.eprint(me, &format!("{m}\n"));
        }
        if self.done {
            return Step::Exit(if self.errors && self.status == 0 { self.error_status } else { self.status });
        }
        if let Some(w) = self.reader.pending_wait.take() {
            return w;
        }
        match self.reader.next(k, me) {
            Chunk::Data(d) => {
                if self.begun != Some(self.reader.cur) {
                    self.begun = Some(self.reader.cur);
                    let name = self.reader.current_name().map(str::to_string);
                    self.filter.begin_operand(name.as_deref(), &mut self.out);
                }
                let per_char = self.filter.per_char();
                let cpu = &k.machine.cpu_model;
                let ns = if per_char { d.len() as u64 * cpu.stdio_char_ns } else { (d.len() as f64 / cpu.copy_bw * 1e9) as u64 };
                if !self.filter.data(&d, &mut self.out) {
                    // This operand is done (head -n): go on with the next one, if any.
                    if self.reader.skip_operand(k, me) {
                        self.status = self.filter.finish(&mut self.out);
                        self.done = true;
                        self.stopped = true;
                    }
                }
                Step::Cpu { user: ns.max(1_000), sys: 0 }
            }
            Chunk::EndOfOperand => {
                let name = self.reader.prev_name().map(str::to_string);
                self.filter.end_operand(name.as_deref(), &mut self.out);
                Step::Cpu { user: 1_000, sys: 0 }
            }
            Chunk::Eof => {
                self.status = self.filter.finish(&mut self.out);
                self.done = true;
                Step::Cpu { user: 1_000, sys: 0 }
            }
            Chunk::Wait(s) => s,
            Chunk::Error(m) => {
                if !self.quiet_errors {
                    k.eprint(me, &format!("{}: {m}\n", self.tool));
                }
                self.errors = true;
                Step::Cpu { user: 1_000, sys: 0 }
            }
        }
    }
}

// ---- Redirected output ---------------------------------------------------------------------

/// A command whose standard output is redirected to a file (`> f`, `>> f`): bash opens the
/// file (O_CREAT|O_TRUNC, or O_APPEND) before the command runs; the text the command
/// prints is written to it with write(2), through the page cache like any file data.
pub struct FileOut {
    inner: Option<Cmd>,
    path: String,
    append: bool,
    buf: Option<u32>,
    fd: Option<usize>,
    /// Bytes of the capture buffer already written to the file.
    seen: usize,
    unwritten: u64,
    exit: Option<i32>,
}

impl FileOut {
    pub fn new(inner: Cmd, path: String, append: bool, sink: Sink) -> FileOut {
        let buf = match sink {
            Sink::Buffer(b) => Some(b),
            _ => None,
        };
        FileOut { inner: Some(inner), path, append, buf, fd: None, seen: 0, unwritten: 0, exit: None }
    }

    fn flush(&mut self, k: &mut Kernel, me: TaskId) -> Result<Option<Step>, String> {
        let Some(fd) = self.fd else { return Ok(None) };
        while self.unwritten > 0 {
            match k.sys_write(me, fd, self.unwritten) {
                Ok(r) => {
                    self.unwritten -= r.bytes.min(self.unwritten);
                    if let Some(w) = r.wait {
                        return Ok(Some(w));
                    }
                    if r.bytes == 0 {
                        return Ok(Some(Step::Yield));
                    }
                }
                Err(e) => return Err(e.strerror().to_string()),
            }
        }
        Ok(None)
    }
}

impl Program for FileOut {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.fd.is_none() {
            let flags = OpenFlags { write: true, create: true, trunc: !self.append, append: self.append, ..Default::default() };
            match k.sys_open(me, &self.path, flags) {
                Ok((fd, wait)) => {
                    self.fd = Some(fd);
                    if let Some(b) = self.buf {
                        self.seen = k.buffers[b as usize].len();
                    }
                    if let Some(t) = wait {
                        return Step::SleepUntil { t, io: true };
                    }
                }
                Err(e) => {
                    // bash: the redirection fails and the command does not run.
                    k.tasks[me as usize].stderr = Sink::Terminal;
                    k.eprint(me, &format!("bash: {}: {}\n", self.path, e.strerror()));
                    return Step::Exit(1);
                }
            }
        }
        match self.flush(k, me) {
            Ok(Some(s)) => return s,
            Ok(None) => {}
            Err(m) => {
                let name = k.tasks[me as usize].comm.clone();
                k.eprint(me, &format!("{name}: write error: {m}\n"));
                self.exit = Some(1);
                self.inner = None;
            }
        }
        if let Some(code) = self.exit {
            if let Some(fd) = self.fd.take() {
                let _ = k.sys_close(me, fd);
            }
            return Step::Exit(code);
        }
        let Some(inner) = self.inner.as_mut() else { return Step::Exit(self.exit.unwrap_or(0)) };
        let s = inner.step(k, me);
        if let Some(b) = self.buf {
            let len = k.buffers[b as usize].len();
            if len > self.seen {
                self.unwritten += (len - self.seen) as u64;
            }
            self.seen = len;
        }
        match s {
            Step::Exit(code) => {
                self.exit = Some(code);
                self.inner = None;
                Step::Cpu { user: 0, sys: 1_000 }
            }
            other => other,
        }
    }

    fn killed(&mut self, k: &mut Kernel, me: TaskId) {
        if let Some(mut i) = self.inner.take() {
            i.killed(k, me);
        }
    }
}
