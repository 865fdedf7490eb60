//! Anonymous memory of processes (mm/memory.c do_anonymous_page, mm/mmap.c).

use super::page::Lru;
use super::MappingKind;
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::TaskId;
use memtwin_procfs::VmItem;

impl Kernel {
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
        for i in 0..anon {
            let Some(p) = self.mm.take_free() else { return };
            self.filemap_add_page(m, i, p, false);
            self.mm.lru_move_head(p, anon_lru);
            self.mm.pages.set_dirty(p);
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
        for i in 0..file {
            let Some(p) = self.mm.take_free() else { return };
            self.filemap_add_page(lib, i, p, false);
            self.mm.lru_move_head(p, Lru::ActiveFile);
        }
        self.tasks[init as usize].rss_file = file;
        self.system_libs = Some(lib);
    }
}
