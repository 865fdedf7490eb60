//! Intrusive, index-linked lists over the frame table (include/linux/mm_inline.h): the
//! lruvec (four evictable LRU lists and the unevictable list, per node and memory cgroup,
//! with the reclaim state kept per lruvec), circular with a sentinel frame past the real
//! ones as each list's head ("head" is where new pages go, reclaim takes from the tail).

use super::page::{Lru, Pages, Pfn, NIL};
use crate::profile::RotateReclaimable;
use crate::Kernel;

/// LRU lists per lruvec (enum lru_list: four evictable lists and the unevictable list).
pub const NR_LRU_LISTS: usize = 5;
/// Lruvecs the frame table reserves list heads for: the root lruvec and up to
/// MAX_LRUVECS - 1 memory cgroups per node, creatable at any time without growing the table.
pub const MAX_LRUVECS: usize = 1024;
/// Sentinel frames past the real ones: NR_LRU_LISTS per lruvec.
pub const NR_SENTINELS: u32 = (MAX_LRUVECS * NR_LRU_LISTS) as u32;

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
}
