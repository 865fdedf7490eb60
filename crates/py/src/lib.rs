//! Python bindings (memtwin._core). Thin: converts arguments and delegates.
//!
//! Everything here is a conversion: no simulation logic, no per-page or per-event work. The
//! Python package `memtwin` (python/memtwin/) wraps these functions in a typed API.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use memtwin_scenario::{RunOptions, RunResult};

// Bad input (scenario, machine, --set): the Rust message, file:line and all, crosses intact.
// Named `memtwin.MemtwinError` so tracebacks and reprs show the public name.
create_exception!(
    memtwin,
    MemtwinError,
    PyValueError,
    "Bad input to memtwin: the message names file:line where there is one and what is accepted."
);

/// Replay a scenario and return its transcript and sampled counters.
///
/// With neither `script_text` nor `script_path`, runs the embedded default scenario. With only
/// `script_path`, the file is read by the runner. `machine` is a preset name or a TOML path
/// ("" = the scenario's own `# machine:` line, else "default"); `sets` are "KEY=VALUE"
/// overrides. Returns a dict: transcript (str), exit_status (int), sim_seconds (float),
/// t_s (list[float]) and columns (list[tuple[str, list[int]]]).
/// Raises MemtwinError on bad input.
#[pyfunction]
#[pyo3(signature = (script_text=None, script_path=None, machine=String::new(), sets=Vec::new(), seed=0))]
fn run<'py>(
    py: Python<'py>,
    script_text: Option<String>,
    script_path: Option<String>,
    machine: String,
    sets: Vec<String>,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = RunOptions { script_path, script_text, machine, sets, seed };
    // The simulation is pure Rust and may take seconds: let other Python threads run.
    let result = py
        .allow_threads(|| memtwin_scenario::run(&opts))
        .map_err(|e| MemtwinError::new_err(e.message))?;
    result_to_dict(py, result)
}

fn result_to_dict(py: Python<'_>, mut result: RunResult) -> PyResult<Bound<'_, PyDict>> {
    let commands = commands_to_list(py, std::mem::take(&mut result.commands), &result.transcript)?;
    let RunResult { transcript, exit_status, series, sim_seconds, .. } = result;
    let dict = PyDict::new(py);
    dict.set_item("commands", commands)?;
    dict.set_item("transcript", transcript)?;
    dict.set_item("exit_status", exit_status)?;
    dict.set_item("sim_seconds", sim_seconds)?;
    // Vec<f64> -> list[float]; Vec<(String, Vec<u64>)> -> list[tuple[str, list[int]]].
    dict.set_item("t_s", series.t_s)?;
    dict.set_item("columns", series.columns)?;
    Ok(dict)
}

/// Per-command records as a list of dicts: line, source, background, start_ns, end_ns,
/// exit_status, output (what it printed) and vmstat_start/vmstat_end ({name: value}).
fn commands_to_list<'py>(py: Python<'py>, records: Vec<memtwin_scenario::CommandRecord>, transcript: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let names = memtwin_scenario::vm_item_names();
    records
        .into_iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("line", r.line)?;
            d.set_item("source", r.source)?;
            d.set_item("background", r.background)?;
            d.set_item("start_ns", r.start_ns)?;
            d.set_item("end_ns", r.end_ns)?;
            d.set_item("exit_status", r.exit_status)?;
            d.set_item("output", transcript.get(r.output_start..r.output_end).unwrap_or(""))?;
            let vm = |v: Vec<u64>| -> PyResult<Bound<'py, PyDict>> {
                let m = PyDict::new(py);
                for (n, x) in names.iter().zip(v) {
                    m.set_item(*n, x)?;
                }
                Ok(m)
            };
            d.set_item("vmstat_start", vm(r.vmstat_start)?)?;
            d.set_item("vmstat_end", vm(r.vmstat_end)?)?;
            Ok(d)
        })
        .collect()
}

/// (name, one-line description) of every machine preset.
#[pyfunction]
fn presets() -> Vec<(String, String)> {
    memtwin_scenario::presets()
}

/// (name, text) of the embedded default scenario.
#[pyfunction]
fn default_scenario() -> (&'static str, &'static str) {
    (memtwin_scenario::DEFAULT_SCENARIO_NAME, memtwin_scenario::DEFAULT_SCENARIO)
}

/// The machine a script asks for in its `# machine: NAME` comment line, if any.
#[pyfunction]
fn machine_directive(text: &str) -> Option<String> {
    memtwin_scenario::machine_directive(text)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MemtwinError", m.py().get_type::<MemtwinError>())?;
    m.add("DEFAULT_SCENARIO_NAME", memtwin_scenario::DEFAULT_SCENARIO_NAME)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(default_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(machine_directive, m)?)?;
    Ok(())
}
