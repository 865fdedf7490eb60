//! Event counters of /proc/vmstat: each is counted where the kernel counts it, per era
//! (docs/counters.md lists every counter, its kernel call sites and the model's).

use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::mm::page::Lru;
use memtwin_kernel::mm::vmscan::ScanControl;
use memtwin_kernel::mm::Slot;
use memtwin_kernel::{Kernel, Program, Step, TaskId, NS_PER_SEC};
use memtwin_procfs::VmItem;

fn boot_with(preset: &str, sets: &[&str]) -> Kernel {
    let mut m = memtwin_machine::preset(preset).expect("preset");
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

fn run_task<F: FnMut(&mut Kernel, TaskId) -> Option<Step> + 'static>(k: &mut Kernel, f: F) -> TaskId {
    let t = k.spawn("test", "test", Box::new(Script(f)), memtwin_kernel::Sink::Null, memtwin_kernel::Sink::Null);
    let limit = k.now + 3600 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.task_exited(t));
    assert!(k.task_exited(t), "task did not finish");
    t
}

fn write_file(k: &mut Kernel, path: &'static str, mb: u64) {
    let mut fd = None;
    let mut left = mb << 20;
    run_task(k, move |k, me| {
        let f = *fd.get_or_insert_with(|| k.sys_open(me, path, OpenFlags { write: true, create: true, trunc: true, ..Default::default() }).unwrap().0);
        if left == 0 {
            k.sys_close(me, f).unwrap();
            return None;
        }
        let r = k.sys_write(me, f, left.min(1 << 20)).unwrap();
        left -= r.bytes;
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    });
}

fn read_file(k: &mut Kernel, path: &'static str) {
    let mut fd = None;
    run_task(k, move |k, me| {
        let f = *fd.get_or_insert_with(|| k.sys_open(me, path, OpenFlags { read: true, ..Default::default() }).unwrap().0);
        let r = k.sys_read(me, f, 1 << 20).unwrap();
        if r.eof || (r.bytes == 0 && r.wait.is_none()) {
            return None;
        }
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    });
}

fn sync_all(k: &mut Kernel) {
    k.request_sync();
    let t = k.now + 120 * NS_PER_SEC;
    k.run_until(t, &mut |k| k.mm.stat.dirty + k.mm.stat.writeback == 0);
    assert_eq!(k.mm.stat.dirty + k.mm.stat.writeback, 0);
}

fn mapping_of(k: &Kernel, path: &str) -> u32 {
    let ino = k.fs.lookup(path).unwrap();
    k.fs.inodes[ino as usize].mapping
}

/// workingset_refault activates a refaulting page by setting PG_active before lru_add:
/// WORKINGSET_ACTIVATE counts it, PGACTIVATE does not (no era counts it there).
#[test]
fn refault_activation_is_not_pgactivate() {
    for profile in ["linux-6.x", "linux-5.8", "linux-5.4"] {
        let mut k = boot_with("seed-000", &[&format!("kernel={profile}")]);
        write_file(&mut k, "/root/f", 8);
        sync_all(&mut k);
        let m = mapping_of(&k, "/root/f");
        let n = k.fs.inodes[k.fs.lookup("/root/f").unwrap() as usize].size / 4096;
        for i in 0..n {
            let p = k.mm.page(m, i).unwrap();
            let shadow = k.workingset_eviction(p);
            k.page_cache_delete(p, Some(shadow));
        }
        assert!(matches!(k.mm.slot(m, 0), Slot::Shadow(_)), "{profile}");
        let (act0, ws0) = (k.vm.get(VmItem::Pgactivate), k.vm.get(VmItem::WorkingsetActivateFile));
        read_file(&mut k, "/root/f");
        let ws = k.vm.get(VmItem::WorkingsetActivateFile) - ws0;
        assert_eq!(ws, n, "{profile}: every refault is within the workingset");
        assert_eq!(k.mm.pages.lru(k.mm.page(m, 0).unwrap()), Lru::ActiveFile, "{profile}");
        assert_eq!(k.vm.get(VmItem::Pgactivate), act0, "{profile}: refault activations are not pgactivate");
    }
}

/// Limit reclaim (cgroup_reclaim) is not counted in pgscan/pgsteal_kswapd/direct
/// (`if (!cgroup_reclaim(sc))` since 3.x; 2.6.39: PGSCAN behind scanning_global_lru,
/// PGSTEAL for every reclaimer); pgscan/pgsteal_file count it (5.8+); PGREFILL counts it
/// through 5.8, not in 6.x.
#[test]
fn limit_reclaim_counts_follow_the_era() {
    for (profile, steal_counted, refill_counted) in [("linux-6.x", false, false), ("linux-5.8", false, true), ("linux-5.4", false, true), ("linux-2.6.39", true, true)] {
        let mut k = boot_with("seed-000", &[&format!("kernel={profile}")]);
        write_file(&mut k, "/root/f", 16);
        sync_all(&mut k);
        let before = k.vm.clone();
        let d = |k: &Kernel, i: VmItem| k.vm.get(i) - before.get(i);
        let n = k.mm.lru_len(Lru::InactiveFile).min(512);
        let mut sc = ScanControl { nr_to_reclaim: n, target_mem_cgroup: Some(0), ..Default::default() };
        let freed = k.shrink_inactive_list(0, n, Lru::InactiveFile, &mut sc);
        assert!(freed > 0, "{profile}");
        assert_eq!(d(&k, VmItem::PgscanDirect) + d(&k, VmItem::PgscanKswapd), 0, "{profile}: pgscan");
        assert_eq!(d(&k, VmItem::PgstealDirect) > 0, steal_counted, "{profile}: pgsteal");
        assert_eq!(d(&k, VmItem::PgstealKswapd), 0, "{profile}: not kswapd");
        assert_eq!(d(&k, VmItem::PgscanFile), n, "{profile}: pgscan_file counts every reclaim");
        assert_eq!(d(&k, VmItem::PgstealFile), freed, "{profile}: pgsteal_file counts every reclaim");
        let active = k.mm.lru_len(Lru::ActiveFile).min(64);
        assert!(active > 0, "{profile}: boot's active file pages");
        k.shrink_active_list(0, active, Lru::ActiveFile, &mut sc);
        assert_eq!(d(&k, VmItem::Pgrefill) > 0, refill_counted, "{profile}: pgrefill");
        // Global reclaim counts everywhere.
        let before = k.vm.clone();
        let mut sc = ScanControl { nr_to_reclaim: 32, ..Default::default() };
        k.shrink_inactive_list(0, 32, Lru::InactiveFile, &mut sc);
        assert_eq!(k.vm.get(VmItem::PgscanDirect) - before.get(VmItem::PgscanDirect), 32, "{profile}");
        assert!(k.vm.get(VmItem::PgstealDirect) > before.get(VmItem::PgstealDirect), "{profile}");
    }
}

/// handle_mm_fault counts PGFAULT for every fault; do_swap_page adds PGMAJFAULT when the
/// page is read from swap. The swap write's completion counts NR_WRITTEN
/// (__folio_end_writeback, swap cache pages included).
#[test]
fn swap_in_is_a_fault_and_a_major_fault() {
    let mut k = boot_with("seed-000", &["boot_anon=0"]);
    let n = 64u64;
    let mut phase = 0;
    let mut map = 0u32;
    let mut before = None;
    let t = k.spawn(
        "test",
        "test",
        Box::new(Script(move |k: &mut Kernel, me| {
            phase += 1;
            let mut sc = ScanControl { nr_to_reclaim: 32, ..Default::default() };
            match phase {
                1 => {
                    map = k.map_shared_anon(me, n, memtwin_kernel::mm::Content::Text);
                    for i in 0..n {
                        k.touch(me, map, i, true).expect("free memory");
                    }
                    k.shrink_inactive_list(0, n, Lru::InactiveAnon, &mut sc);
                    k.shrink_inactive_list(0, n, Lru::InactiveAnon, &mut sc);
                    assert_eq!(k.vm.get(VmItem::Pswpout), n);
                    before = Some(k.vm.get(VmItem::NrWritten));
                    Some(Step::SleepUntil { t: k.now + NS_PER_SEC, io: false })
                }
                2 => {
                    assert_eq!(k.vm.get(VmItem::NrWritten) - before.unwrap(), n, "each swap write ends: nr_written");
                    k.shrink_inactive_list(0, n, Lru::InactiveAnon, &mut sc);
                    assert!(matches!(k.mm.slot(map, 0), Slot::Swap(_)));
                    let (f0, m0) = (k.vm.get(VmItem::Pgfault), k.vm.get(VmItem::Pgmajfault));
                    let r = k.touch(me, map, 0, false);
                    assert!(r.is_err(), "the page is read from swap");
                    assert_eq!(k.vm.get(VmItem::Pgfault) - f0, 1, "pgfault");
                    assert_eq!(k.vm.get(VmItem::Pgmajfault) - m0, 1, "pgmajfault");
                    Some(Step::Cpu { user: 0, sys: 0 })
                }
                _ => None,
            }
        })),
        memtwin_kernel::Sink::Null,
        memtwin_kernel::Sink::Null,
    );
    let limit = k.now + 60 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.task_exited(t));
    assert!(k.task_exited(t));
}

/// shrink_folio_list finds dirty file pages at the inactive tail: it marks them PG_reclaim
/// (nr_vmscan_immediate_reclaim) and activates them (pgactivate); when the flusher's write
/// ends, folio_rotate_reclaimable moves each to the inactive tail (pgrotated), where the
/// next pass frees it.
#[test]
fn dirty_file_pages_rotate_to_the_tail_when_written() {
    for profile in ["linux-6.x", "linux-5.4"] {
        let mut k = boot_with("seed-000", &[&format!("kernel={profile}")]);
        write_file(&mut k, "/root/f", 4);
        let m = mapping_of(&k, "/root/f");
        let n = 1024u64;
        let pages: Vec<u32> = (0..n).map(|i| k.mm.page(m, i).unwrap()).collect();
        assert!(pages.iter().all(|&p| k.mm.pages.dirty(p)), "{profile}: dirty after the write");
        let before = k.vm.clone();
        let d = |k: &Kernel, i: VmItem| k.vm.get(i) - before.get(i);
        // Isolate exactly the file's pages: they are the newest at the inactive head, so
        // scan the whole inactive list.
        let all = k.mm.lru_len(Lru::InactiveFile);
        let mut sc = ScanControl { nr_to_reclaim: all, ..Default::default() };
        k.shrink_inactive_list(0, all, Lru::InactiveFile, &mut sc);
        assert!(pages.iter().all(|&p| k.mm.pages.lru(p) == Lru::ActiveFile && k.mm.pages.reclaim(p)), "{profile}: activated with PG_reclaim");
        assert_eq!(d(&k, VmItem::NrVmscanImmediateReclaim), n, "{profile}");
        assert!(d(&k, VmItem::Pgactivate) >= n, "{profile}");
        sync_all(&mut k);
        // The last pages wait in the rotate batch of the CPU that completed their writeback
        // (lru_rotate: moved when full or drained).
        k.lru_add_drain_all();
        assert!(pages.iter().all(|&p| k.mm.pages.lru(p) == Lru::InactiveFile && !k.mm.pages.reclaim(p)), "{profile}: rotated to the inactive list");
        assert_eq!(d(&k, VmItem::Pgrotated), n, "{profile}: pgrotated");
        let tail = k.mm.lruvecs[0].collect(&k.mm.pages, Lru::InactiveFile);
        assert!(pages.contains(tail.last().unwrap()), "{profile}: at the tail");
    }
}

/// 2.6.39's shrink_page_list writes dirty file pages itself. A page written once is
/// referenced (the write marked it accessed), so the first pass keeps it on the inactive
/// list (PAGEREF_RECLAIM_CLEAN) with the flag cleared; the second calls pageout():
/// nr_vmscan_write, PG_reclaim, under writeback, kept inactive (no pgactivate) — a direct
/// reclaimer only while the disk's queue is not congested, kswapd always; when the write
/// ends the page rotates to the inactive tail (pgrotated) and the next pass frees it.
#[test]
fn reclaim_writes_dirty_file_pages_on_2_6_39() {
    // On ext3, the era's filesystem: it allocates blocks at write time. (ext4's writepage
    // would refuse these new, delayed-allocation pages from reclaim:
    // mm/vmscan.rs `kswapd_pageout_on_ext4_writes_only_pages_whose_blocks_are_on_disk`.)
    let mut m = memtwin_machine::preset("seed-000").expect("preset");
    memtwin_machine::apply_set(&mut m, "kernel=linux-2.6.39").unwrap();
    m.mounts.iter_mut().filter(|mt| mt.mountpoint == "/").for_each(|mt| mt.fstype = "ext3".into());
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    write_file(&mut k, "/root/f", 4);
    let m = mapping_of(&k, "/root/f");
    let n = 1024u64;
    let pages: Vec<u32> = (0..n).map(|i| k.mm.page(m, i).unwrap()).collect();
    assert!(pages.iter().all(|&p| k.mm.pages.dirty(p) && k.mm.pages.referenced(p)), "dirty and referenced after the write");
    let before = k.vm.clone();
    let d = |k: &Kernel, i: VmItem| k.vm.get(i) - before.get(i);
    // Every page of the inactive list once, SWAP_CLUSTER_MAX at a time from the tail (kept
    // pages go back to the head).
    let pass = |k: &mut Kernel, kswapd: bool| {
        let all = k.mm.lru_len(Lru::InactiveFile);
        for _ in 0..all.div_ceil(32) {
            let mut sc = ScanControl { nr_to_reclaim: 32, kswapd, ..Default::default() };
            k.shrink_inactive_list(0, 32, Lru::InactiveFile, &mut sc);
        }
    };
    pass(&mut k, false);
    assert!(pages.iter().all(|&p| k.mm.pages.lru(p) == Lru::InactiveFile && k.mm.pages.dirty(p) && !k.mm.pages.referenced(p)), "kept, flag cleared");
    assert_eq!((d(&k, VmItem::NrVmscanWrite), d(&k, VmItem::Pgactivate)), (0, 0));
    assert!(!k.mm.zone_congested);
    // A direct reclaimer writes until the disk's queue is congested (may_write_to_queue),
    // keeps the rest, and flags the zone ZONE_CONGESTED for the batches that met only that.
    pass(&mut k, false);
    let written = d(&k, VmItem::NrVmscanWrite);
    assert!(written > 0 && written < n, "{written} of {n}");
    assert!(k.mm.zone_congested);
    // kswapd (PF_SWAPWRITE) writes whatever the queue holds.
    pass(&mut k, true);
    assert!(pages.iter().all(|&p| k.mm.pages.lru(p) == Lru::InactiveFile && k.mm.pages.writeback(p) && k.mm.pages.reclaim(p)), "written by reclaim, kept inactive");
    assert_eq!((d(&k, VmItem::NrVmscanWrite), d(&k, VmItem::Pgactivate)), (n, 0));
    sync_all(&mut k);
    k.lru_add_drain_all();
    assert!(pages.iter().all(|&p| k.mm.pages.lru(p) == Lru::InactiveFile && !k.mm.pages.reclaim(p)), "rotated");
    assert_eq!(d(&k, VmItem::Pgrotated), n);
    let tail = k.mm.lruvecs[0].collect(&k.mm.pages, Lru::InactiveFile);
    assert!(pages.contains(tail.last().unwrap()), "at the tail");
    pass(&mut k, false);
    assert!((0..n).all(|i| k.mm.page(m, i).is_none()), "freed by the next pass");
}

/// kswapd_try_to_sleep: a balanced node first naps HZ/10; a wakeup during the nap counts
/// kswapd_low_wmark_hit_quickly, a node unbalanced again after it
/// kswapd_high_wmark_hit_quickly; pageoutrun counts balance_pgdat runs.
#[test]
fn kswapd_counts_its_naps_and_runs() {
    let mut k = boot_with("seed-000", &["ram=256M"]);
    write_file(&mut k, "/root/big", 600);
    let quick = k.vm.get(VmItem::KswapdLowWmarkHitQuickly) + k.vm.get(VmItem::KswapdHighWmarkHitQuickly);
    assert!(quick > 0, "a streaming write wakes kswapd again within its nap");
    let runs = k.vm.get(VmItem::Pageoutrun);
    assert!(runs > 1, "pageoutrun {runs}");
    assert!(quick < runs, "a run follows each early wakeup: {quick} vs {runs}");
    // Quiet: after the nap kswapd sleeps until woken.
    sync_all(&mut k);
    let t = k.now + NS_PER_SEC;
    k.run_until(t, &mut |_| false);
    assert!(k.reclaim.kswapd_waiting);
    let q = k.vm.get(VmItem::KswapdLowWmarkHitQuickly) + k.vm.get(VmItem::KswapdHighWmarkHitQuickly);
    let t = k.now + 5 * NS_PER_SEC;
    k.run_until(t, &mut |_| false);
    assert_eq!(k.vm.get(VmItem::KswapdLowWmarkHitQuickly) + k.vm.get(VmItem::KswapdHighWmarkHitQuickly), q, "no counts while asleep");
}

/// /proc/vmstat as each era prints it: 2.4 has none; 2.6.39 per-zone pgsteal and
/// kswapd_steal; 5.x one workingset_refault; 6.x split by type. Per-zone names follow the
/// model's zone (DMA32 up to 4 GiB), allocstall the allocation's zone (movable).
#[test]
fn vmstat_text_follows_the_era() {
    let k = boot_with("seed-000", &["kernel=linux-2.4"]);
    assert!(k.vmstat_text().is_none(), "2.4 has no /proc/vmstat");
    let k = boot_with("seed-000", &["kernel=linux-2.6.39"]);
    let t = k.vmstat_text().unwrap();
    assert!(t.contains("\nkswapd_steal ") && t.contains("\npgsteal_dma32 ") && t.contains("\nallocstall ") && t.contains("\npgalloc_dma32 "), "{t}");
    assert!(!t.contains("workingset") && !t.contains("pgsteal_kswapd") && !t.contains("nr_zone_"));
    let k = boot_with("seed-000", &["kernel=linux-5.4"]);
    let t = k.vmstat_text().unwrap();
    assert!(t.contains("\nworkingset_refault ") && t.contains("\nallocstall_movable ") && !t.contains("pgscan_anon"), "{t}");
    let k = boot_with("seed-000", &["kernel=linux-5.8"]);
    let t = k.vmstat_text().unwrap();
    assert!(t.contains("\nworkingset_refault ") && t.contains("\npgscan_anon ") && !t.contains("nr_swapcached"), "{t}");
    let k = boot_with("seed-000", &[]);
    let t = k.vmstat_text().unwrap();
    assert!(t.contains("\nworkingset_refault_file ") && t.contains("\nnr_swapcached ") && t.contains("\npgalloc_dma32 "), "{t}");
    let k = boot_with("seed-000", &["ram=8G"]);
    assert!(k.vmstat_text().unwrap().contains("\npgalloc_normal "));
}

/// Swap `n` pages of a new shmem object of `content` out (and free them once written),
/// then run `after(k, me, map)` in the same task until it returns None.
fn with_swapped_out(k: &mut Kernel, n: u64, content: memtwin_kernel::mm::Content, after: impl FnMut(&mut Kernel, TaskId, u32) -> Option<Step> + 'static) {
    with_swapped_out_of(k, n, content, false, after)
}

/// `with_swapped_out` of the task's anonymous memory (`anon`) or of a shmem object.
fn with_swapped_out_of(k: &mut Kernel, n: u64, content: memtwin_kernel::mm::Content, anon: bool, mut after: impl FnMut(&mut Kernel, TaskId, u32) -> Option<Step> + 'static) {
    let mut map = None;
    let mut rounds = 0;
    let mut out = false;
    run_task(k, move |k, me| {
        let m = *map.get_or_insert_with(|| {
            let m = if anon { k.anon_mapping(me) } else { k.map_shared_anon(me, n, content) };
            for i in 0..n {
                k.touch(me, m, i, true).expect("free memory");
            }
            m
        });
        if out || (0..n).all(|i| matches!(k.mm.slot(m, i), Slot::Swap(_))) {
            out = true;
            return after(k, me, m);
        }
        rounds += 1;
        assert!(rounds < 20, "not swapped out");
        // Age and reclaim the anon lists, then let the swap writes complete.
        let a = k.mm.lru_len(Lru::ActiveAnon);
        let mut sc = ScanControl { nr_to_reclaim: n, ..Default::default() };
        k.shrink_active_list(0, a, Lru::ActiveAnon, &mut sc);
        let i = k.mm.lru_len(Lru::InactiveAnon);
        k.shrink_inactive_list(0, i, Lru::InactiveAnon, &mut sc);
        Some(Step::SleepUntil { t: k.now + NS_PER_SEC, io: false })
    });
}

/// Touch pages `order` of a swapped-out mapping (anonymous memory or shmem) one after
/// another on `profile`; returns, per access that had to read from swap, the readahead pages
/// it read (SWAP_RA), and the run's SWAP_RA_HIT, PGMAJFAULT and minor faults.
fn swapin_windows(profile: &str, anon: bool, order: Vec<u64>) -> (Vec<u64>, u64, u64, u64) {
    let mut k = boot_with("seed-000", &[&format!("kernel={profile}"), "boot_anon=0"]);
    let out = std::rc::Rc::new(std::cell::RefCell::new((Vec::new(), 0, 0, 0)));
    let o = out.clone();
    let n = order.iter().max().unwrap() + 1;
    let (mut i, mut base) = (0, None);
    with_swapped_out_of(&mut k, n.max(64), memtwin_kernel::mm::Content::Text, anon, move |k, me, map| {
        let (b, min0) = base.get_or_insert_with(|| (k.vm.clone(), k.tasks[me as usize].min_flt)).clone();
        if i == order.len() {
            let d = |i: VmItem| k.vm.get(i) - b.get(i);
            let mut o = o.borrow_mut();
            o.1 = d(VmItem::SwapRaHit);
            o.2 = d(VmItem::Pgmajfault);
            o.3 = k.tasks[me as usize].min_flt - min0;
            return None;
        }
        let ra = k.vm.get(VmItem::SwapRa);
        match k.touch(me, map, order[i], false) {
            Ok(()) => {
                i += 1;
                Some(Step::Cpu { user: 0, sys: 0 })
            }
            Err(st) => {
                if matches!(k.mm.slot(map, order[i]), Slot::Page(_)) && k.vm.get(VmItem::SwapRa) >= ra {
                    o.borrow_mut().0.push(k.vm.get(VmItem::SwapRa) - ra);
                }
                Some(st)
            }
        }
    });
    let r = out.borrow().clone();
    r
}

/// Swap readahead's window adapts to how useful it was (swapin_nr_pages, 3.15+): a
/// sequential run of faults finds the readahead pages (SWAP_RA_HIT, minor faults) and the
/// window grows 1, 2, 4, 8 (page-cluster 3); scattered faults keep it at 1, reading nothing
/// ahead. Anonymous memory on a non-rotational swap device uses swap_vma_readahead (its
/// window around the faulting address), shmem swap_cluster_readahead (aligned slots).
#[test]
fn swap_readahead_windows_grow_with_hits_and_stay_closed_for_random_faults() {
    for anon in [true, false] {
        let (ra, hits, maj, min) = swapin_windows("linux-5.8", anon, (0..40).collect());
        assert!(hits <= ra.iter().sum::<u64>() && hits + 7 >= ra.iter().sum::<u64>(), "anon {anon}: the readahead pages are found (the last window reads past the run)");
        assert_eq!(maj, ra.len() as u64, "anon {anon}: one major fault per read");
        assert!(min >= hits, "anon {anon}: the hits are minor faults");
        assert_eq!(maj + hits, 40, "anon {anon}: {ra:?}");
        assert!(ra.len() <= 10 && *ra.iter().max().unwrap() == 7, "anon {anon}: the window reaches 8: {ra:?}");
        assert!(ra.windows(2).take(3).all(|w| w[0] <= w[1]), "anon {anon}: it grows: {ra:?}");
        if anon {
            assert_eq!(&ra[..4], &[0, 1, 3, 7], "the VMA's window: 1, 2, 4, 8");
        }
        // Every fifth page, from the far end back: no fault is next to the last one.
        let scattered: Vec<u64> = (0..12).map(|i| 60 - 5 * i).collect();
        let (ra, hits, maj, _) = swapin_windows("linux-5.8", anon, scattered);
        assert_eq!((ra.iter().sum::<u64>(), hits, maj), (0, 0, 12), "anon {anon}: {ra:?}");
    }
    // Before 3.15 the window is always 2^page-cluster, aligned: the faulting page's block of
    // 8 slots (the first slot of a swap area is its header) as far as this mapping's pages
    // run, whether or not the last readahead was used.
    let (ra, _, maj, _) = swapin_windows("linux-2.6.39", true, (0..12).map(|i| 60 - 5 * i).collect());
    assert!(ra.iter().all(|&r| (1..=7).contains(&r)), "{ra:?}");
    assert!(maj < 12, "some scattered pages came in with an earlier block: {maj}");
}

/// 6.12+ swap_writepage keeps zero-filled pages out of swap (SWPOUT_ZERO, no PSWPOUT, no
/// I/O, freed in the same pass) and swap_read_folio fills them back (SWPIN_ZERO, no
/// PSWPIN); earlier eras write and read them.
#[test]
fn zero_filled_pages_skip_swap_io_from_6_12() {
    for (profile, zeromap) in [("linux-6.x", true), ("linux-5.8", false)] {
        let mut k = boot_with("seed-000", &[&format!("kernel={profile}"), "boot_anon=0"]);
        let base = k.vm.clone();
        let n = 64u64;
        let mut step = 0;
        with_swapped_out(&mut k, n, memtwin_kernel::mm::Content::Zero, move |k, me, map| {
            step += 1;
            let d = |k: &Kernel, i: VmItem| k.vm.get(i) - base.get(i);
            if step == 1 {
                if zeromap {
                    assert_eq!((d(k, VmItem::SwpoutZero), d(k, VmItem::Pswpout), d(k, VmItem::NrWritten)), (n, 0, 0), "{profile}");
                    assert_eq!(d(k, VmItem::NrVmscanWrite), n, "{profile}: pageout() counts it");
                } else {
                    assert_eq!((d(k, VmItem::SwpoutZero), d(k, VmItem::Pswpout)), (0, n), "{profile}");
                }
                let (pgpgin, majflt) = (d(k, VmItem::Pgpgin), d(k, VmItem::Pgmajfault));
                let r = k.touch(me, map, 0, false);
                assert_eq!(r.is_ok(), zeromap, "{profile}: no read to wait for");
                assert_eq!(d(k, VmItem::Pgmajfault) - majflt, 1, "{profile}: still a major fault");
                // The faulting page and its readahead window (swapin_nr_pages), each filled
                // with zeros on 6.12+, read from the device before.
                let window = 1 + d(k, VmItem::SwapRa);
                if zeromap {
                    assert_eq!((d(k, VmItem::SwpinZero), d(k, VmItem::Pswpin), d(k, VmItem::Pgpgin) - pgpgin), (window, 0, 0), "{profile}: the readahead window, filled");
                } else {
                    assert_eq!((d(k, VmItem::SwpinZero), d(k, VmItem::Pswpin)), (0, window), "{profile}");
                }
            }
            None
        });
    }
}

/// folio_end_writeback -> acct_reclaim_writeback: while kswapd sleeps in
/// reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK) (5.16+), every page whose writeback ends
/// counts nr_throttled_written; outside the throttle none does.
#[test]
fn writeback_ending_while_kswapd_is_throttled_counts_nr_throttled_written() {
    let mut k = boot_with("seed-000", &[]);
    write_file(&mut k, "/root/a", 4);
    let (t0, w0) = (k.vm.get(VmItem::NrThrottledWritten), k.vm.get(VmItem::NrWritten));
    k.reclaim.writeback_throttled_until = Some(k.now + 3600 * NS_PER_SEC);
    sync_all(&mut k);
    let written = k.vm.get(VmItem::NrWritten) - w0;
    assert!(written >= 1024);
    assert_eq!(k.vm.get(VmItem::NrThrottledWritten) - t0, written, "every page written while throttled");
    k.reclaim.writeback_throttled_until = Some(k.now);
    write_file(&mut k, "/root/b", 4);
    let t1 = k.vm.get(VmItem::NrThrottledWritten);
    sync_all(&mut k);
    assert_eq!(k.vm.get(VmItem::NrThrottledWritten), t1, "the throttle is over");
    assert_eq!(k.reclaim.writeback_throttled_until, None);
}

/// throttle_direct_reclaim (3.6+): a direct reclaimer that finds free pages at or below
/// half the min watermark counts pgscan_direct_throttle and waits for kswapd before
/// reclaiming (no allocstall yet); 2.6.39 goes straight to reclaim.
#[test]
fn direct_reclaim_below_half_min_is_throttled() {
    for (profile, throttled) in [("linux-6.x", true), ("linux-5.4", true), ("linux-2.6.39", false)] {
        let mut k = boot_with("seed-000", &[&format!("kernel={profile}")]);
        // The frames held below are outside the model's accounting.
        k.debug_invariants = false;
        let half = k.mm.wmark.min / 2;
        let mut held = Vec::new();
        while k.mm.nr_free() > half {
            held.push(k.mm.take_free().unwrap());
        }
        let before = k.vm.clone();
        let mut checked = false;
        run_task(&mut k, move |k, me| {
            if checked {
                return None;
            }
            checked = true;
            let r = k.page_cache_alloc(me);
            assert!(r.is_err(), "{profile}: below min");
            let d = |i: VmItem| k.vm.get(i) - before.get(i);
            assert_eq!(d(VmItem::PgscanDirectThrottle), throttled as u64, "{profile}");
            assert_eq!(d(VmItem::AllocstallNormal), !throttled as u64, "{profile}");
            if throttled {
                assert!(matches!(r, Err(Step::SleepUntil { .. })), "{profile}: waits on pfmemalloc_wait");
                assert!(k.reclaim.pfmemalloc_waiters.contains(&me));
            }
            Some(Step::Cpu { user: 0, sys: 0 })
        });
        let _ = held;
    }
}

/// A process touching a file's cached pages through mmap takes a minor fault for the first
/// page of each 64 KiB block (do_fault_around maps the block's cached pages with it), no
/// major fault, and none on the next pass; once the last mapper is gone the next one faults
/// again.
#[test]
fn mapped_cached_file_pages_fault_once_per_fault_around_block() {
    let mut k = boot_with("default", &[]);
    write_file(&mut k, "/root/lib", 4);
    read_file(&mut k, "/root/lib");
    for _ in 0..2 {
        let base = k.vm.clone();
        let mut passes = 0;
        let t = run_task(&mut k, move |k, me| {
            let f = k.sys_open(me, "/root/lib", OpenFlags { read: true, ..Default::default() }).unwrap().0;
            let m = k.file_mapping(me, f).unwrap();
            k.map_file(me, m, 1024, false);
            while passes < 2 {
                let before = k.vm.get(VmItem::Pgfault);
                for i in 0..1024 {
                    k.touch(me, m, i, false).expect("cached");
                }
                let faults = k.vm.get(VmItem::Pgfault) - before;
                assert_eq!(faults, if passes == 0 { 1024 / 16 } else { 0 }, "pass {passes}");
                passes += 1;
            }
            None
        });
        assert_eq!(k.vm.get(VmItem::Pgmajfault), base.get(VmItem::Pgmajfault));
        assert_eq!(k.tasks[t as usize].min_flt, 64);
    }
}

/// swap_cluster_readahead reads the slots of the faulting slot's block whoever owns them:
/// two shmem objects touched in turn share their slots' blocks, so a sequential run of
/// faults on one brings the other's pages into the swap cache as readahead too, and the
/// other's later faults find them (SWAP_RA_HIT, minor faults).
#[test]
fn cluster_readahead_reads_other_mappings_slots_in_the_block() {
    let mut k = boot_with("seed-000", &["kernel=linux-6.x", "boot_anon=0"]);
    let n = 64u64;
    let mut maps = None;
    let mut rounds = 0;
    let (mut phase, mut i) = (0, 0u64);
    let mut base = None;
    let mut b_in = 0;
    run_task(&mut k, move |k, me| {
        let (a, b) = *maps.get_or_insert_with(|| {
            let a = k.map_shared_anon(me, n, memtwin_kernel::mm::Content::Text);
            let b = k.map_shared_anon(me, n, memtwin_kernel::mm::Content::Text);
            // Four pages of one, then four of the other: their slots alternate in runs of 4.
            for j in (0..n).step_by(4) {
                for m in [a, b] {
                    for x in j..j + 4 {
                        k.touch(me, m, x, true).expect("free memory");
                    }
                }
            }
            (a, b)
        });
        if phase == 0 {
            if (0..n).all(|j| matches!((k.mm.slot(a, j), k.mm.slot(b, j)), (Slot::Swap(_), Slot::Swap(_)))) {
                phase = 1;
                base = Some(k.vm.clone());
            } else {
                rounds += 1;
                assert!(rounds < 20, "not swapped out");
                let mut sc = ScanControl { nr_to_reclaim: 2 * n, ..Default::default() };
                let act = k.mm.lru_len(Lru::ActiveAnon);
                k.shrink_active_list(0, act, Lru::ActiveAnon, &mut sc);
                let inact = k.mm.lru_len(Lru::InactiveAnon);
                k.shrink_inactive_list(0, inact, Lru::InactiveAnon, &mut sc);
                return Some(Step::SleepUntil { t: k.now + NS_PER_SEC, io: false });
            }
        }
        // Phase 1: a's pages in order; phase 2: b's.
        let m = if phase == 1 { a } else { b };
        if i == n {
            if phase == 1 {
                let b0 = base.as_ref().unwrap();
                let in_cache = (0..n).filter(|&j| matches!(k.mm.slot(b, j), Slot::Page(_))).count() as u64;
                assert!(in_cache >= n / 4, "b's pages came in with a's faults: {in_cache} of {n}");
                assert!(k.vm.get(VmItem::SwapRa) - b0.get(VmItem::SwapRa) >= in_cache);
                b_in = in_cache;
                (phase, i) = (2, 0);
                base = Some(k.vm.clone());
            } else {
                let b0 = base.as_ref().unwrap();
                let hits = k.vm.get(VmItem::SwapRaHit) - b0.get(VmItem::SwapRaHit);
                assert!(hits >= b_in, "b's faults find them: {hits} of {b_in}");
                return None;
            }
        }
        let m = if phase == 1 { a } else if m == a { b } else { m };
        match k.touch(me, m, i, false) {
            Ok(()) => {
                i += 1;
                Some(Step::Cpu { user: 0, sys: 0 })
            }
            Err(st) => Some(st),
        }
    });
}

/// 4.16+ shrink_inactive_list wakes the flushers (to write all that is dirty) only for a
/// batch whose every page taken is a file page dirty and not yet queued for writeback
/// (nr_unqueued_dirty == nr_taken): one clean page among 31 dirty ones is enough not to.
/// (2.6.39 has no such rule: its do_try_to_free_pages asks by pages scanned, tested in
/// vmscan.rs.)
#[test]
fn a_batch_wakes_the_flushers_only_when_every_page_is_unqueued_dirty() {
    for profile in ["linux-6.x", "linux-5.4"] {
        let mut k = boot_with("seed-000", &[&format!("kernel={profile}"), "boot_file=0"]);
        k.drop_caches(1);
        // Write the first `n` pages of /root/a (created without O_TRUNC, so that closing it
        // does not start its writeback as ext4's auto_da_alloc would after a truncation).
        let write = |k: &mut Kernel, n: u64| {
            let mut fd = None;
            let mut left = n * 4096;
            run_task(k, move |k, me| {
                let f = *fd.get_or_insert_with(|| k.sys_open(me, "/root/a", OpenFlags { write: true, create: true, ..Default::default() }).unwrap().0);
                if left == 0 {
                    k.sys_close(me, f).unwrap();
                    return None;
                }
                let r = k.sys_write(me, f, left).unwrap();
                left -= r.bytes;
                Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
            });
        };
        write(&mut k, 256);
        sync_all(&mut k);
        // sync(2) has returned; the flusher would end the request on its next pass, which
        // the rewrite below would wake it for.
        k.writeback.sync_requested = false;
        let m = mapping_of(&k, "/root/a");
        let tail32 = |k: &Kernel| -> Vec<u32> {
            let l = k.mm.lruvecs[0].collect(&k.mm.pages, Lru::InactiveFile);
            l[l.len() - 32..].to_vec()
        };
        let batch = |k: &mut Kernel| {
            let mut sc = ScanControl { nr_to_reclaim: 32, ..Default::default() };
            k.shrink_inactive_list(0, 32, Lru::InactiveFile, &mut sc);
        };
        let asked = |k: &Kernel| k.writeback.work_pages.iter().sum::<u64>();
        // Rewrite the first 31 pages in place: they become dirty where they lie, at the
        // list's tail beside the clean 32nd.
        write(&mut k, 31);
        let tail = tail32(&k);
        assert!(tail.iter().all(|&p| k.mm.pages.mapping(p) == m), "{profile}: the batch is the file's first pages");
        assert_eq!(tail.iter().filter(|&&p| k.mm.pages.dirty(p)).count(), 31, "{profile}");
        batch(&mut k);
        assert_eq!(asked(&k), 0, "{profile}: a clean page in the batch: no wakeup");
        // The next 32 pages at the tail, all rewritten.
        write(&mut k, 128);
        let tail = tail32(&k);
        assert!(tail.iter().all(|&p| k.mm.pages.dirty(p) && !k.mm.pages.writeback(p)), "{profile}");
        let dirty = k.mm.stat.dirty;
        batch(&mut k);
        assert_eq!(asked(&k), dirty, "{profile}: every page unqueued dirty: all that is dirty");
    }
}

/// A mapped file page read from the disk is one fault, a major one: handle_mm_fault runs
/// again after the read (FAULT_FLAG_TRIED) but mm_account_fault counts the fault once.
/// MADV_RANDOM (VM_RAND_READ) reads the page alone.
#[test]
fn a_major_file_fault_is_counted_once() {
    let mut k = boot_with("default", &[]);
    write_file(&mut k, "/root/lib", 1);
    sync_all(&mut k);
    let (mut fd, mut i, mut base) = (None, 0u64, None);
    let t = run_task(&mut k, move |k, me| {
        let (f, m) = *fd.get_or_insert_with(|| {
            let f = k.sys_open(me, "/root/lib", OpenFlags { read: true, ..Default::default() }).unwrap().0;
            k.sys_fadvise_dontneed(me, f).unwrap();
            let m = k.file_mapping(me, f).unwrap();
            k.map_file(me, m, 256, false);
            k.madvise_file(me, m, memtwin_kernel::mm::Madvice::Random);
            (f, m)
        });
        let _ = f;
        let b = *base.get_or_insert_with(|| (k.vm.get(VmItem::Pgfault), k.vm.get(VmItem::Pgmajfault), k.vm.get(VmItem::Pgpgin)));
        // Every 17th page: each in its own 16-page fault-around block.
        while i < 256 {
            if let Err(w) = k.touch(me, m, i, false) {
                return Some(w);
            }
            i += 17;
        }
        let n = (0..256).step_by(17).count() as u64;
        assert_eq!(k.vm.get(VmItem::Pgmajfault) - b.1, n);
        assert_eq!(k.vm.get(VmItem::Pgfault) - b.0, n, "one fault per page read, not two");
        assert_eq!(k.vm.get(VmItem::Pgpgin) - b.2, n * 4, "MADV_RANDOM reads the page alone (KiB)");
        None
    });
    assert_eq!((k.tasks[t as usize].maj_flt, k.tasks[t as usize].min_flt), (16, 0));
}

/// A store to a clean page of a shared file mapping faults (page_mkwrite) and dirties the
/// page with the inode; a second store to the dirty page is a plain store.
#[test]
fn a_store_to_a_clean_shared_file_page_faults_and_dirties_it() {
    let mut k = boot_with("default", &[]);
    write_file(&mut k, "/root/data", 1);
    sync_all(&mut k);
    let m = mapping_of(&k, "/root/data");
    let dirty0 = k.mm.stat.dirty;
    run_task(&mut k, move |k, me| {
        k.map_file(me, m, 256, false);
        let f0 = k.vm.get(VmItem::Pgfault);
        k.touch(me, m, 3, false).expect("cached");
        assert_eq!(k.vm.get(VmItem::Pgfault) - f0, 1, "the read maps the block");
        k.touch(me, m, 3, true).expect("no throttling for one page");
        assert_eq!(k.vm.get(VmItem::Pgfault) - f0, 2, "the store to the clean page faults");
        k.touch(me, m, 3, true).expect("dirty");
        assert_eq!(k.vm.get(VmItem::Pgfault) - f0, 2, "a store to a dirty page does not");
        assert_eq!(k.mm.stat.dirty, dirty0 + 1);
        assert_eq!(k.mm.mappings[m as usize].nr_dirty, 1);
        None
    });
}
