//! bonnie++ (Russell Coker's file-system benchmark), as seed 001 ran it:
//! `bonnie++ -d DIR [-s SIZE[:CHUNK]] [-r RAM] [-u USER] [-n N] [-m NAME] [-f] [-b] [-q]`.
//!
//! The tests and their I/O follow bonnie++'s source (bonnie++.cpp, bon_io.cpp, bon_file.cpp):
//! - Sequential output per character: putc() through stdio for the whole file; stdio hands
//!   the kernel one st_blksize (4 KiB) buffer per write(2). This is bonnie++ 1.03's test
//!   (1.96 and later write one byte per write(2) on a few MB instead); the user-space cost of
//!   each character is the machine's `cpu.stdio_char_ns`.
//! - Block output: write(2) of CHUNK (8 KiB) at a time into a new file.
//! - Rewrite: read a chunk, lseek back, write it.
//! - Sequential input per character (getc(), 4 KiB read(2) refills) and per block (read(2)).
//! - Random seeks: 5 processes share 8192 tickets; each reads a random chunk and rewrites
//!   every tenth; the rate is seeks over the time from the first start to the last finish.
//! - File creation (-n N, default 16): N x 1024 empty files created, stat()ed and deleted,
//!   in order and in random order.
//! The data is split in 1 GiB files (Bonnie.PID.000, .001, ...) as bonnie++ does; each file
//! is closed before its test's time is taken. %CP is the process's user + system CPU time
//! over the elapsed time; tests under 0.5 s print "+++++ +++". Reports use bonnie++ 1.97's
//! layout (with its Concurrency and Latency lines) and CSV line.
//!
//! `--min-time=SECONDS` is a memtwin extension standing for the patch seed 001's author
//! applied to bonnie++ for RAM disks (a 256 MB file is read in a tenth of a second there):
//! it lowers MinTime so that short tests still report their rate.

use memtwin_kernel::fs::{normalize, OpenFlags};
use memtwin_kernel::{Kernel, Ns, Program, Step, TaskId, NS_PER_MS, NS_PER_SEC};
use std::cell::RefCell;
use std::rc::Rc;

const VERSION: &str = "1.97";
/// Bytes in the sizes -s and -r take (bonnie++'s Unit).
const UNIT: u64 = 1 << 20;
const DEFAULT_CHUNK: u64 = 8192;
/// Each data file holds at most this many MB (IOFileSize).
const IO_FILE_MB: u64 = 1024;
/// The default data size when RAM does not call for more (DefaultFileSize).
const DEFAULT_FILE_MB: u64 = 300;
/// Tests shorter than this are reported as "+++++" (MinTime).
const MIN_TIME: f64 = 0.5;
const SEEKS: u64 = 8192;
const SEEK_PROCS: u32 = 5;
/// Every UPDATE_SEEK-th seek of a process rewrites its block.
const UPDATE_SEEK: u64 = 10;
/// The seek test's pause before it hands out tickets.
const SEEK_START_DELAY: Ns = 3 * NS_PER_SEC;
/// stdio's buffer for the per-character tests: st_blksize of ext2/3/4 and tmpfs.
const STDIO_BUF: u64 = 4096;
/// Work done per scheduling step, so long tests stay interleaved with the flusher.
const STEP_BYTES: u64 = 64 * 1024;
/// Files per scheduling step in the creation tests.
const STEP_FILES: u64 = 256;

const USAGE: &str = "usage:\nbonnie++ [-d scratch-dir] [-c concurrency] [-s size(MiB)[:chunk-size(b)]]\n      [-n number-to-stat[:max-size[:min-size][:num-directories[:chunk-size]]]]\n      [-m machine-name] [-r ram-size-in-MiB]\n      [-x number-of-tests] [-u uid-to-use:gid-to-use] [-g gid-to-use]\n      [-q] [-f] [-b] [-p processes | -y] [-z seed | -Z random-file]\n      [-D]\n\nVersion: 1.97\n";

const SUPPORTED_OPTS: &str = "-d DIR, -s SIZE[:CHUNK], -r RAM-MiB, -u USER[:GROUP], -g GROUP, -n N, -m NAME, -x 1, -c 1, -f, -b, -q, --min-time=SECONDS";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Test {
    ByteWrite = 0,
    FastWrite,
    ReWrite,
    ByteRead,
    FastRead,
    Lseek,
    CreateSeq,
    StatSeq,
    DelSeq,
    CreateRand,
    StatRand,
    DelRand,
}
const TESTS: usize = 12;

#[derive(Clone, Copy, Debug, Default)]
struct Delta {
    elapsed: f64,
    cpu: f64,
    latency: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Start,
    Io(Test),
    SeekStart,
    SeekWait,
    Files(Test),
    Report,
}

/// One read(2) or write(2) in progress on file `file` of the data set.
#[derive(Clone, Copy, Debug)]
struct Xfer {
    file: usize,
    write: bool,
    left: u64,
}

/// What the seekers share with the parent: tickets and their reports.
#[derive(Default)]
struct SeekShared {
    tickets: u64,
    started: bool,
    /// (start, end, cpu ns, max latency) of each finished seeker.
    reports: Vec<(Ns, Ns, u64, Ns)>,
    failed: bool,
}

pub struct Bonnie {
    dir: String,
    size_mb: Option<u64>,
    chunk: u64,
    ram_mb: Option<u64>,
    user: Option<String>,
    dir_files: u64,
    machine: Option<String>,
    fast: bool,
    sync: bool,
    quiet: bool,
    /// MinTime: shorter tests report "+++++".
    min_time: f64,
    // run state
    stage: Stage,
    file_mb: u64,
    name: String,
    fds: Vec<usize>,
    chunk_i: u64,
    nchunks: u64,
    xfer: Option<Xfer>,
    /// Within a rewrite chunk: 0 = read next, 1 = write back.
    rewrite_half: u8,
    /// Per-character tests: bytes of the current stdio buffer still to hand to the kernel.
    t0: Ns,
    cpu0: u64,
    step_start: Ns,
    step_chunks: u64,
    latency: Ns,
    delta: [Delta; TESTS],
    opened: bool,
    seek: Option<Rc<RefCell<SeekShared>>>,
    seek_wake: Ns,
    files: Vec<String>,
    order: Vec<usize>,
    file_i: usize,
    seed: u64,
    status: i32,
}

fn cpu_of(k: &Kernel, me: TaskId) -> u64 {
    let t = &k.sched.tasks[me as usize];
    t.utime + t.stime
}

/// size_from_str: a number with an optional unit letter among `conv` (k = x1024 ...).
fn size_from_str(s: &str, conv: &str) -> Option<u64> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..digits].parse().ok()?;
    let rest = &s[digits..];
    if rest.is_empty() {
        return Some(n);
    }
    if rest.len() != 1 {
        return None;
    }
    let c = rest.chars().next()?.to_ascii_lowercase();
    let pos = conv.find(c)?;
    n.checked_mul(1u64 << (10 * (pos as u32 + 1)))
}

/// print_size: "300M", "1G"; chunk sizes "8k", "512".
fn print_size(size: u64, units: &[char]) -> String {
    let mut n = size;
    let mut ind = 0;
    if n == 0 {
        return format!("{}{}", n, units[0]).trim_end().to_string();
    }
    while n % 1024 == 0 && ind + 1 < units.len() {
        n /= 1024;
        ind += 1;
    }
    format!("{}{}", n, units[ind]).trim_end().to_string()
}

fn latency_str(secs: f64) -> String {
    if secs == 0.0 {
        String::new()
    } else if secs > 99.999999 {
        format!("{}s", secs as u64)
    } else if secs > 0.099999 {
        format!("{}ms", (secs * 1000.0) as u64)
    } else {
        format!("{}us", (secs * 1e6) as u64)
    }
}

impl Bonnie {
    pub fn parse(args: &[String], cwd: &str) -> Result<Bonnie, String> {
        let mut b = Bonnie {
            dir: cwd.to_string(),
            size_mb: None,
            chunk: DEFAULT_CHUNK,
            ram_mb: None,
            user: None,
            dir_files: 16,
            machine: None,
            fast: false,
            sync: false,
            quiet: false,
            min_time: MIN_TIME,
            stage: Stage::Start,
            file_mb: 0,
            name: String::new(),
            fds: Vec::new(),
            chunk_i: 0,
            nchunks: 0,
            xfer: None,
            rewrite_half: 0,
            t0: 0,
            cpu0: 0,
            step_start: 0,
            step_chunks: 0,
            latency: 0,
            delta: [Delta::default(); TESTS],
            opened: false,
            seek: None,
            seek_wake: 0,
            files: Vec::new(),
            order: Vec::new(),
            file_i: 0,
            seed: 0,
            status: 0,
        };
        let bad = |what: String| format!("bonnie++: {what} (supported: {SUPPORTED_OPTS})");
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            i += 1;
            if let Some(v) = a.strip_prefix("--min-time=") {
                b.min_time = v.trim().parse::<f64>().ok().filter(|t| t.is_finite() && *t >= 0.0).ok_or_else(|| bad(format!("invalid --min-time '{v}' (seconds, e.g. 0.01)")))?;
                continue;
            }
            if a.starts_with("--") {
                return Err(bad(format!("unsupported option '{a}'")));
            }
            let Some(opts) = a.strip_prefix('-').filter(|o| !o.is_empty()) else {
                return Err(bad(format!("unexpected argument '{a}'")));
            };
            let mut chars = opts.char_indices();
            while let Some((pos, c)) = chars.next() {
                match c {
                    'f' => b.fast = true,
                    'b' => b.sync = true,
                    'q' => b.quiet = true,
                    'd' | 's' | 'r' | 'u' | 'g' | 'n' | 'm' | 'x' | 'c' => {
                        // getopt: the argument is the rest of this word, or the next word.
                        let rest = &opts[pos + 1..];
                        let val = if !rest.is_empty() {
                            rest.to_string()
                        } else {
                            let v = args.get(i).ok_or_else(|| bad(format!("option -{c} needs an argument")))?;
                            i += 1;
                            v.clone()
                        };
                        b.option(c, &val, cwd).map_err(bad)?;
                        break;
                    }
                    _ => return Err(bad(format!("unsupported option '-{c}'"))),
                }
                let _ = &mut chars;
            }
        }
        Ok(b)
    }

    fn option(&mut self, c: char, v: &str, cwd: &str) -> Result<(), String> {
        match c {
            'd' => self.dir = normalize(cwd, v),
            's' => {
                let (size, chunk) = match v.split_once(':') {
                    Some((s, ch)) => (s, Some(ch)),
                    None => (v, None),
                };
                let mb = size_from_str(size, "g").ok_or_else(|| format!("invalid size '-s {v}' (MiB, or with g: -s 256, -s 4g)"))?;
                self.size_mb = Some(mb);
                if let Some(ch) = chunk {
                    let n = size_from_str(ch, "k").ok_or_else(|| format!("invalid chunk size in '-s {v}'"))?;
                    if !(256..=UNIT).contains(&n) || !n.is_power_of_two() {
                        return Err(format!("chunk size {n} must be a power of two from 256 to 1048576"));
                    }
                    self.chunk = n;
                }
            }
            'r' => {
                self.ram_mb = Some(v.trim().parse::<u64>().map_err(|_| format!("invalid RAM size '-r {v}' (MiB)"))?)
            }
            'u' => self.user = Some(v.to_string()),
            'g' => {}
            'n' => {
                let num = v.split(':').next().unwrap_or("");
                if v.contains(':') {
                    return Err(format!("-n {v}: only the number of files (in units of 1024) is modelled, e.g. -n 16 or -n 0"));
                }
                self.dir_files = size_from_str(num, "").ok_or_else(|| format!("invalid file count '-n {v}'"))?;
            }
            'm' => self.machine = Some(v.to_string()),
            'x' => {
                if v.trim() != "1" {
                    return Err(format!("-x {v}: only one test run (-x 1) is modelled"));
                }
            }
            'c' => {
                if v.trim() != "1" {
                    return Err(format!("-c {v}: only concurrency 1 is modelled"));
                }
            }
            _ => unreachable!(),
        }
        Ok(())
    }

    fn progress(&self, k: &mut Kernel, me: TaskId, text: &str) {
        if !self.quiet {
            k.eprint(me, text);
        }
    }

    fn fail(&mut self, k: &mut Kernel, me: TaskId, msg: &str) -> Step {
        k.eprint(me, msg);
        self.close_all(k, me);
        self.remove_files(k, me);
        Step::Exit(1)
    }

    fn usage_exit(&mut self, k: &mut Kernel, me: TaskId, msg: &str) -> Step {
        k.eprint(me, &format!("{msg}{USAGE}"));
        Step::Exit(1)
    }

    fn data_file(&self, i: usize) -> String {
        format!("{}.{:03}", self.name, i)
    }

    fn num_files(&self) -> usize {
        self.file_mb.div_ceil(IO_FILE_MB).max(1) as usize
    }

    fn chunks_per_file(&self) -> u64 {
        IO_FILE_MB * UNIT / self.chunk
    }

    fn open_all(&mut self, k: &mut Kernel, me: TaskId, create: bool) -> Result<Option<Step>, String> {
        let mut wait = None;
        for i in 0..self.num_files() {
            let path = self.data_file(i);
            let flags = OpenFlags { read: true, write: true, create, trunc: create, ..Default::default() };
            match k.sys_open(me, &path, flags) {
                Ok((fd, w)) => {
                    self.fds.push(fd);
                    if let Some(t) = w {
                        wait = Some(Step::SleepUntil { t, io: true });
                    }
                }
                Err(e) => return Err(format!("Can't open file {path}: {}\n", e.strerror())),
            }
        }
        Ok(wait)
    }

    /// close() of every data file; with -b each is fsync()ed first.
    fn close_all(&mut self, k: &mut Kernel, me: TaskId) -> Option<Step> {
        let mut waits = Vec::new();
        for fd in std::mem::take(&mut self.fds) {
            if self.sync {
                if let Ok(Some(w)) = k.sys_fsync(me, fd) {
                    waits.push(w);
                }
            }
            let _ = k.sys_close(me, fd);
        }
        memtwin_kernel::wait::Wait::all_of(waits, k.block.submitted)
    }

    fn remove_files(&mut self, k: &mut Kernel, me: TaskId) {
        if self.name.is_empty() {
            return;
        }
        for i in 0..self.num_files() {
            let _ = k.sys_unlink(me, &self.data_file(i));
        }
    }

    fn seek_to(&self, k: &mut Kernel, me: TaskId, chunk: u64) {
        let per = self.chunks_per_file();
        let file = (chunk / per) as usize;
        if let Some(Ok(f)) = self.fds.get(file).map(|&fd| k.file_mut(me, fd)) {
            f.pos = (chunk % per) * self.chunk;
        }
    }

    /// Carry on with the read(2) or write(2) in progress. Ok(None): it is complete.
    fn pump(&mut self, k: &mut Kernel, me: TaskId) -> Result<Option<Step>, String> {
        while let Some(x) = self.xfer {
            if x.left == 0 {
                self.xfer = None;
                break;
            }
            let fd = self.fds[x.file];
            let r = if x.write { k.sys_write(me, fd, x.left) } else { k.sys_read(me, fd, x.left) };
            match r {
                Ok(p) => {
                    if !x.write && p.bytes == 0 && p.wait.is_none() {
                        return Err(format!("Can't read a full block, only got {} bytes.\n", self.chunk - x.left));
                    }
                    self.xfer = Some(Xfer { left: x.left - p.bytes.min(x.left), ..x });
                    if let Some(w) = p.wait {
                        return Ok(Some(w));
                    }
                }
                Err(e) => {
                    let what = if x.write { "write(2)" } else { "read(2)" };
                    return Err(format!("{what}: {}\n", e.strerror()));
                }
            }
        }
        Ok(None)
    }

    fn start_test(&mut self, k: &Kernel, me: TaskId) {
        self.t0 = k.now;
        self.cpu0 = cpu_of(k, me);
        self.latency = 0;
        self.chunk_i = 0;
        self.rewrite_half = 0;
        self.opened = false;
        self.step_start = k.now;
        self.step_chunks = 0;
    }

    fn stop_test(&mut self, k: &Kernel, me: TaskId, t: Test) {
        let d = &mut self.delta[t as usize];
        d.elapsed = (k.now - self.t0) as f64 / NS_PER_SEC as f64;
        d.cpu = (cpu_of(k, me) - self.cpu0) as f64 / NS_PER_SEC as f64;
        d.latency = self.latency as f64 / NS_PER_SEC as f64;
    }

    /// Per-operation latency: how long the chunks finished since the last step took each.
    fn note_step(&mut self, k: &Kernel) {
        if self.step_chunks > 0 {
            let per = (k.now - self.step_start) / self.step_chunks;
            self.latency = self.latency.max(per);
        }
        self.step_start = k.now;
        self.step_chunks = 0;
    }

    fn next_io_test(&self, t: Test) -> Stage {
        match t {
            Test::ByteWrite => Stage::Io(Test::FastWrite),
            Test::FastWrite => Stage::Io(Test::ReWrite),
            Test::ReWrite if self.fast => Stage::Io(Test::FastRead),
            Test::ReWrite => Stage::Io(Test::ByteRead),
            Test::ByteRead => Stage::Io(Test::FastRead),
            _ => Stage::SeekStart,
        }
    }

    /// One step of a sequential I/O test.
    fn io_step(&mut self, k: &mut Kernel, me: TaskId, t: Test) -> Result<Step, String> {
        if !self.opened {
            let msg = match t {
                Test::ByteWrite => "Writing with putc()...",
                Test::FastWrite => "Writing intelligently...",
                Test::ReWrite => "Rewriting...",
                Test::ByteRead => "Reading with getc()...",
                _ => "Reading intelligently...",
            };
            self.progress(k, me, msg);
            self.start_test(k, me);
            self.opened = true;
            self.nchunks = self.file_mb * UNIT / self.chunk;
            let create = matches!(t, Test::ByteWrite | Test::FastWrite);
            if let Some(w) = self.open_all(k, me, create)? {
                return Ok(w);
            }
        }
        self.note_step(k);
        let per = self.chunks_per_file();
        let stdio = k.machine.cpu_model.stdio_char_ns;
        let mut done_bytes = 0;
        while self.chunk_i < self.nchunks && done_bytes < STEP_BYTES {
            if let Some(w) = self.pump(k, me)? {
                return Ok(w);
            }
            let file = (self.chunk_i / per) as usize;
            match t {
                Test::ByteWrite | Test::ByteRead => {
                    // A chunk of characters through stdio: the library's per-character work,
                    // and one st_blksize read(2)/write(2) each time its buffer fills/empties.
                    if self.rewrite_half == 0 {
                        k.charge_user(me, self.chunk * stdio);
                        self.rewrite_half = 1;
                        self.xfer = Some(Xfer { file, write: t == Test::ByteWrite, left: STDIO_BUF.min(self.chunk) });
                        continue;
                    }
                    let handed = (self.rewrite_half as u64) * STDIO_BUF;
                    if handed < self.chunk {
                        self.rewrite_half += 1;
                        self.xfer = Some(Xfer { file, write: t == Test::ByteWrite, left: STDIO_BUF.min(self.chunk - handed) });
                        continue;
                    }
                    self.rewrite_half = 0;
                }
                Test::FastWrite | Test::FastRead => {
                    if self.rewrite_half == 0 {
                        self.rewrite_half = 1;
                        self.xfer = Some(Xfer { file, write: t == Test::FastWrite, left: self.chunk });
                        continue;
                    }
                    self.rewrite_half = 0;
                }
                Test::ReWrite => match self.rewrite_half {
                    0 => {
                        self.rewrite_half = 1;
                        self.xfer = Some(Xfer { file, write: false, left: self.chunk });
                        continue;
                    }
                    1 => {
                        // Dirty one byte, seek back a chunk, write it.
                        k.charge_sys(me, k.machine.cpu_model.syscall_ns);
                        self.seek_to(k, me, self.chunk_i);
                        self.rewrite_half = 2;
                        self.xfer = Some(Xfer { file, write: true, left: self.chunk });
                        continue;
                    }
                    _ => self.rewrite_half = 0,
                },
                _ => unreachable!(),
            }
            if self.sync && matches!(t, Test::FastWrite | Test::ReWrite) {
                if let Ok(Some(w)) = k.sys_fsync(me, self.fds[file]) {
                    self.chunk_i += 1;
                    self.step_chunks += 1;
                    return Ok(w);
                }
            }
            self.chunk_i += 1;
            self.step_chunks += 1;
            done_bytes += self.chunk;
            if self.chunk_i % per == 0 && self.chunk_i < self.nchunks {
                // On to the next 1 GiB file, from its start.
                self.seek_to(k, me, self.chunk_i);
            }
        }
        if self.chunk_i < self.nchunks {
            return Ok(Step::Cpu { user: 0, sys: 0 });
        }
        if let Some(w) = self.pump(k, me)? {
            return Ok(w);
        }
        if !self.fds.is_empty() {
            // Close before taking the time, as bonnie++ does.
            if let Some(w) = self.close_all(k, me) {
                return Ok(w);
            }
            return Ok(Step::Cpu { user: 0, sys: 0 });
        }
        self.stop_test(k, me, t);
        self.progress(k, me, "done\n");
        self.opened = false;
        self.stage = self.next_io_test(t);
        Ok(Step::Cpu { user: 0, sys: 0 })
    }

    fn seek_step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        match self.stage {
            Stage::SeekStart => {
                let shared = Rc::new(RefCell::new(SeekShared { tickets: SEEKS, ..Default::default() }));
                for i in 0..SEEK_PROCS {
                    let s = Seeker {
                        shared: shared.clone(),
                        name: self.name.clone(),
                        nfiles: self.num_files(),
                        chunk: self.chunk,
                        per_file: self.chunks_per_file(),
                        nchunks: self.file_mb * UNIT / self.chunk,
                        sync: self.sync,
                        fds: Vec::new(),
                        count: 0,
                        start: None,
                        cpu0: 0,
                        latency: 0,
                        op_start: 0,
                        xfer: None,
                        update_pending: None,
                        synced: true,
                        op_done: false,
                    };
                    let cmd = k.tasks[me as usize].cmdline.clone();
                    let tid = k.spawn_task("bonnie++", &cmd, false, Some(me), Some(Box::new(s)));
                    let _ = i;
                    let _ = tid;
                }
                self.seek = Some(shared);
                self.stage = Stage::SeekWait;
                self.seek_wake = k.now + SEEK_START_DELAY;
                Step::SleepUntil { t: self.seek_wake, io: false }
            }
            _ => {
                let shared = self.seek.clone().expect("seekers started");
                if !shared.borrow().started {
                    shared.borrow_mut().started = true;
                    self.progress(k, me, "start 'em...");
                }
                let (nrep, failed) = {
                    let s = shared.borrow();
                    (s.reports.len() as u32, s.failed)
                };
                if failed {
                    return self.fail(k, me, "Can't read from pipe.\n");
                }
                if nrep < SEEK_PROCS {
                    return Step::SleepUntil { t: k.now + 10 * NS_PER_MS, io: false };
                }
                let s = shared.borrow();
                let first = s.reports.iter().map(|r| r.0).min().unwrap_or(k.now);
                let last = s.reports.iter().map(|r| r.1).max().unwrap_or(k.now);
                let cpu: u64 = s.reports.iter().map(|r| r.2).sum();
                let lat = s.reports.iter().map(|r| r.3).max().unwrap_or(0);
                drop(s);
                let d = &mut self.delta[Test::Lseek as usize];
                d.elapsed = (last - first) as f64 / NS_PER_SEC as f64;
                d.cpu = cpu as f64 / NS_PER_SEC as f64;
                d.latency = lat as f64 / NS_PER_SEC as f64;
                self.progress(k, me, &"done...".repeat(SEEK_PROCS as usize));
                self.progress(k, me, "\n");
                self.seek = None;
                self.remove_files(k, me);
                self.stage = if self.dir_files > 0 { Stage::Files(Test::CreateSeq) } else { Stage::Report };
                Step::Cpu { user: 0, sys: 0 }
            }
        }
    }

    /// The file creation tests: create, stat and delete N x 1024 empty files.
    fn files_step(&mut self, k: &mut Kernel, me: TaskId, t: Test) -> Step {
        let n = (self.dir_files * 1024) as usize;
        if !self.opened {
            let msg = match t {
                Test::CreateSeq => "Create files in sequential order...",
                Test::StatSeq => "Stat files in sequential order...",
                Test::DelSeq => "Delete files in sequential order...",
                Test::CreateRand => "Create files in random order...",
                Test::StatRand => "Stat files in random order...",
                _ => "Delete files in random order...",
            };
            self.progress(k, me, msg);
            if t == Test::CreateSeq || t == Test::CreateRand {
                // Names: seven digits of the file's number and up to 12 random characters.
                self.files = (0..n)
                    .map(|i| {
                        let extra = k.rng.below(13) as usize;
                        let tail: String = (0..extra).map(|_| (b'a' + k.rng.below(26) as u8) as char).collect();
                        format!("{}/{:07}{}", self.dir, i, tail)
                    })
                    .collect();
            }
            self.order = (0..n).collect();
            if matches!(t, Test::CreateRand | Test::StatRand | Test::DelRand) {
                for i in (1..n).rev() {
                    let j = k.rng.below(i as u64 + 1) as usize;
                    self.order.swap(i, j);
                }
            }
            self.file_i = 0;
            self.start_test(k, me);
            self.opened = true;
        }
        self.note_step(k);
        let mut done = 0;
        while self.file_i < n && done < STEP_FILES {
            let path = self.files[self.order[self.file_i]].clone();
            match t {
                Test::CreateSeq | Test::CreateRand => {
                    let flags = OpenFlags { write: true, create: true, ..Default::default() };
                    match k.sys_open(me, &path, flags) {
                        Ok((fd, _)) => {
                            let _ = k.sys_close(me, fd);
                        }
                        Err(e) => {
                            let m = format!("Can't create file {path}: {}\n", e.strerror());
                            return self.fail(k, me, &m);
                        }
                    }
                }
                Test::StatSeq | Test::StatRand => {
                    // stat(2): a system call and a path walk to the inode.
                    k.charge_sys(me, k.machine.cpu_model.syscall_ns + k.machine.cpu_model.page_cache_ns);
                    if k.sys_stat(&path).is_err() {
                        let m = format!("Can't stat file {path}\n");
                        return self.fail(k, me, &m);
                    }
                }
                _ => {
                    if let Err(e) = k.sys_unlink(me, &path) {
                        let m = format!("Can't delete file {path}: {}\n", e.strerror());
                        return self.fail(k, me, &m);
                    }
                }
            }
            self.file_i += 1;
            self.step_chunks += 1;
            done += 1;
        }
        if self.file_i < n {
            return Step::Cpu { user: 0, sys: 0 };
        }
        self.stop_test(k, me, t);
        self.progress(k, me, "done.\n");
        self.opened = false;
        self.stage = match t {
            Test::CreateSeq => Stage::Files(Test::StatSeq),
            Test::StatSeq => Stage::Files(Test::DelSeq),
            Test::DelSeq => Stage::Files(Test::CreateRand),
            Test::CreateRand => Stage::Files(Test::StatRand),
            Test::StatRand => Stage::Files(Test::DelRand),
            _ => Stage::Report,
        };
        Step::Cpu { user: 0, sys: 0 }
    }

    fn stat(&self, t: Test, size: f64, csv: bool) -> String {
        let d = self.delta[t as usize];
        let mut s = if d.elapsed == 0.0 {
            if csv { ",".into() } else { "      ".into() }
        } else if d.elapsed < self.min_time {
            if csv { ",+++++".into() } else { " +++++".into() }
        } else {
            let v = size / d.elapsed;
            match (t == Test::Lseek, csv) {
                (true, false) if v >= 1000.0 => format!(" {v:5.0}"),
                (true, false) => format!(" {v:5.1}"),
                (true, true) if v >= 1000.0 => format!(",{v:.0}"),
                (true, true) => format!(",{v:.1}"),
                (false, false) => format!(" {:5}", v as i64),
                (false, true) => format!(",{}", v as i64),
            }
        };
        s.push_str(&if d.elapsed == 0.0 {
            if csv { ",".into() } else { "    ".into() }
        } else if d.elapsed < self.min_time {
            if csv { ",+++".into() } else { " +++".into() }
        } else {
            let cpu = (d.cpu / d.elapsed * 100.0) as i64;
            if csv { format!(",{cpu}") } else { format!(" {cpu:3}") }
        });
        s
    }

    fn report(&self, k: &Kernel) -> (String, String) {
        let name = self.machine.clone().unwrap_or_else(|| k.machine.hostname.clone());
        let io_tests = [Test::ByteWrite, Test::FastWrite, Test::ReWrite, Test::ByteRead, Test::FastRead];
        let file_tests = [Test::CreateSeq, Test::StatSeq, Test::DelSeq, Test::CreateRand, Test::StatRand, Test::DelRand];
        let kb = (self.file_mb * 1024) as f64;
        let mut size_buf = print_size(self.file_mb, &['M', 'G']);
        if self.chunk != DEFAULT_CHUNK {
            size_buf = format!("{size_buf}:{}", print_size(self.chunk, &[' ', 'k', 'm']));
        }
        // Text report.
        let mut t = format!("Version {VERSION:>5}       ------Sequential Output------ --Sequential Input- --Random-\n");
        t.push_str("Concurrency   1     -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n");
        t.push_str(if self.chunk == DEFAULT_CHUNK { "Machine        Size " } else { "Machine   Size:chnk " });
        t.push_str("K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP\n");
        // The machine name cut to fit, then the size ending in column 19.
        let width = 19usize.saturating_sub(size_buf.len() + 1);
        let shown: String = name.chars().take(18.min(width)).collect();
        t.push_str(&format!("{shown:<width$} {size_buf}"));
        for test in io_tests {
            t.push_str(&self.stat(test, kb, false));
        }
        t.push_str(&self.stat(Test::Lseek, SEEKS as f64, false));
        t.push_str("\nLatency          ");
        for test in io_tests.iter().chain([Test::Lseek].iter()) {
            t.push_str(&format!(" {:>9}", latency_str(self.delta[*test as usize].latency)));
        }
        t.push('\n');
        if self.dir_files > 0 {
            t.push_str(&format!("Version {VERSION:>5}       ------Sequential Create------ --------Random Create--------\n"));
            t.push_str(&format!("{:<19.19} -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n", name));
            t.push_str("              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n");
            t.push_str(&format!("{:>19}", self.dir_files));
            for test in file_tests {
                t.push_str(&self.stat(test, (self.dir_files * 1024) as f64, false));
            }
            t.push_str("\nLatency          ");
            for test in file_tests {
                t.push_str(&format!(" {:>9}", latency_str(self.delta[test as usize].latency)));
            }
        }
        t.push('\n');
        // CSV line.
        let mut c = format!("{VERSION},{VERSION},{name},1,{},{}", self.seed, size_buf.replace(':', ","));
        if self.chunk == DEFAULT_CHUNK {
            c.push(',');
        }
        for test in io_tests {
            c.push_str(&self.stat(test, kb, true));
        }
        c.push_str(&self.stat(Test::Lseek, SEEKS as f64, true));
        if self.dir_files > 0 {
            c.push_str(&format!(",{},,,,", self.dir_files));
            for test in file_tests {
                c.push_str(&self.stat(test, (self.dir_files * 1024) as f64, true));
            }
        } else {
            c.push_str(",,,,,,,,,,,,,,,,,");
        }
        for i in 0..TESTS {
            c.push_str(&format!(",{}", latency_str(self.delta[i].latency)));
        }
        c.push('\n');
        (t, c)
    }
}

impl Program for Bonnie {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        loop {
            match self.stage {
                Stage::Start => {
                    // sysconf(_SC_PHYS_PAGES) * page size, in MiB: MemTotal.
                    let ram = self.ram_mb.unwrap_or(k.mm.managed * 4096 / UNIT);
                    let mut file = self.size_mb.unwrap_or(DEFAULT_FILE_MB);
                    if self.size_mb.is_none() && ram > 0 {
                        file = file.max(ram * 2);
                        if file % 1024 > 512 {
                            file = file + 1024 - file % 1024;
                        }
                    }
                    let Some(user) = self.user.clone() else {
                        return self.usage_exit(k, me, "You must use the \"-u\" switch when running as root.\n");
                    };
                    if !k.fs.is_dir(&self.dir) {
                        let m = format!("Can't change to directory \"{}\".\n", self.dir);
                        return self.usage_exit(k, me, &m);
                    }
                    if file == 0 && self.dir_files == 0 {
                        return self.usage_exit(k, me, "");
                    }
                    if file > 0 && ram > 0 && file < ram * 2 {
                        let m = format!("File size should be double RAM for good results, RAM is {ram}M.\n");
                        return self.usage_exit(k, me, &m);
                    }
                    let (uid, gid) = match user.split(':').next().unwrap_or("") {
                        "root" | "0" => (0, 0),
                        "nobody" => (99, 99),
                        _ => (500, 500),
                    };
                    if !self.quiet {
                        k.print(me, &format!("Using uid:{uid}, gid:{gid}.\n"));
                    }
                    self.file_mb = file;
                    self.name = format!("{}/Bonnie.{}", self.dir.trim_end_matches('/'), k.pid_of(me));
                    self.seed = (k.pid_of(me) as u64) ^ (k.rng.next_u64() & 0x7fff_ffff);
                    self.stage = if file == 0 {
                        Stage::Files(Test::CreateSeq)
                    } else if self.fast {
                        Stage::Io(Test::FastWrite)
                    } else {
                        Stage::Io(Test::ByteWrite)
                    };
                }
                Stage::Io(t) => {
                    return match self.io_step(k, me, t) {
                        Ok(s) => s,
                        Err(m) => self.fail(k, me, &m),
                    }
                }
                Stage::SeekStart | Stage::SeekWait => return self.seek_step(k, me),
                Stage::Files(t) => return self.files_step(k, me, t),
                Stage::Report => {
                    let (txt, csv) = self.report(k);
                    if self.quiet {
                        k.eprint(me, &txt);
                    } else {
                        k.print(me, &txt);
                    }
                    k.print(me, &csv);
                    return Step::Exit(self.status);
                }
            }
        }
    }

    fn killed(&mut self, k: &mut Kernel, me: TaskId) {
        self.close_all(k, me);
        self.remove_files(k, me);
    }
}

/// One of the seek test's child processes.
struct Seeker {
    shared: Rc<RefCell<SeekShared>>,
    name: String,
    nfiles: usize,
    chunk: u64,
    per_file: u64,
    nchunks: u64,
    sync: bool,
    fds: Vec<usize>,
    count: u64,
    start: Option<Ns>,
    cpu0: u64,
    latency: Ns,
    op_start: Ns,
    xfer: Option<Xfer>,
    /// The chunk to write back after the read (every UPDATE_SEEK-th seek).
    update_pending: Option<u64>,
    /// The last update has been fsync()ed (or needs no fsync).
    synced: bool,
    /// A seek finished in the last step; its latency is taken when the next step starts.
    op_done: bool,
}

impl Seeker {
    fn seek_to(&self, k: &mut Kernel, me: TaskId, chunk: u64) -> usize {
        let file = ((chunk / self.per_file) as usize).min(self.fds.len().saturating_sub(1));
        if let Ok(f) = k.file_mut(me, self.fds[file]) {
            f.pos = (chunk % self.per_file) * self.chunk;
        }
        k.charge_sys(me, k.machine.cpu_model.syscall_ns);
        file
    }

    fn finish(&mut self, k: &mut Kernel, me: TaskId, failed: bool) -> Step {
        for fd in std::mem::take(&mut self.fds) {
            let _ = k.sys_close(me, fd);
        }
        let mut s = self.shared.borrow_mut();
        if failed {
            s.failed = true;
        }
        let start = self.start.unwrap_or(k.now);
        s.reports.push((start, k.now, cpu_of(k, me) - self.cpu0, self.latency));
        Step::Exit(if failed { 1 } else { 0 })
    }
}

impl Program for Seeker {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.fds.is_empty() {
            for i in 0..self.nfiles {
                let path = format!("{}.{:03}", self.name, i);
                match k.sys_open(me, &path, OpenFlags { read: true, write: true, ..Default::default() }) {
                    Ok((fd, _)) => self.fds.push(fd),
                    Err(e) => {
                        k.eprint(me, &format!("Can't open file {path}: {}\n", e.strerror()));
                        return self.finish(k, me, true);
                    }
                }
            }
        }
        if !self.shared.borrow().started {
            // Blocked on the ticket pipe until the parent hands the tickets out.
            return Step::SleepUntil { t: k.now + 10 * NS_PER_MS, io: false };
        }
        if self.start.is_none() {
            self.start = Some(k.now);
            self.cpu0 = cpu_of(k, me);
        }
        if self.op_done {
            // The last seek's work has run: that is its latency.
            self.op_done = false;
            self.latency = self.latency.max(k.now - self.op_start);
            self.op_start = 0;
        }
        loop {
            // The read or write in progress.
            while let Some(x) = self.xfer {
                if x.left == 0 {
                    self.xfer = None;
                    break;
                }
                let fd = self.fds[x.file];
                let r = if x.write { k.sys_write(me, fd, x.left) } else { k.sys_read(me, fd, x.left) };
                match r {
                    Ok(p) => {
                        if !x.write && p.bytes == 0 && p.wait.is_none() {
                            k.eprint(me, "read in doseek: short read\n");
                            return self.finish(k, me, true);
                        }
                        self.xfer = Some(Xfer { left: x.left - p.bytes.min(x.left), ..x });
                        if let Some(w) = p.wait {
                            return w;
                        }
                    }
                    Err(e) => {
                        k.eprint(me, &format!("doseek: {}\n", e.strerror()));
                        return self.finish(k, me, true);
                    }
                }
            }
            if let Some(c) = self.update_pending.take() {
                // Touch a byte and write the block back where it came from (with -b,
                // fsync()ed at once).
                let file = self.seek_to(k, me, c);
                self.xfer = Some(Xfer { file, write: true, left: self.chunk });
                self.synced = !self.sync;
                continue;
            }
            if !self.synced {
                self.synced = true;
                let fd = self.fds[0];
                if let Ok(Some(w)) = k.sys_fsync(me, fd) {
                    return w;
                }
            }
            if self.op_start > 0 && !self.op_done {
                // One seek (and its update) done: let its CPU time pass.
                self.op_done = true;
                return Step::Cpu { user: 200, sys: 0 };
            }
            let ticket = {
                let mut s = self.shared.borrow_mut();
                if s.tickets > 0 {
                    s.tickets -= 1;
                    true
                } else {
                    false
                }
            };
            if !ticket {
                return self.finish(k, me, false);
            }
            let update = self.count % UPDATE_SEEK == 0;
            self.count += 1;
            let c = k.rng.below(self.nchunks.max(1));
            let file = self.seek_to(k, me, c);
            self.op_start = k.now.max(1);
            self.xfer = Some(Xfer { file, write: false, left: self.chunk });
            if update {
                self.update_pending = Some(c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options() {
        let b = Bonnie::parse(&a(&["-d", "/mnt/ram", "-s", "256", "-r", "128", "-u", "root"]), "/root").unwrap();
        assert_eq!((b.dir.as_str(), b.size_mb, b.ram_mb, b.dir_files), ("/mnt/ram", Some(256), Some(128), 16));
        let b = Bonnie::parse(&a(&["-d/tmp", "-s4g:16k", "-n0", "-fbq", "-uroot"]), "/root").unwrap();
        assert_eq!((b.size_mb, b.chunk, b.dir_files, b.fast, b.sync, b.quiet), (Some(4096), 16384, 0, true, true, true));
        for (bad, want) in [
            (vec!["-z", "1"], "unsupported option '-z'"),
            (vec!["-s", "lots"], "invalid size"),
            (vec!["-s", "256:1000"], "power of two"),
            (vec!["-n", "16:100:10"], "only the number of files"),
            (vec!["-x", "3"], "-x 3"),
            (vec!["-d"], "needs an argument"),
            (vec!["extra"], "unexpected argument"),
            (vec!["--min-time=x"], "invalid --min-time"),
            (vec!["--fast"], "unsupported option '--fast'"),
        ] {
            let e = Bonnie::parse(&a(&bad), "/").err().unwrap_or_default();
            assert!(e.contains(want), "{bad:?}: {e}");
            assert!(e.contains("supported: -d DIR"), "{e}");
        }
    }

    #[test]
    fn sizes_print_like_bonnie() {
        assert_eq!(print_size(256, &['M', 'G']), "256M");
        assert_eq!(print_size(4096, &['M', 'G']), "4G");
        assert_eq!(print_size(8196, &['M', 'G']), "8196M");
        assert_eq!(print_size(16384, &[' ', 'k', 'm']), "16k");
        assert_eq!(print_size(512, &[' ', 'k', 'm']), "512");
        assert_eq!(latency_str(0.012279), "12279us");
        assert_eq!(latency_str(1.92), "1920ms");
        assert_eq!(latency_str(0.0), "");
        assert_eq!(size_from_str("4g", "g"), Some(4096));
        assert_eq!(size_from_str("16k", "k"), Some(16384));
    }
}
