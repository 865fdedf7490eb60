//! Python bindings (memtwin._core). Thin: converts arguments and delegates.
//!
//! Everything here is a conversion: no simulation logic, no per-page or per-event work. The
//! Python package `memtwin` (python/memtwin/) wraps these functions in a typed API.

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::{Arc, Mutex};

use memtwin_scenario::{ErrorKind, Limits, OutputHook, RunOptions, RunResult};

// Bad input (scenario, machine, --set): the Rust message, file:line and all, crosses intact.
// Named `memtwin.MemtwinError` so tracebacks and reprs show the public name.
create_exception!(
    memtwin,
    MemtwinError,
    PyValueError,
    "Bad input to memtwin: the message names file:line where there is one and what is accepted."
);
// The machine would need more host memory than is available (a MemtwinError too).
create_exception!(
    memtwin,
    HostMemoryError,
    MemtwinError,
    "The simulated machine needs more host memory than the host has available."
);

fn limit_u64(v: Option<u64>, default: u64) -> u64 {
    match v {
        None => default,
        Some(0) => u64::MAX,
        Some(n) => n,
    }
}

/// Replay a scenario and return its transcript and sampled counters.
///
/// With neither `script_text` nor `script_path`, runs the embedded default scenario. With only
/// `script_path`, the file is read by the runner. `machine` is a preset name or a TOML path
/// ("" = the scenario's own `# machine:` line, else "default"); `sets` are "KEY=VALUE"
/// overrides. Limits: `max_sim_time` and `max_wall` in seconds, `max_events`, `max_output` in
/// bytes; None = the default, 0 = no limit. `on_output(text)` is called with each new piece of
/// the transcript while the run goes on (the GIL is taken for it); Ctrl-C (any pending signal
/// handler's exception) or an exception from `on_output` stops the run and is raised here.
/// Returns a dict: transcript (str), exit_status (int), sim_seconds (float), t_s
/// (list[float]), columns (list[tuple[str, list[int]]]), stopped (None or the limit's name),
/// stop_message (str), commands (see `commands_to_list`), machine_name, kernel_profile,
/// machine_toml (str) and reclaim_kswapd_ns / reclaim_direct_ns (list[int]: each reclaim
/// pass's duration) and pressure_total_us (None or {io_some, io_full, memory_some,
/// memory_full, cpu_some, cpu_full}: µs) and kthreads (list of {comm, threads, cpu_user_ns,
/// cpu_sys_ns, breakdown}: the kernel threads by name). Raises MemtwinError on bad input, HostMemoryError when the machine
/// does not fit in the host's memory.
#[pyfunction]
#[pyo3(signature = (script_text=None, script_path=None, machine=String::new(), sets=Vec::new(), seed=0,
    max_sim_time=None, max_wall=None, max_events=None, max_output=None, on_output=None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    script_text: Option<String>,
    script_path: Option<String>,
    machine: String,
    sets: Vec<String>,
    seed: u64,
    max_sim_time: Option<f64>,
    max_wall: Option<f64>,
    max_events: Option<u64>,
    max_output: Option<u64>,
    on_output: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = Limits::default();
    let secs = |name: &str, v: f64| -> PyResult<f64> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(MemtwinError::new_err(format!("{name} = {v} is not a duration: expected seconds >= 0 (0: no limit)")))
        }
    };
    let limits = Limits {
        max_sim_ns: match max_sim_time {
            None => d.max_sim_ns,
            Some(v) if secs("max_sim_time", v)? == 0.0 => u64::MAX,
            Some(v) => (v * 1e9).min(u64::MAX as f64) as u64,
        },
        max_wall: match max_wall {
            None => d.max_wall,
            Some(v) if secs("max_wall", v)? == 0.0 => None,
            Some(v) => Some(std::time::Duration::from_secs_f64(v.min(1e12))),
        },
        max_events: limit_u64(max_events, d.max_events),
        max_output: limit_u64(max_output, d.max_output),
    };
    let opts = RunOptions {
        script_path,
        script_text,
        machine,
        sets,
        seed,
        limits,
        host_available: None,
        profile_edit: None,
    };
    // The hook streams the transcript and lets Ctrl-C in: it takes the GIL, hands the new
    // text to `on_output` and runs pending signal handlers. An exception stops the run.
    let pending: Arc<Mutex<Option<PyErr>>> = Arc::new(Mutex::new(None));
    let hook: OutputHook = {
        let pending = Arc::clone(&pending);
        Box::new(move |text: &str| {
            Python::with_gil(|py| {
                let r = (|| -> PyResult<()> {
                    if let Some(f) = &on_output {
                        if !text.is_empty() {
                            f.call1(py, (text,))?;
                        }
                    }
                    py.check_signals()
                })();
                match r {
                    Ok(()) => true,
                    Err(e) => {
                        *pending.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        false
                    }
                }
            })
        })
    };
    // The simulation is pure Rust and may take seconds: let other Python threads run.
    let result = py.allow_threads(|| memtwin_scenario::run_streaming(&opts, Some(hook)));
    if let Some(e) = pending.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    let result = result.map_err(|e| match e.kind {
        ErrorKind::HostMemory => HostMemoryError::new_err(e.message),
        ErrorKind::BadInput => MemtwinError::new_err(e.message),
    })?;
    result_to_dict(py, result)
}

fn result_to_dict(py: Python<'_>, mut result: RunResult) -> PyResult<Bound<'_, PyDict>> {
    let commands = commands_to_list(py, std::mem::take(&mut result.commands), &result.vmstat_names, &result.transcript)?;
    let RunResult { transcript, exit_status, series, sim_seconds, stopped, machine_name, kernel_profile, machine_toml, reclaim_passes, pressure_total_us, kthreads, .. } =
        result;
    let dict = PyDict::new(py);
    dict.set_item("machine_name", machine_name)?;
    dict.set_item("kernel_profile", kernel_profile)?;
    dict.set_item("machine_toml", machine_toml)?;
    // Per reclaim path: every invocation's duration and its lock-wait part (ns).
    // The cgroup limit reclaims are among the direct ones.
    let memtwin_scenario::ReclaimStats { passes, lock_wait, .. } = reclaim_passes;
    for ((kind, p), w) in memtwin_scenario::ReclaimKind::ALL.iter().zip(passes).zip(lock_wait) {
        dict.set_item(format!("reclaim_{}_ns", kind.name()), p)?;
        dict.set_item(format!("reclaim_{}_lock_wait_ns", kind.name()), w)?;
    }
    dict.set_item("commands", commands)?;
    // /proc/pressure totals (µs) at the end of the run; None before Linux 4.20.
    let pressure = match pressure_total_us {
        Some(t) => {
            let p = PyDict::new(py);
            for (i, name) in ["io_some", "io_full", "memory_some", "memory_full", "cpu_some", "cpu_full"].iter().enumerate() {
                p.set_item(*name, t[i])?;
            }
            Some(p)
        }
        None => None,
    };
    dict.set_item("pressure_total_us", pressure)?;
    // The kernel threads by name: comm, threads, cpu_user_ns, cpu_sys_ns, breakdown.
    let kt = kthreads
        .into_iter()
        .map(|r| -> PyResult<Bound<'_, PyDict>> {
            let d = PyDict::new(py);
            d.set_item("comm", r.comm)?;
            d.set_item("threads", r.threads)?;
            d.set_item("cpu_user_ns", r.cpu_user_ns)?;
            d.set_item("cpu_sys_ns", r.cpu_sys_ns)?;
            d.set_item("breakdown", breakdown_dict(py, &r.breakdown)?)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    dict.set_item("kthreads", kt)?;
    dict.set_item("transcript", transcript)?;
    dict.set_item("exit_status", exit_status)?;
    dict.set_item("sim_seconds", sim_seconds)?;
    // Vec<f64> -> list[float]; Vec<(String, Vec<u64>)> -> list[tuple[str, list[int]]].
    dict.set_item("t_s", series.t_s)?;
    dict.set_item("columns", series.columns)?;
    dict.set_item("stopped", stopped.as_ref().map(|(r, _)| r.name()))?;
    dict.set_item("stop_message", stopped.map(|(_, m)| m).unwrap_or_default())?;
    Ok(dict)
}

fn os_error(e: std::io::Error) -> PyErr {
    let reason = memtwin_scenario::outfile::reason(&e);
    match e.raw_os_error() {
        Some(code) => PyOSError::new_err((code, reason)),
        None => PyOSError::new_err(reason),
    }
}

/// Write a result file: a regular (or new) file whole or not at all (temporary file + rename
/// of the final target of any symlinks); a device, FIFO or /dev/fd/N in place; a directory is
/// refused. Raises OSError (errno, strerror).
#[pyfunction]
fn write_output(py: Python<'_>, path: String, data: Vec<u8>) -> PyResult<()> {
    py.allow_threads(|| memtwin_scenario::outfile::write(&path, &data)).map_err(os_error)
}

/// Check that `path` can be written as `write_output` would (without opening devices or
/// FIFOs). Raises OSError (errno, strerror).
#[pyfunction]
fn check_output(path: String) -> PyResult<()> {
    memtwin_scenario::outfile::check(&path).map_err(os_error)
}

/// Per-command records as a list of dicts: line, source, background, start_ns, end_ns,
/// exit_status, output (what it printed), vmstat_start/vmstat_end ({name: value}, the
/// fields the machine's kernel prints in /proc/vmstat), what its
/// tasks did (job_end_ns, tasks, cpu_user_ns, cpu_sys_ns, rchar, wchar, read_bytes,
/// write_bytes, throughput_bytes_per_s, min_flt, maj_flt, oom_kills) and breakdown
/// ({part: ns}, the parts summing to its wall_ns). docs/results.md has the units.
fn commands_to_list<'py>(py: Python<'py>, records: Vec<memtwin_scenario::CommandRecord>, names: &[String], transcript: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
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
                    m.set_item(n, x)?;
                }
                Ok(m)
            };
            d.set_item("vmstat_start", vm(r.vmstat_start)?)?;
            d.set_item("vmstat_end", vm(r.vmstat_end)?)?;
            d.set_item("job_end_ns", r.job_end_ns)?;
            d.set_item("tasks", r.tasks)?;
            d.set_item("cpu_user_ns", r.cpu_user_ns)?;
            d.set_item("cpu_sys_ns", r.cpu_sys_ns)?;
            d.set_item("rchar", r.rchar)?;
            d.set_item("wchar", r.wchar)?;
            d.set_item("read_bytes", r.read_bytes)?;
            d.set_item("write_bytes", r.write_bytes)?;
            d.set_item("throughput_bytes_per_s", r.throughput_bytes_per_s)?;
            d.set_item("min_flt", r.min_flt)?;
            d.set_item("maj_flt", r.maj_flt)?;
            d.set_item("oom_kills", r.oom_kills)?;
            d.set_item("breakdown", breakdown_dict(py, &r.breakdown)?)?;
            Ok(d)
        })
        .collect()
}

/// A breakdown as {part: ns} (`Breakdown::parts`, `wall_ns` last).
fn breakdown_dict<'py>(py: Python<'py>, b: &memtwin_scenario::Breakdown) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, ns) in b.parts() {
        d.set_item(name, ns)?;
    }
    Ok(d)
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

// ---- replay: page-access traces, cache-simulator style ------------------------------------

/// Replay a page-access trace (see crates/cachesim and crates/scenario/src/replay.rs).
///
/// `policy`: "kernel" (the kernel model's page cache on `machine` + `sets`) or a cache
/// simulator ("lru", "fifo", "clock", "s3fifo") of `cache_size` pages (a number of pages or
/// a size such as "4G"). `format`: "csv", "u64" or "oracle-general" (None: from the file
/// name). `readahead` (kernel only): None keeps the machine's read_ahead_kb. Returns a dict
/// of figures; raises MemtwinError on bad input (file:line and what is accepted).
#[pyfunction]
#[pyo3(signature = (path, policy="lru".to_string(), format=None, cache_size=None, machine=None, sets=Vec::new(), readahead=None, seed=0))]
#[allow(clippy::too_many_arguments)]
fn replay<'py>(
    py: Python<'py>,
    path: String,
    policy: String,
    format: Option<String>,
    cache_size: Option<String>,
    machine: Option<String>,
    sets: Vec<String>,
    readahead: Option<bool>,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    use memtwin_cachesim::{Format, PolicyKind};
    let bad = |m: String| MemtwinError::new_err(m);
    let fmt = match &format {
        Some(f) => Format::parse(f).ok_or_else(|| bad(format!("--format '{f}' is not a trace format (accepted: {})", Format::NAMES)))?,
        None => Format::from_path(&path).ok_or_else(|| {
            bad(format!("cannot tell the format of trace '{path}' from its name (.csv, .txt/.u64, .oracleGeneral): give --format {}", Format::NAMES.replace(", ", "|")))
        })?,
    };
    let pages = cache_size.as_deref().map(memtwin_cachesim::parse_cache_size).transpose().map_err(bad)?;
    let dict = PyDict::new(py);
    dict.set_item("path", &path)?;
    dict.set_item("format", fmt.name())?;
    if policy.eq_ignore_ascii_case("kernel") {
        let o = memtwin_scenario::replay::KernelReplay {
            path: path.clone(),
            format: fmt,
            machine: machine.unwrap_or_default(),
            sets,
            cache_pages: pages,
            readahead: readahead.unwrap_or(true),
            seed,
        };
        // readahead on (the default) keeps the machine's own read_ahead_kb.
        let r = py.allow_threads(|| memtwin_scenario::replay::replay_kernel(&o)).map_err(|e| bad(e.message))?;
        dict.set_item("policy", "kernel")?;
        dict.set_item("requests", r.stats.requests)?;
        dict.set_item("misses", r.stats.misses)?;
        dict.set_item("miss_ratio", r.stats.miss_ratio())?;
        dict.set_item("byte_miss_ratio", py.None())?;
        dict.set_item("wall_s", r.wall_s)?;
        dict.set_item("requests_per_s", if r.wall_s > 0.0 { r.stats.requests as f64 / r.wall_s } else { 0.0 })?;
        dict.set_item("cache_pages", r.free_pages_at_boot)?;
        dict.set_item("peak_cache_pages", r.peak_cache_pages)?;
        dict.set_item("file_pages", r.file_pages)?;
        dict.set_item("ram_bytes", r.ram_bytes)?;
        dict.set_item("sim_seconds", r.sim_s)?;
        dict.set_item("readahead", o.readahead)?;
        let vm = PyDict::new(py);
        for (k, v) in r.vmstat {
            vm.set_item(k, v)?;
        }
        dict.set_item("vmstat", vm)?;
        return Ok(dict);
    }
    let kind = PolicyKind::parse(&policy).ok_or_else(|| bad(format!("--policy '{policy}' is not a policy (accepted: kernel, {})", PolicyKind::NAMES)))?;
    if machine.is_some() || !sets.is_empty() {
        return Err(bad(format!("--machine and --set apply to --policy kernel only (policy {} is a cache of --cache-size pages)", kind.name())));
    }
    if readahead.is_some() {
        return Err(bad(format!("--readahead applies to --policy kernel only (policy {} caches the requested pages only)", kind.name())));
    }
    let pages = pages.ok_or_else(|| bad(format!("--policy {} needs --cache-size (a number of 4 KiB pages or a size such as 4G)", kind.name())))?;
    let r = py.allow_threads(|| memtwin_cachesim::simulate(&path, fmt, kind, pages)).map_err(|e| bad(e.message))?;
    dict.set_item("policy", kind.name())?;
    dict.set_item("requests", r.stats.requests)?;
    dict.set_item("misses", r.stats.misses)?;
    dict.set_item("miss_ratio", r.stats.miss_ratio())?;
    if r.has_sizes {
        dict.set_item("byte_miss_ratio", r.stats.byte_miss_ratio())?;
    } else {
        dict.set_item("byte_miss_ratio", py.None())?;
    }
    dict.set_item("wall_s", r.wall_s)?;
    dict.set_item("requests_per_s", if r.wall_s > 0.0 { r.stats.requests as f64 / r.wall_s } else { 0.0 })?;
    dict.set_item("cache_pages", r.capacity_pages)?;
    Ok(dict)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MemtwinError", m.py().get_type::<MemtwinError>())?;
    m.add("HostMemoryError", m.py().get_type::<HostMemoryError>())?;
    let d = Limits::default();
    m.add("DEFAULT_MAX_SIM_TIME", d.max_sim_ns as f64 / 1e9)?;
    m.add("DEFAULT_MAX_WALL", d.max_wall.map_or(0.0, |w| w.as_secs_f64()))?;
    m.add("DEFAULT_MAX_EVENTS", d.max_events)?;
    m.add("DEFAULT_MAX_OUTPUT", d.max_output)?;
    m.add("DEFAULT_SCENARIO_NAME", memtwin_scenario::DEFAULT_SCENARIO_NAME)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(write_output, m)?)?;
    m.add_function(wrap_pyfunction!(check_output, m)?)?;
    m.add_function(wrap_pyfunction!(default_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(machine_directive, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    Ok(())
}
