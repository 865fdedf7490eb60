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
use crate::profile::RotateReclaimable;
use crate::Kernel;
use memtwin_engine::Ns;
use memtwin_procfs::VmItem;

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
        let added: Ns = (cpu * nvec..(cpu + 1) * nvec).map(|v| self.lru_add_drain_vec(v)).sum();
        // Then the move batches: lru_rotate, lru_deactivate_file, lru_deactivate,
        // lru_lazyfree, activate (lru_add_drain_cpu; drain_cpu_pagevecs in 2.6.39).
        added + MOVE_DRAIN_ORDER.iter().map(|&k| self.lru_move_drain(cpu, k)).sum::<Ns>()
    }

    /// lru_add_drain_all: the drain runs as work on each CPU whose batches hold pages
    /// (queue_work_on(cpu, mm_percpu_wq, lru_add_drain_per_cpu) for the LRU-add and move
    /// batches; 2.6.39's schedule_on_each_cpu queues it on every CPU, and a CPU with
    /// nothing batched takes no lock), and the caller waits for all of it (flush_work).
    /// Each work item is its CPU's kworker, not the caller: its lru_lock acquisitions are
    /// made in kworker context (no task's time), and it is done when its last hold ends;
    /// the kworkers start at once (their scheduling delay on a busy CPU is not modelled).
    /// A task that calls it in its step sleeps, after the step's CPU work, until the last
    /// work item is done (`Task::wait_after`, `WaitOn::FlushWork`).
    pub fn lru_add_drain_all(&mut self) {
        let ncpus = self.mm.lru_add.ncpus();
        if !self.mm.lru_add.enabled() {
            return;
        }
        let caller = self.current.take();
        let mut until = self.now;
        for cpu in 0..ncpus {
            if self.mm.lru_add.count(cpu) == 0 && (cpu >= self.mm.lru_move.ncpus() || self.mm.lru_move.count_cpu(cpu) == 0) {
                continue;
            }
            let before: Vec<Ns> = self.reclaim.lru_locks.iter().map(|l| l.free_at).collect();
            self.lru_add_drain_cpu(cpu);
            // The work is done when the last lock hold it made ends.
            for (i, l) in self.reclaim.lru_locks.iter().enumerate() {
                if before.get(i).is_none_or(|&b| b != l.free_at) {
                    until = until.max(l.free_at);
                }
            }
            self.reclaim.drain_all_works += 1;
        }
        self.current = caller;
        if let Some(t) = caller {
            if until > self.now && !self.reclaim.in_path(t) {
                let w = crate::wait::Wait::flush_work(until);
                self.tasks[t as usize].wait_after = Some(w);
            }
        }
    }

    /// The end of the run of a batch's pages from `i` whose lruvecs share one lru_lock: a
    /// drain takes the lock once per such run (folio_batch_move_lru relocks only when the
    /// lruvec changes).
    fn lru_lock_run_end<T>(&self, batch: &[(Pfn, T)], i: usize) -> usize {
        let lock = self.lru_lock_index(self.mm.page_lruvec(batch[i].0));
        let mut j = i;
        while j < batch.len() && self.lru_lock_index(self.mm.page_lruvec(batch[j].0)) == lock {
            j += 1;
        }
        j
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
            let j = self.lru_lock_run_end(&batch, i);
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

/// The per-CPU batches that move pages already on an LRU list (mm/swap.c). A page queued
/// in one stays on its list until the batch drains; the move is decided then, from the
/// page's state at that time (PageLRU, PageActive, mapped), as the move functions do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum MoveKind {
    /// lru_rotate (lru_rotate_pvecs): folio_rotate_reclaimable at the end of writeback of a
    /// page reclaim wanted freed -> lru_move_tail_fn (pagevec_move_tail_fn), PGROTATED.
    Rotate = 0,
    /// lru_deactivate_file (lru_deactivate_pvecs in 2.6.39): deactivate_file_folio for a
    /// page invalidation could not drop (invalidate_mapping_pages: dirty, under writeback,
    /// mapped or held by another batch) -> lru_deactivate_file_fn.
    DeactivateFile = 1,
    /// lru_deactivate (5.4+, MADV_COLD): deactivate_page -> lru_deactivate_fn.
    Deactivate = 2,
    /// lru_lazyfree (4.5+, MADV_FREE): mark_page_lazyfree -> lru_lazyfree_fn. The batch
    /// exists per era and is drained in its place, but nothing queues pages in it: the
    /// model has no madvise, and a lazy-free page (anonymous, !PageSwapBacked, on the file
    /// list) is not modelled.
    Lazyfree = 3,
    /// activate (activate_page_pvecs, cpu_fbatches.activate): folio_activate from
    /// folio_mark_accessed -> folio_activate_fn (__activate_page), PGACTIVATE.
    Activate = 4,
}
/// Move batches per CPU.
pub const NR_MOVE_KINDS: usize = 5;
/// The kinds in the order lru_add_drain_cpu drains them (after the LRU-add batch).
pub const MOVE_DRAIN_ORDER: [MoveKind; NR_MOVE_KINDS] =
    [MoveKind::Rotate, MoveKind::DeactivateFile, MoveKind::Deactivate, MoveKind::Lazyfree, MoveKind::Activate];

/// Which move batches an era has, and their size (PAGEVEC_SIZE).
///
/// | era | size | batches | without a batch |
/// |---|---|---|---|
/// | 6.x | 15 | cpu_fbatches: lru_deactivate_file, lru_deactivate, lru_lazyfree, activate; lru_rotate | — |
/// | 5.x | 15 | lru_rotate_pvecs, lru_deactivate_file_pvecs, lru_deactivate_pvecs, lru_lazyfree_pvecs, activate_page_pvecs | — |
/// | 2.6.39 | 14 | lru_rotate_pvecs, lru_deactivate_pvecs (deactivate_page of invalidation) | activate_page: zone->lru_lock per page; no MADV_COLD / MADV_FREE |
/// | 2.4 | — | none | activate_page: pagemap_lru_lock per page; no PG_reclaim rotation, no deactivation of invalidated pages |
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LruMoveRule {
    /// Pages per batch; 0: no move batches at all.
    pub size: u8,
    /// Which kinds exist as batches, by `MoveKind as usize`.
    pub kinds: [bool; NR_MOVE_KINDS],
}

impl LruMoveRule {
    /// 2.4: no batches.
    pub const NONE: LruMoveRule = LruMoveRule { size: 0, kinds: [false; NR_MOVE_KINDS] };
    /// 2.6.39: lru_rotate_pvecs and lru_deactivate_pvecs of PAGEVEC_SIZE 14; activate_page
    /// takes zone->lru_lock for each page ("mm: batch activate_page() to reduce lock
    /// contention" came in 3.0).
    pub const V2_6_39: LruMoveRule = LruMoveRule { size: 14, kinds: [true, true, false, false, false] };
    /// 5.4 .. 6.x: every kind, 15 pages (PAGEVEC_SIZE, folio_batch).
    pub const V5: LruMoveRule = LruMoveRule { size: 15, kinds: [true; NR_MOVE_KINDS] };
    #[inline]
    pub fn has(self, kind: MoveKind) -> bool {
        self.size > 0 && self.kinds[kind as usize]
    }
}

/// The per-CPU move batches of the node. The kernel's batch holds a reference on each
/// page, so reclaim cannot free a queued page (`holds`: shrink_folio_list keeps it).
/// Truncation removes a page from its file whatever its references; the kernel frees it
/// when the batch drains, the model at once. Each entry keeps the page's mapping as it was
/// queued, so that a page truncated while queued is told apart at the drain and skipped.
#[derive(Clone, Debug)]
pub struct LruMoveBatches {
    pub rule: LruMoveRule,
    size: usize,
    pages: Vec<Pfn>,
    owners: Vec<u32>,
    nr: Vec<u8>,
    /// Pages queued in all move batches.
    pub total: u64,
    /// Batches drained and pages moved by them (a page the move function skipped counts
    /// as moved: the batch went through it), per kind.
    pub drained_batches: [u64; NR_MOVE_KINDS],
    pub drained_pages: [u64; NR_MOVE_KINDS],
    /// The references the batches hold (folio_get in folio_batch_add_and_move,
    /// page_cache_get before pagevec_add): entries per page queued.
    refs: BatchRefs,
}

/// Entries per page queued in the move batches: an open-addressed table sized for every
/// batch full at once (it never grows), linear probing, deletion by shifting back the
/// entries after the hole (no tombstones). A page is queued and dequeued once per
/// activation or rotation, so this sits on the per-page path.
#[derive(Clone, Debug)]
struct BatchRefs {
    keys: Vec<Pfn>,
    counts: Vec<u16>,
    shift: u32,
}

impl BatchRefs {
    const EMPTY: Pfn = Pfn::MAX;
    /// Room for `entries` queued entries (distinct pages) at most half full.
    fn new(entries: usize) -> BatchRefs {
        let cap = (entries.max(8) * 2).next_power_of_two();
        BatchRefs { keys: vec![Self::EMPTY; cap], counts: vec![0; cap], shift: 64 - cap.trailing_zeros() }
    }
    #[inline]
    fn home(&self, p: Pfn) -> usize {
        ((p as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }
    #[inline]
    fn find(&self, p: Pfn) -> Result<usize, usize> {
        let mask = self.keys.len() - 1;
        let mut i = self.home(p);
        loop {
            match self.keys[i] {
                k if k == p => return Ok(i),
                Self::EMPTY => return Err(i),
                _ => i = (i + 1) & mask,
            }
        }
    }
    #[inline]
    fn contains(&self, p: Pfn) -> bool {
        self.find(p).is_ok()
    }
    #[inline]
    fn add(&mut self, p: Pfn) {
        debug_assert!(p != Self::EMPTY);
        match self.find(p) {
            Ok(i) => self.counts[i] += 1,
            Err(i) => {
                self.keys[i] = p;
                self.counts[i] = 1;
            }
        }
    }
    /// One entry of `p` fewer (none queued: nothing).
    #[inline]
    fn put(&mut self, p: Pfn) {
        let Ok(mut hole) = self.find(p) else { return };
        self.counts[hole] -= 1;
        if self.counts[hole] > 0 {
            return;
        }
        // Backward-shift deletion: move up each later entry of the run whose home is not
        // between the hole and it (cyclically).
        let mask = self.keys.len() - 1;
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let k = self.keys[j];
            if k == Self::EMPTY {
                break;
            }
            let h = self.home(k);
            let stays = if hole <= j { hole < h && h <= j } else { hole < h || h <= j };
            if !stays {
                self.keys[hole] = k;
                self.counts[hole] = self.counts[j];
                hole = j;
            }
        }
        self.keys[hole] = Self::EMPTY;
        self.counts[hole] = 0;
    }
}

impl LruMoveBatches {
    pub fn new(rule: LruMoveRule, ncpus: u32) -> LruMoveBatches {
        let n = ncpus.max(1) as usize;
        let size = rule.size as usize;
        LruMoveBatches {
            rule,
            size,
            pages: vec![0; n * NR_MOVE_KINDS * size],
            owners: vec![0; n * NR_MOVE_KINDS * size],
            nr: vec![0; n * NR_MOVE_KINDS],
            total: 0,
            drained_batches: [0; NR_MOVE_KINDS],
            drained_pages: [0; NR_MOVE_KINDS],
            refs: BatchRefs::new(n * NR_MOVE_KINDS * size),
        }
    }
    /// Whether a move batch holds a reference on `p`: the page cannot be freed until the
    /// batch drains.
    #[inline]
    pub fn holds(&self, p: Pfn) -> bool {
        self.total > 0 && self.refs.contains(p)
    }
    pub fn ncpus(&self) -> usize {
        self.nr.len() / NR_MOVE_KINDS
    }
    /// Pages waiting in `cpu`'s batch of `kind`.
    pub fn count(&self, cpu: usize, kind: MoveKind) -> usize {
        self.nr.get(cpu * NR_MOVE_KINDS + kind as usize).map_or(0, |&n| n as usize)
    }
    /// Pages waiting in all of `cpu`'s move batches.
    pub fn count_cpu(&self, cpu: usize) -> usize {
        MOVE_DRAIN_ORDER.iter().map(|&k| self.count(cpu, k)).sum()
    }
    /// folio_batch_add / pagevec_add: `p` (of `mapping`) joins `cpu`'s batch of `kind`.
    /// Returns true when the add filled it: the caller moves it now.
    #[inline]
    pub fn add(&mut self, cpu: usize, kind: MoveKind, p: Pfn, mapping: u32) -> bool {
        debug_assert!(self.rule.has(kind), "{kind:?} is not a batch of this era");
        let v = cpu * NR_MOVE_KINDS + kind as usize;
        let n = self.nr[v] as usize;
        self.pages[v * self.size + n] = p;
        self.owners[v * self.size + n] = mapping;
        self.nr[v] += 1;
        self.total += 1;
        self.refs.add(p);
        n + 1 == self.size
    }
    /// The entries of `cpu`'s batch of `kind`, emptied: the caller moves them.
    pub fn take(&mut self, cpu: usize, kind: MoveKind, out: &mut Vec<(Pfn, u32)>) {
        let v = cpu * NR_MOVE_KINDS + kind as usize;
        let n = std::mem::take(&mut self.nr[v]) as usize;
        let at = v * self.size;
        out.extend((at..at + n).map(|i| (self.pages[i], self.owners[i])));
        for &p in &self.pages[at..at + n] {
            // folio_batch_move_lru's folios_put: the batch's references go.
            self.refs.put(p);
        }
        self.total -= n as u64;
        if n > 0 {
            self.drained_batches[kind as usize] += 1;
            self.drained_pages[kind as usize] += n as u64;
        }
    }
}

/// Whether a page with list state `l` is on an LRU list (PageLRU): not free, not isolated
/// by reclaim, not waiting in an LRU-add batch.
#[inline]
fn on_lru(l: Lru) -> bool {
    !matches!(l, Lru::None | Lru::Free | Lru::Isolated)
}

impl Kernel {
    /// Queue `p` in this CPU's move batch of `kind` (folio_batch_add_and_move,
    /// pagevec_add + pagevec_lru_move_fn): a full batch moves now.
    fn lru_move_add(&mut self, kind: MoveKind, p: Pfn) {
        let cpu = self.this_cpu().min(self.mm.lru_move.ncpus() - 1);
        let m = self.mm.pages.mapping(p);
        if self.mm.lru_move.add(cpu, kind, p, m) {
            self.lru_move_drain(cpu, kind);
        }
    }

    /// folio_batch_move_lru / pagevec_lru_move_fn: the move function runs on each page of
    /// `cpu`'s batch of `kind` under lru_lock, taken once for each run of pages of the same
    /// lock (folio_lruvec_relock_irqsave; the node's lock before 5.11, 2.6.39's zone
    /// lock). The hold is the list work per page of the cost model. Returns the hold.
    pub fn lru_move_drain(&mut self, cpu: usize, kind: MoveKind) -> Ns {
        if cpu >= self.mm.lru_move.ncpus() || self.mm.lru_move.count(cpu, kind) == 0 {
            return 0;
        }
        let mut batch = std::mem::take(&mut self.reclaim.move_buf);
        batch.clear();
        self.mm.lru_move.take(cpu, kind, &mut batch);
        let per_page = self.lru_lock_hold_per_page();
        let mut held = 0;
        let mut rotated = 0;
        let mut i = 0;
        while i < batch.len() {
            let j = self.lru_lock_run_end(&batch, i);
            let hold = (j - i) as Ns * per_page;
            self.lru_lock_spin(self.mm.page_lruvec(batch[i].0), hold);
            held += hold;
            for &(p, m) in &batch[i..j] {
                // The batch's reference kept the page; here a page freed meanwhile is no
                // longer of its mapping (and off every list).
                if m == 0 || self.mm.pages.mapping(p) != m || !on_lru(self.mm.pages.lru(p)) {
                    continue;
                }
                rotated += self.lru_move_fn(kind, p) as u64;
            }
            i = j;
        }
        if kind == MoveKind::Rotate {
            // pagevec_move_tail: __count_vm_events(PGROTATED, pgmoved) (lru_move_tail_fn
            // counts each folio since 5.x; the same sum).
            self.vm.add(VmItem::Pgrotated, rotated);
        }
        self.reclaim.move_buf = batch;
        held
    }

    /// The move function of `kind` for listed page `p` under lru_lock. Returns whether a
    /// rotation moved it (pgmoved of pagevec_move_tail).
    fn lru_move_fn(&mut self, kind: MoveKind, p: Pfn) -> bool {
        let l = self.mm.pages.lru(p);
        let evictable = l != Lru::Unevictable;
        match kind {
            MoveKind::Rotate => {
                // lru_move_tail_fn (3.10+): any evictable page, deactivated to the inactive
                // tail; pagevec_move_tail_fn in 2.6.39: inactive pages only.
                if !evictable || (l.is_active() && self.profile.rotate_reclaimable == RotateReclaimable::InactiveOnly) {
                    return false;
                }
                self.mm.lru_move_tail(p, Lru::of(l.is_file(), false));
                true
            }
            MoveKind::DeactivateFile => {
                // lru_deactivate_file_fn (lru_deactivate_fn in 2.6.39): not for pages some
                // process maps; to the inactive list, its tail if clean (PGROTATED), else its
                // head with PG_reclaim so that the end of writeback rotates it.
                let m = self.mm.pages.mapping(p);
                if !evictable || self.mm.mappings[m as usize].mapped {
                    return false;
                }
                let active = l.is_active();
                let inactive = Lru::of(l.is_file(), false);
                self.mm.pages.clear_referenced(p);
                if self.mm.pages.writeback(p) || self.mm.pages.dirty(p) {
                    self.mm.lru_move_head(p, inactive);
                    self.mm.pages.set_reclaim(p);
                } else {
                    self.mm.lru_move_tail(p, inactive);
                    self.vm.inc(VmItem::Pgrotated);
                }
                if active {
                    self.vm.inc(VmItem::Pgdeactivate);
                    self.memcg_lru_move_event(p, MoveKind::Deactivate);
                }
                self.update_page_reclaim_stat(p, l.is_file(), false);
                false
            }
            MoveKind::Deactivate => {
                // lru_deactivate_fn (5.4+): an active page to the head of its inactive list.
                if !evictable || !l.is_active() {
                    return false;
                }
                self.mm.pages.clear_referenced(p);
                self.mm.lru_move_head(p, Lru::of(l.is_file(), false));
                self.vm.inc(VmItem::Pgdeactivate);
                self.memcg_lru_move_event(p, MoveKind::Deactivate);
                self.update_page_reclaim_stat(p, l.is_file(), false);
                false
            }
            // No page is ever queued here (see `MoveKind::Lazyfree`).
            MoveKind::Lazyfree => false,
            MoveKind::Activate => {
                self.activate_listed_page(p);
                false
            }
        }
    }

    /// __activate_page / folio_activate_fn: an inactive listed page to the head of its
    /// active list, PGACTIVATE (and the cgroup's, 6.x), a rotation in the pre-5.8 balance.
    fn activate_listed_page(&mut self, p: Pfn) {
        let l = self.mm.pages.lru(p);
        if !matches!(l, Lru::InactiveFile | Lru::InactiveAnon) {
            return;
        }
        self.mm.lru_move_head(p, Lru::of(l.is_file(), true));
        self.vm.inc(VmItem::Pgactivate);
        self.memcg_lru_move_event(p, MoveKind::Activate);
        self.update_page_reclaim_stat(p, l.is_file(), true);
    }

    /// update_page_reclaim_stat (before 5.8's cost balance): a page moved by a batch counts
    /// as scanned, and as rotated when it was activated.
    fn update_page_reclaim_stat(&mut self, p: Pfn, file: bool, rotated: bool) {
        if self.profile.cost_balance {
            return;
        }
        let id = self.mm.page_lruvec(p);
        let lv = self.mm.lruvec_mut(id);
        lv.recent_scanned[file as usize] += 1;
        lv.recent_rotated[file as usize] += rotated as u64;
    }

    /// The cgroup's own PGACTIVATE / PGDEACTIVATE of a batch move (__count_memcg_events in
    /// folio_activate_fn, lru_deactivate_file_fn and lru_deactivate_fn, 6.x; the 5.x move
    /// functions count node-wide only).
    fn memcg_lru_move_event(&mut self, p: Pfn, kind: MoveKind) {
        if self.profile.kernel != memtwin_machine::KernelProfile::Linux6 {
            return;
        }
        let memcg = self.memcg.lruvec_memcg(self.mm.page_lruvec(p));
        if memcg == super::memcontrol::ROOT_MEMCG {
            return;
        }
        let v = &mut self.memcg.cgs[memcg as usize].vm;
        match kind {
            MoveKind::Activate => v.pgactivate += 1,
            _ => v.pgdeactivate += 1,
        }
    }

    /// folio_activate / activate_page for a listed inactive page (folio_mark_accessed):
    /// queued in this CPU's activate batch (3.0+), moved when it drains; 2.6.39 and 2.4
    /// move it now under lru_lock (zone->lru_lock, pagemap_lru_lock) for this page alone.
    pub(crate) fn activate_page(&mut self, p: Pfn) {
        if self.mm.lru_move.rule.has(MoveKind::Activate) {
            self.lru_move_add(MoveKind::Activate, p);
            return;
        }
        if self.mm.lru_add.locked {
            let hold = self.lru_lock_hold_per_page();
            self.lru_lock_spin(self.mm.page_lruvec(p), hold);
        }
        self.activate_listed_page(p);
    }

    /// deactivate_file_folio (deactivate_file_page; deactivate_page in 2.6.39): a file page
    /// that invalidation could not drop is queued to be deactivated (a hint that it is no
    /// longer of interest). 2.4 has no such hint.
    pub(crate) fn deactivate_file_page(&mut self, p: Pfn) {
        if !self.mm.lru_move.rule.has(MoveKind::DeactivateFile) || self.mm.pages.lru(p) == Lru::Unevictable {
            return;
        }
        self.lru_move_add(MoveKind::DeactivateFile, p);
    }

    /// deactivate_page (MADV_COLD, 5.4+): an active listed page is queued to go to the head
    /// of its inactive list. No-op in eras without it.
    pub fn deactivate_page(&mut self, p: Pfn) {
        let l = self.mm.pages.lru(p);
        if !self.mm.lru_move.rule.has(MoveKind::Deactivate) || !on_lru(l) || !l.is_active() {
            return;
        }
        self.lru_move_add(MoveKind::Deactivate, p);
    }

    /// folio_rotate_reclaimable (rotate_reclaimable_page): a page reclaim wanted freed whose
    /// writeback ended, if clean, unlocked and on an evictable list (inactive before 3.10),
    /// is queued in this CPU's rotate batch; the batch moves it to the inactive tail.
    pub(crate) fn rotate_reclaimable_page(&mut self, p: Pfn) {
        let pg = &self.mm.pages;
        let l = pg.lru(p);
        if pg.locked(p) || pg.dirty(p) || !Lru::EVICTABLE.contains(&l) || !self.mm.lru_move.rule.has(MoveKind::Rotate) {
            return;
        }
        if l.is_active() && self.profile.rotate_reclaimable == RotateReclaimable::InactiveOnly {
            return;
        }
        self.lru_move_add(MoveKind::Rotate, p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The move batches' reference table counts as a map from page to entries does,
        /// through adds and puts of pages that collide (a 16-slot table, keys from a few
        /// dozen) and wrap around its end.
        #[test]
        fn batch_refs_count_as_a_map_does(ops in proptest::collection::vec((any::<bool>(), 0u32..40), 0..400)) {
            let mut t = BatchRefs::new(8);
            let mut want = std::collections::HashMap::<Pfn, u16>::new();
            for (add, p) in ops {
                let p = p * 16 + (p % 3);
                if add && want.len() < 8 {
                    t.add(p);
                    *want.entry(p).or_insert(0) += 1;
                } else if !add {
                    t.put(p);
                    if let Some(c) = want.get_mut(&p) {
                        *c -= 1;
                        if *c == 0 {
                            want.remove(&p);
                        }
                    }
                }
                for q in 0..40u32 {
                    let q = q * 16 + (q % 3);
                    prop_assert_eq!(t.contains(q), want.contains_key(&q), "page {}", q);
                }
            }
        }
    }

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
