"""A run is safe for the host: result files never replace what their path names, a machine the
host cannot hold is refused, runs are bounded, output streams, Ctrl-C stops a run promptly.

Everything that writes does so in a temporary directory; device nodes are made there with
mknod (needs root; skipped otherwise), never taken from the host's /dev."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading

import pytest

import memtwin
from memtwin import _core
from memtwin.cli import EXIT_HOST_MEMORY, EXIT_INTERRUPTED, EXIT_LIMIT, write_atomically

from conftest import run_cli

TINY = "free -m\n"
LONG = "free -m\nvmstat 1 100000000\n"


def _scenario(tmp_path, text=TINY):
    path = tmp_path / "s.sh"
    path.write_text(text)
    return path


def _write(path, text="new\n"):
    write_atomically(str(path), lambda f: f.write(text))


# --- result files -----------------------------------------------------------------------------


def test_regular_file_is_replaced_whole(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")
    os.chmod(path, 0o640)
    before = os.stat(path).st_ino
    _write(path)
    assert path.read_text() == "new\n"
    assert os.stat(path).st_ino != before  # renamed over, not rewritten
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert os.listdir(tmp_path) == ["out.json"]


def test_missing_file_is_created(tmp_path):
    _write(tmp_path / "new.json")
    assert (tmp_path / "new.json").read_text() == "new\n"


def test_symlink_to_regular_file_replaces_the_target_not_the_link(tmp_path):
    target, link = tmp_path / "real.json", tmp_path / "link.json"
    target.write_text("old")
    link.symlink_to("real.json")
    _write(link)
    assert link.is_symlink() and os.readlink(link) == "real.json"
    assert target.read_text() == "new\n"


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "later.json")
    _write(link)
    assert link.is_symlink()
    assert (tmp_path / "later.json").read_text() == "new\n"


def test_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    _write(fifo, "through the pipe\n")
    reader.join(timeout=60)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def _null_device(tmp_path):
    path = tmp_path / "null"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs root")
    return path


def test_character_device_is_written_in_place(tmp_path):
    null = _null_device(tmp_path)
    _write(null)
    st = os.lstat(null)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)


def test_cli_json_to_a_null_device_keeps_the_device(tmp_path):
    null = _null_device(tmp_path)
    proc = run_cli("run", _scenario(tmp_path), "-q", "--json", null, "--csv", null)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["null", "s.sh"]


def test_dev_fd_of_a_pipe_is_written_in_place():
    r, w = os.pipe()
    try:
        _write(f"/dev/fd/{w}", "via the descriptor\n")
        os.close(w)
        w = -1
        assert os.read(r, 100) == b"via the descriptor\n"
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_cli_dev_stdout_goes_to_the_file_stdout_is(tmp_path):
    out = tmp_path / "out.csv"
    with open(out, "wb") as f:
        proc = subprocess.run(
            [sys.executable, "-m", "memtwin", "run", str(_scenario(tmp_path)), "-q", "--csv",
             "/dev/stdout"],
            stdout=f, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=600,
        )
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().startswith("t_s,")
    assert sorted(os.listdir(tmp_path)) == ["out.csv", "s.sh"]


def test_directory_is_refused_with_one_line(tmp_path):
    with pytest.raises(IsADirectoryError):
        _core.write_output(str(tmp_path), b"x")
    proc = run_cli("run", _scenario(tmp_path), "--json", tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == f"memtwin: cannot write '{tmp_path}': Is a directory\n"


def test_a_failing_writer_leaves_the_old_file(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")

    def broken(f):
        f.write("half")
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        write_atomically(str(path), broken)
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.json"]


# --- host memory ------------------------------------------------------------------------------


def test_a_machine_the_host_cannot_hold_is_refused(tmp_path):
    proc = run_cli("run", _scenario(tmp_path), "--set", "ram=16T")
    if proc.returncode == 0:
        pytest.skip("this host has room for a 16T machine")
    assert proc.returncode == EXIT_HOST_MEMORY, proc.stderr
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("memtwin: machine 'default' (ram=16T) needs about ")
    assert "of host memory to simulate, but the host has " in line
    with pytest.raises(memtwin.HostMemoryError):
        memtwin.run(TINY, set=["ram=16T"])


# --- limits and streaming ---------------------------------------------------------------------


def test_a_limit_ends_the_run_keeping_output_and_json(tmp_path):
    out = tmp_path / "r.json"
    proc = run_cli("run", _scenario(tmp_path, LONG), "--max-sim-time", "3", "--json", out)
    assert proc.returncode == EXIT_LIMIT, proc.stderr
    assert proc.stdout.startswith("# free -m\n")
    assert "# vmstat 1 100000000\n" in proc.stdout
    assert proc.stderr == (
        "memtwin: simulated-time limit of 3 s reached at 3.000 s of simulated time; "
        "stopped (--max-sim-time)\n"
    )
    doc = json.loads(out.read_text())
    assert doc["exit_status"] is None
    assert (doc["memtwin_status"], doc["reason"], doc["limit"]) == (124, "limit", "max_sim_time")
    assert doc["series"]["t_s"][-1] == 3.0


def test_json_records_the_script_status_and_memtwins(tmp_path):
    out = tmp_path / "r.json"
    proc = run_cli("run", _scenario(tmp_path, "free -m\nfalse\n"), "-q", "--json", out)
    assert proc.returncode == 1
    doc = json.loads(out.read_text())
    assert (doc["exit_status"], doc["memtwin_status"], doc["reason"], doc["limit"]) == (
        1, 1, "completed", None)


def test_api_limits():
    r = memtwin.run(LONG, set=["ram=1G"], max_output=2000)
    assert r.stopped == "max_output"
    assert "--max-output" in r.stop_message
    assert 2000 < len(r.transcript) < 3000
    r = memtwin.run(LONG, set=["ram=1G"], max_events=500)
    assert r.stopped == "max_events"
    r = memtwin.run("sleep 5\n", set=["ram=1G"], max_sim_time=5)
    assert r.stopped is None
    with pytest.raises(memtwin.MemtwinError):
        memtwin.run(TINY, max_events=-1)


def test_help_documents_the_exit_statuses():
    proc = run_cli("run", "--help")
    for needle in ("--max-sim-time", "--max-wall", "--max-events", "--max-output",
                   " 71 ", " 124 ", " 130 ", " 70 ", " 2 "):
        assert needle in proc.stdout.replace("\n", " "), needle


def test_on_output_streams_the_transcript_in_order():
    pieces = []
    r = memtwin.run("free -m\nsleep 2\nvmstat 1 2\nfree -m\n", set=["ram=1G"],
                    on_output=pieces.append)
    assert "".join(pieces) == r.transcript
    assert len([p for p in pieces if p]) >= 3
    assert pieces[0].startswith("# free -m\n") and "vmstat" not in pieces[0]


def test_ctrl_c_stops_the_api_promptly_with_keyboard_interrupt():
    pieces = []

    def on_output(text):
        pieces.append(text)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C right after the first command

    # max_wall bounds the run should the Ctrl-C be lost (conftest.py makes sure it is not).
    with pytest.raises(KeyboardInterrupt):
        memtwin.run(LONG, set=["ram=1G"], max_sim_time=0, max_output=0, max_wall=60, on_output=on_output)
    assert len(pieces) == 1 and pieces[0].startswith("# free -m\n")


def test_an_exception_in_on_output_stops_the_run():
    def on_output(text):
        raise BrokenPipeError("reader gone")

    with pytest.raises(BrokenPipeError):
        memtwin.run(LONG, set=["ram=1G"], max_sim_time=0, max_output=0, on_output=on_output)


def test_cli_ctrl_c_exits_130_with_the_transcript_so_far(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "memtwin", "run", str(_scenario(tmp_path, LONG)),
         "--max-sim-time", "0", "--max-output", "0", "--max-wall", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )
    try:
        # Streamed while the simulation goes on: free's output, then vmstat's header.
        assert proc.stdout.readline() == b"# free -m\n"
        while not proc.stdout.readline().startswith(b"# vmstat"):
            pass
        proc.send_signal(signal.SIGINT)
        rest = proc.stdout.read()
        err = proc.stderr.read()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert b"Traceback" not in err
    assert rest.startswith(b"procs ")  # vmstat's output so far
