//! One fio job as a simulated task (backend.c's thread_main / do_io): it opens its file,
//! picks offsets (io_u.c get_next_offset, the random map and the zipf/pareto/normal
//! generators of lib/zipf.c and lib/gauss.c), issues reads and writes through the kernel
//! model's system calls and records each I/O's latencies from the simulated clock.
//!
//! Synchronous engines (psync, sync, pvsync) have one I/O outstanding: it is issued at the
//! start of a step and completes when the system call has returned, including the CPU work
//! it charged and any sleep it asked for. libaio and io_uring keep up to `iodepth` requests
//! outstanding, submitted one per system call and reaped one per io_getevents once the
//! queue is full (fio's defaults): an O_DIRECT request completes when the block layer does;
//! a buffered libaio request is carried out inside io_submit; an io_uring buffered read
//! waits for its page without the submitter (5.9+), and what io_uring cannot do without
//! blocking goes to io-wq workers (`iowq`).
//!
//! The mmap engine (engines/mmap.c) maps the job's region of the file MAP_SHARED, advised
//! MADV_RANDOM for random jobs and MADV_SEQUENTIAL for the others, and moves each block
//! with memcpy: every page the copy touches goes through the kernel model's fault path
//! (a major fault reads it in, a store to a clean page makes it writable and dirty), and
//! the copy itself is user time.

use super::iowq::{self, IoWq, Work};
use super::options::{Dist, Engine, FadviseHint, JobOpts, Rw};
use super::stats::{DepthMap, IoStat, LatDist, Plat};
use memtwin_engine::Rng;
use memtwin_kernel::fs::{Fadvice, IoProgress, OpenFlags, Target};
use memtwin_kernel::mm::{cost, Madvice};
use memtwin_kernel::wait::{Wait, WaitOn};
use memtwin_kernel::{Kernel, Ns, Program, Step, TaskId, NS_PER_MS};
use memtwin_machine::KernelProfile;
use std::cell::RefCell;
use std::rc::Rc;

/// bw_avg_time / iops_avg_time default: one bandwidth and IOPS sample per 500 ms.
const AVG_TIME: Ns = 500 * NS_PER_MS;
/// GOLDEN_RATIO_64 of fio's hash.h (__hash_u64), which scatters the hot blocks of the
/// skewed distributions over the file.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
/// zipf_update sums at most this many terms of zeta(n).
const ZIPF_MAX_GEN: u64 = 10_000_000;

/// Statistics of one direction (the per-ddir arrays of struct thread_stat).
#[derive(Clone, Default)]
pub struct DirStats {
    pub io_bytes: u64,
    pub total_ios: u64,
    pub slat: IoStat,
    pub clat: IoStat,
    pub lat: IoStat,
    pub clat_plat: Plat,
    /// Bandwidth samples in KiB/s and IOPS samples.
    pub bw: IoStat,
    pub iops: IoStat,
}

/// What a job reports (struct thread_stat).
#[derive(Clone, Default)]
pub struct JobStats {
    pub name: String,
    pub pid: u32,
    pub members: u32,
    pub error: i32,
    /// td->verror of the error, empty without one.
    pub verror: String,
    /// Trims issued (total_io_u[DDIR_TRIM]).
    pub trim_ios: u64,
    pub dirs: [DirStats; 2],
    pub sync: IoStat,
    pub sync_plat: Plat,
    pub lat_dist: LatDist,
    pub depth: DepthMap,
    pub submit: DepthMap,
    pub complete: DepthMap,
    pub total_submit: u64,
    pub total_complete: u64,
    /// Time the job ran after ramp_time, ns.
    pub runtime: Ns,
    pub usr_ns: u64,
    pub sys_ns: u64,
    pub ctx: u64,
    pub minf: u64,
    pub majf: u64,
    pub iodepth: u32,
}

impl JobStats {
    /// sum_thread_stats: group_reporting folds the jobs of a group into one.
    pub fn merge(&mut self, o: &JobStats) {
        for d in 0..2 {
            let (a, b) = (&mut self.dirs[d], &o.dirs[d]);
            a.io_bytes += b.io_bytes;
            a.total_ios += b.total_ios;
            a.slat.merge(&b.slat);
            a.clat.merge(&b.clat);
            a.lat.merge(&b.lat);
            a.clat_plat.merge(&b.clat_plat);
            a.bw.sum(&b.bw);
            a.iops.sum(&b.iops);
        }
        self.sync.merge(&o.sync);
        self.sync_plat.merge(&o.sync_plat);
        self.lat_dist.merge(&o.lat_dist);
        self.depth.merge(&o.depth);
        self.submit.merge(&o.submit);
        self.complete.merge(&o.complete);
        self.total_submit += o.total_submit;
        self.total_complete += o.total_complete;
        self.runtime = self.runtime.max(o.runtime);
        self.usr_ns += o.usr_ns;
        self.sys_ns += o.sys_ns;
        self.ctx += o.ctx;
        self.minf += o.minf;
        self.majf += o.majf;
        self.members += o.members;
        self.trim_ios += o.trim_ios;
        if self.error == 0 {
            self.error = o.error;
            self.verror = o.verror.clone();
        }
    }
}

/// What ends a job with an error: the line fio prints where it happens (io_u_log_error's,
/// or none), the errno (td->error), where td_verror recorded it (td->verror:
/// "file:SOURCE:LINE, func=FUNC, error=STRERROR" as fio 3.33 builds it), and the data
/// direction of a failed read or write, which fio counts as issued and completed.
#[derive(Clone, Debug)]
pub struct JobError {
    pub msg: String,
    pub errno: i32,
    pub verror: String,
    pub io: Option<usize>,
}

impl JobError {
    /// td_verror(td, e, func) at fio 3.33's `at` (source:line), with nothing printed then.
    pub fn verror(at: &str, func: &str, e: memtwin_kernel::fs::Errno) -> JobError {
        JobError { msg: String::new(), errno: e.code(), verror: format!("file:{at}, func={func}, error={}", e.strerror()), io: None }
    }
}

/// A read or write that failed: __io_u_log_error's line, and its td_verror (io_u.c:1876),
/// which comes first for every engine (the sync engines' fio_io_end logs the io_u before
/// its own "xfer" td_verror, which then keeps the first error). `fname` is the file's name
/// as fio has it (as given).
pub(super) fn io_u_error(fname: &str, e: memtwin_kernel::fs::Errno, dir: usize, off: u64, len: u64) -> JobError {
    let msg = format!("fio: io_u error on file {fname}: {}: {} offset={off}, buflen={len}\n", e.strerror(), if dir == 0 { "read" } else { "write" });
    JobError { msg, io: Some(dir), ..JobError::verror("io_u.c:1876", "io_u error", e) }
}

/// What the jobs and the fio main task share.
pub struct Shared {
    pub results: Vec<Option<JobStats>>,
    pub parent: TaskId,
}

/// get_next_offset's generators.
enum Gen {
    Seq { next: u64 },
    Uniform { map: Option<Vec<u64>>, used: u64 },
    Zipf { theta: f64, zetan: f64, zeta2: f64, off: u64 },
    Pareto { pow: f64, off: u64 },
    Gauss { stddev: u64 },
}

/// A request of an asynchronous engine (an io_u between submission and reaping).
#[derive(Clone, Copy)]
struct Inflight {
    dir: usize,
    start: Ns,
    /// When the submission returned (slat ends).
    issued: Option<Ns>,
    /// When its completion is there to reap; Ns::MAX while a page's read end is unknown.
    done_at: Ns,
    off: u64,
    /// Bytes moved so far.
    bytes: u64,
    /// An io_uring buffered read waiting for this page (IOCB_WAITQ).
    wait: Option<Wait>,
    /// Handed to an io-wq worker: its id there, until the worker posts the completion.
    wq: Option<u64>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Buffer,
    Open,
    Run,
    Fsync { start: Ns },
    Done,
}

pub struct FioJob {
    opts: JobOpts,
    path: String,
    /// The file's name as fio prints it (f->file_name: as given, under `directory`).
    fname: String,
    slot: usize,
    shared: Rc<RefCell<Shared>>,
    rng: Rng,
    gen: Gen,
    nblocks: u64,
    phase: Phase,
    fd: usize,
    stats: JobStats,
    /// The synchronous I/O in progress: direction, issue time, bytes moved so far.
    cur: Option<(usize, Ns, u64)>,
    inflight: Vec<Inflight>,
    /// An asynchronous engine's request the task is carrying out in the kernel.
    busy: Option<Inflight>,
    /// No block is left to issue (the random map is full, or the file ended).
    exhausted: bool,
    /// A time_based job went round the file: its next I/O starts a new loop.
    looped: bool,
    /// io_uring's io-wq, created with the first request it takes.
    iowq: Option<Rc<RefCell<IoWq>>>,
    next_work: u64,
    start: Ns,
    ramp_end: Ns,
    bytes_issued: u64,
    writes_since_fsync: u64,
    /// Sample window: time and byte/IO counts at the last bandwidth sample.
    sample_t: Ns,
    sample_bytes: [u64; 2],
    sample_ios: [u64; 2],
    cpu0: (u64, u64, u64),
    /// The task's minor and major faults when the job started (getrusage's baseline).
    flt0: (u64, u64),
    buffer_pages: u64,
    /// The mmap engine's mapping of the file: (address space, pages mapped).
    mmap: Option<(u32, u64)>,
    /// The mmap engine with direct=1: the block is copied and its msync is under way.
    msync: bool,
}

impl FioJob {
    pub fn new(opts: JobOpts, path: String, fname: String, slot: usize, shared: Rc<RefCell<Shared>>, rng: Rng) -> FioJob {
        let size = opts.size.unwrap_or(0);
        let nblocks = (size / opts.bs).max(1);
        let iodepth = opts.iodepth;
        FioJob {
            path,
            fname,
            slot,
            shared,
            rng,
            gen: Gen::Seq { next: 0 },
            nblocks,
            phase: Phase::Buffer,
            fd: 0,
            stats: JobStats { name: opts.name.clone(), members: 1, iodepth, ..Default::default() },
            cur: None,
            inflight: Vec::with_capacity(iodepth as usize),
            busy: None,
            exhausted: false,
            looped: false,
            iowq: None,
            next_work: 0,
            start: 0,
            ramp_end: 0,
            bytes_issued: 0,
            writes_since_fsync: 0,
            sample_t: 0,
            sample_bytes: [0; 2],
            sample_ios: [0; 2],
            cpu0: (0, 0, 0),
            flt0: (0, 0),
            buffer_pages: 0,
            mmap: None,
            msync: false,
            opts,
        }
    }

    /// The generator's set-up (zipf_init, pareto_init, gauss_init, the random map).
    fn init_gen(&mut self) {
        let n = self.nblocks;
        self.gen = if !self.opts.rw.random() {
            Gen::Seq { next: 0 }
        } else {
            match self.opts.dist {
                Dist::Random => {
                    // fio_random_map: one bit per block unless norandommap.
                    let map = (!self.opts.norandommap).then(|| vec![0u64; n.div_ceil(64) as usize]);
                    Gen::Uniform { map, used: 0 }
                }
                Dist::Zipf(theta) => {
                    let mut zetan = 0.0;
                    for i in 0..n.min(ZIPF_MAX_GEN) {
                        zetan += (1.0 / (i + 1) as f64).powf(theta);
                    }
                    let zeta2 = 1.0 + 0.5f64.powf(theta);
                    let off = self.rand32();
                    Gen::Zipf { theta, zetan, zeta2, off }
                }
                Dist::Pareto(h) => {
                    let off = self.rand32();
                    Gen::Pareto { pow: h.ln() / (1.0 - h).ln(), off }
                }
                Dist::Normal(dev) => {
                    let stddev = if dev != 0.0 { (((n as f64) * dev / 100.0).ceil() as u64).min(n / 2) } else { 0 };
                    Gen::Gauss { stddev }
                }
            }
        };
    }

    /// fio's __rand: a 32-bit draw.
    fn rand32(&mut self) -> u64 {
        self.rng.next_u64() >> 32
    }

    /// get_next_block: the next block number, or None when a job without time_based has
    /// touched every block once (the random map is full).
    fn next_block(&mut self) -> Option<u64> {
        let n = self.nblocks;
        let time_based = self.opts.time_based;
        let frand = |x: u64| x as f64 / u32::MAX as f64;
        match &mut self.gen {
            Gen::Seq { next } => {
                if *next >= n {
                    if !time_based {
                        return None;
                    }
                    // get_next_seq_offset: a time_based job wraps to the start of the file,
                    // and drops its cache again (loop_cache_invalidate).
                    *next = 0;
                    self.looped = true;
                }
                *next += 1;
                Some(*next - 1)
            }
            Gen::Uniform { map: None, .. } => Some(self.rng.below(n)),
            Gen::Uniform { map: Some(_), .. } => {
                let r = self.rng.below(n);
                let Gen::Uniform { map: Some(map), used } = &mut self.gen else { return None };
                if *used >= n {
                    if !time_based {
                        return None;
                    }
                    // get_next_rand_block: a time_based job starts the map over
                    // (fio_file_reset) and drops its cache again (loop_cache_invalidate).
                    map.iter_mut().for_each(|w| *w = 0);
                    *used = 0;
                    self.looped = true;
                }
                // axmap_next_free: the first free block at or after r, wrapping.
                let mut b = r;
                loop {
                    let (w, bit) = ((b / 64) as usize, b % 64);
                    let word = map[w] | ((1u64 << bit) - 1);
                    if word != u64::MAX {
                        let free = w as u64 * 64 + (!word).trailing_zeros() as u64;
                        if free < n {
                            b = free;
                            break;
                        }
                    }
                    b = (w as u64 + 1) * 64;
                    if b >= n {
                        b = 0;
                    }
                }
                map[(b / 64) as usize] |= 1 << (b % 64);
                *used += 1;
                Some(b)
            }
            Gen::Zipf { theta, zetan, zeta2, off } => {
                let (theta, zetan, zeta2, off) = (*theta, *zetan, *zeta2, *off);
                // zipf_next (Gray et al., "Quickly generating billion-record synthetic
                // databases").
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let u = frand(self.rand32());
                let uz = u * zetan;
                let val = if uz < 1.0 {
                    1
                } else if uz < 1.0 + 0.5f64.powf(theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                Some((val - 1).wrapping_mul(GOLDEN_RATIO_64).wrapping_add(off) % n)
            }
            Gen::Pareto { pow, off } => {
                let (pow, off) = (*pow, *off);
                let u = frand(self.rand32());
                let v = ((n - 1) as f64 * u.powf(pow)) as u64;
                Some(v.wrapping_mul(GOLDEN_RATIO_64).wrapping_add(off) % n)
            }
            Gen::Gauss { stddev } => {
                let stddev = *stddev;
                // gauss_next: the mean of 12 uniform draws, then a uniform deviation.
                let mut sum = 0u64;
                for _ in 0..12 {
                    sum += self.rand32() % (n + 1);
                }
                sum = sum.div_ceil(12);
                if stddev > 0 {
                    let r = self.rand32();
                    let mut dev = (stddev as f64 * (r as f64 / (u32::MAX as f64 + 1.0))) as i64 - (stddev / 2) as i64;
                    while dev + sum as i64 >= n as i64 {
                        dev /= 2;
                    }
                    sum = (sum as i64 + dev).max(0) as u64;
                }
                Some(sum.wrapping_mul(GOLDEN_RATIO_64) % n)
            }
        }
    }

    /// The direction of the next I/O (rwmixread for mixed jobs).
    fn next_dir(&mut self) -> usize {
        match self.opts.rw {
            Rw::Read | Rw::RandRead => 0,
            // A trim job ends at its first trim (trim_step) before it asks for a direction.
            Rw::Write | Rw::RandWrite | Rw::Trim | Rw::RandTrim | Rw::TrimWrite | Rw::RandTrimWrite => 1,
            Rw::ReadWrite | Rw::RandRw => {
                if self.rng.below(100) < self.opts.rwmixread as u64 {
                    0
                } else {
                    1
                }
            }
        }
    }

    /// Whether the job should stop issuing (runtime reached, or size done).
    fn finished(&self, now: Ns) -> bool {
        if let Some(rt) = self.opts.runtime {
            if now >= self.ramp_end + rt {
                return true;
            }
        }
        !self.opts.time_based && self.bytes_issued >= self.opts.size.unwrap_or(0)
    }

    /// Pick the next I/O and point the file position at it (pread's offset).
    fn prep(&mut self, k: &mut Kernel, me: TaskId) -> Option<usize> {
        let block = self.next_block()?;
        if std::mem::take(&mut self.looped) && self.opts.invalidate && !self.opts.direct {
            // loop_cache_invalidate -> file_invalidate_cache: POSIX_FADV_DONTNEED again.
            let _ = k.sys_fadvise_dontneed(me, self.fd);
        }
        let dir = self.next_dir();
        if let Ok(f) = k.file_mut(me, self.fd) {
            f.pos = block * self.opts.bs;
        }
        self.bytes_issued += self.opts.bs;
        if self.opts.engine == Engine::Mmap {
            self.mmap_prep(k, me, block * self.opts.bs);
        }
        Some(dir)
    }

    /// fio_mmapio_prep: a block inside the current mapping uses it; otherwise the mapping
    /// is dropped and the job's whole region mapped (fio_mmapio_prep_full: munmap zaps
    /// every page-table entry, so the next accesses fault again). fio 3.33 maps the region
    /// once for the job: a random job over a cached 32 MiB file took 523 minor faults in
    /// 471,000 reads on a 6.18 host, its last block among them.
    fn mmap_prep(&mut self, k: &mut Kernel, me: TaskId, off: u64) {
        let size = self.opts.size.unwrap_or(0);
        if let Some((m, pages)) = self.mmap {
            if off + self.opts.bs <= size {
                return;
            }
            k.unmap_file(me, m, pages);
            self.mmap = None;
        }
        let m = match k.file(me, self.fd).map(|f| f.target) {
            Some(Target::Inode(ino)) => k.fs.inodes[ino as usize].mapping,
            Some(Target::BlockDev(d)) => k.block.devs[d as usize].mapping,
            _ => return,
        };
        let pages = size.div_ceil(4096);
        k.map_file(me, m, pages, false);
        // fio_mmap_file -> fio_madvise_file: posix_madvise by fadvise_hint (1: RANDOM for
        // a random job, SEQUENTIAL otherwise); fadvise_hint=0 gives no advice.
        let advice = match self.opts.fadvise_hint {
            FadviseHint::None => None,
            FadviseHint::ByPattern => Some(if self.opts.rw.random() { Madvice::Random } else { Madvice::Sequential }),
            FadviseHint::Random => Some(Madvice::Random),
            FadviseHint::Sequential => Some(Madvice::Sequential),
        };
        if let Some(a) = advice {
            k.madvise_file(me, m, a);
        }
        self.mmap = Some((m, pages));
    }

    /// fio_mmapio_queue: memcpy between the buffer and the mapped block from byte `done`
    /// of it on. Each page is an access through the fault path (it may wait: the read of
    /// the page, memory, dirty throttling; the copy resumes at that page). Then the copy's
    /// CPU time, in user mode; with direct=1 an msync(MS_SYNC) of the block follows.
    fn transfer_mmap(&mut self, k: &mut Kernel, me: TaskId, dir: usize, done: u64) -> Result<IoProgress, JobError> {
        let bs = self.opts.bs;
        let Some((m, _)) = self.mmap else {
            // fio_mmap_file: mmap() failed (a file the model cannot map).
            return Err(JobError::verror("engines/mmap.c:118", "mmap", memtwin_kernel::fs::Errno::ENODEV));
        };
        let off = k.file(me, self.fd).map(|f| f.pos).unwrap_or(0);
        let (start, end) = (off + done, off + bs);
        let mut at = start;
        while at < end {
            let index = at / 4096;
            if let Err(w) = k.touch(me, m, index, dir == 1) {
                return Ok(IoProgress { bytes: at - start, wait: Some(w), eof: false });
            }
            at = ((index + 1) * 4096).min(end);
        }
        let user = if dir == 0 { cost::copy_out_ns(&k.machine.cpu_model, bs) } else { cost::copy_in_ns(&k.machine.cpu_model, bs) };
        Ok(IoProgress { bytes: end - start, wait: Some(Step::Cpu { user, sys: 0 }), eof: false })
    }

    fn transfer(&mut self, k: &mut Kernel, me: TaskId, dir: usize, len: u64) -> Result<memtwin_kernel::fs::IoProgress, JobError> {
        let r = if dir == 0 { k.sys_read(me, self.fd, len) } else { k.sys_write(me, self.fd, len) };
        r.map_err(|e| io_u_error(&self.fname, e, dir, k.file(me, self.fd).map(|f| f.pos).unwrap_or(0), len))
    }

    /// fio's own user-space work for one I/O (do_io's loop: get_io_u and the next offset,
    /// the clock reads, the latency histogram, put_io_u). Measured with fio 3.33 on a Xeon
    /// host: 0.48 us per I/O where nothing else limits it (a cached 4 KiB randread: usr 24 %
    /// at 507k IOPS); that is 80 stdio characters of the reference core (6 ns each), and a
    /// machine's `stdio_char_ns` scales it as it does the other user-space integer work.
    fn charge_loop(&self, k: &mut Kernel, me: TaskId) {
        const LOOP_STDIO_CHARS: u64 = 80;
        let ns = LOOP_STDIO_CHARS * k.machine.cpu_model.stdio_char_ns;
        k.charge_user(me, ns);
    }

    /// A completed I/O: its latencies go into the statistics if it falls after ramp_time.
    fn account(&mut self, dir: usize, start: Ns, issued: Ns, done: Ns, bytes: u64, now: Ns) {
        if start < self.ramp_end {
            return;
        }
        let d = &mut self.stats.dirs[dir];
        let clat = done.saturating_sub(issued);
        let lat = done.saturating_sub(start);
        if !self.opts.engine.sync() {
            d.slat.add(issued - start);
        }
        d.clat.add(clat);
        d.clat_plat.add(clat);
        d.lat.add(lat);
        d.io_bytes += bytes;
        d.total_ios += 1;
        // io_u_mark_latency: the distribution is of the total latency.
        self.stats.lat_dist.add(lat);
        self.sample(now);
    }

    /// add_bw_samples / add_iops_samples: one sample per AVG_TIME window.
    fn sample(&mut self, now: Ns) {
        let spent = now.saturating_sub(self.sample_t);
        if spent < AVG_TIME {
            return;
        }
        let ms = spent / NS_PER_MS;
        for d in 0..2 {
            let active = if d == 0 { self.opts.rw.reads() } else { self.opts.rw.writes() };
            if !active {
                continue;
            }
            let s = &mut self.stats.dirs[d];
            let kib = (s.io_bytes - self.sample_bytes[d]) * 1000 / ms / 1024;
            let iops = (s.total_ios - self.sample_ios[d]) * 1000 / ms;
            s.bw.add(kib);
            s.iops.add(iops);
            self.sample_bytes[d] = s.io_bytes;
            self.sample_ios[d] = s.total_ios;
        }
        self.sample_t = now;
    }

    fn fail(&mut self, k: &mut Kernel, me: TaskId, e: JobError) -> Step {
        if !e.msg.is_empty() {
            k.eprint(me, &e.msg);
        }
        if let Some(d) = e.io {
            // td_io_queue counted the failed read or write (total_io_u) and its completion.
            self.stats.dirs[d].total_ios += 1;
            self.stats.complete.mark_batch(1);
            self.stats.total_complete += 1;
        }
        if self.phase == Phase::Run {
            // do_io's error path, cleanup_pending_aio: io_u_queued_complete(td, 0) reaps
            // nothing and counts a completion batch of 0 (what was in flight is dropped).
            self.stats.complete.mark_batch(0);
            self.stats.total_complete += 1;
        }
        // The job's thread ends (thread_main's err: path).
        k.print(me, &format!("fio: pid={}, err={}/{}\n", k.pid_of(me), e.errno, e.verror));
        self.stats.error = e.errno;
        self.stats.verror = e.verror;
        self.inflight.clear();
        self.busy = None;
        if let Some(wq) = self.iowq.take() {
            iowq::shutdown(&wq, k);
        }
        self.cur = None;
        self.phase = Phase::Done;
        Step::Cpu { user: 0, sys: 0 }
    }

    /// The job's first trim: do_io_u_trim -> os_trim, ioctl(BLKDISCARD) on the file. A
    /// regular file has no such ioctl (ENOTTY), so the trim fails at once and ends the job:
    /// td_io_queue counts it as issued, submitted and completed and records the error
    /// (the mmap engine records it itself). A block device target was refused before the
    /// jobs started (discard is not modelled).
    fn trim_step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        self.stats.depth.mark_depth(1, 1);
        self.stats.submit.mark_batch(1);
        self.stats.total_submit += 1;
        self.stats.complete.mark_batch(1);
        self.stats.total_complete += 1;
        self.stats.trim_ios += 1;
        let e = memtwin_kernel::fs::Errno::ENOTTY;
        let err = if self.opts.engine == Engine::Mmap { JobError::verror("engines/mmap.c:247", "trim", e) } else { JobError::verror("ioengines.c:399", "td_io_queue", e) };
        self.fail(k, me, err)
    }

    /// A synchronous engine's step: complete the I/O in progress, then issue the next.
    fn sync_step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let now = k.now;
        let bs = self.opts.bs;
        loop {
            let (dir, start, done) = match self.cur {
                Some(c) => c,
                None => {
                    if self.finished(now) {
                        self.phase = Phase::Done;
                        return Step::Cpu { user: 0, sys: 0 };
                    }
                    let Some(dir) = self.prep(k, me) else {
                        self.phase = Phase::Done;
                        return Step::Cpu { user: 0, sys: 0 };
                    };
                    self.stats.depth.mark_depth(1, 1);
                    self.stats.submit.mark_batch(1);
                    self.stats.total_submit += 1;
                    self.cur = Some((dir, now, 0));
                    (dir, now, 0)
                }
            };
            if done >= bs && self.opts.engine == Engine::Mmap && self.opts.direct && !self.msync {
                // "not really direct": msync(MS_SYNC) of the block (its posix_madvise
                // POSIX_MADV_DONTNEED is a no-op in glibc); the I/O completes after it.
                self.msync = true;
                match k.sys_fsync(me, self.fd) {
                    Ok(Some(w)) => return w,
                    Ok(None) => {}
                    Err(e) => {
                        // fio_mmapio_queue, "not really direct": td_verror(msync).
                        return self.fail(k, me, JobError::verror("engines/mmap.c:257", "msync", e));
                    }
                }
            }
            if done >= bs {
                self.msync = false;
                self.cur = None;
                self.stats.complete.mark_batch(1);
                self.stats.total_complete += 1;
                self.account(dir, start, start, now, bs, now);
                self.charge_loop(k, me);
                if dir == 1 && self.opts.fsync > 0 {
                    self.writes_since_fsync += 1;
                    if self.writes_since_fsync >= self.opts.fsync {
                        self.writes_since_fsync = 0;
                        return self.start_fsync(k, me);
                    }
                }
                // fio's own work runs before the next I/O is issued (and timed).
                return Step::Cpu { user: 0, sys: 0 };
            }
            let r = if self.opts.engine == Engine::Mmap { self.transfer_mmap(k, me, dir, done) } else { self.transfer(k, me, dir, bs - done) };
            let r = match r {
                Ok(r) => r,
                Err(m) => return self.fail(k, me, m),
            };
            if r.bytes == 0 && r.eof {
                // The file ended under the job: a short I/O ends it.
                self.cur = None;
                self.phase = Phase::Done;
                return Step::Cpu { user: 0, sys: 0 };
            }
            self.cur = Some((dir, start, done + r.bytes));
            return r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 });
        }
    }

    fn start_fsync(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let start = k.now;
        self.phase = Phase::Fsync { start };
        match k.sys_fsync(me, self.fd) {
            Ok(Some(w)) => w,
            Ok(None) => Step::Cpu { user: 0, sys: 0 },
            // (fsync of an open descriptor does not fail in the model: EBADF only.)
            Err(e) => self.fail(k, me, JobError::verror("io_u.c:1876", "io_u error", e)),
        }
    }

    /// Whether the engine's buffered reads go on without the submitter: io_uring's
    /// IOCB_WAITQ (5.9: the read arms a wait on the page and returns -EIOCBQUEUED; the
    /// page's unlock queues task_work that copies the rest, io_async_buf_func).
    fn waitq_read(&self, k: &Kernel, dir: usize) -> bool {
        self.opts.engine == Engine::IoUring && !self.opts.direct && dir == 0 && k.machine.kernel == KernelProfile::Linux6
    }

    /// Whether io_uring hands this buffered request to io-wq: a write (ext4 refuses
    /// IOCB_NOWAIT buffered writes), or before 5.9 a read that would block (io_read's
    /// -EAGAIN under IOCB_NOWAIT, with no readahead started).
    fn punt(&self, k: &Kernel, me: TaskId, dir: usize) -> bool {
        self.opts.engine == Engine::IoUring
            && !self.opts.direct
            && (dir == 1 || (k.machine.kernel != KernelProfile::Linux6 && k.read_would_block(me, self.fd, self.opts.bs)))
    }

    /// io_queue_async_work: the request goes to a worker.
    fn punt_to_iowq(&mut self, k: &mut Kernel, me: TaskId, mut io: Inflight) {
        let (name, kthread) = if k.machine.kernel == KernelProfile::Linux6 {
            (format!("iou-wrk-{}", k.pid_of(me)), false)
        } else {
            ("io_wqe_worker-0".to_string(), true)
        };
        // io_wq_create: bounded workers up to min(SQ entries, 4 x CPUs); fio asks for
        // iodepth SQ entries (rounded up to a power of two by the kernel).
        let max = (self.opts.iodepth as usize).next_power_of_two().min(4 * k.machine.cpus as usize);
        let (fname, fd) = (&self.fname, self.fd);
        let wq = self.iowq.get_or_insert_with(|| Rc::new(RefCell::new(IoWq::new(me, max, name, kthread, fname, fd)))).clone();
        let id = self.next_work;
        self.next_work += 1;
        iowq::enqueue(&wq, k, me, Work { id, dir: io.dir, off: io.off, len: self.opts.bs });
        io.issued = Some(k.now + FioJob::pending(k, me));
        io.done_at = Ns::MAX;
        io.wq = Some(id);
        self.inflight.push(io);
    }

    /// Completions the workers posted: their requests are done at the time posted.
    fn collect_iowq(&mut self) -> Option<JobError> {
        let done = match &self.iowq {
            Some(wq) => std::mem::take(&mut wq.borrow_mut().done),
            None => return None,
        };
        let mut err = None;
        for d in done {
            if let Some(io) = self.inflight.iter_mut().find(|io| io.wq == Some(d.id)) {
                io.wq = None;
                io.done_at = d.at;
                io.bytes = d.bytes;
            }
            if d.err.is_some() && err.is_none() {
                err = d.err;
            }
        }
        err
    }

    /// The task's CPU charged in this step and not yet run (the submission's own time).
    fn pending(k: &Kernel, me: TaskId) -> Ns {
        let t = &k.tasks[me as usize];
        t.pending_user + t.pending_sys
    }

    /// Go on with a request the task is carrying out in the kernel itself: a buffered
    /// libaio request (aio_read / aio_write call the file's read_iter / write_iter in
    /// io_submit: the copy, the page's read, dirty throttling all happen before io_submit
    /// returns, and the event is in the ring when it does), an io_uring submission that
    /// blocked, or the task_work retry of an io_uring read whose page arrived. Returns the
    /// step the task waits in, or None once the request is complete or waits on a page.
    fn run_io(&mut self, k: &mut Kernel, me: TaskId, mut io: Inflight) -> Result<Option<Step>, JobError> {
        let bs = self.opts.bs;
        loop {
            if let Ok(f) = k.file_mut(me, self.fd) {
                f.pos = io.off + io.bytes;
            }
            let r = self.transfer(k, me, io.dir, bs - io.bytes)?;
            io.bytes += r.bytes;
            let at = k.now + FioJob::pending(k, me);
            match r.wait {
                Some(Step::Wait(w)) if self.waitq_read(k, io.dir) && matches!(w.on, WaitOn::FolioLocked { .. }) => {
                    io.issued.get_or_insert(at);
                    io.done_at = k.wait_due(&w).unwrap_or(Ns::MAX);
                    io.wait = Some(w);
                    self.inflight.push(io);
                    return Ok(None);
                }
                Some(step) => {
                    self.busy = Some(io);
                    return Ok(Some(step));
                }
                None if io.bytes < bs && !r.eof => continue,
                None => {
                    if io.bytes < bs {
                        // The file ended under the job: the short I/O ends it.
                        self.exhausted = true;
                    }
                    io.issued.get_or_insert(at);
                    io.done_at = at;
                    self.inflight.push(io);
                    return Ok(None);
                }
            }
        }
    }

    /// libaio / io_uring (do_io with iodepth_batch_submit=1 and iodepth_batch_complete
    /// min = max = 1, fio's defaults): submit one request at a time until `iodepth` are
    /// queued; with the queue full, reap exactly one event (waiting for it if none is
    /// there); at the end reap them all (io_u_quiesce). O_DIRECT requests complete when
    /// the block layer does; a buffered libaio request completes inside io_submit, so its
    /// event waits in the ring for the reaps of the ones before it; an io_uring buffered
    /// read of a page being read completes when the page arrives.
    fn async_step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        loop {
            let now = k.now;
            if let Some(m) = self.collect_iowq() {
                return self.fail(k, me, m);
            }
            if let Some(io) = self.busy.take() {
                match self.run_io(k, me, io) {
                    Ok(Some(step)) => return step,
                    Ok(None) => {}
                    Err(m) => return self.fail(k, me, m),
                }
            }
            // task_work: the reads whose page was unlocked copy what is left.
            if let Some(i) = self.inflight.iter().position(|io| io.wait.is_some_and(|w| k.wait_satisfied(w.on))) {
                let mut io = self.inflight.swap_remove(i);
                io.wait = None;
                match self.run_io(k, me, io) {
                    Ok(Some(step)) => return step,
                    Ok(None) => continue,
                    Err(m) => return self.fail(k, me, m),
                }
            }
            let depth = self.inflight.len() as u32;
            let ending = self.exhausted || self.finished(now);
            if depth > 0 && (depth >= self.opts.iodepth || ending) {
                // wait_for_completions: one event with the queue full, all at the end.
                // What completed by the end of this step's CPU time (a task_work copy).
                let at = now + FioJob::pending(k, me);
                let want = if ending { depth as usize } else { 1 };
                let ready = self.inflight.iter().filter(|io| io.wait.is_none() && io.wq.is_none() && io.done_at <= at).count();
                if ready >= want {
                    for _ in 0..want {
                        let i = (0..self.inflight.len())
                            .filter(|&i| self.inflight[i].wait.is_none() && self.inflight[i].wq.is_none() && self.inflight[i].done_at <= at)
                            .min_by_key(|&i| self.inflight[i].done_at)
                            .unwrap_or(0);
                        let io = self.inflight.swap_remove(i);
                        let issued = io.issued.unwrap_or(io.start);
                        self.account(io.dir, io.start, issued, at, io.bytes, at);
                        self.charge_loop(k, me);
                    }
                    self.stats.complete.mark_batch(want as u32);
                    self.stats.total_complete += 1;
                    continue;
                }
                // Sleep until the next completion: a page being read is waited for on the
                // page itself (its unlock wakes the task), an O_DIRECT request until its end.
                let next = self.inflight.iter().filter(|io| io.wq.is_none() && (io.wait.is_some() || io.done_at > at)).min_by_key(|io| io.done_at);
                if self.inflight.iter().any(|io| io.wq.is_some()) {
                    // A worker's completion wakes the task (io_uring_enter's wait for a
                    // CQE); so does the end of a request with a known time. A page whose
                    // read end is unknown or past is waited for on the page itself.
                    return match next {
                        Some(Inflight { wait: Some(w), done_at, .. }) if *done_at <= now || *done_at == Ns::MAX => Step::Wait(*w),
                        Some(io) => Step::SleepUntil { t: io.done_at, io: false },
                        None => Step::Block { io: false },
                    };
                }
                return match next {
                    Some(Inflight { wait: Some(w), .. }) => Step::Wait(*w),
                    Some(io) => Step::SleepUntil { t: io.done_at, io: true },
                    None => Step::Yield,
                };
            }
            if ending {
                self.phase = Phase::Done;
                return Step::Cpu { user: 0, sys: 0 };
            }
            let Some(dir) = self.prep(k, me) else {
                self.exhausted = true;
                continue;
            };
            self.stats.depth.mark_depth(depth + 1, 1);
            self.stats.submit.mark_batch(1);
            self.stats.total_submit += 1;
            let off = k.file(me, self.fd).map(|f| f.pos).unwrap_or(0);
            let io = Inflight { dir, start: now, issued: None, done_at: 0, off, bytes: 0, wait: None, wq: None };
            // Each submission is its own system call: its CPU time passes before the next.
            if self.punt(k, me, dir) {
                k.charge_sys(me, k.machine.cpu_model.syscall_ns);
                self.punt_to_iowq(k, me, io);
                return Step::Cpu { user: 0, sys: 0 };
            }
            if !self.opts.direct {
                return match self.run_io(k, me, io) {
                    Ok(Some(step)) => step,
                    Ok(None) => Step::Cpu { user: 0, sys: 0 },
                    Err(m) => self.fail(k, me, m),
                };
            }
            // O_DIRECT: the request is queued to the device; io_submit returns.
            let base = FioJob::pending(k, me);
            let r = match self.transfer(k, me, dir, self.opts.bs) {
                Ok(r) => r,
                Err(m) => return self.fail(k, me, m),
            };
            let spent = FioJob::pending(k, me) - base;
            let done_at = match r.wait {
                Some(Step::SleepUntil { t, .. }) => t,
                Some(Step::Wait(w)) => k.wait_due(&w).unwrap_or(now + spent),
                _ => now + spent,
            };
            self.inflight.push(Inflight { issued: Some(now + spent), done_at, bytes: r.bytes, ..io });
            return Step::Cpu { user: 0, sys: 0 };
        }
    }

    fn finish(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let _ = k.sys_close(me, self.fd);
        let end = k.now;
        self.stats.runtime = end.saturating_sub(self.ramp_end);
        let s = &k.sched.tasks[me as usize];
        self.stats.usr_ns = s.utime - self.cpu0.0;
        self.stats.sys_ns = s.stime - self.cpu0.1;
        self.stats.ctx = s.nvcsw + s.nivcsw - self.cpu0.2;
        if let Some(wq) = self.iowq.take() {
            // getrusage(RUSAGE_SELF) counts the process's threads: the iou-wrk workers
            // (5.12+); io_wqe_worker kernel threads are not the process's.
            if k.machine.kernel == KernelProfile::Linux6 {
                for &w in &wq.borrow().workers {
                    let t = &k.sched.tasks[w as usize];
                    self.stats.usr_ns += t.utime;
                    self.stats.sys_ns += t.stime;
                    self.stats.ctx += t.nvcsw + t.nivcsw;
                }
            }
            iowq::shutdown(&wq, k);
        }
        // getrusage's ru_minflt / ru_majflt: the buffers' first touches and the faults of
        // the mmap engine's copies.
        let t = &k.tasks[me as usize];
        self.stats.minf = self.buffer_pages + t.min_flt - self.flt0.0;
        self.stats.majf = t.maj_flt - self.flt0.1;
        self.stats.pid = k.pid_of(me);
        let parent = {
            let mut sh = self.shared.borrow_mut();
            sh.results[self.slot] = Some(std::mem::take(&mut self.stats));
            sh.parent
        };
        k.wake(parent);
        Step::Exit(0)
    }
}

impl Program for FioJob {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        match self.phase {
            Phase::Buffer => {
                // The I/O buffers (iodepth x bs, allocated by fio and touched on first use).
                let want = (self.opts.iodepth as u64 * self.opts.bs).div_ceil(4096);
                if self.buffer_pages < want {
                    match k.fault_anon_pages(me, self.buffer_pages, want - self.buffer_pages) {
                        Ok(n) => self.buffer_pages += n,
                        Err((n, step)) => {
                            self.buffer_pages += n;
                            return step;
                        }
                    }
                }
                self.stats.minf = self.buffer_pages;
                self.phase = Phase::Open;
                Step::Cpu { user: 0, sys: 0 }
            }
            Phase::Open => {
                // generic_open_file: O_RDWR for a job that writes or trims.
                let flags = OpenFlags { read: true, write: self.opts.rw.writes() || self.opts.rw.trims(), direct: self.opts.direct, ..Default::default() };
                match k.sys_open(me, &self.path, flags) {
                    Ok((fd, _)) => self.fd = fd,
                    Err(e) => {
                        // generic_open_file: td_verror(td, errno, "open(NAME)").
                        let func = format!("open({})", self.fname);
                        return self.fail(k, me, JobError::verror("filesetup.c:805", &func, e));
                    }
                }
                if self.opts.invalidate {
                    // file_invalidate_cache: posix_fadvise(POSIX_FADV_DONTNEED), for the mmap
                    // engine too in fio 3.33 (it has no invalidate hook of its own).
                    let _ = k.sys_fadvise_dontneed(me, self.fd);
                }
                if self.opts.fadvise_hint != FadviseHint::None && matches!(k.file(me, self.fd).map(|f| f.target), Some(Target::Inode(_) | Target::BlockDev(_))) {
                    // td_io_open_file: posix_fadvise of the job's range with the hint.
                    let random = match self.opts.fadvise_hint {
                        FadviseHint::ByPattern => self.opts.rw.random(),
                        h => h == FadviseHint::Random,
                    };
                    let _ = k.sys_fadvise(me, self.fd, if random { Fadvice::Random } else { Fadvice::Sequential });
                }
                self.init_gen();
                self.start = k.now;
                self.ramp_end = self.start + self.opts.ramp_time;
                self.sample_t = self.ramp_end;
                let s = &k.sched.tasks[me as usize];
                self.cpu0 = (s.utime, s.stime, s.nvcsw + s.nivcsw);
                let t = &k.tasks[me as usize];
                self.flt0 = (t.min_flt, t.maj_flt);
                self.phase = Phase::Run;
                Step::Cpu { user: 0, sys: 0 }
            }
            Phase::Run => {
                if self.opts.rw.trims() {
                    self.trim_step(k, me)
                } else if self.opts.engine.sync() {
                    self.sync_step(k, me)
                } else {
                    self.async_step(k, me)
                }
            }
            Phase::Fsync { start } => {
                if start >= self.ramp_end {
                    let lat = k.now - start;
                    self.stats.sync.add(lat);
                    self.stats.sync_plat.add(lat);
                }
                self.phase = Phase::Run;
                Step::Cpu { user: 0, sys: 0 }
            }
            Phase::Done => self.finish(k, me),
        }
    }

    fn killed(&mut self, k: &mut Kernel, _me: TaskId) {
        self.stats.error = 9;
        if let Some(wq) = self.iowq.take() {
            iowq::shutdown(&wq, k);
        }
        let parent = {
            let mut sh = self.shared.borrow_mut();
            sh.results[self.slot] = Some(std::mem::take(&mut self.stats));
            sh.parent
        };
        k.wake(parent);
    }
}
