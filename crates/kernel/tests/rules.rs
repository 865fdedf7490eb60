//! One test per kernel rule the model follows, on a booted machine.

use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::mm::page::Lru;
use memtwin_kernel::mm::{Slot, PAGE_SIZE};
use memtwin_kernel::{Kernel, Program, Step, TaskId, NS_PER_SEC};
use memtwin_procfs::VmItem;

fn boot(preset: &str) -> Kernel {
    let m = memtwin_machine::preset(preset).expect("preset");
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

/// A task that runs a closure once per step until it returns Some(exit code).
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

/// Write `mb` MiB to `path` with 1 MiB writes, like dd bs=1M.
fn write_file(k: &mut Kernel, path: &'static str, mb: u64) -> TaskId {
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
    })
}

fn read_file(k: &mut Kernel, path: &'static str) -> TaskId {
    let mut fd = None;
    run_task(k, move |k, me| {
        let f = *fd.get_or_insert_with(|| k.sys_open(me, path, OpenFlags { read: true, ..Default::default() }).unwrap().0);
        let r = k.sys_read(me, f, 1 << 20).unwrap();
        if r.eof || (r.bytes == 0 && r.wait.is_none()) {
            return None;
        }
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    })
}

#[test]
fn min_free_kbytes_follows_thp_recommendation() {
    // set_recommended_min_free_kbytes: 2 zones (DMA, DMA32) on a 2 GiB machine ->
    // 512 * 2 * 2 + 512 * 2 * 9 pages = 11264 pages = 45056 kB (kernel-lab: 45056 at 2 GiB).
    let k = boot("seed-000");
    assert_eq!(k.mm.wmark.min_free_kbytes, 45056);
    assert_eq!(k.mm.wmark.min, 45056 / 4);
    assert!(k.mm.wmark.low > k.mm.wmark.min && k.mm.wmark.high > k.mm.wmark.low);
}

#[test]
fn second_access_activates_page_cache() {
    let mut k = boot("seed-000");
    write_file(&mut k, "/root/f", 4);
    // Written pages were marked accessed once: referenced, still inactive.
    let ino = k.fs.lookup("/root/f").unwrap();
    let m = k.fs.inodes[ino as usize].mapping;
    let p = k.mm.mappings[m as usize].page(0).unwrap();
    assert_eq!(k.mm.pages.lru(p), Lru::InactiveFile);
    assert!(k.mm.pages.referenced(p));
    read_file(&mut k, "/root/f");
    assert_eq!(k.mm.pages.lru(p), Lru::ActiveFile, "mark_page_accessed activates on the second touch");
    assert!(k.vm.get(VmItem::Pgactivate) >= 1024);
}

#[test]
fn unlink_frees_page_cache_at_once() {
    let mut k = boot("seed-000");
    let free0 = k.mm.nr_free();
    write_file(&mut k, "/root/f", 64);
    assert!(free0 - k.mm.nr_free() >= 64 * 256);
    run_task(&mut k, |k, me| {
        let w = k.sys_unlink(me, "/root/f").unwrap();
        w.map(|t| Step::SleepUntil { t, io: true })
    });
    let free1 = k.mm.nr_free();
    assert!(free1 + 300 >= free0, "free {free1} vs {free0} before");
    k.mm.check_invariants().unwrap();
}

#[test]
fn drop_caches_frees_clean_cache_only() {
    let mut k = boot("seed-000");
    write_file(&mut k, "/root/f", 32);
    let dirty = k.mm.stat.dirty;
    assert!(dirty > 0, "fresh writes are dirty");
    k.drop_caches(1);
    assert_eq!(k.mm.stat.dirty, dirty, "dirty pages survive drop_caches");
    // After writeback completes they are clean and can be dropped.
    k.request_sync();
    let t = k.now + 60 * NS_PER_SEC;
    k.run_until(t, &mut |k| k.mm.stat.dirty + k.mm.stat.writeback == 0);
    assert_eq!(k.mm.stat.dirty + k.mm.stat.writeback, 0);
    let cached = k.mm.stat.file_pages;
    k.drop_caches(1);
    assert!(k.mm.stat.file_pages < cached - 32 * 256 + 100);
}

#[test]
fn dirty_limits_follow_ratios_and_bytes() {
    let mut k = boot("seed-000");
    let l = k.dirty_limits();
    let avail = k.dirtyable_memory();
    assert_eq!(l.thresh, avail * 20 / 100);
    assert_eq!(l.background, avail * 10 / 100);
    k.sysctl.set("vm.dirty_bytes", "104857600").unwrap();
    assert_eq!(k.dirty_limits().thresh, 25600);
}

#[test]
fn refault_within_workingset_activates() {
    let mut k = boot("seed-000");
    write_file(&mut k, "/root/f", 8);
    k.request_sync();
    let t = k.now + 60 * NS_PER_SEC;
    k.run_until(t, &mut |k| k.mm.stat.dirty + k.mm.stat.writeback == 0);
    let ino = k.fs.lookup("/root/f").unwrap();
    let m = k.fs.inodes[ino as usize].mapping;
    let p = k.mm.mappings[m as usize].page(0).unwrap();
    // Evict it as reclaim would, leaving a shadow.
    let shadow = k.workingset_eviction(p);
    k.page_cache_delete(p, Some(shadow));
    assert!(matches!(k.mm.mappings[m as usize].slot(0), Slot::Shadow(_)));
    let before = k.vm.get(VmItem::WorkingsetActivateFile);
    read_file(&mut k, "/root/f");
    assert_eq!(k.vm.get(VmItem::WorkingsetRefaultFile), 1);
    assert_eq!(k.vm.get(VmItem::WorkingsetActivateFile), before + 1, "distance 1 is within the active list");
    let p2 = k.mm.mappings[m as usize].page(0).unwrap();
    assert_eq!(k.mm.pages.lru(p2), Lru::ActiveFile);
}

#[test]
fn writeback_happens_after_expiry_when_below_background() {
    // 40 MB dirty is far below the background threshold (~170 MB): nothing is written
    // until the inode has been dirty for dirty_expire_centisecs (30 s).
    let mut k = boot("seed-000");
    write_file(&mut k, "/root/f", 40);
    let t0 = k.now;
    let pgpgout0 = k.vm.get(VmItem::Pgpgout);
    k.run_until(t0 + 20 * NS_PER_SEC, &mut |_| false);
    assert_eq!(k.vm.get(VmItem::Pgpgout), pgpgout0, "nothing written before expiry");
    k.run_until(t0 + 40 * NS_PER_SEC, &mut |_| false);
    assert!(k.vm.get(VmItem::Pgpgout) - pgpgout0 >= 40 * 1024, "written after expiry");
    assert_eq!(k.mm.stat.dirty, 0);
}

#[test]
fn reclaim_evicts_cache_under_pressure() {
    // Fill more page cache than RAM: the allocator wakes kswapd, the cache is evicted and
    // free memory stays around the watermarks.
    let mut k = boot("seed-000");
    write_file(&mut k, "/root/big", 2500);
    assert!(k.vm.get(VmItem::PgstealKswapd) + k.vm.get(VmItem::PgstealDirect) > 0);
    assert!(k.mm.nr_free() >= k.mm.wmark.min);
    k.mm.check_invariants().unwrap();
    let _ = PAGE_SIZE;
}

/// In a task on `k`: map `n` pages of shared anonymous memory, write every page (each ends
/// up young, on the inactive anon list), then run `check` once.
fn with_fresh_shmem(k: &mut Kernel, n: u64, mut check: impl FnMut(&mut Kernel) + 'static) {
    let mut done = false;
    run_task(k, move |k, me| {
        if done {
            return None;
        }
        let d = k.map_shared_anon(me, n, memtwin_kernel::mm::Content::Text);
        for i in 0..n {
            k.touch(me, d, i, true).expect("free memory");
        }
        check(k);
        done = true;
        Some(Step::Cpu { user: 0, sys: 0 })
    });
}

/// page_check_references: before 5.9 one young PTE activates a swap-backed page (anon and
/// shmem); since 5.9 the first reference only marks it and it stays inactive, like file.
#[test]
fn young_shmem_page_activation_follows_the_era() {
    use memtwin_kernel::mm::vmscan::ScanControl;
    for (profile, activates) in [("linux-5.4", true), ("linux-5.8", true), ("linux-6.x", false)] {
        let mut m = memtwin_machine::preset("seed-000").unwrap();
        memtwin_machine::apply_set(&mut m, &format!("kernel={profile}")).unwrap();
        let mut k = Kernel::boot(m, 1).unwrap();
        k.debug_invariants = true;
        let n = 64;
        let before = k.vm.get(VmItem::Pgactivate);
        with_fresh_shmem(&mut k, n, move |k| {
            assert_eq!(k.mm.lru_len(Lru::InactiveAnon), n, "{profile}: shmem pages start inactive");
            let mut sc = ScanControl { nr_to_reclaim: 32, ..Default::default() };
            let reclaimed = k.shrink_inactive_list(n, Lru::InactiveAnon, &mut sc);
            assert_eq!(reclaimed, 0, "{profile}: young pages are not reclaimed");
        });
        let activated = k.vm.get(VmItem::Pgactivate) - before;
        if activates {
            assert_eq!(activated, n, "{profile}: each young shmem page is activated at once");
        } else {
            assert_eq!(activated, 0, "{profile}: a first reference only marks the page");
        }
    }
}

/// lru_note_cost (5.8+): pages that shrink_inactive_list writes to swap are the anon list's
/// reclaim cost; pages it only scans are not.
#[test]
fn swap_outs_are_the_anon_reclaim_cost() {
    use memtwin_kernel::mm::vmscan::ScanControl;
    let mut k = boot("seed-000");
    let n = 64;
    with_fresh_shmem(&mut k, n, move |k| {
        let mut sc = ScanControl { nr_to_reclaim: 32, ..Default::default() };
        // First pass: every page is young, so it is only marked (6.x): no I/O, no cost.
        let cost0 = k.mm.anon_cost;
        k.shrink_inactive_list(n, Lru::InactiveAnon, &mut sc);
        assert_eq!(k.mm.anon_cost, cost0, "scanning alone costs nothing");
        // Second pass: not touched since, so each page is written to swap.
        let out0 = k.vm.get(VmItem::Pswpout);
        k.shrink_inactive_list(n, Lru::InactiveAnon, &mut sc);
        let written = k.vm.get(VmItem::Pswpout) - out0;
        assert_eq!(written, n, "every page is swapped out");
        assert_eq!(k.mm.anon_cost - cost0, written, "each page written out is one unit of anon cost");
    });
}
