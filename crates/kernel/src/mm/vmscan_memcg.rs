//! Cgroup reclaim (mm/vmscan.c: try_to_free_mem_cgroup_pages): reclaim that targets one
//! cgroup's subtree. It is the reclaim path of direct reclaim (`ReclaimPath`, mm/vmscan.rs)
//! with `ScanControl::target_mem_cgroup` set: do_try_to_free_pages raises the priority,
//! shrink_node_memcgs walks the subtree in mem_cgroup_iter order with
//! mem_cgroup_calculate_protection (memory.min/low, scaled in proportion to usage), and
//! get_scan_count splits each cgroup's lruvec with the shared balance rules (the cgroup's
//! swappiness and swap room, the target lruvec's reclaim costs). Every per-page rule
//! (references, dirty and writeback pages, swap-out, shadow entries) is global reclaim's,
//! and other cgroups' lists are never touched.
//!
//! The charging task runs the path in simulated time (its CPU bursts, the lruvec's
//! lru_lock — per cgroup lruvec on 6.x, the node's before 5.11, 2.6.39's zone->lru_lock
//! shared with global reclaim — and too_many_isolated on v2), and its charge is retried
//! when the path is done (`Kernel::try_charge`). Writes to cgroup files that reclaim run
//! the same path as rounds of the writer's loop (`Kernel::cgroup_write_timed`), or with
//! no time passing (`Kernel::cgroup_write`). On 2.6.39 each round reclaims one victim
//! (`mem_cgroup_select_victim`).

use super::memcontrol::MemcgId;
use super::vmscan::{ReclaimPath, ScanControl};
use super::SWAP_CLUSTER_MAX;
use crate::Kernel;
use memtwin_engine::TaskId;

impl Kernel {
    /// try_to_free_mem_cgroup_pages' scan_control: at least SWAP_CLUSTER_MAX pages from the
    /// subtree of `target`; `may_swap` (MEMCG_RECLAIM_MAY_SWAP) lets it swap anon pages.
    /// On 2.6.39 the reclaim is of one victim of the subtree, chosen round-robin
    /// (mem_cgroup_hierarchical_reclaim), and of its own pages only.
    fn memcg_reclaim_sc(&mut self, target: MemcgId, nr_pages: u64, may_swap: bool) -> ScanControl {
        let (victim, target_only) = if self.profile.memcg_reclaim_one_victim {
            (self.mem_cgroup_select_victim(target), true)
        } else {
            (target, false)
        };
        ScanControl {
            nr_to_reclaim: nr_pages.max(SWAP_CLUSTER_MAX),
            target_mem_cgroup: Some(self.memcg.cgs[victim as usize].lruvec),
            no_swap: !may_swap,
            target_only,
            ..Default::default()
        }
    }

    /// mem_cgroup_select_victim (2.6.39): the cgroup of `root`'s subtree (root included)
    /// with the next id after root's last_scanned_child, wrapping to the lowest
    /// (css_get_next); mem_cgroup_hierarchical_reclaim passes over cgroups with no pages of
    /// their own (mem_cgroup_local_usage) and, when a whole round found none, takes root.
    pub fn mem_cgroup_select_victim(&mut self, root: MemcgId) -> MemcgId {
        let mut ids = self.memcg.subtree(root);
        ids.sort_unstable();
        let last = self.memcg.cgs[root as usize].last_scanned_child;
        let start = ids.iter().position(|&i| i > last).unwrap_or(0);
        for k in 0..ids.len() {
            let id = ids[(start + k) % ids.len()];
            let lv = self.memcg.cgs[id as usize].lruvec;
            if self.mm.lruvec(lv).nr_pages() > 0 {
                self.memcg.cgs[root as usize].last_scanned_child = id;
                return id;
            }
        }
        root
    }

    /// try_to_free_mem_cgroup_pages in simulated time: `tid` runs the reclaim path before
    /// its program is called again; the caller collects it with
    /// `ReclaimState::take_done_memcg`.
    pub fn start_memcg_reclaim(&mut self, tid: TaskId, target: MemcgId, nr_pages: u64, may_swap: bool) {
        let sc = self.memcg_reclaim_sc(target, nr_pages, may_swap);
        self.reclaim.set_path(tid, ReclaimPath::new(sc, true, true, self.now));
    }

    /// try_to_free_mem_cgroup_pages with no time passing (writes to cgroup files): the same
    /// path, its CPU work (scanning, freeing what was reclaimed) charged to `tid`.
    pub fn try_to_free_mem_cgroup_pages(&mut self, target: MemcgId, nr_pages: u64, tid: Option<TaskId>, may_swap: bool) -> ScanControl {
        let sc = self.memcg_reclaim_sc(target, nr_pages, may_swap);
        let mut path = ReclaimPath::new(sc, true, false, self.now);
        self.reclaim_path_untimed(&mut path);
        let sc = path.sc;
        let cm = &self.machine.cpu_model;
        let ns = sc.nr_scanned * cm.reclaim_scan_ns + sc.nr_reclaimed * (cm.page_cache_ns + cm.page_alloc_ns);
        if let Some(t) = tid {
            self.charge_sys_for(t, ns, crate::delayacct::SysWork::Reclaim);
            self.reclaim.stats.record_memcg(ns, 0);
        }
        sc
    }
}
