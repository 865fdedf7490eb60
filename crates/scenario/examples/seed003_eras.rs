//! Seed 003's swappiness-1 run on each kernel era, side by side: how each profile's
//! anon/file balancing splits reclaim between swapping the data and evicting the library.
//! `cargo run --release -p memtwin-scenario --example seed003_eras [SCENARIO]`
//! prints a Markdown table (docs/seed-003-eras.md holds one such run).

use memtwin_scenario::{run, RunOptions, RunResult};

fn column<'a>(r: &'a RunResult, name: &str) -> &'a [u64] {
    r.series.columns.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_slice()).unwrap_or(&[])
}

fn delta(r: &RunResult, name: &str) -> u64 {
    let v = column(r, name);
    v.last().zip(v.first()).map_or(0, |(l, f)| l - f)
}

fn main() {
    let scenario = std::env::args().nth(1).unwrap_or_else(|| "scenarios/seed-003-swappiness-1.sh".into());
    let text = match std::fs::read_to_string(&scenario) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("seed003_eras: {scenario}: {e}");
            std::process::exit(2);
        }
    };
    // The demo reports each iteration's seconds on stderr.
    let text = text.replace("swapdemo", "swapdemo --times");
    println!("| profile | iterations in 120 s | s per iteration | peak swap MiB | MemAvailable MiB (median) | file refaults | file refaults activated | pswpout | pgmajfault |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for profile in ["linux-5.4", "linux-5.8", "linux-6.x"] {
        let opts = RunOptions {
            script_path: Some(scenario.clone()),
            script_text: Some(text.clone()),
            sets: vec![format!("kernel={profile}")],
            ..Default::default()
        };
        let r = match run(&opts) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("seed003_eras: {e}");
                std::process::exit(2);
            }
        };
        let iters: Vec<f64> = r
            .transcript
            .lines()
            .filter_map(|l| l.strip_prefix("iter ")?.split_once(" s=").map(|(_, s)| s.parse().unwrap_or(0.0)))
            .collect();
        let per_iter = if iters.is_empty() {
            "> 120".to_string()
        } else {
            let v: Vec<String> = iters.iter().map(|s| format!("{s:.0}")).collect();
            v.join(", ")
        };
        let total = column(&r, "mi.SwapTotal");
        let free = column(&r, "mi.SwapFree");
        let peak = total.iter().zip(free).map(|(t, f)| t - f).max().unwrap_or(0) / 1024;
        // MemAvailable once the data is in place (Shmem above 10 GiB): the test phase.
        let shmem = column(&r, "mi.Shmem");
        let mut avail: Vec<u64> = column(&r, "mi.MemAvailable")
            .iter()
            .zip(shmem)
            .filter(|(_, &s)| s > 10 << 20)
            .map(|(&a, _)| a / 1024)
            .collect();
        avail.sort_unstable();
        let median = avail.get(avail.len() / 2).copied().unwrap_or(0);
        println!(
            "| {profile} | {} | {per_iter} | {peak} | {median} | {} | {} | {} | {} |",
            iters.len(),
            delta(&r, "vm.workingset_refault_file"),
            delta(&r, "vm.workingset_activate_file"),
            delta(&r, "vm.pswpout"),
            delta(&r, "vm.pgmajfault"),
        );
    }
}
