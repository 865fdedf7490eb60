#!/usr/bin/env python3
"""Capture golden outputs of the REAL free, vmstat and top (procps-ng 4.0.2, Debian 12) and
of the real Python iotop code, for memtwin's formatter tests.

How: each case describes one or more snapshots in memtwin's units (kB, ns, counters). This
script renders them as the kernel would (/proc/meminfo, /proc/stat with USER_HZ ticks,
/proc/vmstat, /proc/uptime, /proc/loadavg, /proc/PID/{stat,statm,cmdline} owned by the
task's user) into a tmpfs directory, bind-mounts that directory over /proc in a private mount
namespace (`unshare -m`) and runs the real tool there. Interval tools get the next snapshot
written in place while they sleep. The tool's stdout is stored verbatim after the snapshots;
tests/golden.rs parses the same file, builds `Snapshot`s and compares byte for byte.

iotop reads taskstats over netlink, which cannot be faked this way, so its cases are rendered
by the installed iotop's own Python code (/usr/lib/python3/dist-packages/iotop, Debian 12's
0.6-42) driven with stub process objects: the formatting, sorting and filtering are iotop's.

Run as root on a Debian 12 host with procps 2:4.0.2-3 and iotop installed:
    python3 crates/tools/tests/golden/capture.py            # rewrites tests/golden/*.case
    python3 crates/tools/tests/golden/capture.py free_      # only cases whose name starts so
"""

import calendar
import os
import pwd
import re
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = "/dev/shm/memtwin-fakeproc"   # tmpfs: readdir lists newest entries first
NS_PER_TICK = 10_000_000

MEM_FIELDS = ["MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SwapCached", "Active",
              "Inactive", "Active(anon)", "Inactive(anon)", "Active(file)", "Inactive(file)",
              "Unevictable", "Mlocked", "SwapTotal", "SwapFree", "Zswap", "Zswapped", "Dirty",
              "Writeback", "AnonPages", "Mapped", "Shmem", "KReclaimable", "Slab", "SReclaimable",
              "SUnreclaim", "KernelStack", "PageTables", "CommitLimit", "Committed_AS"]


# --------------------------------------------------------------------------------------------
# snapshots

class Task:
    def __init__(self, pid, comm, user="root", state="S", prio=20, nice=0, virt=0, res=0, shr=0,
                 swap=0, utime=0, stime=0, read=0, write=0, swapin=0, blkio=0, start=0,
                 kthread=0, cmdline=""):
        self.__dict__.update(locals())
        del self.__dict__["self"]

    def spec(self):
        keys = ["pid", "comm", "user", "state", "prio", "nice", "virt", "res", "shr", "swap",
                "utime", "stime", "read", "write", "swapin", "blkio", "start", "kthread"]
        return "task " + " ".join("%s=%s" % (k, getattr(self, k)) for k in keys) + \
            " cmdline=" + self.cmdline


class Snap:
    def __init__(self, uptime_ns, ncpus=2, mem=None, vm=None, cpu=None, intr=0, ctxt=0,
                 processes=0, running=1, blocked=0, loadavg=(0.0, 0.0, 0.0), tasks=()):
        self.uptime_ns = uptime_ns
        self.ncpus = ncpus
        self.mem = dict(mem or {})
        self.vm = dict(vm or {})
        self.cpu = list(cpu or [0] * 8)
        self.intr, self.ctxt, self.processes = intr, ctxt, processes
        self.running, self.blocked = running, blocked
        self.loadavg = loadavg
        self.tasks = list(tasks)

    def spec(self):
        out = ["snapshot", "uptime_ns %d" % self.uptime_ns, "ncpus %d" % self.ncpus,
               "intr %d" % self.intr, "ctxt %d" % self.ctxt, "processes %d" % self.processes,
               "procs_running %d" % self.running, "procs_blocked %d" % self.blocked,
               "loadavg %.2f %.2f %.2f" % self.loadavg,
               "cpu " + " ".join(str(v) for v in self.cpu)]
        for k in MEM_FIELDS:
            if self.mem.get(k, 0):
                out.append("mem %s %d" % (k, self.mem[k]))
        for k, v in self.vm.items():
            out.append("vm %s %d" % (k, v))
        for t in self.tasks:
            out.append(t.spec())
        out.append("end")
        return "\n".join(out)


def write(path, text):
    # Overwrite in place: the tools keep some /proc files open and re-read them.
    with open(path, "w") as f:
        f.write(text)


def render(s, boot_epoch):
    """Write snapshot s into FAKE as the kernel would show it."""
    write(FAKE + "/meminfo",
          "".join("%-16s%8d kB\n" % (k + ":", s.mem.get(k, 0)) for k in MEM_FIELDS))
    names = ["pgpgin", "pgpgout", "pswpin", "pswpout"]
    vm = dict((n, 0) for n in names)
    vm.update(s.vm)
    write(FAKE + "/vmstat", "".join("%s %d\n" % kv for kv in vm.items()))
    t = [v // NS_PER_TICK for v in s.cpu]
    lines = ["cpu  " + " ".join(str(v) for v in t) + " 0 0"]
    for c in range(s.ncpus):
        share = [v // s.ncpus + (v % s.ncpus if c == 0 else 0) for v in t]
        lines.append("cpu%d " % c + " ".join(str(v) for v in share) + " 0 0")
    lines += ["intr %d 0 0" % s.intr, "ctxt %d" % s.ctxt, "btime %d" % boot_epoch,
              "processes %d" % s.processes, "procs_running %d" % s.running,
              "procs_blocked %d" % s.blocked, "softirq 0 0 0 0 0 0 0 0 0 0 0"]
    write(FAKE + "/stat", "\n".join(lines) + "\n")
    up = s.uptime_ns
    idle = s.cpu[3] // max(1, s.ncpus)
    write(FAKE + "/uptime", "%d.%02d %d.%02d\n" % (up // 10**9, (up % 10**9) // NS_PER_TICK,
                                                   idle // 10**9, (idle % 10**9) // NS_PER_TICK))
    write(FAKE + "/loadavg", "%.2f %.2f %.2f %d/%d %d\n" % (
        s.loadavg[0], s.loadavg[1], s.loadavg[2], s.running, max(1, len(s.tasks)), 4242))
    # Task directories, recreated in descending PID order so that readdir (tmpfs: newest
    # first) lists them in ascending order, as the real /proc does.
    for name in os.listdir(FAKE):
        if name.isdigit():
            shutil.rmtree(os.path.join(FAKE, name))
    for tk in sorted(s.tasks, key=lambda x: -x.pid):
        d = "%s/%d" % (FAKE, tk.pid)
        os.mkdir(d)
        flags = 0x00200000 if tk.kthread else 0x00400100
        stat = ("%d (%s) %s 1 %d %d 0 -1 %d 0 0 0 0 %d %d 0 0 %d %d 1 0 %d %d %d "
                "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n") % (
            tk.pid, tk.comm, tk.state, tk.pid, tk.pid, flags, tk.utime // NS_PER_TICK,
            tk.stime // NS_PER_TICK, tk.prio, tk.nice, tk.start // NS_PER_TICK,
            tk.virt * 1024, tk.res // 4)
        write(d + "/stat", stat)
        write(d + "/statm", "%d %d %d 0 0 0 0\n" % (tk.virt // 4, tk.res // 4, tk.shr // 4))
        write(d + "/cmdline", "\0".join(tk.cmdline.split(" ")) + "\0" if tk.cmdline else "")
        uid = pwd.getpwnam(tk.user).pw_uid
        states = {"R": "R (running)", "S": "S (sleeping)", "D": "D (disk sleep)",
                  "Z": "Z (zombie)", "I": "I (idle)"}
        status = ["Name:\t%s" % tk.comm[:15], "Umask:\t0022", "State:\t%s" % states[tk.state],
                  "Tgid:\t%d" % tk.pid, "Ngid:\t0", "Pid:\t%d" % tk.pid, "PPid:\t1",
                  "TracerPid:\t0", "Uid:\t%d\t%d\t%d\t%d" % ((uid,) * 4),
                  "Gid:\t%d\t%d\t%d\t%d" % ((uid,) * 4), "FDSize:\t64", "Groups:\t",
                  "NStgid:\t%d" % tk.pid, "NSpid:\t%d" % tk.pid, "NSpgid:\t%d" % tk.pid,
                  "NSsid:\t%d" % tk.pid]
        if not tk.kthread and tk.state != "Z":
            status += ["VmPeak:\t%8d kB" % tk.virt, "VmSize:\t%8d kB" % tk.virt,
                       "VmLck:\t%8d kB" % 0, "VmPin:\t%8d kB" % 0, "VmHWM:\t%8d kB" % tk.res,
                       "VmRSS:\t%8d kB" % tk.res, "RssAnon:\t%8d kB" % (tk.res - tk.shr),
                       "RssFile:\t%8d kB" % tk.shr, "RssShmem:\t%8d kB" % 0,
                       "VmData:\t%8d kB" % 0, "VmStk:\t%8d kB" % 132, "VmExe:\t%8d kB" % 0,
                       "VmLib:\t%8d kB" % 0, "VmPTE:\t%8d kB" % 0, "VmSwap:\t%8d kB" % tk.swap]
        status += ["Threads:\t1", "SigQ:\t0/95000", "SigPnd:\t0000000000000000",
                   "ShdPnd:\t0000000000000000", "SigBlk:\t0000000000000000",
                   "SigIgn:\t0000000000000000", "SigCgt:\t0000000000000000",
                   "voluntary_ctxt_switches:\t0", "nonvoluntary_ctxt_switches:\t0"]
        write(d + "/status", "\n".join(status) + "\n")
        # The single thread of the process, for top -H.
        td = "%s/task/%d" % (d, tk.pid)
        os.makedirs(td)
        for f in ("stat", "statm", "cmdline", "status"):
            shutil.copy(d + "/" + f, td + "/" + f)
        uid = pwd.getpwnam(tk.user).pw_uid
        for root, dirs, files in os.walk(d):
            for p in [root] + [os.path.join(root, f) for f in files]:
                os.chown(p, uid, uid)


def fresh_fake(pid_max):
    if os.path.exists(FAKE):
        shutil.rmtree(FAKE)
    os.makedirs(FAKE + "/sys/kernel")
    os.makedirs(FAKE + "/self/task")
    shutil.copy("/proc/cpuinfo", FAKE + "/cpuinfo")
    write(FAKE + "/sys/kernel/pid_max", "%d\n" % pid_max)
    write(FAKE + "/sys/kernel/osrelease", open("/proc/sys/kernel/osrelease").read())
    write(FAKE + "/self/stat", open("/proc/self/stat").read())
    write(FAKE + "/self/status", open("/proc/self/status").read())


def utmp_records(n):
    rec = b""
    for i in range(n):
        # struct utmp (x86_64): type, pid, line, id, user, host, exit, session, tv, addr, unused
        rec += struct.pack("hi32s4s32s256shhi2i4i20s", 7, 1000 + i, b"pts/%d" % i, b"ts/%d" % i,
                           b"root", b"", 0, 0, 0, 0, 0, 0, 0, 0, 0, b"")
    assert len(rec) == 384 * n
    return rec


def run_tool(argv, snaps, boot_epoch, waits, users=0):
    """Start argv with FAKE over /proc; before each later snapshot wait waits[i] seconds."""
    env = {"PATH": "/usr/bin:/bin", "TERM": "xterm", "LC_ALL": "C", "TZ": "UTC", "HOME": "/root"}
    render(snaps[0], boot_epoch)
    utmp = FAKE + "-utmp"
    with open(utmp, "wb") as f:
        f.write(utmp_records(users))
    # A private tmpfs on /run holds the utmp that top counts users from.
    inner = ("mount --bind %s /proc && mount -t tmpfs none /run && cp %s /run/utmp && "
             "exec \"$@\"") % (FAKE, utmp)
    p = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", inner, "sh"] + argv,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    t0 = time.time()
    for i, s in enumerate(snaps[1:]):
        time.sleep(max(0.0, t0 + waits[i] - time.time()))
        render(s, boot_epoch)
    out, err = p.communicate(timeout=120)
    if p.returncode != 0 or err:
        raise SystemExit("%s failed (%d): %s" % (argv, p.returncode, err.decode()))
    return out.decode()


# --------------------------------------------------------------------------------------------
# case files

def emit(name, tool, args, snaps, expected, opts=()):
    lines = ["# Captured by capture.py from the real %s on %s (do not edit by hand)." % (
        tool, os.uname().nodename), "tool " + tool, "args " + "\t".join(args)]
    for k, v in opts:
        lines.append("opt %s %s" % (k, v))
    for s in snaps:
        lines.append(s.spec())
    lines.append("expected")
    with open(os.path.join(HERE, name + ".case"), "w") as f:
        f.write("\n".join(lines) + "\n" + expected)
    print("wrote", name, file=sys.stderr)


def meminfo_from_host():
    m = {}
    for line in open("/proc/meminfo"):
        k, v = line.split(":")
        if k in MEM_FIELDS:
            m[k] = int(v.split()[0])
    return m


def host_snapshot():
    """A snapshot holding this host's own current counters."""
    vm = {}
    for line in open("/proc/vmstat"):
        k, v = line.split()
        if k in ("pgpgin", "pgpgout", "pswpin", "pswpout"):
            vm[k] = int(v)
    st = {}
    for line in open("/proc/stat"):
        f = line.split()
        st[f[0]] = f[1:]
    cpu = [int(v) * NS_PER_TICK for v in st["cpu"][:8]]
    ncpus = len([k for k in st if re.match(r"cpu\d+$", k)])
    up = open("/proc/uptime").read().split()[0]
    s, cs = up.split(".")
    return Snap(int(s) * 10**9 + int(cs) * NS_PER_TICK, ncpus=ncpus, mem=meminfo_from_host(), vm=vm,
                cpu=cpu, intr=int(st["intr"][0]), ctxt=int(st["ctxt"][0]),
                processes=int(st["processes"][0]), running=int(st["procs_running"][0]),
                blocked=int(st["procs_blocked"][0]))


def mem(total, free, avail, buffers, cached, srecl=0, shmem=0, swap_total=0, swap_free=0,
        active=0, inactive=0, commit_limit=0, committed=0):
    return {"MemTotal": total, "MemFree": free, "MemAvailable": avail, "Buffers": buffers,
            "Cached": cached, "SReclaimable": srecl, "KReclaimable": srecl, "Shmem": shmem,
            "SwapTotal": swap_total, "SwapFree": swap_free, "Active": active,
            "Inactive": inactive, "CommitLimit": commit_limit, "Committed_AS": committed}


# The article's machine (Qiita 2016): 1924020 kB RAM, 4128760 kB swap.
ARTICLE = mem(1924020, 1717524, 1730000, 184, 8280, srecl=5120, shmem=120,
              swap_total=4128760, swap_free=4128760, active=40000, inactive=30000,
              commit_limit=5090768, committed=180000)
SWAPPING = mem(1924020, 53072, 60110, 108, 20052, srecl=4000, shmem=96, swap_total=4128760,
               swap_free=4128760 - 50104, active=1700000, inactive=90000, commit_limit=5090768,
               committed=2500000)
# 64 GiB host: numbers above 2^24 kB (vmstat's float) and wider than the columns.
BIG = mem(65842544, 40123457, 60987653, 1234567, 17654321, srecl=987655, shmem=345679,
          swap_total=8388604, swap_free=8000001, active=12345679, inactive=9876543,
          commit_limit=41309876, committed=45678901)
TINY = mem(0, 0, 0, 0, 0)


def free_cases():
    sets = [("article", ARTICLE), ("swapping", SWAPPING), ("big", BIG), ("tiny", TINY)]
    optsets = [[], ["-w"], ["-h"], ["-m"], ["-g"], ["-b"], ["-t"], ["-l", "-v"], ["-h", "--si"],
               ["--kilo"], ["--mega", "-w", "-t"], ["--tebi"], ["-h", "-w", "-t", "-v"], ["--si"]]
    for sname, m in sets:
        for args in optsets:
            if sname != "big" and len(args) > 1 and args != ["-l", "-v"]:
                continue
            snap = Snap(1000 * 10**9, mem=m)
            fresh_fake(32768)
            out = run_tool(["free"] + args, [snap], 1700000000, [])
            tag = "".join(a.strip("-") for a in args) or "default"
            emit("free_%s_%s" % (sname, tag), "free", args, [snap], out)
    # free -s/-c: a table per reading, the next reading written while free sleeps.
    snaps = [Snap(1000 * 10**9, mem=ARTICLE), Snap(1001 * 10**9, mem=SWAPPING),
             Snap(1002 * 10**9, mem=BIG)]
    for name, args in (("free_count3", ["-c", "3"]), ("free_count2_seconds", ["-c", "2", "-s", "1"])):
        fresh_fake(32768)
        n = 3 if name == "free_count3" else 2
        out = run_tool(["free"] + args, snaps[:n], 1700000000, [0.5 + i for i in range(n - 1)])
        emit(name, "free", args, snaps[:n], out)
    # A live reading of this host.
    snap = host_snapshot()
    for args in ([], ["-w", "-t"], ["-h"]):
        fresh_fake(32768)
        out = run_tool(["free"] + args, [snap], 1700000000, [])
        emit("free_host_%s" % ("".join(a.strip("-") for a in args) or "default"), "free", args,
             [snap], out)


def vm_series(n, start_up_s=3600, ncpus=2, m=ARTICLE, rates=None):
    """n snapshots one second apart with the given per-second increments."""
    rates = rates or {}
    snaps = []
    base_cpu = [900 * 10**9 * ncpus // 2, 3 * 10**9, 400 * 10**9, 2600 * 10**9 * ncpus,
                35 * 10**9, 7 * 10**9, 12 * 10**9, 0]
    vm = {"pgpgin": 1234567, "pgpgout": 7654321, "pswpin": 1000, "pswpout": 5000}
    intr, ctxt = 9876543, 12345678
    cpu = list(base_cpu)
    for i in range(n):
        mm = dict(m)
        if "mem" in rates:
            mm = rates["mem"](i, mm)
        snaps.append(Snap((start_up_s + i) * 10**9, ncpus=ncpus, mem=mm, vm=dict(vm), cpu=list(cpu),
                          intr=intr, ctxt=ctxt, processes=4321 + i, running=1 + i % 3,
                          blocked=i % 2))
        for k in vm:
            vm[k] += rates.get(k, 0)
        intr += rates.get("intr", 0)
        ctxt += rates.get("ctxt", 0)
        for j, v in enumerate(rates.get("cpu", [0] * 8)):
            cpu[j] += v
    return snaps


def vmstat_cases():
    busy = {"pgpgin": 176, "pgpgout": 177156, "pswpin": 8, "pswpout": 12262, "intr": 653,
            "ctxt": 286, "cpu": [10**7, 0, 32 * 10**7, 0, 67 * 10**7, 0, 0, 0]}
    cases = [
        ("vmstat_article_1_4", ["1", "4"], vm_series(4, rates=busy)),
        ("vmstat_wide_1_3", ["-w", "1", "3"], vm_series(3, m=BIG, ncpus=8, rates=busy)),
        ("vmstat_active_units", ["-a", "-S", "M", "1", "3"], vm_series(3, m=BIG, rates=busy)),
        ("vmstat_once", [], vm_series(1, m=BIG, ncpus=4)),
        ("vmstat_y_1_2", ["-y", "1", "2"], vm_series(3, rates=busy)),
        ("vmstat_no_ticks", ["1", "3"],
         vm_series(3, rates={"cpu": [0] * 8})),
        ("vmstat_bigrates", ["1", "3"], vm_series(3, m=BIG, rates={
            "pgpgin": 2_000_000, "pgpgout": 987_654, "pswpin": 300_000, "pswpout": 150_000,
            "intr": 123_456, "ctxt": 2_345_678,
            "cpu": [2 * 10**8, 10**7, 5 * 10**8, 10**9, 3 * 10**8, 10**7, 2 * 10**7, 10**7]})),
        ("vmstat_stats", ["-s"], vm_series(1, m=BIG)),
        ("vmstat_stats_mb", ["-s", "-S", "m"], vm_series(1, m=SWAPPING)),
        ("vmstat_forks", ["-f"], vm_series(1)),
        ("vmstat_header_repeat", ["1", "24"], vm_series(24, rates=busy)),
    ]
    # CPUs taken offline: the summed ticks go backwards, the library zeroes every delta.
    back = vm_series(3, rates=busy)
    back[2].cpu = [v // 2 for v in back[1].cpu]
    cases.append(("vmstat_cpu_backwards", ["1", "3"], back))
    for name, args, snaps in cases:
        fresh_fake(32768)
        waits = [i + 0.5 for i in range(len(snaps) - 1)]
        out = run_tool(["vmstat"] + args, snaps, 1700000000, waits)
        emit(name, "vmstat", args, snaps, out, opts=[("boot_epoch", 1700000000)])
    # -t prints the real clock: record the boot time that makes the first stamp come out.
    snaps = vm_series(3, rates=busy)
    fresh_fake(32768)
    out = run_tool(["vmstat", "-t", "-w", "1", "3"], snaps, 1700000000, [0.5, 1.5])
    stamp = re.findall(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)$", out, re.M)[0]
    first = calendar.timegm(time.strptime(stamp, "%Y-%m-%d %H:%M:%S"))
    emit("vmstat_timestamp", "vmstat", ["-t", "-w", "1", "3"], snaps, out,
         opts=[("boot_epoch", first - snaps[0].uptime_ns // 10**9)])
    snap = host_snapshot()
    for args in ([], ["-w"], ["-s"]):
        fresh_fake(32768)
        out = run_tool(["vmstat"] + args, [snap], 1700000000, [])
        emit("vmstat_host_%s" % ("".join(a.strip("-") for a in args) or "default"), "vmstat",
             args, [snap], out, opts=[("boot_epoch", 1700000000)])


def top_tasks(k):
    """A process list whose CPU times advance by k seconds' worth per frame."""
    s = 10**9
    return [
        Task(1, "systemd", virt=167840, res=12880, shr=9180, utime=(3 + k) * s // 10,
             stime=2 * s + k * 10**7, start=10**7, cmdline="/sbin/init splash"),
        Task(2, "kthreadd", prio=20, kthread=1, start=10**7),
        Task(18, "migration/0", prio=-100, kthread=1, stime=15 * 10**7, start=2 * 10**7),
        Task(36, "kswapd0", kthread=1, stime=(40 + 12 * k) * 10**7, start=3 * 10**7),
        Task(88, "kworker/u16:3-flush-253:0", state="I", prio=20, kthread=1,
             stime=(7 + 3 * k) * 10**7, start=4 * 10**7),
        Task(611, "dd", state="D", virt=11280, res=2048, shr=1828, utime=(1 + 2 * k) * 10**7,
             stime=(250 + 93 * k) * 10**7, start=3000 * s, cmdline="dd if=/dev/zero of=test bs=1M count=512"),
        Task(612, "bash", user="daemon", nice=5, prio=25, virt=8352, res=5120, shr=3420,
             utime=4 * 10**7, start=2000 * s, cmdline="-bash"),
        Task(613, "postgres", user="www-data", virt=4_387_652, res=1_234_568, shr=987_652,
             utime=(36000 + 50 * k) * 10**7 * 100, stime=7 * 3600 * s, start=100 * s,
             cmdline="/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main"),
        Task(4000000, "a-very-long-command-name", user="nobody", state="R", nice=-5, prio=15,
             virt=25_000_000, res=17_000_000, shr=120, utime=(97 * 3600 + 5 * k) * s,
             start=3500 * s, cmdline="/opt/x/a-very-long-command-name --with --many --args"),
        Task(4000001, "zombie", state="Z", start=3590 * s),
    ]


def top_cases():
    def snaps_for(m=ARTICLE, ncpus=2, uptime_s=3600 + 1800, step=4, n=2):
        out = []
        for k in range(n):
            cpu = [(1000 + 250 * k) * 10**9, 10**9, (300 + 90 * k) * 10**9, (5000 + 200 * k) * 10**9,
                   (40 + 60 * k) * 10**9, 2 * 10**9, 3 * 10**9, (k * 10**8)]
            out.append(Snap((uptime_s + step * k) * 10**9 + 370 * 10**7 * (k % 2), ncpus=ncpus, mem=m,
                            cpu=cpu, loadavg=(1.25 + k, 0.5, 0.125), tasks=top_tasks(step * k)))
        return out
    cases = [
        ("top_default", ["-b", "-n", "2", "-d", "4"], snaps_for(), 32768, 0),
        ("top_pidmax7_users2", ["-bn2", "-d4"], snaps_for(m=SWAPPING, ncpus=1), 4194304, 2),
        ("top_wide_cmdline", ["-b", "-n", "2", "-d", "4", "-c", "-w", "132"],
         snaps_for(m=BIG, ncpus=8, uptime_s=3 * 86400 + 7200 + 61), 4194304, 1),
        ("top_sort_mem_gib", ["-b", "-n", "1", "-o", "%MEM", "-E", "g"], snaps_for(m=BIG, n=1), 32768, 1),
        ("top_sort_pid_asc_kib", ["-b", "-n", "1", "-o", "-PID", "-E", "k", "-e", "m"],
         snaps_for(m=BIG, n=1, uptime_s=86400 + 59), 32768, 1),
        ("top_idle_hidden", ["-b", "-n", "2", "-d", "4", "-i"], snaps_for(), 32768, 1),
        ("top_pids", ["-b", "-n", "2", "-d", "4", "-p", "611,1,36"], snaps_for(), 32768, 1),
        ("top_narrow", ["-b", "-n", "1", "-w", "60"], snaps_for(n=1, uptime_s=59), 32768, 1),
        ("top_user", ["-b", "-n", "2", "-d", "4", "-u", "www-data"], snaps_for(), 32768, 1),
        ("top_sort_command_threads", ["-b", "-n", "1", "-o", "COMMAND", "-H", "-e", "g"],
         snaps_for(n=1, uptime_s=4 * 86400), 32768, 1),
    ]
    for name, args, snaps, pid_max, users in cases:
        fresh_fake(pid_max)
        waits = [0.8 + 4 * i for i in range(len(snaps) - 1)]
        out = run_tool(["top"] + args, snaps, 1700000000, waits, users=users)
        walls = re.findall(r"^top - (\d\d):(\d\d):(\d\d) ", out, re.M)
        opts = [("pid_max", pid_max), ("users", users)]
        opts += [("wall", int(h) * 3600 + int(m_) * 60 + int(s)) for h, m_, s in walls]
        emit(name, "top", args, snaps, out, opts=opts)


# --------------------------------------------------------------------------------------------
# iotop: the installed iotop's code with stub processes

def iotop_render(args, prev, cur, actual, delayacct, pid_max, first=True):
    sys.path.insert(0, "/usr/lib/python3/dist-packages")
    import io
    import contextlib
    from iotop import ui, data
    # The options object main() would build from the command line.
    class O: pass
    o = O()
    o.only = "-o" in args
    o.batch = True
    o.iterations = 1
    o.delay_seconds = 1
    o.pids = []
    o.users = None
    o.uids = None
    o.processes = "-P" in args
    o.accumulated = "-a" in args
    o.kilobytes = "-k" in args
    o.time = False
    o.quiet = args.count("-q")
    o.help = True
    ui.MAX_PID_WIDTH = len(str(pid_max))
    ui.sysctl_task_delayacct = lambda: delayacct
    duration = (cur.uptime_ns - prev.uptime_ns) / 1e9

    def stats(t):
        st = data.Stats.build_all_zero()
        st.blkio_delay_total = t.blkio
        st.swapin_delay_total = t.swapin
        st.read_bytes = t.read
        st.write_bytes = t.write
        st.cancelled_write_bytes = 0
        return st

    class Thread:
        pass

    class Proc(data.ProcessInfo):
        def __init__(self, t):
            data.ProcessInfo.__init__(self, t.pid)
            self.t = t

        def get_user(self):
            return self.t.user

        def get_cmdline(self):
            t = self.t
            if t.kthread or not t.cmdline:
                return "[%s]" % t.comm
            parts = t.cmdline.split(" ")
            if parts[0].startswith("/"):
                parts[0] = parts[0][parts[0].rfind("/") + 1:]
            return " ".join(parts).strip()

        def get_ioprio(self):
            return "be/%d" % ((self.t.nice + 20) / 5)

    procs = {}
    total_r = total_w = 0
    data.Stats.has_blkio_delay_total = any(t.blkio for t in cur.tasks + prev.tasks)
    prevs = dict((t.pid, t) for t in prev.tasks)
    for t in sorted(cur.tasks, key=lambda x: x.pid):
        p = Proc(t)
        th = Thread()
        th.mark = False
        now = stats(t)
        if t.pid in prevs:
            th.stats_delta = data.Stats.build_all_zero()
            now.delta(stats(prevs[t.pid]), th.stats_delta)
        else:
            th.stats_delta = data.Stats.build_all_zero()
        p.threads = {t.pid: th}
        p.update_stats()
        total_r += th.stats_delta.read_bytes
        total_w += th.stats_delta.write_bytes
        procs[t.pid] = p

    class PL:
        pass
    pl = PL()
    pl.processes = procs
    pl.duration = duration
    u = ui.IOTopUI(None, pl, o)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        u.refresh_display(first, (total_r, total_w), actual, duration)
    return buf.getvalue()


def iotop_cases():
    s = 10**9

    def pair(step_ns, deltas, extra_new=()):
        base = [
            Task(1, "init", read=1000, write=2000, start=10**7, cmdline="/sbin/init"),
            Task(2, "kthreadd", kthread=1, start=10**7),
            Task(1009, "flush-253:0", kthread=1, write=10**9, blkio=5 * s, start=100 * s),
            Task(2071, "dd", write=5 * 10**8, blkio=3 * s, start=3000 * s,
                 cmdline="dd if=/dev/zero of=test bs=1M count=512"),
            Task(2200, "kswapd0", kthread=1, read=0, swapin=2 * s, start=50 * s),
            Task(2301, "postgres", user="www-data", nice=-5, read=12345678, write=999, start=200 * s,
                 cmdline="/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main"),
            Task(2302, "longuser", user="systemd-timesync", nice=19, start=200 * s,
                 cmdline="/usr/bin/sleep 100"),
        ]
        prev = Snap(3600 * s, tasks=base)
        cur_tasks = []
        for t in base:
            d = deltas.get(t.pid, {})
            nt = Task(**dict(t.__dict__))
            for k, v in d.items():
                setattr(nt, k, getattr(nt, k) + v)
            cur_tasks.append(nt)
        cur_tasks += list(extra_new)
        return prev, Snap(3600 * s + step_ns, tasks=cur_tasks)

    article = {1009: {"write": 52705, "blkio": 963_500_000},
               2071: {"write": 85_754_348, "blkio": 936_100_000}}
    mixed = {1: {"read": 4096}, 2200: {"swapin": 2 * 10**9, "blkio": 3 * 10**9},
             2301: {"read": 3 * 2**30 + 12345, "write": 7 * 2**40}, 2071: {"write": 1023}}
    new = [Task(2400, "cp", read=10**9, write=10**9, blkio=10**9, start=3600 * s,
                cmdline="/bin/cp a b")]
    cases = [
        ("iotop_article", [], article, 10**9, (0, 136 * 2**20), True, 32768, ()),
        ("iotop_only", ["-o"], article, 10**9, (4096, 90_000_000), True, 32768, ()),
        ("iotop_mixed_only_k", ["-o", "-k"], mixed, 1_330_000_000, (123, 456789), True, 32768, new),
        ("iotop_accum", ["-a"], mixed, 2 * 10**9, (0, 0), True, 4194304, new),
        ("iotop_nodelayacct", ["-o"], mixed, 10**9, (10**6, 10**9), False, 4194304, ()),
        ("iotop_processes_quiet", ["-P", "-q"], article, 10**9, (0, 0), True, 32768, ()),
    ]
    for name, args, deltas, step, actual, delayacct, pid_max, extra in cases:
        prev, cur = pair(step, deltas, extra)
        out = iotop_render(args, prev, cur, actual, delayacct, pid_max)
        emit(name, "iotop", ["-b"] + args, [prev, cur], out,
             opts=[("pid_max", pid_max), ("delayacct", int(delayacct)), ("style", "debian12"),
                   ("actual_read", actual[0]), ("actual_write", actual[1])])


ARG_CASES = {
    "free": [["-x"], ["-o"], ["--foo"], ["-k", "-m"], ["--mebi", "-g"], ["-s"], ["-s", "abc"],
             ["-s", "0"], ["-c", "0"], ["-c", "x"], ["--s", "1"], ["--wide=1"], ["--count"],
             ["extra"], ["-bw", "-t", "-c1"], ["-h", "--si", "-c", "1"], ["--sec", "1", "-c1"]],
    "vmstat": [["-z"], ["--foo"], ["0"], ["x"], ["0.5"], ["1", "2", "3"], ["-S"], ["-S", "q"],
               ["-S", "kb"], ["--un", "M"], ["-d", "-s"], ["-s", "-S", "m"], ["-f"], ["-n", "-a"],
               ["--timestamp=1"], ["-w", "--one-header"], ["1", "x"]],
    "top": [["-z"], ["-n"], ["-b", "-n", "x"], ["-bn", "0"], ["-bn1", "-o", "FOO"],
            ["-bn1", "-d", "-1"], ["-bn1", "-d", "x"], ["-bn1", "-E", "q"], ["-bn1", "-E", "mm"],
            ["--foo"], ["-bn1", "extra"], ["-b", "5"], ["-bn1", "-w", "2"], ["-bn1", "-w", "600"],
            ["-bn1", "-p", "1,x"], ["-bn1", "-p", "+1"], ["-bn1", "-s", "-d", "1"],
            ["-bn1", "-u", "root", "-p", "1"], ["-bn1", "-d="], ["-bn1", "--delay"],
            ["-bn1", "--iter=x"], ["-bn1", "-o", "-%MEM", "-w"], ["-bn", "1", "-d1.5"]],
    "iotop": [["-x"], ["-n", "x"], ["-d", "x"], ["-n"], ["--it"], ["--foo"], ["-b", "extra"],
              ["--it=x"], ["--p"], ["--batch=1"], ["-p", "0x"]],
}


def arg_cases():
    """The real tools' stderr for argument vectors they reject (or "OK" when they run)."""
    env = {"PATH": "/usr/bin:/bin:/usr/sbin", "TERM": "xterm", "LC_ALL": "C", "TZ": "UTC"}
    recs = []
    for tool, vectors in ARG_CASES.items():
        for args in vectors:
            p = subprocess.run([tool] + args, capture_output=True, env=env, timeout=30)
            err = p.stderr.decode()
            if tool == "iotop" and p.returncode != 0:
                err = err.splitlines()[-1] + "\n"   # memtwin prints iotop 0.6's usage text
            # top reports getopt errors and exits 0: any stderr counts as a rejection.
            ok = p.returncode == 0 and not err
            recs.append("== %s\t%s\n%s==end\n" % (tool, "\t".join(args), "OK\n" if ok else err))
    # What --help, -h and -V print on stdout (memtwin hands it back as print_and_exit).
    for tool, args in (("free", ["--help"]), ("free", ["-V"]), ("vmstat", ["-h"]),
                       ("vmstat", ["--version"]), ("top", ["-h"]), ("top", ["-V"]),
                       ("top", ["-O"]), ("iotop", ["--version"])):
        p = subprocess.run([tool] + args, capture_output=True, env=env, timeout=30)
        recs.append("== %s\t%s\nSTDOUT\n%s==end\n" % (tool, "\t".join(args), p.stdout.decode()))
    with open(os.path.join(HERE, "args.errors"), "w") as f:
        f.write("# Captured by capture.py: what the real tools print on stderr for these\n"
                "# argument vectors (OK = accepted). iotop: last line only.\n" + "".join(recs))
    print("wrote args.errors", file=sys.stderr)


def main():
    if os.geteuid() != 0:
        raise SystemExit("run as root (unshare -m, mount --bind)")
    prefix = sys.argv[1] if len(sys.argv) > 1 else ""
    for fn, tag in ((free_cases, "free_"), (vmstat_cases, "vmstat_"), (top_cases, "top_"),
                    (iotop_cases, "iotop_"), (arg_cases, "args")):
        if tag.startswith(prefix) or prefix.startswith(tag):
            fn()
    for p in (FAKE, FAKE + "-utmp"):
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.remove(p)


if __name__ == "__main__":
    main()
