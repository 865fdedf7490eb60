//! Per-CPU LRU-add batches by era (mm/swap.c): a new page waits in its CPU's batch (off
//! every list) until the batch is full or drained; what that means for meminfo, reclaim,
//! activation, truncation and drop_caches.

use memtwin_kernel::mm::page::Lru;
use memtwin_kernel::mm::vmscan::ScanControl;
use memtwin_kernel::mm::MappingKind;
use memtwin_kernel::{Kernel, Program, Sink, Step, TaskId};

fn boot(kernel: &str) -> Kernel {
    let mut m = memtwin_machine::preset("seed-000").expect("preset");
    memtwin_machine::apply_set(&mut m, "cpus=4").unwrap();
    memtwin_machine::apply_set(&mut m, &format!("kernel={kernel}")).unwrap();
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

struct Idle;
impl Program for Idle {
    fn step(&mut self, _: &mut Kernel, _: TaskId) -> Step {
        Step::Block { io: false }
    }
}

/// Kernel work runs as a task on `cpu` from now on (`Kernel::current`).
fn on_cpu(k: &mut Kernel, cpu: u32) {
    let t = k.spawn("worker", "worker", Box::new(Idle), Sink::Null, Sink::Null);
    k.sched.tasks[t as usize].cpu = cpu;
    k.current = Some(t);
}

/// `n` new clean pages of a fresh file; returns (mapping, pages).
fn add_file_pages(k: &mut Kernel, n: u64) -> (u32, Vec<u32>) {
    let m = k.mm.new_mapping(MappingKind::File, None, 0);
    let pages = (0..n)
        .map(|i| {
            let p = k.mm.take_free().unwrap();
            k.filemap_add_page(m, i, p, false);
            p
        })
        .collect();
    (m, pages)
}

fn file_lru(k: &Kernel) -> u64 {
    k.mm.lru_len(Lru::InactiveFile) + k.mm.lru_len(Lru::ActiveFile)
}

#[test]
fn pages_wait_in_the_batch_of_their_era_and_are_not_on_the_lru() {
    for (kernel, size) in [("linux-6.x", 15u64), ("linux-5.4", 15), ("linux-2.6.39", 14), ("linux-2.4", 0)] {
        let mut k = boot(kernel);
        on_cpu(&mut k, 1);
        let (lru0, cached0) = (file_lru(&k), k.meminfo().cached);
        add_file_pages(&mut k, 20);
        let waiting = if size == 0 { 0 } else { 20 % size };
        assert_eq!(k.mm.lru_add.total, waiting, "{kernel}: pages left in the batch");
        assert_eq!(k.mm.lru_add.count(1), waiting, "{kernel}: in CPU 1's batch");
        // In Cached (NR_FILE_PAGES), not in Active(file) + Inactive(file).
        assert_eq!(k.meminfo().cached - cached0, 20 * 4, "{kernel}");
        assert_eq!(file_lru(&k) - lru0, 20 - waiting, "{kernel}");
        k.mm.check_invariants().unwrap();
        k.mm.check_index().unwrap();
        k.lru_add_drain();
        assert_eq!(k.mm.lru_add.total, 0);
        assert_eq!(file_lru(&k) - lru0, 20, "{kernel}: the drain put them on the list");
    }
}

#[test]
fn reclaim_cannot_isolate_a_page_of_another_cpus_batch_and_drains_its_own() {
    let mut k = boot("linux-6.x");
    on_cpu(&mut k, 2);
    let (_, pages) = add_file_pages(&mut k, 10);
    assert!(pages.iter().all(|&p| k.mm.pages.batched(p)));
    // The reclaimer runs on CPU 0: lru_add_drain drains CPU 0's batch, not CPU 2's.
    k.current = None;
    let mut sc = ScanControl { nr_to_reclaim: 32, ..Default::default() };
    let inactive = k.mm.lru_len(Lru::InactiveFile);
    let reclaimed = k.shrink_inactive_list(0, inactive + 10, Lru::InactiveFile, &mut sc);
    assert!(pages.iter().all(|&p| k.mm.pages.batched(p)), "still waiting, never isolated");
    assert!(reclaimed <= inactive);
    // From CPU 2 the same reclaim drains them first and can take them.
    on_cpu(&mut k, 2);
    let mut sc = ScanControl { nr_to_reclaim: 32, ..Default::default() };
    k.shrink_inactive_list(0, 10, Lru::InactiveFile, &mut sc);
    assert_eq!(k.mm.lru_add.total, 0);
    assert!(pages.iter().all(|&p| !k.mm.pages.batched(p)));
    k.mm.check_invariants().unwrap();
}

#[test]
fn a_second_access_in_the_batch_activates_since_3_12() {
    for (kernel, activates) in [("linux-6.x", true), ("linux-5.4", true), ("linux-2.6.39", false)] {
        let mut k = boot(kernel);
        on_cpu(&mut k, 1);
        let (_, pages) = add_file_pages(&mut k, 3);
        let p = pages[1];
        k.mark_page_accessed(p);
        k.mark_page_accessed(p);
        let pgactivate = k.vm.get(memtwin_procfs::VmItem::Pgactivate);
        k.lru_add_drain();
        assert_eq!(k.mm.pages.lru(p) == Lru::ActiveFile, activates, "{kernel}");
        assert_eq!(k.mm.pages.lru(pages[0]), Lru::InactiveFile, "{kernel}");
        assert_eq!(k.vm.get(memtwin_procfs::VmItem::Pgactivate), pgactivate, "{kernel}: no PGACTIVATE for a batched page");
    }
    // From another CPU the page is not found in the local batch: it only loses
    // PG_referenced (__lru_cache_activate_folio searches this CPU's batch only).
    let mut k = boot("linux-6.x");
    on_cpu(&mut k, 1);
    let (_, pages) = add_file_pages(&mut k, 3);
    k.mark_page_accessed(pages[0]);
    on_cpu(&mut k, 3);
    k.mark_page_accessed(pages[0]);
    k.lru_add_drain_all();
    assert_eq!(k.mm.pages.lru(pages[0]), Lru::InactiveFile);
    assert!(!k.mm.pages.referenced(pages[0]));
}

#[test]
fn a_page_truncated_in_the_batch_is_freed_when_the_batch_drains() {
    let mut k = boot("linux-6.x");
    on_cpu(&mut k, 1);
    let frames = k.mm.nr_free_frames();
    let (m, _) = add_file_pages(&mut k, 5);
    k.truncate_mapping(m, 0);
    assert_eq!(k.mm.mappings[m as usize].nrpages, 0);
    assert_eq!(k.mm.nr_free_frames(), frames - 5, "the batch still holds the frames");
    k.mm.check_invariants().unwrap();
    k.lru_add_drain();
    assert_eq!(k.mm.nr_free_frames(), frames, "freed with the batch's reference");
    k.mm.check_invariants().unwrap();
}

#[test]
fn drop_caches_drains_the_batches_on_6_x_only() {
    for (kernel, dropped_all) in [("linux-6.x", true), ("linux-5.4", false)] {
        let mut k = boot(kernel);
        on_cpu(&mut k, 1);
        let (m, _) = add_file_pages(&mut k, 20);
        k.current = None;
        k.drop_caches(1);
        let left = k.mm.mappings[m as usize].nrpages;
        if dropped_all {
            assert_eq!(left, 0, "{kernel}: lru_add_drain_all first");
        } else {
            assert_eq!(left, 5, "{kernel}: the pages still in CPU 1's batch stay cached");
        }
    }
}
