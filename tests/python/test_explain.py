"""`memtwin run --explain` and the per-command records behind it: each command's wall time is
split into parts (delay accounting of its tasks) that sum to it, and the run's PSI totals."""

from __future__ import annotations

import re

import memtwin
from conftest import REPO, assert_bad_input, run_cli

SEED000 = REPO / "scenarios" / "seed-000-vmstat.sh"
DD = "dd if=/dev/zero of=test bs=1M count=512"

PART_FIELDS = {
    "cpu_user_ns", "cpu_sys_ns", "cpu_sys_reclaim_ns", "cpu_sys_compaction_ns", "cpu_sys_zram_ns",
    "cpu_sys_copy_ns", "cpu_sys_lock_spin_ns", "run_delay_ns", "blkio_ns", "dirty_throttle_ns",
    "reclaim_wait_ns", "swapin_ns", "thrashing_ns", "lock_wait_ns", "memcg_high_ns", "sleep_ns",
    "shell_ns",
}


def _table(stdout: str, source: str) -> list:
    """(label, ms, pct) rows of the first --explain table for `source`."""
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if re.fullmatch(rf"line \d+: {re.escape(source)}", l))
    rows = []
    for line in lines[start + 1 :]:
        m = re.fullmatch(r"\s+(.*?)\s+(\d+\.\d{3})\s+(\d+\.\d)", line)
        if not m:
            break
        rows.append((m.group(1), float(m.group(2)), float(m.group(3))))
    return rows


def test_explain_attributes_seed000_dd_to_parts_summing_to_its_wall_time():
    proc = run_cli("run", SEED000, "--explain")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    # The transcript comes first, then the tables.
    assert proc.stdout.index("records out") < proc.stdout.index("--- where the time went")
    rows = _table(proc.stdout, DD)
    assert rows[0][0] == "wall time" and rows[0][2] == 100.0, rows
    wall = rows[0][1]
    parts = rows[1:]
    assert len(parts) >= 3, rows
    # The article's ~1.8 s; the printed parts (rounded to µs) add up to it.
    assert 1200 < wall < 2500, rows
    assert abs(sum(ms for _, ms, _ in parts) - wall) <= 0.001 * len(parts), rows
    assert abs(sum(p for _, _, p in parts) - 100.0) <= 0.1 * len(parts), rows
    labels = {label: ms for label, ms, _ in parts}
    # A buffered write on a machine with free memory: copies, then the dirty limit's pauses.
    assert labels.get("dirty throttling (balance_dirty_pages)", 0) > 0.4 * wall, rows
    assert labels.get("cpu sys: copying or zeroing data", 0) > 0, rows
    assert "swap-in wait" not in labels and "reclaim throttling / waits" not in labels, rows
    # The run's PSI: the writes waited on I/O.
    m = re.search(r"^  io\s+some\s+(\d+)\s+full\s+(\d+)$", proc.stdout, re.M)
    assert m and int(m.group(1)) > 0, proc.stdout[-400:]


def test_records_carry_the_breakdown_and_it_sums_exactly():
    r = memtwin.run(path=SEED000)
    assert r.records, "one record per command"
    for c in r.records:
        # The records flatten the core's breakdown mapping as breakdown.<part> (results.py).
        b = {k[len("breakdown."):]: v for k, v in c.items() if k.startswith("breakdown.")}
        assert set(b) == PART_FIELDS | {"wall_ns"}, sorted(b)
        assert sum(b[k] for k in PART_FIELDS) == b["wall_ns"], (c["command"], b)
        assert b["wall_ns"] == c["job_end_ns"] - c["start_ns"]
        if not c["background"]:
            assert b["wall_ns"] == c["end_ns"] - c["start_ns"]
        for key in ("tasks", "cpu_user_ns", "cpu_sys_ns", "rchar", "wchar", "read_bytes",
                    "write_bytes", "min_flt", "maj_flt", "oom_kills"):
            assert isinstance(c[key], int) and c[key] >= 0, (key, c[key])
        assert isinstance(c["throughput_bytes_per_s"], float)
    dd = next(c for c in r.records if c["command"] == DD)
    assert dd["wchar"] == 512 << 20
    assert 150e6 < dd["throughput_bytes_per_s"] < 500e6
    assert set(r.pressure_total_us) == {"io_some", "io_full", "memory_some", "memory_full", "cpu_some", "cpu_full"}
    assert r.pressure_total_us["io_some"] >= r.pressure_total_us["io_full"] > 0


def test_no_psi_before_4_20(tmp_path):
    script = tmp_path / "p.sh"
    script.write_text("cat /proc/pressure/memory\n")
    r = memtwin.run(path=script, machine="seed-000", set=["kernel=linux-2.6.39"])
    assert "cat: /proc/pressure/memory: No such file or directory" in r.transcript
    assert r.pressure_total_us is None
    proc = run_cli("run", script, "-m", "seed-000", "--set", "kernel=linux-2.6.39", "--explain")
    assert proc.returncode == 1, proc.stderr
    assert "predates PSI" in proc.stdout


def test_explain_refuses_sharing_standard_output(tmp_path):
    script = tmp_path / "s.sh"
    script.write_text("sleep 1\n")
    assert_bad_input(run_cli("run", script, "--explain", "--json", "-"), "--explain")


def test_kernel_threads_time_is_reported_by_name():
    # Seed 000's buffered writes are written back by the disk's flusher (an unbound kworker
    # on 6.x), not by dd: its block I/O wait is in the kernel threads' records.
    r = memtwin.run(path=SEED000)
    names = [t["comm"] for t in r.kthreads]
    assert "kswapd0" in names, names
    for t in r.kthreads:
        b = t["breakdown"]
        assert set(b) == PART_FIELDS | {"wall_ns"}, sorted(b)
        assert sum(b[k] for k in PART_FIELDS) == b["wall_ns"], t
        assert t["threads"] >= 1
    flusher = next(t for t in r.kthreads if t["comm"].startswith("kworker/u"))
    assert flusher["breakdown"]["blkio_ns"] > 1e9, flusher
    # The JSON carries them and reads them back.
    assert memtwin.Result.from_json(r.to_json()).kthreads == r.kthreads
    # --explain prints a table for each thread that did more than sleep: the flusher, not
    # the idle kswapd.
    proc = run_cli("run", SEED000, "--explain")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout[proc.stdout.index("--- kernel threads"):]
    assert re.search(rf"^{re.escape(flusher['comm'])}\n  thread time\s+\d+\.\d{{3}}\s+100\.0$", out, re.M), out
    assert re.search(r"^    block I/O wait\s+\d+\.\d{3}", out, re.M), out
    assert not re.search(r"^kswapd0$", out, re.M), out
