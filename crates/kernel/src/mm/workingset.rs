//! Refault detection (mm/workingset.c). Evicting a page leaves a shadow entry holding the
//! eviction clock; when the page is faulted back in, the refault distance (evictions and
//! activations since) is compared with the working set the page competed against. A page
//! that would have stayed resident with that much more memory comes back active.

use super::page::Pfn;
use super::lru::Lists;
use super::page::Lru;
use crate::Kernel;
use memtwin_procfs::VmItem;

/// Bits of the shadow entry holding the eviction clock; one more bit marks pages that were
/// part of the workingset (PG_workingset) when evicted.
const EVICTION_BITS: u32 = 29;
const EVICTION_MASK: u64 = (1 << EVICTION_BITS) - 1;
const WORKINGSET_BIT: u32 = 1 << EVICTION_BITS;

/// Radix-tree nodes (xa_node, 64 slots) holding only shadow entries: the workingset
/// list_lru that the shadow shrinker trims (workingset_update_node, count_shadow_nodes).
#[derive(Default)]
pub struct ShadowNodes {
    /// (mapping, index >> XA_CHUNK_SHIFT) in the order they became shadow-only.
    order: std::collections::VecDeque<(u32, u64)>,
    members: std::collections::HashSet<(u32, u64)>,
}

const XA_CHUNK_SHIFT: u32 = 6;

impl ShadowNodes {
    pub fn len(&self) -> u64 {
        self.members.len() as u64
    }
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
    /// A page entered the node: it is no longer shadow-only (workingset_update_node).
    pub fn page_added(&mut self, m: u32, index: u64) {
        if !self.members.is_empty() {
            self.members.remove(&(m, index >> XA_CHUNK_SHIFT));
        }
    }
}

impl Kernel {
    /// workingset_update_node after a shadow was stored at `index` of mapping `m`: a node
    /// whose entries are all shadows goes on the shadow list.
    pub(crate) fn shadow_node_added(&mut self, m: u32, index: u64) {
        let chunk = index >> XA_CHUNK_SHIFT;
        if self.mm.shadow_nodes.members.contains(&(m, chunk)) || !self.node_shadow_only(m, chunk) {
            return;
        }
        self.mm.shadow_nodes.members.insert((m, chunk));
        self.mm.shadow_nodes.order.push_back((m, chunk));
    }

    fn node_shadow_only(&self, m: u32, chunk: u64) -> bool {
        let s = &self.mm.mappings[m as usize];
        if !s.live || s.swap_backed() {
            return false;
        }
        let start = (chunk << XA_CHUNK_SHIFT) as usize;
        let Some(slots) = s.slots.get(start..(start + (1 << XA_CHUNK_SHIFT)).min(s.slots.len())) else { return false };
        let mut shadows = 0;
        for &e in slots {
            match super::decode_slot(e) {
                super::Slot::Shadow(_) => shadows += 1,
                super::Slot::Empty => {}
                _ => return false,
            }
        }
        shadows > 0
    }

    /// count_shadow_nodes + shadow_lru_isolate (the shadow-node shrinker, run with the
    /// slab shrinkers from shrink_node): keep at most node_present_pages >> (XA_CHUNK_SHIFT
    /// - 3) shadow-only nodes (~1.8% of memory in nodes); the oldest go first, and their
    /// shadows with them (WORKINGSET_NODERECLAIM).
    pub fn shrink_shadow_nodes(&mut self) {
        let max_nodes = self.mm.managed >> (XA_CHUNK_SHIFT - 3);
        while self.mm.shadow_nodes.len() > max_nodes {
            let Some((m, chunk)) = self.mm.shadow_nodes.order.pop_front() else { break };
            if !self.mm.shadow_nodes.members.remove(&(m, chunk)) || !self.node_shadow_only(m, chunk) {
                continue;
            }
            let start = chunk << XA_CHUNK_SHIFT;
            let s = &mut self.mm.mappings[m as usize];
            for index in start..start + (1 << XA_CHUNK_SHIFT) {
                if let super::Slot::Shadow(_) = s.slot(index) {
                    s.set_slot(index, 0);
                    s.nrshadows -= 1;
                }
            }
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
