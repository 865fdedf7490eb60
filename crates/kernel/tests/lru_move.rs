//! Per-CPU batches that move pages already on the LRU (mm/swap.c), by era: activation
//! (activate_page_pvecs, cpu_fbatches.activate), rotation at the end of writeback
//! (lru_rotate_pvecs), deactivation of pages invalidation could not drop
//! (lru_deactivate_file), MADV_COLD's deactivation (lru_deactivate); their drains and the
//! counters they move. Expectations follow from the mechanism: a batch of PAGEVEC_SIZE
//! moves when full or drained, lru_lock once per batch.

mod common;

use common::{boot_era, listed_file_pages, on_cpu};
use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::mm::page::Lru;
use memtwin_kernel::mm::swap::MoveKind;
use memtwin_kernel::wait::WaitOn;
use memtwin_kernel::{Kernel, Step, NS_PER_SEC};
use memtwin_procfs::VmItem;

/// The lru_lock acquisitions so far (every lock of the node).
fn lru_lock_acquisitions(k: &Kernel) -> u64 {
    k.reclaim.lru_locks.iter().map(|l| l.acquisitions).sum()
}

/// Two accesses make a listed inactive page active (folio_mark_accessed).
fn access_twice(k: &mut Kernel, p: u32) {
    k.mark_page_accessed(p);
    k.mark_page_accessed(p);
}

#[test]
fn activation_waits_in_the_cpus_batch_until_it_is_full_from_3_0_on() {
    for (kernel, size) in [("linux-6.x", 15usize), ("linux-5.8", 15), ("linux-5.4", 15)] {
        let mut k = boot_era(kernel, 4);
        on_cpu(&mut k, 2);
        let (_, pages) = listed_file_pages(&mut k, size as u64);
        let act0 = k.vm.get(VmItem::Pgactivate);
        let locks0 = lru_lock_acquisitions(&k);
        for &p in &pages[..size - 1] {
            access_twice(&mut k, p);
        }
        // Queued: still on the inactive list, not yet counted, no lock taken.
        assert!(pages[..size - 1].iter().all(|&p| k.mm.pages.lru(p) == Lru::InactiveFile), "{kernel}");
        assert_eq!(k.mm.lru_move.count(2, MoveKind::Activate), size - 1, "{kernel}: in CPU 2's batch");
        assert_eq!(k.vm.get(VmItem::Pgactivate), act0, "{kernel}: PGACTIVATE when the batch moves");
        assert_eq!(lru_lock_acquisitions(&k), locks0, "{kernel}");
        // The access that fills the batch moves it: every page active, one lock round.
        access_twice(&mut k, pages[size - 1]);
        assert!(pages.iter().all(|&p| k.mm.pages.lru(p) == Lru::ActiveFile), "{kernel}");
        assert_eq!(k.mm.lru_move.count(2, MoveKind::Activate), 0, "{kernel}");
        assert_eq!(k.vm.get(VmItem::Pgactivate) - act0, size as u64, "{kernel}");
        assert_eq!(lru_lock_acquisitions(&k) - locks0, 1, "{kernel}: lru_lock once for the batch");
        k.mm.check_invariants().unwrap();
    }
}

#[test]
fn before_3_0_activation_takes_lru_lock_for_each_page_at_once() {
    for kernel in ["linux-2.6.39", "linux-2.4"] {
        let mut k = boot_era(kernel, 4);
        on_cpu(&mut k, 1);
        let (_, pages) = listed_file_pages(&mut k, 5);
        let act0 = k.vm.get(VmItem::Pgactivate);
        let locks0 = lru_lock_acquisitions(&k);
        for &p in &pages {
            access_twice(&mut k, p);
        }
        assert!(pages.iter().all(|&p| k.mm.pages.lru(p) == Lru::ActiveFile), "{kernel}");
        assert_eq!(k.vm.get(VmItem::Pgactivate) - act0, 5, "{kernel}");
        assert_eq!(lru_lock_acquisitions(&k) - locks0, 5, "{kernel}: activate_page locks per page");
        assert_eq!(k.mm.lru_move.total, 0, "{kernel}: no activate batch");
    }
}

#[test]
fn a_drain_moves_this_cpus_batch_only_and_lru_add_drain_all_every_cpus() {
    let mut k = boot_era("linux-6.x", 4);
    let (_, pages) = listed_file_pages(&mut k, 6);
    on_cpu(&mut k, 1);
    access_twice(&mut k, pages[0]);
    access_twice(&mut k, pages[1]);
    on_cpu(&mut k, 3);
    access_twice(&mut k, pages[2]);
    k.lru_add_drain();
    assert_eq!(k.mm.pages.lru(pages[2]), Lru::ActiveFile, "CPU 3's own batch moved");
    assert_eq!(k.mm.pages.lru(pages[0]), Lru::InactiveFile, "CPU 1's batch waits");
    assert_eq!(k.mm.lru_move.count(1, MoveKind::Activate), 2);
    k.current = None;
    let works = k.reclaim.drain_all_works;
    k.lru_add_drain_all();
    assert_eq!(k.reclaim.drain_all_works - works, 1, "work queued on the one CPU with pages");
    assert!(pages[..2].iter().all(|&p| k.mm.pages.lru(p) == Lru::ActiveFile));
    assert_eq!(k.mm.lru_move.total, 0);
}

#[test]
fn a_page_freed_while_queued_is_skipped_by_the_move() {
    let mut k = boot_era("linux-6.x", 2);
    on_cpu(&mut k, 0);
    let (m, pages) = listed_file_pages(&mut k, 3);
    for &p in &pages {
        access_twice(&mut k, p);
    }
    let act0 = k.vm.get(VmItem::Pgactivate);
    k.truncate_mapping(m, 0);
    k.lru_add_drain();
    assert_eq!(k.vm.get(VmItem::Pgactivate), act0, "nothing left to activate");
    k.mm.check_invariants().unwrap();
}

#[test]
fn a_page_queued_on_another_cpu_is_not_reclaimed_until_its_batch_drains() {
    // The batch holds a reference: __remove_mapping cannot freeze the count, so reclaim on
    // another CPU keeps the page (and scans it); invalidation cannot drop it either.
    for kernel in ["linux-6.x", "linux-5.4"] {
        let mut k = boot_era(kernel, 2);
        on_cpu(&mut k, 1);
        let (m, pages) = listed_file_pages(&mut k, 8);
        // CPU 1 queues three pages for activation.
        for &p in &pages[..3] {
            access_twice(&mut k, p);
        }
        assert_eq!(k.mm.lru_move.count(1, MoveKind::Activate), 3, "{kernel}");
        assert!(k.mm.lru_move.holds(pages[0]) && !k.mm.lru_move.holds(pages[3]), "{kernel}");
        // Invalidation keeps the held pages and drops the rest of the file.
        let (dropped, in_batch) = k.invalidate_mapping_pages_nr(m);
        assert_eq!((dropped, in_batch), (5, 3), "{kernel}");
        // Reclaim on CPU 0 over the whole inactive file list: the held pages stay cached.
        on_cpu(&mut k, 0);
        let n = k.mm.lru_len(Lru::InactiveFile);
        let mut sc = memtwin_kernel::mm::vmscan::ScanControl { nr_to_reclaim: n, ..Default::default() };
        let scan0 = k.vm.get(VmItem::PgscanDirect);
        k.shrink_inactive_list(0, n, Lru::InactiveFile, &mut sc);
        assert!(k.vm.get(VmItem::PgscanDirect) - scan0 >= 3, "{kernel}: scanned");
        for (i, &p) in pages[..3].iter().enumerate() {
            assert_eq!(k.mm.page(m, i as u64), Some(p), "{kernel}: page {i} still cached");
        }
        k.mm.check_invariants().unwrap();
        // Once CPU 1's batch drains, nothing holds them: the next reclaim frees them.
        k.current = None;
        k.lru_add_drain_all();
        assert!(!k.mm.lru_move.holds(pages[0]), "{kernel}");
        on_cpu(&mut k, 0);
        let n = k.mm.lru_len(Lru::InactiveFile) + k.mm.lru_len(Lru::ActiveFile);
        let mut sc = memtwin_kernel::mm::vmscan::ScanControl { nr_to_reclaim: n, ..Default::default() };
        k.shrink_active_list(0, k.mm.lru_len(Lru::ActiveFile), Lru::ActiveFile, &mut sc);
        for _ in 0..2 {
            let n = k.mm.lru_len(Lru::InactiveFile);
            k.shrink_inactive_list(0, n, Lru::InactiveFile, &mut sc);
        }
        assert!((0..3).all(|i| k.mm.page(m, i).is_none()), "{kernel}: freed after the drain");
        k.mm.check_invariants().unwrap();
    }
}

#[test]
fn invalidation_deactivates_what_it_cannot_drop_and_2_4_does_not() {
    // Pages still in the LRU-add batch hold a reference: invalidate_mapping_pages cannot
    // drop them and queues them for deactivation; the drain puts them on the list, then
    // lru_deactivate_file_fn moves the clean ones to the inactive tail (PGROTATED).
    for (kernel, hint) in [("linux-6.x", true), ("linux-5.4", true), ("linux-2.6.39", true), ("linux-2.4", false)] {
        let mut k = boot_era(kernel, 2);
        on_cpu(&mut k, 1);
        let m = k.mm.new_mapping(memtwin_kernel::mm::MappingKind::File, None, 0);
        let mut pages = Vec::new();
        for i in 0..5 {
            let p = k.mm.take_free().unwrap();
            k.filemap_add_page(m, i, p, false);
            pages.push(p);
        }
        let rot0 = k.vm.get(VmItem::Pgrotated);
        let (dropped, in_batch) = k.invalidate_mapping_pages_nr(m);
        if kernel == "linux-2.4" {
            // No LRU-add batches: every clean page goes.
            assert_eq!(dropped, 5, "{kernel}");
            continue;
        }
        assert_eq!((dropped, in_batch), (0, 5), "{kernel}");
        assert_eq!(k.mm.lru_move.count(1, MoveKind::DeactivateFile), 5 * hint as usize, "{kernel}");
        k.lru_add_drain();
        assert_eq!(k.vm.get(VmItem::Pgrotated) - rot0, 5, "{kernel}: clean pages to the inactive tail");
        let tail = k.mm.lru_tail(0, Lru::InactiveFile).unwrap();
        assert!(pages.contains(&tail), "{kernel}: the next reclaim takes them first");
        k.mm.check_invariants().unwrap();
    }
}

#[test]
fn dirty_active_pages_are_deactivated_with_pg_reclaim_and_rotated_when_written() {
    // A written file, active (read twice), then POSIX_FADV_DONTNEED: writeback starts, no
    // page can go; each is deactivated (PGDEACTIVATE) to the inactive head with
    // PG_reclaim; the end of its writeback rotates it to the tail (PGROTATED) through the
    // rotate batch. Every page is counted once for each.
    for kernel in ["linux-6.x", "linux-5.4"] {
        let mut k = boot_era(kernel, 2);
        let npages = 64u64;
        let (mut fd, mut written, mut phase) = (None, 0u64, 0);
        let counts = std::rc::Rc::new(std::cell::Cell::new((0u64, 0u64)));
        let c2 = counts.clone();
        let t = common::spawn(&mut k, move |k, me| {
            let f = *fd.get_or_insert_with(|| k.sys_open(me, "/root/d", OpenFlags { read: true, write: true, create: true, ..Default::default() }).unwrap().0);
            if written < npages * 4096 {
                let r = k.sys_write(me, f, npages * 4096 - written).unwrap();
                written += r.bytes;
                return Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }));
            }
            phase += 1;
            match phase {
                1 => {
                    // Make every page active: the page is on the LRU (batches drained).
                    k.lru_add_drain_all();
                    let ino = k.fs.lookup("/root/d").unwrap();
                    let m = k.fs.inodes[ino as usize].mapping;
                    for i in 0..npages {
                        let p = k.mm.page(m, i).unwrap();
                        k.mark_page_accessed(p);
                        k.mark_page_accessed(p);
                    }
                    k.lru_add_drain();
                    c2.set((k.vm.get(VmItem::Pgdeactivate), k.vm.get(VmItem::Pgrotated)));
                    k.sys_fadvise_dontneed(me, f).unwrap();
                    Some(Step::SleepUntil { t: k.now + 5 * NS_PER_SEC, io: false })
                }
                _ => None,
            }
        });
        common::run(&mut k, &[t]);
        k.lru_add_drain_all();
        let (deact0, rot0) = counts.get();
        assert_eq!(k.vm.get(VmItem::Pgdeactivate) - deact0, npages, "{kernel}");
        assert_eq!(k.vm.get(VmItem::Pgrotated) - rot0, npages, "{kernel}");
        k.mm.check_invariants().unwrap();
    }
}

#[test]
fn madv_cold_deactivates_through_its_batch_from_5_4_on() {
    for (kernel, has) in [("linux-6.x", true), ("linux-5.4", true), ("linux-2.6.39", false)] {
        let mut k = boot_era(kernel, 2);
        on_cpu(&mut k, 0);
        let (_, pages) = listed_file_pages(&mut k, 3);
        for &p in &pages {
            access_twice(&mut k, p);
        }
        k.lru_add_drain();
        let d0 = k.vm.get(VmItem::Pgdeactivate);
        for &p in &pages {
            k.deactivate_page(p);
        }
        assert_eq!(k.mm.lru_move.count(0, MoveKind::Deactivate), 3 * has as usize, "{kernel}");
        k.lru_add_drain();
        let want = if has { Lru::InactiveFile } else { Lru::ActiveFile };
        assert!(pages.iter().all(|&p| k.mm.pages.lru(p) == want), "{kernel}");
        assert_eq!(k.vm.get(VmItem::Pgdeactivate) - d0, 3 * has as u64, "{kernel}");
    }
}

#[test]
fn a_task_calling_lru_add_drain_all_sleeps_in_flush_work() {
    let mut k = boot_era("linux-5.4", 4);
    let (_, pages) = listed_file_pages(&mut k, 4);
    on_cpu(&mut k, 2);
    for &p in &pages {
        access_twice(&mut k, p);
    }
    k.current = None;
    let mut seen = None;
    let mut called = false;
    let t = common::spawn(&mut k, move |k, _me| {
        if !called {
            called = true;
            k.lru_add_drain_all();
            return Some(Step::Yield);
        }
        None
    });
    // The task makes its call and yields: it sleeps until the work queued on CPU 2 is done
    // (no CPU work of its own to do first).
    let limit = k.now + NS_PER_SEC;
    k.run_until(limit, &mut |k| {
        if let Some(w) = k.waits.get(t) {
            seen = Some(w.on);
        }
        k.task_exited(t)
    });
    assert!(matches!(seen, Some(WaitOn::FlushWork { .. })), "flush_work: {seen:?}");
    assert!(pages.iter().all(|&p| k.mm.pages.lru(p) == Lru::ActiveFile), "CPU 2's work moved its batch");
    assert!(k.task_exited(t));
}
