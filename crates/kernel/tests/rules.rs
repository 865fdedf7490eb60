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
        let mut k = Kernel::boot(m, 1).unwrap();
        k.debug_invariants = true;
        let n = 64;
        let before = k.vm.get(VmItem::Pgactivate);
        with_fresh_shmem(&mut k, n, move |k| {
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
    let mut k = boot("seed-000");
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
    let mut k = boot("seed-000");
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
    use memtwin_kernel::block::{Dir, ReqKind};
    let mut k = boot("seed-000");
    let d = k.block.devs.iter().position(|d| d.disk.model.write_latency_ns > d.disk.model.latency_ns).expect("a virtio disk") as u32;
    let t0 = k.now;
    let tw = k.submit_bio(d, Dir::Write, 0, 4096, ReqKind::Direct, None);
    let tr = k.submit_bio(d, Dir::Read, 1 << 20, 4096, ReqKind::Direct, None);
    assert!(tr < tw, "read completes at {tr}, write at {tw}");
    assert_eq!(k.block.next_completion(), Some(tr));
    k.run_until(tr, &mut |_| false);
    let dev = &k.block.devs[d as usize];
    assert_eq!(dev.ios_done[Dir::Read as usize], 1, "the read is done");
    assert_eq!(dev.ios_done[Dir::Write as usize], 0, "the write is not");
    assert_eq!(k.block.next_completion(), Some(tw), "the write is still in flight");
    let _ = t0;
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
