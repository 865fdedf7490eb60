//! Rules of the slab allocator and the shrinkers: objects per slab per era, a slab page
//! freed only when empty, fragmentation, the shrink_slab targets per era,
//! vfs_cache_pressure, drop_caches 2.

use super::page_alloc::Watermarks;
use super::shrinker::*;
use super::slab::*;
use super::{KernelOwner, Mm};
use crate::Kernel;
use proptest::prelude::*;

fn mm(allocator: SlabAllocator, cpus: u32) -> Mm {
    let mut m = Mm::new(8192, Watermarks { min_free_kbytes: 128, min: 32, low: 40, high: 48 });
    m.slab = Slabs::new(allocator, cpus);
    m
}

fn boot(kernel: &str) -> Kernel {
    let mut m = memtwin_machine::preset("default").expect("preset");
    m.kernel = memtwin_machine::KernelProfile::NAMES.iter().find(|(n, _)| *n == kernel).expect("profile").1;
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

#[test]
fn slub_objects_per_slab_and_order_follow_calculate_order() {
    // Values of a 6.x kernel on a 2-CPU host (its /proc/slabinfo, tests/data/real-tools).
    let mut s = Slabs::new(SlabAllocator::Slub, 2);
    for (name, size, flags, objsize, per, order) in [
        ("dentry", 192, SLAB_RECLAIM_ACCOUNT, 192, 21, 0),
        ("ext4_inode_cache", 1120, SLAB_RECLAIM_ACCOUNT | SLAB_CTOR, 1128, 14, 2),
        ("radix_tree_node", 576, SLAB_RECLAIM_ACCOUNT | SLAB_CTOR, 584, 14, 1),
        ("inode_cache", 616, SLAB_CTOR, 624, 13, 1),
        ("buffer_head", 104, SLAB_RECLAIM_ACCOUNT, 104, 39, 0),
        ("task_struct", 5888, SLAB_HWCACHE_ALIGN, 5888, 5, 3),
        ("kmalloc-8", 8, 0, 8, 512, 0),
        ("kmalloc-96", 96, 0, 96, 42, 0),
        ("kmalloc-1k", 1024, 0, 1024, 16, 2),
        ("kmalloc-8k", 8192, 0, 8192, 4, 3),
    ] {
        let c = s.kmem_cache_create(name, size, 0, flags).unwrap();
        let k = s.cache(c);
        assert_eq!((k.size, k.objs_per_slab, k.order), (objsize, per, order), "{name}");
    }
    // More CPUs ask for more objects per slab: min_objects = 4 * (fls(nr_cpus) + 1).
    let mut big = Slabs::new(SlabAllocator::Slub, 32);
    let c = big.kmem_cache_create("kmalloc-1k", 1024, 0, 0).unwrap();
    assert_eq!((big.cache(c).objs_per_slab, big.cache(c).order), (32, 3));
    // set_min_partial: ilog2(size)/2 within [5, 10].
    assert_eq!(s.cache(s.find("dentry").unwrap()).min_partial, 5);
}

#[test]
fn slab_objects_per_slab_follow_cache_estimate() {
    // 2.6.3x values (/proc/slabinfo of 2.6.32/2.6.39 x86-64 servers).
    let mut s = Slabs::new(SlabAllocator::Slab, 32);
    for (name, size, flags, per, order) in [
        ("dentry", 192, SLAB_RECLAIM_ACCOUNT, 20, 0),
        ("size-64", 64, 0, 59, 0),
        ("size-32", 32, 0, 112, 0),
        ("buffer_head", 104, SLAB_RECLAIM_ACCOUNT, 37, 0),
        ("size-1024", 1024, 0, 4, 0),
        ("size-4096", 4096, 0, 1, 0),
        ("size-8192", 8192, 0, 1, 1),
    ] {
        let c = s.kmem_cache_create(name, size, 0, flags).unwrap();
        assert_eq!((s.cache(c).objs_per_slab, s.cache(c).order), (per, order), "{name}");
    }
    let d = s.cache(s.find("dentry").unwrap());
    // enable_cpucache: 120 for small objects, batchcount 60, shared 8; free_limit.
    assert_eq!((d.tunables.limit, d.tunables.batchcount, d.tunables.shared), (120, 60, 8));
    assert_eq!(d.free_limit, 33 * 60 + 20);
}

#[test]
fn a_slab_page_is_freed_only_when_all_its_objects_are_free() {
    let mut m = mm(SlabAllocator::Slub, 2);
    let c = m.slab.kmem_cache_create("dentry", 192, 0, SLAB_RECLAIM_ACCOUNT).unwrap();
    // Enough partial slabs that an emptied one is discarded (min_partial 5).
    let objs: Vec<_> = (0..21 * 8).map(|_| m.kmem_cache_alloc(c).unwrap()).collect();
    assert_eq!(m.kernel.count(KernelOwner::Slab(c)), 8);
    for s in 0..7 {
        m.kmem_cache_free(objs[s * 21]);
    }
    assert_eq!(m.slab.cache(c).nr_partial(), 7);
    // Slab 7 (full): freeing all but one object keeps its page.
    let last = &objs[7 * 21..];
    for h in &last[1..] {
        assert_eq!(m.kmem_cache_free(*h), 0);
    }
    assert_eq!(m.kernel.count(KernelOwner::Slab(c)), 8);
    // The last object frees the page.
    assert_eq!(m.kmem_cache_free(last[0]), 1);
    assert_eq!(m.kernel.count(KernelOwner::Slab(c)), 7);
    assert_eq!(m.slab.counts(c), SlabCounts { active_objs: 7 * 20, num_objs: 7 * 21, active_slabs: 7, num_slabs: 7 });
    m.slab.check().unwrap();
    m.check_invariants().unwrap();
}

#[test]
fn slub_keeps_min_partial_empty_slabs_and_slab_keeps_free_limit() {
    let mut m = mm(SlabAllocator::Slub, 2);
    let c = m.slab.kmem_cache_create("dentry", 192, 0, 0).unwrap();
    let objs: Vec<_> = (0..21 * 3).map(|_| m.kmem_cache_alloc(c).unwrap()).collect();
    for h in objs {
        m.kmem_cache_free(h);
    }
    // Three empty slabs, fewer than min_partial: all stay.
    assert_eq!(m.slab.counts(c).num_slabs, 3);
    assert_eq!(m.slab.empty_slabs(c), 3);
    assert_eq!(m.kmem_cache_drain(c, u64::MAX), 3);

    let mut m = mm(SlabAllocator::Slab, 1);
    let c = m.slab.kmem_cache_create("size-32", 32, 0, 0).unwrap();
    let per = m.slab.cache(c).objs_per_slab as u64;
    let limit = m.slab.cache(c).free_limit;
    let objs: Vec<_> = (0..per * 6).map(|_| m.kmem_cache_alloc(c).unwrap()).collect();
    for h in objs {
        m.kmem_cache_free(h);
    }
    // free_block: empty slabs stay on slabs_free until the free objects pass free_limit.
    let kept = m.slab.counts(c).num_slabs;
    assert!(kept >= 1 && kept * per <= limit + per, "{kept} slabs kept, free_limit {limit}");
    assert_eq!(m.slab.counts(c).active_slabs, 0);
    m.slab.check().unwrap();
}

#[test]
fn fragmentation_keeps_pages_while_most_objects_are_free() {
    let mut m = mm(SlabAllocator::Slub, 2);
    let c = m.slab.kmem_cache_create("dentry", 192, 0, SLAB_RECLAIM_ACCOUNT).unwrap();
    let objs: Vec<_> = (0..21 * 100).map(|_| m.kmem_cache_alloc(c).unwrap()).collect();
    // Free 20 of every 21 objects: one object pins each slab.
    for (i, h) in objs.iter().enumerate() {
        if i % 21 != 10 {
            m.kmem_cache_free(*h);
        }
    }
    let n = m.slab.counts(c);
    assert_eq!(n.active_objs, 100);
    assert_eq!(n.num_slabs, 100, "every slab holds one object and keeps its page");
    assert_eq!(m.slab.pages(true), 100);
    // New objects fill the partial slabs before any new page is taken.
    let free_before = m.nr_free();
    for _ in 0..21 * 50 {
        m.kmem_cache_alloc(c).unwrap();
    }
    assert_eq!(m.nr_free(), free_before);
    m.slab.check().unwrap();
}

#[test]
fn shrink_slab_targets_follow_each_era() {
    // 2.6.39: delta = (4 * scanned / seeks) * max_pass / (lru_pages + 1), capped at twice
    // max_pass.
    assert_eq!(delta_2639(0, 32, 2, 10_000, 999), 64 * 10_000 / 1000);
    assert_eq!(delta_2639(5, 0, 2, 10_000, 999), 5 + 64 * 10_000 / 1000, "scanned 0 counts as SWAP_CLUSTER_MAX");
    assert_eq!(delta_2639(0, 1_000_000, 2, 100, 10), 200);
    // 6.x: (freeable >> priority) * 4 / seeks, plus nr_deferred >> priority.
    assert_eq!(delta_6(0, 1 << 20, 12, 2), (512, 512));
    assert_eq!(delta_6(4096, 1 << 20, 12, 2), (513, 512));
    assert_eq!(delta_6(0, 1000, 0, 2), (2000, 2000));
    assert_eq!(delta_6(0, 1000, 0, 0), (500, 500), "seeks 0: freeable / 2");
}

#[test]
fn vfs_cache_pressure_scales_the_dentry_count() {
    let mut k = boot("linux-6.x");
    let id = k.shrink.find(ShrinkerKind::BootDentries).unwrap();
    let sc = ShrinkControl { gfp_fs: true, ..Default::default() };
    let n = k.shrink.boot_dentries.len() as u64;
    assert!(n > 0);
    assert_eq!(k.shrinker_count(id, &sc), n);
    k.sysctl.vfs_cache_pressure = 200;
    assert_eq!(k.shrinker_count(id, &sc), 2 * n);
    k.sysctl.vfs_cache_pressure = 0;
    assert_eq!(k.shrinker_count(id, &sc), 0);
    // A cgroup's reclaim does not see the root's dentries.
    k.sysctl.vfs_cache_pressure = 100;
    assert_eq!(k.shrinker_count(id, &ShrinkControl { memcg: 1, ..sc }), 0);
}

#[test]
fn drop_caches_2_frees_the_unused_reclaimable_slab() {
    for era in ["linux-6.x", "linux-2.6.39"] {
        let mut k = boot(era);
        let (r, u) = (k.mm.slab.pages(true), k.mm.slab.pages(false));
        let scanned = k.vm.get(memtwin_procfs::VmItem::SlabsScanned);
        // The dentries go after an RCU grace period (d_free -> call_rcu): nothing is freed
        // by the write itself, every unused one a few ticks later.
        assert_eq!(k.drop_caches(2), 0, "{era}");
        assert_eq!(k.mm.slab.pages(true), r, "{era}");
        k.rcu_barrier();
        let freed = r - k.mm.slab.pages(true);
        assert!(freed > 0, "{era}");
        assert_eq!(k.mm.slab.pages(false), u, "{era}: unreclaimable slab stays");
        assert!(k.vm.get(memtwin_procfs::VmItem::SlabsScanned) > scanned, "{era}: slabs_scanned counts");
        if era == "linux-6.x" {
            // SLUB discards every emptied slab (enough partial ones stay in use).
            assert_eq!(freed, r / 2, "{era}");
        } else {
            // SLAB keeps up to free_limit free objects on slabs_free.
            assert!(freed <= r / 2 && freed >= r / 2 - 20, "{era}: {freed} of {}", r / 2);
        }
        // The unused dentries are gone: a second drop frees nothing more.
        k.drop_caches(2);
        k.rcu_barrier();
        assert_eq!(k.mm.slab.pages(true), r - freed, "{era}");
        k.mm.slab.check().unwrap();
        k.mm.check_invariants().unwrap();
    }
}

#[test]
fn dentries_wait_for_an_rcu_grace_period_except_on_2_4() {
    let tick = memtwin_engine::sched::TICK_NS;
    for (era, rcu) in [("linux-6.x", true), ("linux-2.6.39", true), ("linux-2.4", false)] {
        let mut k = boot(era);
        let r = k.mm.slab.pages(true);
        let freed = k.drop_caches(2);
        assert_eq!(k.rcu.pending() > 0, rcu, "{era}");
        if !rcu {
            assert!(freed > 0 && k.mm.slab.pages(true) == r - freed, "{era}: freed at once");
            continue;
        }
        assert_eq!((freed, k.mm.slab.pages(true)), (0, r), "{era}: nothing freed by the write");
        // Still allocated two ticks on: the grace period starts at the next tick and
        // lasts two.
        let t0 = k.now;
        k.run_until(t0 + 2 * tick, &mut |_| false);
        assert_eq!(k.mm.slab.pages(true), r, "{era}");
        k.run_until(t0 + 3 * tick, &mut |_| false);
        assert_eq!(k.rcu.pending(), 0, "{era}");
        assert!(k.mm.slab.pages(true) < r, "{era}: freed after the grace period");
    }
}

#[test]
fn boot_slab_totals_are_one_percent_of_memory_two_fifths_reclaimable() {
    for era in ["linux-6.x", "linux-2.6.39", "linux-2.4"] {
        let k = boot(era);
        let slab = (k.mm.managed / 100).min(64 * 1024 * 1024 / super::PAGE_SIZE);
        assert_eq!(k.mm.slab.pages(true), slab * 2 / 5, "{era}");
        assert_eq!(k.mm.slab.pages(true) + k.mm.slab.pages(false), slab, "{era}");
        k.mm.slab.check().unwrap();
    }
}

#[derive(Clone, Debug)]
enum Op {
    Alloc(u8),
    Free(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![3 => (0u8..3).prop_map(Op::Alloc), 2 => any::<u16>().prop_map(Op::Free)]
}

proptest! {
    /// Every object is accounted once: the caches' counts match the objects held, the
    /// slab pages match the kernel pages of each cache, and every frame is counted once.
    #[test]
    fn every_object_is_accounted_once(ops in proptest::collection::vec(op(), 1..600), slub in any::<bool>()) {
        let mut m = mm(if slub { SlabAllocator::Slub } else { SlabAllocator::Slab }, 2);
        let caches = [
            m.slab.kmem_cache_create("a", 192, 0, SLAB_RECLAIM_ACCOUNT).unwrap(),
            m.slab.kmem_cache_create("b", 1120, 0, SLAB_CTOR).unwrap(),
            m.slab.kmem_cache_create("c", 4096, 0, 0).unwrap(),
        ];
        let mut held: Vec<ObjHandle> = Vec::new();
        for o in ops {
            match o {
                Op::Alloc(c) => {
                    if let Some(h) = m.kmem_cache_alloc(caches[c as usize]) {
                        prop_assert!(!held.contains(&h));
                        held.push(h);
                    }
                }
                Op::Free(i) => {
                    if !held.is_empty() {
                        let h = held.swap_remove(i as usize % held.len());
                        m.kmem_cache_free(h);
                        prop_assert!(!m.slab.is_allocated(h));
                    }
                }
            }
        }
        for &c in &caches {
            let n = m.slab.counts(c);
            prop_assert_eq!(n.active_objs, held.iter().filter(|h| h.cache() == c).count() as u64);
            prop_assert!(n.active_objs <= n.num_objs && n.active_slabs <= n.num_slabs);
            prop_assert_eq!(m.kernel.count(KernelOwner::Slab(c)), n.num_slabs << m.slab.cache(c).order);
        }
        for h in &held {
            prop_assert!(m.slab.is_allocated(*h));
        }
        prop_assert!(m.slab.check().is_ok());
        prop_assert!(m.check_invariants().is_ok());
    }
}

#[test]
fn boot_slab_host_memory_stays_within_the_estimate() {
    for era in ["linux-6.x", "linux-2.6.39", "linux-2.4"] {
        let mut k = boot(era);
        let pages = k.mm.slab.pages(true) + k.mm.slab.pages(false);
        let used = k.mm.slab.host_bytes() + (k.shrink.boot_dentries.capacity() * 8) as u64;
        eprintln!("{era}: {used} B for {pages} slab pages ({} B/page)", used / pages);
        assert!(used <= crate::host::slab_bytes(k.mm.managed), "{era}: {used} B");
        // Every unused dentry waiting for its RCU grace period at once (drop_caches 2):
        // their handles are in the RCU queue as well.
        k.drop_caches(2);
        let used = k.mm.slab.host_bytes() + (k.shrink.boot_dentries.capacity() * 8 + k.rcu.host_bytes()) as u64;
        eprintln!("{era}: {used} B with {} in the RCU queue ({} B/page)", k.rcu.pending(), used / pages);
        assert!(used <= crate::host::slab_bytes(k.mm.managed), "{era}: {used} B with the RCU queue");
    }
}

#[test]
fn shrink_slab_2639_scans_whole_batches_and_defers_the_rest() {
    let mut k = boot("linux-2.6.39");
    let sc = ShrinkControl { gfp_fs: true, ..Default::default() };
    let n = k.shrink.boot_dentries.len() as u64;
    let max_pass = k.vfs_pressure_ratio(n);
    let id = k.shrink.find(ShrinkerKind::BootDentries).unwrap();
    // scanned and lru_pages chosen so that the target is 300 objects: two batches of 128
    // run, 44 wait in shrinker->nr.
    let lru_pages = max_pass * 4 * 32 / 2 / 300 - 1;
    let want = delta_2639(0, 32, DEFAULT_SEEKS, max_pass, lru_pages);
    let (freed, scanned) = k.shrink_slab(32, lru_pages, 0, &sc);
    assert_eq!(scanned, want / SHRINK_BATCH * SHRINK_BATCH);
    assert_eq!(freed, scanned);
    assert_eq!(k.shrink.list[id as usize].nr_deferred, want % SHRINK_BATCH);
    assert_eq!(k.vm.get(memtwin_procfs::VmItem::SlabsScanned), scanned);
    // Without __GFP_FS the dcache is not pruned and the work is deferred.
    let (f, _) = k.shrink_slab(32, lru_pages, 0, &ShrinkControl { gfp_fs: false, ..sc });
    assert_eq!(f, 0);
    assert!(k.shrink.list[id as usize].nr_deferred >= want);
}

#[test]
fn do_shrink_slab_6x_scans_by_priority_and_keeps_nr_deferred() {
    let mut k = boot("linux-6.x");
    let sc = ShrinkControl { gfp_fs: true, ..Default::default() };
    let id = k.shrink.find(ShrinkerKind::BootDentries).unwrap();
    let freeable = k.shrinker_count(id, &sc);
    // At DEF_PRIORITY a few thousand objects make a target below one batch: nothing is
    // scanned, the delta is deferred.
    let (total, delta) = delta_6(0, freeable, 12, DEFAULT_SEEKS);
    assert!(total < SHRINK_BATCH && total < freeable, "{freeable} objects: target {total}");
    let (freed, scanned) = k.shrink_slab(0, 0, 12, &sc);
    assert_eq!((freed, scanned), (0, 0));
    assert_eq!(k.shrink.list[id as usize].nr_deferred, delta);
    // At priority 0 everything is scanned in batches (total_scan capped at 2 x freeable).
    let (freed, _) = k.shrink_slab(0, 0, 0, &sc);
    assert_eq!(freed, freeable);
    assert!(k.shrink.boot_dentries.is_empty());
    k.mm.slab.check().unwrap();
}

#[test]
fn kmem_cache_alloc_takes_slab_pages_through_the_allocator() {
    let mut k = boot("linux-6.x");
    let c = k.mm.slab.kmem_cache_create("test_cache", 1024, 0, 0).unwrap();
    let pps = k.mm.slab.cache(c).pages_per_slab();
    let per = k.mm.slab.cache(c).objs_per_slab as u64;
    let t = k.spawn_task("t", "t", false, None, None);
    let pgalloc = k.vm.get(memtwin_procfs::VmItem::PgallocNormal);
    // Free frames, the per-CPU lists' included (a list refill moves a batch there).
    let free = k.mm.nr_free_frames();
    let objs: Vec<_> = (0..per + 1).map(|_| k.kmem_cache_alloc(t, c).expect("memory is plentiful")).collect();
    assert_eq!(k.mm.nr_free_frames(), free - 2 * pps, "two slabs");
    assert_eq!(k.vm.get(memtwin_procfs::VmItem::PgallocNormal), pgalloc + 2 * pps);
    assert_eq!(k.mm.kernel.count(KernelOwner::Slab(c)), 2 * pps);
    for h in objs {
        k.kmem_cache_free(h);
    }
    assert_eq!(k.mm.slab.counts(c).active_objs, 0);
    k.mm.check_invariants().unwrap();
}

#[test]
fn slab_reclaim_path_costs_cpu_time_per_object_scanned() {
    use super::vmscan::PathStep;
    let mut k = boot("linux-6.x");
    let t = k.spawn_task("t", "t", false, None, None);
    let n = k.shrink.boot_dentries.len() as u64;
    // Priority 0: every unused dentry is scanned, in batches of SHRINK_BATCH.
    k.start_slab_reclaim(t, 0, 0, 0);
    let (mut sys, mut bursts) = (0, 0);
    loop {
        match k.reclaim_path_run(t) {
            PathStep::Burst { sys: s } => {
                sys += s;
                bursts += 1;
            }
            PathStep::Done => break,
            s => panic!("unexpected {s:?}"),
        }
    }
    assert!(k.shrink.boot_dentries.is_empty());
    let scanned = k.vm.get(memtwin_procfs::VmItem::SlabsScanned);
    assert!(scanned >= n);
    assert_eq!(sys, scanned * k.shrinker_obj_ns());
    assert_eq!(bursts, scanned.div_ceil(SHRINK_BATCH));
    let path = k.reclaim.take_done(t).expect("a finished path");
    // The dentries are freed by RCU's callbacks, not in this reclaim: their slab pages are
    // not its progress (reclaim_state), though they do come back.
    assert_eq!(path.sc.nr_reclaimed, 0, "slab pages freed after a grace period are nobody's progress");
    let slab = k.mm.slab.pages(true);
    k.rcu_barrier();
    assert!(k.mm.slab.pages(true) < slab, "the pages come back after the grace period");
}

#[test]
fn on_5x_a_cgroups_objects_go_to_its_copy_of_the_cache_whose_pages_it_is_charged() {
    use super::memcontrol::ROOT_MEMCG;
    let mut k = boot("linux-5.4");
    let root = k.mm.slab.find("dentry").expect("dentry cache");
    assert!(k.mm.slab.cache(root).flags & SLAB_ACCOUNT != 0);
    let a = k.memcg.create(ROOT_MEMCG, "a").unwrap();
    let lv = k.mm.new_lruvec().unwrap();
    k.memcg.set_lruvec(a, lv);
    let t = k.spawn_task("t", "t", false, None, None);
    k.tasks[t as usize].memcg = a;
    let root_objs = k.mm.slab.counts(root).active_objs;
    // The first object asks for the copy and still comes from the root cache.
    let (h0, m0) = k.kmem_cache_alloc_memcg(t, root).unwrap();
    assert_eq!((h0.cache(), m0), (root, ROOT_MEMCG));
    let copy = k.mm.slab.memcg_cache(root, a).expect("the copy was made");
    assert_eq!(k.mm.slab.cache(copy).name, format!("dentry({}:a)", k.memcg.cgs[a as usize].serial));
    assert_eq!(k.mm.slab.root_of(copy), root);
    let per = k.mm.slab.cache(copy).objs_per_slab as u64;
    let objs: Vec<_> = (0..8 * per).map(|_| k.kmem_cache_alloc_memcg(t, root).unwrap()).collect();
    assert!(objs.iter().all(|&(h, m)| h.cache() == copy && m == a));
    // Eight slab pages (order 0), charged to the cgroup and owned as the root cache's.
    let c = &k.memcg.cgs[a as usize];
    assert_eq!((c.kmem.usage, c.nr_kmem), (8, 8));
    assert!(c.memory.usage >= 8);
    assert_eq!(k.mm.kernel.count(KernelOwner::Slab(copy)), 0);
    // /proc/slabinfo shows the root cache with the copy's objects added.
    let line = k.slabinfo().into_iter().find(|s| s.name == "dentry").unwrap();
    assert_eq!(line.active_objs, root_objs + 1 + 8 * per);
    assert!(k.slabinfo().iter().all(|s| !s.name.contains('(')));
    assert_eq!(k.memcg_slabinfo(a).len(), 1);
    // Freed objects give back the slabs SLUB does not keep; their pages are uncharged.
    let usage = k.memcg.cgs[a as usize].memory.usage;
    let mut freed = 0;
    for (h, m) in objs {
        freed += k.kmem_cache_free_memcg(h, m);
    }
    let c = &k.memcg.cgs[a as usize];
    let kept = k.mm.slab.cache(copy).nr_slabs();
    assert!(freed > 0 && kept > 0, "SLUB keeps min_partial empty slabs: {freed} freed, {kept} kept");
    assert_eq!(freed + kept, 8);
    assert_eq!(c.kmem.usage, kept);
    assert_eq!(c.memory.usage, usage - freed);
    // rmdir gives the copy to the parent.
    k.mm.slab.memcg_reparent_caches(a, ROOT_MEMCG);
    assert_eq!(k.mm.slab.cache(copy).memcg, Some((root, ROOT_MEMCG)));
    assert_eq!(k.mm.slab.memcg_cache(root, a), None);
    k.kmem_cache_free(h0);
    k.mm.slab.check().unwrap();
    k.mm.check_invariants().unwrap();
}

/// A slab of order 2 on 6.x is one naturally aligned block of four frames of one
/// reclaimable pageblock (allocate_slab's first try at the cache's order), and the block goes
/// back whole when the slab is released: the free blocks are as before.
#[test]
fn a_slab_above_order_0_is_one_block_freed_whole() {
    let mut k = boot("linux-6.x");
    let c = k.mm.slab.kmem_cache_create("test_inode", 1120, 0, SLAB_RECLAIM_ACCOUNT).unwrap();
    let order = k.mm.slab.cache(c).order;
    assert_eq!(order, 3, "1,128-byte objects on a machine of the default preset's CPUs");
    let per = k.mm.slab.cache(c).objs_per_slab as u64;
    let t = k.spawn_task("t", "t", false, None, None);
    k.drain_all_pages();
    let blocks = k.mm.free_blocks_per_order();
    let free = k.mm.nr_free_frames();
    let objs: Vec<_> = (0..per).map(|_| k.kmem_cache_alloc(t, c).expect("memory is plentiful")).collect();
    assert_eq!(k.mm.nr_free_frames(), free - (1 << order), "one slab");
    let p = k.mm.slab.pfn_of(objs[0]);
    assert_eq!(p % (1 << order), 0, "naturally aligned");
    for q in p..p + (1 << order) {
        assert_eq!(k.mm.kernel_owner(q), KernelOwner::Slab(c));
        assert_eq!(k.mm.pageblocks.of(q as u64), super::pageblock::MigrateType::Reclaimable);
    }
    for h in objs {
        k.kmem_cache_free(h);
    }
    // SLUB keeps empty slabs up to min_partial: release it.
    k.mm.kmem_cache_drain(c, u64::MAX);
    assert_eq!(k.mm.nr_free_frames(), free);
    k.drain_all_pages();
    assert_eq!(k.mm.free_blocks_per_order(), blocks, "the block merged back as it was");
    k.mm.check_invariants().unwrap();
}

/// 6.x keeps blocks of orders 1-3 on per-CPU lists of their own (5.13+): a released
/// order-3 slab goes to this CPU's order-3 list, and the next slab of that order is that
/// block; a refill takes batch >> order blocks. 5.4 and 2.6.39 keep none.
#[test]
fn six_x_per_cpu_lists_keep_blocks_of_orders_1_to_3() {
    let mut k = boot("linux-6.x");
    let c = k.mm.slab.kmem_cache_create("test_inode", 1120, 0, SLAB_RECLAIM_ACCOUNT).unwrap();
    let t = k.spawn_task("t", "t", false, None, None);
    k.drain_all_pages();
    let per = k.mm.slab.cache(c).objs_per_slab;
    let objs: Vec<_> = (0..per).map(|_| k.kmem_cache_alloc(t, c).unwrap()).collect();
    // The refill: max(batch >> 3, 2) blocks, one of them the slab's.
    let refill = k.mm.pcp.refill_blocks(3) as u64;
    assert_eq!(k.mm.pcp.total, (refill - 1) << 3);
    assert!(objs.iter().all(|&h| k.mm.slab.pfn_of(h) % 8 == 0), "one order-3 block");
    // A block of order 3 freed goes to the CPU's list for it, and is the next taken.
    let mt = super::pageblock::MigrateType::Reclaimable;
    let p = k.rmqueue_order(0, mt, 3).unwrap();
    assert_eq!(k.mm.pcp.total, (refill - 2) << 3);
    k.pcp_free_order(p, 3, false);
    assert_eq!(k.mm.pcp.total, (refill - 1) << 3, "the block is back on the CPU's list");
    assert_eq!(k.rmqueue_order(0, mt, 3), Some(p), "the block freed last is the next taken");
    k.pcp_free_order(p, 3, false);
    k.mm.check_invariants().unwrap();
    for era in ["linux-5.4", "linux-2.6.39"] {
        let k = boot(era);
        assert!(!k.mm.pcp.allowed_order(1), "{era}");
    }
}

/// Without a free block of the slab's order, SLUB falls back to a slab of its minimum
/// order (s->min: one page of 3 objects of 1,128 bytes, where the order-3 slab holds 29);
/// with one, the slab takes it.
#[test]
fn slub_falls_back_below_its_order_when_no_block_is_free() {
    use super::pageblock::MigrateType;
    let mut k = boot("linux-6.x");
    let c = k.mm.slab.kmem_cache_create("test_inode", 1120, 0, SLAB_RECLAIM_ACCOUNT).unwrap();
    let order = k.mm.slab.cache(c).order;
    let t = k.spawn_task("t", "t", false, None, None);
    // Take every free block of order >= 1 and give back every other frame of each: the
    // free memory is all in single frames.
    k.drain_all_pages();
    let mut held = Vec::new();
    while let Some(o) = (1..=super::buddy::MAX_BUDDY_ORDER).rev().find(|&o| k.mm.free.has_block(o, &MigrateType::ALL)) {
        let p = k.mm.take_typed_order(MigrateType::Movable, o).unwrap();
        for q in (p..p + (1 << o)).step_by(2) {
            k.mm.put_free(q + 1);
            held.push(q);
        }
    }
    assert!(!k.mm.watermark_ok_order(order, k.mm.wmark_pages().min));
    assert!(k.mm.nr_free() > k.mm.wmark_pages().high, "plenty free, in single frames");
    let h = k.kmem_cache_alloc(t, c).expect("single frames are free");
    let p = k.mm.slab.pfn_of(h);
    let frames: Vec<_> = (0..1 << order).filter(|&i| k.mm.kernel_owner(p + i) == KernelOwner::Slab(c)).collect();
    assert_eq!(frames, vec![0], "one frame, not a block: {frames:?}");
    assert_eq!(k.mm.kernel.count(KernelOwner::Slab(c)), 1, "a slab of order 0");
    let min_objs = k.mm.slab.cache(c).min_objs;
    assert_eq!((k.mm.slab.cache(c).min_order, min_objs), (0, 3));
    assert_eq!(k.mm.slab.counts(c), SlabCounts { active_objs: 1, num_objs: 3, active_slabs: 1, num_slabs: 1 });
    // Its objects used up, the next slab is another one of order 0.
    let more: Vec<_> = (0..min_objs).map(|_| k.kmem_cache_alloc(t, c).unwrap()).collect();
    assert_eq!(k.mm.slab.counts(c).num_slabs, 2);
    assert_eq!(k.mm.kernel.count(KernelOwner::Slab(c)), 2);
    for h in more {
        k.kmem_cache_free(h);
    }
    k.mm.slab.check().unwrap();
    // Give the frames back: the next slab is one block.
    for q in held {
        k.mm.put_free(q);
    }
    let per = k.mm.slab.cache(c).objs_per_slab;
    let objs: Vec<_> = (0..per).map(|_| k.kmem_cache_alloc(t, c).unwrap()).collect();
    let q = k.mm.slab.pfn_of(*objs.last().unwrap());
    assert_eq!(q % (1 << order), 0);
    assert!((q..q + (1 << order)).all(|f| k.mm.kernel_owner(f) == KernelOwner::Slab(c)));
    k.mm.check_invariants().unwrap();
}

/// __zone_watermark_ok above order 0: before 4.4 the lower orders' free pages are taken
/// away with the mark halved per order; since 4.4 one free block of the order is enough.
#[test]
fn the_watermark_of_a_higher_order_request_by_era() {
    let mut m = mm(SlabAllocator::Slub, 1);
    // Every frame in order-0 blocks but one order-3 block: take frames in pairs and give
    // one of each back.
    let mut kept = Vec::new();
    while m.free.has_block(1, &super::pageblock::MigrateType::ALL) {
        let a = m.take_typed_order(super::pageblock::MigrateType::Movable, 1).unwrap();
        kept.push(a);
    }
    for &a in &kept {
        m.put_free(a + 1);
    }
    let kept8: Vec<_> = kept.iter().copied().filter(|&a| a % 8 == 0).take(1).collect();
    for &a in &kept8 {
        m.put_free(a);
        m.put_free(a + 2);
        m.put_free(a + 4);
        m.put_free(a + 6);
    }
    assert!(m.free.has_block(3, &super::pageblock::MigrateType::ALL));
    let free = m.nr_free();
    // 4.4+: a block of order 3 is free and the free pages stand above the mark.
    m.watermark_lower_orders = false;
    assert!(m.watermark_ok_order(3, free / 2));
    assert!(!m.watermark_ok_order(3, free));
    assert!(!m.watermark_ok_order(4, free / 2), "no block of order 4");
    // Before 4.4: nearly all free pages are of order 0, which the test takes away.
    m.watermark_lower_orders = true;
    assert!(!m.watermark_ok_order(3, free / 2));
    assert!(m.watermark_ok_order(3, 1), "with a tiny mark the halving lets it through");
    assert!(m.watermark_ok_order(0, free / 2));
}

proptest! {
    /// kmem_cache_alloc_bulk hands out the objects n calls of kmem_cache_alloc would, in
    /// their order, and leaves the cache as they would: after any mix of allocations and
    /// frees (slabs partly used, emptied, released), the next objects are the same too.
    #[test]
    fn bulk_allocation_is_single_allocations_in_a_row(
        slub in any::<bool>(),
        ops in proptest::collection::vec((1u64..90, 0usize..60, 0usize..4), 1..25),
    ) {
        let allocator = if slub { SlabAllocator::Slub } else { SlabAllocator::Slab };
        let (mut a, mut b) = (mm(allocator, 2), mm(allocator, 2));
        let ca = a.slab.kmem_cache_create("dentry", 192, 0, SLAB_RECLAIM_ACCOUNT).unwrap();
        let cb = b.slab.kmem_cache_create("dentry", 192, 0, SLAB_RECLAIM_ACCOUNT).unwrap();
        let (mut ha, mut hb) = (Vec::new(), Vec::new());
        for (n, free_from, free_step) in ops {
            let before = ha.len();
            for _ in 0..n {
                match a.kmem_cache_alloc(ca) {
                    Some(h) => ha.push(h),
                    None => break,
                }
            }
            let made = b.kmem_cache_alloc_bulk(cb, n, |h| hb.push(h));
            prop_assert_eq!(made as usize, ha.len() - before);
            prop_assert_eq!(&ha, &hb);
            // Free every (free_step + 2)th object from free_from on, in both.
            let mut i = free_from.min(ha.len());
            let mut keep = Vec::new();
            for (j, h) in ha.iter().enumerate() {
                if j == i {
                    a.kmem_cache_free(*h);
                    b.kmem_cache_free(*h);
                    i += free_step + 2;
                } else {
                    keep.push(*h);
                }
            }
            ha = keep.clone();
            hb = keep;
            prop_assert_eq!(a.slab.counts(ca), b.slab.counts(cb));
            prop_assert_eq!(a.kernel.count(KernelOwner::Slab(ca)), b.kernel.count(KernelOwner::Slab(cb)));
        }
        let next_a: Vec<_> = (0..50).filter_map(|_| a.kmem_cache_alloc(ca)).collect();
        let next_b: Vec<_> = (0..50).filter_map(|_| b.kmem_cache_alloc(cb)).collect();
        prop_assert_eq!(next_a, next_b);
        a.slab.check().unwrap();
        b.slab.check().unwrap();
        b.check_invariants().unwrap();
    }
}
