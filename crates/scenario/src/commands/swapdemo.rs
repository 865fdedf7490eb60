//! The `swapdemo` program of source document 003 (its constants as flags) and numactl's
//! `memhog`, which allocates memory, fills it and exits (or, with memtwin's `--active` /
//! `--every`, holds it and keeps touching part of it, like a browser or an editor).

use memtwin_kernel::fs::{normalize, OpenFlags};
use memtwin_kernel::mm::{Content, PAGE_SIZE};
use memtwin_engine::Rng;
use memtwin_kernel::{Kernel, Ns, Program, Step, TaskId, NS_PER_SEC};

const GIB: u64 = 1 << 30;
/// Pages one step processes at most (a task's run of hits is one batch).
const BATCH: u64 = 512;
/// User time per page visited: a cache-missing load with a TLB miss (~100 ns of DRAM
/// latency on a laptop of the era), plus the loop.
const ACCESS_NS: Ns = 110;
/// How many accesses ahead the host loads of the test loop are started.
const LOOKAHEAD: usize = 16;

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
    rng: Rng,
    /// The library pages of the accesses ahead, drawn from random() in order (the current
    /// one first, taken off once both its accesses are done), so that the host loads of
    /// later accesses can be started early: hints that change nothing.
    ahead: std::collections::VecDeque<u64>,
    /// Print each iteration's seconds to stderr (`--times`).
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
            rng: Rng::new(seed),
            ahead: std::collections::VecDeque::with_capacity(LOOKAHEAD + 1),
            times,
            iter_start: 0,
        })
    }

    /// glibc random() stands in as a stream from the program's srandom(--seed) and the
    /// run's seed (the kernel's Rng), so `--seed` of the run changes the pages picked.
    fn random(&mut self) -> u64 {
        self.rng.next_u64() >> 33
    }
}

impl Program for Swapdemo {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        match self.phase {
            Phase::Open => {
                self.rng = Rng::new(self.seed ^ k.rng.next_u64());
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
                    while self.ahead.len() <= LOOKAHEAD {
                        let r = (8 * self.random()) % self.lib_bytes;
                        self.ahead.push_back((r / PAGE_SIZE).min(lib_pages - 1));
                    }
                    // The way to the library's page-cache leaf, the leaf's slot and the frame
                    // record of accesses ahead; the data page's slot and frame likewise.
                    k.mm.prefetch_slot_parent(self.lib_m, self.ahead[LOOKAHEAD]);
                    k.mm.prefetch_slot(self.lib_m, self.ahead[LOOKAHEAD / 2]);
                    k.mm.prefetch_page(self.lib_m, self.ahead[LOOKAHEAD / 4]);
                    let d = base + self.pos;
                    if d + LOOKAHEAD as u64 / 4 < data_pages {
                        k.mm.prefetch_page(self.data_m, d + LOOKAHEAD as u64 / 4);
                    }
                    if let Err(s) = k.touch(me, self.lib_m, self.ahead[0], false) {
                        return s;
                    }
                    if d < data_pages {
                        if let Err(s) = k.touch(me, self.data_m, d, false) {
                            return s;
                        }
                    }
                    self.ahead.pop_front();
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

/// Per-page VmSize of a small C program besides its mapping (libc, libnuma, stack), kB.
const MEMHOG_BASE_KB: u64 = 2_600;
/// hog(): one '.' per UNIT of memset (numactl memhog.c, UNIT = 10 MiB).
const HOG_UNIT_PAGES: u64 = (10 << 20) / PAGE_SIZE;

/// numactl's memhog (`memhog [-rNUM] [-H] SIZE[kmg]`): mmap SIZE of private anonymous
/// memory, memset it to 0xff NUM times (default 1), printing a '.' per 10 MiB and a
/// newline per pass, and exit 0. memtwin extensions: `--comm NAME` (the task's name);
/// `--active FRACTION` and `--every SECONDS` make it an idle application instead, that
/// holds its memory after filling it and every SECONDS touches the first FRACTION of it
/// (and runs `--code SIZE` of the system's shared libraries) until it is killed.
pub struct Memhog {
    pages: u64,
    repeat: u64,
    pass: u64,
    dots: u64,
    hold: bool,
    mapped: bool,
    /// Pages of the system's shared libraries the program executes each round, and how far
    /// this round has got through them.
    code_pages: u64,
    code_pos: u64,
    active: f64,
    every: Ns,
    pos: u64,
    filled: bool,
    rng: Option<Rng>,
    next: Ns,
    round: u64,
}

const MEMHOG_USAGE: &str = "memhog [-rNUM] [-H] SIZE[kmg] [--comm NAME] [--active FRACTION] [--every SECONDS] [--code SIZE]";

impl Memhog {
    pub fn parse(args: &[String]) -> Result<(Memhog, String), String> {
        let usage = MEMHOG_USAGE;
        let mut code = 64u64 << 20;
        let mut size = None;
        let mut comm = "memhog".to_string();
        let mut active = None;
        let mut every = None;
        let mut repeat = 1u64;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--comm" => comm = it.next().cloned().ok_or(format!("memhog: --comm needs a name ({usage})"))?,
                "--active" => {
                    active = Some(it.next().and_then(|v| v.parse().ok()).filter(|v: &f64| (0.0..=1.0).contains(v)).ok_or(format!("memhog: --active needs a fraction 0..1 ({usage})"))?)
                }
                "--every" => {
                    every = Some(it.next().and_then(|v| v.parse().ok()).filter(|v: &f64| *v > 0.0).ok_or(format!("memhog: --every needs seconds ({usage})"))?)
                }
                "--code" => {
                    code = it.next().and_then(|v| super::parse_coreutils_size(v)).ok_or(format!("memhog: --code needs a size ({usage})"))?
                }
                // Transparent huge pages are not modelled: every mapping already uses 4 KiB
                // pages, which is what -H (madvise MADV_NOHUGEPAGE) asks for.
                "-H" => {}
                s if s.starts_with("-r") && size.is_none() => {
                    // atoi(): memhog -r takes its number attached (-r3).
                    repeat = s[2..].parse().map_err(|_| format!("memhog: -r needs a number attached, e.g. -r3 ({usage})"))?;
                }
                s if s.starts_with("-f") && size.is_none() => {
                    return Err(format!("memhog: -f (a mapping backed by a file) is not modelled ({usage})"));
                }
                s if s.starts_with('-') && size.is_none() => return Err(format!("memhog: unknown option '{s}' ({usage})")),
                s if size.is_none() => {
                    size = Some(super::parse_coreutils_size(s).ok_or(format!("memhog: invalid size '{s}' (e.g. 512M, 2G)"))?);
                }
                s => return Err(format!("memhog: NUMA policies are not modelled: unexpected argument '{s}' ({usage})")),
            }
        }
        let size = size.ok_or(format!("memhog: missing SIZE ({usage})"))?;
        let hold = active.is_some() || every.is_some();
        Ok((
            Memhog {
                pages: size.div_ceil(PAGE_SIZE),
                repeat,
                pass: 0,
                dots: 0,
                hold,
                mapped: false,
                code_pages: code / PAGE_SIZE,
                code_pos: 0,
                active: active.unwrap_or(0.1),
                every: (every.unwrap_or(1.0) * NS_PER_SEC as f64) as Ns,
                pos: 0,
                filled: false,
                rng: None,
                next: 0,
                round: 0,
            },
            comm,
        ))
    }

    /// numactl memhog: memset passes with a '.' per 10 MiB, then exit.
    fn hog(&mut self, k: &mut Kernel, me: TaskId, m: u32) -> Step {
        if self.pass >= self.repeat {
            return Step::Exit(0);
        }
        let set_ns = (PAGE_SIZE as f64 / k.machine.cpu_model.zero_bw * 1e9) as Ns;
        let end = (self.pos + BATCH).min(self.pages);
        while self.pos < end {
            if self.pos % HOG_UNIT_PAGES == 0 && self.dots <= self.pos / HOG_UNIT_PAGES {
                // putchar('.'); fflush(stdout) before each unit's memset.
                k.print(me, ".");
                self.dots += 1;
            }
            if let Err(s) = k.touch(me, m, self.pos, true) {
                return s;
            }
            k.charge_user(me, set_ns);
            self.pos += 1;
        }
        if self.pos >= self.pages {
            k.print(me, "\n");
            self.pass += 1;
            self.pos = 0;
            self.dots = 0;
        }
        Step::Cpu { user: 0, sys: 0 }
    }
}

impl Program for Memhog {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if !self.mapped {
            // mmap(MAP_PRIVATE|MAP_ANONYMOUS): the commit charge is checked here
            // (__vm_enough_memory); err("mmap") prints perror's line and exits 1.
            if !k.vm_account(me, self.pages) {
                k.eprint(me, "mmap: Cannot allocate memory\n");
                return Step::Exit(1);
            }
            self.mapped = true;
            let base = if self.hold { 200 * 1024 } else { MEMHOG_BASE_KB };
            k.tasks[me as usize].vm_kb = self.pages * 4 + base;
            self.rng = Some(k.rng.fork());
        }
        let m = k.anon_mapping(me);
        if !self.hold {
            return self.hog(k, me, m);
        }
        if !self.filled {
            let end = (self.pos + BATCH).min(self.pages);
            while self.pos < end {
                if let Err(s) = k.touch(me, m, self.pos, true) {
                    return s;
                }
                self.pos += 1;
            }
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
            let n = self.code_pages.min(k.mm.mappings[lib as usize].extent);
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
        let rng = self.rng.as_mut().expect("set when mapped");
        while self.pos < end {
            // A quarter of the touches write.
            let write = rng.below(4) == 0;
            if let Err(s) = k.touch(me, m, self.pos, write) {
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
