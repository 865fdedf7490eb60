//! Which rule seed 003's timings depend on: the article's runs (swappiness 60 with disk swap,
//! swappiness 1, zram with zero pages, zram with random data) on linux-5.8, on linux-5.8 with
//! 5.9's anonymous-LRU rules alone, and on linux-6.x.
//! `cargo run --release -p memtwin-scenario --example seed003_rules`
//! prints a Markdown table (docs/seed-003-eras.md holds one such run).
//!
//! 5.9's anonymous-LRU rules ("mm: workingset: age nonresident information alongside anonymous
//! pages" and "protect the workingset on anonymous LRU", Joonsoo Kim, merged for 5.9): new
//! anonymous pages start on the inactive list, a swap-backed page needs a second reference
//! to be activated, anonymous refaults are detected (and counted as anon cost instead of
//! every swap-in). The rest of linux-5.8 stays as it is.

use memtwin_kernel::profile::FirstRefActivates;
use memtwin_kernel::Profile;
use memtwin_scenario::{run, RunOptions, RunResult};

fn delta(r: &RunResult, name: &str) -> u64 {
    let v = r
        .series
        .columns
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_slice())
        .unwrap_or(&[]);
    v.last().zip(v.first()).map_or(0, |(l, f)| l - f)
}

fn anon_lru_59(p: &mut Profile) {
    p.new_anon_inactive = true;
    p.first_ref_activates = FirstRefActivates::None;
    p.anon_workingset = true;
    p.swapin_notes_anon_cost = false;
}

fn main() {
    let cases = [
        (
            "swappiness 60",
            "scenarios/seed-003-swappiness-60.sh",
            "1m55s",
        ),
        (
            "swappiness 1",
            "scenarios/seed-003-swappiness-1.sh",
            "no iteration in 2 min",
        ),
        (
            "zram, zero pages",
            "scenarios/seed-003-zram-zero.sh",
            "~1 min",
        ),
        (
            "zram, random data",
            "scenarios/seed-003-zram-random.sh",
            "~2 min",
        ),
    ];
    let variants: [(&str, &str, Option<fn(&mut Profile)>); 3] = [
        ("linux-5.8", "linux-5.8", None),
        ("linux-5.8 + 5.9's anon LRU", "linux-5.8", Some(anon_lru_59)),
        ("linux-6.x", "linux-6.x", None),
    ];
    println!("| case | article | profile | time swapdemo | iterations begun | refaults (file; 5.8: all) | pswpout | pgmajfault |");
    println!("|---|---|---|---|---|---|---|---|");
    for (case, path, article) in cases {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("seed003_rules: {path}: {e}");
                std::process::exit(2);
            }
        };
        for (name, kernel, edit) in variants {
            let opts = RunOptions {
                script_path: Some(path.into()),
                script_text: Some(text.clone()),
                sets: vec![format!("kernel={kernel}")],
                profile_edit: edit,
                ..Default::default()
            };
            let r = match run(&opts) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("seed003_rules: {e}");
                    std::process::exit(2);
                }
            };
            let real = r
                .transcript
                .lines()
                .find_map(|l| l.strip_prefix("real\t"))
                .unwrap_or("—")
                .to_string();
            let iters = r
                .transcript
                .lines()
                .filter(|l| l.starts_with("Iteration "))
                .count();
            println!(
                "| {case} | {article} | {name} | {real} | {iters} | {} | {} | {} |",
                // 5.x before 5.9 has one counter for both (workingset_refault).
                delta(&r, "vm.workingset_refault_file") + delta(&r, "vm.workingset_refault"),
                delta(&r, "vm.pswpout"),
                delta(&r, "vm.pgmajfault"),
            );
        }
    }
}
