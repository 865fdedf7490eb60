//! Dirty page accounting, throttling and writeback (mm/page-writeback.c, fs/fs-writeback.c).

use super::page::Lru;
use super::{Slot, PAGE_SIZE};
use crate::block::{Dir, ReqKind};
use crate::task::{Program, Step};
use crate::Kernel;
use memtwin_engine::{Ns, TaskId, NS_PER_MS, NS_PER_SEC};

/// Largest pause balance_dirty_pages imposes at once (MAX_PAUSE = HZ/5).
const MAX_PAUSE: Ns = 200 * NS_PER_MS;
/// Pages the flusher writes from one inode before moving on (MAX_WRITEBACK_PAGES).
const MAX_WRITEBACK_PAGES: u64 = 1024;
/// Linux 2.4: buffers write_some_buffers() starts at a time (NRSYNC in fs/buffer.c).
const NRSYNC_24: u64 = 32;
/// Linux 2.4 counts bdflush's interval and age in jiffies of HZ = 100.
const JIFFY_24: Ns = 10 * NS_PER_MS;

/// Dirty limits in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtyLimits {
    pub background: u64,
    pub thresh: u64,
}

impl Kernel {
    /// global_dirtyable_memory: free pages plus file LRU pages, less the reserves (3.14+).
    /// 2.6.39's determine_dirtyable_memory: free pages plus global_reclaimable_pages (the
    /// anon LRU too while swap has room), no reserve.
    pub fn dirtyable_memory(&self) -> u64 {
        let free = self.mm.nr_free();
        let file = self.mm.lru_len(Lru::InactiveFile) + self.mm.lru_len(Lru::ActiveFile);
        if self.profile.dirtyable_counts_anon {
            let anon = if self.swap_available() { self.mm.lru_len(Lru::InactiveAnon) + self.mm.lru_len(Lru::ActiveAnon) } else { 0 };
            return free + file + anon + 1;
        }
        let reserve = self.mm.wmark.high;
        free.saturating_sub(reserve) + file
    }

    /// 2.4.10+'s nr_free_buffer_pages: over the zones a GFP_USER allocation may use (Normal
    /// and DMA, not HighMem), each zone's size less its pages_high. A constant of the
    /// machine — "of all memory", as the bdflush percentages were explained — not of
    /// what is free.
    pub(crate) fn nr_free_buffer_pages_24(&self) -> u64 {
        let [dma, normal, _] = super::page_alloc::zones_24(self.machine.ram_bytes);
        [dma, normal].iter().map(|&z| z.saturating_sub(3 * super::page_alloc::zone_pages_min_24(z))).sum()
    }

    /// domain_dirty_limits: the background and throttling thresholds from the ratios or the
    /// byte settings; 2.4's bdflush percentages on the linux-2.4 profile.
    pub fn dirty_limits(&self) -> DirtyLimits {
        let s = &self.sysctl;
        if self.profile.bdflush {
            // balance_dirty_state(): above nfract% of nr_free_buffer_pages() dirty buffers
            // the writer starts write-out itself; above nfract_sync% it also waits and wakes
            // bdflush.
            let avail = self.nr_free_buffer_pages_24();
            let b = s.bdflush;
            return DirtyLimits {
                background: avail * b.nfract().clamp(0, 100) as u64 / 100,
                thresh: avail * b.nfract_sync().clamp(0, 100) as u64 / 100,
            };
        }
        let avail = self.dirtyable_memory();
        let mut thresh = if s.dirty_bytes > 0 { s.dirty_bytes.div_ceil(PAGE_SIZE) } else { avail * s.dirty_ratio as u64 / 100 };
        let mut bg = if s.dirty_background_bytes > 0 {
            s.dirty_background_bytes.div_ceil(PAGE_SIZE)
        } else {
            avail * s.dirty_background_ratio as u64 / 100
        };
        if bg >= thresh {
            bg = thresh / 2;
        }
        thresh = thresh.max(1);
        DirtyLimits { background: bg, thresh }
    }

    /// Tasks that dirtied pages in the last 200 ms (the writers sharing the bandwidth).
    fn nr_dirtiers(&self) -> u64 {
        let since = self.now.saturating_sub(200 * NS_PER_MS);
        self.tasks.iter().filter(|t| t.exit_code.is_none() && t.last_dirtied >= since && t.last_dirtied > 0).count().max(1) as u64
    }

    /// balance_dirty_pages: called after a task dirtied pages. Returns how long it must
    /// pause. Below the midpoint of the background and hard thresholds (freerun) writers are
    /// not throttled; above it they are paused so that the dirty rate follows the device's
    /// write bandwidth, scaled by pos_ratio (1 at the setpoint, 0 at the limit).
    pub fn balance_dirty_pages(&mut self, tid: TaskId) -> Option<Ns> {
        if self.profile.bdflush {
            return self.balance_dirty_24(tid);
        }
        let lim = self.dirty_limits();
        let dirty = self.mm.stat.dirty + self.mm.stat.writeback;
        if self.mm.stat.dirty > lim.background {
            self.wakeup_flusher_threads();
        }
        let freerun = (lim.background + lim.thresh) / 2;
        let pages = std::mem::take(&mut self.tasks[tid as usize].nr_dirtied);
        if dirty <= freerun {
            return None;
        }
        let limit = lim.thresh.max(freerun + 1);
        let setpoint = (freerun + limit) / 2;
        // pos_ratio_polynom: 1 + ((setpoint - dirty) / (limit - setpoint))^3, in [0, 2].
        let x = (setpoint as f64 - dirty as f64) / ((limit - setpoint) as f64 + 1.0);
        let pos_ratio = (1.0 + x * x * x).clamp(0.0, 2.0);
        // The bandwidth the task's bdi writes at, shared by the concurrent dirtiers
        // (the balanced dirty_ratelimit converges to write_bw / N).
        let bw_pages = self.dirty_bdi_bw() / PAGE_SIZE as f64 / self.nr_dirtiers() as f64;
        let rate = bw_pages * pos_ratio;
        let pause = if rate <= 1.0 || dirty >= limit {
            MAX_PAUSE
        } else {
            ((pages as f64 / rate) * NS_PER_SEC as f64) as Ns
        };
        Some(pause.clamp(NS_PER_MS / 2, MAX_PAUSE))
    }

    /// The write bandwidth estimate of the device most writers write to.
    fn dirty_bdi_bw(&self) -> f64 {
        self.block
            .devs
            .iter()
            .filter(|d| d.flusher.is_some())
            .map(|d| d.avg_write_bw)
            .fold(0.0, f64::max)
            .max(1.0)
    }

    /// Linux 2.4 balance_dirty() (fs/buffer.c), run as buffers are dirtied.
    /// balance_dirty_state() compares the dirty buffers (BUF_DIRTY: not those already under
    /// I/O) with nfract% and nfract_sync% of nr_free_buffer_pages(). Above nfract the writer
    /// itself starts write-out of the oldest dirty buffers (write_some_buffers, NRSYNC for
    /// every buffer it dirtied: "I/O starts with the request", as seed 002 says); above
    /// nfract_sync it also waits for buffers under I/O (wait_for_some_buffers) and wakes
    /// bdflush. Submitting sleeps while the request queue is full (__get_request_wait):
    /// that is what paces a writer to the disk once it is past nfract.
    fn balance_dirty_24(&mut self, tid: TaskId) -> Option<Ns> {
        let pages = std::mem::take(&mut self.tasks[tid as usize].nr_dirtied);
        let lim = self.dirty_limits();
        let dirty = self.mm.stat.dirty;
        if dirty <= lim.background {
            return None;
        }
        let hard = dirty > lim.thresh;
        if hard {
            self.wakeup_flusher_threads();
        }
        let mut want = NRSYNC_24 * pages.max(1);
        let mut wait = None;
        while want > 0 {
            let Some(m) = self.oldest_dirty_inode(None) else { break };
            let Some(dev) = self.mm.mappings[m as usize].dev else { break };
            let d = &self.block.devs[dev as usize];
            if d.congested() {
                // __get_request_wait: every request is taken; sleep until one frees.
                wait = Some(d.slot_free_at().saturating_sub(self.now).max(1));
                break;
            }
            let n = self.writeback_mapping(m, want.min(d.free_slot_pages()), Some(tid));
            if n == 0 {
                break;
            }
            want -= n.min(want);
        }
        if hard && wait.is_none() {
            // wait_for_some_buffers: until the oldest buffers under I/O are written.
            wait = self.block.next_completion().map(|t| t.saturating_sub(self.now).max(1));
        }
        wait
    }

    /// The mapping at the head of the dirty list (optionally only if dirtied before `older`).
    pub fn oldest_dirty_inode(&mut self, older: Option<Ns>) -> Option<u32> {
        self.oldest_dirty_inode_on(None, older).map(|(_, m)| m)
    }

    /// The oldest dirty inode (optionally of device `dev`): (its position in the list, id).
    /// Stale entries (cleaned or re-dirtied inodes) are dropped on the way.
    pub fn oldest_dirty_inode_on(&mut self, dev: Option<u32>, older: Option<Ns>) -> Option<(usize, u32)> {
        let mut i = 0;
        while i < self.mm.dirty_inodes.len() {
            let (when, m) = self.mm.dirty_inodes[i];
            let s = &self.mm.mappings[m as usize];
            if !s.live || s.nr_dirty == 0 || s.dirtied_when != when {
                self.mm.dirty_inodes.remove(i);
                continue;
            }
            if dev.is_some() && s.dev != dev {
                i += 1;
                continue;
            }
            if let Some(o) = older {
                if when > o {
                    return None;
                }
            }
            return Some((i, m));
        }
        None
    }

    /// __filemap_fdatawrite (filemap_fdatawrite, filemap_flush): submit every dirty page of
    /// mapping `m`, from `tid` (None: no task pays), without waiting for the writes.
    pub fn filemap_fdatawrite(&mut self, m: u32, tid: Option<TaskId>) {
        while self.mm.mappings[m as usize].nr_dirty > 0 {
            if self.writeback_mapping(m, u64::MAX, tid) == 0 {
                break;
            }
        }
    }

    /// filemap_flush from a task that may sleep: submit the dirty pages of mapping `m` while
    /// its device has free request slots. A submitter that finds every slot taken sleeps in
    /// blk_mq_get_tag (get_request before blk-mq) until a request completes, then goes on
    /// submitting: true when nothing is left to submit, false when `tid` must wait for a
    /// slot (`WaitOn::FlushSubmit`) and call this again.
    pub fn filemap_flush_submit(&mut self, m: u32, tid: TaskId) -> bool {
        loop {
            let s = &self.mm.mappings[m as usize];
            let Some(dev) = s.dev.filter(|_| s.live && s.nr_dirty > 0) else { return true };
            let d = &self.block.devs[dev as usize];
            if d.congested() {
                return false;
            }
            if self.writeback_mapping(m, d.free_slot_pages(), Some(tid)) == 0 {
                return true;
            }
        }
    }

    /// writeback_single_inode / do_writepages: write up to `max` dirty pages of mapping `m`
    /// from its writeback cursor, as requests of contiguous pages. Pages go from dirty to
    /// writeback now and become clean when their request completes. Returns pages written.
    pub fn writeback_mapping(&mut self, m: u32, max: u64, tid: Option<TaskId>) -> u64 {
        let Some(dev) = self.mm.mappings[m as usize].dev else {
            return 0;
        };
        if let Some(&ino) = self.fs.by_mapping.get(&m) {
            // xfs_vm_writepages: xfs_iflags_clear(ip, XFS_ITRUNCATED) -- writeback has
            // begun, the release need not start it.
            let i = &mut self.fs.inodes[ino as usize];
            if i.flush_on_close && self.fs.mounts[i.mount as usize].fstype == "xfs" {
                i.flush_on_close = false;
            }
        }
        let max_req = (self.block.devs[dev as usize].disk.model.max_request_bytes / PAGE_SIZE).max(1);
        // The cyclic scan runs from writeback_index to the end of the index (and, before
        // 4.20, wraps to 0 and goes on up to where it started).
        // Only entries present are visited: a hole is one step that ends the current run
        // (and the scan, when nothing is left dirty), then the walk jumps to the next entry.
        let wraps = self.profile.writeback_wraps_in_call;
        let len = self.mm.mappings[m as usize].extent;
        let start = self.mm.mappings[m as usize].wb_index;
        let base = self.mm.mappings[m as usize].disk_base;
        let mut written = 0;
        let mut run_start = 0u64;
        let mut run_len = 0u64;
        let mut cost = 0;
        let mut index = start;
        let mut wrapped = false;
        // write_cache_pages' done_index: the last page written; `done`: stopped by
        // nr_to_write rather than by running out of dirty pages.
        let mut done_index = None;
        let mut done = false;
        loop {
            if index >= len {
                if wrapped || start == 0 || !wraps {
                    break;
                }
                wrapped = true;
                index = 0;
            }
            if wrapped && index >= start {
                break;
            }
            if written >= max {
                done = true;
                break;
            }
            let limit = if wrapped { start } else { len };
            let next = self.mm.next_slot(m, index, limit);
            let dirty_page = match next {
                Some((i, Slot::Page(p))) if i == index && self.mm.pages.dirty(p) && !self.mm.pages.writeback(p) => Some(p),
                _ => None,
            };
            match dirty_page {
                Some(p) => {
                    if run_len > 0 && (index != run_start + run_len || run_len >= max_req) {
                        cost += self.submit_writeback(dev, m, base, run_start, run_len, tid);
                        run_len = 0;
                    }
                    if run_len == 0 {
                        run_start = index;
                    }
                    run_len += 1;
                    self.start_page_writeback(m, p);
                    written += 1;
                    done_index = Some(index);
                }
                None => {
                    if run_len > 0 {
                        cost += self.submit_writeback(dev, m, base, run_start, run_len, tid);
                        run_len = 0;
                    }
                    if self.mm.mappings[m as usize].nr_dirty == 0 {
                        // Nothing left to find: the kernel's lookup runs on to the end
                        // (and, before 4.20, round to where it started) without a page.
                        break;
                    }
                    match next {
                        // A hole before the next entry: nothing in it changes the scan's
                        // state, so go straight to that entry (or to the end of the range).
                        Some((i, _)) if i > index => {
                            index = i;
                            continue;
                        }
                        None => {
                            index = limit.max(index + 1);
                            continue;
                        }
                        _ => {}
                    }
                }
            }
            index += 1;
        }
        if run_len > 0 {
            cost += self.submit_writeback(dev, m, base, run_start, run_len, tid);
        }
        let s = &mut self.mm.mappings[m as usize];
        // write_cache_pages: writeback_index = done_index when stopped by nr_to_write;
        // at the end of the file 0 since 4.20. Before, a scan that went all the way round
        // leaves done_index, the last page written (or where it started). Either way the
        // next page dirtied after the last one written is the first the next scan finds.
        s.wb_index = match (done, wraps) {
            (true, _) => done_index.unwrap_or(start),
            (false, false) => 0,
            (false, true) => done_index.unwrap_or(start),
        };
        if s.nr_dirty == 0 {
            s.dirtied_when = 0;
        }
        cost += written * self.machine.cpu_model.page_cache_ns;
        if let Some(t) = tid {
            self.charge_sys(t, cost);
        }
        written
    }

    /// clear_page_dirty_for_io + set_page_writeback of page `p` of mapping `m`
    /// (__folio_start_writeback moves the tags under xa_lock_irqsave).
    fn start_page_writeback(&mut self, m: u32, p: super::page::Pfn) {
        self.xa_lock(m, 1);
        self.mm.pages.clear_dirty(p);
        self.mm.pages.set_writeback(p);
        self.mm.stat.dirty -= 1;
        self.mm.stat.writeback += 1;
        let s = &mut self.mm.mappings[m as usize];
        s.nr_dirty -= 1;
        s.nr_writeback += 1;
    }

    /// pageout() of one dirty file page by reclaim (2.6.39 shrink_page_list):
    /// clear_page_dirty_for_io, SetPageReclaim (the end of its write rotates it to the
    /// inactive tail), ->writepage as a request of its own, NR_VMSCAN_WRITE. Returns the
    /// CPU time of the submission.
    pub(crate) fn reclaim_pageout(&mut self, p: super::page::Pfn, tid: Option<TaskId>) -> Ns {
        let m = self.mm.pages.mapping(p);
        let index = self.mm.pages.index(p);
        let Some(dev) = self.mm.mappings[m as usize].dev else {
            return 0;
        };
        let base = self.mm.mappings[m as usize].disk_base;
        self.start_page_writeback(m, p);
        self.mm.pages.set_reclaim(p);
        let s = &mut self.mm.mappings[m as usize];
        if s.nr_dirty == 0 {
            s.dirtied_when = 0;
        }
        self.vm.inc(memtwin_procfs::VmItem::NrVmscanWrite);
        self.submit_writeback(dev, m, base, index, 1, tid) + self.machine.cpu_model.page_cache_ns
    }

    fn submit_writeback(&mut self, dev: u32, m: u32, base: u64, index: u64, n: u64, tid: Option<TaskId>) -> Ns {
        let kind = ReqKind::Writeback { mapping: m, index, n: n as u32 };
        self.submit_bio(dev, Dir::Write, base + index * PAGE_SIZE, n * PAGE_SIZE, kind, tid);
        self.machine.cpu_model.io_request_ns
    }

    /// wakeup_flusher_threads: start background writeback on every device.
    pub fn wakeup_flusher_threads(&mut self) {
        for d in 0..self.block.devs.len() {
            if let Some(f) = self.block.devs[d].flusher {
                if self.writeback.flusher_idle.contains(&f) {
                    self.writeback.flusher_idle.retain(|&x| x != f);
                    self.wake(f);
                }
            }
        }
    }

    /// wakeup_flusher_threads for reclaim: every device with dirty data gets a work item
    /// of `nr_pages` pages (2.6.39's __bdi_start_writeback, queued one after the other),
    /// or, with `None`, one to write all that is dirty (4.14+: wb_start_writeback with
    /// WB_start_all, one at a time; wb_check_start_all counts the dirty pages when the
    /// flusher takes it, which the model does now).
    pub fn wakeup_flusher_threads_for_reclaim(&mut self, nr_pages: Option<u64>) {
        let n = self.block.devs.len();
        self.writeback.work_pages.resize(n, 0);
        for d in 0..n {
            if self.block.devs[d].flusher.is_none() || self.oldest_dirty_inode_on(Some(d as u32), None).is_none() {
                continue;
            }
            let w = &mut self.writeback.work_pages[d];
            match nr_pages {
                Some(p) => *w = w.saturating_add(p),
                None => *w = (*w).max(self.mm.stat.dirty),
            }
        }
        self.wakeup_flusher_threads();
    }

    /// __mark_inode_dirty -> wb_wakeup_delayed: the flusher will look at the inode after
    /// dirty_writeback_centisecs.
    pub(crate) fn flusher_inode_dirtied(&mut self, _m: u32) {
        // The flusher, if asleep with nothing to do, sets a periodic timer when woken; a
        // sleeping flusher with no timer is woken now so that it arms one.
        for d in 0..self.block.devs.len() {
            if let Some(f) = self.block.devs[d].flusher {
                if self.writeback.flusher_idle.contains(&f) {
                    self.writeback.flusher_idle.retain(|&x| x != f);
                    self.wake(f);
                }
            }
        }
    }

    /// sync(2): all dirty data is written; the caller waits until no page is dirty or
    /// under writeback.
    pub fn request_sync(&mut self) {
        self.writeback.sync_requested = true;
        self.wakeup_flusher_threads();
    }

    pub(crate) fn flusher_waits_for_slot(&self, f: TaskId) -> bool {
        self.writeback.flusher_slot_wait.contains(&f)
    }
}

/// The per-device flusher (the "flush-MAJ:MIN" thread of 2.6.32, a kworker today):
/// background writeback above dirty_background, periodic writeback of inodes dirty for
/// longer than dirty_expire_centisecs every dirty_writeback_centisecs, and sync.
pub struct Flusher {
    dev: u32,
    last_old_flush: Ns,
    /// Linux 2.4: bdflush was woken past nfract_sync and writes until nfract_stop.
    bdflush_active: bool,
}

impl Flusher {
    pub fn new(dev: u32) -> Flusher {
        Flusher { dev, last_old_flush: 0, bdflush_active: false }
    }
}

impl Program for Flusher {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        k.writeback.flusher_slot_wait.retain(|&x| x != me);
        k.writeback.flusher_idle.retain(|&x| x != me);
        let dev = self.dev;
        let linux24 = k.profile.bdflush;
        let (interval, expire) = if linux24 {
            // kupdated: every `interval` jiffies, buffers older than `age_buffer` jiffies.
            let b = k.sysctl.bdflush;
            (b.interval_jiffies().max(0) as Ns * JIFFY_24, b.age_buffer_jiffies().max(0) as Ns * JIFFY_24)
        } else {
            (k.sysctl.dirty_writeback_centisecs as Ns * 10 * NS_PER_MS, k.sysctl.dirty_expire_centisecs as Ns * 10 * NS_PER_MS)
        };
        // Work, in the order wb_do_writeback takes it: sync, background, periodic.
        let lim = k.dirty_limits();
        let sync = k.writeback.sync_requested;
        let background = if linux24 {
            // bdflush: woken past nfract_sync, it writes until dirty buffers fall below
            // nfract_stop_bdflush% (bdflush_stop()).
            let stop = k.nr_free_buffer_pages_24() * k.sysctl.bdflush.nfract_stop().clamp(0, 100) as u64 / 100;
            let on = k.mm.stat.dirty > lim.thresh || (self.bdflush_active && k.mm.stat.dirty > stop);
            self.bdflush_active = on;
            on
        } else {
            k.mm.stat.dirty > lim.background
        };
        let kupdate_due = interval > 0 && k.now >= self.last_old_flush + interval;
        // Reclaim's work items come before background writeback (wb_do_writeback takes
        // queued work first) and are written whatever the thresholds say.
        let work = k.writeback.work_pages.get(dev as usize).copied().unwrap_or(0);
        let target = if sync || background || work > 0 {
            k.oldest_dirty_inode_on(Some(dev), None)
        } else if kupdate_due {
            k.oldest_dirty_inode_on(Some(dev), Some(k.now.saturating_sub(expire)))
        } else {
            None
        };
        if let Some((pos, m)) = target {
            if k.block.devs[dev as usize].congested() {
                // get_request: all request slots are taken, sleep until one frees.
                let t = k.block.devs[dev as usize].slot_free_at();
                k.writeback.flusher_slot_wait.push(me);
                return Step::SleepUntil { t: t.max(k.now + 1), io: true };
            }
            // wb_writeback: a work item's pass writes at most what it has left.
            let max = if work > 0 && !sync && !background { work.min(MAX_WRITEBACK_PAGES) } else { MAX_WRITEBACK_PAGES };
            let n = k.writeback_mapping(m, max, Some(me));
            if work > 0 {
                k.writeback.work_pages[dev as usize] = work.saturating_sub(n);
            }
            // An inode that stays dirty keeps its place (requeue_io keeps dirtied_when).
            let _ = pos;
            if n > 0 {
                return Step::Yield;
            }
        }
        let dev_dirty = k.oldest_dirty_inode_on(Some(dev), None).is_some();
        if !dev_dirty {
            // A work item ends when nothing is left to write.
            if let Some(w) = k.writeback.work_pages.get_mut(dev as usize) {
                *w = 0;
            }
        }
        if sync && !dev_dirty && k.block.devs.iter().all(|d| d.inflight.is_empty()) && k.mm.stat.dirty == 0 {
            k.writeback.sync_requested = false;
        }
        if kupdate_due {
            self.last_old_flush = k.now;
        }
        if dev_dirty && interval > 0 {
            // wb_wakeup_delayed: come back after the writeback interval.
            let next = (self.last_old_flush + interval).max(k.now + 1);
            k.writeback.flusher_idle.push(me);
            return Step::SleepUntil { t: next, io: false };
        }
        k.writeback.flusher_idle.push(me);
        Step::Block { io: false }
    }
}
