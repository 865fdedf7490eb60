//! Pageblock migrate types (mm/page_alloc.c: set_pageblock_migratetype, the fallback steal
//! rules; mm/vmstat.c: /proc/pagetypeinfo). Every pageblock (512 frames, `PAGEBLOCK_ORDER`)
//! records the kind of allocation it is meant for: movable (page cache, anonymous memory),
//! reclaimable (reclaimable slab) or unmovable (other kernel memory); at boot every block is
//! movable (memmap_init_range), and 2.6.39 keeps up to two blocks at the start of the zone
//! as MIGRATE_RESERVE (setup_zone_migrate_reserve).
//!
//! An allocation takes a frame of its own type's free lists first (__rmqueue_smallest, in
//! `buddy`); with those empty it falls back (__rmqueue_fallback), to the largest free block
//! of another type first: a free block of pageblock order or more is taken over at once.
//! A smaller one is a fragmentation event, which boosts the watermarks on 5.0+
//! (`Mm::boost_watermark`), and a kernel allocation takes its pageblock over when enough of
//! it is free or already its kind (the steal rule below).

use super::buddy::{MAX_BUDDY_ORDER, NR_ORDERS};
use super::compaction::{PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use super::page::Pfn;
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
    pub const ALL: [MigrateType; NR_MIGRATE_TYPES] = [MigrateType::Unmovable, MigrateType::Movable, MigrateType::Reclaimable, MigrateType::Reserve];
    pub(crate) fn from_u8(v: u8) -> MigrateType {
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

/// The lists an allocation of type `t` falls back to, in order (the fallbacks table; never
/// MIGRATE_RESERVE, 2.6.39's last resort).
fn fallbacks(t: MigrateType) -> [MigrateType; 2] {
    match t {
        MigrateType::Unmovable => [MigrateType::Reclaimable, MigrateType::Movable],
        MigrateType::Reclaimable => [MigrateType::Unmovable, MigrateType::Movable],
        MigrateType::Movable | MigrateType::Reserve => [MigrateType::Reclaimable, MigrateType::Unmovable],
    }
}

impl Mm {
    /// The first fallback list of `t` with a free block of order `k` (find_suitable_fallback
    /// with only_stealable false).
    fn fallback_at(&self, t: MigrateType, k: u32) -> Option<MigrateType> {
        fallbacks(t).into_iter().find(|&l| self.free.orders(l) & (1 << k) != 0)
    }

    /// __rmqueue_fallback for an allocation of type `t` (order 0) whose own free lists are
    /// empty: the largest free block of the fallback lists first, "Find the largest
    /// available free page in the other list". Where the era may steal from it
    /// (can_steal_fallback: any block of order >= pageblock_order / 2; a reclaimable
    /// allocation on 2.6.39; an unmovable or reclaimable one on 4.x+) the free blocks of
    /// its pageblock move to `t`'s list and the pageblock may become `t`'s (the steal rule);
    /// a block of pageblock order or more becomes `t`'s whole. On 4.x+ a movable allocation
    /// that may not steal takes the smallest fallback block instead (find_smallest), and a
    /// fallback from below pageblock order is a fragmentation event that boosts the
    /// watermarks (boost_watermark, 5.0+). With nothing on the fallback lists, 2.6.39 takes
    /// MIGRATE_RESERVE's frames.
    #[cold]
    pub(crate) fn rmqueue_fallback(&mut self, t: MigrateType) -> Option<Pfn> {
        self.rmqueue_fallback_order(t, 0)
    }

    /// `rmqueue_fallback` for a block of order `order`: the fallback blocks searched are
    /// those of order `order` or more ("current_order >= order"); the block handed out is
    /// the head of an order-`order` block, every frame of it allocated.
    #[cold]
    pub(crate) fn rmqueue_fallback_order(&mut self, t: MigrateType, order: u32) -> Option<Pfn> {
        let found = (order..=MAX_BUDDY_ORDER).rev().find_map(|k| self.fallback_at(t, k).map(|l| (l, k)));
        let Some((mut from, mut k)) = found else {
            return self.free.take_order_from(&mut self.pages, MigrateType::Reserve, order);
        };
        let old = self.steal_rule == StealRule::HalfFree;
        let can_steal = |k: u32| {
            k >= PAGEBLOCK_ORDER / 2
                || if old { t == MigrateType::Reclaimable } else { t != MigrateType::Movable }
        };
        if old {
            // 2.6.39: the block found is handed out here, split onto `t`'s list when its
            // pageblock was stolen, else onto the list it came from.
            let head = self.free.first_block(&mut self.pages, from, k).expect("a fallback block");
            let mut to = from;
            if can_steal(k) {
                let moved = self.move_freepages_block(head as u64, t);
                // "Claim the whole block if over half of it is free"
                if moved >= PAGEBLOCK_NR_PAGES / 2 {
                    self.pageblocks.set(head as u64, t);
                }
                to = t;
            }
            if k >= PAGEBLOCK_ORDER {
                self.change_pageblock_range(head as u64, k, t);
            }
            return Some(self.free.alloc_block_order(&mut self.pages, head, order, to));
        }
        if !can_steal(k) && t == MigrateType::Movable && k > order {
            // find_smallest: do not break a large block for a movable page that cannot
            // take its pageblock.
            (from, k) = (order..=MAX_BUDDY_ORDER).find_map(|k| self.fallback_at(t, k).map(|l| (l, k))).expect("a fallback block");
        }
        let head = self.free.first_block(&mut self.pages, from, k).expect("a fallback block");
        self.steal_suitable_fallback(head, k, t, can_steal(k));
        self.free.take_order_from(&mut self.pages, t, order)
    }

    /// steal_suitable_fallback (4.x+) for the free block of order `k` headed by `head`: a
    /// block of pageblock order or more becomes `t`'s whole; otherwise the watermarks are
    /// boosted, and with `whole_block` the free blocks of its pageblock move to `t`'s list
    /// and the pageblock becomes `t`'s when free pages plus pages already of its kind
    /// ("alike") make half of it; else the block alone moves to `t`'s list (single_page).
    fn steal_suitable_fallback(&mut self, head: Pfn, k: u32, t: MigrateType, whole_block: bool) {
        let single_page = |mm: &mut Mm| {
            let end = head + (1 << k);
            mm.free.move_blocks(&mut mm.pages, head, end, t, true);
        };
        // "Take ownership for orders >= pageblock_order"
        if k >= PAGEBLOCK_ORDER {
            self.change_pageblock_range(head as u64, k, t);
            return single_page(self);
        }
        self.boost_watermark();
        if !whole_block {
            return single_page(self);
        }
        let start = head as u64 & !(PAGEBLOCK_NR_PAGES - 1);
        let end = (start + PAGEBLOCK_NR_PAGES).min(self.pages.nr() as u64);
        let old = self.pageblocks.of(start);
        let free = self.move_freepages_block(start, t);
        // The pages neither free (buddy) nor held outside the LRU lists (kernel pages,
        // pages on CPU lists): movable (move_freepages counts PageLRU and __PageMovable
        // pages).
        let movable_owner = if self.zsmalloc_movable { super::ZRAM_OWNER_CODE } else { u32::MAX };
        let (cf, ch) = self.pages.census(start as Pfn, end as Pfn, movable_owner);
        let movable = (end - start) - cf as u64 - ch as u64;
        // "For movable allocation, it's the number of movable pages"; a kernel
        // allocation in a movable block counts every page neither free nor movable.
        let alike = match (t, old) {
            (MigrateType::Movable, _) => movable,
            (_, MigrateType::Movable) => (end - start) - free - movable,
            _ => 0,
        };
        if free + alike >= PAGEBLOCK_NR_PAGES / 2 {
            self.pageblocks.set(start, t);
        }
    }

    /// change_pageblock_range: every pageblock of the free block of order `k` at `head`
    /// becomes `t`'s.
    fn change_pageblock_range(&mut self, head: u64, k: u32, t: MigrateType) {
        let mut b = head;
        while b < head + (1 << k) {
            self.pageblocks.set(b, t);
            b += PAGEBLOCK_NR_PAGES;
        }
    }

    /// move_freepages_block: the free blocks headed in the pageblock holding `p` go to the
    /// free list of type `t` (never-used frames there are written first); the free frames
    /// moved.
    pub(crate) fn move_freepages_block(&mut self, p: u64, t: MigrateType) -> u64 {
        let start = p & !(PAGEBLOCK_NR_PAGES - 1);
        let end = (start + PAGEBLOCK_NR_PAGES).min(self.pages.nr() as u64);
        self.free.write_never_used_from(&mut self.pages, start as Pfn);
        let to_tail = self.steal_rule != StealRule::HalfFree;
        self.free.move_blocks(&mut self.pages, start as Pfn, end as Pfn, t, to_tail)
    }

    /// setup_zone_migrate_reserve (2.6.39): the first `blocks` pageblocks become
    /// MIGRATE_RESERVE, their free frames on its list.
    pub fn setup_zone_migrate_reserve(&mut self, blocks: u64) {
        self.pageblocks = Pageblocks::new(self.pages.nr() as u64, blocks);
        let end = (blocks * PAGEBLOCK_NR_PAGES).min(self.pages.nr() as u64);
        let pageblocks = &self.pageblocks;
        self.free.list_boot_frames_below(&mut self.pages, end as Pfn, |p| pageblocks.of(p as u64));
        let mut b = 0;
        while b < end {
            self.move_freepages_block(b, MigrateType::Reserve);
            b += PAGEBLOCK_NR_PAGES;
        }
    }

    /// Free buddy blocks per migrate type and order (pagetypeinfo_showfree: the blocks on
    /// each free list).
    pub fn free_blocks_per_type(&self) -> [[u64; NR_ORDERS]; NR_MIGRATE_TYPES] {
        let mut out = [[0; NR_ORDERS]; NR_MIGRATE_TYPES];
        for l in MigrateType::ALL {
            for k in 0..NR_ORDERS {
                out[l as usize][k] = self.free.nr_blocks(l, k as u32);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::{KernelOwner, Lru, Watermarks};

    fn mm(frames: u64, rule: StealRule) -> Mm {
        let mut mm = Mm::try_new(frames, Watermarks { min_free_kbytes: 0, min: 0, low: 0, high: 0 }).unwrap();
        mm.steal_rule = rule;
        mm
    }

    #[test]
    fn a_kernel_allocation_takes_over_a_free_block_of_pageblock_order_whole() {
        for rule in [StealRule::HalfFree, StealRule::HalfFreeOrAlike] {
            let mut mm = mm(4 * PAGEBLOCK_NR_PAGES, rule);
            assert_eq!(mm.pageblocks.count(), [0, 4, 0, 0], "every block starts movable");
            // The largest free block of the movable list is the highest of order 10: both
            // its pageblocks become unmovable (change_pageblock_range), its first frame is
            // the page.
            let p = mm.take_kernel(KernelOwner::Other).unwrap();
            assert_eq!(p as u64, 2 * PAGEBLOCK_NR_PAGES);
            assert_eq!(mm.pageblocks.count(), [2, 2, 0, 0], "{rule:?}");
            // Its other free frames are on the unmovable list: the next kernel pages come
            // from it (__rmqueue_smallest), and movable ones from the blocks below.
            let q = mm.take_free().unwrap();
            assert!((q as u64) < 2 * PAGEBLOCK_NR_PAGES, "{q}");
            mm.put_free(q);
            for _ in 1..2 * PAGEBLOCK_NR_PAGES {
                let k = mm.take_kernel(KernelOwner::Other).unwrap();
                assert!(k as u64 >= 2 * PAGEBLOCK_NR_PAGES, "{k}");
            }
            // Fill block 1 with movable pages but one frame, and block 0 with pages held
            // (no other free frame); then a kernel page goes in the free frame of block 1,
            // the unmovable list being empty: the block stays movable (one frame free,
            // its other pages movable, not alike; 2.6.39 does not steal an order-0 block
            // for an unmovable page).
            let held: Vec<Pfn> = std::iter::from_fn(|| mm.take_free()).collect();
            let last = held.iter().copied().find(|&q| q as u64 >> PAGEBLOCK_ORDER == 1).unwrap();
            for &q in &held {
                if q as u64 >> PAGEBLOCK_ORDER == 1 && q != last {
                    mm.pages.set_owner(q, 1, q as u64);
                    mm.pages.set_lru(q, Lru::InactiveFile);
                }
            }
            mm.put_free(last);
            let q = mm.take_kernel(KernelOwner::Other).unwrap();
            assert_eq!(q, last);
            assert_eq!(mm.pageblocks.of(q as u64), MigrateType::Movable, "{rule:?}");
            mm.free.check_blocks(&mm.pages).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn a_block_of_kernel_pages_is_claimed_only_where_alike_pages_count() {
        for rule in [StealRule::HalfFree, StealRule::HalfFreeOrAlike] {
            let mut mm = mm(4 * PAGEBLOCK_NR_PAGES, rule);
            // Kernel pages take the top order-10 block over and fill its lower pageblock.
            for _ in 0..PAGEBLOCK_NR_PAGES {
                mm.take_kernel(KernelOwner::Other).unwrap();
            }
            assert_eq!(mm.free.nr_free, 3 * PAGEBLOCK_NR_PAGES);
            // Every other frame taken (block 3 by a movable fallback, which takes its
            // order-9 block back to movable); then block 3 gets its first eighth back (one
            // free block of order 6), an eighth of it movable pages, the rest held by the
            // kernel outside any list.
            let held: Vec<Pfn> = std::iter::from_fn(|| mm.take_free()).collect();
            assert_eq!(mm.pageblocks.of(3 * PAGEBLOCK_NR_PAGES), MigrateType::Movable);
            let mut back = Vec::new();
            for &q in &held {
                let i = q as u64 % PAGEBLOCK_NR_PAGES;
                match q as u64 >> PAGEBLOCK_ORDER {
                    3 if i < PAGEBLOCK_NR_PAGES / 8 => back.push(q),
                    3 if i % 8 == 0 => {
                        mm.pages.set_owner(q, 1, q as u64);
                        mm.pages.set_lru(q, Lru::InactiveFile);
                    }
                    _ => {}
                }
            }
            for q in back {
                mm.put_free(q);
            }
            assert_eq!(mm.free_blocks_per_order()[6], 1);
            let q = mm.take_kernel(KernelOwner::Other).unwrap();
            assert_eq!(q as u64, 3 * PAGEBLOCK_NR_PAGES);
            // Free: 1/8 of the block (under half); alike: ~3/4 (steal_suitable_fallback's
            // free_pages + alike_pages >= pageblock_nr_pages / 2, 4.12+).
            let want = if rule == StealRule::HalfFree { MigrateType::Movable } else { MigrateType::Unmovable };
            assert_eq!(mm.pageblocks.of(q as u64), want, "{rule:?}");
        }
    }

    #[test]
    fn free_blocks_are_counted_under_their_block_type() {
        let mut mm = mm(4 * PAGEBLOCK_NR_PAGES, StealRule::HalfFree);
        mm.setup_zone_migrate_reserve(1);
        let t = mm.free_blocks_per_type();
        // The reserve block and the block above it are two blocks of order 9; the other
        // two pageblocks one of order 10.
        assert_eq!(t[MigrateType::Reserve as usize][9], 1);
        assert_eq!(t[MigrateType::Movable as usize][9], 1);
        assert_eq!(t[MigrateType::Movable as usize][10], 1);
        assert_eq!(mm.pageblocks.count(), [0, 3, 0, 1]);
        // Movable pages never come from the reserve while another list has a frame; then
        // they do (2.6.39's last resort).
        let held: Vec<Pfn> = std::iter::from_fn(|| mm.take_free()).collect();
        assert_eq!(held.len() as u64, 4 * PAGEBLOCK_NR_PAGES);
        assert!(held[..3 * PAGEBLOCK_NR_PAGES as usize].iter().all(|&q| q as u64 >= PAGEBLOCK_NR_PAGES));
        mm.free.check_blocks(&mm.pages).unwrap_or_else(|e| panic!("{e}"));
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
        assert_eq!(p as u64 >> PAGEBLOCK_ORDER, 6, "the highest block of order 10, first frame");
        assert_eq!(mm.pageblocks.of(p as u64), MigrateType::Unmovable);
        assert_eq!((mm.watermark_boost, mm.zone_boosted), (0, false));
        assert_eq!(mm.free.nr_whole_blocks(), 7);
        // The next kernel pages come from the claimed block's frames, no fallback.
        for _ in 1..PAGEBLOCK_NR_PAGES {
            assert_eq!(mm.take_kernel(KernelOwner::Other).unwrap() as u64 >> PAGEBLOCK_ORDER, 6);
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

    /// can_steal_fallback by era: from a block whose largest free block is small (here
    /// order 0), 4.x+ moves the pageblock's free blocks to any kernel allocation's list,
    /// 2.6.39 only to a reclaimable one (an unmovable allocation takes its page and leaves
    /// the rest); a movable allocation moves only the block it takes (single_page).
    #[test]
    fn small_free_blocks_are_stolen_by_era() {
        // Frames left on the allocation's own list after its first page.
        let left_on_own_list = |rule: StealRule, t: MigrateType| {
            let mut mm = fragmented(8, 1000, 0);
            mm.steal_rule = rule;
            mm.take_typed(t).unwrap();
            mm.free.check_blocks(&mm.pages).unwrap_or_else(|e| panic!("{e}"));
            mm.free.nr_blocks(t, 0)
        };
        let quarter = PAGEBLOCK_NR_PAGES / 4;
        for t in [MigrateType::Unmovable, MigrateType::Reclaimable] {
            assert_eq!(left_on_own_list(StealRule::HalfFreeOrAlike, t), quarter - 1, "{t:?}");
        }
        assert_eq!(left_on_own_list(StealRule::HalfFree, MigrateType::Reclaimable), quarter - 1, "2.6.39, reclaimable");
        assert_eq!(left_on_own_list(StealRule::HalfFree, MigrateType::Unmovable), 0, "2.6.39, unmovable");
        // A movable allocation with its list empty takes one frame of the unmovable block
        // and leaves the block and its other free frames where they are.
        let mut mm = fragmented(8, 1000, 0);
        mm.pageblocks.set(0, MigrateType::Unmovable);
        mm.move_freepages_block(0, MigrateType::Unmovable);
        while mm.free.take(&mut mm.pages).is_some() {}
        let q = mm.take_free().unwrap();
        assert_eq!(q as u64 >> PAGEBLOCK_ORDER, 0);
        assert_eq!(mm.free.nr_blocks(MigrateType::Unmovable, 0), quarter - 1);
        assert_eq!(mm.pageblocks.of(q as u64), MigrateType::Unmovable);
    }
}
