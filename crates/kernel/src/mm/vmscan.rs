//! Page reclaim (mm/vmscan.c): kswapd and direct reclaim, the anon/file scan balance,
//! active-list aging and inactive-list eviction.
//!
//! The balance rules (inactive_is_low, prepare_scan_count, get_scan_count, lru_note_cost,
//! the era's stop rule of shrink_lruvec) are functions of the pieces they read: an
//! `Lruvec`, the `Profile`, and node-wide numbers (`NodeNumbers`), so they can be tested
//! without booting a machine. The `impl Kernel` part walks the lruvecs and moves pages.

use super::lru::{Lruvec, LruvecId, ROOT_LRUVEC};
use super::page::{Lru, Pfn};
use super::{MappingKind, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use super::swap_state::{BLK_PLUG_FLUSH_PAGES, MAX_SWAP_REQUEST_PAGES};
use crate::profile::{FirstRefActivates, IsolatedThrottle, KswapdBalance, Profile, ReclaimStop, WritebackThrottle};
use crate::task::{Program, Step};
use crate::Kernel;
use memtwin_engine::{LockKind, LockQueue, Ns, TaskId, NS_PER_MS};
use memtwin_procfs::VmItem;

/// struct scan_control, reduced.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScanControl {
    pub nr_to_reclaim: u64,
    pub nr_reclaimed: u64,
    pub nr_scanned: u64,
    pub priority: u32,
    pub kswapd: bool,
    /// The memory cgroup whose limit is being enforced, by its lruvec id; None: global
    /// reclaim of the node.
    pub target_mem_cgroup: Option<u16>,
    pub may_deactivate_anon: bool,
    pub may_deactivate_file: bool,
    pub file_is_tiny: bool,
    pub cache_trim_mode: bool,
    /// Pages found dirty / under writeback at the inactive tail.
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    /// Pages left because the swap device's queue was full.
    pub nr_congested: u64,
    /// kswapd found pages it had marked for immediate reclaim still under writeback
    /// (shrink_folio_list case 1: nr_immediate).
    pub nr_immediate: u64,
    /// File pages taken off the inactive lists, and those of them dirty and not yet queued
    /// for writeback (sc->nr.file_taken, sc->nr.unqueued_dirty).
    pub nr_file_taken: u64,
    pub nr_unqueued_dirty: u64,
    /// A cgroup with pages was skipped for memory.low (memcg_low_skipped), and the retry
    /// that reclaims such cgroups too (memcg_low_reclaim).
    pub memcg_low_skipped: bool,
    pub memcg_low_reclaim: bool,
    /// Anonymous pages may not be swapped (!MEMCG_RECLAIM_MAY_SWAP: v1 reclaim for a
    /// memory+swap limit, where swapping would not lower the charge).
    pub no_swap: bool,
    /// The reclaim cost of each type in the target lruvec (prepare_scan_count copies
    /// target_lruvec->anon_cost / file_cost; lru_note_cost adds to every ancestor).
    pub anon_cost: u64,
    pub file_cost: u64,
    /// Reclaim the target cgroup's own lruvec only, not its subtree (2.6.39's
    /// try_to_free_mem_cgroup_pages on the one victim mem_cgroup_hierarchical_reclaim
    /// chose).
    pub target_only: bool,
    /// !sc->may_writepage: dirty file pages are kept, never written by reclaim (kswapd
    /// reclaiming a watermark boost).
    pub no_writepage: bool,
}

impl ScanControl {
    /// cgroup_reclaim(sc).
    pub fn cgroup_reclaim(&self) -> bool {
        self.target_mem_cgroup.is_some()
    }
    /// The lruvec whose state steers this reclaim (mem_cgroup_lruvec(target_mem_cgroup,
    /// pgdat)): the root lruvec for global reclaim, the target cgroup's otherwise. On this
    /// single-node model `target_mem_cgroup` holds the target cgroup's lruvec id
    /// (`MemCgroups::lruvec_memcg` maps it back to the cgroup).
    pub fn target_lruvec(&self) -> LruvecId {
        self.target_mem_cgroup.unwrap_or(ROOT_LRUVEC)
    }
}

/// Node-wide numbers the balance rules read besides the lruvec.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeNumbers {
    /// NR_ACTIVE_FILE + NR_INACTIVE_FILE of the node.
    pub file: u64,
    /// NR_FREE_PAGES of the node.
    pub free: u64,
    /// Sum of the zones' high watermarks.
    pub high_wmark: u64,
    /// vm.swappiness (mem_cgroup_swappiness).
    pub swappiness: u64,
    /// can_reclaim_anon_pages: a swap slot is free.
    pub can_reclaim_anon: bool,
}

/// Outcome of folio_check_references.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ref {
    Activate,
    Keep,
    ReclaimClean,
    Reclaim,
}

/// How many slots the last request in a plug holds: the trailing run of contiguous slots,
/// split every MAX_SWAP_REQUEST_PAGES (max_sectors) as the requests are.
fn plug_tail_run(plug: &[u32]) -> usize {
    let Some(&last) = plug.last() else { return 0 };
    let run = plug.iter().rev().zip((0..=last).rev()).take_while(|(a, b)| **a == *b).count();
    match run % MAX_SWAP_REQUEST_PAGES {
        0 => MAX_SWAP_REQUEST_PAGES,
        r => r,
    }
}

fn int_sqrt(x: u64) -> u64 {
    (x as f64).sqrt() as u64
}

/// inactive_is_low: inactive * ratio < active, ratio = int_sqrt(10 * GB) of the two lists,
/// 1 below 1 GB.
pub fn inactive_is_low(lv: &Lruvec, file: bool, prof: &Profile) -> bool {
    let (inactive, active) = (lv.len(Lru::of(file, false)), lv.len(Lru::of(file, true)));
    if file && !prof.file_inactive_ratio {
        // inactive_file_is_low_global (2.6.x .. 4.6).
        return active > inactive;
    }
    let gb = (inactive + active) >> (30 - 12);
    let ratio = if gb > 0 { int_sqrt(10 * gb) } else { 1 };
    inactive * ratio < active
}

/// Refaults of a type since the last reclaim cycle (lruvec WORKINGSET_ACTIVATE_* against
/// lruvec->refaults).
fn refaulting(lv: &Lruvec, file: bool) -> bool {
    let t = file as usize;
    lv.workingset_activate[t] != lv.refaults[t]
}

/// prepare_scan_count (6.x): whether to age the active lists, and the special modes, from
/// the target lruvec and (for global reclaim) the node's file and free pages.
pub fn prepare_scan_count(lv: &Lruvec, node: &NodeNumbers, sc: &mut ScanControl, prof: &Profile) {
    sc.anon_cost = lv.anon_cost;
    sc.file_cost = lv.file_cost;
    sc.may_deactivate_anon = refaulting(lv, false) || inactive_is_low(lv, false, prof);
    sc.may_deactivate_file = refaulting(lv, true) || inactive_is_low(lv, true, prof);
    sc.cache_trim_mode = (lv.len(Lru::InactiveFile) >> sc.priority) > 0 && !sc.may_deactivate_file;
    // "Prevent the reclaimer from falling into the cache trap": only global reclaim.
    sc.file_is_tiny = !sc.cgroup_reclaim()
        && node.file + node.free <= node.high_wmark
        && !sc.may_deactivate_anon
        && (lv.len(Lru::InactiveAnon) >> sc.priority) > 0;
}

/// get_scan_count: how many pages of each evictable list of `lv` to scan at this priority.
/// Order of the result: inactive anon, active anon, inactive file, active file. Before 5.8
/// it also decays the lruvec's recent_scanned/recent_rotated (done under lru_lock there).
pub fn get_scan_count(lv: &mut Lruvec, prof: &Profile, node: &NodeNumbers, sc: &ScanControl) -> [u64; 4] {
    let swappiness = node.swappiness;
    let sizes = lv.evictable_sizes();
    let scan = |i: usize| sizes[i] >> sc.priority;
    let file_only = [0, 0, scan(2), scan(3)];
    let anon_only = [scan(0), scan(1), 0, 0];
    let all = [scan(0), scan(1), scan(2), scan(3)];
    if sc.no_swap || !node.can_reclaim_anon {
        return file_only;
    }
    // "memcg users want to use this knob to disable swapping for individual groups
    // completely" (get_scan_count, 3.5+): cgroup reclaim at swappiness 0 is file only.
    if sc.cgroup_reclaim() && swappiness == 0 && prof.memcg_swappiness_zero_file_only {
        return file_only;
    }
    if sc.priority == 0 && swappiness > 0 {
        return all; // SCAN_EQUAL
    }
    let (ap, fp) = if prof.cost_balance {
        if sc.file_is_tiny {
            return anon_only;
        }
        if sc.cache_trim_mode {
            return file_only;
        }
        // SCAN_FRACT: weigh each type by swappiness and the cost of reclaiming it, the
        // costs of the target lruvec (sc->anon_cost, sc->file_cost).
        let total = sc.anon_cost + sc.file_cost;
        let anon_cost = total + sc.anon_cost;
        let file_cost = total + sc.file_cost;
        let total = anon_cost + file_cost;
        let ap = swappiness * (total + 1) / (anon_cost + 1);
        let fp = (200 - swappiness) * (total + 1) / (file_cost + 1);
        (ap, fp)
    } else {
        // Before 5.9 (get_scan_count in 5.4): global reclaim of a node whose file
        // pages plus free memory are under the high watermark goes for anon.
        if !sc.cgroup_reclaim()
            && node.file + node.free <= node.high_wmark
            && !inactive_is_low(lv, false, prof)
            && (sizes[0] >> sc.priority) > 0
        {
            return anon_only;
        }
        // Enough inactive file pages: leave anon alone — unless file pages refault
        // (inactive_list_is_low: refaults since the last cycle make the ratio 0).
        // "mm,vmscan: only evict file pages when we have plenty" (3.8): not in 2.6.39.
        let file_inactive_low = refaulting(lv, true) || inactive_is_low(lv, true, prof);
        if prof.file_is_plenty && !file_inactive_low && (sizes[2] >> sc.priority) > 0 {
            return file_only;
        }
        // get_scan_count in 2.6.39 weighs (prio + 1); from 3.x on, prio.
        let plus = prof.scan_prio_plus_one as u64;
        let anon_prio = swappiness + plus;
        let file_prio = 200 - swappiness + plus;
        let anon_size = sizes[0] + sizes[1];
        let file_size = sizes[2] + sizes[3];
        for (i, size) in [(0usize, anon_size), (1, file_size)] {
            if lv.recent_scanned[i] > size / 4 {
                lv.recent_scanned[i] /= 2;
                lv.recent_rotated[i] /= 2;
            }
        }
        let ap = anon_prio * (lv.recent_scanned[0] + 1) / (lv.recent_rotated[0] + 1);
        let fp = file_prio * (lv.recent_scanned[1] + 1) / (lv.recent_rotated[1] + 1);
        (ap, fp)
    };
    let denom = (ap + fp).max(1);
    [scan(0) * ap / denom, scan(1) * ap / denom, scan(2) * fp / denom, scan(3) * fp / denom]
}

/// lru_note_cost (5.8 to 6.5; 6.1 is the reference): the reclaim cost of a type is the
/// pages it had to write out (shrink_inactive_list's nr_pageout) plus its workingset
/// refaults (lru_note_cost_folio); both decay once they exceed a quarter of the LRU.
pub fn lru_note_cost(lv: &mut Lruvec, file: bool, nr_pages: u64) {
    let lrusize = lv.file_lru() + lv.anon_lru();
    lru_note_cost_sized(lv, file, nr_pages, lrusize);
}

/// lru_note_cost on one lruvec of the walk up the hierarchy, `lrusize` being the LRU pages
/// it accounts (lruvec_page_state: its cgroup's subtree).
pub fn lru_note_cost_sized(lv: &mut Lruvec, file: bool, nr_pages: u64, lrusize: u64) {
    if file { lv.file_cost += nr_pages } else { lv.anon_cost += nr_pages }
    if lv.file_cost + lv.anon_cost > lrusize / 4 {
        lv.file_cost /= 2;
        lv.anon_cost /= 2;
    }
}

/// What shrink_lruvec does after a round of batches; returns whether to stop.
///
/// * 2.6.39 (shrink_zone): stop once nr_to_reclaim is met below DEF_PRIORITY.
/// * 3.11 .. 5.x (shrink_lruvec, scan_adjusted): once nr_to_reclaim is met, stop the
///   smaller of anon/file and cut the other to the share of its original target not yet
///   scanned — once (scan_adjusted = true), then scan what is left.
/// * 6.0+ ("mm: vmscan: fix extreme overreclaim and swap floods"): the same adjustment
///   after every round (proportional_reclaim is not set by it).
pub fn lruvec_enough(prof: &Profile, nr: &mut [u64; 4], targets: &[u64; 4], reclaimed: u64, sc: &ScanControl, scan_adjusted: &mut bool) -> bool {
    let enough = reclaimed >= sc.nr_to_reclaim;
    if prof.reclaim_stop == ReclaimStop::BelowDefPriority {
        return enough && sc.priority < DEF_PRIORITY;
    }
    if !enough || *scan_adjusted {
        return false;
    }
    let nr_file = nr[2] + nr[3];
    let nr_anon = nr[0] + nr[1];
    if nr_file == 0 || nr_anon == 0 {
        return true;
    }
    // Indices: anon lists 0, 1; file lists 2, 3.
    let (stop, other, percentage) = if nr_file > nr_anon {
        (0, 2, nr_anon * 100 / (targets[0] + targets[1] + 1))
    } else {
        (2, 0, nr_file * 100 / (targets[2] + targets[3] + 1))
    };
    nr[stop] = 0;
    nr[stop + 1] = 0;
    for l in [other, other + 1] {
        let scanned = targets[l] - nr[l];
        nr[l] = targets[l] * (100 - percentage) / 100;
        nr[l] -= nr[l].min(scanned);
    }
    if prof.reclaim_stop == ReclaimStop::ScanAdjustedOnce {
        *scan_adjusted = true;
    }
    false
}

/// Whether one young PTE is enough to activate a page of this kind of mapping. Before 5.9
/// page_check_references returned PAGEREF_ACTIVATE for any referenced swap-backed page
/// (anon and shmem; 2.6.39: PageAnon only); since 5.9 (b518154e59aa, "protect the
/// workingset on anonymous LRU") anon pages need a second reference like file pages.
pub fn first_reference_activates(prof: &Profile, kind: MappingKind) -> bool {
    match prof.first_ref_activates {
        FirstRefActivates::None => false,
        FirstRefActivates::SwapBacked => matches!(kind, MappingKind::Anon | MappingKind::Shmem),
        FirstRefActivates::AnonOnly => kind == MappingKind::Anon,
    }
}

impl Kernel {
    /// Anonymous pages can be reclaimed only into swap.
    fn can_reclaim_anon(&self) -> bool {
        self.swap_available()
    }

    /// The numbers get_scan_count reads for lruvec `id`: the node's, with the swappiness
    /// of the lruvec's cgroup (mem_cgroup_swappiness: v1's memory.swappiness) and anon
    /// reclaim only while the cgroup and its ancestors have swap room
    /// (can_reclaim_anon_pages -> mem_cgroup_get_nr_swap_pages, v2).
    fn lruvec_numbers(&self, id: LruvecId) -> NodeNumbers {
        let mut node = self.node_numbers();
        if !self.memcg.active() || id == ROOT_LRUVEC {
            return node;
        }
        let memcg = self.memcg.lruvec_memcg(id);
        node.swappiness = self.memcg.cgs[memcg as usize].swappiness.unwrap_or(self.sysctl.swappiness) as u64;
        if self.memcg.mode == super::memcontrol::CgroupMode::V2 {
            node.can_reclaim_anon &= self.memcg.ancestors(memcg).iter().all(|&i| {
                let a = &self.memcg.cgs[i as usize];
                i == super::memcontrol::ROOT_MEMCG || a.swap.usage < a.swap.max
            });
        }
        node
    }

    /// The node-wide numbers the balance rules read.
    pub fn node_numbers(&self) -> NodeNumbers {
        NodeNumbers {
            file: self.mm.file_lru(),
            free: self.mm.nr_free(),
            high_wmark: self.mm.wmark_pages().high,
            swappiness: self.sysctl.swappiness as u64,
            can_reclaim_anon: self.can_reclaim_anon(),
        }
    }

    /// inactive_is_low of lruvec `id`.
    pub fn inactive_is_low(&self, id: LruvecId, file: bool) -> bool {
        inactive_is_low(self.mm.lruvec(id), file, &self.profile)
    }

    /// get_scan_count of lruvec `id`.
    pub fn get_scan_count(&mut self, id: LruvecId, sc: &ScanControl) -> [u64; 4] {
        let node = self.lruvec_numbers(id);
        get_scan_count(&mut self.mm.lruvecs[id as usize], &self.profile, &node, sc)
    }

    /// lru_note_cost on lruvec `id` and (6.x: `do { ... } while ((lruvec =
    /// parent_lruvec(lruvec)))`) the lruvec of every ancestor cgroup, each decaying against
    /// the LRU pages of its subtree, so that cgroup and global reclaim weigh the costs of
    /// the whole subtree they target.
    pub fn lru_note_cost(&mut self, id: LruvecId, file: bool, nr_pages: u64) {
        if !self.memcg.active() || id == ROOT_LRUVEC {
            lru_note_cost(self.mm.lruvec_mut(id), file, nr_pages);
            return;
        }
        let mut memcg = Some(self.memcg.lruvec_memcg(id));
        while let Some(m) = memcg {
            let lv = self.memcg.cgs[m as usize].lruvec;
            let lrusize = if lv == ROOT_LRUVEC { self.mm.file_lru() + self.mm.anon_lru() } else { self.subtree_lru_pages(m) };
            lru_note_cost_sized(self.mm.lruvec_mut(lv), file, nr_pages, lrusize);
            memcg = self.memcg.cgs[m as usize].parent;
        }
    }

    /// Evictable LRU pages of cgroup `m` and its descendants (lruvec_page_state of a
    /// cgroup's lruvec counts its subtree).
    fn subtree_lru_pages(&self, m: super::memcontrol::MemcgId) -> u64 {
        let c = &self.memcg.cgs[m as usize];
        let lv = self.mm.lruvec(c.lruvec);
        lv.file_lru() + lv.anon_lru() + c.children.iter().map(|&ch| self.subtree_lru_pages(ch)).sum::<u64>()
    }

    /// mem_cgroup_iter(target, prev): the lruvecs of the node that this reclaim scans, one
    /// after the other in the cgroups' pre-order (css_next_descendant_pre): the target
    /// cgroup and its descendants, or every cgroup from the root for global reclaim.
    pub fn mem_cgroup_iter(&self, sc: &ScanControl, prev: Option<LruvecId>) -> Option<LruvecId> {
        if !self.memcg.active() {
            return match prev {
                None => Some(sc.target_lruvec()),
                Some(_) => None,
            };
        }
        if sc.target_only {
            return match prev {
                None => Some(sc.target_lruvec()),
                Some(_) => None,
            };
        }
        let root = self.memcg.lruvec_memcg(sc.target_lruvec());
        let order = self.memcg.subtree(root);
        let next = match prev {
            None => 0,
            Some(lv) => {
                let m = self.memcg.lruvec_memcg(lv);
                order.iter().position(|&c| c == m).map_or(order.len(), |i| i + 1)
            }
        };
        order.get(next).map(|&c| self.memcg.cgs[c as usize].lruvec)
    }

    /// snapshot_refaults: remember the workingset activations seen so far in the lruvecs
    /// this reclaim scanned. Called when a reclaim cycle ends (do_try_to_free_pages,
    /// balance_pgdat): until then, refaults since the last cycle keep the file active list
    /// unprotected (inactive_list_is_low).
    pub fn snapshot_refaults(&mut self, sc: &ScanControl) {
        let mut it = self.mem_cgroup_iter(sc, None);
        while let Some(id) = it {
            let lv = self.mm.lruvec_mut(id);
            lv.refaults = lv.workingset_activate;
            it = self.mem_cgroup_iter(sc, Some(id));
        }
    }

    /// The lock that guards the LRU lists of lruvec `id`: the lruvec's own lru_lock (5.11+)
    /// or the node's (pgdat->lru_lock / zone->lru_lock before).
    pub(crate) fn lru_lock_index(&self, id: LruvecId) -> usize {
        if self.profile.lru_lock_per_lruvec { id as usize } else { 0 }
    }

    /// Hold time of lru_lock per page moved on or off a list (isolate_lru_folios,
    /// move_folios_to_lru, folio_batch_move_lru). Derived from the cost model: page_cache_ns
    /// is one xarray walk plus one LRU list operation, about half each; the lock covers the
    /// list operation.
    pub fn lru_lock_hold_per_page(&self) -> Ns {
        (self.machine.cpu_model.page_cache_ns / 2).max(1)
    }

    /// Acquire lru_lock of lruvec `id` now for `hold` ns: returns the ns the caller spins
    /// before it gets the lock (spin_lock_irq: the waiter burns system time), recorded as
    /// the task's and the lock's wait. One holder's consecutive acquisitions (a drain of
    /// the LRU-add batch, then the isolation) follow each other without waiting on itself.
    fn lru_lock(&mut self, tid: Option<TaskId>, id: LruvecId, hold: Ns) -> Ns {
        let i = self.lru_lock_index(id);
        if self.reclaim.lru_locks.len() <= i {
            self.reclaim.lru_locks.resize(i + 1, LockQueue::new(LockKind::Spin));
            self.reclaim.lru_lock_holders.resize(i + 1, super::pcp::NO_HOLDER);
        }
        let me = tid.unwrap_or(super::pcp::IRQ_HOLDER);
        let now = self.now;
        let at = if self.reclaim.lru_lock_holders[i] == me { self.reclaim.lru_locks[i].free_at.max(now) } else { now };
        self.reclaim.lru_lock_holders[i] = me;
        let grant = self.reclaim.lru_locks[i].acquire_from(now, at, hold);
        let wait = grant - at;
        if let Some(t) = tid {
            self.tasks[t as usize].lock_wait_ns += wait;
            self.note_lock_wait(t, wait);
        }
        wait
    }

    /// lru_lock taken by the work running now (`Kernel::current`, or completion context)
    /// outside the reclaim path's own states: an LRU-add batch drained, 2.4's per-page
    /// lru_cache_add. A task's spin is system time: in its program's step it joins the
    /// step's burst; in a reclaim path, the path's next burst and its lock wait.
    pub(crate) fn lru_lock_spin(&mut self, id: LruvecId, hold: Ns) -> Ns {
        let tid = self.current;
        let wait = self.lru_lock(tid, id, hold);
        if let Some(t) = tid {
            if wait > 0 {
                if self.reclaim.advancing {
                    self.reclaim.zone_spin += wait;
                } else {
                    self.charge_sys(t, wait);
                }
            }
        }
        wait
    }

    /// too_many_isolated: direct reclaim of one type waits while more pages of it are
    /// isolated than remain on its inactive list (kswapd never waits here).
    pub fn too_many_isolated(&self, file: bool, sc: &ScanControl) -> bool {
        if sc.kswapd {
            return false;
        }
        // writeback_throttling_sane (sane_reclaim before 5.8; scanning_global_lru in
        // 2.6.39): v1 cgroup reclaim is never throttled here.
        if sc.cgroup_reclaim() && self.memcg.mode == super::memcontrol::CgroupMode::V1 {
            return false;
        }
        let (inactive, isolated) = if file {
            (self.mm.lru_len(Lru::InactiveFile), self.mm.stat.isolated_file)
        } else {
            (self.mm.lru_len(Lru::InactiveAnon), self.mm.stat.isolated_anon)
        };
        isolated > inactive
    }

    /// acct_reclaim_writeback, from folio_end_writeback (5.16+): while a reclaimer sleeps
    /// in reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK) the page counts NR_THROTTLED_WRITTEN
    /// (__acct_reclaim_writeback). kswapd throttles there (shrink_node's
    /// `if (sc->nr.immediate)` in its current_is_kswapd() block; 5.16 removed the page
    /// allocator's writeback throttle), and so does v1 cgroup reclaim after waking the
    /// flushers (6.1): once more than SWAP_CLUSTER_MAX pages per throttled task have been
    /// written since the first began, the waiters are woken.
    pub(crate) fn acct_reclaim_writeback(&mut self) {
        let mut kswapd = false;
        if let Some(until) = self.reclaim.writeback_throttled_until {
            if self.now <= until {
                kswapd = true;
            } else {
                self.reclaim.writeback_throttled_until = None;
            }
        }
        let waiters = self.reclaim.wb_throttle_waiters.len() as u64;
        if !kswapd && waiters == 0 {
            return;
        }
        self.vm.inc(VmItem::NrThrottledWritten);
        if waiters > 0 {
            let written = self.vm.get(VmItem::NrThrottledWritten) - self.reclaim.wb_throttle_start;
            if written > SWAP_CLUSTER_MAX * (waiters + kswapd as u64) {
                for t in std::mem::take(&mut self.reclaim.wb_throttle_waiters) {
                    self.sched.wake(t, self.now, None);
                }
            }
        }
    }

    /// ext4_writepage, called from reclaim (PF_MEMALLOC), refuses a page with delayed
    /// allocation ("We cannot do block allocation or other extent handling in this
    /// function": ext4_bh_delay_or_unwritten -> redirty_page_for_writepage): a page of an
    /// ext4 file beyond what has reached the disk (i_disksize) has no blocks yet. ext3 and
    /// ext2 allocate at write time; the model's generated trees and libraries are on disk.
    pub(crate) fn writepage_redirties(&self, p: Pfn) -> bool {
        let m = self.mm.pages.mapping(p);
        let Some(&ino) = self.fs.by_mapping.get(&m) else { return false };
        let i = &self.fs.inodes[ino as usize];
        self.fs.mounts[i.mount as usize].fstype == "ext4" && self.mm.pages.index(p) * super::PAGE_SIZE >= i.disk_size
    }

    /// wake_throttle_isolated: reclaimers asleep in too_many_isolated go on once the
    /// isolated pages are back under the limit (5.16+; older kernels sleep their time out).
    fn wake_throttle_isolated(&mut self) {
        if self.reclaim.isolated_waiters.is_empty() || self.profile.isolated_throttle != IsolatedThrottle::ReclaimThrottleOnce {
            return;
        }
        let sc = ScanControl::default();
        if self.too_many_isolated(false, &sc) || self.too_many_isolated(true, &sc) {
            return;
        }
        for t in std::mem::take(&mut self.reclaim.isolated_waiters) {
            self.sched.wake(t, self.now, None);
        }
    }

    /// Start direct reclaim (try_to_free_pages) for `tid`: the task runs the path before
    /// its program is called again.
    pub fn start_direct_reclaim(&mut self, tid: TaskId) {
        let sc = ScanControl { nr_to_reclaim: SWAP_CLUSTER_MAX, ..Default::default() };
        self.reclaim.set_path(tid, ReclaimPath::new(sc, true, true, self.now));
    }

    /// Start a reclaim of slab only for `tid`: one shrink_slab pass at `priority` (its
    /// shrinker states, no LRU scanning), run by the task like direct reclaim and collected
    /// the same way (`ReclaimState::take_done`). `nr_scanned` and `lru_pages` feed 2.6.39's
    /// target formula. For reclaim methods that separate slab from page reclaim.
    pub fn start_slab_reclaim(&mut self, tid: TaskId, priority: u32, nr_scanned: u64, lru_pages: u64) {
        let sc = ScanControl { nr_to_reclaim: SWAP_CLUSTER_MAX, priority, ..Default::default() };
        let mut path = ReclaimPath::new(sc, false, true, self.now);
        let ssc = super::shrinker::ShrinkControl { gfp_fs: true, ..Default::default() };
        let mut plan = Vec::new();
        self.shrink_slab_plan(nr_scanned, lru_pages, priority as i32, &ssc, &mut plan);
        path.shrink_plan = plan;
        path.node_passes = 1;
        path.state = RState::DoShrinkSlab;
        self.reclaim.set_path(tid, path);
    }

    /// Start split reclaim's slab reclaim for `tid` (mm/split_reclaim.rs): the task runs it
    /// before its program is called again, and the slab allocator collects it on the
    /// retry (`ReclaimState::take_done_split_slab`).
    pub fn start_split_slab_reclaim(&mut self, tid: TaskId) {
        let sc = ScanControl { nr_to_reclaim: SWAP_CLUSTER_MAX, ..Default::default() };
        let mut path = ReclaimPath::new(sc, false, true, self.now);
        path.split_slab = true;
        path.dcache_left = super::shrinker::SHRINK_BATCH;
        path.state = RState::SplitSlabDcache;
        self.reclaim.set_path(tid, path);
    }

    /// Start one kswapd pass (kswapd_shrink_node) for `tid`.
    pub fn start_kswapd_pass(&mut self, tid: TaskId, sc: ScanControl) {
        self.reclaim.set_path(tid, ReclaimPath::new(sc, false, true, self.now));
    }

    /// Run the task's reclaim path until it must wait (a CPU burst, a sleep) or is done.
    pub(crate) fn reclaim_path_run(&mut self, tid: TaskId) -> PathStep {
        loop {
            let Some(mut path) = self.reclaim.paths[tid as usize].take() else { return PathStep::Done };
            let r = self.reclaim_advance(Some(tid), &mut path);
            if matches!(r, PathStep::Sleep { .. } | PathStep::Done) {
                // schedule() -> blk_flush_plug: a reclaimer that sleeps submits its plug.
                self.flush_reclaim_plug(&mut path);
            }
            self.reclaim.paths[tid as usize] = Some(path);
            match r {
                PathStep::Continue | PathStep::Burst { sys: 0 } => continue,
                r => return r,
            }
        }
    }

    /// Run a path with no time passing (its waits and bursts skipped); tests of the
    /// reclaim decisions use it.
    pub(crate) fn reclaim_path_untimed(&mut self, path: &mut ReclaimPath) {
        while !matches!(self.reclaim_advance(None, path), PathStep::Done) {}
        self.flush_reclaim_plug(path);
    }

    /// The swap writes of one shrink_folio_list. With a block plug (3.2+, "vmscan: add
    /// block plug for page reclaim") they join the reclaimer's plug, where a bio that
    /// continues the last request merges into it (blk_attempt_plug_merge) up to
    /// max_sectors; a bio that starts a new request flushes the plug once the last request
    /// has reached BLK_PLUG_FLUSH_SIZE (128 KiB, blk_add_rq_to_plug). Before (2.6.39) each
    /// batch goes to the queue at once.
    fn plug_swap_writes(&mut self, path: &mut ReclaimPath) {
        if !self.profile.reclaim_plug {
            let mut pending = std::mem::take(&mut self.swap.pending_buf);
            self.submit_swap_writes(&mut pending);
            self.swap.pending_buf = pending;
            return;
        }
        let mut batch = std::mem::take(&mut self.swap.pending_buf);
        batch.sort_unstable();
        // The last request in the plug: its contiguous slots.
        let mut run = plug_tail_run(&path.plug);
        for &s in &batch {
            if let Some(&last) = path.plug.last() {
                let continues = s == last + 1 && run < MAX_SWAP_REQUEST_PAGES;
                if continues {
                    run += 1;
                } else {
                    if run >= BLK_PLUG_FLUSH_PAGES {
                        self.flush_reclaim_plug(path);
                    }
                    run = 1;
                }
            } else {
                run = 1;
            }
            path.plug.push(s);
            self.swap.plugged += 1;
        }
        batch.clear();
        self.swap.pending_buf = batch;
    }

    /// blk_finish_plug / blk_flush_plug: the plugged swap writes go to the device.
    fn flush_reclaim_plug(&mut self, path: &mut ReclaimPath) {
        if path.plug.is_empty() {
            return;
        }
        self.swap.plugged -= path.plug.len() as u64;
        let mut plug = std::mem::take(&mut path.plug);
        self.submit_swap_writes(&mut plug);
        path.plug = plug;
    }

    /// One shrink_node pass at `sc.priority`, with no time passing (tests).
    pub fn shrink_node(&mut self, sc: &mut ScanControl) {
        let mut path = ReclaimPath::new(*sc, false, false, self.now);
        path.state = RState::ShrinkNode;
        path.node_passes = 1;
        self.reclaim_path_untimed(&mut path);
        *sc = path.sc;
    }

    /// shrink_inactive_list of up to `n` pages of list `l` of lruvec `id`, with no time
    /// passing (tests); returns the pages reclaimed.
    pub fn shrink_inactive_list(&mut self, id: LruvecId, n: u64, l: Lru, sc: &mut ScanControl) -> u64 {
        let mut path = ReclaimPath::new(*sc, false, false, self.now);
        path.lruvec = id;
        path.begin_batch(l, n, RState::Done);
        self.reclaim_path_untimed(&mut path);
        *sc = path.sc;
        path.batch_reclaimed
    }

    /// shrink_active_list of up to `n` pages of list `l` of lruvec `id`, with no time
    /// passing (tests).
    pub fn shrink_active_list(&mut self, id: LruvecId, n: u64, l: Lru, sc: &mut ScanControl) {
        self.shrink_inactive_list(id, n, l, sc);
    }

    /// A task leaves its reclaim path (killed): the pages it holds isolated go back to
    /// their lists, those it reclaimed to the free list.
    pub(crate) fn reclaim_path_abort(&mut self, tid: TaskId) {
        let Some(mut path) = self.reclaim.paths.get_mut(tid as usize).and_then(|p| p.take()) else { return };
        if path.timed && !path.done() {
            // The invocation ends here (a fatal signal): it still has its latency record.
            let latency = if path.started { self.now - path.start } else { 0 };
            if path.sc.cgroup_reclaim() {
                self.reclaim.stats.record_memcg(latency, path.lock_wait_ns);
            } else {
                let kind = if path.sc.kswapd { crate::ReclaimKind::Kswapd } else { self.direct_reclaim_kind() };
                self.reclaim.stats.record(kind, latency, path.lock_wait_ns);
            }
        }
        let l = path.batch_l;
        let waited = std::mem::take(&mut path.wait_wb);
        let pending: Vec<(Pfn, Lru, bool)> = path.isolated.drain(..).chain(waited).map(|p| (p, l, false)).chain(path.putback.drain(..)).collect();
        path.putback = pending;
        let file = l.is_file();
        for p in std::mem::take(&mut path.to_free) {
            self.isolated_dec(file, 1);
            self.free_reclaimed_page(p);
        }
        self.move_folios_to_lru(&mut path);
        self.flush_reclaim_plug(&mut path);
        self.reclaim.isolated_waiters.retain(|&t| t != tid);
        self.reclaim.wb_throttle_waiters.retain(|&t| t != tid);
    }

    fn isolated_inc(&mut self, file: bool, n: u64) {
        if file { self.mm.stat.isolated_file += n } else { self.mm.stat.isolated_anon += n }
    }
    fn isolated_dec(&mut self, file: bool, n: u64) {
        if file { self.mm.stat.isolated_file -= n } else { self.mm.stat.isolated_anon -= n }
    }

    /// move_folios_to_lru: the pages a batch kept go back to their lruvec's lists (head,
    /// or tail for pages rotated there); a page truncated while isolated is freed instead.
    fn move_folios_to_lru(&mut self, path: &mut ReclaimPath) {
        let file = path.batch_l.is_file();
        let n = path.putback.len() as u64;
        for (p, l, tail) in path.putback.drain(..) {
            if self.mm.pages.mapping(p) == 0 {
                self.free_page(p);
                continue;
            }
            let id = self.mm.page_lruvec(p);
            let lv = &mut self.mm.lruvecs[id as usize];
            self.mm.pages.set_lru(p, Lru::None);
            if tail { lv.add_tail(&mut self.mm.pages, p, l) } else { lv.add_head(&mut self.mm.pages, p, l) }
        }
        self.isolated_dec(file, n);
        self.wake_throttle_isolated();
    }

    /// Advance a reclaim path by one state. `tid` is None for untimed runs (tests).
    fn reclaim_advance(&mut self, tid: Option<TaskId>, path: &mut ReclaimPath) -> PathStep {
        if !path.started {
            // The path starts when the task first runs it (the work its caller charged
            // before entering it runs first).
            path.started = true;
            path.start = self.now;
        }
        const ORDER: [Lru; 4] = [Lru::InactiveAnon, Lru::ActiveAnon, Lru::InactiveFile, Lru::ActiveFile];
        match path.state {
            RState::DoTryToFreePages => {
                if path.node_passes > 0 && !path.sc.kswapd && self.profile.flush_total_scanned {
                    // 2.6.39 do_try_to_free_pages: "Try to write back as many pages as we
                    // just scanned" once the total passes one and a half nr_to_reclaim,
                    // unless this priority reclaimed enough ("goto out" comes first).
                    // (laptop_mode, which writes the whole world, is not modelled.)
                    let sc = &path.sc;
                    if sc.nr_reclaimed < sc.nr_to_reclaim && sc.nr_scanned > sc.nr_to_reclaim.saturating_add(sc.nr_to_reclaim / 2) {
                        self.wakeup_flusher_threads_for_reclaim(Some(sc.nr_scanned));
                    }
                }
                if path.node_passes > 0 {
                    let sc = &path.sc;
                    let more = path.loop_priorities && sc.nr_reclaimed < sc.nr_to_reclaim && sc.nr_congested == 0 && sc.priority > 0;
                    if !more {
                        return self.reclaim_finish(tid, path);
                    }
                    // 2.6.39 do_try_to_free_pages: "Take a nap, wait for some writeback to
                    // complete": below DEF_PRIORITY - 2, after a priority that scanned
                    // pages, wait_iff_congested(zone, BLK_RW_ASYNC, HZ/10). It sleeps (D
                    // state) only while some queue is congested and the zone is flagged
                    // ZONE_CONGESTED, until a queue's congestion clears; otherwise it is a
                    // cond_resched.
                    let nap = self.profile.reclaim_writes_file
                        && path.timed
                        && !path.napped
                        && sc.priority < DEF_PRIORITY - 2
                        && sc.nr_scanned > path.pass_scanned_at
                        && self.mm.zone_congested;
                    if nap {
                        if let Some(clear) = self.block.congestion_clears_at() {
                            path.napped = true;
                            let until = clear.min(self.now + HZ_NS / 10).max(self.now + 1);
                            return PathStep::Sleep { until, io: true };
                        }
                    }
                    path.napped = false;
                    path.sc.priority -= 1;
                }
                path.node_passes += 1;
                path.pass_scanned_at = path.sc.nr_scanned;
                path.state = RState::ShrinkNode;
                PathStep::Continue
            }
            RState::ShrinkNode => {
                if self.memcg.active() {
                    // shrink_node_memcgs: effective protection of the reclaimed subtree.
                    let root = self.memcg.lruvec_memcg(path.sc.target_lruvec());
                    self.memcg_calculate_protection(root);
                }
                let node = self.node_numbers();
                prepare_scan_count(self.mm.lruvec(path.sc.target_lruvec()), &node, &mut path.sc, &self.profile);
                match self.mem_cgroup_iter(&path.sc, None) {
                    Some(id) => {
                        path.lruvec = id;
                        path.state = RState::ShrinkLruvec;
                    }
                    None => path.state = RState::NodeDone,
                }
                PathStep::Continue
            }
            RState::ShrinkLruvec => {
                let id = path.lruvec;
                let memcg = self.memcg.lruvec_memcg(id);
                // shrink_node_memcgs (6.1): memory.min keeps a cgroup out of reclaim;
                // memory.low too, unless nothing else was reclaimable (the retry with
                // memcg_low_reclaim), which counts MEMCG_LOW.
                if self.memcg_below_min(memcg) {
                    path.state = RState::NextLruvec;
                    return PathStep::Continue;
                }
                if self.memcg_below_low(memcg) {
                    if !path.sc.memcg_low_reclaim {
                        path.sc.memcg_low_skipped = true;
                        path.state = RState::NextLruvec;
                        return PathStep::Continue;
                    }
                    self.memcg.event(memcg, super::memcontrol::MemcgEvent::Low);
                }
                path.nr = self.get_scan_count(id, &path.sc);
                if memcg != super::memcontrol::ROOT_MEMCG {
                    // apply_proportional_protection (get_scan_count): scan the part of the
                    // cgroup's lists above its protection, at least SWAP_CLUSTER_MAX.
                    let protection = self.memcg_protection(memcg, path.sc.memcg_low_reclaim);
                    if protection > 0 {
                        let usage = self.memcg.cgs[memcg as usize].memory.usage.max(protection);
                        let sizes = self.mm.lruvec(id).evictable_sizes();
                        for (i, n) in path.nr.iter_mut().enumerate() {
                            if *n == 0 {
                                continue;
                            }
                            let size = sizes[i];
                            let scan = (size - (size as u128 * protection as u128 / (usage as u128 + 1)) as u64).max(SWAP_CLUSTER_MAX.min(size));
                            // The type split of get_scan_count applies to the reduced size.
                            *n = ((*n as u128 * scan as u128) / size.max(1) as u128) as u64;
                        }
                    }
                }
                path.targets = path.nr;
                path.reclaimed_here = 0;
                // shrink_lruvec (3.11+): global direct reclaim at DEF_PRIORITY keeps
                // scanning its whole target ("we are direct reclaiming implies that kswapd
                // is not keeping up and it is best to do a batch of work at once"); kswapd
                // (and memcg reclaim) scan anon and file in proportion once nr_to_reclaim
                // is met.
                let sc = &path.sc;
                path.scan_adjusted = !sc.kswapd && !sc.cgroup_reclaim() && sc.priority == DEF_PRIORITY;
                path.list = 0;
                path.state = RState::NextBatch;
                PathStep::Continue
            }
            RState::NextBatch => {
                loop {
                    if path.list == 0 && !(path.nr[0] > 0 || path.nr[2] > 0 || path.nr[3] > 0) {
                        path.state = RState::LruvecDone;
                        return PathStep::Continue;
                    }
                    if path.list == 4 {
                        path.list = 0;
                        if path.sc.nr_congested > 0 {
                            // The reclaimer would now sleep in the block layer waiting for
                            // a request slot; it does not go on to evict other pages.
                            path.state = RState::LruvecDone;
                            return PathStep::Continue;
                        }
                        let (mut nr, targets, mut adj) = (path.nr, path.targets, path.scan_adjusted);
                        let stop = lruvec_enough(&self.profile, &mut nr, &targets, path.reclaimed_here, &path.sc, &mut adj);
                        path.nr = nr;
                        path.scan_adjusted = adj;
                        if stop {
                            path.state = RState::LruvecDone;
                            return PathStep::Continue;
                        }
                        continue;
                    }
                    let i = path.list;
                    path.list += 1;
                    if path.nr[i] == 0 {
                        continue;
                    }
                    let n = path.nr[i].min(SWAP_CLUSTER_MAX);
                    path.nr[i] -= n;
                    let l = ORDER[i];
                    if l.is_active() && !(if l.is_file() { path.sc.may_deactivate_file } else { path.sc.may_deactivate_anon }) {
                        continue;
                    }
                    path.begin_batch(l, n, RState::NextBatch);
                    return PathStep::Continue;
                }
            }
            RState::LruLock => {
                let file = path.batch_l.is_file();
                if path.timed && !path.batch_l.is_active() && self.too_many_isolated(file, &path.sc) {
                    let once = self.profile.isolated_throttle != IsolatedThrottle::CongestionWaitLoop;
                    if path.stalled && once {
                        // Slept once already: this shrink_inactive_list reclaims nothing.
                        path.state = path.after_batch;
                        return PathStep::Continue;
                    }
                    path.stalled = true;
                    path.state = RState::ThrottleIsolated;
                    let timeout = match self.profile.isolated_throttle {
                        IsolatedThrottle::ReclaimThrottleOnce => {
                            if let Some(t) = tid {
                                self.reclaim.isolated_waiters.push(t);
                            }
                            HZ_NS / 50
                        }
                        IsolatedThrottle::Msleep100Once => 100 * NS_PER_MS,
                        IsolatedThrottle::CongestionWaitLoop => HZ_NS / 10,
                    };
                    return PathStep::Sleep { until: self.now + timeout, io: false };
                }
                // lru_add_drain(): this CPU's LRU-add batch joins the lists first (its lock
                // waits go to the burst through zone_spin; its hold is this path's work).
                let drain_hold = self.lru_add_drain();
                let id = path.lruvec;
                let avail = self.mm.lruvec(id).len(path.batch_l).min(path.batch_n);
                if avail == 0 {
                    path.state = path.after_batch;
                    return if path.timed { PathStep::Burst { sys: drain_hold } } else { PathStep::Continue };
                }
                path.state = RState::IsolateLruFolios;
                if !path.timed {
                    return PathStep::Continue;
                }
                let hold = avail * self.lru_lock_hold_per_page();
                let wait = self.lru_lock(tid, id, hold);
                path.lock_wait_ns += wait;
                PathStep::Burst { sys: drain_hold + wait + hold }
            }
            RState::ThrottleIsolated => {
                if let Some(t) = tid {
                    self.reclaim.isolated_waiters.retain(|&w| w != t);
                }
                path.state = RState::LruLock;
                PathStep::Continue
            }
            RState::IsolateLruFolios => {
                // isolate_lru_folios: take up to batch_n pages off the tail.
                let id = path.lruvec;
                for _ in 0..path.batch_n {
                    let Some(p) = self.mm.lru_tail(id, path.batch_l) else { break };
                    // The list is a chain of dependent frame loads; pages that were added
                    // in allocation order sit on it in frame order, so the frames a few
                    // lines on are asked for ahead (a hint: nothing is read from them).
                    self.mm.pages.prefetch(p.wrapping_add(16));
                    self.mm.lruvecs[id as usize].del(&mut self.mm.pages, p);
                    self.mm.pages.set_lru(p, Lru::Isolated);
                    path.isolated.push(p);
                }
                // The next batch's chain starts at the new tail (its record was just
                // written): it is followed one frame per page while this batch is decided.
                path.chase = self.mm.lru_tail(id, path.batch_l).unwrap_or(NO_CHASE);
                let k = path.isolated.len() as u64;
                self.isolated_inc(path.batch_l.is_file(), k);
                path.state = RState::ShrinkFolioList;
                // The per-page work of shrink_folio_list (or of the deactivation loop),
                // done before its decisions take effect.
                PathStep::Burst { sys: if path.timed { k * self.machine.cpu_model.reclaim_scan_ns } else { 0 } }
            }
            RState::ShrinkFolioList => {
                if path.batch_l.is_active() {
                    self.shrink_active_batch(path);
                } else {
                    self.shrink_folio_list(tid, path);
                }
                path.state = if path.wait_wb.is_empty() { RState::FreeFolios } else { RState::FolioWaitWriteback };
                let freed = path.to_free.len() as u64;
                let extra = std::mem::take(&mut self.reclaim.pass_ns);
                let cm = &self.machine.cpu_model;
                PathStep::Burst { sys: if path.timed { freed * (cm.page_cache_ns + cm.page_alloc_ns) + extra } else { 0 } }
            }
            RState::ReclaimThrottleWriteback => {
                if let Some(t) = tid {
                    self.reclaim.wb_throttle_waiters.retain(|&w| w != t);
                }
                path.state = path.after_batch;
                PathStep::Continue
            }
            RState::FolioWaitWriteback => {
                // folio_wait_writeback: asleep (D state, iowait) until the pages' writes
                // have completed, woken at each completion to look again.
                if path.wait_wb.iter().any(|&p| self.mm.pages.writeback(p)) {
                    let until = self.block.next_completion().unwrap_or(self.now + 10 * memtwin_engine::NS_PER_MS).max(self.now + 1);
                    return PathStep::Sleep { until, io: true };
                }
                path.isolated = std::mem::take(&mut path.wait_wb);
                path.retrying_wb = true;
                path.state = RState::ShrinkFolioList;
                PathStep::Continue
            }
            RState::FreeFolios => {
                // free_unref_page_list: the reclaimed pages reach the free list now.
                let file = path.batch_l.is_file();
                let freed = path.to_free.len() as u64;
                for p in std::mem::take(&mut path.to_free) {
                    self.free_reclaimed_page(p);
                }
                self.isolated_dec(file, freed);
                path.state = RState::MoveFoliosToLru;
                // A CPU list that filled up went back to the buddy lists under zone->lock.
                let zone_spin = std::mem::take(&mut self.reclaim.zone_spin);
                path.lock_wait_ns += zone_spin;
                if !path.timed || path.putback.is_empty() {
                    return PathStep::Burst { sys: zone_spin };
                }
                let hold = path.putback.len() as u64 * self.lru_lock_hold_per_page();
                let wait = self.lru_lock(tid, path.lruvec, hold);
                path.lock_wait_ns += wait;
                PathStep::Burst { sys: zone_spin + wait + hold }
            }
            RState::MoveFoliosToLru => {
                self.move_folios_to_lru(path);
                path.state = path.after_batch;
                if std::mem::take(&mut path.throttle_wb) {
                    if let Some(t) = tid {
                        // reclaim_throttle(pgdat, VMSCAN_THROTTLE_WRITEBACK): at most HZ/10,
                        // uninterruptible (schedule_timeout, not counted as iowait).
                        if self.reclaim.wb_throttle_waiters.is_empty() {
                            self.reclaim.wb_throttle_start = self.vm.get(VmItem::NrThrottledWritten);
                        }
                        self.reclaim.wb_throttle_waiters.push(t);
                        path.state = RState::ReclaimThrottleWriteback;
                        return PathStep::Sleep { until: self.now + HZ_NS / 10, io: false };
                    }
                }
                PathStep::Continue
            }
            RState::LruvecDone => {
                // blk_finish_plug at the end of shrink_lruvec's loop.
                self.flush_reclaim_plug(path);
                // Even without evicting anon, keep its active/inactive balance.
                let id = path.lruvec;
                if self.can_reclaim_anon() && self.inactive_is_low(id, false) {
                    path.begin_batch(Lru::ActiveAnon, SWAP_CLUSTER_MAX, RState::NextLruvec);
                } else {
                    path.state = RState::NextLruvec;
                }
                PathStep::Continue
            }
            RState::NextLruvec => {
                match self.mem_cgroup_iter(&path.sc, Some(path.lruvec)) {
                    Some(id) => {
                        path.lruvec = id;
                        path.state = RState::ShrinkLruvec;
                    }
                    None => path.state = RState::NodeDone,
                }
                PathStep::Continue
            }
            RState::NodeDone => {
                if self.profile.throttle_vm_writeout && path.timed {
                    // 2.6.39 shrink_zone: throttle_vm_writeout(sc->gfp_mask), a loop of
                    // congestion_wait(BLK_RW_ASYNC, HZ/10) while NR_WRITEBACK (+
                    // NR_UNSTABLE_NFS, none here) is above dirty_thresh + dirty_thresh / 10
                    // (GFP_KERNEL callers: __GFP_FS and __GFP_IO both set, no early break).
                    // This state is entered again after the sleep and checks again.
                    let thresh = self.dirty_limits().thresh;
                    if self.mm.stat.writeback > thresh + thresh / 10 {
                        let cap = self.now + HZ_NS / 10;
                        let until = self.block.congestion_clears_at().unwrap_or(cap).min(cap).max(self.now + 1);
                        return PathStep::Sleep { until, io: true };
                    }
                }
                // shrink_slab. 6.x: shrink_node_memcgs calls shrink_slab(gfp, nid, memcg,
                // sc->priority) for the cgroup reclaimed (the model runs it once per
                // shrink_node, for the target cgroup). 2.6.39: do_try_to_free_pages (global
                // reclaim only) and balance_pgdat call shrink_slab(sc->nr_scanned,
                // gfp_mask, lru_pages) after shrinking the zones.
                let old = self.profile.slab_allocator == super::slab::SlabAllocator::Slab;
                path.shrink_plan.clear();
                path.shrink_i = 0;
                // Split reclaim's page reclaim calls no shrinker (mm/split_reclaim.rs).
                if self.reclaim_calls_shrinkers(path.sc.kswapd) && (!old || !path.sc.cgroup_reclaim()) {
                    let scanned = path.sc.nr_scanned - path.pass_scanned_at;
                    // zone_reclaimable_pages: the file lists, and anon when swap is usable.
                    let lru_pages = self.mm.lru_len(Lru::InactiveFile)
                        + self.mm.lru_len(Lru::ActiveFile)
                        + if self.can_reclaim_anon() { self.mm.lru_len(Lru::InactiveAnon) + self.mm.lru_len(Lru::ActiveAnon) } else { 0 };
                    let ssc = super::shrinker::ShrinkControl { memcg: path.sc.target_lruvec(), gfp_fs: true, kswapd: path.sc.kswapd, ..Default::default() };
                    let mut plan = std::mem::take(&mut path.shrink_plan);
                    self.shrink_slab_plan(scanned, lru_pages, path.sc.priority as i32, &ssc, &mut plan);
                    if (self.profile.kmem_accounting || self.profile.memcg_kmem_caches) && self.memcg.active() && self.shrink.list.iter().any(|s| s.kind.memcg_aware()) {
                        // shrink_node_memcgs calls shrink_slab for every cgroup it
                        // reclaims (mem_cgroup_iter, pre-order): the memcg-aware shrinkers
                        // work on each cgroup's own lists (shrink_slab_memcg).
                        let target = self.memcg.lruvec_memcg(path.sc.target_lruvec());
                        for m in self.memcg.subtree(target) {
                            let lv = self.memcg.cgs[m as usize].lruvec;
                            if m == target || !self.memcg.cgs[m as usize].online || lv == super::lru::ROOT_LRUVEC {
                                continue;
                            }
                            let msc = super::shrinker::ShrinkControl { memcg: lv, ..ssc };
                            self.shrink_slab_plan_add(scanned, lru_pages, path.sc.priority as i32, &msc, true, &mut plan);
                        }
                    }
                    path.shrink_plan = plan;
                }
                path.state = RState::DoShrinkSlab;
                PathStep::Continue
            }
            RState::DoShrinkSlab => {
                // One batch of one shrinker (do_shrink_slab's loop; cond_resched between
                // batches), or the rest of a dentry walk cut at its last step. The pages
                // its frees count as reclaimed (reclaim_state).
                if path.dcache_left == 0 && path.shrink_i >= path.shrink_plan.len() {
                    path.state = RState::ShrinkSlabDone;
                    return PathStep::Continue;
                }
                let ssc = super::shrinker::ShrinkControl { memcg: path.sc.target_lruvec(), gfp_fs: true, kswapd: path.sc.kswapd, ..Default::default() };
                // Cost left by shrinker calls outside a reclaim path (drop_caches) is not
                // this batch's.
                let _ = self.vfs_take_shrink_cost();
                self.vfs.walk_limit = if path.timed { self.dcache_walk_limit(tid) } else { None };
                let scanned = if path.dcache_left > 0 {
                    // __shrink_dcache_sb after cond_resched_lock: spin_lock again, walk on.
                    let o = self.shrink_dcache(path.dcache_left);
                    self.reclaim.reclaimed_slab += o.pages_freed;
                    o.scanned
                } else {
                    let mut e = path.shrink_plan[path.shrink_i];
                    let (scanned, _freed, stop) = self.shrink_slab_batch(&mut e, &ssc);
                    path.shrink_plan[path.shrink_i] = e;
                    if stop {
                        path.shrink_i += 1;
                    }
                    scanned
                };
                self.vfs.walk_limit = None;
                path.dcache_left = std::mem::take(&mut self.vfs.walk_left);
                path.sc.nr_reclaimed += std::mem::take(&mut self.reclaim.reclaimed_slab);
                if !path.timed {
                    return PathStep::Burst { sys: 0 };
                }
                // The dentry and inode shrinkers cost their own work per object and the time
                // spun on their LRU locks (dcache_lru_lock / inode_lru_lock on 2.6.39, the
                // super block's list_lru locks on 6.x); other shrinkers cost
                // shrinker_obj_ns per object scanned.
                let (vfs_cpu, vfs_wait) = self.vfs_take_shrink_cost();
                if vfs_wait > 0 {
                    path.lock_wait_ns += vfs_wait;
                    if let Some(t) = tid {
                        self.tasks[t as usize].lock_wait_ns += vfs_wait;
                        self.note_lock_wait(t, vfs_wait);
                    }
                }
                PathStep::Burst { sys: if vfs_cpu > 0 { vfs_cpu } else { scanned * self.shrinker_obj_ns() } }
            }
            RState::ShrinkSlabDone => {
                let sc = &path.sc;
                if self.profile.bdflush && sc.nr_dirty > 0 && sc.nr_dirty >= sc.nr_scanned / 2 {
                    // 2.4: reclaim finding dirty buffers wakes bdflush (wakeup_bdflush),
                    // which writes by its own thresholds.
                    self.wakeup_flusher_threads();
                }
                path.state = RState::DoTryToFreePages;
                PathStep::Continue
            }
            RState::SplitSlabDcache | RState::SplitSlabIcache => {
                // Split reclaim's slab reclaim: SHRINK_BATCH dentries (the walk resumed
                // while cond_resched_lock cut it), then SHRINK_BATCH inodes, each under its
                // LRU lock; no page reclaim.
                let _ = self.vfs_take_shrink_cost();
                let o = if path.state == RState::SplitSlabDcache {
                    self.vfs.walk_limit = if path.timed { self.dcache_walk_limit(tid) } else { None };
                    let o = self.shrink_dcache(path.dcache_left);
                    self.vfs.walk_limit = None;
                    path.dcache_left = std::mem::take(&mut self.vfs.walk_left);
                    if path.dcache_left == 0 {
                        path.state = RState::SplitSlabIcache;
                    }
                    o
                } else {
                    path.state = RState::SplitSlabDone;
                    self.shrink_icache(false, super::shrinker::SHRINK_BATCH)
                };
                let _ = self.vfs_take_shrink_cost();
                self.vm.add(VmItem::SlabsScanned, o.scanned);
                if !path.timed {
                    return PathStep::Burst { sys: 0 };
                }
                if o.lock_wait_ns > 0 {
                    path.lock_wait_ns += o.lock_wait_ns;
                    if let Some(t) = tid {
                        self.tasks[t as usize].lock_wait_ns += o.lock_wait_ns;
                        self.note_lock_wait(t, o.lock_wait_ns);
                    }
                }
                PathStep::Burst { sys: o.cpu_ns }
            }
            RState::SplitSlabDone => {
                if path.timed {
                    self.reclaim.stats.record(crate::ReclaimKind::SplitSlab, self.now - path.start, path.lock_wait_ns);
                }
                path.state = RState::Done;
                PathStep::Done
            }
            RState::BlkMqGetTag => {
                // A request slot is free: the same reclaim goes on, from DEF_PRIORITY.
                let sc = &path.sc;
                path.sc = ScanControl { nr_to_reclaim: sc.nr_to_reclaim, target_mem_cgroup: sc.target_mem_cgroup, no_swap: sc.no_swap, target_only: sc.target_only, ..Default::default() };
                path.node_passes = 0;
                path.state = RState::DoTryToFreePages;
                PathStep::Continue
            }
            RState::Done => PathStep::Done,
        }
    }

    /// The end of do_try_to_free_pages (direct) or of a kswapd pass.
    fn reclaim_finish(&mut self, tid: Option<TaskId>, path: &mut ReclaimPath) -> PathStep {
        if path.sc.nr_reclaimed > 0 {
            // shrink_node: "if (reclaimable) pgdat->kswapd_failures = 0" (4.12+).
            self.mm.kswapd_failures = 0;
        }
        if path.loop_priorities {
            let sc = path.sc;
            if path.timed && sc.nr_congested > 0 && sc.nr_reclaimed < sc.nr_to_reclaim && self.mm.nr_free() <= self.mm.wmark.min {
                // The swap write could not get a request: the reclaimer sleeps in the
                // block layer (blk_mq_get_tag) until one completes, then reclaims on.
                path.state = RState::BlkMqGetTag;
                let until = self.block.next_completion().unwrap_or(self.now + 10 * NS_PER_MS).max(self.now + 1);
                return PathStep::Sleep { until, io: true };
            }
            if sc.nr_reclaimed == 0 && sc.memcg_low_skipped && !sc.memcg_low_reclaim {
                // do_try_to_free_pages: "Untapped cgroup reserves? Don't OOM, retry."
                path.sc.memcg_low_reclaim = true;
                path.sc.memcg_low_skipped = false;
                path.sc.priority = DEF_PRIORITY;
                path.node_passes = 0;
                path.state = RState::DoTryToFreePages;
                return PathStep::Continue;
            }
            self.snapshot_refaults(&sc);
        }
        if path.timed && tid.is_some() {
            if path.sc.cgroup_reclaim() {
                // try_to_free_mem_cgroup_pages: direct reclaim by the charging task.
                self.reclaim.stats.record_memcg(self.now - path.start, path.lock_wait_ns);
            } else {
                let kind = if path.sc.kswapd { crate::ReclaimKind::Kswapd } else { self.direct_reclaim_kind() };
                self.reclaim.stats.record(kind, self.now - path.start, path.lock_wait_ns);
            }
        }
        path.state = RState::Done;
        PathStep::Done
    }

    /// A hint for the host (changes nothing in the model): one step along the LRU list from
    /// `path.chase` towards the head, asking for the record of the frame reached. The tail
    /// of a list is a chain of dependent frame loads that isolate_lru_folios would
    /// otherwise wait for one after the other; taken one step per page decided, each load
    /// has a page's work to arrive, and the next batch finds its frames cached. The list
    /// may change meanwhile: a stale chain only asks for frames that are not used.
    #[inline]
    fn chase_lru_tail(&self, path: &mut ReclaimPath) {
        let c = path.chase;
        if c >= self.mm.pages.nr() {
            return;
        }
        let n = self.mm.pages.prev(c);
        path.chase = if n < self.mm.pages.nr() {
            self.mm.pages.prefetch(n);
            n
        } else {
            NO_CHASE
        };
    }

    /// shrink_active_list's loop over isolated pages: move them to the inactive list,
    /// except referenced executable file pages, which get another trip around the active
    /// list. PG_referenced is left as it is (only folio_referenced's young PTEs are
    /// consumed); before 5.8 every referenced page counted as rotated (recent_rotated),
    /// since 5.8 only the executable pages that stay active do.
    fn shrink_active_batch(&mut self, path: &mut ReclaimPath) {
        let l = path.batch_l;
        let file = l.is_file();
        let inactive = Lru::of(file, false);
        let count_all_referenced = !self.profile.cost_balance;
        let mut rotated = 0;
        let scanned = path.isolated.len() as u64;
        for p in std::mem::take(&mut path.isolated) {
            self.chase_lru_tail(path);
            let m = self.mm.pages.mapping(p) as usize;
            let (mapped, exec) = (self.mm.mappings[m].mapped, self.mm.mappings[m].exec);
            if mapped && self.mm.pages.test_clear_young(p) {
                if count_all_referenced {
                    rotated += 1;
                }
                if file && exec {
                    if !count_all_referenced {
                        rotated += 1;
                    }
                    path.putback.push((p, l, false));
                    continue;
                }
            }
            if self.profile.deactivate_sets_workingset {
                // SetPageWorkingset (4.20+).
                self.mm.pages.set_workingset(p);
            }
            path.putback.push((p, inactive, false));
            self.vm.inc(VmItem::Pgdeactivate);
        }
        // PGREFILL: every reclaim through 5.8, global reclaim only in 6.x.
        if !(self.profile.pgrefill_global_only && path.sc.cgroup_reclaim()) {
            self.vm.add(VmItem::Pgrefill, scanned);
        }
        let memcg = self.memcg.lruvec_memcg(path.lruvec);
        if memcg != super::memcontrol::ROOT_MEMCG {
            let deactivated = path.putback.iter().filter(|&&(_, pl, _)| !pl.is_active()).count() as u64;
            let v = &mut self.memcg.cgs[memcg as usize].vm;
            v.pgrefill += scanned;
            v.pgdeactivate += deactivated;
        }
        let t = file as usize;
        let lv = self.mm.lruvec_mut(path.lruvec);
        lv.recent_scanned[t] += scanned;
        lv.recent_rotated[t] += rotated;
    }

    /// folio_check_references (page_check_references before 5.16).
    fn check_references(&mut self, p: Pfn, file: bool) -> Ref {
        let m = self.mm.pages.mapping(p) as usize;
        let (mapped, exec) = (self.mm.mappings[m].mapped, self.mm.mappings[m].exec);
        let young = mapped && self.mm.pages.test_clear_young(p);
        let referenced = self.mm.pages.test_clear_referenced(p);
        if young {
            if first_reference_activates(&self.profile, self.mm.mappings[m].kind) {
                return Ref::Activate;
            }
            self.mm.pages.set_referenced(p);
            if referenced || (exec && file) {
                return Ref::Activate;
            }
            return Ref::Keep;
        }
        if referenced && file {
            return Ref::ReclaimClean;
        }
        Ref::Reclaim
    }

    /// shrink_folio_list on the isolated pages: evict clean, unreferenced pages (their
    /// frames are freed by the next state, free_unref_page_list), start swap-out of anon
    /// pages, and send the rest back (activated, or rotated).
    fn shrink_folio_list(&mut self, tid: Option<TaskId>, path: &mut ReclaimPath) {
        let l = path.batch_l;
        let file = l.is_file();
        let active = Lru::of(file, true);
        // Pages tried again after folio_wait_writeback were counted when first taken.
        let scanned = if std::mem::take(&mut path.retrying_wb) { 0 } else { path.isolated.len() as u64 };
        let mut reclaimed = 0;
        let mut activated = 0;
        let mut pageout = 0;
        let mut batch_writeback = 0;
        let (mut batch_dirty, mut batch_congested) = (0, 0);
        // File pages of the batch dirty and not yet queued for writeback
        // (folio_check_dirty_writeback's nr_unqueued_dirty; anonymous pages never count).
        let mut unqueued_dirty = 0;
        let mut pages = std::mem::take(&mut path.isolated);
        let mut congested = false;
        self.swap.plug_tail = path.plug.last().copied();
        self.swap.plug_run = plug_tail_run(&path.plug);
        self.reclaim.defer_free = true;
        // A hint for the host (changes nothing): the page-cache leaves of the batch's pages
        // (slot and counts), which their eviction (the shadow entry's store) writes, are
        // asked for together so that their memory latencies overlap.
        for &p in &pages {
            let m = self.mm.pages.mapping(p);
            if m != 0 {
                self.mm.prefetch_slot_for_store(m, self.mm.pages.index(p));
            }
        }
        for (i, &p) in pages.iter().enumerate() {
            self.chase_lru_tail(path);
            if congested {
                // The swap device's queue is full: the rest go back untouched.
                path.putback.push((p, l, true));
                continue;
            }
            if self.mm.pages.mapping(p) == 0 {
                // Truncated while isolated: only the isolation's reference is left.
                path.to_free.push(p);
                continue;
            }
            if self.mm.pages.locked(p) {
                // Being read in: not reclaimable yet.
                path.putback.push((p, l, false));
                continue;
            }
            if file && self.mm.pages.dirty(p) && !self.mm.pages.writeback(p) {
                unqueued_dirty += 1;
            }
            let r = self.check_references(p, file);
            if r == Ref::Activate {
                if !file {
                    self.activate_frees_swap(p);
                }
                path.putback.push((p, active, false));
                self.vm.inc(VmItem::Pgactivate);
                activated += 1;
                continue;
            }
            if r == Ref::Keep {
                path.putback.push((p, l, false));
                continue;
            }
            if self.mm.pages.writeback(p) && self.profile.reclaim_writes_file {
                // 2.6.39 shrink_page_list: "unlock_page(page); goto keep_lumpy" (waited on
                // only by lumpy reclaim's synchronous pass): back on the inactive list.
                path.putback.push((p, l, false));
                continue;
            }
            if self.mm.pages.writeback(p)
                && path.timed
                && !path.sc.kswapd
                && self.mm.pages.reclaim(p)
                && path.sc.cgroup_reclaim()
                && self.memcg.mode == super::memcontrol::CgroupMode::V1
                && self.profile.memcg_v1_waits_writeback
            {
                // Case 3: v1 cgroup reclaim (no writeback_throttling_sane) meets a page it
                // marked for immediate reclaim before: folio_wait_writeback, then "go back
                // and try same folio again". It stays isolated meanwhile.
                path.wait_wb.push(p);
                continue;
            }
            if self.mm.pages.writeback(p) {
                // Case 1 of shrink_folio_list: kswapd meets a page it already marked, on a
                // node flagged PGDAT_WRITEBACK: pages cycle faster than they are written.
                if path.sc.kswapd && self.mm.pages.reclaim(p) && self.mm.pgdat_writeback {
                    path.sc.nr_immediate += 1;
                }
                // Case 2: mark for immediate reclaim (PG_reclaim: the end of writeback
                // rotates it to the inactive tail), keep it.
                path.sc.nr_writeback += 1;
                batch_writeback += 1;
                self.mm.pages.set_reclaim(p);
                path.putback.push((p, active, false));
                self.vm.inc(VmItem::Pgactivate);
                activated += 1;
                continue;
            }
            if self.mm.pages.dirty(p) {
                path.sc.nr_dirty += 1;
                batch_dirty += 1;
                // Who writes a dirty file page itself (pageout). 2.6.39: kswapd and, unless
                // its disk's queue is congested (may_write_to_queue: kswapd has
                // PF_SWAPWRITE; PAGE_KEEP, nr_congested), a direct reclaimer. 5.x
                // (shrink_folio_list: ZONE_DIRTY 3.11, "only write dirty pages that the
                // scanner has seen twice" 4.11): kswapd only, for a page it already marked
                // PG_reclaim, on a node flagged PGDAT_DIRTY. Either way a referenced page
                // is kept unwritten ("if (references == PAGEREF_RECLAIM_CLEAN) goto
                // keep_locked"), and a written one stays on the inactive list until its
                // write ends ("if (PageWriteback(page) || PageDirty(page)) goto keep").
                let writes = self.profile.reclaim_writes_file
                    || (self.profile.kswapd_writes_dirty_seen_twice && path.sc.kswapd && self.mm.pages.reclaim(p) && self.mm.pgdat_dirty);
                if file && writes {
                    // "if (!sc->may_writepage) goto keep_locked".
                    if r != Ref::ReclaimClean && !path.sc.no_writepage {
                        let dev = self.mm.mappings[self.mm.pages.mapping(p) as usize].dev;
                        if !path.sc.kswapd && dev.is_some_and(|d| self.block.devs[d as usize].congested()) {
                            batch_congested += 1;
                        } else if self.writepage_redirties(p) {
                            // pageout -> ext4_writepage: PAGE_SUCCESS (NR_VMSCAN_WRITE,
                            // nr_pageout) with nothing written; the page stays dirty,
                            // PG_reclaim cleared ("synchronous write or broken a_ops?"), kept.
                            self.vm.inc(VmItem::NrVmscanWrite);
                            self.mm.pages.clear_reclaim(p);
                            self.reclaim.pass_ns += self.machine.cpu_model.page_cache_ns;
                            pageout += 1;
                        } else {
                            self.reclaim.pass_ns += self.reclaim_pageout(p, tid);
                            pageout += 1;
                        }
                    }
                    path.putback.push((p, l, false));
                    continue;
                }
                if file {
                    // Reclaim does not write file pages; the flushers will. PG_reclaim:
                    // "immediately reclaim when written back" (activate_locked).
                    self.vm.inc(VmItem::NrVmscanImmediateReclaim);
                    self.mm.pages.set_reclaim(p);
                    path.putback.push((p, active, false));
                    self.vm.inc(VmItem::Pgactivate);
                    activated += 1;
                    continue;
                }
            }
            if self.mm.lru_move.holds(p) {
                // Another CPU's move batch holds a reference (this CPU's drained at the
                // start of the shrink): __remove_mapping's folio_ref_freeze(folio, 2) fails
                // for a clean page, and pageout() finds a swap-backed one not freeable
                // (is_page_cache_freeable): keep_locked, back on its list unreclaimed. (6.10+
                // clears PG_lru while queued, so isolate_lru_folios passes over it, counted
                // as scanned: the same outcome.) The model keeps a swap-backed page before
                // add_to_swap, which the kernel would have given a slot.
                path.putback.push((p, l, false));
                continue;
            }
            let m = self.mm.pages.mapping(p) as usize;
            // Reclaim itself removes it from its mapping: no longer marked isolated, so the
            // frame is collected for freeing rather than left to a putback.
            self.mm.pages.set_lru(p, Lru::None);
            if self.mm.mappings[m].swap_backed() {
                let swapped_before = self.vm.get(VmItem::Pswpout);
                let r = self.reclaim_swap_backed(p);
                pageout += self.vm.get(VmItem::Pswpout) - swapped_before;
                match r {
                    super::swap_state::SwapOut::Freed => reclaimed += 1,
                    super::swap_state::SwapOut::Writing => {
                        // Rotated to the tail when the write completes.
                        path.sc.nr_writeback += 1;
                        self.mm.pages.set_lru(p, Lru::Isolated);
                        path.putback.push((p, l, false));
                    }
                    super::swap_state::SwapOut::Busy => {
                        path.sc.nr_congested += 1;
                        batch_congested += 1;
                        self.mm.pages.set_lru(p, Lru::Isolated);
                        path.putback.push((p, l, true));
                        congested = true;
                        let _ = i;
                    }
                    super::swap_state::SwapOut::Keep => {
                        // add_to_swap failed: activate_locked_split, counted PGACTIVATE.
                        self.mm.pages.set_lru(p, Lru::Isolated);
                        path.putback.push((p, active, false));
                        self.vm.inc(VmItem::Pgactivate);
                        activated += 1;
                    }
                }
                continue;
            }
            // __remove_mapping with a shadow entry; the frame is freed with the batch.
            let shadow = self.workingset_eviction(p);
            self.page_cache_delete(p, Some(shadow));
            reclaimed += 1;
        }
        self.reclaim.defer_free = false;
        path.to_free.append(&mut self.reclaim.deferred);
        pages.clear();
        path.isolated = pages;
        if !self.swap.pending_buf.is_empty() {
            self.plug_swap_writes(path);
        }
        self.swap.plug_tail = None;
        if file {
            path.sc.nr_file_taken += scanned;
            path.sc.nr_unqueued_dirty += unqueued_dirty;
        }
        // shrink_node: kswapd flags the node PGDAT_WRITEBACK when every page it took was
        // under writeback (cleared when the node is balanced).
        if path.sc.kswapd && scanned > 0 && batch_writeback == scanned {
            self.mm.pgdat_writeback = true;
        }
        // 2.6.39 shrink_page_list: "Tag a zone as congested if all the dirty pages
        // encountered were backed by a congested BDI" (global reclaim).
        if self.profile.reclaim_writes_file && batch_dirty > 0 && batch_dirty == batch_congested && !path.sc.cgroup_reclaim() {
            self.mm.zone_congested = true;
        }
        // shrink_inactive_list (4.16+): "If dirty folios are scanned that are not queued
        // for IO, it implies that flushers are not doing their job": a batch whose every
        // page taken was such a file page wakes the flushers to write all that is dirty.
        if file && scanned > 0 && unqueued_dirty == scanned && !self.profile.flush_total_scanned && !self.profile.bdflush {
            self.wakeup_flusher_threads_for_reclaim(None);
            // "For cgroupv1 dirty throttling is achieved by waking up the kernel flusher
            // here and later waiting on folios which are in writeback to finish":
            // reclaim_throttle unless writeback_throttling_sane (kernel threads do not
            // sleep there).
            if self.profile.memcg_v1_reclaim_throttle && path.sc.cgroup_reclaim() && self.memcg.mode == super::memcontrol::CgroupMode::V1 && path.timed && tid.is_some_and(|t| !self.tasks[t as usize].kthread) {
                path.throttle_wb = true;
            }
        }
        let (scan_item, steal_item) = if path.sc.kswapd {
            (VmItem::PgscanKswapd, VmItem::PgstealKswapd)
        } else {
            (VmItem::PgscanDirect, VmItem::PgstealDirect)
        };
        // shrink_inactive_list: pgscan/pgsteal_kswapd/direct count global reclaim only
        // (`if (!cgroup_reclaim(sc))`; 2.6.39: scanning_global_lru for PGSCAN, PGSTEAL
        // always); pgscan/pgsteal_anon/file (5.8+) count every reclaim.
        if !path.sc.cgroup_reclaim() {
            self.vm.add(scan_item, scanned);
        }
        if !path.sc.cgroup_reclaim() || self.profile.pgsteal_counts_cgroup_reclaim {
            self.vm.add(steal_item, reclaimed);
        }
        // The same events counted in the lruvec's cgroup (count_memcg_events).
        let memcg = self.memcg.lruvec_memcg(path.lruvec);
        if memcg != super::memcontrol::ROOT_MEMCG {
            let v = &mut self.memcg.cgs[memcg as usize].vm;
            if path.sc.kswapd {
                v.pgscan_kswapd += scanned;
                v.pgsteal_kswapd += reclaimed;
            } else {
                v.pgscan_direct += scanned;
                v.pgsteal_direct += reclaimed;
            }
        }
        self.vm.add(if file { VmItem::PgscanFile } else { VmItem::PgscanAnon }, scanned);
        self.vm.add(if file { VmItem::PgstealFile } else { VmItem::PgstealAnon }, reclaimed);
        let t = file as usize;
        let lv = self.mm.lruvec_mut(path.lruvec);
        lv.recent_scanned[t] += scanned;
        lv.recent_rotated[t] += activated;
        if pageout > 0 {
            self.lru_note_cost(path.lruvec, file, pageout);
        }
        path.sc.nr_scanned += scanned;
        path.sc.nr_reclaimed += reclaimed;
        path.reclaimed_here += reclaimed;
        path.batch_reclaimed += reclaimed;
    }
}

/// HZ jiffies (one second) in ns: timeouts written HZ/50, HZ/10 are 20 ms, 100 ms at any HZ.
const HZ_NS: Ns = memtwin_engine::NS_PER_SEC;

/// What a reclaim path needs next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// Go on at once.
    Continue,
    /// Run `sys` ns of system time on the CPU, then advance.
    Burst { sys: Ns },
    /// Sleep until `until` (or an earlier wake-up), then advance.
    Sleep { until: Ns, io: bool },
    /// The path is over; its result waits to be collected.
    Done,
}

/// The states of a reclaim path, named after the kernel code it is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RState {
    /// do_try_to_free_pages: the next shrink_node at a raised priority, or the end.
    DoTryToFreePages,
    /// shrink_node: prepare_scan_count, then the first lruvec (mem_cgroup_iter).
    ShrinkNode,
    /// shrink_lruvec: get_scan_count for the current lruvec.
    ShrinkLruvec,
    /// The shrink_lruvec loop: the next batch of up to SWAP_CLUSTER_MAX pages, or the end
    /// of a round (the era's stop rule).
    NextBatch,
    /// shrink_inactive_list / shrink_active_list: too_many_isolated, then lru_add_drain
    /// and spin_lock_irq(&lruvec->lru_lock) (spinning while another holds it).
    LruLock,
    /// Asleep in too_many_isolated.
    ThrottleIsolated,
    /// Holding lru_lock: isolate_lru_folios takes the pages off the list.
    IsolateLruFolios,
    /// Lock dropped: shrink_folio_list (or shrink_active_list's loop) decides each page.
    ShrinkFolioList,
    /// free_unref_page_list frees the reclaimed pages, then lru_lock again.
    FreeFolios,
    /// Holding lru_lock: move_folios_to_lru puts the kept pages back.
    MoveFoliosToLru,
    /// End of shrink_lruvec: age the anon lists.
    LruvecDone,
    /// mem_cgroup_iter: the next lruvec, or the end of shrink_node.
    NextLruvec,
    /// End of shrink_node: shrink_slab's targets for each shrinker.
    NodeDone,
    /// One batch of a shrinker's scan_objects (SHRINK_BATCH objects).
    DoShrinkSlab,
    /// After the shrinkers: wake the flushers if reclaim met dirty pages.
    ShrinkSlabDone,
    /// Asleep in the block layer for a request of the swap device (blk_mq_get_tag).
    BlkMqGetTag,
    /// v1 cgroup reclaim asleep in reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK) after a
    /// batch that woke the flushers (6.1+).
    ReclaimThrottleWriteback,
    /// v1 cgroup reclaim asleep in folio_wait_writeback for pages it marked before (case 3
    /// of shrink_folio_list); then shrink_folio_list tries them again.
    FolioWaitWriteback,
    /// Split reclaim's slab reclaim (mm/split_reclaim.rs): the dentry shrinker's batch
    /// (a walk that cond_resched_lock cut goes on here), the inode shrinker's, the record.
    SplitSlabDcache,
    SplitSlabIcache,
    SplitSlabDone,
    Done,
}

/// One direct reclaim (try_to_free_pages) or one kswapd pass (kswapd_shrink_node) in
/// progress: a state machine over `RState`, advanced by the event loop before the task's
/// program runs again.
#[derive(Clone, Debug)]
pub struct ReclaimPath {
    pub sc: ScanControl,
    pub state: RState,
    /// Direct reclaim raises the priority until enough is reclaimed (do_try_to_free_pages);
    /// a kswapd pass is one shrink_node at the priority balance_pgdat chose.
    loop_priorities: bool,
    /// Time passes (bursts, lock waits, sleeps); false only for tests of the decisions.
    timed: bool,
    /// When it started, and the part of its time spent waiting for locks.
    started: bool,
    pub start: Ns,
    pub lock_wait_ns: Ns,
    node_passes: u32,
    lruvec: LruvecId,
    nr: [u64; 4],
    targets: [u64; 4],
    reclaimed_here: u64,
    scan_adjusted: bool,
    list: usize,
    batch_l: Lru,
    batch_n: u64,
    batch_reclaimed: u64,
    after_batch: RState,
    /// too_many_isolated already slept once in this shrink_inactive_list.
    stalled: bool,
    /// 2.6.39's wait_iff_congested already slept after this priority.
    napped: bool,
    isolated: Vec<Pfn>,
    /// A host-side hint (changes nothing): how far the frames of the list's next batch
    /// have been asked for (`chase_lru_tail`); NO_CHASE when there is nothing to follow.
    chase: Pfn,
    /// Isolated pages whose writeback the path waits for (case 3), and whether the pages
    /// being decided are such pages tried again (already counted as scanned).
    wait_wb: Vec<Pfn>,
    retrying_wb: bool,
    /// The batch woke the flushers in v1 cgroup reclaim: reclaim_throttle after it.
    throttle_wb: bool,
    /// Pages going back: (page, list, to the tail).
    putback: Vec<(Pfn, Lru, bool)>,
    to_free: Vec<Pfn>,
    /// nr_scanned when this shrink_node pass began (2.6.39 shrink_slab's `scanned`).
    pass_scanned_at: u64,
    /// shrink_slab's targets (shrinker, total_scan, freeable) and the one being worked.
    shrink_plan: Vec<super::shrinker::ShrinkPlanEntry>,
    shrink_i: usize,
    /// What a dentry walk cut by cond_resched_lock has left of its count: the walk goes on
    /// at the path's next step, before the next shrinker batch.
    pub(crate) dcache_left: u64,
    /// A split-reclaim slab reclaim (collected by the slab allocator, not by the page
    /// allocator's retry).
    pub(crate) split_slab: bool,
    /// Swap writes held in this reclaimer's block plug (blk_start_plug in shrink_lruvec,
    /// 3.2+): contiguous slots of successive batches merge into one request.
    plug: Vec<u32>,
}

/// `ReclaimPath::chase` when there is no chain to follow.
const NO_CHASE: Pfn = Pfn::MAX;

impl ReclaimPath {
    pub(crate) fn new(sc: ScanControl, loop_priorities: bool, timed: bool, now: Ns) -> ReclaimPath {
        let mut sc = sc;
        if loop_priorities {
            sc.priority = DEF_PRIORITY;
        }
        ReclaimPath {
            sc,
            state: RState::DoTryToFreePages,
            loop_priorities,
            timed,
            started: false,
            start: now,
            lock_wait_ns: 0,
            node_passes: 0,
            lruvec: sc.target_lruvec(),
            nr: [0; 4],
            targets: [0; 4],
            reclaimed_here: 0,
            scan_adjusted: false,
            list: 0,
            batch_l: Lru::InactiveFile,
            batch_n: 0,
            batch_reclaimed: 0,
            after_batch: RState::NextBatch,
            stalled: false,
            napped: false,
            isolated: Vec::with_capacity(SWAP_CLUSTER_MAX as usize),
            chase: NO_CHASE,
            wait_wb: Vec::new(),
            retrying_wb: false,
            throttle_wb: false,
            putback: Vec::with_capacity(SWAP_CLUSTER_MAX as usize),
            to_free: Vec::with_capacity(SWAP_CLUSTER_MAX as usize),
            pass_scanned_at: 0,
            shrink_plan: Vec::new(),
            shrink_i: 0,
            dcache_left: 0,
            split_slab: false,
            plug: Vec::new(),
        }
    }
    fn begin_batch(&mut self, l: Lru, n: u64, after: RState) {
        self.batch_l = l;
        self.batch_n = n;
        self.after_batch = after;
        self.stalled = false;
        self.state = RState::LruLock;
    }
    /// Whether the path has finished (its result waits for the caller).
    pub fn done(&self) -> bool {
        self.state == RState::Done
    }
}

/// kswapd: woken when free memory falls below the low watermark, reclaims until it is
/// above the high watermark (balance_pgdat), then sleeps. Each pass at one priority is a
/// reclaim path (kswapd_shrink_node); what follows it is decided when the pass is done.
#[derive(Default)]
pub struct Kswapd {
    priority: u32,
    running: bool,
    /// Pages reclaimed by the current balance_pgdat run (all its priorities).
    run_reclaimed: u64,
    /// Pages scanned by the current run (2.6.39's `total_scanned`, reset at loop_again).
    run_scanned: u64,
    /// kswapd_try_to_sleep's short nap (schedule_timeout(HZ/10)) is under way.
    napping: bool,
    /// balance_pgdat's nr_boost_reclaim: pages this run still reclaims for the watermark
    /// boost (5.0+), without writing or swapping; and the boost when the run began
    /// (zone_boosts), taken back at its end.
    boost_reclaim: u64,
    boosted: u64,
}

impl Program for Kswapd {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if let Some(path) = k.reclaim.take_done(me) {
            return self.after_pass(k, me, path.sc);
        }
        // The watermarks in force: a boost raises them all (high_wmark_pages).
        let w = k.mm.wmark_pages();
        if self.napping {
            // kswapd_try_to_sleep after the nap: woken by wakeup_kswapd during it
            // (remaining != 0), or still balanced (prepare_kswapd_sleep): sleep until
            // woken; or unbalanced again without a wakeup (the free pages fell below the
            // high watermark, not the low one): back to balance_pgdat.
            self.napping = false;
            if !k.reclaim.kswapd_waiting {
                k.vm.inc(VmItem::KswapdLowWmarkHitQuickly);
            } else if k.mm.nr_free() > w.high {
                return Step::Block { io: false };
            } else {
                k.reclaim.kswapd_waiting = false;
                k.vm.inc(VmItem::KswapdHighWmarkHitQuickly);
            }
        }
        let balanced = k.mm.nr_free() > w.high;
        // balance_pgdat reclaims a boost on a balanced node too ("If boosting is not active
        // then only reclaim if there are no eligible zones"): kswapd woken for a boost
        // starts a run for it.
        let boost_work = if self.running { self.boost_reclaim > 0 } else { k.mm.watermark_boost > 0 };
        if balanced && !boost_work {
            // clear_pgdat_congested: a balanced node is no longer flagged (2.6.39:
            // zone_clear_flag(zone, ZONE_CONGESTED) for a zone at its high watermark).
            k.mm.pgdat_writeback = false;
            k.mm.pgdat_dirty = false;
            k.mm.zone_congested = false;
            if self.running {
                self.end_run(k);
                k.snapshot_refaults(&ScanControl::default());
            }
            self.priority = DEF_PRIORITY;
            return self.nap(k);
        }
        if k.profile.kswapd_hopeless && k.mm.kswapd_failures >= super::page_alloc::MAX_RECLAIM_RETRIES {
            // prepare_kswapd_sleep: a hopeless node lets kswapd sleep unbalanced.
            self.running = false;
            self.priority = DEF_PRIORITY;
            k.reclaim.kswapd_waiting = true;
            return Step::Block { io: false };
        }
        if !self.running {
            self.running = true;
            self.loop_again(k);
        }
        if !balanced && self.boost_reclaim > 0 {
            // "If the pgdat is imbalanced then ignore boosting and preserve the watermarks
            // for a later time and restart."
            self.boost_reclaim = 0;
            self.priority = DEF_PRIORITY;
        }
        // kswapd_shrink_node: reclaim up to the high watermark's worth at this priority.
        // 2.6.39's balance_pgdat asks for ULONG_MAX: "kswapd doesn't want to be bailed out
        // while reclaim", each zone gets its whole scan target. "Do not writeback or swap
        // pages for boosted reclaim" (sc.may_writepage, sc.may_swap).
        let loop_again = k.profile.kswapd_balance == KswapdBalance::LoopAgain;
        let boosting = self.boost_reclaim > 0;
        let sc = ScanControl {
            nr_to_reclaim: if loop_again { u64::MAX } else { w.high.max(SWAP_CLUSTER_MAX) },
            priority: self.priority,
            kswapd: true,
            no_swap: boosting,
            no_writepage: boosting,
            ..Default::default()
        };
        k.start_kswapd_pass(me, sc);
        Step::Yield
    }
}

impl Kswapd {
    /// The start of a balance_pgdat run (2.6.39: also `loop_again`): DEF_PRIORITY, nothing
    /// scanned or reclaimed yet, counted as a PAGEOUTRUN.
    fn loop_again(&mut self, k: &mut Kernel) {
        self.priority = DEF_PRIORITY;
        self.run_reclaimed = 0;
        self.run_scanned = 0;
        k.vm.inc(VmItem::Pageoutrun);
        // "Account for the reclaim boost. Note that the zone boost is left in place so
        // that parallel allocations that are near the watermark will stall or direct
        // reclaim until kswapd is finished."
        self.boost_reclaim = k.mm.watermark_boost;
        self.boosted = k.mm.watermark_boost;
    }

    /// kswapd_try_to_sleep on a balanced node: first a short nap, schedule_timeout(HZ/10),
    /// that wakeup_kswapd cuts short (then, still balanced, sleep until woken).
    fn nap(&mut self, k: &mut Kernel) -> Step {
        k.reclaim.kswapd_waiting = true;
        self.napping = true;
        Step::SleepUntil { t: k.now + 100 * NS_PER_MS, io: false }
    }

    /// The end of a balance_pgdat run (`out:`): the boost it began with is taken back
    /// (a boost added since stays). (Its wakeup_kcompactd is not modelled: compaction
    /// runs only when asked for.)
    fn end_run(&mut self, k: &mut Kernel) {
        self.running = false;
        self.boost_reclaim = 0;
        if self.boosted > 0 {
            k.mm.watermark_boost -= k.mm.watermark_boost.min(self.boosted);
            self.boosted = 0;
        }
    }

    /// 2.6.39 balance_pgdat after one priority's shrink_zone and shrink_slab, for a node
    /// still below its high watermark once the pass is done (a balanced one is left to
    /// `step`: "kswapd: all done").
    fn loop_again_after_pass(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let w = k.mm.wmark;
        if k.mm.nr_free() > w.high {
            k.mm.zone_congested = false;
            return Step::Yield;
        }
        let (priority, total_scanned) = (self.priority, self.run_scanned);
        // "if (sc.nr_reclaimed >= SWAP_CLUSTER_MAX) break;" ends the priority loop, and so
        // does priority 0; `out:` then finds the node unbalanced and does `goto loop_again`.
        if self.run_reclaimed >= SWAP_CLUSTER_MAX || priority == 0 {
            self.loop_again(k);
        } else {
            self.priority -= 1;
        }
        // "OK, kswapd is getting into trouble. Take a nap, then take another pass across
        // the zones" (checked before the break above, with this run's total_scanned).
        if total_scanned > 0 && priority < DEF_PRIORITY - 2 {
            if k.mm.nr_free() <= w.min {
                // has_under_min_watermark_zone: GFP_ATOMIC allocations are at risk.
                k.vm.inc(VmItem::KswapdSkipCongestionWait);
            } else {
                // congestion_wait(BLK_RW_ASYNC, HZ/10): the whole timeout unless a
                // congested queue frees a slot first (clear_bdi_congested).
                let cap = k.now + 100 * NS_PER_MS;
                let until = k.block.congestion_clears_at().unwrap_or(cap).min(cap).max(k.now + 1);
                k.set_wait_reason(me, crate::delayacct::WaitReason::ReclaimWait);
                return Step::SleepUntil { t: until, io: true };
            }
        }
        Step::Yield
    }

    /// balance_pgdat after one kswapd_shrink_node pass.
    fn after_pass(&mut self, k: &mut Kernel, me: TaskId, sc: ScanControl) -> Step {
        if sc.nr_reclaimed > 0 {
            k.wake_writeback_waiters();
        }
        // shrink_node, kswapd: "Allow kswapd to start writing pages during reclaim" when
        // every file page the pass took was dirty and unqueued (also when it took none:
        // the kernel compares sc->nr.unqueued_dirty == sc->nr.file_taken as they are).
        if k.profile.kswapd_writes_dirty_seen_twice && sc.nr_unqueued_dirty == sc.nr_file_taken {
            k.mm.pgdat_dirty = true;
        }
        // balance_pgdat: "if (waitqueue_active(&pgdat->pfmemalloc_wait) &&
        // allow_direct_reclaim(pgdat)) wake_up_all(&pgdat->pfmemalloc_wait)".
        if !k.reclaim.pfmemalloc_waiters.is_empty() && k.allow_direct_reclaim() {
            for t in std::mem::take(&mut k.reclaim.pfmemalloc_waiters) {
                k.sched.wake(t, k.now, None);
            }
        }
        self.run_reclaimed += sc.nr_reclaimed;
        self.run_scanned += sc.nr_scanned;
        // "Limit the priority of boosting to avoid reclaim writeback": a boosted pass at
        // DEF_PRIORITY - 2 does not raise the priority for scanning too little.
        let hold_priority = self.boost_reclaim > 0 && self.priority == DEF_PRIORITY - 2;
        if self.boost_reclaim > 0 {
            self.boost_reclaim -= self.boost_reclaim.min(sc.nr_reclaimed);
            if self.boost_reclaim > 0 && sc.nr_reclaimed == 0 {
                // "If reclaim made no progress for a boost, stop reclaim as IO cannot be
                // queued and it could be an infinite loop in extreme circumstances."
                // balance_pgdat: "if (!sc.nr_reclaimed) pgdat->kswapd_failures++".
                if self.run_reclaimed == 0 {
                    k.mm.kswapd_failures += 1;
                }
                self.end_run(k);
                self.priority = DEF_PRIORITY;
                if k.mm.nr_free() > k.mm.wmark_pages().high {
                    return self.nap(k);
                }
                return Step::Yield;
            }
        }
        if k.profile.kswapd_balance == KswapdBalance::LoopAgain && !(sc.nr_reclaimed == 0 && self.run_reclaimed == 0 && self.priority == 0) {
            return self.loop_again_after_pass(k, me);
        }
        // balance_pgdat raises the priority when a pass scanned less than its target or
        // reclaimed nothing (`if (raise_priority || !nr_reclaimed) sc.priority--`), but its
        // loop runs `while (sc.priority >= 1)`: kswapd never scans at priority 0.
        let exhausted = self.priority <= 1;
        if ((sc.nr_scanned < sc.nr_to_reclaim && !hold_priority) || sc.nr_reclaimed == 0) && self.priority > 1 {
            self.priority -= 1;
        }
        if sc.nr_immediate > 0 {
            // Pages marked for immediate reclaim are still being written: stall. 5.16+
            // reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK): until SWAP_CLUSTER_MAX pages
            // complete writeback (__acct_reclaim_writeback), at most HZ/10; before,
            // congestion_wait(BLK_RW_ASYNC, HZ/10), which blk-mq devices never cut short.
            let cap = k.now + 100 * NS_PER_MS;
            let until = if k.profile.writeback_throttle == WritebackThrottle::ReclaimThrottle {
                k.block.next_completion().unwrap_or(cap).min(cap)
            } else {
                cap
            };
            let until = until.max(k.now + 1);
            if k.profile.writeback_throttle == WritebackThrottle::ReclaimThrottle {
                k.reclaim.writeback_throttled_until = Some(until);
            }
            // Still inside balance_pgdat's psi_memstall_enter section.
            k.set_wait_reason(me, crate::delayacct::WaitReason::ReclaimWait);
            return Step::SleepUntil { t: until, io: false };
        }
        if sc.nr_reclaimed == 0 && sc.nr_congested > 0 {
            // The swap device is saturated: wait for a request to complete.
            let until = k.block.next_completion().unwrap_or(k.now + 10 * NS_PER_MS);
            k.set_wait_reason(me, crate::delayacct::WaitReason::ReclaimWait);
            return Step::SleepUntil { t: until.max(k.now + 1), io: true };
        }
        if sc.nr_reclaimed == 0 && exhausted {
            // Nothing reclaimable now: wait for writeback or for the situation to change.
            k.snapshot_refaults(&ScanControl::default());
            // balance_pgdat: "if (!sc.nr_reclaimed) pgdat->kswapd_failures++" for a run
            // that went through every priority without reclaiming a page.
            if self.run_reclaimed == 0 {
                k.mm.kswapd_failures += 1;
            }
            self.run_reclaimed = 0;
            self.priority = DEF_PRIORITY;
            // The end of this balance_pgdat run: the next pass starts another
            // (PAGEOUTRUN; 2.6.39: `goto loop_again`). Since 4.x balance_pgdat returns
            // here and kswapd_try_to_sleep, finding the node unbalanced, counts
            // KSWAPD_HIGH_WMARK_HIT_QUICKLY (a hopeless node sleeps instead).
            self.end_run(k);
            let hopeless = k.profile.kswapd_hopeless && k.mm.kswapd_failures >= super::page_alloc::MAX_RECLAIM_RETRIES;
            if k.profile.kswapd_hopeless && !hopeless {
                k.vm.inc(VmItem::KswapdHighWmarkHitQuickly);
            }
            let until = k.block.next_completion().unwrap_or(k.now + 100 * NS_PER_MS).min(k.now + 100 * NS_PER_MS);
            return Step::SleepUntil { t: until.max(k.now + 1), io: false };
        }
        Step::Yield
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::page::Pages;
    use memtwin_machine::KernelProfile;

    /// An lruvec with the given list lengths (pages 0.. on a scratch frame table).
    fn lruvec(sizes: [u64; 4]) -> (Pages, Lruvec) {
        let total: u64 = sizes.iter().sum();
        let mut pages = Pages::new(total as u32, 5);
        let mut lv = Lruvec::new(&mut pages, total as u32);
        let mut p = 0;
        for (i, &n) in sizes.iter().enumerate() {
            for _ in 0..n {
                lv.add_head(&mut pages, p, Lru::EVICTABLE[i]);
                p += 1;
            }
        }
        (pages, lv)
    }
    fn node(swappiness: u64) -> NodeNumbers {
        NodeNumbers { file: 1 << 20, free: 1 << 20, high_wmark: 1000, swappiness, can_reclaim_anon: true }
    }
    fn sc(priority: u32) -> ScanControl {
        ScanControl { priority, nr_to_reclaim: SWAP_CLUSTER_MAX, ..Default::default() }
    }

    #[test]
    fn inactive_is_low_uses_the_sqrt_ratio_above_one_gb() {
        let prof = Profile::of(KernelProfile::Linux6);
        let (_, lv) = lruvec([0, 0, 100, 101]);
        assert!(inactive_is_low(&lv, true, &prof), "below 1 GB the ratio is 1");
        assert!(!inactive_is_low(&lv, false, &prof), "empty anon lists");
        // 4 GB of file pages: ratio int_sqrt(40) = 6.
        let gb4 = 1 << 20;
        let (_, lv) = lruvec([0, 0, gb4 / 7 + 1, gb4 - gb4 / 7 - 1]);
        assert!(!inactive_is_low(&lv, true, &prof), "inactive * 6 >= active");
        let (_, lv) = lruvec([0, 0, gb4 / 8, gb4 - gb4 / 8]);
        assert!(inactive_is_low(&lv, true, &prof), "inactive * 6 < active");
    }

    /// inactive_file_is_low_global in 2.6.x: the file lists are kept at 1:1 whatever
    /// their size (anon keeps the sqrt ratio).
    #[test]
    fn before_2016_the_active_file_list_never_outgrows_the_inactive_one() {
        let prof = Profile::of(KernelProfile::Linux2639);
        let gb4 = 1 << 20;
        let (_, lv) = lruvec([0, 0, gb4 / 7 + 1, gb4 - gb4 / 7 - 1]);
        assert!(inactive_is_low(&lv, true, &prof), "active > inactive");
        let (_, lv) = lruvec([0, 0, gb4 / 2, gb4 / 2]);
        assert!(!inactive_is_low(&lv, true, &prof), "equal lists are not low");
        let (_, lv) = lruvec([gb4 / 7 + 1, gb4 - gb4 / 7 - 1, 0, 0]);
        assert!(!inactive_is_low(&lv, false, &prof), "anon: inactive * 6 >= active");
    }

    #[test]
    fn no_swap_scans_file_only_and_cache_trim_mode_leaves_anon_alone() {
        let prof = Profile::of(KernelProfile::Linux6);
        let (_, mut lv) = lruvec([4096, 4096, 4096, 1024]);
        let mut n = node(60);
        n.can_reclaim_anon = false;
        let mut s = sc(DEF_PRIORITY);
        prepare_scan_count(&lv, &n, &mut s, &prof);
        assert_eq!(get_scan_count(&mut lv, &prof, &n, &s), [0, 0, 1, 0]);
        // Plenty of inactive file pages, no refaults: file only (cache_trim_mode).
        let n = node(60);
        let mut s = sc(10);
        prepare_scan_count(&lv, &n, &mut s, &prof);
        assert!(s.cache_trim_mode);
        assert_eq!(get_scan_count(&mut lv, &prof, &n, &s), [0, 0, 4, 1]);
        // File refaults since the last cycle end it: anon and file by cost.
        lv.workingset_activate[1] += 1;
        let mut s = sc(10);
        prepare_scan_count(&lv, &n, &mut s, &prof);
        assert!(!s.cache_trim_mode);
        let c = get_scan_count(&mut lv, &prof, &n, &s);
        assert!(c[0] > 0 && c[2] > 0, "{c:?}");
    }

    #[test]
    fn reclaim_cost_moves_pressure_away_from_the_costly_type() {
        let prof = Profile::of(KernelProfile::Linux6);
        let (_, mut lv) = lruvec([1 << 16, 0, 1 << 16, 0]);
        lv.workingset_activate[1] = 1; // not cache_trim_mode
        let n = node(100);
        let mut s = sc(4);
        prepare_scan_count(&lv, &n, &mut s, &prof);
        let even = get_scan_count(&mut lv, &prof, &n, &s);
        assert_eq!(even[0], even[2], "swappiness 100, equal costs: equal pressure");
        lru_note_cost(&mut lv, true, 1000);
        // The costs are the target lruvec's, read by prepare_scan_count.
        prepare_scan_count(&lv, &n, &mut s, &prof);
        let c = get_scan_count(&mut lv, &prof, &n, &s);
        assert!(c[0] > c[2], "file refaults/writes make file costlier: {c:?}");
        // Costs decay once they exceed a quarter of the LRU.
        lru_note_cost(&mut lv, false, (1 << 15) + 1);
        assert!(lv.file_cost + lv.anon_cost <= (1 << 17) / 4 + 1);
    }

    #[test]
    fn pre_5_8_balance_follows_rotation_and_2_6_39_weighs_prio_plus_one() {
        let (_, mut lv) = lruvec([1 << 16, 0, 1 << 16, 0]);
        lv.recent_scanned = [100, 100];
        lv.recent_rotated = [99, 0];
        lv.workingset_activate[1] = 1;
        let n = node(60);
        let s = sc(4);
        let p54 = Profile::of(KernelProfile::Linux5Pre59);
        let c = get_scan_count(&mut lv, &p54, &n, &s);
        assert!(c[2] > 10 * c[0], "anon pages rotate: pressure goes to file: {c:?}");
        // swappiness 0 on 2.6.39: anon still gets (0 + 1) of the weight.
        let p26 = Profile::of(KernelProfile::Linux2639);
        lv.recent_rotated = [0, 0];
        let c = get_scan_count(&mut lv, &p26, &node(0), &s);
        assert!(c[0] > 0, "{c:?}");
        let c = get_scan_count(&mut lv, &p54, &node(0), &s);
        assert_eq!(c[0], 0, "{c:?}");
    }

    #[test]
    fn the_stop_rule_of_each_era() {
        let targets = [64, 0, 640, 0];
        let mut s = sc(DEF_PRIORITY);
        let enough = SWAP_CLUSTER_MAX;
        // 2.6.39: never stops at DEF_PRIORITY, stops below it.
        let p = Profile::of(KernelProfile::Linux2639);
        let mut nr = [32, 0, 320, 0];
        let mut adj = false;
        assert!(!lruvec_enough(&p, &mut nr, &targets, enough, &s, &mut adj));
        s.priority = DEF_PRIORITY - 1;
        assert!(lruvec_enough(&p, &mut nr, &targets, enough, &s, &mut adj));
        // 5.x: anon (the smaller) stops, file is cut once to its unscanned share.
        let p = Profile::of(KernelProfile::Linux5Pre59);
        let mut nr = [32, 0, 320, 0];
        let mut adj = false;
        assert!(!lruvec_enough(&p, &mut nr, &targets, enough, &s, &mut adj));
        assert_eq!(nr[0], 0);
        assert!(adj, "scan_adjusted once");
        let p = Profile::of(KernelProfile::Linux6);
        let mut nr = [32, 0, 320, 0];
        let mut adj = false;
        assert!(!lruvec_enough(&p, &mut nr, &targets, enough, &s, &mut adj));
        assert!(!adj, "6.0+: again after every round");
    }

    #[test]
    fn first_reference_activation_by_era() {
        let r = |k| (first_reference_activates(&Profile::of(k), MappingKind::Anon), first_reference_activates(&Profile::of(k), MappingKind::Shmem));
        assert_eq!(r(KernelProfile::Linux6), (false, false));
        assert_eq!(r(KernelProfile::Linux5Pre59), (true, true));
        assert_eq!(r(KernelProfile::Linux2639), (true, false));
        assert!(!first_reference_activates(&Profile::of(KernelProfile::Linux2639), MappingKind::File));
    }

    /// balance_pgdat of 2.6.37 .. 3.10 after a priority that left the node unbalanced:
    /// below DEF_PRIORITY - 2, if the run has scanned pages, a nap of HZ/10 in
    /// congestion_wait (D state), or kswapd_skip_congestion_wait below the min watermark;
    /// SWAP_CLUSTER_MAX pages reclaimed by the run, or priority 0, start it over at
    /// DEF_PRIORITY (another pageoutrun); otherwise the next priority.
    #[test]
    fn kswapd_2_6_39_naps_below_priority_ten_and_loops_again() {
        let mut m = memtwin_machine::preset("seed-000").unwrap();
        memtwin_machine::apply_set(&mut m, "ram=256M").unwrap();
        memtwin_machine::apply_set(&mut m, "kernel=linux-2.6.39").unwrap();
        let mut k = Kernel::boot(m, 1).unwrap();
        assert_eq!(k.profile.kswapd_balance, KswapdBalance::LoopAgain);
        let me = k.reclaim.kswapd;
        let w = k.mm.wmark;
        // Free memory between the min and high watermarks.
        let mut held = Vec::new();
        while k.mm.nr_free() > (w.min + w.high) / 2 {
            held.push(k.mm.take_free().unwrap());
        }
        let at = |priority, run_scanned, run_reclaimed| Kswapd { priority, running: true, run_reclaimed, run_scanned, ..Default::default() };
        let skips = |k: &Kernel| k.vm.get(VmItem::KswapdSkipCongestionWait);
        let runs = |k: &Kernel| k.vm.get(VmItem::Pageoutrun);

        // Priority 9 after scanning: a nap of 100 ms, in D state, then priority 8.
        let mut s = at(9, 300, 5);
        let now = k.now;
        assert_eq!(s.loop_again_after_pass(&mut k, me), Step::SleepUntil { t: now + 100 * NS_PER_MS, io: true });
        assert_eq!(s.priority, 8);
        // Priority 10 (DEF_PRIORITY - 2): no nap yet.
        let mut s = at(10, 300, 5);
        assert_eq!(s.loop_again_after_pass(&mut k, me), Step::Yield);
        assert_eq!(s.priority, 9);
        // Nothing scanned in this run: no nap.
        let mut s = at(5, 0, 0);
        assert_eq!(s.loop_again_after_pass(&mut k, me), Step::Yield);
        // SWAP_CLUSTER_MAX reclaimed: the nap, then loop_again at DEF_PRIORITY.
        let (r0, n0) = (runs(&k), skips(&k));
        let mut s = at(7, 300, SWAP_CLUSTER_MAX);
        assert!(matches!(s.loop_again_after_pass(&mut k, me), Step::SleepUntil { io: true, .. }));
        assert_eq!((s.priority, s.run_scanned, s.run_reclaimed, runs(&k)), (DEF_PRIORITY, 0, 0, r0 + 1));
        // Priority 0: loop_again too.
        let mut s = at(0, 300, 3);
        let _ = s.loop_again_after_pass(&mut k, me);
        assert_eq!((s.priority, runs(&k)), (DEF_PRIORITY, r0 + 2));
        assert_eq!(skips(&k), n0, "above the min watermark every nap is taken");
        // At or below the min watermark: no nap, kswapd_skip_congestion_wait.
        while k.mm.nr_free() > w.min {
            held.push(k.mm.take_free().unwrap());
        }
        let mut s = at(9, 300, 5);
        assert_eq!(s.loop_again_after_pass(&mut k, me), Step::Yield);
        assert_eq!((s.priority, skips(&k)), (8, n0 + 1));
        // A balanced node: nothing to do here (kswapd's step puts it to sleep).
        while let Some(p) = held.pop() {
            k.mm.put_free(p);
        }
        let mut s = at(9, 300, 5);
        assert_eq!(s.loop_again_after_pass(&mut k, me), Step::Yield);
        assert_eq!(s.priority, 9);
    }

    /// 2.6.39 do_try_to_free_pages: below DEF_PRIORITY - 2, after a priority that
    /// scanned pages, wait_iff_congested(HZ/10) sleeps in D state, until a congested queue
    /// frees a slot, only while the zone is flagged ZONE_CONGESTED; otherwise the next
    /// priority follows at once.
    #[test]
    fn direct_reclaim_2_6_39_waits_iff_congested() {
        use crate::block::{Dir, ReqKind, NO_INODE};
        for flagged in [false, true] {
            let mut m = memtwin_machine::preset("seed-000").unwrap();
            memtwin_machine::apply_set(&mut m, "ram=256M").unwrap();
            memtwin_machine::apply_set(&mut m, "kernel=linux-2.6.39").unwrap();
            let mut k = Kernel::boot(m, 1).unwrap();
            // Fill the disk's queue with writes.
            let mut pos = 0;
            while !k.block.devs[0].congested() {
                k.submit_bio(0, Dir::Write, pos, 4096, ReqKind::Direct { ino: NO_INODE }, None);
                pos += 1 << 20;
            }
            let clears = k.block.congestion_clears_at().unwrap();
            k.mm.zone_congested = flagged;
            // A target it cannot meet: every priority runs.
            let sc = ScanControl { nr_to_reclaim: u64::MAX, ..Default::default() };
            let mut path = ReclaimPath::new(sc, true, true, k.now);
            let mut naps = Vec::new();
            loop {
                match k.reclaim_advance(None, &mut path) {
                    PathStep::Done => break,
                    PathStep::Sleep { until, io: true } => naps.push((path.sc.priority, until)),
                    _ => {}
                }
            }
            if flagged {
                // One nap after each priority below 10 that scanned pages (the small LRU of
                // this machine gives the first pages at a lower one), each until the
                // queue's first completion (well before HZ/10).
                assert!(naps.len() >= 3 && naps.iter().all(|&(p, until)| p < DEF_PRIORITY - 2 && until == clears.min(k.now + HZ_NS / 10)), "{naps:?}");
                assert!(naps.windows(2).all(|w| w[1].0 == w[0].0 - 1), "one per priority: {naps:?}");
            } else {
                assert!(naps.is_empty(), "{naps:?}");
            }
        }
    }

    /// Writes its byte count to /root/f in 1 MiB write(2) calls, then exits.
    struct Writer(Option<usize>, u64);
    impl crate::Program for Writer {
        fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
            let flags = crate::fs::OpenFlags { write: true, create: true, trunc: true, ..Default::default() };
            let f = *self.0.get_or_insert_with(|| k.sys_open(me, "/root/f", flags).unwrap().0);
            if self.1 == 0 {
                return Step::Exit(0);
            }
            let r = k.sys_write(me, f, 1 << 20).unwrap();
            self.1 -= r.bytes;
            r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 })
        }
    }

    /// 2.6.39 shrink_zone ends with throttle_vm_writeout: while the pages under writeback
    /// exceed the dirty threshold plus a tenth, the reclaimer sleeps in
    /// congestion_wait(HZ/10), in D state, and checks again; below that it goes on.
    #[test]
    fn reclaim_2_6_39_throttles_while_writeback_exceeds_the_dirty_threshold() {
        let mut m = memtwin_machine::preset("seed-000").unwrap();
        memtwin_machine::apply_set(&mut m, "ram=256M").unwrap();
        memtwin_machine::apply_set(&mut m, "kernel=linux-2.6.39").unwrap();
        let mut k = Kernel::boot(m, 1).unwrap();
        let t = k.spawn("w", "w", Box::new(Writer(None, 8 << 20)), crate::Sink::Null, crate::Sink::Null);
        let limit = k.now + 60 * memtwin_engine::NS_PER_SEC;
        k.run_until(limit, &mut |k| k.task_exited(t));
        // Put the file's 2,048 dirty pages under writeback (the requests stay in flight:
        // the event loop does not run below).
        let mapping = k.fs.inodes[k.fs.lookup("/root/f").unwrap() as usize].mapping;
        k.writeback_mapping(mapping, u64::MAX, None);
        let wb = k.mm.stat.writeback;
        assert!(wb >= 2048, "{wb}");
        let run = |k: &mut Kernel| {
            let sc = ScanControl { nr_to_reclaim: SWAP_CLUSTER_MAX, ..Default::default() };
            let mut path = ReclaimPath::new(sc, true, true, k.now);
            let mut sleeps = 0;
            loop {
                match k.reclaim_advance(None, &mut path) {
                    PathStep::Sleep { until, io: true } if path.state == RState::NodeDone => {
                        assert!(until > k.now && until <= k.now + HZ_NS / 10);
                        sleeps += 1;
                        if sleeps == 3 {
                            return sleeps;
                        }
                    }
                    PathStep::Done => return sleeps,
                    _ => {}
                }
            }
        };
        // dirty_bytes at 4 MiB: 1,024 pages, boosted to 1,126, below the 2,048 in flight.
        k.sysctl.dirty_bytes = 4 << 20;
        assert_eq!(run(&mut k), 3, "throttled, and again after each nap");
        // 16 MiB: 4,096 pages, above them.
        k.sysctl.dirty_bytes = 16 << 20;
        assert_eq!(run(&mut k), 0, "not throttled");
    }

    /// kswapd's pageout of a dirty page it meets twice on a PGDAT_DIRTY node (5.x) goes
    /// through ext4_writepage, which refuses a page with delayed allocation (no blocks until
    /// writeback allocates them): counted in nr_vmscan_write, nothing written, the page kept
    /// dirty on the inactive list without PG_reclaim. A page whose blocks reached the disk
    /// is written.
    #[test]
    fn kswapd_pageout_on_ext4_writes_only_pages_whose_blocks_are_on_disk() {
        let mut m = memtwin_machine::preset("default").unwrap();
        memtwin_machine::apply_set(&mut m, "ram=1G").unwrap();
        memtwin_machine::apply_set(&mut m, "kernel=linux-5.4").unwrap();
        let mut k = Kernel::boot(m, 1).unwrap();
        let root = k.fs.mount_of("/root/f").unwrap();
        assert_eq!(k.fs.mounts[root as usize].fstype, "ext4");
        let t = k.spawn("w", "w", Box::new(Writer(None, 1 << 20)), crate::Sink::Null, crate::Sink::Null);
        let limit = k.now + 60 * memtwin_engine::NS_PER_SEC;
        k.run_until(limit, &mut |k| k.task_exited(t));
        k.lru_add_drain_all();
        let ino = k.fs.lookup("/root/f").unwrap();
        let mapping = k.fs.inodes[ino as usize].mapping;
        let pages: Vec<Pfn> = (0..256).map(|i| match k.mm.slot(mapping, i) {
            crate::mm::Slot::Page(p) => p,
            s => panic!("page {i}: {s:?}"),
        }).collect();
        // Met once already (PG_reclaim), unreferenced, on a node flagged PGDAT_DIRTY: what
        // kswapd's second meeting looks like; the file's pages alone on the inactive list's
        // tail.
        let prepare = |k: &mut Kernel| {
            for &p in &pages {
                assert!(k.mm.pages.dirty(p));
                k.mm.pages.clear_referenced(p);
                k.mm.pages.set_reclaim(p);
                let lv = k.mm.page_lruvec(p);
                k.mm.lruvecs[lv as usize].del(&mut k.mm.pages, p);
                k.mm.lruvecs[lv as usize].add_tail(&mut k.mm.pages, p, Lru::InactiveFile);
            }
            k.mm.pgdat_dirty = true;
        };
        let pass = |k: &mut Kernel| {
            let lv = k.mm.page_lruvec(pages[0]);
            let mut sc = ScanControl { kswapd: true, priority: 0, nr_to_reclaim: u64::MAX, ..Default::default() };
            k.shrink_inactive_list(lv, 256, Lru::InactiveFile, &mut sc);
        };
        // New data: delayed allocation.
        prepare(&mut k);
        let (written, vmscan_write) = (k.vm.get(VmItem::NrWritten), k.vm.get(VmItem::NrVmscanWrite));
        pass(&mut k);
        assert_eq!(k.vm.get(VmItem::NrVmscanWrite) - vmscan_write, 256, "counted by pageout");
        assert_eq!(k.mm.mappings[mapping as usize].nr_writeback, 0, "nothing written");
        assert!(pages.iter().all(|&p| k.mm.pages.dirty(p) && !k.mm.pages.reclaim(p) && k.mm.pages.lru(p) == Lru::InactiveFile));
        assert_eq!(k.vm.get(VmItem::NrWritten), written);
        // Written back (blocks allocated, i_disksize covers them), then dirtied again in
        // place: kswapd writes them.
        k.writeback_mapping(mapping, u64::MAX, None);
        k.run_until(k.now + 10 * memtwin_engine::NS_PER_SEC, &mut |k| k.mm.mappings[mapping as usize].nr_writeback == 0);
        assert_eq!(k.fs.inodes[ino as usize].disk_size, 1 << 20);
        for &p in &pages {
            k.set_page_dirty(t, p);
        }
        prepare(&mut k);
        pass(&mut k);
        assert_eq!(k.mm.mappings[mapping as usize].nr_writeback, 256, "kswapd writes them");
    }

    /// Direct reclaim that meets dirty file pages asks the flushers to write, each era its
    /// way. 2.6.39's do_try_to_free_pages, after a priority that has scanned more than one
    /// and a half nr_to_reclaim in all without reclaiming it, queues a work item of
    /// total_scanned pages (wakeup_flusher_threads(total_scanned)); 4.14+ asks for all that
    /// is dirty (WB_start_all). The flusher then writes below the dirty thresholds, as
    /// much as it was asked, and no more.
    #[test]
    fn direct_reclaim_asks_the_flushers_for_writeback_per_era() {
        for era in ["linux-2.6.39", "linux-6.x"] {
            let mut m = memtwin_machine::preset("seed-000").unwrap();
            memtwin_machine::apply_set(&mut m, "ram=256M").unwrap();
            memtwin_machine::apply_set(&mut m, &format!("kernel={era}")).unwrap();
            let mut k = Kernel::boot(m, 1).unwrap();
            // Only the file's pages on the file LRU: 8 MiB written, far below the
            // background threshold, so nobody writes them for dirty_expire (30 s).
            k.drop_caches(1);
            let t = k.spawn("w", "w", Box::new(Writer(None, 8 << 20)), crate::Sink::Null, crate::Sink::Null);
            let limit = k.now + 60 * memtwin_engine::NS_PER_SEC;
            k.run_until(limit, &mut |k| k.task_exited(t));
            let dirty = k.mm.stat.dirty;
            assert!(dirty >= 2048, "{era}: {dirty}");
            assert_eq!(k.writeback.work_pages.iter().sum::<u64>(), 0);
            // Direct reclaim, anon left alone (no swap-out to muddy the counts).
            let sc = ScanControl { nr_to_reclaim: SWAP_CLUSTER_MAX, no_swap: true, ..Default::default() };
            let mut path = ReclaimPath::new(sc, true, true, k.now);
            let mut asked = Vec::new();
            let mut last = 0;
            loop {
                let step = k.reclaim_advance(None, &mut path);
                let w: u64 = k.writeback.work_pages.iter().sum();
                if w != last {
                    asked.push((w, path.sc.nr_scanned, path.sc.nr_reclaimed));
                    last = w;
                }
                if matches!(step, PathStep::Done) {
                    break;
                }
            }
            let &(first, scanned, reclaimed) = asked.first().unwrap_or_else(|| panic!("{era}: no writeback asked for"));
            if era == "linux-2.6.39" {
                // Referenced dirty pages are kept on the first look: scanned, not reclaimed.
                assert!(scanned > 48 && reclaimed < 32, "{era}: {asked:?}");
                assert_eq!(first, scanned, "{era}: total_scanned pages");
                // Each later priority queues its total again.
                assert!(asked.windows(2).all(|w| w[1].0 > w[0].0), "{era}: {asked:?}");
            } else {
                assert_eq!(first, dirty, "{era}: all that is dirty, once");
            }
            // The flusher writes what it was asked for, below the thresholds, and stops.
            let asked_for = k.writeback.work_pages[0];
            let written_before = k.vm.get(VmItem::NrWritten);
            let limit = k.now + 2 * memtwin_engine::NS_PER_SEC;
            k.run_until(limit, &mut |_| false);
            let written = k.vm.get(VmItem::NrWritten) - written_before;
            assert_eq!(k.writeback.work_pages[0], 0, "{era}: the work is done");
            assert!(written >= asked_for.min(dirty) && written <= dirty, "{era}: {written} written for {asked_for} asked, {dirty} dirty");
            if era == "linux-2.6.39" && asked_for < dirty {
                assert!(k.mm.stat.dirty > 0, "{era}: no more than asked");
            }
        }
    }
}
