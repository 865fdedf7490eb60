//! Per-CPU LRU-add batches (mm/swap.c): a new page does not go to its LRU list at once; it
//! waits in the batch of the CPU that added it, and the batch goes to the lists in one go
//! under lru_lock when it is full or drained (lru_add_drain, lru_add_drain_all).
//!
//! | era | batch | size | kernel |
//! |---|---|---|---|
//! | 6.x | one folio_batch per CPU (cpu_fbatches.lru_add) | 15 | folio_add_lru -> folio_batch_add_and_move |
//! | 5.x | one pagevec per CPU (lru_add_pvec) | 15 | __lru_cache_add (PAGEVEC_SIZE 15 since 4.15) |
//! | 2.6.39 | a pagevec per CPU and LRU list (lru_add_pvecs[NR_LRU_LISTS]) | 14 | __lru_cache_add(page, lru) |
//! | 2.4 | none | — | lru_cache_add: pagemap_lru_lock per page |
//!
//! A page in a batch is on no list: /proc/meminfo's Active/Inactive and the cgroup's LRU
//! counts leave it out (it is in Cached or AnonPages), reclaim cannot isolate it, and
//! activation can only change the list it will join. Its frame's links hold
//! `page::BATCH_LINK` and its CPU (`Pages::set_batched`). A page truncated while in a batch
//! stays there without a mapping: the batch holds the last reference and frees it when it
//! drains (folio_batch_move_lru -> folios_put).
//!
//! This module is the per-CPU storage (usable without a `Kernel`); `Kernel::lru_cache_add`
//! and the drains (lru_lock taken once per run of pages of one lruvec, with the hold per
//! page of the cost model) are below.

use super::lru::{LruvecId, NR_LRU_LISTS};
use super::page::{Lru, Pfn};
use crate::Kernel;
use memtwin_engine::Ns;

/// How an era adds new pages to the LRU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LruAddRule {
    /// Linux 2.4 (lru_cache_add): straight to the inactive list under pagemap_lru_lock,
    /// one acquisition per page.
    Direct,
    /// 2.6.x (__lru_cache_add(page, lru), lru_add_pvecs): one pagevec of `size` per CPU and
    /// LRU list; the list is chosen when the page is added (lru_cache_add_lru).
    PerList { size: u8 },
    /// 3.x .. 6.x (lru_add_pvec, then cpu_fbatches.lru_add): one batch of `size` per CPU;
    /// the list is decided when the batch drains, from PG_active (lru_add_fn), so a
    /// mark_page_accessed meanwhile can still make it active (__lru_cache_activate_folio).
    Single { size: u8 },
}

impl LruAddRule {
    /// Pages per batch (PAGEVEC_SIZE); 1 without batches.
    pub fn size(self) -> usize {
        match self {
            LruAddRule::Direct => 1,
            LruAddRule::PerList { size } | LruAddRule::Single { size } => size as usize,
        }
    }
    /// Batches per CPU.
    fn nvec(self) -> usize {
        match self {
            LruAddRule::PerList { .. } => NR_LRU_LISTS,
            _ => 1,
        }
    }
}

/// The per-CPU LRU-add batches of the node.
#[derive(Clone, Debug)]
pub struct LruAddBatches {
    pub rule: LruAddRule,
    size: usize,
    nvec: usize,
    /// Pages of batch (cpu, vec) at [(cpu * nvec + vec) * size ..][.. nr].
    pages: Vec<Pfn>,
    /// The list each page joins when its batch drains.
    lists: Vec<Lru>,
    nr: Vec<u8>,
    /// Pages in all batches (pages added and not yet on a list, truncated ones included).
    pub total: u64,
    /// Batches moved to the LRU lists, and pages moved with them.
    pub drained_batches: u64,
    pub drained_pages: u64,
    /// The adds take lru_lock (false while the boot memory is laid out: nothing runs).
    pub locked: bool,
}

impl LruAddBatches {
    pub fn new(rule: LruAddRule, ncpus: u32) -> LruAddBatches {
        let n = ncpus.max(1) as usize;
        let (size, nvec) = (rule.size(), rule.nvec());
        LruAddBatches {
            rule,
            size,
            nvec,
            pages: vec![0; n * nvec * size],
            lists: vec![Lru::None; n * nvec * size],
            nr: vec![0; n * nvec],
            total: 0,
            drained_batches: 0,
            drained_pages: 0,
            locked: true,
        }
    }
    /// No batches and no lru_lock: the boot memory's pages before anything runs.
    pub fn unlocked() -> LruAddBatches {
        LruAddBatches { locked: false, ..LruAddBatches::new(LruAddRule::Direct, 1) }
    }
    /// Whether new pages wait in batches at all.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.rule != LruAddRule::Direct
    }
    pub fn ncpus(&self) -> usize {
        self.nr.len() / self.nvec
    }
    /// Batches per CPU.
    pub fn nvec(&self) -> usize {
        self.nvec
    }
    #[inline]
    fn vec_of(&self, l: Lru) -> usize {
        if self.nvec == 1 { 0 } else { l as usize - 1 }
    }
    /// Pages waiting in `cpu`'s batches.
    pub fn count(&self, cpu: usize) -> u64 {
        self.nr[cpu * self.nvec..(cpu + 1) * self.nvec].iter().map(|&n| n as u64).sum()
    }

    /// pagevec_add / folio_batch_add: `p` joins `cpu`'s batch for list `l`. Returns the
    /// batch to drain now when it is full (the add left no space), else None.
    #[inline]
    pub fn add(&mut self, cpu: usize, p: Pfn, l: Lru) -> Option<usize> {
        let v = cpu * self.nvec + self.vec_of(l);
        let n = self.nr[v] as usize;
        debug_assert!(n < self.size);
        self.pages[v * self.size + n] = p;
        self.lists[v * self.size + n] = l;
        self.nr[v] += 1;
        self.total += 1;
        (n + 1 == self.size).then_some(v)
    }

    /// The entries of batch `v` (cpu * nvec + list), emptied: the caller moves them.
    pub fn take(&mut self, v: usize, out: &mut Vec<(Pfn, Lru)>) {
        let n = std::mem::take(&mut self.nr[v]) as usize;
        let at = v * self.size;
        out.extend((at..at + n).map(|i| (self.pages[i], self.lists[i])));
        self.total -= n as u64;
        if n > 0 {
            self.drained_batches += 1;
            self.drained_pages += n as u64;
        }
    }

    /// The list `p` will join, if it is in one of `cpu`'s batches.
    pub fn pending_list(&self, cpu: usize, p: Pfn) -> Option<Lru> {
        self.find(cpu, p).map(|i| self.lists[i])
    }
    /// __lru_cache_activate_folio: a page in `cpu`'s batch will join the active list of
    /// its type. Searched from the newest entry (it was most likely just added). Returns
    /// whether it was found there.
    pub fn activate(&mut self, cpu: usize, p: Pfn) -> bool {
        match self.find(cpu, p) {
            Some(i) => {
                let l = self.lists[i];
                self.lists[i] = Lru::of(l.is_file(), true);
                true
            }
            None => false,
        }
    }
    fn find(&self, cpu: usize, p: Pfn) -> Option<usize> {
        for v in cpu * self.nvec..(cpu + 1) * self.nvec {
            let at = v * self.size;
            if let Some(i) = (at..at + self.nr[v] as usize).rev().find(|&i| self.pages[i] == p) {
                return Some(i);
            }
        }
        None
    }
}

impl Kernel {
    /// folio_add_lru / lru_cache_add: a page new to the LRU goes to list `l` through this
    /// CPU's batch; a full batch goes to the lists now (under lru_lock). 2.4 takes
    /// pagemap_lru_lock for the page itself.
    pub fn lru_cache_add(&mut self, p: Pfn, l: Lru) {
        if !self.mm.lru_add.enabled() {
            let id = self.mm.page_lruvec(p);
            self.mm.lruvecs[id as usize].add_head(&mut self.mm.pages, p, l);
            if self.mm.lru_add.locked {
                let hold = self.lru_lock_hold_per_page();
                self.lru_lock_spin(id, hold);
            }
            return;
        }
        let cpu = self.this_cpu();
        self.mm.pages.set_batched(p, cpu as u32);
        if let Some(v) = self.mm.lru_add.add(cpu, p, l) {
            self.lru_add_drain_vec(v);
        }
    }

    /// lru_add_drain: the current CPU's batches go to the LRU lists (shrink_inactive_list,
    /// shrink_active_list, exit_mmap, ...). Returns the lru_lock hold it took (the
    /// drainer's list work).
    pub fn lru_add_drain(&mut self) -> Ns {
        let cpu = self.this_cpu();
        self.lru_add_drain_cpu(cpu)
    }

    /// lru_add_drain_cpu.
    pub fn lru_add_drain_cpu(&mut self, cpu: usize) -> Ns {
        let nvec = self.mm.lru_add.nvec();
        if !self.mm.lru_add.enabled() || cpu >= self.mm.lru_add.ncpus() {
            return 0;
        }
        (cpu * nvec..(cpu + 1) * nvec).map(|v| self.lru_add_drain_vec(v)).sum()
    }

    /// lru_add_drain_all: every CPU's batches (the kernel queues the work on each CPU with
    /// pages and waits for it; the model moves them at once, the lock taken per batch).
    pub fn lru_add_drain_all(&mut self) {
        for cpu in 0..self.mm.lru_add.ncpus() {
            self.lru_add_drain_cpu(cpu);
        }
    }

    /// folio_batch_move_lru(lru_add_fn): the pages of one batch join their lists, lru_lock
    /// taken once for each run of pages of the same lock (folio_lruvec_relock_irqsave;
    /// one node lock before 5.11); a page truncated while it waited is freed with the
    /// batch's reference. Returns the hold taken.
    fn lru_add_drain_vec(&mut self, v: usize) -> Ns {
        let mut batch = std::mem::take(&mut self.reclaim.drain_buf);
        batch.clear();
        self.mm.lru_add.take(v, &mut batch);
        let per_page = self.lru_lock_hold_per_page();
        let mut held = 0;
        let mut i = 0;
        while i < batch.len() {
            let lock = self.lru_lock_index(self.mm.page_lruvec(batch[i].0));
            let mut j = i;
            while j < batch.len() && self.lru_lock_index(self.mm.page_lruvec(batch[j].0)) == lock {
                j += 1;
            }
            let hold = (j - i) as Ns * per_page;
            self.lru_lock_spin(self.mm.page_lruvec(batch[i].0), hold);
            held += hold;
            for &(p, l) in &batch[i..j] {
                self.mm.pages.set_links(p, super::page::NIL, super::page::NIL);
                if self.mm.pages.mapping(p) == 0 {
                    // Truncated while in the batch: the batch's reference was the last.
                    self.free_page(p);
                    continue;
                }
                let id: LruvecId = self.mm.page_lruvec(p);
                self.mm.lruvecs[id as usize].add_head(&mut self.mm.pages, p, l);
            }
            i = j;
        }
        self.reclaim.drain_buf = batch;
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_drains_when_full_at_the_eras_size() {
        for (rule, size) in [(LruAddRule::Single { size: 15 }, 15), (LruAddRule::PerList { size: 14 }, 14)] {
            let mut b = LruAddBatches::new(rule, 4);
            for p in 0..size as Pfn - 1 {
                assert_eq!(b.add(2, p, Lru::InactiveFile), None);
            }
            assert_eq!(b.count(2), size as u64 - 1);
            let v = b.add(2, 99, Lru::InactiveFile).expect("full");
            let mut out = Vec::new();
            b.take(v, &mut out);
            assert_eq!(out.len(), size);
            assert_eq!(out[0], (0, Lru::InactiveFile), "in the order they were added");
            assert_eq!(b.total, 0);
        }
    }

    #[test]
    fn two_point_six_has_one_pagevec_per_list_later_eras_one_batch() {
        let mut b = LruAddBatches::new(LruAddRule::PerList { size: 14 }, 1);
        b.add(0, 1, Lru::InactiveFile);
        b.add(0, 2, Lru::ActiveAnon);
        assert_eq!(b.count(0), 2);
        let mut out = Vec::new();
        b.take(Lru::InactiveFile as usize - 1, &mut out);
        assert_eq!(out, vec![(1, Lru::InactiveFile)], "each list's pagevec drains alone");
        let mut b = LruAddBatches::new(LruAddRule::Single { size: 15 }, 1);
        b.add(0, 1, Lru::InactiveFile);
        b.add(0, 2, Lru::InactiveAnon);
        let mut out = Vec::new();
        b.take(0, &mut out);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn activation_finds_the_page_only_in_its_own_cpus_batch() {
        let mut b = LruAddBatches::new(LruAddRule::Single { size: 15 }, 2);
        b.add(0, 7, Lru::InactiveFile);
        assert!(!b.activate(1, 7), "another CPU's batch is not searched");
        assert!(b.activate(0, 7));
        assert_eq!(b.pending_list(0, 7), Some(Lru::ActiveFile));
    }
}
