//! What fork and exec give a new program before its first instruction (kernel/fork.c,
//! fs/exec.c): a kernel stack, and the process image of a small dynamically linked
//! program — its stack, data and heap pages, the page tables that map its text, libraries
//! and stack, and its virtual size.
//!
//! The image is that of Debian 12's coreutils `sleep` (glibc 2.36) as /proc/PID/status
//! shows it once running, measured on Linux 6.18: VmSize 2920 kB, RssAnon 108 kB, VmPTE
//! 44 kB (`cat` and `dd` have the same, plus their buffers, which they fault in
//! themselves). Other userlands' programs are given the same image (not measured). Its
//! file pages (RssFile, 1.6 MB of the binary and shared libraries, mapped by every process)
//! are not counted in the task's RSS: the model has no file of the binary and libraries
//! for the image to map (the idle system's page cache stands for them).

use crate::mm::memcontrol::ROOT_MEMCG;
use crate::mm::KernelOwner;
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::TaskId;
use memtwin_procfs::VmItem;

/// Anonymous pages of the image (RssAnon 108 kB): its stack, the writable data of the
/// binary and of the libraries (copied on write), the heap malloc has touched.
pub const IMAGE_ANON_PAGES: u64 = 27;
/// Page-table pages of the image (VmPTE 44 kB): the tables of the text, libraries, heap
/// and stack regions, which lie far apart in the address space.
pub const IMAGE_PGTABLES: u64 = 11;
/// Virtual size of the image (VmSize).
pub const IMAGE_VM_KB: u64 = 2920;
/// Pages of the image's private writable mappings charged to vm_committed_as
/// (Committed_AS): its data and heap (VmData 224 kB) and stack (VmStk 132 kB).
pub const IMAGE_COMMIT_PAGES: u64 = (224 + 132) / 4;
/// Of the image's anonymous pages, those a running program writes at every return to user
/// mode: the top of its stack and the page of libc's data it writes at each call (errno,
/// stdio's state). The rest were written once at start (the loader's relocations, locale
/// data, the first heap) and are idle after, so reclaim may swap them out under a running
/// program as it does under a real one.
pub const IMAGE_HOT_PAGES: [u64; 2] = [IMAGE_VPAGE, IMAGE_VPAGE + IMAGE_ANON_PAGES - 1];
/// Where the image's anonymous pages lie in the task's address space as the model indexes
/// it: a region with tables of its own (PUD, PMD, PTE), below 1 TiB, away from the
/// program's own mappings, which start at 0.
pub const IMAGE_VPAGE: u64 = (1 << 28) - 64;

/// bash runs these in its own process: no fork, no exec, no memory of their own.
pub fn is_shell_builtin(comm: &str) -> bool {
    matches!(comm, "echo" | "printf" | "pwd" | "type" | "read" | "test" | "[" | "kill" | "true" | "false")
}

impl Kernel {
    /// Before a user program's first step: fork's kernel stack (dup_task_struct ->
    /// alloc_thread_stack_node) and exec's image (the first faults of its stack, data and
    /// heap; its page tables). Each allocation may wait for reclaim as any other: `Err` is
    /// the wait, and the next call goes on from what was done. Kernel threads spawned
    /// after boot and the shell's builtins get neither (the boot's kernel stacks stand for
    /// the kernel threads'). `Ok(true)`: the image was made now (its work is charged to
    /// the task, to run before its first step).
    pub(crate) fn exec_image(&mut self, tid: TaskId) -> Result<bool, Step> {
        let t = &self.tasks[tid as usize];
        if t.image_done {
            return Ok(false);
        }
        if t.kthread || is_shell_builtin(&t.comm) {
            self.tasks[tid as usize].image_done = true;
            return Ok(false);
        }
        let have = self.tasks[tid as usize].kstack.len() as u64;
        if have < self.profile.thread_size_pages {
            self.alloc_task_kernel_pages(tid, self.profile.thread_size_pages - have, KernelOwner::KernelStack)?;
        }
        if let Err((_, step)) = self.fault_anon_pages(tid, IMAGE_VPAGE, IMAGE_ANON_PAGES) {
            return Err(step);
        }
        let have = self.tasks[tid as usize].pgtables.nr_pages();
        if have < IMAGE_PGTABLES {
            self.alloc_task_kernel_pages(tid, IMAGE_PGTABLES - have, KernelOwner::PageTables)?;
        }
        let t = &mut self.tasks[tid as usize];
        t.vm_kb += IMAGE_VM_KB;
        t.committed += IMAGE_COMMIT_PAGES;
        t.image_done = true;
        t.image = true;
        Ok(true)
    }

    /// A program's step begins with a return to user mode: the hot pages of its image are
    /// written (their PTEs young and dirty for reclaim's rmap walk), and one reclaim swapped
    /// out is faulted back in first (do_swap_page: the program waits for the read). `Err`
    /// is that wait.
    pub(crate) fn touch_image(&mut self, tid: TaskId) -> Result<(), Step> {
        let t = &self.tasks[tid as usize];
        if !t.image || t.killed {
            return Ok(());
        }
        let m = self.anon_mapping(tid);
        for idx in IMAGE_HOT_PAGES {
            self.touch(tid, m, idx, true)?;
        }
        Ok(())
    }

    /// execve by a running program (cgexec, systemd-run after moving into the cgroup): its
    /// address space goes (exec_mmap releases the old mm: its anonymous memory and page
    /// tables) and the new program's image is made before its next step, charged where
    /// the task is then. The kernel stack stays (it is the task's, not the program's).
    pub fn exec_replace_image(&mut self, tid: TaskId) {
        if !self.tasks[tid as usize].image_done || self.tasks[tid as usize].kthread {
            return;
        }
        // exec_mmap -> mmput -> exit_mmap: lru_add_drain() first, as at exit.
        let prev = self.current.take();
        self.lru_add_drain_cpu(self.sched.task_cpu(tid) as usize);
        self.current = prev;
        self.release_anon_mapping(tid);
        self.free_pgtables(tid);
        let t = &mut self.tasks[tid as usize];
        (t.rss_anon, t.vm_kb) = (0, 0);
        t.committed = t.committed.saturating_sub(IMAGE_COMMIT_PAGES);
        (t.image_done, t.image) = (false, false);
    }

    /// `n` kernel pages of `owner` (KernelStack or PageTables) for task `tid`, charged to
    /// its cgroup where the era accounts them (__GFP_ACCOUNT: 4.6+ page tables, 4.9+
    /// stacks; the 5.x and 6.x profiles) before they are taken, as pte_alloc's are.
    fn alloc_task_kernel_pages(&mut self, tid: TaskId, n: u64, owner: KernelOwner) -> Result<(), Step> {
        let memcg = if self.profile.pgtables_accounted { self.task_memcg(tid) } else { ROOT_MEMCG };
        if memcg != ROOT_MEMCG {
            self.memcg_charge_kernel_pages(tid, memcg, n, owner)?;
        }
        if let Err(step) = self.alloc_pages_gate(tid, n) {
            self.memcg_uncharge_kernel_pages(memcg, n, owner);
            return Err(step);
        }
        for i in 0..n {
            let Some(p) = self.alloc_kernel_page(owner) else {
                self.memcg_uncharge_kernel_pages(memcg, n - i, owner);
                return Err(Step::Yield);
            };
            self.vm.inc(VmItem::PgallocNormal);
            let t = &mut self.tasks[tid as usize];
            match owner {
                KernelOwner::KernelStack => t.kstack.push((p, memcg)),
                _ => t.pgtables.add_other(p, memcg),
            }
        }
        Ok(())
    }

    /// The task's kernel stack goes when it has exited (put_task_stack ->
    /// release_task_stack after its last switch away).
    pub(crate) fn free_kernel_stack(&mut self, tid: TaskId) {
        for (p, memcg) in std::mem::take(&mut self.tasks[tid as usize].kstack) {
            self.free_kernel_page(p);
            self.memcg_uncharge_kernel_pages(memcg, 1, KernelOwner::KernelStack);
            self.vm.inc(VmItem::Pgfree);
        }
    }
}
