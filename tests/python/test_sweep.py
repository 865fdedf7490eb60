"""Sweeps on the local pool and on Ray, resuming, dead workers, plots, the HTML report in a
headless browser, and the example notebook."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import memtwin
from memtwin import MemtwinError
from memtwin.sweeps import normalize_grid, read_table

from conftest import REPO, assert_bad_input, run_cli

pl = pytest.importorskip("polars", reason="sweeps need the 'sweep' extra")
pq = pytest.importorskip("pyarrow.parquet", reason="sweeps need the 'sweep' extra")

# A run that takes a fraction of a second.
QUICK = "# machine: default\ndd if=/dev/zero of=f bs=1M count=96\nsleep 2\nfree -m\n"
QUICK_GRID = {"vm.dirty_ratio": [5, 20]}
QUICK_SETS = {"ram": "256M"}

SWAPDEMO = REPO / "examples" / "swapdemo-small.sh"
SWAPPINESS = "vm.swappiness=0,1,10,60,100"


def files(out: Path) -> dict:
    """{relative path: bytes} of a dataset's Parquet files."""
    return {
        str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.parquet"))
    }


def assert_same_dataset(a: Path, b: Path) -> None:
    for table in ("runs", "commands", "series"):
        fa, fb = read_table(a, table), read_table(b, table)
        key = [c for c in ("run_key", "index", "t_s") if c in fa.columns]
        assert fa.sort(key).equals(fb.sort(key)), table
    # Deterministic runs and writer: the very same bytes.
    assert files(a) == files(b)


def quick_sweep(out, **kw):
    return memtwin.sweep(QUICK, grid=QUICK_GRID, set=QUICK_SETS, seeds=2, out=out, jobs=2, **kw)


# --- grid -----------------------------------------------------------------------------------


def test_grid_forms_and_errors():
    assert normalize_grid(["vm.swappiness=0,1", "ram=4G,8G"]) == [("vm.swappiness", ["0", "1"]), ("ram", ["4G", "8G"])]
    assert normalize_grid({"vm.swappiness": [0, 60], "x": [True]}) == [("vm.swappiness", ["0", "60"]), ("x", ["1"])]
    for bad in (["vm.swappiness"], ["=1,2"], ["a=1,,2"], ["a=1", "a=2"], ["a=1,1"]):
        with pytest.raises(MemtwinError):
            normalize_grid(bad)


def test_cli_refuses_a_bad_grid_value_before_running(tmp_path):
    script = tmp_path / "s.sh"
    script.write_text(QUICK)
    proc = run_cli("sweep", script, "--grid", "vm.swappiness=0,300", "-o", tmp_path / "out")
    assert_bad_input(proc, "vm.swappiness", "300")
    assert not (tmp_path / "out").exists()
    assert_bad_input(run_cli("sweep", script, "--grid", "vm.swappiness", "-o", tmp_path / "o"), "KEY=V1,V2")
    # A grid point too large for this host: refused as `run` refuses it, nothing written.
    proc = run_cli("sweep", script, "--grid", "ram=256M,16T", "-o", tmp_path / "big")
    assert proc.returncode == 71 and "16T" in proc.stderr, proc.stderr
    assert not (tmp_path / "big").exists()


# --- the local pool -------------------------------------------------------------------------


def test_pool_sweep_writes_one_row_per_run_and_command_and_resumes(tmp_path):
    out = tmp_path / "out"
    r = quick_sweep(out)
    assert (r.total, r.ran, r.done_before, r.engine) == (4, 4, 0, "pool")
    runs = r.runs
    assert runs.height == 4
    assert runs["param.vm.dirty_ratio"].to_list() == ["5", "5", "20", "20"]
    assert runs["seed"].to_list() == [0, 1, 0, 1]
    assert runs["run_key"].n_unique() == 4
    cmds = r.commands
    assert cmds.height == 4 * 3
    # /proc/PID/io counts the bytes dd dirtied, as Linux does.
    assert cmds.filter(pl.col("index") == 0)["write_bytes"].to_list() == [96 << 20] * 4
    series = r.series
    assert series.group_by("run_key").len()["len"].min() >= 2
    assert "mi.MemFree_kib" in series.columns and "param.vm.dirty_ratio" in series.columns
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["schema_version"] == 1 and meta["grid"] == [{"key": "vm.dirty_ratio", "values": ["5", "20"]}]
    before = files(out)
    assert len(before) == 12
    # Again: everything is done, nothing runs, nothing changes.
    again = quick_sweep(out)
    assert (again.ran, again.done_before) == (0, 4)
    assert files(out) == before
    # A run whose runs/ file is missing is run again (its other files are rewritten whole);
    # a temporary file a killed writer left behind is cleaned up.
    victim = sorted((out / "runs").iterdir())[0]
    victim.unlink()
    stale = out / "series" / f".{victim.name}.abc123.tmp"
    stale.write_bytes(b"partial")
    third = quick_sweep(out)
    assert (third.ran, third.done_before) == (1, 3)
    assert files(out) == before
    assert not stale.exists()


def test_a_killed_pool_worker_run_is_retried_not_lost_or_duplicated(tmp_path):
    clean = tmp_path / "clean"
    quick_sweep(clean)
    out = tmp_path / "killed"
    marker = tmp_path / "killed-once"
    r = quick_sweep(out, _kill_once=marker)
    assert marker.exists(), "a worker was killed mid-run"
    assert r.retried >= 1
    assert_same_dataset(clean, out)
    assert not [p for p in out.rglob("*") if p.name.startswith(".") or p.suffix not in (".parquet", ".json", "")]


def test_another_sweep_in_the_same_directory_is_refused(tmp_path):
    out = tmp_path / "out"
    quick_sweep(out)
    with pytest.raises(MemtwinError, match="another sweep"):
        memtwin.sweep(QUICK, grid={"vm.dirty_ratio": [7]}, set=QUICK_SETS, out=out)


# --- Ray ------------------------------------------------------------------------------------


def test_ray_sweep_equals_the_pool_and_survives_a_killed_worker(tmp_path, ray_cluster):
    pool = tmp_path / "pool"
    quick_sweep(pool)
    out = tmp_path / "ray"
    marker = tmp_path / "killed-once"
    r = quick_sweep(out, ray=ray_cluster, _kill_once=marker)
    assert r.engine == "ray"
    assert marker.exists(), "a Ray worker was killed mid-run"
    assert_same_dataset(pool, out)


# --- end to end: seed 003's swapdemo over swappiness, pool vs Ray, report ---------------------


@pytest.fixture(scope="module")
def swappiness_sweeps(tmp_path_factory, ray_cluster):
    base = tmp_path_factory.mktemp("e2e")
    common = ("sweep", SWAPDEMO, "--set", "ram=3G", "--grid", SWAPPINESS)
    pool = run_cli(*common, "-o", base / "pool", "--jobs", "2")
    assert pool.returncode == 0, pool.stderr
    assert "5 runs" in pool.stderr and "on pool" in pool.stderr
    ray = run_cli(*common, "-o", base / "ray", "--ray", ray_cluster)
    assert ray.returncode == 0, ray.stderr
    assert "on ray" in ray.stderr
    return base / "pool", base / "ray"


def test_swappiness_sweep_is_identical_on_the_pool_and_on_ray(swappiness_sweeps):
    pool, ray = swappiness_sweeps
    assert_same_dataset(pool, ray)
    runs = read_table(pool, "runs")
    assert runs["param.vm.swappiness"].to_list() == ["0", "1", "10", "60", "100"]
    by = {r["param.vm.swappiness"]: r for r in runs.to_dicts()}
    # The article's shape: 0 is OOM-killed while preparing; the others finish, and a higher
    # swappiness swaps more of the data out. At 0 global reclaim still swaps a little once
    # the node's file pages plus free memory fall under the high watermark (get_scan_count's
    # file_is_tiny: "global reclaim will swap to prevent OOM even with no swappiness").
    assert by["0"]["oom_kill_total"] == 1
    assert by["0"]["swap_used_max_kib"] < by["1"]["swap_used_max_kib"]
    for s in ("1", "60", "100"):
        assert by[s]["oom_kill_total"] == 0 and by[s]["exit_status"] == 0
    assert by["1"]["swap_used_max_kib"] < by["60"]["swap_used_max_kib"]
    demo = read_table(pool, "commands").filter(pl.col("command").str.starts_with("time swapdemo"))
    assert demo.height == 5
    assert demo["exit_status"].to_list()[0] == 137


def test_plot_each_picture_of_a_sweep_run_and_a_json_result(tmp_path, swappiness_sweeps, capsys):
    from memtwin.cli import main

    pool, _ = swappiness_sweeps
    j = tmp_path / "r.json"
    assert main(["run", str(SWAPDEMO), "--set", "ram=3G", "-q", "--json", str(j)]) == 0
    for what in ("vmstat", "meminfo", "reclaim", "explain"):
        for source, extra in ((pool, ["--run", "3"]), (j, [])):
            png = tmp_path / f"{what}.png"
            assert main(["plot", str(source), "--what", what, "-o", str(png), *extra]) == 0, capsys.readouterr().err
            assert_nonblank_png(png.read_bytes())
            png.unlink()
    svg = tmp_path / "v.svg"
    assert main(["plot", str(j), "--what", "meminfo", "-o", str(svg)]) == 0
    assert svg.read_text().lstrip().startswith("<?xml")
    # The same result, the same picture.
    assert main(["plot", str(j), "--what", "meminfo", "-o", str(tmp_path / "w.svg")]) == 0
    assert (tmp_path / "w.svg").read_bytes() == svg.read_bytes()


def test_plot_bad_input(tmp_path, swappiness_sweeps, capsys):
    from memtwin.cli import main

    pool, _ = swappiness_sweeps
    (tmp_path / "bad.json").write_text("{}")
    for args, needle in (
        ([str(tmp_path / "none.json")], "none.json"),
        ([str(pool), "--run", "99"], "--run"),
        ([str(tmp_path / "bad.json")], "not a memtwin"),
        ([str(tmp_path)], "not a sweep"),
    ):
        assert main(["plot", *args, "--what", "vmstat", "-o", str(tmp_path / "x.png")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("memtwin: ") and needle in err and len(err.splitlines()) == 1, err
    assert main(["plot", str(pool), "--what", "vmstat", "-o", str(tmp_path / "x.gif")]) == 2
    assert ".png" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists() and not (tmp_path / "x.gif").exists()


def assert_nonblank_png(data: bytes, min_size=(200, 150)) -> None:
    from PIL import Image
    import io

    im = Image.open(io.BytesIO(data)).convert("L")
    assert im.size[0] >= min_size[0] and im.size[1] >= min_size[1], im.size
    lo, hi = im.getextrema()
    assert hi - lo > 100, "not a blank image"
    dark = sum(im.histogram()[:200])
    assert dark > 0.005 * im.size[0] * im.size[1], "something is drawn"


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless Chromium (scripts/test-all installs Debian's chromium)")


def headless(*args, cwd):
    cmd = [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0",
           f"--user-data-dir={cwd / 'profile'}", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env={**os.environ, "HOME": str(cwd)})


def test_report_renders_in_headless_chromium(tmp_path, swappiness_sweeps):
    pool, _ = swappiness_sweeps
    page = tmp_path / "report.html"
    proc = run_cli("report", pool, "-o", page)
    assert proc.returncode == 0, proc.stderr
    text = page.read_text()
    # Self-contained: no network, no script; every figure is an embedded PNG.
    assert not re.search(r"(src|href)=\"(https?:)?//", text)
    assert "<script" not in text
    pngs = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    assert len(pngs) >= 8
    for data in pngs:
        assert_nonblank_png(base64.b64decode(data))
    # In the browser: every image decoded at its size, no console error.
    probe = tmp_path / "probe.html"
    probe.write_text(text.replace(
        "</body>",
        "<script>addEventListener('load', () => document.body.setAttribute('data-images', "
        "JSON.stringify([...document.images].map(i => [i.complete, i.naturalWidth, i.naturalHeight]))));"
        "</script></body>",
    ))
    dom = headless("--virtual-time-budget=10000", "--dump-dom", probe.as_uri(), cwd=tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    m = re.search(r'data-images="([^"]*)"', dom.stdout)
    assert m, dom.stdout[:500]
    images = json.loads(m.group(1).replace("&quot;", '"'))
    assert len(images) == len(pngs)
    assert all(ok and w >= 200 and h >= 150 for ok, w, h in images), images
    shot = tmp_path / "report.png"
    run = headless("--window-size=1200,2400", f"--screenshot={shot}", page.as_uri(), cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert_nonblank_png(shot.read_bytes(), min_size=(1000, 2000))
    console = [l for l in (dom.stderr + run.stderr).splitlines() if "CONSOLE" in l or "Uncaught" in l]
    assert console == [], console


def test_report_of_a_json_result(tmp_path):
    j, direct = tmp_path / "r.json", tmp_path / "direct.html"
    proc = run_cli("run", "-q", "--json", j, "--report", direct)
    assert proc.returncode == 0, proc.stderr
    page = tmp_path / "r.html"
    proc = run_cli("report", j, "-o", page)
    assert proc.returncode == 0, proc.stderr
    text = page.read_text()
    assert text.count("data:image/png;base64,") == 4
    assert "<table>" in text and "dd if=" in text
    # From the JSON file or straight from the run: the same page.
    assert direct.read_bytes() == page.read_bytes()
    assert_bad_input(run_cli("report", j, "-o", "-"), "file name")


# --- the example notebook -------------------------------------------------------------------


def test_example_notebook_runs(tmp_path, monkeypatch):
    # The notebook writes its sweep under tempfile.mkdtemp(): into this test's directory.
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(REPO / "examples" / "swappiness.ipynb", as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO / "examples")}}
    )
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "the figure was drawn"


def test_ray_auto_attaches_to_the_local_cluster(tmp_path, ray_cluster):
    script = tmp_path / "s.sh"
    script.write_text(QUICK)
    args = ("sweep", script, "--set", "ram=256M", "--grid", "vm.dirty_ratio=5,20", "--seeds", "2")
    proc = run_cli(*args, "-o", tmp_path / "ray", "--ray", "auto")
    assert proc.returncode == 0, proc.stderr
    assert "4 runs" in proc.stderr and "on ray" in proc.stderr
    quick_sweep(tmp_path / "pool", path=str(script))
    assert_same_dataset(tmp_path / "pool", tmp_path / "ray")


def test_progress_bar_only_on_a_terminal_outside_ci(monkeypatch):
    from memtwin.sweeps import _Progress

    import io

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Tty())
    monkeypatch.setenv("CI", "true")
    assert _Progress(5, 0, None).bar is None
    monkeypatch.setenv("CI", "")
    pytest.importorskip("rich")
    bar = _Progress(5, 0, None)
    assert bar.bar is not None
    bar.bar.stop()
    assert _Progress(5, 0, False).bar is None
