//! Cost of a script's length: the per-command work of the shell and the kernel must not
//! grow with what ran before (tasks that exited are reaped; `time` sums children's CPU at
//! their exit), and swapoff must walk the address spaces once, not once per batch.

use crate::figures::Figures;
use crate::host::status_bytes;
use memtwin_scenario::RunOptions;
use std::time::Instant;

fn run(script: String, sets: &[&str]) -> Result<(f64, memtwin_scenario::RunResult), String> {
    let opts = RunOptions {
        script_text: Some(script),
        machine: "seed-000".into(),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        seed: 0,
        ..Default::default()
    };
    let t0 = Instant::now();
    let r = memtwin_scenario::run(&opts).map_err(|e| e.message)?;
    Ok((t0.elapsed().as_secs_f64(), r))
}

/// N `echo` lines for N = 10k and 80k (divided by `scale`): wall time per line should be
/// flat; then swapoff of the 2 GB of anonymous memory pushed to swap on a 4 GB machine.
pub fn history(scale: u64) -> Result<Figures, String> {
    let mut f = Figures::default();
    let mut per_line = Vec::new();
    for n in [10_000 / scale, 80_000 / scale] {
        let script: String = (0..n).map(|i| format!("echo line {i}\n")).collect();
        let (wall, r) = run(script, &[])?;
        if r.exit_status != 0 {
            return Err(format!("echo x{n}: exit status {}", r.exit_status));
        }
        f.float(&format!("echo_{n}.wall_s"), wall);
        f.float(&format!("echo_{n}.us_per_line"), wall / n as f64 * 1e6);
        per_line.push(wall / n as f64);
    }
    f.float("echo.per_line_ratio_long_vs_short", per_line[1] / per_line[0]);

    // A 2 GiB holder, then 3.4 GiB more for 15 s pushes most of the holder to swap.
    let script = "memhog 2G --active 0.01 --every 1000 --comm holder &\n\
                  sleep 5\n\
                  timeout 15 memhog 3400M --every 1000 > /dev/null\n\
                  free -m\n\
                  time swapoff -a\n"
        .to_string();
    let (wall, r) = run(script, &["ram=4G"])?;
    let swap_used_mb = r
        .transcript
        .lines()
        .filter(|l| l.starts_with("Swap:"))
        .filter_map(|l| l.split_whitespace().nth(2)?.parse::<u64>().ok())
        .next()
        .unwrap_or(0);
    let real = r.transcript.lines().find(|l| l.starts_with("real\t")).unwrap_or("real\t?").trim_start_matches("real\t").to_string();
    f.int("swapoff.swapped_mb", swap_used_mb);
    f.str("swapoff.sim_real", real);
    f.float("swapoff.run_wall_s", wall);
    f.int("peak_rss_bytes", status_bytes("VmHWM"));
    Ok(f)
}
