"""memtwin: a digital twin of the Linux memory subsystem.

Replay a shell-like scenario (dd, cp, sync, sysctl, free, vmstat, ...) on a simulated machine
and read what the tools would have printed and how every /proc/vmstat and /proc/meminfo counter
moved::

    import memtwin

    result = memtwin.run("dd if=/dev/zero of=/tmp/f bs=1M count=512\\nfree -m\\n",
                         machine="default", sysctl={"vm.swappiness": 1}, seed=0)
    print(result.transcript)
    result.columns["mi.MemFree_kib"]  # one value per tick, times in result.columns["t_s"]
    result.series                     # the same as a polars DataFrame (memtwin[sweep])
    result.commands                   # one row per command: times, CPU, I/O, faults, ...
    result.frame()                    # the series as a pandas DataFrame (needs pandas)

All the work happens in Rust (``memtwin._core``); this package only converts arguments.
Bad input raises :class:`MemtwinError` (a :class:`ValueError`) whose message names the file and
line where there is one, and what would be accepted; a machine too large for the host's
memory raises :class:`HostMemoryError` (a :class:`MemtwinError`) before it is built.

A run is bounded (simulated time, wall time, kernel events, output; see :func:`run`): a limit
ends it early with ``Result.stopped`` set and what was printed and sampled so far kept.
``on_output`` streams the transcript while the simulation makes it, and Ctrl-C stops a run
promptly with :class:`KeyboardInterrupt`.
"""

from __future__ import annotations

import json
import math
import operator
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from . import results as _results
from ._core import HostMemoryError, MemtwinError

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas
    import polars
    import pyarrow

    from . import sweeps

__all__ = [
    "MemtwinError",
    "HostMemoryError",
    "Result",
    "run",
    "presets",
    "default_scenario",
    "resolve_machine",
    "__version__",
    "RECLAIM_PATHS",
    "latency_summary",
]

__version__: str = _core.__version__

#: A path given as text or as a path-like object.
PathLike = Union[str, "os.PathLike[str]"]
#: A scalar override value: written as ``KEY=VALUE`` with ``str(value)`` (booleans as 1/0).
SetValue = Union[str, int, float, bool]

_SEED_MAX = 2**64 - 1

#: The reclaim paths a result records: kswapd, classic direct reclaim, and split reclaim's
#: page reclaim and slab reclaim (``docs/seed-004.md``).
RECLAIM_PATHS: Tuple[str, ...] = ("kswapd", "direct", "split_page", "split_slab")


def latency_summary(values: Sequence[int]) -> Dict[str, Optional[float]]:
    """Count, mean and nearest-rank p50/p99/max of durations in ns (None when empty), as
    the core's ``LatencySummary`` computes them."""
    s = sorted(values)
    n = len(s)
    if n == 0:
        return {"count": 0, "mean_ns": None, "p50_ns": None, "p99_ns": None, "max_ns": None}

    def rank(p: float) -> int:
        return s[min(max(math.ceil(p * n), 1), n) - 1]

    return {"count": n, "mean_ns": sum(s) / n, "p50_ns": rank(0.50), "p99_ns": rank(0.99), "max_ns": s[-1]}

#: Default limits of a run (0 passed to :func:`run` means no limit).
DEFAULT_MAX_SIM_TIME: float = _core.DEFAULT_MAX_SIM_TIME  # seconds: one week
DEFAULT_MAX_WALL: float = _core.DEFAULT_MAX_WALL  # seconds: one hour
DEFAULT_MAX_EVENTS: int = _core.DEFAULT_MAX_EVENTS
DEFAULT_MAX_OUTPUT: int = _core.DEFAULT_MAX_OUTPUT  # bytes: 64 MiB


class Result:
    """What one scenario run produced.

    Attributes:
        transcript: everything the scenario's commands printed, as a terminal would show it.
        exit_status: the script's exit status (the last command's, or the failing one's under
            ``set -e``); 0 when all went well. When a limit stopped the run, the status of the
            last command that finished.
        sim_seconds: simulated seconds the script took.
        columns: the per-second series as ``{column: list of values}``, one value per tick:
            ``"t_s"`` (seconds since boot) first, then every /proc/vmstat (``vm.*``) and
            /proc/meminfo (``mi.*``) field under a name that carries its unit (``_pages``,
            ``_kib``, ``_total`` for cumulative counters; see ``docs/results.md``).
        stopped: None when the script ran to its end; else the limit that ended it:
            ``"max_sim_time"``, ``"max_wall"``, ``"max_events"`` or ``"max_output"``.
        stop_message: one line saying which limit was reached and when ("" if none).
        records: one dict per top-level command (``memtwin.results.COMMAND_COLUMNS``).
        reclaim: every reclaim invocation per path, in the order they ended:
            ``{"kswapd_ns": [...], "direct_ns": [...], "split_page_ns": [...],
            "split_slab_ns": [...]}`` (durations) and ``"<path>_lock_wait_ns"`` (the part of
            each spent waiting for locks); ``reclaim_summary()`` summarises them.
        script, script_text: the scenario's name (its path, or the default's) and text.
        machine, machine_toml, kernel_profile: the machine as named (preset or file), its
            file's TOML text (the settings apply on top) and its kernel profile.
        seed, settings: the seed and the ``KEY=VALUE`` overrides (``--set``, ``sysctl=``).
        version: the memtwin version that made the result.
        pressure_total_us: /proc/pressure totals at the end of the run in microseconds
            (``io_some``, ``io_full``, ``memory_some``, ``memory_full``, ``cpu_some``,
            ``cpu_full``); None on kernels without PSI (before 4.20).
        kthreads: the kernel threads' time, one dict per name (``kswapd0``, ``nfsd``, ...):
            ``comm``, ``threads`` (how many of that name ran), ``cpu_user_ns``,
            ``cpu_sys_ns`` and ``breakdown`` (``{part: ns}``, the same parts as a command's,
            summed over the threads: ``wall_ns`` is thread-nanoseconds).

    ``series`` and ``commands`` are polars DataFrames of ``columns`` and ``records``
    (``.to_pandas()`` converts; ``frame()`` gives the series with pandas alone); both are
    Arrow underneath (``series_arrow()``, ``commands_arrow()``). ``to_json()`` is the document
    ``memtwin run --json`` writes; ``Result.from_json`` reads it back.
    """

    # The constructor's ``series`` is the dict of columns (``Result.columns``).
    def __init__(
        self,
        transcript: str,
        exit_status: int,
        sim_seconds: float,
        series: Mapping[str, Sequence[Union[int, float]]],
        stopped: Optional[str] = None,
        stop_message: str = "",
        *,
        records: Sequence[Mapping[str, object]] = (),
        reclaim: Optional[Mapping[str, Sequence[int]]] = None,
        script: str = "",
        script_text: str = "",
        machine: str = "",
        machine_toml: str = "",
        kernel_profile: str = "",
        seed: int = 0,
        settings: Sequence[str] = (),
        version: str = "",
        pressure_total_us: Optional[Mapping[str, int]] = None,
        kthreads: Sequence[Mapping[str, object]] = (),
    ) -> None:
        self.transcript = transcript
        self.exit_status = exit_status
        self.sim_seconds = sim_seconds
        self.columns: Dict[str, List[Union[int, float]]] = {k: list(v) for k, v in series.items()}
        self.stopped = stopped
        self.stop_message = stop_message
        self.records: List[Dict[str, object]] = [dict(r) for r in records]
        reclaim = reclaim or {}
        self.reclaim: Dict[str, List[int]] = {}
        for path in RECLAIM_PATHS:
            self.reclaim[f"{path}_ns"] = list(reclaim.get(f"{path}_ns", []))
        for path in RECLAIM_PATHS:
            self.reclaim[f"{path}_lock_wait_ns"] = list(reclaim.get(f"{path}_lock_wait_ns", []))
        self.script = script
        self.script_text = script_text
        self.machine = machine
        self.machine_toml = machine_toml
        self.kernel_profile = kernel_profile
        self.seed = seed
        self.settings: List[str] = list(settings)
        self.version = version or __version__
        self.pressure_total_us: Optional[Dict[str, int]] = dict(pressure_total_us) if pressure_total_us else None
        self.kthreads: List[Dict[str, object]] = [dict(r) for r in kthreads]

    def __repr__(self) -> str:
        return (
            f"Result(script={self.script!r}, machine={self.machine!r}, seed={self.seed}, "
            f"exit_status={self.exit_status}, sim_seconds={self.sim_seconds:g}, "
            f"commands={len(self.records)}, ticks={len(self.columns.get('t_s', []))}, "
            f"stopped={self.stopped!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable lists inside

    # --- frames ---------------------------------------------------------------------------

    def series_arrow(self) -> "pyarrow.Table":
        """The per-second series as a pyarrow Table (needs ``memtwin[sweep]``)."""
        return _results.arrow_table(self.columns)

    def commands_arrow(self) -> "pyarrow.Table":
        """The per-command records as a pyarrow Table (needs ``memtwin[sweep]``)."""
        cols = _results.records_to_columns(self.records)
        return _results.arrow_table(cols, rows=len(self.records))

    @property
    def series(self) -> "polars.DataFrame":
        """The per-second series: a polars DataFrame, one row per tick (needs polars)."""
        pl = _results.need("polars", "Result.series")
        return pl.from_arrow(self.series_arrow())

    @property
    def commands(self) -> "polars.DataFrame":
        """One row per top-level command: a polars DataFrame (needs polars)."""
        pl = _results.need("polars", "Result.commands")
        return pl.from_arrow(self.commands_arrow())

    def frame(self) -> "pandas.DataFrame":
        """The series as a pandas DataFrame: one row per tick, columns ``t_s``, ``vm.*``, ``mi.*``.

        Raises:
            ImportError: pandas is not installed (``pip install 'memtwin[frames]'``).
        """
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError(
                "memtwin.Result.frame() needs pandas, which is not installed: "
                "pip install 'memtwin[frames]' (or pip install pandas); "
                "Result.columns has the same data as a dict of lists"
            ) from e
        return pd.DataFrame(self.columns)

    def reclaim_summary(self) -> Dict[str, Dict[str, Optional[float]]]:
        """Per reclaim path (``RECLAIM_PATHS``): ``count``, ``mean_ns``, ``p50_ns``,
        ``p99_ns``, ``max_ns`` of the invocations' latency and ``lock_wait_mean_ns``,
        ``lock_wait_p99_ns``, ``lock_wait_max_ns`` of their lock-wait part."""
        out: Dict[str, Dict[str, Optional[float]]] = {}
        for path in RECLAIM_PATHS:
            row = latency_summary(self.reclaim.get(f"{path}_ns", []))
            wait = latency_summary(self.reclaim.get(f"{path}_lock_wait_ns", []))
            row["lock_wait_mean_ns"] = wait["mean_ns"]
            row["lock_wait_p99_ns"] = wait["p99_ns"]
            row["lock_wait_max_ns"] = wait["max_ns"]
            out[path] = row
        return out

    # --- JSON -----------------------------------------------------------------------------

    @property
    def memtwin_status(self) -> int:
        """memtwin's exit status for this run: 124 when a limit ended it, else the script's
        own (1 for a status outside 0..255)."""
        if self.stopped is not None:
            return 124
        return self.exit_status if 0 <= self.exit_status <= 255 else 1

    def to_dict(self) -> Dict[str, object]:
        """The result as the JSON document of ``memtwin run --json`` (``schema_version`` 1)."""
        return {
            "schema_version": _results.SCHEMA_VERSION,
            "memtwin_version": self.version,
            "script": self.script,
            "script_text": self.script_text,
            "machine": self.machine,
            "kernel_profile": self.kernel_profile,
            "machine_toml": self.machine_toml,
            "settings": list(self.settings),
            "seed": self.seed,
            "sim_seconds": self.sim_seconds,
            # The script's own status; null when a limit ended the run before the script did.
            "exit_status": self.exit_status if self.stopped is None else None,
            # memtwin's exit status, why the run ended ("completed" or "limit"), which limit.
            "memtwin_status": self.memtwin_status,
            "reason": "completed" if self.stopped is None else "limit",
            "limit": self.stopped,
            "message": self.stop_message,
            "transcript": self.transcript,
            "commands": self.records,
            "reclaim": self.reclaim,
            "reclaim_summary": self.reclaim_summary(),
            "pressure_total_us": self.pressure_total_us,
            "kthreads": self.kthreads,
            "series": self.columns,
        }

    def to_json(self) -> str:
        """``to_dict()`` as JSON text (one line, no trailing newline)."""
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, doc: Union[str, Mapping[str, object]]) -> "Result":
        """A Result from ``to_json()``'s text or ``to_dict()``'s dict (``memtwin run --json``).

        Raises:
            MemtwinError: not a memtwin result, or a newer schema than this version reads.
        """
        if isinstance(doc, str):
            try:
                doc = json.loads(doc)
            except ValueError as e:
                raise MemtwinError(f"not a memtwin JSON result: {e}") from None
        if not isinstance(doc, Mapping) or "series" not in doc:
            raise MemtwinError("not a memtwin JSON result (written by memtwin run --json): no 'series'")
        version = doc.get("schema_version", 0)
        if not isinstance(version, int) or version > _results.SCHEMA_VERSION:
            raise MemtwinError(
                f"result schema_version {version!r} is newer than this memtwin reads "
                f"({_results.SCHEMA_VERSION}); upgrade memtwin"
            )
        status = doc.get("exit_status")
        return cls(
            transcript=str(doc.get("transcript", "")),
            exit_status=int(status) if isinstance(status, int) else 0,
            sim_seconds=float(doc.get("sim_seconds", 0.0)),  # type: ignore[arg-type]
            series=doc["series"],  # type: ignore[arg-type]
            stopped=doc.get("limit"),  # type: ignore[arg-type]
            stop_message=str(doc.get("message", "")),
            records=doc.get("commands", []),  # type: ignore[arg-type]
            reclaim=doc.get("reclaim"),  # type: ignore[arg-type]
            pressure_total_us=doc.get("pressure_total_us"),  # type: ignore[arg-type]
            kthreads=doc.get("kthreads", []),  # type: ignore[arg-type]
            script=str(doc.get("script", "")),
            script_text=str(doc.get("script_text", "")),
            machine=str(doc.get("machine", "")),
            machine_toml=str(doc.get("machine_toml", "")),
            kernel_profile=str(doc.get("kernel_profile", "")),
            seed=int(doc.get("seed", 0)),  # type: ignore[arg-type]
            settings=doc.get("settings", []),  # type: ignore[arg-type]
            version=str(doc.get("memtwin_version", "")),
        )


def _set_item(key: str, value: SetValue) -> str:
    if isinstance(value, bool):
        value = int(value)
    return f"{key}={value}"


def _sets(
    sysctl: Optional[Mapping[str, SetValue]],
    set: Optional[Union[Mapping[str, SetValue], Iterable[str]]],
) -> List[str]:
    items: List[str] = []
    if sysctl is not None:
        items.extend(_set_item(k, v) for k, v in sysctl.items())
    if set is not None:
        if isinstance(set, str):
            items.append(set)
        elif isinstance(set, Mapping):
            items.extend(_set_item(k, v) for k, v in set.items())
        else:
            items.extend(str(s) for s in set)
    return items


def read_scenario(path: PathLike) -> str:
    """Read a scenario file as UTF-8 text.

    Raises:
        OSError: the file cannot be read (``FileNotFoundError`` when it does not exist).
        MemtwinError: the file is not UTF-8 text.
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MemtwinError(
            f"{path}: not UTF-8 text (invalid byte at offset {e.start}); "
            "scenarios are UTF-8 shell-like scripts"
        ) from None


def run(
    script: Optional[str] = None,
    *,
    path: Optional[PathLike] = None,
    machine: PathLike = "",
    sysctl: Optional[Mapping[str, SetValue]] = None,
    set: Optional[Union[Mapping[str, SetValue], Iterable[str]]] = None,
    seed: int = 0,
    max_sim_time: Optional[float] = None,
    max_wall: Optional[float] = None,
    max_events: Optional[int] = None,
    max_output: Optional[int] = None,
    on_output: Optional[Callable[[str], object]] = None,
) -> Result:
    """Replay a scenario on a simulated machine. Deterministic for a given seed.

    Args:
        script: the scenario's text. With neither ``script`` nor ``path``, the embedded default
            scenario (seed 000's page-cache walk-through) runs.
        path: the scenario's file. Read here when ``script`` is None; otherwise only used to
            name the script in error messages.
        machine: a preset name (see :func:`presets`) or the path of a machine TOML file.
            Empty: the scenario's own ``# machine:`` line, else ``"default"``.
        sysctl: kernel settings, e.g. ``{"vm.swappiness": 1, "vm.dirty_ratio": 5}``.
        set: further overrides, as a mapping or as ``"KEY=VALUE"`` strings: machine fields
            (``ram=256M``, ``cpus=4``) or sysctls. Applied after ``sysctl``.
        seed: drives every random choice (0 .. 2**64-1).
        max_sim_time: simulated seconds (default one week).
        max_wall: wall-clock seconds (default one hour).
        max_events: kernel events processed (default 10**10).
        max_output: bytes the commands print, to the terminal or into redirected files
            (default 64 MiB). For every limit None means the default and 0 no limit;
            reaching one ends the run with ``Result.stopped`` set.
        on_output: called with each new piece of the transcript, in order, while the run goes
            on (after each command of the script and at least every 0.1 s of wall time);
            the pieces joined are ``Result.transcript``. An exception it raises stops the run
            and propagates.

    Returns:
        A :class:`Result`.

    Raises:
        MemtwinError: bad scenario, machine, override or seed; the message names file:line
            where there is one and what would be accepted.
        HostMemoryError: the machine needs more host memory than the host has available.
        KeyboardInterrupt: Ctrl-C; the run stops within about 0.1 s.
        OSError: ``path`` cannot be read.
    """
    if isinstance(seed, bool):
        raise TypeError("seed must be an int, not bool")
    seed = operator.index(seed)  # int, numpy integers, ...; TypeError for floats and text
    if not 0 <= seed <= _SEED_MAX:
        raise MemtwinError(f"seed {seed} is out of range: expected 0 .. {_SEED_MAX}")
    for name, value in (("max_events", max_events), ("max_output", max_output)):
        if value is not None and (isinstance(value, bool) or operator.index(value) < 0):
            raise MemtwinError(f"{name} = {value!r}: expected an integer >= 0 (0: no limit)")
    script_path = os.fspath(path) if path is not None else None
    if script is None and script_path is not None:
        script = read_scenario(script_path)
    sets = _sets(sysctl, set)
    raw = _core.run(
        script_text=script,
        script_path=script_path,
        machine=os.fspath(machine),
        sets=sets,
        seed=seed,
        max_sim_time=max_sim_time,
        max_wall=max_wall,
        max_events=max_events,
        max_output=max_output,
        on_output=on_output,
    )
    return Result(
        transcript=raw["transcript"],
        exit_status=raw["exit_status"],
        sim_seconds=raw["sim_seconds"],
        series=_results.series_columns(raw["t_s"], raw["columns"]),
        stopped=raw["stopped"],
        stop_message=raw["stop_message"],
        records=[_results.command_record(i, c) for i, c in enumerate(raw["commands"])],
        reclaim={
            f"{path}{suffix}": raw.get(f"reclaim_{path}{suffix}", [])
            for path in RECLAIM_PATHS
            for suffix in ("_ns", "_lock_wait_ns")
        },
        script=script_path if script_path is not None else (default_scenario()[0] if script is None else "<script>"),
        script_text=script if script is not None else default_scenario()[1],
        machine=resolve_machine(script, machine),
        machine_toml=raw["machine_toml"],
        kernel_profile=raw["kernel_profile"],
        seed=seed,
        settings=sets,
        pressure_total_us=raw["pressure_total_us"],
        kthreads=raw["kthreads"],
    )


def presets() -> List[Tuple[str, str]]:
    """(name, one-line description) of every machine preset shipped with memtwin."""
    return [(name, desc) for name, desc in _core.presets()]


def resolve_machine(script: Optional[str] = None, machine: PathLike = "") -> str:
    """The machine :func:`run` uses: ``machine`` if given, else the script's own
    ``# machine: NAME`` line, else ``"default"``. No script: the default scenario's."""
    machine = os.fspath(machine)
    if machine:
        return machine
    if script is None:
        script = _core.default_scenario()[1]
    return _core.machine_directive(script) or "default"


def default_scenario() -> Tuple[str, str]:
    """(name, text) of the embedded default scenario that :func:`run` uses with no script."""
    name, text = _core.default_scenario()
    return name, text


# --- replay: page-access traces, cache-simulator style ----------------------------------------

__all__ += ["ReplayResult", "replay"]


@dataclass(frozen=True)
class ReplayResult:
    """What one trace replay produced (see :func:`replay`).

    Attributes:
        policy: ``"kernel"``, ``"lru"``, ``"fifo"``, ``"clock"`` or ``"s3fifo"``.
        format: the trace format read (``"csv"``, ``"u64"``, ``"oracle-general"``).
        requests: requests replayed.
        misses: requests whose object (page) was not cached.
        miss_ratio: ``misses / requests``.
        byte_miss_ratio: missed bytes / requested bytes, when the trace gives sizes and the
            policy uses them (the kernel policy reads one 4 KiB page per request: None).
        cache_pages: the cache simulators' capacity in 4 KiB pages; for the kernel policy,
            the memory free or in the page cache at boot, in pages.
        wall_s: wall-clock seconds of the replay; ``requests_per_s`` is requests / wall_s.
        kernel: for the kernel policy: ``ram_bytes``, ``peak_cache_pages`` (most pages of the
            replayed file cached at once), ``file_pages``, ``sim_seconds``, ``readahead`` and
            ``vmstat`` (deltas of /proc/vmstat counters over the replay); else empty.
    """

    policy: str
    format: str
    requests: int
    misses: int
    miss_ratio: float
    byte_miss_ratio: Optional[float]
    cache_pages: int
    wall_s: float
    requests_per_s: float
    kernel: Dict[str, object] = field(default_factory=dict, repr=False)


_REPLAY_COMMON = (
    "policy",
    "format",
    "requests",
    "misses",
    "miss_ratio",
    "byte_miss_ratio",
    "cache_pages",
    "wall_s",
    "requests_per_s",
)


def replay(
    path: PathLike,
    *,
    policy: str = "lru",
    format: Optional[str] = None,
    cache_size: Optional[Union[int, str]] = None,
    machine: Optional[PathLike] = None,
    set: Optional[Union[Mapping[str, SetValue], Iterable[str]]] = None,
    readahead: Optional[bool] = None,
    seed: int = 0,
) -> ReplayResult:
    """Replay a page-access trace through a cache policy or the kernel model.

    Args:
        path: the trace: CSV (a header naming ``id``, optional ``size``, ``time``, ``op``),
            text (one uint64 id per line) or libCacheSim's oracleGeneral binary.
        policy: ``"lru"``, ``"fifo"``, ``"clock"``, ``"s3fifo"`` (cache simulators with the
            same definitions as libCacheSim's) or ``"kernel"`` (each request reads one 4 KiB
            page of one file through the kernel model's read path).
        format: ``"csv"``, ``"u64"`` or ``"oracle-general"``; None: from the file name.
        cache_size: pages (an int) or a size (``"4G"``). Required by the cache simulators;
            for the kernel policy it sets the machine's RAM so that this much memory is free
            or page cache at boot (None: the machine's RAM decides).
        machine, set: the kernel policy's machine (preset or TOML file) and overrides.
        readahead: kernel policy only: False turns readahead off (read_ahead_kb = 0);
            None or True keeps the machine's.
        seed: the kernel policy's seed.

    Raises:
        MemtwinError: a bad trace (file:line or record and what is accepted) or option.
    """
    if isinstance(seed, bool):
        raise TypeError("seed must be an int, not bool")
    seed = operator.index(seed)
    if not 0 <= seed <= _SEED_MAX:
        raise MemtwinError(f"seed {seed} is out of range: expected 0 .. {_SEED_MAX}")
    if isinstance(cache_size, bool):
        raise TypeError("cache_size must be an int or a str, not bool")
    raw = _core.replay(
        os.fspath(path),
        policy=policy,
        format=format,
        cache_size=None if cache_size is None else str(cache_size),
        machine=None if machine is None else os.fspath(machine),
        sets=_sets(None, set),
        readahead=readahead,
        seed=seed,
    )
    kernel = {k: v for k, v in raw.items() if k not in _REPLAY_COMMON and k != "path"}
    return ReplayResult(**{k: raw[k] for k in _REPLAY_COMMON}, kernel=kernel)


# --- sweeps: a scenario over a grid of settings and seeds -------------------------------------

__all__ += ["sweep"]


def sweep(*args: object, **kwargs: object) -> "sweeps.SweepResult":
    """Run a scenario over the product of a grid of settings and seeds into a Parquet
    dataset; see :func:`memtwin.sweeps.sweep` (needs ``pip install 'memtwin[sweep]'``)."""
    from . import sweeps

    return sweeps.sweep(*args, **kwargs)  # type: ignore[arg-type]
