//! Pageblock migrate types (mm/page_alloc.c: set_pageblock_migratetype, the fallback steal
//! rules; mm/vmstat.c: /proc/pagetypeinfo). Every pageblock (512 frames, `PAGEBLOCK_ORDER`)
//! records the kind of allocation it is meant for: movable (page cache, anonymous memory),
//! reclaimable (reclaimable slab) or unmovable (other kernel memory); at boot every block is
//! movable (memmap_init_range), and 2.6.39 keeps up to two blocks at the start of the zone
//! as MIGRATE_RESERVE (setup_zone_migrate_reserve).
//!
//! A kernel allocation that lands in a block of another type takes the block over when
//! enough of it is free or already its kind (the steal rule below). The model's allocator
//! does not look for a block of the allocation's own type first, as __rmqueue does, so it
//! falls back (and steals) more often than the kernel would: the block counts show where
//! kernel pages went, not the kernel's tighter grouping.

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
    /// After frame `p` was taken for an allocation of type `t` (a kernel allocation:
    /// movable allocations of one page never take a block over, can_steal_fallback): if
    /// `p`'s block is of another type, the fallback steal rule may give the block to `t`.
    pub(crate) fn pageblock_fallback(&mut self, p: Pfn, t: MigrateType) {
        let old = self.pageblocks.of(p as u64);
        if old == t || old == MigrateType::Reserve || t == MigrateType::Movable {
            return;
        }
        let start = (p as u64) & !(PAGEBLOCK_NR_PAGES - 1);
        let end = (start + PAGEBLOCK_NR_PAGES).min(self.pages.nr() as u64);
        let untouched = self.free.untouched() as u64;
        // Frames below the untouched mark are free without a record; the others are
        // counted from their records.
        let touched = start.max(untouched).min(end);
        let (cf, ch) = self.pages.census(touched as Pfn, end as Pfn);
        let mut free = (touched - start) + cf as u64;
        let mut movable = (end - touched) - cf as u64 - ch as u64;
        // The frame just taken was free when the kernel counted (move_freepages_block):
        // it counts as free, not as what it is now.
        if p as u64 >= untouched {
            match self.pages.lru(p) {
                Lru::Free => {}
                Lru::None if self.pages.mapping(p) == 0 => free += 1,
                _ => {
                    movable -= 1;
                    free += 1;
                }
            }
        }
        let alike = match self.steal_rule {
            StealRule::HalfFree => 0,
            StealRule::HalfFreeOrAlike if old == MigrateType::Movable => (end - start) - free - movable,
            StealRule::HalfFreeOrAlike => 0,
        };
        if free + alike >= PAGEBLOCK_NR_PAGES / 2 {
            self.pageblocks.set(p as u64, t);
            self.move_freepages_block(start, end, t);
        }
    }

    /// move_freepages_block: the free frames of the block [start, end) go to the free list
    /// of its new type `t`, never-used ones included (linked now: the boot mark drops to
    /// the block's start).
    fn move_freepages_block(&mut self, start: u64, end: u64, t: MigrateType) {
        let l = free_list_of(t);
        let untouched = self.free.untouched() as u64;
        for q in start.max(untouched)..end {
            if self.pages.lru(q as Pfn) == Lru::Free {
                self.free.move_to(&mut self.pages, q as Pfn, l);
            }
        }
        if untouched > start {
            // The mark is in this block (frames are taken from the top down, so a block a
            // kernel allocation just took a frame from holds it, or lies above it).
            debug_assert!(untouched <= end, "a block wholly below the boot mark was taken over");
            self.free.link_untouched_from(&mut self.pages, start as Pfn, l);
        }
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
            // Fill the next block with movable pages, then a kernel page among them, the
            // unmovable list being empty: the block stays movable (not half free, and its
            // other pages are movable, not alike).
            let mut held = Vec::new();
            while mm.free.nr_free > 2 * PAGEBLOCK_NR_PAGES + 1 {
                held.push(mm.take_free().unwrap());
            }
            for &q in &held {
                mm.pages.set_owner(q, 1, q as u64);
                mm.pages.set_lru(q, Lru::InactiveFile);
            }
            let q = mm.take_kernel(KernelOwner::Other).unwrap();
            assert_eq!(q as u64 >> PAGEBLOCK_ORDER, 2, "{q}");
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
            let mut n = 0;
            while mm.free.nr_free > 2 * PAGEBLOCK_NR_PAGES + PAGEBLOCK_NR_PAGES / 8 {
                let q = mm.take_free().unwrap();
                mm.pages.set_owner(q, 0, 0);
                if n % 8 == 0 {
                    mm.pages.set_owner(q, 1, q as u64);
                    mm.pages.set_lru(q, Lru::InactiveFile);
                }
                n += 1;
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
}
