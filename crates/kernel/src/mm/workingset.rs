//! Refault detection (mm/workingset.c). Evicting a page leaves a shadow entry holding the
//! eviction clock; when the page is faulted back in, the refault distance (evictions and
//! activations since) is compared with the working set the page competed against. A page
//! that would have stayed resident with that much more memory comes back active.

use super::lru::{Lruvec, LruvecId};
use super::page::{Lru, Pfn};
use crate::profile::Profile;
use super::xarray::XA_CHUNK_SHIFT;
use crate::Kernel;
use memtwin_procfs::VmItem;

/// Bits of the shadow entry holding the eviction clock; one more bit marks pages that were
/// part of the workingset (PG_workingset) when evicted.
const EVICTION_BITS: u32 = 29;
const EVICTION_MASK: u64 = (1 << EVICTION_BITS) - 1;
const WORKINGSET_BIT: u32 = 1 << EVICTION_BITS;
/// A shadow of a cgroup's page (`SHADOW_MEMCG` set) packs, as pack_shadow does, the
/// lruvec id (MEMCG_ID_BITS: MAX_LRUVECS ids), PG_workingset and the eviction clock in
/// MEMCG_EVICTION_BITS, in buckets of 2^bucket_order evictions.
const MEMCG_EVICTION_BITS: u32 = 18;
const MEMCG_ID_BITS: u32 = 10;
const MEMCG_WORKINGSET_BIT: u32 = 1 << (MEMCG_EVICTION_BITS + MEMCG_ID_BITS);
const _: () = assert!(1 << MEMCG_ID_BITS == super::lru::MAX_LRUVECS);
const _: () = assert!(MEMCG_EVICTION_BITS + MEMCG_ID_BITS + 1 == 29);

/// workingset_init: the eviction clock of a cgroup shadow counts buckets of 2^order
/// evictions so that the clock spans all of memory (fls_long(totalram_pages - 1) bits).
pub fn bucket_order(managed: u64) -> u32 {
    let max_order = 64 - managed.saturating_sub(1).leading_zeros();
    max_order.saturating_sub(MEMCG_EVICTION_BITS)
}

/// pack_shadow for a page of lruvec `id` (not the root's).
pub fn pack_memcg_shadow(id: LruvecId, age: u64, order: u32, workingset: bool) -> u32 {
    let eviction = ((age >> order) & ((1 << MEMCG_EVICTION_BITS) - 1)) as u32;
    super::SHADOW_MEMCG | if workingset { MEMCG_WORKINGSET_BIT } else { 0 } | (id as u32) << MEMCG_EVICTION_BITS | eviction
}

/// unpack_shadow: (lruvec id, eviction clock, clock mask, workingset).
pub fn unpack_shadow(shadow: u32, order: u32) -> (LruvecId, u64, u64, bool) {
    if shadow & super::SHADOW_MEMCG == 0 {
        return (0, (shadow & !WORKINGSET_BIT) as u64 & EVICTION_MASK, EVICTION_MASK, shadow & WORKINGSET_BIT != 0);
    }
    let id = ((shadow >> MEMCG_EVICTION_BITS) & ((1 << MEMCG_ID_BITS) - 1)) as LruvecId;
    let eviction = ((shadow & ((1 << MEMCG_EVICTION_BITS) - 1)) as u64) << order;
    (id, eviction, (1u64 << (MEMCG_EVICTION_BITS + order)) - 1, shadow & MEMCG_WORKINGSET_BIT != 0)
}


/// workingset_test_recent's decision: a refault at `distance` evictions/activations after
/// the eviction comes back active if the page would have stayed resident with that much
/// more memory: the distance is compared with the workingset the page competed against in
/// its lruvec. "workingset: let cache workingset challenge anon" (5.8): the anon lists count
/// too when swap is usable; before, the active file list alone.
pub fn refault_is_recent(distance: u64, lv: &Lruvec, prof: &Profile, file: bool, swap_usable: bool) -> bool {
    let workingset_size = if prof.refault_distance_includes_anon {
        // The active file list, plus inactive file for anon pages, plus the anon lists
        // when anon can be reclaimed.
        let mut ws = lv.len(Lru::ActiveFile);
        if !file {
            ws += lv.len(Lru::InactiveFile);
        }
        if swap_usable {
            ws += lv.len(Lru::ActiveAnon);
            if file {
                ws += lv.len(Lru::InactiveAnon);
            }
        }
        ws
    } else {
        lv.len(Lru::ActiveFile)
    };
    distance <= workingset_size
}

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
            let lone = space.i_pages.lone_entry(&self.mm.xa);
            let n = space.i_pages.delete_leaf(&mut self.mm.xa, leaf);
            space.i_pages.account_lone_entry(&mut self.mm.xa, lone);
            space.nrshadows -= n as u64;
            self.vm.inc(VmItem::WorkingsetNodereclaim);
        }
    }

    /// workingset_age_nonresident: advance the eviction clock of lruvec `id`.
    #[inline]
    pub fn workingset_age(&mut self, id: LruvecId, n: u64) {
        self.mm.lruvec_mut(id).nonresident_age += n;
    }

    /// workingset_activation: an activation ages the clock of the page's lruvec too (6.x;
    /// pre-5.9 kernels only counted activations into the active list, the same here).
    pub fn workingset_activation(&mut self, p: Pfn) {
        let id = self.mm.page_lruvec(p);
        self.workingset_age(id, 1);
    }

    /// workingset_eviction: the shadow entry for page `p`, evicted now from its lruvec; it
    /// records the lruvec (the memcg id of pack_shadow) unless that is the root's.
    pub fn workingset_eviction(&mut self, p: Pfn) -> u32 {
        let id = self.mm.page_lruvec(p);
        self.workingset_age(id, 1);
        let age = self.mm.lruvec(id).nonresident_age;
        let workingset = self.mm.pages.workingset(p);
        if id != 0 {
            return pack_memcg_shadow(id, age, bucket_order(self.mm.managed), workingset);
        }
        let ws = if workingset { WORKINGSET_BIT } else { 0 };
        (age & EVICTION_MASK) as u32 | ws
    }

    /// workingset_refault: returns whether the page comes back active. The refault distance
    /// is measured on the clock of the lruvec the page was evicted from and compared with
    /// that lruvec's lists (eviction_lruvec); the activation counts in the lruvec the page
    /// is charged to now. A shadow of a cgroup that is gone is no refault (6.1).
    pub fn workingset_refault(&mut self, p: Pfn, shadow: u32, file: bool) -> bool {
        let (eviction_lv, eviction, mask, was_workingset) = unpack_shadow(shadow, bucket_order(self.mm.managed));
        if !self.mm.lruvecs.get(eviction_lv as usize).is_some_and(|l| l.live) {
            return false;
        }
        // The lruvec of the charge being made (the page joins its cgroup's lists next).
        let id = self.memcg.charging_lruvec(p).unwrap_or(eviction_lv);
        let refault = self.mm.lruvec(eviction_lv).nonresident_age & mask;
        let distance = refault.wrapping_sub(eviction) & mask;
        if !file && !self.profile.anon_workingset {
            // Anon pages have no refault detection before 5.9.
            return false;
        }
        self.vm.inc(if file { VmItem::WorkingsetRefaultFile } else { VmItem::WorkingsetRefaultAnon });
        let swap_usable = self.swap_available();
        if !refault_is_recent(distance, self.mm.lruvec(eviction_lv), &self.profile, file, swap_usable) {
            return false;
        }
        self.workingset_age(id, 1);
        self.mm.lruvec_mut(id).workingset_activate[file as usize] += 1;
        // WORKINGSET_ACTIVATE only: the page joins the active list through lru_add with
        // PG_active set, which counts no PGACTIVATE (that is folio_activate's and
        // shrink_folio_list's).
        self.vm.inc(if file { VmItem::WorkingsetActivateFile } else { VmItem::WorkingsetActivateAnon });
        if was_workingset {
            self.mm.pages.set_workingset(p);
            self.vm.inc(if file { VmItem::WorkingsetRestoreFile } else { VmItem::WorkingsetRestoreAnon });
            // lru_note_cost_folio: thrashing of this type makes reclaiming it costlier.
            self.lru_note_cost(id, file, 1);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::page::Pages;
    use memtwin_machine::KernelProfile;

    #[test]
    fn refault_distance_is_compared_with_the_lists_the_page_competed_with() {
        let mut pages = Pages::new(300, 5);
        let mut lv = Lruvec::new(&mut pages, 300);
        for p in 0..100 {
            lv.add_head(&mut pages, p, Lru::ActiveFile);
        }
        for p in 100..300 {
            lv.add_head(&mut pages, p, Lru::ActiveAnon);
        }
        let p6 = Profile::of(KernelProfile::Linux6);
        let p54 = Profile::of(KernelProfile::Linux5Pre59);
        assert!(refault_is_recent(100, &lv, &p54, true, true));
        assert!(!refault_is_recent(101, &lv, &p54, true, true), "5.4: active file alone");
        assert!(refault_is_recent(300, &lv, &p6, true, true), "5.8+: anon counts when swap is usable");
        assert!(!refault_is_recent(101, &lv, &p6, true, false), "but not without swap");
    }
}
