//! Split reclaim (seed 004: Fukatani et al., "Split-Reclaim Method for Reducing Page
//! De-allocation Delay on Multi-core File Server", a patch to Linux 2.6.39-rc4 that was never
//! merged). Classic direct reclaim (try_to_free_pages -> do_try_to_free_pages ->
//! shrink_zones + shrink_slab) frees page cache and slab together; split reclaim separates
//! the two triggers:
//!
//! - page reclaim: a task allocating a page with free memory at or below P_start (the
//!   conventional direct-reclaim threshold D_start, the min watermark, by default) frees page
//!   cache and anon pages only: shrink_slab is not called;
//! - slab reclaim: a task allocating a slab object once slab has reached S_start (half of
//!   memory by default) runs the shrinkers only;
//! - kswapd is unchanged (balance_pgdat shrinks the zones and calls shrink_slab).
//!
//! Settings: `vm.split_reclaim`, `vm.slab_reclaim_start_percent` / `vm.slab_reclaim_start_bytes`
//! (S_start) and `vm.page_reclaim_start_kbytes` (P_start; 0 = the min watermark).

use crate::{Kernel, ReclaimKind};
use memtwin_engine::TaskId;

impl Kernel {
    /// Split reclaim is on (`reclaim = "split"`, vm.split_reclaim = 1).
    #[inline]
    pub fn split_reclaim(&self) -> bool {
        self.sysctl.split_reclaim
    }

    /// The free-page level at or below which an allocating task reclaims itself: the min
    /// watermark (__alloc_pages_slowpath after get_page_from_freelist fails at ALLOC_WMARK_MIN),
    /// or under split reclaim P_start when one is set.
    pub fn direct_reclaim_start_pages(&self) -> u64 {
        if self.split_reclaim() && self.sysctl.page_reclaim_start_kbytes != 0 {
            self.sysctl.page_reclaim_start_kbytes / 4
        } else {
            // min_wmark_pages: the boost counts (only GFP_ATOMIC allocations ignore it).
            self.mm.wmark_pages().min
        }
    }

    /// What a direct reclaim by an allocating task is recorded as: classic direct reclaim,
    /// or split reclaim's page reclaim.
    pub fn direct_reclaim_kind(&self) -> ReclaimKind {
        if self.split_reclaim() { ReclaimKind::SplitPage } else { ReclaimKind::Direct }
    }

    /// Whether the reclaim path of a task allocating a page calls shrink_slab: classic
    /// direct reclaim and kswapd do; split reclaim's page reclaim never does.
    pub fn reclaim_calls_shrinkers(&self, kswapd: bool) -> bool {
        kswapd || !self.split_reclaim()
    }

    /// S_start in bytes.
    pub fn slab_reclaim_start_bytes(&self) -> u64 {
        self.sysctl.slab_reclaim_start(self.machine.mem_total_bytes())
    }

    /// Slab in use, bytes (SReclaimable + SUnreclaim).
    pub fn slab_bytes(&self) -> u64 {
        (self.mm.slab.pages(true) + self.mm.slab.pages(false)) * crate::mm::PAGE_SIZE
    }

    /// Split reclaim's slab-reclaim trigger, checked by a task allocating a slab object: split
    /// reclaim is on and slab has reached S_start.
    pub fn slab_reclaim_due(&self) -> bool {
        self.split_reclaim() && self.slab_bytes() >= self.slab_reclaim_start_bytes()
    }

    /// Split reclaim's slab reclaim, run by task `tid` as it allocates slab objects (the
    /// slab allocator, `Kernel::kmem_cache_alloc`): with slab at or above S_start, one shrink_slab
    /// pass over the slab shrinkers only — the dentry and inode caches, SHRINK_BATCH objects
    /// each, under their LRU locks — and no page reclaim. It is a path the task runs
    /// (vmscan.rs `RState::SplitSlabDcache`: its CPU time, lock spinning included, is the
    /// task's system time, and a dentry walk gives its lock and CPU up where 2.6.39's
    /// cond_resched_lock would) before it retries the allocation; the retry finds it done
    /// and allocates, and so do the retried operation's other slab allocations. The
    /// invocation is recorded as `split_slab`, from its start to its end.
    pub fn split_slab_reclaim(&mut self, tid: TaskId) -> Result<(), crate::task::Step> {
        if !self.slab_reclaim_due() {
            return Ok(());
        }
        if self.reclaim.in_path(tid) {
            return Err(crate::task::Step::Yield);
        }
        if self.reclaim.take_done_split_slab(tid).is_some() {
            self.tasks[tid as usize].split_slab_done_at = Some(self.now);
            return Ok(());
        }
        if self.tasks[tid as usize].split_slab_done_at == Some(self.now) {
            // The interrupted operation, retried: its other objects (a lookup's inode and
            // dentry) come without another slab reclaim.
            return Ok(());
        }
        self.start_split_slab_reclaim(tid);
        Err(crate::task::Step::Yield)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Kernel, ReclaimKind};

    fn boot(sets: &[&str]) -> Kernel {
        let mut m = memtwin_machine::preset("default").unwrap();
        memtwin_machine::apply_set(&mut m, "ram=1G").unwrap();
        for s in sets {
            memtwin_machine::apply_set(&mut m, s).unwrap();
        }
        Kernel::boot(m, 1).unwrap()
    }

    #[test]
    fn classic_direct_reclaim_starts_at_min_and_calls_the_shrinkers() {
        let k = boot(&[]);
        assert_eq!(k.direct_reclaim_start_pages(), k.mm.wmark.min);
        assert_eq!(k.direct_reclaim_kind(), ReclaimKind::Direct);
        assert!(k.reclaim_calls_shrinkers(false) && k.reclaim_calls_shrinkers(true));
        assert!(!k.slab_reclaim_due(), "no slab reclaim without split reclaim");
    }

    #[test]
    fn split_page_reclaim_skips_the_shrinkers_and_starts_at_p_start() {
        let k = boot(&["reclaim=split"]);
        assert_eq!(k.direct_reclaim_kind(), ReclaimKind::SplitPage);
        assert!(!k.reclaim_calls_shrinkers(false), "page reclaim never calls shrink_slab");
        assert!(k.reclaim_calls_shrinkers(true), "kswapd is unchanged");
        assert_eq!(k.direct_reclaim_start_pages(), k.mm.wmark.min, "P_start defaults to D_start");
        let k = boot(&["reclaim=split", "vm.page_reclaim_start_kbytes=8192"]);
        assert_eq!(k.direct_reclaim_start_pages(), 2048);
    }

    #[test]
    fn slab_reclaim_is_due_once_slab_reaches_s_start() {
        let k = boot(&["reclaim=split"]);
        let slab = k.slab_bytes();
        assert!(slab > 0 && slab < k.slab_reclaim_start_bytes(), "an idle machine is below half of memory");
        assert!(!k.slab_reclaim_due());
        let mut k = boot(&["reclaim=split"]);
        k.sysctl.slab_reclaim_start_bytes = slab;
        assert!(k.slab_reclaim_due(), "slab >= S_start");
        k.sysctl.split_reclaim = false;
        assert!(!k.slab_reclaim_due(), "classic reclaim has no slab reclaim path");
    }

    /// A stat storm over a generated tree: every file's dentry and inode become slab
    /// objects, unused once the stat returns.
    struct Storm {
        i: u64,
        n: u64,
    }
    impl crate::Program for Storm {
        fn step(&mut self, k: &mut Kernel, me: memtwin_engine::TaskId) -> crate::Step {
            while self.i < self.n {
                let path = format!("/export/d{}/f{}", self.i / 100, self.i % 100);
                match k.vfs_stat(me, &path) {
                    // One stat(2) per step, as an nfsd thread serves one RPC per step: the
                    // retried operation's exemption from another slab reclaim lasts for the
                    // instant it is retried in, which later operations of the same step
                    // would share (a program that stats many cached files in one step, as
                    // the model's du does, reclaims once per step, not per operation).
                    Ok(_) => {
                        self.i += 1;
                        return crate::Step::Cpu { user: 1_000, sys: 0 };
                    }
                    Err(crate::fs::namei::VfsErr::Wait(s)) => return s,
                    Err(crate::fs::namei::VfsErr::Errno(e)) => panic!("{path}: {e:?}"),
                }
            }
            crate::Step::Exit(0)
        }
    }

    fn storm(split: bool) -> (Kernel, u64) {
        let mut m = memtwin_machine::preset("default").unwrap();
        m.trees.push(memtwin_machine::TreeSpec { at: "/export".into(), files: 3000, files_per_dir: 100, dirs_per_dir: 30, file_size: 8192, seed: 1 });
        let mut k = Kernel::boot(m, 1).unwrap();
        k.sysctl.split_reclaim = split;
        // S_start: room for 64 more slab pages than at boot.
        let s_start = k.slab_bytes() + 64 * crate::mm::PAGE_SIZE;
        k.sysctl.slab_reclaim_start_bytes = s_start;
        let t = k.spawn("storm", "storm", Box::new(Storm { i: 0, n: 3000 }), crate::Sink::Null, crate::Sink::Null);
        let limit = k.now + 3600 * memtwin_engine::NS_PER_SEC;
        k.run_until(limit, &mut |k| k.task_exited(t));
        assert!(k.task_exited(t), "the storm finished");
        (k, s_start)
    }

    #[test]
    fn split_slab_reclaim_runs_in_the_slab_allocating_task_above_s_start() {
        let page = crate::mm::PAGE_SIZE;
        let (classic, s_start) = storm(false);
        assert_eq!(classic.reclaim.stats.latency_of(ReclaimKind::SplitSlab).count, 0);
        assert!(classic.slab_bytes() > s_start + 256 * page, "3000 files' dentries and inodes outgrow S_start");
        let (mut split, s_start) = storm(true);
        let slab = split.reclaim.stats.latency_of(ReclaimKind::SplitSlab);
        assert!(slab.count > 0, "slab reclaims once slab reaches S_start");
        // Slab reaches past S_start by the objects waiting for their RCU grace period, and
        // is back at it once they are freed.
        split.rcu_barrier();
        assert!(split.slab_bytes() <= s_start + 8 * page, "slab stays at S_start: {} > {s_start}", split.slab_bytes());
        assert!(slab.mean_ns > 0.0 && slab.max_ns >= slab.p50_ns);
        assert_eq!(split.reclaim.stats.latency_of(ReclaimKind::SplitPage).count, 0, "no page reclaim: memory is plentiful");
    }
}
