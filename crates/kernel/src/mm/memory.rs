//! Anonymous memory of processes (mm/memory.c do_anonymous_page, mm/mmap.c).

use super::page::{Lru, Pfn};
use super::memcontrol::{MemcgId, ROOT_MEMCG};
use super::{KernelOwner, MappingKind};
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::TaskId;
use memtwin_procfs::VmItem;

/// Page frames a region of the page-table tree maps, as page indices: a PTE page maps 2 MiB
/// (512 pages), a PMD page 1 GiB, a PUD page 512 GiB (x86-64, 4 KiB pages, 4 levels).
const PTE_SPAN_SHIFT: u32 = 9;
const PMD_SPAN_SHIFT: u32 = 18;
const PUD_SPAN_SHIFT: u32 = 27;

/// The page-table pages below a process's PGD that map its anonymous memory: one bit per
/// region that has its table (PTE, PMD, PUD level) and the frames they hold
/// (KernelOwner::PageTables: /proc/meminfo PageTables, nr_page_table_pages). Tables stay
/// until the memory is unmapped (free_pgtables at exit), swapped-out pages keeping theirs
/// (the swap entry is in the PTE). Not included: the PGD and the tables of a process's
/// text, libraries, stack and file mappings (the idle system's are counted at boot).
/// The levels below the PGD, from the top: each one's shift, as page indices.
const LEVEL_SHIFTS: [u32; 3] = [PUD_SPAN_SHIFT, PMD_SPAN_SHIFT, PTE_SPAN_SHIFT];

#[derive(Clone, Debug, Default)]
pub struct PgTables {
    /// Per level (PUD, PMD, PTE): one bit per region that has its table.
    levels: [Vec<u64>; 3],
    /// The frames, each with the memory cgroup it is charged to (ROOT_MEMCG: none).
    pages: Vec<(Pfn, MemcgId)>,
}

impl PgTables {
    fn has(&self, level: usize, index: u64) -> bool {
        let i = index >> LEVEL_SHIFTS[level];
        self.levels[level].get((i / 64) as usize).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    fn set(&mut self, level: usize, index: u64) {
        let i = index >> LEVEL_SHIFTS[level];
        let v = &mut self.levels[level];
        let w = (i / 64) as usize;
        if v.len() <= w {
            v.resize(w + 1, 0);
        }
        v[w] |= 1 << (i % 64);
    }
    /// Page-table pages held, of every level.
    pub fn nr_pages(&self) -> u64 {
        self.pages.len() as u64
    }
    /// A table page that maps none of the anonymous memory the model indexes (the
    /// process image's text, libraries and stack: `exec::exec_image`).
    pub(crate) fn add_other(&mut self, p: Pfn, memcg: MemcgId) {
        self.pages.push((p, memcg));
    }
    /// Tables a fault at page `index` must allocate first (0 to 3).
    fn missing(&self, index: u64) -> u64 {
        (0..LEVEL_SHIFTS.len()).filter(|&l| !self.has(l, index)).count() as u64
    }
}

impl Kernel {
    /// __pud_alloc, __pmd_alloc, __pte_alloc (handle_mm_fault -> __handle_mm_fault): before
    /// the first fault in a region of the task's anonymous memory with no table yet, the
    /// page-table pages that will map it come from the page allocator (GFP_PGTABLE_USER:
    /// they may wait for reclaim like the page itself). `Err`: the task waits and retries.
    pub(crate) fn pte_alloc(&mut self, tid: TaskId, index: u64) -> Result<(), Step> {
        let n = self.tasks[tid as usize].pgtables.missing(index);
        if n == 0 {
            return Ok(());
        }
        // GFP_PGTABLE_USER is __GFP_ACCOUNT (4.6+; 2.6.39 has no kmem accounting): the
        // charge comes first (__memcg_kmem_charge_page in __alloc_pages), then the pages.
        let memcg = if self.profile.pgtables_accounted { self.task_memcg(tid) } else { ROOT_MEMCG };
        if memcg != ROOT_MEMCG {
            self.memcg_charge_kernel_pages(tid, memcg, n, KernelOwner::PageTables)?;
        }
        if let Err(step) = self.alloc_pages_gate(tid, n) {
            self.memcg_uncharge_kernel_pages(memcg, n, KernelOwner::PageTables);
            return Err(step);
        }
        for level in 0..LEVEL_SHIFTS.len() {
            if self.tasks[tid as usize].pgtables.has(level, index) {
                continue;
            }
            let Some(p) = self.alloc_kernel_page(KernelOwner::PageTables) else {
                let left = self.tasks[tid as usize].pgtables.missing(index);
                self.memcg_uncharge_kernel_pages(memcg, left, KernelOwner::PageTables);
                return Err(Step::Yield);
            };
            self.vm.inc(VmItem::PgallocNormal);
            let t = &mut self.tasks[tid as usize].pgtables;
            t.pages.push((p, memcg));
            t.set(level, index);
        }
        Ok(())
    }

    /// free_pgtables: the task's page-table pages go with its anonymous memory.
    pub(crate) fn free_pgtables(&mut self, tid: TaskId) {
        let t = std::mem::take(&mut self.tasks[tid as usize].pgtables);
        for &(p, memcg) in &t.pages {
            self.free_kernel_page(p);
            self.memcg_uncharge_kernel_pages(memcg, 1, KernelOwner::PageTables);
        }
        self.vm.add(VmItem::Pgfree, t.pages.len() as u64);
    }

    /// The task's anonymous address space, created on first use.
    pub fn anon_mapping(&mut self, tid: TaskId) -> u32 {
        if let Some(m) = self.tasks[tid as usize].anon_mapping {
            return m;
        }
        let m = self.mm.new_mapping(MappingKind::Anon, None, 0);
        self.mm.mappings[m as usize].owner = Some(tid);
        self.mm.set_mapped(m, true);
        self.tasks[tid as usize].anon_mapping = Some(m);
        m
    }

    /// do_anonymous_page for `n` pages from virtual page `vpage`: allocate, zero and map
    /// them. New anon pages go to the inactive list on 6.x (lru_cache_add_inactive_or
    /// _unevictable since 5.9), to the active list before. Returns pages faulted in; `Err`
    /// if the allocator made the task wait first.
    pub fn fault_anon_pages(&mut self, tid: TaskId, vpage: u64, n: u64) -> Result<u64, (u64, Step)> {
        let m = self.anon_mapping(tid);
        let active = !self.profile.new_anon_inactive;
        // The trap and PTE install, clear_page and the LRU insertion (mm/cost.rs).
        let fault_ns = super::cost::anon_fault_ns(&self.machine.cpu_model);
        let mut done = 0;
        for i in 0..n {
            let idx = vpage + i;
            if self.mm.page(m, idx).is_some() {
                done += 1;
                continue;
            }
            if let Err(s) = self.pte_alloc(tid, idx) {
                return Err((done, s));
            }
            let p = match self.page_cache_alloc(tid) {
                Ok(p) => p,
                Err(s) => return Err((done, s)),
            };
            self.filemap_add_page_lru(m, idx, p, false, active);
            self.mm.pages.set_young(p);
            self.mm.pages.set_dirty(p);
            self.vm.inc(VmItem::Pgfault);
            self.memcg_count_fault(tid, false);
            self.tasks[tid as usize].min_flt += 1;
            self.charge_sys(tid, fault_ns);
            done += 1;
        }
        Ok(done)
    }

    /// The idle system at boot: its processes' anonymous memory and the files they map
    /// (binaries and libraries, executable, on the active list).
    ///
    /// The anonymous pages lie where their faults put them, as no reclaim has run since
    /// boot: the active list before 5.9 (lru_cache_add_active_or_unevictable), the
    /// inactive list since (do_anonymous_page -> folio_add_lru_vma ->
    /// lru_cache_add_inactive_or_unevictable); only reclaim's second reference
    /// (folio_check_references) or a workingset refault activates an anonymous page.
    pub(crate) fn boot_populate(&mut self, init: TaskId, anon: u64, file: u64) {
        let m = self.anon_mapping(init);
        let anon_lru = if self.profile.new_anon_inactive { Lru::InactiveAnon } else { Lru::ActiveAnon };
        // The frames come as take_free would hand them out one by one, a buddy block at a
        // time.
        let mut i = 0;
        while i < anon {
            let Some((p0, n)) = self.mm.take_free_run(anon - i) else { return };
            for p in p0..p0 + n as Pfn {
                self.filemap_add_page(m, i, p, false);
                self.mm.lru_move_head(p, anon_lru);
                self.mm.pages.set_dirty(p);
                i += 1;
            }
        }
        self.tasks[init as usize].vm_kb = anon * 4 * 3;
        // The idle system's private writable mappings: what it has touched and a reserve of
        // heap and stacks not yet touched (three eighths as much; the commit charge of a
        // small server's daemons runs about 1.4x their anonymous memory).
        self.tasks[init as usize].committed = anon + anon * 3 / 8;
        if file == 0 {
            return;
        }
        let lib = self.mm.new_mapping(MappingKind::File, self.fs.mounts.first().and_then(|mp| mp.dev), 1 << 30);
        self.mm.set_mapped(lib, true);
        self.mm.mappings[lib as usize].exec = true;
        // A page read through buffer heads (2.4) allocates them, and with them slab pages,
        // between two takes: one frame at a time there.
        let per_run = !self.readpage_buffers(lib);
        let mut i = 0;
        while i < file {
            let Some((p0, n)) = self.mm.take_free_run(if per_run { file - i } else { 1 }) else { return };
            for p in p0..p0 + n as Pfn {
                self.filemap_add_page(lib, i, p, false);
                self.mm.lru_move_head(p, Lru::ActiveFile);
                i += 1;
            }
        }
        self.tasks[init as usize].rss_file = file;
        self.system_libs = Some(lib);
    }
}
