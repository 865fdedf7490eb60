//! Cgroup reclaim (mm/vmscan.c: try_to_free_mem_cgroup_pages, shrink_node_memcgs and the
//! memcg parts of get_scan_count): reclaim that targets one cgroup's subtree, walking its
//! cgroups in mem_cgroup_iter order, skipping those protected by memory.min and memory.low
//! and scaling the scan of the partly protected ones (mem_cgroup_protection).
//!
//! Each cgroup has its own lruvec (mem_cgroup_lruvec): cgroup reclaim scans the lruvecs of
//! the target's subtree only, with the same shrink_inactive_list / shrink_active_list that
//! global reclaim runs, so every per-page rule (references, dirty and writeback pages,
//! swap-out, shadow entries) is the one global reclaim applies, and other cgroups' lists
//! are never touched.

use super::memcontrol::{MemcgId, ROOT_MEMCG};
use super::page::Lru;
use super::vmscan::ScanControl;
use super::{DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::Kernel;
use memtwin_engine::TaskId;

impl Kernel {
    /// try_to_free_mem_cgroup_pages: reclaim at least max(nr_pages, SWAP_CLUSTER_MAX) from
    /// the subtree of `target`, raising the priority as do_try_to_free_pages does; when
    /// every cgroup with pages was skipped for memory.low, retry with low reclaim
    /// (memcg_low_reclaim). The CPU work is charged to `tid`.
    pub fn try_to_free_mem_cgroup_pages(&mut self, target: MemcgId, nr_pages: u64, tid: Option<TaskId>, may_swap: bool) -> ScanControl {
        // sc.target_mem_cgroup: limit reclaim (cgroup_reclaim(sc)), which the global
        // pgscan/pgsteal_kswapd/direct (and 6.x's pgrefill) do not count.
        let target_lv = self.memcg.cgs[target as usize].lruvec;
        let mut sc = ScanControl { nr_to_reclaim: nr_pages.max(SWAP_CLUSTER_MAX), target_mem_cgroup: Some(target_lv), ..Default::default() };
        let mut low_reclaim = false;
        loop {
            let mut low_skipped = false;
            for prio in (0..=DEF_PRIORITY).rev() {
                sc.priority = prio;
                self.shrink_node_memcgs(target, &mut sc, low_reclaim, &mut low_skipped, may_swap);
                if sc.nr_reclaimed >= sc.nr_to_reclaim || sc.nr_congested > 0 {
                    break;
                }
            }
            if sc.nr_reclaimed > 0 || !low_skipped || low_reclaim {
                break;
            }
            // "Untapped cgroup reserves? Don't OOM, retry."
            low_reclaim = true;
        }
        for id in self.memcg.subtree(target) {
            let f = self.memcg.cgs[id as usize].vm.workingset_activate_file;
            self.memcg.cgs[id as usize].refaults_seen = f;
        }
        // The CPU work of the pass (the untimed shrink functions leave it to the caller):
        // scanning, and freeing what was reclaimed.
        let cm = &self.machine.cpu_model;
        let ns = sc.nr_scanned * cm.reclaim_scan_ns + sc.nr_reclaimed * (cm.page_cache_ns + cm.page_alloc_ns);
        if let Some(t) = tid {
            self.charge_sys_for(t, ns, crate::delayacct::SysWork::Reclaim);
            self.reclaim.stats.record(crate::ReclaimKind::Direct, ns, 0);
        }
        sc
    }

    /// shrink_node_memcgs for cgroup reclaim: each cgroup of the subtree, protection first.
    fn shrink_node_memcgs(&mut self, target: MemcgId, sc: &mut ScanControl, low_reclaim: bool, low_skipped: &mut bool, may_swap: bool) {
        self.memcg_calculate_protection(target);
        for id in self.memcg.subtree(target) {
            if self.memcg_below_min(id) {
                // Hard protection: never reclaimed.
                continue;
            }
            if self.memcg_below_low(id) {
                // Soft protection: only when nothing else is reclaimable.
                if !low_reclaim {
                    *low_skipped = true;
                    continue;
                }
                self.memcg.event(id, super::memcontrol::MemcgEvent::Low);
            }
            self.shrink_memcg_lruvec(id, sc, low_reclaim, may_swap);
            if sc.nr_reclaimed >= sc.nr_to_reclaim || sc.nr_congested > 0 {
                break;
            }
        }
    }

    /// The scan targets of one cgroup's pages (get_scan_count for its lruvec): sizes
    /// reduced by its protection (apply_proportional_protection), shifted by priority;
    /// anon only with swap space, swap room in the cgroup and swappiness > 0; file only
    /// while file pages are plentiful and not refaulting (cache_trim_mode); otherwise the
    /// SCAN_FRACT split by swappiness. Returns (anon, file) pages to scan.
    fn memcg_scan_count(&self, id: MemcgId, sc: &ScanControl, low_reclaim: bool, may_swap: bool) -> (u64, u64) {
        let c = &self.memcg.cgs[id as usize];
        // lruvec_lru_size of the cgroup's lruvec.
        let lv = self.mm.lruvec(c.lruvec);
        let (file_size, anon_size) = (lv.file_lru(), lv.anon_lru());
        let protection = self.memcg_protection(id, low_reclaim);
        let scale = |size: u64| -> u64 {
            let s = if protection > 0 {
                let cgroup_size = c.memory.usage.max(protection);
                let s = size - (size as u128 * protection as u128 / (cgroup_size as u128 + 1)) as u64;
                s.max(SWAP_CLUSTER_MAX.min(size))
            } else {
                size
            };
            s >> sc.priority
        };
        let (anon, file) = (scale(anon_size), scale(file_size));
        let swappiness = c.swappiness.unwrap_or(self.sysctl.swappiness) as u64;
        let swap_room = self.memcg.ancestors(id).iter().all(|&i| {
            let a = &self.memcg.cgs[i as usize];
            i == ROOT_MEMCG || a.swap.usage < a.swap.max
        });
        if !may_swap || !self.swap_available() || !swap_room || swappiness == 0 {
            return (0, file);
        }
        if sc.priority == 0 {
            return (anon, file);
        }
        let refaulting = c.vm.workingset_activate_file != c.refaults_seen;
        if file > 0 && !refaulting && self.machine.kernel.cost_balance() {
            return (0, file);
        }
        let ap = swappiness;
        let fp = 200 - swappiness;
        (anon * ap / (ap + fp), file * fp / (ap + fp))
    }

    /// shrink_lruvec for the pages of cgroup `id` (its own, not its children's).
    fn shrink_memcg_lruvec(&mut self, id: MemcgId, sc: &mut ScanControl, low_reclaim: bool, may_swap: bool) {
        let (mut nr_anon, mut nr_file) = self.memcg_scan_count(id, sc, low_reclaim, may_swap);
        let mut reclaimed_here = 0;
        while nr_anon > 0 || nr_file > 0 {
            for (file, nr) in [(false, &mut nr_anon), (true, &mut nr_file)] {
                if *nr == 0 {
                    continue;
                }
                let n = (*nr).min(SWAP_CLUSTER_MAX);
                *nr -= n;
                // (shrink_inactive_list has added what it reclaimed to sc.)
                reclaimed_here += self.memcg_shrink_list(id, file, n, sc);
            }
            if sc.nr_congested > 0 || reclaimed_here >= sc.nr_to_reclaim {
                break;
            }
        }
    }

    /// Age and evict up to `n` pages of cgroup `id` of one type from its own lruvec: when
    /// its inactive list is short of `n`, its active pages are deactivated first
    /// (inactive_is_low for its lruvec).
    fn memcg_shrink_list(&mut self, id: MemcgId, file: bool, n: u64, sc: &mut ScanControl) -> u64 {
        let lv = self.memcg.cgs[id as usize].lruvec;
        let inactive = Lru::of(file, false);
        let active = Lru::of(file, true);
        let got = self.mm.lruvec(lv).len(inactive).min(n);
        if got < n {
            let deact = self.mm.lruvec(lv).len(active).min(n - got);
            if deact > 0 {
                self.shrink_active_list(lv, deact, active, sc);
            }
        }
        let got = self.mm.lruvec(lv).len(inactive).min(n);
        if got == 0 {
            return 0;
        }
        self.shrink_inactive_list(lv, got, inactive, sc)
    }
}
