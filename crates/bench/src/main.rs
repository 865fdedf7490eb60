//! memtwin-bench: the benchmark harness of PRODUCT.md's "Performance, honestly measured".
//!
//! It prints figures and asserts nothing: a benchmark is not a timed test. Each benchmark
//! runs in a fresh child process (this same binary, `--child NAME`), so that the peak RSS
//! (VmHWM) a benchmark reports is its own and not the high-water mark of an earlier one.
//!
//! ```text
//! cargo run --release -p memtwin-bench -- [--quick] [--json FILE] [--only NAMES]
//!                                         [--compare-libcachesim [--python PATH]]
//! ```
//!
//! docs/benchmarks.md says what every figure means and how page events are counted.

mod figures;
mod history;
mod host;
mod json;
mod lru;
mod replay;
mod runs;

use figures::{Figures, Val};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

const USAGE: &str = "\
usage: memtwin-bench [--quick] [--json FILE] [--only NAMES] [--compare-libcachesim [--python PATH]]

Runs memtwin's benchmarks and prints their figures (wall time, simulated seconds, simulated
page events per second of wall time, host memory per simulated page). Figures only: nothing
is asserted. Build with --release; a debug build's figures mean nothing.

  --quick                 every size divided by 16: a smoke run of a few seconds
  --json FILE             also write the figures as JSON (a regular file is replaced
                          whole or not at all; a device or FIFO is written in place)
  --only NAMES            comma-separated subset of: bigcache, boot, seed000, seeds,
                          seed003, reclaim, stream1t, history, lru, replay (default:
                          bigcache,boot,seed000,seeds,seed003,reclaim,history, plus lru
                          and replay with --compare-libcachesim; stream1t only when named)
  --compare-libcachesim   replay one synthetic trace (a sequential scan of N pages, twice)
                          in memtwin and in libCacheSim's LRU and report both throughputs
  (replay)                the anchor trace (Zipf 0.9, 20 M requests over 4 M pages, 1 M-page
                          cache) by memtwin LRU, memtwin's kernel policy and libCacheSim LRU,
                          alternately, 3 rounds: requests/s (min, median) and ratios
  --python PATH           the Python that has libcachesim installed (default: python3)
  -h, --help              this text

See docs/benchmarks.md.";

/// Every benchmark, in the order they run: (name, one-line title).
pub const BENCHMARKS: &[(&str, &str)] = &[
    ("bigcache", "64 GiB machine: write a 48 GiB file, drop caches, read it twice"),
    ("boot", "boot a 1 TiB machine (default + ram=1T) and nothing else: time and host memory; then each machine preset the seeds use: CPU time per boot"),
    ("seed000", "the embedded seed-000 scenario (RunOptions::default()), median of 5"),
    ("seed003", "the six seed-003 scenarios at full scale (16 GiB laptop), one run each"),
    ("reclaim", "8 GiB machine: write a 32 GiB file and read it twice (kswapd reclaim all along)"),
    ("seeds", "every seed-000/001/002 scenario as it ships: simulated s per wall s (median of 3 runs after a warm-up)"),
    ("stream1t", "1 TiB machine: write a 512 GiB file and read it back (not in the default set: ~3 GB of host memory)"),
    ("history", "10k and 80k echo lines (per-line cost flat), swapoff of 2 GB of swapped memory on a 4 GB machine"),
    ("lru", "one synthetic trace (sequential scan of N pages, twice) in memtwin and libCacheSim LRU"),
    ("replay", "the anchor trace (Zipf 0.9, 20 M requests, 4 M pages, 1 M-page cache): memtwin LRU, memtwin kernel, libCacheSim LRU, alternately"),
];

struct Args {
    quick: bool,
    json: Option<String>,
    only: Option<Vec<String>>,
    compare: bool,
    python: String,
    child: Option<String>,
    /// For `--child lru`: where the trace is written for libCacheSim.
    trace_out: Option<String>,
    /// For `--child replay-*`: the trace to replay.
    trace: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args { quick: false, json: None, only: None, compare: false, python: "python3".into(), child: None, trace_out: None, trace: None };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value\n\n{USAGE}"));
        match arg.as_str() {
            "--quick" => a.quick = true,
            "--json" => a.json = Some(value("--json")?),
            "--only" => {
                let names: Vec<String> = value("--only")?.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
                for n in &names {
                    if !BENCHMARKS.iter().any(|(b, _)| b == n) {
                        return Err(format!(
                            "--only: unknown benchmark '{n}' (benchmarks: {})",
                            BENCHMARKS.iter().map(|(b, _)| *b).collect::<Vec<_>>().join(", ")
                        ));
                    }
                }
                a.only = Some(names);
            }
            "--compare-libcachesim" => a.compare = true,
            "--python" => a.python = value("--python")?,
            "--child" => a.child = Some(value("--child")?),
            "--trace-out" => a.trace_out = Some(value("--trace-out")?),
            "--trace" => a.trace = Some(value("--trace")?),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            o => return Err(format!("unknown option '{o}'\n\n{USAGE}")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(m) => {
            eprintln!("memtwin-bench: {m}");
            return ExitCode::from(2);
        }
    };
    if let Some(name) = &args.child {
        return child_main(name, &args);
    }
    parent_main(&args)
}

/// In the child: run one benchmark and print its figures as `@fig KEY<TAB>VALUE` lines.
fn child_main(name: &str, args: &Args) -> ExitCode {
    let scale = if args.quick { 16 } else { 1 };
    let r = match name {
        "bigcache" => runs::bigcache(scale),
        "seed000" => runs::seed000(),
        "boot" => runs::boot(scale),
        "seed003" => runs::seed003(),
        "reclaim" => runs::reclaim(scale),
        "seeds" => runs::seeds(3),
        "stream1t" => runs::stream1t(scale),
        "history" => history::history(scale),
        "lru" => runs::lru_memtwin(scale, args.trace_out.as_deref()),
        "replay-trace" => match &args.trace {
            // Write the anchor trace only (to profile a replay child on it).
            Some(t) => {
                replay::write_zipf_trace(t, replay::REQUESTS / scale, replay::PAGES / scale, replay::ALPHA, replay::SEED)
                    .map(|_| Figures::default())
                    .map_err(|e| format!("cannot write the trace {t}: {e}"))
            }
            None => Err("--trace is missing".to_string()),
        },
        "replay-lru" | "replay-kernel" => match &args.trace {
            Some(t) => replay::child(&name["replay-".len()..], t, scale),
            None => Err("--trace is missing".to_string()),
        },
        _ => Err(format!("unknown benchmark '{name}'")),
    };
    match r {
        Ok(f) => {
            for (k, v) in &f.items {
                println!("@fig {k}\t{}", v.encode());
            }
            ExitCode::SUCCESS
        }
        Err(m) => {
            eprintln!("memtwin-bench: {name}: {m}");
            ExitCode::FAILURE
        }
    }
}

/// Run `--child NAME` and collect its figures.
fn run_child(name: &str, args: &Args, extra: &[String]) -> Result<Figures, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.arg("--child").arg(name);
    if args.quick {
        cmd.arg("--quick");
    }
    cmd.args(extra);
    let out = cmd.stdin(Stdio::null()).stderr(Stdio::inherit()).output().map_err(|e| format!("cannot start child: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("child exited with {}", out.status));
    }
    let mut f = Figures::default();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("@fig ") {
            if let Some((k, v)) = rest.split_once('\t') {
                f.items.push((k.to_string(), Val::decode(v)));
            }
        }
    }
    Ok(f)
}

fn parent_main(args: &Args) -> ExitCode {
    if cfg!(debug_assertions) {
        eprintln!("memtwin-bench: warning: this is a debug build; its figures mean nothing (use cargo run --release)");
    }
    if let Some(path) = &args.json {
        // Fail before minutes of benchmarks, not after them.
        if let Err(e) = memtwin_scenario::outfile::check(path) {
            eprintln!("memtwin-bench: cannot write '{path}': {}", memtwin_scenario::outfile::reason(&e));
            return ExitCode::FAILURE;
        }
    }
    let selected: Vec<&str> = match &args.only {
        Some(names) => BENCHMARKS.iter().map(|(b, _)| *b).filter(|b| names.iter().any(|n| n == b)).collect(),
        None => {
            let mut v = vec!["bigcache", "boot", "seed000", "seeds", "seed003", "reclaim", "history"];
            if args.compare {
                v.push("lru");
                v.push("replay");
            }
            v
        }
    };
    let host = host::describe();
    let command = std::iter::once("memtwin-bench".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ");
    println!("memtwin-bench {} ({} build){}", env!("CARGO_PKG_VERSION"), if cfg!(debug_assertions) { "debug" } else { "release" }, if args.quick { ", --quick: sizes / 16" } else { "" });
    for (k, v) in &host.items {
        println!("  {k:<14} {}", v.show());
    }
    println!();

    let started = Instant::now();
    let mut results: Vec<(String, Result<Figures, String>)> = Vec::new();
    for name in selected {
        let title = BENCHMARKS.iter().find(|(b, _)| *b == name).map(|(_, t)| *t).unwrap_or("");
        println!("== {name}: {title}{}", if args.quick && !name.starts_with("seed") { " [--quick: sizes / 16]" } else { "" });
        let r = match name {
            "lru" => lru::compare(args),
            "replay" => replay::compare(args),
            _ => run_child(name, args, &[]),
        };
        match &r {
            Ok(f) => f.print_table(name),
            Err(m) => println!("   FAILED: {m}"),
        }
        println!();
        results.push((name.to_string(), r));
    }
    let total = started.elapsed().as_secs_f64();
    println!("total wall time {:.1} s", total);

    let failed = results.iter().any(|(_, r)| r.is_err());
    if let Some(path) = &args.json {
        let doc = json::document(&command, args.quick, &host, &results, total);
        match memtwin_scenario::outfile::write(path, doc.as_bytes()) {
            Ok(()) => println!("figures written to {path}"),
            Err(e) => {
                eprintln!("memtwin-bench: cannot write '{path}': {}", memtwin_scenario::outfile::reason(&e));
                return ExitCode::FAILURE;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
