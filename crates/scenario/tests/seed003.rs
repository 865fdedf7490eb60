//! Seed 003 ("Why Linux uses swap, part 2"): the shapes the model reproduces at full scale
//! (16 GB laptop, 3 GiB library, 14 GiB shared anonymous data). Expectations come from the
//! physics of the machine: the demo touches more than RAM, so it must swap; zram holding
//! zero-filled pages as markers must beat a disk; incompressible pages cost zram CPU and
//! RAM and must not beat it by much. Without a way to swap the data out (swap off, or
//! swappiness 0/1 on the pre-5.9 kernel of the article), reclaim can only take the
//! library's page cache, which the demo keeps reading: it thrashes (swap off, swappiness
//! 1) or, when the scan balance leaves nothing to reclaim, the OOM killer ends it
//! (swappiness 0).

use memtwin_scenario::{run, RunOptions};

fn scenario(name: &str) -> (f64, String, memtwin_scenario::RunResult) {
    let path = format!("{}/../../scenarios/{name}", env!("CARGO_MANIFEST_DIR"));
    let r = run(&RunOptions { script_path: Some(path), ..Default::default() }).expect("scenario runs");
    let real = r
        .transcript
        .lines()
        .find_map(|l| l.strip_prefix("real\t"))
        .map(|t| {
            let (m, s) = t.trim_end_matches('s').split_once('m').expect("bash time format");
            m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap()
        })
        .expect("time output");
    (real, r.transcript.clone(), r)
}

/// Iterations the demo completed before `timeout` ended it: it prints "Iteration k of n"
/// as iteration k starts, so the last one printed was still running.
fn iterations_done_before_timeout(t: &str) -> u64 {
    (t.lines().filter(|l| l.starts_with("Iteration ")).count() as u64).saturating_sub(1)
}

/// Pages of the 3 GiB library.
const LIB_PAGES: u64 = 3 << 18;

fn delta(r: &memtwin_scenario::RunResult, name: &str) -> u64 {
    let v = column(r, name);
    v.last().unwrap() - v[0]
}

fn peak_swap_kb(r: &memtwin_scenario::RunResult) -> u64 {
    let total = column(r, "mi.SwapTotal");
    let free = column(r, "mi.SwapFree");
    total.iter().zip(&free).map(|(t, f)| t - f).max().unwrap()
}

fn column(r: &memtwin_scenario::RunResult, name: &str) -> Vec<u64> {
    r.series.columns.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).expect(name)
}

#[test]
fn swappiness_60_finishes_in_minutes_with_gigabytes_of_swap_and_busy_kswapd() {
    let (real, t, r) = scenario("seed-003-swappiness-60.sh");
    assert!(t.contains("Iteration 11 of 11"), "all iterations run");
    assert!(!t.contains("Killed"));
    assert!((10.0..600.0).contains(&real), "order of minutes of simulated time, got {real} s");
    // Swap used at its peak: data + library exceed RAM by ~1 GiB plus the desktop, so at
    // least a GiB and at most the data size must go to swap.
    let total = column(&r, "mi.SwapTotal");
    let free = column(&r, "mi.SwapFree");
    let peak_kb = total.iter().zip(&free).map(|(t, f)| t - f).max().unwrap();
    assert!((1 << 20..14 << 20).contains(&peak_kb), "peak swap {peak_kb} kB");
    let steal = column(&r, "vm.pgsteal_kswapd");
    assert!(steal.last().unwrap() - steal[0] > 1_000_000, "kswapd reclaimed > 4 GiB");
}

#[test]
fn zram_helps_with_zero_pages_and_not_with_random_data() {
    let (disk, _, _) = scenario("seed-003-swappiness-60.sh");
    let (zero, tz, _) = scenario("seed-003-zram-zero.sh");
    let (random, tr, _) = scenario("seed-003-zram-random.sh");
    assert!(tz.contains("Iteration 11 of 11") && tr.contains("Iteration 11 of 11"));
    // Same-filled pages cost zram a scan and a marker: swapping is nearly free, so the run
    // is clearly faster than with the disk. Random pages cost a compression each and stay
    // full-sized in RAM: swapping them frees almost nothing, so zram buys nothing.
    assert!(zero < disk * 0.8, "zram with zero pages ({zero} s) clearly beats disk swap ({disk} s)");
    assert!(random > disk * 0.9, "random data ({random} s) is no better than disk swap ({disk} s)");
    assert!(random > zero * 1.1, "random data ({random} s) loses zram's advantage over zero pages ({zero} s)");
}

/// Swappiness 1 and swap off: the data stays in RAM, so the library's page cache is all
/// reclaim can take. 14 GiB of data plus the rest leaves the file LRU far less than the
/// 3 GiB library; every random read that misses is a major fault with read-around, and the
/// library is read from disk over and over: the demo is many times slower than at
/// swappiness 60, where swapping the data out keeps the library cached.
fn assert_library_thrashes(name: &str, r: &memtwin_scenario::RunResult, t: &str, done_60: f64) {
    let done = iterations_done_before_timeout(t);
    assert!(t.contains("Doing test"), "{name}: preparation completes");
    assert!(!t.contains("Out of memory"), "{name}: no OOM kill: the library can always be reclaimed");
    // At swappiness 60 the demo covers `done_60` iterations per 120 s; thrashing costs
    // at least a factor of 3.
    assert!((done as f64) * 3.0 <= done_60, "{name}: {done} iterations in 120 s vs {done_60:.1} at swappiness 60");
    // The laptop runs 5.8: one workingset_refault (file pages only before 5.9).
    let refaults = delta(r, "vm.workingset_refault");
    assert!(refaults > LIB_PAGES, "{name}: library pages refault ({refaults}) more than the library holds");
    let majflt = delta(r, "vm.pgmajfault");
    assert!(majflt > LIB_PAGES / 4, "{name}: major faults {majflt}");
    // MemAvailable while the demo runs: the file LRU cannot hold the library.
    let avail = column(r, "mi.MemAvailable");
    let low = avail.iter().filter(|&&a| a < (3 << 20)).count();
    assert!(low > 60, "{name}: MemAvailable stays below the library's 3 GiB during the test ({low} samples)");
}

fn iterations_per_120s_at_60() -> f64 {
    let (real, t, _) = scenario("seed-003-swappiness-60.sh");
    assert!(t.contains("Iteration 11 of 11"));
    11.0 * 120.0 / real
}

#[test]
fn swappiness_1_thrashes_the_library_instead_of_swapping() {
    let done_60 = iterations_per_120s_at_60();
    let (_, t, r) = scenario("seed-003-swappiness-1.sh");
    assert!(!t.contains("Iteration 11 of 11"), "the two-minute timeout ends the demo");
    assert_library_thrashes("swappiness 1", &r, &t, done_60);
    // Some anonymous memory is still swapped (the article: 2.3 GB), less than at 60.
    let (_, _, r60) = scenario("seed-003-swappiness-60.sh");
    let (p1, p60) = (peak_swap_kb(&r), peak_swap_kb(&r60));
    assert!(p1 > 256 << 10 && p1 < p60, "peak swap at swappiness 1 {p1} kB, at 60 {p60} kB");
}

#[test]
fn swap_off_thrashes_the_library() {
    let done_60 = iterations_per_120s_at_60();
    let (_, t, r) = scenario("seed-003-swapoff.sh");
    assert!(!t.contains("Iteration 11 of 11"), "the two-minute timeout ends the demo");
    assert_eq!(peak_swap_kb(&r), 0);
    assert_library_thrashes("swap off", &r, &t, done_60);
}

#[test]
fn swappiness_0_is_oom_killed_while_preparing() {
    let (real, t, r) = scenario("seed-003-swappiness-0.sh");
    // The kernel's line names the demo (the largest task) and the shell reports it.
    let oom = t.lines().find(|l| l.contains("Out of memory: Killed process")).expect("an OOM kill");
    assert!(oom.contains("(swapdemo)"), "{oom}");
    assert!(t.contains("Killed\n"));
    assert!(!t.contains("Doing test"), "killed during the memset");
    // Filling 14 GiB takes seconds at memory speed; the kill comes when RAM runs out, not
    // after minutes of thrashing.
    assert!(real < 30.0, "killed after {real} s");
    assert_eq!(delta(&r, "vm.oom_kill"), 1);
    // The browser and the editor survive.
    assert_eq!(t.matches("Out of memory").count(), 1);
}
