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

impl Kernel {
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
