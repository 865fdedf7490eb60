//! Intrusive, index-linked circular lists over the frame table (include/linux/mm_inline.h):
//! the lruvec (four evictable LRU lists and the unevictable list, per node and memory
//! cgroup, with the reclaim state kept per lruvec) and the zone's free list. The head of each
//! list is a sentinel frame past the real ones; "head" is where new pages go, reclaim takes
//! from the tail.

use super::page::{Lru, Pages, Pfn, NIL};
use crate::profile::RotateReclaimable;
use crate::Kernel;

/// LRU lists per lruvec (enum lru_list: four evictable lists and the unevictable list).
pub const NR_LRU_LISTS: usize = 5;
/// Lruvecs the frame table reserves list heads for: the root lruvec and up to
/// MAX_LRUVECS - 1 memory cgroups per node, creatable at any time without growing the table.
pub const MAX_LRUVECS: usize = 1024;
/// Sentinel frames past the real ones: the zone's free list, then NR_LRU_LISTS per lruvec.
pub const NR_SENTINELS: u32 = 1 + (MAX_LRUVECS * NR_LRU_LISTS) as u32;
/// More sentinel frames, after the kernel owners' lists: the free lists of unmovable and
/// reclaimable pageblocks (`FreeArea`).
pub const NR_FREE_TYPE_SENTINELS: u32 = 2;

/// Index of an lruvec in `Mm::lruvecs`; 0 is the node's root lruvec.
pub type LruvecId = u16;
pub const ROOT_LRUVEC: LruvecId = 0;

#[inline]
pub(crate) fn link_after(pages: &mut Pages, at: Pfn, p: Pfn) {
    let n = pages.next(at);
    pages.set_links(p, n, at);
    pages.set_prev(n, p);
    pages.set_next(at, p);
}
#[inline]
pub(crate) fn unlink(pages: &mut Pages, p: Pfn) {
    let (n, pr) = pages.links(p);
    pages.set_next(pr, n);
    pages.set_prev(n, pr);
    pages.set_links(p, NIL, NIL);
}
#[inline]
pub(crate) fn init_head(pages: &mut Pages, h: Pfn) {
    pages.set_links(h, h, h);
}
#[inline]
fn tail_of(pages: &Pages, h: Pfn) -> Option<Pfn> {
    let t = pages.prev(h);
    if t == h { None } else { Some(t) }
}

/// The zone's free lists (free_area, one order): every frame not in use, on the list of its
/// pageblock's migrate type (free_area->free_list[migratetype]): the movable list (also
/// MIGRATE_RESERVE's frames), the unmovable and the reclaimable ones.
///
/// At boot every frame is free; listing them all would write the whole frame table before
/// the machine runs (seconds and gigabytes for a TiB of RAM). Instead the frames below a
/// boot mark, `untouched`, are free without being on a list: they are the movable list's
/// head end, in order, as if they had been added there at boot with the highest frame nearest
/// the tail. `take` empties the linked part first and then hands out the frame just below
/// the mark, lowering it; a frame above the mark is never unlinked-and-free, so a frame's
/// record is first written when it is first used (the host commits its memory then).
/// A pageblock taken over by another type gets its never-used frames linked on that type's
/// list (`link_untouched_from`): the mark drops to the block's start.
pub struct FreeArea {
    head: Pfn,
    /// The unmovable and reclaimable lists' heads.
    typed: [Pfn; NR_FREE_TYPE_SENTINELS as usize],
    pub nr_free: u64,
    /// Frames 0 .. untouched are free and not linked (never used since boot).
    untouched: Pfn,
}

/// The free list a frame of a pageblock of type `t` is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreeList {
    Movable,
    Unmovable,
    Reclaimable,
}

impl FreeArea {
    /// `head`: the movable list's sentinel; `typed`: the unmovable and reclaimable lists'.
    pub fn new(pages: &mut Pages, head: Pfn, typed: [Pfn; NR_FREE_TYPE_SENTINELS as usize]) -> FreeArea {
        init_head(pages, head);
        for &h in &typed {
            init_head(pages, h);
        }
        FreeArea { head, typed, nr_free: 0, untouched: 0 }
    }
    #[inline]
    fn head_of(&self, l: FreeList) -> Pfn {
        match l {
            FreeList::Movable => self.head,
            FreeList::Unmovable => self.typed[0],
            FreeList::Reclaimable => self.typed[1],
        }
    }
    /// At boot: frames 0 .. nr are free, taken highest first after whatever is linked, as
    /// if added with `add_head` from `nr - 1` down to 0 (nothing is written).
    pub fn add_untouched(&mut self, nr: Pfn) {
        assert_eq!(self.untouched, 0, "the boot frames are added once");
        self.untouched = nr;
        self.nr_free += nr as u64;
    }
    /// Free frames never used since boot (not linked).
    pub fn untouched(&self) -> Pfn {
        self.untouched
    }
    /// Put an unlisted frame at the head of the movable list (taken last).
    #[inline]
    pub fn add_head(&mut self, pages: &mut Pages, p: Pfn) {
        debug_assert_eq!(pages.lru(p), Lru::None, "page already on a list");
        assert_eq!(self.untouched, 0, "the boot frames are the head of the free list");
        link_after(pages, self.head, p);
        pages.set_lru(p, Lru::Free);
        self.nr_free += 1;
    }
    /// Put an unlisted frame at the tail of list `l` (taken next).
    #[inline]
    pub fn add_tail(&mut self, pages: &mut Pages, p: Pfn, l: FreeList) {
        debug_assert_eq!(pages.lru(p), Lru::None, "page already on a list");
        let last = pages.prev(self.head_of(l));
        link_after(pages, last, p);
        pages.set_lru(p, Lru::Free);
        self.nr_free += 1;
    }
    /// Move a linked free frame to the head of list `l` (move_to_free_list: taken last).
    #[inline]
    pub fn move_to(&mut self, pages: &mut Pages, p: Pfn, l: FreeList) {
        debug_assert_eq!(pages.lru(p), Lru::Free);
        unlink(pages, p);
        link_after(pages, self.head_of(l), p);
        pages.set_lru(p, Lru::Free);
    }
    /// Link the never-used frames from `start` up to the boot mark on list `l`, and lower
    /// the mark to `start` (a pageblock taken over by another type: move_freepages_block).
    /// On the movable list they join its head in the order the mark would have given them
    /// out (highest first, after every linked frame).
    pub fn link_untouched_from(&mut self, pages: &mut Pages, start: Pfn, l: FreeList) {
        let h = self.head_of(l);
        for q in (start..self.untouched).rev() {
            debug_assert_eq!(pages.lru(q), Lru::None);
            link_after(pages, h, q);
            pages.set_lru(q, Lru::Free);
        }
        self.untouched = self.untouched.min(start);
    }
    /// Take one given linked free frame off its list (the compaction free scanner's
    /// __isolate_free_page). Frames below the boot mark are not linked: the caller takes
    /// only frames at or above it.
    #[inline]
    pub fn isolate(&mut self, pages: &mut Pages, p: Pfn) {
        debug_assert!(p >= self.untouched && pages.lru(p) == Lru::Free, "frame {p} is not a linked free frame");
        unlink(pages, p);
        pages.set_lru(p, Lru::None);
        self.nr_free -= 1;
    }
    /// Take the frame at the tail of the movable list: the last one freed, else the highest
    /// never used.
    #[inline]
    pub fn take(&mut self, pages: &mut Pages) -> Option<Pfn> {
        self.take_from(pages, FreeList::Movable)
    }
    /// Take the frame at the tail of list `l` (__rmqueue_smallest); the movable list ends
    /// with the frames never used.
    #[inline]
    pub fn take_from(&mut self, pages: &mut Pages, l: FreeList) -> Option<Pfn> {
        let Some(p) = tail_of(pages, self.head_of(l)) else {
            if l != FreeList::Movable || self.untouched == 0 {
                return None;
            }
            // A frame never used: all zeros (no owner, no flags, on no list); give it the
            // links an unlisted frame has.
            self.untouched -= 1;
            let p = self.untouched;
            debug_assert_eq!(pages.lru(p), Lru::None);
            pages.set_links(p, NIL, NIL);
            self.nr_free -= 1;
            return Some(p);
        };
        unlink(pages, p);
        pages.set_lru(p, Lru::None);
        self.nr_free -= 1;
        Some(p)
    }
}

/// struct lruvec: the LRU lists of one memory cgroup on one node, their lengths, and the
/// reclaim state kept per lruvec (the eviction clock, the anon/file cost balance, the
/// pre-5.8 scan/rotate ratios and the refault snapshot).
#[derive(Clone, Debug)]
pub struct Lruvec {
    /// List heads are sentinel frames base .. base + NR_LRU_LISTS.
    base: Pfn,
    len: [u64; NR_LRU_LISTS],
    /// Eviction clock (lruvec->nonresident_age, workingset_age_nonresident).
    pub nonresident_age: u64,
    /// Reclaim cost of each type (lruvec->anon_cost / file_cost, lru_note_cost).
    pub anon_cost: u64,
    pub file_cost: u64,
    /// Pre-5.8 balancing (lruvec->reclaim_stat): recent_scanned / recent_rotated for
    /// [anon, file].
    pub recent_scanned: [u64; 2],
    pub recent_rotated: [u64; 2],
    /// WORKINGSET_ACTIVATE_{ANON,FILE} of this lruvec (lruvec_page_state), and their
    /// values at the end of the last reclaim cycle (lruvec->refaults, snapshot_refaults).
    pub workingset_activate: [u64; 2],
    pub refaults: [u64; 2],
    /// In use (freed lruvecs keep their list heads for the next one).
    pub live: bool,
}

impl Lruvec {
    /// An empty lruvec whose list heads are frames `base .. base + NR_LRU_LISTS`.
    pub fn new(pages: &mut Pages, base: Pfn) -> Lruvec {
        for i in 0..NR_LRU_LISTS as u32 {
            init_head(pages, base + i);
        }
        Lruvec {
            base,
            len: [0; NR_LRU_LISTS],
            nonresident_age: 0,
            anon_cost: 0,
            file_cost: 0,
            recent_scanned: [0; 2],
            recent_rotated: [0; 2],
            workingset_activate: [0; 2],
            refaults: [0; 2],
            live: true,
        }
    }
    #[inline]
    fn head(&self, l: Lru) -> Pfn {
        debug_assert!(!matches!(l, Lru::None | Lru::Free | Lru::Isolated), "not an LRU list: {l:?}");
        self.base + l as u32 - 1
    }
    /// Pages on list `l` (lruvec_lru_size).
    #[inline]
    pub fn len(&self, l: Lru) -> u64 {
        self.len[l as usize - 1]
    }
    /// Pages on all five lists.
    pub fn nr_pages(&self) -> u64 {
        self.len.iter().sum()
    }
    pub fn file_lru(&self) -> u64 {
        self.len(Lru::InactiveFile) + self.len(Lru::ActiveFile)
    }
    pub fn anon_lru(&self) -> u64 {
        self.len(Lru::InactiveAnon) + self.len(Lru::ActiveAnon)
    }
    /// [inactive anon, active anon, inactive file, active file].
    pub fn evictable_sizes(&self) -> [u64; 4] {
        [self.len(Lru::InactiveAnon), self.len(Lru::ActiveAnon), self.len(Lru::InactiveFile), self.len(Lru::ActiveFile)]
    }

    /// Put an unlisted page at the head of `l` (lruvec_add_folio).
    #[inline]
    pub fn add_head(&mut self, pages: &mut Pages, p: Pfn, l: Lru) {
        debug_assert_eq!(pages.lru(p), Lru::None, "page already on a list");
        let h = self.head(l);
        link_after(pages, h, p);
        pages.set_lru(p, l);
        self.len[l as usize - 1] += 1;
    }
    /// Put an unlisted page at the tail of `l` (lruvec_add_folio_tail).
    #[inline]
    pub fn add_tail(&mut self, pages: &mut Pages, p: Pfn, l: Lru) {
        debug_assert_eq!(pages.lru(p), Lru::None, "page already on a list");
        let h = self.head(l);
        let last = pages.prev(h);
        link_after(pages, last, p);
        pages.set_lru(p, l);
        self.len[l as usize - 1] += 1;
    }
    /// Take a page off whatever list of this lruvec it is on (lruvec_del_folio).
    #[inline]
    pub fn del(&mut self, pages: &mut Pages, p: Pfn) -> Lru {
        let l = pages.lru(p);
        if l == Lru::None || l == Lru::Isolated {
            return l;
        }
        debug_assert!(l != Lru::Free, "a free page is on the zone's free list");
        unlink(pages, p);
        pages.set_lru(p, Lru::None);
        self.len[l as usize - 1] -= 1;
        l
    }
    /// The page at the tail of `l`, if any.
    #[inline]
    pub fn tail(&self, pages: &Pages, l: Lru) -> Option<Pfn> {
        tail_of(pages, self.head(l))
    }
    /// The page at the head of `l`, if any.
    #[inline]
    pub fn first(&self, pages: &Pages, l: Lru) -> Option<Pfn> {
        let h = self.head(l);
        let t = pages.next(h);
        if t == h { None } else { Some(t) }
    }
    /// Move a listed page to the head of list `l` (possibly another list).
    #[inline]
    pub fn move_head(&mut self, pages: &mut Pages, p: Pfn, l: Lru) {
        self.del(pages, p);
        self.add_head(pages, p, l);
    }
    #[inline]
    pub fn move_tail(&mut self, pages: &mut Pages, p: Pfn, l: Lru) {
        self.del(pages, p);
        self.add_tail(pages, p, l);
    }

    /// Walk a list from head to tail (tests and invariant checks only).
    pub fn collect(&self, pages: &Pages, l: Lru) -> Vec<Pfn> {
        let h = self.head(l);
        let mut out = Vec::new();
        let mut p = pages.next(h);
        while p != h {
            out.push(p);
            p = pages.next(p);
        }
        out
    }
}

impl Kernel {
    /// folio_end_writeback: a page reclaim wanted freed (PG_reclaim) is rotated to the tail
    /// of its inactive list so the next reclaim pass finds it first (mm/filemap.c).
    pub(crate) fn end_writeback_reclaim(&mut self, p: Pfn) {
        if !self.mm.pages.reclaim(p) {
            return;
        }
        self.mm.pages.clear_reclaim(p);
        self.rotate_reclaimable(p);
    }

    /// folio_rotate_reclaimable -> lru_move_tail_fn (mm/swap.c): a clean, unlocked page on
    /// an evictable list goes to the inactive tail, deactivated (PGROTATED), through this
    /// CPU's rotate batch (mm/swap.rs). Before 3.10 (rotate_reclaimable_page in 2.6.39) an
    /// active page was left alone; 2.4 has no PG_reclaim.
    pub(crate) fn rotate_reclaimable(&mut self, p: Pfn) {
        if self.profile.rotate_reclaimable == RotateReclaimable::Never {
            return;
        }
        self.rotate_reclaimable_page(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn head_tail_del_move() {
        let mut pages = Pages::new(8, NR_LRU_LISTS as u32);
        let mut l = Lruvec::new(&mut pages, 8);
        for p in 0..4 {
            l.add_head(&mut pages, p, Lru::InactiveFile);
        }
        assert_eq!(l.collect(&pages, Lru::InactiveFile), vec![3, 2, 1, 0]);
        assert_eq!(l.tail(&pages, Lru::InactiveFile), Some(0));
        l.move_head(&mut pages, 0, Lru::ActiveFile);
        assert_eq!(l.len(Lru::InactiveFile), 3);
        assert_eq!(l.len(Lru::ActiveFile), 1);
        assert_eq!(pages.lru(0), Lru::ActiveFile);
        l.del(&mut pages, 2);
        assert_eq!(l.collect(&pages, Lru::InactiveFile), vec![3, 1]);
        l.add_tail(&mut pages, 2, Lru::InactiveFile);
        assert_eq!(l.collect(&pages, Lru::InactiveFile), vec![3, 1, 2]);
        assert_eq!(l.tail(&pages, Lru::ActiveAnon), None);
    }

    /// The boot frames left unlinked are handed out exactly as if every frame had been
    /// added to the list at boot (add_head from the highest down), freed frames first.
    #[test]
    fn untouched_boot_frames_come_out_in_the_order_of_a_fully_linked_list() {
        const N: u32 = 64;
        let mut a = Pages::new(N, 3);
        let mut linked = FreeArea::new(&mut a, N, [N + 1, N + 2]);
        for p in (0..N).rev() {
            linked.add_head(&mut a, p);
        }
        let mut b = Pages::new(N, 3);
        let mut lazy = FreeArea::new(&mut b, N, [N + 1, N + 2]);
        lazy.add_untouched(N);
        assert_eq!(lazy.nr_free, linked.nr_free);
        // A mixed sequence: take 5, free two of them, take 10, free 3, take everything.
        let mut order = (Vec::new(), Vec::new());
        let run = |pages: &mut Pages, fa: &mut FreeArea, out: &mut Vec<Pfn>| {
            let mut held = Vec::new();
            for _ in 0..5 {
                held.push(fa.take(pages).unwrap());
            }
            fa.add_tail(pages, held.remove(1), FreeList::Movable);
            fa.add_tail(pages, held.remove(2), FreeList::Movable);
            for _ in 0..10 {
                held.push(fa.take(pages).unwrap());
            }
            for _ in 0..3 {
                let p = held.pop().unwrap();
                fa.add_tail(pages, p, FreeList::Movable);
            }
            while let Some(p) = fa.take(pages) {
                assert_eq!(pages.lru(p), Lru::None);
                assert_eq!(pages.links(p), (NIL, NIL));
                held.push(p);
            }
            out.extend(held);
            assert_eq!(fa.nr_free, 0);
        };
        run(&mut a, &mut linked, &mut order.0);
        run(&mut b, &mut lazy, &mut order.1);
        assert_eq!(order.0, order.1);
        assert_eq!(order.0.len(), N as usize);
        assert_eq!(lazy.untouched(), 0);
    }
}
