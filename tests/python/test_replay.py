"""`memtwin replay` and memtwin.replay(): trace replay, cache-simulator style.

The cache simulators must give exactly libCacheSim's misses on the same trace and capacity
(libcachesim is in the `compare` extra, which scripts/test-all installs)."""

from __future__ import annotations

import json
import random
import struct
from itertools import accumulate
from pathlib import Path
from typing import List

import pytest

import memtwin
from conftest import assert_bad_input, run_cli

PAGE = 4096
_OG = struct.Struct("<IQIq")  # oracleGeneral: clock_time, obj_id, obj_size, next_access_vtime


def zipf_ids(n_requests: int, n_ids: int, alpha: float, seed: int) -> List[int]:
    rng = random.Random(seed)
    cum = list(accumulate(1.0 / (i + 1) ** alpha for i in range(n_ids)))
    ids = rng.choices(range(n_ids), cum_weights=cum, k=n_requests)
    # Scatter popularity over the id space, as real traces do (a fixed permutation).
    perm = list(range(n_ids))
    random.Random(seed + 1).shuffle(perm)
    return [perm[i] for i in ids]


def write_oracle_general(path: Path, ids: List[int]) -> None:
    with open(path, "wb") as f:
        f.write(b"".join(_OG.pack(t, i, PAGE, -1) for t, i in enumerate(ids)))


@pytest.fixture(scope="module")
def zipf_trace(tmp_path_factory):
    ids = zipf_ids(200_000, 50_000, 0.9, seed=42)
    d = tmp_path_factory.mktemp("zipf")
    og = d / "zipf.oracleGeneral"
    write_oracle_general(og, ids)
    txt = d / "zipf.txt"
    txt.write_text("".join(f"{i}\n" for i in ids))
    return og, txt, ids


CACHE_PAGES = (1_000, 5_000, 20_000)
POLICIES = {"lru": "LRU", "fifo": "FIFO", "clock": "Clock", "s3fifo": "S3FIFO"}


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_misses_equal_libcachesim(zipf_trace, policy):
    lcs = pytest.importorskip("libcachesim")
    og, _, ids = zipf_trace
    for pages in CACHE_PAGES:
        ours = memtwin.replay(og, policy=policy, cache_size=pages)
        assert ours.requests == len(ids)
        # libCacheSim's capacity is in bytes; every request weighs obj_size = 4096.
        cache = getattr(lcs, POLICIES[policy])(pages * PAGE)
        reader = lcs.TraceReader(str(og), lcs.TraceType.ORACLE_GENERAL_TRACE)
        miss_ratio, byte_miss_ratio = cache.process_trace(reader)
        theirs = round(miss_ratio * len(ids))
        assert ours.misses == theirs, (policy, pages, ours.misses, theirs)
        assert ours.byte_miss_ratio == pytest.approx(byte_miss_ratio, abs=1e-12)


def test_formats_agree(zipf_trace, tmp_path):
    og, txt, ids = zipf_trace
    csv = tmp_path / "zipf.csv"
    csv.write_text("time,obj_id,size\n" + "".join(f"{t},{i},4096\n" for t, i in enumerate(ids)))
    a = memtwin.replay(og, policy="s3fifo", cache_size="20M")
    b = memtwin.replay(txt, policy="s3fifo", cache_size=5120)
    c = memtwin.replay(csv, policy="s3fifo", cache_size=5120)
    assert a.misses == b.misses == c.misses
    assert a.cache_pages == 5120
    assert b.byte_miss_ratio is None and c.byte_miss_ratio == a.byte_miss_ratio


def test_policies_order_on_zipf(zipf_trace):
    # Not a calibration: on a Zipf trace, recency-aware policies beat FIFO.
    og, _, _ = zipf_trace
    r = {p: memtwin.replay(og, policy=p, cache_size=5_000).miss_ratio for p in POLICIES}
    assert r["lru"] < r["fifo"] and r["s3fifo"] < r["lru"], r


def test_kernel_policy_on_a_loop_larger_than_the_cache(tmp_path):
    # 3 passes over 30000 pages; about 15000 pages of memory for the page cache.
    loop, passes, cache = 30_000, 3, 15_000
    trace = tmp_path / "loop.txt"
    trace.write_text("".join(f"{i}\n" for _ in range(passes) for i in range(loop)))
    out = tmp_path / "r.json"
    proc = run_cli(
        "replay", trace, "--policy", "kernel", "--cache-size", cache, "--set", "boot_file=0", "--set", "boot_anon=0",
        "--readahead", "off", "--json", out,
    )
    assert proc.returncode == 0, proc.stderr
    assert "miss ratio" in proc.stdout and "workingset_refault_file" in proc.stdout
    r = json.loads(out.read_text())
    requests = loop * passes
    assert r["requests"] == requests
    # Physically possible: every page misses once, and a later pass can hit at most as many
    # pages as the cache holds.
    floor = loop + (passes - 1) * (loop - cache)
    assert floor <= r["misses"] <= requests, r
    assert r["peak_cache_pages"] <= cache
    # Readahead off: one page read (4 KiB of pgpgin) per miss; refaults were detected.
    assert r["vmstat"]["pgpgin"] == 4 * r["misses"]
    assert r["vmstat"]["workingset_refault_file"] > 0
    assert r["vmstat"]["pgsteal_kswapd"] + r["vmstat"]["pgsteal_direct"] > 0
    assert r["byte_miss_ratio"] is None


def test_kernel_policy_is_deterministic(tmp_path):
    trace = tmp_path / "z.txt"
    trace.write_text("".join(f"{i}\n" for i in zipf_ids(20_000, 8_000, 0.9, seed=1)))
    a = memtwin.replay(trace, policy="kernel", cache_size=4_000, set=["boot_file=0", "boot_anon=0"])
    b = memtwin.replay(trace, policy="kernel", cache_size=4_000, set=["boot_file=0", "boot_anon=0"])
    assert (a.misses, a.kernel["vmstat"]) == (b.misses, b.kernel["vmstat"])
    assert 0 < a.miss_ratio < 1


def test_bad_csv_id_names_file_and_line(tmp_path):
    t = tmp_path / "t.csv"
    t.write_text("id,size\n1,4096\n2,4096\nabc,4096\n")
    assert_bad_input(
        run_cli("replay", t, "--cache-size", "10"),
        f"{t}:4: 'abc' is not an object id",
        "unsigned 64-bit integer",
    )


def test_bad_binary_record_size(tmp_path):
    t = tmp_path / "t.oracleGeneral"
    t.write_bytes(_OG.pack(0, 1, PAGE, -1) * 3 + b"\0" * 10)
    assert_bad_input(
        run_cli("replay", t, "--cache-size", "10"),
        f"{t}: record 4: truncated",
        "24 bytes",
    )


def test_bad_text_id(tmp_path):
    t = tmp_path / "t.txt"
    t.write_text("1\n2\n3.5\n")
    assert_bad_input(run_cli("replay", t, "--cache-size", "10", "--policy", "kernel"), f"{t}:3: '3.5'")


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--cache-size", "10", "--policy", "arc"], "is not a policy (accepted: kernel, lru"),
        ([], "needs --cache-size"),
        (["--cache-size", "10", "--readahead", "off"], "--readahead applies to --policy kernel only"),
        (["--cache-size", "10", "--format", "parquet"], "is not a trace format"),
        (["--cache-size", "1001K"], "whole number of 4 KiB pages"),
    ],
)
def test_bad_options(tmp_path, args, needle):
    t = tmp_path / "t.txt"
    t.write_text("1\n2\n")
    assert_bad_input(run_cli("replay", t, *args), needle)


def test_unknown_extension_needs_format(tmp_path):
    t = tmp_path / "trace.dat"
    t.write_text("1\n")
    assert_bad_input(run_cli("replay", t, "--cache-size", "10"), "give --format")
    proc = run_cli("replay", t, "--cache-size", "10", "--format", "u64")
    assert proc.returncode == 0, proc.stderr


def test_missing_trace(tmp_path):
    assert_bad_input(run_cli("replay", tmp_path / "no.csv", "--cache-size", "10"), "No such file or directory")
