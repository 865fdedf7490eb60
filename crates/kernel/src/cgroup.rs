//! The cgroup filesystem of the memory controller (kernel/cgroup/cgroup.c, the cftypes of
//! mm/memcontrol.c): directories are cgroups, files read and write the controller's
//! settings and counters. v2 is mounted at /sys/fs/cgroup, v1's memory hierarchy at
//! /sys/fs/cgroup/memory. Values are printed as the kernel prints them; bad writes fail
//! with the kernel's errno.

use crate::mm::memcontrol::{
    memparse_pages, CgroupMode, Errno, MemcgEvent, MemcgId, MemcgPageStat, MEMCG_EVENT_NAMES, PAGE_COUNTER_MAX, ROOT_MEMCG,
};
use crate::mm::PAGE_SIZE;
use crate::Kernel;
use memtwin_engine::{Ns, TaskId, NS_PER_SEC};
use memtwin_machine::KernelProfile;

/// Why a cgroup file operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CgError {
    /// What the kernel returns (the shell prints strerror).
    Errno(Errno),
    /// A file or operation the model does not have: a clear refusal, not a kernel error.
    Unmodelled(String),
}

impl From<Errno> for CgError {
    fn from(e: Errno) -> Self {
        CgError::Errno(e)
    }
}

/// Files of a v2 cgroup with the memory controller enabled by its parent.
const V2_MEMORY_FILES: &[&str] = &[
    "memory.current",
    "memory.min",
    "memory.low",
    "memory.high",
    "memory.max",
    "memory.peak",
    "memory.events",
    "memory.events.local",
    "memory.stat",
    "memory.swap.current",
    "memory.swap.max",
    "memory.swap.peak",
    "memory.swap.events",
    "memory.oom.group",
    "memory.reclaim",
    "memory.pressure",
];
const V2_CORE_FILES: &[&str] = &["cgroup.controllers", "cgroup.events", "cgroup.procs", "cgroup.subtree_control"];
const V1_FILES: &[&str] = &[
    "cgroup.procs",
    "memory.failcnt",
    "memory.force_empty",
    "memory.limit_in_bytes",
    "memory.max_usage_in_bytes",
    "memory.memsw.failcnt",
    "memory.memsw.limit_in_bytes",
    "memory.memsw.max_usage_in_bytes",
    "memory.memsw.usage_in_bytes",
    "memory.stat",
    "memory.swappiness",
    "memory.usage_in_bytes",
    "memory.use_hierarchy",
    "tasks",
];
/// v1 kmem files of the kernels that charge slab memory to cgroups (the 5.x and 6.x
/// profiles): usage and peak of memcg->kmem, its failcnt (no kmem limit can be set here,
/// so 0), and memory.kmem.slabinfo: the cgroup's copies of the caches on 5.x, empty since
/// they went in 5.9.
const V1_KMEM_FILES: &[&str] = &["memory.kmem.failcnt", "memory.kmem.max_usage_in_bytes", "memory.kmem.slabinfo", "memory.kmem.usage_in_bytes"];
/// Files real kernels have that the model does not (refused by name).
const UNMODELLED: &[&str] = &[
    "memory.kmem.limit_in_bytes",
    "memory.kmem.usage_in_bytes",
    "memory.kmem.failcnt",
    "memory.kmem.max_usage_in_bytes",
    "memory.kmem.slabinfo",
    "memory.soft_limit_in_bytes",
    "memory.oom_control",
    "memory.move_charge_at_immigrate",
    "memory.numa_stat",
    "memory.swap.high",
    "memory.zswap.current",
    "memory.zswap.max",
    "memory.pressure_level",
    "io.pressure",
    "cpu.pressure",
    "cgroup.max.depth",
    "cgroup.max.descendants",
    "cgroup.stat",
    "cgroup.type",
    "cgroup.threads",
    "cgroup.freeze",
    "cgroup.kill",
];

fn bytes(pages: u64) -> String {
    (pages.min(PAGE_COUNTER_MAX) * PAGE_SIZE).to_string()
}
/// A v2 limit: "max" when unlimited.
fn limit_v2(pages: u64) -> String {
    if pages >= PAGE_COUNTER_MAX {
        "max".into()
    } else {
        bytes(pages)
    }
}

impl Kernel {
    /// Where the memory hierarchy is mounted; Err when the era has none.
    pub fn cgroup_mount(&self) -> Result<&'static str, CgError> {
        match self.memcg.mode {
            CgroupMode::None => Err(CgError::Unmodelled(
                "Linux 2.4 has no control groups (memory cgroups came with 2.6.25; use a linux-2.6.39 or later kernel profile)".into(),
            )),
            m => Ok(m.mount()),
        }
    }

    /// Split an absolute path into (cgroup, file). The path must lie below the mount.
    pub fn cgroup_resolve(&self, path: &str) -> Result<(MemcgId, Option<String>), CgError> {
        let mount = self.cgroup_mount()?;
        let path = path.trim_end_matches('/');
        let rest = if path == mount {
            ""
        } else if let Some(r) = path.strip_prefix(mount).and_then(|r| r.strip_prefix('/')) {
            r
        } else {
            return Err(CgError::Unmodelled(format!(
                "'{path}' is outside the memory cgroup hierarchy at {mount} (the model's cgroup filesystem)"
            )));
        };
        let parts: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        // As deep as directories exist, then at most one file name.
        let mut id = ROOT_MEMCG;
        for (i, p) in parts.iter().enumerate() {
            let sub = if id == ROOT_MEMCG { format!("/{p}") } else { format!("{}/{p}", self.memcg.cgs[id as usize].path) };
            match self.memcg.lookup(&sub) {
                Some(c) => id = c,
                None if i + 1 == parts.len() => return Ok((id, Some(p.to_string()))),
                None => return Err(Errno::ENOENT.into()),
            }
        }
        Ok((id, None))
    }

    /// The files of a cgroup directory, sorted as `ls` shows them.
    pub fn cgroup_files(&self, id: MemcgId) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = match self.memcg.mode {
            CgroupMode::None => Vec::new(),
            CgroupMode::V1 => {
                let mut v = V1_FILES.to_vec();
                if self.profile.kmem_accounting || self.profile.memcg_kmem_caches {
                    v.extend(V1_KMEM_FILES);
                }
                v
            }
            CgroupMode::V2 => {
                let mut v: Vec<&'static str> = V2_CORE_FILES.to_vec();
                if id != ROOT_MEMCG && self.memory_enabled(id) {
                    v.extend(V2_MEMORY_FILES.iter().copied().filter(|f| self.v2_file_exists(f)));
                } else if id == ROOT_MEMCG {
                    v.extend(["memory.stat", "memory.pressure", "memory.reclaim"]);
                }
                v
            }
        };
        v.sort_unstable();
        v
    }

    /// v2: whether the parent has "+memory" in cgroup.subtree_control.
    fn memory_enabled(&self, id: MemcgId) -> bool {
        match self.memcg.cgs[id as usize].parent {
            Some(p) => self.memcg.cgs[p as usize].subtree_memory,
            None => true,
        }
    }

    /// Files that came with later kernels: memory.peak (5.19), memory.reclaim (5.19),
    /// memory.swap.peak (6.5 — the 6.x profile has it), memory.events.local (5.2).
    fn v2_file_exists(&self, f: &str) -> bool {
        let k = self.machine.kernel;
        match f {
            "memory.peak" | "memory.reclaim" | "memory.swap.peak" => k == KernelProfile::Linux6,
            _ => true,
        }
    }

    /// Refuse a file real kernels have and the model does not (Ok for everything else,
    /// including names no kernel has: those fail with ENOENT when used).
    pub fn cgroup_check_modelled(&self, id: MemcgId, name: &str) -> Result<(), CgError> {
        match self.check_file(id, name) {
            Err(CgError::Unmodelled(m)) => Err(CgError::Unmodelled(m)),
            _ if name == "memory.pressure" && self.psi.era == crate::psi::PsiEra::None => Err(CgError::Unmodelled(
                "memory.pressure: pressure stall information came with Linux 4.20 (use a linux-5.x or 6.x kernel profile)".into(),
            )),
            _ => Ok(()),
        }
    }

    fn check_file(&self, id: MemcgId, name: &str) -> Result<(), CgError> {
        if self.cgroup_files(id).contains(&name) {
            return Ok(());
        }
        if UNMODELLED.contains(&name) {
            return Err(CgError::Unmodelled(format!("the cgroup file '{name}' is not modelled (modelled: {})", self.cgroup_files(id).join(", "))));
        }
        Err(Errno::ENOENT.into())
    }

    /// cgroup_mkdir.
    pub fn cgroup_mkdir(&mut self, path: &str) -> Result<(), CgError> {
        let (parent, name) = self.cgroup_resolve(path)?;
        let Some(name) = name else { return Err(Errno::EEXIST.into()) };
        if self.cgroup_files(parent).contains(&name.as_str()) || name.contains(char::is_whitespace) {
            return Err(Errno::EEXIST.into());
        }
        // mem_cgroup_alloc -> init_memcg_lruvec: the cgroup's own LRU lists on the node.
        let Some(lv) = self.mm.new_lruvec() else { return Err(Errno::ENOSPC.into()) };
        let id = self.memcg.create(parent, &name).map_err(|e| {
            self.mm.free_lruvec(lv);
            match e {
                "File exists" => CgError::Errno(Errno::EEXIST),
                _ => CgError::Errno(Errno::ENOSPC),
            }
        })?;
        self.memcg.set_lruvec(id, lv);
        // psi_cgroup_alloc: v2 cgroups account pressure stalls (4.20+).
        if self.memcg.mode == CgroupMode::V2 {
            let now = self.now;
            self.psi.group_alloc(id, now);
        }
        Ok(())
    }

    /// cgroup_rmdir: only an empty cgroup (no tasks, no children) goes; its pages stay
    /// charged up the tree (they are reparented).
    pub fn cgroup_rmdir(&mut self, path: &str) -> Result<(), CgError> {
        let (id, name) = self.cgroup_resolve(path)?;
        if name.is_some() {
            return Err(if self.cgroup_files(id).contains(&name.as_deref().unwrap_or("")) { Errno::ENOTSUP.into() } else { Errno::ENOENT.into() });
        }
        if id == ROOT_MEMCG {
            return Err(Errno::EBUSY.into());
        }
        if self.memcg_busy(id) {
            return Err(Errno::EBUSY.into());
        }
        // Offline: the cgroup's LRU pages join its parent's lists (reparenting), then its
        // lruvec goes.
        let parent = self.memcg.cgs[id as usize].parent.expect("not the root");
        let (from, to) = (self.memcg.cgs[id as usize].lruvec, self.memcg.cgs[parent as usize].lruvec);
        self.mm.reparent_lruvec(from, to);
        // memcg_reparent_list_lrus: its dentries and inodes join the parent's lists (and
        // their charges the parent, in `remove`).
        for sb in self.vfs.sbs.iter_mut() {
            sb.dcache.reparent(id, parent);
            sb.icache.reparent(id, parent);
        }
        self.reparent_shrinker_deferred(id as usize, parent as usize);
        // Objects waiting for an RCU grace period uncharge the parent.
        self.rcu.reparent(id, parent);
        // 5.x memcg_offline_kmem: the cgroup's cache copies are deactivated and belong to
        // the parent (their pages' charges move with the cgroup's, in `remove`).
        self.mm.slab.memcg_reparent_caches(id, parent);
        // mem_cgroup_css_offline: drain_all_stock(memcg).
        self.memcg.drain_all_stock(id);
        // The page-cache tree nodes charged to it are its parent's from now on.
        self.mm.xa.reparent_memcg(id, parent);
        self.memcg.remove(id);
        self.psi.group_free(id);
        Ok(())
    }

    /// Whether cgroup `id` has children or tasks (the scenario's shell included): what
    /// rmdir, and 2.6.39's force_empty, refuse with EBUSY.
    fn memcg_busy(&self, id: MemcgId) -> bool {
        !self.memcg.cgs[id as usize].children.is_empty() || !self.memcg_tasks(id).is_empty() || self.memcg.shell == id
    }

    /// 2.6.39's move_account in mem_cgroup_force_empty: the pages cgroup `id` still holds
    /// (and its swap entries) are charged to its parent, and its LRU pages join the tails
    /// of the parent's lists (mem_cgroup_move_parent). The cgroup stays, empty.
    pub(crate) fn memcg_move_charges_to_parent(&mut self, id: MemcgId) {
        let parent = self.memcg.cgs[id as usize].parent.expect("not the root");
        let (from, to) = (self.memcg.cgs[id as usize].lruvec, self.memcg.cgs[parent as usize].lruvec);
        if from != to {
            self.mm.move_lruvec_pages(from, to);
        }
        self.memcg.move_charges_to_parent(id);
    }

    /// Move a task into a cgroup (cgroup_attach_task). Charges stay where they are
    /// (v2; v1's move_charge_at_immigrate is not modelled and 0 by default).
    pub fn cgroup_attach(&mut self, tid: TaskId, id: MemcgId) -> Result<(), CgError> {
        if self.memcg.mode == CgroupMode::V2 && id != ROOT_MEMCG && self.memcg.cgs[id as usize].subtree_memory {
            // The "no internal processes" rule.
            return Err(Errno::EBUSY.into());
        }
        self.tasks[tid as usize].memcg = id;
        self.tasks[tid as usize].memcg_nr_pages_over_high = 0;
        self.psi_cgroup_move(tid);
        Ok(())
    }

    fn task_by_pid(&self, pid: u32) -> Option<TaskId> {
        (0..self.tasks.len() as TaskId).find(|&t| {
            let task = &self.tasks[t as usize];
            task.pid == pid && task.exit_code.is_none() && !task.reaped
        })
    }

    /// Read a cgroup file as a read now sees it: pressure totals brought up to date
    /// (psi_show collects the per-CPU times first).
    pub fn cgroup_read_now(&mut self, path: &str) -> Result<String, CgError> {
        if let Ok((id, Some(name))) = self.cgroup_resolve(path) {
            if name == "memory.pressure" && self.check_file(id, &name).is_ok() {
                if let Some(t) = self.cgroup_pressure(id, "memory") {
                    return Ok(t);
                }
            }
        }
        self.cgroup_read(path)
    }

    /// Read a cgroup file.
    pub fn cgroup_read(&self, path: &str) -> Result<String, CgError> {
        let (id, name) = self.cgroup_resolve(path)?;
        let Some(name) = name else { return Err(Errno::EINVAL.into()) };
        self.check_file(id, &name)?;
        let c = &self.memcg.cgs[id as usize];
        let v1 = self.memcg.mode == CgroupMode::V1;
        let out = match name.as_str() {
            "cgroup.procs" | "tasks" => {
                let mut pids: Vec<u32> = (0..self.tasks.len() as TaskId)
                    .filter(|&t| {
                        let task = &self.tasks[t as usize];
                        task.exit_code.is_none() && !task.reaped && task.memcg == id
                    })
                    .map(|t| self.tasks[t as usize].pid)
                    .collect();
                pids.sort_unstable();
                pids.iter().map(|p| format!("{p}\n")).collect()
            }
            "cgroup.controllers" => {
                if self.memory_enabled(id) { "memory\n".into() } else { "\n".into() }
            }
            "cgroup.subtree_control" => {
                if c.subtree_memory { "memory\n".into() } else { "\n".into() }
            }
            "cgroup.events" => {
                let populated = !self.memcg_tasks(id).is_empty();
                format!("populated {}\nfrozen 0\n", populated as u8)
            }
            "memory.current" => format!("{}\n", bytes(c.memory.usage)),
            "memory.peak" => format!("{}\n", bytes(c.memory.watermark)),
            "memory.min" => format!("{}\n", limit_v2(c.memory.min)),
            "memory.low" => format!("{}\n", limit_v2(c.memory.low)),
            "memory.high" => format!("{}\n", limit_v2(c.memory.high)),
            "memory.max" => format!("{}\n", limit_v2(c.memory.max)),
            "memory.swap.current" => format!("{}\n", bytes(c.swap.usage)),
            "memory.swap.peak" => format!("{}\n", bytes(c.swap.watermark)),
            "memory.swap.max" => format!("{}\n", limit_v2(c.swap.max)),
            "memory.oom.group" => format!("{}\n", c.oom_group as u8),
            "memory.reclaim" => return Err(Errno::EINVAL.into()),
            "memory.events" | "memory.events.local" => {
                let ev = if name == "memory.events" { &c.events } else { &c.events_local };
                let n = if self.machine.kernel == KernelProfile::Linux6 { 6 } else { 5 };
                MEMCG_EVENT_NAMES[..n].iter().enumerate().map(|(i, k)| format!("{k} {}\n", ev[i])).collect()
            }
            "memory.swap.events" => {
                let ev = &c.events;
                format!(
                    "high {}\nmax {}\nfail {}\n",
                    ev[MemcgEvent::SwapHigh as usize],
                    ev[MemcgEvent::SwapMax as usize],
                    ev[MemcgEvent::SwapFail as usize]
                )
            }
            // The totals as of the last update (`cgroup_read_now` brings them up to date).
            "memory.pressure" => {
                let g = if id == ROOT_MEMCG { Some(&self.psi) } else { self.psi.group(id) };
                match g {
                    Some(g) => {
                        let mut g = g.snapshot();
                        g.collect(self.now);
                        g.show("memory")
                    }
                    None => return Err(CgError::Unmodelled("memory.pressure: pressure stall information came with Linux 4.20".into())),
                }
            }
            "memory.stat" => self.memcg_stat_text(id, v1),
            // v1.
            "memory.usage_in_bytes" => format!("{}\n", bytes(c.memory.usage)),
            "memory.max_usage_in_bytes" => format!("{}\n", bytes(c.memory.watermark)),
            "memory.limit_in_bytes" => format!("{}\n", bytes(c.memory.max)),
            "memory.failcnt" => format!("{}\n", c.memory.failcnt),
            "memory.memsw.usage_in_bytes" => format!("{}\n", bytes(c.memsw.usage)),
            "memory.memsw.max_usage_in_bytes" => format!("{}\n", bytes(c.memsw.watermark)),
            "memory.memsw.limit_in_bytes" => format!("{}\n", bytes(c.memsw.max)),
            "memory.memsw.failcnt" => format!("{}\n", c.memsw.failcnt),
            "memory.kmem.usage_in_bytes" => format!("{}\n", bytes(c.kmem.usage)),
            "memory.kmem.max_usage_in_bytes" => format!("{}\n", bytes(c.kmem.watermark)),
            "memory.kmem.failcnt" => format!("{}\n", c.kmem.failcnt),
            "memory.kmem.slabinfo" => {
                // memcg_slab_show: the header with the first cache, nothing without one.
                let caches = self.memcg_slabinfo(id);
                if caches.is_empty() { String::new() } else { memtwin_procfs::slabinfo(&caches, memtwin_procfs::SlabinfoVersion::V21) }
            }
            "memory.swappiness" => format!("{}\n", c.swappiness.unwrap_or(self.sysctl.swappiness)),
            "memory.use_hierarchy" => format!("{}\n", c.use_hierarchy as u8),
            "memory.force_empty" => return Err(Errno::EINVAL.into()),
            _ => return Err(Errno::ENOENT.into()),
        };
        Ok(out)
    }

    /// memory.stat (v2: memory_stat_format, hierarchical; v1: memcg1_stat_format, the
    /// cgroup's own values then the total_ ones), and the text the OOM report prints.
    pub fn memcg_stat_text(&self, id: MemcgId, v1: bool) -> String {
        let pages = self.memcg_page_stats();
        let mut local = MemcgPageStat::default();
        local.add(&pages[id as usize]);
        let mut total = MemcgPageStat::default();
        let mut ev = crate::mm::memcontrol::MemcgVmEvents::default();
        let mut ev_local = ev;
        let mut swap_local = 0;
        for i in self.memcg.subtree(id) {
            total.add(&pages[i as usize]);
            let e = &self.memcg.cgs[i as usize].vm;
            if i == id {
                ev_local = *e;
                swap_local = self.memcg.cgs[i as usize].swap.usage;
            }
            ev.pgfault += e.pgfault;
            ev.pgpgin += e.pgpgin;
            ev.pgpgout += e.pgpgout;
            ev.pgmajfault += e.pgmajfault;
            ev.pgscan_kswapd += e.pgscan_kswapd;
            ev.pgscan_direct += e.pgscan_direct;
            ev.pgsteal_kswapd += e.pgsteal_kswapd;
            ev.pgsteal_direct += e.pgsteal_direct;
            ev.pgrefill += e.pgrefill;
            ev.pgactivate += e.pgactivate;
            ev.pgdeactivate += e.pgdeactivate;
            ev.workingset_refault_anon += e.workingset_refault_anon;
            ev.workingset_refault_file += e.workingset_refault_file;
            ev.workingset_activate_anon += e.workingset_activate_anon;
            ev.workingset_activate_file += e.workingset_activate_file;
        }
        let b = |p: u64| p * PAGE_SIZE;
        let mut s = String::new();
        let c = &self.memcg.cgs[id as usize];
        if v1 {
            let modern = self.machine.kernel != KernelProfile::Linux2639;
            let block = |s: &mut String, pre: &str, st: &MemcgPageStat, e: &crate::mm::memcontrol::MemcgVmEvents, swap: u64| {
                s.push_str(&format!("{pre}cache {}\n{pre}rss {}\n", b(st.file), b(st.anon)));
                if modern {
                    s.push_str(&format!("{pre}rss_huge 0\n{pre}shmem {}\n", b(st.shmem)));
                }
                s.push_str(&format!("{pre}mapped_file {}\n", b(st.file_mapped)));
                if modern {
                    s.push_str(&format!("{pre}dirty {}\n{pre}writeback {}\n", b(st.file_dirty), b(st.file_writeback)));
                    s.push_str(&format!(
                        "{pre}workingset_refault_anon {}\n{pre}workingset_refault_file {}\n",
                        e.workingset_refault_anon, e.workingset_refault_file
                    ));
                }
                s.push_str(&format!("{pre}swap {}\n", b(swap)));
                if modern {
                    s.push_str(&format!("{pre}swapcached {}\n", b(st.swapcached)));
                }
                s.push_str(&format!("{pre}pgpgin {}\n{pre}pgpgout {}\n", e.pgpgin, e.pgpgout));
                if modern {
                    s.push_str(&format!("{pre}pgfault {}\n{pre}pgmajfault {}\n", e.pgfault, e.pgmajfault));
                }
                let names = ["inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable"];
                for (i, n) in names.iter().enumerate() {
                    s.push_str(&format!("{pre}{n} {}\n", b(st.lru[i])));
                }
            };
            block(&mut s, "", &local, &ev_local, swap_local);
            // hierarchical_memory_limit: the smallest limit up the tree.
            let (mut lim, mut memsw) = (PAGE_COUNTER_MAX, PAGE_COUNTER_MAX);
            for i in self.memcg.ancestors(id) {
                lim = lim.min(self.memcg.cgs[i as usize].memory.max);
                memsw = memsw.min(self.memcg.cgs[i as usize].memsw.max);
            }
            s.push_str(&format!("hierarchical_memory_limit {}\nhierarchical_memsw_limit {}\n", bytes(lim), bytes(memsw)));
            block(&mut s, "total_", &total, &ev, c.swap.usage);
            return s;
        }
        // Slab objects charged to the subtree (memcg_slab_post_alloc_hook's
        // NR_SLAB_*_B, in bytes), its tasks' page tables (NR_PAGETABLE) and kernel
        // stacks (NR_KERNEL_STACK_KB) and the pages charged for them all (MEMCG_KMEM).
        let (mut kmem, mut slab_r, mut slab_u, mut pagetables, mut kernel_stack) = (0u64, 0u64, 0u64, 0u64, 0u64);
        for i in self.memcg.subtree(id) {
            let g = &self.memcg.cgs[i as usize];
            kmem += g.nr_kmem;
            pagetables += g.nr_pagetables;
            kernel_stack += g.nr_kernel_stack;
            slab_r += g.slab_bytes[0];
            slab_u += g.slab_bytes[1];
        }
        let modern = self.machine.kernel == KernelProfile::Linux6;
        let mut kv: Vec<(&str, u64)> = vec![
            ("anon", b(total.anon)),
            ("file", b(total.file)),
            // memory_stat_format: "kernel" is MEMCG_KMEM, which counts the page tables
            // and the kernel stacks.
            ("kernel", b(kmem)),
            ("kernel_stack", b(kernel_stack)),
            ("pagetables", b(pagetables)),
            ("percpu", 0),
            ("sock", 0),
            ("vmalloc", 0),
            ("shmem", b(total.shmem)),
            ("file_mapped", b(total.file_mapped)),
            ("file_dirty", b(total.file_dirty)),
            ("file_writeback", b(total.file_writeback)),
            ("swapcached", b(total.swapcached)),
            ("anon_thp", 0),
            ("file_thp", 0),
            ("shmem_thp", 0),
            ("inactive_anon", b(total.lru[0])),
            ("active_anon", b(total.lru[1])),
            ("inactive_file", b(total.lru[2])),
            ("active_file", b(total.lru[3])),
            ("unevictable", b(total.lru[4])),
            ("slab_reclaimable", slab_r),
            ("slab_unreclaimable", slab_u),
            ("slab", slab_r + slab_u),
            ("workingset_refault_anon", ev.workingset_refault_anon),
            ("workingset_refault_file", ev.workingset_refault_file),
            ("workingset_activate_anon", ev.workingset_activate_anon),
            ("workingset_activate_file", ev.workingset_activate_file),
            ("workingset_restore_anon", 0),
            ("workingset_restore_file", 0),
            ("workingset_nodereclaim", 0),
            ("pgscan", ev.pgscan_kswapd + ev.pgscan_direct),
            ("pgsteal", ev.pgsteal_kswapd + ev.pgsteal_direct),
            ("pgscan_kswapd", ev.pgscan_kswapd),
            ("pgscan_direct", ev.pgscan_direct),
            ("pgsteal_kswapd", ev.pgsteal_kswapd),
            ("pgsteal_direct", ev.pgsteal_direct),
            ("pgfault", ev.pgfault),
            ("pgmajfault", ev.pgmajfault),
            ("pgrefill", ev.pgrefill),
            ("pgactivate", ev.pgactivate),
            ("pgdeactivate", ev.pgdeactivate),
            ("pglazyfree", 0),
            ("pglazyfreed", 0),
            ("thp_fault_alloc", 0),
            ("thp_collapse_alloc", 0),
        ];
        if !modern {
            // 5.x: no split pgscan_*/pgsteal_* lines (added 5.13) and no vmalloc (5.13).
            kv.retain(|(k, _)| !matches!(*k, "vmalloc" | "pgscan_kswapd" | "pgscan_direct" | "pgsteal_kswapd" | "pgsteal_direct"));
        }
        for (k, v) in kv {
            s.push_str(&format!("{k} {v}\n"));
        }
        s
    }

    /// Write `value` to a cgroup file for task `tid` (who pays for any reclaim), all at once:
    /// a write that reclaims runs each round of reclaim with no time passing and charges
    /// its CPU work to `tid` (settings applied before a command starts, tests).
    pub fn cgroup_write(&mut self, tid: TaskId, path: &str, value: &str) -> Result<(), CgError> {
        self.cgroup_write_inner(tid, path, value, false).map(|_| ())
    }

    /// Write `value` to a cgroup file as the writing task's kernel path: a write that
    /// reclaims (memory.max, memory.high, memory.reclaim, v1 memory.limit_in_bytes,
    /// memory.memsw.limit_in_bytes, memory.force_empty) runs each round of
    /// try_to_free_mem_cgroup_pages as a reclaim path of `tid` in simulated time (its CPU
    /// bursts, lru_lock waits, throttles) and lru_add_drain_all's flush_work as a wait.
    /// Ok(Some(step)): the write is in progress; the program returns the step and calls
    /// again (with the same arguments) until Ok(None) (done) or an error.
    pub fn cgroup_write_timed(&mut self, tid: TaskId, path: &str, value: &str) -> Result<Option<crate::task::Step>, CgError> {
        if let Some(mut st) = self.tasks[tid as usize].cg_write.take() {
            if self.reclaim.in_path(tid) {
                self.tasks[tid as usize].cg_write = Some(st);
                return Ok(Some(crate::task::Step::Yield));
            }
            if let Some(path) = self.reclaim.take_done_memcg(tid) {
                st.last = Some(path.sc.nr_reclaimed);
            }
            return self.cg_write_run(tid, st, true);
        }
        self.cgroup_write_inner(tid, path, value, true)
    }

    fn cgroup_write_inner(&mut self, tid: TaskId, path: &str, value: &str, timed: bool) -> Result<Option<crate::task::Step>, CgError> {
        let (id, name) = self.cgroup_resolve(path)?;
        let Some(name) = name else { return Err(Errno::EISDIR.into()) };
        self.check_file(id, &name)?;
        let v = value.trim();
        let v1 = self.memcg.mode == CgroupMode::V1;
        let not_root = |id| if id == ROOT_MEMCG { Err(CgError::Errno(Errno::EINVAL)) } else { Ok(()) };
        match name.as_str() {
            "cgroup.procs" | "tasks" => {
                let pid: u32 = v.parse().map_err(|_| Errno::EINVAL)?;
                if Some(pid) == self.memcg.shell_pid {
                    if self.memcg.mode == CgroupMode::V2 && id != ROOT_MEMCG && self.memcg.cgs[id as usize].subtree_memory {
                        return Err(Errno::EBUSY.into());
                    }
                    self.memcg.shell = id;
                    return Ok(None);
                }
                let t = self.task_by_pid(pid).ok_or(Errno::ESRCH)?;
                self.cgroup_attach(t, id)?;
            }
            "cgroup.subtree_control" => {
                for tok in v.split_whitespace() {
                    let (on, ctrl) = match tok.split_at(1) {
                        ("+", c) => (true, c),
                        ("-", c) => (false, c),
                        _ => return Err(Errno::EINVAL.into()),
                    };
                    match ctrl {
                        "memory" => {}
                        "cpu" | "io" | "pids" | "cpuset" | "hugetlb" | "rdma" | "misc" => {
                            return Err(CgError::Unmodelled(format!(
                                "the '{ctrl}' controller is not modelled (only 'memory' is)"
                            )))
                        }
                        _ => return Err(Errno::EINVAL.into()),
                    }
                    if on && !self.memory_enabled(id) {
                        return Err(Errno::ENOENT.into());
                    }
                    if on && id != ROOT_MEMCG && (self.memcg.shell == id || self.tasks.iter().any(|t| t.exit_code.is_none() && !t.reaped && t.memcg == id)) {
                        // No internal processes: a cgroup with tasks cannot give its
                        // controllers to children.
                        return Err(Errno::EBUSY.into());
                    }
                    if !on && self.memcg.cgs[id as usize].children.iter().any(|&c| self.memcg.cgs[c as usize].subtree_memory) {
                        return Err(Errno::EBUSY.into());
                    }
                    self.memcg.cgs[id as usize].subtree_memory = on;
                }
            }
            "memory.min" | "memory.low" | "memory.high" | "memory.max" | "memory.swap.max" => {
                not_root(id)?;
                let pages = memparse_pages(v, "max")?;
                let c = &mut self.memcg.cgs[id as usize];
                match name.as_str() {
                    "memory.min" => c.memory.min = pages,
                    "memory.low" => c.memory.low = pages,
                    "memory.swap.max" => c.swap.max = pages,
                    "memory.high" => {
                        c.memory.high = pages;
                        // memory_high_write: reclaim down to the new high (no OOM).
                        return self.cg_write_run(tid, CgWriteReclaim::new(CgWriteKind::High { high: pages }, id, self.profile.memcg_reclaim_retries), timed);
                    }
                    _ => {
                        c.memory.max = pages;
                        return self.cg_write_run(tid, CgWriteReclaim::new(CgWriteKind::Max { max: pages }, id, self.profile.memcg_reclaim_retries), timed);
                    }
                }
            }
            "memory.oom.group" => {
                not_root(id)?;
                let n: i64 = v.parse().map_err(|_| Errno::EINVAL)?;
                if !(0..=1).contains(&n) {
                    return Err(Errno::EINVAL.into());
                }
                self.memcg.cgs[id as usize].oom_group = n == 1;
            }
            "memory.reclaim" => {
                let want = memparse_pages(v, "\u{0}")?;
                return self.cg_write_run(tid, CgWriteReclaim::new(CgWriteKind::Reclaim { want }, id, self.profile.memcg_reclaim_retries), timed);
            }
            "memory.limit_in_bytes" | "memory.memsw.limit_in_bytes" => {
                not_root(id)?;
                let pages = memparse_pages(v, "-1")?;
                let memsw = name == "memory.memsw.limit_in_bytes";
                return self.cg_write_run(tid, CgWriteReclaim::new(CgWriteKind::ResizeMax { max: pages, memsw }, id, self.profile.memcg_reclaim_retries), timed);
            }
            "memory.swappiness" => {
                let n: u64 = v.parse().map_err(|_| Errno::EINVAL)?;
                let max = if self.machine.kernel == KernelProfile::Linux2639 { 100 } else { 200 };
                if n > max {
                    return Err(Errno::EINVAL.into());
                }
                if id == ROOT_MEMCG {
                    self.sysctl.swappiness = n as u32;
                } else {
                    self.memcg.cgs[id as usize].swappiness = Some(n as u32);
                }
            }
            "memory.force_empty" => {
                not_root(id)?;
                return self.cg_write_run(tid, CgWriteReclaim::new(CgWriteKind::ForceEmpty, id, self.profile.memcg_reclaim_retries), timed);
            }
            "memory.max_usage_in_bytes" | "memory.memsw.max_usage_in_bytes" | "memory.failcnt" | "memory.memsw.failcnt" | "memory.kmem.max_usage_in_bytes"
            | "memory.kmem.failcnt" => {
                // Writing anything resets the watermark / failcnt (mem_cgroup_reset).
                let c = &mut self.memcg.cgs[id as usize];
                match name.as_str() {
                    "memory.max_usage_in_bytes" => c.memory.watermark = c.memory.usage,
                    "memory.memsw.max_usage_in_bytes" => c.memsw.watermark = c.memsw.usage,
                    "memory.failcnt" => c.memory.failcnt = 0,
                    "memory.kmem.max_usage_in_bytes" => c.kmem.watermark = c.kmem.usage,
                    "memory.kmem.failcnt" => c.kmem.failcnt = 0,
                    _ => c.memsw.failcnt = 0,
                }
            }
            "memory.use_hierarchy" => {
                // mem_cgroup_hierarchy_write: 0 or 1; a change only where the parent is not
                // hierarchical itself (else EINVAL) and the cgroup has no children (else
                // EBUSY). Since 5.11 the value is always 1 and writing 0 is EINVAL.
                let val = match v {
                    "0" => false,
                    "1" => true,
                    _ => return Err(Errno::EINVAL.into()),
                };
                if !self.profile.memcg_flat_mode {
                    if !val {
                        return Err(Errno::EINVAL.into());
                    }
                } else if self.memcg.cgs[id as usize].use_hierarchy != val {
                    let parent_hier = self.memcg.cgs[id as usize]
                        .parent
                        .is_some_and(|p| self.memcg.cgs[p as usize].use_hierarchy);
                    // On 5.x the root has systemd's slices (init.scope, system.slice,
                    // user.slice) below it from boot, so only a child can change.
                    let has_children = !self.memcg.cgs[id as usize].children.is_empty()
                        || (id == ROOT_MEMCG && self.profile.memcg_root_use_hierarchy);
                    if parent_hier {
                        return Err(Errno::EINVAL.into());
                    }
                    if has_children {
                        return Err(Errno::EBUSY.into());
                    }
                    self.memcg.cgs[id as usize].use_hierarchy = val;
                }
            }
            "memory.peak" if self.machine.kernel == KernelProfile::Linux6 => return Err(Errno::EINVAL.into()),
            _ => {
                let _ = v1;
                return Err(Errno::EINVAL.into());
            }
        }
        Ok(None)
    }

    /// Run a reclaiming write's loop: each round of reclaim is a reclaim path of `tid` in
    /// simulated time (`timed`: the write returns and resumes when the path is done) or run
    /// at once.
    fn cg_write_run(&mut self, tid: TaskId, mut st: CgWriteReclaim, timed: bool) -> Result<Option<crate::task::Step>, CgError> {
        loop {
            let next = match st.after_drain.take() {
                Some(n) => n,
                None => self.cg_write_next(tid, &mut st),
            };
            match next {
                CgNext::Done(r) => return r.map(|_| None).map_err(CgError::Errno),
                CgNext::Sleep(ns) => {
                    if timed {
                        // io_schedule_timeout: iowait, D state.
                        self.tasks[tid as usize].cg_write = Some(st);
                        self.set_wait_reason(tid, crate::delayacct::WaitReason::ReclaimWait);
                        return Ok(Some(crate::task::Step::SleepUntil { t: self.now + ns, io: true }));
                    }
                }
                CgNext::Reclaim { nr, may_swap } => {
                    if timed && self.tasks[tid as usize].wait_after.is_some() {
                        // lru_add_drain_all's flush_work first; the reclaim after it.
                        st.after_drain = Some(next);
                        self.tasks[tid as usize].cg_write = Some(st);
                        return Ok(Some(crate::task::Step::Yield));
                    }
                    if timed {
                        self.start_memcg_reclaim(tid, st.id, nr, may_swap);
                        self.tasks[tid as usize].cg_write = Some(st);
                        return Ok(Some(crate::task::Step::Yield));
                    }
                    st.last = Some(self.try_to_free_mem_cgroup_pages(st.id, nr, Some(tid), may_swap).nr_reclaimed);
                }
            }
        }
    }

    /// Drain the CPUs' charge stocks of the write's cgroup if this write has not yet:
    /// whether it did.
    fn drain_stock_once(&mut self, st: &mut CgWriteReclaim) -> bool {
        if st.stock_drained {
            return false;
        }
        st.stock_drained = true;
        self.memcg.drain_all_stock(st.id);
        true
    }

    /// One turn of a reclaiming write's loop, after the round of reclaim that returned
    /// `st.last` pages: what it does next.
    fn cg_write_next(&mut self, tid: TaskId, st: &mut CgWriteReclaim) -> CgNext {
        let id = st.id;
        let last = st.last.take();
        let usage = self.memcg.cgs[id as usize].memory.usage;
        match st.kind {
            CgWriteKind::High { high } => {
                // memory_high_write: `if (!reclaimed && !nr_retries--) break;`.
                if last == Some(0) {
                    if st.retries == 0 {
                        return CgNext::Done(Ok(()));
                    }
                    st.retries -= 1;
                }
                if usage <= high {
                    return CgNext::Done(Ok(()));
                }
                // `if (!drained) { drain_all_stock(memcg); drained = true; continue; }`
                if self.drain_stock_once(st) {
                    return self.cg_write_next(tid, st);
                }
                CgNext::Reclaim { nr: usage - high, may_swap: true }
            }
            CgWriteKind::Max { max } => {
                // memory_max_write: reclaim down to the new limit, MAX_RECLAIM_RETRIES
                // rounds without progress at most, then the OOM killer until usage fits or
                // nothing is left to kill.
                if last == Some(0) {
                    st.retries -= 1;
                }
                for _ in 0..10_000 {
                    let usage = self.memcg.cgs[id as usize].memory.usage;
                    if usage <= max {
                        return CgNext::Done(Ok(()));
                    }
                    if self.drain_stock_once(st) {
                        continue;
                    }
                    if st.retries > 0 {
                        return CgNext::Reclaim { nr: usage - max, may_swap: true };
                    }
                    self.memcg.event(id, MemcgEvent::Oom);
                    if !self.mem_cgroup_out_of_memory(id, tid) {
                        break;
                    }
                }
                CgNext::Done(Ok(()))
            }
            CgWriteKind::Reclaim { want } => {
                // memory_reclaim: proactive reclaim of `want` pages, SWAP_CLUSTER_MAX a
                // round; EAGAIN when reclaim stops making progress first.
                if let Some(r) = last {
                    if r == 0 {
                        if st.retries == 0 {
                            return CgNext::Done(Err(Errno::EAGAIN.into()));
                        }
                        st.retries -= 1;
                    }
                    st.done += r;
                }
                if st.done >= want {
                    return CgNext::Done(Ok(()));
                }
                if st.retries == 0 {
                    // "This is the final attempt, drain percpu lru caches" (6.1).
                    self.lru_add_drain_all();
                }
                CgNext::Reclaim { nr: (want - st.done).min(crate::mm::SWAP_CLUSTER_MAX), may_swap: true }
            }
            CgWriteKind::ForceEmpty => {
                // mem_cgroup_force_empty: drain the batches (lru_add_drain_all), then reclaim
                // everything, the era's retries of rounds without progress at most, each
                // followed by congestion_wait before 5.16.
                if !st.drained {
                    if self.profile.force_empty_moves_to_parent && self.memcg_busy(id) {
                        // 2.6.39's try_to_free: "returns EBUSY if there is a task".
                        return CgNext::Done(Err(Errno::EBUSY));
                    }
                    st.drained = true;
                    self.lru_add_drain_all();
                    self.memcg.drain_all_stock(id);
                }
                if last == Some(0) {
                    st.retries -= 1;
                    if self.profile.force_empty_congestion_wait {
                        return CgNext::Sleep(NS_PER_SEC / 10);
                    }
                }
                if st.retries == 0 || usage == 0 {
                    if self.profile.force_empty_moves_to_parent && usage > 0 {
                        // move_account: what reclaim could not free is charged to the
                        // parent instead (mem_cgroup_force_empty_list ->
                        // mem_cgroup_move_parent), until usage is 0.
                        self.memcg_move_charges_to_parent(id);
                    }
                    return CgNext::Done(Ok(()));
                }
                CgNext::Reclaim { nr: 1, may_swap: true }
            }
            CgWriteKind::ResizeMax { max, memsw } => {
                // mem_cgroup_resize_max (v1 limit_in_bytes / memsw.limit_in_bytes): the
                // memory limit may not exceed memsw's (EINVAL); lowering it below usage
                // reclaims, EBUSY when a round reclaims nothing.
                if last == Some(0) {
                    return CgNext::Done(Err(Errno::EBUSY.into()));
                }
                let c = &self.memcg.cgs[id as usize];
                let invariant = if memsw { max >= c.memory.max } else { max <= c.memsw.max };
                if !invariant {
                    return CgNext::Done(Err(Errno::EINVAL.into()));
                }
                let usage = if memsw { c.memsw.usage } else { c.memory.usage };
                if usage > max && self.drain_stock_once(st) {
                    // mem_cgroup_resize_max: `if (!drained) { drain_all_stock(memcg); ...}`
                    return self.cg_write_next(tid, st);
                }
                if usage <= max {
                    let c = &mut self.memcg.cgs[id as usize];
                    if memsw {
                        c.memsw.max = max;
                    } else {
                        c.memory.max = max;
                    }
                    return CgNext::Done(Ok(()));
                }
                CgNext::Reclaim { nr: 1, may_swap: !memsw }
            }
        }
    }

    /// /proc/PID/cgroup.
    pub fn proc_pid_cgroup(&self, tid: TaskId) -> String {
        let path = &self.memcg.cgs[self.tasks[tid as usize].memcg as usize].path;
        match self.memcg.mode {
            CgroupMode::None => String::new(),
            CgroupMode::V1 => format!("4:memory:{path}\n1:name=systemd:/\n0::/\n"),
            CgroupMode::V2 => format!("0::{path}\n"),
        }
    }
}

/// Which reclaiming write a `CgWriteReclaim` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgWriteKind {
    /// memory_high_write.
    High { high: u64 },
    /// memory_max_write.
    Max { max: u64 },
    /// memory_reclaim.
    Reclaim { want: u64 },
    /// mem_cgroup_force_empty (v1 memory.force_empty).
    ForceEmpty,
    /// mem_cgroup_resize_max (v1 memory.limit_in_bytes, memory.memsw.limit_in_bytes).
    ResizeMax { max: u64, memsw: bool },
}

/// What a reclaiming write does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CgNext {
    Reclaim { nr: u64, may_swap: bool },
    /// Sleep this long (congestion_wait), then go on.
    Sleep(Ns),
    Done(Result<(), Errno>),
}

/// A write to a cgroup file that reclaims, between its rounds of reclaim (`Task::cg_write`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CgWriteReclaim {
    pub kind: CgWriteKind,
    pub id: MemcgId,
    /// Rounds without progress left (nr_retries, nr_reclaims: MAX_RECLAIM_RETRIES).
    pub retries: u32,
    /// Pages reclaimed so far (memory_reclaim's nr_reclaimed).
    pub done: u64,
    /// Pages the last round reclaimed (None: no round yet).
    pub last: Option<u64>,
    /// force_empty drained the batches.
    drained: bool,
    /// The CPUs' charge stocks were drained (drain_all_stock, once per write).
    stock_drained: bool,
    /// The round to start once lru_add_drain_all's flush_work is over.
    after_drain: Option<CgNext>,
}

impl CgWriteReclaim {
    fn new(kind: CgWriteKind, id: MemcgId, retries: u32) -> CgWriteReclaim {
        CgWriteReclaim {
            kind,
            id,
            retries,
            done: 0,
            last: None,
            drained: false,
            stock_drained: false,
            after_drain: None,
        }
    }
}
