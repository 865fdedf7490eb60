"""Pictures of a result: ``memtwin plot RESULT --what vmstat|meminfo|reclaim|explain``.

RESULT is a JSON result (``memtwin run --json``) or a sweep directory (``memtwin sweep -o``;
``--run`` picks one of its runs, by index or key; default the first). matplotlib draws with
the Agg backend: no display is needed. Needs ``pip install 'memtwin[sweep]'``.
"""

from __future__ import annotations

import io
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import MemtwinError, Result
from . import results as _results

WHATS = ("vmstat", "meminfo", "reclaim", "explain")

# Okabe-Ito: distinguishable by colour-blind readers.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000", "#999999")


def _plt() -> Any:
    mpl = _results.need("matplotlib", "memtwin plot")
    mpl.use("Agg", force=True)
    # SVG ids from a fixed salt: the same result gives the same file.
    mpl.rcParams["svg.hashsalt"] = "memtwin"
    import matplotlib.pyplot as plt

    return plt


# --- loading ------------------------------------------------------------------------------------


def is_sweep(path: str) -> bool:
    return os.path.isdir(path) and os.path.exists(os.path.join(path, "sweep.json"))


def load_result(path: str, run: Optional[str] = None) -> Result:
    """A Result from a JSON result file or one run of a sweep directory."""
    if os.path.isdir(path):
        if not is_sweep(path):
            raise MemtwinError(f"'{path}' is a directory without sweep.json: not a sweep written by memtwin sweep -o")
        return sweep_run_result(path, run)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise MemtwinError(f"cannot read result '{path}': {e.strerror or e}") from None
    try:
        return Result.from_json(text)
    except MemtwinError as e:
        raise MemtwinError(f"{path}: {e}") from None


def sweep_run_result(out: str, run: Optional[str] = None) -> Result:
    """One run of a sweep dataset as a Result (series, commands, reclaim passes)."""
    from .sweeps import read_table

    runs = read_table(out, "runs")
    if runs.height == 0:
        raise MemtwinError(f"sweep '{out}' has no finished run yet")
    if run is None:
        row = runs.row(0, named=True)
    else:
        match = [r for r in runs.iter_rows(named=True) if str(r["run_index"]) == run or r["run_key"].startswith(run)]
        if len(match) != 1:
            raise MemtwinError(
                f"--run '{run}': expected a run index (0 .. {runs.height - 1}) or a key prefix naming one run"
            )
        row = match[0]
    key = row["run_key"]
    prefix = [c for c in runs.columns if c.startswith("param.")] + ["run_key", "seed"]
    series = read_table(out, "series").filter(run_key=key).drop(prefix)
    commands = read_table(out, "commands").filter(run_key=key).drop(prefix)
    records = [{k: v for k, v in r.items() if v is not None} for r in commands.iter_rows(named=True)]
    return Result(
        transcript="",
        exit_status=int(row["exit_status"]),
        sim_seconds=float(row["sim_seconds"]),
        series={c: series[c].to_list() for c in series.columns},
        stopped=row["stopped"],
        records=records,
        reclaim={
            f"{kind}_ns": (row.get(f"reclaim_{kind}_ns") or [])
            for kind in ("kswapd", "direct", "split_page", "split_slab")
        },
        script=row["script"],
        machine=row["machine"],
        kernel_profile=row["kernel_profile"],
        seed=int(row["seed"]),
        settings=row["settings"].split() if row["settings"] else [],
        version=row["memtwin_version"],
    )


# --- helpers ------------------------------------------------------------------------------------


def _col(r: Result, name: str) -> List[float]:
    v = r.columns.get(name)
    return [float(x) for x in v] if v else [0.0] * len(r.columns.get("t_s", []))


def _rate(t: Sequence[float], v: Sequence[float], scale: float = 1.0) -> List[float]:
    """Per-second rate of a cumulative counter between samples (the first sample: 0)."""
    out = [0.0]
    for i in range(1, len(t)):
        dt = t[i] - t[i - 1]
        out.append(max(v[i] - v[i - 1], 0.0) * scale / dt if dt > 0 else 0.0)
    return out


def _title(r: Result) -> str:
    bits = [os.path.basename(r.script) or "script", r.machine, r.kernel_profile]
    if r.settings:
        bits.append(" ".join(r.settings))
    bits.append(f"seed {r.seed}")
    return " | ".join(b for b in bits if b)


def _spans(ax: Any, r: Result, label: bool) -> None:
    """Each command's span in simulated time, shaded in turn, its line number on top."""
    for i, c in enumerate(r.records):
        start, end = int(c["start_ns"]) / 1e9, int(c["end_ns"]) / 1e9  # type: ignore[call-overload]
        if end <= start:
            continue
        ax.axvspan(start, end, color="#000000", alpha=0.06 if i % 2 == 0 else 0.12, lw=0)
        if label:
            text = str(c["command"])
            text = text if len(text) <= 28 else text[:27] + "…"
            ax.text(
                (start + end) / 2,
                1.0,
                f"{c['line']}: {text}",
                transform=ax.get_xaxis_transform(),
                ha="center",
                va="bottom",
                fontsize=7,
                rotation=20,
                clip_on=False,
            )


def _empty(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=11, color="#555555")
    ax.set_xticks([])
    ax.set_yticks([])


# --- the pictures -------------------------------------------------------------------------------


def fig_vmstat(r: Result) -> Any:
    """vmstat's columns over time: memory (swpd, free, buff, cache), swap in/out, block I/O."""
    plt = _plt()
    t = _col(r, "t_s")
    fig, axes = plt.subplots(3, 1, figsize=(10, 8), sharex=True, constrained_layout=True)
    mib = 1 / 1024
    swpd = [(a - b) * mib for a, b in zip(_col(r, "mi.SwapTotal_kib"), _col(r, "mi.SwapFree_kib"))]
    cache = [(a + b) * mib for a, b in zip(_col(r, "mi.Cached_kib"), _col(r, "mi.SReclaimable_kib"))]
    ax = axes[0]
    for (name, ys), color in zip(
        (("swpd", swpd), ("free", [x * mib for x in _col(r, "mi.MemFree_kib")]), ("buff", [x * mib for x in _col(r, "mi.Buffers_kib")]), ("cache", cache)),
        PALETTE,
    ):
        ax.plot(t, ys, label=name, color=color, lw=1.4)
    ax.set_ylabel("MiB")
    ax.legend(loc="upper right", fontsize=8, ncol=4)
    _spans(ax, r, label=True)
    ax = axes[1]
    # vmstat's si/so: KiB swapped in/out per second (pages x 4 KiB).
    ax.plot(t, _rate(t, _col(r, "vm.pswpin_total"), 4), label="si", color=PALETTE[0], lw=1.4)
    ax.plot(t, _rate(t, _col(r, "vm.pswpout_total"), 4), label="so", color=PALETTE[3], lw=1.4)
    ax.set_ylabel("swap KiB/s")
    ax.legend(loc="upper right", fontsize=8)
    _spans(ax, r, label=False)
    ax = axes[2]
    # vmstat's bi/bo: KiB read from / written to block devices per second.
    ax.plot(t, _rate(t, _col(r, "vm.pgpgin_kib_total")), label="bi", color=PALETTE[2], lw=1.4)
    ax.plot(t, _rate(t, _col(r, "vm.pgpgout_kib_total")), label="bo", color=PALETTE[1], lw=1.4)
    ax.set_ylabel("block KiB/s")
    ax.set_xlabel("simulated time (s)")
    ax.legend(loc="upper right", fontsize=8)
    _spans(ax, r, label=False)
    fig.suptitle(f"vmstat — {_title(r)}", fontsize=10)
    return fig


def fig_meminfo(r: Result) -> Any:
    """Memory composition over time (stacked, MiB) and swap in use."""
    plt = _plt()
    t = _col(r, "t_s")
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(10, 7), sharex=True, gridspec_kw={"height_ratios": [3, 1]}, constrained_layout=True)
    mib = 1 / 1024
    parts = [
        ("free", "mi.MemFree_kib"),
        ("anon active", "mi.Active(anon)_kib"),
        ("anon inactive", "mi.Inactive(anon)_kib"),
        ("file active", "mi.Active(file)_kib"),
        ("file inactive", "mi.Inactive(file)_kib"),
        ("slab", "mi.Slab_kib"),
    ]
    ys = [[x * mib for x in _col(r, c)] for _, c in parts]
    total = [x * mib for x in _col(r, "mi.MemTotal_kib")]
    other = [max(tot - sum(col[i] for col in ys), 0.0) for i, tot in enumerate(total)]
    ax.stackplot(t, *ys, other, labels=[p for p, _ in parts] + ["other (kernel, page tables, ...)"], colors=PALETTE[: len(parts) + 1], alpha=0.85)
    # Shmem (tmpfs, shared anonymous memory) lives on the anon lists: drawn as a line.
    ax.plot(t, [x * mib for x in _col(r, "mi.Shmem_kib")], color="#000000", lw=1.2, ls="--", label="shmem (in the anon lists)")
    ax.set_ylabel("MiB")
    ax.set_ylim(0, max(total) * 1.02 if total and max(total) > 0 else 1)
    ax.legend(loc="upper left", fontsize=7, ncol=4)
    _spans(ax, r, label=True)
    swap = [(a - b) * mib for a, b in zip(_col(r, "mi.SwapTotal_kib"), _col(r, "mi.SwapFree_kib"))]
    ax2.fill_between(t, swap, color=PALETTE[3], alpha=0.7, label="swap used")
    ax2.plot(t, [x * mib for x in _col(r, "mi.SwapCached_kib")], color="#000000", lw=1, label="swap cached")
    ax2.set_ylabel("MiB")
    ax2.set_xlabel("simulated time (s)")
    ax2.legend(loc="upper left", fontsize=7)
    _spans(ax2, r, label=False)
    fig.suptitle(f"memory — {_title(r)}", fontsize=10)
    return fig


def fig_reclaim(r: Result) -> Any:
    """Histograms of reclaim pass latencies (kswapd and direct; split reclaim's page and slab
    reclaim when the run has them), log-spaced bins."""
    plt = _plt()
    kinds = ["kswapd", "direct"] + [k for k in ("split_page", "split_slab") if r.reclaim.get(f"{k}_ns")]
    if r.reclaim.get("split_page_ns") and not r.reclaim.get("direct_ns"):
        kinds.remove("direct")
    colors = {"kswapd": PALETTE[0], "direct": PALETTE[3], "split_page": PALETTE[1], "split_slab": PALETTE[2]}
    fig, axes = plt.subplots(1, len(kinds), figsize=(5 * len(kinds), 4), constrained_layout=True)
    for ax, kind in zip(axes, kinds):
        color = colors[kind]
        passes = [x / 1e3 for x in r.reclaim.get(f"{kind}_ns", []) if x > 0]
        if not passes:
            _empty(ax, f"no {kind} reclaim pass")
            ax.set_title(f"{kind} reclaim", fontsize=10)
            continue
        lo, hi = min(passes), max(passes)
        import math

        n = 30
        if hi > lo:
            a, b = math.log10(lo), math.log10(hi)
            bins = [10 ** (a + (b - a) * i / n) for i in range(n + 1)]
        else:
            bins = [lo * 0.9, hi * 1.1]
        ax.hist(passes, bins=bins, color=color, alpha=0.85)
        ax.set_xscale("log")
        s = sorted(passes)
        p50, p99 = s[len(s) // 2], s[min(len(s) - 1, int(len(s) * 0.99))]
        for v, ls, lab in ((p50, "--", "p50"), (p99, ":", "p99")):
            ax.axvline(v, color="#000000", ls=ls, lw=1, label=f"{lab} {v:,.0f} µs")
        ax.set_xlabel("pass duration (µs, simulated)")
        ax.set_ylabel("passes")
        ax.set_title(f"{kind} reclaim: {len(passes)} passes", fontsize=10)
        ax.legend(fontsize=8)
    fig.suptitle(f"reclaim latency — {_title(r)}", fontsize=10)
    return fig


def explain_parts(r: Result) -> Tuple[List[str], str]:
    """The parts to stack for each command: ``breakdown.<part>_ns`` when the records carry
    them; else CPU user, CPU system and the rest of the command's time (waiting)."""
    cols: List[str] = []
    for rec in r.records:
        for k in rec:
            if k.startswith("breakdown.") and k.endswith("_ns") and k not in cols:
                cols.append(k)
    if cols:
        return cols, "breakdown"
    return ["cpu_user_ns", "cpu_sys_ns", "waiting_ns"], "cpu"


def fig_explain(r: Result) -> Any:
    """Where each command's time went: one horizontal stacked bar per command."""
    plt = _plt()
    recs = [c for c in r.records if int(c.get("duration_ns", 0)) > 0]  # type: ignore[call-overload]
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.45 * max(len(recs), 1)), constrained_layout=True)
    if not recs:
        _empty(ax, "no command took simulated time")
        return fig
    parts, kind = explain_parts(r)
    labels = []
    left = [0.0] * len(recs)
    for j, part in enumerate(parts):
        vals = []
        for rec in recs:
            if part == "waiting_ns":
                v = int(rec["duration_ns"]) - int(rec.get("cpu_user_ns", 0)) - int(rec.get("cpu_sys_ns", 0))  # type: ignore[call-overload]
            else:
                v = rec.get(part) or 0
            vals.append(max(float(v), 0.0) / 1e9)  # type: ignore[arg-type]
        name = part[len("breakdown.") :] if part.startswith("breakdown.") else part
        ax.barh(range(len(recs)), vals, left=left, color=PALETTE[j % len(PALETTE)], label=name[: -len("_ns")] if name.endswith("_ns") else name)
        left = [a + b for a, b in zip(left, vals)]
    for i, rec in enumerate(recs):
        text = str(rec["command"])
        labels.append(f"{rec['line']}: {text if len(text) <= 40 else text[:39] + '…'}")
        ax.plot([int(rec["duration_ns"]) / 1e9], [i], marker="|", color="#000000", ms=14)  # type: ignore[call-overload]
    ax.set_yticks(range(len(recs)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("simulated seconds (| : the command's wall time)")
    ax.legend(loc="lower right", fontsize=8)
    note = "" if kind == "breakdown" else " (CPU only: this result has no per-command breakdown)"
    ax.set_title(f"where each command's time went{note}", fontsize=10)
    fig.suptitle(_title(r), fontsize=9)
    return fig


FIGURES = {"vmstat": fig_vmstat, "meminfo": fig_meminfo, "reclaim": fig_reclaim, "explain": fig_explain}


def figure(r: Result, what: str) -> Any:
    if what not in FIGURES:
        raise MemtwinError(f"--what '{what}': accepted: {', '.join(WHATS)}")
    return FIGURES[what](r)


def save(fig: Any, path: str, dpi: int = 100) -> None:
    """Write a figure whole or not at all (the core's writer); the format from the name
    (.png, .svg, .pdf)."""
    from . import _core

    fmt = os.path.splitext(path)[1].lstrip(".").lower() or "png"
    if fmt not in ("png", "svg", "pdf"):
        raise MemtwinError(f"-o '{path}': the picture's format comes from its name: .png, .svg or .pdf")
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi, metadata=_metadata(fmt))
    _plt().close(fig)
    _core.write_output(path, buf.getvalue())


def _metadata(fmt: str) -> Dict[str, Any]:
    # No creation dates: the same result gives the same bytes.
    if fmt == "png":
        return {"Software": None}
    if fmt == "svg":
        return {"Date": None}
    if fmt == "pdf":
        return {"CreationDate": None}
    return {}


def png_bytes(fig: Any, dpi: int = 80) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    _plt().close(fig)
    return buf.getvalue()


def plot(result: str, what: str, out: str, run: Optional[str] = None) -> None:
    """``memtwin plot``: one picture of a result file or of one run of a sweep."""
    save(figure(load_result(result, run), what), out)


__all__ = ["plot", "figure", "load_result", "WHATS"]
