//! The page cache (mm/filemap.c, mm/truncate.c, mm/swap.c's mark_page_accessed,
//! fs/drop_caches.c): adding and removing pages, access marking, dirtying and the end of
//! reads and writeback.

use super::page::{Lru, Pfn};
use super::{encode_page, encode_shadow, MappingKind, Slot};
use crate::Kernel;
use memtwin_engine::TaskId;
use memtwin_procfs::VmItem;
use std::cell::Cell;

thread_local! {
    static PER_PAGE_IO: Cell<bool> = const { Cell::new(false) };
}

/// Whether machines booted on this thread run sequential page-cache I/O one page per loop
/// step (`Kernel::per_page_io`), the reference the run fast paths are checked against.
pub fn per_page_io() -> bool {
    PER_PAGE_IO.with(|c| c.get())
}

/// Run `f` with machines booted on this thread in `per_page_io` mode (tests comparing the
/// fast paths with the per-page loop); the previous mode is restored afterwards, also if
/// `f` panics.
pub fn with_per_page_io<R>(on: bool, f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            PER_PAGE_IO.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(PER_PAGE_IO.with(|c| c.replace(on)));
    f()
}

impl Kernel {
    /// filemap_add_folio + folio_add_lru: put a fresh frame into `m` at `index`. A shadow
    /// entry in the slot means the page was evicted before: workingset_refault decides
    /// whether it comes back active. `locked`: the page is being read (not yet uptodate).
    pub fn filemap_add_page(&mut self, m: u32, index: u64, p: Pfn, locked: bool) {
        self.filemap_add_page_lru(m, index, p, locked, false);
    }

    /// filemap_add_page, the page going to an active list when `active` (a new anonymous
    /// page before 5.9: lru_cache_add_active_or_unevictable, 2.6.39's
    /// lru_cache_add_lru(page, LRU_ACTIVE_ANON)).
    pub fn filemap_add_page_lru(&mut self, m: u32, index: u64, p: Pfn, locked: bool, active: bool) {
        // __filemap_add_folio: the store under xa_lock_irq (anonymous memory has no page
        // cache).
        self.xa_lock(m, 1);
        // A node the store needs is charged to the inserting task's cgroup.
        self.radix_tree_set_active_memcg();
        let prev = super::decode_slot(self.mm.set_slot(m, index, encode_page(p)));
        debug_assert!(!matches!(prev, Slot::Page(_)), "slot already holds a page");
        self.mm.pages.set_owner(p, m, index);
        if locked {
            self.mm.pages.set_locked(p);
        }
        let kind = self.mm.mappings[m as usize].kind;
        // page_add_file_rmap: a page of a mapped file or shmem object is mapped.
        if self.mm.counts_mapped(m) {
            self.mm.stat.mapped += 1;
        }
        let space = &mut self.mm.mappings[m as usize];
        space.nrpages += 1;
        let file = !space.swap_backed();
        let mut active = active;
        match prev {
            Slot::Shadow(shadow) => {
                space.nrshadows -= 1;
                active |= self.workingset_refault(p, shadow, file);
            }
            Slot::Swap(slot) => {
                // Swap-in: the page joins the swap cache, keeping its slot.
                space.nr_swapped -= 1;
                self.mm.set_swap_cache_slot(m, index, Some(slot));
                if let Some(shadow) = self.swap_shadow(slot) {
                    self.clear_swap_shadow(slot);
                    active |= self.workingset_refault(p, shadow, file);
                }
            }
            _ => {}
        }
        if let Some(owner) = self.mm.mappings[m as usize].owner {
            let t = &mut self.tasks[owner as usize];
            match kind {
                MappingKind::Anon => t.rss_anon += 1,
                MappingKind::Shmem => t.rss_shmem += 1,
                _ => {}
            }
        }
        match kind {
            MappingKind::File => self.mm.stat.file_pages += 1,
            MappingKind::BlockDev => {
                self.mm.stat.file_pages += 1;
                self.mm.stat.buffers += 1;
            }
            MappingKind::Shmem => {
                self.mm.stat.file_pages += 1;
                self.mm.stat.shmem += 1;
            }
            MappingKind::Anon => self.mm.stat.anon += 1,
        }
        let id = self.mm.page_lruvec(p);
        if !self.profile.cost_balance {
            // __pagevec_lru_add_fn -> update_page_reclaim_stat (before 5.8): every page
            // added counts as scanned, an active one (a refault) as rotated.
            let t = file as usize;
            let lv = self.mm.lruvec_mut(id);
            lv.recent_scanned[t] += 1;
            if active {
                lv.recent_rotated[t] += 1;
            }
        }
        // shmem and anon pages live on the anon lists (they are swap-backed). The page
        // reaches its list through this CPU's LRU-add batch (mm/swap.rs).
        let l = Lru::of(file, active);
        self.lru_cache_add(p, l);
        self.memcg_page_added(p, m, prev, active);
        if matches!(kind, MappingKind::File | MappingKind::BlockDev) && self.readpage_buffers(m) {
            // block_read_full_page (2.4, 2.6.39: no kmem accounting, nothing to wait for).
            let _ = self.attach_page_buffers(None, p);
        }
    }

    /// __filemap_remove_folio + free: the page leaves its mapping (leaving `shadow` in the
    /// slot, or nothing) and its frame is freed. The page must be clean or its dirtiness
    /// already cancelled by the caller.
    pub fn page_cache_delete(&mut self, p: Pfn, shadow: Option<u32>) {
        let m = self.mm.pages.mapping(p);
        let index = self.mm.pages.index(p);
        // __remove_mapping / truncation's page_cache_delete_batch: under xa_lock_irq.
        self.xa_lock(m, 1);
        if self.mm.pages.dirty(p) {
            self.cancel_dirty_page(p);
        }
        if self.mm.pages.writeback(p) {
            // Truncation of a page under writeback: the I/O completes without it.
            self.mm.pages.clear_writeback(p);
            self.mm.stat.writeback -= 1;
            self.mm.mappings[m as usize].nr_writeback -= 1;
        }
        // try_to_release_page -> try_to_free_buffers: the page's buffer heads go with it.
        self.free_page_buffers(p, m);
        let kind = self.mm.mappings[m as usize].kind;
        if !self.mm.mappings[m as usize].mapped_blocks.is_empty() {
            // try_to_unmap / unmap_mapping_range: no PTE maps the page any more.
            self.mm.mappings[m as usize].set_block_mapped(index, false);
        }
        let swap_slot = self.mm.swap_cache_slot(m, index);
        if swap_slot.is_some() {
            self.mm.set_swap_cache_slot(m, index, None);
        }
        let evicting = shadow.is_some();
        let swapped_to = if evicting { swap_slot } else { None };
        // No shadow entries before 3.15 (refault detection, mm/workingset.c).
        let shadow = shadow.filter(|_| self.profile.workingset);
        match (evicting, swap_slot) {
            (true, Some(slot)) => {
                // Reclaim of a swap-cache page: the swap entry replaces it, and the swap
                // slot keeps the workingset shadow (shadows live in the swap cache).
                self.mm.set_slot(m, index, super::encode_swap(slot));
                self.mm.mappings[m as usize].nr_swapped += 1;
                if let Some(s) = shadow {
                    self.set_swap_shadow(slot, s);
                }
            }
            (true, None) => match shadow {
                Some(s) => {
                    // page_cache_delete -> xas_store(shadow): the leaf joins the shadow
                    // list if it now holds only shadows (workingset_update_node).
                    self.mm.set_slot(m, index, encode_shadow(s));
                    self.mm.mappings[m as usize].nrshadows += 1;
                }
                None => {
                    self.mm.set_slot(m, index, 0);
                }
            },
            (false, slot) => {
                self.mm.set_slot(m, index, 0);
                if let Some(slot) = slot {
                    self.swap_free(slot);
                }
            }
        }
        if let Some(owner) = self.mm.mappings[m as usize].owner {
            let t = &mut self.tasks[owner as usize];
            match kind {
                MappingKind::Anon => t.rss_anon = t.rss_anon.saturating_sub(1),
                MappingKind::Shmem => t.rss_shmem = t.rss_shmem.saturating_sub(1),
                _ => {}
            }
        }
        // page_remove_rmap (try_to_unmap before reclaim, unmap_mapping_range before
        // truncation): the page leaves the page tables before the page cache.
        if self.mm.counts_mapped(m) {
            self.mm.stat.mapped -= 1;
        }
        let space = &mut self.mm.mappings[m as usize];
        space.nrpages -= 1;
        match kind {
            MappingKind::File => self.mm.stat.file_pages -= 1,
            MappingKind::BlockDev => {
                self.mm.stat.file_pages -= 1;
                self.mm.stat.buffers -= 1;
            }
            MappingKind::Shmem => {
                self.mm.stat.file_pages -= 1;
                self.mm.stat.shmem -= 1;
            }
            MappingKind::Anon => self.mm.stat.anon -= 1,
        }
        self.memcg_page_removed(p, m, swapped_to);
        if self.mm.pages.batched(p) {
            // In an LRU-add batch: the batch holds the last reference and frees the page
            // when it drains (it finds the page without a mapping).
            self.mm.pages.set_owner(p, 0, 0);
            return;
        }
        if self.mm.lru_del(p) == Lru::Isolated {
            // Isolated by a reclaim path: the path holds the last reference and frees it
            // (it finds the page without a mapping).
            self.mm.pages.set_owner(p, 0, 0);
            return;
        }
        self.free_page(p);
    }

    /// truncate_inode_pages_range(from, end): every page and shadow from `from` on goes.
    /// The walk visits the entries present only (find_lock_entries), not every index.
    pub fn truncate_mapping(&mut self, m: u32, from: u64) {
        let mut at = from;
        while let Some((index, slot)) = self.mm.next_slot(m, at, u64::MAX) {
            match slot {
                Slot::Page(p) => self.page_cache_delete(p, None),
                Slot::Shadow(_) => {
                    self.mm.set_slot(m, index, 0);
                    self.mm.mappings[m as usize].nrshadows -= 1;
                }
                Slot::Swap(slot) => {
                    self.mm.set_slot(m, index, 0);
                    self.mm.mappings[m as usize].nr_swapped -= 1;
                    self.swap_free(slot);
                }
                Slot::Empty => {}
            }
            at = index + 1;
        }
        let s = &mut self.mm.mappings[m as usize];
        if s.nr_dirty == 0 {
            s.dirtied_when = 0;
        }
    }

    /// Drop cached pages of [start, end) before an O_DIRECT write (dirty ones are written
    /// synchronously first in the kernel; here their dirtiness is cancelled and the write
    /// that follows carries the data).
    pub fn invalidate_range(&mut self, m: u32, start: u64, end: u64) {
        let mut at = start;
        while let Some((index, slot)) = self.mm.next_slot(m, at, end) {
            if let Slot::Page(p) = slot {
                self.page_cache_delete(p, None);
            }
            at = index + 1;
        }
    }

    /// A buffered write's access to page `p`: marked accessed only before 4.7
    /// (Profile::write_marks_accessed); since then a written page stays
    /// unreferenced, so a later read marks it and a second read activates it.
    pub fn write_mark_accessed(&mut self, p: Pfn) {
        if self.profile.write_marks_accessed {
            self.mark_page_accessed(p);
        }
    }

    /// folio_mark_accessed: the first access sets PG_referenced, the second activates an
    /// inactive page (and ages the non-resident clock: workingset_activation). The page
    /// stays on its inactive list until this CPU's activate batch drains (3.0+).
    pub fn mark_page_accessed(&mut self, p: Pfn) {
        let pages = &mut self.mm.pages;
        if !pages.referenced(p) {
            pages.set_referenced(p);
            return;
        }
        let l = pages.lru(p);
        if l == Lru::None && pages.batched(p) {
            self.mark_batched_page_accessed(p);
            return;
        }
        if l == Lru::InactiveFile || l == Lru::InactiveAnon {
            // folio_activate: queued in this CPU's activate batch (PGACTIVATE and the move
            // when it drains), or moved now under lru_lock before 3.0 (mm/swap.rs).
            self.activate_page(p);
            self.mm.pages.clear_referenced(p);
            self.workingset_activation(p);
        }
    }

    /// folio_mark_accessed of a referenced page not yet on the LRU (in an LRU-add batch):
    /// since 3.12 it is made active (__lru_cache_activate_folio: only a page in this CPU's
    /// batch is found; one in another CPU's batch just loses PG_referenced) and ages the
    /// clock, without PGACTIVATE (counted when a listed page moves). Before, !PageLRU
    /// pages are only marked referenced (2.6.39 mark_page_accessed).
    fn mark_batched_page_accessed(&mut self, p: Pfn) {
        if !self.profile.activate_batched {
            return;
        }
        let owner = self.mm.pages.batch_cpu(p) as usize;
        if self.mm.lru_add.pending_list(owner, p).is_some_and(|l| l.is_active()) {
            return;
        }
        let cpu = self.this_cpu();
        if cpu == owner {
            self.mm.lru_add.activate(cpu, p);
        }
        self.mm.pages.clear_referenced(p);
        self.workingset_activation(p);
    }

    /// xa_lock_irq(&mapping->i_pages) for `pages` page-index operations of mapping `m` now
    /// (a page inserted or removed, a tag set or cleared): the hold is one tree operation
    /// per page (as lru_lock's); the holder's CPU time is in the per-page costs already
    /// charged, so only a wait (spinning) adds system time, to the current task, as for
    /// zone->lock. Anonymous memory has no page index (its swap cache is not modelled as a
    /// separate address space): no lock. Returns the wait.
    #[inline]
    pub(crate) fn xa_lock(&mut self, m: u32, pages: u64) -> memtwin_engine::Ns {
        let hold = pages * self.lru_lock_hold_per_page();
        let me = self.current.unwrap_or(crate::mm::pcp::IRQ_HOLDER);
        let now = self.now;
        let space = &mut self.mm.mappings[m as usize];
        if space.kind == MappingKind::Anon {
            return 0;
        }
        let l = &mut space.xa_lock;
        let at = if l.holder == me {
            l.free_at.max(now)
        } else {
            now
        };
        l.holder = me;
        let start = l.free_at.max(at);
        l.free_at = start + hold;
        self.mm.xa_lock_stats.acquisitions += 1;
        if start == at {
            return 0;
        }
        self.xa_lock_contended(start - at)
    }

    /// The waiting side of `xa_lock`: the lock's statistics and the current task's spin.
    #[cold]
    fn xa_lock_contended(&mut self, wait: memtwin_engine::Ns) -> memtwin_engine::Ns {
        let st = &mut self.mm.xa_lock_stats;
        st.contended += 1;
        st.wait_ns += wait;
        st.max_wait_ns = st.max_wait_ns.max(wait);
        let Some(t) = self.current else {
            // Completion (interrupt) context: takes its turn, nobody's time.
            return 0;
        };
        self.spin_lock_wait(t, wait);
        wait
    }

    /// folio_mark_dirty for a page-cache page: node and inode dirty accounting
    /// (folio_account_dirtied), and the inode joins the dirty list when it becomes dirty.
    pub fn set_page_dirty(&mut self, tid: TaskId, p: Pfn) {
        if self.mm.pages.dirty(p) {
            return;
        }
        self.mm.pages.set_dirty(p);
        let m = self.mm.pages.mapping(p);
        let t = &mut self.tasks[tid as usize];
        t.last_dirtied = self.now;
        if self.mm.mappings[m as usize].swap_backed() {
            // shmem/tmpfs (noop_dirty_folio): dirty in memory, never written back, not
            // counted in Dirty; only swapping out writes it.
            return;
        }
        // __folio_mark_dirty: the dirty tag is set under xa_lock_irqsave.
        self.xa_lock(m, 1);
        self.mm.stat.dirty += 1;
        self.vm.inc(VmItem::NrDirtied);
        let now = self.now;
        let space = &mut self.mm.mappings[m as usize];
        space.nr_dirty += 1;
        if space.dirtied_when == 0 {
            // __mark_inode_dirty: dirtied_when is set when the inode first becomes dirty.
            space.dirtied_when = now.max(1);
            let when = space.dirtied_when;
            self.mm.dirty_inodes.push_back((when, m));
            self.flusher_inode_dirtied(m);
        }
        let t = &mut self.tasks[tid as usize];
        t.write_bytes += super::PAGE_SIZE;
        t.nr_dirtied += 1;
        t.last_dirtied = now;
    }

    /// folio_cancel_dirty (truncation): the page will never be written.
    pub fn cancel_dirty_page(&mut self, p: Pfn) {
        let m = self.mm.pages.mapping(p);
        self.mm.pages.clear_dirty(p);
        if self.mm.mappings[m as usize].swap_backed() {
            return;
        }
        self.mm.stat.dirty -= 1;
        let s = &mut self.mm.mappings[m as usize];
        s.nr_dirty -= 1;
        if s.nr_dirty == 0 {
            s.dirtied_when = 0;
        }
    }

    /// The read of `n` pages from `index` finished: the pages are uptodate and unlocked.
    pub(crate) fn end_page_read(&mut self, m: u32, index: u64, n: u32) {
        for i in index..index + n as u64 {
            if let Some(p) = self.mm.page(m, i) {
                self.mm.pages.clear_locked(p);
            }
        }
    }

    /// folio_end_writeback for each page of a completed writeback request.
    pub(crate) fn end_page_writeback(&mut self, m: u32, index: u64, n: u32) {
        if !self.mm.mappings[m as usize].live {
            return;
        }
        for i in index..index + n as u64 {
            if let Some(p) = self.mm.page(m, i) {
                if self.mm.pages.writeback(p) {
                    // __folio_end_writeback: the writeback tag is cleared under
                    // xa_lock_irqsave, in the completion's (interrupt) context.
                    self.xa_lock(m, 1);
                    self.mm.pages.clear_writeback(p);
                    self.mm.stat.writeback -= 1;
                    self.mm.mappings[m as usize].nr_writeback -= 1;
                    self.vm.inc(VmItem::NrWritten);
                    self.acct_reclaim_writeback();
                    self.end_writeback_reclaim(p);
                }
            }
        }
    }

    /// invalidate_mapping_pages (mapping_try_invalidate) over a whole file: drop the pages
    /// that are clean, unlocked, not under writeback and not mapped, without leaving shadow
    /// entries (mapping_evict_folio -> remove_mapping, not a reclaim), and clear the shadow
    /// entries already there (clear_shadow_entries, since 3.15's refault detection): a page
    /// read again after an invalidation is a new page, not a refault. shmem keeps its swap
    /// entries (shmem handles them itself). The walk visits the entries present only
    /// (find_lock_entries). Returns the pages dropped.
    pub fn invalidate_mapping_pages(&mut self, m: u32) -> u64 {
        self.invalidate_mapping_pages_nr(m).0
    }

    /// invalidate_mapping_pages, also returning the pages left because they wait in an
    /// LRU-add batch (the batch's reference: mapping_evict_folio fails; nr_pagevec of
    /// invalidate_mapping_pagevec).
    pub fn invalidate_mapping_pages_nr(&mut self, m: u32) -> (u64, u64) {
        let s = &self.mm.mappings[m as usize];
        if !s.live || s.swap_backed() {
            return (0, 0);
        }
        let mut in_batch = 0;
        // The model maps a mapped file's every resident page (folio_mapped): none can go.
        let mapped = s.mapped;
        let mut dropped = 0;
        let mut at = 0;
        while let Some((index, slot)) = self.mm.next_slot(m, at, u64::MAX) {
            at = index + 1;
            match slot {
                Slot::Page(p) => {
                    let pg = &self.mm.pages;
                    if pg.locked(p) {
                        // folio_trylock failed: skipped, no hint.
                        continue;
                    }
                    // A batch's reference (LRU-add or move) is one more than
                    // mapping_evict_folio allows (folio_ref_count > nr + private + 1).
                    let batched = pg.batched(p) || self.mm.lru_move.holds(p);
                    if mapped || pg.dirty(p) || pg.writeback(p) || batched {
                        // mapping_evict_folio failed: "Invalidation is a hint that the folio
                        // is no longer of interest" -> deactivate_file_folio (2.6.39+).
                        in_batch += (!mapped && !pg.dirty(p) && !pg.writeback(p) && batched) as u64;
                        self.deactivate_file_page(p);
                        continue;
                    }
                    self.page_cache_delete(p, None);
                    dropped += 1;
                }
                Slot::Shadow(_) => {
                    self.mm.set_slot(m, index, 0);
                    self.mm.mappings[m as usize].nrshadows -= 1;
                }
                _ => {}
            }
        }
        (dropped, in_batch)
    }

    /// drop_caches: 1 frees clean, unmapped page cache; 2 reclaimable slab; 3 both
    /// (drop_pagecache_sb -> invalidate_mapping_pages; drop_slab). Returns pages freed.
    pub fn drop_caches(&mut self, what: u32) -> u64 {
        let mut freed = 0;
        if what & 1 != 0 {
            if self.profile.drop_caches_drains_lru {
                self.lru_add_drain_all();
            }
            self.vm.inc(VmItem::DropPagecache);
            for m in 1..self.mm.mappings.len() as u32 {
                freed += self.invalidate_mapping_pages(m);
            }
        }
        if what & 2 != 0 {
            self.vm.inc(VmItem::DropSlab);
            freed += self.drop_slab();
        }
        freed
    }
}
