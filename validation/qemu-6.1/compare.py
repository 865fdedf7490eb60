#!/usr/bin/env python3
"""Per-step summaries of the reference guest's runs and of the twin, and their table.

    compare.py real RUNDIR OUT.json        summarize one lab result folder (run.sh OUTDIR)
    compare.py twin TRANSCRIPT OUT.json    summarize `memtwin run SCENARIO/twin.sh` output
    compare.py table SCENARIO_DIR          markdown table: twin (and the idle-anon variant) vs real min-max
    compare.py table SCENARIO_DIR REAL_PREFIX A.json:TITLE B.json:TITLE
                                           the same for other real runs (e.g. real-nothp-) and twins

A summary holds, per step (the guest script's `step LABEL` / the twin's `echo STEP LABEL`), the
/proc/vmstat deltas of the counters below, the memory figures after the step (swpd, free,
buff, cache in kB, as vmstat prints them) and dd's summary line.
"""
import json
import os
import platform
import re
import sys

COUNTERS = [
    "pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct",
    "pgsteal_anon", "pgsteal_file", "pgscan_anon", "pgscan_file", "allocstall",
    "pswpin", "pswpout", "pgactivate", "pgdeactivate", "pgrotated",
    "workingset_refault_anon", "workingset_refault_file",
    "workingset_activate_anon", "workingset_activate_file", "oom_kill",
]
MEM = ["swpd", "free", "buff", "cache"]
DD_RE = re.compile(r"^\d+ bytes .* copied, ([0-9.]+) s, ([0-9.]+ [kMG]?B/s)$")


def parse_vmstat(text):
    d = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            d[parts[0]] = int(parts[1])
    d["allocstall"] = sum(v for k, v in d.items() if k.startswith("allocstall_"))
    return d


def delta(a, b):
    return {k: b.get(k, 0) - a.get(k, 0) for k in COUNTERS}


def mem_from_meminfo(mi):
    """vmstat's swpd/free/buff/cache (kB) from /proc/meminfo fields (kB)."""
    return {
        "swpd": mi["SwapTotal"] - mi["SwapFree"],
        "free": mi["MemFree"],
        "buff": mi["Buffers"],
        "cache": mi["Cached"] + mi.get("SReclaimable", 0),
    }


def real(rundir):
    meta = json.load(open(os.path.join(rundir, "meta.json")))
    g = os.path.join(rundir, "guest")
    start = parse_vmstat(open(os.path.join(g, "vmstat.start")).read())
    # samples.csv: t_s, vm.*, mi.* (kB); the memory after a step is the first sample at or
    # after the step's end marker (guest uptime, the same clock).
    rows = []
    with open(os.path.join(rundir, "samples.csv")) as f:
        header = f.readline().strip().split(",")
        for line in f:
            v = line.strip().split(",")
            if len(v) == len(header):
                try:
                    rows.append({k: float(x) for k, x in zip(header, v)})
                except ValueError:
                    pass
    steps, prev = [], start
    files = sorted(os.listdir(os.path.join(g, "steps")))
    out = open(os.path.join(rundir, "script.stdout")).read().splitlines()
    ends, dds, cur_dd = [], [], None
    for line in out:
        m = DD_RE.match(line)
        if m:
            cur_dd = line.split("copied, ")[1]
        m = re.match(r"^STEP (\d+) (\S+) end uptime=([0-9.]+) rc=(\d+) wall_s=([0-9.]+)", line)
        if m:
            ends.append((m.group(2), float(m.group(3)), int(m.group(4)), float(m.group(5))))
            dds.append(cur_dd)
            cur_dd = None
    for i, fn in enumerate(files):
        cur = parse_vmstat(open(os.path.join(g, "steps", fn)).read())
        label, up, rc, wall = ends[i]
        mem = None
        for r in rows:
            if r["t_s"] >= up:
                mi = {k[3:]: int(v) for k, v in r.items() if k.startswith("mi.")}
                mem = mem_from_meminfo(mi)
                break
        steps.append({"step": label, "wall_s": wall, "rc": rc, "dd": dds[i],
                      "vmstat": delta(prev, cur), "mem_kb": mem})
        prev = cur
    end = parse_vmstat(open(os.path.join(g, "vmstat.end")).read())
    mi_end = {}
    for line in open(os.path.join(g, "meminfo.end")):
        k, v = line.split(":", 1)
        mi_end[k] = int(v.split()[0])
    dmesg = open(os.path.join(g, "dmesg.txt")).read()
    return {
        "side": "real",
        "kernel_release": meta.get("kernel_release"),
        "kernel_version": meta.get("kernel_version"),
        "host": {"qemu": meta.get("qemu"), "accel": meta.get("accel"),
                 "host_kernel": platform.release(), "host_cpu": cpu_model()},
        "machine": {"cpus": meta.get("cpus"), "ram": meta.get("ram"), "swap_mb": meta.get("swap_mb"),
                    "memtotal_kb": meta.get("guest_memtotal_kb"),
                    "swaptotal_kb": meta.get("guest_swaptotal_kb"),
                    "disk_cache": meta.get("disk_cache")},
        "sysctl": meta.get("guest"),
        "script_wall_s": meta.get("script_wall_s_guest"),
        "oom_kills": dmesg.count("Killed process"),
        "whole": delta(start, end),
        "mem_end_kb": mem_from_meminfo(mi_end),
        "steps": steps,
    }


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def twin(path):
    text = open(path).read()
    # blocks: "# cmd" lines split the transcript; a block "STEP label" opens a step
    blocks, cur = [], None
    for line in text.splitlines():
        if line.startswith("# "):
            cur = [line[2:], []]
            blocks.append(cur)
        elif cur is not None:
            cur[1].append(line)
    steps, prev, label, dd, start, last = [], None, None, None, None, None
    for cmd, lines in blocks:
        body = "\n".join(lines)
        if cmd.startswith("echo STEP "):
            label, dd = cmd.split()[2], None
            continue
        for line in lines:
            if DD_RE.match(line):
                dd = line.split("copied, ")[1]
        if cmd == "cat /proc/vmstat /proc/meminfo":
            vm = parse_vmstat(body)
            if label is None:
                # the snapshot before the first step (the guest's vmstat.start)
                prev = start = vm
                continue
            mi = {}
            for line in lines:
                m = re.match(r"^(\w+(?:\(\w+\))?):\s+(\d+) kB$", line)
                if m:
                    mi[m.group(1)] = int(m.group(2))
            steps.append({"step": label, "dd": dd, "vmstat": delta(prev, vm),
                          "mem_kb": mem_from_meminfo(mi)})
            prev, last, label = vm, vm, None
    dmesg_kills = len(re.findall(r"Killed process", text))
    return {"side": "twin", "transcript": os.path.basename(path),
            "oom_kills": dmesg_kills, "whole": delta(start, last),
            "mem_end_kb": steps[-1]["mem_kb"] if steps else None, "steps": steps}


def fmt(v):
    return f"{v:,}".replace(",", " ") if isinstance(v, int) else str(v)


DEFAULT_TWINS = (("twin-before.json", "twin, idle anon active (before)"),
                 ("twin-idle-anon-inactive.json", "twin now (idle anon inactive)"))


def table(sdir, least=100, real_prefix="real-r", twins=DEFAULT_TWINS):
    """One markdown table: the steps where some side counts at least `least` of a figure,
    those figures, then swpd/free/cache after the step and dd's rate (real: min - max).
    Real runs are the files REAL_PREFIX*.json; `twins` are two (file, column title)."""
    runs = sorted(f for f in os.listdir(sdir) if f.startswith(real_prefix) and f.endswith(".json"))
    reals = [json.load(open(os.path.join(sdir, f))) for f in runs]
    sides = []
    for name, _ in twins:
        p = os.path.join(sdir, name)
        sides.append(json.load(open(p)) if os.path.exists(p) else None)

    def get(s, i, k):
        if s is None or i >= len(s["steps"]):
            return None
        st = s["steps"][i]
        if k in MEM:
            return (st.get("mem_kb") or {}).get(k)
        if k == "dd":
            return st.get("dd")
        return st["vmstat"].get(k)

    def rng(vals, mem=False):
        nums = [v for v in vals if v is not None]
        if not nums:
            return ""
        lo, hi = min(nums), max(nums)
        if mem:
            lo, hi = lo // 1024, hi // 1024
        return fmt(lo) if lo == hi else f"{fmt(lo)} – {fmt(hi)}"

    out = [f"| step | figure | {twins[0][1]} | {twins[1][1]} | real 6.1 (min – max) |",
           "|---|---|---|---|---|"]
    for i in range(len(reals[0]["steps"])):
        label = f"{i + 1} `{reals[0]['steps'][i]['step']}`"
        keys = [k for k in COUNTERS
                if any((get(x, i, k) or 0) >= least for x in reals + sides)]
        if not keys:
            continue
        for k in keys:
            tv = [get(x, i, k) for x in sides]
            out.append(f"| {label} | {k} | {fmt(tv[0]) if tv[0] is not None else ''} | "
                       f"{fmt(tv[1]) if tv[1] is not None else ''} | {rng([get(r, i, k) for r in reals])} |")
            label = ""
        for k in ("swpd", "free", "cache"):
            tv = [get(x, i, k) for x in sides]
            out.append(f"| | {k} after (MB) | {fmt(tv[0] // 1024) if tv[0] is not None else ''} | "
                       f"{fmt(tv[1] // 1024) if tv[1] is not None else ''} | "
                       f"{rng([get(r, i, k) for r in reals], mem=True)} |")
        dd = [get(r, i, "dd") for r in reals]
        if any(dd):
            tv = [get(x, i, "dd") for x in sides]
            rates = " / ".join(d.split(", ")[1] for d in dd if d)
            out.append(f"| | dd rate | {tv[0].split(', ')[1] if tv[0] else ''} | "
                       f"{tv[1].split(', ')[1] if tv[1] else ''} | {rates} (TCG) |")
    ooms = [r["oom_kills"] for r in reals]
    tk = [str(x["oom_kills"]) if x else "" for x in sides]
    out.append(f"| all | OOM kills | {tk[0]} | {tk[1]} | {rng(ooms)} |")
    out.append(f"\n({len(reals)} real runs: {', '.join(runs)})")
    return "\n".join(out)


def main(argv):
    if len(argv) == 3 and argv[0] in ("real", "twin"):
        d = real(argv[1]) if argv[0] == "real" else twin(argv[1])
        with open(argv[2], "w") as f:
            json.dump(d, f, indent=1, sort_keys=True)
            f.write("\n")
        return 0
    if len(argv) == 2 and argv[0] == "table":
        print(table(argv[1]))
        return 0
    if len(argv) == 5 and argv[0] == "table":
        # table DIR REAL_PREFIX TWIN_A.json:TITLE TWIN_B.json:TITLE
        twins = tuple(tuple(a.split(":", 1)) for a in argv[3:5])
        print(table(argv[1], real_prefix=argv[2], twins=twins))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
