"""Sweeps: one scenario over the product of a grid of settings and seeds.

    memtwin.sweep(path="my.sh", grid={"vm.swappiness": [0, 1, 60], "ram": ["4G", "8G"]},
                  seeds=3, out="results/")

Each run is a plain :func:`memtwin.run` in a worker process (a local process pool by
default, or Ray tasks). Its results land in one Parquet dataset under ``out``::

    out/sweep.json            the sweep: script, machine, grid (in order), seeds, schema version
    out/runs/KEY.parquet      one row: the run's parameters, status, summary figures
    out/commands/KEY.parquet  one row per command of the script (Result.commands)
    out/series/KEY.parquet    one row per simulated second (Result.series)

KEY is a hash of everything that decides the run (script text, machine, settings, seed,
limits, memtwin version), so a sweep run again skips the runs already done. Each file is
written whole or not at all (the core's writer: a temporary file renamed into place), and
``runs/KEY.parquet`` last: a run counts as done only once all three are there. A worker that
dies (killed, out of memory) loses only its run, which is run again; the runs are
deterministic, so every file's bytes are the same whichever worker or engine made it.

pyarrow is needed (``pip install 'memtwin[sweep]'``); Ray for ``ray=``; rich for the
progress bar.
"""

from __future__ import annotations

import concurrent.futures as cf
from concurrent.futures.process import BrokenProcessPool
import hashlib
import io
import itertools
import json
import multiprocessing
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import MemtwinError, PathLike, SetValue, __version__, _core, read_scenario
from . import results as _results
from .results import series_column, vmstat_counter

#: Attempts of one run whose worker died before it gives up (pool and Ray alike).
MAX_ATTEMPTS = 3

TABLES = ("runs", "commands", "series")

Grid = Union[Mapping[str, Sequence[SetValue]], Sequence[str]]


def parse_grid_item(text: str) -> Tuple[str, List[str]]:
    """``"vm.swappiness=0,1,60"`` -> ``("vm.swappiness", ["0", "1", "60"])``."""
    key, sep, values = text.partition("=")
    key = key.strip()
    items = [v.strip() for v in values.split(",")]
    if not sep or not key or not values.strip() or any(not v for v in items):
        raise MemtwinError(
            f"--grid '{text}': expected KEY=V1,V2,... (a machine field such as ram=4G,8G or a "
            "sysctl such as vm.swappiness=0,60,100)"
        )
    return key, items


def normalize_grid(grid: Grid) -> List[Tuple[str, List[str]]]:
    """The grid as ``[(key, [value, ...]), ...]`` in the given order; values as text."""
    out: List[Tuple[str, List[str]]] = []
    if isinstance(grid, Mapping):
        for key, values in grid.items():
            if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                raise MemtwinError(f"grid '{key}': expected a list of values, got {values!r}")
            vals = [str(int(v)) if isinstance(v, bool) else str(v) for v in values]
            if not vals:
                raise MemtwinError(f"grid '{key}': no values")
            out.append((str(key), vals))
    else:
        if isinstance(grid, str):
            grid = [grid]
        out = [parse_grid_item(item) for item in grid]
    seen = set()
    for key, vals in out:
        if key in seen:
            raise MemtwinError(f"grid key '{key}' is given twice: list all its values in one --grid")
        seen.add(key)
        if len(set(vals)) != len(vals):
            raise MemtwinError(f"grid '{key}': a value is listed twice ({', '.join(vals)})")
    return out


def param_column(key: str) -> str:
    """The column of a swept parameter in the dataset: ``param.<key>`` (values as text)."""
    return f"param.{key}"


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: everything a worker needs (picklable)."""

    key: str
    index: int
    params: Tuple[Tuple[str, str], ...]
    seed: int
    script: str
    script_text: str
    machine: str
    sets: Tuple[str, ...]
    limits: Tuple[Tuple[str, Optional[float]], ...]
    out: str
    kill_once: Optional[str] = None  # fault injection for the tests: see _maybe_die


def run_key(payload: Mapping[str, Any]) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


# --- the worker ---------------------------------------------------------------------------------


def _maybe_die(spec: RunSpec) -> Optional[Callable[[str], None]]:
    """Tests only: the first worker to reach this run's output SIGKILLs itself mid-run (once
    per sweep: the marker file decides), to check that a dead worker's run is retried."""
    if spec.kill_once is None:
        return None

    def hook(_text: str) -> None:
        try:
            fd = os.open(spec.kill_once, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)  # type: ignore[arg-type]
        except FileExistsError:
            return
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)

    return hook


def _parquet_bytes(table: Any) -> bytes:
    pq = _results.need("pyarrow.parquet", "a sweep")
    buf = io.BytesIO()
    # No statistics that depend on the writer's host; the bytes depend only on the table.
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def _era_counters(c: Mapping[str, Sequence[int]], last: Any) -> Dict[str, Optional[int]]:
    """The runs table's reclaim counters from a series in any era's names
    (``results.vmstat_counter`` says how each era's fields are read)."""

    def get(name: str) -> Optional[int]:
        return last(series_column(f"vm.{name}"))

    out: Dict[str, Optional[int]] = {"allocstall_normal_total": vmstat_counter(get, "allocstall")}
    for item in ("pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct",
                 "workingset_refault_file", "workingset_refault_anon"):
        if f"vm.{item}_total" not in c:
            out[f"{item}_total"] = vmstat_counter(get, item)
    return out


def _summary(result: Any) -> Dict[str, Any]:
    """Per-run figures for the runs table (documented in docs/results.md)."""
    c = result.columns

    def peak(values: Sequence[int]) -> Optional[int]:
        return max(values) if values else None

    def last(name: str) -> Optional[int]:
        v = c.get(name)
        return v[-1] if v else None

    swap_used = [t - f for t, f in zip(c.get("mi.SwapTotal_kib", []), c.get("mi.SwapFree_kib", []))]
    out: Dict[str, Any] = {
        "swap_used_max_kib": peak(swap_used),
        "mem_free_min_kib": min(c["mi.MemFree_kib"]) if c.get("mi.MemFree_kib") else None,
        "mem_available_min_kib": min(c["mi.MemAvailable_kib"]) if c.get("mi.MemAvailable_kib") else None,
    }
    for name in (
        "vm.pswpin_total",
        "vm.pswpout_total",
        "vm.pgmajfault_total",
        "vm.pgscan_kswapd_total",
        "vm.pgscan_direct_total",
        "vm.pgsteal_kswapd_total",
        "vm.pgsteal_direct_total",
        "vm.allocstall_normal_total",
        "vm.oom_kill_total",
        "vm.workingset_refault_anon_total",
        "vm.workingset_refault_file_total",
    ):
        out[name[3:]] = last(name)
    out.update(_era_counters(c, last))
    for kind in ("kswapd", "direct"):
        passes = sorted(result.reclaim[f"{kind}_ns"])
        out[f"reclaim_{kind}_passes_total"] = len(passes)
        out[f"reclaim_{kind}_p50_ns"] = passes[len(passes) // 2] if passes else None
        out[f"reclaim_{kind}_max_ns"] = passes[-1] if passes else None
    # Every path's latency summary and lock-wait part (docs/results.md).
    for kind, row in result.reclaim_summary().items():
        for stat in ("mean_ns", "p99_ns", "lock_wait_mean_ns", "lock_wait_max_ns"):
            out[f"reclaim_{kind}_{stat}"] = row[stat]
        if kind.startswith("split_"):
            out[f"reclaim_{kind}_passes_total"] = row["count"]
            out[f"reclaim_{kind}_max_ns"] = row["max_ns"]
    return out


def _tables(spec: RunSpec, result: Any) -> Dict[str, Any]:
    pa = _results.need("pyarrow", "a sweep")
    prefix: Dict[str, Any] = {"run_key": spec.key}
    for k, v in spec.params:
        prefix[param_column(k)] = v
    prefix["seed"] = spec.seed
    run_row: Dict[str, Any] = dict(prefix)
    run_row.update(
        {
            "run_index": spec.index,
            "script": spec.script,
            "machine": result.machine,
            "kernel_profile": result.kernel_profile,
            "settings": " ".join(spec.sets),
            "memtwin_version": result.version,
            "exit_status": result.exit_status,
            "stopped": result.stopped,
            "sim_seconds": result.sim_seconds,
            "commands_total": len(result.records),
        }
    )
    run_row.update(_summary(result))
    runs = _results.arrow_table({k: [v] for k, v in run_row.items()}, rows=1)
    # The reclaim passes: list columns.
    runs = runs.append_column("reclaim_kswapd_ns", pa.array([result.reclaim["kswapd_ns"]], type=pa.list_(pa.int64())))
    runs = runs.append_column("reclaim_direct_ns", pa.array([result.reclaim["direct_ns"]], type=pa.list_(pa.int64())))
    for kind in ("split_page", "split_slab"):
        runs = runs.append_column(f"reclaim_{kind}_ns", pa.array([result.reclaim[f"{kind}_ns"]], type=pa.list_(pa.int64())))
    commands = _results.arrow_table(
        _results.records_to_columns(result.records), prefix=prefix, rows=len(result.records)
    )
    series = _results.arrow_table(result.columns, prefix=prefix)
    return {"runs": runs, "commands": commands, "series": series}


def run_one(spec: RunSpec) -> str:
    """Run one point of the sweep and write its three files; returns its key."""
    from . import run

    limits = {k: v for k, v in spec.limits}
    result = run(
        spec.script_text,
        path=spec.script,
        machine=spec.machine,
        set=list(spec.sets),
        seed=spec.seed,
        on_output=_maybe_die(spec),
        **limits,  # type: ignore[arg-type]
    )
    tables = _tables(spec, result)
    # runs/ last: its file marks the run as done.
    for name in ("series", "commands", "runs"):
        _core.write_output(os.path.join(spec.out, name, f"{spec.key}.parquet"), _parquet_bytes(tables[name]))
    return spec.key


# --- the driver ---------------------------------------------------------------------------------


@dataclass
class SweepResult:
    """What :func:`sweep` did. ``runs``, ``commands`` and ``series`` read the dataset."""

    out: str
    total: int
    done_before: int
    ran: int
    retried: int
    engine: str

    def _read(self, table: str) -> Any:
        return read_table(self.out, table)

    @property
    def runs(self) -> Any:
        """One row per run (polars DataFrame)."""
        return self._read("runs")

    @property
    def commands(self) -> Any:
        """One row per run and command (polars DataFrame)."""
        return self._read("commands")

    @property
    def series(self) -> Any:
        """One row per run and simulated second (polars DataFrame)."""
        return self._read("series")


def read_table(out: PathLike, table: str) -> Any:
    """One table of a sweep dataset as a polars DataFrame, rows in run order (then the
    table's own order); runs whose columns differ (a part present in some) are aligned."""
    pl = _results.need("polars", "reading a sweep dataset")
    pq = _results.need("pyarrow.parquet", "reading a sweep dataset")
    d = os.path.join(os.fspath(out), table)
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith(".parquet"))
    except FileNotFoundError:
        raise MemtwinError(f"'{os.fspath(out)}' is not a sweep dataset: no {table}/ directory") from None
    # Only the runs that are complete (runs/KEY.parquet exists).
    done = {n for n in os.listdir(os.path.join(os.fspath(out), "runs")) if n.endswith(".parquet")}
    frames = [pl.from_arrow(pq.read_table(os.path.join(d, n))) for n in names if n in done]
    if not frames:
        return pl.DataFrame()
    df = pl.concat(frames, how="diagonal_relaxed")
    if table == "runs":
        return df.sort("run_index")
    order = read_table(out, "runs").select("run_key", "run_index")
    return df.join(order, on="run_key", how="left", maintain_order="left").sort("run_index", maintain_order=True).drop("run_index")


def plan(
    script_text: str,
    script: str,
    grid: Grid,
    seeds: Union[int, Sequence[int]],
    machine: str,
    sets: Sequence[str],
    limits: Mapping[str, Optional[float]],
    out: str,
) -> Tuple[List[RunSpec], Dict[str, Any]]:
    """The runs of a sweep, in order (grid product, the first key varying slowest; seeds
    innermost), and its sweep.json document."""
    g = normalize_grid(grid)
    if isinstance(seeds, int):
        if isinstance(seeds, bool) or seeds < 1:
            raise MemtwinError(f"seeds = {seeds!r}: expected a number of seeds >= 1 or a list of seeds")
        seed_list = list(range(seeds))
    else:
        seed_list = [int(s) for s in seeds]
        if not seed_list or len(set(seed_list)) != len(seed_list):
            raise MemtwinError(f"seeds {seed_list}: expected distinct seeds")
    machine_text = ""
    if machine and (machine.endswith(".toml") or "/" in machine):
        try:
            machine_text = read_scenario(machine)
        except OSError as e:
            raise MemtwinError(f"cannot read machine file '{machine}': {e.strerror or e}") from None
    specs: List[RunSpec] = []
    combos = list(itertools.product(*[vals for _, vals in g])) if g else [()]
    for combo in combos:
        params = tuple((k, v) for (k, _), v in zip(g, combo))
        run_sets = tuple(list(sets) + [f"{k}={v}" for k, v in params])
        for seed in seed_list:
            key = run_key(
                {
                    "schema": _results.SCHEMA_VERSION,
                    "memtwin": __version__,
                    "script_text": script_text,
                    "machine": machine,
                    "machine_text": machine_text,
                    "sets": list(run_sets),
                    "seed": seed,
                    "limits": dict(limits),
                }
            )
            specs.append(
                RunSpec(
                    key=key,
                    index=len(specs),
                    params=params,
                    seed=seed,
                    script=script,
                    script_text=script_text,
                    machine=machine,
                    sets=run_sets,
                    limits=tuple(sorted(limits.items())),
                    out=out,
                )
            )
    doc = {
        "schema_version": _results.SCHEMA_VERSION,
        "memtwin_version": __version__,
        "script": script,
        "script_text": script_text,
        "machine": machine,
        "settings": list(sets),
        "grid": [{"key": k, "values": v} for k, v in g],
        "seeds": seed_list,
        "runs": len(specs),
    }
    return specs, doc


def _done(spec: RunSpec) -> bool:
    return os.path.exists(os.path.join(spec.out, "runs", f"{spec.key}.parquet"))


class _Progress:
    """A progress bar with ETA on a terminal (rich); silent when not a TTY or under CI."""

    def __init__(self, total: int, done: int, enabled: Optional[bool]) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty() and os.environ.get("CI", "").lower() not in ("true", "1")
        self.bar: Any = None
        if enabled and total:
            try:
                from rich.console import Console
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
            except ImportError:
                return
            self.bar = Progress(
                TextColumn("sweep"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task("sweep", total=total, completed=done)

    def advance(self) -> None:
        if self.bar is not None:
            self.bar.advance(self.task)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _run_pool(todo: List[RunSpec], jobs: int, progress: _Progress) -> int:
    """Run on a local process pool; a pool broken by a dead worker is replaced and the runs
    not done are submitted again. Returns the number of runs retried."""
    ctx = multiprocessing.get_context("spawn")  # no fork of a process with threads (Ray, ...)
    attempts: Dict[str, int] = {s.key: 0 for s in todo}
    retried = 0
    pending = list(todo)
    while pending:
        broken: List[RunSpec] = []
        with cf.ProcessPoolExecutor(max_workers=max(1, min(jobs, len(pending))), mp_context=ctx) as pool:
            futures = {}
            for spec in pending:
                attempts[spec.key] += 1
                futures[pool.submit(run_one, spec)] = spec
            for fut in cf.as_completed(futures):
                spec = futures[fut]
                try:
                    fut.result()
                except BrokenProcessPool:
                    broken.append(spec)
                    continue
                except BaseException:
                    for f in futures:
                        f.cancel()
                    raise
                progress.advance()
        pending = [s for s in broken if not _done(s)]
        for spec in pending:
            if attempts[spec.key] >= MAX_ATTEMPTS:
                raise MemtwinError(
                    f"sweep: the worker running {_describe(spec)} died {MAX_ATTEMPTS} times "
                    "(killed, or out of memory?); the runs done so far are kept"
                )
        retried += len(pending)
    return retried


def _ray_init(address: str) -> Any:
    ray = _results.need("ray", "memtwin sweep --ray")
    if ray.is_initialized():
        return ray
    kwargs: Dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False}
    if address == "auto":
        try:
            ray.init(address="auto", **kwargs)  # an existing cluster on this machine
        except (ConnectionError, RuntimeError, ValueError):
            ray.init(include_dashboard=False, **kwargs)  # else a local one
    else:
        ray.init(address=address, **kwargs)
    return ray


def _run_ray(todo: List[RunSpec], address: str, progress: _Progress) -> int:
    """Run as Ray tasks; Ray runs a task again when its worker dies (max_retries)."""
    ray = _ray_init(address)
    remote = ray.remote(max_retries=MAX_ATTEMPTS - 1, retry_exceptions=False, num_cpus=1)(run_one)
    refs = {remote.remote(spec): spec for spec in todo}
    left = list(refs)
    while left:
        ready, left = ray.wait(left, num_returns=1)
        for ref in ready:
            try:
                ray.get(ref)
            except ray.exceptions.RayTaskError as e:
                for r in left:
                    ray.cancel(r)
                cause = e.cause if getattr(e, "cause", None) is not None else e
                raise cause from None
            except (ray.exceptions.WorkerCrashedError, ray.exceptions.RayError) as e:
                for r in left:
                    ray.cancel(r)
                raise MemtwinError(
                    f"sweep: the Ray worker running {_describe(refs[ref])} died {MAX_ATTEMPTS} times: "
                    f"{type(e).__name__}; the runs done so far are kept"
                ) from None
            progress.advance()
    return 0


def _describe(spec: RunSpec) -> str:
    params = " ".join(f"{k}={v}" for k, v in spec.params)
    return f"run {spec.index} ({params}{' ' if params else ''}seed={spec.seed})"


def sweep(
    script: Optional[str] = None,
    *,
    path: Optional[PathLike] = None,
    grid: Grid = (),
    seeds: Union[int, Sequence[int]] = 1,
    out: PathLike,
    machine: PathLike = "",
    set: Optional[Union[Mapping[str, SetValue], Iterable[str]]] = None,
    jobs: Optional[int] = None,
    ray: Optional[str] = None,
    progress: Optional[bool] = None,
    max_sim_time: Optional[float] = None,
    max_wall: Optional[float] = None,
    max_events: Optional[int] = None,
    max_output: Optional[int] = None,
    _kill_once: Optional[PathLike] = None,
) -> SweepResult:
    """Run a scenario over the product of ``grid`` and ``seeds``; results go to ``out``.

    Args:
        script, path: the scenario's text or file (as for :func:`memtwin.run`).
        grid: ``{"vm.swappiness": [0, 60], "ram": ["4G", "8G"]}`` or ``["KEY=V1,V2", ...]``:
            machine fields or sysctls, applied after ``set``.
        seeds: a number of seeds (0 .. n-1) or a list of seeds.
        out: the dataset's directory (created; a sweep already there is resumed: the runs
            done are skipped).
        machine, set: the machine and the settings shared by every run.
        jobs: worker processes of the local pool (default: the CPUs).
        ray: None for the local pool; ``"auto"`` to attach to a Ray cluster on this machine
            or start a local one, or a cluster's address.
        progress: a progress bar on standard error: None = when it is a terminal and not CI.
        max_sim_time, max_wall, max_events, max_output: each run's limits (see ``run``).

    Raises:
        MemtwinError: a bad grid, scenario, machine or setting (the first run's error), or a
            worker that died ``MAX_ATTEMPTS`` times.
    """
    from . import _sets, default_scenario

    script_path = os.fspath(path) if path is not None else None
    if script is None:
        if script_path is not None:
            script = read_scenario(script_path)
        else:
            script_path, script = default_scenario()
    name = script_path if script_path is not None else "<script>"
    outdir = os.fspath(out)
    limits = {
        k: v
        for k, v in (
            ("max_sim_time", max_sim_time),
            ("max_wall", max_wall),
            ("max_events", max_events),
            ("max_output", max_output),
        )
        if v is not None
    }
    specs, doc = plan(script, name, grid, seeds, os.fspath(machine), _sets(None, set), limits, outdir)
    _results.need("pyarrow", "memtwin sweep")
    # Check the inputs before any worker starts: a bad value is an error at once.
    _check(specs, doc)
    os.makedirs(outdir, exist_ok=True)
    meta = os.path.join(outdir, "sweep.json")
    if os.path.exists(meta):
        with open(meta, encoding="utf-8") as f:
            old = json.load(f)
        if old.get("grid") != doc["grid"] or old.get("script_text") != doc["script_text"]:
            raise MemtwinError(
                f"'{outdir}' holds another sweep (a different script or grid); use another -o directory"
            )
    _core.write_output(meta, (json.dumps(doc, indent=1) + "\n").encode("utf-8"))
    for t in TABLES:
        os.makedirs(os.path.join(outdir, t), exist_ok=True)
    if _kill_once is not None:
        specs = [RunSpec(**{**s.__dict__, "kill_once": os.fspath(_kill_once)}) for s in specs]
    todo = [s for s in specs if not _done(s)]
    done_before = len(specs) - len(todo)
    # Temporary files of a worker killed while it wrote: removed at the end if still there
    # (a concurrent writer's live temporary file does not outlast the sweep).
    stale = _temporaries(outdir)
    bar = _Progress(len(specs), done_before, progress)
    try:
        if ray is not None:
            retried = _run_ray(todo, ray, bar)
            engine = "ray"
        else:
            retried = _run_pool(todo, jobs or os.cpu_count() or 1, bar)
            engine = "pool"
    finally:
        bar.close()
    for p in stale & _temporaries(outdir):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
    return SweepResult(out=outdir, total=len(specs), done_before=done_before, ran=len(todo), retried=retried, engine=engine)


def _temporaries(outdir: str) -> set:
    """The core writer's temporary files (".NAME.XXXX.tmp") in the dataset's tables."""
    found = set()
    for t in TABLES:
        d = os.path.join(outdir, t)
        for n in os.listdir(d) if os.path.isdir(d) else ():
            if n.startswith(".") and n.endswith(".tmp"):
                found.add(os.path.join(d, n))
    return found


def _check(specs: List[RunSpec], doc: Mapping[str, Any]) -> None:
    """Parse the script and build the machine with each grid value (and the first values of
    the other keys) without simulating: one kernel event at most."""
    from . import run

    first = specs[0]
    base = list(first.sets[: len(first.sets) - len(first.params)])
    firsts = {k: v for k, v in first.params}
    checked = set()
    for g in doc["grid"] or [{"key": None, "values": [None]}]:
        for value in g["values"]:
            params = dict(firsts)
            if g["key"] is not None:
                params[g["key"]] = value
            sets = tuple(base + [f"{k}={v}" for k, v in params.items()])
            if sets in checked:
                continue
            checked.add(sets)
            run(first.script_text, path=first.script, machine=first.machine, set=list(sets), seed=first.seed, max_events=1)
