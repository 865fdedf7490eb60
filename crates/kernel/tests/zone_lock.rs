//! The zone lock and the per-CPU page lists: tasks on many CPUs that allocate at once queue
//! on zone->lock when their CPU's list is refilled (rmqueue_bulk), and pages on the lists
//! are free but not in NR_FREE_PAGES. Shapes only, no timed assertions.

use memtwin_kernel::{Kernel, Program, Sink, Step, TaskId, NS_PER_SEC};

/// A 32-CPU machine with memory to spare: no reclaim, only the allocator.
fn machine(kernel: &str) -> Kernel {
    let mut m = memtwin_machine::preset("seed-000").expect("preset");
    memtwin_machine::apply_set(&mut m, "cpus=32").unwrap();
    memtwin_machine::apply_set(&mut m, "ram=4G").unwrap();
    memtwin_machine::apply_set(&mut m, &format!("kernel={kernel}")).unwrap();
    m.swaps.clear();
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

/// `n` tasks fault in 8 MiB of anonymous memory each, 16 pages per step, then sleep until
/// all have finished (so none frees its memory while others allocate).
fn allocate_concurrently(k: &mut Kernel, n: usize) -> Vec<TaskId> {
    let pages = 8 << 8;
    let tids: Vec<TaskId> = (0..n)
        .map(|_| {
            let mut done = 0u64;
            k.spawn(
                "alloc",
                "alloc",
                Box::new(Script(move |k: &mut Kernel, me| {
                    if done >= pages {
                        return Some(Step::Block { io: false });
                    }
                    match k.fault_anon_pages(me, done, 16) {
                        Ok(d) => {
                            done += d;
                            Some(Step::Cpu { user: 500, sys: 0 })
                        }
                        Err((d, s)) => {
                            done += d;
                            Some(s)
                        }
                    }
                })),
                Sink::Null,
                Sink::Null,
            )
        })
        .collect();
    let want = pages;
    let limit = k.now + 60 * NS_PER_SEC;
    k.run_until(limit, &mut |k| tids.iter().all(|&t| k.tasks[t as usize].rss_anon >= want));
    assert!(tids.iter().all(|&t| k.tasks[t as usize].rss_anon >= want), "every allocator finished");
    tids
}

#[test]
fn zone_lock_waits_grow_with_the_number_of_cpus_allocating() {
    let mut rows = Vec::new();
    for n in [1usize, 4, 16, 32] {
        let mut k = machine("linux-5.8");
        let before = k.mm.pcp.zone_lock.clone();
        let tids = allocate_concurrently(&mut k, n);
        let l = &k.mm.pcp.zone_lock;
        let acq = l.acquisitions - before.acquisitions;
        let wait = l.wait_ns - before.wait_ns;
        let per_task: u64 = tids.iter().map(|&t| k.tasks[t as usize].lock_wait_ns).sum();
        eprintln!("N={n:2}: zone->lock {acq} acquisitions, {} contended, mean wait {:.0} ns, tasks' spin {per_task} ns", l.contended - before.contended, wait as f64 / acq as f64);
        // One refill of a batch per `batch` pages each task takes: the lock is taken per
        // batch, not per page.
        let pages = n as u64 * (8 << 8);
        assert!(acq <= pages / k.mm.pcp.batch as u64 + 2 * n as u64 + 64, "N={n}: {acq} acquisitions for {pages} pages");
        assert!(acq >= pages / k.mm.pcp.batch as u64, "N={n}: {acq} acquisitions for {pages} pages");
        rows.push((n, wait as f64 / acq as f64, per_task));
    }
    assert_eq!(rows[0].2, 0, "a lone allocator never waits");
    for w in rows.windows(2) {
        let ((n0, w0, _), (n1, w1, _)) = (w[0], w[1]);
        assert!(w1 > w0, "mean zone->lock wait N={n0}: {w0:.0} ns, N={n1}: {w1:.0} ns");
    }
    assert!(rows[3].2 > 0, "32 allocators spin on zone->lock");
}

#[test]
fn pages_on_cpu_lists_are_free_but_not_in_nr_free_pages() {
    for kernel in ["linux-6.x", "linux-5.8", "linux-2.6.39"] {
        let mut k = machine(kernel);
        let frames0 = k.mm.nr_free_frames();
        let tids = allocate_concurrently(&mut k, 4);
        // Each allocating CPU holds part of a batch on its lists (one per migrate type: the
        // tasks' page tables and slab pages come through them too).
        let lists = memtwin_kernel::mm::pcp::MIGRATE_PCPTYPES as u64;
        assert!(k.mm.pcp.total > 0 && k.mm.pcp.total < 4 * lists * k.mm.pcp.batch as u64, "{kernel}: {}", k.mm.pcp.total);
        assert_eq!(k.mm.nr_free() + k.mm.pcp.total, k.mm.nr_free_frames());
        // The tasks exit: their pages go to their CPUs' lists, a full list gives batches back.
        for &t in &tids {
            k.kill(t, 0);
        }
        let limit = k.now + NS_PER_SEC;
        k.run_until(limit, &mut |_| false);
        assert_eq!(k.mm.nr_free_frames(), frames0, "{kernel}: every frame came back");
        let high = k.mm.pcp.high as u64;
        for (cpu, &c) in k.mm.pcp.count.iter().enumerate() {
            assert!((c as u64) < high, "{kernel}: cpu {cpu} holds {c} >= high {high}");
        }
        assert!(k.mm.pcp.total > 0, "{kernel}: the freeing CPUs keep pages on their lists");
        assert_eq!(k.meminfo().mem_free, k.mm.nr_free() * 4, "{kernel}: MemFree is NR_FREE_PAGES");
        assert!(k.mm.nr_free() < frames0, "{kernel}: the listed pages are missing from MemFree");
        // drain_all_pages gives them all back.
        k.drain_all_pages();
        assert_eq!(k.mm.pcp.total, 0);
        assert_eq!(k.mm.nr_free(), frames0);
    }
}

#[test]
fn without_per_cpu_lists_every_page_takes_the_zone_lock() {
    let mut k = machine("linux-2.4");
    assert!(!k.mm.pcp.enabled());
    let before = k.mm.pcp.zone_lock.acquisitions;
    allocate_concurrently(&mut k, 4);
    let acq = k.mm.pcp.zone_lock.acquisitions - before;
    assert!(acq >= 4 * (8 << 8), "{acq} acquisitions");
    assert_eq!(k.mm.pcp.total, 0);
}
