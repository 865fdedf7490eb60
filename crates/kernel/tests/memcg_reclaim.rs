//! Memory-cgroup limit reclaim in simulated time: tasks of one cgroup at its memory.max
//! each reclaim the cgroup's lruvec (try_to_free_mem_cgroup_pages) as a path that takes its
//! lru_lock, and they queue on it. Shapes only (directions), no timed assertions: the
//! figures come from the queueing of the paths, not from constants.

use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::{Kernel, Program, Sink, Step, TaskId, NS_PER_SEC};
use memtwin_procfs::VmItem;

/// A 32-CPU machine with memory to spare (no global reclaim), no swap and a RAM disk:
/// the readers spend their time on the CPU (copies, reclaim), not waiting for reads.
fn machine(kernel: &str) -> Kernel {
    let mut m = memtwin_machine::preset("seed-000").expect("preset");
    let disk = m.disks[0].name.clone();
    memtwin_machine::apply_set(&mut m, &format!("disk.{disk}.preset=ramdisk")).unwrap();
    memtwin_machine::apply_set(&mut m, "cpus=32").unwrap();
    memtwin_machine::apply_set(&mut m, "ram=2G").unwrap();
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

fn run_all(k: &mut Kernel, tids: &[TaskId]) {
    let limit = k.now + 1200 * NS_PER_SEC;
    k.run_until(limit, &mut |k| tids.iter().all(|&t| k.task_exited(t)));
    assert!(tids.iter().all(|&t| k.task_exited(t)), "the tasks finished");
}

/// `n` files of `mb` MiB written, synced and dropped from the cache: on disk only.
fn files_on_disk(k: &mut Kernel, n: usize, mb: u64) {
    let tids: Vec<TaskId> = (0..n)
        .map(|i| {
            let mut fd = None;
            let mut left = mb << 20;
            k.spawn(
                "dd",
                "dd",
                Box::new(Script(move |k: &mut Kernel, me| {
                    let f = *fd.get_or_insert_with(|| k.sys_open(me, &format!("/root/f{i}"), OpenFlags { write: true, create: true, trunc: true, ..Default::default() }).unwrap().0);
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
            )
        })
        .collect();
    run_all(k, &tids);
    k.request_sync();
    let limit = k.now + 600 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.mm.stat.dirty + k.mm.stat.writeback == 0);
    k.drop_caches(1);
}

/// A cgroup `box` with memory.max = `max_mb` MiB; its id.
fn cgroup(k: &mut Kernel, max_mb: u64) -> u16 {
    let root = k.cgroup_mount().unwrap();
    k.cgroup_mkdir(&format!("{root}/box")).unwrap();
    let (id, _) = k.cgroup_resolve(&format!("{root}/box")).unwrap();
    k.memcg.cgs[id as usize].memory.max = max_mb << 8;
    id
}

/// `n` tasks of cgroup `id` read file i each, 1 MiB a call, at once.
fn read_concurrently(k: &mut Kernel, id: u16, n: usize) -> Vec<TaskId> {
    let tids: Vec<TaskId> = (0..n)
        .map(|i| {
            let mut fd = None;
            let t = k.spawn(
                "reader",
                "reader",
                Box::new(Script(move |k: &mut Kernel, me| {
                    let f = *fd.get_or_insert_with(|| k.sys_open(me, &format!("/root/f{i}"), OpenFlags::default()).unwrap().0);
                    let r = k.sys_read(me, f, 1 << 20).unwrap();
                    if r.eof || (r.bytes == 0 && r.wait.is_none()) {
                        k.sys_close(me, f).unwrap();
                        return None;
                    }
                    Some(r.wait.unwrap_or(Step::Cpu { user: 1000, sys: 0 }))
                })),
                Sink::Null,
                Sink::Null,
            );
            k.cgroup_attach(t, id).unwrap();
            t
        })
        .collect();
    run_all(k, &tids);
    tids
}

struct Row {
    n: usize,
    count: u64,
    latency: f64,
    p99: u64,
    wait: f64,
    contended: u64,
    /// Mean wait per acquisition of the cgroup's lru_lock itself.
    lru_wait: f64,
}

fn run(kernel: &str, n: usize) -> Row {
    let mut k = machine(kernel);
    files_on_disk(&mut k, n, 16);
    let id = cgroup(&mut k, 8);
    let pgscan_direct = k.vm.get(VmItem::PgscanDirect);
    let stalls = k.vm.get(VmItem::AllocstallNormal);
    let lv = k.memcg.cgs[id as usize].lruvec;
    let lock = if k.profile.lru_lock_per_lruvec {
        lv as usize
    } else {
        0
    };
    let lru_before = k
        .reclaim
        .lru_locks
        .get(lock)
        .map_or((0, 0), |l| (l.wait_ns, l.acquisitions));
    read_concurrently(&mut k, id, n);
    let c = &k.memcg.cgs[id as usize];
    assert!(c.memory.usage <= c.memory.max, "the limit holds");
    assert!(c.vm.pgsteal_direct > 0, "{kernel} N={n}: the cgroup reclaimed its own pages");
    assert_eq!(k.vm.get(VmItem::PgscanDirect), pgscan_direct, "{kernel}: cgroup reclaim counts in the cgroup only");
    assert_eq!(k.vm.get(VmItem::AllocstallNormal), stalls, "{kernel}: no global direct reclaim");
    assert_eq!(k.mm.isolated(), 0);
    let lat = k.reclaim.stats.memcg_latency();
    let wait = k.reclaim.stats.memcg_lock_wait();
    let contended = k.reclaim.lru_locks.get(lock).map_or(0, |l| l.contended);
    let lru_wait = k.reclaim.lru_locks.get(lock).map_or(0.0, |l| {
        (l.wait_ns - lru_before.0) as f64 / (l.acquisitions - lru_before.1).max(1) as f64
    });
    eprintln!(
        "{kernel} N={n:2}: {} cgroup reclaims, mean latency {:.0} ns, p99 {} ns, mean lock wait {:.0} ns, lru_lock contended {contended}, mean lru_lock wait {lru_wait:.0} ns",
        lat.count, lat.mean_ns, lat.p99_ns, wait.mean_ns
    );
    Row {
        n,
        count: lat.count,
        latency: lat.mean_ns,
        p99: lat.p99_ns,
        wait: wait.mean_ns,
        contended,
        lru_wait,
    }
}

#[test]
fn cgroup_reclaim_latency_and_lock_wait_grow_with_tasks_at_the_limit() {
    for kernel in ["linux-6.x", "linux-5.4"] {
        let rows: Vec<Row> = [1usize, 4, 16].into_iter().map(|n| run(kernel, n)).collect();
        for r in &rows {
            assert!(r.count > 0, "{kernel} N={}: cgroup reclaim ran", r.n);
        }
        assert_eq!(
            rows[0].wait, 0.0,
            "{kernel}: a lone reclaimer never waits for lru_lock"
        );
        // The reclaims' lock wait also holds their waits for the page-index locks of the
        // files whose pages they free (each reader's own file: that contention does not
        // grow with N). The lock all of them share is the cgroup's lru_lock.
        for r in &rows[1..] {
            assert!(
                r.wait > 0.0,
                "{kernel} N={}: reclaimers at the limit wait for locks",
                r.n
            );
        }
        for w in rows.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            assert!(
                b.lru_wait > a.lru_wait,
                "{kernel}: lru_lock wait N={}: {:.0} ns, N={}: {:.0} ns",
                a.n,
                a.lru_wait,
                b.n,
                b.lru_wait
            );
            assert!(
                b.contended > a.contended,
                "{kernel}: lru_lock contention N={} vs N={}",
                a.n,
                b.n
            );
        }
        // A reclaim's latency is its list work plus its lock wait. The work per reclaim
        // depends on which pages each pass meets (the tasks' pages interleave on the list
        // differently for each N, and N files' page-cache tree nodes take N times the
        // cgroup's kernel memory), so the mean moves either way by several per cent; the
        // slowest reclaims are those that waited: with others at the limit, the p99 is
        // above the lone reclaimer's.
        for r in &rows[1..] {
            assert!(r.p99 > rows[0].p99, "{kernel}: p99 latency N=1: {} ns, N={}: {} ns (means {:.0} and {:.0} ns)", rows[0].p99, r.n, r.p99, rows[0].latency, r.latency);
        }
    }
}
