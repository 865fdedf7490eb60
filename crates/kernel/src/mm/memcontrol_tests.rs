//! Memory cgroup rules on a booted machine: who a page is charged to, the exception table,
//! hierarchical usage, swap charging and memory.swap.max, limit reclaim confined to the
//! cgroup's subtree, and the protection walk.

use super::memcontrol::*;
use crate::fs::OpenFlags;
use crate::mm::PAGE_SIZE;
use crate::{Kernel, Program, Sink, Step, TaskId};
use memtwin_engine::NS_PER_SEC;

fn boot() -> Kernel {
    let m = memtwin_machine::preset("default").expect("preset");
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

/// Run a task in cgroup `cg` until it exits.
fn run_in<F: FnMut(&mut Kernel, TaskId) -> Option<Step> + 'static>(k: &mut Kernel, cg: MemcgId, f: F) -> TaskId {
    let t = k.spawn("test", "test", Box::new(Script(f)), Sink::Null, Sink::Null);
    k.tasks[t as usize].memcg = cg;
    // A bare task (no process image, exec.rs): the charges are the rule's alone.
    k.tasks[t as usize].image_done = true;
    let limit = k.now + 3600 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.task_exited(t));
    assert!(k.task_exited(t), "task did not finish");
    t
}

/// Write `bytes` at the end of `path` (created if missing) from cgroup `cg`.
fn append(k: &mut Kernel, cg: MemcgId, path: &str, bytes: u64) {
    let path = path.to_string();
    let mut fd = None;
    let mut done = 0;
    run_in(k, cg, move |k, me| {
        let f = match fd {
            Some(f) => f,
            None => {
                let (f, _) = k.sys_open(me, &path, OpenFlags { write: true, create: true, append: true, ..Default::default() }).unwrap();
                *fd.insert(f)
            }
        };
        if done >= bytes {
            k.sys_close(me, f).unwrap();
            return None;
        }
        let r = k.sys_write(me, f, (bytes - done).min(1 << 20)).unwrap();
        done += r.bytes;
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    });
}

/// Pages charged to cgroup `id`'s subtree for its pages (usage less the kernel memory its
/// written pages' buffer heads are charged for, and the CPUs' charge stocks).
fn page_usage(k: &Kernel, id: MemcgId) -> u64 {
    let other: u64 = k.memcg.subtree(id).iter().map(|&i| k.memcg.cgs[i as usize].nr_kmem + k.memcg.stock_pages(i)).sum();
    k.memcg.cgs[id as usize].memory.usage - other
}

/// Fault in `pages` of anonymous memory from cgroup `cg`, then exit (or hold it: `hold`).
fn anon(k: &mut Kernel, cg: MemcgId, pages: u64) -> TaskId {
    let mut done = 0;
    run_in(k, cg, move |k, me| {
        if done >= pages {
            return None;
        }
        match k.fault_anon_pages(me, done, (pages - done).min(256)) {
            Ok(n) => {
                done += n;
                Some(Step::Cpu { user: 0, sys: 0 })
            }
            Err((n, s)) => {
                done += n;
                Some(s)
            }
        }
    })
}

fn cg(k: &mut Kernel, parent: MemcgId, name: &str) -> MemcgId {
    let id = k.memcg.create(parent, name).unwrap();
    let lv = k.mm.new_lruvec().unwrap();
    k.memcg.set_lruvec(id, lv);
    id
}

#[test]
fn page_cache_is_charged_per_page_to_the_cgroup_that_first_touched_it() {
    let mut k = boot();
    let a = cg(&mut k, ROOT_MEMCG, "a");
    let b = cg(&mut k, ROOT_MEMCG, "b");
    append(&mut k, a, "/root/f", 1 << 20);
    assert_eq!(page_usage(&k, a), 256);
    // Each written page's buffer head (104 bytes and the objcg pointer) is charged with it,
    // and the file's page-cache tree nodes (four leaves and a root, 576 bytes, SLUB's free
    // pointer and the objcg pointer each).
    assert_eq!(k.memcg.cgs[a as usize].nr_kmem, (256u64 * 112 + 5 * 592).div_ceil(PAGE_SIZE));
    // b extends the same file: the new pages are b's (exceptions to the file's owner a).
    append(&mut k, b, "/root/f", 1 << 20);
    assert_eq!(page_usage(&k, a), 256);
    assert_eq!(page_usage(&k, b), 256);
    let stats = k.memcg_page_stats();
    assert_eq!(stats[a as usize].file, 256);
    assert_eq!(stats[b as usize].file, 256);
    assert_eq!(stats[b as usize].file_dirty, 256, "written, not yet written back");
    // a rewrites b's pages: they stay b's (charged at first touch, not at each access).
    let t = run_in(&mut k, a, |k, me| {
        let (f, _) = k.sys_open(me, "/root/f", OpenFlags { write: true, ..Default::default() }).unwrap();
        k.sys_write(me, f, 2 << 20).unwrap();
        k.sys_close(me, f).unwrap();
        None
    });
    let _ = t;
    assert_eq!(page_usage(&k, b), 256);
    // Deleting the file uncharges every page where it was charged.
    run_in(&mut k, ROOT_MEMCG, |k, me| {
        k.sys_unlink(me, "/root/f").unwrap();
        None
    });
    assert_eq!(page_usage(&k, a), 0);
    assert_eq!(page_usage(&k, b), 0);
    k.mm.check_invariants().unwrap();
}

#[test]
fn usage_is_hierarchical_and_a_parents_limit_reclaims_its_childrens_pages() {
    let mut k = boot();
    let p = cg(&mut k, ROOT_MEMCG, "p");
    let c1 = cg(&mut k, p, "c1");
    let c2 = cg(&mut k, p, "c2");
    let other = cg(&mut k, ROOT_MEMCG, "other");
    append(&mut k, other, "/root/o", 4 << 20);
    append(&mut k, c1, "/root/x", 4 << 20);
    assert_eq!(page_usage(&k, p), 1024, "the child's pages count in the parent");
    // Clean the pages so that reclaim can drop them.
    run_in(&mut k, ROOT_MEMCG, |k, _| {
        k.writeback.sync_requested = true;
        None
    });
    k.run_until(k.now + 30 * NS_PER_SEC, &mut |_| false);
    k.memcg.cgs[p as usize].memory.max = 1536;
    append(&mut k, c2, "/root/y", 4 << 20);
    let usage = k.memcg.cgs[p as usize].memory.usage;
    assert!(usage <= 1536, "the parent's limit holds: {usage}");
    assert!(page_usage(&k, c1) < 1024, "reclaim took c1's pages");
    assert_eq!(page_usage(&k, other), 1024, "reclaim stays in the subtree");
    assert!(k.memcg.cgs[p as usize].events[MemcgEvent::Max as usize] > 0);
    assert!(k.memcg.cgs[p as usize].memory.failcnt > 0);
    assert_eq!(k.memcg.cgs[p as usize].memory.watermark, 1536);
}

#[test]
fn swap_out_stops_at_memory_swap_max() {
    let mut k = boot();
    let a = cg(&mut k, ROOT_MEMCG, "a");
    k.memcg.cgs[a as usize].memory.max = 1024;
    k.memcg.cgs[a as usize].swap.max = 512;
    anon(&mut k, a, 2000);
    let c = &k.memcg.cgs[a as usize];
    assert_eq!(c.memory.watermark, 1024, "memory.max holds");
    assert_eq!(c.swap.watermark, 512, "the cgroup swapped up to memory.swap.max, no further");
    // Swap-outs refused at the limit count in memory.swap.events max and fail.
    assert!(c.events[MemcgEvent::SwapMax as usize] > 0 && c.events[MemcgEvent::SwapFail as usize] > 0);
    // 2000 pages fit in neither: the memcg OOM killer ended the task.
    assert_eq!(c.events[MemcgEvent::OomKill as usize], 1);
    // Slots freed by the kill wait in the per-CPU return batches, still charged.
    assert!(c.swap.usage <= k.swap_slots_cached());
    k.drain_swap_slots_caches();
    k.memcg.drain_all_stock(a);
    let c = &k.memcg.cgs[a as usize];
    assert_eq!((c.memory.usage, c.swap.usage), (0, 0));
}

#[test]
fn swap_is_charged_to_the_cgroup_and_freed_with_the_task() {
    let mut k = boot();
    let a = cg(&mut k, ROOT_MEMCG, "a");
    k.memcg.cgs[a as usize].memory.max = 1024;
    // Hold the memory: a task that faults 1400 pages and then sleeps.
    let t = spawn_anon_holder(&mut k, a, 1400, 100);
    k.run_until(k.now + 60 * NS_PER_SEC, &mut |k| k.tasks[t as usize].rss_anon + k.memcg.cgs[a as usize].swap.usage >= 1400 && k.swap.wb.is_empty());
    let c = &k.memcg.cgs[a as usize];
    assert!(c.memory.usage <= 1024);
    assert!(c.swap.usage >= 1400 - 1024, "swap {} charged to the cgroup", c.swap.usage);
    assert!(!k.tasks[t as usize].killed);
    k.kill(t, 9);
    // The task tears its memory down (exit_mmap) before it is gone.
    k.run_until(k.now + NS_PER_SEC, &mut |k| k.task_exited(t));
    // The freed slots wait in the per-CPU return batches (free_swap_slot), still charged
    // (mem_cgroup_uncharge_swap runs in swap_entry_free); draining them uncharges them.
    let cached = k.swap_slots_cached();
    let c = &k.memcg.cgs[a as usize];
    // The page tables' pages go to the CPU's stock (obj_cgroup_uncharge_pages ->
    // refill_stock), charged until it is drained.
    assert_eq!(c.nr_pagetables, 0);
    assert_eq!(c.memory.usage, k.memcg.stock_pages(a), "exit frees memory");
    assert!(c.swap.usage <= cached, "swap charged {} with {cached} slots in the caches", c.swap.usage);
    k.drain_swap_slots_caches();
    k.memcg.drain_all_stock(a);
    let c = &k.memcg.cgs[a as usize];
    assert_eq!((c.memory.usage, c.swap.usage), (0, 0), "exit frees memory and swap charges");
}

#[test]
fn effective_low_follows_the_parents_share_down_the_tree() {
    let mut k = boot();
    let p = cg(&mut k, ROOT_MEMCG, "p");
    let x = cg(&mut k, p, "x");
    let y = cg(&mut k, p, "y");
    for (id, usage, low) in [(p, 1000, 400), (x, 300, 300), (y, 700, 500)] {
        let c = &mut k.memcg.cgs[id as usize].memory;
        c.usage = usage;
        c.low = low;
    }
    k.memcg_calculate_protection(ROOT_MEMCG);
    assert_eq!(k.memcg.cgs[p as usize].memory.elow, 400, "a child of the reclaim root keeps its setting");
    // x and y claim 300 + 500 = 800 of p's 400: they get it in proportion.
    assert_eq!(k.memcg.cgs[x as usize].memory.elow, 150);
    assert_eq!(k.memcg.cgs[y as usize].memory.elow, 250);
    assert!(!k.memcg_below_low(y) && k.memcg_protection(y, false) == 250);
    // Reclaim rooted at p: p itself is the root (no protection), its children use settings.
    k.memcg_calculate_protection(p);
    assert_eq!(k.memcg.cgs[p as usize].memory.elow, 0);
    assert_eq!(k.memcg.cgs[x as usize].memory.elow, 300);
    assert!(k.memcg_below_low(x));
    assert_eq!(k.memcg_protection(x, true), 0, "low reclaim ignores memory.low");
    for id in [p, x, y] {
        k.memcg.cgs[id as usize].memory.usage = 0;
    }
}

#[test]
fn a_cgroup_below_min_is_never_reclaimed() {
    let mut k = boot();
    let p = cg(&mut k, ROOT_MEMCG, "p");
    let x = cg(&mut k, p, "x");
    append(&mut k, x, "/root/x", 2 << 20);
    k.run_until(k.now + 40 * NS_PER_SEC, &mut |_| false);
    k.memcg.cgs[x as usize].memory.min = 1 << 20;
    let sc = k.try_to_free_mem_cgroup_pages(p, 256, None, true);
    assert_eq!(sc.nr_reclaimed, 0);
    assert_eq!(page_usage(&k, x), 512);
    k.memcg.cgs[x as usize].memory.min = 0;
    let sc = k.try_to_free_mem_cgroup_pages(p, 256, None, true);
    assert!(sc.nr_reclaimed >= 256);
    let _ = PAGE_SIZE;
}

// ---- Per-cgroup lruvecs (mem_cgroup_lruvec) ------------------------------------------------

use crate::mm::lru::LruvecId;
use crate::mm::page::{Lru, Pfn};
use crate::mm::vmscan::ScanControl;

fn lv(k: &Kernel, id: MemcgId) -> LruvecId {
    k.memcg.cgs[id as usize].lruvec
}
/// Let the flushers write the dirty pages back (dirty_expire_centisecs and more).
fn settle(k: &mut Kernel) {
    let until = k.now + 60 * NS_PER_SEC;
    k.run_until(until, &mut |_| false);
}
fn lists(k: &Kernel, id: LruvecId) -> Vec<Vec<Pfn>> {
    Lru::EVICTABLE.iter().map(|&l| k.mm.lruvec(id).collect(&k.mm.pages, l)).collect()
}

#[test]
fn pages_of_two_cgroups_land_on_two_lruvecs() {
    let mut k = boot();
    let a = cg(&mut k, ROOT_MEMCG, "a");
    let b = cg(&mut k, ROOT_MEMCG, "b");
    append(&mut k, a, "/root/fa", 1 << 20);
    append(&mut k, b, "/root/fb", 2 << 20);
    let (la, lb) = (lv(&k, a), lv(&k, b));
    assert!(la != 0 && lb != 0 && la != lb);
    assert_eq!(k.mm.lruvec(la).file_lru(), 256);
    assert_eq!(k.mm.lruvec(lb).file_lru(), 512);
    for (id, l) in [(a, la), (b, lb)] {
        for p in lists(&k, l).concat() {
            assert_eq!(k.page_memcg(p), id, "a page on {id}'s lruvec is charged to it");
            assert_eq!(k.mm.page_lruvec(p), l);
        }
    }
    // b touching a's file adds b's pages to b's lruvec (exceptions to the file's owner).
    append(&mut k, b, "/root/fa", 1 << 20);
    assert_eq!(k.mm.lruvec(la).file_lru(), 256);
    assert_eq!(k.mm.lruvec(lb).file_lru(), 768);
}

#[test]
fn cgroup_reclaim_leaves_the_other_cgroups_lists_untouched() {
    let mut k = boot();
    let a = cg(&mut k, ROOT_MEMCG, "a");
    let b = cg(&mut k, ROOT_MEMCG, "b");
    append(&mut k, a, "/root/fa", 8 << 20);
    append(&mut k, b, "/root/fb", 8 << 20);
    settle(&mut k);
    let before_b = lists(&k, lv(&k, b));
    let before_a = k.mm.lruvec(lv(&k, a)).file_lru();
    let sc = k.try_to_free_mem_cgroup_pages(a, 256, None, false);
    assert!(sc.nr_reclaimed >= 256, "{sc:?}");
    assert_eq!(k.mm.lruvec(lv(&k, a)).file_lru(), before_a - sc.nr_reclaimed);
    assert_eq!(lists(&k, lv(&k, b)), before_b, "b's lists are not scanned or reordered");
    assert_eq!(k.memcg.cgs[a as usize].vm.pgsteal_direct, sc.nr_reclaimed);
    assert_eq!(k.memcg.cgs[b as usize].vm.pgscan_direct, 0);
}

#[test]
fn memory_low_protects_a_cgroup_from_global_reclaim() {
    // Without the idle system's anonymous memory: on 6.x it lies on the root's inactive
    // anon list (boot_populate) and global reclaim would share its scan with it.
    let mut m = memtwin_machine::preset("default").expect("preset");
    memtwin_machine::apply_set(&mut m, "boot_anon=0").unwrap();
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    let a = cg(&mut k, ROOT_MEMCG, "a");
    let b = cg(&mut k, ROOT_MEMCG, "b");
    append(&mut k, a, "/root/fa", 8 << 20);
    append(&mut k, b, "/root/fb", 8 << 20);
    settle(&mut k);
    k.memcg.cgs[a as usize].memory.low = 1 << 20;
    let before_a = lists(&k, lv(&k, a));
    let before_b = k.mm.lruvec(lv(&k, b)).file_lru();
    let mut sc = ScanControl { nr_to_reclaim: 1 << 20, priority: 0, ..Default::default() };
    k.shrink_node(&mut sc);
    assert!(sc.memcg_low_skipped);
    assert_eq!(lists(&k, lv(&k, a)), before_a, "a below memory.low is skipped");
    assert!(k.mm.lruvec(lv(&k, b)).file_lru() < before_b / 2, "b is reclaimed");
    assert!(k.memcg.cgs[b as usize].vm.pgscan_direct > 0, "global reclaim counts in b's memory.stat");
    assert_eq!(k.memcg.cgs[a as usize].events_local[MemcgEvent::Low as usize], 0);
    // The low-reclaim retry reclaims a too, and counts memory.events low.
    let mut sc = ScanControl { nr_to_reclaim: 1 << 20, priority: 0, memcg_low_reclaim: true, ..Default::default() };
    k.shrink_node(&mut sc);
    assert!(k.mm.lruvec(lv(&k, a)).file_lru() < 2048);
    assert_eq!(k.memcg.cgs[a as usize].events_local[MemcgEvent::Low as usize], 1);
}

#[test]
fn rmdir_moves_the_cgroups_pages_to_its_parents_lruvec() {
    let mut k = boot();
    k.cgroup_mkdir("/sys/fs/cgroup/p").unwrap();
    k.cgroup_write(0, "/sys/fs/cgroup/p/cgroup.subtree_control", "+memory").unwrap();
    k.cgroup_mkdir("/sys/fs/cgroup/p/c").unwrap();
    let p = k.memcg.lookup("/p").unwrap();
    let c = k.memcg.lookup("/p/c").unwrap();
    append(&mut k, p, "/root/fp", 1 << 20);
    append(&mut k, c, "/root/fc", 2 << 20);
    let (lp, lc) = (lv(&k, p), lv(&k, c));
    let child = lists(&k, lc);
    let parent = lists(&k, lp);
    k.cgroup_rmdir("/sys/fs/cgroup/p/c").unwrap();
    assert!(!k.mm.lruvec(lc).live);
    assert_eq!(k.mm.lruvec(lp).file_lru(), 768);
    for (i, (pl, cl)) in parent.iter().zip(&child).enumerate() {
        // The child's list joins the tail of the parent's, in its order.
        let want: Vec<Pfn> = pl.iter().chain(cl).copied().collect();
        assert_eq!(k.mm.lruvec(lp).collect(&k.mm.pages, Lru::EVICTABLE[i]), want);
    }
    for q in child.concat() {
        assert_eq!(k.page_memcg(q), p);
        assert_eq!(k.mm.page_lruvec(q), lp);
    }
}

#[test]
fn a_refault_is_judged_against_the_lruvec_that_evicted_the_page() {
    let mut k = boot();
    let a = cg(&mut k, ROOT_MEMCG, "a");
    append(&mut k, a, "/root/fa", 4 << 20);
    let la = lv(&k, a);
    let pages = k.mm.lruvec(la).collect(&k.mm.pages, Lru::InactiveFile);
    for &q in &pages[..512] {
        k.mm.lru_move_head(q, Lru::ActiveFile);
    }
    let p = pages[600];
    let shadow = k.workingset_eviction(p);
    let order = crate::mm::workingset::bucket_order(k.mm.managed);
    assert_eq!(crate::mm::workingset::unpack_shadow(shadow, order).0, la, "the shadow records a's lruvec");
    // Evictions elsewhere (the root's clock) do not make a's refault distant.
    k.mm.lruvec_mut(0).nonresident_age += 1 << 20;
    assert!(k.workingset_refault(p, shadow, true), "distance on a's clock is within a's 512 active pages");
    // Evictions in a do.
    let shadow = k.workingset_eviction(p);
    k.mm.lruvec_mut(la).nonresident_age += 4096;
    assert!(!k.workingset_refault(p, shadow, true), "4096 evictions in a exceed a's workingset");
}

/// Limit reclaim is cgroup_reclaim(sc): not counted in the global
/// pgscan/pgsteal_kswapd/direct, pgrefill (6.x) or allocstall, counted in
/// pgscan/pgsteal_file (6.18 in a v1 memcg: pgscan_file 36 352, pgscan_direct 0).
#[test]
fn limit_reclaim_is_not_counted_as_direct_reclaim() {
    use memtwin_procfs::VmItem;
    let mut k = boot();
    let c = cg(&mut k, ROOT_MEMCG, "c");
    k.memcg.cgs[c as usize].memory.max = 1024;
    let before = k.vm.clone();
    append(&mut k, c, "/root/x", 4 << 20);
    run_in(&mut k, ROOT_MEMCG, |k, _| {
        k.writeback.sync_requested = true;
        None
    });
    k.run_until(k.now + 30 * NS_PER_SEC, &mut |_| false);
    append(&mut k, c, "/root/y", 8 << 20);
    assert!(k.memcg.cgs[c as usize].memory.usage <= 1024);
    let d = |i: VmItem| k.vm.get(i) - before.get(i);
    assert!(d(VmItem::PgscanFile) > 0 && d(VmItem::PgstealFile) > 0, "limit reclaim ran");
    assert_eq!(d(VmItem::PgscanDirect) + d(VmItem::PgstealDirect) + d(VmItem::PgscanKswapd) + d(VmItem::PgstealKswapd), 0);
    assert_eq!(d(VmItem::Pgrefill), 0, "6.x: pgrefill counts global reclaim only");
    assert_eq!(d(VmItem::AllocstallNormal), 0);
}

/// The default machine on era `kernel` (v2 on 6.x and 5.x as the presets mount it).
fn boot_era(kernel: &str) -> Kernel {
    let mut m = memtwin_machine::preset("default").expect("preset");
    memtwin_machine::apply_set(&mut m, &format!("kernel={kernel}")).unwrap();
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

/// A task of cgroup `cg` that faults in `pages` of anonymous memory, `chunk` at a time,
/// then sleeps holding it (not yet run).
fn spawn_anon_holder(k: &mut Kernel, cg: MemcgId, pages: u64, chunk: u64) -> TaskId {
    let mut done = 0;
    let t = k.spawn(
        "hold",
        "hold",
        Box::new(Script(move |k: &mut Kernel, me| {
            if done >= pages {
                return Some(Step::Block { io: false });
            }
            match k.fault_anon_pages(me, done, (pages - done).min(chunk)) {
                Ok(n) => done += n,
                Err((n, s)) => {
                    done += n;
                    return Some(s);
                }
            }
            Some(Step::Cpu { user: 0, sys: 0 })
        })),
        Sink::Null,
        Sink::Null,
    );
    k.tasks[t as usize].memcg = cg;
    // A bare task (no process image, exec.rs): the charges are the rule's alone.
    k.tasks[t as usize].image_done = true;
    t
}

/// Fault in `pages` of anonymous memory in cgroup `cg` and keep it (the task sleeps).
fn hold_anon(k: &mut Kernel, cg: MemcgId, pages: u64) -> TaskId {
    let t = spawn_anon_holder(k, cg, pages, pages);
    k.run_until(k.now + 10 * NS_PER_SEC, &mut |k| k.tasks[t as usize].rss_anon >= pages);
    assert_eq!(k.tasks[t as usize].rss_anon, pages);
    t
}

#[test]
fn a_charge_takes_a_batch_and_keeps_the_rest_in_the_cpus_stock() {
    // try_charge_memcg: MEMCG_CHARGE_BATCH at once (64 on 6.1+, 32 before), the rest in
    // the CPU's stock; the pages after it come from the stock without touching the
    // counter. Usage counts the stock; memory.stat counts pages.
    for (era, batch) in [("linux-6.x", 64u64), ("linux-5.4", 32)] {
        let mut k = boot_era(era);
        let a = cg(&mut k, ROOT_MEMCG, "a");
        hold_anon(&mut k, a, 70);
        // 70 pages and the PTE, PMD and PUD pages that map them (charged too, 4.6+).
        let own = 70u64 + 3;
        assert_eq!(k.memcg.cgs[a as usize].nr_pagetables, 3, "{era}");
        let usage = own.div_ceil(batch) * batch;
        let c = &k.memcg.cgs[a as usize];
        assert_eq!(c.memory.usage, usage, "{era}");
        assert_eq!(k.memcg.stock_pages(a), usage - own, "{era}");
        assert_eq!(k.memcg_page_stats()[a as usize].anon, 70, "{era}");
        assert_eq!(c.memory.failcnt, 0);
    }
}

#[test]
fn near_the_limit_the_batch_fails_and_counts_in_failcnt_and_the_charge_takes_its_own_page() {
    let mut k = boot_era("linux-6.x");
    let a = cg(&mut k, ROOT_MEMCG, "a");
    k.memcg.cgs[a as usize].memory.max = 100;
    hold_anon(&mut k, a, 90);
    let c = &k.memcg.cgs[a as usize];
    // The first batch fits (64 pages: the three page-table pages, then the first 61
    // pages); every page after the stock ran out tried a batch (64 + 64 > 100: a
    // failure) and then charged itself.
    assert_eq!(c.memory.usage, 90 + 3);
    assert_eq!(c.memory.failcnt, 90 + 3 - 64);
    assert_eq!(k.memcg.stock_pages(a), 0);
    assert_eq!(c.events_local[MemcgEvent::Max as usize], 0, "no reclaim for a batch");
}

#[test]
fn limit_writes_and_rmdir_drain_the_stocks_first() {
    let mut k = boot_era("linux-6.x");
    let p = cg(&mut k, ROOT_MEMCG, "p");
    k.cgroup_mkdir("/sys/fs/cgroup/p/c").unwrap();
    let c = k.memcg.lookup("/p/c").unwrap();
    let t = hold_anon(&mut k, c, 70);
    // 70 pages and their 3 page-table pages.
    assert_eq!(k.memcg.cgs[p as usize].memory.usage, 128, "the child's stock counts in the parent");
    // memory_max_write: usage (128) over the new limit (100) -> drain_all_stock first; the
    // 73 pages fit, so nothing is reclaimed.
    k.cgroup_write(0, "/sys/fs/cgroup/p/memory.max", "409600").unwrap();
    assert_eq!(k.memcg.cgs[p as usize].memory.usage, 73);
    assert_eq!(k.memcg.cgs[p as usize].events_local[MemcgEvent::Max as usize], 0);
    assert_eq!(k.memcg.cgs[p as usize].vm.pgscan_direct, 0, "no reclaim");
    // When the task is gone its pages are uncharged; the page tables' go to the stock
    // (obj_cgroup_uncharge_pages), and the stock's pages stay charged until rmdir drains
    // them (mem_cgroup_css_offline).
    k.kill(t, 9);
    k.run_until(k.now + NS_PER_SEC, &mut |k| k.task_exited(t));
    assert_eq!(k.memcg.stock_pages(c), 3);
    assert_eq!(k.memcg.cgs[p as usize].memory.usage, 3);
    let t = hold_anon(&mut k, c, 10);
    let usage = k.memcg.cgs[p as usize].memory.usage;
    assert_eq!(usage, 13 + k.memcg.stock_pages(c), "pages, tables and the stock");
    assert!(usage > 13 && usage <= 13 + 64);
    k.kill(t, 9);
    k.run_until(k.now + NS_PER_SEC, &mut |k| k.task_exited(t));
    assert_eq!(k.memcg.cgs[p as usize].memory.usage, usage - 10, "the stock's pages are still charged");
    k.cgroup_rmdir("/sys/fs/cgroup/p/c").unwrap();
    assert_eq!(k.memcg.cgs[p as usize].memory.usage, 0);
    assert_eq!(k.memcg.stock_pages(c), 0);
}

/// GFP_PGTABLE_USER's __GFP_ACCOUNT (4.6+): the page tables a cgroup's tasks fault in are
/// charged to it (MEMCG_KMEM, memory.stat `pagetables` and `kernel`); 2.6.39 charges none.
#[test]
fn page_tables_are_charged_to_the_tasks_cgroup_from_4_6() {
    for (era, charged) in [("linux-6.x", true), ("linux-5.4", true), ("linux-2.6.39", false)] {
        let mut k = boot_era(era);
        let a = cg(&mut k, ROOT_MEMCG, "a");
        // 4 MiB: two PTE pages, a PMD page and a PUD page.
        hold_anon(&mut k, a, 1024);
        let c = &k.memcg.cgs[a as usize];
        let tables = if charged { 4 } else { 0 };
        assert_eq!((c.nr_pagetables, c.nr_kmem), (tables, tables), "{era}");
        assert_eq!(c.memory.usage, 1024 + tables + k.memcg.stock_pages(a), "{era}");
        if era == "linux-6.x" {
            let path = format!("/sys/fs/cgroup{}/memory.stat", k.memcg.cgs[a as usize].path);
            let stat = k.cgroup_read(&path).unwrap();
            assert!(stat.contains("\npagetables 16384\n") && stat.starts_with("anon 4194304\n"), "{stat}");
            assert!(stat.contains("\nkernel 16384\n"), "{stat}");
        }
    }
}

/// A program's kernel stack (THREADINFO_GFP / memcg_charge_kernel_stack, 4.9+) and its
/// image's page tables are charged to its cgroup with its image's anonymous pages
/// (memory.stat `kernel_stack`, `pagetables`, both in `kernel`), and uncharged at exit;
/// 2.6.39 charges the anonymous pages only.
#[test]
fn a_programs_kernel_stack_and_image_are_charged_to_its_cgroup_from_4_9() {
    use crate::exec::{IMAGE_ANON_PAGES, IMAGE_PGTABLES};
    for (era, stack) in [("linux-6.x", 4u64), ("linux-5.4", 4), ("linux-2.6.39", 0)] {
        let mut k = boot_era(era);
        let a = cg(&mut k, ROOT_MEMCG, "a");
        let mut slept = false;
        let t = k.spawn(
            "sleep",
            "sleep 1",
            Box::new(Script(move |k: &mut Kernel, _| {
                if slept {
                    return None;
                }
                slept = true;
                Some(Step::SleepUntil { t: k.now + NS_PER_SEC, io: false })
            })),
            Sink::Null,
            Sink::Null,
        );
        k.tasks[t as usize].memcg = a;
        k.run_until(k.now + NS_PER_SEC / 2, &mut |_| false);
        let tables = if stack > 0 { IMAGE_PGTABLES } else { 0 };
        let c = &k.memcg.cgs[a as usize];
        assert_eq!((c.nr_kernel_stack, c.nr_pagetables, c.nr_kmem), (stack, tables, stack + tables), "{era}");
        assert_eq!(k.memcg_page_stats()[a as usize].anon, IMAGE_ANON_PAGES, "{era}");
        if era == "linux-6.x" {
            let path = format!("/sys/fs/cgroup{}/memory.stat", k.memcg.cgs[a as usize].path);
            let stat = k.cgroup_read(&path).unwrap();
            assert!(stat.contains("\nkernel_stack 16384\n") && stat.contains("\npagetables 45056\n"), "{stat}");
            assert!(stat.contains(&format!("\nkernel {}\n", (4 + IMAGE_PGTABLES) * 4096)), "{stat}");
        }
        k.run_until(k.now + 2 * NS_PER_SEC, &mut |k| k.task_exited(t));
        let c = &k.memcg.cgs[a as usize];
        assert_eq!((c.nr_kernel_stack, c.nr_pagetables, c.nr_kmem), (0, 0, 0), "{era}: uncharged at exit");
        assert_eq!(k.memcg_page_stats()[a as usize].anon, 0, "{era}");
    }
}

/// cgexec moves itself into the cgroup and then executes the command: the command's image
/// is made there, the kernel stack (the task's since fork) stays charged where it was.
#[test]
fn a_program_executed_after_moving_into_a_cgroup_has_its_image_there() {
    use crate::exec::{IMAGE_ANON_PAGES, IMAGE_PGTABLES};
    let mut k = boot_era("linux-6.x");
    let a = cg(&mut k, ROOT_MEMCG, "a");
    let mut step = 0;
    let t = k.spawn(
        "cgexec",
        "cgexec -g memory:a sleep 1",
        Box::new(Script(move |k: &mut Kernel, me| {
            step += 1;
            match step {
                1 => {
                    k.tasks[me as usize].memcg = a;
                    k.exec_replace_image(me);
                    Some(Step::Yield)
                }
                2 => Some(Step::SleepUntil { t: k.now + NS_PER_SEC, io: false }),
                _ => None,
            }
        })),
        Sink::Null,
        Sink::Null,
    );
    k.run_until(k.now + NS_PER_SEC / 2, &mut |_| false);
    let c = &k.memcg.cgs[a as usize];
    assert_eq!((c.nr_kernel_stack, c.nr_pagetables), (0, IMAGE_PGTABLES));
    assert_eq!(k.memcg_page_stats()[a as usize].anon, IMAGE_ANON_PAGES);
    assert_eq!(k.tasks[t as usize].rss_anon, IMAGE_ANON_PAGES, "one image, not two");
    assert_eq!(k.tasks[t as usize].kstack.len(), 4);
}

#[test]
fn a_deferred_object_charge_over_the_limit_is_owed_until_the_next_task_charge() {
    let mut k = boot_era("linux-6.x");
    let a = cg(&mut k, ROOT_MEMCG, "a");
    k.memcg.cgs[a as usize].memory.max = 100;
    hold_anon(&mut k, a, 90);
    // 90 pages and 3 page-table pages; no stock left near the limit.
    assert_eq!((k.memcg.cgs[a as usize].memory.usage, k.memcg.stock_pages(a)), (93, 0));
    // Within the limit a deferred charge is an ordinary one: two pages for 5,000 bytes.
    k.obj_cgroup_charge_by(ObjCharge::Defer, a, 5000, true).unwrap();
    let c = &k.memcg.cgs[a as usize];
    assert_eq!((c.memory.usage, c.kmem.usage, c.kmem_owed), (95, 5, 0));
    // At the limit the page it needs is owed: usage stays within memory.max, the cgroup's
    // kernel memory counts it.
    k.memcg.cgs[a as usize].memory.max = 95;
    k.obj_cgroup_charge_by(ObjCharge::Defer, a, 4000, true).unwrap();
    let c = &k.memcg.cgs[a as usize];
    assert_eq!((c.memory.usage, c.nr_kmem, c.kmem.usage, c.kmem_owed), (95, 6, 5, 1));
    // The cgroup's next charge by a task takes it with its own page.
    k.memcg.cgs[a as usize].memory.max = 1000;
    let before = k.memcg.cgs[a as usize].memory.usage;
    hold_anon(&mut k, a, 1);
    let c = &k.memcg.cgs[a as usize];
    assert_eq!(c.kmem_owed, 0);
    assert_eq!(c.kmem.usage, c.nr_kmem, "every kernel page in the counters (the new task's page tables too)");
    assert!(c.memory.usage >= before + 2, "the task's page and the owed one: {} -> {}", before, c.memory.usage);
}
