//! Reclaim paths that wait in simulated time: concurrent direct reclaimers queue on the
//! lruvec's lru_lock, and too_many_isolated throttles them. Shapes only (directions), no
//! timed assertions: the numbers come from the queueing of the paths, not from constants.

use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::{Kernel, Program, Sink, Step, TaskId, NS_PER_SEC};
use memtwin_procfs::VmItem;

/// A 32-CPU machine with little RAM and no swap: reclaim can only drop clean page cache.
fn machine() -> Kernel {
    let mut m = memtwin_machine::preset("seed-000").expect("preset");
    memtwin_machine::apply_set(&mut m, "cpus=32").unwrap();
    memtwin_machine::apply_set(&mut m, "ram=384M").unwrap();
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

/// Fill most of memory with clean page cache (a file written and synced).
fn fill_with_clean_cache(k: &mut Kernel) {
    // Leave free a little more than the high watermark.
    let mb = (k.mm.nr_free() - k.mm.wmark.high - 1024) * 4096 / (1 << 20);
    let mut fd = None;
    let mut left = mb << 20;
    let t = k.spawn(
        "dd",
        "dd",
        Box::new(Script(move |k: &mut Kernel, me| {
            let f = *fd.get_or_insert_with(|| k.sys_open(me, "/root/cache", OpenFlags { write: true, create: true, trunc: true, ..Default::default() }).unwrap().0);
            if left == 0 {
                k.sys_close(me, f).unwrap();
                return None;
            }
            let r = k.sys_write(me, f, left.min(1 << 20)).unwrap();
            left -= r.bytes;
            Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
        })),
        Sink::Null,
        Sink::Null,
    );
    let limit = k.now + 600 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.task_exited(t));
    k.request_sync();
    let limit = k.now + 600 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.mm.stat.dirty + k.mm.stat.writeback == 0);
    assert_eq!(k.mm.stat.dirty + k.mm.stat.writeback, 0);
}

/// `n` tasks fault in anonymous memory at once, 16 MiB each, 64 pages per step.
fn allocate_concurrently(k: &mut Kernel, n: usize) -> Vec<TaskId> {
    let pages = 16 << 8;
    let tids: Vec<TaskId> = (0..n)
        .map(|_| {
            let mut done = 0u64;
            k.spawn(
                "alloc",
                "alloc",
                Box::new(Script(move |k: &mut Kernel, me| {
                    if done >= pages {
                        return None;
                    }
                    match k.fault_anon_pages(me, done, 64) {
                        Ok(d) => {
                            done += d;
                            Some(Step::Cpu { user: 1000, sys: 0 })
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
    let limit = k.now + 600 * NS_PER_SEC;
    k.run_until(limit, &mut |k| tids.iter().all(|&t| k.task_exited(t)));
    assert!(tids.iter().all(|&t| k.task_exited(t)), "allocators finished");
    tids
}

/// Mean direct-reclaim latency and lock wait per invocation, the invocations, and the
/// allocators' mean lock wait per task (zone->lock and lru_lock, in reclaim or not).
fn run(n: usize) -> (f64, f64, u64, f64, Kernel) {
    let mut k = machine();
    fill_with_clean_cache(&mut k);
    let stalls0 = k.vm.get(VmItem::AllocstallNormal);
    let tids = allocate_concurrently(&mut k, n);
    let task_wait = tids.iter().map(|&t| k.tasks[t as usize].lock_wait_ns).sum::<u64>() as f64 / n as f64;
    // kswapd may be in the middle of a batch: let it finish.
    let limit = k.now + NS_PER_SEC;
    k.run_until(limit, &mut |k| k.mm.isolated() == 0);
    assert_eq!(k.mm.isolated(), 0, "every isolated page was put back or freed");
    let lat = k.reclaim.stats.latency(false);
    let wait = k.reclaim.stats.lock_wait(false);
    assert_eq!(lat.count, k.vm.get(VmItem::AllocstallNormal) - stalls0, "one record per try_to_free_pages");
    (lat.mean_ns, wait.mean_ns, lat.count, task_wait, k)
}

#[test]
fn direct_reclaim_latency_and_lock_wait_grow_with_concurrent_reclaimers() {
    let mut rows = Vec::new();
    for n in [1usize, 4, 16, 32] {
        let (lat, wait, count, task_wait, k) = run(n);
        let lock = k.reclaim.lru_locks.first().cloned().unwrap_or_default();
        let zone = &k.mm.pcp.zone_lock;
        eprintln!(
            "N={n:2}: {count} direct reclaims, mean latency {lat:.0} ns, mean lock wait {wait:.0} ns, lru_lock contended {} of {}, zone->lock contended {} of {}, lock wait per allocator {task_wait:.0} ns",
            lock.contended, lock.acquisitions, zone.contended, zone.acquisitions
        );
        rows.push((n, lat, wait, count, task_wait));
    }
    // Many reclaimers at once do enter direct reclaim.
    for &(n, _, _, count, _) in &rows[1..] {
        assert!(count > 0, "N={n}: no direct reclaim");
    }
    // Lock wait and latency per invocation grow with the number of concurrent reclaimers
    // while reclaim is what they queue for (4 -> 16).
    let ((n0, l0, w0, _, _), (n1, l1, w1, _, _)) = (rows[1], rows[2]);
    assert!(w1 > w0, "lock wait N={n0}: {w0:.0} ns, N={n1}: {w1:.0} ns");
    assert!(l1 > l0, "latency N={n0}: {l0:.0} ns, N={n1}: {l1:.0} ns");
    // Each allocator's lock waits (zone->lock refilling its CPU's page list, lru_lock in
    // reclaim) grow with N all the way. At 32 CPUs zone->lock is the queue: the batch of
    // this small machine's zone (zone_batchsize) is refilled by every CPU every few
    // microseconds, which spaces the allocators' arrivals in reclaim.
    for w in rows[1..].windows(2) {
        let ((n0, .., t0), (n1, .., t1)) = (w[0], w[1]);
        assert!(t1 > t0, "lock wait per allocator N={n0}: {t0:.0} ns, N={n1}: {t1:.0} ns");
    }
    assert!(rows[3].4 > 4.0 * rows[1].4.max(1.0), "32 allocators wait much longer than 4");
}

/// too_many_isolated: a direct reclaimer that finds more pages isolated than left on the
/// inactive list sleeps (5.16+: reclaim_throttle, at most HZ/50; 4.14 .. 5.15: msleep(100))
/// and then goes on with the same reclaim: one allocstall, one latency record that
/// includes the sleep. kswapd is never throttled there.
#[test]
fn too_many_isolated_throttles_direct_reclaim_and_the_path_resumes() {
    use memtwin_kernel::mm::vmscan::{RState, ScanControl};
    for (profile, sleep_ms) in [("linux-6.x", 20u64), ("linux-5.4", 100)] {
        let mut k = machine();
        let mut m = k.machine.clone();
        memtwin_machine::apply_set(&mut m, &format!("kernel={profile}")).unwrap();
        k = Kernel::boot(m, 1).unwrap();
        fill_with_clean_cache(&mut k);
        let direct = ScanControl::default();
        let kswapd = ScanControl { kswapd: true, ..Default::default() };
        assert!(!k.too_many_isolated(true, &direct));
        // Other reclaimers hold more file pages isolated than the inactive list has left.
        let inactive = k.mm.lru_len(memtwin_kernel::mm::page::Lru::InactiveFile);
        k.mm.stat.isolated_file = inactive + 1;
        assert!(k.too_many_isolated(true, &direct));
        assert!(!k.too_many_isolated(true, &kswapd), "kswapd is never throttled here");
        let stalls0 = k.vm.get(VmItem::AllocstallNormal);
        let mut started = false;
        let t = k.spawn(
            "reclaimer",
            "reclaimer",
            Box::new(Script(move |k: &mut Kernel, me| {
                if !started {
                    started = true;
                    k.vm.inc(VmItem::AllocstallNormal);
                    k.start_direct_reclaim(me);
                    return Some(Step::Yield);
                }
                let done = k.reclaim.take_done(me).expect("the program runs again once the path is done");
                assert!(done.sc.nr_reclaimed > 0);
                None
            })),
            Sink::Null,
            Sink::Null,
        );
        let t0 = k.now;
        let limit = k.now + NS_PER_SEC;
        k.run_until(limit, &mut |k| k.reclaim.paths.get(t as usize).and_then(|p| p.as_ref()).is_some_and(|p| p.state == RState::ThrottleIsolated));
        assert_eq!(k.sched.tasks[t as usize].state, memtwin_engine::RunState::Sleeping, "{profile}: asleep in too_many_isolated");
        // The other reclaimers put their pages back; the sleeper finds isolation low.
        k.mm.stat.isolated_file = 0;
        let limit = k.now + NS_PER_SEC;
        k.run_until(limit, &mut |k| k.task_exited(t));
        assert!(k.task_exited(t), "{profile}: resumed and finished");
        assert_eq!(k.vm.get(VmItem::AllocstallNormal) - stalls0, 1);
        let lat = k.reclaim.stats.latency(false);
        assert_eq!(lat.count, 1);
        assert!(lat.max_ns >= sleep_ms * 1_000_000, "{profile}: the sleep is part of the latency ({} ns)", lat.max_ns);
        assert!(lat.max_ns < (sleep_ms + 10) * 1_000_000 && k.now - t0 >= sleep_ms * 1_000_000);
    }
}
