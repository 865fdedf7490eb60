//! Pageblock migrate types (mm/page_alloc.c: set_pageblock_migratetype, the fallback steal
//! rules; mm/vmstat.c: /proc/pagetypeinfo). Every pageblock (512 frames, `PAGEBLOCK_ORDER`)
//! records the kind of allocation it is meant for: movable (page cache, anonymous memory),
//! reclaimable (reclaimable slab) or unmovable (other kernel memory); at boot every block is
//! movable (memmap_init_range), and 2.6.39 keeps up to two blocks at the start of the zone
//! as MIGRATE_RESERVE (setup_zone_migrate_reserve).
//!
//! An allocation takes a frame of its own type's free list first (__rmqueue_smallest); with
//! that list empty it falls back (__rmqueue_fallback), to the largest free block of another
//! type first: a wholly free pageblock is taken over at once. Without one it takes a frame
//! of the fallback lists — a fragmentation event, which boosts the watermarks on 5.0+
//! (`Mm::boost_watermark`) — and a kernel allocation takes that block over when enough of
//! it is free or already its kind (the steal rule below). The free lists are one order (no
//! buddy blocks below a pageblock), so a fallback that finds no whole block takes one frame
//! where the kernel moves the whole smaller buddy block it found to its own type's list:
//! where memory is fragmented the model falls back more often, once per page.

use super::compaction::{PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use super::lru::FreeList;
use super::page::{Lru, Pfn};
use super::Mm;

/// The model's migrate types (enum migratetype, the ones it uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum MigrateType {
    Unmovable = 0,
    Movable = 1,
    Reclaimable = 2,
    /// MIGRATE_RESERVE (2.6.24 .. 3.x): never stolen, never a compaction target.
    Reserve = 3,
}
pub const NR_MIGRATE_TYPES: usize = 4;

impl MigrateType {
    fn from_u8(v: u8) -> MigrateType {
        match v {
            0 => MigrateType::Unmovable,
            2 => MigrateType::Reclaimable,
            3 => MigrateType::Reserve,
            _ => MigrateType::Movable,
        }
    }
}

/// How a fallback allocation takes a block over (steal_suitable_fallback vs 2.6.39's
/// __rmqueue_fallback).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StealRule {
    /// 2.6.39: the block is claimed when at least half of it is free (move_freepages_block
    /// counts the free pages moved).
    HalfFree,
    /// 4.x+ (steal_suitable_fallback): free pages plus pages already of the stealing kind
    /// ("alike": for an unmovable or reclaimable steal from a movable block, the pages that
    /// are neither free nor movable) must make half the block.
    HalfFreeOrAlike,
}

/// The migrate type of every pageblock of the zone, one byte each.
#[derive(Clone, Debug, Default)]
pub struct Pageblocks {
    mt: Vec<u8>,
}

impl Pageblocks {
    /// All blocks of `frames` frames movable; the first `reserve` blocks MIGRATE_RESERVE.
    pub fn new(frames: u64, reserve: u64) -> Pageblocks {
        let n = frames.div_ceil(PAGEBLOCK_NR_PAGES) as usize;
        let mut mt = vec![MigrateType::Movable as u8; n];
        for b in mt.iter_mut().take(reserve as usize) {
            *b = MigrateType::Reserve as u8;
        }
        Pageblocks { mt }
    }
    #[inline]
    pub fn of(&self, p: u64) -> MigrateType {
        self.mt.get((p >> PAGEBLOCK_ORDER) as usize).map_or(MigrateType::Movable, |&v| MigrateType::from_u8(v))
    }
    /// Set the type of the block holding frame `p` (set_pageblock_migratetype).
    pub fn set(&mut self, p: u64, t: MigrateType) {
        if let Some(b) = self.mt.get_mut((p >> PAGEBLOCK_ORDER) as usize) {
            *b = t as u8;
        }
    }
    /// Blocks of each type.
    pub fn count(&self) -> [u64; NR_MIGRATE_TYPES] {
        let mut c = [0; NR_MIGRATE_TYPES];
        for &v in &self.mt {
            c[v as usize] += 1;
        }
        c
    }
}

/// The free list a free frame of a block of type `t` is on (MIGRATE_RESERVE's: the movable
/// list; reserve blocks are the lowest, taken last).
pub fn free_list_of(t: MigrateType) -> FreeList {
    match t {
        MigrateType::Unmovable => FreeList::Unmovable,
        MigrateType::Reclaimable => FreeList::Reclaimable,
        MigrateType::Movable | MigrateType::Reserve => FreeList::Movable,
    }
}

impl Mm {
    /// __rmqueue_fallback for an allocation of type `t` whose own free list is empty: the
    /// largest free block of another type first. A wholly free pageblock is taken over
    /// at once ("Take ownership for orders >= pageblock_order"), with no boost. Otherwise
    /// the largest free buddy block of the other types — here the largest aligned free run
    /// of the pageblock with the most free frames of theirs — is a fragmentation event
    /// (boost_watermark, 5.0+), and where the era may steal (can_steal_fallback) all the
    /// free frames of that pageblock go to `t`'s list and the block becomes `t`'s when the
    /// steal rule says so (steal_suitable_fallback; 2.6.39's __rmqueue_fallback);
    /// otherwise the first frame of the buddy block found is taken (the model's free
    /// frames of a block share one list: 6.x's move of that buddy block alone to `t`'s list
    /// is not kept).
    #[cold]
    pub(crate) fn rmqueue_fallback(&mut self, t: MigrateType) -> Option<Pfn> {
        let own = free_list_of(t);
        // Blocks whose free frames are on another list (MIGRATE_RESERVE's are never
        // stolen).
        let other = |mm: &Mm, b: Pfn| mm.pageblocks.of(b as u64) != MigrateType::Reserve && mm.free.block_list(b) != own;
        if let Some(start) = self.free.find_whole_block(|b| other(self, b)) {
            self.pageblocks.set(start as u64, t);
            self.move_freepages_block(start as u64, t);
            return self.free.take_from(&mut self.pages, own);
        }
        let Some(start) = self.free.fullest_block(|b| other(self, b)) else {
            // Only MIGRATE_RESERVE's frames are left (its last-resort fallback): no steal.
            return self.free.take_from(&mut self.pages, FreeList::Movable);
        };
        let start = start as u64;
        let (run, order) = self.largest_free_run(start);
        self.boost_watermark();
        let holds_mark = start < self.free.untouched() as u64;
        let can_steal = holds_mark
            || order >= PAGEBLOCK_ORDER / 2
            || match self.steal_rule {
                StealRule::HalfFree => t == MigrateType::Reclaimable,
                StealRule::HalfFreeOrAlike => t != MigrateType::Movable,
            };
        if !can_steal {
            // The buddy block found is handed out from where it is (6.x moves it to `t`'s
            // list first, single_page; 2.6.39 leaves the rest on its list): its first frame.
            self.free.isolate(&mut self.pages, run as Pfn);
            return Some(run as Pfn);
        }
        self.steal_suitable_fallback(start, t);
        self.free.take_from(&mut self.pages, own)
    }

    /// The largest free buddy block in the pageblock starting at `start` (the first of the
    /// largest order, walking the blocks as `free_block_order` finds them): its first frame
    /// and order.
    fn largest_free_run(&self, start: u64) -> (u64, u32) {
        let end = (start + PAGEBLOCK_NR_PAGES).min(self.pages.nr() as u64);
        let (mut best, mut p) = (None, start);
        while p < end {
            if !self.frame_is_free(p) {
                p += 1;
                continue;
            }
            let k = self.free_block_order(p);
            if best.is_none_or(|(_, o)| k > o) {
                best = Some((p, k));
            }
            p += 1 << k;
        }
        best.expect("a pageblock with free frames has a free frame")
    }

    /// steal_suitable_fallback with whole_block: the free frames of the pageblock at
    /// `start` go to the free list of `t` (move_freepages_block), and the block becomes
    /// `t`'s when enough of it is free or already its kind (the steal rule).
    fn steal_suitable_fallback(&mut self, start: u64, t: MigrateType) {
        let end = (start + PAGEBLOCK_NR_PAGES).min(self.pages.nr() as u64);
        let old = self.pageblocks.of(start);
        let untouched = self.free.untouched() as u64;
        // Frames below the boot mark are free without a record; the others are counted
        // from their records.
        let touched = start.max(untouched).min(end);
        let (cf, ch) = self.pages.census(touched as Pfn, end as Pfn);
        let free = (touched - start) + cf as u64;
        let movable = (end - touched) - cf as u64 - ch as u64;
        let alike = match self.steal_rule {
            StealRule::HalfFree => 0,
            // "For movable allocation, it's the number of movable pages"; a kernel
            // allocation in a movable block counts every page neither free nor movable.
            StealRule::HalfFreeOrAlike if t == MigrateType::Movable => movable,
            StealRule::HalfFreeOrAlike if old == MigrateType::Movable => (end - start) - free - movable,
            StealRule::HalfFreeOrAlike => 0,
        };
        if free + alike >= PAGEBLOCK_NR_PAGES / 2 {
            self.pageblocks.set(start, t);
        }
        self.move_freepages_block(start, t);
    }

    /// move_freepages_block: the free frames of the block [start, end) go to the free list
    /// of type `t`, never-used ones included (linked now: the boot mark drops to the
    /// block's start).
    pub(crate) fn move_freepages_block(&mut self, start: u64, t: MigrateType) {
        if (self.free.untouched() as u64) > start {
            self.free.link_untouched_from(&mut self.pages, start as Pfn);
        }
        self.free.move_block(start as Pfn, free_list_of(t));
    }

    /// Free buddy blocks per migrate type and order 0..`orders` (pagetypeinfo_showfree): a
    /// free block is on the free list of its first frame's pageblock type.
    pub fn free_blocks_per_type(&self, orders: usize) -> [Vec<u64>; NR_MIGRATE_TYPES] {
        let mut out: [Vec<u64>; NR_MIGRATE_TYPES] = std::array::from_fn(|_| vec![0; orders]);
        let n = self.pages.nr() as u64;
        let untouched = self.free.untouched() as u64;
        let max = orders as u32 - 1;
        let mut p = 0u64;
        while p < n {
            if !(p < untouched || self.pages.lru(p as Pfn) == Lru::Free) {
                p += 1;
                continue;
            }
            let k = self.free_block_order(p).min(max);
            out[self.pageblocks.of(p) as usize][k as usize] += 1;
            p += 1 << k;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::{KernelOwner, Watermarks};

    fn mm(frames: u64, rule: StealRule) -> Mm {
        let mut mm = Mm::try_new(frames, Watermarks { min_free_kbytes: 0, min: 0, low: 0, high: 0 }).unwrap();
        mm.steal_rule = rule;
        mm
    }

    #[test]
    fn a_kernel_allocation_takes_over_a_mostly_free_movable_block_only() {
        for rule in [StealRule::HalfFree, StealRule::HalfFreeOrAlike] {
            let mut mm = mm(4 * PAGEBLOCK_NR_PAGES, rule);
            assert_eq!(mm.pageblocks.count(), [0, 4, 0, 0], "every block starts movable");
            // The allocator hands out the top block first: a mostly free block is claimed.
            let p = mm.take_kernel(KernelOwner::Other).unwrap();
            assert_eq!(mm.pageblocks.of(p as u64), MigrateType::Unmovable);
            // Its free frames are on the unmovable list now: the next kernel pages come from
            // it (__rmqueue_smallest), and movable ones from the blocks below.
            let q = mm.take_free().unwrap();
            assert_eq!(q as u64 >> PAGEBLOCK_ORDER, 2, "{q}");
            mm.put_free(q);
            for _ in 1..PAGEBLOCK_NR_PAGES {
                let k = mm.take_kernel(KernelOwner::Other).unwrap();
                assert_eq!(k as u64 >> PAGEBLOCK_ORDER, 3, "{k}");
            }
            // Fill the next block with movable pages but one frame, and the blocks below
            // with pages held (no other free frame); then a kernel page goes in the free
            // frame of the movable block, the unmovable list being empty: the block stays
            // movable (not half free, and its other pages are movable, not alike).
            let held: Vec<Pfn> = std::iter::from_fn(|| mm.take_free()).collect();
            let last = held.iter().copied().find(|&q| q as u64 >> PAGEBLOCK_ORDER == 2).unwrap();
            for &q in &held {
                match q as u64 >> PAGEBLOCK_ORDER {
                    2 if q != last => {
                        mm.pages.set_owner(q, 1, q as u64);
                        mm.pages.set_lru(q, Lru::InactiveFile);
                    }
                    _ => {}
                }
            }
            mm.put_free(last);
            let q = mm.take_kernel(KernelOwner::Other).unwrap();
            assert_eq!(q, last);
            assert_eq!(mm.pageblocks.of(q as u64), MigrateType::Movable, "{rule:?}");
        }
    }

    #[test]
    fn a_block_of_kernel_pages_is_claimed_only_where_alike_pages_count() {
        for rule in [StealRule::HalfFree, StealRule::HalfFreeOrAlike] {
            let mut mm = mm(4 * PAGEBLOCK_NR_PAGES, rule);
            // The top block goes to kernel pages (the first claims it, the rest come from
            // its free frames on the unmovable list); then most of the next one: three
            // quarters of it held by the kernel outside any list, a few pages movable, the
            // rest free.
            for _ in 0..PAGEBLOCK_NR_PAGES {
                mm.take_kernel(KernelOwner::Other).unwrap();
            }
            assert_eq!(mm.free.nr_free, 3 * PAGEBLOCK_NR_PAGES);
            // Every frame below taken; the next block gets an eighth back (its largest free
            // block is the largest of all).
            let held: Vec<Pfn> = std::iter::from_fn(|| mm.take_free()).collect();
            let mut back = Vec::new();
            for &q in &held {
                let i = q as u64 % PAGEBLOCK_NR_PAGES;
                match q as u64 >> PAGEBLOCK_ORDER {
                    2 if i < PAGEBLOCK_NR_PAGES / 8 => back.push(q),
                    2 if i % 8 == 0 => {
                        mm.pages.set_owner(q, 1, q as u64);
                        mm.pages.set_lru(q, Lru::InactiveFile);
                    }
                    _ => {}
                }
            }
            for q in back {
                mm.put_free(q);
            }
            let q = mm.take_kernel(KernelOwner::Other).unwrap();
            assert_eq!(q as u64 >> PAGEBLOCK_ORDER, 2, "{q}");
            // Free: 1/8 of the block (under half); alike: ~3/4 (steal_suitable_fallback's
            // free_pages + alike_pages >= pageblock_nr_pages / 2, 4.12+).
            let want = if rule == StealRule::HalfFree { MigrateType::Movable } else { MigrateType::Unmovable };
            assert_eq!(mm.pageblocks.of(q as u64), want, "{rule:?}");
        }
    }

    #[test]
    fn free_blocks_are_counted_under_their_block_type() {
        let mut mm = mm(4 * PAGEBLOCK_NR_PAGES, StealRule::HalfFreeOrAlike);
        mm.pageblocks = Pageblocks::new(4 * PAGEBLOCK_NR_PAGES, 1);
        let t = mm.free_blocks_per_type(11);
        // Orders stop at 10 (two blocks): the reserve block heads the first pair.
        assert_eq!(t[MigrateType::Reserve as usize][10], 1);
        assert_eq!(t[MigrateType::Movable as usize][10], 1);
        assert_eq!(mm.pageblocks.count(), [0, 3, 0, 1]);
    }

    /// A machine of `blocks` pageblocks whose high watermark is `high`, boosting with
    /// `factor`, every block three quarters full of movable pages (no block wholly free,
    /// none that a fallback would take over).
    fn fragmented(blocks: u64, high: u64, factor: u64) -> Mm {
        let mut mm = Mm::try_new(blocks * PAGEBLOCK_NR_PAGES, Watermarks { min_free_kbytes: 0, min: high / 2, low: high * 3 / 4, high }).unwrap();
        mm.watermark_boost_factor = factor;
        let held: Vec<Pfn> = std::iter::from_fn(|| mm.take_free()).collect();
        for &q in held.iter().rev() {
            if q % 4 == 0 {
                mm.put_free(q);
            } else {
                mm.pages.set_owner(q, 1, q as u64);
                mm.pages.set_lru(q, Lru::InactiveFile);
            }
        }
        assert_eq!(mm.free.nr_whole_blocks(), 0);
        mm
    }

    #[test]
    fn a_fallback_takes_a_wholly_free_block_over_without_boosting() {
        // steal_suitable_fallback: "Take ownership for orders >= pageblock_order" comes
        // before boost_watermark.
        let mut mm = mm(8 * PAGEBLOCK_NR_PAGES, StealRule::HalfFreeOrAlike);
        mm.wmark.high = 1000;
        mm.watermark_boost_factor = 15000;
        let p = mm.take_kernel(KernelOwner::Other).unwrap();
        assert_eq!(p as u64 >> PAGEBLOCK_ORDER, 7, "the highest whole block");
        assert_eq!(mm.pageblocks.of(p as u64), MigrateType::Unmovable);
        assert_eq!((mm.watermark_boost, mm.zone_boosted), (0, false));
        assert_eq!(mm.free.nr_whole_blocks(), 7);
        // The next kernel pages come from the claimed block's frames, no fallback.
        for _ in 1..PAGEBLOCK_NR_PAGES {
            assert_eq!(mm.take_kernel(KernelOwner::Other).unwrap() as u64 >> PAGEBLOCK_ORDER, 7);
        }
        assert_eq!(mm.watermark_boost, 0);
        mm.check_invariants().unwrap();
    }

    #[test]
    fn a_fallback_without_a_whole_free_block_boosts_the_watermarks_up_to_the_factor() {
        // boost_watermark: a pageblock per fragmentation event, up to factor/10000 of the
        // high watermark (at least a pageblock).
        let mut mm = fragmented(8, 1000, 15000);
        let p = mm.take_kernel(KernelOwner::Other).unwrap();
        assert_eq!(mm.pageblocks.of(p as u64), MigrateType::Movable, "not taken over");
        assert_eq!((mm.watermark_boost, mm.zone_boosted), (PAGEBLOCK_NR_PAGES, true));
        assert_eq!(mm.wmark_pages().high, 1000 + PAGEBLOCK_NR_PAGES);
        assert_eq!(mm.wmark_pages().min, 500 + PAGEBLOCK_NR_PAGES);
        // The block's other free frames went to the unmovable list: the next kernel pages
        // come from there, then the next block's fallback boosts again.
        let quarter = PAGEBLOCK_NR_PAGES / 4;
        for _ in 1..quarter {
            mm.take_kernel(KernelOwner::Other).unwrap();
        }
        assert_eq!(mm.watermark_boost, PAGEBLOCK_NR_PAGES);
        for _ in 0..2 * quarter {
            mm.take_kernel(KernelOwner::Other).unwrap();
        }
        assert_eq!(mm.watermark_boost, 1500, "capped at 15000/10000 of high");
        // A movable allocation whose list is empty falls back too (here to a block made
        // unmovable).
        let mut mm = fragmented(8, 1000, 15000);
        mm.pageblocks.set(0, MigrateType::Unmovable);
        mm.move_freepages_block(0, MigrateType::Unmovable);
        while mm.free.take(&mut mm.pages).is_some() {}
        assert_eq!(mm.watermark_boost, 0);
        let q = mm.take_free().unwrap();
        assert_eq!(q as u64 >> PAGEBLOCK_ORDER, 0);
        assert_eq!(mm.watermark_boost, PAGEBLOCK_NR_PAGES);
        // Factor 0, or a zone under four pageblocks: never.
        let mut mm = fragmented(8, 1000, 0);
        mm.take_kernel(KernelOwner::Other).unwrap();
        assert_eq!((mm.watermark_boost, mm.zone_boosted), (0, false));
        let mut mm = fragmented(3, 1000, 15000);
        mm.take_kernel(KernelOwner::Other).unwrap();
        assert_eq!(mm.watermark_boost, 0);
        // A small high watermark still boosts by a pageblock.
        let mut mm = fragmented(8, 100, 15000);
        mm.take_kernel(KernelOwner::Other).unwrap();
        assert_eq!(mm.watermark_boost, PAGEBLOCK_NR_PAGES);
    }

    /// can_steal_fallback by era: from a block whose largest free run is small (here order
    /// 0), 4.x+ moves the block's free frames to any kernel allocation's list, 2.6.39 only
    /// to a reclaimable one (an unmovable allocation takes its frame and leaves the rest);
    /// a movable allocation never does.
    #[test]
    fn small_free_runs_are_stolen_by_era() {
        let taken_again = |rule: StealRule, t: MigrateType| {
            let mut mm = fragmented(8, 1000, 0);
            mm.steal_rule = rule;
            let p = mm.take_typed(t).unwrap();
            // Did the block's other free frames come along (the next allocation from the
            // same block without a new fallback)?
            let q = mm.take_typed(t).unwrap();
            (p as u64 >> PAGEBLOCK_ORDER, q as u64 >> PAGEBLOCK_ORDER, mm.free.block_list(p) == FreeList::Movable)
        };
        // The fallback found the top block; its frames moved: the next page from it too.
        for t in [MigrateType::Unmovable, MigrateType::Reclaimable] {
            assert_eq!(taken_again(StealRule::HalfFreeOrAlike, t), (7, 7, false), "{t:?}");
        }
        assert_eq!(taken_again(StealRule::HalfFree, MigrateType::Reclaimable), (7, 7, false), "2.6.39, reclaimable");
        // 2.6.39, unmovable: the frames stay on the movable list.
        let (_, _, left) = taken_again(StealRule::HalfFree, MigrateType::Unmovable);
        assert!(left);
        // A movable allocation with its list empty takes one frame of the unmovable block
        // and leaves the block where it is.
        let mut mm = fragmented(8, 1000, 0);
        mm.pageblocks.set(0, MigrateType::Unmovable);
        mm.move_freepages_block(0, MigrateType::Unmovable);
        while mm.free.take(&mut mm.pages).is_some() {}
        let q = mm.take_free().unwrap();
        assert_eq!(q as u64 >> PAGEBLOCK_ORDER, 0);
        assert_eq!(mm.free.block_list(q), FreeList::Unmovable);
        assert_eq!(mm.pageblocks.of(q as u64), MigrateType::Unmovable);
    }
}
