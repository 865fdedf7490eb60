"""The Python API: memtwin.run, Result, presets, MemtwinError."""

from __future__ import annotations

import sys

import pytest

import memtwin
from memtwin import MemtwinError, Result


def small_result():
    return Result(
        transcript="hello\n",
        exit_status=0,
        sim_seconds=2.0,
        series={"t_s": [0.0, 1.0, 2.0], "vm.pgpgin": [0, 4, 8], "mi.MemFree": [100, 90, 80]},
    )


def test_memtwin_error_is_a_value_error():
    assert issubclass(MemtwinError, ValueError)
    assert MemtwinError.__name__ == "MemtwinError"
    assert MemtwinError.__module__ == "memtwin"
    assert memtwin._core.MemtwinError is MemtwinError


def test_version_is_a_string():
    assert isinstance(memtwin.__version__, str) and memtwin.__version__


def test_default_scenario():
    name, text = memtwin.default_scenario()
    assert name.endswith(".sh")
    assert isinstance(text, str) and text


def test_presets_are_name_description_pairs():
    presets = memtwin.presets()
    assert all(isinstance(n, str) and isinstance(d, str) for n, d in presets)
    names = [n for n, _ in presets]
    assert "default" in names and "seed-000" in names


def test_sysctl_and_set_become_overrides():
    items = memtwin._sets(
        {"vm.swappiness": 1, "vm.overcommit_memory": True},
        ["ram=256M", "cpus=4"],
    )
    assert items == ["vm.swappiness=1", "vm.overcommit_memory=1", "ram=256M", "cpus=4"]
    assert memtwin._sets(None, {"ram": "1G"}) == ["ram=1G"]
    assert memtwin._sets(None, "ram=1G") == ["ram=1G"]
    assert memtwin._sets(None, None) == []


def test_missing_path_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        memtwin.run(path=tmp_path / "missing.sh")


def test_bad_seed():
    with pytest.raises(MemtwinError):
        memtwin.run(seed=-1)
    with pytest.raises(TypeError):
        memtwin.run(seed=1.5)  # type: ignore[arg-type]


def test_frame_without_pandas_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` fail
    with pytest.raises(ImportError, match=r"memtwin\[frames\]"):
        small_result().frame()


def test_frame_with_pandas_if_installed():
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            small_result().frame()
        return
    df = small_result().frame()
    assert list(df.columns) == ["t_s", "vm.pgpgin", "mi.MemFree"]
    assert len(df) == 3


def test_run_default_scenario():
    result = memtwin.run()
    assert isinstance(result, Result)
    assert result.exit_status == 0
    assert result.transcript
    assert result.sim_seconds >= 0
    assert list(result.columns)[0] == "t_s"
    ticks = len(result.columns["t_s"])
    assert ticks > 0
    for column in ("vm.pgpgin_kib_total", "mi.MemFree_kib", "vm.nr_free_pages"):
        assert len(result.columns[column]) == ticks


SMALL = "# machine: seed-000\nsleep 3\nfree\n"


def test_run_text_equals_run_path(tmp_path):
    text = SMALL
    path = tmp_path / "small.sh"
    path.write_text(text)
    from_text = memtwin.run(text, seed=3)
    from_path = memtwin.run(path=path, seed=3)
    assert from_text.transcript == from_path.transcript
    assert from_text.columns == from_path.columns


def test_run_is_deterministic():
    a = memtwin.run(seed=11)
    b = memtwin.run(seed=11)
    assert a == b


def test_run_bad_machine_raises_memtwin_error():
    with pytest.raises(MemtwinError, match="no-such-preset"):
        memtwin.run(SMALL, machine="no-such-preset")


def test_run_bad_sysctl_raises_memtwin_error():
    with pytest.raises(MemtwinError, match="vm.no_such_sysctl"):
        memtwin.run(SMALL, sysctl={"vm.no_such_sysctl": 1})


def test_resolve_machine():
    assert memtwin.resolve_machine("# machine: seed-000\nfree\n") == "seed-000"
    assert memtwin.resolve_machine("free\n") == "default"
    assert memtwin.resolve_machine("# machine: seed-000\n", "laptop") == "laptop"
    assert memtwin.resolve_machine() == "seed-000"  # the default scenario's own machine


def test_core_import_stays_light():
    """Frames, sweeps, plots and reports import their libraries only when used."""
    import subprocess

    code = (
        "import sys, memtwin, memtwin.cli, memtwin.results; "
        "print([m for m in ('polars', 'pyarrow', 'pandas', 'matplotlib', 'ray', 'rich') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
