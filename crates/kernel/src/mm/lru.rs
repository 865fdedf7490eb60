//! Intrusive, index-linked circular lists over the frame table: the four evictable LRU
//! lists, the unevictable list and the free list (include/linux/mm_inline.h). The head of
//! each list is a sentinel frame past the real ones; "head" is where new pages go, reclaim
//! takes from the tail.

use super::page::{Lru, Pages, Pfn, NIL};
use crate::Kernel;
use memtwin_machine::KernelProfile;
use memtwin_procfs::VmItem;

pub const NR_LISTS: usize = 7;

pub struct Lists {
    base: Pfn,
    pub len: [u64; NR_LISTS],
}

impl Lists {
    /// Lists whose sentinels are frames `base .. base + NR_LISTS` of `pages`.
    pub fn new(pages: &mut Pages, base: Pfn) -> Lists {
        for i in 0..NR_LISTS as u32 {
            let s = base + i;
            pages.next[s as usize] = s;
            pages.prev[s as usize] = s;
        }
        Lists { base, len: [0; NR_LISTS] }
    }
    #[inline]
    fn head(&self, l: Lru) -> Pfn {
        self.base + l as u32
    }
    #[inline]
    pub fn len(&self, l: Lru) -> u64 {
        self.len[l as usize]
    }

    #[inline]
    fn link_after(pages: &mut Pages, at: Pfn, p: Pfn) {
        let n = pages.next[at as usize];
        pages.next[p as usize] = n;
        pages.prev[p as usize] = at;
        pages.prev[n as usize] = p;
        pages.next[at as usize] = p;
    }

    /// Put an unlisted page at the head of `l` (lruvec_add_folio).
    #[inline]
    pub fn add_head(&mut self, pages: &mut Pages, p: Pfn, l: Lru) {
        debug_assert_eq!(pages.lru(p), Lru::None, "page already on a list");
        let h = self.head(l);
        Self::link_after(pages, h, p);
        pages.set_lru(p, l);
        self.len[l as usize] += 1;
    }
    /// Put an unlisted page at the tail of `l` (lruvec_add_folio_tail).
    #[inline]
    pub fn add_tail(&mut self, pages: &mut Pages, p: Pfn, l: Lru) {
        debug_assert_eq!(pages.lru(p), Lru::None, "page already on a list");
        let h = self.head(l);
        let last = pages.prev[h as usize];
        Self::link_after(pages, last, p);
        pages.set_lru(p, l);
        self.len[l as usize] += 1;
    }
    /// Take a page off whatever list it is on (lruvec_del_folio).
    #[inline]
    pub fn del(&mut self, pages: &mut Pages, p: Pfn) -> Lru {
        let l = pages.lru(p);
        if l == Lru::None {
            return l;
        }
        let (n, pr) = (pages.next[p as usize], pages.prev[p as usize]);
        pages.next[pr as usize] = n;
        pages.prev[n as usize] = pr;
        pages.next[p as usize] = NIL;
        pages.prev[p as usize] = NIL;
        pages.set_lru(p, Lru::None);
        self.len[l as usize] -= 1;
        l
    }
    /// The page at the tail of `l`, if any.
    #[inline]
    pub fn tail(&self, pages: &Pages, l: Lru) -> Option<Pfn> {
        let h = self.head(l);
        let t = pages.prev[h as usize];
        if t == h { None } else { Some(t) }
    }
    /// The page at the head of `l`, if any.
    #[inline]
    pub fn first(&self, pages: &Pages, l: Lru) -> Option<Pfn> {
        let h = self.head(l);
        let t = pages.next[h as usize];
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
        let mut p = pages.next[h as usize];
        while p != h {
            out.push(p);
            p = pages.next[p as usize];
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
    /// an evictable list goes to the inactive tail, deactivated (PGROTATED). Before 3.10
    /// (rotate_reclaimable_page in 2.6.39) an active page was left alone; 2.4 has no PG_reclaim.
    pub(crate) fn rotate_reclaimable(&mut self, p: Pfn) {
        let pg = &self.mm.pages;
        let l = pg.lru(p);
        if pg.locked(p) || pg.dirty(p) || !Lru::EVICTABLE.contains(&l) {
            return;
        }
        match self.machine.kernel {
            KernelProfile::Linux24 => return,
            KernelProfile::Linux2639 if l.is_active() => return,
            _ => {}
        }
        self.mm.lists.move_tail(&mut self.mm.pages, p, Lru::of(l.is_file(), false));
        self.vm.inc(VmItem::Pgrotated);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn head_tail_del_move() {
        let mut pages = Pages::new(8, NR_LISTS as u32);
        let mut l = Lists::new(&mut pages, 8);
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
