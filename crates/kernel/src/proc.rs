//! /proc as the tools read it (fs/proc/meminfo.c, mm/vmstat.c, fs/proc/stat.c): a snapshot
//! of the model's counters. Reading never changes state.

use crate::mm::page::Lru;
use crate::mm::KernelOwner;
use crate::Kernel;
use memtwin_engine::RunState;
use memtwin_procfs::{CpuStat, MemInfo, Snapshot, TaskInfo, TaskState, VmItem};

/// kernel/sched/loadavg.c: avenrun[] in FSHIFT fixed point, updated every LOAD_FREQ.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadAvg {
    pub avenrun: [u64; 3],
    /// Samples taken so far (the next is at LOAD_FREQ * (samples + 1)).
    pub samples: u64,
}

const FSHIFT: u32 = 11;
const FIXED_1: u64 = 1 << FSHIFT;
const EXP: [u64; 3] = [1884, 2014, 2037];
/// LOAD_FREQ = 5 * HZ + 1 jiffies; HZ = 250 (distribution kernels): 5.004 s.
const LOAD_FREQ_NS: u64 = 5 * memtwin_engine::NS_PER_SEC + memtwin_engine::NS_PER_SEC / 250;

// calc_load (kernel/sched/loadavg.c) is psi's too: one fixed-point decay step.
use crate::psi::calc_load;

impl LoadAvg {
    /// /proc/loadavg's figures: LOAD_INT.LOAD_FRAC, two decimals as the kernel prints them.
    pub fn figures(&self) -> [f64; 3] {
        self.avenrun.map(|x| {
            let x = x + FIXED_1 / 200; // get_avenrun(.., FIXED_1/200, 0): rounding
            let int = x >> FSHIFT;
            let frac = ((x & (FIXED_1 - 1)) * 100) >> FSHIFT;
            int as f64 + frac as f64 / 100.0
        })
    }
}

/// A task's memory as smaps sums it (pages; PSS in fractional pages).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TaskPss {
    pub rss: u64,
    pub pss: f64,
    pub uss: u64,
    pub swap: u64,
    pub swap_pss: f64,
    /// Resident pages by kind, and the PSS of file and shmem pages.
    pub anon: u64,
    pub file: u64,
    pub shmem: u64,
    pub pss_file: f64,
    pub pss_shmem: f64,
    /// Pages of mappings this task alone maps, and of mappings others map too (smaps'
    /// Private_* / Shared_*: file pages count as clean, shmem and anon as dirty).
    pub private_file: u64,
    pub private_shmem: u64,
    pub shared_file: u64,
    pub shared_shmem: u64,
}

impl Kernel {
    /// A task's memory as /proc/PID/smaps sums it (smaps_account): RSS, PSS (each resident
    /// page of a mapping shared by N live tasks counts 1/N), USS (pages no other task maps)
    /// and swap, in pages. The model's sharing unit is the mapping: a file or shmem object
    /// mapped by several tasks is shared page for page; anonymous memory is private.
    pub fn task_pss(&self, tid: memtwin_engine::TaskId) -> TaskPss {
        let t = &self.tasks[tid as usize];
        let (_, _file, _shmem, swap) = self.task_mem(tid);
        let anon = t.anon_mapping.map_or(t.rss_anon, |m| self.mm.mappings[m as usize].nrpages);
        // The task's own file pages outside its mappings (t.rss_file) are private to it.
        let mut out = TaskPss { rss: anon + t.rss_file, pss: (anon + t.rss_file) as f64, uss: anon + t.rss_file, swap, swap_pss: swap as f64, anon, ..Default::default() };
        out.file = t.rss_file;
        out.pss_file = t.rss_file as f64;
        out.private_file = t.rss_file;
        let live = |x: &crate::task::Task| x.exit_code.is_none() && !x.reaped;
        for &m in &t.vmas {
            let s = &self.mm.mappings[m as usize];
            if !s.live {
                continue;
            }
            let mappers = self.tasks.iter().filter(|x| live(x) && x.vmas.contains(&m)).count().max(1) as u64;
            let share = s.nrpages as f64 / mappers as f64;
            out.rss += s.nrpages;
            out.pss += share;
            let shmem = matches!(s.kind, crate::mm::MappingKind::Shmem);
            if shmem {
                out.shmem += s.nrpages;
                out.pss_shmem += share;
                out.swap_pss += s.nr_swapped as f64 / mappers as f64 - s.nr_swapped as f64;
            } else {
                out.file += s.nrpages;
                out.pss_file += share;
            }
            match (mappers == 1, shmem) {
                (true, true) => out.private_shmem += s.nrpages,
                (true, false) => out.private_file += s.nrpages,
                (false, true) => out.shared_shmem += s.nrpages,
                (false, false) => out.shared_file += s.nrpages,
            }
            if mappers == 1 {
                out.uss += s.nrpages;
            }
        }
        out
    }

    /// /proc/PID/wchan (get_wchan): the kernel function a sleeping task sleeps in, as each
    /// era names it; "" for a running task. The model knows why a task sleeps (its wait
    /// reason, a kernel thread's loop, a pipe), not the call stack, so this is the function
    /// of that sleep.
    pub fn wchan(&self, tid: memtwin_engine::TaskId) -> &'static str {
        use crate::delayacct::WaitReason as W;
        use memtwin_machine::KernelProfile as P;
        let t = &self.tasks[tid as usize];
        let st = &self.sched.tasks[tid as usize];
        let era = self.machine.kernel;
        let page_wait = match era {
            P::Linux6 => "folio_wait_bit_common",
            P::Linux58 | P::Linux5Pre59 => "wait_on_page_bit_common",
            P::Linux2639 => "sleep_on_page",
            P::Linux24 => "___wait_on_page",
        };
        match st.state {
            RunState::Runnable | RunState::Running | RunState::Zombie => return "",
            _ => {}
        }
        if t.kthread {
            let c = t.comm.as_str();
            return if c.starts_with("kswapd") {
                "kswapd"
            } else if c.starts_with("flush-") {
                "bdi_writeback_thread"
            } else if c.starts_with("kworker") {
                "worker_thread"
            } else if c.starts_with("nfsd") {
                "svc_recv"
            } else if c.starts_with("kcompactd") {
                "kcompactd"
            } else if c.starts_with("kjournald") {
                "kjournald"
            } else if c.starts_with("jbd2") {
                "kjournald2"
            } else if c == "kthreadd" {
                "kthreadd"
            } else {
                "smpboot_thread_fn"
            };
        }
        if matches!(self.waits.get(tid).map(|w| w.on), Some(crate::wait::WaitOn::FlushSubmit { .. })) {
            // A submitter waiting for a request slot (blk-mq since 3.13; the request
            // lists' get_request_wait before).
            return match era {
                P::Linux6 | P::Linux58 | P::Linux5Pre59 => "blk_mq_get_tag",
                P::Linux2639 => "get_request_wait",
                P::Linux24 => "__get_request_wait",
            };
        }
        match t.wait_reason {
            Some(W::Blkio | W::Swapin | W::Thrashing) => page_wait,
            Some(W::DirtyThrottle) => "balance_dirty_pages",
            Some(W::ReclaimWait) => if matches!(era, P::Linux6) { "reclaim_throttle" } else { "congestion_wait" },
            Some(W::MemcgHigh) => "mem_cgroup_handle_over_high",
            Some(W::Lock) => "rwsem_down_read_slowpath",
            _ if st.state == RunState::DiskSleep => "io_schedule",
            _ if t.stdin_pipe.is_some() => "pipe_read",
            _ => "hrtimer_nanosleep",
        }
    }

    /// calc_global_load: at every LOAD_FREQ boundary up to `t`, fold nr_running +
    /// nr_uninterruptible (the state since the last event) into the three averages.
    pub(crate) fn calc_global_load(&mut self, t: memtwin_engine::Ns) {
        while LOAD_FREQ_NS * (self.load.samples + 1) <= t {
            let active = (self.sched.nr_running() + self.sched.nr_iowait()) as u64 * FIXED_1;
            for i in 0..3 {
                self.load.avenrun[i] = calc_load(self.load.avenrun[i], EXP[i], active);
            }
            self.load.samples += 1;
        }
    }

    /// si_mem_available: free memory less reserves, plus the page cache and reclaimable
    /// slab that could be freed without swapping (half of each is assumed to be needed).
    pub fn mem_available_pages(&self) -> u64 {
        let free = self.mm.nr_free() as i64;
        let totalreserve = self.mm.wmark.high as i64;
        // totalreserve_pages is fixed when the watermarks are set; low_wmark_pages has the
        // boost of the moment.
        let wlow = self.mm.wmark_pages().low as i64;
        let mut available = free - totalreserve;
        let pagecache = self.mm.file_lru() as i64;
        available += pagecache - (pagecache / 2).min(wlow);
        let reclaimable = self.mm.slab.pages(true) as i64;
        available += reclaimable - (reclaimable / 2).min(wlow);
        available.max(0) as u64
    }

    pub fn meminfo(&self) -> MemInfo {
        let kb = |pages: u64| pages * 4;
        let mm = &self.mm;
        let l = |x: Lru| mm.lru_len(x);
        let (st, sf) = self.swap_totals();
        let (swap_total, swap_free) = (kb(st), kb(sf));
        let s = &mm.stat;
        let k = &mm.kernel;
        let cached = s.file_pages.saturating_sub(s.buffers);
        let sums = mm.mapping_sums();
        MemInfo {
            mem_total: kb(mm.managed),
            mem_free: kb(mm.nr_free()),
            mem_available: kb(self.mem_available_pages()),
            buffers: kb(s.buffers),
            cached: kb(cached),
            swap_cached: kb(sums.swapcache),
            active: kb(l(Lru::ActiveAnon) + l(Lru::ActiveFile)),
            inactive: kb(l(Lru::InactiveAnon) + l(Lru::InactiveFile)),
            active_anon: kb(l(Lru::ActiveAnon)),
            inactive_anon: kb(l(Lru::InactiveAnon)),
            active_file: kb(l(Lru::ActiveFile)),
            inactive_file: kb(l(Lru::InactiveFile)),
            unevictable: kb(l(Lru::Unevictable)),
            mlocked: 0,
            swap_total,
            swap_free,
            zswap: 0,
            zswapped: 0,
            dirty: kb(s.dirty),
            writeback: kb(s.writeback),
            anon_pages: kb(s.anon),
            mapped: kb(s.mapped),
            shmem: kb(s.shmem),
            kreclaimable: kb(self.mm.slab.pages(true)),
            slab: kb(self.mm.slab.pages(true) + self.mm.slab.pages(false)),
            sreclaimable: kb(self.mm.slab.pages(true)),
            sunreclaim: kb(self.mm.slab.pages(false)),
            kernel_stack: kb(k.count(KernelOwner::KernelStack)),
            page_tables: kb(k.count(KernelOwner::PageTables)),
            commit_limit: kb(mm.managed * self.sysctl.overcommit_ratio as u64 / 100) + swap_total,
            committed_as: kb(self.committed_as_with(&sums)),
        }
    }

    /// The text of /proc/vmstat as the profile's kernel prints it; None on 2.4, which has
    /// no such file.
    pub fn vmstat_text(&self) -> Option<String> {
        let layout = self.profile.vmstat_layout?;
        Some(self.vmstat().render_layout(layout, self.zone_name()))
    }

    /// The paging counters as this era's kernel shows them, (name, value) in its order:
    /// its /proc/vmstat (`vmstat_text`), or on 2.4, which has none, the kernel_stat fields
    /// behind /proc/stat's `page` and `swap` lines (pgpgin, pgpgout in KiB; pswpin,
    /// pswpout in pages).
    pub fn vmstat_series(&self) -> Vec<(String, u64)> {
        let v = self.vmstat();
        match self.profile.vmstat_layout {
            Some(layout) => v.layout_values(layout, self.zone_name()),
            None => [VmItem::Pgpgin, VmItem::Pgpgout, VmItem::Pswpin, VmItem::Pswpout].iter().map(|&i| (i.name().to_string(), v.get(i))).collect(),
        }
    }

    /// The /proc/vmstat values: event counters plus the current gauges.
    pub fn vmstat(&self) -> memtwin_procfs::VmStat {
        let mut v = self.vm.clone();
        let mm = &self.mm;
        let s = &mm.stat;
        let lim = self.dirty_limits();
        for (item, val) in [
            (VmItem::NrFreePages, mm.nr_free()),
            (VmItem::NrZoneInactiveAnon, mm.lru_len(Lru::InactiveAnon)),
            (VmItem::NrZoneActiveAnon, mm.lru_len(Lru::ActiveAnon)),
            (VmItem::NrZoneInactiveFile, mm.lru_len(Lru::InactiveFile)),
            (VmItem::NrZoneActiveFile, mm.lru_len(Lru::ActiveFile)),
            (VmItem::NrZoneUnevictable, mm.lru_len(Lru::Unevictable)),
            (VmItem::NrZoneWritePending, s.dirty + s.writeback),
            (VmItem::NrInactiveAnon, mm.lru_len(Lru::InactiveAnon)),
            (VmItem::NrActiveAnon, mm.lru_len(Lru::ActiveAnon)),
            (VmItem::NrInactiveFile, mm.lru_len(Lru::InactiveFile)),
            (VmItem::NrActiveFile, mm.lru_len(Lru::ActiveFile)),
            (VmItem::NrUnevictable, mm.lru_len(Lru::Unevictable)),
            (VmItem::NrIsolatedAnon, s.isolated_anon),
            (VmItem::NrIsolatedFile, s.isolated_file),
            (VmItem::NrSlabReclaimable, mm.slab.pages(true)),
            (VmItem::NrSlabUnreclaimable, mm.slab.pages(false)),
            (VmItem::WorkingsetNodes, mm.shadow_nodes()),
            (VmItem::NrAnonPages, s.anon),
            (VmItem::NrMapped, s.mapped),
            (VmItem::NrFilePages, s.file_pages),
            (VmItem::NrDirty, s.dirty),
            (VmItem::NrWriteback, s.writeback),
            (VmItem::NrShmem, s.shmem),
            (VmItem::NrKernelStack, mm.kernel.count(KernelOwner::KernelStack) * 4),
            (VmItem::NrPageTablePages, mm.kernel.count(KernelOwner::PageTables)),
            (VmItem::NrDirtyThreshold, lim.thresh),
            (VmItem::NrDirtyBackgroundThreshold, lim.background),
        ] {
            v.set(item, val);
        }
        v
    }

    pub fn snapshot(&self) -> Snapshot {
        let c = &self.sched.cpu;
        let mut cpu = c.clone();
        cpu.advance(self.now);
        let mut tasks: Vec<TaskInfo> = self
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.exit_code.is_none())
            .map(|(i, t)| {
                let st = &self.sched.tasks[i];
                let state = match st.state {
                    RunState::Runnable | RunState::Running => TaskState::Running,
                    // TASK_IDLE shows as 'I' since 4.14 (task_state_to_char): idle kworkers
                    // sleep in it; kswapd, kcompactd and the 2.6.39 flusher threads sleep
                    // interruptibly ('S'), as every thread did before 4.14.
                    RunState::Sleeping => {
                        let idle_state = !matches!(self.machine.kernel, memtwin_machine::KernelProfile::Linux2639 | memtwin_machine::KernelProfile::Linux24);
                        if t.kthread && idle_state && t.comm.starts_with("kworker") { TaskState::Idle } else { TaskState::Sleeping }
                    }
                    RunState::DiskSleep => TaskState::DiskSleep,
                    RunState::Zombie => TaskState::Zombie,
                };
                let (ut, stime) = (st.utime, st.stime);
                // RSS from the address spaces the task maps (file mappings: their resident
                // pages; shared by several mappers, each is charged in full, as Linux does).
                let mut rss_file = t.rss_file;
                let mut rss_shmem = 0;
                let mut swap = 0;
                for &m in &t.vmas {
                    let s = &self.mm.mappings[m as usize];
                    if !s.live {
                        continue;
                    }
                    match s.kind {
                        crate::mm::MappingKind::Shmem => {
                            rss_shmem += s.nrpages;
                            swap += s.nr_swapped;
                        }
                        _ => rss_file += s.nrpages,
                    }
                }
                let rss_anon = t.anon_mapping.map_or(t.rss_anon, |m| self.mm.mappings[m as usize].nrpages);
                swap += t.anon_mapping.map_or(0, |m| self.mm.mappings[m as usize].nr_swapped);
                TaskInfo {
                    pid: t.pid,
                    comm: self.task_comm(i as memtwin_engine::TaskId),
                    cmdline: t.cmdline.clone(),
                    kthread: t.kthread,
                    user: "root".to_string(),
                    state,
                    // task_prio: prio - MAX_RT_PRIO, 20 + nice for a normal task.
                    prio: 20 + st.nice,
                    nice: st.nice,
                    virt_kb: t.vm_kb,
                    res_kb: (rss_anon + rss_file + rss_shmem) * 4,
                    shr_kb: (rss_file + rss_shmem) * 4,
                    swap_kb: swap * 4,
                    utime_ns: ut,
                    stime_ns: stime,
                    read_bytes: t.read_bytes,
                    write_bytes: t.write_bytes,
                    swapin_delay_ns: t.swapin_delay,
                    blkio_delay_ns: st.blkio_delay + if st.state == RunState::DiskSleep { self.now - st.sleep_start } else { 0 },
                    start_ns: t.start,
                    wchan: self.wchan(i as memtwin_engine::TaskId),
                    cpu: st.cpu,
                }
            })
            .collect();
        // The task list in pid order (slots of reaped tasks are reused).
        tasks.sort_by_key(|t| t.pid);
        Snapshot {
            uptime_ns: self.now,
            ncpus: self.machine.cpus,
            mem: self.meminfo(),
            vm: self.vmstat(),
            cpu: CpuStat { user: cpu.user, nice: cpu.nice, system: cpu.system, idle: cpu.idle, iowait: cpu.iowait, ..Default::default() },
            // Idle tickless CPUs still take ~10 timer/IPI interrupts a second each.
            intr: self.intr + self.now / 100_000_000 * self.machine.cpus as u64,
            ctxt: self.sched.ctxt,
            processes: self.forks,
            procs_running: self.sched.nr_running(),
            procs_blocked: self.sched.nr_iowait(),
            tasks,
            loadavg: self.load.figures(),
            disks: self.diskstats(),
        }
    }

    /// The block devices' accounting as /proc/diskstats prints it (diskstats_show), in
    /// (major, minor) order.
    pub fn diskstats(&self) -> Vec<memtwin_procfs::DiskStat> {
        let ms = |ns: u64| ns / 1_000_000;
        let mut v: Vec<memtwin_procfs::DiskStat> = self
            .block
            .devs
            .iter()
            .map(|d| {
                let s = d.stats_at(self.now);
                memtwin_procfs::DiskStat {
                    major: d.disk.major,
                    minor: d.disk.minor,
                    name: d.disk.name.clone(),
                    ios: s.ios,
                    merges: s.merges,
                    sectors: s.sectors,
                    ticks_ms: s.nsecs.map(ms),
                    in_flight: d.inflight.len() as u64,
                    io_ticks_ms: ms(s.io_ticks),
                    // 5.0+: the sum of the directions' times (the integral of the requests
                    // in flight over time, which 2.6.x accumulated in part_round_stats).
                    time_in_queue_ms: ms(s.nsecs.iter().sum()),
                }
            })
            .collect();
        v.sort_by_key(|d| (d.major, d.minor));
        v
    }
}
