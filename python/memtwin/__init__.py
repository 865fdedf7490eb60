"""memtwin: a digital twin of the Linux memory subsystem.

Replay a shell-like scenario (dd, cp, sync, sysctl, free, vmstat, ...) on a simulated machine
and read what the tools would have printed and how every /proc/vmstat and /proc/meminfo counter
moved::

    import memtwin

    result = memtwin.run("dd if=/dev/zero of=/tmp/f bs=1M count=512\\nfree -m\\n",
                         machine="default", sysctl={"vm.swappiness": 1}, seed=0)
    print(result.transcript)
    result.series["mi.MemFree"]     # one value per tick, times in result.series["t_s"]
    result.frame()                  # the same as a pandas DataFrame (needs pandas)

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

import operator
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from . import _core
from ._core import HostMemoryError, MemtwinError

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas

__all__ = [
    "MemtwinError",
    "HostMemoryError",
    "Result",
    "run",
    "presets",
    "default_scenario",
    "resolve_machine",
    "__version__",
]

__version__: str = _core.__version__

#: A path given as text or as a path-like object.
PathLike = Union[str, "os.PathLike[str]"]
#: A scalar override value: written as ``KEY=VALUE`` with ``str(value)`` (booleans as 1/0).
SetValue = Union[str, int, float, bool]

_SEED_MAX = 2**64 - 1

#: Default limits of a run (0 passed to :func:`run` means no limit).
DEFAULT_MAX_SIM_TIME: float = _core.DEFAULT_MAX_SIM_TIME  # seconds: one week
DEFAULT_MAX_WALL: float = _core.DEFAULT_MAX_WALL  # seconds: one hour
DEFAULT_MAX_EVENTS: int = _core.DEFAULT_MAX_EVENTS
DEFAULT_MAX_OUTPUT: int = _core.DEFAULT_MAX_OUTPUT  # bytes: 64 MiB


@dataclass(frozen=True)
class Result:
    """What one scenario run produced.

    Attributes:
        transcript: everything the scenario's commands printed, as a terminal would show it.
        exit_status: the script's exit status (the last command's, or the failing one's under
            ``set -e``); 0 when all went well. When a limit stopped the run, the status of the
            last command that finished.
        sim_seconds: simulated seconds the script took.
        series: sampled counters, one value per tick: ``"t_s"`` (seconds since boot) first,
            then every ``"vm.<name>"`` (/proc/vmstat) and ``"mi.<Name>"`` (/proc/meminfo)
            field, all lists of the same length.
        stopped: None when the script ran to its end; else the limit that ended it:
            ``"max_sim_time"``, ``"max_wall"``, ``"max_events"`` or ``"max_output"``.
        stop_message: one line saying which limit was reached and when ("" if none).
        commands: one dict per top-level command of the script: its line, source, start and
            end, exit status, what its tasks did (CPU, bytes, faults, OOM kills) and
            ``breakdown``, where its time went in ns (the parts sum to ``wall_ns``); the
            fields and units are in docs/results.md.
        pressure_total_us: /proc/pressure totals at the end of the run in microseconds
            (``io_some``, ``io_full``, ``memory_some``, ``memory_full``, ``cpu_some``,
            ``cpu_full``); None on kernels without PSI (before 4.20).
    """

    transcript: str
    exit_status: int
    sim_seconds: float
    series: Dict[str, List[Union[int, float]]] = field(repr=False)
    stopped: Optional[str] = None
    stop_message: str = ""
    commands: List[Dict[str, Any]] = field(default_factory=list, repr=False)
    pressure_total_us: Optional[Dict[str, int]] = None

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
                "Result.series has the same data as a dict of lists"
            ) from e
        return pd.DataFrame(self.series)


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
    raw = _core.run(
        script_text=script,
        script_path=script_path,
        machine=os.fspath(machine),
        sets=_sets(sysctl, set),
        seed=seed,
        max_sim_time=max_sim_time,
        max_wall=max_wall,
        max_events=max_events,
        max_output=max_output,
        on_output=on_output,
    )
    series: Dict[str, List[Union[int, float]]] = {"t_s": raw["t_s"]}
    series.update(raw["columns"])
    return Result(
        transcript=raw["transcript"],
        exit_status=raw["exit_status"],
        sim_seconds=raw["sim_seconds"],
        series=series,
        stopped=raw["stopped"],
        stop_message=raw["stop_message"],
        commands=raw["commands"],
        pressure_total_us=raw["pressure_total_us"],
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
