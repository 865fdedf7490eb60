//! Swapping anonymous and shmem pages out and in (mm/vmscan.c pageout, mm/swap_state.c,
//! mm/memory.c do_swap_page, mm/page_io.c, drivers/block/zram), and the page-access path
//! of mapped memory (handle_mm_fault: do_anonymous_page, shmem_fault, filemap_fault).

use crate::profile::MmapReadaround;
use super::cost;
use super::page::Pfn;
use super::swapfile::AreaKind;
use super::{Content, Madvice, MappingKind, Slot, PAGE_SIZE};
use crate::block::{Dir, ReqKind};
use crate::profile::SwapRaRule;
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::{Ns, TaskId};
use memtwin_procfs::VmItem;

/// The largest swap write request: max_sectors_kb (512 KiB) of 4 KiB pages.
pub const MAX_SWAP_REQUEST_PAGES: usize = 128;
/// BLK_PLUG_FLUSH_SIZE (128 KiB) in pages.
pub const BLK_PLUG_FLUSH_PAGES: usize = 32;
/// mm/filemap.c: stop read-around after this many mmap misses without a hit.
const MMAP_LOTSAMISS: u32 = 100;

/// SWAP_RA_HITS_MAX: the hits a VMA's readahead info can hold (SWAP_RA_HITS_MASK).
const SWAP_RA_HITS_MAX: u32 = 63;

/// __swapin_nr_pages (mm/swap_state.c, 3.15+): the readahead window after `hits` readahead
/// pages were found since the last window -- at least 4 and a power of two when there were
/// any; without hits 2 when this fault is next to the previous one (`prev`), else 1; never
/// above `max_pages`, and never below half the previous window ("don't shrink readahead
/// too fast").
pub fn swapin_nr_pages_window(prev: u64, offset: u64, hits: u32, max_pages: u32, prev_win: u32) -> u32 {
    let mut pages = hits + 2;
    if pages == 2 {
        if offset != prev.wrapping_add(1) && offset != prev.wrapping_sub(1) {
            pages = 1;
        }
    } else {
        let mut roundup = 4;
        while roundup < pages {
            roundup <<= 1;
        }
        pages = roundup;
    }
    pages.min(max_pages).max(prev_win / 2)
}

/// What reclaim did with a swap-backed page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwapOut {
    /// The page was freed (a clean swap-cache copy, or zram stored it at once).
    Freed,
    /// Written to a swap device; freed when the write completes.
    Writing,
    /// No swap space: it stays (activated).
    Keep,
    /// The swap device's queue is full: try again later.
    Busy,
}

impl Kernel {
    /// The block device of the area new swap-outs go to is out of request slots.
    pub fn swap_congested(&self) -> bool {
        let area = (0..self.swap.areas.len())
            .filter(|&i| self.swap.areas[i].active && self.swap.areas[i].used < self.swap.areas[i].pages)
            .max_by_key(|&i| (self.swap.areas[i].priority, std::cmp::Reverse(i)));
        match area.map(|a| &self.swap.areas[a].kind) {
            Some(AreaKind::Block { dev, .. }) => {
                let d = &self.block.devs[*dev as usize];
                // Plugged requests hold their request slots too.
                d.inflight.len() + (self.swap.pending_buf.len() as u64 + self.swap.plugged) as usize / 32 >= d.nr_requests as usize
            }
            _ => false,
        }
    }

    /// Whether the swap write of a page would merge into the request the reclaimer is
    /// building (the batch in progress, or its plug): a bio that continues the last
    /// request's slots joins it (bio_attempt_back_merge) and needs no request slot of its
    /// own; any other one waits for a tag when the queue is full (blk_mq_get_tag).
    fn swap_write_merges(&self, existing: Option<u32>) -> bool {
        let Some(tail) = self.swap.plug_tail else { return false };
        if self.swap.plug_run >= MAX_SWAP_REQUEST_PAGES {
            // The request is as large as max_sectors: the next bio needs a new one.
            return false;
        }
        let next = match existing {
            Some(s) => Some(s),
            None => self.peek_swap_slot(),
        };
        next == Some(tail + 1)
    }

    /// Whether the swap slots of mapping `m` hold zero-filled pages in the swap zeromap
    /// (6.12+): the model's page content is per mapping, so every page of a zero-filled
    /// mapping was found zero-filled by swap_writepage.
    fn swap_zero_filled(&self, m: u32) -> bool {
        self.profile.swap_zeromap && self.mm.mappings[m as usize].content == Content::Zero
    }

    fn swap_area_kind(&self, slot: u32) -> &AreaKind {
        &self.swap.areas[self.area_of(slot)].kind
    }

    /// shrink_folio_list for a swap-backed page: add_to_swap + pageout, or free a clean
    /// swap-cache page (its copy on swap is current). Block writes are queued in
    /// `swap_pending_buf`; zram compresses at once (charged through `reclaim_ns`).
    pub(crate) fn reclaim_swap_backed(&mut self, p: Pfn) -> SwapOut {
        let m = self.mm.pages.mapping(p);
        let index = self.mm.pages.index(p);
        let existing = self.mm.swap_cache_slot(m, index);
        if !self.swap.ra.is_empty() {
            // A readahead page no fault found is reclaimed with the rest.
            self.swap.ra.remove(&(m, index));
        }
        if let Some(_slot) = existing {
            if !self.mm.pages.dirty(p) {
                let shadow = self.workingset_eviction(p);
                self.page_cache_delete(p, Some(shadow));
                return SwapOut::Freed;
            }
        }
        if !self.swap_zero_filled(m) && !self.swap_write_merges(existing) && self.swap_congested() {
            // Every request slot of the swap device is taken: the writer would sleep in
            // the block layer; reclaim leaves the page for a later pass.
            return SwapOut::Busy;
        }
        let slot = match existing {
            Some(s) => s,
            None => {
                let Some(s) = self.get_swap_slot() else { return SwapOut::Keep };
                if !self.memcg_try_charge_swap(p, s) {
                    // memory.swap.max reached: the page stays (add_to_swap fails).
                    self.swap_free(s);
                    return SwapOut::Keep;
                }
                self.mm.set_swap_cache_slot(m, index, Some(s));
                if !self.swap.unmapped.is_empty() {
                    // add_to_swap of a mapped page: not one swap-in left unmapped.
                    self.swap.unmapped.remove(&(m, index));
                }
                s
            }
        };
        if self.swap_zero_filled(m) {
            // swap_writepage (6.12+): is_folio_zero_filled -> swap_zeromap_folio_set counts
            // SWPOUT_ZERO and returns without I/O; pageout() still counts NR_VMSCAN_WRITE,
            // finds the folio not under writeback ("synchronous write") and
            // shrink_folio_list frees it in this pass. The slot stays allocated.
            self.mm.pages.clear_dirty(p);
            self.vm.inc(VmItem::SwpoutZero);
            self.vm.inc(VmItem::NrVmscanWrite);
            let shadow = self.workingset_eviction(p);
            self.page_cache_delete(p, Some(shadow));
            return SwapOut::Freed;
        }
        // pageout(): PG_reclaim, then clean once written; PG_writeback until then.
        self.mm.pages.clear_dirty(p);
        self.mm.pages.set_reclaim(p);
        self.mm.pages.set_writeback(p);
        self.mm.stat.writeback += 1;
        self.mm.mappings[m as usize].nr_writeback += 1;
        self.vm.inc(VmItem::Pswpout);
        self.vm.inc(VmItem::NrVmscanWrite);
        if let AreaKind::Zram { algorithm } = self.swap_area_kind(slot) {
            // zram_write_page: the same-filled check, then the compressor (mm/cost.rs).
            let algo = cost::Zcomp::from_name(algorithm);
            let content = self.mm.mappings[m as usize].content;
            self.reclaim.pass_ns += cost::zram_store_ns(&self.machine.cpu_model, algo, content);
            self.zram_store(slot, content);
            // A synchronous write (zram): the page is not on the LRU while reclaim holds
            // it, so nothing is rotated; shrink_folio_list goes on to free it in this pass
            // ("A synchronous write - probably a ramdisk").
            self.mm.pages.clear_writeback(p);
            self.mm.pages.clear_reclaim(p);
            self.mm.stat.writeback -= 1;
            self.mm.mappings[m as usize].nr_writeback -= 1;
            // folio_end_writeback -> __folio_end_writeback: NR_WRITTEN for every page
            // whose writeback ends, swap cache pages included.
            self.vm.inc(VmItem::NrWritten);
            self.acct_reclaim_writeback();
            let shadow = self.workingset_eviction(p);
            self.page_cache_delete(p, Some(shadow));
            return SwapOut::Freed;
        }
        self.swap.wb.insert(slot, (m, index));
        self.swap.pending_buf.push(slot);
        // The request being built: its last slot and how many contiguous slots it has.
        self.swap.plug_run = match self.swap.plug_tail {
            Some(t) if slot == t + 1 && self.swap.plug_run < MAX_SWAP_REQUEST_PAGES => self.swap.plug_run + 1,
            _ => 1,
        };
        self.swap.plug_tail = Some(slot);
        SwapOut::Writing
    }

    /// Submit the swap writes reclaim queued, merging contiguous slots (block plugging).
    pub(crate) fn submit_swap_writes(&mut self, pending: &mut Vec<u32>) {
        pending.sort_unstable();
        let mut i = 0;
        while i < pending.len() {
            let start = pending[i];
            let mut n = 1;
            let ai = self.area_of(start);
            let area_end = self.swap.areas[ai].start + self.swap.areas[ai].pages as u32;
            while i + n < pending.len() && pending[i + n] == start + n as u32 && start + (n as u32) < area_end && n < MAX_SWAP_REQUEST_PAGES {
                n += 1;
            }
            if let AreaKind::Block { dev, base } = self.swap.areas[ai].kind.clone() {
                let pos = base + (start - self.swap.areas[ai].start + 1) as u64 * PAGE_SIZE;
                self.submit_bio(dev, Dir::Write, pos, n as u64 * PAGE_SIZE, ReqKind::SwapOut { slot: start, n: n as u32 }, None);
                // Swap I/O is not page-cache I/O: pgpgout counts it, but only as swap.
                self.reclaim.pass_ns += self.machine.cpu_model.io_request_ns;
            }
            i += n;
        }
        pending.clear();
    }

    /// end_swap_bio_write -> folio_end_writeback: the written page is clean; pageout() set
    /// PG_reclaim, so it is rotated to the inactive tail (folio_rotate_reclaimable) and the
    /// next reclaim pass frees it (__remove_mapping), counting it as stolen then.
    pub(crate) fn end_swap_writeback(&mut self, m: u32, index: u64) {
        let Some(p) = self.mm.page(m, index) else { return };
        if !self.mm.pages.writeback(p) {
            return;
        }
        self.mm.pages.clear_writeback(p);
        self.mm.stat.writeback -= 1;
        self.mm.mappings[m as usize].nr_writeback -= 1;
        // __folio_end_writeback: NR_WRITTEN, swap cache pages included.
        self.vm.inc(VmItem::NrWritten);
        self.acct_reclaim_writeback();
        self.end_writeback_reclaim(p);
    }

    pub(crate) fn swap_out_done(&mut self, slot: u32, n: u32) {
        for s in slot..slot + n {
            if let Some((m, index)) = self.swap.wb.remove(s) {
                if self.mm.mappings[m as usize].live {
                    self.end_swap_writeback(m, index);
                }
            }
        }
    }

    pub(crate) fn swap_in_done(&mut self, slot: u32, n: u32) {
        for s in slot..slot + n {
            if let Some((m, index)) = self.swap.rd.remove(s) {
                if let Some(p) = self.mm.page(m, index) {
                    self.mm.pages.clear_locked(p);
                    self.shmem_swapin_done(m, index, p);
                }
            }
        }
    }

    /// shmem_swapin_folio: a shmem page read back from swap leaves the swap cache at once
    /// (delete_from_swap_cache + swap_free) and is dirty; anonymous pages keep their swap
    /// copy until they are written or swap runs full.
    fn shmem_swapin_done(&mut self, m: u32, index: u64, p: Pfn) {
        if self.mm.mappings[m as usize].kind != MappingKind::Shmem {
            return;
        }
        if let Some(slot) = self.mm.swap_cache_slot(m, index) {
            self.mm.set_swap_cache_slot(m, index, None);
            self.swap_free(slot);
            self.mm.pages.set_dirty(p);
        }
    }

    /// do_swap_page: bring the page at `index` back from `slot`, with swap readahead of up
    /// to 2^page-cluster contiguous slots. Returns when the page will be uptodate.
    fn swapin(&mut self, tid: TaskId, m: u32, index: u64, slot: u32) -> Result<Ns, Step> {
        let p = self.page_cache_alloc(tid)?;
        self.filemap_add_page(m, index, p, true);
        self.swapin_note_cost(p);
        if !self.swap.ra.is_empty() {
            self.swap.ra.remove(&(m, index));
        }
        // handle_mm_fault counts PGFAULT for every fault, do_swap_page PGMAJFAULT too.
        self.vm.inc(VmItem::Pgfault);
        if self.mm.mappings[m as usize].kind == MappingKind::Anon {
            self.swap.unmapped.insert((m, index));
        }
        self.vm.inc(VmItem::Pgmajfault);
        self.memcg_count_fault(tid, true);
        self.tasks[tid as usize].maj_flt += 1;
        // do_swap_page: the trap, then the page joins the swap cache and the LRU.
        let c = &self.machine.cpu_model;
        let ns = c.page_fault_ns + cost::page_cache_insert_ns(c);
        self.charge_sys(tid, ns);
        if self.swap_zero_filled(m) {
            return Ok(self.swapin_zeromap(tid, m, index, slot, p));
        }
        self.vm.inc(VmItem::Pswpin);
        let (dev, base) = match self.swap_area_kind(slot).clone() {
            AreaKind::Block { dev, base } => (dev, base),
            AreaKind::Zram { algorithm } => {
                // zram_read_page in the faulting task: a fill, a copy or a decompression
                // (mm/cost.rs), synchronous (SWP_SYNCHRONOUS_IO, zram_rw_page).
                let content = self.mm.mappings[m as usize].content;
                let ns = cost::zram_load_ns(&self.machine.cpu_model, cost::Zcomp::from_name(&algorithm), content);
                self.charge_sys_for(tid, ns, crate::delayacct::SysWork::Zram);
                self.mm.pages.clear_locked(p);
                self.shmem_swapin_done(m, index, p);
                // Anonymous memory skips the swap cache and its readahead (do_swap_page's
                // SWP_SYNCHRONOUS_IO path); shmem reads through swap_cluster_readahead
                // (shmem_swapin / shmem_swapin_cluster), each readahead page read from zram
                // in this task as well.
                if self.mm.mappings[m as usize].kind == MappingKind::Shmem {
                    self.swap_readahead(m, index, slot, |k, q, om, next, _s| {
                        k.vm.inc(VmItem::Pswpin);
                        k.charge_sys_for(tid, ns, crate::delayacct::SysWork::Zram);
                        k.mm.pages.clear_locked(q);
                        k.shmem_swapin_done(om, next, q);
                    });
                }
                return Ok(self.now);
            }
        };
        self.swap.rd.insert(slot, (m, index));
        let mut slots = std::mem::take(&mut self.swap.ra_buf);
        slots.clear();
        slots.push(slot);
        self.swap_readahead(m, index, slot, |k, _q, om, next, s| {
            k.vm.inc(VmItem::Pswpin);
            k.swap.rd.insert(s, (om, next));
            slots.push(s);
        });
        // blk_finish_plug: the pages' reads go out as one request per run of adjacent
        // slots (the plug merges them); the fault waits for the request holding its page.
        slots.sort_unstable();
        let start = self.swap.areas[self.area_of(slot)].start;
        let mut done = self.now;
        let mut i = 0;
        while i < slots.len() {
            let mut j = i + 1;
            while j < slots.len() && slots[j] == slots[j - 1] + 1 {
                j += 1;
            }
            let (first, n) = (slots[i], (j - i) as u32);
            let pos = base + (first - start + 1) as u64 * PAGE_SIZE;
            let at = self.submit_bio(dev, Dir::Read, pos, n as u64 * PAGE_SIZE, ReqKind::SwapIn { slot: first, n }, Some(tid));
            self.charge_sys(tid, self.machine.cpu_model.io_request_ns);
            if (first..first + n).contains(&slot) {
                done = at;
            }
            i = j;
        }
        self.swap.ra_buf = slots;
        self.tasks[tid as usize].swapin_delay += done.saturating_sub(self.now);
        Ok(done)
    }

    /// Whether anonymous memory's swap faults use swap_vma_readahead
    /// (swap_use_vma_readahead: enable_vma_readahead, and no rotational swap device is on:
    /// nr_rotate_swap == 0).
    pub(crate) fn swap_use_vma_readahead(&self) -> bool {
        self.profile.swap_ra == SwapRaRule::Vma
            && !self.swap.areas.iter().any(|a| a.active && matches!(a.kind, AreaKind::Block { dev, .. } if self.block.devs[dev as usize].disk.model.rotational))
    }

    /// swapin_readahead for the fault on page `index` of `m` at `slot`: the pages to read
    /// with it, each added to the swap cache as a readahead page (SWAP_RA; the fault that
    /// first finds one counts swap_ra_hit) while free memory stays above the low watermark.
    /// `each` finishes a page (its I/O or its zero fill). Which pages:
    /// - swap_vma_readahead (anonymous memory, `swap_use_vma_readahead`): the swapped
    ///   pages of the window swap_ra_info places around the faulting page;
    /// - swap_cluster_readahead (shmem, or a rotational swap device): every slot of the
    ///   window's aligned block around the faulting slot whose page is out there, whichever
    ///   mapping it belongs to (the window: swapin_nr_pages since 3.15; 2^page-cluster
    ///   before, where valid_swaphandles stops at the first slot that is not allocated).
    fn swap_readahead(&mut self, m: u32, index: u64, slot: u32, mut each: impl FnMut(&mut Kernel, Pfn, u32, u64, u32)) {
        let max_pages = 1u32 << self.sysctl.page_cluster.min(10);
        let anon = self.mm.mappings[m as usize].kind == MappingKind::Anon;
        if anon && self.swap_use_vma_readahead() {
            // swap_ra_info: SWAP_RA_ORDER_CEILING (5) caps the window on 64-bit.
            let max_win = 1u32 << self.sysctl.page_cluster.min(5);
            let ra = self.mm.mappings[m as usize].swap_ra;
            let win = if max_win == 1 { 1 } else { swapin_nr_pages_window(ra.index, index, ra.hits, max_win, ra.win) };
            self.mm.mappings[m as usize].swap_ra = super::SwapRaInfo { index, win, hits: 0 };
            if win == 1 {
                return;
            }
            let w = win as u64;
            let (lo, hi) = if index == ra.index + 1 {
                (index, index + w)
            } else if ra.index == index + 1 {
                ((index + 1).saturating_sub(w), index + 1)
            } else {
                let left = (w - 1) / 2;
                (index.saturating_sub(left), index + w - left)
            };
            for next in lo..hi {
                if next == index {
                    continue;
                }
                if let Slot::Swap(s) = self.mm.slot(m, next) {
                    if !self.swap_ra_page(m, next, s, &mut each) {
                        return;
                    }
                }
            }
            return;
        }
        let adaptive = self.profile.swap_ra == SwapRaRule::Vma;
        let ai = self.area_of(slot);
        let (start, pages) = (self.swap.areas[ai].start, self.swap.areas[ai].pages);
        // The kernel's offset counts the header page: slot `start` is offset 1.
        let off = (slot - start) as u64 + 1;
        let win = if adaptive { self.swapin_nr_pages(off, max_pages) } else { max_pages };
        if win <= 1 {
            return;
        }
        let mask = win as u64 - 1;
        let (lo, hi) = ((off & !mask).max(1), (off | mask).min(pages));
        // The page swapped out to slot `s`, if it is still out there (its mapping's entry
        // is that slot): __read_swap_cache_async reads it into the swap cache; a slot that
        // is free or whose page is in memory is skipped.
        let out_there = |k: &Kernel, s: u32| -> Option<(u32, u64)> {
            let o = k.mm.swap_map.owner(s)?;
            let (om, oi) = ((o >> 32) as u32, o & 0xffff_ffff);
            let live = (om as usize) < k.mm.mappings.len() && k.mm.mappings[om as usize].live;
            (live && k.mm.slot(om, oi) == Slot::Swap(s)).then_some((om, oi))
        };
        // Up from the faulting slot, then down (valid_swaphandles' order).
        let ups = (off + 1..=hi).map(|o| (o, true));
        let downs = (lo..off).rev().map(|o| (o, false));
        let mut blocked = [false; 2];
        for (o, up) in ups.chain(downs) {
            if blocked[up as usize] {
                continue;
            }
            let s = start + (o - 1) as u32;
            match out_there(self, s) {
                // A page of any mapping: read into its own mapping's swap cache.
                Some((om, oi)) => {
                    if !self.swap_ra_page(om, oi, s, &mut each) {
                        return;
                    }
                }
                // valid_swaphandles (before 3.15) stops at the first slot not in use.
                None if !adaptive && self.mm.swap_map.state[s as usize] == 0 => blocked[up as usize] = true,
                None => {}
            }
        }
    }

    /// One readahead page of `swap_readahead`; false once free memory is at the low
    /// watermark (no more readahead).
    fn swap_ra_page(&mut self, m: u32, next: u64, s: u32, each: &mut impl FnMut(&mut Kernel, Pfn, u32, u64, u32)) -> bool {
        if self.mm.nr_free() <= self.mm.wmark_pages().low {
            return false;
        }
        let Some(q) = self.rmqueue(self.this_cpu()) else { return false };
        self.vm.inc(VmItem::PgallocNormal);
        self.filemap_add_page(m, next, q, true);
        self.swapin_note_cost(q);
        self.vm.inc(VmItem::SwapRa);
        self.swap.ra.insert((m, next), q);
        if self.mm.mappings[m as usize].kind == MappingKind::Anon {
            self.swap.unmapped.insert((m, next));
        }
        each(self, q, m, next, s);
        true
    }

    /// 5.8's lru_note_cost_page for a page read in from swap: anon reclaim cost.
    fn swapin_note_cost(&mut self, p: Pfn) {
        if self.profile.swapin_notes_anon_cost {
            let id = self.mm.page_lruvec(p);
            self.lru_note_cost(id, false, 1);
        }
    }

    /// swapin_nr_pages (3.15+): the cluster readahead window from the readahead hits since
    /// the last window (taken and reset), remembering the offset of a fault without hits.
    fn swapin_nr_pages(&mut self, off: u64, max_pages: u32) -> u32 {
        let hits = std::mem::take(&mut self.swap.ra_hits);
        let pages = swapin_nr_pages_window(self.swap.ra_prev_offset, off, hits, max_pages, self.swap.ra_last_pages);
        if hits == 0 {
            self.swap.ra_prev_offset = off;
        }
        self.swap.ra_last_pages = pages;
        pages
    }

    /// swap_read_folio of zero-filled slots (6.12+): swap_read_folio_zeromap fills the
    /// folio with zeros (SWPIN_ZERO), no I/O, no PSWPIN. Swap readahead's pages
    /// (`swap_readahead`) are filled the same way; anonymous memory on zram
    /// (SWP_SYNCHRONOUS_IO) skips the swap cache and reads the faulting page alone.
    fn swapin_zeromap(&mut self, tid: TaskId, m: u32, index: u64, slot: u32, p: Pfn) -> Ns {
        let fill = |k: &mut Kernel, q: Pfn, om: u32, i: u64| {
            k.vm.inc(VmItem::SwpinZero);
            k.charge_sys_for(tid, cost::ns_at(PAGE_SIZE, k.machine.cpu_model.zero_bw), crate::delayacct::SysWork::Zram);
            k.mm.pages.clear_locked(q);
            k.shmem_swapin_done(om, i, q);
        };
        fill(self, p, m, index);
        if matches!(self.swap_area_kind(slot), AreaKind::Zram { .. }) && self.mm.mappings[m as usize].kind == MappingKind::Anon {
            return self.now;
        }
        self.swap_readahead(m, index, slot, |k, q, om, next, _s| fill(k, q, om, next));
        self.now
    }

    /// The page-cache mapping behind an open file descriptor.
    pub fn file_mapping(&self, tid: TaskId, fd: usize) -> Option<u32> {
        let f = self.file(tid, fd)?;
        match f.target {
            crate::fs::Target::Inode(ino) => Some(self.fs.inodes[ino as usize].mapping),
            crate::fs::Target::BlockDev(d) => Some(self.block.devs[d as usize].mapping),
            _ => None,
        }
    }

    /// A new mapping of shared anonymous memory (MAP_SHARED|MAP_ANONYMOUS: a shmem object)
    /// owned by `tid`.
    pub fn map_shared_anon(&mut self, tid: TaskId, pages: u64, content: Content) -> u32 {
        let m = self.mm.new_mapping(MappingKind::Shmem, None, 0);
        self.mm.set_mapped(m, true);
        let s = &mut self.mm.mappings[m as usize];
        s.owner = Some(tid);
        s.content = content;
        let t = &mut self.tasks[tid as usize];
        t.vmas.push(m);
        t.vm_kb += pages * 4;
        // shmem_zero_setup -> shmem_acct_size: the whole object is committed at mmap.
        t.committed += pages;
        m
    }

    /// mmap of a file's pages into `tid` (MAP_SHARED or MAP_PRIVATE read-only).
    pub fn map_file(&mut self, tid: TaskId, m: u32, pages: u64, exec: bool) {
        self.mm.set_mapped(m, true);
        let s = &mut self.mm.mappings[m as usize];
        s.exec |= exec;
        let t = &mut self.tasks[tid as usize];
        t.vmas.push(m);
        t.file_vmas.push(crate::mm::FileVma::new(m));
        t.vm_kb += pages * 4;
    }

    /// `tid`'s mapping of file `m` (the last one it made); one is made for a mapping the
    /// task uses without having mapped it here (the boot's shared libraries).
    pub(crate) fn file_vma(&mut self, tid: TaskId, m: u32) -> &mut crate::mm::FileVma {
        let v = &mut self.tasks[tid as usize].file_vmas;
        let i = match v.iter().rposition(|f| f.m == m) {
            Some(i) => i,
            None => {
                v.push(crate::mm::FileVma::new(m));
                v.len() - 1
            }
        };
        &mut v[i]
    }

    /// The madvise advice of `tid`'s mapping of file `m` (MADV_NORMAL if it has none).
    pub fn file_advice(&self, tid: TaskId, m: u32) -> Madvice {
        self.tasks[tid as usize].file_vmas.iter().rev().find(|f| f.m == m).map_or(Madvice::Normal, |f| f.advice)
    }

    /// munmap of file mapping `m` (`pages` long) by `tid`: its page-table entries go
    /// (zap_pte_range); NR_FILE_MAPPED drops the file's pages when no other task maps it.
    pub fn unmap_file(&mut self, tid: TaskId, m: u32, pages: u64) {
        let t = &mut self.tasks[tid as usize];
        let Some(i) = t.vmas.iter().position(|&v| v == m) else { return };
        t.vmas.swap_remove(i);
        if let Some(i) = t.file_vmas.iter().rposition(|f| f.m == m) {
            t.file_vmas.remove(i);
        }
        t.vm_kb = t.vm_kb.saturating_sub(pages * 4);
        let still = self.tasks.iter().any(|t| t.exit_code.is_none() && t.vmas.contains(&m));
        if !still {
            self.mm.set_mapped(m, false);
        }
    }

    /// madvise(MADV_NORMAL / MADV_RANDOM / MADV_SEQUENTIAL) over `tid`'s mapping of file
    /// `m` (madvise_behavior: VM_RAND_READ / VM_SEQ_READ on that VMA alone, read by the
    /// fault path's readahead).
    pub fn madvise_file(&mut self, tid: TaskId, m: u32, advice: Madvice) {
        if self.tasks[tid as usize].vmas.contains(&m) {
            self.file_vma(tid, m).advice = advice;
        }
    }

    /// A store to a clean page of a shared file mapping. Its page-table entry is absent, or
    /// write-protected since the page was last cleaned (folio_mkclean at writeback), so the
    /// store faults (do_shared_fault, or do_wp_page -> wp_page_shared): the filesystem's
    /// page_mkwrite (ext4_page_mkwrite -> block_page_mkwrite: the page's buffers and its
    /// block reservation), then fault_dirty_shared_page dirties the page and lets
    /// balance_dirty_pages_ratelimited throttle the writer. `counted`: the same fault was
    /// already counted as the one that mapped the page.
    fn shared_file_write_fault(&mut self, tid: TaskId, m: u32, p: Pfn, counted: bool) -> Result<(), Step> {
        if !counted {
            self.vm.inc(VmItem::Pgfault);
            self.memcg_count_fault(tid, false);
            self.tasks[tid as usize].min_flt += 1;
            self.charge_sys(tid, self.machine.cpu_model.page_fault_ns);
        }
        if self.write_begin_buffers(m) {
            self.attach_page_buffers(Some(tid), p)?;
        }
        self.charge_sys(tid, self.machine.cpu_model.fs_write_page_ns);
        self.set_page_dirty(tid, p);
        if let Some(pause) = self.balance_dirty_pages(tid) {
            // balance_dirty_pages: io_schedule_timeout(pause) in TASK_KILLABLE.
            let on = crate::wait::WaitOn::Timeout { until: self.now + pause };
            return Err(Step::Wait(crate::wait::Wait { on, reason: crate::delayacct::WaitReason::DirtyThrottle, io: true }));
        }
        Ok(())
    }

    /// An access by `tid` to page `index` of mapping `m` (handle_mm_fault when the page is
    /// not mapped, a plain memory access when it is). `Err` is the wait before retrying.
    pub fn touch(&mut self, tid: TaskId, m: u32, index: u64, write: bool) -> Result<(), Step> {
        match self.mm.slot(m, index) {
            Slot::Page(p) => {
                if self.mm.pages.locked(p) {
                    // filemap_fault / do_swap_page: folio_lock waits for the page's read.
                    return Err(self.folio_wait_locked(tid, m, index, p));
                }
                let first_touch = !self.mm.pages.young(p) && !self.mm.pages.referenced(p);
                self.mm.pages.set_young(p);
                if self.mm.mappings[m as usize].swap_backed() {
                    // A swap-cache page no page table maps yet: this access is the fault
                    // that maps it (do_swap_page, a major fault already counted at swapin
                    // or a swap-cache hit of swap readahead).
                    let fault = !self.swap.unmapped.is_empty() && self.swap.unmapped.remove(&(m, index));
                    let readahead = !self.swap.ra.is_empty() && self.swap.ra.get(&(m, index)) == Some(&p);
                    // swap_cache_get_folio: an anonymous VMA with VMA readahead remembers
                    // the address of each swap-cache hit and counts readahead hits; the
                    // others (shmem passes no VMA) count them for swapin_nr_pages.
                    let vma_ra = fault && self.mm.mappings[m as usize].kind == MappingKind::Anon && self.swap_use_vma_readahead();
                    if vma_ra {
                        let ra = &mut self.mm.mappings[m as usize].swap_ra;
                        ra.index = index;
                        if readahead {
                            ra.hits = (ra.hits + 1).min(SWAP_RA_HITS_MAX);
                        }
                    } else if readahead && self.profile.swap_ra == SwapRaRule::Vma {
                        self.swap.ra_hits += 1;
                    }
                    if readahead {
                        // do_swap_page (shmem: shmem_swapin_folio) finds a page swap
                        // readahead brought in: swap_cache_get_folio clears PG_readahead and
                        // counts SWAP_RA_HIT; the fault is minor (PGFAULT, min_flt).
                        self.swap.ra.remove(&(m, index));
                        self.vm.inc(VmItem::SwapRaHit);
                        self.vm.inc(VmItem::Pgfault);
                        self.memcg_count_fault(tid, false);
                        self.tasks[tid as usize].min_flt += 1;
                    }
                    if let Some(slot) = self.mm.swap_cache_slot(m, index) {
                        if self.swap_cache_frees_on_access(fault, write) && !self.mm.pages.writeback(p) {
                            // try_to_free_swap / folio_free_swap: the page leaves the swap
                            // cache, the slot is freed, the page is dirty (no copy left).
                            self.mm.set_swap_cache_slot(m, index, None);
                            self.swap_free(slot);
                            self.mm.pages.set_dirty(p);
                        }
                    }
                    if write {
                        // The PTE is dirty: a page that keeps its swap-cache copy is
                        // written to its slot again if reclaimed.
                        self.mm.pages.set_dirty(p);
                    }
                } else {
                    // The retry of a major fault whose read has completed: handle_mm_fault
                    // runs again (FAULT_FLAG_TRIED) but mm_account_fault counts the fault
                    // once, as the major fault already counted.
                    let tried = self.tasks[tid as usize].fault_tried.is_some() && self.tasks[tid as usize].fault_tried.take() == Some((m, index));
                    let mut faulted = tried;
                    // filemap_map_pages leaves a page carrying PG_readahead unmapped, so the
                    // access to it is a fault that finds it cached: do_async_mmap_readahead
                    // (not for VM_RAND_READ) starts the next window. The bit is PG_reclaim
                    // on a page under writeback.
                    let marked = self.mm.pages.readahead(p) && !self.mm.pages.writeback(p) && self.file_advice(tid, m) != Madvice::Random;
                    if first_touch || marked {
                        // A cached page mapped for the first time (filemap_map_pages), or
                        // found by the fault (do_async_mmap_readahead): the read-around paid
                        // off, so the mapping looks less random.
                        let v = self.file_vma(tid, m);
                        v.mmap_miss = v.mmap_miss.saturating_sub(1);
                    }
                    if marked {
                        let eof = self.file_size_pages(m).unwrap_or(index + 1);
                        self.mmap_async_ra(tid, m, index, p, eof);
                        self.mm.mappings[m as usize].set_block_mapped(index, true);
                        if !tried {
                            self.vm.inc(VmItem::Pgfault);
                            self.memcg_count_fault(tid, false);
                            self.tasks[tid as usize].min_flt += 1;
                            self.charge_sys(tid, self.machine.cpu_model.page_fault_ns);
                        }
                        faulted = true;
                    }
                    if self.mm.mappings[m as usize].mapped && !self.mm.mappings[m as usize].block_mapped(index) {
                        // A cached page no PTE maps: a minor fault (handle_mm_fault counts
                        // PGFAULT; do_read_fault -> do_fault_around maps the block's cached
                        // pages with it, filemap_map_pages; before 3.15 the page alone).
                        self.mm.mappings[m as usize].set_block_mapped(index, true);
                        if !tried {
                            self.vm.inc(VmItem::Pgfault);
                            self.memcg_count_fault(tid, false);
                            self.tasks[tid as usize].min_flt += 1;
                        }
                        self.charge_sys(tid, self.machine.cpu_model.page_fault_ns);
                        faulted = true;
                    }
                    if faulted && !tried && self.profile.mmap_readaround == MmapReadaround::Unmarked {
                        // filemap_fault before 3.1 leaves ra->prev_pos at the page it found.
                        self.file_vma(tid, m).ra.prev_index = index;
                    }
                    if write && self.mm.mappings[m as usize].kind == MappingKind::File && !self.mm.pages.dirty(p) {
                        return self.shared_file_write_fault(tid, m, p, faulted);
                    }
                }
                Ok(())
            }
            Slot::Swap(slot) => {
                let done = self.swapin(tid, m, index, slot)?;
                if done <= self.now {
                    return self.touch(tid, m, index, write);
                }
                // do_swap_page: folio_lock_or_retry waits for the swap read (swapin delay).
                match self.mm.slot(m, index) {
                    Slot::Page(p) => Err(self.folio_wait_locked(tid, m, index, p)),
                    _ => {
                        self.set_wait_reason(tid, crate::delayacct::WaitReason::Swapin);
                        Err(Step::SleepUntil { t: done, io: true })
                    }
                }
            }
            Slot::Empty | Slot::Shadow(_) => {
                let kind = self.mm.mappings[m as usize].kind;
                match kind {
                    MappingKind::Anon | MappingKind::Shmem => {
                        // do_anonymous_page / shmem_fault: a zeroed page, mapped by a page
                        // table of the task's own anonymous memory.
                        if kind == MappingKind::Anon && self.mm.mappings[m as usize].owner == Some(tid) {
                            self.pte_alloc(tid, index)?;
                        }
                        let p = self.page_cache_alloc(tid)?;
                        // lru_cache_add_active_or_unevictable (before 5.9): active anon.
                        let active = kind == MappingKind::Anon && !self.profile.new_anon_inactive;
                        self.filemap_add_page_lru(m, index, p, false, active);
                        if !self.swap.unmapped.is_empty() {
                            self.swap.unmapped.remove(&(m, index));
                        }
                        if !self.swap.ra.is_empty() {
                            self.swap.ra.remove(&(m, index));
                        }
                        self.mm.pages.set_young(p);
                        self.mm.pages.set_dirty(p);
                        self.vm.inc(VmItem::Pgfault);
                        self.memcg_count_fault(tid, false);
                        self.tasks[tid as usize].min_flt += 1;
                        self.charge_sys(tid, cost::anon_fault_ns(&self.machine.cpu_model));
                        Ok(())
                    }
                    MappingKind::File | MappingKind::BlockDev => self.filemap_fault(tid, m, index),
                }
            }
        }
    }

    /// Whether an access to an anonymous page with a swap-cache copy drops the copy.
    /// The fault that maps it, do_swap_page: try_to_free_swap when vm_swap_full (more
    /// than half of swap in use; mem_cgroup_swap_full in 5.x/6.x also counts the memcg's
    /// swap limit) and, for a write fault, reuse_swap_page (2.6.x .. 5.18) or
    /// should_try_to_free_swap's exclusive-write test (5.19+). A later write to the mapped
    /// page, do_wp_page: reuse_swap_page frees the copy before 5.19; since then an
    /// exclusive page is reused and keeps its slot (`wp_frees_swap_cache`). A read of a
    /// mapped page changes nothing. (mlock, the other reason, is not modelled.)
    pub fn swap_cache_frees_on_access(&self, fault: bool, write: bool) -> bool {
        if fault {
            write || self.vm_swap_full()
        } else {
            write && self.profile.wp_frees_swap_cache
        }
    }

    /// activate_locked in shrink_folio_list: a swap-cache page going back to the active
    /// list is "not a candidate for swapping, so reclaim swap space" when vm_swap_full
    /// (mem_cgroup_swap_full in 5.x/6.x; or mlocked) -- try_to_free_swap, which leaves a
    /// page under writeback alone. The page is dirty again: it has no copy on swap.
    pub(crate) fn activate_frees_swap(&mut self, p: Pfn) {
        let m = self.mm.pages.mapping(p);
        if !self.mm.mappings[m as usize].swap_backed() || self.mm.pages.writeback(p) {
            return;
        }
        let index = self.mm.pages.index(p);
        if let Some(slot) = self.mm.swap_cache_slot(m, index) {
            if self.vm_swap_full() {
                self.mm.set_swap_cache_slot(m, index, None);
                self.swap_free(slot);
                self.mm.pages.set_dirty(p);
            }
        }
    }

    /// filemap_fault for a mapped file page not in the page cache: a major fault that reads
    /// the page with read-around (do_sync_mmap_readahead), or the page alone once the
    /// mapping has missed MMAP_LOTSAMISS times in a row (random access).
    fn filemap_fault(&mut self, tid: TaskId, m: u32, index: u64) -> Result<(), Step> {
        self.vm.inc(VmItem::Pgmajfault);
        self.vm.inc(VmItem::Pgfault);
        self.memcg_count_fault(tid, true);
        self.tasks[tid as usize].maj_flt += 1;
        self.tasks[tid as usize].fault_tried = Some((m, index));
        let eof = self.file_size_pages(m).unwrap_or(index + 1);
        let mut advice = self.file_advice(tid, m);
        let unmarked = self.profile.mmap_readaround == MmapReadaround::Unmarked;
        if unmarked {
            // 2.6.31 .. 3.0: a fault just after the previous one (offset - 1 ==
            // ra->prev_pos; -1 before any, so page 0 too) takes VM_SEQ_READ's path.
            let v = self.file_vma(tid, m);
            let sequential = index.wrapping_sub(1) == v.ra.prev_index;
            v.ra.prev_index = index;
            if advice == Madvice::Normal && sequential {
                advice = Madvice::Sequential;
            }
        }
        if advice != Madvice::Normal {
            // do_sync_mmap_readahead: VM_RAND_READ reads the page alone; VM_SEQ_READ a
            // readahead window (mmap_seq_sync_ra). Neither touches mmap_miss.
            let (start, n, mark) = match advice {
                Madvice::Sequential => self.mmap_seq_sync_ra(tid, m, index),
                _ => (index, 1, None),
            };
            self.charge_sys(tid, self.machine.cpu_model.page_fault_ns);
            return self.fault_read(tid, m, start, n, eof, index, mark);
        }
        let v = self.file_vma(tid, m);
        if v.mmap_miss < MMAP_LOTSAMISS * 10 {
            v.mmap_miss += 1;
        }
        let (start, n, mark) = if v.mmap_miss > MMAP_LOTSAMISS { (index, 1, None) } else { self.mmap_read_around(tid, m, index, eof) };
        self.charge_sys(tid, self.machine.cpu_model.page_fault_ns);
        self.fault_read(tid, m, start, n, eof, index, mark)
    }

    /// The size in pages of the file whose page cache is mapping `m`.
    fn file_size_pages(&self, m: u32) -> Option<u64> {
        let ino = match self.fs.by_mapping.get(&m) {
            Some(&ino) if self.fs.inodes[ino as usize].linked => ino,
            _ => self.fs.inodes.iter().position(|i| i.mapping == m && i.linked)? as u32,
        };
        Some(self.fs.inodes[ino as usize].size.div_ceil(PAGE_SIZE))
    }

    /// Read the missing pages of [start, start + n) (below `eof`, and `want` whatever
    /// `eof` says) for a fault at `want`, in runs of contiguous pages; the page at `mark`
    /// gets PG_readahead if it is one of those allocated here. The fault then waits for
    /// `want`'s read.
    pub(crate) fn fault_read(&mut self, tid: TaskId, m: u32, start: u64, n: u64, eof: u64, want: u64, mark: Option<u64>) -> Result<(), Step> {
        let Some(dev) = self.mm.mappings[m as usize].dev else {
            return Ok(());
        };
        let base = self.mm.mappings[m as usize].disk_base;
        let end = (start + n).min(eof.max(want + 1));
        let mut run: Option<(u64, u64)> = None;
        let mut done_at = self.now;
        for i in start..end {
            let missing = !matches!(self.mm.slot(m, i), Slot::Page(_));
            if missing {
                let p = match self.page_cache_alloc_cold(tid) {
                    Ok(p) => p,
                    Err(step) => {
                        if i <= want {
                            if let Some((s, k)) = run {
                                self.fault_submit(tid, dev, m, base, s, k);
                            }
                            return Err(step);
                        }
                        break;
                    }
                };
                self.filemap_add_page(m, i, p, true);
                if Some(i) == mark {
                    self.mm.pages.set_readahead(p);
                }
                self.charge_readahead_page(tid);
                run = match run {
                    Some((s, k)) => Some((s, k + 1)),
                    None => Some((i, 1)),
                };
            } else if let Some((s, k)) = run.take() {
                done_at = done_at.max(self.fault_submit(tid, dev, m, base, s, k));
            }
        }
        if let Some((s, k)) = run {
            done_at = done_at.max(self.fault_submit(tid, dev, m, base, s, k));
        }
        if let Slot::Page(p) = self.mm.slot(m, want) {
            if self.mm.pages.locked(p) {
                // The fault waits for the read of the page it needs (folio_lock in
                // filemap_fault), woken when that read completes.
                return Err(self.folio_wait_locked(tid, m, want, p));
            }
        }
        let t = self.block.read_completion(m, want).unwrap_or(done_at).max(self.now + 1);
        Err(Step::SleepUntil { t, io: true })
    }

    fn fault_submit(&mut self, tid: TaskId, dev: u32, m: u32, base: u64, s: u64, k: u64) -> Ns {
        let kind = ReqKind::PageRead { mapping: m, index: s, n: k as u32 };
        self.charge_sys(tid, self.machine.cpu_model.io_request_ns);
        self.account_read(tid, k * PAGE_SIZE);
        self.submit_bio(dev, Dir::Read, base + s * PAGE_SIZE, k * PAGE_SIZE, kind, Some(tid))
    }

    /// try_to_unuse: read every page of area `ai` back in (swapoff), `budget` pages per
    /// call. `cur` carries the scan from call to call, so emptying an area walks the
    /// address spaces once (unuse_mm over every mm), plus one pass that finds nothing
    /// (try_to_unuse retries while the area still has entries in use). Returns the time
    /// the reads complete, `Ok(None)` when the area is empty and off; `Err` if the task
    /// must wait for memory first (the page is retried on the next call).
    pub fn swapoff_area_step(&mut self, tid: TaskId, ai: usize, budget: usize, cur: &mut UnuseCursor) -> Result<Option<Ns>, Step> {
        // disable_swap_slots_cache_lock: swapoff drains the per-CPU slot caches.
        self.drain_swap_slots_caches();
        let (start, end) = (self.swap.areas[ai].start, self.swap.areas[ai].start + self.swap.areas[ai].pages as u32);
        let mut last = self.now;
        let mut n = 0;
        loop {
            let Some(m) = self.mm.mappings.get(cur.mapping as usize) else {
                // The end of a pass.
                if !cur.found {
                    // Swap-cache copies in this area are dropped: the pages become dirty again.
                    self.drop_swap_cache_of(ai);
                    self.swap.areas[ai].active = false;
                    *cur = UnuseCursor::default();
                    return Ok(None);
                }
                *cur = UnuseCursor::default();
                if n > 0 {
                    break;
                }
                continue;
            };
            if !m.live || m.nr_swapped == 0 {
                cur.mapping += 1;
                cur.index = 0;
                continue;
            }
            // unuse_mapping walks the entries present (the swap entries and the pages
            // readahead brought in), not every index.
            let Some((index, slot)) = self.mm.next_slot(cur.mapping, cur.index, u64::MAX) else {
                cur.mapping += 1;
                cur.index = 0;
                continue;
            };
            cur.index = index;
            match slot {
                Slot::Swap(slot) if slot >= start && slot < end => {
                    if n == budget {
                        break;
                    }
                    cur.found = true;
                    let done = self.swapin(tid, cur.mapping, cur.index, slot)?;
                    // unuse_pte maps the page at once.
                    self.swap.unmapped.remove(&(cur.mapping, cur.index));
                    last = last.max(done);
                    n += 1;
                }
                Slot::Page(p) if n > 0 && self.mm.pages.locked(p) && self.mm.swap_cache_slot(cur.mapping, cur.index).is_some_and(|s| s >= start && s < end) => {
                    // Read in by this batch's swap readahead: part of the batch's budget.
                    if n == budget {
                        break;
                    }
                    n += 1;
                }
                _ => {}
            }
            cur.index += 1;
        }
        Ok(Some(last))
    }

    fn drop_swap_cache_of(&mut self, ai: usize) {
        let (start, end) = (self.swap.areas[ai].start, self.swap.areas[ai].start + self.swap.areas[ai].pages as u32);
        for id in 0..self.mm.mappings.len() {
            if !self.mm.mappings[id].live || self.mm.mappings[id].nr_swapcache == 0 {
                continue;
            }
            let m = id as u32;
            let mut at = 0;
            while let Some((index, slot)) = self.mm.next_swap_cache(m, at) {
                at = index + 1;
                if slot >= start && slot < end {
                    if let Some(p) = self.mm.page(m, index) {
                        if self.mm.pages.writeback(p) {
                            continue;
                        }
                        self.mm.pages.set_dirty(p);
                    }
                    self.mm.set_swap_cache_slot(m, index, None);
                    self.swap_free(slot);
                }
            }
        }
    }
}

/// Where a swapoff scan (`swapoff_area_step`) has got to: the address space and page
/// index, and whether this pass has found a page of the area.
#[derive(Clone, Copy, Debug, Default)]
pub struct UnuseCursor {
    pub mapping: u32,
    pub index: u64,
    pub found: bool,
}
