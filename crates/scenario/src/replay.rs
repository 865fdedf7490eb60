//! `memtwin replay --policy kernel`: a page-access trace replayed through the kernel model.
//!
//! Each request reads one 4 KiB page of one file: object id N is page N (bytes
//! N*4096..N*4096+4095) of a file that is on the machine's disk when it boots (nothing
//! cached) and is as large as the largest id needs. A program (`Replay`) reads the pages with
//! pread-style `read(2)` calls through the kernel's own read path (filemap_read: page-cache
//! lookup, mark_page_accessed, readahead on a miss, workingset refault detection when an
//! evicted page comes back), many requests per scheduling step, and waits where the kernel
//! would (I/O, direct reclaim). kswapd and the watermarks run as on any machine.
//!
//! A request is a miss when its page is not in the page cache when the request is made
//! (a page still being read in by readahead counts as cached, as `filemap_get_pages`
//! finds it). The page cache's capacity is what the machine's RAM leaves for it; with
//! `cache_pages` the RAM is set so that the memory free or holding (reclaimable) page cache
//! at boot is that many pages (the replayed file then gets about that, less the free memory
//! kswapd keeps above its high watermark). The idle system's own memory competes as on a
//! real machine: its page cache (boot_file) is reclaimed first, its anonymous memory
//! (boot_anon) can be swapped out, which gives the file more than the boot figure; with
//! `boot_anon=0 boot_file=0` the file is alone. The result reports the most pages of the
//! file cached at once. Object sizes in the trace are not used: every request is one page.

use crate::RunError;
use memtwin_cachesim::{Format, Request, Stats, TraceReader, BATCH};
use memtwin_kernel::fs::{DiskFs, DiskImage, OpenFlags};
use memtwin_kernel::mm::Slot;
use memtwin_kernel::{Kernel, Program, Sink, Step, TaskId, NS_PER_SEC};
use memtwin_procfs::VmItem;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

const PAGE: u64 = 4096;
/// Requests one scheduling step replays at most (then the CPU time they cost passes).
const STEP_REQUESTS: u32 = 64;
/// How many requests ahead the replay asks the host for a request's page-cache leaf, then
/// its frame record, then its LRU neighbours' records.
const PREFETCH_PARENT: usize = 24;
const PREFETCH_SLOT: usize = 16;
const PREFETCH_PAGE: usize = 8;
const PREFETCH_NEIGHBOURS: usize = 3;
/// The hints' ring: what the earlier stages found for each request still ahead (a power of
/// two above PREFETCH_SLOT).
const RING: usize = 32;
const _: () = assert!(RING.is_power_of_two() && RING > PREFETCH_SLOT);

/// What the prefetch stages found for one request ahead: its page index, the leaf asked for
/// and the page seen there (hints only: the model looks everything up again).
#[derive(Clone, Copy)]
struct Ahead {
    index: u64,
    leaf: u32,
    page: Option<u32>,
}
const NO_AHEAD: Ahead = Ahead { index: u64::MAX, leaf: u32::MAX, page: None };
/// Largest object id the kernel policy accepts: the page-cache index of one file is 32 bits
/// here (a 16 TiB file).
pub const MAX_KERNEL_ID: u64 = u32::MAX as u64 - 1;
/// Where the replayed file lives (on the machine's first disk-backed mount).
const FILE_NAME: &str = "memtwin-replay.data";
/// Longest a replay may run in simulated time.
const MAX_SIM_S: u64 = 365 * 24 * 3600;

/// The /proc/vmstat counters a replay reports (deltas over the replay).
pub const REPORTED_COUNTERS: &[VmItem] = &[
    VmItem::Pgpgin,
    VmItem::WorkingsetRefaultFile,
    VmItem::WorkingsetActivateFile,
    VmItem::WorkingsetRestoreFile,
    VmItem::Pgactivate,
    VmItem::Pgdeactivate,
    VmItem::PgscanKswapd,
    VmItem::PgscanDirect,
    VmItem::PgstealKswapd,
    VmItem::PgstealDirect,
    VmItem::AllocstallNormal,
];

#[derive(Clone, Debug)]
pub struct KernelReplay {
    pub path: String,
    pub format: Format,
    /// Preset name or machine file ("" = "default").
    pub machine: String,
    pub sets: Vec<String>,
    /// Memory free or in the page cache at boot, in pages (sets the RAM); None: the
    /// machine's RAM as it is.
    pub cache_pages: Option<u64>,
    pub readahead: bool,
    pub seed: u64,
}

#[derive(Clone, Debug)]
pub struct KernelReplayResult {
    pub stats: Stats,
    pub wall_s: f64,
    pub sim_s: f64,
    pub ram_bytes: u64,
    /// Memory free or in the (reclaimable) page cache right after boot, pages: what the
    /// replayed file's pages can take.
    pub free_pages_at_boot: u64,
    /// Most pages of the replayed file cached at once during the replay.
    pub peak_cache_pages: u64,
    /// Pages of the replayed file.
    pub file_pages: u64,
    /// (counter, delta) for REPORTED_COUNTERS.
    pub vmstat: Vec<(&'static str, u64)>,
    /// The whole /proc/vmstat at the end of the replay ("name value" lines).
    pub vmstat_end: String,
    /// Simulated time of the replay, ns.
    pub sim_ns: u64,
}

#[derive(Default)]
struct Shared {
    stats: Stats,
    peak_cache_pages: u64,
    error: Option<String>,
}

/// The replaying program: one open file, a bounded batch of requests.
struct Replay {
    shared: Rc<RefCell<Shared>>,
    reader: TraceReader,
    path: String,
    batch: Vec<Request>,
    next: usize,
    fd: Option<usize>,
    mapping: u32,
    /// The current request has been counted (it is being retried after a wait).
    counted: bool,
    /// Requests taken from the trace before the current one (the ring's clock).
    seq: u64,
    ahead: [Ahead; RING],
}

impl Program for Replay {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let fd = match self.fd {
            Some(fd) => fd,
            None => match k.sys_open(me, &self.path, OpenFlags { read: true, ..Default::default() }) {
                Ok((fd, _)) => {
                    self.fd = Some(fd);
                    let ino = k.fs.lookup(&self.path).unwrap_or(0);
                    self.mapping = k.fs.inodes[ino as usize].mapping;
                    fd
                }
                Err(e) => {
                    self.shared.borrow_mut().error = Some(format!("cannot open the replayed file {}: {}", self.path, e.strerror()));
                    return Step::Exit(1);
                }
            },
        };
        {
            let mut s = self.shared.borrow_mut();
            s.peak_cache_pages = s.peak_cache_pages.max(k.mm.mappings[self.mapping as usize].nrpages);
        }
        for _ in 0..STEP_REQUESTS {
            if self.next == self.batch.len() {
                match self.reader.next_batch(&mut self.batch, BATCH) {
                    Ok(true) => self.next = 0,
                    Ok(false) => {
                        let _ = k.sys_close(me, fd);
                        return Step::Exit(0);
                    }
                    Err(e) => {
                        self.shared.borrow_mut().error = Some(e.message);
                        let _ = k.sys_close(me, fd);
                        return Step::Exit(2);
                    }
                }
            }
            // Hints for the requests ahead (they change nothing): the way to the
            // page-cache leaf of the one PREFETCH_PARENT ahead, the leaf of the one
            // PREFETCH_SLOT ahead, the frame record (or, for a miss, the leaf's counts) of
            // the one PREFETCH_PAGE ahead, its neighbours' of the one PREFETCH_NEIGHBOURS
            // ahead, so that their host memory latencies overlap.
            if let Some(q) = self.batch.get(self.next + PREFETCH_PARENT) {
                k.mm.prefetch_slot_parent(self.mapping, q.id);
            }
            // Each stage starts from what the one before found (the ring), not from the
            // root of the tree again.
            if let Some(q) = self.batch.get(self.next + PREFETCH_SLOT) {
                let leaf = k.mm.prefetch_slot_leaf(self.mapping, q.id);
                self.ahead[(self.seq as usize + PREFETCH_SLOT) % RING] = Ahead { index: q.id, leaf, page: None };
            }
            if let Some(q) = self.batch.get(self.next + PREFETCH_PAGE) {
                let a = &mut self.ahead[(self.seq as usize + PREFETCH_PAGE) % RING];
                if a.index == q.id {
                    a.page = k.mm.prefetch_page_in(a.leaf, q.id);
                } else {
                    k.mm.prefetch_page(self.mapping, q.id);
                }
            }
            if let Some(q) = self.batch.get(self.next + PREFETCH_NEIGHBOURS) {
                let a = self.ahead[(self.seq as usize + PREFETCH_NEIGHBOURS) % RING];
                if a.index == q.id {
                    if let Some(p) = a.page {
                        k.mm.prefetch_neighbours_of(p);
                    }
                } else {
                    k.mm.prefetch_page_neighbours(self.mapping, q.id);
                }
            }
            let index = self.batch[self.next].id;
            if !self.counted {
                let cached = matches!(k.mm.slot(self.mapping, index), Slot::Page(_));
                self.shared.borrow_mut().stats.count(PAGE as u32, cached);
                self.counted = true;
            }
            // pread(fd, buf, 4096, index * 4096)
            if let Ok(f) = k.file_mut(me, fd) {
                f.pos = index * PAGE;
            }
            match k.sys_read(me, fd, PAGE) {
                Ok(r) => {
                    if let Some(w) = r.wait {
                        if r.bytes < PAGE {
                            // Waiting for the page (I/O) or for memory: read it again after.
                            return w;
                        }
                        self.next += 1;
                        self.seq += 1;
                        self.counted = false;
                        return w;
                    }
                    self.next += 1;
                    self.seq += 1;
                    self.counted = false;
                }
                Err(e) => {
                    self.shared.borrow_mut().error = Some(format!("read of page {index} failed: {}", e.strerror()));
                    return Step::Exit(1);
                }
            }
        }
        Step::Cpu { user: 0, sys: 0 }
    }
}

fn err(m: String) -> RunError {
    RunError::bad_input(m)
}

/// Read the whole trace once: its largest id and request count (bad input is reported
/// before anything runs).
fn scan(path: &str, format: Format) -> Result<(u64, u64), RunError> {
    let mut r = TraceReader::open(path, format).map_err(|e| err(e.message))?;
    let mut batch = Vec::with_capacity(BATCH);
    let (mut max, mut n) = (0u64, 0u64);
    let mut first_big = None;
    while r.next_batch(&mut batch, BATCH).map_err(|e| err(e.message))? {
        for (i, q) in batch.iter().enumerate() {
            if q.id > max {
                max = q.id;
                if max > MAX_KERNEL_ID && first_big.is_none() {
                    first_big = Some(n + i as u64 + 1);
                }
            }
        }
        n += batch.len() as u64;
    }
    if let Some(req) = first_big {
        return Err(err(format!(
            "{path}: request {req}: object id {max} is too large for --policy kernel (ids are page indexes of one file: 0 to {MAX_KERNEL_ID}); the cache simulators (lru, fifo, clock, s3fifo) take any 64-bit id"
        )));
    }
    Ok((max, n))
}

/// The machine with its options applied: readahead, and the RAM for `cache_pages`.
fn machine_for(o: &KernelReplay) -> Result<(memtwin_machine::Machine, u64), RunError> {
    let spec = if o.machine.is_empty() { "default" } else { o.machine.as_str() };
    let mut m = memtwin_machine::load(spec).map_err(|e| err(e.to_string()))?;
    for s in &o.sets {
        memtwin_machine::apply_set(&mut m, s).map_err(|e| err(e.to_string()))?;
    }
    if !o.readahead {
        for d in &mut m.disks {
            d.read_ahead_kb = 0;
        }
    }
    let free_at_boot = |m: &memtwin_machine::Machine| -> Result<u64, RunError> {
        crate::check_host_memory(m, None, false)?;
        let k = Kernel::boot(m.clone(), o.seed).map_err(|e| err(e.to_string()))?;
        Ok(k.meminfo().mem_free * 1024 / PAGE + k.mm.stat.file_pages)
    };
    if let Some(want) = o.cache_pages {
        if want * PAGE < m.boot_file_bytes {
            return Err(err(format!(
                "--cache-size {want} pages is less than the page cache machine '{}' has at boot (boot_file = {} pages): give a larger size or --set boot_file=0",
                m.name,
                m.boot_file_bytes / PAGE
            )));
        }
        // The memory the kernel and the machine's own processes take at boot grows a little
        // with RAM (memmap, reserve): a few rounds settle it.
        for _ in 0..4 {
            let free = free_at_boot(&m)?;
            let overhead = (m.ram_bytes / PAGE).saturating_sub(free);
            let ram = (want + overhead) * PAGE;
            if ram == m.ram_bytes {
                break;
            }
            m.ram_bytes = ram;
        }
        m.validate().map_err(|e| err(format!("--cache-size {want} pages: {e}")))?;
    }
    let free = free_at_boot(&m)?;
    Ok((m, free))
}

/// Replay a trace through the kernel model. Deterministic for a given seed.
pub fn replay_kernel(o: &KernelReplay) -> Result<KernelReplayResult, RunError> {
    let t0 = Instant::now();
    let (max_id, _requests) = scan(&o.path, o.format)?;
    let (machine, free_pages_at_boot) = machine_for(o)?;
    let ram_bytes = machine.ram_bytes;
    let mut k = Kernel::boot(machine, o.seed).map_err(|e| err(e.to_string()))?;
    let Some(mi) = k.fs.mounts.iter().position(|m| m.active && m.dev.is_some()) else {
        return Err(err("--policy kernel needs a machine with a disk-backed filesystem to hold the replayed file".into()));
    };
    let mount = &k.fs.mounts[mi];
    let file = format!("{}/{FILE_NAME}", mount.at.trim_end_matches('/'));
    if max_id > memtwin_kernel::mm::page::MAX_INDEX {
        return Err(err(format!(
            "{}: page id {max_id} is beyond what --policy kernel can index (ids 0 .. {}: a file's pages end at MAX_LFS_FILESIZE, 8 EiB); the plain policies take any 64-bit id",
            o.path,
            memtwin_kernel::mm::page::MAX_INDEX
        )));
    }
    let file_pages = max_id + 1;
    let img = DiskImage { filesystems: vec![DiskFs { source: mount.source.clone(), dirs: Vec::new(), files: vec![(file.clone(), file_pages * PAGE)] }] };
    k.restore_disk_image(&img);

    let reader = TraceReader::open(&o.path, o.format).map_err(|e| err(e.message))?;
    let shared = Rc::new(RefCell::new(Shared::default()));
    let prog = Replay { shared: shared.clone(), reader, path: file, batch: Vec::with_capacity(BATCH), next: 0, fd: None, mapping: 0, counted: false, seq: 0, ahead: [NO_AHEAD; RING] };
    let before = k.vmstat();
    let start_ns = k.now;
    let tid = k.spawn("replay", &format!("memtwin replay {}", o.path), Box::new(prog), Sink::Null, Sink::Null);
    // The replay is the harness, not a program of the simulated machine: no image of its
    // own (exec.rs) in the cache it measures.
    k.tasks[tid as usize].image_done = true;
    loop {
        let until = k.now + NS_PER_SEC;
        k.run_until(until, &mut |k| k.task_exited(tid));
        if k.task_exited(tid) {
            break;
        }
        if k.now - start_ns > MAX_SIM_S * NS_PER_SEC {
            return Err(err(format!("{}: the replay ran for more than a year of simulated time; stopped", o.path)));
        }
    }
    let after = k.vmstat();
    let s = shared.borrow();
    if let Some(e) = &s.error {
        return Err(err(e.clone()));
    }
    if k.tasks[tid as usize].killed {
        return Err(err(format!("{}: the replaying process was killed (out of memory) after {} requests", o.path, s.stats.requests)));
    }
    let vmstat = REPORTED_COUNTERS.iter().map(|&c| (c.name(), after.get(c).saturating_sub(before.get(c)))).collect();
    Ok(KernelReplayResult {
        stats: s.stats,
        wall_s: t0.elapsed().as_secs_f64(),
        sim_s: (k.now - start_ns) as f64 / NS_PER_SEC as f64,
        ram_bytes,
        free_pages_at_boot,
        peak_cache_pages: s.peak_cache_pages,
        file_pages,
        vmstat,
        vmstat_end: after.render(),
        sim_ns: k.now - start_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A trace file in a directory of this test process, removed when dropped (with the
    /// directory once its last trace goes).
    struct TempTrace(String);
    impl std::ops::Deref for TempTrace {
        type Target = str;
        fn deref(&self) -> &str {
            &self.0
        }
    }
    impl Drop for TempTrace {
        fn drop(&mut self) {
            let p = std::path::Path::new(&self.0);
            let _ = std::fs::remove_file(p);
            if let Some(dir) = p.parent() {
                let _ = std::fs::remove_dir(dir);
            }
        }
    }

    fn trace(name: &str, ids: impl Iterator<Item = u64>) -> TempTrace {
        let dir = std::env::temp_dir().join(format!("memtwin-replay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        for id in ids {
            writeln!(f, "{id}").unwrap();
        }
        TempTrace(p.to_string_lossy().to_string())
    }

    fn opts(path: &str, cache_pages: u64, readahead: bool) -> KernelReplay {
        KernelReplay { path: path.into(), format: Format::U64, machine: "default".into(), sets: vec!["boot_file=0".into(), "boot_anon=0".into()], cache_pages: Some(cache_pages), readahead, seed: 0 }
    }

    fn counter(r: &KernelReplayResult, name: &str) -> u64 {
        r.vmstat.iter().find(|(n, _)| *n == name).map(|(_, v)| *v).unwrap()
    }

    #[test]
    fn a_loop_larger_than_the_cache_misses_and_refaults() {
        // 3 passes over 40000 pages with about 20000 pages of free memory: LRU would miss
        // every request; the kernel's two lists keep part of the loop on the active list
        // once refaults show it is being reused.
        let p = trace("loop.txt", (0..3).flat_map(|_| 0..40_000u64));
        let r = replay_kernel(&opts(&p, 20_000, false)).unwrap();
        assert_eq!(r.stats.requests, 120_000);
        // The first pass misses all 40000; the cache can hold at most 20000 of the rest.
        assert!(r.stats.misses >= 40_000 + 80_000 - 2 * 20_000, "{r:?}");
        assert!(r.stats.misses <= r.stats.requests);
        assert!(r.peak_cache_pages <= 20_000 + 1000, "{r:?}");
        // Readahead off: every miss is one page read (pgpgin is in KiB).
        assert_eq!(counter(&r, "pgpgin"), r.stats.misses * 4);
        assert!(counter(&r, "workingset_refault_file") > 0, "{r:?}");
        assert!(counter(&r, "pgsteal_kswapd") + counter(&r, "pgsteal_direct") > 0, "{r:?}");
    }

    #[test]
    fn a_loop_that_fits_hits_after_the_first_pass() {
        let p = trace("fit.txt", (0..3).flat_map(|_| 0..5_000u64));
        let r = replay_kernel(&opts(&p, 20_000, false)).unwrap();
        assert_eq!(r.stats.misses, 5_000);
        assert_eq!(counter(&r, "workingset_refault_file"), 0);
    }

    #[test]
    fn readahead_turns_sequential_misses_into_hits() {
        let p = trace("seq.txt", 0..20_000u64);
        let off = replay_kernel(&opts(&p, 40_000, false)).unwrap();
        let on = replay_kernel(&opts(&p, 40_000, true)).unwrap();
        assert_eq!(off.stats.misses, 20_000);
        assert!(on.stats.misses < 20_000 / 8, "{on:?}");
        // Both read the whole file from the disk once.
        assert_eq!(counter(&off, "pgpgin"), 20_000 * 4);
        assert!(counter(&on, "pgpgin") >= 20_000 * 4);
    }

    /// Zipf(alpha) draws over `pages` ids, seeded (splitmix64; ranks scattered by a seeded
    /// permutation).
    fn zipf(requests: usize, pages: u64, alpha: f64, seed: u64) -> Vec<u64> {
        let mut x = seed;
        let mut next = move || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut cdf = Vec::with_capacity(pages as usize);
        let mut sum = 0.0;
        for r in 0..pages {
            sum += 1.0 / ((r + 1) as f64).powf(alpha);
            cdf.push(sum);
        }
        let mut perm: Vec<u64> = (0..pages).collect();
        for i in (1..perm.len()).rev() {
            perm.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        (0..requests)
            .map(|_| {
                let u = (next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * sum;
                perm[cdf.partition_point(|&c| c <= u).min(pages as usize - 1)]
            })
            .collect()
    }

    /// FNV-1a of a text: a short pin of a whole /proc/vmstat.
    fn fnv(s: &str) -> u64 {
        s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
    }

    /// The kernel policy's results on small Zipf traces, pinned: the miss count, the
    /// simulated time and every /proc/vmstat counter at the end. Work done to make the replay
    /// faster must leave all of them as they are (a deliberate change of the model updates
    /// the pins, and says why).
    #[test]
    fn kernel_policy_results_are_pinned() {
        let p = trace("zipf-pin.txt", zipf(200_000, 50_000, 0.9, 7).into_iter());
        let r = replay_kernel(&opts(&p, 12_500, false)).unwrap();
        let got = (r.stats.misses, r.sim_ns, r.peak_cache_pages, fnv(&r.vmstat_end));
        assert_eq!(got, (58044, 5100679304, 11602, 10187834019144312454), "{}", r.vmstat_end);
        // The idle system's own page cache and anonymous memory compete (kswapd reclaims
        // both, the anonymous part to swap), readahead on.
        let p = trace("zipf-pin-ra.txt", zipf(100_000, 40_000, 0.9, 8).into_iter());
        let o = KernelReplay { sets: Vec::new(), ..opts(&p, 90_000, true) };
        let r = replay_kernel(&o).unwrap();
        let got = (r.stats.misses, r.sim_ns, r.peak_cache_pages, fnv(&r.vmstat_end));
        // (Pinned again when the per-CPU lists came to hold frames: nr_free_pages 9,242,
        // was 9,192; every other counter, the misses and the time unchanged. And when the
        // swap cache's trees got their nodes: the idle system's swapped pages keep their
        // shadows there, two more radix_tree_node slabs: nr_free_pages 9,234,
        // nr_slab_reclaimable 484 (was 476), pgalloc_normal 25,431 (was 25,423); the rest
        // unchanged. And when readahead got its history lookup, try_context_readahead: a
        // miss just after cached pages reads a window sized by them, so neighbours of hot
        // pages come in with them: 24,349 misses, was 25,149; the file's peak 24,164
        // pages, was 21,518. And when the async mark became PG_readahead on the page: a
        // request reaching another window's mark starts a window after the cached run:
        // 24,038 misses, the peak 25,490 pages.)
        assert_eq!(got, (24038, 2144277034, 25490, 5890072578526937016), "{}", r.vmstat_end);
    }

    #[test]
    fn ids_beyond_one_file_are_refused() {
        let p = trace("big.txt", [1u64, 1 << 40].into_iter());
        let e = replay_kernel(&opts(&p, 1000, false)).unwrap_err().message;
        assert!(e.contains("big.txt: request 2: object id 1099511627776 is too large for --policy kernel"), "{e}");
    }
}
