//! Same seed, same result, byte for byte: the transcript, the exit status, the simulated
//! time and every sampled counter.

mod common;

use common::*;
use memtwin_scenario::{RunOptions, RunResult};

fn assert_identical(a: &RunResult, b: &RunResult, what: &str) {
    assert!(a.transcript.as_bytes() == b.transcript.as_bytes(), "{what}: transcripts differ{}", first_difference(&a.transcript, &b.transcript));
    assert_eq!(a.exit_status, b.exit_status, "{what}: exit status");
    assert_eq!(a.sim_seconds.to_bits(), b.sim_seconds.to_bits(), "{what}: simulated time {} vs {}", a.sim_seconds, b.sim_seconds);
    assert_eq!(a.series.t_s.len(), b.series.t_s.len(), "{what}: number of samples");
    for (x, y) in a.series.t_s.iter().zip(&b.series.t_s) {
        assert_eq!(x.to_bits(), y.to_bits(), "{what}: sample times");
    }
    let names_a: Vec<&str> = a.series.columns.iter().map(|(n, _)| n.as_str()).collect();
    let names_b: Vec<&str> = b.series.columns.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names_a, names_b, "{what}: series columns");
    for ((name, va), (_, vb)) in a.series.columns.iter().zip(&b.series.columns) {
        if let Some(i) = (0..va.len().max(vb.len())).find(|&i| va.get(i) != vb.get(i)) {
            panic!("{what}: {name} differs at sample {i}: {:?} vs {:?}", va.get(i), vb.get(i));
        }
    }
}

fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!(" at line {}:\n  {x}\n  {y}", i + 1);
        }
    }
    format!(" in length: {} vs {} lines", a.lines().count(), b.lines().count())
}

#[test]
fn default_scenario_twice_is_byte_identical() {
    // RunOptions::default(): the embedded seed-000 scenario on the machine its
    // `# machine:` line names, seed 0.
    let a = memtwin_scenario::run(&RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let b = memtwin_scenario::run(&RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!a.transcript.is_empty() && !a.series.t_s.is_empty());
    assert_identical(&a, &b, "default scenario, run twice");
    // The embedded scenario is the file in scenarios/: running the file gives the same.
    let f = run_seed000(0);
    assert_identical(&a, &f, "embedded vs file");
}

#[test]
fn another_seed_is_reproducible_too() {
    let a = run_seed000(12345);
    let b = run_seed000(12345);
    assert_identical(&a, &b, "seed 12345, run twice");
}

#[test]
fn concurrent_runs_do_not_influence_each_other() {
    // Simulations share no global state: two at once give what one alone gives.
    let alone = run_seed000(7);
    let (x, y) = std::thread::scope(|s| {
        let h1 = s.spawn(|| run_seed000(7));
        let h2 = s.spawn(|| run_seed000(7));
        (h1.join().expect("run 1"), h2.join().expect("run 2"))
    });
    assert_identical(&alone, &x, "alone vs concurrent #1");
    assert_identical(&alone, &y, "alone vs concurrent #2");
}

/// A workload that picks pages at random: swapdemo's reads of its library, from disk.
fn random_access(seed: u64) -> RunResult {
    let text = "dd if=/dev/zero of=library.bin bs=1M count=1024 status=none\n\
                echo 3 > /proc/sys/vm/drop_caches\n\
                time swapdemo --mem-gb 1 --lib-gb 1 --data-gb 1 --library library.bin\n";
    memtwin_scenario::run(&RunOptions {
        script_path: Some("random.sh".into()),
        script_text: Some(text.into()),
        machine: "seed-000".into(),
        seed,
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn different_seeds_pick_different_pages() {
    let a = random_access(1);
    let b = random_access(1);
    assert_identical(&a, &b, "random access, seed 1 twice");
    let c = random_access(2);
    let differ = a.transcript != c.transcript || a.series.columns != c.series.columns;
    assert!(differ, "seeds 1 and 2 gave the same run:\n{}", a.transcript);
}
