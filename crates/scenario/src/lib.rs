//! Scenarios: the shell-like language, the built-in commands (workloads) and the runner
//! that replays a script on a simulated machine.

mod builtins;
pub mod commands;
mod guard;
pub mod lang;
pub mod outfile;
mod runner;
pub mod replay;

pub use runner::Shell;
pub use memtwin_kernel::host;
pub use memtwin_kernel::delayacct::Breakdown;
pub use memtwin_kernel::{LatencySummary, ReclaimKind, ReclaimStats};

/// What to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Path of the script, used in error messages and to read it when `script_text` is None.
    /// None with no text: the embedded seed-000 scenario.
    pub script_path: Option<String>,
    pub script_text: Option<String>,
    /// Preset name or path to a machine TOML file. Empty: the scenario's own `# machine:`
    /// line, else "default".
    pub machine: String,
    /// Overrides, "KEY=VALUE": machine fields (ram=256M, cpus=4) or sysctls (vm.dirty_ratio=5).
    pub sets: Vec<String>,
    pub seed: u64,
    pub limits: Limits,
    /// Host memory available to the run, bytes. None: read from the host (`host::available`).
    pub host_available: Option<u64>,
    /// For experiments from Rust (an example, a test): change the era's rules after boot,
    /// to see which rule a result depends on (`examples/seed003_rules.rs`). The command
    /// line has no such option: a run's rules are its kernel profile's.
    pub profile_edit: Option<fn(&mut memtwin_kernel::Profile)>,
}

/// Default simulated-time limit: one week.
pub const DEFAULT_MAX_SIM_NS: u64 = runner::MAX_SIM_NS;
/// Default wall-time limit: one hour.
pub const DEFAULT_MAX_WALL: std::time::Duration = std::time::Duration::from_secs(3600);
/// Default event limit: 10^10 kernel events (hours of wall time on the fastest host).
pub const DEFAULT_MAX_EVENTS: u64 = 10_000_000_000;
/// Default output limit: 64 MiB printed to the terminal or captured by redirections.
pub const DEFAULT_MAX_OUTPUT: u64 = 64 << 20;

/// Bounds of one run. Reaching one ends the run early: `RunResult::stopped` says which, and
/// the transcript and series keep what was printed and sampled until then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Simulated time, ns.
    pub max_sim_ns: u64,
    /// Wall time; None: unlimited.
    pub max_wall: Option<std::time::Duration>,
    /// Kernel events (task steps, CPU bursts, I/O completions) processed.
    pub max_events: u64,
    /// Bytes the commands print, to the terminal or into redirected files.
    pub max_output: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_sim_ns: DEFAULT_MAX_SIM_NS, max_wall: Some(DEFAULT_MAX_WALL), max_events: DEFAULT_MAX_EVENTS, max_output: DEFAULT_MAX_OUTPUT }
    }
}

/// Why a run ended before its script did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    SimTime,
    Wall,
    Events,
    Output,
    /// The output hook asked to stop (Ctrl-C, or an error while handling the output).
    Interrupted,
}

impl StopReason {
    /// The command-line option that sets this limit ("interrupted" for an interruption).
    pub fn option(self) -> &'static str {
        match self {
            StopReason::SimTime => "--max-sim-time",
            StopReason::Wall => "--max-wall",
            StopReason::Events => "--max-events",
            StopReason::Output => "--max-output",
            StopReason::Interrupted => "interrupted",
        }
    }
    /// Name in results: "max_sim_time", "max_wall", "max_events", "max_output", "interrupted".
    pub fn name(self) -> &'static str {
        match self {
            StopReason::SimTime => "max_sim_time",
            StopReason::Wall => "max_wall",
            StopReason::Events => "max_events",
            StopReason::Output => "max_output",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// Called with each new piece of the transcript while the run goes on; return false to stop
/// the run (it then ends as `StopReason::Interrupted`).
pub type OutputHook = Box<dyn FnMut(&str) -> bool + Send>;

/// Samples of every /proc/vmstat and /proc/meminfo field, one row per tick.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Sample times, seconds since boot.
    pub t_s: Vec<f64>,
    /// ("vm.<name>" or "mi.<Name>", values).
    pub columns: Vec<(String, Vec<u64>)>,
}

/// One top-level command of the script as it ran: where it started and ended in simulated
/// time, what it printed, /proc/vmstat before and after (the era's own fields, in the order
/// of `RunResult::vmstat_names`: 2.6.39's pgscan_kswapd_normal, 2.4's four paging fields
/// of /proc/stat), and what
/// its tasks did and where their time went (docs/results.md describes every field).
#[derive(Clone, Debug, Default)]
pub struct CommandRecord {
    /// Script line.
    pub line: u32,
    /// The command as the shell echoed it (without the `# ` prompt).
    pub source: String,
    pub background: bool,
    pub start_ns: u64,
    pub end_ns: u64,
    pub exit_status: i32,
    /// Byte range of the transcript the command printed, after its echoed line (background
    /// jobs print later, into the ranges of the commands that run meanwhile).
    pub output_start: usize,
    pub output_end: usize,
    pub vmstat_start: Vec<u64>,
    pub vmstat_end: Vec<u64>,
    /// When the command's last task ended: `end_ns` for a foreground command, the job's
    /// exit (or the end of the run, if it still ran) for `cmd &`.
    pub job_end_ns: u64,
    /// Tasks the command ran (0 for shell built-ins).
    pub tasks: u32,
    /// CPU time of its tasks, ns.
    pub cpu_user_ns: u64,
    pub cpu_sys_ns: u64,
    /// Bytes its tasks passed through read(2) / write(2) (rchar, wchar).
    pub rchar: u64,
    pub wchar: u64,
    /// Bytes its tasks made storage read / write (/proc/PID/io read_bytes, write_bytes).
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// max(rchar, wchar) per second of `breakdown.wall_ns` (what dd reports).
    pub throughput_bytes_per_s: f64,
    pub min_flt: u64,
    pub maj_flt: u64,
    /// Its tasks killed by the OOM killer.
    pub oom_kills: u32,
    /// Where the time from `start_ns` to `job_end_ns` went; the parts sum to `wall_ns`.
    pub breakdown: memtwin_kernel::delayacct::Breakdown,
}

/// The kernel threads of one name over the run (kswapd0, flush-8:0, nfsd, ...): the work the
/// kernel did for no command of the script, which a command's own record does not show (an
/// NFS server's direct reclaim is in its nfsd threads). Threads of the same name are summed,
/// so `breakdown.wall_ns` is thread-seconds; a crash or reboot adds the new kernel's threads
/// to the same record.
#[derive(Clone, Debug, Default)]
pub struct KthreadRecord {
    /// The thread's name as /proc/PID/comm shows it (without a workqueue worker's work).
    pub comm: String,
    /// Threads of that name that ran (started at boot or later; stopped ones included).
    pub threads: u32,
    pub cpu_user_ns: u64,
    pub cpu_sys_ns: u64,
    /// Where their lifetimes went; the parts sum to `wall_ns`.
    pub breakdown: memtwin_kernel::delayacct::Breakdown,
}


#[derive(Clone, Debug, Default)]
pub struct RunResult {
    /// Everything the scenario's commands printed, as a terminal would show it.
    pub transcript: String,
    /// Exit status of the script (the last command's, or the failing one's under `set -e`).
    pub exit_status: i32,
    pub series: Series,
    /// Simulated seconds the script took.
    pub sim_seconds: f64,
    /// Set when a limit (or an interruption) ended the run before the script did: why, and
    /// a one-line message saying so. `exit_status` is then the last command's so far.
    pub stopped: Option<(StopReason, String)>,
    /// One record per top-level command (a `crash`/`reboot` restarts the counters).
    pub commands: Vec<CommandRecord>,
    /// The names of `CommandRecord::vmstat_start`/`vmstat_end`'s values: the fields the
    /// machine's kernel prints in /proc/vmstat, in its order (for Linux 2.4, which has no
    /// /proc/vmstat, the paging fields of /proc/stat under today's names).
    pub vmstat_names: Vec<String>,
    /// The machine as named (preset or file) and its kernel profile ("linux-5.8", ...).
    pub machine_name: String,
    pub kernel_profile: String,
    /// The machine file's TOML text (a preset's embedded file or the file read); the
    /// overrides (`RunOptions::sets`) apply on top of it.
    pub machine_toml: String,
    /// Every reclaim invocation per path (`ReclaimKind`: kswapd, direct, split page, split
    /// slab): its duration and lock wait in ns, in the order they ended, across reboots.
    pub reclaim_passes: memtwin_kernel::ReclaimStats,
    /// /proc/pressure totals at the end of the run, µs: [io some, io full, memory some,
    /// memory full, cpu some, cpu full] (since the last boot); None before Linux 4.20.
    pub pressure_total_us: Option<[u64; 6]>,
    /// The kernel threads' time, summed by name, in the order they were first started.
    pub kthreads: Vec<KthreadRecord>,
}

/// Why a run could not start or go on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad input: scenario, machine, option.
    #[default]
    BadInput,
    /// The machine needs more host memory than is available.
    HostMemory,
}

/// An error: the message names file:line where there is one and what is accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunError {
    pub message: String,
    pub kind: ErrorKind,
}

impl RunError {
    pub fn bad_input(message: String) -> RunError {
        RunError { message, kind: ErrorKind::BadInput }
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunError {}

/// The embedded default scenario (seed 000's page-cache walk-through).
pub const DEFAULT_SCENARIO_NAME: &str = "scenarios/seed-000-vmstat.sh";
pub const DEFAULT_SCENARIO: &str = include_str!("../../../scenarios/seed-000-vmstat.sh");

/// Error messages are one line: newlines that came from the script are shown escaped.
pub(crate) fn one_line(s: &str) -> String {
    s.replace('\r', "\\r").replace('\n', "\\n")
}

/// The machine a script asks for in a `# machine: NAME` comment line, if any.
pub fn machine_directive(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .take_while(|l| l.is_empty() || l.starts_with('#'))
        .find_map(|l| l.trim_start_matches('#').trim().strip_prefix("machine:").map(|m| m.trim().to_string()))
}

/// Check every command whose words are plain text before anything runs, so that a typo on
/// the last line is reported at once with its line number. Every problem is reported, one
/// line each, in script order.
fn validate(script: &lang::Script, file: &str) -> Result<(), RunError> {
    let mut funcs = std::collections::BTreeSet::new();
    collect_funcs(&script.items, &mut funcs);
    let mut errors = Vec::new();
    validate_list(&script.items, file, &funcs, &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(RunError::bad_input(errors.join("\n")))
    }
}

fn collect_funcs(items: &[lang::ListItem], out: &mut std::collections::BTreeSet<String>) {
    use lang::Command;
    for item in items {
        let pipes = std::iter::once(&item.and_or.first).chain(item.and_or.rest.iter().map(|(_, p)| p));
        for p in pipes {
            for c in &p.commands {
                match c {
                    Command::FuncDef(f) => {
                        out.insert(f.name.clone());
                        collect_funcs(&[lang::ListItem { and_or: lang::AndOr { first: lang::Pipeline { commands: vec![(*f.body).clone()], timed: false, time_posix: false, negated: false, source: String::new(), span: f.span }, rest: Vec::new() }, background: false, span: f.span }], out);
                    }
                    Command::For(f) => collect_funcs(&f.body, out),
                    Command::ArithFor(f) => collect_funcs(&f.body, out),
                    Command::While(w) => {
                        collect_funcs(&w.cond, out);
                        collect_funcs(&w.body, out);
                    }
                    Command::If(i) => {
                        for (c, b) in &i.branches {
                            collect_funcs(c, out);
                            collect_funcs(b, out);
                        }
                        if let Some(e) = &i.else_body {
                            collect_funcs(e, out);
                        }
                    }
                    Command::Case(c) => {
                        for (_, b) in &c.arms {
                            collect_funcs(b, out);
                        }
                    }
                    Command::Group(g) => collect_funcs(&g.body, out),
                    Command::Simple(_) | Command::Arith(_) => {}
                }
            }
        }
    }
}

fn validate_words(words: &[lang::Word], file: &str, funcs: &std::collections::BTreeSet<String>, errors: &mut Vec<String>) {
    for w in words {
        for p in &w.parts {
            if let lang::WordPart::CmdSubst { script, .. } | lang::WordPart::ProcSubst(script) = p {
                validate_list(&script.items, file, funcs, errors);
            }
        }
    }
}

fn validate_command(c: &lang::Command, file: &str, funcs: &std::collections::BTreeSet<String>, errors: &mut Vec<String>) {
    use lang::Command;
    let captures = std::collections::HashMap::new();
    let mut fail = |line: u32, m: String| errors.push(one_line(&format!("{file}:{line}: {m}")));
    match c {
        Command::Simple(sc) => {
            let targets: Vec<lang::Word> = sc.redirects.iter().map(|r| r.target.clone()).collect();
            let mut inner = Vec::new();
            validate_words(&sc.words, file, funcs, &mut inner);
            validate_words(&targets, file, funcs, &mut inner);
            for (_, w) in &sc.assignments {
                validate_words(std::slice::from_ref(w), file, funcs, &mut inner);
            }
            // Words with a glob are checked when they run (their names come from the files).
            let words: Option<Vec<String>> = sc.words.iter().map(|w| if w.parts.iter().any(|p| matches!(p, lang::WordPart::Glob(_))) { None } else { w.as_literal() }).collect();
            let Some(words) = words else {
                errors.append(&mut inner);
                return;
            };
            let Some(name) = words.first() else {
                errors.append(&mut inner);
                return;
            };
            let line = sc.span.line;
            if name == "echo" || name == "printf" {
                for r in &sc.redirects {
                    if let Some(t) = r.target.as_literal().filter(|t| t.starts_with("/proc/sys/")) {
                        if let Err(m) = commands::proc_write(&t, "0") {
                            fail(line, m);
                        }
                    }
                }
            }
            let ctx = commands::text::Ctx { cwd: "/root", captures: &captures, k: None };
            if funcs.contains(name) {
            } else if runner::BUILTINS.contains(&name.as_str()) {
                if name == "sleep" && !(words.len() == 2 && words[1] == "infinity") {
                    if let Err(m) = commands::parse_sleep(&words[1..]) {
                        fail(line, m);
                    }
                }
                if name == "timeout" && words.len() > 2 {
                    let r = match commands::text::build(&words[2], &words[3..], &ctx, commands::text::Input::Tty) {
                        Some(r) => r.map(|_| ()),
                        None => commands::build(&words[2], &words[3..], "/root", &captures).map(|_| ()),
                    };
                    if let Err(m) = r {
                        fail(line, m);
                    }
                }
            } else {
                // ionice and nice run their command: the options, then the command as
                // typed (without one they read or set processes' priorities).
                let launched = match name.as_str() {
                    "ionice" => commands::ionice::parse(&words[1..]).map(|a| a.command),
                    "nice" => commands::nice::parse(&words[1..]).map(|a| a.command),
                    _ => Ok(&words[..]),
                };
                let (name, rest) = match launched {
                    Ok([]) => {
                        errors.append(&mut inner);
                        return;
                    }
                    Ok(cmd) if name == "ionice" || name == "nice" => (&cmd[0], &cmd[1..]),
                    Ok(_) => (name, &words[1..]),
                    Err(m) => {
                        fail(line, m);
                        errors.append(&mut inner);
                        return;
                    }
                };
                let r = match commands::text::build(name, rest, &ctx, commands::text::Input::Tty) {
                    Some(r) => r.map(|_| ()),
                    None => commands::build(name, rest, "/root", &captures).map(|_| ()),
                };
                if let Err(m) = r {
                    fail(line, m);
                }
            }
            errors.append(&mut inner);
        }
        Command::For(f) => {
            validate_words(&f.words, file, funcs, errors);
            validate_list(&f.body, file, funcs, errors);
        }
        Command::ArithFor(f) => validate_list(&f.body, file, funcs, errors),
        Command::While(w) => {
            validate_list(&w.cond, file, funcs, errors);
            validate_list(&w.body, file, funcs, errors);
        }
        Command::If(i) => {
            for (c, b) in &i.branches {
                validate_list(c, file, funcs, errors);
                validate_list(b, file, funcs, errors);
            }
            if let Some(e) = &i.else_body {
                validate_list(e, file, funcs, errors);
            }
        }
        Command::Case(c) => {
            for (_, b) in &c.arms {
                validate_list(b, file, funcs, errors);
            }
        }
        Command::Group(g) => validate_list(&g.body, file, funcs, errors),
        Command::FuncDef(f) => validate_command(&f.body, file, funcs, errors),
        Command::Arith(_) => {}
    }
}

fn validate_list(items: &[lang::ListItem], file: &str, funcs: &std::collections::BTreeSet<String>, errors: &mut Vec<String>) {
    use lang::Command;
    for item in items {
        if item.background && (!item.and_or.rest.is_empty() || !item.and_or.first.commands.iter().all(|c| matches!(c, Command::Simple(_)))) {
            errors.push(one_line(&format!("{file}:{}: only a command or a pipeline of commands can run in the background ('cmd &', 'a | b &')", item.span.line)));
        }
        let pipes = std::iter::once(&item.and_or.first).chain(item.and_or.rest.iter().map(|(_, p)| p));
        for p in pipes {
            for c in &p.commands {
                validate_command(c, file, funcs, errors);
            }
        }
    }
}

/// Replay a scenario. Deterministic for a given seed.
pub fn run(opts: &RunOptions) -> Result<RunResult, RunError> {
    run_streaming(opts, None)
}

/// Refuse a machine whose model would not fit in the host's available memory.
/// Whether a script may put pages in memory cgroups (its text names the cgroup tree or a
/// command that starts a command in a cgroup): the host-memory estimate then counts the
/// page -> lruvec table.
pub(crate) fn uses_cgroups(text: &str) -> bool {
    text.contains("/sys/fs/cgroup") || text.contains("systemd-run") || text.contains("cgexec")
}

pub(crate) fn check_host_memory(machine: &memtwin_machine::Machine, available: Option<u64>, cgroups: bool) -> Result<(), RunError> {
    use memtwin_machine::size::format_size;
    let (avail, source) = match available {
        Some(a) => (a, "given"),
        None => match memtwin_kernel::host::available() {
            Some(a) => a,
            // Nothing readable: the frame table's allocation still fails cleanly.
            None => return Ok(()),
        },
    };
    let need = if cgroups { memtwin_kernel::host::estimate_with_cgroups(machine) } else { memtwin_kernel::host::estimate(machine) }.total();
    if need > avail {
        return Err(RunError {
            message: format!(
                "machine '{}' (ram={}) needs about {} of host memory to simulate, but the host has {} available ({source}); use a smaller ram= or swap",
                machine.name,
                format_size(machine.ram_bytes),
                format_size(need),
                format_size(avail)
            ),
            kind: ErrorKind::HostMemory,
        });
    }
    Ok(())
}

/// Replay a scenario, handing each new piece of the transcript to `hook` as it is made.
pub fn run_streaming(opts: &RunOptions, hook: Option<OutputHook>) -> Result<RunResult, RunError> {
    let err = RunError::bad_input;
    let (file, text) = match (&opts.script_text, &opts.script_path) {
        (Some(t), p) => (p.clone().unwrap_or_else(|| "<script>".into()), t.clone()),
        (None, Some(p)) => {
            let t = std::fs::read_to_string(p).map_err(|e| {
                let why = match e.kind() {
                    std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
                    std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
                    _ => e.to_string(),
                };
                err(format!("cannot read scenario '{p}': {why}"))
            })?;
            (p.clone(), t)
        }
        (None, None) => (DEFAULT_SCENARIO_NAME.to_string(), DEFAULT_SCENARIO.to_string()),
    };
    let script = lang::parse_all(&text).map_err(|es| {
        err(es.iter().map(|e| one_line(&format!("{file}:{}:{}: {}", e.line, e.col, e.message))).collect::<Vec<_>>().join("\n"))
    })?;
    validate(&script, &file)?;
    let spec = if !opts.machine.is_empty() {
        opts.machine.clone()
    } else {
        machine_directive(&text).unwrap_or_else(|| "default".into())
    };
    let mut machine = memtwin_machine::load(&spec).map_err(|e| err(e.to_string()))?;
    let machine_toml = match memtwin_machine::PRESETS.iter().find(|p| p.name == spec) {
        Some(p) => p.toml.to_string(),
        // `load` has just read it.
        None => std::fs::read_to_string(&spec).unwrap_or_default(),
    };
    for s in &opts.sets {
        memtwin_machine::apply_set(&mut machine, s).map_err(|e| err(e.to_string()))?;
    }
    check_host_memory(&machine, opts.host_available, uses_cgroups(&text))?;
    let (machine_name, kernel_profile) = (machine.name.clone(), machine.kernel.name().to_string());
    let mut k = memtwin_kernel::Kernel::boot(machine, opts.seed).map_err(|e| err(e.to_string()))?;
    if let Some(edit) = opts.profile_edit {
        edit(&mut k.profile);
    }
    let mut sh = Shell::new(k, &file);
    sh.guard = guard::Guard::new(opts.limits.clone(), hook);
    let status = sh.run(&script)?;
    sh.guard.flush(&sh.k.transcript);
    let sim_seconds = sh.k.now as f64 / 1e9;
    let pressure_total_us = sh.k.pressure_totals_us();
    let commands = std::mem::take(&mut sh.commands);
    let vmstat_names = sh.k.vmstat_series().into_iter().map(|(n, _)| n).collect();
    let reclaim_passes = sh.take_reclaim_passes();
    let kthreads = sh.take_kthreads();
    Ok(RunResult {
        transcript: std::mem::take(&mut sh.k.transcript),
        exit_status: status,
        series: std::mem::take(&mut sh.series),
        sim_seconds,
        stopped: sh.guard.hit.take(),
        commands,
        vmstat_names,
        machine_name,
        kernel_profile,
        machine_toml,
        reclaim_passes,
        pressure_total_us,
        kthreads,
    })
}

/// (name, one-line description) of every machine preset.
pub fn presets() -> Vec<(String, String)> {
    memtwin_machine::PRESETS
        .iter()
        .map(|p| (p.name.to_string(), p.description.to_string()))
        .collect()
}

#[cfg(test)]
mod scale_tests {
    use super::*;

    /// Run `n` short top-level commands (a program, a command substitution, a pipeline, a
    /// background job waited for) and return the kernel's task-slot, buffer and pipe table
    /// sizes and the kernel events the run took.
    fn run_short_commands(n: usize) -> ((usize, usize, usize), u64) {
        let kinds = ["true", "x=$(echo hi)", "echo a | cat | cat > /dev/null", "sleep 0.001 &", "wait"];
        let text: String = (0..n).map(|i| format!("{}\n", kinds[i % kinds.len()])).collect();
        let script = lang::parse_all(&text).expect("parses");
        let machine = memtwin_machine::load("default").unwrap();
        let k = memtwin_kernel::Kernel::boot(machine, 0).unwrap();
        let mut sh = Shell::new(k, "many.sh");
        sh.guard = guard::Guard::new(Limits { max_events: u64::MAX, ..Default::default() }, None);
        assert_eq!(sh.run(&script).expect("runs"), 0);
        assert_eq!(sh.commands.len(), n);
        (sh.k.table_sizes(), sh.guard.events())
    }

    /// No quadratic paths in the shell: every command's work is bounded by the tables it
    /// walks (the task table for pid lookups, writeback's dirtier count, the OOM killer,
    /// /proc; the buffer table for the output limit), so those tables must not grow with
    /// the number of commands run before — exited tasks are reaped and their slots reused,
    /// buffers are released, a pipe's slot is reused once its ends are closed — and the kernel's work per command (its events) must not grow
    /// either.
    #[test]
    fn ten_thousand_short_commands_keep_the_tables_bounded() {
        let (small, small_events) = run_short_commands(1_000);
        let (large, large_events) = run_short_commands(10_000);
        assert_eq!(small, large, "task slots, buffers and pipes after 1000 and 10000 commands");
        // Ten times the commands, ten times the events (the boot's own events aside).
        assert!(large_events <= 10 * small_events + 100, "{small_events} events for 1000 commands, {large_events} for 10000");
    }
}
