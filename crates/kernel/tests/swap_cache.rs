//! Swap slots kept by the swap cache, per era: what do_swap_page, do_wp_page,
//! shrink_folio_list and the per-CPU slot caches (mm/swap_slots.c) do with a slot.

use memtwin_kernel::mm::page::Lru;
use memtwin_kernel::mm::vmscan::ScanControl;
use memtwin_kernel::mm::Slot;
use memtwin_kernel::{Kernel, Program, Step, TaskId, NS_PER_SEC};
use memtwin_procfs::VmItem;

fn boot(profile: &str, sets: &[&str]) -> Kernel {
    let mut m = memtwin_machine::preset("seed-000").expect("preset");
    memtwin_machine::apply_set(&mut m, &format!("kernel={profile}")).unwrap();
    for s in sets {
        memtwin_machine::apply_set(&mut m, s).unwrap();
    }
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

struct Script<F: FnMut(&mut Kernel, TaskId) -> Option<Step>>(F);
impl<F: FnMut(&mut Kernel, TaskId) -> Option<Step>> Program for Script<F> {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        (self.0)(k, me).unwrap_or(Step::Exit(0))
    }
}

fn run<F: FnMut(&mut Kernel, TaskId) -> Option<Step> + 'static>(k: &mut Kernel, f: F) {
    let t = k.spawn("test", "test", Box::new(Script(f)), memtwin_kernel::Sink::Null, memtwin_kernel::Sink::Null);
    let limit = k.now + 600 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.task_exited(t));
    assert!(k.task_exited(t), "task did not finish");
}

const N: u64 = 64;
/// The page the test faults back in, and the one swap readahead brings in with it: the
/// fault on page 1 follows the VMA's initial readahead address (0), so the window opens to
/// two pages (swap_ra_info: 1 and 2); the cluster readahead of older eras reads page 2 too.
const F: u64 = 1;
const R: u64 = 2;

/// Reclaim the test's anonymous pages until all `N` are written to swap (phase 1) or,
/// once written, until all have left memory (phase 2).
fn reclaim_until(k: &mut Kernel, m: u32, done: impl Fn(&Kernel) -> bool) {
    for _ in 0..8 {
        if done(k) {
            return;
        }
        let mut sc = ScanControl { nr_to_reclaim: N, ..Default::default() };
        let active = k.mm.lru_len(Lru::ActiveAnon);
        k.shrink_active_list(0, active, Lru::ActiveAnon, &mut sc);
        let inactive = k.mm.lru_len(Lru::InactiveAnon);
        k.shrink_inactive_list(0, inactive, Lru::InactiveAnon, &mut sc);
    }
    assert!(done(k), "reclaim did not get there (mapping {m})");
}

/// The test's mapping is the only anonymous memory reclaim may take: the idle system's
/// pages are left out by making the machine's boot anon tiny.
const SETS: &[&str] = &["boot_anon=0"];

/// Fault in N anonymous pages, swap them all out and let the writes complete; then fault
/// page F back in (a read) and hand the kernel and mapping to `check`. Returns the kernel
/// once the task has exited.
fn swapped_in(profile: &str, sets: &[&str], check: impl FnMut(&mut Kernel, TaskId, u32) + 'static) -> Kernel {
    let mut k = boot(profile, sets);
    let mut phase = 0;
    let mut m = 0;
    let mut check = Some(check);
    run(&mut k, move |k, me| {
        phase += 1;
        match phase {
            1 => {
                m = k.anon_mapping(me);
                for i in 0..N {
                    k.touch(me, m, i, true).expect("free memory");
                }
                reclaim_until(k, m, |k| k.vm.get(VmItem::Pswpout) >= N);
                Some(Step::SleepUntil { t: k.now + NS_PER_SEC, io: false })
            }
            2 => {
                assert_eq!(k.mm.stat.writeback, 0, "swap writes completed");
                reclaim_until(k, m, |k| (0..N).all(|i| matches!(k.mm.slot(m, i), Slot::Swap(_))));
                // A read fault: swap-in (with readahead) first, then the fault completes.
                match k.touch(me, m, F, false) {
                    Err(step) => Some(step),
                    Ok(()) => Some(Step::Cpu { user: 0, sys: 0 }),
                }
            }
            3 => {
                k.touch(me, m, F, false).expect("swapped in");
                (check.take().unwrap())(k, me, m);
                None
            }
            _ => None,
        }
    });
    k
}

/// do_swap_page: after a read fault the page stays in the swap cache with its slot
/// (vm_swap_full is false); SwapCached counts it, swap used still includes the slot.
/// A clean swap-cache page is reclaimed again without another write: no pswpout, the
/// page just leaves memory and the PTE points to the same slot.
#[test]
fn swapped_in_page_keeps_its_slot_and_is_dropped_without_a_write() {
    for profile in ["linux-6.x", "linux-5.4", "linux-2.6.39"] {
        swapped_in(profile, SETS, move |k, _me, m| {
            let slot = k.mm.swap_cache_slot(m, F).unwrap_or_else(|| panic!("{profile}: the read fault keeps the swap-cache copy"));
            assert!(k.meminfo().swap_cached >= 4, "{profile}: SwapCached {} kB", k.meminfo().swap_cached);
            let (total, free) = k.swap_totals();
            assert!(total - free >= N, "{profile}: the slots are still used ({} of {total})", total - free);
            let out0 = k.vm.get(VmItem::Pswpout);
            reclaim_until(k, m, |k| matches!(k.mm.slot(m, F), Slot::Swap(_)));
            assert_eq!(k.vm.get(VmItem::Pswpout), out0, "{profile}: a clean swap-cache page is not written again");
            assert_eq!(k.mm.slot(m, F), Slot::Swap(slot), "{profile}: the same slot");
        });
    }
}

/// A write to the page after a read fault: do_wp_page -> reuse_swap_page drops the
/// swap-cache copy and frees the slot before 5.19; since PG_anon_exclusive (5.19) the
/// exclusive page is reused at once and keeps its slot, and the dirty page is written to
/// that slot again when reclaimed.
#[test]
fn a_write_after_swap_in_frees_the_slot_before_5_19_only() {
    for (profile, frees) in [("linux-6.x", false), ("linux-5.8", true), ("linux-5.4", true), ("linux-2.6.39", true)] {
        swapped_in(profile, SETS, move |k, me, m| {
            let slot = k.mm.swap_cache_slot(m, F).expect("kept after the read fault");
            k.touch(me, m, F, true).unwrap();
            let p = k.mm.page(m, F).unwrap();
            assert!(k.mm.pages.dirty(p), "{profile}: the written page is dirty");
            if frees {
                assert_eq!(k.mm.swap_cache_slot(m, F), None, "{profile}: reuse_swap_page frees the slot");
            } else {
                assert_eq!(k.mm.swap_cache_slot(m, F), Some(slot), "{profile}: an exclusive page keeps its slot");
                let out0 = k.vm.get(VmItem::Pswpout);
                reclaim_until(k, m, |k| k.vm.get(VmItem::Pswpout) > out0);
                assert_eq!(k.mm.swap_cache_slot(m, F), Some(slot), "{profile}: rewritten to the same slot");
            }
        });
    }
}

/// A write fault on a swapped-out page frees the slot in every era (reuse_swap_page /
/// should_try_to_free_swap: the faulting mm is the only user).
#[test]
fn a_write_fault_frees_the_slot() {
    for profile in ["linux-6.x", "linux-5.4", "linux-2.6.39"] {
        swapped_in(profile, SETS, move |k, me, m| {
            // Page R came in by swap readahead, unmapped: this write is its fault.
            assert!(k.mm.swap_cache_slot(m, R).is_some(), "{profile}: readahead brought page R into the swap cache");
            k.touch(me, m, R, true).unwrap();
            assert_eq!(k.mm.swap_cache_slot(m, R), None, "{profile}: the write fault frees the slot");
        });
    }
}

/// vm_swap_full (more than half of swap in use): do_swap_page frees the slot of the page
/// it maps even on a read fault, in every era. A swap area of 127 slots is more than half
/// used by the 64 pages (the per-CPU slot caches stay off with so few free slots).
#[test]
fn a_fault_frees_the_slot_when_swap_is_more_than_half_full() {
    for profile in ["linux-6.x", "linux-5.4", "linux-2.6.39"] {
        swapped_in(profile, &["boot_anon=0", "swap=512K"], move |k, _me, m| {
            // Before the fault freed one, more than half of the slots were in use.
            let (total, free) = k.swap_totals();
            assert!((total - free + 1) * 2 > total, "{profile}: {total} slots, {free} free");
            assert_eq!(k.mm.swap_cache_slot(m, F), None, "{profile}: try_to_free_swap at the fault");
            let p = k.mm.page(m, F).unwrap();
            assert!(k.mm.pages.dirty(p), "{profile}: no copy left on swap: dirty");
            // Readahead pages not yet mapped keep theirs until their own fault.
            assert!(k.mm.swap_cache_slot(m, R).is_some(), "{profile}");
        });
    }
}

/// Per-CPU swap slot caches (4.11 .. 6.13): the first swap-out takes a batch of
/// SWAP_SLOTS_CACHE_SIZE (64) slots, all counted as used; freed slots wait in the CPU's
/// return batch until 64 have gathered. 2.6.39 allocates and frees one slot at a time.
#[test]
fn slot_caches_take_and_return_slots_in_batches_of_64() {
    for (profile, cached) in [("linux-6.x", true), ("linux-5.4", true), ("linux-2.6.39", false)] {
        let mut k = boot(profile, SETS);
        let mut phase = 0;
        run(&mut k, move |k, me| {
            phase += 1;
            if phase > 1 {
                return None;
            }
            let m = k.anon_mapping(me);
            for i in 0..10 {
                k.touch(me, m, i, true).expect("free memory");
            }
            reclaim_until(k, m, |k| k.vm.get(VmItem::Pswpout) >= 10);
            let (total, free) = k.swap_totals();
            let used = total - free;
            if cached {
                assert_eq!(used, 64, "{profile}: one batch of 64 slots taken");
                assert_eq!(k.swap_slots_cached(), 54, "{profile}: 54 still in the CPU's cache");
            } else {
                assert_eq!(used, 10, "{profile}: one slot per page");
            }
            // The mapping goes away (exit, munmap): free_swap_and_cache for each slot.
            k.truncate_mapping(m, 0);
            let (_, free) = k.swap_totals();
            if cached {
                assert_eq!(total - free, 64, "{profile}: the freed slots wait in the return batch");
            } else {
                assert_eq!(total - free, 0, "{profile}: freed at once");
            }
            // swapoff drains the caches.
            k.drain_swap_slots_caches();
            assert_eq!(k.swap_totals().1, total, "{profile}: all slots free after the drain");
            Some(Step::Cpu { user: 0, sys: 0 })
        });
    }
}

/// The swap cache's own trees (mm/swapper_space.rs) and their radix_tree_node objects, after
/// 64 pages went out to slots at offsets 1..64 and pages F and R came back: on 6.x the
/// evicted pages' shadow entries stay in the tree (a leaf for offsets 1-63 with the two
/// pages, a shadow-only leaf for offset 64, a root: 3 nodes, the shadow-only leaf not on the
/// shadow-node list before 6.3);
/// on 5.4 and 2.6.39 only the swap-cache pages have entries (F and R; 2.6.39's cluster
/// readahead brings offsets 1-7): one leaf, as offsets below 64 need no node above it.
/// When the task exits its slots are freed and the nodes go.
#[test]
fn the_swap_cache_trees_hold_pages_and_since_5_9_shadows() {
    for (profile, cached, nodes, shadow_leaves) in [("linux-6.x", 2, 3, 1), ("linux-5.4", 2, 1, 0), ("linux-2.6.39", 7, 1, 0)] {
        let before = std::rc::Rc::new(std::cell::Cell::new(0u64));
        let seen = before.clone();
        let k = swapped_in(profile, SETS, move |k, _me, m| {
            let in_cache = (0..N).filter(|&i| k.mm.swap_cache_slot(m, i).is_some()).count();
            assert_eq!(in_cache, cached, "{profile}: pages in the swap cache");
            assert_eq!(k.mm.swapper.nodes(), nodes, "{profile}: nodes of the swap cache's trees");
            assert_eq!(k.mm.swapper.shadow_leaves(), shadow_leaves, "{profile}: shadow-only leaves");
            // Before 6.3 they are not on the shadow-node list (workingset_nodes).
            assert_eq!(k.mm.shadow_nodes(), 0, "{profile}: workingset_nodes");
            seen.set(k.mm.slab.counts(k.mm.slab.find("radix_tree_node").unwrap()).active_objs);
        });
        // The settle after the exit's event gave the objects back.
        assert_eq!(k.mm.swapper.nodes(), 0, "{profile}: the exit freed every slot and its entry");
        k.check_radix_invariants().unwrap();
        let after = k.mm.slab.counts(k.mm.slab.find("radix_tree_node").unwrap()).active_objs;
        assert!(before.get() >= after + nodes, "{profile}: {} objects with the swap cache's nodes, {after} after", before.get());
    }
}
