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
use memtwin_engine::Ns;

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
            self.mm.wmark.min
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
        (self.mm.kernel.slab(true) + self.mm.kernel.slab(false)) * crate::mm::PAGE_SIZE
    }

    /// Split reclaim's slab-reclaim trigger, checked by a task allocating a slab object: split
    /// reclaim is on and slab has reached S_start.
    pub fn slab_reclaim_due(&self) -> bool {
        self.split_reclaim() && self.slab_bytes() >= self.slab_reclaim_start_bytes()
    }

    /// Record one reclaim invocation that the caller timed (a slab reclaim run by the slab
    /// allocator's hook): its latency and the lock-wait part of it.
    pub fn record_reclaim(&mut self, kind: ReclaimKind, latency: Ns, lock_wait: Ns) {
        self.reclaim.stats.record(kind, latency, lock_wait);
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
}
