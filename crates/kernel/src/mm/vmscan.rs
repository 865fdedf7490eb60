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
use crate::profile::{FirstRefActivates, Profile, ReclaimStop, WritebackThrottle};
use crate::task::{Program, Step};
use crate::Kernel;
use memtwin_engine::{TaskId, NS_PER_MS};
use memtwin_procfs::VmItem;

/// struct scan_control, reduced.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScanControl {
    pub nr_to_reclaim: u64,
    pub nr_reclaimed: u64,
    pub nr_scanned: u64,
    pub priority: u32,
    pub kswapd: bool,
    /// The memory cgroup whose limit is being enforced; None: global reclaim of the node.
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
}

impl ScanControl {
    /// cgroup_reclaim(sc).
    pub fn cgroup_reclaim(&self) -> bool {
        self.target_mem_cgroup.is_some()
    }
    /// The lruvec whose state steers this reclaim (mem_cgroup_lruvec(target_mem_cgroup,
    /// pgdat)): the root lruvec for global reclaim, the target cgroup's otherwise. On this
    /// single-node model an lruvec id is its memory cgroup's id.
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

fn int_sqrt(x: u64) -> u64 {
    (x as f64).sqrt() as u64
}

/// inactive_is_low: inactive * ratio < active, ratio = int_sqrt(10 * GB) of the two lists,
/// 1 below 1 GB.
pub fn inactive_is_low(lv: &Lruvec, file: bool) -> bool {
    let (inactive, active) = (lv.len(Lru::of(file, false)), lv.len(Lru::of(file, true)));
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
pub fn prepare_scan_count(lv: &Lruvec, node: &NodeNumbers, sc: &mut ScanControl) {
    sc.may_deactivate_anon = refaulting(lv, false) || inactive_is_low(lv, false);
    sc.may_deactivate_file = refaulting(lv, true) || inactive_is_low(lv, true);
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
    if !node.can_reclaim_anon {
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
        // SCAN_FRACT: weigh each type by swappiness and the cost of reclaiming it.
        let total = lv.anon_cost + lv.file_cost;
        let anon_cost = total + lv.anon_cost;
        let file_cost = total + lv.file_cost;
        let total = anon_cost + file_cost;
        let ap = swappiness * (total + 1) / (anon_cost + 1);
        let fp = (200 - swappiness) * (total + 1) / (file_cost + 1);
        (ap, fp)
    } else {
        // Before 5.9 (get_scan_count in 5.4): global reclaim of a node whose file
        // pages plus free memory are under the high watermark goes for anon.
        if !sc.cgroup_reclaim()
            && node.file + node.free <= node.high_wmark
            && !inactive_is_low(lv, false)
            && (sizes[0] >> sc.priority) > 0
        {
            return anon_only;
        }
        // Enough inactive file pages: leave anon alone — unless file pages refault
        // (inactive_list_is_low: refaults since the last cycle make the ratio 0).
        // "mm,vmscan: only evict file pages when we have plenty" (3.8): not in 2.6.39.
        let file_inactive_low = refaulting(lv, true) || inactive_is_low(lv, true);
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
    if file { lv.file_cost += nr_pages } else { lv.anon_cost += nr_pages }
    let lrusize = lv.file_lru() + lv.anon_lru();
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

    /// The node-wide numbers the balance rules read.
    pub fn node_numbers(&self) -> NodeNumbers {
        NodeNumbers {
            file: self.mm.file_lru(),
            free: self.mm.nr_free(),
            high_wmark: self.mm.wmark.high,
            swappiness: self.sysctl.swappiness as u64,
            can_reclaim_anon: self.can_reclaim_anon(),
        }
    }

    /// inactive_is_low of lruvec `id`.
    pub fn inactive_is_low(&self, id: LruvecId, file: bool) -> bool {
        inactive_is_low(self.mm.lruvec(id), file)
    }

    /// get_scan_count of lruvec `id`.
    pub fn get_scan_count(&mut self, id: LruvecId, sc: &ScanControl) -> [u64; 4] {
        let node = self.node_numbers();
        get_scan_count(&mut self.mm.lruvecs[id as usize], &self.profile, &node, sc)
    }

    /// lru_note_cost on lruvec `id`.
    pub fn lru_note_cost(&mut self, id: LruvecId, file: bool, nr_pages: u64) {
        lru_note_cost(self.mm.lruvec_mut(id), file, nr_pages);
    }

    /// mem_cgroup_iter(target, prev): the lruvecs of the node that this reclaim scans, one
    /// after the other: the target cgroup and its descendants, or every lruvec for global
    /// reclaim. Only the root lruvec exists until memory cgroups add theirs.
    pub fn mem_cgroup_iter(&self, sc: &ScanControl, prev: Option<LruvecId>) -> Option<LruvecId> {
        match prev {
            None => Some(sc.target_lruvec()),
            Some(_) => None,
        }
    }

    /// shrink_node: prepare the scan (from the target lruvec), shrink every lruvec under
    /// the target (shrink_node_memcgs -> shrink_lruvec), the shrinkers, then kick the
    /// flushers if reclaim keeps meeting dirty pages.
    pub fn shrink_node(&mut self, sc: &mut ScanControl) {
        let node = self.node_numbers();
        prepare_scan_count(self.mm.lruvec(sc.target_lruvec()), &node, sc);
        let mut it = self.mem_cgroup_iter(sc, None);
        while let Some(id) = it {
            self.shrink_lruvec(id, sc);
            it = self.mem_cgroup_iter(sc, Some(id));
        }
        // shrink_slab: the shadow-node shrinker (3.15+).
        if self.profile.workingset {
            self.shrink_shadow_nodes();
        }
        if sc.nr_dirty > 0 && sc.nr_dirty >= sc.nr_scanned / 2 {
            // Reclaim is finding dirty pages it may not write: kick the flushers
            // (wakeup_flusher_threads(WB_REASON_VMSCAN)).
            self.wakeup_flusher_threads();
        }
    }

    /// shrink_lruvec: scan the lists of lruvec `id` in SWAP_CLUSTER_MAX batches until the
    /// targets are met; when enough was reclaimed, what happens next depends on the era
    /// (`lruvec_enough`).
    pub fn shrink_lruvec(&mut self, id: LruvecId, sc: &mut ScanControl) {
        let mut nr = self.get_scan_count(id, sc);
        let targets = nr;
        let mut reclaimed_here = 0;
        // shrink_lruvec (3.11+): global direct reclaim at DEF_PRIORITY keeps scanning its
        // whole target ("we are direct reclaiming implies that kswapd is not keeping up
        // and it is best to do a batch of work at once"); kswapd (and memcg reclaim) scan
        // anon and file in proportion once nr_to_reclaim is met.
        let proportional_reclaim = !sc.kswapd && !sc.cgroup_reclaim() && sc.priority == DEF_PRIORITY;
        let mut scan_adjusted = proportional_reclaim;
        const ORDER: [Lru; 4] = [Lru::InactiveAnon, Lru::ActiveAnon, Lru::InactiveFile, Lru::ActiveFile];
        while nr[0] > 0 || nr[2] > 0 || nr[3] > 0 {
            for (i, &l) in ORDER.iter().enumerate() {
                if nr[i] == 0 {
                    continue;
                }
                let n = nr[i].min(SWAP_CLUSTER_MAX);
                nr[i] -= n;
                let r = self.shrink_list(id, l, n, sc);
                reclaimed_here += r;
                sc.nr_reclaimed += r;
            }
            if sc.nr_congested > 0 {
                // The reclaimer would now sleep in the block layer waiting for a request
                // slot; it does not go on to evict other pages meanwhile.
                break;
            }
            if !lruvec_enough(&self.profile, &mut nr, &targets, reclaimed_here, sc, &mut scan_adjusted) {
                continue;
            }
            break;
        }
        // Even without evicting anon, keep its active/inactive balance.
        if self.can_reclaim_anon() && self.inactive_is_low(id, false) {
            self.shrink_active_list(id, SWAP_CLUSTER_MAX, Lru::ActiveAnon, sc);
        }
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

    fn shrink_list(&mut self, id: LruvecId, l: Lru, n: u64, sc: &mut ScanControl) -> u64 {
        if l.is_active() {
            let may = if l.is_file() { sc.may_deactivate_file } else { sc.may_deactivate_anon };
            if may {
                self.shrink_active_list(id, n, l, sc);
            }
            return 0;
        }
        self.shrink_inactive_list(id, n, l, sc)
    }

    /// shrink_active_list: move pages from the active tail to the inactive list, except
    /// referenced executable file pages, which get another trip around the active list.
    /// PG_referenced is left as it is (only folio_referenced's young PTEs are consumed);
    /// before 5.8 every referenced page counted as rotated (recent_rotated), since 5.8 only
    /// the executable pages that stay active do.
    pub fn shrink_active_list(&mut self, id: LruvecId, n: u64, l: Lru, _sc: &mut ScanControl) {
        let file = l.is_file();
        let inactive = Lru::of(file, false);
        let count_all_referenced = !self.profile.cost_balance;
        let mut rotated = 0;
        let mut scanned = 0;
        for _ in 0..n {
            let Some(p) = self.mm.lru_tail(id, l) else { break };
            scanned += 1;
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
                    self.mm.lruvecs[id as usize].move_head(&mut self.mm.pages, p, l);
                    continue;
                }
            }
            if self.profile.deactivate_sets_workingset {
                // SetPageWorkingset (4.20+).
                self.mm.pages.set_workingset(p);
            }
            self.mm.lruvecs[id as usize].move_head(&mut self.mm.pages, p, inactive);
            self.vm.inc(VmItem::Pgdeactivate);
        }
        self.vm.add(VmItem::Pgrefill, scanned);
        let t = file as usize;
        let lv = self.mm.lruvec_mut(id);
        lv.recent_scanned[t] += scanned;
        lv.recent_rotated[t] += rotated;
        self.reclaim_cost_scan(scanned);
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

    /// shrink_inactive_list -> shrink_folio_list: evict clean, unreferenced pages from the
    /// inactive tail; rotate or activate the rest.
    pub fn shrink_inactive_list(&mut self, id: LruvecId, n: u64, l: Lru, sc: &mut ScanControl) -> u64 {
        let file = l.is_file();
        let active = Lru::of(file, true);
        let mut scanned = 0;
        let mut reclaimed = 0;
        let mut activated = 0;
        let mut pageout = 0;
        let mut batch_writeback = 0;
        for _ in 0..n {
            let Some(p) = self.mm.lru_tail(id, l) else { break };
            scanned += 1;
            if self.mm.pages.locked(p) {
                // Being read in: not reclaimable yet.
                self.mm.lruvecs[id as usize].move_head(&mut self.mm.pages, p, l);
                continue;
            }
            let r = self.check_references(p, file);
            if r == Ref::Activate {
                self.mm.lruvecs[id as usize].move_head(&mut self.mm.pages, p, active);
                self.vm.inc(VmItem::Pgactivate);
                activated += 1;
                continue;
            }
            if r == Ref::Keep {
                self.mm.lruvecs[id as usize].move_head(&mut self.mm.pages, p, l);
                continue;
            }
            if self.mm.pages.writeback(p) {
                // Case 1 of shrink_folio_list: kswapd meets a page it already marked, on a
                // node flagged PGDAT_WRITEBACK: pages cycle faster than they are written.
                if sc.kswapd && self.mm.pages.reclaim(p) && self.mm.pgdat_writeback {
                    sc.nr_immediate += 1;
                }
                // Case 2: mark for immediate reclaim (PG_reclaim: the end of writeback
                // rotates it to the inactive tail), keep it.
                sc.nr_writeback += 1;
                batch_writeback += 1;
                self.mm.pages.set_reclaim(p);
                self.mm.lruvecs[id as usize].move_head(&mut self.mm.pages, p, active);
                self.vm.inc(VmItem::Pgactivate);
                activated += 1;
                continue;
            }
            if self.mm.pages.dirty(p) {
                sc.nr_dirty += 1;
                if file {
                    // Reclaim does not write file pages; the flushers will. PG_reclaim:
                    // "immediately reclaim when written back" (activate_locked).
                    self.vm.inc(VmItem::NrVmscanImmediateReclaim);
                    self.mm.pages.set_reclaim(p);
                    self.mm.lruvecs[id as usize].move_head(&mut self.mm.pages, p, active);
                    self.vm.inc(VmItem::Pgactivate);
                    activated += 1;
                    continue;
                }
            }
            let m = self.mm.pages.mapping(p) as usize;
            if self.mm.mappings[m].swap_backed() {
                let swapped_before = self.vm.get(VmItem::Pswpout);
                let r = self.reclaim_swap_backed(p);
                pageout += self.vm.get(VmItem::Pswpout) - swapped_before;
                match r {
                    super::swap_state::SwapOut::Freed => reclaimed += 1,
                    super::swap_state::SwapOut::Writing => {
                        // Rotated to the tail when the write completes.
                        sc.nr_writeback += 1;
                        self.mm.lruvecs[id as usize].move_head(&mut self.mm.pages, p, l);
                    }
                    super::swap_state::SwapOut::Busy => {
                        sc.nr_congested += 1;
                        self.mm.lruvecs[id as usize].move_tail(&mut self.mm.pages, p, l);
                        break;
                    }
                    super::swap_state::SwapOut::Keep => {
                        self.mm.lruvecs[id as usize].move_head(&mut self.mm.pages, p, active);
                        activated += 1;
                    }
                }
                continue;
            }
            // __remove_mapping with a shadow entry, then free.
            let shadow = self.workingset_eviction(p);
            self.page_cache_delete(p, Some(shadow));
            reclaimed += 1;
        }
        if !self.swap.pending_buf.is_empty() {
            self.submit_swap_writes();
        }
        // shrink_node: kswapd flags the node PGDAT_WRITEBACK when every page it took was
        // under writeback (cleared when the node is balanced).
        if sc.kswapd && scanned > 0 && batch_writeback == scanned {
            self.mm.pgdat_writeback = true;
        }
        let (scan_item, steal_item) = if sc.kswapd {
            (VmItem::PgscanKswapd, VmItem::PgstealKswapd)
        } else {
            (VmItem::PgscanDirect, VmItem::PgstealDirect)
        };
        self.vm.add(scan_item, scanned);
        self.vm.add(steal_item, reclaimed);
        self.vm.add(if file { VmItem::PgscanFile } else { VmItem::PgscanAnon }, scanned);
        self.vm.add(if file { VmItem::PgstealFile } else { VmItem::PgstealAnon }, reclaimed);
        let t = file as usize;
        let lv = self.mm.lruvec_mut(id);
        lv.recent_scanned[t] += scanned;
        lv.recent_rotated[t] += activated;
        lru_note_cost(lv, file, pageout);
        sc.nr_scanned += scanned;
        self.reclaim_cost_scan(scanned);
        self.reclaim_cost_free(reclaimed);
        reclaimed
    }

    fn reclaim_cost_scan(&mut self, scanned: u64) {
        self.reclaim.pass_ns += scanned * self.machine.cpu_model.reclaim_scan_ns;
    }
    fn reclaim_cost_free(&mut self, freed: u64) {
        self.reclaim.pass_ns += freed * (self.machine.cpu_model.page_cache_ns + self.machine.cpu_model.page_alloc_ns);
    }

    /// try_to_free_pages / do_try_to_free_pages: direct reclaim of SWAP_CLUSTER_MAX pages,
    /// raising the priority until enough is freed. The work is charged to the allocating task.
    pub fn try_to_free_pages(&mut self, tid: TaskId) -> u64 {
        self.try_to_free_pages_sc(tid).nr_reclaimed
    }

    /// try_to_free_pages, returning its scan_control (what it found on the way).
    pub fn try_to_free_pages_sc(&mut self, tid: TaskId) -> ScanControl {
        let mut sc = ScanControl { nr_to_reclaim: SWAP_CLUSTER_MAX, ..Default::default() };
        self.reclaim.pass_ns = 0;
        for prio in (0..=DEF_PRIORITY).rev() {
            sc.priority = prio;
            self.shrink_node(&mut sc);
            if sc.nr_reclaimed >= sc.nr_to_reclaim || sc.nr_congested > 0 {
                break;
            }
        }
        self.snapshot_refaults(&sc);
        let ns = std::mem::take(&mut self.reclaim.pass_ns);
        self.charge_sys(tid, ns);
        self.reclaim.stats.record(false, ns);
        sc
    }
}

/// kswapd: woken when free memory falls below the low watermark, reclaims until it is
/// above the high watermark (balance_pgdat), then sleeps.
#[derive(Default)]
pub struct Kswapd {
    priority: u32,
    running: bool,
    failures: u32,
}

impl Program for Kswapd {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let w = k.mm.wmark;
        if k.mm.nr_free() > w.high {
            // clear_pgdat_congested: a balanced node is no longer flagged.
            k.mm.pgdat_writeback = false;
            if self.running {
                self.running = false;
                k.snapshot_refaults(&ScanControl::default());
            }
            self.priority = DEF_PRIORITY;
            self.failures = 0;
            k.reclaim.kswapd_waiting = true;
            return Step::Block { io: false };
        }
        if !self.running {
            self.running = true;
            self.priority = DEF_PRIORITY;
            k.vm.inc(VmItem::Pageoutrun);
        }
        // kswapd_shrink_node: reclaim up to the high watermark's worth at this priority.
        let mut sc = ScanControl {
            nr_to_reclaim: w.high.max(SWAP_CLUSTER_MAX),
            priority: self.priority,
            kswapd: true,
            ..Default::default()
        };
        k.reclaim.pass_ns = 0;
        k.shrink_node(&mut sc);
        let ns = std::mem::take(&mut k.reclaim.pass_ns).max(1000);
        k.charge_sys(me, ns);
        k.reclaim.stats.record(true, ns);
        if sc.nr_reclaimed > 0 {
            k.wake_writeback_waiters();
        }
        // balance_pgdat raises the priority when a pass scanned less than its target or
        // reclaimed nothing (`if (raise_priority || !nr_reclaimed) sc.priority--`), but its
        // loop runs `while (sc.priority >= 1)`: kswapd never scans at priority 0.
        let exhausted = self.priority <= 1;
        if (sc.nr_scanned < sc.nr_to_reclaim || sc.nr_reclaimed == 0) && self.priority > 1 {
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
            return Step::SleepUntil { t: until.max(k.now + 1), io: false };
        }
        if sc.nr_reclaimed == 0 && sc.nr_congested > 0 {
            // The swap device is saturated: wait for a request to complete.
            let until = k.block.next_completion().unwrap_or(k.now + 10 * NS_PER_MS);
            return Step::SleepUntil { t: until.max(k.now + 1), io: true };
        }
        if sc.nr_reclaimed == 0 && exhausted {
            // Nothing reclaimable now: wait for writeback or for the situation to change.
            k.snapshot_refaults(&ScanControl::default());
            self.failures += 1;
            self.priority = DEF_PRIORITY;
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
        let (_, lv) = lruvec([0, 0, 100, 101]);
        assert!(inactive_is_low(&lv, true), "below 1 GB the ratio is 1");
        assert!(!inactive_is_low(&lv, false), "empty anon lists");
        // 4 GB of file pages: ratio int_sqrt(40) = 6.
        let gb4 = 1 << 20;
        let (_, lv) = lruvec([0, 0, gb4 / 7 + 1, gb4 - gb4 / 7 - 1]);
        assert!(!inactive_is_low(&lv, true), "inactive * 6 >= active");
        let (_, lv) = lruvec([0, 0, gb4 / 8, gb4 - gb4 / 8]);
        assert!(inactive_is_low(&lv, true), "inactive * 6 < active");
    }

    #[test]
    fn no_swap_scans_file_only_and_cache_trim_mode_leaves_anon_alone() {
        let prof = Profile::of(KernelProfile::Linux6);
        let (_, mut lv) = lruvec([4096, 4096, 4096, 1024]);
        let mut n = node(60);
        n.can_reclaim_anon = false;
        let mut s = sc(DEF_PRIORITY);
        prepare_scan_count(&lv, &n, &mut s);
        assert_eq!(get_scan_count(&mut lv, &prof, &n, &s), [0, 0, 1, 0]);
        // Plenty of inactive file pages, no refaults: file only (cache_trim_mode).
        let n = node(60);
        let mut s = sc(10);
        prepare_scan_count(&lv, &n, &mut s);
        assert!(s.cache_trim_mode);
        assert_eq!(get_scan_count(&mut lv, &prof, &n, &s), [0, 0, 4, 1]);
        // File refaults since the last cycle end it: anon and file by cost.
        lv.workingset_activate[1] += 1;
        let mut s = sc(10);
        prepare_scan_count(&lv, &n, &mut s);
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
        prepare_scan_count(&lv, &n, &mut s);
        let even = get_scan_count(&mut lv, &prof, &n, &s);
        assert_eq!(even[0], even[2], "swappiness 100, equal costs: equal pressure");
        lru_note_cost(&mut lv, true, 1000);
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
}
