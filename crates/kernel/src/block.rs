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

/// `ReqKind::Direct`'s inode for a transfer on a raw block device.
pub const NO_INODE: u32 = u32::MAX;

/// What completing a request does to pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqKind {
    /// Page-cache read of `n` pages of `mapping` from `index`: the pages become uptodate.
    PageRead { mapping: u32, index: u64, n: u32 },
    /// Writeback of `n` pages: PG_writeback is cleared.
    Writeback { mapping: u32, index: u64, n: u32 },
    /// O_DIRECT transfer: nothing to do to the page cache. `ino`: the file's inode
    /// (inode_dio_begin: truncate waits for it, inode_dio_wait), NO_INODE for a raw device.
    Direct { ino: u32 },
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
    /// The elevator's priority class of the request (its submitter's I/O priority).
    pub class: crate::ioprio::IoClass,
    /// Byte offset on the device, the transfer time (seek included) and when the device
    /// starts it: kept while the request waits so that the elevator can move it.
    pub pos: u64,
    pub service: Ns,
    pub begin: Ns,
}

/// The I/O scheduler of a device and what it does with I/O priorities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elevator {
    /// none / noop / 2.4's elevator / bio-based drivers: first come, first served.
    Fifo,
    /// mq-deadline since 5.14 (block/mq-deadline.c dd_dispatch_request): the queued
    /// requests of the best class (RT, then BE, then IDLE) are dispatched first; a request
    /// waiting longer than prio_aging_expire (10 s) goes before better classes
    /// (dd_dispatch_prio_aged_requests).
    MqDeadlinePrio,
    /// CFQ (2.6.39 block/cfq-iosched.c): RT queues are served before BE, BE before IDLE
    /// (cfq_choose_wl, cfq_serv_tree); the idle class only when no other queue has I/O.
    /// The per-level time slices within a class (cfq_prio_slice) are not modelled.
    Cfq,
}

/// mq-deadline's prio_aging_expire default (10 s).
pub const PRIO_AGING_EXPIRE: Ns = 10 * NS_PER_SEC;

/// The default elevator of a disk (elevator_get_default; 2.6.39's CONFIG_DEFAULT_IOSCHED
/// cfq): `none` for bio-based RAM disks and multi-queue devices (NVMe, virtio-blk with a
/// queue per vCPU, xen-blkfront), mq-deadline for single-queue ones on blk-mq kernels.
/// Returns the /sys/block/DEV/queue/scheduler line and the active elevator's name.
pub fn default_elevator(kernel: memtwin_machine::KernelProfile, cpus: u32, name: &str) -> (&'static str, &'static str) {
    use memtwin_machine::KernelProfile as P;
    if name.starts_with("ram") {
        return ("none\n", "none");
    }
    match kernel {
        P::Linux24 => ("", ""),
        P::Linux2639 => ("noop deadline [cfq] \n", "cfq"),
        _ => {
            let multi = name.starts_with("nvme") || ((name.starts_with("vd") || name.starts_with("xvd")) && cpus > 1);
            if multi { ("[none] mq-deadline \n", "none") } else { ("none [mq-deadline] \n", "mq-deadline") }
        }
    }
}

/// What the active elevator does with priorities: mq-deadline reads them from 5.14 on
/// (the 6.x profile); the 5.x profiles' mq-deadline, none and noop do not.
pub fn elevator_for(kernel: memtwin_machine::KernelProfile, active: &str) -> Elevator {
    use memtwin_machine::KernelProfile as P;
    match (kernel, active) {
        (P::Linux6, "mq-deadline") => Elevator::MqDeadlinePrio,
        (P::Linux2639, "cfq") => Elevator::Cfq,
        _ => Elevator::Fifo,
    }
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
    pub elevator: Elevator,
    /// Requests the device has not started yet, in the order it will serve them, each with
    /// the device state before it (busy_until, write_done, last_end).
    pub queued: Vec<(u32, [u64; 3])>,
    /// Live requests (queued or in flight) of a class other than best effort.
    pub nonbe_live: u32,
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
            elevator: Elevator::Fifo,
            queued: Vec::new(),
            nonbe_live: 0,
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
        self.reqs.iter().any(|r| {
            r.live
                && r.seq <= upto
                && r.task == Some(task)
                && matches!(r.kind, ReqKind::Direct { .. })
        })
    }
    /// Is a direct transfer on inode `ino` submitted at or before sequence `upto` still in
    /// flight, whoever submitted it? (inode->i_dio_count, which inode_dio_wait waits for)
    pub fn dio_in_flight(&self, ino: u32, upto: u64) -> bool {
        self.reqs.iter().any(|r| {
            r.live && r.seq <= upto && matches!(r.kind, ReqKind::Direct { ino: i } if i == ino)
        })
    }
    /// When the last of those completes.
    pub fn dio_completion(&self, ino: u32) -> Option<Ns> {
        self.reqs
            .iter()
            .filter(|r| r.live && matches!(r.kind, ReqKind::Direct { ino: i } if i == ino))
            .map(|r| r.done_at)
            .max()
    }
    /// When the last of those completes.
    pub fn direct_completion(&self, task: TaskId, upto: u64) -> Option<Ns> {
        self.reqs
            .iter()
            .filter(|r| {
                r.live
                    && r.seq <= upto
                    && r.task == Some(task)
                    && matches!(r.kind, ReqKind::Direct { .. })
            })
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
    /// When the first congested queue frees a slot: clear_bdi_congested then wakes the
    /// sleepers of congestion_wait (2.6.x request queues). None: no queue is congested, so
    /// nothing cuts such a sleep short.
    pub fn congestion_clears_at(&self) -> Option<Ns> {
        self.devs.iter().filter(|d| d.congested()).filter_map(|d| d.inflight.front().copied()).min()
    }
}

impl BlockDevice {
    /// All request slots are taken: a submitter would sleep in get_request.
    pub fn congested(&self) -> bool {
        self.inflight.len() as u32 >= self.nr_requests
    }
    /// How many pages the free request slots take at most, one request of
    /// max_request_bytes each (at least one request: a caller that found the queue not
    /// congested may always submit one).
    pub fn free_slot_pages(&self) -> u64 {
        let free = (self.nr_requests as u64).saturating_sub(self.inflight.len() as u64).max(1);
        free * (self.disk.model.max_request_bytes / crate::mm::PAGE_SIZE).max(1)
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
    /// Queue one request at byte offset `pos` of device `dev` at time `now`, at best-effort
    /// priority; returns its id and its completion time. The caller schedules the
    /// completion event.
    pub fn submit(&mut self, now: Ns, dev: u32, dir: Dir, pos: u64, bytes: u64, kind: ReqKind, task: Option<TaskId>) -> (u32, Ns) {
        let (id, done_at, _) = self.submit_prio(now, dev, dir, pos, bytes, kind, task, crate::ioprio::IoClass::Be);
        (id, done_at)
    }

    /// `submit` with the request's priority class; the third value lists the requests the
    /// elevator moved behind this one (id, old and new completion times).
    #[allow(clippy::too_many_arguments)]
    pub fn submit_prio(&mut self, now: Ns, dev: u32, dir: Dir, pos: u64, bytes: u64, kind: ReqKind, task: Option<TaskId>, class: crate::ioprio::IoClass) -> (u32, Ns, Vec<(u32, Ns, Ns)>) {
        self.devs[dev as usize].update_io_ticks(now);
        self.submitted += 1;
        let req = Request { dev, dir, bytes, kind, done_at: 0, task, live: true, start: now, seq: self.submitted, class, pos, service: 0, begin: 0 };
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
        // Requests the device has started are no longer the elevator's.
        let reqs = &self.reqs;
        let d = &mut self.devs[dev as usize];
        let started = d.queued.iter().take_while(|(q, _)| reqs[*q as usize].begin <= now).count();
        d.queued.drain(..started);
        // Where the elevator puts it: behind every queued request of its class or a better
        // one, and behind those of worse classes that have waited past the aging limit.
        let at = match d.elevator {
            Elevator::Fifo => d.queued.len(),
            Elevator::MqDeadlinePrio | Elevator::Cfq => {
                let aging = d.elevator == Elevator::MqDeadlinePrio;
                d.queued
                    .iter()
                    .position(|(q, _)| {
                        let r = &reqs[*q as usize];
                        r.class > class && !(aging && now.saturating_sub(r.start) >= PRIO_AGING_EXPIRE)
                    })
                    .unwrap_or(d.queued.len())
            }
        };
        let state = match d.queued.get(at) {
            Some((_, st)) => *st,
            None => [d.busy_until, d.write_done, d.last_end],
        };
        d.queued.insert(at, (id, state));
        if class != crate::ioprio::IoClass::Be {
            d.nonbe_live += 1;
        }
        // A class is dispatched only once no request of a better class is queued or in
        // flight (dd_dispatch_request stops at the first class with dd_queued() != 0, and
        // that count runs until completion; CFQ serves an idle queue only when no other
        // queue is busy): the latest completion of each class's requests that stay where
        // they are.
        let prio = d.elevator != Elevator::Fifo && (d.nonbe_live > 0);
        let aging = d.elevator == Elevator::MqDeadlinePrio;
        let mut last_done = [0 as Ns; 4];
        if prio {
            let moving: Vec<u32> = d.queued[at..].iter().map(|(q, _)| *q).collect();
            for (i, r) in self.reqs.iter().enumerate() {
                if r.live && r.dev == dev && !moving.contains(&(i as u32)) {
                    let c = r.class as usize;
                    last_done[c] = last_done[c].max(r.done_at);
                }
            }
        }
        // Serve the queue from there on: this request, then those it went ahead of.
        let mut moved = Vec::new();
        let mut st = state;
        for k in at..d.queued.len() {
            let q = d.queued[k].0;
            d.queued[k].1 = st;
            let r = &mut self.reqs[q as usize];
            let c = r.class as usize;
            let hold = if prio && !(aging && now.saturating_sub(r.start) >= PRIO_AGING_EXPIRE) { last_done[..c].iter().copied().max().unwrap_or(0) } else { 0 };
            let (old_service, old_done) = (r.service, r.done_at);
            let mut service = (r.bytes as f64 / d.bw(r.dir) * NS_PER_SEC as f64) as Ns;
            if d.disk.model.rotational && r.pos != st[2] {
                service += d.disk.model.seek_ns;
            }
            let through = r.dir == Dir::Write && d.disk.model.write_through;
            // A write-through device starts a write only once the previous one is
            // committed: the writes' per-request latency is in series with their transfers.
            // Reads go on meanwhile (served while a write commits).
            let begin = if through { st[0].max(st[1]).max(now) } else { st[0].max(now) }.max(hold);
            let end = begin + service;
            let latency = match r.dir {
                Dir::Read => d.disk.model.latency_ns,
                Dir::Write => d.disk.model.write_latency_ns,
            };
            let done_at = end + latency;
            d.busy_ns = d.busy_ns + service - old_service;
            if through {
                // The commit is device time too (busy, utilisation).
                d.busy_ns += latency;
                if q != id {
                    d.busy_ns -= latency;
                }
                st[1] = done_at;
            }
            st[0] = end;
            st[2] = r.pos + r.bytes;
            r.service = service;
            r.begin = begin;
            r.done_at = done_at;
            last_done[c] = last_done[c].max(done_at);
            if q != id {
                if let Ok(i) = d.inflight.binary_search(&old_done) {
                    d.inflight.remove(i);
                }
                moved.push((q, old_done, done_at));
            }
            let i = d.inflight.partition_point(|&t| t <= done_at);
            d.inflight.insert(i, done_at);
        }
        d.busy_until = st[0];
        d.write_done = st[1];
        d.last_end = st[2];
        let done_at = self.reqs[id as usize].done_at;
        (id, done_at, moved)
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
        if r.class != crate::ioprio::IoClass::Be {
            d.nonbe_live -= 1;
        }
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
            ReqKind::Direct { .. } => r.dir == Dir::Write,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ioprio::IoClass::{Be, Idle, Rt};
    use memtwin_machine::{DeviceModel, Disk};

    /// An O_DIRECT transfer on the raw device (no file).
    const RAW: ReqKind = ReqKind::Direct { ino: NO_INODE };

    fn device(elevator: Elevator) -> Block {
        let model = DeviceModel::preset("sata-ssd").expect("preset");
        let mut b = Block::default();
        let d = b.add(Disk { name: "sda".into(), major: 8, minor: 0, size_bytes: 1 << 40, model, read_ahead_kb: 128 }, 0);
        b.devs[d as usize].elevator = elevator;
        b
    }

    /// Five reads submitted at time 0 in the order BE, BE, IDLE, RT, BE; the order in which
    /// the device starts them (ids 0..5).
    fn served(elevator: Elevator) -> Vec<u32> {
        let mut b = device(elevator);
        for (i, class) in [Be, Be, Idle, Rt, Be].into_iter().enumerate() {
            b.submit_prio(0, 0, Dir::Read, i as u64 * (1 << 30), 1 << 20, RAW, None, class);
        }
        let mut ids: Vec<u32> = (0..5).collect();
        ids.sort_by_key(|&i| b.reqs[i as usize].begin);
        ids
    }

    #[test]
    fn fifo_serves_in_submission_order() {
        assert_eq!(served(Elevator::Fifo), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn priority_elevators_serve_better_classes_first() {
        // Request 0 started at once; RT goes before the queued ones, the idle one last.
        for e in [Elevator::MqDeadlinePrio, Elevator::Cfq] {
            assert_eq!(served(e), vec![0, 3, 1, 4, 2], "{e:?}");
        }
    }

    #[test]
    fn an_idle_request_waits_for_better_ones_in_flight() {
        let mut b = device(Elevator::MqDeadlinePrio);
        let (_, be_done, _) = b.submit_prio(0, 0, Dir::Read, 0, 1 << 20, RAW, None, Be);
        let (idle, _, _) = b.submit_prio(0, 0, Dir::Read, 1 << 30, 4096, RAW, None, Idle);
        assert!(b.reqs[idle as usize].begin >= be_done, "dispatched only after the BE request completed");
    }

    #[test]
    fn mq_deadline_ages_a_starved_request() {
        // A long best-effort transfer holds an idle request back; 11 s later a new
        // best-effort request goes before it on CFQ but not on mq-deadline, where the idle
        // one has waited past prio_aging_expire.
        for (e, idle_first) in [(Elevator::MqDeadlinePrio, true), (Elevator::Cfq, false)] {
            let mut b = device(e);
            b.submit_prio(0, 0, Dir::Read, 0, 16 << 30, RAW, None, Be);
            let (idle, _, _) = b.submit_prio(0, 0, Dir::Read, 1 << 40, 4096, RAW, None, Idle);
            assert!(b.reqs[idle as usize].begin > 11 * NS_PER_SEC, "{e:?}: the transfer outlasts the aging limit");
            let (be, _, moved) = b.submit_prio(11 * NS_PER_SEC, 0, Dir::Read, 1 << 41, 4096, RAW, None, Be);
            assert_eq!(b.reqs[idle as usize].begin < b.reqs[be as usize].begin, idle_first, "{e:?}");
            assert_eq!(moved.is_empty(), idle_first, "{e:?}");
        }
    }

    #[test]
    fn moved_requests_report_their_new_completion() {
        let mut b = device(Elevator::MqDeadlinePrio);
        b.submit_prio(0, 0, Dir::Read, 0, 1 << 20, RAW, None, Be);
        let (q, old, _) = b.submit_prio(0, 0, Dir::Read, 1 << 30, 1 << 20, RAW, None, Be);
        let (_, _, moved) = b.submit_prio(0, 0, Dir::Read, 1 << 31, 1 << 20, RAW, None, Rt);
        assert_eq!(moved.len(), 1);
        assert_eq!((moved[0].0, moved[0].1), (q, old));
        assert!(moved[0].2 > old);
        assert_eq!(b.reqs[q as usize].done_at, moved[0].2);
        assert_eq!(b.devs[0].inflight.len(), 3);
    }
}
