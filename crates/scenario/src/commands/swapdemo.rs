//! The `swapdemo` program of source document 003 (its constants as flags) and `memhog`, a
//! process that holds anonymous memory and keeps touching it (a browser, an editor).

use memtwin_kernel::fs::{normalize, OpenFlags};
use memtwin_kernel::mm::{Content, PAGE_SIZE};
use memtwin_kernel::{Kernel, Ns, Program, Step, TaskId, NS_PER_SEC};

const GIB: u64 = 1 << 30;
/// Pages one step processes at most (a task's run of hits is one batch).
const BATCH: u64 = 512;
/// User time per page visited: a cache-missing load with a TLB miss (~100 ns of DRAM
/// latency on a laptop of the era), plus the loop.
const ACCESS_NS: Ns = 110;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Open,
    Memset,
    Test,
    Done,
}

pub struct Swapdemo {
    lib_path: String,
    lib_bytes: u64,
    data_bytes: u64,
    chunk_bytes: u64,
    chunks: u64,
    fill: Content,
    seed: u64,
    phase: Phase,
    lib_m: u32,
    data_m: u32,
    pos: u64,
    chunk: u64,
    rng: u64,
    pending_lib: Option<u64>,
    /// Print each iteration's seconds to stderr (`--times`, as the kernel-lab swapdemo does).
    times: bool,
    iter_start: Ns,
}

const USAGE: &str = "swapdemo [--mem-gb N] [--lib-gb N] [--data-gb N] [--chunk-gb N] [--fill zero|text|random] [--seed N] [--library PATH] [--times]";

impl Swapdemo {
    pub fn parse(args: &[String], cwd: &str) -> Result<Swapdemo, String> {
        let mut mem_gb = 16u64;
        let mut lib_gb = 3u64;
        let mut data_gb: Option<u64> = None;
        let mut chunk_gb = 1u64;
        let mut fill = Content::Zero;
        let mut seed = 256u64;
        let mut lib = "library.bin".to_string();
        let mut times = false;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut val = |name: &str| -> Result<String, String> {
                it.next().cloned().ok_or_else(|| format!("swapdemo: {name} needs a value ({USAGE})"))
            };
            let num = |name: &str, v: String| -> Result<u64, String> {
                v.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(|| format!("swapdemo: {name}: '{v}' is not a positive whole number"))
            };
            match a.as_str() {
                "--mem-gb" => mem_gb = num(a, val(a)?)?,
                "--lib-gb" => lib_gb = num(a, val(a)?)?,
                "--data-gb" => data_gb = Some(num(a, val(a)?)?),
                "--chunk-gb" => chunk_gb = num(a, val(a)?)?,
                "--seed" => seed = num(a, val(a)?)?,
                "--library" => lib = val(a)?,
                "--times" => times = true,
                "--fill" => {
                    fill = match val(a)?.as_str() {
                        "zero" => Content::Zero,
                        "text" => Content::Text,
                        "random" => Content::Random,
                        v => return Err(format!("swapdemo: --fill '{v}' (accepted: zero, text, random)")),
                    }
                }
                _ => return Err(format!("swapdemo: unknown option '{a}' (usage: {USAGE})")),
            }
        }
        // The article: DATA_GBYTES = MEM_SIZE - 2, chunk_count = (DATA_GBYTES - 3) GiB / chunk.
        let data_gb = data_gb.unwrap_or(mem_gb.saturating_sub(2)).max(1);
        let chunks = (data_gb.saturating_sub(3) * GIB / (chunk_gb * GIB)).max(1);
        Ok(Swapdemo {
            lib_path: normalize(cwd, &lib),
            lib_bytes: lib_gb * GIB,
            data_bytes: data_gb * GIB,
            chunk_bytes: chunk_gb * GIB,
            chunks,
            fill,
            seed,
            phase: Phase::Open,
            lib_m: 0,
            data_m: 0,
            pos: 0,
            chunk: 0,
            rng: seed,
            pending_lib: None,
            times,
            iter_start: 0,
        })
    }

    /// glibc random() stands in as a xorshift stream seeded like srandom(256).
    fn random(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng >> 33
    }
}

impl Program for Swapdemo {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        match self.phase {
            Phase::Open => {
                let _ = self.seed;
                let fd = match k.sys_open(me, &self.lib_path, OpenFlags { read: true, ..Default::default() }) {
                    Ok((fd, _)) => fd,
                    Err(_) => {
                        k.print(me, &format!("Required library.bin of size {}\n", self.lib_bytes));
                        return Step::Exit(1);
                    }
                };
                let Some(m) = k.file_mapping(me, fd) else { return Step::Exit(1) };
                let lib_pages = self.lib_bytes / PAGE_SIZE;
                k.map_file(me, m, lib_pages, false);
                self.lib_m = m;
                self.data_m = k.map_shared_anon(me, self.data_bytes / PAGE_SIZE, self.fill);
                k.print(me, "Preparing test ...\n");
                self.phase = Phase::Memset;
                self.pos = 0;
                Step::Cpu { user: 1_000, sys: 10_000 }
            }
            Phase::Memset => {
                let pages = self.data_bytes / PAGE_SIZE;
                let end = (self.pos + BATCH).min(pages);
                let set_ns = (PAGE_SIZE as f64 / k.machine.cpu_model.zero_bw * 1e9) as Ns;
                while self.pos < end {
                    if let Err(s) = k.touch(me, self.data_m, self.pos, true) {
                        return s;
                    }
                    k.charge_user(me, set_ns);
                    self.pos += 1;
                }
                if self.pos >= pages {
                    k.print(me, "Doing test ...\n");
                    self.phase = Phase::Test;
                    self.pos = 0;
                    self.chunk = 0;
                    k.print(me, &format!("Iteration {} of {}\n", 1, self.chunks));
                    self.iter_start = k.now;
                }
                Step::Cpu { user: 0, sys: 0 }
            }
            Phase::Test => {
                // random_read(libptr, dataptr + chunk * chunk_size, libsize): one data page
                // and one random library byte per 4 KiB of the library's size.
                let steps = self.lib_bytes / PAGE_SIZE;
                let data_pages = self.data_bytes / PAGE_SIZE;
                let lib_pages = self.lib_bytes / PAGE_SIZE;
                let base = self.chunk * self.chunk_bytes / PAGE_SIZE;
                let end = (self.pos + BATCH).min(steps);
                while self.pos < end {
                    let lib_page = match self.pending_lib {
                        Some(p) => p,
                        None => {
                            let r = (8 * self.random()) % self.lib_bytes;
                            r / PAGE_SIZE
                        }
                    };
                    if let Err(s) = k.touch(me, self.lib_m, lib_page.min(lib_pages - 1), false) {
                        self.pending_lib = Some(lib_page);
                        return s;
                    }
                    self.pending_lib = Some(lib_page);
                    let d = base + self.pos;
                    if d < data_pages {
                        if let Err(s) = k.touch(me, self.data_m, d, false) {
                            return s;
                        }
                    }
                    self.pending_lib = None;
                    k.charge_user(me, ACCESS_NS * 2);
                    self.pos += 1;
                }
                if self.pos >= steps {
                    if self.times {
                        let s = (k.now - self.iter_start) as f64 / NS_PER_SEC as f64;
                        k.eprint(me, &format!("iter {}/{} s={s:.3}\n", self.chunk + 1, self.chunks));
                    }
                    self.iter_start = k.now;
                    self.chunk += 1;
                    self.pos = 0;
                    if self.chunk >= self.chunks {
                        self.phase = Phase::Done;
                    } else {
                        k.print(me, &format!("Iteration {} of {}\n", self.chunk + 1, self.chunks));
                    }
                }
                Step::Cpu { user: 0, sys: 0 }
            }
            Phase::Done => Step::Exit(0),
        }
    }
}

/// memhog: holds SIZE of anonymous memory and touches a part of it now and then, like an
/// idle browser or editor (`memhog SIZE [--comm NAME] [--active FRACTION] [--every S]`).
pub struct Memhog {
    pages: u64,
    /// Pages of the system's shared libraries the program executes each round, and how far
    /// this round has got through them.
    code_pages: u64,
    code_pos: u64,
    active: f64,
    every: Ns,
    pos: u64,
    filled: bool,
    rng: u64,
    next: Ns,
    round: u64,
}

impl Memhog {
    pub fn parse(args: &[String]) -> Result<(Memhog, String), String> {
        let usage = "memhog SIZE [--comm NAME] [--active FRACTION] [--every SECONDS] [--code SIZE]";
        let mut code = 64u64 << 20;
        let mut size = None;
        let mut comm = "memhog".to_string();
        let mut active = 0.1;
        let mut every = 1.0;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--comm" => comm = it.next().cloned().ok_or(format!("memhog: --comm needs a name ({usage})"))?,
                "--active" => {
                    active = it.next().and_then(|v| v.parse().ok()).filter(|v: &f64| (0.0..=1.0).contains(v)).ok_or(format!("memhog: --active needs a fraction 0..1 ({usage})"))?
                }
                "--every" => {
                    every = it.next().and_then(|v| v.parse().ok()).filter(|v: &f64| *v > 0.0).ok_or(format!("memhog: --every needs seconds ({usage})"))?
                }
                "--code" => {
                    code = it.next().and_then(|v| super::parse_coreutils_size(v)).ok_or(format!("memhog: --code needs a size ({usage})"))?
                }
                s if size.is_none() => {
                    size = Some(super::parse_coreutils_size(s).ok_or(format!("memhog: invalid size '{s}' (e.g. 512M, 2G)"))?);
                }
                s => return Err(format!("memhog: unexpected argument '{s}' ({usage})")),
            }
        }
        let size = size.ok_or(format!("memhog: missing SIZE ({usage})"))?;
        Ok((
            Memhog { pages: size.div_ceil(PAGE_SIZE), code_pages: code / PAGE_SIZE, code_pos: 0, active, every: (every * NS_PER_SEC as f64) as Ns, pos: 0, filled: false, rng: 0x9e37_79b9, next: 0, round: 0 },
            comm,
        ))
    }
}

impl Program for Memhog {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let m = k.anon_mapping(me);
        if !self.filled {
            let end = (self.pos + BATCH).min(self.pages);
            while self.pos < end {
                if let Err(s) = k.touch(me, m, self.pos, true) {
                    return s;
                }
                self.pos += 1;
            }
            k.tasks[me as usize].vm_kb = self.pages * 4 + 200 * 1024;
            if self.pos >= self.pages {
                self.filled = true;
                self.pos = 0;
                self.next = k.now + self.every;
            }
            return Step::Cpu { user: 0, sys: 0 };
        }
        if k.now < self.next {
            return Step::SleepUntil { t: self.next, io: false };
        }
        // Run: execute its code in the system's shared libraries (mapped executable pages
        // stay young), then touch the working set, the first `active` fraction of its data.
        if let Some(lib) = k.system_libs {
            let n = self.code_pages.min(k.mm.mappings[lib as usize].slots.len() as u64);
            let end = (self.code_pos + BATCH).min(n);
            while self.code_pos < end {
                if let Err(s) = k.touch(me, lib, self.code_pos, false) {
                    return s;
                }
                k.charge_user(me, ACCESS_NS);
                self.code_pos += 1;
            }
            if self.code_pos < n {
                return Step::Cpu { user: 0, sys: 0 };
            }
        }
        let hot = ((self.pages as f64 * self.active) as u64).max(1);
        let end = (self.pos + BATCH).min(hot);
        while self.pos < end {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            if let Err(s) = k.touch(me, m, self.pos, self.rng % 4 == 0) {
                return s;
            }
            k.charge_user(me, ACCESS_NS);
            self.pos += 1;
        }
        if self.pos >= hot {
            self.pos = 0;
            self.code_pos = 0;
            self.round += 1;
            self.next = k.now + self.every;
        }
        Step::Cpu { user: 0, sys: 0 }
    }
}
