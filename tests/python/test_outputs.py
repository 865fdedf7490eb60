"""Result files: atomic writes and the JSON/CSV layout, on synthetic results (no simulation)."""

from __future__ import annotations

import csv
import io
import json
import os
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtwin import Result
from memtwin.cli import _write_csv, _write_json, write_atomically


def test_write_atomically_replaces_whole_file(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    write_atomically(str(path), lambda f: f.write("new contents\n"))
    assert path.read_text() == "new contents\n"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_failed_write_leaves_old_file_and_no_temp(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")

    def broken(f):
        f.write("half of it")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        write_atomically(str(path), broken)
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_failed_first_write_leaves_nothing(tmp_path):
    def broken(f):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(str(tmp_path / "out.txt"), broken)
    assert os.listdir(tmp_path) == []


column_names = st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=12)


@st.composite
def results(draw):
    ticks = draw(st.integers(min_value=0, max_value=20))
    names = draw(st.lists(column_names, unique=True, max_size=6))
    series = {"t_s": [float(i) / 4 for i in range(ticks)]}
    for name in names:
        series[f"vm.{name}"] = draw(
            st.lists(st.integers(0, 2**64 - 1), min_size=ticks, max_size=ticks)
        )
    return Result(
        transcript=draw(st.text(max_size=50)),
        exit_status=draw(st.integers(0, 255)),
        sim_seconds=draw(st.floats(0, 1e6, allow_nan=False)),
        series=series,
    )


@settings(max_examples=50, deadline=None)
@given(results())
def test_csv_round_trips(result):
    buf = io.StringIO()
    _write_csv(buf, result)
    rows = list(csv.reader(io.StringIO(buf.getvalue())))
    assert rows[0] == list(result.columns)
    body = rows[1:]
    assert len(body) == len(result.columns["t_s"])
    for i, name in enumerate(result.columns):
        parse = float if name == "t_s" else int
        assert [parse(row[i]) for row in body] == result.columns[name]


@settings(max_examples=50, deadline=None)
@given(results(), st.integers(0, 2**64 - 1))
def test_json_round_trips(result, seed):
    result.seed, result.machine, result.settings = seed, "laptop", ["ram=1G"]
    buf = io.StringIO()
    _write_json(buf, result)
    doc = json.loads(buf.getvalue())
    assert doc["schema_version"] == 1
    assert doc["seed"] == seed
    assert doc["machine"] == "laptop"
    assert doc["settings"] == ["ram=1G"]
    assert doc["exit_status"] == result.exit_status
    assert doc["sim_seconds"] == result.sim_seconds
    assert doc["series"] == result.columns
    assert list(doc["series"]) == list(result.columns)
    assert Result.from_json(buf.getvalue()) == result
