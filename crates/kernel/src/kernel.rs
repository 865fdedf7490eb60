//! The simulated machine: its state and the event loop that runs tasks on CPUs.

use crate::block::{Block, Dir, ReqKind};
use crate::fs::Fs;
use crate::mm::{KernelOwner, MappingKind, Mm, PAGE_SIZE};
use crate::profile::Profile;
use crate::task::{Program, Sink, Step, Task};
use memtwin_engine::{EventQueue, Ns, Rng, RunState, Sched, TaskId};
use memtwin_machine::{KernelProfile, Machine, Sysctls};
use memtwin_procfs::VmStat;

/// CPU time of a context switch through the scheduler.
const YIELD_NS: Ns = 2_000;

/// Things that happen at a point in simulated time.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// Wake a sleeping task (ignored if the sequence number is stale).
    Wake(TaskId, u32),
    /// The CPU burst of a task ends.
    BurstDone(TaskId),
    /// A block request completes.
    IoDone(u32),
    /// An NFS request from load process N reaches the server, or (top bit set) the
    /// process sends its next one (fs/nfsd.rs).
    NfsRpc(u32),
    /// RCU callbacks whose grace period has ended run (rcu.rs).
    RcuCallbacks,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelError(pub String);

impl std::fmt::Display for KernelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub struct Kernel {
    pub now: Ns,
    pub machine: Machine,
    pub sysctl: Sysctls,
    pub events: EventQueue<Event>,
    pub sched: Sched,
    pub tasks: Vec<Task>,
    pub mm: Mm,
    pub fs: Fs,
    pub block: Block,
    /// /proc/vmstat event counters (gauges are filled in by `proc::snapshot`).
    pub vm: VmStat,
    pub rng: Rng,
    /// What tasks printed to the terminal, in time order.
    pub transcript: String,
    /// The kernel log (dmesg).
    pub log: crate::printk::LogBuf,
    /// Captured output of redirected commands.
    pub buffers: Vec<String>,
    /// Buffers released by their readers (`release_buffer`), reused by `new_buffer`: a
    /// script's thousands of `$(...)` and pipeline stages need as many buffers as run at
    /// once, not one each.
    free_buffers: Vec<u32>,
    /// Pipes (fs/pipe.c), by index; see `crate::pipe`.
    pub pipes: Vec<crate::pipe::Pipe>,
    /// Pipes whose ends have all been closed, reused by pipe_create.
    pub free_pipes: Vec<u32>,
    /// Interrupts since boot (/proc/stat intr).
    pub intr: u64,
    pub forks: u64,
    next_pid: u32,
    /// kswapd, direct reclaimers and tasks throttled by reclaim; reclaim statistics.
    pub reclaim: ReclaimState,
    /// Tasks waiting for another to exit: (waiter, waited-for).
    pub exit_waiters: Vec<(TaskId, TaskId)>,
    /// Slots of reaped tasks, reused by the next spawn (the task table's size follows the
    /// tasks alive, not every task a run has started).
    free_tids: Vec<TaskId>,
    /// User and system CPU time of the user tasks that have exited (the shell's children:
    /// RUSAGE_CHILDREN, what bash's `time` reports), accumulated at exit.
    pub children_utime: u64,
    pub children_stime: u64,
    /// Check the frame invariants after every event (debug mode).
    pub debug_invariants: bool,
    /// Sequential page-cache I/O one page per loop step, without the run fast paths
    /// (mm/filemap.rs `filemap_read_run`, `generic_perform_write`'s runs): the reference
    /// the fast paths are checked against (same counters, same transcript). Taken at boot
    /// from `mm::filemap::per_page_io()`.
    pub per_page_io: bool,
    /// The load average (calc_global_load), see proc.rs.
    pub load: crate::proc::LoadAvg,
    /// The flushers' wait states and sync requests.
    pub writeback: WritebackState,
    /// Swap areas and swap I/O in flight.
    pub swap: SwapState,
    /// The idle system's binaries and shared libraries (mapped, executable).
    pub system_libs: Option<u32>,
    /// The era's rules (built once from `machine.kernel`).
    pub profile: Profile,
    /// Memory cgroups (mm/memcontrol.rs).
    pub memcg: crate::mm::memcontrol::MemCgroups,
    /// Pressure stall information (/proc/pressure), see psi.rs.
    pub psi: crate::psi::Psi,
    /// The dentry and inode caches of the generated trees (fs/vfs.rs, fs/namei.rs).
    pub vfs: crate::fs::vfs::Vfs,
    /// Buffer heads of page-cache pages (fs/buffer.c).
    pub bh: crate::fs::buffer::BufferHeads,
    /// The radix_tree_node objects of page-cache trees (mm/radix_tree.rs).
    pub radix: crate::mm::radix_tree::RadixNodes,
    /// Registered shrinkers and the locks of slab reclaim (mm/shrinker.rs).
    pub shrink: crate::mm::shrinker::Shrinkers,
    /// The NFS server's threads and the load driving it (fs/nfsd.rs).
    pub nfsd: crate::fs::nfsd::Nfsd,
    /// The task whose program step or kernel path is running (`current`): frees done
    /// for it go to its CPU's page list, and lock waits are its.
    pub current: Option<TaskId>,
    /// The CPU of work done in no task's context (RCU callbacks): its frees go to that
    /// CPU's lists.
    pub(crate) irq_cpu: Option<u32>,
    /// Callbacks waiting for an RCU grace period (rcu.rs).
    pub rcu: crate::rcu::Rcu,
    /// Tasks asleep in wait paths for I/O (wait.rs).
    pub waits: crate::wait::WaitPaths,
}

/// Reclaim's tasks, paths in progress, locks, waiters and statistics.
#[derive(Default)]
pub struct ReclaimState {
    pub kswapd: TaskId,
    pub kswapd_waiting: bool,
    /// Tasks throttled in reclaim or waiting for writeback to make progress.
    pub writeback_waiters: Vec<TaskId>,
    /// The reclaim path each task is in (by task id): advanced by the event loop until
    /// done, then collected by the code that started it (mm/vmscan.rs).
    pub paths: Vec<Option<Box<crate::mm::vmscan::ReclaimPath>>>,
    /// Direct reclaimers asleep in too_many_isolated (reclaim_throttle).
    pub isolated_waiters: Vec<TaskId>,
    /// Until when kswapd sleeps in reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK) (5.16+):
    /// while it does, pgdat->nr_writeback_throttled is non-zero and every page whose
    /// writeback ends counts NR_THROTTLED_WRITTEN (acct_reclaim_writeback).
    pub writeback_throttled_until: Option<Ns>,
    /// v1 cgroup reclaimers asleep in reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK) after
    /// waking the flushers (6.1+), and NR_THROTTLED_WRITTEN when the first of them began
    /// (pgdat->nr_reclaim_start): they are woken once more than SWAP_CLUSTER_MAX pages
    /// each have completed writeback.
    pub wb_throttle_waiters: Vec<TaskId>,
    pub wb_throttle_start: u64,
    /// Direct reclaimers asleep in throttle_direct_reclaim (pgdat->pfmemalloc_wait, 3.6+).
    pub pfmemalloc_waiters: Vec<TaskId>,
    /// lru_lock of each lruvec (or of the node, before 5.11), and who took each last.
    pub lru_locks: Vec<memtwin_engine::LockQueue>,
    pub lru_lock_holders: Vec<u32>,
    /// Scratch list of an LRU-add batch being drained (mm/swap.rs).
    pub drain_buf: Vec<(crate::mm::page::Pfn, crate::mm::page::Lru)>,
    /// Work items lru_add_drain_all queued on CPUs (lru_add_drain_per_cpu).
    pub drain_all_works: u64,
    /// The entries of the move batch being drained (page, mapping it was queued for).
    pub move_buf: Vec<(crate::mm::page::Pfn, u32)>,
    /// Frames freed while a reclaim batch decides (freed by the batch afterwards).
    pub defer_free: bool,
    pub deferred: Vec<crate::mm::page::Pfn>,
    /// Extra CPU work of the batch being decided (zram compression, request submission).
    pub pass_ns: Ns,
    /// Slab pages freed by shrinkers since the reclaim that runs them last looked
    /// (current->reclaim_state->reclaimed_slab).
    pub reclaimed_slab: u64,
    /// Time the path's current step spun on zone->lock (freeing to the buddy lists) or on
    /// lru_lock outside its own states (draining an LRU-add batch), run as part of its
    /// next burst.
    pub zone_spin: Ns,
    /// A reclaim path is being advanced (`Kernel::run_kpath`): lock waits go to its burst.
    pub advancing: bool,
    pub stats: ReclaimStats,
}

impl ReclaimState {
    pub(crate) fn set_path(&mut self, tid: TaskId, p: crate::mm::vmscan::ReclaimPath) {
        if self.paths.len() <= tid as usize {
            self.paths.resize_with(tid as usize + 1, || None);
        }
        self.paths[tid as usize] = Some(Box::new(p));
    }
    /// The task is inside a reclaim path that is not finished.
    #[inline]
    pub fn in_path(&self, tid: TaskId) -> bool {
        matches!(self.paths.get(tid as usize), Some(Some(p)) if !p.done())
    }
    /// The finished global reclaim path (direct, kswapd, split) of `tid`, if any.
    pub fn take_done(&mut self, tid: TaskId) -> Option<Box<crate::mm::vmscan::ReclaimPath>> {
        self.take_done_where(tid, false)
    }
    /// The finished cgroup reclaim path (try_to_free_mem_cgroup_pages) of `tid`, if any.
    pub fn take_done_memcg(&mut self, tid: TaskId) -> Option<Box<crate::mm::vmscan::ReclaimPath>> {
        self.take_done_where(tid, true)
    }
    /// The finished split-reclaim slab reclaim of `tid`, if any.
    pub fn take_done_split_slab(&mut self, tid: TaskId) -> Option<Box<crate::mm::vmscan::ReclaimPath>> {
        match self.paths.get_mut(tid as usize) {
            Some(slot) if slot.as_ref().is_some_and(|p| p.done() && p.split_slab) => slot.take(),
            _ => None,
        }
    }
    fn take_done_where(&mut self, tid: TaskId, memcg: bool) -> Option<Box<crate::mm::vmscan::ReclaimPath>> {
        match self.paths.get_mut(tid as usize) {
            Some(slot) if slot.as_ref().is_some_and(|p| p.done() && !p.split_slab && p.sc.cgroup_reclaim() == memcg) => slot.take(),
            _ => None,
        }
    }
}

/// The flushers' wait states (mm/page_writeback.rs).
#[derive(Default)]
pub struct WritebackState {
    /// Flushers asleep with nothing urgent (woken for background writeback).
    pub flusher_idle: Vec<TaskId>,
    /// Flushers waiting for a request slot.
    pub flusher_slot_wait: Vec<TaskId>,
    pub sync_requested: bool,
    /// Pages each device's flusher was asked to write for reclaim, dirty thresholds or
    /// not (the wb_writeback_work items of wakeup_flusher_threads), by device.
    pub work_pages: Vec<u64>,
}

/// Swap areas and swap I/O in flight (mm/swapfile.rs, mm/swap_state.rs); the per-slot
/// state is `Mm::swap_map`.
#[derive(Default)]
pub struct SwapState {
    pub areas: Vec<crate::mm::swapfile::SwapArea>,
    /// Swap slots being written / read: slot -> (mapping, index).
    pub wb: crate::mm::swapfile::SlotsInFlight,
    pub rd: crate::mm::swapfile::SlotsInFlight,
    /// Swap writes queued by the reclaim pass in progress.
    pub pending_buf: Vec<u32>,
    /// zram devices set up with zramctl: (disk size, compression algorithm).
    pub zram_disks: Vec<(u64, String)>,
    /// Per-CPU swap slot caches (mm/swap_slots.c) and whether they are active.
    pub slot_caches: Vec<crate::mm::swapfile::SwapSlotsCache>,
    pub slot_cache_active: bool,
    /// Swap-write pages held in reclaimers' block plugs, and the last slot in the plug of
    /// the reclaimer running shrink_folio_list.
    pub plugged: u64,
    pub plug_tail: Option<u32>,
    pub plug_run: usize,
    /// Pages swap-in read into the swap cache that no page table maps yet (the faulting
    /// page until its fault completes, swap readahead's pages until touched): touching one
    /// is do_swap_page, touching any other is a plain access or do_wp_page.
    pub unmapped: crate::idhash::IdSet<(u32, u64)>,
    /// Pages swap readahead brought in that no fault has found yet, with their frame
    /// (PG_readahead, set by swap_cluster_readahead / swap_vma_readahead): the fault that
    /// finds one counts SWAP_RA_HIT (swap_cache_get_folio / lookup_swap_cache).
    pub ra: crate::idhash::IdMap<(u32, u64), crate::mm::page::Pfn>,
    /// swap_cluster_readahead's adaptive window (swapin_nr_pages, 3.15+): readahead pages
    /// found since the last window (swapin_readahead_hits), the offset of the last fault
    /// without hits (prev_offset) and the last window (last_readahead_pages).
    pub ra_hits: u32,
    pub ra_prev_offset: u64,
    pub ra_last_pages: u32,
    /// The slots one swap-in reads (the faulting one and its readahead), reused.
    pub ra_buf: Vec<u32>,
}

/// The reclaim paths whose invocations are recorded (docs/seed-004.md). Classic kernels
/// have kswapd and direct reclaim (try_to_free_pages, and cgroup limit reclaim); split
/// reclaim (seed 004's patch) replaces global direct reclaim by page reclaim and slab reclaim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReclaimKind {
    /// kswapd's balance_pgdat: one record per pass.
    Kswapd = 0,
    /// Classic direct reclaim: try_to_free_pages (page cache, anon and shrink_slab), and
    /// cgroup limit reclaim (try_to_free_mem_cgroup_pages).
    Direct = 1,
    /// Split reclaim's page reclaim: a page allocation below P_start frees page cache and
    /// anon pages only, never calling the shrinkers.
    SplitPage = 2,
    /// Split reclaim's slab reclaim: a slab allocation with slab >= S_start runs the
    /// shrinkers only.
    SplitSlab = 3,
}

impl ReclaimKind {
    pub const ALL: [ReclaimKind; 4] = [ReclaimKind::Kswapd, ReclaimKind::Direct, ReclaimKind::SplitPage, ReclaimKind::SplitSlab];
    /// The name results and `reclaimstat` use: kswapd, direct, split_page, split_slab.
    pub fn name(self) -> &'static str {
        match self {
            ReclaimKind::Kswapd => "kswapd",
            ReclaimKind::Direct => "direct",
            ReclaimKind::SplitPage => "split_page",
            ReclaimKind::SplitSlab => "split_slab",
        }
    }
}

/// Reclaim invocations per path, for latency tables: each one's latency (from entering
/// reclaim to leaving it, waits included) and the part of it spent waiting for locks.
#[derive(Clone, Debug, Default)]
pub struct ReclaimStats {
    /// Per ReclaimKind (kswapd, direct, split page, split slab): latency in ns of each
    /// invocation, in the order they ended.
    pub passes: [Vec<Ns>; 4],
    /// Per ReclaimKind: lock wait in ns of each invocation.
    pub lock_wait: [Vec<Ns>; 4],
    /// The cgroup limit reclaims (try_to_free_mem_cgroup_pages) among the direct ones:
    /// latency and lock wait of each.
    pub memcg_passes: Vec<Ns>,
    pub memcg_lock_wait: Vec<Ns>,
}

/// Count, mean and percentiles of a set of durations.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: Ns,
    pub p99_ns: Ns,
    pub max_ns: Ns,
}

impl LatencySummary {
    /// Nearest-rank percentiles.
    pub fn of(v: &[Ns]) -> LatencySummary {
        if v.is_empty() {
            return LatencySummary::default();
        }
        let mut s = v.to_vec();
        s.sort_unstable();
        let rank = |p: f64| s[((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
        LatencySummary {
            count: s.len() as u64,
            mean_ns: s.iter().map(|&x| x as f64).sum::<f64>() / s.len() as f64,
            p50_ns: rank(0.50),
            p99_ns: rank(0.99),
            max_ns: *s.last().unwrap(),
        }
    }
}

impl ReclaimStats {
    pub fn record(&mut self, kind: ReclaimKind, latency: Ns, lock_wait: Ns) {
        let i = kind as usize;
        self.passes[i].push(latency);
        self.lock_wait[i].push(lock_wait);
    }
    /// A cgroup limit reclaim: a direct reclaim, also kept apart.
    pub fn record_memcg(&mut self, latency: Ns, lock_wait: Ns) {
        self.record(ReclaimKind::Direct, latency, lock_wait);
        self.memcg_passes.push(latency);
        self.memcg_lock_wait.push(lock_wait);
    }
    /// Latency and lock wait of the cgroup limit reclaims.
    pub fn memcg_latency(&self) -> LatencySummary {
        LatencySummary::of(&self.memcg_passes)
    }
    pub fn memcg_lock_wait(&self) -> LatencySummary {
        LatencySummary::of(&self.memcg_lock_wait)
    }
    /// Latency of kswapd's passes (true) or of classic direct reclaim (false).
    pub fn latency(&self, kswapd: bool) -> LatencySummary {
        self.latency_of(if kswapd { ReclaimKind::Kswapd } else { ReclaimKind::Direct })
    }
    /// The lock-wait part of the same invocations.
    pub fn lock_wait(&self, kswapd: bool) -> LatencySummary {
        self.lock_wait_of(if kswapd { ReclaimKind::Kswapd } else { ReclaimKind::Direct })
    }
    pub fn latency_of(&self, kind: ReclaimKind) -> LatencySummary {
        LatencySummary::of(&self.passes[kind as usize])
    }
    pub fn lock_wait_of(&self, kind: ReclaimKind) -> LatencySummary {
        LatencySummary::of(&self.lock_wait[kind as usize])
    }
    /// Add `other`'s records after these (the kernels a reboot replaced first).
    pub fn append(&mut self, other: ReclaimStats) {
        let ReclaimStats { passes, lock_wait, memcg_passes, memcg_lock_wait } = other;
        for (a, b) in self.passes.iter_mut().zip(passes).chain(self.lock_wait.iter_mut().zip(lock_wait)) {
            a.extend(b);
        }
        self.memcg_passes.extend(memcg_passes);
        self.memcg_lock_wait.extend(memcg_lock_wait);
    }
    /// Forget every record (`reclaimstat -z`).
    pub fn clear(&mut self) {
        for v in self.passes.iter_mut().chain(self.lock_wait.iter_mut()) {
            v.clear();
        }
        self.memcg_passes.clear();
        self.memcg_lock_wait.clear();
    }
}

impl Kernel {
    /// Boot a machine. `seed` drives every random choice.
    pub fn boot(machine: Machine, seed: u64) -> Result<Kernel, KernelError> {
        let managed = machine.mem_total_bytes() / PAGE_SIZE;
        if managed < 1024 {
            return Err(KernelError(format!("machine '{}' has too little memory to boot", machine.name)));
        }
        let sysctl = machine.sysctl.clone();
        let wmark = crate::mm::page_alloc::Watermarks::compute(&machine, &sysctl, managed);
        let mm = Mm::try_new(managed, wmark).map_err(KernelError)?;
        let ncpus = machine.cpus;
        let psi = crate::psi::Psi::new(crate::psi::PsiEra::of(machine.kernel), ncpus);
        let mut k = Kernel {
            now: 0,
            sysctl,
            events: EventQueue::new(),
            sched: Sched::new(ncpus),
            tasks: Vec::new(),
            mm,
            fs: Fs::default(),
            block: Block::default(),
            vm: VmStat::default(),
            rng: Rng::new(seed),
            transcript: String::new(),
            log: Default::default(),
            buffers: Vec::new(),
            free_buffers: Vec::new(),
            pipes: Vec::new(),
            free_pipes: Vec::new(),
            intr: 0,
            forks: 0,
            next_pid: 1,
            reclaim: ReclaimState::default(),
            exit_waiters: Vec::new(),
            free_tids: Vec::new(),
            children_utime: 0,
            children_stime: 0,
            debug_invariants: false,
            per_page_io: crate::mm::filemap::per_page_io(),
            load: crate::proc::LoadAvg::default(),
            writeback: WritebackState::default(),
            swap: SwapState::default(),
            system_libs: None,
            memcg: {
                let mut m = crate::mm::memcontrol::MemCgroups::with_root_hierarchy(
                    crate::mm::memcontrol::CgroupMode::for_profile(machine.kernel, machine.cgroup_v1),
                    Profile::of(machine.kernel).memcg_root_use_hierarchy,
                );
                m.charge_batch = Profile::of(machine.kernel).memcg_charge_batch;
                m
            },
            profile: Profile::of(machine.kernel),
            psi,
            vfs: crate::fs::vfs::Vfs::new(machine.kernel, &machine.cpu_model),
            bh: Default::default(),
            radix: Default::default(),
            shrink: Default::default(),
            nfsd: Default::default(),
            current: None,
            irq_cpu: None,
            rcu: Default::default(),
            waits: Default::default(),
            machine,
        };
        let profile = k.profile;
        k.mm.pcp = crate::mm::pcp::Pagesets::new(profile.pcp, ncpus, managed, k.mm.wmark.low);
        k.mm.steal_rule = profile.steal_rule;
        k.mm.watermark_lower_orders = profile.watermark_lower_orders;
        k.mm.zsmalloc_movable = profile.zsmalloc_movable;
        k.mm.fault_around_shift = if profile.fault_around { crate::mm::FAULT_AROUND_SHIFT } else { 0 };
        if profile.migrate_reserve {
            // setup_zone_migrate_reserve: roundup(min watermark, pageblock) blocks, at most
            // 2, from the start of the zone.
            let pb = crate::mm::compaction::PAGEBLOCK_NR_PAGES;
            let reserve = (k.mm.wmark.min.div_ceil(pb)).min(2);
            k.mm.setup_zone_migrate_reserve(reserve);
        }
        k.boot_devices()?;
        k.boot_memory();
        k.boot_trees().map_err(KernelError)?;
        k.boot_swap().map_err(KernelError)?;
        k.sched.fair = crate::ioprio::fair_params(k.machine.kernel, ncpus);
        k.spawn_kernel_threads();
        // Fragmentation events boost the watermarks from now on (the boot's allocations
        // are made before kswapd runs).
        k.mm.watermark_boost_factor = k.watermark_boost_factor();
        // The boot memory is on its lists; from now on new pages go through the era's
        // per-CPU LRU-add batches.
        k.mm.lru_add = crate::mm::swap::LruAddBatches::new(profile.lru_add, ncpus);
        k.mm.lru_move = crate::mm::swap::LruMoveBatches::new(profile.lru_move, ncpus);
        Ok(k)
    }

    fn boot_devices(&mut self) -> Result<(), KernelError> {
        let disks = self.machine.disks.clone();
        for d in &disks {
            let bdev_mapping = self.mm.new_mapping(MappingKind::BlockDev, None, 0);
            let id = self.block.add(d.clone(), bdev_mapping);
            let (_, active) = crate::block::default_elevator(self.machine.kernel, self.machine.cpus, &d.name);
            self.block.devs[id as usize].elevator = crate::block::elevator_for(self.machine.kernel, active);
            self.mm.mappings[bdev_mapping as usize].dev = Some(id);
        }
        let mounts = self.machine.mounts.clone();
        for m in &mounts {
            self.fs.mount(m, &self.block).map_err(KernelError)?;
        }
        self.mount_boot_defaults();
        Ok(())
    }

    /// Memory in use when the scenario starts: the kernel's own allocations, slab, and the
    /// idle system's processes and page cache.
    fn boot_memory(&mut self) {
        let managed = self.mm.managed;
        // Slab at boot: dentries, inodes, kmalloc caches of an idle system (~1% of RAM,
        // at most 64 MiB), two fifths reclaimable; half of the reclaimable part is unused
        // dentries and inodes of files no one holds open (what drop_caches 2 frees).
        let slab = (managed / 100).min(64 * 1024 * 1024 / PAGE_SIZE);
        self.kmem_cache_init();
        self.buffer_init();
        self.radix_tree_init();
        let recl = slab * 2 / 5;
        let boot = self.mm.slab.boot_caches(self.machine.kernel == memtwin_machine::KernelProfile::Linux24);
        // Of the reclaimable part, the nodes of the cached files' trees (below) take theirs.
        let radix = self.radix_tree_pages_for_dense(self.machine.boot_file_bytes / PAGE_SIZE).min(recl);
        let unused = self.mm.boot_populate_slab(boot, recl - radix, slab - recl, recl / 2);
        self.shrink.boot_dentries = unused.into();
        self.take_kernel_pages((self.machine.cpus as u64 * 4).max(16), KernelOwner::KernelStack);
        let anon_pages = self.machine.boot_anon_bytes / PAGE_SIZE;
        self.take_kernel_pages(anon_pages / 128 + 8, KernelOwner::PageTables);
        // The idle system's processes are one task holding the anonymous memory and the
        // cached files (libraries, binaries) of init and its daemons.
        // PID 1 is the userland's init: systemd (Debian 12, Ubuntu 20.04), upstart's
        // /sbin/init (CentOS 6), sysvinit, which rewrites its arguments to "init [3]"
        // (CentOS 3, Red Hat 8).
        let (comm, cmdline) = match self.machine.userland() {
            memtwin_machine::Userland::Debian12 | memtwin_machine::Userland::Ubuntu2004 => ("systemd", "/sbin/init"),
            memtwin_machine::Userland::Centos6 => ("init", "/sbin/init"),
            memtwin_machine::Userland::Centos3 => ("init", "init [3]"),
        };
        let init = self.spawn_task(comm, cmdline, false, None, None);
        self.tasks[init as usize].stdout = Sink::Null;
        self.boot_populate(init, anon_pages, self.machine.boot_file_bytes / PAGE_SIZE);
        self.radix_tree_settle();
        // The boot's own allocations leave no boost (kswapd is not running yet).
        self.mm.watermark_boost = 0;
        self.mm.zone_boosted = false;
    }

    fn take_kernel_pages(&mut self, n: u64, owner: KernelOwner) {
        for _ in 0..n {
            if self.mm.take_kernel(owner).is_none() {
                break;
            }
        }
    }

    fn spawn_kernel_threads(&mut self) {
        // 2.4 had one kswapd (mm/vmscan.c kswapd_init); 2.6+ one per node, kswapdN.
        let kswapd = if self.machine.kernel == KernelProfile::Linux24 { "kswapd" } else { "kswapd0" };
        self.reclaim.kswapd = self.spawn_task(kswapd, "", true, None, Some(Box::new(crate::mm::vmscan::Kswapd::default())));
        let ndev = self.block.devs.len();
        for d in 0..ndev {
            let dev = &self.block.devs[d];
            let name = match self.machine.kernel {
                // 2.4: bdflush writes dirty buffers back (fs/buffer.c); the model's one
                // writeback thread per disk also does kupdated's periodic work.
                KernelProfile::Linux24 => "bdflush".to_string(),
                // 2.6.32 - 3.x: a thread per backing device (bdi_forker_thread names it).
                KernelProfile::Linux2639 => format!("flush-{}:{}", dev.disk.major, dev.disk.minor),
                // 3.10+: writeback runs as work items on unbound kworkers; wq_worker_comm
                // (4.18+) shows the work's description: kworker/uN:M+flush-MAJ:MIN while it
                // runs, '-' after. The unbound pool's id follows the 2 per-CPU pools of each CPU.
                _ => format!("kworker/u{}:{}", 2 * self.machine.cpus, d + 1),
            };
            let tid = self.spawn_task(&name, "", true, None, Some(Box::new(crate::mm::page_writeback::Flusher::new(d as u32))));
            self.block.devs[d].flusher = Some(tid);
        }
    }

    /// The name /proc/PID/comm, status and stat show (proc_task_name): a workqueue worker's
    /// name carries its current ('+') or last ('-') work's description (wq_worker_comm).
    pub fn task_comm(&self, tid: TaskId) -> String {
        let t = &self.tasks[tid as usize];
        if matches!(self.machine.kernel, KernelProfile::Linux24 | KernelProfile::Linux2639) || !t.kthread {
            return t.comm.clone();
        }
        match self.block.devs.iter().find(|d| d.flusher == Some(tid)) {
            Some(d) => {
                let busy = matches!(self.sched.tasks[tid as usize].state, RunState::Runnable | RunState::Running | RunState::DiskSleep);
                format!("{}{}flush-{}:{}", t.comm, if busy { '+' } else { '-' }, d.disk.major, d.disk.minor)
            }
            None => t.comm.clone(),
        }
    }

    /// Create a task; it is runnable at once if it has a program.
    pub fn spawn_task(
        &mut self,
        comm: &str,
        cmdline: &str,
        kthread: bool,
        parent: Option<TaskId>,
        program: Option<Box<dyn Program>>,
    ) -> TaskId {
        let runnable = program.is_some();
        let reuse = self.free_tids.pop();
        let tid = match reuse {
            Some(tid) => {
                self.sched.reuse_task(tid, runnable);
                tid
            }
            None if runnable => self.sched.add_task(),
            None => self.sched.add_sleeping_task(),
        };
        let pid = self.next_pid;
        self.next_pid += 1;
        self.forks += 1;
        let mut t = Task::new(pid, comm, cmdline, kthread, parent, self.now);
        t.program = program;
        // A child starts in its parent's cgroup (cgroup_post_fork); user programs of the
        // scenario's shell start in the shell's.
        t.memcg = match parent {
            Some(p) => self.tasks[p as usize].memcg,
            None if !kthread => self.memcg.shell,
            None => 0,
        };
        if let Some(p) = parent {
            // copy_process: a child has its parent's niceness and I/O priority.
            let nice = self.sched.tasks[p as usize].nice;
            self.sched.set_nice(tid, nice);
            t.ioprio = self.tasks[p as usize].ioprio;
            t.stdout = self.tasks[p as usize].stdout;
            t.stderr = self.tasks[p as usize].stderr;
        }
        // A task without a program (the idle system's processes) sleeps forever.
        if reuse.is_some() {
            self.tasks[tid as usize] = t;
        } else {
            debug_assert_eq!(tid as usize, self.tasks.len());
            self.tasks.push(t);
        }
        if let Some(p) = parent {
            // fork: the child's descriptors are copies of its parent's (copy_files).
            self.dup_fd(p, tid);
        }
        tid
    }

    /// release_task: the parent has collected the exit status of an exited task; its slot
    /// is free for the next task. The caller must not use `tid` afterwards.
    pub fn reap(&mut self, tid: TaskId) {
        let t = &mut self.tasks[tid as usize];
        if t.exit_code.is_none() || t.kthread || t.reaped {
            return;
        }
        // Keep an exited, empty record in the slot (everything that walks the table skips
        // exited tasks).
        let mut empty = Task::new(0, "", "", false, None, self.now);
        empty.exit_code = t.exit_code;
        empty.reaped = true;
        *t = empty;
        self.reclaim.writeback_waiters.retain(|&w| w != tid);
        self.reclaim.isolated_waiters.retain(|&w| w != tid);
        self.reclaim.wb_throttle_waiters.retain(|&w| w != tid);
        self.reclaim.pfmemalloc_waiters.retain(|&w| w != tid);
        self.waits.clear(tid);
        self.exit_waiters.retain(|&(w, x)| w != tid && x != tid);
        self.free_tids.push(tid);
    }

    /// Spawn a user program as a child of the scenario's shell.
    pub fn spawn(&mut self, comm: &str, cmdline: &str, program: Box<dyn Program>, stdout: Sink, stderr: Sink) -> TaskId {
        let tid = self.spawn_task(comm, cmdline, false, None, Some(program));
        self.tasks[tid as usize].stdout = stdout;
        self.tasks[tid as usize].stderr = stderr;
        self.pipe_hold_ends(tid);
        tid
    }

    /// A process id for a process the model does not run as a task (the scenario's shell).
    pub fn alloc_pid(&mut self) -> u32 {
        let pid = self.next_pid;
        self.next_pid += 1;
        pid
    }

    pub fn pid_of(&self, tid: TaskId) -> u32 {
        self.tasks[tid as usize].pid
    }

    // ---- Output -------------------------------------------------------------------------

    fn sink_write(&mut self, sink: Sink, text: &str) {
        match sink {
            Sink::Terminal => self.transcript.push_str(text),
            Sink::Null => {}
            Sink::Buffer(i) => self.buffers[i as usize].push_str(text),
            Sink::Pipe(_) | Sink::Closed => {}
        }
    }
    pub fn print(&mut self, tid: TaskId, text: &str) {
        let s = self.tasks[tid as usize].stdout;
        if let Sink::Pipe(p) = s {
            return self.pipe_write_text(tid, p, text.as_bytes());
        }
        if s == Sink::Closed && !text.is_empty() {
            self.tasks[tid as usize].stdout_failed = true;
        }
        self.sink_write(s, text);
    }
    pub fn eprint(&mut self, tid: TaskId, text: &str) {
        let s = self.tasks[tid as usize].stderr;
        if let Sink::Pipe(p) = s {
            return self.pipe_write_text(tid, p, text.as_bytes());
        }
        self.sink_write(s, text);
    }
    /// Write raw bytes to the task's standard output (a pipe takes them as they are;
    /// elsewhere they are shown as text).
    pub fn print_bytes(&mut self, tid: TaskId, data: &[u8]) {
        let s = self.tasks[tid as usize].stdout;
        if let Sink::Pipe(p) = s {
            return self.pipe_write_text(tid, p, data);
        }
        if s == Sink::Closed && !data.is_empty() {
            self.tasks[tid as usize].stdout_failed = true;
        }
        self.sink_write(s, &String::from_utf8_lossy(data));
    }
    pub fn new_buffer(&mut self) -> u32 {
        if let Some(b) = self.free_buffers.pop() {
            self.buffers[b as usize].clear();
            return b;
        }
        self.buffers.push(String::new());
        (self.buffers.len() - 1) as u32
    }
    /// The reader of buffer `b` has taken its text: the buffer may be handed out again,
    /// unless a task still writes to it (a background job started inside `$(...)`), in which
    /// case it is kept for good.
    pub fn release_buffer(&mut self, b: u32) {
        let s = Sink::Buffer(b);
        if self.tasks.iter().any(|t| t.exit_code.is_none() && (t.stdout == s || t.stderr == s)) {
            return;
        }
        self.buffers[b as usize].clear();
        self.free_buffers.push(b);
    }
    /// Buffers and task slots the shell's table hold (in use or free): what grows if
    /// something is never released.
    pub fn table_sizes(&self) -> (usize, usize, usize) {
        (self.tasks.len(), self.buffers.len(), self.pipes.len())
    }

    // ---- CPU charging ---------------------------------------------------------------------

    /// Kernel work done on behalf of a task (runs as system time before its next step).
    #[inline]
    pub fn charge_sys(&mut self, tid: TaskId, ns: Ns) {
        self.tasks[tid as usize].pending_sys += ns;
    }
    #[inline]
    pub fn charge_user(&mut self, tid: TaskId, ns: Ns) {
        self.tasks[tid as usize].pending_user += ns;
    }

    /// A kernel call made in this step of `tid` left it a wait that follows the step
    /// (`Task::wait_after`): a program that must act after the wait (print what it
    /// measured, say) ends its step here and does so when it runs again.
    #[inline]
    pub fn call_must_wait(&self, tid: TaskId) -> bool {
        self.tasks[tid as usize].wait_after.is_some()
    }

    // ---- Waking ---------------------------------------------------------------------------

    /// Wake a task blocked on a wait queue, now.
    pub fn wake(&mut self, tid: TaskId) {
        self.sched.wake(tid, self.now, None);
    }
    pub fn wake_kswapd(&mut self) {
        // wakeup_kswapd: "Hopeless node, leave it to direct reclaim" (4.12+).
        if self.profile.kswapd_hopeless && self.mm.kswapd_failures >= crate::mm::page_alloc::MAX_RECLAIM_RETRIES {
            return;
        }
        if self.reclaim.kswapd_waiting {
            self.reclaim.kswapd_waiting = false;
            let k = self.reclaim.kswapd;
            self.wake(k);
        }
    }
    /// Wake everyone waiting for writeback or reclaim progress.
    pub fn wake_writeback_waiters(&mut self) {
        while let Some(t) = self.reclaim.writeback_waiters.pop() {
            self.sched.wake(t, self.now, None);
        }
    }

    pub fn task_exited(&self, tid: TaskId) -> bool {
        self.tasks[tid as usize].exit_code.is_some()
    }

    /// Kill a task (OOM killer, signals). It stops what it was doing; then, as a task that
    /// exits by itself does, it tears its memory down on its CPU (do_exit -> exit_mm ->
    /// exit_mmap, `exit_mmap_ns` of system time) before its resources are freed and its
    /// parent's wait returns. A task already dying keeps its first signal's status, and one
    /// already exiting by itself (PF_EXITING: its exit teardown has begun) its own.
    pub fn kill(&mut self, tid: TaskId, code: i32) {
        if self.task_exited(tid) || self.tasks[tid as usize].killed || self.tasks[tid as usize].exit_teardown {
            return;
        }
        self.tasks[tid as usize].killed = true;
        if let Some(mut p) = self.tasks[tid as usize].program.take() {
            p.killed(self, tid);
        }
        if self.sched.tasks[tid as usize].state == RunState::Running {
            // Finishes its current burst (or step); `after_burst` makes it exit then.
            self.tasks[tid as usize].after_burst = Some(Step::Exit(code));
            return;
        }
        // Off its CPU: a fatal signal ends the sleep (the model's sleeps are all killable:
        // the wait is abandoned), and the task runs again only to exit.
        if !self.abandon_for_exit(tid) {
            return self.do_exit(tid, code);
        }
        self.tasks[tid as usize].exit_after_wait = Some(code);
        self.sched.wake(tid, self.now, None);
    }

    /// A killed task gives up what it was doing (its reclaim path, its wait, the user work
    /// its step had charged) and has its exit teardown added to its pending system time.
    /// Returns whether there is a teardown to run.
    fn abandon_for_exit(&mut self, tid: TaskId) -> bool {
        self.reclaim_path_abort(tid);
        self.waits.clear(tid);
        let t = &mut self.tasks[tid as usize];
        t.wait_after = None;
        t.pending_user = 0;
        self.begin_exit_teardown(tid)
    }

    /// Kill a task with no time left to run (the end of the terminal session): it is gone
    /// at once, with no exit teardown.
    pub fn kill_at_once(&mut self, tid: TaskId, code: i32) {
        if self.task_exited(tid) {
            return;
        }
        self.tasks[tid as usize].killed = true;
        if let Some(mut p) = self.tasks[tid as usize].program.take() {
            p.killed(self, tid);
        }
        self.tasks[tid as usize].exit_teardown = true;
        if self.sched.tasks[tid as usize].state == RunState::Running {
            self.tasks[tid as usize].after_burst = Some(Step::Exit(code));
            return;
        }
        self.do_exit(tid, code);
    }

    /// Charge exit_mmap's teardown as the task's pending system time, once. Returns
    /// whether there is any (kernel threads have no memory of their own).
    fn begin_exit_teardown(&mut self, tid: TaskId) -> bool {
        let t = &self.tasks[tid as usize];
        if t.exit_teardown || t.kthread {
            return false;
        }
        let ns = self.exit_mmap_ns(tid);
        let t = &mut self.tasks[tid as usize];
        t.exit_teardown = true;
        t.pending_sys += ns;
        ns > 0
    }

    fn do_exit(&mut self, tid: TaskId, code: i32) {
        // exit_mmap runs on the exiting task's CPU: its pages go to that CPU's list.
        let prev = self.current.replace(tid);
        self.do_exit_current(tid, code);
        self.current = prev;
    }

    fn do_exit_current(&mut self, tid: TaskId, mut code: i32) {
        let t = &self.tasks[tid as usize];
        if t.stdout_failed && code == 0 && !t.killed && !t.kthread {
            // close_stdout (gnulib) / bash's builtins: the failed write is reported when the
            // program ends, and it exits 1.
            let comm = t.comm.clone();
            let who = if crate::exec::is_shell_builtin(&comm) { format!("bash: {comm}") } else { comm };
            self.eprint(tid, &format!("{who}: write error: Bad file descriptor\n"));
            // ls sets exit_failure to LS_FAILURE (2); the others exit with EXIT_FAILURE.
            code = if who == "ls" { 2 } else { 1 };
        }
        self.reclaim_path_abort(tid);
        self.waits.clear(tid);
        self.pipe_release_ends(tid);
        self.exit_files(tid);
        self.release_task_memory(tid);
        self.free_kernel_stack(tid);
        if !self.tasks[tid as usize].kthread {
            let st = &self.sched.tasks[tid as usize];
            self.children_utime += st.utime;
            self.children_stime += st.stime;
        }
        let t = &mut self.tasks[tid as usize];
        t.exit_code = Some(code);
        t.end = self.now;
        t.program = None;
        self.sched.exit(tid, self.now);
        self.delayacct_flush();
        let mut i = 0;
        while i < self.exit_waiters.len() {
            if self.exit_waiters[i].1 == tid {
                let (w, _) = self.exit_waiters.swap_remove(i);
                self.sched.wake(w, self.now, None);
            } else {
                i += 1;
            }
        }
    }

    /// The CPU time of exit_mmap's teardown of `tid`'s memory, each pass over a page the
    /// per-page work `rm` pays for a cached file (`page_cache_ns`): every resident page of
    /// its private anonymous memory is unmapped and freed in one pass (zap_pte_range ->
    /// free_pages_and_swap_cache); a page of a shared anonymous object that goes with the
    /// task takes two, its PTE zapped with its rmap (unmap_vmas) and then the page taken
    /// out of the object and freed (__fput -> shmem_evict_inode -> shmem_truncate_range).
    /// PTEs of file pages that stay cached are not charged (about a tenth of a private
    /// page's teardown, docs/costs.md).
    fn exit_mmap_ns(&self, tid: TaskId) -> Ns {
        let t = &self.tasks[tid as usize];
        let mut passes = t.anon_mapping.map_or(0, |m| self.mm.mappings[m as usize].nrpages);
        for &m in &t.vmas {
            let s = &self.mm.mappings[m as usize];
            if s.live && s.kind == MappingKind::Shmem && s.owner == Some(tid) {
                passes += 2 * s.nrpages;
            }
        }
        passes * self.machine.cpu_model.page_cache_ns
    }

    /// Free what a task holds (exit_mmap): its anonymous memory, the shared anonymous
    /// objects that go with it; its file mappings are no longer mapped.
    fn release_task_memory(&mut self, tid: TaskId) {
        // exit_mmap: lru_add_drain() on the exiting task's CPU first. The task runs no more
        // bursts: a wait for lru_lock here is nobody's time (as in completion context).
        let prev = self.current.take();
        self.lru_add_drain_cpu(self.sched.task_cpu(tid) as usize);
        self.current = prev;
        self.release_anon_mapping(tid);
        // exit_mmap -> free_pgtables (the OOM reaper unmaps pages only, not tables).
        self.free_pgtables(tid);
        // exit_mmap: shared anonymous memory goes with its last user; file pages stay
        // cached but are no longer mapped.
        self.tasks[tid as usize].file_vmas.clear();
        for m in std::mem::take(&mut self.tasks[tid as usize].vmas) {
            let s = &self.mm.mappings[m as usize];
            if !s.live {
                continue;
            }
            if s.kind == MappingKind::Shmem && s.owner == Some(tid) {
                self.truncate_mapping(m, 0);
                self.mm.release_mapping(m);
            } else if s.kind == MappingKind::File {
                let still = self.tasks.iter().any(|t| t.exit_code.is_none() && t.vmas.contains(&m));
                if !still {
                    self.mm.set_mapped(m, false);
                }
            }
        }
        let t = &mut self.tasks[tid as usize];
        t.image = false;
        t.rss_anon = 0;
        t.rss_file = 0;
        t.rss_shmem = 0;
        // exit_mmap -> vm_unacct_memory: the commit charge of its mappings goes.
        t.committed = 0;
    }

    /// Unmap and free a task's private anonymous memory, swap entries included
    /// (zap_pte_range: exit_mmap, or the OOM reaper's __oom_reap_task_mm).
    pub(crate) fn release_anon_mapping(&mut self, tid: TaskId) {
        if let Some(m) = self.tasks[tid as usize].anon_mapping.take() {
            self.truncate_mapping(m, 0);
            self.mm.release_mapping(m);
        }
    }

    // ---- Block I/O ------------------------------------------------------------------------

    /// Submit one request at byte offset `pos` of device `dev` (submit_bio); returns its
    /// completion time, when the kernel handles its completion (`io_done`).
    pub fn submit_bio(&mut self, dev: u32, dir: Dir, pos: u64, bytes: u64, kind: ReqKind, task: Option<TaskId>) -> Ns {
        // The bio carries its submitter's I/O priority (bio_set_prio / get_current_ioprio);
        // writeback and swap-out are submitted by kernel threads at the default.
        let class = task.map_or(crate::ioprio::IoClass::Be, |t| self.effective_ioprio(t).class);
        let (id, done_at, moved) = self.block.submit_prio(self.now, dev, dir, pos, bytes, kind, task, class);
        self.events.push(done_at, Event::IoDone(id));
        // Requests the elevator put behind this one complete later: new completion events
        // (the earlier ones find the request's time changed and do nothing).
        for (q, old, new) in moved {
            self.events.push(new, Event::IoDone(q));
            for w in self.fs.direct_writes.iter_mut().filter(|w| w.dev == dev && w.done_at == old) {
                w.done_at = new;
            }
        }
        match dir {
            Dir::Read => self.vm.add(memtwin_procfs::VmItem::Pgpgin, bytes / 1024),
            Dir::Write => self.vm.add(memtwin_procfs::VmItem::Pgpgout, bytes / 1024),
        }
        done_at
    }

    /// A request completed: the block layer's accounting, then the page cache's end_io.
    fn io_done(&mut self, id: u32) {
        let q = &self.block.reqs[id as usize];
        if !q.live || q.done_at != self.now {
            // A completion the elevator moved later (its new event comes then).
            return;
        }
        let r = self.block.complete(id, self.now);
        self.intr += 1;
        match r.kind {
            ReqKind::PageRead { mapping, index, n } => self.end_page_read(mapping, index, n),
            ReqKind::Writeback { mapping, index, n } => self.end_page_writeback(mapping, index, n),
            ReqKind::Direct { .. } => {}
            ReqKind::SwapOut { slot, n } => self.swap_out_done(slot, n),
            ReqKind::SwapIn { slot, n } => self.swap_in_done(slot, n),
        }
        // What reached the disk survives a crash (fs/persist.rs).
        self.fs_io_done(&r);
        // Submitters waiting for a request slot or for writeback to progress.
        if let Some(f) = self.block.devs[r.dev as usize].flusher {
            if self.flusher_waits_for_slot(f) {
                self.wake(f);
            }
        }
        self.wake_writeback_waiters();
        // Tasks in wait paths whose page, writeback or sync this completion ended.
        self.wake_io_waiters(&r);
    }

    // ---- The event loop -------------------------------------------------------------------

    /// Run until simulated time `until`, or until `stop` holds after an event.
    pub fn run_until(&mut self, until: Ns, stop: &mut dyn FnMut(&Kernel) -> bool) {
        loop {
            self.dispatch();
            if stop(self) {
                return;
            }
            match self.events.peek_time() {
                Some(t) if t <= until => {}
                _ => {
                    self.calc_global_load(until);
                    self.advance_clock(until);
                    return;
                }
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.calc_global_load(t);
            self.advance_clock(t);
            self.handle(ev);
            self.radix_tree_settle();
            self.wake_kswapd_for_boost();
            if self.debug_invariants {
                if let Err(e) = self.mm.check_invariants().and_then(|_| self.check_buffer_invariants()).and_then(|_| self.check_radix_invariants()) {
                    panic!("invariant broken at t={} ns after {:?}: {e}", self.now, ev);
                }
            }
        }
    }

    fn advance_clock(&mut self, t: Ns) {
        if t > self.now {
            self.delayacct_flush();
            self.now = t;
        }
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Wake(tid, seq) => {
                self.sched.wake(tid, self.now, Some(seq));
            }
            Event::BurstDone(tid) => self.burst_done(tid),
            Event::IoDone(req) => self.io_done(req),
            Event::NfsRpc(p) => self.nfsd_arrive(p),
            Event::RcuCallbacks => self.rcu_do_batch(),
        }
    }

    /// Give free CPUs to runnable tasks.
    fn dispatch(&mut self) {
        while let Some(tid) = self.sched.pick() {
            self.run_task(tid);
        }
    }

    /// The task is on a CPU: advance the kernel path it is in, or call its program, until
    /// it needs time to pass.
    fn run_task(&mut self, tid: TaskId) {
        if self.tasks[tid as usize].after_burst.is_none() && self.reclaim.in_path(tid) {
            return self.run_kpath(tid);
        }
        if self.tasks[tid as usize].after_burst.is_none() && self.waits.in_path(tid) && !self.run_wait_path(tid) {
            // Woken before what it waits for happened: asleep again.
            return;
        }
        let step = match self.tasks[tid as usize].after_burst.take() {
            // The burst that preceded this step is over: the step takes effect now.
            Some(s) => return self.apply_step(tid, s),
            None => {
                if let Some(code) = self.tasks[tid as usize].exit_after_wait.take() {
                    // What is left to run before the exit: a killed task's teardown.
                    let ps = std::mem::take(&mut self.tasks[tid as usize].pending_sys);
                    if ps > 0 {
                        return self.start_burst(tid, 0, ps, Some(Step::Exit(code)));
                    }
                    self.do_exit(tid, code);
                    return;
                }
                let Some(mut prog) = self.tasks[tid as usize].program.take() else {
                    self.do_exit(tid, 0);
                    return;
                };
                self.tasks[tid as usize].wait_reason = None;
                self.current = Some(tid);
                // A new program's kernel stack and image come first, as a step of their own
                // (their faults' system time is a burst before the program's first step).
                let s = match self.exec_image(tid) {
                    Ok(false) => match self.touch_image(tid) {
                        Ok(()) => prog.step(self, tid),
                        Err(wait) => wait,
                    },
                    Ok(true) => Step::Cpu { user: 0, sys: 0 },
                    Err(wait) => wait,
                };
                self.current = None;
                if matches!(s, Step::Exit(_)) || self.tasks[tid as usize].killed {
                    // do_exit -> exit_mm -> exit_mmap runs on the exiting task before its
                    // parent's wait returns: its time is the task's last system time.
                    self.begin_exit_teardown(tid);
                }
                if self.tasks[tid as usize].program.is_none() && !self.tasks[tid as usize].killed {
                    self.tasks[tid as usize].program = Some(prog);
                }
                if self.tasks[tid as usize].killed {
                    // Killed during its own step (e.g. chosen by the OOM killer).
                    Step::Exit(self.tasks[tid as usize].after_burst.take().map_or(137, |s| match s {
                        Step::Exit(c) => c,
                        _ => 137,
                    }))
                } else {
                    s
                }
            }
        };
        if self.reclaim.in_path(tid) && !matches!(step, Step::Exit(_)) {
            // The step entered a kernel path (direct reclaim): what the program asked for
            // is superseded; the work it charged runs first, then the path.
            let t = &mut self.tasks[tid as usize];
            t.wait_after = None;
            let (pu, ps) = (std::mem::take(&mut t.pending_user), std::mem::take(&mut t.pending_sys));
            if pu + ps > 0 {
                self.start_burst(tid, pu, ps, None);
                return;
            }
            return self.run_kpath(tid);
        }
        let t = &mut self.tasks[tid as usize];
        let (pu, ps) = (t.pending_user, t.pending_sys);
        t.pending_user = 0;
        t.pending_sys = 0;
        // A kernel call of the step must sleep once its CPU work is done (flush_work): the
        // wait replaces a CPU or yield step's "then"; the program runs again after it.
        let step = match (t.wait_after.take(), step) {
            (Some(w), Step::Cpu { user, sys }) => {
                let (user, sys) = (user + pu, sys + ps);
                if user + sys > 0 {
                    self.start_burst(tid, user, sys, Some(Step::Wait(w)));
                    return;
                }
                Step::Wait(w)
            }
            (Some(w), Step::Yield) => Step::Wait(w),
            (Some(w), Step::Exit(code)) => {
                // The call's wait comes before the exit (the syscall returns first).
                t.exit_after_wait = Some(code);
                Step::Wait(w)
            }
            (_, s) => s,
        };
        let (user, sys, then) = match step {
            Step::Cpu { user, sys } => (user + pu, sys + ps, None),
            // A yield costs at least a trip through the scheduler, so time always moves.
            Step::Yield => (pu, ps.max(YIELD_NS), Some(Step::Yield)),
            other => (pu, ps, Some(other)),
        };
        if user + sys > 0 {
            self.start_burst(tid, user, sys, then);
            return;
        }
        // A CPU step with nothing to run is a yield.
        self.apply_step(tid, then.unwrap_or(Step::Yield));
    }

    /// Put the task's CPU work on its CPU: the system part first, then the user part (one
    /// burst unless both are present); `then` takes effect when it is over (None: the task
    /// goes on where it is, its kernel path or its program).
    fn start_burst(&mut self, tid: TaskId, user: Ns, sys: Ns, then: Option<Step>) {
        let t = &mut self.tasks[tid as usize];
        if sys > 0 && user > 0 {
            t.pending_user = user;
            t.after_burst = then;
            t.burst = Some((true, sys));
            self.sched.burst_start(self.now, true);
            self.events.push(self.now + sys, Event::BurstDone(tid));
        } else {
            let is_sys = sys > 0;
            let d = user + sys;
            t.after_burst = then;
            t.burst = Some((is_sys, d));
            self.sched.burst_start(self.now, is_sys);
            self.events.push(self.now + d, Event::BurstDone(tid));
        }
    }

    /// Advance the task's reclaim path: a CPU burst or a sleep ends this turn; when the
    /// path is done the program runs again (and collects the path's result).
    fn run_kpath(&mut self, tid: TaskId) {
        use crate::delayacct::{SysWork, WaitReason};
        let spin_before = self.tasks[tid as usize].delay.sys_work[SysWork::LockSpin as usize];
        self.current = Some(tid);
        self.reclaim.advancing = true;
        let step = self.reclaim_path_run(tid);
        self.reclaim.advancing = false;
        self.current = None;
        match step {
            crate::mm::vmscan::PathStep::Burst { sys } => {
                // Spinning on zone->lock while freeing is part of the burst and of the
                // invocation's lock wait.
                let zone_spin = std::mem::take(&mut self.reclaim.zone_spin);
                if let Some(Some(p)) = self.reclaim.paths.get_mut(tid as usize) {
                    p.lock_wait_ns += zone_spin;
                }
                let sys = sys + zone_spin;
                // Reclaim work on the CPU; the part spent spinning on lru_lock is lock time
                // (note_lock_wait), the rest reclaim. All of it is a memory stall (PSI).
                let d = &mut self.tasks[tid as usize].delay;
                let spin = d.sys_work[SysWork::LockSpin as usize] - spin_before;
                d.sys_work[SysWork::Reclaim as usize] += sys.saturating_sub(spin);
                d.pending_reclaim += sys;
                self.sched.changed.push(tid);
                self.start_burst(tid, 0, sys, None)
            }
            crate::mm::vmscan::PathStep::Sleep { until, io } => {
                self.set_wait_reason(tid, WaitReason::ReclaimWait);
                let spin = std::mem::take(&mut self.reclaim.zone_spin);
                if spin > 0 {
                    // The spin on zone->lock comes first, then the sleep.
                    let until = until.max(self.now + spin);
                    return self.start_burst(tid, 0, spin, Some(Step::SleepUntil { t: until, io }));
                }
                self.apply_step(tid, Step::SleepUntil { t: until, io })
            }
            _ => {
                let spin = std::mem::take(&mut self.reclaim.zone_spin);
                self.charge_sys(tid, spin);
                self.run_task(tid)
            }
        }
    }

    fn apply_step(&mut self, tid: TaskId, step: Step) {
        match step {
            Step::Cpu { .. } => unreachable!("handled in run_task"),
            Step::SleepUntil { t, io } => {
                if t <= self.now {
                    // Nothing to wait for: stay runnable, behind others.
                    self.sched.requeue(tid);
                    return;
                }
                let seq = self.sched.sleep(tid, self.now, io);
                self.events.push(t, Event::Wake(tid, seq));
            }
            Step::Block { io } => {
                self.sched.sleep(tid, self.now, io);
            }
            Step::Wait(w) => self.wait_start(tid, w),
            Step::Yield => self.sched.requeue(tid),
            Step::Exit(code) => self.do_exit(tid, code),
        }
    }

    fn burst_done(&mut self, tid: TaskId) {
        let (sys, dur) = self.tasks[tid as usize].burst.take().expect("burst in progress");
        self.sched.burst_end(tid, self.now, sys, dur);
        let t = &mut self.tasks[tid as usize];
        if t.pending_user > 0 && sys {
            // The user part of a mixed burst.
            let d = t.pending_user;
            t.pending_user = 0;
            t.burst = Some((false, d));
            self.sched.burst_start(self.now, false);
            self.events.push(self.now + d, Event::BurstDone(tid));
            return;
        }
        if let Some(Step::Exit(code)) = t.after_burst {
            t.after_burst = None;
            if self.tasks[tid as usize].killed && !self.tasks[tid as usize].exit_teardown && self.abandon_for_exit(tid) {
                // Killed during the burst: its memory is torn down on this CPU before the
                // exit.
                let ps = std::mem::take(&mut self.tasks[tid as usize].pending_sys);
                return self.start_burst(tid, 0, ps, Some(Step::Exit(code)));
            }
            self.do_exit(tid, code);
            return;
        }
        // A reclaim path is kernel code of a kernel without preemption: it gives its CPU up
        // only at its cond_resched points (each of its steps) once the scheduler tick has
        // found its slice used up (check_preempt_tick sets need_resched).
        let over = if self.reclaim.in_path(tid) { self.sched.cpu_wanted() && self.sched.slice_left(tid) == 0 } else { self.sched.slice_over(tid, dur) };
        if over {
            // Time slice over and others are waiting: go to the back of the queue.
            self.sched.requeue(tid);
            return;
        }
        self.run_task(tid);
    }
}

impl Kernel {
    /// kmem_cache_init: the era's allocator and boot caches; the shrinkers registered at
    /// boot (workingset_init's shadow-node shrinker; the dcache's).
    fn kmem_cache_init(&mut self) {
        self.mm.slab = crate::mm::slab::Slabs::new(self.profile.slab_allocator, self.machine.cpus);
        self.mm.slab.kmem_cache_init(self.machine.kernel == memtwin_machine::KernelProfile::Linux24);
        use crate::mm::shrinker::{ShrinkerKind, DEFAULT_SEEKS};
        // Registration order is list order: super_block shrinkers (dcache) come before
        // the workingset one, registered later in boot.
        self.register_shrinker(ShrinkerKind::BootDentries, "sb-dentries", DEFAULT_SEEKS);
        if self.profile.workingset {
            // workingset_init: seeks 0 ("shadow nodes are cheap to recreate": 6.x sets
            // DEFAULT_SEEKS since 4.19; the model trims to the limit either way).
            self.register_shrinker(ShrinkerKind::ShadowNodes, "mm-shadow", DEFAULT_SEEKS);
        }
    }
}
