//! The commit charge (mm/util.c __vm_enough_memory, vm.overcommit_memory).

use crate::Kernel;

impl Kernel {
    /// __vm_enough_memory: may a private writable mapping of `pages` more be committed?
    /// vm.overcommit_memory 0 (OVERCOMMIT_GUESS): refused only if larger than all RAM and
    /// swap together; 1 (OVERCOMMIT_ALWAYS): always; 2 (OVERCOMMIT_NEVER): only while
    /// Committed_AS stays within CommitLimit (RAM x overcommit_ratio / 100 + swap, as
    /// /proc/meminfo shows them).
    /// mmap of an accountable mapping (private writable, or shared anonymous through
    /// shmem_acct_size) of `pages` by `tid`: __vm_enough_memory decides, and on success
    /// vm_acct_memory charges the whole size to vm_committed_as (Committed_AS), whether or not
    /// it is ever touched. The charge goes when the task exits (vm_unacct_memory).
    pub fn vm_account(&mut self, tid: crate::TaskId, pages: u64) -> bool {
        if !self.vm_enough_memory(pages) {
            return false;
        }
        self.tasks[tid as usize].committed += pages;
        true
    }

    /// vm_committed_as in pages: the live tasks' accountable mappings plus the pages of
    /// tmpfs files (shmem_acct_blocks charges a VM_NORESERVE tmpfs inode per page).
    pub fn committed_as(&self) -> u64 {
        self.committed_as_with(&self.mm.mapping_sums())
    }

    /// Committed_AS from the mapping sums of one walk (`Mm::mapping_sums`).
    pub(crate) fn committed_as_with(&self, sums: &super::MappingSums) -> u64 {
        let tasks: u64 = self.tasks.iter().filter(|t| t.exit_code.is_none()).map(|t| t.committed).sum();
        tasks + (self.mm.stat.shmem + sums.shmem_swapped).saturating_sub(sums.shared_anon)
    }

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
