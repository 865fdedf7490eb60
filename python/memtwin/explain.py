"""`memtwin run --explain`: where each command's time went, as a table per command.

The numbers come from the per-command records the core builds (delay accounting of each
command's tasks, see docs/explain.md); this module only lays them out.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

# Breakdown parts in display order: (record field, label).
PARTS = [
    ("cpu_user_ns", "cpu user"),
    ("cpu_sys_ns", "cpu sys (syscalls, faults, I/O set-up)"),
    ("cpu_sys_copy_ns", "cpu sys: copying or zeroing data"),
    ("cpu_sys_reclaim_ns", "cpu sys: reclaim"),
    ("cpu_sys_compaction_ns", "cpu sys: compaction"),
    ("cpu_sys_zram_ns", "cpu sys: zram decompression"),
    ("cpu_sys_lock_spin_ns", "cpu sys: lock spinning"),
    ("run_delay_ns", "waiting for a CPU (run delay)"),
    ("blkio_ns", "block I/O wait"),
    ("dirty_throttle_ns", "dirty throttling (balance_dirty_pages)"),
    ("reclaim_wait_ns", "reclaim throttling / waits"),
    ("swapin_ns", "swap-in wait"),
    ("thrashing_ns", "thrashing (refault) wait"),
    ("lock_wait_ns", "lock wait"),
    ("memcg_high_ns", "memory.high throttling"),
    ("sleep_ns", "sleeping (timers, waiting for work)"),
    ("shell_ns", "shell (no task running)"),
]

PRESSURE = [("cpu", "cpu"), ("memory", "memory"), ("io", "io")]


def _ms(ns: int) -> str:
    return f"{ns / 1e6:12.3f}"


def _pct(ns: int, total: int) -> str:
    return f"{100.0 * ns / total:6.1f}" if total > 0 else f"{0.0:6.1f}"


def _table(out: List[str], title: str, total: str, b: Mapping[str, int], width: int) -> None:
    """One table: a title line, the total (100 %), then each non-zero part and its share."""
    wall = b["wall_ns"]
    out.append("")
    out.append(title)
    out.append(f"  {total:<{width + 2}} {_ms(wall)} {_pct(wall, wall)}")
    for key, label in PARTS:
        ns = b.get(key, 0)
        if ns:
            out.append(f"    {label:<{width}} {_ms(ns)} {_pct(ns, wall)}")


def render(
    commands: List[Mapping[str, Any]],
    pressure_total_us: Optional[Mapping[str, int]],
    kthreads: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The tables: one per command that took time, one per kernel thread name that did
    anything but sleep, then the run's PSI totals."""
    out: List[str] = ["", "--- where the time went (ms and % of each command's wall time) ---"]
    width = max(len(label) for _, label in PARTS)
    for c in commands:
        # The records carry the breakdown flattened as ``breakdown.<part>`` (results.py).
        b: Dict[str, int] = {k[len("breakdown."):]: v for k, v in c.items() if k.startswith("breakdown.")}
        wall = b["wall_ns"]
        if wall == 0:
            continue
        job = " (background job, until it ended)" if c["background"] else ""
        _table(out, f"line {c['line']}: {c['command']}{job}", "wall time", b, width)
        if c.get("tasks"):
            rate = c["throughput_bytes_per_s"]
            out.append(
                f"  tasks {c['tasks']}, read {c['rchar']} B, written {c['wchar']} B"
                + (f" ({rate / 1e6:.1f} MB/s)" if rate > 0 else "")
                + f", faults {c['min_flt']} minor {c['maj_flt']} major"
                + (f", OOM-killed {c['oom_kills']}" if c["oom_kills"] else "")
            )
    busy = [t for t in kthreads if any(v for k, v in t["breakdown"].items() if k not in ("wall_ns", "sleep_ns"))]
    if busy:
        out.append("")
        out.append("--- kernel threads: where their time went (ms summed over the threads of a name, and %) ---")
        for t in busy:
            n = t["threads"]
            _table(out, t["comm"] + (f" ({n} threads)" if n > 1 else ""), "thread time", t["breakdown"], width)
    out.append("")
    if pressure_total_us is None:
        out.append("pressure stall information: none (the kernel profile predates PSI, 4.20)")
    else:
        out.append("pressure stall information, whole run (/proc/pressure totals, µs):")
        for key, label in PRESSURE:
            some = pressure_total_us[f"{key}_some"]
            full = pressure_total_us[f"{key}_full"]
            out.append(f"  {label:<7} some {some:>12}  full {full:>12}")
    return "\n".join(out) + "\n"
