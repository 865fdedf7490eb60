//! Seed 003 ("Why Linux uses swap, part 2"): the shapes the model reproduces at full scale
//! (16 GB laptop, 3 GiB library, 14 GiB shared anonymous data). Expectations come from the
//! physics of the machine: the demo touches more than RAM, so it must swap; zram holding
//! zero-filled pages as markers must beat a disk; incompressible pages cost zram CPU and
//! RAM and must not beat it by much.

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
    assert!(zero < disk * 0.8, "zram with zero pages ({zero} s) clearly beats disk swap ({disk} s)");
    assert!(random > zero * 1.5, "random data ({random} s) loses zram's advantage over zero pages ({zero} s)");
    assert!(random > disk * 0.9, "random data ({random} s) is no better than disk swap ({disk} s)");
}
