"""Structured results: the schema of a run's per-command records and per-second series.

The names and units here are the ones of ``Result.series``/``Result.commands``, the JSON
written by ``memtwin run --json`` (``schema_version`` 1), the CSV header and a sweep's Parquet
dataset; ``docs/results.md`` ("Frames and datasets") documents them. Everything here is
metadata and per-command arithmetic: the per-event work happened in the core.

pyarrow, polars and pandas are optional (``pip install 'memtwin[sweep]'``); they are imported
only by the functions that build frames, with a clear message when missing.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

#: Version of the result schema (JSON ``schema_version``, sweep datasets' ``sweep.json``).
SCHEMA_VERSION = 1

EXTRA = "sweep"

# --- series columns -----------------------------------------------------------------------------

# /proc/vmstat items whose value is not a gauge of pages or an event count.
_VM_KIB_TOTAL = {"pgpgin", "pgpgout"}  # cumulative KiB read from / written to storage
_VM_GAUGE_KIB = {"nr_kernel_stack"}  # the kernel reports it in KiB
_VM_GAUGE_COUNT = {"workingset_nodes"}  # shadow-entry tree nodes, not pages
# nr_* items that count events (pages) since boot rather than pages now.
_VM_NR_TOTAL = {
    "nr_vmscan_write",
    "nr_vmscan_immediate_reclaim",
    "nr_dirtied",
    "nr_written",
    "nr_throttled_written",
}


def series_column(raw: str) -> str:
    """The documented, unit-carrying name of a core series column.

    ``t_s`` stays; ``vm.<item>`` (/proc/vmstat): gauges of pages end in ``_pages`` (the
    kernel's name, with ``_pages`` appended unless it already ends so), ``nr_kernel_stack``
    in ``_kib``, cumulative event counters in ``_total`` (``pgpgin``/``pgpgout``:
    ``_kib_total``), ``workingset_nodes`` is a count; ``mi.<Field>`` (/proc/meminfo): ``_kib``
    (``HugePages_*`` are counts of huge pages and keep their name).
    """
    if raw.startswith("vm."):
        name = raw[3:]
        if name in _VM_KIB_TOTAL:
            return f"{raw}_kib_total"
        if name in _VM_GAUGE_KIB:
            return f"{raw}_kib"
        if name in _VM_GAUGE_COUNT:
            return raw
        if name in _VM_NR_TOTAL or not name.startswith("nr_"):
            return f"{raw}_total"
        return raw if name.endswith("_pages") else f"{raw}_pages"
    if raw.startswith("mi."):
        if raw.startswith("mi.HugePages_"):
            return raw
        return f"{raw}_kib"
    return raw


def series_columns(t_s: Sequence[float], columns: Iterable[Sequence[Any]]) -> Dict[str, List[Any]]:
    """The core's (name, values) pairs as ``{unit name: values}``, ``t_s`` first."""
    out: Dict[str, List[Any]] = {"t_s": list(t_s)}
    for name, values in columns:
        out[series_column(name)] = list(values)
    return out


# --- per-command records ------------------------------------------------------------------------

# (column, /proc/vmstat item under its 6.x name): what the system did during the command
# (deltas; ``vmstat_counter`` finds each in the era's own names).
_COMMAND_DELTAS = (
    ("faults_total", "pgfault"),
    ("major_faults_total", "pgmajfault"),
    ("oom_kills_total", "oom_kill"),
    ("swapins_pages_total", "pswpin"),
    ("swapouts_pages_total", "pswpout"),
    ("storage_read_kib_total", "pgpgin"),
    ("storage_written_kib_total", "pgpgout"),
    ("pgscan_kswapd_total", "pgscan_kswapd"),
    ("pgscan_direct_total", "pgscan_direct"),
    ("pgsteal_kswapd_total", "pgsteal_kswapd"),
    ("pgsteal_direct_total", "pgsteal_direct"),
    ("allocstall_total", "allocstall"),
    ("workingset_refault_anon_total", "workingset_refault_anon"),
    ("workingset_refault_file_total", "workingset_refault_file"),
)

ZONES = ("dma", "dma32", "normal", "movable")


def vmstat_counter(get: Callable[[str], Optional[int]], item: str) -> Optional[int]:
    """A /proc/vmstat event counter under its 6.x name, read from any era's fields.

    ``get(name)`` returns the era's field or None. ``allocstall`` sums every zone's
    (one ``allocstall`` on 2.6.39); 2.6.39's per-zone ``pgscan_kswapd_<zone>`` /
    ``pgscan_direct_<zone>`` are summed, its ``kswapd_steal`` is pgsteal by kswapd and the
    rest of ``pgsteal_<zone>`` is direct reclaim's; 5.4/5.8's unsplit ``workingset_refault``
    counts file refaults (anon pages had no shadows before 5.9: 0 anon refaults). None where
    the era has no such counter (Linux 2.4 has only pgpgin, pgpgout, pswpin, pswpout).
    """

    def zones(stem: str) -> Optional[int]:
        present = [v for v in (get(f"{stem}_{z}") for z in ZONES) if v is not None]
        return sum(present) if present else None

    v = get(item)
    if v is not None:
        return v
    if item == "allocstall":
        return zones("allocstall")
    if item in ("pgscan_kswapd", "pgscan_direct"):
        return zones(item)
    if item in ("pgsteal_kswapd", "pgsteal_direct"):
        kswapd = get("kswapd_steal")
        if item == "pgsteal_kswapd" or kswapd is None:
            return kswapd
        steal = zones("pgsteal")
        return steal - kswapd if steal is not None else None
    if item in ("workingset_refault_file", "workingset_refault_anon"):
        unsplit = get("workingset_refault")
        if unsplit is None:
            return None
        return unsplit if item == "workingset_refault_file" else 0
    return None


#: The columns of a command record, in order (then ``breakdown.<part>_ns`` and any further
#: fields the core adds, sorted). ``docs/results.md`` documents each.
COMMAND_COLUMNS = (
    "index",
    "line",
    "command",
    "background",
    "start_ns",
    "end_ns",
    "duration_ns",
    "exit_status",
    "cpu_user_ns",
    "cpu_sys_ns",
    "read_bytes",
    "write_bytes",
    "read_bytes_per_s",
    "write_bytes_per_s",
    *(c for c, _ in _COMMAND_DELTAS),
    "output",
)

# Fields of the core's record that are turned into the columns above.
_CORE_FIELDS = {
    "line",
    "source",
    "background",
    "start_ns",
    "end_ns",
    "exit_status",
    "output",
    "vmstat_start",
    "vmstat_end",
    "cpu_user_ns",
    "cpu_sys_ns",
    "read_bytes",
    "write_bytes",
}


def _flatten(prefix: str, value: Any, out: Dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for k in sorted(value):
            _flatten(f"{prefix}.{k}", value[k], out)
    elif value is None or isinstance(value, (bool, int, float, str)):
        out[prefix] = value
    # Lists and other shapes have no column form; they stay in the JSON only.


def command_record(index: int, raw: Mapping[str, Any]) -> Dict[str, Any]:
    """One command as a flat record (``COMMAND_COLUMNS``, then extras) from the core's dict.

    Fields the core adds beyond these (such as the per-command ``breakdown`` mapping of
    ``<part>_ns`` times) are carried: a mapping ``m`` becomes ``m.<key>`` columns, a scalar
    keeps its name.
    """
    start, end = int(raw["start_ns"]), int(raw["end_ns"])
    duration = max(end - start, 0)
    read_b, write_b = int(raw.get("read_bytes", 0)), int(raw.get("write_bytes", 0))
    secs = duration / 1e9
    rec: Dict[str, Any] = {
        "index": index,
        "line": int(raw["line"]),
        "command": str(raw["source"]),
        "background": bool(raw["background"]),
        "start_ns": start,
        "end_ns": end,
        "duration_ns": duration,
        "exit_status": int(raw["exit_status"]),
        "cpu_user_ns": int(raw.get("cpu_user_ns", 0)),
        "cpu_sys_ns": int(raw.get("cpu_sys_ns", 0)),
        "read_bytes": read_b,
        "write_bytes": write_b,
        # Over the command's span in simulated time; None for a command that took no time.
        "read_bytes_per_s": read_b / secs if secs > 0 else None,
        "write_bytes_per_s": write_b / secs if secs > 0 else None,
    }
    vs, ve = raw.get("vmstat_start") or {}, raw.get("vmstat_end") or {}
    for col, item in _COMMAND_DELTAS:
        a, b = vmstat_counter(vs.get, item), vmstat_counter(ve.get, item)
        # A crash or reboot during the command restarts the counters: never negative. None:
        # the machine's kernel has no such counter.
        rec[col] = None if a is None or b is None else max(int(b) - int(a), 0)
    rec["output"] = str(raw.get("output", ""))
    extras: Dict[str, Any] = {}
    for key in sorted(set(raw) - _CORE_FIELDS):
        _flatten(key, raw[key], extras)
    rec.update(extras)
    return rec


def breakdown_parts(columns: Iterable[str]) -> List[str]:
    """The ``<part>`` names of ``breakdown.<part>_ns`` columns, in order."""
    return [m.group(1) for c in columns if (m := re.fullmatch(r"breakdown\.(.+)_ns", c))]


# --- optional dependencies ----------------------------------------------------------------------


def need(module: str, what: str) -> Any:
    """Import an optional dependency, or raise ImportError saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"{what} needs {module.split('.')[0]}, which is not installed: "
            f"pip install 'memtwin[{EXTRA}]' (sweeps, frames, plots and reports)"
        ) from e


# --- Arrow tables -------------------------------------------------------------------------------


def _column_type(pa: Any, values: Sequence[Any]) -> Any:
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return pa.null()
    if kinds <= {bool}:
        return pa.bool_()
    if kinds <= {int}:
        return pa.int64() if all(v is None or v < 2**63 for v in values) else pa.uint64()
    if kinds <= {int, float}:
        return pa.float64()
    return pa.string()


def arrow_table(
    columns: Mapping[str, Sequence[Any]],
    prefix: Optional[Mapping[str, Any]] = None,
    rows: Optional[int] = None,
) -> Any:
    """A pyarrow Table of ``columns`` (name -> values); ``prefix`` columns (a run's key,
    parameters, seed) come first with one value repeated on every row."""
    pa = need("pyarrow", "a result table")
    if rows is None:
        rows = len(next(iter(columns.values()))) if columns else 0
    arrays, names = [], []
    for name, value in (prefix or {}).items():
        vals = [value] * rows
        arrays.append(pa.array(vals, type=_column_type(pa, vals)))
        names.append(name)
    for name, values in columns.items():
        values = list(values)
        if name == "t_s":
            arrays.append(pa.array(values, type=pa.float64()))
        else:
            arrays.append(pa.array(values, type=_column_type(pa, values)))
        names.append(name)
    return pa.Table.from_arrays(arrays, names=names)


def records_to_columns(records: Sequence[Mapping[str, Any]]) -> Dict[str, List[Any]]:
    """Rows (dicts) to columns: ``COMMAND_COLUMNS`` first, extra keys sorted; a key a row
    lacks is None there."""
    keys: List[str] = [c for c in COMMAND_COLUMNS]
    extra = sorted({k for r in records for k in r} - set(keys))
    keys += extra
    return {k: [r.get(k) for r in records] for k in keys}
