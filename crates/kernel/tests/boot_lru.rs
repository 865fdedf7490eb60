//! Where the idle system's anonymous pages lie at boot, per era: where their faults put
//! them, since no reclaim has run (do_anonymous_page's LRU insertion; only reclaim's
//! second reference or a workingset refault activates an anonymous page).

use memtwin_kernel::mm::page::Lru;
use memtwin_kernel::mm::vmscan::ScanControl;
use memtwin_kernel::Kernel;
use memtwin_procfs::VmItem;

fn boot(kernel: &str) -> Kernel {
    let mut m = memtwin_machine::preset("seed-000").expect("preset");
    memtwin_machine::apply_set(&mut m, &format!("kernel={kernel}")).unwrap();
    memtwin_machine::apply_set(&mut m, "boot_anon=64M").unwrap();
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

const BOOT_ANON_PAGES: u64 = 64 * 256;

#[test]
fn idle_anon_starts_inactive_since_5_9_and_active_before() {
    // 6.x: lru_cache_add_inactive_or_unevictable (5.9+, b518154e59aa).
    let k = boot("linux-6.x");
    assert!(k.mm.lru_len(Lru::InactiveAnon) >= BOOT_ANON_PAGES, "6.x: inactive anon {}", k.mm.lru_len(Lru::InactiveAnon));
    assert!(k.mm.lru_len(Lru::ActiveAnon) < BOOT_ANON_PAGES / 64, "6.x: active anon {}", k.mm.lru_len(Lru::ActiveAnon));
    // before 5.9: lru_cache_add_active_or_unevictable (2.6.39: lru_cache_add_lru, active).
    for kernel in ["linux-5.8", "linux-5.4", "linux-2.6.39"] {
        let k = boot(kernel);
        assert!(k.mm.lru_len(Lru::ActiveAnon) >= BOOT_ANON_PAGES, "{kernel}: active anon {}", k.mm.lru_len(Lru::ActiveAnon));
        assert!(k.mm.lru_len(Lru::InactiveAnon) < BOOT_ANON_PAGES / 64, "{kernel}: inactive anon {}", k.mm.lru_len(Lru::InactiveAnon));
    }
}

#[test]
fn idle_anon_is_reclaimable_without_deactivation_since_5_9() {
    // shrink_inactive_list over the inactive anon tail: on 6.x the idle system's pages are
    // there to be scanned (and written to swap) at once; before 5.9 the list is empty until
    // shrink_active_list has moved some down.
    for (kernel, scannable) in [("linux-6.x", true), ("linux-5.8", false)] {
        let mut k = boot(kernel);
        let before = k.vm.get(VmItem::PgscanAnon);
        let mut sc = ScanControl { nr_to_reclaim: 32, ..Default::default() };
        k.shrink_inactive_list(0, 32, Lru::InactiveAnon, &mut sc);
        let scanned = k.vm.get(VmItem::PgscanAnon) - before;
        assert_eq!(scanned > 0, scannable, "{kernel}: scanned {scanned}");
    }
}
