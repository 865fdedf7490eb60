//! The page allocator's watermarks and slow path (mm/page_alloc.c).

use super::page::Pfn;
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::{TaskId, NS_PER_MS};
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
        // watermark_scale_factor spacing, at least a quarter of min.
        let delta = (min / 4).max(managed * sysctl.watermark_scale_factor as u64 / 10_000);
        Watermarks { min_free_kbytes, min, low: min + delta, high: min + 2 * delta }
    }
}

impl Kernel {
    /// Recompute watermarks after min_free_kbytes or watermark_scale_factor change.
    pub fn setup_per_zone_wmarks(&mut self) {
        self.mm.wmark = Watermarks::compute(&self.machine, &self.sysctl, self.mm.managed);
    }

    /// Free a frame (free_unref_page). Inside a reclaim batch's decisions the frame is
    /// only collected: the batch frees it after the work that precedes it.
    pub fn free_page(&mut self, p: Pfn) {
        self.memcg_page_freed_unused(p);
        if self.reclaim.defer_free {
            self.reclaim.deferred.push(p);
            return;
        }
        self.mm.put_free(p);
        self.vm.inc(VmItem::Pgfree);
    }

    /// Allocate a frame for `tid` (__alloc_pages): above the low watermark at once; below
    /// it wake kswapd; below min (split reclaim: P_start) the task reclaims itself (direct
    /// reclaim; split reclaim's page reclaim). `Err` is what
    /// the task does before trying again (throttled, or killed by the OOM killer).
    pub fn page_cache_alloc(&mut self, tid: TaskId) -> Result<Pfn, Step> {
        let w = self.mm.wmark;
        let start = self.direct_reclaim_start_pages();
        let free = self.mm.nr_free();
        if free <= w.low {
            self.wake_kswapd();
        }
        if free > start {
            return self.take_page(tid);
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
            self.vm.inc(VmItem::AllocstallNormal);
            self.start_direct_reclaim(tid);
            return Err(Step::Yield);
        };
        let sc = path.sc;
        let reclaimed = sc.nr_reclaimed;
        if self.mm.nr_free() > start {
            self.tasks[tid as usize].reclaim_retries = 0;
            return self.take_page(tid);
        }
        if reclaimed > 0 {
            self.tasks[tid as usize].reclaim_retries = 0;
            return Err(Step::Yield);
        }
        // No progress: should_reclaim_retry, then the OOM killer. Pages under writeback
        // will become reclaimable: while any are in flight the allocator waits instead of
        // counting a failed retry.
        let in_flight = self.mm.stat.writeback > 0 || !self.swap.wb.is_empty();
        let t = &mut self.tasks[tid as usize];
        if !in_flight {
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

    fn take_page(&mut self, tid: TaskId) -> Result<Pfn, Step> {
        match self.mm.take_free() {
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
