//! The page allocator's watermarks and slow path (mm/page_alloc.c).

use super::page::Pfn;
use super::pageblock::MigrateType;
use super::KernelOwner;
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::{Ns, TaskId, NS_PER_MS, NS_PER_SEC};
use memtwin_machine::{Machine, Sysctls};
use memtwin_procfs::VmItem;

/// Retries of direct reclaim without progress before the OOM killer (MAX_RECLAIM_RETRIES).
pub const MAX_RECLAIM_RETRIES: u32 = 16;

/// Zone watermarks in pages (one zone stands for the node).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watermarks {
    pub min_free_kbytes: u64,
    pub min: u64,
    pub low: u64,
    pub high: u64,
}

fn int_sqrt(x: u64) -> u64 {
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

impl Watermarks {
    /// calculate_min_free_kbytes, raised by khugepaged's set_recommended_min_free_kbytes
    /// when transparent huge pages are enabled; then __setup_per_zone_wmarks.
    pub fn compute(machine: &Machine, sysctl: &Sysctls, managed: u64) -> Watermarks {
        if machine.kernel == memtwin_machine::KernelProfile::Linux24 {
            return Watermarks::zone_balance_ratio(machine.ram_bytes);
        }
        let lowmem_kb = managed * 4;
        let min_free_kbytes = sysctl.min_free_kbytes.unwrap_or_else(|| {
            let mut v = int_sqrt(lowmem_kb * 16).clamp(128, 262_144);
            if crate::profile::Profile::of(machine.kernel).thp_enabled {
                // Two pageblocks per zone plus room for fragmentation avoidance between
                // the MIGRATE_PCPTYPES, capped at 5% of memory.
                const PAGEBLOCK: u64 = 512;
                let ram = machine.ram_bytes;
                let nr_zones = if ram <= 16 << 20 { 1 } else if ram <= 4 << 30 { 2 } else { 3 };
                let rec = (PAGEBLOCK * nr_zones * 2 + PAGEBLOCK * nr_zones * 3 * 3).min(managed / 20);
                v = v.max(rec * 4);
            }
            v
        });
        let min = min_free_kbytes / 4;
        if machine.kernel == memtwin_machine::KernelProfile::Linux2639 {
            // Before 4.6 (watermark_scale_factor): __setup_per_zone_wmarks sets low = min +
            // min/4 and high = min + min/2.
            return Watermarks { min_free_kbytes, min, low: min + (min >> 2), high: min + (min >> 1) };
        }
        // watermark_scale_factor spacing (4.6+), at least a quarter of min.
        let delta = (min / 4).max(managed * sysctl.watermark_scale_factor as u64 / 10_000);
        Watermarks { min_free_kbytes, min, low: min + delta, high: min + 2 * delta }
    }

    /// 2.4's watermarks (free_area_init_core, 2.4.10+): each zone's pages_min is its size
    /// over zone_balance_ratio (128), kept within zone_balance_min (20) and
    /// zone_balance_max (255) pages; pages_low is twice that and pages_high three times.
    /// There is no min_free_kbytes (2.6's). The node's watermarks are the sums over i386's
    /// zones (`zones_24`): the one zone of the model stands for the three, and an
    /// allocation falling back through them meets the same sums (__alloc_pages adds each
    /// zone's mark to the last).
    pub fn zone_balance_ratio(ram_bytes: u64) -> Watermarks {
        let min: u64 = zones_24(ram_bytes).iter().map(|&z| zone_pages_min_24(z)).sum();
        Watermarks { min_free_kbytes: min * (super::PAGE_SIZE / 1024), min, low: 2 * min, high: 3 * min }
    }
}

/// Linux 2.4 on i386: the sizes in pages of ZONE_DMA (below 16 MB), ZONE_NORMAL (to 896 MB)
/// and ZONE_HIGHMEM (above) of a machine with `ram_bytes` of RAM (zones_size in
/// zone_sizes_init; no holes).
pub fn zones_24(ram_bytes: u64) -> [u64; 3] {
    let pages = ram_bytes / super::PAGE_SIZE;
    let dma = pages.min((16 << 20) / super::PAGE_SIZE);
    let normal = pages.min((896 << 20) / super::PAGE_SIZE) - dma;
    [dma, normal, pages - dma - normal]
}

/// A 2.4 zone's pages_min (free_area_init_core): size / zone_balance_ratio, within
/// zone_balance_min and zone_balance_max; 0 for an empty zone.
pub fn zone_pages_min_24(size: u64) -> u64 {
    const ZONE_BALANCE_RATIO: u64 = 128;
    const ZONE_BALANCE_MIN: u64 = 20;
    const ZONE_BALANCE_MAX: u64 = 255;
    if size == 0 {
        return 0;
    }
    (size / ZONE_BALANCE_RATIO).clamp(ZONE_BALANCE_MIN, ZONE_BALANCE_MAX)
}

impl Kernel {
    /// Recompute watermarks after min_free_kbytes or watermark_scale_factor change.
    pub fn setup_per_zone_wmarks(&mut self) {
        self.mm.wmark = Watermarks::compute(&self.machine, &self.sysctl, self.mm.managed);
        // setup_per_zone_wmarks -> zone_pcp_update: 5.14+ sizes pcp->high from the low
        // watermark.
        let (managed, low) = (self.mm.managed, self.mm.wmark.low);
        self.mm.pcp.update(managed, low);
        self.mm.watermark_boost_factor = self.watermark_boost_factor();
    }

    /// vm.watermark_boost_factor where the era boosts watermarks (5.0+), else 0.
    pub fn watermark_boost_factor(&self) -> u64 {
        if self.profile.watermark_boost { self.sysctl.watermark_boost_factor as u64 } else { 0 }
    }

    /// rmqueue's end: an allocation after a fragmentation event wakes kswapd to reclaim
    /// the boost ("Separate test+clear to avoid unnecessary atomics": ALLOC_KSWAPD and
    /// ZONE_BOOSTED_WATERMARK -> wakeup_kswapd), here once the event's allocations are
    /// done.
    pub(crate) fn wake_kswapd_for_boost(&mut self) {
        if self.mm.zone_boosted {
            self.mm.zone_boosted = false;
            self.wake_kswapd();
        }
    }

    /// Free a frame (free_unref_page). Inside a reclaim batch's decisions the frame is
    /// only collected: the batch frees it after the work that precedes it.
    pub fn free_page(&mut self, p: Pfn) {
        self.memcg_page_freed_unused(p);
        if self.reclaim.defer_free {
            self.reclaim.deferred.push(p);
            return;
        }
        self.vm.inc(VmItem::Pgfree);
        self.pcp_free(p, false);
    }
    /// Free a page reclaim freed (free_unref_page_list; before 4.15
    /// free_hot_cold_page_list(&free_pages, 1): cold, to the tail of the CPU's list).
    pub(crate) fn free_reclaimed_page(&mut self, p: Pfn) {
        self.memcg_page_freed_unused(p);
        self.vm.inc(VmItem::Pgfree);
        let cold = self.mm.pcp.cold_frees();
        self.pcp_free(p, cold);
    }

    /// The CPU kernel work runs on now: the current task's, else CPU 0 (completion
    /// interrupts, timers).
    #[inline]
    pub(crate) fn this_cpu(&self) -> usize {
        match self.irq_cpu {
            Some(c) => c as usize,
            None => self.current.map_or(0, |t| self.sched.task_cpu(t) as usize),
        }
    }

    /// free_unref_page_commit: the freed page joins this CPU's list (its head; `cold`: its
    /// tail); lists grown to `high` give a batch back to the buddy lists under zone->lock
    /// (free_pcppages_bulk). Without per-CPU lists (2.4) every free takes zone->lock
    /// (__free_pages_ok).
    fn pcp_free(&mut self, p: Pfn, cold: bool) {
        self.pcp_free_order(p, 0, cold)
    }
    /// `pcp_free` of the block of order `order` headed by `p` (its frames own nothing):
    /// orders the lists do not keep (pcp_allowed_order) go to the buddy lists under
    /// zone->lock (free_one_page).
    pub(crate) fn pcp_free_order(&mut self, p: Pfn, order: u32, cold: bool) {
        if !self.mm.pcp.allowed_order(order) {
            let l = self.mm.pageblocks.of(p as u64);
            for q in p..p + (1 << order) {
                self.mm.pages.set_owner(q, 0, 0);
                self.mm.pages.set_lruvec_of(q, crate::mm::lru::ROOT_LRUVEC);
            }
            self.mm.free.add_order(&mut self.mm.pages, p, order, l);
            self.zone_lock(1);
            return;
        }
        let cpu = self.this_cpu();
        let mt = self.mm.pcp_put_order(cpu, p, order, cold);
        let reclaim_active = !self.reclaim.kswapd_waiting;
        let n = self.mm.pcp.nr_to_free_order(cpu, reclaim_active, order);
        if n > 0 {
            let n = self.mm.free_pcppages_bulk(cpu, n, mt, order);
            self.zone_lock(n as u64);
        }
    }

    /// drain_all_pages: every CPU's lists go back to the buddy lists (the allocator's
    /// slow path does it once when direct reclaim made progress but the allocation still
    /// fails, __alloc_pages_direct_reclaim; drain_pages_zone starts at the first list).
    pub fn drain_all_pages(&mut self) {
        for cpu in 0..self.mm.pcp.count.len() {
            let n = self.mm.pcp.count[cpu];
            if n > 0 {
                let n = self.mm.free_pcppages_bulk(cpu, n, MigrateType::Unmovable, 0);
                self.zone_lock(n as u64);
            }
        }
    }

    /// Take zone->lock now to move `pages` pages between the buddy lists and a CPU's list
    /// (or to allocate or free one without per-CPU lists). The hold is one list operation
    /// per page (as lru_lock's); the holder's CPU time for it is part of the per-page
    /// allocation cost already charged, so only the wait (spinning) adds system time, to
    /// the current task. Returns the wait.
    pub(crate) fn zone_lock(&mut self, pages: u64) -> Ns {
        let hold = pages * self.lru_lock_hold_per_page();
        let me = self.current.unwrap_or(crate::mm::pcp::IRQ_HOLDER);
        // Requests reach the queue in event order (at `now`; the step's work runs as one
        // burst after it), so the queue serves them FIFO. A holder taking the lock again
        // in the same work comes after its own hold, not as a waiter.
        let pcp = &mut self.mm.pcp;
        let at = if pcp.holder == me { pcp.zone_lock.free_at.max(self.now) } else { self.now };
        pcp.holder = me;
        let wait = pcp.zone_lock.acquire_from(self.now, at, hold) - at;
        let Some(t) = self.current else {
            // Completion (interrupt) context: takes its turn, nobody's time.
            return 0;
        };
        if wait > 0 {
            self.spin_lock_wait(t, wait);
        }
        wait
    }

    /// Task `t` spun `wait` ns for a spinlock taken in kernel work (zone->lock, a mapping's
    /// xa_lock): the task's and its delay accounting's lock wait, and system time — in a
    /// reclaim path its next burst (`zone_spin`), else the current step's.
    pub(crate) fn spin_lock_wait(&mut self, t: TaskId, wait: Ns) {
        self.tasks[t as usize].lock_wait_ns += wait;
        self.note_lock_wait(t, wait);
        if self.reclaim.advancing {
            self.reclaim.zone_spin += wait;
        } else {
            self.charge_sys(t, wait);
        }
    }

    /// Allocate a frame for `tid` (__alloc_pages): above the low watermark at once; below
    /// it wake kswapd; below min (split reclaim: P_start) the task reclaims itself (direct
    /// reclaim; split reclaim's page reclaim). `Err` is what
    /// the task does before trying again (throttled, or killed by the OOM killer).
    pub fn page_cache_alloc(&mut self, tid: TaskId) -> Result<Pfn, Step> {
        self.alloc_pages_gate(tid, 1)?;
        self.take_page(tid, false)
    }
    /// page_cache_alloc_cold: a page the task will not touch with the CPU soon (the pages
    /// readahead and a read fault read from the disk). Before 4.15 (__GFP_COLD, on the
    /// per-CPU lists of 2.6.39) it comes from the tail of the CPU's list, where reclaim
    /// frees its pages (buffered_rmqueue: "if (cold) page = list_entry(list->prev, ...)");
    /// since then it is `page_cache_alloc`.
    pub fn page_cache_alloc_cold(&mut self, tid: TaskId) -> Result<Pfn, Step> {
        self.alloc_pages_gate(tid, 1)?;
        let cold = self.mm.pcp.cold_frees();
        self.take_page(tid, cold)
    }

    /// The watermark part of __alloc_pages for `n` frames: Ok when the task may take them
    /// now (kswapd woken below low; direct reclaim below min, retried by the caller).
    pub fn alloc_pages_gate(&mut self, tid: TaskId, n: u64) -> Result<(), Step> {
        let w = self.mm.wmark_pages();
        let start = self.direct_reclaim_start_pages();
        let free = self.mm.nr_free();
        if free <= w.low + n - 1 {
            self.wake_kswapd();
        }
        if free > start + n - 1 {
            return Ok(());
        }
        // __alloc_pages_slowpath -> __alloc_pages_direct_reclaim -> __perform_reclaim: one
        // allocstall per call of try_to_free_pages (do_try_to_free_pages). The reclaim is a
        // path the task runs (with its CPU bursts, lock waits and sleeps) before its
        // program is called again; the program then retries the allocation and finds the
        // result here.
        if self.reclaim.in_path(tid) {
            // Already started in this step: the path runs before the task retries.
            return Err(Step::Yield);
        }
        let Some(path) = self.reclaim.take_done(tid) else {
            if let Some(i) = self.reclaim.pfmemalloc_waiters.iter().position(|&w| w == tid) {
                // Back from throttle_direct_reclaim's wait without kswapd's wakeup: on to
                // do_try_to_free_pages.
                self.reclaim.pfmemalloc_waiters.swap_remove(i);
            } else if self.profile.throttle_direct_reclaim && !self.tasks[tid as usize].kthread && !self.allow_direct_reclaim() {
                // try_to_free_pages -> throttle_direct_reclaim: the PF_MEMALLOC reserves
                // are low; wake kswapd and wait on pfmemalloc_wait until it restores them
                // (wait_event_killable; the model bounds the wait at HZ, the !__GFP_FS
                // timeout, in case kswapd cannot), then reclaim.
                self.vm.inc(VmItem::PgscanDirectThrottle);
                self.wake_kswapd();
                self.reclaim.pfmemalloc_waiters.push(tid);
                self.set_wait_reason(tid, crate::delayacct::WaitReason::ReclaimWait);
                return Err(Step::SleepUntil { t: self.now + NS_PER_SEC, io: false });
            }
            self.vm.inc(VmItem::AllocstallNormal);
            self.start_direct_reclaim(tid);
            return Err(Step::Yield);
        };
        let sc = path.sc;
        let reclaimed = sc.nr_reclaimed;
        if self.mm.nr_free() <= start && reclaimed > 0 && self.mm.pcp.total > 0 {
            // __alloc_pages_direct_reclaim: reclaim made progress but the allocation
            // fails: drain the per-CPU lists and try again.
            self.drain_all_pages();
        }
        if self.mm.nr_free() > start + n - 1 {
            self.tasks[tid as usize].reclaim_retries = 0;
            return Ok(());
        }
        if reclaimed > 0 {
            self.tasks[tid as usize].reclaim_retries = 0;
            return Err(Step::Yield);
        }
        // No progress: should_reclaim_retry counts the round (no_progress_loops) whatever
        // is under writeback, then the OOM killer after MAX_RECLAIM_RETRIES. Pages in flight
        // only make the retry wait (congestion_wait before 5.16, reclaim_throttle since).
        // A round the model cut short because the swap device's queue was full is not a
        // finished round: the kernel's reclaimer sleeps for a tag (blk_mq_get_tag) inside
        // swap_writepage and goes on reclaiming, so it does not count.
        let t = &mut self.tasks[tid as usize];
        if sc.nr_congested == 0 {
            t.reclaim_retries += 1;
        }
        if t.reclaim_retries > MAX_RECLAIM_RETRIES {
            t.reclaim_retries = 0;
            self.out_of_memory(tid);
            return Err(Step::Yield);
        }
        // reclaim_throttle: wait for writeback to make progress (at most HZ/10).
        let until = self
            .block
            .next_completion()
            .unwrap_or(self.now + 100 * NS_PER_MS)
            .min(self.now + 100 * NS_PER_MS)
            .max(self.now + 1);
        self.reclaim.writeback_waiters.push(tid);
        self.set_wait_reason(tid, crate::delayacct::WaitReason::ReclaimWait);
        Err(Step::SleepUntil { t: until, io: false })
    }

    /// allow_direct_reclaim: free pages above half the min watermarks of the node's zones
    /// (the PF_MEMALLOC reserve), or a node kswapd has given up on ("hopeless").
    pub fn allow_direct_reclaim(&self) -> bool {
        if self.mm.kswapd_failures >= MAX_RECLAIM_RETRIES {
            return true;
        }
        self.mm.nr_free() > self.mm.wmark.min / 2
    }

    /// rmqueue for a movable order-0 page on `cpu`.
    #[inline]
    pub(crate) fn rmqueue(&mut self, cpu: usize) -> Option<Pfn> {
        self.rmqueue_type(cpu, MigrateType::Movable, false)
    }
    /// rmqueue for an order-0 page of type `mt` on `cpu`: the first page of the CPU's list
    /// for `mt` (rmqueue_pcplist), the list refilled with a batch under zone->lock when
    /// empty (rmqueue_bulk); without per-CPU lists, from the buddy lists under zone->lock.
    /// `cold`: from the list's tail (2.6.39's __GFP_COLD).
    pub(crate) fn rmqueue_type(&mut self, cpu: usize, mt: MigrateType, cold: bool) -> Option<Pfn> {
        if !self.mm.pcp.enabled() {
            let p = self.mm.take_typed(mt)?;
            self.zone_lock(1);
            return Some(p);
        }
        if self.mm.pcp.list_empty(cpu, mt) {
            let batch = self.mm.pcp.batch;
            let n = self.mm.rmqueue_bulk(cpu, mt, batch, cold);
            if n == 0 {
                // Nothing left in the buddy lists: another CPU's pages (drain_all_pages).
                return self.mm.take_typed(mt);
            }
            self.zone_lock(n as u64);
        }
        self.mm.pcp.take(&mut self.mm.pages, cpu, mt, cold)
    }
    /// rmqueue for a block of order `order` of type `mt` on `cpu`: order 0 as
    /// `rmqueue_type`; orders the CPU lists keep (1-3 on 6.x) from the CPU's list for that
    /// order, refilled when empty with `batch >> order` blocks (at least 2) under
    /// zone->lock; other orders from the buddy lists under zone->lock (rmqueue_buddy).
    pub(crate) fn rmqueue_order(&mut self, cpu: usize, mt: MigrateType, order: u32) -> Option<Pfn> {
        if order == 0 {
            return self.rmqueue_type(cpu, mt, false);
        }
        if !self.mm.pcp.allowed_order(order) {
            let p = self.mm.take_typed_order(mt, order)?;
            self.zone_lock(1);
            return Some(p);
        }
        if self.mm.pcp.list_empty_order(cpu, mt, order) {
            let blocks = self.mm.pcp.refill_blocks(order);
            let n = self.mm.rmqueue_bulk_order(cpu, mt, order, blocks);
            if n == 0 {
                return None;
            }
            self.zone_lock((n >> order) as u64);
        }
        self.mm.pcp.take_order(&mut self.mm.pages, cpu, mt, order, false)
    }

    /// A page for the kernel's own use by `owner` on this CPU (alloc_pages with the
    /// owner's migrate type; no watermark check: the caller made it).
    pub(crate) fn alloc_kernel_page(&mut self, owner: KernelOwner) -> Option<Pfn> {
        let mt = self.mm.kernel_migratetype(owner);
        let p = self.rmqueue_type(self.this_cpu(), mt, false)?;
        self.mm.own_kernel_page(p, owner);
        Some(p)
    }
    /// Free kernel page `p` (__free_pages of a slab page, a page table, ...) to this CPU's
    /// list.
    pub(crate) fn free_kernel_page(&mut self, p: Pfn) {
        self.mm.disown_kernel_page(p);
        self.pcp_free(p, false);
    }
    /// Free the most recently taken page of `owner`; false if it holds none.
    pub(crate) fn free_last_kernel_page(&mut self, owner: KernelOwner) -> bool {
        match self.mm.last_kernel_page(owner) {
            Some(p) => {
                self.free_kernel_page(p);
                true
            }
            None => false,
        }
    }

    fn take_page(&mut self, tid: TaskId, cold: bool) -> Result<Pfn, Step> {
        match self.rmqueue_type(self.sched.task_cpu(tid) as usize, MigrateType::Movable, cold) {
            Some(p) => {
                self.vm.inc(VmItem::PgallocNormal);
                self.charge_sys(tid, self.machine.cpu_model.page_alloc_ns);
                // mem_cgroup_charge: the task's cgroup pays for the page.
                if self.memcg.active() {
                    self.mem_cgroup_charge(tid, p)?;
                }
                Ok(p)
            }
            None => Err(Step::Yield),
        }
    }
}
