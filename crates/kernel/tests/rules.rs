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

/// `preset` without the idle system's anonymous memory: on 6.x it lies on the inactive
/// anon list (boot_populate), which these tests scan expecting only their own pages.
fn boot_no_idle_anon(preset: &str) -> Kernel {
    let mut m = memtwin_machine::preset(preset).expect("preset");
    memtwin_machine::apply_set(&mut m, "boot_anon=0").unwrap();
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

/// A task that runs `setup` once, then sleeps until `until` and exits.
fn spawn_sleeper<F: FnMut(&mut Kernel, TaskId) + 'static>(k: &mut Kernel, name: &str, until: memtwin_kernel::Ns, mut setup: F) -> TaskId {
    let mut done = false;
    let script = Script(move |k: &mut Kernel, me| {
        if done {
            return None;
        }
        done = true;
        setup(k, me);
        Some(Step::SleepUntil { t: until, io: false })
    });
    k.spawn(name, name, Box::new(script), memtwin_kernel::Sink::Null, memtwin_kernel::Sink::Null)
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

/// __setup_per_zone_wmarks: before 4.6 low = min + min/4 and high = min + min/2; since 4.6
/// the spacing is watermark_scale_factor (10: 0.1 % of memory) or min/4, the larger.
#[test]
fn watermark_spacing_per_era() {
    for (kernel, scaled) in [("linux-2.6.39", false), ("linux-5.4", true), ("linux-6.x", true)] {
        let mut m = memtwin_machine::preset("seed-004").expect("preset");
        memtwin_machine::apply_set(&mut m, &format!("kernel={kernel}")).unwrap();
        let k = Kernel::boot(m, 1).expect("boot");
        let w = k.mm.wmark;
        let delta = if scaled { (w.min / 4).max(k.mm.managed * 10 / 10_000) } else { w.min / 4 };
        assert_eq!((w.low, w.high), (w.min + delta, w.min + if scaled { 2 * delta } else { w.min / 2 }), "{kernel}");
        if !scaled {
            // 64 GB: about 8 MB between low and min (a quarter of min_free_kbytes' 32 MB).
            assert!((7 << 20..=8 << 20).contains(&((w.low - w.min) * 4096)), "{kernel}: {} pages", w.low - w.min);
        }
    }
}

/// 2.4's free_area_init_core: per zone pages_min = size / 128 within [20, 255], low twice
/// and high three times that; summed over i386's DMA (16 MB), Normal (to 896 MB) and
/// HighMem zones. Not 2.6's min_free_kbytes: a setting of it changes nothing on 2.4.
#[test]
fn watermarks_on_2_4_come_from_zone_balance_ratio() {
    // seed 002's 128 MB: DMA 4096 pages -> 32, Normal 28672 -> 224.
    let mut k = boot("seed-002");
    assert_eq!((k.mm.wmark.min, k.mm.wmark.low, k.mm.wmark.high), (256, 512, 768));
    k.sysctl.set("vm.min_free_kbytes", "65536").unwrap();
    k.setup_per_zone_wmarks();
    assert_eq!(k.mm.wmark.min, 256);
    // 16 MB of DMA (32), 880 MB of Normal (225280 pages: 1760, clamped to 255), 1 GB of
    // HighMem (262144 pages: 2048, clamped to 255).
    let mut m = memtwin_machine::preset("seed-002").expect("preset");
    memtwin_machine::apply_set(&mut m, "ram=1920M").unwrap();
    let k = Kernel::boot(m, 1).expect("boot");
    assert_eq!((k.mm.wmark.min, k.mm.wmark.high), (32 + 255 + 255, 3 * (32 + 255 + 255)));
}

/// 2.4.10+'s balance_dirty_state: the bdflush percentages apply to nr_free_buffer_pages(),
/// the sizes of the Normal and DMA zones less their pages_high: a constant of the machine,
/// however much is free or cached.
#[test]
fn bdflush_limits_on_2_4_are_shares_of_low_memory() {
    let mut k = boot("seed-002");
    let base = (4096 - 3 * 32) + (28672 - 3 * 224);
    let l = k.dirty_limits();
    assert_eq!((l.background, l.thresh), (base * 30 / 100, base * 60 / 100));
    // Filling the page cache (and emptying free memory) does not move them.
    let free = k.mm.nr_free();
    write_file(&mut k, "/root/f", 48);
    assert!(k.mm.nr_free() + 8192 < free);
    assert_eq!(k.dirty_limits(), l);
}

#[test]
fn min_free_kbytes_follows_thp_recommendation() {
    // set_recommended_min_free_kbytes: 2 zones (DMA, DMA32) on a 2 GiB machine ->
    // 512 * 2 * 2 + 512 * 2 * 9 pages = 11264 pages = 45056 kB (Debian's 6.1 kernel under QEMU: 45056 at 2 GiB).
    let k = boot("seed-000");
    assert_eq!(k.mm.wmark.min_free_kbytes, 45056);
    assert_eq!(k.mm.wmark.min, 45056 / 4);
    assert!(k.mm.wmark.low > k.mm.wmark.min && k.mm.wmark.high > k.mm.wmark.low);
}

fn boot_profile(preset: &str, profile: &str) -> Kernel {
    let mut m = memtwin_machine::preset(preset).expect("preset");
    memtwin_machine::apply_set(&mut m, &format!("kernel={profile}")).unwrap();
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

fn first_page(k: &Kernel, path: &str) -> u32 {
    let ino = k.fs.lookup(path).unwrap();
    let m = k.fs.inodes[ino as usize].mapping;
    k.mm.page(m, 0).unwrap()
}

/// Since 4.7 (bbddabe2e436, "only do access activations on reads") a write does not mark
/// the page accessed: a written file stays inactive after one read and is activated by the
/// second (6.18: the same). Before, the write was the first access and one read activated.
#[test]
fn written_page_is_activated_by_the_second_read_since_4_7() {
    for (profile, write_marks) in [("linux-6.x", false), ("linux-5.4", false), ("linux-2.6.39", true)] {
        let mut k = boot_profile("seed-000", profile);
        write_file(&mut k, "/root/f", 4);
        let p = first_page(&k, "/root/f");
        assert_eq!(k.mm.pages.lru(p), Lru::InactiveFile);
        assert_eq!(k.mm.pages.referenced(p), write_marks, "{profile}: written page referenced");
        read_file(&mut k, "/root/f");
        let after_one = k.mm.pages.lru(p);
        read_file(&mut k, "/root/f");
        if write_marks {
            assert_eq!(after_one, Lru::ActiveFile, "{profile}: one read after the write activates");
        } else {
            assert_eq!(after_one, Lru::InactiveFile, "{profile}: one read only marks the page");
            assert_eq!(k.mm.pages.lru(p), Lru::ActiveFile, "{profile}: the second read activates");
        }
        assert!(k.vm.get(VmItem::Pgactivate) >= 1024);
    }
}

#[test]
fn unlink_frees_page_cache_at_once() {
    let mut k = boot("seed-000");
    // Free frames, counting those on the CPUs' page lists (free, not in NR_FREE_PAGES).
    let free0 = k.mm.nr_free_frames();
    write_file(&mut k, "/root/f", 64);
    assert!(free0 - k.mm.nr_free_frames() >= 64 * 256);
    run_task(&mut k, |k, me| {
        let w = k.sys_unlink(me, "/root/f").unwrap();
        w.map(|t| Step::SleepUntil { t, io: true })
    });
    let free1 = k.mm.nr_free_frames();
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

/// What the dirty thresholds are a share of. 3.14+ (global_dirtyable_memory): free pages
/// above the reserve plus the file LRU. 2.6.31 .. 3.13 (determine_dirtyable_memory):
/// free pages plus global_reclaimable_pages, which counts the anon LRU while swap has
/// free slots, with no reserve (dirty_balance_reserve is 3.3+).
#[test]
fn dirtyable_memory_counts_anon_with_swap_before_3_14() {
    for (profile, swap) in [("linux-6.x", "4G"), ("linux-2.6.39", "4G"), ("linux-2.6.39", "0")] {
        let mut m = memtwin_machine::preset("seed-000").expect("preset");
        memtwin_machine::apply_set(&mut m, &format!("kernel={profile}")).unwrap();
        memtwin_machine::apply_set(&mut m, &format!("swap={swap}")).unwrap();
        let mut k = Kernel::boot(m, 1).expect("boot");
        write_file(&mut k, "/root/f", 64);
        // A task holding 256 MiB of anonymous memory.
        let mut done = 0;
        let t = k.spawn(
            "hold",
            "hold",
            Box::new(Script(move |k: &mut Kernel, me| {
                if done >= 65536 {
                    return Some(Step::Block { io: false });
                }
                match k.fault_anon_pages(me, done, 1024) {
                    Ok(n) => done += n,
                    Err((n, s)) => {
                        done += n;
                        return Some(s);
                    }
                }
                Some(Step::Cpu { user: 0, sys: 0 })
            })),
            memtwin_kernel::Sink::Null,
            memtwin_kernel::Sink::Null,
        );
        let limit = k.now + 60 * NS_PER_SEC;
        k.run_until(limit, &mut |k| k.tasks[t as usize].rss_anon >= 65536);
        let free = k.mm.nr_free();
        let file = k.mm.lru_len(Lru::InactiveFile) + k.mm.lru_len(Lru::ActiveFile);
        let anon = k.mm.lru_len(Lru::InactiveAnon) + k.mm.lru_len(Lru::ActiveAnon);
        assert!(anon >= 65536 && file >= 16384, "{profile}: anon {anon}, file {file}");
        let want = match (profile, swap) {
            ("linux-6.x", _) => free - k.mm.wmark.high + file,
            (_, "4G") => free + file + anon + 1,
            _ => free + file + 1,
        };
        assert_eq!(k.dirtyable_memory(), want, "{profile}, swap {swap}");
    }
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
    let p = k.mm.page(m, 0).unwrap();
    // Evict it as reclaim would, leaving a shadow.
    let shadow = k.workingset_eviction(p);
    k.page_cache_delete(p, Some(shadow));
    assert!(matches!(k.mm.slot(m, 0), Slot::Shadow(_)));
    let before = k.vm.get(VmItem::WorkingsetActivateFile);
    read_file(&mut k, "/root/f");
    assert_eq!(k.vm.get(VmItem::WorkingsetRefaultFile), 1);
    assert_eq!(k.vm.get(VmItem::WorkingsetActivateFile), before + 1, "distance 1 is within the active list");
    let p2 = k.mm.page(m, 0).unwrap();
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
        memtwin_machine::apply_set(&mut m, "boot_anon=0").unwrap();
        let mut k = Kernel::boot(m, 1).unwrap();
        k.debug_invariants = true;
        let n = 64;
        let before = k.vm.get(VmItem::Pgactivate);
        with_fresh_shmem(&mut k, n, move |k| {
            // The last pages still wait in this CPU's LRU-add batch (15 a batch).
            let batched = k.mm.lru_add.total;
            assert_eq!(batched, n % 15, "{profile}: full batches went to the lists");
            assert_eq!(k.mm.lru_len(Lru::InactiveAnon) + batched, n);
            k.lru_add_drain();
            assert_eq!(k.mm.lru_len(Lru::InactiveAnon), n, "{profile}: shmem pages start inactive");
            let mut sc = ScanControl { nr_to_reclaim: 32, ..Default::default() };
            let reclaimed = k.shrink_inactive_list(0, n, Lru::InactiveAnon, &mut sc);
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
    let mut k = boot_no_idle_anon("seed-000");
    let n = 64;
    with_fresh_shmem(&mut k, n, move |k| {
        let mut sc = ScanControl { nr_to_reclaim: 32, ..Default::default() };
        // First pass: every page is young, so it is only marked (6.x): no I/O, no cost.
        let cost0 = k.mm.lruvecs[0].anon_cost;
        k.shrink_inactive_list(0, n, Lru::InactiveAnon, &mut sc);
        assert_eq!(k.mm.lruvecs[0].anon_cost, cost0, "scanning alone costs nothing");
        // Second pass: not touched since, so each page is written to swap.
        let out0 = k.vm.get(VmItem::Pswpout);
        k.shrink_inactive_list(0, n, Lru::InactiveAnon, &mut sc);
        let written = k.vm.get(VmItem::Pswpout) - out0;
        assert_eq!(written, n, "every page is swapped out");
        assert_eq!(k.mm.lruvecs[0].anon_cost - cost0, written, "each page written out is one unit of anon cost");
    });
}

/// Write `mb` MiB to `path` and wait until it is all clean on disk.
fn write_clean(k: &mut Kernel, path: &'static str, mb: u64) {
    write_file(k, path, mb);
    k.request_sync();
    let t = k.now + 120 * NS_PER_SEC;
    k.run_until(t, &mut |k| k.mm.stat.dirty + k.mm.stat.writeback == 0);
    assert_eq!(k.mm.stat.dirty + k.mm.stat.writeback, 0);
}

/// shrink_lruvec: global direct reclaim at DEF_PRIORITY scans its whole target
/// (proportional_reclaim), kswapd stops at nr_to_reclaim when one type has nothing left.
#[test]
fn direct_reclaim_at_def_priority_scans_its_whole_target() {
    use memtwin_kernel::mm::vmscan::ScanControl;
    use memtwin_kernel::mm::DEF_PRIORITY;
    let mut k = boot("seed-000");
    write_clean(&mut k, "/root/f", 1200);
    let target = k.mm.lru_len(Lru::InactiveFile) >> DEF_PRIORITY;
    assert!(target > 64, "target {target}");
    let mut direct = ScanControl { nr_to_reclaim: 32, priority: DEF_PRIORITY, ..Default::default() };
    k.shrink_node(&mut direct);
    assert!(direct.nr_scanned >= target - 1, "direct reclaim scanned {} of {target}", direct.nr_scanned);
    assert!(direct.nr_reclaimed > 32);
    let mut kswapd = ScanControl { nr_to_reclaim: 32, priority: DEF_PRIORITY, kswapd: true, ..Default::default() };
    k.shrink_node(&mut kswapd);
    assert_eq!(kswapd.nr_scanned, 32, "kswapd stops once nr_to_reclaim is met");
    // 2.6.39's shrink_zone keeps scanning at DEF_PRIORITY, stops below it.
    let mut k = boot_profile("seed-000", "linux-2.6.39");
    write_clean(&mut k, "/root/f", 1200);
    let mut sc = ScanControl { nr_to_reclaim: 32, priority: DEF_PRIORITY - 1, ..Default::default() };
    k.shrink_node(&mut sc);
    assert_eq!(sc.nr_scanned, 32, "2.6.39 below DEF_PRIORITY");
}

/// shrink_active_list leaves PG_referenced alone when it deactivates a page.
#[test]
fn deactivation_keeps_pg_referenced() {
    use memtwin_kernel::mm::vmscan::ScanControl;
    let mut k = boot("seed-000");
    write_clean(&mut k, "/root/f", 4);
    for _ in 0..3 {
        read_file(&mut k, "/root/f");
    }
    let p = first_page(&k, "/root/f");
    assert_eq!(k.mm.pages.lru(p), Lru::ActiveFile);
    assert!(k.mm.pages.referenced(p), "third read marks the active page");
    let n = k.mm.lru_len(Lru::ActiveFile);
    let mut sc = ScanControl::default();
    k.shrink_active_list(0, n, Lru::ActiveFile, &mut sc);
    assert_eq!(k.mm.pages.lru(p), Lru::InactiveFile);
    assert!(k.mm.pages.referenced(p), "deactivation does not clear PG_referenced");
}

/// Before 5.8 shrink_active_list counted every referenced page in recent_rotated; from 5.8
/// only executable file pages kept active do.
#[test]
fn active_list_rotation_counts_follow_the_era() {
    use memtwin_kernel::mm::vmscan::ScanControl;
    for (profile, counts) in [("linux-5.4", true), ("linux-5.8", false)] {
        let mut k = boot_profile("seed-000", profile);
        let n = 64;
        // New anon pages start active before 5.9; make the n at the tail young (mapped).
        let tail: Vec<u32> = k.mm.lruvecs[0].collect(&k.mm.pages, Lru::ActiveAnon).into_iter().rev().take(n as usize).collect();
        assert_eq!(tail.len(), n as usize, "{profile}: anon pages at boot");
        for &p in &tail {
            k.mm.pages.set_young(p);
        }
        let inactive0 = k.mm.lru_len(Lru::InactiveAnon);
        let before = k.mm.lruvecs[0].recent_rotated[0];
        let mut sc = ScanControl::default();
        k.shrink_active_list(0, n, Lru::ActiveAnon, &mut sc);
        assert_eq!(k.mm.lruvecs[0].recent_rotated[0] - before, if counts { n } else { 0 }, "{profile}: rotated");
        assert_eq!(k.mm.lru_len(Lru::InactiveAnon) - inactive0, n, "{profile}: every anon page deactivated");
    }
}

/// pageout sets PG_reclaim; when the swap write completes the page is rotated to the
/// inactive tail (folio_rotate_reclaimable, PGROTATED) and freed by the next reclaim pass,
/// which counts it as stolen (pgsteal_anon), not when it is written.
#[test]
fn swapped_page_is_rotated_then_stolen() {
    use memtwin_kernel::mm::vmscan::ScanControl;
    let mut k = boot_no_idle_anon("seed-000");
    let n = 64u64;
    let mut phase = 0;
    let mut map = 0u32;
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
                    // First pass marks (6.x), second writes to swap.
                    k.shrink_inactive_list(0, n, Lru::InactiveAnon, &mut sc);
                    let steal0 = k.vm.get(VmItem::PgstealAnon);
                    k.shrink_inactive_list(0, n, Lru::InactiveAnon, &mut sc);
                    assert_eq!(k.vm.get(VmItem::Pswpout), n);
                    assert_eq!(k.vm.get(VmItem::PgstealAnon), steal0, "not stolen while being written");
                    assert_eq!(k.mm.lru_len(Lru::InactiveAnon), n, "kept on the inactive list");
                    Some(Step::SleepUntil { t: k.now + NS_PER_SEC, io: false })
                }
                2 => {
                    assert_eq!(k.mm.stat.writeback, 0, "writes completed");
                    // The last ones wait in the rotate batch of the completing CPU.
                    k.lru_add_drain_all();
                    assert_eq!(k.vm.get(VmItem::Pgrotated), n, "each written page rotated");
                    assert_eq!(k.mm.lru_len(Lru::InactiveAnon), n, "still resident after the write");
                    let steal0 = k.vm.get(VmItem::PgstealAnon);
                    let freed = k.shrink_inactive_list(0, n, Lru::InactiveAnon, &mut sc);
                    assert_eq!(freed, n, "the next pass frees them");
                    assert_eq!(k.vm.get(VmItem::PgstealAnon) - steal0, n, "counted as stolen now");
                    assert!(matches!(k.mm.slot(map, 0), Slot::Swap(_)));
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

/// Refault detection (shadow entries) arrived in 3.15: none on the 2.6.39 profile.
#[test]
fn no_refault_detection_before_3_15() {
    let mut k = boot_profile("seed-000", "linux-2.6.39");
    write_clean(&mut k, "/root/f", 8);
    let p = first_page(&k, "/root/f");
    let ino = k.fs.lookup("/root/f").unwrap();
    let m = k.fs.inodes[ino as usize].mapping;
    let shadow = k.workingset_eviction(p);
    k.page_cache_delete(p, Some(shadow));
    assert_eq!(k.mm.slot(m, 0), Slot::Empty, "no shadow entry");
    read_file(&mut k, "/root/f");
    assert_eq!(k.vm.get(VmItem::WorkingsetRefaultFile), 0);
    assert_eq!(k.vm.get(VmItem::WorkingsetNodes), 0);
}

/// count_shadow_nodes: at most present pages >> 3 nodes of shadows are kept; the shrinker
/// frees the oldest (workingset_nodereclaim).
#[test]
fn shadow_nodes_are_trimmed_to_the_shrinker_limit() {
    let mut m = memtwin_machine::preset("seed-000").unwrap();
    memtwin_machine::apply_set(&mut m, "ram=128M").unwrap();
    let mut k = Kernel::boot(m, 1).unwrap();
    // Stream twice the node limit's worth of shadow entries through the cache.
    let limit = k.mm.managed >> 3;
    let mb = 2 * (limit * 64 * 4096 >> 20);
    write_file(&mut k, "/root/big", mb);
    let nodes = k.mm.shadow_nodes();
    assert!(nodes <= limit, "{nodes} shadow nodes > limit {limit}");
    assert!(k.vm.get(VmItem::WorkingsetNodereclaim) > 0, "the shrinker freed nodes");
    k.mm.check_invariants().unwrap();
}

/// Requests complete in the order the device finishes them: on virtio a read has less
/// latency than a write, so a read queued behind a write completes first.
#[test]
fn block_requests_complete_out_of_submission_order() {
    use memtwin_kernel::block::{Dir, ReqKind, NO_INODE};
    let mut k = boot("seed-000");
    let d = k.block.devs.iter().position(|d| d.disk.model.write_latency_ns > d.disk.model.latency_ns).expect("a virtio disk") as u32;
    let t0 = k.now;
    let tw = k.submit_bio(d, Dir::Write, 0, 4096, ReqKind::Direct { ino: NO_INODE }, None);
    let tr = k.submit_bio(d, Dir::Read, 1 << 20, 4096, ReqKind::Direct { ino: NO_INODE }, None);
    assert!(tr < tw, "read completes at {tr}, write at {tw}");
    assert_eq!(k.block.next_completion(), Some(tr));
    k.run_until(tr, &mut |_| false);
    let dev = &k.block.devs[d as usize];
    assert_eq!(dev.ios_done[Dir::Read as usize], 1, "the read is done");
    assert_eq!(dev.ios_done[Dir::Write as usize], 0, "the write is not");
    assert_eq!(k.block.next_completion(), Some(tw), "the write is still in flight");
    let _ = t0;
}

/// A write-through device (the virtio preset: the host commits each write on its storage
/// before it takes the next) runs writes in series, each write's latency included; reads
/// are not held up by a commit. A device with a write cache (NVMe) overlaps a write's
/// latency with the next transfer.
#[test]
fn write_through_device_runs_writes_in_series() {
    use memtwin_kernel::block::{Dir, ReqKind, NO_INODE};
    let half = 512u64 << 10;
    let mut k = boot("seed-000");
    let d = k.block.find("vdb").expect("seed 000's swap disk");
    let model = k.block.devs[d as usize].disk.model.clone();
    assert!(model.write_through, "virtio preset");
    let xfer = (half as f64 / model.write_bw * 1e9) as u64;
    let t0 = k.now;
    let a = k.submit_bio(d, Dir::Write, 4096, half, ReqKind::Direct { ino: NO_INODE }, None);
    let b = k.submit_bio(d, Dir::Write, 4096 + half, half, ReqKind::Direct { ino: NO_INODE }, None);
    let r = k.submit_bio(d, Dir::Read, 1 << 30, 4096, ReqKind::Direct { ino: NO_INODE }, None);
    assert_eq!(a - t0, xfer + model.write_latency_ns);
    assert_eq!(b - a, xfer + model.write_latency_ns, "the second write starts after the first is committed");
    assert!(r < b, "a read is not held up by the write's commit: read {r}, write {b}");
    let mut k = boot("seed-003");
    let d = 0;
    let model = k.block.devs[d as usize].disk.model.clone();
    assert!(!model.write_through);
    let xfer = (half as f64 / model.write_bw * 1e9) as u64;
    let a = k.submit_bio(d, Dir::Write, 4096, half, ReqKind::Direct { ino: NO_INODE }, None);
    let b = k.submit_bio(d, Dir::Write, 4096 + half, half, ReqKind::Direct { ino: NO_INODE }, None);
    assert_eq!(b - a, xfer, "the latency overlaps with the next transfer");
}

/// get_scan_count: with plenty of inactive file cache that is not thrashing, reclaim
/// leaves anon alone (cache_trim_mode, 5.5+; "file is plenty", 3.8+): a 768 MiB machine
/// with 400 MiB of a file cached (read once) and a program faulting in 480 MiB swaps
/// nothing (6.18 in a 768 MiB memcg: 6 anon pages scanned, none swapped). 2.6.39
/// balances anon and file by swappiness alone and scans anon too.
#[test]
fn plenty_of_inactive_file_spares_anon() {
    for (profile, spares) in [("linux-6.x", true), ("linux-5.8", true), ("linux-5.4", true), ("linux-2.6.39", false)] {
        let mut m = memtwin_machine::preset("seed-000").unwrap();
        memtwin_machine::apply_set(&mut m, "ram=768M").unwrap();
        memtwin_machine::apply_set(&mut m, &format!("kernel={profile}")).unwrap();
        let mut k = Kernel::boot(m, 1).unwrap();
        write_clean(&mut k, "/root/f", 400);
        read_file(&mut k, "/root/f");
        let (scan0, out0) = (k.vm.get(VmItem::PgscanAnon), k.vm.get(VmItem::Pswpout));
        let file0 = k.mm.stat.file_pages;
        let want = 480u64 << 8;
        let mut got = 0;
        run_task(&mut k, move |k, me| {
            if got >= want {
                return None;
            }
            match k.fault_anon_pages(me, got, (want - got).min(256)) {
                Ok(n) => {
                    got += n;
                    Some(Step::Cpu { user: 0, sys: 0 })
                }
                Err((n, step)) => {
                    got += n;
                    Some(step)
                }
            }
        });
        assert!(k.mm.stat.file_pages + 20_000 < file0, "{profile}: file cache was reclaimed");
        let (scanned, swapped) = (k.vm.get(VmItem::PgscanAnon) - scan0, k.vm.get(VmItem::Pswpout) - out0);
        if spares {
            assert!(scanned < 64 && swapped == 0, "{profile}: {scanned} anon pages scanned, {swapped} swapped");
        } else {
            assert!(scanned > 0, "{profile}: anon is scanned");
        }
    }
}

/// calc_global_load: every 5 s (LOAD_FREQ) the averages decay towards nr_running +
/// nr_uninterruptible with EXP_1/5/15 = 1884/2014/2037 in FSHIFT 11 fixed point. One task
/// busy for a minute, 11 or 12 samples: 1 - (1884/2048)^11..12 = 0.60..0.63 (1 min),
/// 0.17..0.18 (5 min), 0.06 (15 min).
#[test]
fn load_average_decays_every_five_seconds() {
    let mut k = boot("seed-000");
    let mut left = 60;
    run_task(&mut k, move |_, _| {
        if left == 0 {
            return None;
        }
        left -= 1;
        Some(Step::Cpu { user: NS_PER_SEC, sys: 0 })
    });
    let la = k.snapshot().loadavg;
    assert!((0.59..=0.64).contains(&la[0]) && (0.16..=0.19).contains(&la[1]) && (0.05..=0.07).contains(&la[2]), "{la:?}");
    let t = k.now + 600 * NS_PER_SEC;
    k.run_until(t, &mut |_| false);
    assert!(k.snapshot().loadavg[0] < 0.01, "decays when idle");
}

/// NR_FILE_MAPPED over the node's mappings: every resident page of a mapped file or shmem
/// object (the model's page_add_file_rmap / page_remove_rmap granularity).
fn mapped_resident(k: &Kernel) -> u64 {
    use memtwin_kernel::mm::MappingKind;
    k.mm.mappings.iter().filter(|s| s.live && s.mapped && s.kind != MappingKind::Anon).map(|s| s.nrpages).sum()
}

/// page_add_file_rmap counts a file page in NR_FILE_MAPPED when a process maps it;
/// page_remove_rmap uncounts it when reclaim unmaps it (try_to_unmap) or the process exits
/// (zap_pte_range): Mapped is the mapped pages still resident, never a stale total.
#[test]
fn mapped_counts_resident_mapped_file_pages() {
    use memtwin_kernel::mm::vmscan::ScanControl;
    let mut k = boot("seed-000");
    write_clean(&mut k, "/root/lib", 8);
    let boot_mapped = k.mm.stat.mapped;
    assert_eq!(boot_mapped, mapped_resident(&k), "boot: the system's libraries are mapped");
    let ino = k.fs.lookup("/root/lib").unwrap();
    let m = k.fs.inodes[ino as usize].mapping;
    let cached = k.mm.mappings[m as usize].nrpages;
    assert_eq!(cached, 8 * 256);
    let until = k.now + 10 * NS_PER_SEC;
    let t = spawn_sleeper(&mut k, "maps", until, move |k, me| k.map_file(me, m, cached, false));
    let t1 = k.now + NS_PER_SEC;
    k.run_until(t1, &mut |_| false);
    assert_eq!(k.mm.stat.mapped, boot_mapped + cached, "mmap: the cached pages are mapped");
    // Reclaim unmaps and frees the file's pages: Mapped falls with them.
    for _ in 0..8 {
        let n = k.mm.lru_len(Lru::InactiveFile);
        let mut sc = ScanControl { nr_to_reclaim: n, ..Default::default() };
        k.shrink_inactive_list(0, n, Lru::InactiveFile, &mut sc);
    }
    let left = k.mm.mappings[m as usize].nrpages;
    assert!(left < cached / 2, "reclaim freed the mapped file's pages: {left} of {cached} left");
    assert_eq!(k.mm.stat.mapped, mapped_resident(&k));
    assert!(k.mm.stat.mapped <= boot_mapped + left, "Mapped {} after reclaim: {boot_mapped} + {left} left", k.mm.stat.mapped);
    // exit_mmap: what is still cached stays cached, no longer mapped.
    k.run_until(until + NS_PER_SEC, &mut |k| k.task_exited(t));
    assert!(k.task_exited(t));
    assert_eq!(k.mm.stat.mapped, mapped_resident(&k));
    assert!(k.mm.stat.mapped <= boot_mapped, "{} mapped after exit, {boot_mapped} at boot", k.mm.stat.mapped);
    k.mm.check_invariants().unwrap();
}

/// invalidate_mapping_pages (drop_caches, POSIX_FADV_DONTNEED) removes pages without
/// leaving shadows and clears the shadows reclaim left (clear_shadow_entries): a file read
/// again after drop_caches counts no refault.
#[test]
fn drop_caches_clears_shadow_entries() {
    let mut k = boot("seed-000");
    write_clean(&mut k, "/root/f", 8);
    let ino = k.fs.lookup("/root/f").unwrap();
    let m = k.fs.inodes[ino as usize].mapping;
    // Reclaim evicts the first half of the file, leaving shadows.
    for i in 0..4 * 256 {
        let p = k.mm.page(m, i).unwrap();
        let shadow = k.workingset_eviction(p);
        k.page_cache_delete(p, Some(shadow));
    }
    assert!(matches!(k.mm.slot(m, 0), Slot::Shadow(_)));
    assert_eq!(k.mm.mappings[m as usize].nrshadows, 4 * 256);
    k.drop_caches(1);
    assert_eq!(k.mm.mappings[m as usize].nrpages, 0, "the clean rest is dropped");
    assert_eq!(k.mm.mappings[m as usize].nrshadows, 0, "no shadow survives drop_caches");
    assert_eq!(k.mm.slot(m, 0), Slot::Empty);
    assert_eq!(k.mm.slot(m, 4 * 256), Slot::Empty, "dropped pages leave no shadow");
    read_file(&mut k, "/root/f");
    assert_eq!(k.vm.get(VmItem::WorkingsetRefaultFile), 0, "no refault after drop_caches");
    assert_eq!(k.mm.mappings[m as usize].nrpages, 8 * 256);
    k.mm.check_invariants().unwrap();
    k.mm.check_index().unwrap();
}

/// Append `mb` MiB to `path` (O_APPEND), like dd oflag=append conv=notrunc.
fn append_file(k: &mut Kernel, path: &'static str, mb: u64) {
    let mut fd = None;
    let mut left = mb << 20;
    run_task(k, move |k, me| {
        let f = *fd.get_or_insert_with(|| k.sys_open(me, path, OpenFlags { write: true, append: true, ..Default::default() }).unwrap().0);
        if left == 0 {
            k.sys_close(me, f).unwrap();
            return None;
        }
        let r = k.sys_write(me, f, left.min(1 << 20)).unwrap();
        left -= r.bytes;
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    });
}

/// write_cache_pages (range_cyclic): once the cache is written out, writeback_index points
/// at the last page written (before 4.20) or at 0 (4.20+, no wrap within a call), so the
/// first page appended afterwards is the first the next writeback writes, never the last.
#[test]
fn writeback_after_catching_up_starts_with_the_next_page() {
    for profile in ["linux-6.x", "linux-5.4", "linux-2.6.39"] {
        let mut k = boot_profile("seed-000", profile);
        // 9 MiB: the last writeback call ends by running out of dirty pages, not by
        // its page budget (MAX_WRITEBACK_PAGES, 4 MiB).
        write_clean(&mut k, "/root/f", 9);
        // The sync is over (the flusher clears the request on its next pass).
        k.writeback.sync_requested = false;
        append_file(&mut k, "/root/f", 1);
        let ino = k.fs.lookup("/root/f").unwrap();
        let m = k.fs.inodes[ino as usize].mapping;
        assert_eq!(k.mm.mappings[m as usize].nr_dirty, 256, "{profile}: the appended MiB is dirty");
        assert_eq!(k.writeback_mapping(m, 1, None), 1);
        let first = k.mm.page(m, 9 * 256).unwrap();
        assert!(k.mm.pages.writeback(first), "{profile}: the first appended page goes out first");
        // The rest follows in file order from there.
        assert_eq!(k.writeback_mapping(m, 255, None), 255);
        assert_eq!(k.mm.mappings[m as usize].nr_dirty, 0);
        k.mm.check_invariants().unwrap();
    }
}

/// should_reclaim_retry counts every reclaim round without progress (no_progress_loops),
/// whatever is under writeback: without swap, a program that needs more memory than is
/// free or reclaimable is OOM-killed after MAX_RECLAIM_RETRIES rounds (each throttled for
/// at most HZ/10), even while a slow device still has a file's pages in flight.
#[test]
fn no_progress_retries_count_while_writeback_is_in_flight() {
    let mut m = memtwin_machine::preset("seed-000").unwrap();
    memtwin_machine::apply_set(&mut m, "ram=256M").unwrap();
    memtwin_machine::apply_set(&mut m, "swap=0").unwrap();
    // A disk that takes minutes to write a few MiB (a slow USB stick).
    memtwin_machine::apply_set(&mut m, "disk.vda.write_bw=32K").unwrap();
    let mut k = Kernel::boot(m, 1).unwrap();
    write_file(&mut k, "/root/f", 4);
    k.request_sync();
    // A program touching twice the RAM of anonymous memory.
    let mut vpage = 0u64;
    let hog = k.spawn(
        "hog",
        "hog",
        Box::new(Script(move |k: &mut Kernel, me| match k.fault_anon_pages(me, vpage, 256) {
            Ok(n) => {
                vpage += n;
                Some(Step::Cpu { user: 1000, sys: 0 })
            }
            Err((n, s)) => {
                vpage += n;
                Some(s)
            }
        })),
        memtwin_kernel::Sink::Null,
        memtwin_kernel::Sink::Null,
    );
    let limit = k.now + 30 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.task_exited(hog));
    assert!(k.task_exited(hog), "not OOM-killed within 30 s: {} pages still under writeback", k.mm.stat.writeback);
    assert!(k.mm.stat.writeback > 0, "the file was still being written when the program was killed");
    assert_eq!(k.vm.get(VmItem::OomKill), 1);
}

/// balance_pgdat counts the runs that reclaim nothing (pgdat->kswapd_failures); after
/// MAX_RECLAIM_RETRIES of them the node is hopeless (4.12+): kswapd sleeps although the
/// node is below its high watermark, and wakeup_kswapd leaves it asleep until some reclaim
/// makes progress. On 2.6.39 kswapd keeps trying.
#[test]
fn kswapd_gives_up_on_a_hopeless_node_since_4_12() {
    for (profile, hopeless) in [("linux-6.x", true), ("linux-5.4", true), ("linux-2.6.39", false)] {
        let mut m = memtwin_machine::preset("seed-000").unwrap();
        memtwin_machine::apply_set(&mut m, "ram=256M").unwrap();
        memtwin_machine::apply_set(&mut m, "swap=0").unwrap();
        memtwin_machine::apply_set(&mut m, &format!("kernel={profile}")).unwrap();
        let mut k = Kernel::boot(m, 1).unwrap();
        // Anonymous memory until free memory is below the low watermark with no page cache
        // left to reclaim; then the program sleeps holding it.
        let mut vpage = 0u64;
        let mut full = false;
        let hog = k.spawn(
            "hog",
            "hog",
            Box::new(Script(move |k: &mut Kernel, me| {
                if full {
                    return Some(Step::SleepUntil { t: k.now + 3600 * NS_PER_SEC, io: false });
                }
                if k.mm.nr_free() > k.mm.wmark.low {
                    return match k.fault_anon_pages(me, vpage, 16) {
                        Ok(n) => {
                            vpage += n;
                            Some(Step::Cpu { user: 1000, sys: 0 })
                        }
                        Err((n, s)) => {
                            vpage += n;
                            Some(s)
                        }
                    };
                }
                full = k.mm.file_lru() < 64;
                Some(Step::SleepUntil { t: k.now + 10_000_000, io: false })
            })),
            memtwin_kernel::Sink::Null,
            memtwin_kernel::Sink::Null,
        );
        let t = k.now + 60 * NS_PER_SEC;
        k.run_until(t, &mut |_| false);
        assert!(!k.task_exited(hog), "{profile}: no OOM");
        assert!(k.mm.nr_free() <= k.mm.wmark.high, "{profile}: the node is not balanced");
        if hopeless {
            assert!(k.mm.kswapd_failures >= 16, "{profile}: {} failed runs", k.mm.kswapd_failures);
            assert!(k.reclaim.kswapd_waiting, "{profile}: kswapd sleeps on a hopeless node");
            k.wake_kswapd();
            assert!(k.reclaim.kswapd_waiting, "{profile}: wakeup_kswapd leaves it asleep");
        } else {
            assert!(!k.reclaim.kswapd_waiting, "{profile}: kswapd keeps trying");
        }
        k.mm.check_invariants().unwrap();
    }
}

/// vm_committed_as: __vm_enough_memory charges an accountable mapping's whole size at mmap
/// (private writable: vm_acct_memory; shared anonymous: shmem_acct_size), untouched or not;
/// exit_mmap uncharges it. Read-only file mappings are not charged.
#[test]
fn committed_as_charges_accountable_mappings_at_mmap() {
    let mut k = boot("seed-000");
    write_clean(&mut k, "/root/lib", 4);
    let ino = k.fs.lookup("/root/lib").unwrap();
    let lib = k.fs.inodes[ino as usize].mapping;
    let idle = k.committed_as();
    assert_eq!(k.meminfo().committed_as, idle * 4);
    let until = k.now + 10 * NS_PER_SEC;
    let mut started = false;
    let t = k.spawn(
        "maps",
        "maps",
        Box::new(Script(move |k: &mut Kernel, me| {
            if !started {
                started = true;
                assert!(k.vm_account(me, 1000), "private writable mapping allowed");
                k.map_shared_anon(me, 2000, memtwin_kernel::mm::Content::Zero);
                k.map_file(me, lib, 1024, false);
                return Some(Step::SleepUntil { t: until, io: false });
            }
            None
        })),
        memtwin_kernel::Sink::Null,
        memtwin_kernel::Sink::Null,
    );
    k.run_until(k.now + NS_PER_SEC, &mut |_| false);
    // Both anonymous mappings, whole, not the file; and the image's data and stack (exec.rs).
    assert_eq!(k.committed_as(), idle + 3000 + memtwin_kernel::exec::IMAGE_COMMIT_PAGES);
    k.run_until(until + NS_PER_SEC, &mut |k| k.task_exited(t));
    assert!(k.task_exited(t));
    assert_eq!(k.committed_as(), idle, "exit uncharges them");
    // vm.overcommit_memory=2 refuses what would pass CommitLimit.
    k.sysctl.set("vm.overcommit_memory", "2").unwrap();
    let limit = k.meminfo().commit_limit / 4;
    assert!(!k.vm_enough_memory(limit - idle + 1));
    assert!(k.vm_enough_memory(limit - idle));
}

/// diskstats accounting (blk_account_io_done, update_io_ticks): each direction's time is
/// the sum of its requests' times from submission to completion; io_ticks is the time with
/// at least one request in flight, so two overlapping requests count their overlap once.
#[test]
fn diskstats_count_time_per_direction_and_busy_time_once() {
    use memtwin_kernel::block::{Dir, ReqKind, NO_INODE};
    let mut k = boot("seed-000");
    let d = k.block.find("vda").unwrap();
    let t0 = k.now;
    let tw = k.submit_bio(d, Dir::Write, 0, 1 << 20, ReqKind::Direct { ino: NO_INODE }, None);
    let tr = k.submit_bio(d, Dir::Read, 1 << 20, 1 << 20, ReqKind::Direct { ino: NO_INODE }, None);
    let end = tw.max(tr);
    k.run_until(end + 1_000_000_000, &mut |_| false);
    let s = k.block.devs[d as usize].stats_at(k.now);
    assert_eq!(s.ios[Dir::Read as usize], 1);
    assert_eq!(s.ios[Dir::Write as usize], 1);
    assert_eq!(s.sectors[Dir::Read as usize], 2048);
    assert_eq!(s.nsecs[Dir::Write as usize], tw - t0);
    assert_eq!(s.nsecs[Dir::Read as usize], tr - t0);
    // Both were in flight from t0: busy until the later completion, then idle.
    assert_eq!(s.io_ticks, end - t0);
    assert!(s.io_ticks < s.nsecs[0] + s.nsecs[1], "the overlap counts once");
}

/// __pte_alloc and friends: the first fault in each 2 MiB of a task's anonymous memory
/// allocates a PTE page, in each 1 GiB a PMD page, in each 512 GiB a PUD page; they count
/// as PageTables until the task exits (free_pgtables). A real 6.18 kernel: a process
/// touching 1 GiB holds ~2 MB more (VmPTE +2,052 kB: validation/manual/pagetables-6.18).
#[test]
fn page_tables_map_anonymous_memory_and_go_at_exit() {
    let mut k = boot("seed-000");
    let before = k.mm.kernel.count(memtwin_kernel::mm::KernelOwner::PageTables);
    let mut at_end = None;
    let mut done = 0u64;
    let pages = (1u64 << 30) / PAGE_SIZE + 1;
    let t = run_task(&mut k, move |k, me| {
        if done < pages {
            match k.fault_anon_pages(me, done, pages - done) {
                Ok(n) => done += n,
                Err((n, s)) => {
                    done += n;
                    return Some(s);
                }
            }
            return Some(Step::Cpu { user: 0, sys: 0 });
        }
        if at_end.is_none() {
            at_end = Some(k.mm.kernel.count(memtwin_kernel::mm::KernelOwner::PageTables));
            assert_eq!(at_end, Some(before + 513 + 2 + 1), "512 PTE pages and one more past 1 GiB, 2 PMD pages, 1 PUD page");
        }
        None
    });
    assert!(k.task_exited(t));
    assert_eq!(k.mm.kernel.count(memtwin_kernel::mm::KernelOwner::PageTables), before);
    k.mm.check_invariants().unwrap();
}

/// balance_pgdat with a watermark boost (5.0+): kswapd woken for a boost on a node above
/// the boosted high watermark reclaims the boost from the file lists only ("Do not
/// writeback or swap pages for boosted reclaim": no anonymous page scanned, none written),
/// at least the boost and not much more, in one run, and takes the boost back at its end.
/// Without a boost the same wakeup finds a balanced node and reclaims nothing.
#[test]
fn kswapd_reclaims_a_watermark_boost_from_file_pages_without_io() {
    for boost in [true, false] {
        let mut m = memtwin_machine::preset("seed-000").expect("preset");
        memtwin_machine::apply_set(&mut m, "ram=512M").unwrap();
        memtwin_machine::apply_set(&mut m, "kernel=linux-6.x").unwrap();
        let mut k = Kernel::boot(m, 1).expect("boot");
        k.debug_invariants = true;
        // Page cache fills most of memory; once written back, 100 MB of it is deleted: free
        // memory far above the high watermark, the rest clean file pages and the idle
        // system's anonymous memory.
        write_file(&mut k, "/root/b", 100);
        write_file(&mut k, "/root/a", 300);
        run_task(&mut k, |k, _| if k.vm.get(VmItem::NrDirty) + k.vm.get(VmItem::NrWriteback) > 0 { Some(Step::SleepUntil { t: k.now + NS_PER_SEC, io: false }) } else { None });
        run_task(&mut k, |k, me| {
            k.sys_unlink(me, "/root/b").unwrap();
            None
        });
        let w = k.mm.wmark;
        let cap = w.high * 15000 / 10000;
        assert!(k.mm.nr_free() > w.high + cap, "free {} high {} boost {cap}", k.mm.nr_free(), w.high);
        let before = |k: &Kernel| [VmItem::PgstealKswapd, VmItem::PgscanAnon, VmItem::NrVmscanWrite, VmItem::Pswpout, VmItem::Pageoutrun].map(|i| k.vm.get(i));
        let b0 = before(&k);
        // A fragmentation event's boost, then an allocation's wakeup (rmqueue).
        if boost {
            k.mm.watermark_boost = cap;
        }
        k.mm.zone_boosted = true;
        let limit = k.now + 2 * NS_PER_SEC;
        k.run_until(limit, &mut |_| false);
        let b1 = before(&k);
        let stolen = b1[0] - b0[0];
        if boost {
            assert!(stolen >= cap && stolen < 2 * cap, "reclaimed {stolen} for a boost of {cap}");
            assert_eq!((b1[1], b1[2], b1[3]), (b0[1], b0[2], b0[3]), "no anon scanned, nothing written or swapped");
            assert_eq!(b1[4], b0[4] + 1, "one balance_pgdat run");
            assert_eq!(k.mm.watermark_boost, 0, "the boost is taken back");
        } else {
            assert_eq!(stolen, 0);
        }
    }
}

/// The device's readahead of the file at `path`, in pages (bdi ra_pages).
fn ra_pages_of(k: &Kernel, path: &str) -> u64 {
    let ino = k.fs.lookup(path).unwrap();
    let m = k.fs.inodes[ino as usize].mapping;
    let dev = k.mm.mappings[m as usize].dev.unwrap();
    k.block.devs[dev as usize].disk.read_ahead_kb as u64 * 1024 / PAGE_SIZE
}

/// A task that drops `path` from the cache, maps its first `pages` pages (`exec`, with
/// `advice` if given) and reads them through the mapping in order from page `from`, one
/// access per page.
/// Returns the task's (major, minor) faults.
fn mmap_scan(k: &mut Kernel, path: &'static str, from: u64, pages: u64, exec: bool, advice: Option<memtwin_kernel::mm::Madvice>) -> (u64, u64) {
    let (mut m, mut i) = (None, from);
    let t = run_task(k, move |k, me| {
        let m = *m.get_or_insert_with(|| {
            let f = k.sys_open(me, path, OpenFlags { read: true, ..Default::default() }).unwrap().0;
            k.sys_fadvise_dontneed(me, f).unwrap();
            let m = k.file_mapping(me, f).unwrap();
            k.map_file(me, m, pages, exec);
            if let Some(a) = advice {
                k.madvise_file(me, m, a);
            }
            m
        });
        while i < pages {
            if let Err(w) = k.touch(me, m, i, false) {
                return Some(w);
            }
            i += 1;
        }
        None
    });
    (k.tasks[t as usize].maj_flt, k.tasks[t as usize].min_flt)
}

/// do_sync_mmap_readahead's read-around: ra_pages centred on the fault. Since 3.1 its last
/// quarter is the async part, so the page three quarters in gets PG_readahead; fault-around
/// (filemap_map_pages, 3.15+) leaves that page unmapped, the access to it faults and
/// do_async_mmap_readahead starts the next window: a stream through a mapping without
/// advice takes one major fault. Before 3.1 the read-around has no mark, but every page is
/// its own fault (no fault-around) and a fault just after the previous one (ra->prev_pos)
/// takes the sync readahead path, whose windows are marked: a stream from page 0 takes one
/// major fault too, one that starts elsewhere two (its first fault reads around).
#[test]
fn mmap_read_around_marks_its_async_quarter_since_3_1() {
    const PAGES: u64 = 1024;
    for kernel in ["linux-6.x", "linux-5.8", "linux-5.4", "linux-2.6.39", "linux-2.4"] {
        let old = kernel == "linux-2.6.39" || kernel == "linux-2.4";
        for from in [0, PAGES / 2] {
            let mut k = boot_profile("default", kernel);
            write_clean(&mut k, "/root/f", PAGES * PAGE_SIZE >> 20);
            let ra = ra_pages_of(&k, "/root/f");
            assert!(ra >= 8 && PAGES % ra == 0, "{kernel}: ra_pages {ra}");
            let pgin0 = k.vm.get(VmItem::Pgpgin);
            let (maj, min) = mmap_scan(&mut k, "/root/f", from, PAGES, false, None);
            let n = PAGES - from;
            if old {
                assert_eq!(maj, if from == 0 { 1 } else { 2 }, "{kernel} from {from}");
                assert_eq!(min, n - maj, "{kernel} from {from}: every other page its own fault");
            } else {
                assert_eq!(maj, 1, "{kernel} from {from}: one major fault, then async readahead");
                // A minor fault per fault-around block but the major fault's, and one on
                // the read-around's mark (from page 0: three quarters into the first
                // window); the later windows' marks are block-aligned first pages: the
                // fault on the block is the one that finds the marked page (fault-around
                // skips it).
                assert_eq!(min, n / 16, "{kernel} from {from}");
            }
            // What was read: the stream, and the first window's part before `from`.
            let read = (k.vm.get(VmItem::Pgpgin) - pgin0) / 4;
            assert!(read >= n && read <= n + ra / 2, "{kernel} from {from}: {read} pages read");
        }
    }
}

/// 6.16+: a VM_EXEC mapping's read-around reads ra_pages forward from the fault with no
/// async part ("executable memory rarely benefits from readahead"): a stream through
/// it faults once per ra_pages. 5.8 marks it as any other mapping.
#[test]
fn exec_read_around_reads_forward_without_a_mark_on_6_x() {
    const PAGES: u64 = 1024;
    for (kernel, forward) in [("linux-6.x", true), ("linux-5.8", false)] {
        let mut k = boot_profile("default", kernel);
        write_clean(&mut k, "/root/f", PAGES * PAGE_SIZE >> 20);
        let ra = ra_pages_of(&k, "/root/f");
        let (maj, _) = mmap_scan(&mut k, "/root/f", 0, PAGES, true, None);
        assert_eq!(maj, if forward { PAGES / ra } else { 1 }, "{kernel}: ra {ra}");
    }
}

/// A VM_SEQ_READ mapping runs on the marks its windows leave (PG_readahead on the page,
/// not an index kept aside): one major fault for the whole stream, as without advice on
/// 3.1+; on 2.6.39 too (the sync path's windows are marked in every era).
#[test]
fn madv_sequential_streams_on_page_marks() {
    const PAGES: u64 = 1024;
    for kernel in ["linux-6.x", "linux-5.4", "linux-2.6.39"] {
        let mut k = boot_profile("default", kernel);
        write_clean(&mut k, "/root/f", PAGES * PAGE_SIZE >> 20);
        let (maj, _) = mmap_scan(&mut k, "/root/f", 0, PAGES, false, Some(memtwin_kernel::mm::Madvice::Sequential));
        assert_eq!(maj, 1, "{kernel}");
    }
}

/// madvise sets VM_RAND_READ on the caller's VMA only: another process mapping the same
/// file keeps its read-around.
#[test]
fn madvise_advice_belongs_to_the_callers_mapping() {
    use memtwin_kernel::mm::Madvice;
    let mut k = boot("default");
    write_clean(&mut k, "/root/f", 4);
    let ra = ra_pages_of(&k, "/root/f");
    let m = {
        let ino = k.fs.lookup("/root/f").unwrap();
        k.fs.inodes[ino as usize].mapping
    };
    let until = k.now + 3600 * NS_PER_SEC;
    // A process that maps the file MADV_RANDOM and sleeps.
    let a = spawn_sleeper(&mut k, "random", until, move |k, me| {
        let f = k.sys_open(me, "/root/f", OpenFlags { read: true, ..Default::default() }).unwrap().0;
        k.sys_fadvise_dontneed(me, f).unwrap();
        k.map_file(me, m, 1024, false);
        k.madvise_file(me, m, Madvice::Random);
    });
    let t1 = k.now + NS_PER_SEC;
    k.run_until(t1, &mut |_| false);
    assert_eq!(k.file_advice(a, m), Madvice::Random);
    // Another one maps it without advice: its fault on a cold page reads around.
    let pgin0 = k.vm.get(VmItem::Pgpgin);
    let mut mapped = false;
    let b = run_task(&mut k, move |k, me| {
        if !mapped {
            k.map_file(me, m, 1024, false);
            mapped = true;
        }
        k.touch(me, m, 512, false).err()
    });
    assert_eq!(k.file_advice(b, m), Madvice::Normal);
    assert_eq!(k.tasks[b as usize].maj_flt, 1);
    assert_eq!(k.vm.get(VmItem::Pgpgin) - pgin0, ra * 4, "read-around of ra_pages (KiB)");
}
