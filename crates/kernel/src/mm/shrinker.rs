//! Shrinkers: the callbacks through which reclaim frees kernel objects that are not on the
//! LRU lists (mm/vmscan.c shrink_slab / do_shrink_slab, mm/shrinker.c since 6.7).
//!
//! # Public API (stable; other parts of the model build on it)
//!
//! * `ShrinkerKind`: which callback pair (count_objects / scan_objects) a shrinker runs —
//!   enum dispatch in `Kernel::shrinker_count` / `Kernel::shrinker_scan`, no boxed closures.
//!   A new object cache adds a variant and an arm in each of those two functions.
//! * `Kernel::register_shrinker(kind, name, seeks) -> ShrinkerId` (register_shrinker;
//!   `DEFAULT_SEEKS`); `Shrinkers::batch` per shrinker (0: `SHRINK_BATCH`).
//! * `ShrinkControl` {nr_to_scan, nr_scanned, memcg, gfp_fs} passed to the callbacks.
//! * `Kernel::shrink_slab(nr_scanned, lru_pages, priority, memcg) -> (freed, scanned)`:
//!   one untimed shrink_slab call with the era's rule (2.6.39 uses nr_scanned/lru_pages,
//!   6.x the priority); `Kernel::drop_slab() -> u64`.
//! * `Kernel::vfs_pressure_ratio(n)`: vfs_cache_pressure scaling for dentry/inode counts.
//! * `Shrinkers::lock(ShrinkLock)`: the time-ordered lock queues of slab reclaim
//!   (shrinker_rwsem; dcache_lru_lock, inode_lru_lock, iprune_sem for the VFS caches),
//!   taken through `Kernel::shrink_lock(tid, which, hold) -> wait_ns`.
//! * Counters: `slabs_scanned` here; `pginodesteal` / `kswapd_inodesteal` are counted by
//!   the inode shrinker through `Kernel::count_inodesteal(kswapd, n)`.
//!
//! * `Kernel::start_slab_reclaim(tid, priority, nr_scanned, lru_pages)`: a reclaim path
//!   that runs only the shrinkers (for reclaim that separates slab from page reclaim),
//!   collected like direct reclaim with `ReclaimState::take_done`.
//!
//! In a reclaim path the shrinkers run as states of `ReclaimPath` (`RState::ShrinkSlab`,
//! `RState::DoShrinkSlab`): one batch per step, each costing CPU time per object scanned
//! (`shrinker_obj_ns`) plus any lock wait.

use super::slab::ObjHandle;
use crate::Kernel;
use memtwin_engine::{LockKind, LockQueue, Ns, TaskId};
use memtwin_procfs::VmItem;
use std::collections::VecDeque;

pub type ShrinkerId = u16;

/// DEFAULT_SEEKS: objects cost two seeks to recreate.
pub const DEFAULT_SEEKS: u32 = 2;
/// SHRINK_BATCH: objects per scan_objects call.
pub const SHRINK_BATCH: u64 = 128;

/// The callbacks a shrinker runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShrinkerKind {
    /// The workingset shadow nodes (workingset_shadow_shrinker: count_shadow_nodes /
    /// scan_shadow_nodes), 3.15+.
    ShadowNodes,
    /// The unused dentries of the idle system populated at boot (the dcache LRU of a
    /// system whose files the model does not walk): count = unused objects scaled by
    /// vfs_cache_pressure, scan frees the oldest (prune_dcache / prune_dcache_sb).
    BootDentries,
    /// 2.6.39's dcache shrinker (shrink_dcache_memory -> prune_dcache) over the VFS's
    /// super blocks (fs/namei.rs).
    Dcache,
    /// 2.6.39's icache shrinker (shrink_icache_memory -> prune_icache).
    Icache,
    /// 3.1+'s per-super-block shrinker (super_cache_count / super_cache_scan) of VFS
    /// super block N.
    SuperBlock(u16),
}

/// One registered shrinker (struct shrinker).
#[derive(Clone, Debug)]
pub struct Shrinker {
    pub kind: ShrinkerKind,
    pub name: &'static str,
    pub seeks: u32,
    /// Objects per scan_objects call (0: SHRINK_BATCH).
    pub batch: u64,
    /// Work deferred to the next call (2.6.39 shrinker->nr; 6.x nr_deferred of node 0).
    pub nr_deferred: u64,
    /// 6.x: a memory-cgroup-aware shrinker's deferred work per cgroup (shrinker_info's
    /// nr_deferred), by cgroup id; the root's is `nr_deferred`.
    pub nr_deferred_memcg: Vec<u64>,
}

/// One shrinker's work in a shrink_slab call: (shrinker, total_scan left, freeable, the
/// cgroup's lruvec it works for).
pub type ShrinkPlanEntry = (ShrinkerId, u64, u64, super::lru::LruvecId);

impl ShrinkerKind {
    /// SHRINKER_MEMCG_AWARE among the model's shrinkers: the super blocks' (their
    /// list_lrus are per cgroup). The shadow-node shrinker is too in the kernel, but the
    /// model keeps one shadow list, trimmed by the reclaim of the target cgroup.
    pub fn memcg_aware(self) -> bool {
        matches!(self, ShrinkerKind::SuperBlock(_))
    }
}

/// The locks slab reclaim takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShrinkLock {
    /// shrinker_rwsem (register/unregister hold it for writing; shrink_slab reads).
    ShrinkerRwsem = 0,
    /// 2.6.39 dcache_lru_lock (global spinlock of the dentry LRU).
    DcacheLru = 1,
    /// 2.6.39 inode_lru_lock (inode_lock before 2.6.38).
    InodeLru = 2,
    /// 2.6.39 iprune_sem (prune_icache holds it for reading... and writers serialise).
    IpruneSem = 3,
}

/// What the callbacks are asked to do (struct shrink_control).
#[derive(Clone, Copy, Debug, Default)]
pub struct ShrinkControl {
    pub nr_to_scan: u64,
    /// Set by scan_objects to what it scanned (defaults to nr_to_scan).
    pub nr_scanned: u64,
    /// The memory cgroup's lruvec being reclaimed (ROOT_LRUVEC for global reclaim).
    pub memcg: super::lru::LruvecId,
    /// __GFP_FS: the filesystem shrinkers may run.
    pub gfp_fs: bool,
    /// kswapd (current_is_kswapd), for the inodesteal counters.
    pub kswapd: bool,
}

/// Every shrinker, the slab-reclaim locks and the boot-populated objects.
pub struct Shrinkers {
    pub list: Vec<Shrinker>,
    pub locks: [LockQueue; 4],
    /// The unused boot dentries, oldest first.
    pub boot_dentries: VecDeque<ObjHandle>,
}

impl Default for Shrinkers {
    fn default() -> Shrinkers {
        Shrinkers {
            list: Vec::new(),
            locks: [LockQueue::new(LockKind::Sleep), LockQueue::new(LockKind::Spin), LockQueue::new(LockKind::Spin), LockQueue::new(LockKind::Sleep)],
            boot_dentries: VecDeque::new(),
        }
    }
}

impl Shrinker {
    /// The deferred-work counter for cgroup `memcg` (0: the root's `nr_deferred`).
    fn deferred_slot(&mut self, memcg: usize) -> &mut u64 {
        if memcg == 0 || !self.kind.memcg_aware() {
            return &mut self.nr_deferred;
        }
        if self.nr_deferred_memcg.len() <= memcg {
            self.nr_deferred_memcg.resize(memcg + 1, 0);
        }
        &mut self.nr_deferred_memcg[memcg]
    }
}

impl Shrinkers {
    pub fn lock(&mut self, which: ShrinkLock) -> &mut LockQueue {
        &mut self.locks[which as usize]
    }
    pub fn find(&self, kind: ShrinkerKind) -> Option<ShrinkerId> {
        self.list.iter().position(|s| s.kind == kind).map(|i| i as ShrinkerId)
    }
}

/// 2.6.39 shrink_slab's per-shrinker target: shrinker->nr += (4 * scanned / seeks) *
/// max_pass / (lru_pages + 1), capped at 2 * max_pass. Returns the new total_scan.
pub fn delta_2639(nr: u64, scanned: u64, seeks: u32, max_pass: u64, lru_pages: u64) -> u64 {
    let scanned = if scanned == 0 { super::SWAP_CLUSTER_MAX } else { scanned };
    let delta = ((4 * scanned as u128 / seeks.max(1) as u128) * max_pass as u128 / (lru_pages as u128 + 1)) as u64;
    (nr + delta).min(max_pass * 2)
}

/// 6.x do_shrink_slab's target: delta = (freeable >> priority) * 4 / seeks (freeable / 2
/// with seeks 0); total_scan = (nr_deferred >> priority) + delta, capped at 2 * freeable.
/// Returns (total_scan, delta).
pub fn delta_6(nr_deferred: u64, freeable: u64, priority: i32, seeks: u32) -> (u64, u64) {
    let p = priority.clamp(0, 63) as u32;
    let delta = if seeks > 0 { (freeable >> p) * 4 / seeks as u64 } else { freeable / 2 };
    let total = ((nr_deferred >> p) + delta).min(2 * freeable);
    (total, delta)
}

impl Kernel {
    /// register_shrinker.
    pub fn register_shrinker(&mut self, kind: ShrinkerKind, name: &'static str, seeks: u32) -> ShrinkerId {
        if let Some(id) = self.shrink.find(kind) {
            return id;
        }
        self.shrink.list.push(Shrinker { kind, name, seeks, batch: 0, nr_deferred: 0, nr_deferred_memcg: Vec::new() });
        (self.shrink.list.len() - 1) as ShrinkerId
    }

    /// reparent_shrinker_deferred: a removed cgroup's deferred shrinker work goes to its
    /// parent (the id may be reused by a new cgroup, which starts with none).
    pub fn reparent_shrinker_deferred(&mut self, from: usize, to: usize) {
        for s in self.shrink.list.iter_mut() {
            let moved = std::mem::take(s.deferred_slot(from));
            *s.deferred_slot(to) += moved;
        }
    }

    /// vfs_pressure_ratio (fs/super.c): dentry and inode counts scaled by
    /// vfs_cache_pressure / 100 (2.6.39: (nr_unused / 100) * vfs_cache_pressure).
    pub fn vfs_pressure_ratio(&self, n: u64) -> u64 {
        let p = self.sysctl.vfs_cache_pressure as u64;
        if self.profile.slab_allocator == super::slab::SlabAllocator::Slab {
            (n / 100) * p
        } else {
            n * p / 100
        }
    }

    /// count_objects of shrinker `id`.
    pub fn shrinker_count(&mut self, id: ShrinkerId, sc: &ShrinkControl) -> u64 {
        match self.shrink.list[id as usize].kind {
            ShrinkerKind::ShadowNodes => {
                let max_nodes = self.mm.managed >> (super::xarray::XA_CHUNK_SHIFT - 3);
                self.mm.xa.shadow_nodes().saturating_sub(max_nodes)
            }
            ShrinkerKind::BootDentries => {
                // The dentries are the root cgroup's; a cgroup's reclaim finds none.
                if sc.memcg != super::lru::ROOT_LRUVEC {
                    return 0;
                }
                self.vfs_pressure_ratio(self.shrink.boot_dentries.len() as u64)
            }
            // 2.6.39's dentries and inodes are nobody's but the root's (no kmem accounting).
            ShrinkerKind::Dcache | ShrinkerKind::Icache if sc.memcg != super::lru::ROOT_LRUVEC => 0,
            ShrinkerKind::Dcache => self.vfs_shrink_count().0,
            ShrinkerKind::Icache => self.vfs_shrink_count().1,
            ShrinkerKind::SuperBlock(sb) => {
                // super_cache_count: list_lru_shrink_count of sc->memcg's lists (the
                // root's for global reclaim; shrink_node_memcgs asks for each cgroup).
                let m = self.memcg.lruvec_memcg(sc.memcg);
                let s = &self.vfs.sbs[sb as usize];
                self.vfs_pressure_ratio(s.dcache.nr_unused_memcg(m) + s.icache.nr_unused_memcg(m))
            }
        }
    }

    /// scan_objects of shrinker `id`: objects freed, or None for SHRINK_STOP.
    pub fn shrinker_scan(&mut self, id: ShrinkerId, sc: &mut ShrinkControl) -> Option<u64> {
        sc.nr_scanned = sc.nr_to_scan;
        match self.shrink.list[id as usize].kind {
            ShrinkerKind::ShadowNodes => {
                let before = self.mm.xa.shadow_nodes();
                self.shrink_shadow_nodes();
                Some(before - self.mm.xa.shadow_nodes())
            }
            ShrinkerKind::BootDentries => {
                // super_cache_scan / shrink_dcache_memory: no __GFP_FS, no pruning.
                if !sc.gfp_fs {
                    return None;
                }
                let mut freed = 0;
                for _ in 0..sc.nr_to_scan {
                    let Some(h) = self.shrink.boot_dentries.pop_front() else { break };
                    // d_free: after a grace period where the era has one (rcu.rs).
                    self.reclaim.reclaimed_slab += self.vfs_free_obj(h, super::memcontrol::ROOT_MEMCG);
                    freed += 1;
                }
                Some(freed)
            }
            ShrinkerKind::Dcache | ShrinkerKind::Icache | ShrinkerKind::SuperBlock(_) if !sc.gfp_fs => None,
            ShrinkerKind::Dcache => {
                let o = self.shrink_dcache(sc.nr_to_scan);
                self.reclaim.reclaimed_slab += o.pages_freed;
                Some(o.freed)
            }
            ShrinkerKind::Icache => {
                let o = self.shrink_icache(sc.kswapd, sc.nr_to_scan);
                self.reclaim.reclaimed_slab += o.pages_freed;
                Some(o.freed)
            }
            ShrinkerKind::SuperBlock(sb) => {
                let m = self.memcg.lruvec_memcg(sc.memcg);
                let o = self.super_cache_scan(sb as usize, m, sc.nr_to_scan, sc.kswapd);
                self.reclaim.reclaimed_slab += o.pages_freed;
                Some(o.freed)
            }
        }
    }

    /// CPU time of one object a shrinker scans: the LRU-list step of one entry
    /// (reclaim_scan_ns, the same list walk and flag test reclaim does per page) plus
    /// taking it off its hash and LRU list and freeing it to its slab (half of
    /// page_cache_ns: one tree/list operation).
    pub fn shrinker_obj_ns(&self) -> Ns {
        let cm = &self.machine.cpu_model;
        cm.reclaim_scan_ns + (cm.page_cache_ns / 2).max(1)
    }

    /// Take slab-reclaim lock `which` now for `hold` ns; returns the wait (recorded as the
    /// task's lock wait).
    pub fn shrink_lock(&mut self, tid: Option<TaskId>, which: ShrinkLock, hold: Ns) -> Ns {
        let now = self.now;
        let grant = self.shrink.lock(which).acquire(now, hold);
        let wait = grant - now;
        if let Some(t) = tid {
            self.tasks[t as usize].lock_wait_ns += wait;
            self.note_lock_wait(t, wait);
        }
        wait
    }

    /// pginodesteal (direct reclaim) / kswapd_inodesteal: page-cache pages freed with the
    /// inodes the inode shrinker evicted.
    pub fn count_inodesteal(&mut self, kswapd: bool, n: u64) {
        self.vm.add(if kswapd { VmItem::KswapdInodesteal } else { VmItem::Pginodesteal }, n);
    }

    /// The targets of one shrink_slab call: (shrinker, total_scan) of each shrinker with
    /// work, with the era's rule; the deferred work is updated as the kernel does before
    /// the scanning (2.6.39 moves all of it into total_scan; 6.x takes it with
    /// xchg_nr_deferred and `shrink_slab_done` adds back what is left).
    pub(crate) fn shrink_slab_plan(&mut self, nr_scanned: u64, lru_pages: u64, priority: i32, sc: &ShrinkControl, plan: &mut Vec<ShrinkPlanEntry>) {
        plan.clear();
        self.shrink_slab_plan_add(nr_scanned, lru_pages, priority, sc, false, plan);
    }

    /// `shrink_slab_plan` without clearing `plan`; `memcg_only`: only the memcg-aware
    /// shrinkers (shrink_slab_memcg, for a cgroup other than the root).
    pub(crate) fn shrink_slab_plan_add(&mut self, nr_scanned: u64, lru_pages: u64, priority: i32, sc: &ShrinkControl, memcg_only: bool, plan: &mut Vec<ShrinkPlanEntry>) {
        // 2.6.39: down_read_trylock(&shrinker_rwsem) fails while a shrinker registers:
        // shrink_slab returns at once. 6.x likewise (down_read_trylock).
        if self.shrink.locks[ShrinkLock::ShrinkerRwsem as usize].is_locked(self.now) {
            return;
        }
        let old = self.profile.slab_allocator == super::slab::SlabAllocator::Slab;
        for id in 0..self.shrink.list.len() as ShrinkerId {
            if self.shrink.list[id as usize].kind == ShrinkerKind::ShadowNodes && !self.profile.workingset {
                continue;
            }
            if memcg_only && !self.shrink.list[id as usize].kind.memcg_aware() {
                continue;
            }
            let freeable = self.shrinker_count(id, sc);
            let memcg = self.memcg.lruvec_memcg(sc.memcg) as usize;
            let s = &mut self.shrink.list[id as usize];
            if s.kind == ShrinkerKind::ShadowNodes {
                // The model trims the shadow list to its limit on every call (the limit
                // count_shadow_nodes reports as the excess), not by the scan delta.
                if freeable > 0 {
                    plan.push((id, freeable, 0, sc.memcg));
                }
                continue;
            }
            if old {
                let total = delta_2639(s.nr_deferred, nr_scanned, s.seeks, freeable, lru_pages);
                s.nr_deferred = 0;
                plan.push((id, total, 0, sc.memcg));
            } else {
                if freeable == 0 {
                    continue;
                }
                let seeks = s.seeks;
                let slot = s.deferred_slot(memcg);
                let nr = std::mem::take(slot);
                let (total, delta) = delta_6(nr, freeable, priority, seeks);
                // next_deferred = nr + delta - scanned, capped at 2 * freeable: kept
                // here as nr + delta, the scan subtracts as it goes.
                *slot = (nr + delta).min(2 * freeable);
                plan.push((id, total, freeable, sc.memcg));
            }
        }
    }

    /// One batch of shrinker work from a plan entry: returns (objects scanned, freed,
    /// stop). `entry.1` counts down the total_scan.
    pub(crate) fn shrink_slab_batch(&mut self, entry: &mut ShrinkPlanEntry, sc: &ShrinkControl) -> (u64, u64, bool) {
        let (id, total, freeable, lruvec) = *entry;
        let kind = self.shrink.list[id as usize].kind;
        let old = self.profile.slab_allocator == super::slab::SlabAllocator::Slab;
        let batch = match self.shrink.list[id as usize].batch {
            0 => SHRINK_BATCH,
            b => b,
        };
        let mut c = *sc;
        c.memcg = lruvec;
        if kind == ShrinkerKind::ShadowNodes {
            c.nr_to_scan = total;
            let freed = self.shrinker_scan(id, &mut c).unwrap_or(0);
            entry.1 = 0;
            return (0, freed, true);
        }
        // 2.6.39: while (total_scan >= SHRINK_BATCH); 6.x: while (total_scan >=
        // batch_size || total_scan >= freeable), nr_to_scan = min(batch, total_scan).
        let go = if old { total >= SHRINK_BATCH } else { total >= batch || (total > 0 && total >= freeable) };
        if !go {
            if old {
                self.shrink.list[id as usize].nr_deferred += total;
            }
            entry.1 = 0;
            return (0, 0, true);
        }
        c.nr_to_scan = if old { SHRINK_BATCH } else { batch.min(total) };
        let Some(freed) = self.shrinker_scan(id, &mut c) else {
            if old {
                self.shrink.list[id as usize].nr_deferred += total;
            }
            entry.1 = 0;
            return (0, 0, true);
        };
        let scanned = c.nr_scanned;
        self.vm.add(VmItem::SlabsScanned, scanned);
        entry.1 = total.saturating_sub(scanned);
        if !old {
            let memcg = self.memcg.lruvec_memcg(lruvec) as usize;
            let slot = self.shrink.list[id as usize].deferred_slot(memcg);
            *slot = slot.saturating_sub(scanned);
        }
        (scanned, freed, false)
    }

    /// shrink_slab, untimed: 2.6.39 (nr_scanned, lru_pages) or 6.x (priority) per the
    /// era, for the cgroup of `sc.memcg`. Returns (objects freed, objects scanned).
    pub fn shrink_slab(&mut self, nr_scanned: u64, lru_pages: u64, priority: i32, sc: &ShrinkControl) -> (u64, u64) {
        let mut plan = Vec::new();
        self.shrink_slab_plan(nr_scanned, lru_pages, priority, sc, &mut plan);
        let (mut freed, mut scanned) = (0, 0);
        for e in plan.iter_mut() {
            loop {
                let (s, f, stop) = self.shrink_slab_batch(e, sc);
                scanned += s;
                freed += f;
                if stop {
                    break;
                }
            }
        }
        (freed, scanned)
    }

    /// drop_slab (echo 2 > drop_caches): 2.6.39 repeats shrink_slab(1000, GFP_KERNEL,
    /// 1000) while more than 10 objects are freed; 6.x repeats shrink_slab at priority 0
    /// over every cgroup while (freed >> shift++) > 1. Returns slab pages freed.
    pub fn drop_slab(&mut self) -> u64 {
        let before = self.mm.slab.pages(true) + self.mm.slab.pages(false);
        let sc = ShrinkControl { gfp_fs: true, ..Default::default() };
        if self.profile.slab_allocator == super::slab::SlabAllocator::Slab {
            loop {
                let (freed, _) = self.shrink_slab(1000, 1000, 0, &sc);
                if freed <= 10 {
                    break;
                }
            }
        } else {
            let mut shift = 0;
            loop {
                let mut freed = 0;
                let mut ids = vec![super::lru::ROOT_LRUVEC];
                ids.extend(self.memcg.cgs.iter().filter(|c| c.online).map(|c| c.lruvec).filter(|&l| l != super::lru::ROOT_LRUVEC));
                for id in ids {
                    freed += self.shrink_slab(0, 0, 0, &ShrinkControl { memcg: id, ..sc }).0;
                }
                if (freed >> shift) <= 1 {
                    break;
                }
                shift += 1;
            }
        }
        before - (self.mm.slab.pages(true) + self.mm.slab.pages(false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_cgroups_deferred_work_goes_to_its_parent() {
        let m = memtwin_machine::preset("default").unwrap();
        let mut k = Kernel::boot(m, 1).unwrap();
        let sb = k.register_shrinker(ShrinkerKind::SuperBlock(7), "sb-tree", DEFAULT_SEEKS);
        let shadow = k.shrink.find(ShrinkerKind::ShadowNodes);
        *k.shrink.list[sb as usize].deferred_slot(3) = 50;
        *k.shrink.list[sb as usize].deferred_slot(2) = 5;
        k.reparent_shrinker_deferred(3, 2);
        assert_eq!(*k.shrink.list[sb as usize].deferred_slot(3), 0, "a new cgroup with the id starts with none");
        assert_eq!(*k.shrink.list[sb as usize].deferred_slot(2), 55);
        k.reparent_shrinker_deferred(2, 0);
        assert_eq!(k.shrink.list[sb as usize].nr_deferred, 55, "the root's is the shrinker's own");
        // A shrinker that is not memcg-aware keeps one counter.
        if let Some(s) = shadow {
            let before = k.shrink.list[s as usize].nr_deferred;
            k.reparent_shrinker_deferred(4, 1);
            assert_eq!(k.shrink.list[s as usize].nr_deferred, before);
        }
    }
}
