"""The `memtwin` command (also `python -m memtwin`).

    memtwin run [SCRIPT] [--machine PRESET|FILE.toml] [--set KEY=VALUE ...] [--seed N]
                [--json FILE] [--csv FILE] [--reclaim-csv FILE] [--quiet] [--max-sim-time T] [--max-wall T]
                [--max-events N] [--max-output SIZE]
    memtwin presets
    memtwin sweep SCRIPT --grid KEY=V1,V2 [--grid ...] [--seeds N] -o DIR [--jobs N] [--ray auto|ADDR]
    memtwin plot RESULT --what vmstat|meminfo|reclaim|explain -o FILE.png [--run INDEX|KEY]
    memtwin report RESULTS -o report.html

Exit status (see EXIT_STATUSES): the script's own exit status after `run` (0 when all went
well); memtwin's own: 2 bad input (scenario, machine, override, unreadable file, usage), 71 the
machine needs more host memory than is available, 124 a limit ended the run, 130 interrupted,
141 standard output closed, 70 internal error. Errors are one `memtwin: <message>` line on
standard error, never a traceback. The transcript streams to standard output as the
simulation makes it.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import threading
from typing import Any, Callable, List, Optional, Sequence, TextIO, TypeVar

from . import (
    DEFAULT_MAX_EVENTS,
    DEFAULT_MAX_OUTPUT,
    DEFAULT_MAX_SIM_TIME,
    DEFAULT_MAX_WALL,
    HostMemoryError,
    MemtwinError,
    Result,
    __version__,
    default_scenario,
    presets,
    read_scenario,
    resolve_machine,
)
from . import _core, explain
from . import results as _results
from . import run as run_scenario

PROG = "memtwin"
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 70  # EX_SOFTWARE: a bug in memtwin, not in the input
EXIT_HOST_MEMORY = 71  # EX_OSERR: the host cannot hold the simulated machine
EXIT_LIMIT = 124  # as timeout(1) when its limit is reached
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE

EXIT_STATUSES = f"""\
exit status:
  0..255  the script's own exit status (0 when all went well), as bash gives it
  {EXIT_BAD_INPUT}       bad input: scenario, machine, --set, option, unreadable or unwritable file
  {EXIT_INTERNAL}      internal error (a bug in memtwin)
  {EXIT_HOST_MEMORY}      the machine needs more host memory than is available (nothing was run)
  {EXIT_LIMIT}     a limit (--max-sim-time, --max-wall, --max-events, --max-output) ended the
          run; the output so far was printed and --json/--csv are written
  {EXIT_INTERRUPTED}     interrupted (Ctrl-C); the output so far was printed, no --json/--csv
  {EXIT_BROKEN_PIPE}     standard output was closed (memtwin run | head)
memtwin's own statuses can also be a script's; --json records both apart (exit_status,
memtwin_status, reason, limit)."""

T = TypeVar("T")


class _BadInput(Exception):
    """A problem with the user's input, already phrased for the `memtwin: ` line."""


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}: expected an integer 0 .. 2**64-1")
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"seed {text} is out of range: expected 0 .. 2**64-1")
    return value


_DURATION_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _duration(text: str) -> float:
    t = text.strip()
    unit = t[-1:] if t[-1:] in ("s", "m", "h", "d") else ""
    try:
        value = float(t[: len(t) - len(unit)])
    except ValueError:
        value = -1.0
    if not (value >= 0 and value != float("inf")):
        raise argparse.ArgumentTypeError(
            f"invalid duration {text!r}: expected seconds, or a number with s, m, h or d "
            "(0: no limit)"
        )
    return value * _DURATION_UNITS[unit]


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}: expected an integer >= 0 (0: no limit)")
    return value


def _size(text: str) -> int:
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = t[-1:] if t[-1:] in ("K", "M", "G", "T") else ""
    try:
        value = int(float(t[: len(t) - len(unit)]) * _SIZE_UNITS[unit])
    except (ValueError, OverflowError):
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"invalid size {text!r}: expected bytes, or a number with K, M, G or T (0: no limit)"
        )
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="A digital twin of the Linux memory subsystem: replay a shell-like scenario "
        "on a simulated machine and see what vmstat, free, top and iotop would have shown.",
        epilog="Run 'memtwin COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    default_name, _ = default_scenario()
    p_run = sub.add_parser(
        "run",
        help="replay a scenario and print what its commands printed",
        description="Replay a scenario on a simulated machine and print what its commands "
        "printed, as the simulation makes it. The run is bounded by the --max-* limits; "
        "reaching one ends it with the output so far kept.",
        epilog=EXIT_STATUSES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_run.add_argument(
        "script",
        nargs="?",
        metavar="SCRIPT",
        help=f"scenario file (default: the embedded {default_name} on its own machine)",
    )
    p_run.add_argument(
        "--machine",
        "-m",
        default="",
        metavar="PRESET|FILE.toml",
        help="machine preset (see 'memtwin presets') or machine TOML file "
        "(default: the scenario's '# machine:' line, else 'default')",
    )
    p_run.add_argument(
        "--set",
        "-s",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a machine field (ram=16G, cpus=4) or a sysctl (vm.swappiness=1); "
        "repeatable",
    )
    p_run.add_argument(
        "--seed",
        type=_seed,
        default=0,
        metavar="N",
        help="seed for every random choice; same seed, same output (default: 0)",
    )
    p_run.add_argument(
        "--json",
        metavar="FILE",
        help="write the run and every counter's series as JSON ('-': standard output)",
    )
    p_run.add_argument(
        "--csv",
        metavar="FILE",
        help="write the counters as CSV, one row per tick, header t_s,vm.*,mi.* with the "
        "units in the names (see docs/results.md) ('-': standard output)",
    )
    p_run.add_argument(
        "--reclaim-csv",
        metavar="FILE",
        help="write the reclaim invocations' latency per path (kswapd, direct, split_page, "
        "split_slab) as CSV: count, mean, p50, p99, max and the lock-wait part, in ns "
        "('-': standard output)",
    )
    p_run.add_argument(
        "--report",
        metavar="FILE.html",
        help="also write a self-contained HTML report of the run (pictures and commands; "
        "needs memtwin[sweep])",
    )
    p_run.add_argument(
        "--explain",
        action="store_true",
        help="after the transcript, print where each command's time went (CPU, waiting for "
        "a CPU, I/O, dirty throttling, reclaim, swap-in, ...) and the run's PSI totals",
    )
    p_run.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="do not print the transcript (implied when --json or --csv is '-')",
    )
    p_run.add_argument(
        "--max-sim-time",
        type=_duration,
        default=DEFAULT_MAX_SIM_TIME,
        metavar="T",
        help="stop after this much simulated time: seconds, or with s, m, h, d "
        f"(default: {DEFAULT_MAX_SIM_TIME / 86400:g}d; 0: no limit)",
    )
    p_run.add_argument(
        "--max-wall",
        type=_duration,
        default=DEFAULT_MAX_WALL,
        metavar="T",
        help=f"stop after this much wall-clock time (default: {DEFAULT_MAX_WALL / 3600:g}h; "
        "0: no limit)",
    )
    p_run.add_argument(
        "--max-events",
        type=_count,
        default=DEFAULT_MAX_EVENTS,
        metavar="N",
        help=f"stop after N kernel events (default: {DEFAULT_MAX_EVENTS}; 0: no limit)",
    )
    p_run.add_argument(
        "--max-output",
        type=_size,
        default=DEFAULT_MAX_OUTPUT,
        metavar="SIZE",
        help="stop when the commands have printed this much, to the terminal or into "
        f"redirected files: bytes, or with K, M, G (default: {DEFAULT_MAX_OUTPUT >> 20}M; "
        "0: no limit)",
    )
    p_run.set_defaults(handler=cmd_run)

    p_presets = sub.add_parser(
        "presets",
        help="list the machine presets",
        description="List the machine presets that --machine accepts, with a description.",
    )
    p_presets.set_defaults(handler=cmd_presets)
    _add_replay_parser(sub)
    _add_sweep_parsers(sub)

    from . import calibrate, validate

    validate.add_parser(sub)
    calibrate.add_parser(sub)
    return parser


# --- output -----------------------------------------------------------------------------------


def write_atomically(path: str, write: Callable[[TextIO], None]) -> None:
    """Write a result file whole or not at all.

    `write` produces the text in memory; nothing touches `path` if it fails. The file is then
    written by the core (`memtwin._core.write_output`): a regular or new file through a
    temporary file renamed over it (over a symlink's target, never over the link), a device,
    FIFO or /dev/fd/N in place; a directory is refused. Raises OSError.
    """
    buf = io.StringIO(newline="")
    write(buf)
    _core.write_output(path, buf.getvalue().encode("utf-8"))


def _memtwin_status(result: Result) -> int:
    """memtwin's exit status for a run that returned: a limit's, else the script's own (a
    process exit status is 0..255; anything else would wrap, 256 -> 0, and hide a failure)."""
    return result.memtwin_status


def _write_json(f: TextIO, result: Result) -> None:
    json.dump(result.to_dict(), f)
    f.write("\n")


def _write_csv(f: TextIO, result: Result) -> None:
    # The header names carry the units (t_s, *_pages, *_kib, *_total).
    writer = csv.writer(f, lineterminator="\n")
    writer.writerow(result.columns.keys())
    writer.writerows(zip(*result.columns.values()))


RECLAIM_CSV_COLUMNS = (
    "path", "count", "mean_ns", "p50_ns", "p99_ns", "max_ns", "lock_wait_mean_ns", "lock_wait_p99_ns", "lock_wait_max_ns"
)


def _write_reclaim_csv(f: TextIO, result: Result) -> None:
    # One row per reclaim path; empty cells for a path that never ran.
    writer = csv.writer(f, lineterminator="\n")
    writer.writerow(RECLAIM_CSV_COLUMNS)
    for path, row in result.reclaim_summary().items():
        cells = [path] + [row[c] for c in RECLAIM_CSV_COLUMNS[1:]]
        writer.writerow(["" if c is None else (f"{c:.1f}" if isinstance(c, float) else c) for c in cells])


def _check_writable(path: str) -> None:
    try:
        _core.check_output(path)
    except OSError as e:
        raise _BadInput(f"cannot write '{path}': {e.strerror or e}") from None


def _emit(path: str, write: Callable[[TextIO], None]) -> None:
    if path == "-":
        write(sys.stdout)
        sys.stdout.flush()
        return
    try:
        write_atomically(path, write)
    except OSError as e:
        raise _BadInput(f"cannot write '{path}': {e.strerror or e}") from None


# --- commands ---------------------------------------------------------------------------------


def _interruptible(fn: Callable[[], T], stop: Optional[threading.Event] = None) -> T:
    """Call `fn` (which releases the GIL while it simulates) in a worker thread, so that Ctrl-C
    reaches the main thread at once, even while a large machine boots. On Ctrl-C, `stop` is
    set (the output hook then stops the run, within 0.1 s, without printing more) and the
    worker gets a moment to finish the piece it is printing."""
    outcome: List[object] = []

    def work() -> None:
        try:
            outcome.append(("ok", fn()))
        except BaseException as e:  # re-raised in the calling thread
            outcome.append(("err", e))

    worker = threading.Thread(target=work, name="memtwin-run", daemon=True)
    worker.start()
    try:
        worker.join()
    except KeyboardInterrupt:
        if stop is not None:
            stop.set()
            worker.join(timeout=1.0)
        raise
    kind, value = outcome[0]  # type: ignore[misc]
    if kind == "err":
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]


def cmd_run(args: argparse.Namespace) -> int:
    outs = (args.json, args.csv, args.reclaim_csv)
    if sum(1 for o in outs if o == "-") > 1:
        raise _BadInput("only one of --json, --csv and --reclaim-csv can write to standard output ('-')")
    if args.explain and "-" in outs:
        raise _BadInput("--explain prints to standard output: write --json/--csv to a file instead of '-'")
    # Fail before a possibly long simulation, not after it.
    for path in outs:
        if path is not None and path != "-":
            _check_writable(path)
    if args.report is not None:
        _check_out(args.report)
        _optional(lambda: _results.need("matplotlib", "--report"))
    text: Optional[str] = None
    if args.script is not None:
        try:
            text = read_scenario(args.script)
        except OSError as e:
            raise _BadInput(f"cannot read scenario '{args.script}': {e.strerror or e}") from None
    # No script: the core runs its embedded default scenario on that scenario's machine.
    quiet = args.quiet or "-" in outs

    stop = threading.Event()

    def show(piece: str) -> None:
        if stop.is_set():
            raise KeyboardInterrupt  # Ctrl-C: stop the run, print nothing more
        sys.stdout.write(piece)
        sys.stdout.flush()

    try:
        result = _interruptible(
            lambda: run_scenario(
                text,
                path=args.script,
                machine=args.machine,
                set=args.sets,
                seed=args.seed,
                max_sim_time=args.max_sim_time,
                max_wall=args.max_wall,
                max_events=args.max_events,
                max_output=args.max_output,
                on_output=None if quiet else show,
            ),
            stop,
        )
    except HostMemoryError as e:
        sys.stderr.write(_error_line(str(e)))
        return EXIT_HOST_MEMORY

    if result.stopped is not None:
        sys.stderr.write(_error_line(result.stop_message))
    if args.explain:
        sys.stdout.write(explain.render(result.records, result.pressure_total_us, result.kthreads))
        sys.stdout.flush()
    if args.json is not None:
        _emit(args.json, lambda f: _write_json(f, result))
    if args.csv is not None:
        _emit(args.csv, lambda f: _write_csv(f, result))
    if args.reclaim_csv is not None:
        _emit(args.reclaim_csv, lambda f: _write_reclaim_csv(f, result))
    if args.report is not None:
        from .report import result_report

        page = _optional(lambda: result_report(result))
        _emit(args.report, lambda f: f.write(page))

    return _memtwin_status(result)


def cmd_presets(args: argparse.Namespace) -> int:
    rows = presets()
    width = max((len(name) for name, _ in rows), default=0)
    out = io.StringIO()
    for name, description in rows:
        out.write(f"{name:<{width}}  {description}".rstrip() + "\n")
    sys.stdout.write(out.getvalue())
    sys.stdout.flush()
    return 0


# --- replay: page-access traces, cache-simulator style ----------------------------------------


def _add_replay_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "replay",
        help="replay a page-access trace (cache-simulator style)",
        description="Replay a page-access trace through a cache policy (lru, fifo, clock, "
        "s3fifo: the same definitions as libCacheSim's) or through the kernel model "
        "(--policy kernel: each request reads one 4 KiB page of one file, object id = page "
        "index) and print the miss ratio, the throughput and, for the kernel, its "
        "/proc/vmstat counters.",
    )
    p.add_argument("trace", metavar="TRACE", help="the trace file")
    p.add_argument(
        "--policy",
        "-p",
        default="lru",
        metavar="kernel|lru|fifo|clock|s3fifo",
        help="the cache policy (default: lru)",
    )
    p.add_argument(
        "--format",
        "-f",
        metavar="csv|u64|oracle-general",
        help="csv: a header naming id (and optional size, time, op) or headerless id[,size]; "
        "u64: one integer id per line; oracle-general: libCacheSim's 24-byte binary records "
        "(default: from the file name: .csv, .txt/.u64, .oracleGeneral)",
    )
    p.add_argument(
        "--cache-size",
        "-c",
        metavar="N|SIZE",
        help="cache capacity: N 4 KiB pages or a size (4G). Required by the cache simulators; "
        "with --policy kernel it sets the RAM so that this much memory is free or page cache "
        "at boot (default: the machine's RAM decides; the idle system's anonymous memory may "
        "be swapped out, which gives the cache more: --set boot_anon=0 --set boot_file=0 "
        "leaves the replayed file alone)",
    )
    p.add_argument(
        "--machine",
        "-m",
        metavar="PRESET|FILE.toml",
        help="the kernel policy's machine (default: 'default')",
    )
    p.add_argument(
        "--set",
        "-s",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="kernel policy: override a machine field or sysctl; repeatable",
    )
    p.add_argument(
        "--readahead",
        choices=("on", "off"),
        help="kernel policy: off sets read_ahead_kb = 0 (one page per miss); on keeps the "
        "machine's (default)",
    )
    p.add_argument("--seed", type=_seed, default=0, metavar="N", help="kernel policy's seed")
    p.add_argument("--json", metavar="FILE", help="also write the figures as JSON ('-': stdout)")
    p.set_defaults(handler=cmd_replay)


def _replay_report(r: "ReplayResult", trace: str) -> str:
    out = io.StringIO()
    out.write(f"trace            {trace} ({r.format}, {r.requests} requests)\n")
    mib = r.cache_pages * 4096 / 2**20
    if r.policy == "kernel":
        k = r.kernel
        out.write(
            f"policy           kernel (readahead {'on' if k['readahead'] else 'off'}), "
            f"RAM {int(k['ram_bytes']) // 2**20} MiB, {r.cache_pages} pages ({mib:.1f} MiB) "
            "free or page cache at boot\n"
        )
    else:
        out.write(f"policy           {r.policy}, cache {r.cache_pages} pages ({mib:.1f} MiB)\n")
    out.write(f"misses           {r.misses}\n")
    out.write(f"miss ratio       {r.miss_ratio:.6f}\n")
    if r.byte_miss_ratio is not None:
        out.write(f"byte miss ratio  {r.byte_miss_ratio:.6f}\n")
    out.write(f"wall             {r.wall_s:.3f} s, {r.requests_per_s:,.0f} requests/s\n")
    if r.policy == "kernel":
        k = r.kernel
        out.write(f"simulated        {float(k['sim_seconds']):.3f} s\n")
        out.write(
            f"replayed file    {k['file_pages']} pages, at most {k['peak_cache_pages']} cached at once\n"
        )
        out.write("vmstat deltas\n")
        for name, value in dict(k["vmstat"]).items():  # type: ignore[call-overload]
            out.write(f"  {name:<26} {value}\n")
    return out.getvalue()


def cmd_replay(args: argparse.Namespace) -> int:
    from . import ReplayResult, replay

    if args.json is not None and args.json != "-":
        _check_writable(args.json)
    r: ReplayResult = _interruptible(
        lambda: replay(
            args.trace,
            policy=args.policy,
            format=args.format,
            cache_size=args.cache_size,
            machine=args.machine,
            set=args.sets,
            readahead=None if args.readahead is None else args.readahead == "on",
            seed=args.seed,
        )
    )
    if args.json != "-":
        sys.stdout.write(_replay_report(r, args.trace))
        sys.stdout.flush()
    if args.json is not None:
        doc = {"trace": args.trace, **{k: getattr(r, k) for k in r.__dataclass_fields__ if k != "kernel"}}
        doc.update(r.kernel)

        def write(f: TextIO) -> None:
            json.dump(doc, f)
            f.write("\n")

        _emit(args.json, write)
    return 0


# --- sweep, plot, report ---------------------------------------------------------------------


def _add_sweep_parsers(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "sweep",
        help="run a scenario over a grid of settings and seeds into a Parquet dataset",
        description="Run SCRIPT for every combination of the --grid values and each seed, on a "
        "local process pool (default) or on Ray, into one Parquet dataset under -o (runs/, "
        "commands/, series/; see docs/results.md). Each run is keyed by a hash of its "
        "parameters: running the same sweep again skips the runs already done, and a run whose "
        "worker died is run again.",
    )
    p.add_argument("script", metavar="SCRIPT", help="the scenario")
    p.add_argument(
        "--grid",
        "-g",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="a machine field (ram=4G,8G) or sysctl (vm.swappiness=0,60,100) and its values; "
        "repeatable: the sweep runs the product",
    )
    p.add_argument("--seeds", type=_positive, default=1, metavar="N", help="seeds 0 .. N-1 per point (default: 1)")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="the dataset's directory (resumed if it exists)")
    p.add_argument("--machine", "-m", default="", metavar="PRESET|FILE.toml", help="the machine (default: the script's own)")
    p.add_argument("--set", "-s", dest="sets", action="append", default=[], metavar="KEY=VALUE", help="a setting for every run; repeatable")
    p.add_argument("--jobs", "-j", type=_positive, default=None, metavar="N", help="worker processes of the local pool (default: the CPUs)")
    p.add_argument("--ray", metavar="auto|ADDRESS", help="run on Ray: 'auto' attaches to a cluster on this machine or starts a local one; or a cluster's address")
    p.add_argument("--max-sim-time", type=_duration, default=None, metavar="T", help="each run's simulated-time limit (as for run)")
    p.add_argument("--max-wall", type=_duration, default=None, metavar="T", help="each run's wall-time limit (as for run)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (there is none when standard error is not a terminal, or CI=true)")
    p.set_defaults(handler=cmd_sweep)

    p = sub.add_parser(
        "plot",
        help="draw a picture of a result (PNG, SVG or PDF)",
        description="Draw one picture of RESULT, a JSON result (memtwin run --json) or a sweep "
        "directory (one run of it: --run). vmstat: vmstat's columns over time with each "
        "command's span; meminfo: the memory's composition, stacked; reclaim: histograms of "
        "reclaim pass durations; explain: where each command's time went.",
    )
    p.add_argument("result", metavar="RESULT", help="a JSON result file or a sweep directory")
    p.add_argument("--what", "-w", required=True, choices=("vmstat", "meminfo", "reclaim", "explain"))
    p.add_argument("-o", "--out", required=True, metavar="FILE", help="the picture: .png, .svg or .pdf")
    p.add_argument("--run", metavar="INDEX|KEY", help="a sweep's run: its index or a prefix of its key (default: the first)")
    p.set_defaults(handler=cmd_plot)

    p = sub.add_parser(
        "report",
        help="write a self-contained HTML report of a result or a sweep",
        description="Write one HTML page (figures embedded, no network needed) for RESULTS: a "
        "sweep directory (each metric against each swept parameter, median and min..max over "
        "seeds) or a JSON result (its pictures and commands).",
    )
    p.add_argument("results", metavar="RESULTS", help="a sweep directory or a JSON result file")
    p.add_argument("-o", "--out", required=True, metavar="FILE.html")
    p.set_defaults(handler=cmd_report)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}: expected an integer >= 1")
    return value


def _optional(fn: Callable[[], T]) -> T:
    """Run `fn`; a missing optional dependency is bad input with the install hint."""
    try:
        return fn()
    except ImportError as e:
        raise _BadInput(str(e)) from None


def cmd_sweep(args: argparse.Namespace) -> int:
    from .sweeps import sweep

    try:
        text = read_scenario(args.script)
    except OSError as e:
        raise _BadInput(f"cannot read scenario '{args.script}': {e.strerror or e}") from None
    try:
        r = _sweep_with(sweep, text, args)
    except HostMemoryError as e:
        sys.stderr.write(_error_line(str(e)))
        return EXIT_HOST_MEMORY
    skipped = f", {r.done_before} already done" if r.done_before else ""
    retried = f", {r.retried} run again after a worker died" if r.retried else ""
    sys.stderr.write(f"{PROG}: sweep: {r.total} runs in {r.out} ({r.ran} ran on {r.engine}{skipped}{retried})\n")
    return 0


def _sweep_with(sweep: Callable[..., Any], text: str, args: argparse.Namespace) -> Any:
    return _optional(
        lambda: sweep(
            text,
            path=args.script,
            grid=args.grid,
            seeds=args.seeds,
            out=args.out,
            machine=args.machine,
            set=args.sets,
            jobs=args.jobs,
            ray=args.ray,
            progress=False if args.no_progress else None,
            max_sim_time=args.max_sim_time,
            max_wall=args.max_wall,
        )
    )


def _check_out(path: str) -> None:
    if path == "-":
        raise _BadInput("-o/--report '-': give a file name (pictures and pages are not written to standard output)")
    _check_writable(path)


def cmd_plot(args: argparse.Namespace) -> int:
    from .plot import plot

    _check_out(args.out)
    try:
        _optional(lambda: plot(args.result, args.what, args.out, run=args.run))
    except OSError as e:
        raise _BadInput(f"cannot write '{args.out}': {e.strerror or e}") from None
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import report

    _check_out(args.out)
    try:
        _optional(lambda: report(args.results, args.out))
    except OSError as e:
        raise _BadInput(f"cannot write '{args.out}': {e.strerror or e}") from None
    return 0


# --- entry point ------------------------------------------------------------------------------


def _error_line(message: str) -> str:
    message = message.strip()
    # Messages from the core may already carry the program name.
    if message.startswith(f"{PROG}: "):
        message = message[len(PROG) + 2 :]
    return f"{PROG}: {message}\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the `memtwin` command with `argv` (default: sys.argv[1:]); returns the exit status."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        return int(args.handler(args))
    except (_BadInput, MemtwinError) as e:
        sys.stderr.write(_error_line(str(e)))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _flush_quietly()
        os._exit(EXIT_INTERRUPTED)  # the simulation thread may still be running: do not wait
    except BrokenPipeError:
        # `memtwin run | head`: the reader has gone; stop quietly like other Unix tools.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except SystemExit:
        raise  # argparse: --help, --version and usage errors (status 2)
    except BaseException as e:
        # A bug in memtwin, or a Rust panic (pyo3's PanicException derives from BaseException):
        # still one line, not a traceback.
        sys.stderr.write(
            _error_line(
                f"internal error: {type(e).__name__}: {e} "
                "(this is a bug in memtwin; please report it with the scenario, machine and seed)"
            )
        )
        return EXIT_INTERNAL


def _flush_quietly() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def _silence_stdout() -> None:
    # Python flushes stdout again at exit; point it at /dev/null so that flush cannot fail.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())
