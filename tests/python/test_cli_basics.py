"""The CLI's surface: help, version, presets, and errors that do not need a simulation."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import memtwin
from conftest import assert_bad_input, run_cli


def test_help_lists_the_subcommands():
    proc = run_cli("--help")
    assert proc.returncode == 0, proc.stderr
    assert "usage: memtwin" in proc.stdout
    assert "run" in proc.stdout and "presets" in proc.stdout


def test_every_subcommand_has_help():
    proc = run_cli("run", "--help")
    assert proc.returncode == 0, proc.stderr
    for option in ("SCRIPT", "--machine", "--set", "--seed", "--json", "--csv", "--quiet"):
        assert option in proc.stdout, option
    proc = run_cli("presets", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "usage: memtwin presets" in proc.stdout


def test_version():
    proc = run_cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"memtwin {memtwin.__version__}"


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "memtwin"
    assert script.exists(), f"no console script next to {sys.executable}"
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"memtwin {memtwin.__version__}"


def test_no_subcommand_is_a_usage_error():
    proc = run_cli()
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "usage: memtwin" in proc.stderr


def test_presets_lists_default_and_seed_000():
    proc = run_cli("presets")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    names = [line.split()[0] for line in lines if line.strip()]
    assert "default" in names, proc.stdout
    assert "seed-000" in names, proc.stdout
    # Descriptions start in one column.
    starts = {len(line) - len(line[len(line.split()[0]) :].lstrip()) for line in lines}
    assert len(starts) == 1, proc.stdout


def test_presets_api_matches_cli():
    names = [name for name, _ in memtwin.presets()]
    proc = run_cli("presets")
    assert [line.split()[0] for line in proc.stdout.splitlines()] == names


def test_missing_scenario_file(tmp_path):
    missing = tmp_path / "no-such-scenario.sh"
    proc = run_cli("run", missing)
    line = assert_bad_input(proc, "cannot read scenario", str(missing), "No such file or directory")
    assert line == f"memtwin: cannot read scenario '{missing}': No such file or directory"
    assert proc.stdout == ""


def test_scenario_that_is_a_directory(tmp_path):
    proc = run_cli("run", tmp_path)
    assert_bad_input(proc, "cannot read scenario", str(tmp_path))


def test_scenario_that_is_not_utf8(tmp_path):
    script = tmp_path / "binary.sh"
    script.write_bytes(b"sleep 1\n\xff\xfe\x00garbage\n")
    proc = run_cli("run", script)
    assert_bad_input(proc, str(script), "UTF-8")


def test_json_into_missing_directory_fails_before_running(tmp_path):
    target = tmp_path / "nowhere" / "out.json"
    proc = run_cli("run", "--json", target)
    assert_bad_input(proc, "cannot write", str(target))
    assert proc.stdout == ""  # nothing ran


def test_json_and_csv_cannot_both_go_to_stdout():
    proc = run_cli("run", "--json", "-", "--csv", "-")
    assert_bad_input(proc, "standard output")


def test_bad_seed_is_a_usage_error():
    for seed in ("-1", "abc", str(2**64)):
        proc = run_cli("run", "--seed", seed)
        assert proc.returncode == 2, (seed, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert "seed" in proc.stderr


def test_unknown_option_is_a_usage_error():
    proc = run_cli("run", "--no-such-option")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "unrecognized arguments: --no-such-option" in proc.stderr


def test_ctrl_c_exits_130_without_traceback(tmp_path):
    # The simulation runs with the GIL released, in a worker thread; a stand-in that sleeps the
    # same way shows that Ctrl-C ends the command at once, with status 130 and no traceback.
    driver = tmp_path / "driver.py"
    driver.write_text(
        textwrap.dedent(
            """
            import sys, time
            import memtwin.cli as cli

            def slow_run(*args, **kwargs):
                print("started", flush=True)
                time.sleep(60)

            cli.run_scenario = slow_run
            sys.exit(cli.main(["run"]))
            """
        )
    )
    proc = subprocess.Popen(
        [sys.executable, str(driver)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "started"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err


def test_python_dash_m_and_cli_main_agree(tmp_path, capsys):
    from memtwin.cli import main

    assert main(["presets"]) == 0
    in_process = capsys.readouterr().out
    assert run_cli("presets").stdout == in_process


def test_main_reports_bad_input_as_one_line(tmp_path, capsys):
    from memtwin.cli import main

    missing = os.path.join(str(tmp_path), "missing.sh")
    assert main(["run", missing]) == 2
    err = capsys.readouterr().err
    assert err == f"memtwin: cannot read scenario '{missing}': No such file or directory\n"
