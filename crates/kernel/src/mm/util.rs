//! The commit charge (mm/util.c __vm_enough_memory, vm.overcommit_memory).

use crate::Kernel;

impl Kernel {
    /// __vm_enough_memory: may a private writable mapping of `pages` more be committed?
    /// vm.overcommit_memory 0 (OVERCOMMIT_GUESS): refused only if larger than all RAM and
    /// swap together; 1 (OVERCOMMIT_ALWAYS): always; 2 (OVERCOMMIT_NEVER): only while
    /// Committed_AS stays within CommitLimit (RAM x overcommit_ratio / 100 + swap, as
    /// /proc/meminfo shows them).
    pub fn vm_enough_memory(&self, pages: u64) -> bool {
        match self.sysctl.overcommit_memory {
            1 => true,
            2 => {
                let mi = self.meminfo();
                mi.committed_as + pages * 4 <= mi.commit_limit
            }
            _ => {
                let (swap_total, _) = self.swap_totals();
                pages <= self.mm.managed + swap_total
            }
        }
    }
}
