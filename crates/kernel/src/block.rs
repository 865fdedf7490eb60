//! Block devices and requests (block/, drivers/). A device serves requests one after
//! another at its transfer rate per direction; a request that does not continue the
//! previous one costs a seek on rotational media; a fixed per-request latency overlaps with
//! the next transfer (the device has a queue) -- except on a write-through device
//! (`write_through`), where a write starts only when the previous one is committed.
//! Completion times follow at submission, so
//! waiting for I/O is sleeping until a known time. Reads and writes have their own latency
//! (a virtio write goes through the host's write-through path), so a read submitted after
//! a write can complete first: requests complete in completion-time order, not in
//! submission order (blk_mq_complete_request per request).
//!
//! The block layer knows devices and requests only: `Block::submit` returns a request's
//! completion time, `Block::complete` returns what completed; the kernel schedules the
//! completion event and does the page-cache work (kernel.rs: submit_bio, io_done).

use memtwin_engine::{Ns, TaskId, NS_PER_SEC};
use memtwin_machine::Disk;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Read = 0,
    Write = 1,
}

/// What completing a request does to pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqKind {
    /// Page-cache read of `n` pages of `mapping` from `index`: the pages become uptodate.
    PageRead { mapping: u32, index: u64, n: u32 },
    /// Writeback of `n` pages: PG_writeback is cleared.
    Writeback { mapping: u32, index: u64, n: u32 },
    /// O_DIRECT transfer: nothing to do to the page cache.
    Direct,
    /// Swap-out of `n` contiguous swap slots.
    SwapOut { slot: u32, n: u32 },
    /// Swap-in of `n` contiguous swap slots into the swap cache.
    SwapIn { slot: u32, n: u32 },
}

#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub dev: u32,
    pub dir: Dir,
    pub bytes: u64,
    pub kind: ReqKind,
    pub done_at: Ns,
    pub task: Option<TaskId>,
    pub live: bool,
    /// When the request entered the block layer (blk_account_io_start).
    pub start: Ns,
    /// Submission order (1, 2, ...): a waiter for writeback "submitted so far" remembers
    /// the last sequence number it covers (the request slot `id` is reused, this is not).
    pub seq: u64,
}

/// A device's I/O accounting as the kernel keeps it (struct disk_stats, block/blk-core.c
/// and block/genhd.c diskstats_show): per direction (read, write, discard, flush) the
/// requests completed, bios merged into them, 512-byte sectors and the time requests spent
/// in the block layer; the requests in flight, the time with at least one in flight
/// (io_ticks) and the sum of all requests' times (time_in_queue).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStats {
    pub ios: [u64; 4],
    /// The model builds each request whole (a submitter's bio is already the request), so no
    /// bio is merged into a queued one: these stay 0.
    pub merges: [u64; 4],
    pub sectors: [u64; 4],
    /// Time from start to completion summed over requests, ns (stat.nsecs[]).
    pub nsecs: [u64; 4],
    /// Time with at least one request in flight up to `io_ticks_stamp`, ns.
    pub io_ticks: u64,
    pub io_ticks_stamp: Ns,
}

pub struct BlockDevice {
    pub disk: Disk,
    /// The block device's page cache (Buffers).
    pub mapping: u32,
    pub flusher: Option<TaskId>,
    /// When the device finishes what it has been given.
    pub busy_until: Ns,
    /// When the last write is committed (write-through devices).
    pub write_done: Ns,
    /// Byte position after the last request (sequential detection).
    pub last_end: u64,
    /// Completion times of requests in flight, earliest first (not submission order).
    pub inflight: VecDeque<Ns>,
    /// Block-layer request slots (queue/nr_requests); submitters sleep when all are taken.
    pub nr_requests: u32,
    /// Sectors and requests completed (/proc/diskstats).
    pub bytes_done: [u64; 2],
    pub ios_done: [u64; 2],
    /// Busy time integral for utilisation.
    pub busy_ns: u64,
    /// /proc/diskstats accounting.
    pub stats: DiskStats,
    /// Write bandwidth estimate for dirty throttling (wb->avg_write_bandwidth), bytes/s.
    pub avg_write_bw: f64,
    pub bw_stamp: Ns,
    pub bw_written: u64,
    /// Where the filesystem allocates the next file's data.
    pub alloc_cursor: u64,
}

#[derive(Default)]
pub struct Block {
    pub devs: Vec<BlockDevice>,
    pub reqs: Vec<Request>,
    free_reqs: Vec<u32>,
    /// Live read requests (page-cache and swap-in): few, searched when a reader finds a
    /// page locked.
    pub reads: Vec<u32>,
    /// Requests submitted so far (the last `Request::seq`).
    pub submitted: u64,
}

/// Initial bandwidth estimate (INIT_BW in mm/page-writeback.c: 100 MB/s).
pub const INIT_BW: f64 = 100.0 * 1024.0 * 1024.0;

impl Block {
    pub fn add(&mut self, disk: Disk, mapping: u32) -> u32 {
        let nr_requests = (disk.model.queue_depth * 2).max(32);
        self.devs.push(BlockDevice {
            disk,
            mapping,
            flusher: None,
            busy_until: 0,
            write_done: 0,
            last_end: 0,
            inflight: VecDeque::with_capacity(256),
            nr_requests,
            bytes_done: [0; 2],
            ios_done: [0; 2],
            busy_ns: 0,
            stats: DiskStats::default(),
            avg_write_bw: INIT_BW,
            bw_stamp: 0,
            bw_written: 0,
            // Leave the first MiB for the partition table and superblock.
            alloc_cursor: 1 << 20,
        });
        (self.devs.len() - 1) as u32
    }

    pub fn find(&self, name: &str) -> Option<u32> {
        self.devs.iter().position(|d| d.disk.name == name).map(|i| i as u32)
    }

    /// Requests in flight that cover page `index` of `mapping` (a read in progress).
    pub fn read_completion(&self, mapping: u32, index: u64) -> Option<Ns> {
        self.reads
            .iter()
            .map(|&i| &self.reqs[i as usize])
            .filter_map(|r| match r.kind {
                ReqKind::PageRead { mapping: m, index: i, n } if m == mapping && index >= i && index < i + n as u64 => Some(r.done_at),
                _ => None,
            })
            .min()
    }
    /// When the last in-flight writeback of `mapping` completes.
    pub fn writeback_completion(&self, mapping: u32) -> Option<Ns> {
        self.reqs
            .iter()
            .filter(|r| r.live)
            .filter_map(|r| match r.kind {
                ReqKind::Writeback { mapping: m, .. } if m == mapping => Some(r.done_at),
                _ => None,
            })
            .max()
    }
    /// Is writeback of `mapping` (any mapping: None) submitted at or before sequence `upto`
    /// still in flight? (what filemap_fdatawait_range finds under PG_writeback)
    pub fn writeback_in_flight(&self, mapping: Option<u32>, upto: u64) -> bool {
        self.reqs.iter().any(|r| {
            r.live
                && r.seq <= upto
                && matches!(r.kind, ReqKind::Writeback { mapping: m, .. } if mapping.is_none_or(|x| x == m))
        })
    }
    /// Is a direct transfer of `task` submitted at or before sequence `upto` still in
    /// flight? (what the O_DIRECT submitter's wait finds: blk_wait_io / the iomap dio wait)
    pub fn direct_in_flight(&self, task: TaskId, upto: u64) -> bool {
        self.reqs.iter().any(|r| r.live && r.seq <= upto && r.task == Some(task) && matches!(r.kind, ReqKind::Direct))
    }
    /// When the last of those completes.
    pub fn direct_completion(&self, task: TaskId, upto: u64) -> Option<Ns> {
        self.reqs
            .iter()
            .filter(|r| r.live && r.seq <= upto && r.task == Some(task) && matches!(r.kind, ReqKind::Direct))
            .map(|r| r.done_at)
            .max()
    }
    /// Is any request in flight?
    pub fn any_in_flight(&self) -> bool {
        self.devs.iter().any(|d| !d.inflight.is_empty())
    }
    /// The earliest completion of any in-flight request.
    pub fn next_completion(&self) -> Option<Ns> {
        self.devs.iter().filter_map(|d| d.inflight.front().copied()).min()
    }
}

impl BlockDevice {
    /// All request slots are taken: a submitter would sleep in get_request.
    pub fn congested(&self) -> bool {
        self.inflight.len() as u32 >= self.nr_requests
    }
    /// When a request slot frees up.
    pub fn slot_free_at(&self) -> Ns {
        let k = self.inflight.len().saturating_sub(self.nr_requests as usize);
        self.inflight.get(k).copied().unwrap_or(0)
    }
    /// update_io_ticks (block/blk-core.c, 5.0+; part_round_stats before): time passes with
    /// `inflight` requests in the block layer; io_ticks counts it when one or more are.
    fn update_io_ticks(&mut self, now: Ns) {
        if !self.inflight.is_empty() {
            self.stats.io_ticks += now.saturating_sub(self.stats.io_ticks_stamp);
        }
        self.stats.io_ticks_stamp = now;
    }
    /// The counters as /proc/diskstats shows them at `now` (diskstats_show brings io_ticks
    /// up to date when requests are in flight).
    pub fn stats_at(&self, now: Ns) -> DiskStats {
        let mut s = self.stats;
        if !self.inflight.is_empty() {
            s.io_ticks += now.saturating_sub(s.io_ticks_stamp);
        }
        s.io_ticks_stamp = now;
        s
    }
    fn bw(&self, dir: Dir) -> f64 {
        match dir {
            Dir::Read => self.disk.model.read_bw,
            Dir::Write => self.disk.model.write_bw,
        }
    }
}

/// What a completed request leaves for the kernel to do (end_io): the request as submitted.
pub type Completion = Request;

impl Block {
    /// Queue one request at byte offset `pos` of device `dev` at time `now`; returns its id
    /// and its completion time. The caller schedules the completion event.
    pub fn submit(&mut self, now: Ns, dev: u32, dir: Dir, pos: u64, bytes: u64, kind: ReqKind, task: Option<TaskId>) -> (u32, Ns) {
        let d = &mut self.devs[dev as usize];
        d.update_io_ticks(now);
        let mut service = (bytes as f64 / d.bw(dir) * NS_PER_SEC as f64) as Ns;
        if d.disk.model.rotational && pos != d.last_end {
            service += d.disk.model.seek_ns;
        }
        let through = dir == Dir::Write && d.disk.model.write_through;
        // A write-through device starts a write only once the previous one is committed:
        // the writes' per-request latency is in series with their transfers. Reads go on
        // meanwhile (served while a write commits).
        let start = if through { d.busy_until.max(d.write_done).max(now) } else { d.busy_until.max(now) };
        d.busy_until = start + service;
        d.busy_ns += service;
        d.last_end = pos + bytes;
        let latency = match dir {
            Dir::Read => d.disk.model.latency_ns,
            Dir::Write => d.disk.model.write_latency_ns,
        };
        let done_at = d.busy_until + latency;
        if through {
            // The commit is device time too (busy, utilisation).
            d.write_done = done_at;
            d.busy_ns += latency;
        }
        let at = d.inflight.partition_point(|&t| t <= done_at);
        d.inflight.insert(at, done_at);
        self.submitted += 1;
        let req = Request { dev, dir, bytes, kind, done_at, task, live: true, start: now, seq: self.submitted };
        let id = match self.free_reqs.pop() {
            Some(i) => {
                self.reqs[i as usize] = req;
                i
            }
            None => {
                self.reqs.push(req);
                (self.reqs.len() - 1) as u32
            }
        };
        if matches!(kind, ReqKind::PageRead { .. } | ReqKind::SwapIn { .. }) {
            self.reads.push(id);
        }
        (id, done_at)
    }

    /// Request `id` completed at `now` (blk_mq_complete_request): the device's accounting;
    /// returns the request for the kernel's end_io work.
    pub fn complete(&mut self, id: u32, now: Ns) -> Completion {
        let r = self.reqs[id as usize];
        self.reqs[id as usize].live = false;
        self.free_reqs.push(id);
        if let Some(i) = self.reads.iter().position(|&x| x == id) {
            self.reads.swap_remove(i);
        }
        let d = &mut self.devs[r.dev as usize];
        d.update_io_ticks(now);
        // This request's completion, wherever it is among those in flight.
        match d.inflight.binary_search(&r.done_at) {
            Ok(i) => {
                d.inflight.remove(i);
            }
            Err(_) => debug_assert!(false, "completed request not in flight"),
        }
        d.bytes_done[r.dir as usize] += r.bytes;
        d.ios_done[r.dir as usize] += 1;
        // blk_account_io_done: one more request of its direction, its sectors and its time.
        let st = &mut d.stats;
        st.ios[r.dir as usize] += 1;
        st.sectors[r.dir as usize] += r.bytes / 512;
        st.nsecs[r.dir as usize] += now.saturating_sub(r.start);
        let wrote = match r.kind {
            ReqKind::Writeback { .. } => true,
            ReqKind::Direct => r.dir == Dir::Write,
            _ => false,
        };
        if wrote {
            self.note_written(r.dev, r.bytes, now);
        }
        r
    }

    /// wb_update_write_bandwidth: a running average over ~3 s of the measured write rate,
    /// updated every 200 ms while writeback is going on.
    fn note_written(&mut self, dev: u32, bytes: u64, now: Ns) {
        let d = &mut self.devs[dev as usize];
        d.bw_written += bytes;
        let elapsed = now.saturating_sub(d.bw_stamp);
        const INTERVAL: Ns = NS_PER_SEC / 5;
        const PERIOD: f64 = 3.0 * NS_PER_SEC as f64;
        if elapsed < INTERVAL {
            return;
        }
        if elapsed <= NS_PER_SEC {
            let bw = d.bw_written as f64 / (elapsed as f64 / NS_PER_SEC as f64);
            let e = elapsed as f64;
            d.avg_write_bw = (bw * e + d.avg_write_bw * (PERIOD - e)) / PERIOD;
        }
        d.bw_stamp = now;
        d.bw_written = 0;
    }
}
