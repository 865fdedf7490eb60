//! Run a scenario from the command line without the Python layer (for development):
//! `cargo run --release -p memtwin-scenario --example run -- [SCRIPT] [--machine M] [--set K=V]...`
fn main() {
    let mut opts = memtwin_scenario::RunOptions::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--machine" => opts.machine = args.next().unwrap_or_default(),
            "--set" => opts.sets.push(args.next().unwrap_or_default()),
            "--seed" => opts.seed = args.next().and_then(|s| s.parse().ok()).unwrap_or(0),
            p => opts.script_path = Some(p.to_string()),
        }
    }
    let t = std::time::Instant::now();
    match memtwin_scenario::run(&opts) {
        Ok(r) => {
            print!("{}", r.transcript);
            eprintln!("exit {} sim {:.1}s wall {:.2}s", r.exit_status, r.sim_seconds, t.elapsed().as_secs_f64());
        }
        Err(e) => {
            eprintln!("memtwin: {e}");
            std::process::exit(2);
        }
    }
}
