"""The `memtwin` command (also `python -m memtwin`).

    memtwin run [SCRIPT] [--machine PRESET|FILE.toml] [--set KEY=VALUE ...] [--seed N]
                [--json FILE] [--csv FILE] [--quiet]
    memtwin presets

Exit status: the script's own exit status after `run` (0 when all went well), 2 for bad input
(scenario, machine, override, unreadable file, usage), 130 when interrupted. Bad input is
reported as one `memtwin: <message>` line on standard error, never as a traceback.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import tempfile
import threading
from typing import Callable, List, Optional, Sequence, TextIO, TypeVar

from . import (
    MemtwinError,
    Result,
    __version__,
    default_scenario,
    presets,
    read_scenario,
    resolve_machine,
)
from . import run as run_scenario

PROG = "memtwin"
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 70  # EX_SOFTWARE: a bug in memtwin, not in the input
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE

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
        "printed. The exit status is the script's own (0 when all went well); 2 means bad "
        "input.",
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
        help="write the counters as CSV, one row per tick, header t_s,vm.*,mi.* "
        "('-': standard output)",
    )
    p_run.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="do not print the transcript (implied when --json or --csv is '-')",
    )
    p_run.set_defaults(handler=cmd_run)

    p_presets = sub.add_parser(
        "presets",
        help="list the machine presets",
        description="List the machine presets that --machine accepts, with a description.",
    )
    p_presets.set_defaults(handler=cmd_presets)

    from . import calibrate, validate

    validate.add_parser(sub)
    calibrate.add_parser(sub)
    return parser


# --- output -----------------------------------------------------------------------------------


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path: str, write: Callable[[TextIO], None]) -> None:
    """Write a text file whole or not at all.

    The content goes to a temporary file in the same directory, which is flushed to disk and
    then renamed over `path`; on any failure the temporary file is removed and `path` is left
    as it was.
    """
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with open(fd, "w", encoding="utf-8", newline="") as f:
            try:
                mode = os.stat(path).st_mode & 0o7777
            except FileNotFoundError:
                mode = 0o666 & ~_umask()
            os.fchmod(f.fileno(), mode)  # mkstemp makes it 0600; give it a normal file's mode
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    # Make the rename itself durable; best effort (not every filesystem allows it).
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def _write_json(
    f: TextIO, result: Result, args: argparse.Namespace, script: str, machine: str
) -> None:
    doc = {
        "script": script,
        "machine": machine,
        "sets": args.sets,
        "seed": args.seed,
        "sim_seconds": result.sim_seconds,
        "exit_status": result.exit_status,
        "series": result.series,
    }
    json.dump(doc, f)
    f.write("\n")


def _write_csv(f: TextIO, result: Result) -> None:
    writer = csv.writer(f, lineterminator="\n")
    writer.writerow(result.series.keys())
    writer.writerows(zip(*result.series.values()))


def _check_writable(path: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise _BadInput(f"cannot write '{path}': No such file or directory")
    if os.path.isdir(path):
        raise _BadInput(f"cannot write '{path}': Is a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise _BadInput(f"cannot write '{path}': Permission denied")


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


def _interruptible(fn: Callable[[], T]) -> T:
    """Call `fn` (which releases the GIL while it simulates) in a worker thread, so that Ctrl-C
    reaches the main thread at once instead of after the whole simulation."""
    outcome: List[object] = []

    def work() -> None:
        try:
            outcome.append(("ok", fn()))
        except BaseException as e:  # re-raised in the calling thread
            outcome.append(("err", e))

    worker = threading.Thread(target=work, name="memtwin-run", daemon=True)
    worker.start()
    worker.join()
    kind, value = outcome[0]  # type: ignore[misc]
    if kind == "err":
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]


def cmd_run(args: argparse.Namespace) -> int:
    if args.json == "-" and args.csv == "-":
        raise _BadInput("only one of --json and --csv can write to standard output ('-')")
    # Fail before a possibly long simulation, not after it.
    for path in (args.json, args.csv):
        if path is not None and path != "-":
            _check_writable(path)
    text: Optional[str] = None
    if args.script is not None:
        script_name = args.script
        try:
            text = read_scenario(args.script)
        except OSError as e:
            raise _BadInput(f"cannot read scenario '{args.script}': {e.strerror or e}") from None
    else:
        # No script: the core runs its embedded default scenario on that scenario's machine.
        script_name, _ = default_scenario()

    result = _interruptible(
        lambda: run_scenario(
            text,
            path=args.script,
            machine=args.machine,
            set=args.sets,
            seed=args.seed,
        )
    )

    quiet = args.quiet or args.json == "-" or args.csv == "-"
    if not quiet:
        sys.stdout.write(result.transcript)
        sys.stdout.flush()
    if args.json is not None:
        machine = resolve_machine(text, args.machine)
        _emit(args.json, lambda f: _write_json(f, result, args, script_name, machine))
    if args.csv is not None:
        _emit(args.csv, lambda f: _write_csv(f, result))

    status = result.exit_status
    # A process exit status is 0..255; anything else would wrap (256 -> 0) and hide a failure.
    return status if 0 <= status <= 255 else 1


def cmd_presets(args: argparse.Namespace) -> int:
    rows = presets()
    width = max((len(name) for name, _ in rows), default=0)
    out = io.StringIO()
    for name, description in rows:
        out.write(f"{name:<{width}}  {description}".rstrip() + "\n")
    sys.stdout.write(out.getvalue())
    sys.stdout.flush()
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
