"""`memtwin validate` and `memtwin calibrate`: verdicts, refusals, real runs on this host in a
memory cgroup (root), and that every exit path, SIGINT and SIGTERM included, restores the host.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtwin import hostrun, validate
from memtwin.hostrun import Refused
from memtwin.validate import DIRECTION, OK, WRONG, check_real, parse_script, verdict_count, verdict_time

from conftest import REPO, run_cli

SCENARIOS = REPO / "validation" / "scenarios"
MACHINE = REPO / "validation" / "machine-1g.toml"


def _host_can_validate() -> str:
    """Empty when this host can run validate for real, else why not."""
    if os.geteuid() != 0:
        return "not root"
    try:
        hostrun.find_memory_hierarchy()
    except Refused as e:
        return str(e)
    return ""


WHY_NOT = _host_can_validate()
needs_cgroup = pytest.mark.skipif(bool(WHY_NOT), reason=f"cannot validate on this host: {WHY_NOT}")


def _leftovers() -> list:
    """Cgroups, swap files and temp dirs validate would leave behind."""
    left = []
    for _, at, fstype, opts in hostrun.mounts():
        if fstype in ("cgroup", "cgroup2") and os.path.isdir(at):
            left += [os.path.join(at, n) for n in os.listdir(at) if n.startswith("memtwin-validate-")]
    left += [line for line in hostrun.read_text("/proc/swaps").splitlines() if "memtwin-validate-" in line]
    return left


# --- verdicts ----------------------------------------------------------------------------------


def test_count_verdicts():
    assert verdict_count(65536, 65558) == OK
    assert verdict_count(0, 200) == OK  # under the 1 MiB noise floor
    assert verdict_count(100000, 60000) == DIRECTION  # both grew, 40% apart
    assert verdict_count(-30000, -65000) == DIRECTION
    assert verdict_count(65536, 2) == WRONG  # one moved, the other did not
    assert verdict_count(5000, -5000) == WRONG
    assert verdict_count(0, 11000, validate.HOST_SLACK_KB) == OK  # host-wide KiB counters
    assert verdict_count(0, 20000, validate.HOST_SLACK_KB) == WRONG


def test_time_verdicts():
    assert verdict_time(0.01, 0.09) == OK  # both under the floor (process start-up)
    assert verdict_time(1.0, 1.4) == OK
    assert verdict_time(1.0, 3.0) == DIRECTION
    assert verdict_time(0.4, 2.6) == WRONG
    assert verdict_time(0.0, 1.0) == WRONG


def test_compare_marks_each_figure():
    rows = validate.compare({"time_s": 1.0, "pswpout": 0, "d_file_pages": 65536},
                            {"time_s": 1.2, "pswpout": 9000, "d_file_pages": 65000})
    got = {r["figure"]: r["verdict"] for r in rows}
    assert got == {"time_s": OK, "pswpout": WRONG, "d_file_pages": OK}


def test_dd_summary_is_parsed():
    out = "256+0 records in\n256+0 records out\n268435456 bytes (268 MB, 256 MiB) copied, 0.5 s, 537 MB/s\n"
    assert validate.dd_figures(out) == {"dd_seconds": 0.5, "dd_MBps": 268435456 / 0.5 / 1e6}
    assert validate.dd_figures("nothing") == {}


def test_fio_reports_are_parsed():
    data = REPO / "tests" / "data" / "fio"
    f = validate.fio_figures((data / "libaio-buffered-randread.txt").read_text())
    assert f == {"fio_read_iops": 30700.0, "fio_read_slat_us": 31.24, "fio_read_clat_us": pytest.approx(228.03319),
                 "fio_disk_reads": 57778.0, "fio_disk_writes": 0.0}
    # Two jobs without group_reporting: their IOPS add up; the first job's latencies.
    f = validate.fio_figures((data / "randrw-numjobs2.txt").read_text())
    assert f["fio_read_iops"] == 8422 + 8387 and f["fio_write_iops"] == 8440 + 8526
    assert "fio_read_slat_us" not in f and f["fio_disk_writes"] == 3088
    f = validate.fio_figures((data / "io_uring-buffered-randwrite.txt").read_text())
    assert f["fio_write_iops"] == 130000.0 and f["fio_write_slat_us"] == pytest.approx(1.58404)
    assert validate.fio_figures("no report") == {}
    rows = validate.compare({"fio_read_iops": 30000.0, "fio_read_clat_us": 100.0, "fio_disk_reads": 60000},
                            {"fio_read_iops": 31000.0, "fio_read_clat_us": 500.0, "fio_disk_reads": 100})
    got = {r["figure"]: r["verdict"] for r in rows}
    assert got == {"fio_read_iops": OK, "fio_read_clat_us": WRONG, "fio_disk_reads": WRONG}


# --- what can run for real ---------------------------------------------------------------------


def test_parse_script_items():
    items = parse_script("# machine: x\ntime dd if=/dev/zero of=f bs=1M count=4\nvmstat 1 3 &\n"
                         "echo 3 > /proc/sys/vm/drop_caches\nwait\ncat f > /dev/null 2>&1\n", "s.sh")
    assert [i.words[0] for i in items] == ["dd", "vmstat", "echo", "wait", "cat"]
    assert items[0].timed and items[1].background
    assert items[2].redirects == [(1, ">", "/proc/sys/vm/drop_caches")]
    assert items[4].redirects == [(1, ">", "/dev/null"), (2, ">&", "1")]
    check_real(items, "s.sh")


@pytest.mark.parametrize(
    "line, needle",
    [
        ("crash", "'crash' cannot be run for real"),
        ("reboot", "'reboot' cannot be run for real"),
        ("mount -t tmpfs -o size=1G tmpfs mnt", "'mount' cannot be run for real"),
        ("bonnie++ -d . -s 64", "'bonnie++' cannot be run for real"),
        ("swapoff -a", "'swapoff' cannot be run for real"),
        ("dd if=/dev/vda of=/dev/null bs=1M count=1", "only relative paths and /dev/zero"),
        ("dd if=/dev/zero of=/dev/sda bs=1M count=1", "only relative paths and /dev/null"),
        ("dd if=/dev/zero of=/etc/x bs=1M count=1", "dd of=/etc/x"),
        ("cat /etc/passwd", "outside the working directory"),
        ("rm ../x", "outside the working directory"),
        ("echo hi > /etc/motd", "outside the working directory"),
        ("echo 1 > /proc/sys/kernel/sysrq", "only 'echo VALUE > /proc/sys/vm/KNOB'"),
        ("sysctl -w kernel.panic=1", "only vm.* knobs"),
        ("rm -rf d", "'rm -r' cannot be validated"),
        ("free -m &", "'free &' cannot be validated"),
        ("fio --name=t --size=1m --filename=/dev/vda", "fio --filename=/dev/vda"),
        ("fio --name=t --size=1m --directory=/tmp", "outside the working directory"),
        ("fio /etc/job.fio", "outside the working directory"),
        ("fio --name=t --size=1m --output=/etc/x", "reads fio's report from its standard output"),
    ],
)
def test_commands_that_cannot_run_for_real_are_refused(line, needle):
    with pytest.raises(Refused) as e:
        check_real(parse_script(f"true\n{line}\n", "s.sh"), "s.sh")
    assert str(e.value).startswith("s.sh:2: ")
    assert needle in str(e.value)


@pytest.mark.parametrize(
    "text", ["dd if=/dev/zero of=f bs=1M count=1 | cat\n", "for i in 1 2; do sync; done\n",
             "sync; sync\n", "sync && sync\n", "cat < f\n", "echo $(date)\n", "dd \\\n"])
def test_shell_forms_are_refused(text):
    with pytest.raises(Refused) as e:
        parse_script(text, "s.sh")
    assert str(e.value).startswith("s.sh:1: ")


def test_refusal_is_one_line_with_status_3(tmp_path):
    script = tmp_path / "s.sh"
    script.write_text("dd if=/dev/zero of=f bs=1M count=1\ncrash\n")
    proc = run_cli("validate", script, "--machine", MACHINE)
    assert proc.returncode == validate.EXIT_REFUSED, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert f"{script}:2: 'crash' cannot be run for real" in proc.stderr
    assert "it can run: dd, cat" in proc.stderr


def test_machine_larger_than_the_host_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the size check comes after the root check")
    script = tmp_path / "s.sh"
    script.write_text("free -m\n")
    host_gib = hostrun.meminfo()["MemTotal"] >> 30
    proc = run_cli("validate", script, "--machine", MACHINE, "--set", f"ram={host_gib + 2}G")
    assert proc.returncode == validate.EXIT_REFUSED, proc.stderr
    assert "does not fit in this host's available memory" in proc.stderr
    assert not _leftovers()


def test_not_root_is_refused(monkeypatch, capsys):
    from memtwin.cli import main

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    rc = main(["validate", str(SCENARIOS / "dd-write-reread.sh"), "--machine", str(MACHINE)])
    err = capsys.readouterr().err
    assert rc == validate.EXIT_REFUSED, err
    assert err == "memtwin: cannot validate: validate needs root (it creates a memory cgroup and a swap file)\n"
    assert not _leftovers()


# --- real runs -----------------------------------------------------------------------------------


def _validate(tmp_path: Path, name: str, *extra: str) -> dict:
    out = tmp_path / f"{name}.json"
    swaps_before = hostrun.read_text("/proc/swaps")
    proc = run_cli("validate", SCENARIOS / f"{name}.sh", "--machine", MACHINE, "--json", out, *extra)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not _leftovers()
    assert hostrun.read_text("/proc/swaps") == swaps_before
    rep = json.loads(out.read_text())
    assert rep["host"]["kernel"] == os.uname().release
    assert rep["cgroup"]["limit_bytes"] == rep["twin_machine"]["MemTotal"]
    assert len(rep["commands"]) == len(rep["twin_raw"]["commands"]) == len(rep["real_raw"][0])
    assert sum(rep["summary"].values()) > 0
    assert "verdicts:" in proc.stdout
    return rep


def _figure(rep: dict, i: int, name: str) -> dict:
    return {r["figure"]: r for r in rep["commands"][i]["figures"]}[name]


@needs_cgroup
def test_validate_dd_write_reread(tmp_path):
    rep = _validate(tmp_path, "dd-write-reread")
    dd = rep["commands"][0]
    assert "268435456 bytes" in dd["twin"]["output"] and "268435456 bytes" in dd["real"][0]["output"]
    # The write landed in the cgroup's own page cache: the real command ran inside it.
    assert _figure(rep, 0, "d_file_pages")["real"] >= 60000
    assert "Mem:" in rep["commands"][3]["real"][0]["output"]


@needs_cgroup
def test_validate_cold_warm_read(tmp_path):
    rep = _validate(tmp_path, "cold-warm-read")
    # The cold read went to the disk on the real side (the host's pgpgin counts it).
    assert _figure(rep, 3, "pgpgin_kb")["real"] >= 200 * 1024
    assert "dropped the whole host's clean page cache" in " ".join(rep["by_construction"])
    # The warm read found the file cached in the cgroup: no disk reads of that size.
    assert _figure(rep, 4, "pgpgin_kb")["real"] < 64 * 1024


@needs_cgroup
def test_validate_anon_pushes_cache_swaps_under_the_limit(tmp_path):
    rep = _validate(tmp_path, "anon-pushes-cache")
    # 600 MiB of cache + 700 MiB of anon in a 976 MiB cgroup with swap: the real side swapped
    # to the temporary swap file and evicted most of the cache.
    overall = {r["figure"]: r for r in rep["overall"]}
    if overall["pswpout"]["real"] == 0:
        # The host kernel may take all it needs from the file (6.x's cache_trim_mode when
        # the inactive file list is plenty), e.g. when a DAMON reclaimer or another tenant
        # already thinned the cache: one more run.
        rep = _validate(tmp_path, "anon-pushes-cache")
        overall = {r["figure"]: r for r in rep["overall"]}
    assert rep["cgroup"]["swap_bytes"] > 0, "the temporary swap file was on"
    if overall["pswpout"]["real"] == 0:
        # Twice no swap: then the limit was met from the file list alone, and all of
        # memhog's 700 MiB (179 200 pages) was resident in the cgroup.
        assert _figure(rep, 3, "anon_pages")["real"] >= 170000
    assert _figure(rep, 3, "d_file_pages")["real"] < -50000


@needs_cgroup
def test_validate_write_read_twice_activates_on_the_second_read(tmp_path):
    rep = _validate(tmp_path, "write-read-twice")
    # Both sides: the first read leaves the written file inactive, the second activates it
    # (the cgroup's own active_file, not a host-wide counter).
    for side in ("twin", "real"):
        assert _figure(rep, 2, "d_active_file")[side] < 1024, side
        assert _figure(rep, 3, "d_active_file")[side] > 12000, side


@needs_cgroup
def test_validate_limit_reclaim_is_counted_by_list_not_by_reclaimer(tmp_path):
    rep = _validate(tmp_path, "file-only-reclaim", "--twin-memcg")
    # Plenty of clean file cache: both sides reclaim file pages and swap nothing.
    overall = {r["figure"]: r for r in rep["overall"]}
    for side in ("twin", "real"):
        assert overall["pgscan_file"][side] > 10000, side
        assert overall.get("pswpout", {side: 0})[side] < 256, side
    # The twin's limit reclaim is not direct reclaim (cgroup_reclaim): as in 6.x's
    # shrink_inactive_list, pgscan_direct does not count it.
    c = rep["twin_raw"]["commands"][4]
    assert c["vmstat_end"]["pgscan_direct"] == c["vmstat_start"]["pgscan_direct"]
    assert c["vmstat_end"]["pgscan_file"] > c["vmstat_start"]["pgscan_file"]


@needs_cgroup
@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_mid_run_restores_the_host(tmp_path, sig, status):
    knob = "/proc/sys/vm/dirty_expire_centisecs"
    before = hostrun.read_text(knob)
    new = "2999" if before.strip() != "2999" else "2998"
    script = tmp_path / "s.sh"
    script.write_text(f"sysctl -w vm.dirty_expire_centisecs={new}\nmemhog 64M &\nsleep 60\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "memtwin", "validate", str(script), "--machine", str(MACHINE),
         "--set", "ram=512M"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while hostrun.read_text(knob) == before and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        assert _leftovers(), "the cgroup and swap file should exist mid-run"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == status, err
    assert "the host was restored" in err
    assert not _leftovers()
    assert hostrun.read_text(knob) == before


# --- calibrate -------------------------------------------------------------------------------------


def test_calibrate_writes_a_machine_run_accepts(tmp_path):
    out = tmp_path / "host.toml"
    proc = run_cli("calibrate", "--dir", tmp_path, "--size", "8M", "--budget", "0.3", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["host.toml"]  # temp files gone
    text = out.read_text()
    assert "read_bw = " in text and "latency_us = " in text and "copy_bw = " in text
    script = tmp_path / "s.sh"
    script.write_text("dd if=/dev/zero of=f bs=1M count=4\nfree -m\n")
    run = run_cli("run", script, "--machine", out)
    assert run.returncode == 0, run.stderr
    assert "4194304 bytes" in run.stdout


def test_calibrate_writes_through_a_symlink_and_refuses_a_directory(tmp_path):
    # The one result writer: a symlink's target is replaced, never the link itself.
    target = tmp_path / "real.toml"
    target.write_text("keep\n")
    link = tmp_path / "link.toml"
    link.symlink_to(target)
    proc = run_cli("calibrate", "--dir", tmp_path, "--size", "8M", "--budget", "0.2", "-o", link)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and "read_bw = " in target.read_text()
    directory = tmp_path / "d"
    directory.mkdir()
    proc = run_cli("calibrate", "--dir", tmp_path, "--size", "8M", "--budget", "0.2", "-o", directory)
    assert proc.returncode == validate.EXIT_REFUSED, proc.stderr
    assert "Is a directory" in proc.stderr and proc.stderr.count("\n") == 1
    assert directory.is_dir()


def test_calibrate_refuses_when_the_disk_is_too_small(tmp_path):
    proc = run_cli("calibrate", "--dir", tmp_path, "--size", "1000000G")
    assert proc.returncode == validate.EXIT_REFUSED, proc.stderr
    assert "calibrate needs" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_calibrate_mapping_from_raw_figures():
    from memtwin.calibrate import derive

    raw = {"memcopy_bw": 4096e6, "cached_read_bw": 2048e6, "cached_write_bw": 1024e6,
           "seq_read_bw": 4096e6, "seq_write_bw": 2048e6, "qd1_read_latency_s": 101e-6,
           "qd1_write_latency_s": 52e-6, "qd32_read_iops": 80000, "qd1_read_iops": 10000}
    m = derive(raw)
    assert m["page_cache_ns"] == 1000  # 2 us per cached page - 1 us of copy
    assert m["page_alloc_ns"] == 2000  # 4 us per written page - 1 us copy - 1 us insertion
    assert m["latency_us"] == pytest.approx(100.0)  # 101 us - 1 us of transfer
    assert m["write_latency_us"] == pytest.approx(50.0)
    assert m["queue_depth"] == 8


@pytest.mark.parametrize("version", [1, 2])
def test_cgroup_limits_written_for_each_version(tmp_path, monkeypatch, version):
    """The files a v1 or v2 memory cgroup gets (in a plain directory standing in for the
    hierarchy), and that v2's swappiness goes to the saved-and-restored global knob."""
    monkeypatch.setattr(hostrun, "find_memory_hierarchy", lambda: (version, str(tmp_path)))
    monkeypatch.setattr(hostrun.Cgroup, "has", lambda self, name: True)
    session = hostrun.HostSession(str(tmp_path))
    knobs = {}
    monkeypatch.setattr(session, "set_sysctl", lambda k, v: knobs.__setitem__(k, v))
    cg = session.make_cgroup(1 << 30, 512 << 20, 33)
    files = {n: (Path(cg.path) / n).read_text() for n in os.listdir(cg.path)}
    if version == 1:
        assert files == {"memory.limit_in_bytes": str(1 << 30),
                         "memory.memsw.limit_in_bytes": str((1 << 30) + (512 << 20)),
                         "memory.swappiness": "33"}
        assert knobs == {}
    else:
        assert files == {"memory.max": str(1 << 30), "memory.swap.max": str(512 << 20)}
        assert knobs == {"vm.swappiness": "33"}
    for n in files:
        os.unlink(os.path.join(cg.path, n))  # a real cgroup's files vanish with it
    assert session.close() == []
    assert not os.path.exists(cg.path) and not os.path.exists(session.tmp)


# --- --twin-memcg ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version, files", [
    (1, ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.swappiness"]),
    (2, ["memory.max", "memory.swap.max"]),
])
def test_twin_memcg_wraps_the_script_in_a_cgroup_with_the_real_limits(version, files):
    text = "cat /proc/self/cgroup\n"
    wrapped, sets, skip = validate.memcg_wrap(text, [], 1000 << 20, 512 << 20, 60, version)
    lines = wrapped.splitlines()
    assert lines[skip:] == ["cat /proc/self/cgroup"]
    assert any(f"echo {1000 << 20} >" in l for l in lines[:skip])
    for f in files:
        assert any(l.endswith(f) for l in lines[:skip]), (f, lines)
    assert lines[skip - 1].startswith("echo $$ > ")
    assert "ram=4000M" in sets and (("cgroup=v1" in sets) == (version == 1))
    twin = validate.run_twin(wrapped, "t.sh", str(MACHINE), sets, 0)
    cg = twin["commands"][skip]["output"]
    assert cg == ("4:memory:/validate\n1:name=systemd:/\n0::/\n" if version == 1 else "0::/validate\n")
    assert all(c["exit_status"] == 0 for c in twin["commands"])


@needs_cgroup
def test_validate_twin_memcg_oom_kills_on_both_sides(tmp_path):
    rep = _validate(tmp_path, "memcg-oom", "--twin-memcg")
    assert rep["cgroup"]["twin_in_memcg"] is True
    hog = rep["commands"][0]
    assert hog["twin"]["exit_status"] == 137
    assert "Memory cgroup out of memory: Killed process" in hog["twin"]["output"]
    assert hog["real"][0]["exit_status"] != 0
    # Both swapped up to the memory+swap limit before the kill.
    sw = _figure(rep, 0, "pswpout")
    assert sw["verdict"] == OK and sw["real"] > 100000


# --- a run killed outright ---------------------------------------------------------------------


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_reap_stale_undoes_a_killed_run_and_leaves_live_ones(tmp_path):
    """A validator killed with SIGKILL cannot run its `finally`; the next session finds its
    state.json (the dead pid in the directory's name) and removes what it recorded. A live
    validator's directory is never touched."""
    dead = _dead_pid()
    assert not hostrun._pid_alive(dead)
    stale = tmp_path / f"memtwin-validate-{dead}-abc"
    stale.mkdir()
    (stale / "state.json").write_text(json.dumps({"pid": dead, "cgroup": None, "swapfile": None, "sysctls": {}}))
    (stale / "out-1.txt").write_text("x")
    live = tmp_path / f"memtwin-validate-{os.getpid()}-def"
    live.mkdir()
    other = tmp_path / "memtwin-validate-notapid"
    other.mkdir()
    notes = hostrun.reap_stale(str(tmp_path))
    assert not stale.exists()
    assert live.exists() and other.exists()
    assert len(notes) == 1 and f"pid {dead}" in notes[0]


def test_a_session_records_what_it_changed(tmp_path):
    holder: list = []
    s = hostrun.open_session(str(tmp_path), holder)
    try:
        assert os.path.basename(s.tmp).startswith(f"memtwin-validate-{os.getpid()}-")
        s.saved_sysctls["vm.swappiness"] = "60"  # as set_sysctl records it, without writing
        s._save_state()
        state = json.loads((Path(s.tmp) / "state.json").read_text())
        assert state == {"pid": os.getpid(), "cgroup": None, "swapfile": None, "sysctls": {"vm.swappiness": "60"}}
    finally:
        s.saved_sysctls.clear()
        assert s.close() == []
    assert not os.path.exists(s.tmp)


class FakeDirtyKnobs:
    """/proc/sys/vm's dirty knobs with the kernel's handlers (mm/page-writeback.c): writing
    one of a pair zeroes the other (dirty_ratio and dirty_bytes only when the value changes),
    and a *_bytes knob refuses 0."""

    def __init__(self, **values):
        self.v = {"vm.dirty_ratio": "20", "vm.dirty_background_ratio": "10",
                  "vm.dirty_bytes": "0", "vm.dirty_background_bytes": "0"}
        self.v.update({k.replace("__", "."): v for k, v in values.items()})

    def name(self, path):
        return path[len("/proc/sys/"):].replace("/", ".")

    def read(self, path):
        return self.v[self.name(path)] + "\n"

    def write(self, name, value):
        if name.endswith("_bytes") and value == "0":
            raise OSError(22, "Invalid argument")
        changed = self.v[name] != value
        self.v[name] = value
        partner = {"vm.dirty_ratio": "vm.dirty_bytes", "vm.dirty_bytes": "vm.dirty_ratio",
                   "vm.dirty_background_ratio": "vm.dirty_background_bytes",
                   "vm.dirty_background_bytes": "vm.dirty_background_ratio"}[name]
        if changed or "background" in name:
            self.v[partner] = "0"


def test_dirty_knobs_are_saved_in_pairs_and_restored_by_their_ratio(monkeypatch):
    knobs = FakeDirtyKnobs()
    monkeypatch.setattr(hostrun, "read_text", knobs.read)
    monkeypatch.setattr(hostrun, "_write_sysctl", knobs.write)
    session = hostrun.HostSession.__new__(hostrun.HostSession)
    session.saved_sysctls = {}
    session._save_state = lambda: None
    session.set_sysctl("vm.dirty_bytes", "50331648")
    session.set_sysctl("vm.dirty_background_bytes", "16777216")
    assert knobs.v["vm.dirty_ratio"] == "0" and knobs.v["vm.dirty_background_ratio"] == "0"
    assert session.saved_sysctls == {"vm.dirty_ratio": "20", "vm.dirty_bytes": "0",
                                     "vm.dirty_background_ratio": "10", "vm.dirty_background_bytes": "0"}
    done, problems = hostrun.restore_sysctls(session.saved_sysctls)
    assert problems == []
    assert knobs.v == FakeDirtyKnobs().v
    # A ratio already at its saved value while the bytes are set: changed and changed back.
    knobs = FakeDirtyKnobs(vm__dirty_ratio="0", vm__dirty_bytes="50331648")
    monkeypatch.setattr(hostrun, "read_text", knobs.read)
    monkeypatch.setattr(hostrun, "_write_sysctl", knobs.write)
    done, problems = hostrun.restore_sysctls({"vm.dirty_ratio": "0", "vm.dirty_bytes": "0"})
    assert problems == [] and knobs.v["vm.dirty_ratio"] == "0" and knobs.v["vm.dirty_bytes"] == "0"
    # Saved bytes come back as bytes (the ratio follows: 0).
    done, problems = hostrun.restore_sysctls({"vm.dirty_ratio": "0", "vm.dirty_bytes": "4096000"})
    assert problems == [] and knobs.v["vm.dirty_bytes"] == "4096000" and knobs.v["vm.dirty_ratio"] == "0"


def test_the_real_run_has_no_transparent_huge_pages():
    # What the cgroup's child calls before exec: its programs (and their children) get
    # 4 KiB pages, as the twin models.
    out = subprocess.run(["cat", "/proc/self/status"], preexec_fn=hostrun.disable_thp,
                         capture_output=True, text=True, check=True).stdout
    field = [line for line in out.splitlines() if line.startswith("THP_enabled:")]
    if not field:
        pytest.skip("this kernel's /proc/PID/status has no THP_enabled line (before 5.0)")
    assert field[0].split() == ["THP_enabled:", "0"]
    assert any("PR_SET_THP_DISABLE" in n for n in validate.by_construction(
        {"cgroup_version": 1, "kdamond": False}, False, False))
