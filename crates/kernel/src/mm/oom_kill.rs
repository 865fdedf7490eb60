//! The OOM killer (mm/oom_kill.c): pick the task with the largest badness and kill it.

use crate::Kernel;
use memtwin_engine::TaskId;
use memtwin_procfs::VmItem;

impl Kernel {
    /// oom_badness: resident pages + swap entries + page-table pages, adjusted by
    /// oom_score_adj in thousandths of memory.
    /// (anon rss, file rss, shmem rss, swap entries) of a task, in pages.
    pub fn task_mem(&self, tid: TaskId) -> (u64, u64, u64, u64) {
        let t = &self.tasks[tid as usize];
        let (mut file, mut shmem, mut swap) = (t.rss_file, 0, 0);
        for &m in &t.vmas {
            let s = &self.mm.mappings[m as usize];
            if !s.live {
                continue;
            }
            if s.kind == crate::mm::MappingKind::Shmem {
                shmem += s.nrpages;
                swap += s.nr_swapped;
            } else {
                file += s.nrpages;
            }
        }
        let anon = t.anon_mapping.map_or(0, |m| self.mm.mappings[m as usize].nrpages);
        swap += t.anon_mapping.map_or(0, |m| self.mm.mappings[m as usize].nr_swapped);
        (anon, file, shmem, swap)
    }

    pub fn oom_badness(&self, tid: TaskId) -> Option<i64> {
        let t = &self.tasks[tid as usize];
        if t.kthread || t.exit_code.is_some() || t.oom_score_adj == -1000 || t.pid == 1 || t.killed {
            return None;
        }
        let (anon, file, shmem, swap) = self.task_mem(tid);
        let rss = anon + file + shmem;
        let pt = (rss + swap) / 512;
        let points = (rss + swap + pt) as i64;
        let adj = t.oom_score_adj as i64 * (self.mm.managed as i64) / 1000;
        Some(points + adj)
    }

    /// out_of_memory: kill the worst task; prints what the kernel logs.
    pub fn out_of_memory(&mut self, trigger: TaskId) {
        // vm.oom_kill_allocating_task: the task whose allocation failed is killed, if it
        // may be (out_of_memory: current->mm, not unkillable, oom_score_adj not -1000).
        let t = &self.tasks[trigger as usize];
        let allocating = self.sysctl.oom_kill_allocating_task != 0
            && !t.kthread
            && t.pid != 1
            && t.exit_code.is_none()
            && !t.killed
            && t.oom_score_adj != -1000;
        let (victim, message) = if allocating {
            (Some(trigger), "Out of memory (oom_kill_allocating_task)")
        } else {
            // oom_evaluate_task (select_bad_process's TIF_MEMDIE check before 4.x): a
            // victim still exiting aborts the selection; the allocation is retried.
            if self
                .tasks
                .iter()
                .any(|t| t.oom_victim && t.exit_code.is_none())
            {
                return;
            }
            let v = (0..self.tasks.len() as TaskId)
                .filter_map(|t| self.oom_badness(t).map(|b| (b, t)))
                .max_by_key(|&(b, t)| (b, std::cmp::Reverse(self.tasks[t as usize].pid)))
                .map(|(_, t)| t);
            (v, "Out of memory")
        };
        let Some(v) = victim else { return };
        let era = self.machine.kernel;
        let is_24 = era == memtwin_machine::KernelProfile::Linux24;
        let is_2639 = era == memtwin_machine::KernelProfile::Linux2639;
        if !is_24 {
            self.oom_dump_header(trigger, is_2639);
        }
        let (anon, file, shmem, swap) = self.task_mem(v);
        let t = &self.tasks[v as usize];
        let (pid, comm, vm_kb, adj) = (t.pid, t.comm.clone(), t.vm_kb, t.oom_score_adj);
        let pgtables_kb = (anon + file + shmem + swap) / 512 * 4 + 4;
        let msg = if is_24 {
            // 2.4 mm/oom_kill.c oom_kill_task: "Out of Memory: Killed process %d (%s).\n"
            format!("Out of Memory: Killed process {} ({}).\n", pid, comm)
        } else if is_2639 {
            // 2.6.39 oom_kill_task: the kill line has no shmem-rss, UID or pgtables yet.
            format!("Killed process {} ({}) total-vm:{}kB, anon-rss:{}kB, file-rss:{}kB\n", pid, comm, vm_kb, anon * 4, (file + shmem) * 4)
        } else {
            format!(
                "{}: Killed process {} ({}) total-vm:{}kB, anon-rss:{}kB, file-rss:{}kB, shmem-rss:{}kB, UID:0 pgtables:{}kB oom_score_adj:{}\n",
                message, pid, comm, vm_kb, anon * 4, file * 4, shmem * 4, pgtables_kb, adj
            )
        };
        if is_2639 {
            // 2.6.39 oom_kill_process: "%s: Kill process %d (%s) score %d or sacrifice child"
            // (points in thousandths of RAM + swap, oom_badness of that era).
            let total = self.mm.managed + self.swap_totals().0;
            let points = self.oom_badness(v).unwrap_or(0).max(0) as u64 * 1000 / total.max(1);
            let line = format!("{message}: Kill process {} ({}) score {} or sacrifice child", pid, comm, points.max(1));
            self.printk(crate::printk::KERN_ERR, &line);
        } else if !is_24 {
            // oom_kill_process -> dump_oom_summary (5.0+): one machine-readable line.
            let line = format!(
                "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/,task={},pid={},uid=0",
                comm, pid
            );
            self.printk(crate::printk::KERN_INFO, &line);
        }
        // The console (the scenario's terminal) shows pr_err messages at the default quiet
        // console_loglevel (4); the report's warning and info lines reach only the log.
        // 2.4 printk had no time stamps (CONFIG_PRINTK_TIME is 2.6.11+).
        let line = if is_24 { msg.clone() } else { format!("[{:>12.6}] {msg}", self.now as f64 / 1e9) };
        self.transcript.push_str(&line);
        self.printk(crate::printk::KERN_ERR, &msg);
        self.vm.inc(VmItem::OomKill);
        self.tasks[v as usize].oom_victim = true;
        self.oom_reap(v);
        self.kill(v, 137);
    }

    /// wake_oom_reaper (4.6 .. 5.18): the oom_reaper thread is woken at once and unmaps the
    /// victim's private anonymous memory while the victim is still on its way out
    /// (__oom_reap_task_mm skips shared mappings: shmem stays until the victim's own
    /// exit_mmap drops it), and logs it. Since 5.19 the reaper waits OOM_REAPER_DELAY (2 s)
    /// for the victim to exit by itself, which the model's victims do (their teardown is
    /// exit_mmap_ns); a victim slower than that is not reaped early (not modelled). Before
    /// 4.6 there is no reaper. The reaper's own CPU time is not charged.
    pub(crate) fn oom_reap(&mut self, v: TaskId) {
        use memtwin_machine::KernelProfile::{Linux58, Linux5Pre59};
        if !matches!(self.machine.kernel, Linux58 | Linux5Pre59) {
            return;
        }
        self.release_anon_mapping(v);
        // What is left mapped: the shared anonymous memory (file mappings that are not
        // VM_SHARED are unmapped too; the model keeps no per-task file rss to clear).
        let shmem = self.task_mem(v).2;
        let t = &self.tasks[v as usize];
        let line = format!("oom_reaper: reaped process {} ({}), now anon-rss:0kB, file-rss:0kB, shmem-rss:{}kB", t.pid, t.comm, shmem * 4);
        self.printk(crate::printk::KERN_INFO, &line);
    }

    /// dump_header (mm/oom_kill.c): who invoked the OOM killer, show_mem's Mem-Info and
    /// dump_tasks' table, logged (not shown on the console at the quiet loglevel).
    fn oom_dump_header(&mut self, trigger: TaskId, old: bool) {
        use crate::printk::KERN_WARNING;
        let t = &self.tasks[trigger as usize];
        let (comm, adj) = (t.comm.clone(), t.oom_score_adj);
        if old {
            // 2.6.39: GFP_HIGHUSER_MOVABLE = 0x200da; oom_adj still printed beside oom_score_adj.
            self.printk(KERN_WARNING, &format!("{comm} invoked oom-killer: gfp_mask=0x200da, order=0, oom_adj=0, oom_score_adj={adj}"));
        } else {
            // 5.x/6.1: GFP_HIGHUSER_MOVABLE = 0x100cca, printed with its flag names (%pGg).
            self.printk(KERN_WARNING, &format!("{comm} invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj={adj}"));
        }
        self.oom_show_mem(old);
        self.oom_dump_tasks(old, None);
    }

    /// show_mem's report, logged.
    pub(crate) fn oom_show_mem(&mut self, old: bool) {
        let report = self.show_mem_report(old);
        for (level, text) in report {
            self.log.push(self.now, level, &text);
        }
    }

    /// dump_tasks: every user process with an mm (kernel threads have none); with `memcg`,
    /// only the tasks of that cgroup's subtree (oom_unkillable_task's memcg filter).
    pub(crate) fn oom_dump_tasks(
        &mut self,
        old: bool,
        memcg: Option<crate::mm::memcontrol::MemcgId>,
    ) {
        use crate::printk::KERN_INFO;
        let mut rows: Vec<(u32, String)> = Vec::new();
        for (i, t) in self.tasks.iter().enumerate() {
            if t.kthread || t.exit_code.is_some() {
                continue;
            }
            if memcg.is_some_and(|m| !self.memcg.is_descendant(t.memcg, m)) {
                continue;
            }
            let (anon, file, shmem, swap) = self.task_mem(i as TaskId);
            let rss = anon + file + shmem;
            let row = if old {
                // 2.6.39: "[%5d] %5d %5d %8lu %8lu %3u     %3d         %5d %s"
                format!("[{:>5}] {:>5} {:>5} {:>8} {:>8} {:>3}     {:>3}         {:>5} {}", t.pid, 0, t.pid, t.vm_kb / 4, rss, 0, 0, t.oom_score_adj, t.comm)
            } else {
                // 4.19+: "[%7d] %5d %5d %8lu %8lu %8ld %8lu         %5hd %s"
                let pt_bytes = ((rss + swap) / 512 + 1) * 4096;
                format!("[{:>7}] {:>5} {:>5} {:>8} {:>8} {:>8} {:>8}         {:>5} {}", t.pid, 0, t.pid, t.vm_kb / 4, rss, pt_bytes, swap, t.oom_score_adj, t.comm)
            };
            rows.push((t.pid, row));
        }
        rows.sort_by_key(|r| r.0);
        if old {
            self.printk(KERN_INFO, "[ pid ]   uid  tgid total_vm      rss cpu oom_adj oom_score_adj name");
        } else {
            self.printk(KERN_INFO, "Tasks state (memory values in pages):");
            self.printk(KERN_INFO, "[  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name");
        }
        for (_, r) in rows {
            self.printk(KERN_INFO, &r);
        }
    }

    /// show_mem / show_free_areas (mm/page_alloc.c, lib/show_mem.c): the Mem-Info summary
    /// with the model's counts, in pages and kB. The model keeps one zone and no per-order
    /// free lists, so the per-order buddy lines are not printed.
    pub fn show_mem_report(&self, old: bool) -> Vec<(u8, String)> {
        use crate::mm::page::Lru;
        use crate::printk::KERN_INFO;
        let mm = &self.mm;
        use crate::mm::KernelOwner;
        struct S {
            dirty: u64,
            writeback: u64,
            mapped: u64,
            shmem: u64,
            slab_reclaimable: u64,
            slab_unreclaimable: u64,
            page_tables: u64,
            kernel_stack: u64,
            file_pages: u64,
        }
        let s = S {
            dirty: mm.stat.dirty,
            writeback: mm.stat.writeback,
            mapped: mm.stat.mapped,
            shmem: mm.stat.shmem,
            slab_reclaimable: mm.slab.pages(true),
            slab_unreclaimable: mm.slab.pages(false),
            page_tables: mm.kernel.count(KernelOwner::PageTables),
            kernel_stack: mm.kernel.count(KernelOwner::KernelStack),
            file_pages: mm.stat.file_pages,
        };
        let l = |x: Lru| mm.lru_len(x);
        let free = mm.nr_free();
        let mut out = vec![(KERN_INFO, "Mem-Info:".to_string())];
        if old {
            out.push((KERN_INFO, format!(
                "active_anon:{} inactive_anon:{} isolated_anon:0\n active_file:{} inactive_file:{} isolated_file:0\n unevictable:{} dirty:{} writeback:{} unstable:0\n free:{} slab_reclaimable:{} slab_unreclaimable:{}\n mapped:{} shmem:{} pagetables:{} bounce:0",
                l(Lru::ActiveAnon), l(Lru::InactiveAnon), l(Lru::ActiveFile), l(Lru::InactiveFile), l(Lru::Unevictable), s.dirty, s.writeback,
                free, s.slab_reclaimable, s.slab_unreclaimable, s.mapped, s.shmem, s.page_tables
            )));
        } else {
            let sec = if self.machine.kernel == memtwin_machine::KernelProfile::Linux6 { "\n sec_pagetables:0 bounce:0" } else { " bounce:0" };
            out.push((KERN_INFO, format!(
                "active_anon:{} inactive_anon:{} isolated_anon:0\n active_file:{} inactive_file:{} isolated_file:0\n unevictable:{} dirty:{} writeback:{}\n slab_reclaimable:{} slab_unreclaimable:{}\n mapped:{} shmem:{} pagetables:{}{sec}\n kernel_misc_reclaimable:0\n free:{} free_pcp:{} free_cma:0",
                l(Lru::ActiveAnon), l(Lru::InactiveAnon), l(Lru::ActiveFile), l(Lru::InactiveFile), l(Lru::Unevictable), s.dirty, s.writeback,
                s.slab_reclaimable, s.slab_unreclaimable, s.mapped, s.shmem, s.page_tables, free, mm.pcp.total
            )));
            let unreclaimable = if free <= mm.wmark.min { "yes" } else { "no" };
            out.push((KERN_INFO, format!(
                "Node 0 active_anon:{}kB inactive_anon:{}kB active_file:{}kB inactive_file:{}kB unevictable:{}kB isolated(anon):0kB isolated(file):0kB mapped:{}kB dirty:{}kB writeback:{}kB shmem:{}kB shmem_thp:0kB shmem_pmdmapped:0kB anon_thp:0kB writeback_tmp:0kB kernel_stack:{}kB pagetables:{}kB all_unreclaimable? {unreclaimable}",
                l(Lru::ActiveAnon) * 4, l(Lru::InactiveAnon) * 4, l(Lru::ActiveFile) * 4, l(Lru::InactiveFile) * 4, l(Lru::Unevictable) * 4,
                s.mapped * 4, s.dirty * 4, s.writeback * 4, s.shmem * 4, s.kernel_stack * 4, s.page_tables * 4
            )));
        }
        // show_free_areas: the watermarks in force (boost included) and the boost.
        let (w, boost) = (mm.wmark_pages(), mm.watermark_boost);
        let present_kb = self.machine.ram_bytes / 1024;
        if old {
            out.push((KERN_INFO, format!(
                "Node 0 {} free:{}kB min:{}kB low:{}kB high:{}kB active_anon:{}kB inactive_anon:{}kB active_file:{}kB inactive_file:{}kB unevictable:{}kB isolated(anon):0kB isolated(file):0kB present:{}kB mlocked:0kB dirty:{}kB writeback:{}kB mapped:{}kB shmem:{}kB slab_reclaimable:{}kB slab_unreclaimable:{}kB kernel_stack:{}kB pagetables:{}kB unstable:0kB bounce:0kB writeback_tmp:0kB pages_scanned:0 all_unreclaimable? no",
                self.zone_name(), free * 4, w.min * 4, w.low * 4, w.high * 4, l(Lru::ActiveAnon) * 4, l(Lru::InactiveAnon) * 4, l(Lru::ActiveFile) * 4,
                l(Lru::InactiveFile) * 4, l(Lru::Unevictable) * 4, present_kb, s.dirty * 4, s.writeback * 4, s.mapped * 4, s.shmem * 4,
                s.slab_reclaimable * 4, s.slab_unreclaimable * 4, s.kernel_stack * 4, s.page_tables * 4
            )));
        } else {
            out.push((KERN_INFO, format!(
                "Node 0 {} free:{}kB boost:{}kB min:{}kB low:{}kB high:{}kB reserved_highatomic:0KB active_anon:{}kB inactive_anon:{}kB active_file:{}kB inactive_file:{}kB unevictable:{}kB writepending:{}kB present:{}kB managed:{}kB mlocked:0kB bounce:0kB free_pcp:{}kB local_pcp:{}kB free_cma:0kB",
                self.zone_name(), free * 4, boost * 4, w.min * 4, w.low * 4, w.high * 4, l(Lru::ActiveAnon) * 4, l(Lru::InactiveAnon) * 4, l(Lru::ActiveFile) * 4,
                l(Lru::InactiveFile) * 4, l(Lru::Unevictable) * 4, (s.dirty + s.writeback) * 4, present_kb, mm.managed * 4,
                mm.pcp.total * 4, mm.pcp.count.get(self.this_cpu()).copied().unwrap_or(0) as u64 * 4
            )));
        }
        out.push((KERN_INFO, "lowmem_reserve[]: 0 0 0 0".to_string()));
        if !old {
            out.push((KERN_INFO, "Node 0 hugepages_total=0 hugepages_free=0 hugepages_surp=0 hugepages_size=2048kB".to_string()));
        }
        let swapcache = mm.nr_swapcache();
        let (st, sf) = self.swap_totals();
        out.push((KERN_INFO, format!("{} total pagecache pages", s.file_pages + swapcache)));
        out.push((KERN_INFO, format!("{swapcache} pages in swap cache")));
        out.push((KERN_INFO, format!("Free swap  = {}kB", sf * 4)));
        out.push((KERN_INFO, format!("Total swap = {}kB", st * 4)));
        let ram_pages = self.machine.ram_bytes / crate::mm::PAGE_SIZE;
        out.push((KERN_INFO, format!("{ram_pages} pages RAM")));
        out.push((KERN_INFO, "0 pages HighMem/MovableOnly".to_string()));
        out.push((KERN_INFO, format!("{} pages reserved", ram_pages.saturating_sub(mm.managed))));
        out
    }

    /// The name of the model's one zone as the kernel would call the zone holding most of
    /// the memory: DMA32 below 4 GiB of RAM on x86-64, Normal above.
    pub fn zone_name(&self) -> &'static str {
        if self.machine.ram_bytes <= 4 << 30 { "DMA32" } else { "Normal" }
    }
}
