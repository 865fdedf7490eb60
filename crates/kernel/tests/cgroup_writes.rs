//! Writes to cgroup files that reclaim run as kernel paths of the writing task
//! (memory_max_write, memory_high_write, memory_reclaim, mem_cgroup_resize_max,
//! mem_cgroup_force_empty): each round of try_to_free_mem_cgroup_pages is a reclaim path in
//! simulated time that takes lru_lock; and 2.6.39's limit reclaim of one victim at a time
//! (mem_cgroup_hierarchical_reclaim, mem_cgroup_select_victim). Shapes only.

mod common;

use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::{Kernel, Step, TaskId, NS_PER_SEC};

/// A machine with memory to spare, a RAM disk and no swap, on era `kernel`.
fn machine(kernel: &str) -> Kernel {
    let mut m = memtwin_machine::preset("seed-000").expect("preset");
    let disk = m.disks[0].name.clone();
    memtwin_machine::apply_set(&mut m, &format!("disk.{disk}.preset=ramdisk")).unwrap();
    memtwin_machine::apply_set(&mut m, "cpus=4").unwrap();
    memtwin_machine::apply_set(&mut m, "ram=2G").unwrap();
    memtwin_machine::apply_set(&mut m, &format!("kernel={kernel}")).unwrap();
    m.swaps.clear();
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

/// Cgroup `path` below the hierarchy's root (parents first); its id.
fn mkdir(k: &mut Kernel, path: &str) -> u16 {
    let root = k.cgroup_mount().unwrap();
    let p = format!("{root}/{path}");
    k.cgroup_mkdir(&p).unwrap();
    if k.memcg.mode == memtwin_kernel::mm::memcontrol::CgroupMode::V2 {
        // Give the children the memory controller.
        let parent = p.rsplit_once('/').map(|(a, _)| a.to_string()).unwrap();
        let _ = k.cgroup_write(0, &format!("{parent}/cgroup.subtree_control"), "+memory");
    }
    k.cgroup_resolve(&p).unwrap().0
}

/// A task of cgroup `id` writes `mb` MiB to file `name` and syncs it: its page cache is
/// charged to the cgroup.
fn fill(k: &mut Kernel, id: u16, name: &str, mb: u64) {
    let (mut fd, mut left, name) = (None, mb << 20, name.to_string());
    let t = common::spawn(k, move |k, me| {
        let f = *fd.get_or_insert_with(|| k.sys_open(me, &name, OpenFlags { write: true, create: true, ..Default::default() }).unwrap().0);
        if left == 0 {
            k.sys_close(me, f).unwrap();
            return None;
        }
        let r = k.sys_write(me, f, left.min(1 << 20)).unwrap();
        left -= r.bytes;
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    });
    k.cgroup_attach(t, id).unwrap();
    common::run(k, &[t]);
    k.request_sync();
    let limit = k.now + 600 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.mm.stat.dirty + k.mm.stat.writeback == 0);
    k.lru_add_drain_all();
    // Past the drain's lock holds.
    let quiet = k.now + NS_PER_SEC / 100;
    k.run_until(quiet, &mut |_| false);
}

/// A task writing `value` to `file` of the cgroup at `path` as `echo` does; (task, steps
/// the write returned to wait in, result).
fn writer(k: &mut Kernel, path: &str, file: &str, value: &str) -> (TaskId, std::rc::Rc<std::cell::Cell<(u32, Option<bool>)>>) {
    let root = k.cgroup_mount().unwrap();
    let (f, v) = (format!("{root}/{path}/{file}"), value.to_string());
    let out = std::rc::Rc::new(std::cell::Cell::new((0u32, None)));
    let o = out.clone();
    let t = common::spawn(k, move |k, me| match k.cgroup_write_timed(me, &f, &v) {
        Ok(Some(step)) => {
            o.set((o.get().0 + 1, None));
            Some(step)
        }
        Ok(None) => {
            o.set((o.get().0, Some(true)));
            None
        }
        Err(_) => {
            o.set((o.get().0, Some(false)));
            None
        }
    });
    (t, out)
}

#[test]
fn lowering_memory_max_reclaims_in_the_writers_simulated_time() {
    for kernel in ["linux-6.x", "linux-5.4"] {
        let mut k = machine(kernel);
        let id = mkdir(&mut k, "box");
        fill(&mut k, id, "/root/f", 32);
        let before = k.memcg.cgs[id as usize].memory.usage;
        assert!(before >= 32 << 8, "{kernel}: the file is charged to the cgroup");
        let passes = k.reclaim.stats.memcg_passes.len();
        let (t, out) = writer(&mut k, "box", "memory.max", "8M");
        let start = k.now;
        common::run(&mut k, &[t]);
        let (rounds, ok) = out.get();
        assert_eq!(ok, Some(true), "{kernel}");
        assert!(k.memcg.cgs[id as usize].memory.usage <= 8 << 8, "{kernel}: usage down to the limit");
        // Each round a reclaim path of the writer: the write returned to wait for it, the
        // paths were recorded, and the writer spent system time in them.
        let paths = k.reclaim.stats.memcg_passes.len() - passes;
        assert!(rounds as usize >= paths && paths >= 1, "{kernel}: {rounds} waits, {paths} paths");
        assert!(k.now > start, "{kernel}: the write took simulated time");
        assert!(k.task_acct(t).stime_ns > 0, "{kernel}");
    }
}

#[test]
fn memory_reclaim_and_memory_high_are_timed_paths_too() {
    let mut k = machine("linux-6.x");
    let id = mkdir(&mut k, "box");
    fill(&mut k, id, "/root/f", 16);
    let before = k.memcg.cgs[id as usize].memory.usage;
    let (t, out) = writer(&mut k, "box", "memory.reclaim", "4M");
    common::run(&mut k, &[t]);
    assert_eq!(out.get().1, Some(true));
    assert!(out.get().0 >= 1, "at least one reclaim path");
    assert!(before - k.memcg.cgs[id as usize].memory.usage >= 4 << 8, "4 MiB reclaimed");
    let (t, out) = writer(&mut k, "box", "memory.high", "2M");
    common::run(&mut k, &[t]);
    assert_eq!(out.get().1, Some(true));
    assert!(k.memcg.cgs[id as usize].memory.usage <= 2 << 8);
}

#[test]
fn two_writers_share_the_node_lru_lock_before_5_11_not_after() {
    // Two cgroups lowered at the same instant by two tasks: their reclaim paths take the
    // lru_lock of each cgroup's lruvec on 6.x (never the same lock) and the node's one
    // lock on 5.4 (they queue).
    let mut waits = Vec::new();
    for kernel in ["linux-6.x", "linux-5.4"] {
        let mut k = machine(kernel);
        let a = mkdir(&mut k, "a");
        let b = mkdir(&mut k, "b");
        fill(&mut k, a, "/root/fa", 24);
        fill(&mut k, b, "/root/fb", 24);
        // The locks the two cgroups' lists are under: each lruvec's (6.x), the node's.
        let locks: Vec<usize> = if k.profile.lru_lock_per_lruvec {
            vec![k.memcg.cgs[a as usize].lruvec as usize, k.memcg.cgs[b as usize].lruvec as usize]
        } else {
            vec![0]
        };
        let contended = |k: &Kernel| locks.iter().map(|&i| k.reclaim.lru_locks.get(i).map_or(0, |l| l.contended)).sum::<u64>();
        let before = contended(&k);
        let (ta, _) = writer(&mut k, "a", "memory.max", "4M");
        let (tb, _) = writer(&mut k, "b", "memory.max", "4M");
        common::run(&mut k, &[ta, tb]);
        let after = contended(&k);
        assert!(k.memcg.cgs[a as usize].memory.usage <= 4 << 8 && k.memcg.cgs[b as usize].memory.usage <= 4 << 8);
        waits.push(after - before);
    }
    assert_eq!(waits[0], 0, "6.x: separate lruvec locks");
    assert!(waits[1] > 0, "5.4: one node lock, the writers queue on it");
}

#[test]
fn v1_limit_reclaim_on_2_6_39_takes_one_victim_at_a_time_round_robin() {
    let mut k = machine("linux-2.6.39");
    let p = mkdir(&mut k, "p");
    // 2.6.39's root is flat (use_hierarchy 0, inherited): p must be made hierarchical
    // before its children exist for its reclaim to reach them.
    let root = k.cgroup_mount().unwrap();
    k.cgroup_write(0, &format!("{root}/p/memory.use_hierarchy"), "1")
        .unwrap();
    let a = mkdir(&mut k, "p/a");
    let b = mkdir(&mut k, "p/b");
    fill(&mut k, a, "/root/fa", 8);
    fill(&mut k, b, "/root/fb", 8);
    let lru = |k: &Kernel, id: u16| k.mm.lruvec(k.memcg.cgs[id as usize].lruvec).nr_pages();
    let (a0, b0) = (lru(&k, a), lru(&k, b));
    assert!(a0 > 0 && b0 > 0);
    // p has no pages of its own: the first victim is a (the lower id), then b, then a.
    k.try_to_free_mem_cgroup_pages(p, 32, None, true);
    let (a1, b1) = (lru(&k, a), lru(&k, b));
    assert!(a1 < a0 && b1 == b0, "only a: {a0}->{a1}, {b0}->{b1}");
    k.try_to_free_mem_cgroup_pages(p, 32, None, true);
    let (a2, b2) = (lru(&k, a), lru(&k, b));
    assert!(a2 == a1 && b2 < b1, "only b: {a1}->{a2}, {b1}->{b2}");
    k.try_to_free_mem_cgroup_pages(p, 32, None, true);
    assert!(lru(&k, a) < a2 && lru(&k, b) == b2, "a again");
    // Later eras walk the subtree: the victim is the target itself.
    let mut k = machine("linux-6.x");
    let p = mkdir(&mut k, "p");
    assert!(!k.profile.memcg_reclaim_one_victim);
    assert_eq!(k.memcg.cgs[p as usize].last_scanned_child, 0);
}
