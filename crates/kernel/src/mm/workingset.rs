//! Refault detection (mm/workingset.c). Evicting a page leaves a shadow entry holding the
//! eviction clock; when the page is faulted back in, the refault distance (evictions and
//! activations since) is compared with the working set the page competed against. A page
//! that would have stayed resident with that much more memory comes back active.

use super::lru::Lists;
use super::page::{Lru, Pfn};
use super::xarray::XA_CHUNK_SHIFT;
use crate::Kernel;
use memtwin_procfs::VmItem;

/// Bits of the shadow entry holding the eviction clock; one more bit marks pages that were
/// part of the workingset (PG_workingset) when evicted.
const EVICTION_BITS: u32 = 29;
const EVICTION_MASK: u64 = (1 << EVICTION_BITS) - 1;
const WORKINGSET_BIT: u32 = 1 << EVICTION_BITS;


impl Kernel {
    /// count_shadow_nodes + shadow_lru_isolate (the shadow-node shrinker, run with the slab
    /// shrinkers from shrink_node). The shadow list holds the page-cache tree leaves whose
    /// entries are all shadows (workingset_update_node keeps it as the trees change, see
    /// `mm::xarray`); the shrinker keeps at most node_present_pages >> (XA_CHUNK_SHIFT - 3)
    /// of them — a worst-case density of one shadow in 8 slots, about 1.8% of memory in
    /// nodes — and frees the oldest first, their shadows with them (xa_delete_node,
    /// WORKINGSET_NODERECLAIM).
    pub fn shrink_shadow_nodes(&mut self) {
        let max_nodes = self.mm.managed >> (XA_CHUNK_SHIFT - 3);
        while self.mm.xa.shadow_nodes() > max_nodes {
            let Some(leaf) = self.mm.xa.oldest_shadow_node() else { break };
            let m = self.mm.xa.node(leaf).owner();
            let space = &mut self.mm.mappings[m as usize];
            let n = space.i_pages.delete_leaf(&mut self.mm.xa, leaf);
            space.nrshadows -= n as u64;
            self.vm.inc(VmItem::WorkingsetNodereclaim);
        }
    }

    /// workingset_age_nonresident: advance the eviction clock.
    #[inline]
    pub fn workingset_age(&mut self, n: u64) {
        self.mm.nonresident_age += n;
    }

    /// workingset_activation: an activation ages the clock too (6.x; pre-5.9 kernels only
    /// counted activations into the active list, which is the same here).
    pub fn workingset_activation(&mut self) {
        self.workingset_age(1);
    }

    /// workingset_eviction: the shadow entry for page `p`, evicted now.
    pub fn workingset_eviction(&mut self, p: Pfn) -> u32 {
        self.workingset_age(1);
        let ws = if self.mm.pages.workingset(p) { WORKINGSET_BIT } else { 0 };
        (self.mm.nonresident_age & EVICTION_MASK) as u32 | ws
    }

    /// workingset_refault: returns whether the page comes back active.
    pub fn workingset_refault(&mut self, p: Pfn, shadow: u32, file: bool) -> bool {
        let eviction = (shadow & !WORKINGSET_BIT) as u64;
        let was_workingset = shadow & WORKINGSET_BIT != 0;
        let refault = self.mm.nonresident_age & EVICTION_MASK;
        let distance = refault.wrapping_sub(eviction) & EVICTION_MASK;
        if !file && !self.machine.kernel.anon_workingset() {
            // Anon pages have no refault detection before 5.9.
            return false;
        }
        // "workingset: let cache workingset challenge anon" (5.8): the distance is compared
        // with the anon lists too when swap is available; before, with active file alone.
        let modern = self.machine.kernel.cost_balance();
        self.vm.inc(if file { VmItem::WorkingsetRefaultFile } else { VmItem::WorkingsetRefaultAnon });
        let l: &Lists = &self.mm.lists;
        let workingset_size = if modern {
            // The working set the page competed with: the active file list, plus inactive
            // file for anon pages, plus the anon lists when anon can be reclaimed.
            let mut ws = l.len(Lru::ActiveFile);
            if !file {
                ws += l.len(Lru::InactiveFile);
            }
            if self.swap_available() {
                ws += l.len(Lru::ActiveAnon);
                if file {
                    ws += l.len(Lru::InactiveAnon);
                }
            }
            ws
        } else {
            l.len(Lru::ActiveFile)
        };
        if distance > workingset_size {
            return false;
        }
        self.workingset_age(1);
        self.vm.inc(if file { VmItem::WorkingsetActivateFile } else { VmItem::WorkingsetActivateAnon });
        self.vm.inc(VmItem::Pgactivate);
        if was_workingset {
            self.mm.pages.set_workingset(p);
            self.vm.inc(if file { VmItem::WorkingsetRestoreFile } else { VmItem::WorkingsetRestoreAnon });
            // lru_note_cost_folio: thrashing of this type makes reclaiming it costlier.
            self.lru_note_cost(file, 1);
        }
        true
    }
}
