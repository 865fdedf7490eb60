"""`memtwin run`: results files, bad input found by the core, determinism.

These tests run the simulator but do not depend on its numbers.
"""

from __future__ import annotations

import csv
import json
import os

from conftest import assert_bad_input, run_cli

REQUIRED_COLUMNS = ("t_s", "vm.pgpgin_kib_total", "mi.MemFree_kib", "vm.nr_free_pages")

# A short scenario, so that each test checks the CLI and not how far the simulator has come.
SMALL = "# machine: seed-000\nsleep 3\nfree\n"


def write_scenario(tmp_path, text, name="scenario.sh"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_default_scenario_runs_and_prints_its_transcript():
    proc = run_cli("run")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.strip() != ""


def test_quiet_prints_nothing(tmp_path):
    proc = run_cli("run", "--quiet", write_scenario(tmp_path, SMALL))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


def test_unknown_preset(tmp_path):
    proc = run_cli("run", write_scenario(tmp_path, SMALL), "--machine", "no-such-preset")
    assert_bad_input(proc, "no-such-preset")


def test_missing_machine_file(tmp_path):
    machine = tmp_path / "missing-machine.toml"
    proc = run_cli("run", write_scenario(tmp_path, SMALL), "--machine", machine)
    assert_bad_input(proc, str(machine))


def test_bad_set_value(tmp_path):
    proc = run_cli("run", write_scenario(tmp_path, SMALL), "--set", "ram=12QB")
    assert_bad_input(proc, "12QB")


def test_set_without_equals_sign(tmp_path):
    proc = run_cli("run", write_scenario(tmp_path, SMALL), "--set", "vm.swappiness")
    assert_bad_input(proc, "vm.swappiness")


def test_bad_scenario_names_file_and_line(tmp_path):
    script = write_scenario(tmp_path, "# a scenario with a typo\nsleep 1\nfrobnicate --now\n")
    proc = run_cli("run", script)
    assert_bad_input(proc, f"{script}:3", "frobnicate")
    assert proc.stdout == ""


def test_bad_scenario_relative_path_is_named_as_given(tmp_path):
    write_scenario(tmp_path, "sleep 1\nfrobnicate\n", name="typo.sh")
    proc = run_cli("run", "typo.sh", cwd=tmp_path)
    assert_bad_input(proc, "typo.sh:2")


def test_json_and_csv_are_written_and_parse(tmp_path):
    json_path = tmp_path / "out.json"
    csv_path = tmp_path / "out.csv"
    script = write_scenario(tmp_path, SMALL)
    proc = run_cli("run", script, "--seed", "7", "--json", json_path, "--csv", csv_path)
    assert proc.returncode == 0, proc.stderr

    with open(json_path, encoding="utf-8") as f:
        doc = json.load(f)
    for key in ("machine", "seed", "sim_seconds", "exit_status", "series"):
        assert key in doc, key
    assert doc["seed"] == 7
    assert doc["machine"] == "seed-000"  # the scenario's own `# machine:` line
    assert doc["script"] == str(script)
    assert doc["exit_status"] == 0
    assert isinstance(doc["sim_seconds"], (int, float)) and doc["sim_seconds"] >= 0
    series = doc["series"]
    assert list(series)[0] == "t_s"
    for column in REQUIRED_COLUMNS:
        assert column in series, column
    ticks = len(series["t_s"])
    assert ticks >= 3  # at least one sample per simulated second
    assert all(len(values) == ticks for values in series.values())
    assert all(isinstance(v, int) and v >= 0 for v in series["vm.pgpgin_kib_total"])
    assert series["t_s"] == sorted(series["t_s"])

    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    assert header[0] == "t_s"
    assert header == list(series)
    for column in REQUIRED_COLUMNS:
        assert column in header, column
    assert len(body) == ticks
    assert all(len(row) == len(header) for row in body)
    pgpgin = header.index("vm.pgpgin_kib_total")
    assert [int(row[pgpgin]) for row in body] == series["vm.pgpgin_kib_total"]
    assert [float(row[0]) for row in body] == series["t_s"]


def test_json_to_stdout_implies_quiet(tmp_path):
    proc = run_cli("run", write_scenario(tmp_path, SMALL), "--json", "-")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert "vm.pgpgin_kib_total" in doc["series"]


def test_csv_to_stdout_implies_quiet(tmp_path):
    proc = run_cli("run", write_scenario(tmp_path, SMALL), "--csv", "-")
    assert proc.returncode == 0, proc.stderr
    header = proc.stdout.splitlines()[0].split(",")
    assert header[0] == "t_s" and "mi.MemFree_kib" in header


def test_results_are_written_atomically_with_no_temp_files_left(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    json_path, csv_path = out / "run.json", out / "run.csv"
    json_path.write_text("old contents")
    os.chmod(json_path, 0o640)
    script = write_scenario(tmp_path, SMALL)
    proc = run_cli("run", script, "--quiet", "--json", json_path, "--csv", csv_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(out)) == ["run.csv", "run.json"]
    json.loads(json_path.read_text())  # replaced whole
    assert os.stat(json_path).st_mode & 0o777 == 0o640  # an existing file keeps its mode
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(csv_path).st_mode & 0o777 == 0o666 & ~umask  # a new file gets a normal one


def test_machine_override_is_recorded(tmp_path):
    proc = run_cli("run", write_scenario(tmp_path, SMALL), "--machine", "default", "--json", "-")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["machine"] == "default"


def test_same_seed_same_bytes(tmp_path):
    # The default scenario: dd, sync, vmstat and iotop in the background, so real work.
    outputs = []
    for i in range(2):
        json_path = tmp_path / f"run{i}.json"
        csv_path = tmp_path / f"run{i}.csv"
        proc = run_cli("run", "--seed", "42", "--json", json_path, "--csv", csv_path, binary=True)
        assert proc.returncode == 0, proc.stderr
        outputs.append((proc.stdout, json_path.read_bytes(), csv_path.read_bytes()))
    assert outputs[0][0] == outputs[1][0], "transcripts differ"
    assert outputs[0][1] == outputs[1][1], "JSON differs"
    assert outputs[0][2] == outputs[1][2], "CSV differs"
