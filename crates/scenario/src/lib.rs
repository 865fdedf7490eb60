//! Scenarios: the shell-like language, the built-in commands (workloads) and the runner
//! that replays a script on a simulated machine.

pub mod lang;

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
}

/// Samples of every /proc/vmstat and /proc/meminfo field, one row per tick.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Sample times, seconds since boot.
    pub t_s: Vec<f64>,
    /// ("vm.<name>" or "mi.<Name>", values).
    pub columns: Vec<(String, Vec<u64>)>,
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
}

/// Bad input: the message names file:line where there is one and what is accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunError {
    pub message: String,
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

/// Replay a scenario. Deterministic for a given seed.
pub fn run(opts: &RunOptions) -> Result<RunResult, RunError> {
    let _ = opts;
    Err(RunError { message: "memtwin: the runner is not built yet".into() })
}

/// (name, one-line description) of every machine preset.
pub fn presets() -> Vec<(String, String)> {
    memtwin_machine::PRESETS
        .iter()
        .map(|p| (p.name.to_string(), p.description.to_string()))
        .collect()
}
