//! The zone's free pages as the buddy allocator keeps them (mm/page_alloc.c: struct
//! free_area, __rmqueue_smallest, expand, __free_one_page, move_freepages): free blocks of
//! 2^order frames, naturally aligned, order 0 .. MAX_BUDDY_ORDER, each on the free list of
//! one migrate type and order.
//!
//! A free block's first frame is its head (PageBuddy): it carries the block's order and
//! list and the list links; every frame of a free block is `Lru::Free`. An allocation of a
//! page takes the first block of the smallest order on its type's list and splits it,
//! putting the upper halves back on the lists of the orders below (expand) and handing out
//! its first frame. A freed page merges with its buddy while the buddy is a free block of
//! the same order, up to MAX_BUDDY_ORDER, and the merged block goes to the head of its
//! list, or to the tail when the buddy of the block one order up is free, so that it is
//! less likely to be split again before its buddy frees (buddy_merge_likely, 2.6.37+).
//! So small fragments are used before large blocks are split, and /proc/buddyinfo and
//! /proc/pagetypeinfo read the lists' counts.
//!
//! At boot every frame is free; listing them would write the whole frame table before the
//! machine runs (seconds and gigabytes for a TiB of RAM). Instead the blocks of
//! MAX_BUDDY_ORDER in `[base, top)` are free without a record ("never used"): they stand at
//! the end of the movable list of that order, and the highest of them is taken when that
//! list has nothing else (its frames' records are written then: the host commits memory
//! for the frames the machine has used, not for its RAM). Frames past the last whole block
//! of that order, and the blocks under `base` (2.6.39's MIGRATE_RESERVE), are freed as
//! blocks at boot.

use super::compaction::PAGEBLOCK_ORDER;
use super::page::{Lru, Pages, Pfn, NIL};
use super::pageblock::{MigrateType, NR_MIGRATE_TYPES};

/// The largest buddy order (MAX_ORDER - 1 = 10 through 6.x; MAX_PAGE_ORDER since 6.8).
pub const MAX_BUDDY_ORDER: u32 = 10;
pub const NR_ORDERS: usize = MAX_BUDDY_ORDER as usize + 1;
/// Frames of a block of the largest order: the unit of the boot frames never used.
const MAX_ORDER_NR_PAGES: Pfn = 1 << MAX_BUDDY_ORDER;

/// The zone's free_area: per free list (one per migrate type) and order, the free blocks
/// (a list through the heads' records, NIL-ended) and their number.
#[derive(Debug, PartialEq)]
pub struct FreeArea {
    /// Free frames (NR_FREE_PAGES, the per-CPU lists' frames included: see `pcp`).
    pub nr_free: u64,
    frames: Pfn,
    /// Blocks of MAX_BUDDY_ORDER never used since boot: [base, top), records not written.
    base: Pfn,
    top: Pfn,
    first: [[Pfn; NR_ORDERS]; NR_MIGRATE_TYPES],
    last: [[Pfn; NR_ORDERS]; NR_MIGRATE_TYPES],
    count: [[u64; NR_ORDERS]; NR_MIGRATE_TYPES],
    /// The orders with a listed block, per list.
    nonempty: [u16; NR_MIGRATE_TYPES],
}

impl Default for FreeArea {
    fn default() -> Self {
        FreeArea::new()
    }
}

impl FreeArea {
    /// No frames yet (`add_boot_frames` gives the boot frames).
    pub fn new() -> FreeArea {
        FreeArea {
            nr_free: 0,
            frames: 0,
            base: 0,
            top: 0,
            first: [[NIL; NR_ORDERS]; NR_MIGRATE_TYPES],
            last: [[NIL; NR_ORDERS]; NR_MIGRATE_TYPES],
            count: [[0; NR_ORDERS]; NR_MIGRATE_TYPES],
            nonempty: [0; NR_MIGRATE_TYPES],
        }
    }

    /// At boot: frames 0 .. nr are free, on the movable list. The whole blocks of the
    /// largest order are not written (taken highest first); the frames past them are freed
    /// as the largest aligned blocks that fit (__free_pages_memory).
    pub fn add_boot_frames(&mut self, pages: &mut Pages, nr: Pfn) {
        assert_eq!(self.frames, 0, "the boot frames are added once");
        self.frames = nr;
        self.nr_free = nr as u64;
        self.top = nr & !(MAX_ORDER_NR_PAGES - 1);
        let mut p = self.top;
        while p < nr {
            let mut k = MAX_BUDDY_ORDER.min(p.trailing_zeros());
            while p + (1 << k) > nr {
                k -= 1;
            }
            self.write_free(pages, p, 1 << k);
            self.list_add(pages, p, k, MigrateType::Movable, true);
            p += 1 << k;
        }
    }

    /// The never-used blocks under `upto` are written and listed, each on the list
    /// `list_of` gives for its pageblocks (setup_zone_migrate_reserve's
    /// move_freepages_block at boot): a block whose two pageblocks go to different lists
    /// is listed as two pageblocks.
    pub fn list_boot_frames_below(&mut self, pages: &mut Pages, upto: Pfn, list_of: impl Fn(Pfn) -> MigrateType) {
        while self.base < upto && self.base < self.top {
            let c = self.base;
            self.base += MAX_ORDER_NR_PAGES;
            self.write_free(pages, c, MAX_ORDER_NR_PAGES);
            let half = c + (1 << PAGEBLOCK_ORDER);
            let (lo, hi) = (list_of(c), list_of(half));
            if lo == hi {
                self.list_add(pages, c, MAX_BUDDY_ORDER, lo, true);
            } else {
                self.list_add(pages, c, PAGEBLOCK_ORDER, lo, true);
                self.list_add(pages, half, PAGEBLOCK_ORDER, hi, true);
            }
        }
    }

    /// Whether frame `p` is free and has no record yet (never used since boot).
    #[inline]
    pub fn never_used(&self, p: Pfn) -> bool {
        p >= self.base && p < self.top
    }
    /// Whether frame `p` is free.
    #[inline]
    pub fn is_free(&self, pages: &Pages, p: Pfn) -> bool {
        self.never_used(p) || pages.lru(p) == Lru::Free
    }
    /// The order of the free block whose head is `p` (buddy_order of a PageBuddy page);
    /// None for any other frame, a free one inside a block included.
    #[inline]
    pub fn head_order(&self, pages: &Pages, p: Pfn) -> Option<u32> {
        if self.never_used(p) {
            return ((p - self.base) % MAX_ORDER_NR_PAGES == 0).then_some(MAX_BUDDY_ORDER);
        }
        pages.buddy_head(p).map(|(k, _)| k)
    }
    /// Free blocks of order `k` on list `l` (never-used ones included).
    #[inline]
    pub fn nr_blocks(&self, l: MigrateType, k: u32) -> u64 {
        let never = if l == MigrateType::Movable && k == MAX_BUDDY_ORDER { ((self.top - self.base) / MAX_ORDER_NR_PAGES) as u64 } else { 0 };
        self.count[l as usize][k as usize] + never
    }
    /// Free blocks per order over every list (/proc/buddyinfo).
    pub fn blocks_per_order(&self) -> [u64; NR_ORDERS] {
        std::array::from_fn(|k| MigrateType::ALL.iter().map(|&l| self.nr_blocks(l, k as u32)).sum())
    }
    /// Free blocks of pageblock order or more, in pageblocks: the pageblocks wholly free.
    pub fn nr_whole_blocks(&self) -> u64 {
        let b = self.blocks_per_order();
        (PAGEBLOCK_ORDER..=MAX_BUDDY_ORDER).map(|k| b[k as usize] << (k - PAGEBLOCK_ORDER)).sum()
    }
    /// The orders with a free block on list `l`, as a bit mask.
    #[inline]
    pub fn orders(&self, l: MigrateType) -> u16 {
        let never = if l == MigrateType::Movable && self.top > self.base { 1 << MAX_BUDDY_ORDER } else { 0 };
        self.nonempty[l as usize] | never
    }

    /// Every frame of [p, p + n) is free and inside a block (its record written).
    fn write_free(&mut self, pages: &mut Pages, p: Pfn, n: Pfn) {
        for q in p..p + n {
            pages.set_free_frame(q);
        }
    }
    /// Put the block of order `k` headed by `p` on list `l` (add_to_free_list, or
    /// add_to_free_list_tail).
    #[inline]
    fn list_add(&mut self, pages: &mut Pages, p: Pfn, k: u32, l: MigrateType, to_tail: bool) {
        let (li, ki) = (l as usize, k as usize);
        pages.set_buddy_head(p, k, l as u32);
        if to_tail {
            let t = self.last[li][ki];
            pages.set_links(p, NIL, t);
            if t == NIL {
                self.first[li][ki] = p;
            } else {
                pages.set_next(t, p);
            }
            self.last[li][ki] = p;
        } else {
            let h = self.first[li][ki];
            pages.set_links(p, h, NIL);
            if h == NIL {
                self.last[li][ki] = p;
            } else {
                pages.set_prev(h, p);
            }
            self.first[li][ki] = p;
        }
        self.count[li][ki] += 1;
        self.nonempty[li] |= 1 << k;
    }
    /// Take the block headed by `p` off its list (del_page_from_free_list): its frames
    /// stay free, none is a head.
    #[inline]
    fn list_del(&mut self, pages: &mut Pages, p: Pfn) -> (u32, MigrateType) {
        let (k, l) = pages.buddy_head(p).expect("a free block's head");
        let (li, ki) = (l as usize, k as usize);
        let (n, pr) = pages.links(p);
        if pr == NIL {
            self.first[li][ki] = n;
        } else {
            pages.set_next(pr, n);
        }
        if n == NIL {
            self.last[li][ki] = pr;
        } else {
            pages.set_prev(n, pr);
        }
        pages.set_free_frame(p);
        self.count[li][ki] -= 1;
        if self.count[li][ki] == 0 {
            self.nonempty[li] &= !(1 << k);
        }
        (k, MigrateType::from_u8(l as u8))
    }
    /// The first block of order `k` on list `l`, off its list (get_page_from_free_area +
    /// del_page_from_free_list); the never-used blocks come after the listed ones.
    fn pop(&mut self, pages: &mut Pages, l: MigrateType, k: u32) -> Pfn {
        let p = self.first[l as usize][k as usize];
        if p != NIL {
            self.list_del(pages, p);
            return p;
        }
        debug_assert!(l == MigrateType::Movable && k == MAX_BUDDY_ORDER);
        self.take_never_used(pages)
    }
    /// The highest never-used block, its records written (free, on no list).
    fn take_never_used(&mut self, pages: &mut Pages) -> Pfn {
        assert!(self.top > self.base, "no never-used block left");
        self.top -= MAX_ORDER_NR_PAGES;
        let p = self.top;
        self.write_free(pages, p, MAX_ORDER_NR_PAGES);
        p
    }
    /// The first block of order `k` on list `l` (get_page_from_free_area): its head, still
    /// on its list. A never-used block is written and listed first.
    pub fn first_block(&mut self, pages: &mut Pages, l: MigrateType, k: u32) -> Option<Pfn> {
        if self.orders(l) & (1 << k) == 0 {
            return None;
        }
        let p = self.first[l as usize][k as usize];
        if p != NIL {
            return Some(p);
        }
        let p = self.pop(pages, l, k);
        self.list_add(pages, p, k, l, false);
        Some(p)
    }
    /// Split the block of order `high` headed by `p` down to order `low`: the upper half
    /// of each split goes on list `l` (expand); `p` keeps the rest.
    #[inline]
    fn expand(&mut self, pages: &mut Pages, p: Pfn, low: u32, high: u32, l: MigrateType) {
        let mut k = high;
        while k > low {
            k -= 1;
            self.list_add(pages, p + (1 << k), k, l, false);
        }
    }
    /// Allocate one frame from list `l` (__rmqueue_smallest, order 0): the first block of
    /// the smallest order there, split; its first frame.
    #[inline]
    pub fn take_from(&mut self, pages: &mut Pages, l: MigrateType) -> Option<Pfn> {
        let mask = self.orders(l);
        if mask == 0 {
            return None;
        }
        Some(self.take_block_frame(pages, l, mask.trailing_zeros()))
    }
    /// `take_from` repeated up to `max` times while the frames come from one block: the
    /// first frame and how many. When the smallest block on `l` has no more frames than
    /// `max` it is taken whole: taking its frames one by one splits it, and each split
    /// leaves the smallest block the next take finds inside it (the halves go to the
    /// lists' heads and no smaller block is free elsewhere), so one by one they come in
    /// frame order and the lists end as they were without it.
    pub fn take_run_from(&mut self, pages: &mut Pages, l: MigrateType, max: u64) -> Option<(Pfn, u64)> {
        let mask = self.orders(l);
        if mask == 0 || max == 0 {
            return None;
        }
        let k = mask.trailing_zeros();
        if 1u64 << k > max {
            return Some((self.take_block_frame(pages, l, k), 1));
        }
        let p = self.pop(pages, l, k);
        self.set_block_allocated(pages, p, k);
        Some((p, 1 << k))
    }
    /// Allocate a block of order `order` from list `l` (__rmqueue_smallest): the first
    /// block of the smallest order >= `order` there, split down to it (expand); its head.
    /// Every frame of the block is allocated.
    pub fn take_order_from(&mut self, pages: &mut Pages, l: MigrateType, order: u32) -> Option<Pfn> {
        if order == 0 {
            return self.take_from(pages, l);
        }
        let mask = self.orders(l) & !((1u16 << order) - 1);
        if mask == 0 {
            return None;
        }
        let k = mask.trailing_zeros();
        let p = self.pop(pages, l, k);
        self.expand(pages, p, order, k, l);
        self.set_block_allocated(pages, p, order);
        Some(p)
    }
    fn set_block_allocated(&mut self, pages: &mut Pages, p: Pfn, order: u32) {
        for q in p..p + (1 << order) {
            pages.set_allocated(q);
        }
        self.nr_free -= 1 << order;
    }
    /// A free block of order `order` or more on any of `lists` (the test of
    /// __zone_watermark_ok since 4.4 for a request above order 0).
    pub fn has_block(&self, order: u32, lists: &[MigrateType]) -> bool {
        lists.iter().any(|&l| self.orders(l) >> order != 0)
    }
    /// Free blocks of order `k` on every list (free_area[k].nr_free).
    pub fn nr_free_blocks(&self, k: u32) -> u64 {
        MigrateType::ALL.iter().map(|&l| self.nr_blocks(l, k)).sum()
    }
    /// Take a frame of the movable list.
    #[inline]
    pub fn take(&mut self, pages: &mut Pages) -> Option<Pfn> {
        self.take_from(pages, MigrateType::Movable)
    }
    /// Allocate the first frame of the first block of order `k` on list `l`; the rest of
    /// the block goes back to `l`, split.
    #[inline]
    fn take_block_frame(&mut self, pages: &mut Pages, l: MigrateType, k: u32) -> Pfn {
        let p = self.pop(pages, l, k);
        self.expand(pages, p, 0, k, l);
        pages.set_allocated(p);
        self.nr_free -= 1;
        p
    }
    /// Allocate the first frame of the free block headed by `p` (listed); the rest of it
    /// goes to list `to`, split (2.6.39's __rmqueue_fallback: list_del, then
    /// expand(zone, page, order, current_order, area, migratetype)).
    pub fn alloc_block(&mut self, pages: &mut Pages, p: Pfn, to: MigrateType) -> Pfn {
        self.alloc_block_order(pages, p, 0, to)
    }
    /// `alloc_block` for a block of order `order`: the free block headed by `p` is split
    /// down to it onto list `to`; its head.
    pub fn alloc_block_order(&mut self, pages: &mut Pages, p: Pfn, order: u32, to: MigrateType) -> Pfn {
        let (k, _) = self.list_del(pages, p);
        debug_assert!(k >= order);
        self.expand(pages, p, order, k, to);
        self.set_block_allocated(pages, p, order);
        p
    }
    /// Free one frame onto list `l` (__free_one_page, order 0): merged with its buddy
    /// while that is a free block of the same order.
    #[inline]
    pub fn add(&mut self, pages: &mut Pages, p: Pfn, l: MigrateType) {
        self.add_order(pages, p, 0, l)
    }
    /// Free the block of order `order` headed by `p` onto list `l` (__free_one_page):
    /// merged with its buddy while that is a free block of the same order.
    #[inline]
    pub fn add_order(&mut self, pages: &mut Pages, p: Pfn, order: u32, l: MigrateType) {
        debug_assert!(p % (1 << order) == 0, "block {p} of order {order} is not aligned");
        for q in p..p + (1 << order) {
            debug_assert_eq!(pages.lru(q), Lru::None, "page already on a list");
            debug_assert!(!self.never_used(q));
            pages.set_free_frame(q);
        }
        let (mut pfn, mut k) = (p, order);
        while k < MAX_BUDDY_ORDER {
            let buddy = pfn ^ (1 << k);
            if buddy >= self.frames || pages.buddy_head(buddy).is_none_or(|(o, _)| o != k) {
                break;
            }
            self.list_del(pages, buddy);
            pfn &= buddy;
            k += 1;
        }
        // buddy_merge_likely: "if the buddy of the next-highest order is free ... add the
        // free page to the tail of the list so it's less likely to be used soon".
        let to_tail = k < MAX_BUDDY_ORDER - 1 && {
            let higher_buddy = (pfn & !(1 << k)) ^ (1 << (k + 1));
            higher_buddy < self.frames && pages.buddy_head(higher_buddy).is_some_and(|(o, _)| o == k + 1)
        };
        self.list_add(pages, pfn, k, l, to_tail);
        self.nr_free += 1 << order;
    }
    /// The free blocks headed in [start, end) go to list `l`, at its tail (6.x's
    /// move_to_free_list: list_move_tail) or head (2.6.39's move_freepages: list_move);
    /// the frames of the blocks moved, theirs or already `l`'s.
    pub fn move_blocks(&mut self, pages: &mut Pages, start: Pfn, end: Pfn, l: MigrateType, to_tail: bool) -> u64 {
        debug_assert!(start >= self.top || end <= self.base, "never-used frames are written first");
        let (mut p, mut moved) = (start, 0u64);
        while p < end {
            match pages.buddy_head(p) {
                Some((k, have)) => {
                    if have != l as u32 {
                        self.list_del(pages, p);
                        self.list_add(pages, p, k, l, to_tail);
                    }
                    moved += 1 << k;
                    p += 1 << k;
                }
                None => p += 1,
            }
        }
        moved
    }
    /// Write and list every never-used block from the top down to the one holding `p`.
    pub fn write_never_used_from(&mut self, pages: &mut Pages, p: Pfn) {
        while self.never_used(p) {
            let c = self.take_never_used(pages);
            self.list_add(pages, c, MAX_BUDDY_ORDER, MigrateType::Movable, true);
        }
    }
    /// Take the free block headed by `p` off the lists whole (__isolate_free_page; the
    /// caller splits it into pages): its order.
    pub fn isolate_block(&mut self, pages: &mut Pages, p: Pfn) -> u32 {
        let (k, _) = self.list_del(pages, p);
        for q in p..p + (1 << k) {
            pages.set_allocated(q);
        }
        self.nr_free -= 1 << k;
        k
    }

    /// The lists agree with the frames (debug invariant): the counts with the free frames,
    /// and, while the zone is small, every listed block's head, its frames free, and no
    /// block whose buddy is a free block of its order (they would have merged).
    pub fn check_blocks(&self, pages: &Pages) -> Result<(), String> {
        let listed: u64 = (0..NR_MIGRATE_TYPES).flat_map(|l| (0..NR_ORDERS).map(move |k| (l, k))).map(|(l, k)| self.count[l][k] << k).sum();
        let never = (self.top - self.base) as u64;
        if listed + never != self.nr_free {
            return Err(format!("free lists: {listed} frames listed + {never} never used != {} free", self.nr_free));
        }
        for l in 0..NR_MIGRATE_TYPES {
            for k in 0..NR_ORDERS {
                if (self.count[l][k] > 0) != (self.nonempty[l] & (1 << k) != 0) {
                    return Err(format!("free list {l} order {k}: {} blocks, mask {:#x}", self.count[l][k], self.nonempty[l]));
                }
            }
        }
        if self.frames > 64 << PAGEBLOCK_ORDER {
            return Ok(());
        }
        for l in 0..NR_MIGRATE_TYPES {
            for k in 0..NR_ORDERS {
                let (mut n, mut p, mut prev) = (0u64, self.first[l][k], NIL);
                while p != NIL {
                    if pages.buddy_head(p) != Some((k as u32, l as u32)) || pages.prev(p) != prev || p % (1 << k) != 0 {
                        return Err(format!("frame {p} on free list {l} order {k} is not its block's head"));
                    }
                    if let Some(q) = (p..p + (1 << k)).find(|&q| pages.lru(q) != Lru::Free) {
                        return Err(format!("frame {q} of free block {p} (order {k}) is not free"));
                    }
                    let buddy = p ^ (1 << k);
                    if (k as u32) < MAX_BUDDY_ORDER && buddy < self.frames && pages.buddy_head(buddy).is_some_and(|(o, _)| o == k as u32) {
                        return Err(format!("free blocks {p} and {buddy} of order {k} are buddies, not merged"));
                    }
                    n += 1;
                    prev = p;
                    p = pages.next(p);
                }
                if n != self.count[l][k] || prev != self.last[l][k] {
                    return Err(format!("free list {l} order {k}: {n} blocks walked, {} counted", self.count[l][k]));
                }
            }
        }
        let free = (0..self.frames).filter(|&p| self.is_free(pages, p)).count() as u64;
        if free != self.nr_free {
            return Err(format!("{free} free frames, {} counted", self.nr_free));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const PB: Pfn = 1 << PAGEBLOCK_ORDER;
    const MB: Pfn = MAX_ORDER_NR_PAGES;

    fn area(n: Pfn) -> (Pages, FreeArea) {
        let mut pages = Pages::new(n, 0);
        let mut fa = FreeArea::new();
        fa.add_boot_frames(&mut pages, n);
        fa.check_blocks(&pages).unwrap();
        (pages, fa)
    }

    /// Boot: the whole blocks of the largest order are never written, the rest is freed as
    /// the largest aligned blocks that fit; the first allocation takes the highest whole
    /// block and splits it, handing out its first frame.
    #[test]
    fn boot_frames_are_blocks_and_the_first_allocation_splits_the_top_one() {
        let (mut pages, mut fa) = area(3 * MB + PB + 3);
        let b = fa.blocks_per_order();
        assert_eq!((b[10], b[9], b[1], b[0]), (3, 1, 1, 1), "{b:?}");
        assert_eq!(fa.nr_free, (3 * MB + PB + 3) as u64);
        // The order-0 block past the rest goes first (smallest first), then order 1.
        assert_eq!(fa.take(&mut pages), Some(3 * MB + PB + 2));
        assert_eq!(fa.take(&mut pages), Some(3 * MB + PB));
        assert_eq!(fa.take(&mut pages), Some(3 * MB + PB + 1));
        // Then the order-9 block, split: 0 .. 511 of it in order.
        let next: Vec<Pfn> = (0..PB).map(|_| fa.take(&mut pages).unwrap()).collect();
        assert_eq!(next, (3 * MB..3 * MB + PB).collect::<Vec<_>>());
        fa.check_blocks(&pages).unwrap();
        // Then the highest never-used block of order 10.
        assert_eq!(fa.take(&mut pages), Some(2 * MB));
        assert_eq!(fa.blocks_per_order()[9], 1);
        assert_eq!(fa.blocks_per_order()[10], 2);
        fa.check_blocks(&pages).unwrap();
    }

    /// take_run_from hands out the frames, and leaves the lists and every frame's record,
    /// as take_from one frame at a time does, from a fragmented area whose small blocks
    /// come first.
    #[test]
    fn runs_of_frames_are_what_single_takes_give() {
        let fragmented = || {
            let (mut pages, mut fa) = area(3 * MB + PB + 3);
            let got: Vec<Pfn> = (0..700).map(|_| fa.take(&mut pages).unwrap()).collect();
            for (i, &p) in got.iter().enumerate() {
                if i % 3 == 0 || (200..260).contains(&i) || i % 7 == 5 {
                    fa.add(&mut pages, p, MigrateType::Movable);
                }
            }
            (pages, fa)
        };
        let (mut pa, mut a) = fragmented();
        let (mut pb, mut b) = fragmented();
        let want = 2 * MB + 777;
        let one: Vec<Pfn> = (0..want).map(|_| a.take(&mut pa).unwrap()).collect();
        let mut runs = Vec::new();
        let mut sizes = Vec::new();
        while (runs.len() as Pfn) < want {
            let (p, n) = b.take_run_from(&mut pb, MigrateType::Movable, (want - runs.len() as Pfn) as u64).unwrap();
            runs.extend(p..p + n as Pfn);
            sizes.push(n);
        }
        assert_eq!(one, runs);
        assert!(sizes.contains(&(MB as u64)), "whole blocks were taken: {sizes:?}");
        assert_eq!(a, b);
        for q in 0..3 * MB + PB + 3 {
            assert_eq!((pa.lru(q), pa.buddy_head(q), pa.links(q)), (pb.lru(q), pb.buddy_head(q), pb.links(q)), "frame {q}");
        }
        b.check_blocks(&pb).unwrap();
    }

    /// __free_one_page: a freed page merges with its free buddies back up to the largest
    /// order; frees that cannot merge go to the list head and come out first (LIFO).
    #[test]
    fn freed_pages_merge_with_their_buddies() {
        let (mut pages, mut fa) = area(2 * MB);
        let got: Vec<Pfn> = (0..MB).map(|_| fa.take(&mut pages).unwrap()).collect();
        assert_eq!(got, (MB..2 * MB).collect::<Vec<_>>());
        assert_eq!(fa.blocks_per_order()[10], 1, "the block below, never used");
        // Free every other page: sixteen order-0 blocks; none merges.
        for &p in got.iter().step_by(2).take(16) {
            fa.add(&mut pages, p, MigrateType::Movable);
        }
        assert_eq!(fa.blocks_per_order()[0], 16);
        fa.check_blocks(&pages).unwrap();
        // The last freed goes out first.
        let p = fa.take(&mut pages).unwrap();
        assert_eq!(p, got[30]);
        fa.add(&mut pages, p, MigrateType::Movable);
        // Free everything else of the block: one block of order 10 again.
        for (i, &p) in got.iter().enumerate() {
            if i % 2 == 1 || i >= 32 {
                fa.add(&mut pages, p, MigrateType::Movable);
            }
        }
        let b = fa.blocks_per_order();
        assert_eq!(b[10], 2, "{b:?}");
        assert_eq!(b.iter().sum::<u64>(), 2);
        fa.check_blocks(&pages).unwrap();
    }

    /// buddy_merge_likely: a freed block whose parent's buddy is free goes to the list's
    /// tail (taken after the others).
    #[test]
    fn a_block_likely_to_merge_goes_to_the_tail() {
        let (mut pages, mut fa) = area(MB);
        let got: Vec<Pfn> = (0..8).map(|_| fa.take(&mut pages).unwrap()).collect();
        assert_eq!(got, (0..8).collect::<Vec<_>>());
        // Frames 2 and 3 freed make an order-1 block; frame 6 freed goes to the head (the
        // order-1 block 4-5 is held); frame 0 cannot merge (1 is held), but the order-1
        // block 2-3 is the buddy of 0-1 one order up: frame 0 goes to the tail.
        fa.add(&mut pages, 2, MigrateType::Movable);
        fa.add(&mut pages, 3, MigrateType::Movable);
        fa.add(&mut pages, 6, MigrateType::Movable);
        fa.add(&mut pages, 0, MigrateType::Movable);
        assert_eq!(fa.take(&mut pages), Some(6), "frame 0 waits at the tail");
        assert_eq!(fa.take(&mut pages), Some(0));
        fa.check_blocks(&pages).unwrap();
    }

    /// move_freepages: the blocks headed in a range change lists whole; the never-used
    /// blocks are written before a range among them is moved.
    #[test]
    fn blocks_move_between_lists_whole() {
        let (mut pages, mut fa) = area(4 * MB);
        let p = fa.take(&mut pages).unwrap();
        assert_eq!(p, 3 * MB);
        // The pageblock holding p: its free blocks (orders 0 .. 8) go to the unmovable
        // list; the pageblock above it (order 9) stays movable.
        let moved = fa.move_blocks(&mut pages, 3 * MB, 3 * MB + PB, MigrateType::Unmovable, true);
        assert_eq!(moved, PB as u64 - 1);
        assert_eq!(fa.orders(MigrateType::Unmovable), 0x1ff);
        assert_eq!(fa.take_from(&mut pages, MigrateType::Unmovable), Some(3 * MB + 1));
        assert!(fa.take_from(&mut pages, MigrateType::Reclaimable).is_none());
        fa.write_never_used_from(&mut pages, MB);
        assert!(!fa.never_used(MB) && fa.never_used(MB - 1));
        assert_eq!(fa.move_blocks(&mut pages, MB, 2 * MB, MigrateType::Reclaimable, true), MB as u64);
        assert_eq!(fa.take_from(&mut pages, MigrateType::Reclaimable), Some(MB));
        fa.check_blocks(&pages).unwrap();
        // Everything out, each frame once.
        let mut seen = vec![p, 3 * MB + 1, MB];
        for l in MigrateType::ALL {
            while let Some(q) = fa.take_from(&mut pages, l) {
                assert_eq!((pages.lru(q), pages.links(q)), (Lru::None, (NIL, NIL)));
                seen.push(q);
            }
        }
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len() as Pfn, 4 * MB);
        assert_eq!(fa.nr_free, 0);
        fa.check_blocks(&pages).unwrap();
    }

    /// move_freepages: 6.x moves blocks to the list's tail (list_move_tail), 2.6.39 to its
    /// head (list_move); the next allocation from that list shows which.
    #[test]
    fn moved_blocks_go_to_the_tail_on_6_x_and_the_head_on_2_6_39() {
        for to_tail in [true, false] {
            let (mut pages, mut fa) = area(2 * MB);
            // Order-0 blocks on the unmovable list: frames 0 and 2 of the lower block.
            let got: Vec<Pfn> = (0..MB).map(|_| fa.take(&mut pages).unwrap()).collect();
            assert_eq!(got[0], MB);
            fa.add(&mut pages, MB + 2, MigrateType::Unmovable);
            // Then frame MB + 4 (order 0, movable) moves to the unmovable list.
            fa.add(&mut pages, MB + 4, MigrateType::Movable);
            assert_eq!(fa.move_blocks(&mut pages, MB + 4, MB + 5, MigrateType::Unmovable, to_tail), 1);
            let first = fa.take_from(&mut pages, MigrateType::Unmovable).unwrap();
            assert_eq!(first, if to_tail { MB + 2 } else { MB + 4 }, "to_tail {to_tail}");
            fa.check_blocks(&pages).unwrap();
        }
    }

    /// setup_zone_migrate_reserve's blocks: listed at boot on their own list.
    #[test]
    fn boot_frames_below_a_mark_go_to_their_pageblocks_lists() {
        let (mut pages, mut fa) = area(4 * MB);
        fa.list_boot_frames_below(&mut pages, PB, |p| if p < PB { MigrateType::Reserve } else { MigrateType::Movable });
        assert_eq!(fa.nr_blocks(MigrateType::Reserve, 9), 1);
        assert_eq!(fa.nr_blocks(MigrateType::Movable, 9), 1);
        assert_eq!(fa.nr_blocks(MigrateType::Movable, 10), 3);
        assert_eq!(fa.nr_whole_blocks(), 8);
        // Movable allocations use the order-9 block first, never the reserve.
        assert_eq!(fa.take(&mut pages), Some(PB));
        fa.check_blocks(&pages).unwrap();
    }
}
