"""Structured results: Result's frames, JSON schema, unit names and carried extra fields."""

from __future__ import annotations

import json

import pytest

import memtwin
from memtwin import MemtwinError, Result
from memtwin import results as R

pl = pytest.importorskip("polars", reason="frames need the 'sweep' extra")
pytest.importorskip("pyarrow", reason="frames need the 'sweep' extra")

SCRIPT = "# machine: default\ndd if=/dev/zero of=f bs=1M count=64 oflag=direct\ncat f > /dev/null\nsleep 1\n"


@pytest.fixture(scope="module")
def result():
    return memtwin.run(SCRIPT, set={"ram": "512M"}, seed=3)


def test_series_frame_has_units_in_every_column_name(result):
    s = result.series
    assert isinstance(s, pl.DataFrame)
    assert s.columns[0] == "t_s" and s.height == len(result.columns["t_s"]) >= 2
    units = ("_pages", "_kib", "_total", "_kib_total")
    unitless = {"vm.workingset_nodes"}  # a count of tree nodes
    for c in s.columns[1:]:
        assert c.endswith(units) or c in unitless, c
    # MemTotal in KiB is what 512M of RAM less the kernel's reserve leaves.
    total = s["mi.MemTotal_kib"][0]
    assert 400 * 1024 < total < 512 * 1024
    assert s["vm.nr_free_pages"][0] * 4 <= s["mi.MemFree_kib"][0] + 4
    # Cumulative counters never go down.
    assert s["vm.pgpgout_kib_total"].diff().drop_nulls().min() >= 0
    assert result.frame().shape == s.to_pandas().shape


def test_unit_names():
    assert R.series_column("vm.nr_free_pages") == "vm.nr_free_pages"
    assert R.series_column("vm.nr_dirty") == "vm.nr_dirty_pages"
    assert R.series_column("vm.nr_dirtied") == "vm.nr_dirtied_total"
    assert R.series_column("vm.pgfault") == "vm.pgfault_total"
    assert R.series_column("vm.pgpgin") == "vm.pgpgin_kib_total"
    assert R.series_column("vm.nr_kernel_stack") == "vm.nr_kernel_stack_kib"
    assert R.series_column("mi.Active(anon)") == "mi.Active(anon)_kib"
    assert R.series_column("t_s") == "t_s"


def test_commands_frame(result):
    c = result.commands
    assert c.columns[: len(R.COMMAND_COLUMNS)] == list(R.COMMAND_COLUMNS)
    assert c["command"].to_list() == [
        "dd if=/dev/zero of=f bs=1M count=64 oflag=direct",
        "cat f > /dev/null",
        "sleep 1",
    ]
    dd, cat, sleep = c.to_dicts()
    # O_DIRECT writes every byte to the disk; the file is then read back.
    assert dd["write_bytes"] == 64 << 20 and dd["read_bytes"] == 0
    assert dd["write_bytes_per_s"] == pytest.approx(dd["write_bytes"] / (dd["duration_ns"] / 1e9))
    assert dd["cpu_sys_ns"] > 0 and dd["storage_written_kib_total"] >= 64 * 1024
    assert cat["read_bytes"] == 64 << 20
    assert sleep["duration_ns"] == 1_000_000_000 and sleep["read_bytes"] == 0
    assert dd["exit_status"] == 0 and "copied" in dd["output"]
    assert c.to_pandas().shape == c.shape


def test_json_schema_round_trips(result):
    doc = json.loads(result.to_json())
    assert doc["schema_version"] == R.SCHEMA_VERSION == 1
    assert doc["memtwin_version"] == memtwin.__version__
    assert doc["machine"] == "default" and doc["kernel_profile"] == "linux-6.x"
    assert 'name = "default"' in doc["machine_toml"]
    assert doc["settings"] == ["ram=512M"] and doc["seed"] == 3
    assert [c["command"] for c in doc["commands"]] == result.commands["command"].to_list()
    paths = ("kswapd", "direct", "split_page", "split_slab")
    assert set(doc["reclaim"]) == {f"{p}_ns" for p in paths} | {f"{p}_lock_wait_ns" for p in paths}
    assert list(doc["reclaim_summary"]) == list(paths)
    for p in paths:
        assert doc["reclaim_summary"][p]["count"] == len(doc["reclaim"][f"{p}_ns"])
        assert len(doc["reclaim"][f"{p}_lock_wait_ns"]) == len(doc["reclaim"][f"{p}_ns"])
    back = Result.from_json(result.to_json())
    assert back == result
    assert back.series.equals(result.series)


def test_from_json_refuses_other_documents():
    with pytest.raises(MemtwinError, match="not a memtwin JSON result"):
        Result.from_json("{}")
    with pytest.raises(MemtwinError, match="newer"):
        Result.from_json(json.dumps({"schema_version": 99, "series": {}}))


def test_a_breakdown_from_the_core_is_carried_into_the_frames():
    """The core may add a per-command `breakdown` mapping of `<part>_ns` times (and other
    fields): they become `breakdown.<part>_ns` columns, null where a command lacks one."""
    raw = {
        "line": 1, "source": "cp a b", "background": False, "start_ns": 0, "end_ns": 2_000_000_000,
        "exit_status": 0, "output": "", "vmstat_start": {"pgfault": 5}, "vmstat_end": {"pgfault": 9},
        "utime_ns": 10, "stime_ns": 20, "read_bytes": 4096, "write_bytes": 0,
        "breakdown": {"cpu_user_ns": 10, "io_read_wait_ns": 1_500_000_000, "writeback_throttle_ns": 7},
        "psi_some_avg10": 1.5,
    }
    plain = dict(raw, line=2, source="sync")
    del plain["breakdown"], plain["psi_some_avg10"]
    recs = [R.command_record(0, raw), R.command_record(1, plain)]
    r = Result("", 0, 2.0, {"t_s": [0.0]}, records=recs)
    c = r.commands
    assert c["breakdown.io_read_wait_ns"].to_list() == [1_500_000_000, None]
    assert c["psi_some_avg10"].to_list() == [1.5, None]
    assert c["faults_total"].to_list() == [4, 4]
    assert R.breakdown_parts(c.columns) == ["cpu_user", "io_read_wait", "writeback_throttle"]


def test_missing_dependency_names_the_extra():
    with pytest.raises(ImportError, match=r"pip install 'memtwin\[sweep\]'"):
        R.need("no_such_module_memtwin", "a test")


def test_explain_plot_stacks_whichever_breakdown_parts_exist():
    pytest.importorskip("matplotlib")
    from memtwin import plot

    def rec(i, parts):
        raw = {"line": i + 1, "source": f"cmd{i}", "background": False, "start_ns": i * 10**9,
               "end_ns": (i + 1) * 10**9, "exit_status": 0, "utime_ns": 1, "stime_ns": 2}
        if parts is not None:
            raw["breakdown"] = parts
        return R.command_record(i, raw)

    with_parts = Result("", 0, 2.0, {"t_s": [0.0]}, records=[
        rec(0, {"cpu_user_ns": 10**8, "direct_reclaim_ns": 5 * 10**8}),
        rec(1, {"swap_in_ns": 9 * 10**8}),
    ])
    fig = plot.figure(with_parts, "explain")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["cpu_user", "direct_reclaim", "swap_in"]
    without = Result("", 0, 2.0, {"t_s": [0.0]}, records=[rec(0, None)])
    fig = plot.figure(without, "explain")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["cpu_user", "cpu_sys", "waiting"]
    assert "no per-command breakdown" in fig.axes[0].get_title()


def test_series_carry_the_eras_names_and_the_runs_table_reads_every_era():
    from memtwin import sweeps

    script = "# machine: default\ndd if=/dev/zero of=f bs=1M count=8\nsync\n"
    old = memtwin.run(script, set={"ram": "512M", "kernel": "linux-2.6.39"}, seed=1)
    cols = old.columns
    assert "vm.pgsteal_dma32_total" in cols and "vm.kswapd_steal_total" in cols and "vm.allocstall_total" in cols
    assert "vm.pgsteal_kswapd_total" not in cols and "vm.allocstall_normal_total" not in cols
    summary = sweeps._summary(old)
    steal = sum(cols[f"vm.pgsteal_{z}_total"][-1] for z in ("dma", "dma32", "normal", "movable"))
    assert summary["pgsteal_kswapd_total"] == cols["vm.kswapd_steal_total"][-1]
    assert summary["pgsteal_kswapd_total"] + summary["pgsteal_direct_total"] == steal
    assert summary["allocstall_normal_total"] == cols["vm.allocstall_total"][-1]
    new = memtwin.run(script, set={"ram": "512M"}, seed=1)
    assert "vm.allocstall_movable_total" in new.columns and "vm.swpout_zero_total" in new.columns
    assert sweeps._summary(new)["allocstall_normal_total"] == new.columns["vm.allocstall_movable_total"][-1]
    two4 = memtwin.run(script, set={"ram": "512M", "kernel": "linux-2.4"}, seed=1)
    vm = sorted(c for c in two4.columns if c.startswith("vm."))
    assert vm == ["vm.pgpgin_kib_total", "vm.pgpgout_kib_total", "vm.pswpin_total", "vm.pswpout_total"]
    assert two4.columns["vm.pgpgout_kib_total"][-1] >= 8 * 1024


def test_command_records_read_every_eras_counters():
    """A command's reclaim deltas come from the era's own /proc/vmstat fields; a counter the
    era lacks is null, not 0."""
    script = "# machine: default\ndd if=/dev/zero of=f bs=1M count=768\nsync\n"
    old = memtwin.run(script, set={"ram": "512M", "kernel": "linux-2.6.39"}, seed=1)
    dd = old.records[0]
    cols = old.columns
    scanned = sum(cols[f"vm.pgscan_kswapd_{z}_total"][-1] for z in ("dma", "dma32", "normal", "movable"))
    assert dd["pgscan_kswapd_total"] > 0 and dd["pgscan_kswapd_total"] <= scanned
    assert dd["pgsteal_kswapd_total"] is not None and dd["pgsteal_kswapd_total"] > 0
    assert dd["workingset_refault_file_total"] is None and dd["oom_kills_total"] is None
    assert dd["storage_written_kib_total"] > 0
    two4 = memtwin.run(script, set={"ram": "512M", "kernel": "linux-2.4"}, seed=1)
    dd = two4.records[0]
    assert dd["pgscan_kswapd_total"] is None and dd["allocstall_total"] is None
    assert dd["storage_written_kib_total"] > 0
    new = memtwin.run(script, set={"ram": "512M"}, seed=1)
    dd = new.records[0]
    assert dd["pgscan_kswapd_total"] > 0 and dd["workingset_refault_file_total"] == 0 and dd["oom_kills_total"] == 0
