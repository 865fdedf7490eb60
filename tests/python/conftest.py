"""Helpers for the CLI and API tests: the CLI always runs in a fresh interpreter, exactly as a
user would start it (`python -m memtwin ...`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Union

import pytest

REPO = Path(__file__).resolve().parents[2]

# The Ctrl-C tests interrupt this process and the CLIs it starts. A runner started in the
# background without job control (`cmd &` in a script) inherits SIGINT ignored, which
# Python then keeps and passes on to every child: give this process Python's own handler,
# so that the signal reaches it and exec resets it to the default in the children.
signal.signal(signal.SIGINT, signal.default_int_handler)

# A simulation of the small default scenario takes seconds; this only guards against a hang.
TIMEOUT_S = 600


def run_cli(
    *args: Union[str, os.PathLike],
    cwd: Optional[Union[str, os.PathLike]] = None,
    binary: bool = False,
) -> subprocess.CompletedProcess:
    cmd: List[str] = [sys.executable, "-m", "memtwin", *map(str, args)]
    return subprocess.run(
        cmd,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=TIMEOUT_S,
        **({} if binary else {"text": True, "encoding": "utf-8", "errors": "replace"}),
    )


def assert_bad_input(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit status 2, one `memtwin: ...` line on stderr, no traceback; returns the line."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("memtwin: "), line
    assert not line.startswith("memtwin: memtwin:"), line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(scope="session")
def ray_cluster():
    """One local Ray cluster for the whole session (started once: it takes seconds); yields
    its address, which `memtwin sweep --ray ADDRESS` attaches to."""
    ray = pytest.importorskip("ray", reason="Ray is in the 'sweep' extra")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
