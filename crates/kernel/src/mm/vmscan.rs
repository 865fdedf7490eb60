//! Page reclaim (mm/vmscan.c): kswapd and direct reclaim, the anon/file scan balance,
//! active-list aging and inactive-list eviction.

use super::page::{Lru, Pfn};
use super::{DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::task::{Program, Step};
use crate::Kernel;
use memtwin_engine::{TaskId, NS_PER_MS};
use memtwin_machine::KernelProfile;
use memtwin_procfs::VmItem;

/// struct scan_control, reduced.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScanControl {
    pub nr_to_reclaim: u64,
    pub nr_reclaimed: u64,
    pub nr_scanned: u64,
    pub priority: u32,
    pub kswapd: bool,
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

impl Kernel {
    fn modern_balance(&self) -> bool {
        self.machine.kernel.cost_balance()
    }

    /// inactive_is_low: inactive * ratio < active, ratio = int_sqrt(10 * GB), 1 below 1 GB.
    pub fn inactive_is_low(&self, file: bool) -> bool {
        let (inactive, active) = if file {
            (self.mm.lru_len(Lru::InactiveFile), self.mm.lru_len(Lru::ActiveFile))
        } else {
            (self.mm.lru_len(Lru::InactiveAnon), self.mm.lru_len(Lru::ActiveAnon))
        };
        let gb = (inactive + active) >> (30 - 12);
        let ratio = if gb > 0 { int_sqrt(10 * gb) } else { 1 };
        inactive * ratio < active
    }

    /// Anonymous pages can be reclaimed only into swap.
    fn can_reclaim_anon(&self) -> bool {
        self.swap_available()
    }

    /// prepare_scan_count: whether to age the active lists, and the special modes.
    fn prepare_scan_count(&mut self, sc: &mut ScanControl) {
        let ra = self.vm.get(VmItem::WorkingsetActivateAnon);
        sc.may_deactivate_anon = ra != self.mm.refaults_seen[0] || self.inactive_is_low(false);
        let rf = self.vm.get(VmItem::WorkingsetActivateFile);
        sc.may_deactivate_file = rf != self.mm.refaults_seen[1] || self.inactive_is_low(true);
        let inactive_file = self.mm.lru_len(Lru::InactiveFile);
        sc.cache_trim_mode = (inactive_file >> sc.priority) > 0 && !sc.may_deactivate_file;
        let file = self.mm.file_lru();
        let free = self.mm.nr_free();
        sc.file_is_tiny = file + free <= self.mm.wmark.high
            && !sc.may_deactivate_anon
            && (self.mm.lru_len(Lru::InactiveAnon) >> sc.priority) > 0;
    }

    /// get_scan_count: how many pages of each evictable list to scan at this priority.
    /// Order of the result: inactive anon, active anon, inactive file, active file.
    pub fn get_scan_count(&mut self, sc: &ScanControl) -> [u64; 4] {
        let swappiness = self.sysctl.swappiness as u64;
        let sizes = [
            self.mm.lru_len(Lru::InactiveAnon),
            self.mm.lru_len(Lru::ActiveAnon),
            self.mm.lru_len(Lru::InactiveFile),
            self.mm.lru_len(Lru::ActiveFile),
        ];
        let scan = |i: usize| sizes[i] >> sc.priority;
        let file_only = [0, 0, scan(2), scan(3)];
        let anon_only = [scan(0), scan(1), 0, 0];
        let all = [scan(0), scan(1), scan(2), scan(3)];
        if !self.can_reclaim_anon() {
            return file_only;
        }
        if sc.priority == 0 && swappiness > 0 {
            return all; // SCAN_EQUAL
        }
        let (ap, fp) = if self.modern_balance() {
            if sc.file_is_tiny {
                return anon_only;
            }
            if sc.cache_trim_mode {
                return file_only;
            }
            // SCAN_FRACT: weigh each type by swappiness and the cost of reclaiming it.
            let total = self.mm.anon_cost + self.mm.file_cost;
            let anon_cost = total + self.mm.anon_cost;
            let file_cost = total + self.mm.file_cost;
            let total = anon_cost + file_cost;
            let ap = swappiness * (total + 1) / (anon_cost + 1);
            let fp = (200 - swappiness) * (total + 1) / (file_cost + 1);
            (ap, fp)
        } else {
            // Before 5.9 (get_scan_count in 5.4): global reclaim of a node whose file
            // pages plus free memory are under the high watermark goes for anon.
            let file = self.mm.file_lru();
            if file + self.mm.nr_free() <= self.mm.wmark.high
                && !self.inactive_is_low(false)
                && (sizes[0] >> sc.priority) > 0
            {
                return anon_only;
            }
            // Enough inactive file pages: leave anon alone — unless file pages refault
            // (inactive_list_is_low: refaults since the last cycle make the ratio 0).
            // "mm,vmscan: only evict file pages when we have plenty" (3.8): not in 2.6.39.
            let file_refaulting = self.vm.get(VmItem::WorkingsetActivateFile) != self.mm.refaults_seen[1];
            let file_inactive_low = file_refaulting || self.inactive_is_low(true);
            if self.machine.kernel.file_is_plenty() && !file_inactive_low && (sizes[2] >> sc.priority) > 0 {
                return file_only;
            }
            // get_scan_count in 2.6.39 weighs (prio + 1); from 3.x on, prio.
            let plus = if self.machine.kernel.file_is_plenty() { 0 } else { 1 };
            let anon_prio = swappiness + plus;
            let file_prio = 200 - swappiness + plus;
            let anon_size = sizes[0] + sizes[1];
            for (i, size) in [(0usize, anon_size), (1, file)] {
                if self.mm.recent_scanned[i] > size / 4 {
                    self.mm.recent_scanned[i] /= 2;
                    self.mm.recent_rotated[i] /= 2;
                }
            }
            let ap = anon_prio * (self.mm.recent_scanned[0] + 1) / (self.mm.recent_rotated[0] + 1);
            let fp = file_prio * (self.mm.recent_scanned[1] + 1) / (self.mm.recent_rotated[1] + 1);
            (ap, fp)
        };
        let denom = (ap + fp).max(1);
        [scan(0) * ap / denom, scan(1) * ap / denom, scan(2) * fp / denom, scan(3) * fp / denom]
    }

    /// lru_note_cost (5.8 to 6.5; 6.1 is the reference): the reclaim cost of a type is the
    /// pages it had to write out (shrink_inactive_list's nr_pageout) plus its workingset
    /// refaults (lru_note_cost_folio); both decay once they exceed a quarter of the LRU.
    pub fn lru_note_cost(&mut self, file: bool, nr_pages: u64) {
        if file { self.mm.file_cost += nr_pages } else { self.mm.anon_cost += nr_pages }
        let lrusize = self.mm.file_lru() + self.mm.anon_lru();
        if self.mm.file_cost + self.mm.anon_cost > lrusize / 4 {
            self.mm.file_cost /= 2;
            self.mm.anon_cost /= 2;
        }
    }

    /// shrink_node -> shrink_lruvec: scan the lists in SWAP_CLUSTER_MAX batches until the
    /// targets are met; when enough was reclaimed, what happens next depends on the era
    /// (`lruvec_enough`).
    pub fn shrink_node(&mut self, sc: &mut ScanControl) {
        self.prepare_scan_count(sc);
        let mut nr = self.get_scan_count(sc);
        let targets = nr;
        let mut reclaimed_here = 0;
        // shrink_lruvec (3.11+): global direct reclaim at DEF_PRIORITY keeps scanning its
        // whole target ("we are direct reclaiming implies that kswapd is not keeping up
        // and it is best to do a batch of work at once"); kswapd (and memcg reclaim) scan
        // anon and file in proportion once nr_to_reclaim is met.
        let proportional_reclaim = !sc.kswapd && sc.priority == DEF_PRIORITY;
        let mut scan_adjusted = proportional_reclaim;
        const ORDER: [Lru; 4] = [Lru::InactiveAnon, Lru::ActiveAnon, Lru::InactiveFile, Lru::ActiveFile];
        while nr[0] > 0 || nr[2] > 0 || nr[3] > 0 {
            for (i, &l) in ORDER.iter().enumerate() {
                if nr[i] == 0 {
                    continue;
                }
                let n = nr[i].min(SWAP_CLUSTER_MAX);
                nr[i] -= n;
                let r = self.shrink_list(l, n, sc);
                reclaimed_here += r;
                sc.nr_reclaimed += r;
            }
            if sc.nr_congested > 0 {
                // The reclaimer would now sleep in the block layer waiting for a request
                // slot; it does not go on to evict other pages meanwhile.
                break;
            }
            if !self.lruvec_enough(&mut nr, &targets, reclaimed_here, sc, &mut scan_adjusted) {
                continue;
            }
            break;
        }
        // shrink_slab: the shadow-node shrinker (3.15+).
        if self.machine.kernel.has_workingset() {
            self.shrink_shadow_nodes();
        }
        // Even without evicting anon, keep its active/inactive balance.
        if self.can_reclaim_anon() && self.inactive_is_low(false) {
            self.shrink_active_list(SWAP_CLUSTER_MAX, Lru::ActiveAnon, sc);
        }
        if sc.nr_dirty > 0 && sc.nr_dirty >= sc.nr_scanned / 2 {
            // Reclaim is finding dirty pages it may not write: kick the flushers
            // (wakeup_flusher_threads(WB_REASON_VMSCAN)).
            self.wakeup_flusher_threads();
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
    fn lruvec_enough(&self, nr: &mut [u64; 4], targets: &[u64; 4], reclaimed: u64, sc: &ScanControl, scan_adjusted: &mut bool) -> bool {
        let enough = reclaimed >= sc.nr_to_reclaim;
        match self.machine.kernel {
            KernelProfile::Linux2639 | KernelProfile::Linux24 => return enough && sc.priority < DEF_PRIORITY,
            _ => {}
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
        if self.machine.kernel != KernelProfile::Linux6 {
            *scan_adjusted = true;
        }
        false
    }

    /// snapshot_refaults: remember the workingset activations seen so far. Called when a
    /// reclaim cycle ends (do_try_to_free_pages, balance_pgdat): until then, refaults since
    /// the last cycle keep the file active list unprotected (inactive_list_is_low).
    pub fn snapshot_refaults(&mut self) {
        self.mm.refaults_seen = [self.vm.get(VmItem::WorkingsetActivateAnon), self.vm.get(VmItem::WorkingsetActivateFile)];
    }

    fn shrink_list(&mut self, l: Lru, n: u64, sc: &mut ScanControl) -> u64 {
        if l.is_active() {
            let may = if l.is_file() { sc.may_deactivate_file } else { sc.may_deactivate_anon };
            if may {
                self.shrink_active_list(n, l, sc);
            }
            return 0;
        }
        self.shrink_inactive_list(n, l, sc)
    }

    /// shrink_active_list: move pages from the active tail to the inactive list, except
    /// referenced executable file pages, which get another trip around the active list.
    /// PG_referenced is left as it is (only folio_referenced's young PTEs are consumed);
    /// before 5.8 every referenced page counted as rotated (recent_rotated), since 5.8 only
    /// the executable pages that stay active do.
    pub fn shrink_active_list(&mut self, n: u64, l: Lru, _sc: &mut ScanControl) {
        let file = l.is_file();
        let inactive = Lru::of(file, false);
        let count_all_referenced = !self.modern_balance();
        let mut rotated = 0;
        let mut scanned = 0;
        for _ in 0..n {
            let Some(p) = self.mm.lists.tail(&self.mm.pages, l) else { break };
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
                    self.mm.lists.move_head(&mut self.mm.pages, p, l);
                    continue;
                }
            }
            if self.machine.kernel.has_workingset() {
                // SetPageWorkingset (4.20+).
                self.mm.pages.set_workingset(p);
            }
            self.mm.lists.move_head(&mut self.mm.pages, p, inactive);
            self.vm.inc(VmItem::Pgdeactivate);
        }
        self.vm.add(VmItem::Pgrefill, scanned);
        let t = file as usize;
        self.mm.recent_scanned[t] += scanned;
        self.mm.recent_rotated[t] += rotated;
        self.reclaim_cost_scan(scanned);
    }

    /// Whether one young PTE is enough to activate a page of this mapping. Before 5.9
    /// page_check_references returned PAGEREF_ACTIVATE for any referenced swap-backed page
    /// (anon and shmem; 2.6.39: PageAnon only); since 5.9 (b518154e59aa, "protect the
    /// workingset on anonymous LRU") anon pages need a second reference like file pages.
    fn first_reference_activates(&self, m: usize) -> bool {
        let kind = self.mm.mappings[m].kind;
        match self.machine.kernel {
            KernelProfile::Linux6 => false,
            KernelProfile::Linux58 | KernelProfile::Linux5Pre59 => self.mm.mappings[m].swap_backed(),
            KernelProfile::Linux2639 | KernelProfile::Linux24 => kind == super::MappingKind::Anon,
        }
    }

    /// folio_check_references (page_check_references before 5.16).
    fn check_references(&mut self, p: Pfn, file: bool) -> Ref {
        let m = self.mm.pages.mapping(p) as usize;
        let (mapped, exec) = (self.mm.mappings[m].mapped, self.mm.mappings[m].exec);
        let young = mapped && self.mm.pages.test_clear_young(p);
        let referenced = self.mm.pages.test_clear_referenced(p);
        if young {
            if self.first_reference_activates(m) {
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
    pub fn shrink_inactive_list(&mut self, n: u64, l: Lru, sc: &mut ScanControl) -> u64 {
        let file = l.is_file();
        let active = Lru::of(file, true);
        let mut scanned = 0;
        let mut reclaimed = 0;
        let mut activated = 0;
        let mut pageout = 0;
        let mut batch_writeback = 0;
        for _ in 0..n {
            let Some(p) = self.mm.lists.tail(&self.mm.pages, l) else { break };
            scanned += 1;
            if self.mm.pages.locked(p) {
                // Being read in: not reclaimable yet.
                self.mm.lists.move_head(&mut self.mm.pages, p, l);
                continue;
            }
            let r = self.check_references(p, file);
            if r == Ref::Activate {
                self.mm.lists.move_head(&mut self.mm.pages, p, active);
                self.vm.inc(VmItem::Pgactivate);
                activated += 1;
                continue;
            }
            if r == Ref::Keep {
                self.mm.lists.move_head(&mut self.mm.pages, p, l);
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
                self.mm.lists.move_head(&mut self.mm.pages, p, active);
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
                    self.mm.lists.move_head(&mut self.mm.pages, p, active);
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
                        self.mm.lists.move_head(&mut self.mm.pages, p, l);
                    }
                    super::swap_state::SwapOut::Busy => {
                        sc.nr_congested += 1;
                        self.mm.lists.move_tail(&mut self.mm.pages, p, l);
                        break;
                    }
                    super::swap_state::SwapOut::Keep => {
                        self.mm.lists.move_head(&mut self.mm.pages, p, active);
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
        if !self.swap_pending_buf.is_empty() {
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
        self.mm.recent_scanned[t] += scanned;
        self.mm.recent_rotated[t] += activated;
        self.lru_note_cost(file, pageout);
        sc.nr_scanned += scanned;
        self.reclaim_cost_scan(scanned);
        self.reclaim_cost_free(reclaimed);
        reclaimed
    }

    fn reclaim_cost_scan(&mut self, scanned: u64) {
        self.reclaim_ns += scanned * self.machine.cpu_model.reclaim_scan_ns;
    }
    fn reclaim_cost_free(&mut self, freed: u64) {
        self.reclaim_ns += freed * (self.machine.cpu_model.page_cache_ns + self.machine.cpu_model.page_alloc_ns);
    }

    /// try_to_free_pages / do_try_to_free_pages: direct reclaim of SWAP_CLUSTER_MAX pages,
    /// raising the priority until enough is freed. The work is charged to the allocating task.
    pub fn try_to_free_pages(&mut self, tid: TaskId) -> u64 {
        self.try_to_free_pages_sc(tid).nr_reclaimed
    }

    /// try_to_free_pages, returning its scan_control (what it found on the way).
    pub fn try_to_free_pages_sc(&mut self, tid: TaskId) -> ScanControl {
        let mut sc = ScanControl { nr_to_reclaim: SWAP_CLUSTER_MAX, ..Default::default() };
        self.reclaim_ns = 0;
        for prio in (0..=DEF_PRIORITY).rev() {
            sc.priority = prio;
            self.shrink_node(&mut sc);
            if sc.nr_reclaimed >= sc.nr_to_reclaim || sc.nr_congested > 0 {
                break;
            }
        }
        self.snapshot_refaults();
        let ns = std::mem::take(&mut self.reclaim_ns);
        self.charge_sys_for(tid, ns, crate::delayacct::SysWork::Reclaim);
        self.reclaim_stats.record(false, ns);
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
                k.snapshot_refaults();
            }
            self.priority = DEF_PRIORITY;
            self.failures = 0;
            k.kswapd_waiting = true;
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
        k.reclaim_ns = 0;
        k.shrink_node(&mut sc);
        let ns = std::mem::take(&mut k.reclaim_ns).max(1000);
        k.charge_sys_for(me, ns, crate::delayacct::SysWork::Reclaim);
        k.reclaim_stats.record(true, ns);
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
            let until = if k.machine.kernel == KernelProfile::Linux6 {
                k.block.next_completion().unwrap_or(cap).min(cap)
            } else {
                cap
            };
            // Still inside balance_pgdat's psi_memstall_enter section.
            k.set_wait_reason(me, crate::delayacct::WaitReason::ReclaimWait);
            return Step::SleepUntil { t: until.max(k.now + 1), io: false };
        }
        if sc.nr_reclaimed == 0 && sc.nr_congested > 0 {
            // The swap device is saturated: wait for a request to complete.
            let until = k.block.next_completion().unwrap_or(k.now + 10 * NS_PER_MS);
            k.set_wait_reason(me, crate::delayacct::WaitReason::ReclaimWait);
            return Step::SleepUntil { t: until.max(k.now + 1), io: true };
        }
        if sc.nr_reclaimed == 0 && exhausted {
            // Nothing reclaimable now: wait for writeback or for the situation to change.
            k.snapshot_refaults();
            self.failures += 1;
            self.priority = DEF_PRIORITY;
            let until = k.block.next_completion().unwrap_or(k.now + 100 * NS_PER_MS).min(k.now + 100 * NS_PER_MS);
            return Step::SleepUntil { t: until.max(k.now + 1), io: false };
        }
        Step::Yield
    }
}
