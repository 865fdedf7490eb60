"""``memtwin report RESULTS -o report.html``: one self-contained HTML page.

For a sweep directory: each metric (per run, and each command's duration) against each swept
parameter, the median over seeds with the min..max spread, one line per combination of the
other parameters; then the runs. For a JSON result: the vmstat, memory, reclaim and
per-command pictures and the commands. Figures are embedded PNGs (base64): the page needs no
network and no script. Needs ``pip install 'memtwin[sweep]'``.
"""

from __future__ import annotations

import base64
import html
import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import MemtwinError, Result, __version__
from . import plot as _plot
from . import results as _results

# (column of the runs table, label, scale to the unit shown).
RUN_METRICS: Tuple[Tuple[str, str, float], ...] = (
    ("sim_seconds", "simulated run time (s)", 1.0),
    ("swap_used_max_kib", "peak swap used (MiB)", 1 / 1024),
    ("mem_available_min_kib", "lowest MemAvailable (MiB)", 1 / 1024),
    ("pswpout_total", "pages swapped out", 1.0),
    ("pswpin_total", "pages swapped in", 1.0),
    ("pgmajfault_total", "major faults", 1.0),
    ("workingset_refault_file_total", "file refaults", 1.0),
    ("pgscan_direct_total", "pages scanned by direct reclaim", 1.0),
    ("allocstall_normal_total", "direct reclaim stalls (allocstall)", 1.0),
    ("reclaim_direct_max_ns", "longest direct reclaim pass (ms)", 1e-6),
    ("oom_kill_total", "OOM kills", 1.0),
    ("exit_status", "script exit status", 1.0),
)
MAX_COMMAND_FIGURES = 8

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
figure { margin: 1em 0; } .figs { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 0 1.5em; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.85em; } td, th { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #f4f4f4; } td.l, th.l { text-align: left; }
pre { background: #f7f7f7; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 1em; } dt { font-weight: 600; }
"""


def _img(png: bytes, alt: str, caption: str = "") -> str:
    data = base64.b64encode(png).decode("ascii")
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">{cap}</figure>\n'


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{body}"
        f"<p style=\"color:#888\">memtwin {html.escape(__version__)}: simulated results, not measurements.</p>\n"
        "</body></html>\n"
    )


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], left: int = 0) -> str:
    out = ["<table><tr>"]
    out += [f'<th class="{"l" if i < left else ""}">{html.escape(str(h))}</th>' for i, h in enumerate(header)]
    out.append("</tr>\n")
    for row in rows:
        out.append("<tr>")
        for i, v in enumerate(row):
            if isinstance(v, float):
                v = f"{v:,.3f}"
            elif isinstance(v, int) and not isinstance(v, bool):
                v = f"{v:,}"
            out.append(f'<td class="{"l" if i < left else ""}">{html.escape("" if v is None else str(v))}</td>')
        out.append("</tr>\n")
    out.append("</table>\n")
    return "".join(out)


# --- a sweep ------------------------------------------------------------------------------------


def _metric_figure(
    rows: List[Dict[str, Any]], column: str, label: str, scale: float, grid: List[Tuple[str, List[str]]]
) -> Optional[bytes]:
    """One subplot per swept parameter: the metric's median over seeds, min..max bars, one
    line per combination of the other parameters. None when no run has the metric."""
    vals = [r.get(column) for r in rows]
    if all(v is None for v in vals):
        return None
    plt = _plot._plt()
    n = max(len(grid), 1)
    fig, axes = plt.subplots(1, n, figsize=(min(5.0 * n, 11), 3.4), squeeze=False, constrained_layout=True)
    for ax, (key, values) in zip(axes[0], grid or [("run", ["all"])]):
        others = [k for k, _ in grid if k != key]
        groups: Dict[Tuple[str, ...], Dict[str, List[float]]] = {}
        for r in rows:
            v = r.get(column)
            if v is None:
                continue
            g = tuple(f"{k}={r[_param(k)]}" for k in others)
            x = r[_param(key)] if grid else "all"
            groups.setdefault(g, {}).setdefault(x, []).append(float(v) * scale)
        order = {k: vals for k, vals in grid}

        def grid_order(item: Tuple[Tuple[str, ...], Any]) -> List[int]:
            # The other parameters' values in the grid's order, not as text.
            return [order[k].index(v.split("=", 1)[1]) for k, v in zip(others, item[0])]

        for j, (g, by_x) in enumerate(sorted(groups.items(), key=grid_order)):
            xs = [i for i, x in enumerate(values) if x in by_x]
            med, lo, hi = [], [], []
            for i in xs:
                s = sorted(by_x[values[i]])
                m = s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2
                med.append(m)
                lo.append(m - s[0])
                hi.append(s[-1] - m)
            color = _plot.PALETTE[j % len(_plot.PALETTE)]
            ax.errorbar(xs, med, yerr=[lo, hi], marker="o", ms=4, capsize=3, color=color, lw=1.4, label=" ".join(g) or None)
        ax.set_xticks(range(len(values)), values)
        ax.set_xlabel(key)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        if others and groups:
            ax.legend(fontsize=7)
    return _plot.png_bytes(fig)


def _param(key: str) -> str:
    from .sweeps import param_column

    return param_column(key)


def sweep_report(out: str) -> str:
    from .sweeps import read_table

    with open(os.path.join(out, "sweep.json"), encoding="utf-8") as f:
        meta = json.load(f)
    grid = [(g["key"], list(g["values"])) for g in meta["grid"]]
    runs = read_table(out, "runs")
    if runs.height == 0:
        raise MemtwinError(f"sweep '{out}' has no finished run yet")
    rows = runs.to_dicts()
    commands = read_table(out, "commands")
    body: List[str] = []
    body.append("<dl>")
    for k, v in (
        ("script", meta["script"]),
        ("machine", meta["machine"] or "(the script's own)"),
        ("settings", " ".join(meta["settings"]) or "(none)"),
        ("grid", "; ".join(f"{k} = {', '.join(v)}" for k, v in grid) or "(none)"),
        ("seeds", ", ".join(map(str, meta["seeds"]))),
        ("runs", f"{runs.height} of {meta['runs']} finished"),
    ):
        body.append(f"<dt>{html.escape(k)}</dt><dd>{html.escape(str(v))}</dd>")
    body.append("</dl>\n")
    body.append(f"<details><summary>the scenario</summary><pre>{html.escape(meta['script_text'])}</pre></details>\n")
    spread = "median over seeds, bars min..max" if len(meta["seeds"]) > 1 else "one seed"
    body.append("<h2>Each run</h2>\n<div class=\"figs\">\n")
    for column, label, scale in RUN_METRICS:
        png = _metric_figure(rows, column, label, scale, grid)
        if png is not None:
            body.append(_img(png, label, f"{label} against each swept parameter ({spread})"))
    body.append("</div>\n")
    # Each command's duration: the commands that took simulated time in some run.
    if commands.height:
        body.append("<h2>Each command</h2>\n<div class=\"figs\">\n")
        by_index: Dict[int, str] = {}
        for r in commands.select("index", "command", "duration_ns").to_dicts():
            if r["duration_ns"] and r["index"] not in by_index:
                by_index[r["index"]] = r["command"]
        for idx in sorted(by_index)[:MAX_COMMAND_FIGURES]:
            sub = {r["run_key"]: r["duration_ns"] for r in commands.filter(index=idx).to_dicts()}
            crow = [{**r, "duration_ns": sub.get(r["run_key"])} for r in rows]
            label = f"command {idx + 1}: {by_index[idx][:70]}"
            png = _metric_figure(crow, "duration_ns", "duration (s)", 1e-9, grid)
            if png is not None:
                body.append(_img(png, label, f"{label} — its duration in simulated seconds ({spread})"))
        body.append("</div>\n")
    body.append("<h2>Runs</h2>\n")
    pcols = [_param(k) for k, _ in grid]
    header = [k for k, _ in grid] + ["seed", "exit", "stopped", "sim s", "peak swap MiB", "OOM kills", "key"]
    table_rows = [
        [r[c] for c in pcols]
        + [
            r["seed"],
            r["exit_status"],
            r["stopped"] or "",
            r["sim_seconds"],
            None if r.get("swap_used_max_kib") is None else r["swap_used_max_kib"] / 1024,
            r.get("oom_kill_total"),
            r["run_key"],
        ]
        for r in rows
    ]
    body.append(_table(header, table_rows, left=len(pcols)))
    return _page(f"memtwin sweep: {os.path.basename(meta['script'])}", "".join(body))


# --- one result ---------------------------------------------------------------------------------


def result_report(r: Result) -> str:
    body: List[str] = ["<dl>"]
    for k, v in (
        ("script", r.script),
        ("machine", f"{r.machine} ({r.kernel_profile})"),
        ("settings", " ".join(r.settings) or "(none)"),
        ("seed", r.seed),
        ("simulated", f"{r.sim_seconds:.3f} s"),
        ("exit status", r.exit_status if r.stopped is None else f"stopped: {r.stopped}"),
    ):
        body.append(f"<dt>{html.escape(k)}</dt><dd>{html.escape(str(v))}</dd>")
    body.append("</dl>\n")
    for what, caption in (
        ("vmstat", "vmstat's columns over simulated time; shading: each command's span"),
        ("meminfo", "memory composition (stacked) and swap in use"),
        ("reclaim", "reclaim pass durations"),
        ("explain", "where each command's time went"),
    ):
        body.append(_img(_plot.png_bytes(_plot.figure(r, what)), what, caption))
    body.append("<h2>Commands</h2>\n")
    header = ["line", "command", "start s", "duration s", "exit", "user s", "sys s", "read MiB", "written MiB", "major faults", "OOM kills"]
    rows = [
        [
            c["line"],
            c["command"],
            int(c["start_ns"]) / 1e9,  # type: ignore[call-overload]
            int(c["duration_ns"]) / 1e9,  # type: ignore[call-overload]
            c["exit_status"],
            int(c.get("cpu_user_ns", 0)) / 1e9,  # type: ignore[call-overload]
            int(c.get("cpu_sys_ns", 0)) / 1e9,  # type: ignore[call-overload]
            int(c.get("read_bytes", 0)) / 2**20,  # type: ignore[call-overload]
            int(c.get("write_bytes", 0)) / 2**20,  # type: ignore[call-overload]
            c.get("major_faults_total"),
            c.get("oom_kills_total"),
        ]
        for c in r.records
    ]
    body.append(_table(header, rows, left=2))
    if r.transcript:
        body.append(f"<details><summary>transcript</summary><pre>{html.escape(r.transcript)}</pre></details>\n")
    return _page(f"memtwin run: {os.path.basename(r.script)}", "".join(body))


def report(results: str, out: str) -> None:
    """``memtwin report``: write the page for a sweep directory or a JSON result."""
    from . import _core

    _results.need("matplotlib", "memtwin report")
    if _plot.is_sweep(results):
        page = sweep_report(results)
    else:
        page = result_report(_plot.load_result(results))
    _core.write_output(out, page.encode("utf-8"))
