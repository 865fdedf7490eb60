"""``memtwin validate``: run a scenario in the twin and for real on this host, side by side.

The real run happens inside a temporary memory cgroup sized as the simulated machine's
MemTotal, with a temporary swap file when the machine has swap (see :mod:`memtwin.hostrun`,
which owns and undoes every change to the host). The twin run is one deterministic
simulation; the real run is repeated ``--repeat`` times and each figure's median is compared.

Exit status: 0 when both sides ran (whatever the verdicts), 2 bad input, 3 refused (cannot run
here: not root, no writable memory cgroup, machine too large, a command that cannot run for
real), 130 interrupted by SIGINT, 143 by SIGTERM. In every case the host is restored.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from . import MemtwinError, _core, read_scenario, resolve_machine
from . import hostrun
from .hostrun import PAGE, HostSession, Refused

EXIT_REFUSED = hostrun.EXIT_REFUSED

# --- tolerances -------------------------------------------------------------------------------

#: A counter (in pages) is "within tolerance" when twin and real differ by at most this
#: fraction of the larger of the two, or by at most COUNT_SLACK_PAGES (noise floor: 1 MiB).
COUNT_REL_TOL = 0.25
COUNT_SLACK_PAGES = 256
#: Host-wide counters (pgpgin/pgpgout: the host's /proc/vmstat, other tenants included) get a
#: larger noise floor: 16 MiB, in the counter's KiB.
HOST_SLACK_KB = 16384
#: A duration is "within tolerance" when the larger is at most TIME_RATIO times the smaller,
#: or both are under TIME_FLOOR_S (the twin does not model fork/exec of bash and the tool, tens
#: of ms on a busy host); "direction right" when within TIME_DIRECTION_RATIO.
TIME_RATIO = 1.5
TIME_DIRECTION_RATIO = 4.0
TIME_FLOOR_S = 0.1

OK = "within tolerance"
DIRECTION = "direction right"
WRONG = "wrong"


def verdict_count(twin: float, real: float, slack: float = COUNT_SLACK_PAGES) -> str:
    """Verdict for a counter change (pages, or KiB with a KiB `slack`): within tolerance,
    direction right (both grew, both shrank, or both stayed within the noise floor), or
    wrong."""
    if abs(twin - real) <= max(COUNT_REL_TOL * max(abs(twin), abs(real)), slack):
        return OK

    def sign(x: float) -> int:
        return 0 if abs(x) <= slack else (1 if x > 0 else -1)

    return DIRECTION if sign(twin) == sign(real) else WRONG


def verdict_time(twin: float, real: float) -> str:
    """Verdict for a duration (or a rate) in the same unit on both sides."""
    if max(twin, real) < TIME_FLOOR_S:
        return OK
    return verdict_ratio(twin, real)


# --- the script -------------------------------------------------------------------------------

#: Commands validate can run for real, and how.
REAL_COMMANDS = ("dd", "cat", "cp", "rm", "sync", "sleep", "free", "vmstat", "echo", "sysctl",
                 "ls", "stat", "mkdir", "memhog", "wait", "true", "fio")
#: fio options that name a path: it must be inside the working directory.
FIO_PATH_OPTIONS = ("filename", "directory")
#: Devices a command may name (dd if= / of=).
DEVICES_READ = ("/dev/zero", "/dev/null", "/dev/urandom")
DEVICES_WRITE = ("/dev/null",)
_UNSUPPORTED_SHELL = re.compile(r"(\|\||&&|\||;|\$\(|`|<)")
_KEYWORDS = ("for", "if", "while", "until", "case", "then", "do", "done", "fi", "{", "}")


@dataclass
class Item:
    """One line of the script: a simple command, maybe `time`d, maybe `&`."""

    line: int
    source: str
    words: List[str]
    background: bool = False
    timed: bool = False
    redirects: List[Tuple[int, str, str]] = field(default_factory=list)  # (fd, op, target)


def parse_script(text: str, name: str) -> List[Item]:
    """The script's commands, one per line; anything else is refused naming its line."""
    items = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue

        def refuse(why: str) -> Refused:
            return Refused(f"{name}:{n}: {why}")

        if line.endswith("\\"):
            raise refuse("continued lines ('\\') cannot be validated: write one command per line")
        try:
            words = shlex.split(line, comments=True)
        except ValueError as e:
            raise refuse(f"cannot split the line into words ({e})") from None
        if not words:
            continue
        if _UNSUPPORTED_SHELL.search(line.split("#")[0].replace("2>&1", "").replace(">&", "")):
            raise refuse("validate runs simple commands, one per line (no pipes, ';', '&&', '||', "
                         "'<' or command substitution)")
        if words[0] in _KEYWORDS:
            raise refuse(f"'{words[0]}' blocks cannot be validated: write one command per line")
        item = Item(line=n, source=line.split(" #")[0].strip(), words=[])
        if words[-1] == "&":
            item.background = True
            words = words[:-1]
        elif words[-1].endswith("&") and not words[-1].endswith(">&"):
            item.background = True
            words[-1] = words[-1][:-1]
        if words and words[0] == "time":
            item.timed = True
            words = words[1:]
            if words and words[0] == "-p":
                raise refuse("'time -p' cannot be validated (use plain 'time')")
        it = iter(words)
        for w in it:
            m = re.fullmatch(r"(\d?)(>>|>)(&?)(.*)", w)
            if m:
                fd = int(m.group(1) or 1)
                op = m.group(2)
                target = m.group(4)
                if m.group(3):
                    item.redirects.append((fd, ">&", target))
                    continue
                if not target:
                    target = next(it, "")
                    if not target:
                        raise refuse("redirection without a target")
                item.redirects.append((fd, op, target))
            else:
                item.words.append(w)
        if not item.words:
            raise refuse("assignments and empty commands cannot be validated")
        items.append(item)
    return items


def _inside(tmp: str, path: str) -> bool:
    full = os.path.normpath(os.path.join(tmp, path))
    return full == tmp or full.startswith(tmp.rstrip("/") + "/")


def check_real(items: Sequence[Item], name: str) -> None:
    """Refuse (one line) a command that cannot run for real, or a path outside the temporary
    directory (other than the devices and /proc/sys knobs listed in docs/validation.md)."""
    probe = "/memtwin-validate-tmp"
    supported = ", ".join(REAL_COMMANDS)
    for it in items:
        cmd = it.words[0]

        def refuse(why: str) -> Refused:
            return Refused(f"{name}:{it.line}: {why}")

        if cmd not in REAL_COMMANDS:
            raise refuse(f"'{cmd}' cannot be run for real by validate (it can run: {supported})")
        if it.background and cmd not in ("vmstat", "memhog", "sleep", "dd", "cat", "cp"):
            raise refuse(f"'{cmd} &' cannot be validated (background: vmstat, memhog, sleep, dd, cat, cp)")
        for fd, op, target in it.redirects:
            if op == ">&":
                continue
            if target.startswith("/proc/sys/"):
                if not (cmd == "echo" and target.startswith("/proc/sys/vm/")):
                    raise refuse("only 'echo VALUE > /proc/sys/vm/KNOB' may write /proc/sys")
                continue
            if target == "/dev/null":
                continue
            if not _inside(probe, target):
                raise refuse(f"'{target}' is outside the working directory; use a relative path")
        args = it.words[1:]
        for a in args:
            key, eq, val = a.partition("=")
            if cmd == "dd" and eq and key in ("if", "of"):
                allowed = DEVICES_READ if key == "if" else DEVICES_WRITE
                if val in allowed:
                    continue
                if not _inside(probe, val):
                    raise refuse(f"dd {key}={val}: only relative paths and {', '.join(allowed)} are allowed")
                continue
            if cmd == "sysctl" and eq:
                if not key.startswith("vm."):
                    raise refuse(f"sysctl {a}: only vm.* knobs can be set (they are saved and restored)")
                continue
            if cmd == "fio":
                opt = key.lstrip("-").replace("-", "_")
                if a.startswith("--output") and not a.startswith("--output-format"):
                    raise refuse(f"fio {a}: validate reads fio's report from its standard output")
                if (opt in FIO_PATH_OPTIONS and eq) or not a.startswith("-"):
                    path = val if (opt in FIO_PATH_OPTIONS and eq) else a
                    if not _inside(probe, path):
                        raise refuse(f"fio {a}: '{path}' is outside the working directory; use a relative path")
                continue
            if cmd in ("cat", "cp", "rm", "ls", "stat", "mkdir") and not a.startswith("-"):
                if not _inside(probe, a):
                    raise refuse(f"'{a}' is outside the working directory; use a relative path")
        if cmd == "rm" and any(a.startswith("-") and "r" in a.lstrip("-") for a in args):
            raise refuse("'rm -r' cannot be validated (remove files one by one)")
        if cmd not in ("memhog", "wait", "true", "echo", "sleep") and shutil.which(cmd) is None:
            raise refuse(f"'{cmd}' is not installed on this host")


# --- the twin side ----------------------------------------------------------------------------

#: Knobs mirrored from the simulated machine onto the host when they differ (saved, restored).
MIRRORED_SYSCTLS = ("vm.dirty_ratio", "vm.dirty_background_ratio", "vm.dirty_bytes",
                    "vm.dirty_background_bytes", "vm.dirty_expire_centisecs",
                    "vm.dirty_writeback_centisecs", "vm.vfs_cache_pressure", "vm.page-cluster")


def twin_machine_facts(machine: str, sets: List[str], seed: int) -> Dict[str, object]:
    """MemTotal, SwapTotal and the vm sysctls of the simulated machine, read by running
    `sysctl` in the twin."""
    names = ("vm.swappiness",) + MIRRORED_SYSCTLS
    raw = _core.run(script_text="sysctl " + " ".join(names) + "\n", script_path="<probe>",
                    machine=machine, sets=sets, seed=seed)
    cols = dict(raw["columns"])
    sysctls = {}
    for line in raw["transcript"].splitlines():
        k, eq, v = line.partition(" = ")
        if eq:
            sysctls[k.strip()] = v.strip()
    return {
        "MemTotal": cols["mi.MemTotal"][0] * 1024,
        "SwapTotal": cols["mi.SwapTotal"][0] * 1024,
        "MemFree": cols["mi.MemFree"][0] * 1024,
        "sysctls": sysctls,
    }


def memcg_wrap(text: str, sets: List[str], limit: int, swap: int, swappiness: int,
               cg_version: int) -> Tuple[str, List[str], int]:
    """The twin's scenario for --twin-memcg: the same commands run by a shell that first
    moves itself into a memory cgroup with the real side's limits (v1: memory and
    memory+swap limits and memory.swappiness; v2: memory.max and memory.swap.max), on the
    machine with four times its MemTotal of RAM. Returns (text, sets, commands to skip)."""
    if cg_version == 1:
        d = "/sys/fs/cgroup/memory/validate"
        lines = [f"mkdir {d}", f"echo {limit} > {d}/memory.limit_in_bytes",
                 f"echo {limit + swap} > {d}/memory.memsw.limit_in_bytes",
                 f"echo {swappiness} > {d}/memory.swappiness"]
        sets = sets + ["cgroup=v1"]
    else:
        d = "/sys/fs/cgroup/validate"
        lines = [f"mkdir {d}", f"echo {limit} > {d}/memory.max", f"echo {swap} > {d}/memory.swap.max",
                 f"sysctl -q -w vm.swappiness={swappiness}"]
    lines.append(f"echo $$ > {d}/cgroup.procs")
    sets = sets + [f"ram={(limit * 4) >> 20}M"]
    return "\n".join(lines) + "\n" + text, sets, len(lines)


def run_twin(text: str, path: str, machine: str, sets: List[str], seed: int) -> dict:
    raw = _core.run(script_text=text, script_path=path, machine=machine, sets=sets, seed=seed)
    cmds = []
    for c in raw["commands"]:
        cmds.append({
            "source": c["source"],
            "background": c["background"],
            "time_s": (c["end_ns"] - c["start_ns"]) / 1e9,
            "exit_status": c["exit_status"],
            "output": c["output"],
            "vmstat_start": c["vmstat_start"],
            "vmstat_end": c["vmstat_end"],
        })
    return {"transcript": raw["transcript"], "exit_status": raw["exit_status"],
            "sim_seconds": raw["sim_seconds"], "commands": cmds}


# --- the real side ----------------------------------------------------------------------------


def _real_argv(it: Item) -> List[str]:
    words = list(it.words)
    if words[0] == "memhog":
        words = [sys.executable, "-m", "memtwin.hostrun", "memhog"] + words[1:]
    cmd = " ".join(shlex.quote(w) for w in words)
    for fd, op, target in it.redirects:
        cmd += f" {fd}{op}{shlex.quote(target) if op != '>&' else target}"
    if it.timed:
        cmd = "time " + cmd
    return ["bash", "-c", cmd]


def run_real_once(session: HostSession, items: List[Item], limit: int, swap: int,
                  swappiness: Optional[int], twin_sysctls: Dict[str, str]) -> List[dict]:
    """Run the script once in a fresh cgroup; returns one record per command."""
    if session.cgroup is not None:
        session.kill_children()
        errs = hostrun._remove_cgroup(session.cgroup)
        if errs:
            raise RuntimeError(errs[0])
        session.cgroup = None
    for name in os.listdir(session.tmp):
        if os.path.join(session.tmp, name) != session.swapfile:
            p = os.path.join(session.tmp, name)
            shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
    # The machine's own knobs, where the host's differ (restored by close()).
    for name in MIRRORED_SYSCTLS:
        want = twin_sysctls.get(name)
        path = "/proc/sys/" + name.replace(".", "/")
        if want is not None and os.path.exists(path) and hostrun.read_text(path).strip() != want:
            if name.endswith("_bytes") and want == "0":
                continue  # writing 0 to *_bytes is refused by the kernel; the ratio rules
            if name.endswith("_ratio") and want == "0" and twin_sysctls.get(name[:-len("ratio")] + "bytes", "0") != "0":
                continue  # the *_bytes write below zeroes it, as in the twin
            session.set_sysctl(name, want)
    cg = session.make_cgroup(limit, swap, swappiness)
    records: List[dict] = []
    background: List[Tuple[int, "subprocess.Popen", str]] = []
    outdir = session.tmp + "/.memtwin-out"
    os.makedirs(outdir, exist_ok=True)

    def finish_bg(kill: bool) -> None:
        for idx, p, out in background:
            if kill and p.poll() is None:
                try:
                    os.killpg(p.pid, 15)
                except OSError:
                    pass
            p.wait()
            with open(out, encoding="utf-8", errors="replace") as f:
                records[idx]["output"] = f.read()
            records[idx]["exit_status"] = p.returncode
        background.clear()

    for i, it in enumerate(items):
        rec = hostrun.RealCommand(source=it.source, background=it.background)
        rec.vmstat_start, rec.memstat_start = session.snapshot()
        rec.start_s = time.monotonic()
        cmd = it.words[0]
        if cmd == "echo" and any(t.startswith("/proc/sys/") for _, op, t in it.redirects):
            target = [t for _, op, t in it.redirects if t.startswith("/proc/sys/")][0]
            knob = target[len("/proc/sys/"):].replace("/", ".")
            value = " ".join(w for w in it.words[1:] if w != "-n")
            try:
                session.set_sysctl(knob, value)
                if knob == "vm.swappiness" and cg.version == 1 and cg.has("memory.swappiness"):
                    cg.write("memory.swappiness", value)
                rec.exit_status = 0
            except OSError as e:
                rec.output = f"bash: echo: write error: {e.strerror}\n"
                rec.exit_status = 1
        elif cmd == "wait":
            finish_bg(kill=False)
        elif cmd == "true":
            pass
        else:
            if cmd == "sysctl":
                for a in it.words[1:]:
                    k, eq, _ = a.partition("=")
                    if eq:
                        session.set_sysctl(k, hostrun.read_text("/proc/sys/" + k.replace(".", "/")).strip())
            out = os.path.join(outdir, f"{i}.out")
            p = session.spawn(_real_argv(it), out)
            if it.background:
                background.append((i, p, out))
            else:
                p.wait()
                with open(out, encoding="utf-8", errors="replace") as f:
                    rec.output = f.read()
                rec.exit_status = p.returncode
            if cmd == "sysctl" and cg.version == 1:
                for a in it.words[1:]:
                    k, eq, v = a.partition("=")
                    if k == "vm.swappiness" and eq and cg.has("memory.swappiness"):
                        cg.write("memory.swappiness", v)
        rec.end_s = time.monotonic()
        rec.vmstat_end, rec.memstat_end = session.snapshot()
        d = rec.as_dict()
        d["time_s"] = rec.end_s - rec.start_s
        records.append(d)
    # The session ends, as in the twin: background jobs still running get SIGTERM.
    finish_bg(kill=True)
    return records


# --- figures ----------------------------------------------------------------------------------

#: /proc/vmstat event counters compared per command: (figure, [twin/host vmstat names]).
EVENT_FIGURES = [
    ("pgpgin_kb", ["pgpgin"]),
    ("pgpgout_kb", ["pgpgout"]),
    ("pswpin", ["pswpin"]),
    ("pswpout", ["pswpout"]),
    ("pgmajfault", ["pgmajfault"]),
    # Reclaim inside a cgroup's limit is not counted in /proc/vmstat's pgscan_kswapd/direct
    # and pgsteal_kswapd/direct (mm/vmscan.c shrink_inactive_list: `if (!cgroup_reclaim(sc))
    # __count_vm_events(item, ...)`), but always in pgscan_anon/file and pgsteal_anon/file
    # (`__count_vm_events(PGSCAN_ANON + file, ...)`): the split by list is compared, the split
    # by reclaimer (kswapd vs direct) is not.
    ("pgscan_anon", ["pgscan_anon"]),
    ("pgscan_file", ["pgscan_file"]),
    ("pgsteal_anon", ["pgsteal_anon"]),
    ("pgsteal_file", ["pgsteal_file"]),
    ("workingset_refault_file", ["workingset_refault_file"]),
    ("workingset_refault_anon", ["workingset_refault_anon"]),
    ("workingset_activate_file", ["workingset_activate_file"]),
    ("pgactivate", ["pgactivate"]),
    ("pgdeactivate", ["pgdeactivate"]),
]
#: Page gauges: (figure, twin vmstat name, memory.stat name v1, memory.stat name v2, unit).
#: memory.stat gauges are bytes; the cgroup's own pages stand for the twin's whole machine.
GAUGE_FIGURES = [
    ("file_pages", "nr_file_pages", "cache", "file"),
    ("anon_pages", "nr_anon_pages", "rss", "anon"),
    ("active_file", "nr_active_file", "active_file", "active_file"),
    ("inactive_file", "nr_inactive_file", "inactive_file", "inactive_file"),
    ("active_anon", "nr_active_anon", "active_anon", "active_anon"),
    ("inactive_anon", "nr_inactive_anon", "inactive_anon", "inactive_anon"),
    ("dirty", "nr_dirty", "dirty", "file_dirty"),
    ("writeback", "nr_writeback", "writeback", "file_writeback"),
]


def _event(d0: Dict[str, int], d1: Dict[str, int], names: List[str]) -> int:
    return sum(d1.get(n, 0) - d0.get(n, 0) for n in names)


def twin_figures(c: dict) -> Dict[str, float]:
    f: Dict[str, float] = {"time_s": c["time_s"]}
    for fig, names in EVENT_FIGURES:
        f[fig] = _event(c["vmstat_start"], c["vmstat_end"], names)
    for fig, vm, _, _ in GAUGE_FIGURES:
        f["d_" + fig] = c["vmstat_end"].get(vm, 0) - c["vmstat_start"].get(vm, 0)
        f[fig] = c["vmstat_end"].get(vm, 0)
    f.update(dd_figures(c["output"]))
    f.update(fio_figures(c["output"]))
    return f


#: Event figures taken from the host's /proc/vmstat even when memory.stat has a field of the
#: same name (cgroup v1's memory.stat pgpgin/pgpgout count charge events, not KiB of I/O).
HOST_ONLY_EVENTS = ("pgpgin_kb", "pgpgout_kb")


def real_figures(c: dict, cg_version: int) -> Dict[str, float]:
    """The real side's figures: event counters from the cgroup's memory.stat where it has
    them (the cgroup's own events, free of other tenants' noise), else the host's /proc/vmstat;
    page gauges from memory.stat."""
    f: Dict[str, float] = {"time_s": c["time_s"]}
    for fig, names in EVENT_FIGURES:
        ms0, ms1 = c["memstat_start"], c["memstat_end"]
        if fig not in HOST_ONLY_EVENTS and any(n in ms1 for n in names):
            f[fig] = _event(ms0, ms1, names)
        else:
            f[fig] = _event(c["vmstat_start"], c["vmstat_end"], names)
    for fig, _, v1, v2 in GAUGE_FIGURES:
        name = v1 if cg_version == 1 else v2
        if name in c["memstat_end"]:
            f["d_" + fig] = (c["memstat_end"][name] - c["memstat_start"].get(name, 0)) // PAGE
            f[fig] = c["memstat_end"][name] // PAGE
    f.update(dd_figures(c["output"]))
    f.update(fio_figures(c["output"]))
    return f


_DD = re.compile(r"^(\d+) bytes .* copied, ([0-9.e+-]+) s, ", re.M)


def dd_figures(output: str) -> Dict[str, float]:
    """dd's summary line: bytes copied, seconds and rate (MB/s computed from both)."""
    m = _DD.search(output)
    if not m:
        return {}
    nbytes, secs = int(m.group(1)), float(m.group(2))
    out = {"dd_seconds": secs}
    if secs > 0:
        out["dd_MBps"] = nbytes / secs / 1e6
    return out


_FIO_DIR = re.compile(r"^\s+(read|write): IOPS=([0-9.]+)([kM]?),", re.M)
_FIO_LAT = re.compile(r"^\s+(slat|clat) \((nsec|usec|msec)\):.* avg=([0-9.]+),", re.M)
_FIO_DISK = re.compile(r"^\s+\S+: ios=(\d+)/(\d+),", re.M)
_FIO_SCALE = {"": 1.0, "k": 1e3, "M": 1e6}
_FIO_US = {"nsec": 1e-3, "usec": 1.0, "msec": 1e3}


def fio_figures(output: str) -> Dict[str, float]:
    """fio's normal report: per direction the IOPS (summed over the jobs reported) and the
    first job's mean submission and completion latencies in microseconds; the disk's read
    and write requests (the first disk of "Disk stats")."""
    out: Dict[str, float] = {}
    blocks = re.split(r"(?m)^\s+(?=(?:read|write): IOPS=)", output)
    for block in blocks[1:]:
        m = _FIO_DIR.match("  " + block)
        if not m:
            continue
        d = m.group(1)
        out[f"fio_{d}_iops"] = out.get(f"fio_{d}_iops", 0.0) + float(m.group(2)) * _FIO_SCALE[m.group(3)]
        # The latency lines up to the next direction or job: this block's own.
        for lm in _FIO_LAT.finditer(block.split(" bw (")[0]):
            key = f"fio_{d}_{lm.group(1)}_us"
            out.setdefault(key, float(lm.group(3)) * _FIO_US[lm.group(2)])
    disk = _FIO_DISK.search(output)
    if disk and out:
        out["fio_disk_reads"] = float(disk.group(1))
        out["fio_disk_writes"] = float(disk.group(2))
    return out


#: fio's figures compared as rates (IOPS, latencies: the time verdict without its floor) and
#: as counts (the disk's requests).
FIO_RATES = ("fio_read_iops", "fio_write_iops", "fio_read_slat_us", "fio_read_clat_us",
             "fio_write_slat_us", "fio_write_clat_us")
FIO_COUNTS = ("fio_disk_reads", "fio_disk_writes")


def verdict_ratio(twin: float, real: float) -> str:
    """Verdict by the ratio of the two (a duration above the floor, a rate, a latency):
    within tolerance up to TIME_RATIO, direction right up to TIME_DIRECTION_RATIO."""
    lo, hi = sorted((abs(twin), abs(real)))
    if hi == 0:
        return OK
    if lo == 0:
        return WRONG
    ratio = hi / lo
    if ratio <= TIME_RATIO:
        return OK
    return DIRECTION if ratio <= TIME_DIRECTION_RATIO else WRONG


def compare(twin: Dict[str, float], real: Dict[str, float]) -> List[dict]:
    rows = []
    for k, tv in twin.items():
        if k not in real:
            continue
        rv = real[k]
        if k in ("time_s", "dd_seconds", "dd_MBps"):
            v = verdict_time(tv, rv)
        elif k in FIO_RATES:
            v = verdict_ratio(tv, rv)
        elif k in FIO_COUNTS:
            v = verdict_count(tv, rv)
        elif k in HOST_ONLY_EVENTS:
            v = verdict_count(tv, rv, HOST_SLACK_KB)
        elif k.startswith("d_") or k in dict(EVENT_FIGURES) or k in [g[0] for g in GAUGE_FIGURES]:
            v = verdict_count(tv, rv)
        else:
            continue
        rows.append({"figure": k, "twin": tv, "real": rv, "verdict": v})
    return rows


def _median_figures(runs: List[Dict[str, float]]) -> Dict[str, float]:
    keys = set().union(*runs) if runs else set()
    return {k: statistics.median([r[k] for r in runs if k in r]) for k in sorted(keys)}


# --- the command ------------------------------------------------------------------------------


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser(
        "validate",
        help="run a scenario in the twin and for real on this host, side by side",
        description="Run SCRIPT in the twin and for real on this host inside a temporary "
        "memory cgroup sized as the simulated machine's MemTotal (with a temporary swap file "
        "when the machine has swap), and print both sides per command with a verdict per "
        "figure. Needs root. Exit status: 0 ran, 2 bad input, 3 refused (cannot run here), "
        "130/143 interrupted; the host is restored in every case.",
    )
    p.add_argument("script", metavar="SCRIPT", help="scenario file")
    p.add_argument("--machine", "-m", default="", metavar="PRESET|FILE.toml",
                   help="machine (default: the scenario's '# machine:' line, else 'default')")
    p.add_argument("--set", "-s", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="override a machine field or sysctl, as for 'memtwin run'; repeatable")
    from .cli import _seed

    p.add_argument("--seed", type=_seed, default=0, metavar="N", help="twin seed (default 0)")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run the real side N times and compare the medians (default 1)")
    p.add_argument("--dir", metavar="DIR", default=None,
                   help="where to make the temporary working directory (default: the system's "
                   "temporary directory; must be a disk filesystem, not tmpfs)")
    p.add_argument("--twin-memcg", action="store_true",
                   help="run the twin's side in a memory cgroup with the real side's limits, on "
                   "a machine four times larger, so that both sides reclaim by cgroup reclaim")
    p.add_argument("--json", metavar="FILE", help="write the full record as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the summary")
    p.set_defaults(handler=cmd_validate)


def host_facts(cg_version: Optional[int]) -> dict:
    mi = hostrun.meminfo()
    return {
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "cpu_model": hostrun.cpu_model(),
        "cpus": os.cpu_count(),
        "mem_total": mi.get("MemTotal"),
        "mem_available": mi.get("MemAvailable"),
        "cgroup_version": cg_version,
        "kdamond": hostrun.kdamond_running(),
        "swaps_before": hostrun.read_text("/proc/swaps").splitlines()[1:],
    }


def by_construction(facts: dict, swap: int, twin_memcg: bool = False) -> List[str]:
    if twin_memcg:
        first = ("both sides run in a memory cgroup with the same limits (--twin-memcg): "
                 "reclaim is memcg limit reclaim on both; the twin's machine has four times "
                 "the limit of RAM, so its host never reclaims globally")
    else:
        first = ("the real run is limited by a memory cgroup: reclaim there is memcg limit "
                 "reclaim (direct, no kswapd, no zone watermarks); the twin has no memory "
                 "cgroups and reclaims globally (kswapd from the low watermark, direct below min)")
    notes = [
        first,
        "host /proc/vmstat counters and free/vmstat tables are the whole host's (other tenants "
        "included); the page gauges on the real side are the cgroup's memory.stat",
        "dirty limits on the host are computed from the host's memory, not the cgroup's "
        + ("(cgroup v1 has no per-cgroup dirty throttling)" if facts["cgroup_version"] == 1
           else "(cgroup v2 writeback also applies the cgroup's own domain)"),
        "sync and drop_caches act on the whole host; other tenants share the disk",
    ]
    notes.append("reclaim is compared by list (pgscan_anon/file, pgsteal_anon/file), not by "
                 "reclaimer: a cgroup's limit reclaim is not counted in pgscan_kswapd/direct")
    notes.append("the real run's processes have transparent huge pages disabled "
                 "(prctl PR_SET_THP_DISABLE), as the twin models 4 KiB pages only")
    if facts["kdamond"]:
        notes.append("a DAMON reclaimer (kdamond) runs on this host: it may evict page cache "
                     "left idle for ~30 s, which the twin does not model")
    if swap:
        notes.append("the swap file is a host-wide swap device while it is on; its speed is "
                     "the host filesystem's")
    return notes


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        text = read_scenario(args.script)
    except OSError as e:
        raise MemtwinError(f"cannot read scenario '{args.script}': {e.strerror or e}") from None
    if args.repeat < 1:
        raise MemtwinError("--repeat must be at least 1")
    if args.dir is not None and not os.path.isdir(args.dir):
        raise MemtwinError(f"--dir '{args.dir}' is not a directory")
    if args.json:
        from .cli import _check_writable

        _check_writable(args.json)
    machine = resolve_machine(text, args.machine)
    # The machine first (bad input, too large), then what the host can run, then the twin;
    # nothing on the host changes before all of these passed.
    facts_m = twin_machine_facts(machine, args.sets, args.seed)
    try:
        items = parse_script(text, args.script)
        check_real(items, args.script)
        if os.geteuid() != 0:
            raise Refused("validate needs root (it creates a memory cgroup and a swap file)")
        cg_version, _ = hostrun.find_memory_hierarchy()
        limit = int(facts_m["MemTotal"])
        swap = int(facts_m["SwapTotal"])
        avail = hostrun.meminfo().get("MemAvailable", 0)
        if limit + (256 << 20) > avail:
            raise Refused(f"the machine's MemTotal ({limit >> 20} MiB) does not fit in this "
                          f"host's available memory ({avail >> 20} MiB) with 256 MiB to spare")
        tmp_parent = args.dir or None
        kind = hostrun.fs_type(tmp_parent or os.environ.get("TMPDIR", "/tmp"))
        if kind in ("tmpfs", "ramfs"):
            raise Refused(f"the working directory would be on {kind}; give --dir on a disk filesystem")
        if getattr(args, "twin_memcg", False):
            swp = int(facts_m["sysctls"].get("vm.swappiness", "60"))
            ttext, tsets, skip = memcg_wrap(text, args.sets, limit, swap, swp, cg_version)
            twin = run_twin(ttext, args.script, machine, tsets, args.seed)
            twin["commands"] = twin["commands"][skip:]
        else:
            twin = run_twin(text, args.script, machine, args.sets, args.seed)
        if len(items) != len(twin["commands"]):
            raise Refused(f"{args.script}: the twin ran {len(twin['commands'])} commands where "
                          f"validate parsed {len(items)}; write one simple command per line")
    except Refused as e:
        sys.stderr.write(f"memtwin: cannot validate: {e}\n")
        return EXIT_REFUSED

    facts = host_facts(cg_version)
    swappiness = int(facts_m["sysctls"].get("vm.swappiness", "60"))
    old_term = hostrun.install_sigterm()
    holder: List[HostSession] = []
    status = 0
    runs: List[List[dict]] = []
    try:
        session = hostrun.open_session(tmp_parent, holder)
        if swap:
            session.make_swap(swap)
        for _ in range(args.repeat):
            runs.append(run_real_once(session, items, limit, swap, swappiness, facts_m["sysctls"]))
        notes = list(session.notes)
        if any("/proc/sys/vm/drop_caches" in t for it in items for _, _, t in it.redirects):
            notes.append("'echo N > /proc/sys/vm/drop_caches' dropped the whole host's clean "
                         "page cache (every tenant's), not only the cgroup's; it changes no setting")
    except Refused as e:
        sys.stderr.write(f"memtwin: cannot validate: {e}\n")
        status = EXIT_REFUSED
    except KeyboardInterrupt:
        status = 130
    except hostrun.Terminated:
        status = 143
    finally:
        problems = holder[0].close() if holder else []
        import signal as _signal

        _signal.signal(_signal.SIGTERM, old_term)  # type: ignore[arg-type]
        for p in problems:
            sys.stderr.write(f"memtwin: warning: could not undo: {p}\n")
    if status:
        if status in (130, 143):
            restored = "the host was restored" if not problems else "see the warnings above"
            sys.stderr.write(f"memtwin: validate interrupted; {restored}\n")
        return status
    if problems:
        return 1

    report = build_report(args, machine, text, twin, runs, facts, facts_m, limit, swap, notes)
    if not args.quiet:
        sys.stdout.write(format_report(report))
    else:
        sys.stdout.write(format_summary(report))
    sys.stdout.flush()
    if args.json:
        from .cli import _emit

        _emit(args.json, lambda f: (json.dump(report, f, separators=(",", ":")), f.write("\n")))
    return 0


def build_report(args, machine, text, twin, runs, facts, facts_m, limit, swap, notes) -> dict:
    v = facts["cgroup_version"]
    commands = []
    for i, tc in enumerate(twin["commands"]):
        tf = twin_figures(tc)
        rf = _median_figures([real_figures(run[i], v) for run in runs])
        commands.append({
            "source": tc["source"],
            "twin": {"time_s": tc["time_s"], "output": tc["output"], "exit_status": tc["exit_status"]},
            "real": [{"time_s": run[i]["time_s"], "output": run[i]["output"],
                      "exit_status": run[i]["exit_status"]} for run in runs],
            "figures": compare(tf, rf),
        })
    # Overall: from the first command's start to the last one's end.
    t_all = {"vmstat_start": twin["commands"][0]["vmstat_start"], "vmstat_end": twin["commands"][-1]["vmstat_end"],
             "time_s": sum(c["time_s"] for c in twin["commands"]), "output": ""}
    r_all = []
    for run in runs:
        r_all.append(real_figures({"vmstat_start": run[0]["vmstat_start"], "vmstat_end": run[-1]["vmstat_end"],
                                   "memstat_start": run[0]["memstat_start"], "memstat_end": run[-1]["memstat_end"],
                                   "time_s": sum(c["time_s"] for c in run), "output": ""}, v))
    overall = compare(twin_figures(t_all), _median_figures(r_all))
    verdicts = [r["verdict"] for c in commands for r in c["figures"]] + [r["verdict"] for r in overall]
    return {
        "scenario": {"path": args.script, "text": text},
        "machine": machine,
        "sets": args.sets,
        "seed": args.seed,
        "repeat": args.repeat,
        "host": facts,
        "cgroup": {"version": v, "limit_bytes": limit, "swap_bytes": swap,
                   "limit_is": "the simulated machine's MemTotal",
                   "twin_in_memcg": bool(getattr(args, "twin_memcg", False))},
        "twin_machine": facts_m,
        "by_construction": by_construction(facts, swap, bool(getattr(args, "twin_memcg", False))) + notes,
        "tolerances": {"count_rel": COUNT_REL_TOL, "count_slack_pages": COUNT_SLACK_PAGES,
                       "host_slack_kb": HOST_SLACK_KB,
                       "time_ratio": TIME_RATIO, "time_direction_ratio": TIME_DIRECTION_RATIO,
                       "time_floor_s": TIME_FLOOR_S},
        "commands": commands,
        "overall": overall,
        "summary": {k: verdicts.count(k) for k in (OK, DIRECTION, WRONG)},
        "twin_raw": twin,
        "real_raw": runs,
    }


def _fmt(v: float) -> str:
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}"
    return str(int(v))


def _table(rows: List[dict], skip_zero: bool = True) -> List[str]:
    out = [f"    {'figure':<26}{'twin':>12}{'real':>12}  verdict"]
    for r in rows:
        if skip_zero and r["twin"] == 0 and r["real"] == 0:
            continue
        out.append(f"    {r['figure']:<26}{_fmt(r['twin']):>12}{_fmt(r['real']):>12}  {r['verdict']}")
    return out


def format_report(rep: dict) -> str:
    h = rep["host"]
    lines = [
        f"memtwin validate {rep['scenario']['path']} on machine {rep['machine']}",
        f"host: Linux {h['kernel']}, {h['cpu_model']}, {h['cpus']} CPUs, "
        f"{h['mem_total'] >> 20} MiB; cgroup v{h['cgroup_version']}; kdamond "
        f"{'running' if h['kdamond'] else 'absent'}",
        f"real side: memory cgroup limit {rep['cgroup']['limit_bytes'] >> 20} MiB "
        f"({rep['cgroup']['limit_is']}), swap {rep['cgroup']['swap_bytes'] >> 20} MiB; "
        f"{rep['repeat']} run(s), medians compared",
        "differs by construction:",
    ]
    lines += [f"  - {n}" for n in rep["by_construction"]]
    lines.append("units: time_s/dd_seconds in s, dd_MBps in MB/s, *_kb in KiB, other counters in "
                 "4 KiB pages (d_* = change over the command, else value at its end)")
    for i, c in enumerate(rep["commands"], 1):
        lines.append("")
        lines.append(f"[{i}] {c['source']}")
        tout = c["twin"]["output"].rstrip("\n")
        rout = c["real"][0]["output"].rstrip("\n") if c["real"] else ""
        if tout or rout:
            lines.append("  twin:")
            lines += ["    | " + l for l in tout.splitlines()]
            lines.append("  real:")
            lines += ["    | " + l for l in rout.splitlines()]
        lines += _table(c["figures"])
    lines.append("")
    lines.append("overall (whole script):")
    lines += _table(rep["overall"])
    lines.append("")
    lines.append(format_summary(rep).rstrip("\n"))
    return "\n".join(lines) + "\n"


def format_summary(rep: dict) -> str:
    s = rep["summary"]
    return f"verdicts: {s[OK]} {OK}, {s[DIRECTION]} {DIRECTION}, {s[WRONG]} {WRONG}\n"
