"""``memtwin calibrate``: measure this host into a machine TOML file.

What is measured, and which machine field it becomes (docs/validation.md has the table):

* sequential O_DIRECT write and read of a SIZE file in DIR, 1 MiB requests
  -> ``[[disk]] write_bw``, ``read_bw``
* 4 KiB O_DIRECT random reads at queue depth 1 (one thread, ``os.pread``) -> ``latency_us``
  (mean latency minus the 4 KiB transfer at read_bw); 4 KiB O_DIRECT random writes at depth 1
  -> ``write_latency_us``
* the same reads at queue depth 32 (32 threads, each a blocking ``os.pread`` on the shared
  O_DIRECT descriptor; the GIL is released during the read, so 32 requests are in flight)
  -> ``queue_depth`` = IOPS(32) / IOPS(1), rounded, 1..32
* memory copy bandwidth (one thread, a 64 MiB source copied 1 MiB at a time into a reused
  1 MiB buffer, as read(2) fills a user buffer) -> ``[cpu] copy_bw``
* buffered write of a file into the page cache, and its cached re-read, 1 MiB requests
  -> ``[cpu] page_cache_ns`` (re-read time per page beyond the copy) and ``page_alloc_ns``
  (write time per page beyond copy and page-cache insertion)
* CPUs, RAM (MemTotal; installed RAM from the memory blocks), the disk's rotational,
  read_ahead_kb and max_sectors_kb, the kernel profile from the release, the vm sysctls.

Fields not measured keep their defaults (see machines/example.toml). Run time is bounded by
a per-phase budget (about 20 s in all by default) and disk use by SIZE (refused when the
filesystem lacks room). The temporary files are removed on every exit path.
"""

from __future__ import annotations

import argparse
import mmap
import os
import platform
import random
import sys
import tempfile
import threading
import time
from typing import Dict, List, Optional

from . import _core, hostrun
from .hostrun import Refused

MIB = 1 << 20
REQ = MIB
SMALL = 4096

#: Seconds each phase may take at most.
PHASE_BUDGET_S = 3.0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser(
        "calibrate",
        help="measure this host into a machine TOML file",
        description="Measure this host (disk bandwidth and latency with O_DIRECT, page-cache "
        "and memory-copy bandwidth, CPUs, RAM) and write a machine TOML that 'memtwin run "
        "--machine' and 'memtwin validate' accept. Exit status: 0 written, 2 bad input, "
        "3 refused (cannot measure here), 130/143 interrupted; temporary files are removed "
        "in every case.",
    )
    p.add_argument("-o", "--output", default="-", metavar="FILE",
                   help="machine file to write ('-': standard output, the default)")
    p.add_argument("--dir", default=None, metavar="DIR",
                   help="directory on the disk to measure (default: a temporary directory on "
                   "the filesystem of the current directory)")
    p.add_argument("--size", default="256M", metavar="SIZE",
                   help="size of the test file (default 256M; 4M at least)")
    p.add_argument("--budget", type=float, default=PHASE_BUDGET_S, metavar="SECONDS",
                   help=f"time limit of each of the seven phases (default {PHASE_BUDGET_S})")
    p.set_defaults(handler=cmd_calibrate)


def _aligned(n: int) -> mmap.mmap:
    return mmap.mmap(-1, n)  # page-aligned, as O_DIRECT needs


def seq_write(path: str, size: int, budget: float) -> Dict[str, float]:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
    buf = _aligned(REQ)
    buf.write(os.urandom(REQ))
    done, t0 = 0, time.monotonic()
    try:
        while done < size and time.monotonic() - t0 < budget:
            done += os.pwrite(fd, buf, done)
        os.fsync(fd)
    finally:
        os.close(fd)
    dt = time.monotonic() - t0
    return {"bytes": done, "seconds": dt, "bw": done / dt}


def seq_read(path: str, size: int, budget: float) -> Dict[str, float]:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = _aligned(REQ)
    done, t0 = 0, time.monotonic()
    try:
        while done < size and time.monotonic() - t0 < budget:
            n = os.preadv(fd, [buf], done)
            if n <= 0:
                break
            done += n
    finally:
        os.close(fd)
    dt = time.monotonic() - t0
    return {"bytes": done, "seconds": dt, "bw": done / dt}


def random_io(path: str, size: int, depth: int, budget: float, write: bool = False) -> Dict[str, float]:
    """4 KiB O_DIRECT requests at random aligned offsets, `depth` threads each keeping one in
    flight; returns IOPS and the mean latency per request."""
    fd = os.open(path, (os.O_WRONLY if write else os.O_RDONLY) | os.O_DIRECT)
    blocks = size // SMALL
    lat: List[float] = []
    counts = [0] * depth
    stop = time.monotonic() + budget
    lock = threading.Lock()

    def worker(i: int) -> None:
        buf = _aligned(SMALL)
        rng = random.Random(i)
        local: List[float] = []
        while time.monotonic() < stop and counts[i] < 20000:
            off = rng.randrange(blocks) * SMALL
            t = time.perf_counter()
            try:
                if write:
                    os.pwritev(fd, [buf], off)
                else:
                    os.preadv(fd, [buf], off)
            except OSError:
                break  # the descriptor was closed under us (interrupted): stop quietly
            local.append(time.perf_counter() - t)
            counts[i] += 1
        with lock:
            lat.extend(local)

    t0 = time.monotonic()
    try:
        threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(depth)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        os.close(fd)
    dt = time.monotonic() - t0
    n = sum(counts)
    return {"requests": n, "seconds": dt, "iops": n / dt, "mean_latency_s": sum(lat) / max(1, len(lat))}


def memcopy(budget: float) -> Dict[str, float]:
    """Copy a 64 MiB source 1 MiB at a time into a 1 MiB destination, as read(2) copies
    cached pages into a reused 1 MiB user buffer (copy_to_user)."""
    src = memoryview(bytearray(os.urandom(MIB)) * 64)
    dst = bytearray(REQ)
    copied, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < min(budget, 1.0) or copied == 0:
        for off in range(0, len(src), REQ):
            dst[:] = src[off : off + REQ]
        copied += len(src)
    dt = time.perf_counter() - t0
    return {"bytes": copied, "seconds": dt, "bw": copied / dt}


def cached_write_read(path: str, size: int, budget: float) -> Dict[str, float]:
    """Buffered write of `size` (no fsync: it stays in the page cache), then re-read it."""
    chunk = os.urandom(REQ)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        done, t0 = 0, time.perf_counter()
        while done < size and time.perf_counter() - t0 < budget:
            done += os.write(fd, chunk)
        wdt = time.perf_counter() - t0
        buf = bytearray(REQ)
        read, t0 = 0, time.perf_counter()
        for _ in range(4):  # a few passes over the cached data for a steadier figure
            off = 0
            while off < done:
                n = os.preadv(fd, [buf], off)
                if n <= 0:
                    break
                off += n
            read += off
            if time.perf_counter() - t0 > budget:
                break
        rdt = time.perf_counter() - t0
    finally:
        os.close(fd)
    return {"write_bytes": done, "write_bw": done / wdt, "read_bytes": read, "read_bw": read / rdt}


# --- host facts -----------------------------------------------------------------------------


def installed_ram(mem_total: int) -> int:
    """Installed RAM: online memory blocks when sysfs has them, else MemTotal rounded up to
    128 MiB."""
    base = "/sys/devices/system/memory"
    try:
        block = int(hostrun.read_text(f"{base}/block_size_bytes").strip(), 16)
        online = 0
        for name in os.listdir(base):
            if name.startswith("memory"):
                try:
                    if hostrun.read_text(f"{base}/{name}/online").strip() == "1":
                        online += 1
                except OSError:
                    pass
        if online and block * online >= mem_total:
            return block * online
    except (OSError, ValueError):
        pass
    step = 128 * MIB
    return -(-mem_total // step) * step


def kernel_profile(release: str) -> str:
    """The era profile closest to a kernel release (docs/validation.md)."""
    try:
        major, minor = (int(x) for x in release.split(".")[:2])
    except ValueError:
        return "linux-6.x"
    if (major, minor) >= (5, 9):
        return "linux-6.x"
    if (major, minor) >= (5, 8):
        return "linux-5.8"
    if major >= 3 or (major, minor) >= (5, 4):
        return "linux-5.4"
    return "linux-2.6.39"


def disk_of(directory: str) -> Dict[str, object]:
    """Kernel name and queue settings of the block device under `directory`."""
    path = os.path.realpath(directory)
    best, source = "", ""
    for src, at, _, _ in hostrun.mounts():
        if (path == at or path.startswith(at.rstrip("/") + "/")) and len(at) >= len(best):
            best, source = at, src
    name = os.path.basename(source) if source.startswith("/dev/") else "sda"
    info: Dict[str, object] = {"name": name}
    q = f"/sys/block/{name}/queue"
    for field, key in (("rotational", "rotational"), ("read_ahead_kb", "read_ahead_kb"),
                       ("max_sectors_kb", "max_request_kb")):
        try:
            info[key] = int(hostrun.read_text(f"{q}/{field}").strip())
        except (OSError, ValueError):
            pass
    return info


VM_SYSCTLS = ("vm.swappiness", "vm.dirty_ratio", "vm.dirty_background_ratio",
              "vm.dirty_writeback_centisecs", "vm.dirty_expire_centisecs",
              "vm.vfs_cache_pressure", "vm.page-cluster", "vm.watermark_scale_factor",
              "vm.watermark_boost_factor", "vm.min_free_kbytes")


def _sysctls() -> Dict[str, int]:
    out = {}
    for name in VM_SYSCTLS:
        try:
            out[name] = int(hostrun.read_text("/proc/sys/" + name.replace(".", "/")).split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return out


# --- the machine file ------------------------------------------------------------------------


def machine_toml(m: Dict[str, object], d: Dict[str, object]) -> str:
    """The machine file from the measurements `m` and the host facts `d`."""
    lines = [
        "# This host, measured by `memtwin calibrate` (docs/validation.md explains each mapping).",
        f"# Linux {d['release']}, {d['cpu_model']}; measured in {d['dir']} with a {d['size'] >> 20} MiB file.",
        f'name = "{d["name"]}"',
        f'description = "This host as measured by memtwin calibrate (Linux {d["release"]})."',
        f'ram = "{d["ram"] >> 20}M"',
        f'kernel_reserve = "{(d["ram"] - d["mem_total"]) >> 10}K"   # installed RAM - MemTotal',
        f"cpus = {d['cpus']}",
        f'kernel = "{d["kernel"]}"',
        "",
        "[cpu]",
        f"copy_bw = {m['copy_bw']:.4g}                # memory copy, one thread",
        f"page_cache_ns = {m['page_cache_ns']}            # cached re-read per page beyond the copy",
        f"page_alloc_ns = {m['page_alloc_ns']}            # buffered write per page beyond copy and insertion",
        "# The write is measured as one figure per page: all of it beyond the copy is in",
        "# page_alloc_ns, so the per-operation parts it includes are 0 here (docs/costs.md).",
        f"copy_in_bw = {m['copy_bw']:.4g}",
        "page_cache_add_ns = 0",
        "lru_add_ns = 0",
        "fs_write_page_ns = 0",
        "",
        "[[disk]]",
        f'name = "{d["disk"]["name"]}"',
        f'size = "{d["disk_size"] >> 30}G"',
        f"read_bw = {m['read_bw']:.4g}                # O_DIRECT 1 MiB sequential read",
        f"write_bw = {m['write_bw']:.4g}               # O_DIRECT 1 MiB sequential write",
        f"latency_us = {m['latency_us']:.1f}              # 4 KiB O_DIRECT random read, depth 1",
        f"write_latency_us = {m['write_latency_us']:.1f}        # 4 KiB O_DIRECT random write, depth 1",
        f"queue_depth = {m['queue_depth']}                # IOPS at depth 32 / IOPS at depth 1",
        f"rotational = {'true' if d['disk'].get('rotational') else 'false'}",
    ]
    mr = d["disk"].get("max_request_kb")
    if isinstance(mr, int) and mr >= 4:
        lines.append(f"max_request_kb = {mr - mr % 4}")
    ra = d["disk"].get("read_ahead_kb")
    if isinstance(ra, int):
        lines.append(f"read_ahead_kb = {ra}")
    lines += ["", "[[mount]]", f'source = "/dev/{d["disk"]["name"]}"', 'at = "/"',
              f'fstype = "{d["fstype"]}"']
    if d["swap_total"]:
        lines += ["", "[[swap]]", 'file = "/swapfile"', f'size = "{d["swap_total"] >> 20}M"']
    lines += ["", "[sysctl]"]
    for k, v in d["sysctls"].items():
        lines.append(f'"{k}" = {v}')
    lines.append("")
    lines.append("# Raw measurements:")
    for k, v in sorted(m["raw"].items()):
        lines.append(f"#   {k} = {v:.6g}")
    return "\n".join(lines) + "\n"


def derive(raw: Dict[str, float]) -> Dict[str, object]:
    """Machine fields from raw measurements (the mapping of docs/validation.md)."""
    copy_bw = raw["memcopy_bw"]
    per_page_copy = 4096 / copy_bw
    page_cache_ns = max(10, round((4096 / raw["cached_read_bw"] - per_page_copy) * 1e9))
    page_alloc_ns = max(10, round((4096 / raw["cached_write_bw"] - per_page_copy) * 1e9) - page_cache_ns)
    lat = raw["qd1_read_latency_s"] - 4096 / raw["seq_read_bw"]
    wlat = raw["qd1_write_latency_s"] - 4096 / raw["seq_write_bw"]
    qd = max(1, min(32, round(raw["qd32_read_iops"] / raw["qd1_read_iops"])))
    return {
        "copy_bw": copy_bw,
        "page_cache_ns": page_cache_ns,
        "page_alloc_ns": page_alloc_ns,
        "read_bw": raw["seq_read_bw"],
        "write_bw": raw["seq_write_bw"],
        "latency_us": max(1.0, lat * 1e6),
        "write_latency_us": max(1.0, wlat * 1e6),
        "queue_depth": qd,
        "raw": raw,
    }


def check_target(path: str) -> None:
    """Refuse an output path the result writer would refuse (a directory, a missing parent)."""
    try:
        _core.check_output(path)
    except OSError as e:
        raise Refused(f"cannot write '{path}': {e.strerror or e}") from None


def write_atomically(path: str, text: str) -> None:
    """The one result writer (memtwin._core.write_output): a regular or new file whole or not
    at all, a symlink's target rather than the link, a device or FIFO in place."""
    _core.write_output(path, text.encode("utf-8"))


def cmd_calibrate(args: argparse.Namespace) -> int:
    try:
        size = hostrun.parse_size(args.size)
    except ValueError:
        raise hostrun_bad(f"--size: invalid size '{args.size}' (e.g. 64M, 256M, 1G)")
    if size < 4 * MIB:
        raise hostrun_bad("--size must be at least 4M")
    if not 0 < args.budget <= 60:
        raise hostrun_bad("--budget must be between 0 and 60 seconds")
    old_term = hostrun.install_sigterm()
    tmp: Optional[str] = None
    try:
        if args.output != "-":
            check_target(args.output)
        parent = args.dir or os.getcwd()
        if not os.path.isdir(parent):
            raise Refused(f"--dir '{parent}' is not a directory")
        kind = hostrun.fs_type(parent)
        if kind in ("tmpfs", "ramfs", "proc", "sysfs"):
            raise Refused(f"'{parent}' is on {kind}, not a disk: O_DIRECT measurements need a disk filesystem")
        st = os.statvfs(parent)
        if st.f_bavail * st.f_frsize < 2 * size + 64 * MIB:
            raise Refused(f"'{parent}' has {st.f_bavail * st.f_frsize >> 20} MiB free; "
                          f"calibrate needs {(2 * size + 64 * MIB) >> 20} MiB (twice --size plus 64 MiB)")
        mi = hostrun.meminfo()
        cached_size = min(size, mi.get("MemAvailable", size * 4) // 4)
        tmp = tempfile.mkdtemp(prefix=".memtwin-calibrate-", dir=parent)
        a = os.path.join(tmp, "direct")
        b = os.path.join(tmp, "cached")
        raw: Dict[str, float] = {}
        try:
            w = seq_write(a, size, args.budget)
        except OSError as e:
            raise Refused(f"O_DIRECT write in '{parent}' failed: {e.strerror}") from None
        raw["seq_write_bw"] = w["bw"]
        written = int(w["bytes"])
        raw["seq_read_bw"] = seq_read(a, written, args.budget)["bw"]
        q1 = random_io(a, written, 1, args.budget / 2)
        raw["qd1_read_iops"], raw["qd1_read_latency_s"] = q1["iops"], q1["mean_latency_s"]
        q32 = random_io(a, written, 32, args.budget / 2)
        raw["qd32_read_iops"], raw["qd32_read_latency_s"] = q32["iops"], q32["mean_latency_s"]
        qw = random_io(a, written, 1, args.budget / 2, write=True)
        raw["qd1_write_iops"], raw["qd1_write_latency_s"] = qw["iops"], qw["mean_latency_s"]
        os.unlink(a)
        c = cached_write_read(b, cached_size, args.budget)
        raw["cached_write_bw"], raw["cached_read_bw"] = c["write_bw"], c["read_bw"]
        os.unlink(b)
        raw["memcopy_bw"] = memcopy(args.budget)["bw"]
        m = derive(raw)
        release = platform.release()
        facts = {
            "name": "host",
            "release": release,
            "cpu_model": hostrun.cpu_model(),
            "dir": parent,
            "size": size,
            "ram": installed_ram(mi["MemTotal"]),
            "mem_total": mi["MemTotal"],
            "cpus": os.cpu_count() or 1,
            "kernel": kernel_profile(release),
            "disk": disk_of(parent),
            "disk_size": max(1 << 30, st.f_blocks * st.f_frsize),
            "fstype": kind if kind in ("ext4", "ext3", "ext2", "xfs") else "ext4",
            "swap_total": mi.get("SwapTotal", 0),
            "sysctls": _sysctls(),
        }
        text = machine_toml(m, facts)
        if args.output == "-":
            sys.stdout.write(text)
        else:
            try:
                write_atomically(args.output, text)
            except OSError as e:
                raise Refused(f"cannot write '{args.output}': {e.strerror or e}") from None
            sys.stderr.write(
                f"memtwin: wrote {args.output}: disk read {raw['seq_read_bw'] / 1e6:.0f} MB/s, "
                f"write {raw['seq_write_bw'] / 1e6:.0f} MB/s, 4K read {m['latency_us']:.0f} us, "
                f"queue depth {m['queue_depth']}, copy {raw['memcopy_bw'] / 1e9:.1f} GB/s\n")
        return 0
    except Refused as e:
        sys.stderr.write(f"memtwin: cannot calibrate: {e}\n")
        return hostrun.EXIT_REFUSED
    except KeyboardInterrupt:
        sys.stderr.write("memtwin: calibrate interrupted; temporary files removed\n")
        return 130
    except hostrun.Terminated:
        sys.stderr.write("memtwin: calibrate terminated; temporary files removed\n")
        return 143
    finally:
        if tmp is not None:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
        import signal

        signal.signal(signal.SIGTERM, old_term)  # type: ignore[arg-type]


def hostrun_bad(message: str) -> Exception:
    from . import MemtwinError

    return MemtwinError(message)
