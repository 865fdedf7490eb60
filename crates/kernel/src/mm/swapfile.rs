//! Swap areas (mm/swapfile.c): which are active, their size and use. Swapping pages out and
//! in is not modelled yet: anonymous memory stays resident (`swap_available` is false), so
//! swapoff has nothing to read back.

use crate::Kernel;
use memtwin_machine::SwapKind;

#[derive(Clone, Debug)]
pub struct SwapArea {
    pub name: String,
    pub pages: u64,
    pub used: u64,
    pub priority: i32,
    pub active: bool,
}

impl Kernel {
    pub(crate) fn boot_swap(&mut self) {
        let mut next_prio = -2;
        for s in self.machine.swaps.clone() {
            let name = match &s.kind {
                SwapKind::Partition { disk } => format!("/dev/{disk}"),
                SwapKind::File { path } => path.clone(),
                SwapKind::Zram { .. } => "/dev/zram0".to_string(),
            };
            let priority = s.priority.unwrap_or_else(|| {
                let p = next_prio;
                next_prio -= 1;
                p
            });
            // The first page of a swap area holds its header.
            self.swap_areas.push(SwapArea { name, pages: (s.size_bytes / 4096).saturating_sub(1), used: 0, priority, active: s.enabled });
        }
    }

    /// swapon -a / swapoff -a: switch every configured area on or off. Returns the number
    /// of areas changed.
    pub fn swap_all(&mut self, on: bool) -> usize {
        let mut n = 0;
        for a in &mut self.swap_areas {
            if a.active != on && (on || a.used == 0) {
                a.active = on;
                n += 1;
            }
        }
        n
    }

    /// (SwapTotal, SwapFree) in pages.
    pub fn swap_totals(&self) -> (u64, u64) {
        let act = self.swap_areas.iter().filter(|a| a.active);
        let total: u64 = act.clone().map(|a| a.pages).sum();
        let used: u64 = act.map(|a| a.used).sum();
        (total, total - used)
    }
}
