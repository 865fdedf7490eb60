"""The CLI's plumbing around the core, with the core replaced by a stand-in (in process).

What reaches `memtwin._core.run`, what comes back out as transcript, exit status and files.
The tests in test_cli_run.py do the same end to end with the real simulator.
"""

from __future__ import annotations

import csv
import json
import os

import pytest

import memtwin
from memtwin import MemtwinError
from memtwin.cli import main


class FakeCore:
    def __init__(self, exit_status=0, error=None):
        self.calls = []
        self.exit_status = exit_status
        self.error = error

    def __call__(self, script_text=None, script_path=None, machine="", sets=(), seed=0,
                 max_sim_time=None, max_wall=None, max_events=None, max_output=None,
                 on_output=None):
        self.calls.append(
            dict(script_text=script_text, script_path=script_path, machine=machine,
                 sets=list(sets), seed=seed)
        )
        self.limits = dict(max_sim_time=max_sim_time, max_wall=max_wall,
                           max_events=max_events, max_output=max_output)
        if self.error:
            raise MemtwinError(self.error)
        transcript = "line one\nline two\n"
        if on_output is not None:  # streamed in two pieces, as the core does
            on_output("line one\n")
            on_output("line two\n")
        return {
            "transcript": transcript,
            "exit_status": self.exit_status,
            "sim_seconds": 1.5,
            "t_s": [0.0, 1.0],
            "columns": [("vm.pgpgin", [0, 8]), ("mi.MemFree", [1000, 900])],
            "stopped": None,
            "stop_message": "",
            "commands": [],
            "machine_name": "fake",
            "kernel_profile": "linux-6.x",
            "machine_toml": "name = 'fake'\n",
            "reclaim_kswapd_ns": [5, 7],
            "reclaim_direct_ns": [],
            "pressure_total_us": None,
            "kthreads": [],
        }


@pytest.fixture
def fake(monkeypatch):
    core = FakeCore()
    monkeypatch.setattr(memtwin._core, "run", core)
    return core


def test_no_script_asks_the_core_for_its_default_scenario(fake, capsys):
    assert main(["run"]) == 0
    # Neither text nor path: the core's embedded default scenario, on its own machine.
    assert fake.calls == [
        dict(script_text=None, script_path=None, machine="", sets=[], seed=0)
    ]
    assert capsys.readouterr().out == "line one\nline two\n"


def test_limits_are_passed_with_their_defaults(fake):
    assert main(["run", "-q", "--max-wall", "2m", "--max-output", "1M"]) == 0
    assert fake.limits == dict(max_sim_time=memtwin.DEFAULT_MAX_SIM_TIME, max_wall=120.0,
                               max_events=memtwin.DEFAULT_MAX_EVENTS, max_output=1 << 20)


def test_script_machine_sets_and_seed_are_passed(fake, tmp_path, capsys):
    script = tmp_path / "s.sh"
    script.write_text("sleep 1\n")
    rc = main(["run", str(script), "--machine", "laptop", "--set", "ram=1G",
               "-s", "vm.swappiness=1", "--seed", "016"])
    assert rc == 0
    assert fake.calls == [
        dict(script_text="sleep 1\n", script_path=str(script), machine="laptop",
             sets=["ram=1G", "vm.swappiness=1"], seed=16)
    ]


def test_api_sysctl_then_set(fake):
    result = memtwin.run("sleep 1\n", sysctl={"vm.swappiness": 1}, set=["ram=2G"], seed=5)
    assert fake.calls[0]["sets"] == ["vm.swappiness=1", "ram=2G"]
    assert fake.calls[0]["script_path"] is None
    # The columns carry their units: pgpgin counts KiB since boot, MemFree is in kB.
    assert result.columns == {"t_s": [0.0, 1.0], "vm.pgpgin_kib_total": [0, 8], "mi.MemFree_kib": [1000, 900]}
    assert result.settings == ["vm.swappiness=1", "ram=2G"] and result.seed == 5
    # A core that names only some reclaim paths: the others are empty.
    assert result.reclaim == {
        "kswapd_ns": [5, 7], "direct_ns": [], "split_page_ns": [], "split_slab_ns": [],
        "kswapd_lock_wait_ns": [], "direct_lock_wait_ns": [], "split_page_lock_wait_ns": [], "split_slab_lock_wait_ns": [],
    }
    assert result.sim_seconds == 1.5 and result.exit_status == 0


@pytest.mark.parametrize("status,expected", [(0, 0), (1, 1), (3, 3), (137, 137), (256, 1), (-1, 1)])
def test_exit_status_is_the_scripts(monkeypatch, capsys, status, expected):
    monkeypatch.setattr(memtwin._core, "run", FakeCore(exit_status=status))
    assert main(["run", "--quiet"]) == expected
    assert capsys.readouterr().out == ""


def test_core_error_is_one_line_without_doubled_prefix(monkeypatch, capsys):
    monkeypatch.setattr(memtwin._core, "run", FakeCore(error="memtwin: x.sh:3: unknown command"))
    assert main(["run"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "memtwin: x.sh:3: unknown command\n"
    assert captured.out == ""


def test_internal_error_is_one_line(monkeypatch, capsys):
    def boom(**kwargs):
        raise RuntimeError("oops")

    monkeypatch.setattr(memtwin._core, "run", boom)
    assert main(["run"]) == 70
    err = capsys.readouterr().err
    assert err.startswith("memtwin: internal error: RuntimeError: oops")
    assert len(err.splitlines()) == 1


def test_files(fake, tmp_path, capsys):
    j, c = tmp_path / "r.json", tmp_path / "r.csv"
    assert main(["run", "-q", "--seed", "9", "--json", str(j), "--csv", str(c)]) == 0
    doc = json.loads(j.read_text())
    assert doc == {
        "schema_version": 1,
        "memtwin_version": memtwin.__version__,
        "script": memtwin.default_scenario()[0],
        "script_text": memtwin.default_scenario()[1],
        "machine": memtwin.resolve_machine(),
        "kernel_profile": "linux-6.x",
        "machine_toml": "name = 'fake'\n",
        "settings": [],
        "seed": 9,
        "sim_seconds": 1.5,
        "exit_status": 0,
        "memtwin_status": 0,
        "reason": "completed",
        "limit": None,
        "message": "",
        "transcript": "line one\nline two\n",
        "commands": [],
        "reclaim": {
            "kswapd_ns": [5, 7], "direct_ns": [], "split_page_ns": [], "split_slab_ns": [],
            "kswapd_lock_wait_ns": [], "direct_lock_wait_ns": [], "split_page_lock_wait_ns": [],
            "split_slab_lock_wait_ns": [],
        },
        "reclaim_summary": {
            "kswapd": {"count": 2, "mean_ns": 6.0, "p50_ns": 5, "p99_ns": 7, "max_ns": 7,
                       "lock_wait_mean_ns": None, "lock_wait_p99_ns": None, "lock_wait_max_ns": None},
            **{
                p: {"count": 0, "mean_ns": None, "p50_ns": None, "p99_ns": None, "max_ns": None,
                    "lock_wait_mean_ns": None, "lock_wait_p99_ns": None, "lock_wait_max_ns": None}
                for p in ("direct", "split_page", "split_slab")
            },
        },
        "pressure_total_us": None,
        "kthreads": [],
        "series": {"t_s": [0.0, 1.0], "vm.pgpgin_kib_total": [0, 8], "mi.MemFree_kib": [1000, 900]},
    }
    assert c.read_text() == "t_s,vm.pgpgin_kib_total,mi.MemFree_kib\n0.0,0,1000\n1.0,8,900\n"
    assert sorted(os.listdir(tmp_path)) == ["r.csv", "r.json"]
    with open(c, newline="") as f:
        assert next(csv.reader(f)) == ["t_s", "vm.pgpgin_kib_total", "mi.MemFree_kib"]
    assert memtwin.Result.from_json(j.read_text()).to_dict() == doc


def test_csv_to_stdout(fake, capsys):
    assert main(["run", "--csv", "-"]) == 0
    assert capsys.readouterr().out == "t_s,vm.pgpgin_kib_total,mi.MemFree_kib\n0.0,0,1000\n1.0,8,900\n"


def test_reclaim_csv(fake, tmp_path, capsys):
    out = tmp_path / "reclaim.csv"
    assert main(["run", "-q", "--reclaim-csv", str(out)]) == 0
    assert out.read_text() == (
        "path,count,mean_ns,p50_ns,p99_ns,max_ns,lock_wait_mean_ns,lock_wait_p99_ns,lock_wait_max_ns\n"
        "kswapd,2,6.0,5,7,7,,,\n"
        "direct,0,,,,,,,\n"
        "split_page,0,,,,,,,\n"
        "split_slab,0,,,,,,,\n"
    )
    # One output on standard output at most.
    assert main(["run", "--csv", "-", "--reclaim-csv", "-"]) == 2
    assert "only one of --json, --csv and --reclaim-csv" in capsys.readouterr().err


def test_latency_summary_matches_the_cores_nearest_rank():
    s = memtwin.latency_summary(list(range(1, 101)))
    assert s == {"count": 100, "mean_ns": 50.5, "p50_ns": 50, "p99_ns": 99, "max_ns": 100}
    assert memtwin.latency_summary([])["mean_ns"] is None
