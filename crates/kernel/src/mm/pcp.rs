//! Per-CPU pagesets and the zone lock (mm/page_alloc.c: struct per_cpu_pages,
//! rmqueue_pcplist, rmqueue_bulk, free_unref_page_commit, free_pcppages_bulk,
//! drain_all_pages).
//!
//! An order-0 allocation takes the first page of the allocating CPU's list for its migrate
//! type without the zone lock; an empty list is refilled with `batch` pages taken from the
//! buddy lists one by one under `zone->lock` (rmqueue_bulk), appended in the order taken. A
//! free puts the page at the head of the freeing CPU's list for its pageblock's type (hot:
//! the next allocation on that CPU reuses it); at `high` pages on the CPU's lists a batch
//! from the lists' tails goes back to the buddy lists under `zone->lock`
//! (free_pcppages_bulk), where it merges with its buddies. Pages on the lists are free but
//! not counted in NR_FREE_PAGES (MemFree and the watermark checks do not see them) and are
//! not PageBuddy: they do not merge, compaction's scanners step over them and a steal
//! does not count them as free. So the pages a CPU frees are the pages it allocates next,
//! and the buddy lists see frees and allocations in batches that mix the CPU's tasks.
//!
//! The lists run through the frames' records, NIL-ended: a page on a list has no owner and
//! records the migrate type it was freed with (set_pcppage_migratetype), the list it goes
//! back to in the buddy allocator. Since 5.13 (the 6.x profile) blocks of orders 1-3 have
//! lists of their own, one per type and order; a block is linked through its head, which
//! records its order, and counts its frames in `count`. On 2.6.39 cold allocations
//! (__GFP_COLD: readahead) take the tail.

use super::page::{Pages, Pfn, NIL};
use super::pageblock::MigrateType;
use memtwin_engine::{LockKind, LockQueue};

/// `Pagesets::holder` of zone->lock taken from a completion (interrupt context).
pub const IRQ_HOLDER: u32 = u32::MAX - 1;
/// `Pagesets::holder` before anyone took zone->lock.
pub const NO_HOLDER: u32 = u32::MAX;
/// Lists per CPU and order (MIGRATE_PCPTYPES): unmovable, movable, reclaimable, indexed by
/// `MigrateType`; MIGRATE_RESERVE pages go on the movable list.
pub const MIGRATE_PCPTYPES: usize = 3;
/// PAGE_ALLOC_COSTLY_ORDER: since 5.13 (44042b449872 "mm/page_alloc: allow high-order
/// pages to be stored on the per-cpu lists") blocks up to this order have lists of their
/// own (the THP list of pageblock order is not modelled: no THP).
pub const PAGE_ALLOC_COSTLY_ORDER: u32 = 3;
/// Lists per CPU: one per migrate type and order (order_to_pindex: MIGRATE_PCPTYPES *
/// order + migratetype); before 5.13 only the first MIGRATE_PCPTYPES are used.
pub const NR_PCP_LISTS: usize = MIGRATE_PCPTYPES * (PAGE_ALLOC_COSTLY_ORDER as usize + 1);

/// How an era keeps per-CPU pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcpRule {
    /// Linux 2.4: no per-CPU lists; every allocation and free takes zone->lock
    /// (__alloc_pages -> rmqueue, __free_pages_ok).
    Off,
    /// 2.6.x .. 5.13: batch from zone_batchsize capped at `cap_kb` (512 KiB before 4.19,
    /// 1 MiB after d8a759b57035 "mm, page_alloc: double zone's batchsize"), high = 6 *
    /// batch (pageset_set_batch), and a full list frees one batch (free_hot_cold_page,
    /// free_unref_page_commit) round-robin over the lists, more from the fuller ones
    /// (free_pcppages_bulk's batch_free). `cold`: before 4.15 (453f85d43fa9 "mm: remove
    /// __GFP_COLD") reclaim frees its pages cold, to the lists' tails
    /// (free_hot_cold_page_list(&free_pages, 1) in shrink_page_list), and the lists are in
    /// the older enum order (unmovable, reclaimable, movable).
    SixBatches { cap_kb: u64, cold: bool },
    /// 5.14+ (b92ca18e8ca5 "mm/page_alloc: disassociate the pcp->high from pcp->batch"):
    /// high = the low watermark shared by the node's CPUs, at least 4 batches
    /// (zone_highsize); a full list frees a batch scaled up while frees keep coming
    /// (nr_pcp_free, 3b12e7e97938), the freeing page's list first and each list emptied
    /// before the next; while kswapd reclaims, high is capped at 4 batches (nr_pcp_high,
    /// c49c2c47dab6).
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

/// One CPU list (pcp->lists[migratetype]): its first and last frames.
#[derive(Clone, Copy, Debug)]
struct PcpList {
    first: Pfn,
    last: Pfn,
}
const EMPTY: PcpList = PcpList { first: NIL, last: NIL };

/// The zone's per-CPU pagesets and its lock.
#[derive(Clone, Debug)]
pub struct Pagesets {
    pub rule: PcpRule,
    /// Pages on each CPU's lists (pcp->count).
    pub count: Vec<u32>,
    lists: Vec<[PcpList; NR_PCP_LISTS]>,
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
    /// free_pcppages_bulk).
    pub bulk_alloc: u64,
    pub bulk_free: u64,
}

impl Pagesets {
    pub fn new(rule: PcpRule, ncpus: u32, managed: u64, low_wmark: u64) -> Pagesets {
        let n = ncpus.max(1) as usize;
        let mut p = Pagesets {
            rule,
            count: vec![0; n],
            lists: vec![[EMPTY; NR_PCP_LISTS]; n],
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
            PcpRule::SixBatches { cap_kb, .. } => {
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
    /// Reclaim frees its pages to the lists' tails (before 4.15).
    #[inline]
    pub fn cold_frees(&self) -> bool {
        matches!(self.rule, PcpRule::SixBatches { cold: true, .. })
    }

    /// Blocks above order 0 (up to PAGE_ALLOC_COSTLY_ORDER) have lists (5.13+: the 6.x
    /// profile); before, they go to and from the buddy lists directly.
    #[inline]
    pub fn high_orders(&self) -> bool {
        self.rule == PcpRule::LowWmarkShare
    }
    /// Whether blocks of order `order` go through the lists (pcp_allowed_order).
    #[inline]
    pub fn allowed_order(&self, order: u32) -> bool {
        self.enabled() && (order == 0 || (order <= PAGE_ALLOC_COSTLY_ORDER && self.high_orders()))
    }

    /// The list a page of type `mt` goes on: MIGRATE_RESERVE's on the movable one
    /// (free_hot_cold_page: "if (migratetype >= MIGRATE_PCPTYPES) ... migratetype =
    /// MIGRATE_MOVABLE").
    #[inline]
    fn list_of(mt: MigrateType) -> usize {
        if mt == MigrateType::Reserve { MigrateType::Movable as usize } else { mt as usize }
    }
    /// order_to_pindex: the list of blocks of order `order` and type `mt`.
    #[inline]
    pub fn pindex(mt: MigrateType, order: u32) -> usize {
        MIGRATE_PCPTYPES * order as usize + Self::list_of(mt)
    }
    /// Whether `cpu`'s list for allocations of type `mt` is empty (rmqueue_pcplist refills
    /// it then).
    #[inline]
    pub fn list_empty(&self, cpu: usize, mt: MigrateType) -> bool {
        self.list_empty_order(cpu, mt, 0)
    }
    /// `list_empty` for blocks of order `order`.
    #[inline]
    pub fn list_empty_order(&self, cpu: usize, mt: MigrateType, order: u32) -> bool {
        self.lists[cpu][Self::pindex(mt, order)].first == NIL
    }

    /// Put free frame `p` (no owner, on no list) on `cpu`'s list for type `mt`: at the head
    /// (a hot free, free_unref_page_commit's list_add) or the tail (a cold free, or
    /// rmqueue_bulk's list_add_tail). The caller decides whether the lists are now too
    /// long (`nr_to_free`).
    #[inline]
    pub fn push(&mut self, pages: &mut Pages, cpu: usize, p: Pfn, mt: MigrateType, tail: bool) {
        self.push_order(pages, cpu, p, mt, 0, tail)
    }
    /// `push` of the block of order `order` headed by `p` (its other frames allocated, no
    /// owner): the head is linked, the count grows by the block's frames.
    #[inline]
    pub fn push_order(&mut self, pages: &mut Pages, cpu: usize, p: Pfn, mt: MigrateType, order: u32, tail: bool) {
        let l = &mut self.lists[cpu][Self::pindex(mt, order)];
        pages.set_pcp_frame(p, mt as u32, order);
        if tail {
            pages.set_links(p, NIL, l.last);
            if l.last == NIL {
                l.first = p;
            } else {
                pages.set_next(l.last, p);
            }
            l.last = p;
        } else {
            pages.set_links(p, l.first, NIL);
            if l.first == NIL {
                l.last = p;
            } else {
                pages.set_prev(l.first, p);
            }
            l.first = p;
        }
        self.count[cpu] += 1 << order;
        self.total += 1 << order;
    }
    /// Take the block at the head (or tail) of `cpu`'s list `li` off it: its frames are
    /// allocated (no owner, on no list). Returns its head with the type it was freed with
    /// and its order.
    #[inline]
    fn unlink(&mut self, pages: &mut Pages, cpu: usize, li: usize, tail: bool) -> Option<(Pfn, MigrateType, u32)> {
        let l = &mut self.lists[cpu][li];
        let p = if tail { l.last } else { l.first };
        if p == NIL {
            return None;
        }
        let mt = pages.pcp_migratetype(p).expect("a frame on a CPU list");
        let order = pages.pcp_order(p);
        let (n, pr) = pages.links(p);
        if pr == NIL {
            l.first = n;
        } else {
            pages.set_next(pr, n);
        }
        if n == NIL {
            l.last = pr;
        } else {
            pages.set_prev(n, pr);
        }
        pages.set_allocated(p);
        self.count[cpu] -= 1 << order;
        self.total -= 1 << order;
        Some((p, MigrateType::from_u8(mt as u8), order))
    }
    /// rmqueue_pcplist: the first page of `cpu`'s list for type `mt`, for the caller
    /// (pcp->free_factor >>= 1, 5.14+). None when the list is empty (refill it first).
    #[inline]
    pub fn take(&mut self, pages: &mut Pages, cpu: usize, mt: MigrateType, cold: bool) -> Option<Pfn> {
        self.take_order(pages, cpu, mt, 0, cold)
    }
    /// `take` of a block of order `order`: its head.
    #[inline]
    pub fn take_order(&mut self, pages: &mut Pages, cpu: usize, mt: MigrateType, order: u32, cold: bool) -> Option<Pfn> {
        let (p, _, _) = self.unlink(pages, cpu, Self::pindex(mt, order), cold)?;
        self.free_factor[cpu] >>= 1;
        Some(p)
    }
    /// The blocks rmqueue_bulk takes to refill an empty list of order `order`: the batch,
    /// scaled down by the order ("batch = max(batch >> order, 2)" while batch > 1).
    pub fn refill_blocks(&self, order: u32) -> u32 {
        if order > 0 && self.batch > 1 { (self.batch >> order).max(2) } else { self.batch }
    }

    /// free_unref_page_commit, after a page joined `cpu`'s lists: how many pages go back to
    /// the buddy lists now (0: none). `reclaim_active`: kswapd is reclaiming
    /// (ZONE_RECLAIM_ACTIVE).
    pub fn nr_to_free(&mut self, cpu: usize, reclaim_active: bool) -> u32 {
        self.nr_to_free_order(cpu, reclaim_active, 0)
    }
    /// `nr_to_free` after a block of order `order` joined the lists. 6.x: a block above
    /// order 0 freed while the CPU frees without allocating (free_factor) empties the
    /// CPU's lists ("free_high": "As high-order pages other than THP's stored on PCP can
    /// contribute to fragmentation, limit the number stored when PCP is heavily freeing
    /// without allocation"; nr_pcp_high 0, nr_pcp_free pcp->count).
    pub fn nr_to_free_order(&mut self, cpu: usize, reclaim_active: bool, order: u32) -> u32 {
        let (batch, mut high) = (self.batch, self.high);
        if self.rule == PcpRule::LowWmarkShare && order > 0 && self.free_factor[cpu] > 0 {
            return self.count[cpu];
        }
        match self.rule {
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
        }
    }

    /// free_pcppages_bulk: up to `nr` pages off `cpu`'s lists, each from a list's tail, to
    /// `free_one` (the buddy allocator's __free_one_page with the type the page was freed
    /// with). `first`: the list of the page whose free overflowed the lists (5.14+ drains
    /// it first). Returns how many pages went.
    /// A block above order 0 counts its frames and goes whole (6.x: `first_order` is the
    /// freed block's order); the last block may take the pages freed past `nr` ("count -=
    /// nr_pages").
    pub fn free_bulk(
        &mut self,
        pages: &mut Pages,
        cpu: usize,
        nr: u32,
        first: MigrateType,
        first_order: u32,
        mut free_one: impl FnMut(&mut Pages, Pfn, u32, MigrateType),
    ) -> u32 {
        let mut to_free = nr.min(self.count[cpu]) as i64;
        let before = self.count[cpu];
        match self.rule {
            PcpRule::LowWmarkShare => {
                // 6.x: "Ensure requested pindex is drained first", then round-robin over
                // the lists of every order, each list emptied before the next.
                let mut li = Self::pindex(first, first_order);
                while to_free > 0 {
                    while self.lists[cpu][li].first == NIL {
                        li = (li + 1) % NR_PCP_LISTS;
                    }
                    while to_free > 0 {
                        let Some((p, mt, order)) = self.unlink(pages, cpu, li, true) else { break };
                        free_one(pages, p, order, mt);
                        to_free -= 1 << order;
                    }
                }
            }
            _ => {
                // 2.6.x .. 5.13: round-robin from the list after the first, taking one
                // more page from a list for each empty list passed (batch_free); the only
                // non-empty list gives the rest.
                let order: [usize; MIGRATE_PCPTYPES] = if self.cold_frees() {
                    [MigrateType::Unmovable as usize, MigrateType::Reclaimable as usize, MigrateType::Movable as usize]
                } else {
                    [MigrateType::Unmovable as usize, MigrateType::Movable as usize, MigrateType::Reclaimable as usize]
                };
                let (mut i, mut batch_free) = (0usize, 0u32);
                while to_free > 0 {
                    loop {
                        batch_free += 1;
                        i = (i + 1) % MIGRATE_PCPTYPES;
                        if self.lists[cpu][order[i]].first != NIL {
                            break;
                        }
                    }
                    if batch_free == MIGRATE_PCPTYPES as u32 {
                        batch_free = to_free as u32;
                    }
                    while let Some((p, mt, k)) = self.unlink(pages, cpu, order[i], true) {
                        debug_assert_eq!(k, 0, "only order-0 lists before 5.13");
                        free_one(pages, p, 0, mt);
                        to_free -= 1;
                        batch_free -= 1;
                        if to_free == 0 || batch_free == 0 {
                            break;
                        }
                    }
                }
            }
        }
        let n = before - self.count[cpu];
        self.bulk_free += n as u64;
        n
    }

    /// The CPU whose lists are longest (drain_all_pages takes pages back from every CPU; an
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

    /// Every list is NIL-ended both ways, holds frames marked as on a CPU list, and the
    /// counts are the lists' lengths.
    pub fn check_lists(&self, pages: &Pages) -> Result<(), String> {
        let mut total = 0u64;
        for (cpu, lists) in self.lists.iter().enumerate() {
            let mut n = 0u32;
            for l in lists {
                let (mut p, mut prev) = (l.first, NIL);
                while p != NIL {
                    if pages.pcp_migratetype(p).is_none() {
                        return Err(format!("frame {p} on CPU {cpu}'s list is not a CPU-list frame"));
                    }
                    if pages.prev(p) != prev {
                        return Err(format!("frame {p} on CPU {cpu}'s list: broken back link"));
                    }
                    let order = pages.pcp_order(p);
                    if order > PAGE_ALLOC_COSTLY_ORDER || p % (1 << order) != 0 {
                        return Err(format!("block {p} of order {order} on CPU {cpu}'s list"));
                    }
                    n += 1 << order;
                    if n > self.count[cpu] {
                        return Err(format!("CPU {cpu}'s lists hold more than its count {}", self.count[cpu]));
                    }
                    prev = p;
                    p = pages.next(p);
                }
                if l.last != prev {
                    return Err(format!("CPU {cpu}'s list ends at {prev}, its last is {}", l.last));
                }
            }
            if n != self.count[cpu] {
                return Err(format!("CPU {cpu}'s lists hold {n} frames, its count is {}", self.count[cpu]));
            }
            total += n as u64;
        }
        if total != self.total {
            return Err(format!("the CPU lists hold {total} frames, the total is {}", self.total));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Free frames 0..n one by one on `cpu` (hot), draining as free_unref_page_commit does;
    /// returns the pages drained, in order, with their types.
    fn free_all(p: &mut Pagesets, pages: &mut Pages, cpu: usize, frames: std::ops::Range<Pfn>, reclaim_active: bool) -> Vec<(Pfn, MigrateType)> {
        let mut back = Vec::new();
        for q in frames {
            pages.set_allocated(q);
            p.push(pages, cpu, q, MigrateType::Movable, false);
            let n = p.nr_to_free(cpu, reclaim_active);
            if n > 0 {
                p.free_bulk(pages, cpu, n, MigrateType::Movable, 0, |_, q, _, mt| back.push((q, mt)));
            }
        }
        back
    }

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
        let p = Pagesets::new(PcpRule::SixBatches { cap_kb: 1024, cold: false }, 4, 1 << 20, 10_000);
        assert_eq!((p.batch, p.high), (63, 378));
        let p = Pagesets::new(PcpRule::LowWmarkShare, 4, 1 << 20, 10_000);
        assert_eq!((p.batch, p.high), (63, 2500));
        // Many CPUs: at least four batches each.
        let p = Pagesets::new(PcpRule::LowWmarkShare, 64, 1 << 20, 10_000);
        assert_eq!(p.high, 252);
    }

    /// A full list gives back one batch, the oldest pages (the tail), and keeps the rest;
    /// the next allocation takes the page freed last (the head).
    #[test]
    fn a_full_list_frees_its_oldest_batch_and_the_newest_page_is_used_first() {
        let mut pages = Pages::new(2000, 0);
        let mut p = Pagesets::new(PcpRule::SixBatches { cap_kb: 1024, cold: false }, 2, 1 << 20, 0);
        let back = free_all(&mut p, &mut pages, 1, 0..1000, false);
        assert_eq!(p.count[0], 0);
        assert!(p.count[1] < p.high && p.count[1] >= p.high - p.batch, "{}", p.count[1]);
        assert_eq!(back.len() as u64 + p.total, 1000);
        assert_eq!(back.len() as u32 % p.batch, 0);
        // The first batch back is the first pages freed, oldest first.
        let first: Vec<Pfn> = back[..p.batch as usize].iter().map(|&(q, _)| q).collect();
        assert_eq!(first, (0..p.batch).collect::<Vec<_>>());
        assert!(back.iter().all(|&(_, mt)| mt == MigrateType::Movable));
        p.check_lists(&pages).unwrap();
        assert_eq!(p.take(&mut pages, 1, MigrateType::Movable, false), Some(999));
        assert_eq!(pages.pcp_migratetype(999), None, "taken off the list");
        assert_eq!(p.take(&mut pages, 0, MigrateType::Movable, false), None, "CPU 0's list is empty");
        p.check_lists(&pages).unwrap();
    }

    /// Each migrate type has its own list; MIGRATE_RESERVE pages share the movable one and
    /// keep their type for the buddy lists; a cold free goes to the tail.
    #[test]
    fn lists_by_migrate_type_and_cold_frees_at_the_tail() {
        let mut pages = Pages::new(16, 0);
        let mut p = Pagesets::new(PcpRule::SixBatches { cap_kb: 512, cold: true }, 1, 1 << 20, 0);
        for (q, mt, tail) in [(0, MigrateType::Movable, false), (1, MigrateType::Reclaimable, false), (2, MigrateType::Reserve, false), (3, MigrateType::Movable, true)] {
            pages.set_allocated(q);
            p.push(&mut pages, 0, q, mt, tail);
        }
        assert_eq!(p.count[0], 4);
        assert!(p.list_empty(0, MigrateType::Unmovable) && !p.list_empty(0, MigrateType::Reclaimable));
        // Movable list: 2 (reserve, hot), 0, 3 (cold).
        assert_eq!(p.take(&mut pages, 0, MigrateType::Movable, false), Some(2));
        // Drain the rest: 2.6.39's round robin starts after list 0 (reclaimable first).
        let mut back = Vec::new();
        p.free_bulk(&mut pages, 0, 3, MigrateType::Movable, 0, |_, q, _, mt| back.push((q, mt)));
        assert_eq!(back, vec![(1, MigrateType::Reclaimable), (3, MigrateType::Movable), (0, MigrateType::Movable)]);
        assert_eq!(p.total, 0);
        p.check_lists(&pages).unwrap();
        // The type recorded at the free is the one given back.
        pages.set_allocated(5);
        p.push(&mut pages, 0, 5, MigrateType::Reserve, false);
        let mut back = Vec::new();
        p.free_bulk(&mut pages, 0, 1, MigrateType::Movable, 0, |_, q, _, mt| back.push((q, mt)));
        assert_eq!(back, vec![(5, MigrateType::Reserve)]);
    }

    /// 6.x: a block of order 3 counts its eight frames on the list and goes back whole;
    /// freeing it while the CPU frees without allocating (free_factor) empties the lists.
    #[test]
    fn blocks_of_higher_orders_count_their_frames_and_free_high_empties_the_lists() {
        let mut pages = Pages::new(64, 0);
        let mut p = Pagesets::new(PcpRule::LowWmarkShare, 1, 1 << 20, 100_000);
        assert!(p.allowed_order(3) && !p.allowed_order(4));
        for q in 0..8 {
            pages.set_allocated(q);
        }
        p.push_order(&mut pages, 0, 0, MigrateType::Reclaimable, 3, false);
        assert_eq!((p.count[0], p.total), (8, 8));
        p.check_lists(&pages).unwrap();
        assert!(p.list_empty(0, MigrateType::Reclaimable) && !p.list_empty_order(0, MigrateType::Reclaimable, 3));
        assert_eq!(p.nr_to_free_order(0, false, 3), 0, "no free_factor yet: high is far");
        assert_eq!(p.take_order(&mut pages, 0, MigrateType::Reclaimable, 3, false), Some(0));
        assert_eq!(p.count[0], 0);
        // Order-0 frees past high raise free_factor; then an order-3 free empties all.
        for q in 8..64 {
            pages.set_allocated(q);
        }
        (p.batch, p.high) = (1, 4);
        for q in 16..24 {
            p.push(&mut pages, 0, q, MigrateType::Movable, false);
            let n = p.nr_to_free(0, false);
            if n > 0 {
                p.free_bulk(&mut pages, 0, n, MigrateType::Movable, 0, |_, _, _, _| {});
            }
        }
        assert!(p.count[0] > 0);
        p.push_order(&mut pages, 0, 0, MigrateType::Reclaimable, 3, false);
        let n = p.nr_to_free_order(0, false, 3);
        assert_eq!(n, p.count[0], "free_high: everything");
        let mut back = Vec::new();
        assert_eq!(p.free_bulk(&mut pages, 0, n, MigrateType::Reclaimable, 3, |_, q, k, mt| back.push((q, k, mt))), n);
        assert_eq!(back[0], (0, 3, MigrateType::Reclaimable), "the freed block's list first, whole");
        assert_eq!(p.total, 0);
        p.check_lists(&pages).unwrap();
    }

    /// 5.14+: the list of the page whose free overflowed goes back first, emptied before
    /// the next.
    #[test]
    fn six_x_drains_the_freeing_pages_list_first() {
        let mut pages = Pages::new(16, 0);
        let mut p = Pagesets::new(PcpRule::LowWmarkShare, 1, 1 << 20, 0);
        for (q, mt) in [(0, MigrateType::Unmovable), (1, MigrateType::Movable), (2, MigrateType::Movable), (3, MigrateType::Reclaimable)] {
            pages.set_allocated(q);
            p.push(&mut pages, 0, q, mt, false);
        }
        let mut back = Vec::new();
        p.free_bulk(&mut pages, 0, 3, MigrateType::Movable, 0, |_, q, _, _| back.push(q));
        assert_eq!(back, vec![1, 2, 3]);
        assert_eq!(p.take(&mut pages, 0, MigrateType::Unmovable, false), Some(0));
    }

    #[test]
    fn nr_pcp_free_scales_the_batch_while_frees_continue_and_allocations_reset_it() {
        let mut pages = Pages::new(40_000, 0);
        let mut p = Pagesets::new(PcpRule::LowWmarkShare, 1, 1 << 20, 4000);
        assert_eq!((p.batch, p.high), (63, 4000));
        let mut drains = Vec::new();
        for q in 0..20_000 {
            pages.set_allocated(q);
            p.push(&mut pages, 0, q, MigrateType::Movable, false);
            let n = p.nr_to_free(0, false);
            if n > 0 {
                drains.push(p.free_bulk(&mut pages, 0, n, MigrateType::Movable, 0, |_, _, _, _| {}));
            }
        }
        assert_eq!(drains[0], 63);
        assert!(drains[1] > drains[0] && *drains.iter().max().unwrap() == 4000 - 63, "{drains:?}");
        for _ in 0..10 {
            p.take(&mut pages, 0, MigrateType::Movable, false).unwrap();
        }
        assert_eq!(p.free_factor[0], 0);
        // kswapd at work: the list is kept at four batches.
        let mut q = Pagesets::new(PcpRule::LowWmarkShare, 1, 1 << 20, 4000);
        free_all(&mut q, &mut pages, 0, 20_000..21_000, true);
        assert!(q.count[0] < 4 * 63);
        q.check_lists(&pages).unwrap();
    }

    #[test]
    fn stat_threshold_of_a_4_cpu_4_gib_zone() {
        let p = Pagesets::new(PcpRule::LowWmarkShare, 4, 1 << 20, 0);
        // fls(4) = 3, 4096 MiB / 128 = 32 -> fls = 6: 2 * 3 * 7 = 42.
        assert_eq!(p.stat_threshold(1 << 20), 42);
    }
}
