//! Per-CPU pagesets and the zone lock (mm/page_alloc.c: struct per_cpu_pages,
//! rmqueue_pcplist, rmqueue_bulk, free_unref_page_commit, free_pcppages_bulk,
//! drain_all_pages).
//!
//! An order-0 allocation takes a page from the allocating CPU's list without the zone lock;
//! an empty list is refilled with `batch` pages under `zone->lock` (rmqueue_bulk). A free
//! puts the page on the freeing CPU's list; at `high` pages the list gives a batch back to
//! the buddy lists under `zone->lock` (free_pcppages_bulk). Pages on the lists are free
//! but not counted in NR_FREE_PAGES: MemFree and the watermark checks do not see them.
//!
//! The zone has a single order and frames are interchangeable, so the lists are counts:
//! the frames stay on the zone's free list (`FreeArea`), and `Pagesets` says how many of
//! them are on each CPU's list. One list per CPU stands for the kernel's per-migratetype
//! lists (every page here is movable or reclaimable alike).

use memtwin_engine::{LockKind, LockQueue};

/// `Pagesets::holder` of zone->lock taken from a completion (interrupt context).
pub const IRQ_HOLDER: u32 = u32::MAX - 1;
/// `Pagesets::holder` before anyone took zone->lock.
pub const NO_HOLDER: u32 = u32::MAX;

/// How an era keeps per-CPU pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcpRule {
    /// Linux 2.4: no per-CPU lists; every allocation and free takes zone->lock
    /// (__alloc_pages -> rmqueue, __free_pages_ok).
    Off,
    /// 2.6.x .. 5.13: batch from zone_batchsize capped at `cap_kb` (512 KiB before 4.19,
    /// 1 MiB after d8a759b57035 "mm, page_alloc: double zone's batchsize"), high = 6 *
    /// batch (pageset_set_batch), and a full list frees one batch (free_hot_cold_page,
    /// free_unref_page_commit).
    SixBatches { cap_kb: u64 },
    /// 5.14+ (b92ca18e8ca5 "mm/page_alloc: disassociate the pcp->high from pcp->batch"):
    /// high = the low watermark shared by the node's CPUs, at least 4 batches
    /// (zone_highsize); a full list frees a batch scaled up while frees keep coming
    /// (nr_pcp_free, 3b12e7e97938); while kswapd reclaims, high is capped at 4 batches
    /// (nr_pcp_high, c49c2c47dab6).
    LowWmarkShare,
}

/// zone_batchsize: about 0.1% of the zone, at most `cap_kb`, a quarter of it, rounded down
/// to 2^n - 1 ("to avoid cache aliasing between consecutive batches"); at least 1.
pub fn zone_batchsize(managed: u64, cap_kb: u64) -> u32 {
    let mut batch = managed / 1024;
    if batch * 4 > cap_kb {
        batch = cap_kb / 4;
    }
    batch /= 4;
    batch = batch.max(1);
    let x = batch + batch / 2;
    let pow = 1u64 << (63 - x.leading_zeros());
    (pow - 1).max(1) as u32
}

/// zone_highsize (5.14+, percpu_pagelist_high_fraction = 0): the low watermark split
/// between the node's CPUs, at least four batches.
pub fn zone_highsize(low_wmark: u64, ncpus: u32, batch: u32) -> u32 {
    let high = low_wmark / ncpus.max(1) as u64;
    high.max((batch as u64) << 2).min(u32::MAX as u64) as u32
}

/// The zone's per-CPU pagesets and its lock.
#[derive(Clone, Debug)]
pub struct Pagesets {
    pub rule: PcpRule,
    /// Pages on each CPU's list (pcp->count).
    pub count: Vec<u32>,
    /// nr_pcp_free's scale of the batch freed, per CPU (pcp->free_factor, 5.14+).
    free_factor: Vec<u8>,
    /// Sum of `count`.
    pub total: u64,
    pub batch: u32,
    pub high: u32,
    /// zone->lock: served in time order; waiters spin.
    pub zone_lock: LockQueue,
    /// Who took zone->lock last (a task id, `IRQ_HOLDER` for completion work): one
    /// holder's consecutive acquisitions follow each other without waiting on itself.
    pub holder: u32,
    /// Pages moved between the buddy lists and the CPU lists (rmqueue_bulk,
    /// free_pcppages_bulk), and pages allocated and freed straight from the buddy lists.
    pub bulk_alloc: u64,
    pub bulk_free: u64,
}

impl Pagesets {
    pub fn new(rule: PcpRule, ncpus: u32, managed: u64, low_wmark: u64) -> Pagesets {
        let n = ncpus.max(1) as usize;
        let mut p = Pagesets {
            rule,
            count: vec![0; n],
            free_factor: vec![0; n],
            total: 0,
            batch: 1,
            high: 0,
            zone_lock: LockQueue::new(LockKind::Spin),
            holder: NO_HOLDER,
            bulk_alloc: 0,
            bulk_free: 0,
        };
        p.update(managed, low_wmark);
        p
    }

    /// zone_pcp_update / pageset_set_high_and_batch: batch and high from the zone's size
    /// and (5.14+) its low watermark.
    pub fn update(&mut self, managed: u64, low_wmark: u64) {
        let ncpus = self.count.len() as u32;
        (self.batch, self.high) = match self.rule {
            PcpRule::Off => (1, 0),
            PcpRule::SixBatches { cap_kb } => {
                let b = zone_batchsize(managed, cap_kb);
                (b, 6 * b)
            }
            PcpRule::LowWmarkShare => {
                let b = zone_batchsize(managed, 1024);
                (b, zone_highsize(low_wmark, ncpus, b))
            }
        };
    }

    #[inline]
    pub fn enabled(&self) -> bool {
        self.rule != PcpRule::Off
    }

    /// rmqueue_pcplist: take one page from `cpu`'s list; `refill` pages must first come
    /// from the buddy lists under zone->lock when it is empty (the caller takes the lock
    /// and calls `refilled`). Returns the number to refill (0: the list has a page).
    #[inline]
    pub fn refill_needed(&self, cpu: usize) -> u32 {
        if self.count[cpu] == 0 { self.batch } else { 0 }
    }
    /// rmqueue_bulk put `n` pages on `cpu`'s list.
    pub fn refilled(&mut self, cpu: usize, n: u32) {
        self.count[cpu] += n;
        self.total += n as u64;
        self.bulk_alloc += n as u64;
    }
    /// One page leaves `cpu`'s list for the caller (pcp->free_factor >>= 1 in
    /// rmqueue_pcplist, 5.14+).
    pub fn take(&mut self, cpu: usize) {
        debug_assert!(self.count[cpu] > 0);
        self.count[cpu] -= 1;
        self.total -= 1;
        self.free_factor[cpu] >>= 1;
    }

    /// free_unref_page_commit: one page joins `cpu`'s list; returns how many pages go
    /// back to the buddy lists under zone->lock now (0: none). `reclaim_active`: kswapd
    /// is reclaiming (ZONE_RECLAIM_ACTIVE).
    pub fn free(&mut self, cpu: usize, reclaim_active: bool) -> u32 {
        self.count[cpu] += 1;
        self.total += 1;
        let (batch, mut high) = (self.batch, self.high);
        let nr = match self.rule {
            PcpRule::Off => unreachable!("no per-CPU lists"),
            PcpRule::SixBatches { .. } => {
                if self.count[cpu] < high {
                    return 0;
                }
                batch
            }
            PcpRule::LowWmarkShare => {
                if reclaim_active {
                    // nr_pcp_high: keep few pages on the lists while reclaim frees pages.
                    high = high.min(batch << 2);
                }
                if self.count[cpu] < high {
                    return 0;
                }
                // nr_pcp_free: min batch, max high - batch, doubled while frees continue.
                if high < batch {
                    1
                } else {
                    let (min_nr, max_nr) = (batch, high - batch);
                    let scaled = (batch as u64) << self.free_factor[cpu];
                    if scaled < max_nr as u64 {
                        self.free_factor[cpu] = self.free_factor[cpu].saturating_add(1).min(31);
                    }
                    (scaled.min(max_nr as u64) as u32).max(min_nr)
                }
            }
        };
        self.drained(cpu, nr)
    }

    /// free_pcppages_bulk of up to `nr` pages of `cpu`'s list; returns how many moved.
    pub fn drained(&mut self, cpu: usize, nr: u32) -> u32 {
        let n = nr.min(self.count[cpu]);
        self.count[cpu] -= n;
        self.total -= n as u64;
        self.bulk_free += n as u64;
        n
    }

    /// The CPU whose list is longest (drain_all_pages takes pages back from every CPU; an
    /// allocation that finds the buddy lists empty takes the first it needs).
    pub fn fullest(&self) -> Option<usize> {
        let (i, &c) = self.count.iter().enumerate().max_by_key(|&(i, &c)| (c, std::cmp::Reverse(i)))?;
        (c > 0).then_some(i)
    }

    /// vm stats threshold of /proc/zoneinfo (calculate_normal_threshold): 2 * fls(cpus) *
    /// (1 + fls(zone MiB / 128)), at most 125.
    pub fn stat_threshold(&self, managed: u64) -> u32 {
        let fls = |x: u64| 64 - x.leading_zeros();
        let mem = managed >> (27 - 12);
        (2 * fls(self.count.len() as u64) * (1 + fls(mem))).min(125)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zone_batchsize_follows_the_kernel() {
        // 4 GiB zone: 1 MiB cap -> 256 pages / 4 = 64 -> 96 -> 64 - 1.
        assert_eq!(zone_batchsize(1 << 20, 1024), 63);
        // 512 KiB cap (before 4.19): 128 / 4 = 32 -> 48 -> 31.
        assert_eq!(zone_batchsize(1 << 20, 512), 31);
        // A 64 MiB zone: 16 / 4 = 4 -> 6 -> 3.
        assert_eq!(zone_batchsize(16 << 10, 1024), 3);
        // Tiny zones still batch one page.
        assert_eq!(zone_batchsize(1024, 1024), 1);
    }

    #[test]
    fn high_is_six_batches_before_5_14_and_a_share_of_the_low_watermark_after() {
        let p = Pagesets::new(PcpRule::SixBatches { cap_kb: 1024 }, 4, 1 << 20, 10_000);
        assert_eq!((p.batch, p.high), (63, 378));
        let p = Pagesets::new(PcpRule::LowWmarkShare, 4, 1 << 20, 10_000);
        assert_eq!((p.batch, p.high), (63, 2500));
        // Many CPUs: at least four batches each.
        let p = Pagesets::new(PcpRule::LowWmarkShare, 64, 1 << 20, 10_000);
        assert_eq!(p.high, 252);
    }

    #[test]
    fn a_full_list_frees_a_batch_and_keeps_the_rest() {
        let mut p = Pagesets::new(PcpRule::SixBatches { cap_kb: 1024 }, 2, 1 << 20, 0);
        let mut back = 0;
        for _ in 0..1000 {
            back += p.free(1, false);
        }
        assert_eq!(p.count[0], 0);
        assert!(p.count[1] < p.high && p.count[1] >= p.high - p.batch, "{}", p.count[1]);
        assert_eq!(back as u64 + p.total, 1000);
        assert_eq!(back % p.batch, 0);
    }

    #[test]
    fn nr_pcp_free_scales_the_batch_while_frees_continue_and_allocations_reset_it() {
        let mut p = Pagesets::new(PcpRule::LowWmarkShare, 1, 1 << 20, 4000);
        assert_eq!((p.batch, p.high), (63, 4000));
        let mut drains = Vec::new();
        for _ in 0..20_000 {
            let n = p.free(0, false);
            if n > 0 {
                drains.push(n);
            }
        }
        assert_eq!(drains[0], 63);
        assert!(drains[1] > drains[0] && *drains.iter().max().unwrap() == 4000 - 63, "{drains:?}");
        for _ in 0..10 {
            p.take(0);
        }
        assert_eq!(p.free_factor[0], 0);
        // kswapd at work: the list is kept at four batches.
        let mut q = Pagesets::new(PcpRule::LowWmarkShare, 1, 1 << 20, 4000);
        for _ in 0..1000 {
            q.free(0, true);
        }
        assert!(q.count[0] < 4 * 63);
    }

    #[test]
    fn stat_threshold_of_a_4_cpu_4_gib_zone() {
        let p = Pagesets::new(PcpRule::LowWmarkShare, 4, 1 << 20, 0);
        // fls(4) = 3, 4096 MiB / 128 = 32 -> fls = 6: 2 * 3 * 7 = 42.
        assert_eq!(p.stat_threshold(1 << 20), 42);
    }
}
