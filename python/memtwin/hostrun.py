"""Run a scenario for real on this host, inside a temporary memory cgroup.

Used by ``memtwin validate``. Everything this module changes on the host is recorded in a
:class:`HostSession` and undone by :meth:`HostSession.close`, which runs on every exit path
(normal end, error, Ctrl-C, SIGTERM): the child processes are killed, the cgroup removed, the
swap file swapped off and deleted, the sysctls written back and the temporary directory
deleted.

What it changes, and only that:

* one memory cgroup, ``memtwin-validate-<pid>``, a child of the memory hierarchy's root, into
  which only the processes it starts itself are moved (each child moves itself before exec);
* one swap file inside its own temporary directory (``mkswap`` + ``swapon``), when the
  simulated machine has swap;
* the /proc/sys knobs the scenario or the machine sets, each saved before the first write;
* files inside its temporary directory, which is the commands' working directory.

A run killed outright (SIGKILL, a lost terminal's kill -9, an OOM kill of the validator itself)
cannot undo anything. So the session keeps a record of what it changed, ``state.json`` in its
temporary directory (named ``memtwin-validate-<pid>-*``), rewritten after each change; the next
session (:func:`reap_stale`) finds the records of runs whose process no longer exists and undoes
them: its cgroup's processes killed and the cgroup removed, the swap file swapped off, the
sysctls written back, the directory deleted.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

PAGE = 4096

#: Exit statuses of `memtwin validate` / `memtwin calibrate` when they refuse to run.
EXIT_REFUSED = 3


class Refused(Exception):
    """The host cannot run this for real; the message is one line saying why."""


# --- host facts -----------------------------------------------------------------------------


def read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def meminfo() -> Dict[str, int]:
    """/proc/meminfo in bytes."""
    out = {}
    for line in read_text("/proc/meminfo").splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts:
            out[name] = int(parts[0]) * (1024 if len(parts) > 1 else 1)
    return out


def proc_vmstat() -> Dict[str, int]:
    out = {}
    for line in read_text("/proc/vmstat").splitlines():
        name, _, value = line.partition(" ")
        try:
            out[name] = int(value)
        except ValueError:
            pass
    return out


def kdamond_running() -> bool:
    """True when a DAMON worker thread (``kdamond.N``) runs: it may reclaim idle page cache."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if read_text(f"/proc/{pid}/comm").startswith("kdamond"):
                return True
        except OSError:
            continue
    return False


def cpu_model() -> str:
    try:
        for line in read_text("/proc/cpuinfo").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def mounts() -> List[Tuple[str, str, str, str]]:
    """(source, mount point, fstype, options) of every mount, from /proc/self/mounts."""
    rows = []
    for line in read_text("/proc/self/mounts").splitlines():
        parts = line.split()
        if len(parts) >= 4:
            unesc = lambda s: re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)
            rows.append((parts[0], unesc(parts[1]), parts[2], parts[3]))
    return rows


def fs_type(path: str) -> str:
    """The type of the filesystem holding `path` (longest mount-point prefix)."""
    path = os.path.realpath(path)
    best, kind = "", "unknown"
    for _, at, fstype, _ in mounts():
        if (path == at or path.startswith(at.rstrip("/") + "/")) and len(at) >= len(best):
            best, kind = at, fstype
    return kind


# --- memory cgroups -------------------------------------------------------------------------


@dataclass
class Cgroup:
    """A memory cgroup this process created (v1 or v2) and will remove."""

    version: int
    path: str

    def write(self, name: str, value: str) -> None:
        with open(os.path.join(self.path, name), "w") as f:
            f.write(value)

    def has(self, name: str) -> bool:
        return os.path.exists(os.path.join(self.path, name))

    def stat(self) -> Dict[str, int]:
        """memory.stat (v1: this cgroup's own lines, without the total_* ones)."""
        out = {}
        for line in read_text(os.path.join(self.path, "memory.stat")).splitlines():
            name, _, value = line.partition(" ")
            if self.version == 1 and name.startswith(("total_", "hierarchical_")):
                continue
            try:
                out[name] = int(value)
            except ValueError:
                pass
        return out

    def procs(self) -> List[int]:
        try:
            return [int(x) for x in read_text(os.path.join(self.path, "cgroup.procs")).split()]
        except OSError:
            return []


def find_memory_hierarchy() -> Tuple[int, str]:
    """(cgroup version, root directory) of a writable memory-controller hierarchy.

    cgroup v2 is used when its root lists ``memory`` in cgroup.subtree_control (so a child
    gets memory.max); otherwise a cgroup v1 ``memory`` mount. A hybrid host (v1 memory plus a
    controller-less cgroup2 at /sys/fs/cgroup/unified) uses v1.
    """
    v1 = None
    for _, at, fstype, opts in mounts():
        if fstype == "cgroup2":
            try:
                enabled = read_text(os.path.join(at, "cgroup.subtree_control")).split()
            except OSError:
                continue
            if "memory" in enabled and os.access(at, os.W_OK):
                return 2, at
        elif fstype == "cgroup" and "memory" in opts.split(",") and v1 is None:
            v1 = at
    if v1 is not None and os.access(v1, os.W_OK):
        return 1, v1
    raise Refused(
        "no writable memory cgroup: need a cgroup v2 hierarchy with the memory controller "
        "enabled in its root's cgroup.subtree_control, or a cgroup v1 'memory' mount"
    )


# --- the session ----------------------------------------------------------------------------


@dataclass
class RealCommand:
    """One top-level command as it ran on the host."""

    source: str
    background: bool
    start_s: float = 0.0
    end_s: float = 0.0
    exit_status: int = 0
    output: str = ""
    vmstat_start: Dict[str, int] = field(default_factory=dict)
    vmstat_end: Dict[str, int] = field(default_factory=dict)
    memstat_start: Dict[str, int] = field(default_factory=dict)
    memstat_end: Dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def open_session(tmp_parent: Optional[str], holder: list) -> "HostSession":
    """A new session appended to `holder` with SIGINT/SIGTERM held, so that the caller's
    `finally` always finds (and closes) what was made."""
    with _signals_deferred():
        reaped = reap_stale(tmp_parent)
        s = HostSession(tmp_parent)
        s.notes += reaped
        holder.append(s)
    return s


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_STALE_DIR = re.compile(r"^memtwin-validate-(\d+)-")


def reap_stale(tmp_parent: Optional[str] = None) -> List[str]:
    """Undo what earlier sessions killed outright left behind, from their ``state.json``.

    Only directories named ``memtwin-validate-<pid>-*`` whose ``<pid>`` no longer exists are
    touched (a live validator's session is never touched); returns one note per run undone
    or one problem per thing that could not be undone."""
    parent = tmp_parent or tempfile.gettempdir()
    notes: List[str] = []
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        return notes
    for name in names:
        m = _STALE_DIR.match(name)
        path = os.path.join(parent, name)
        if not m or not os.path.isdir(path) or os.path.islink(path) or _pid_alive(int(m.group(1))):
            continue
        try:
            state = json.loads(read_text(os.path.join(path, "state.json")))
        except (OSError, ValueError):
            state = {}
        undone: List[str] = []
        cg = state.get("cgroup")
        if isinstance(cg, dict) and isinstance(cg.get("path"), str) and os.path.basename(cg["path"]).startswith("memtwin-validate-"):
            c = Cgroup(int(cg.get("version", 1)), cg["path"])
            if os.path.isdir(c.path):
                for pid in c.procs():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                problems = _remove_cgroup(c)
                notes += problems
                if not problems:
                    undone.append(f"cgroup {c.path}")
        swap = state.get("swapfile")
        if isinstance(swap, str) and os.path.dirname(swap) == path:
            if any(line.split()[:1] == [swap] for line in read_text("/proc/swaps").splitlines()[1:]):
                r = subprocess.run(["swapoff", swap], capture_output=True, text=True)
                if r.returncode != 0:
                    notes.append(f"swapoff {swap}: {r.stderr.strip()}")
                    continue  # keep the directory: the file is still in use as swap
                undone.append(f"swap file {swap}")
        sysctls = state.get("sysctls")
        if isinstance(sysctls, dict):
            saved = {k: v for k, v in sysctls.items()
                     if isinstance(k, str) and isinstance(v, str) and re.fullmatch(r"[a-z0-9_.]+", k)}
            done, problems = restore_sysctls(saved)
            undone += done
            notes += problems
        shutil.rmtree(path, ignore_errors=True)
        what = ", ".join(undone) if undone else "its files"
        notes.append(f"undid what a killed earlier run (pid {m.group(1)}) left behind: {what}")
    return notes


PR_SET_THP_DISABLE = 41


def disable_thp() -> bool:
    """prctl(PR_SET_THP_DISABLE, 1) for this process and the children it starts. Returns
    whether the kernel took it (False on kernels before 3.15 or without libc)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


#: Knob pairs the kernel ties together (mm/page-writeback.c): writing one zeroes the other
#: (dirty_ratio_handler and dirty_bytes_handler only when the value changes), and a
#: *_bytes knob refuses 0 (its minimum is 2 pages or 1 byte), so a percentage is restored
#: by writing the ratio.
_DIRTY_PAIRS = (("vm.dirty_ratio", "vm.dirty_bytes"), ("vm.dirty_background_ratio", "vm.dirty_background_bytes"))


def _write_sysctl(name: str, value: str) -> None:
    with open("/proc/sys/" + name.replace(".", "/"), "w") as f:
        f.write(value)


def restore_sysctls(saved: Dict[str, str]) -> Tuple[List[str], List[str]]:
    """Write saved /proc/sys values back. Returns (restored "name=value", problems)."""
    done: List[str] = []
    problems: List[str] = []
    todo = dict(saved)
    writes: List[Tuple[str, str]] = []
    for ratio, nbytes in _DIRTY_PAIRS:
        if ratio not in todo and nbytes not in todo:
            continue
        r = todo.pop(ratio, None)
        b = todo.pop(nbytes, None)
        try:
            r = r if r is not None else read_text("/proc/sys/" + ratio.replace(".", "/")).strip()
            b = b if b is not None else read_text("/proc/sys/" + nbytes.replace(".", "/")).strip()
        except OSError as e:
            problems.append(f"cannot read {ratio}/{nbytes}: {e.strerror}")
            continue
        if b != "0":
            writes.append((nbytes, b))
            continue
        writes.append((ratio, r))
    writes += sorted(todo.items())
    for name, value in writes:
        try:
            _write_sysctl(name, value)
            pair = next((p for p in _DIRTY_PAIRS if p[0] == name), None)
            if pair is not None and read_text("/proc/sys/" + pair[1].replace(".", "/")).strip() != "0":
                # The ratio was already this value, so writing it left the bytes set:
                # change it and back.
                _write_sysctl(name, "1" if value == "0" else "0")
                _write_sysctl(name, value)
            done.append(f"{name}={value}")
        except OSError as e:
            problems.append(f"cannot restore {name}={value}: {e.strerror}")
    return done, problems


class HostSession:
    """Owns every change made to the host; :meth:`close` undoes them all (idempotent)."""

    def __init__(self, tmp_parent: Optional[str] = None) -> None:
        # Make it inside the caller's `try` so that close() runs: see open_session().
        self.tmp = tempfile.mkdtemp(prefix=f"memtwin-validate-{os.getpid()}-", dir=tmp_parent)
        self.cgroup: Optional[Cgroup] = None
        self.swapfile: Optional[str] = None
        self.saved_sysctls: Dict[str, str] = {}
        self.children: List[subprocess.Popen] = []
        self.notes: List[str] = []
        self.closed = False

    # -- setup ------------------------------------------------------------------------------

    def make_cgroup(self, limit: int, swap: int, swappiness: Optional[int]) -> Cgroup:
        version, root = find_memory_hierarchy()
        path = os.path.join(root, f"memtwin-validate-{os.getpid()}")
        with _signals_deferred():  # made and recorded at once, so close() always sees it
            os.mkdir(path)
            cg = self.cgroup = Cgroup(version, path)
            self._save_state()
        if version == 1:
            cg.write("memory.limit_in_bytes", str(limit))
            if cg.has("memory.memsw.limit_in_bytes"):
                cg.write("memory.memsw.limit_in_bytes", str(limit + swap))
            elif swap == 0:
                self.notes.append("memory.memsw.* is absent (swap accounting off): the cgroup may swap although the machine has none")
            if swappiness is not None and cg.has("memory.swappiness"):
                cg.write("memory.swappiness", str(swappiness))
        else:
            cg.write("memory.max", str(limit))
            if cg.has("memory.swap.max"):
                cg.write("memory.swap.max", str(swap))
            if swappiness is not None:
                # cgroup v2 has no per-cgroup swappiness: the global knob decides.
                self.set_sysctl("vm.swappiness", str(swappiness))
        return cg

    def make_swap(self, size: int) -> None:
        """A swap file of `size` in the temporary directory, switched on."""
        st = os.statvfs(self.tmp)
        if st.f_bavail * st.f_frsize < size + (256 << 20):
            raise Refused(f"not enough room for a {size >> 20} MiB swap file in {self.tmp}")
        path = os.path.join(self.tmp, "swapfile")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self.swapfile = path  # from here on close() deletes it
        self._save_state()
        try:
            chunk = b"\0" * (1 << 20)
            left = size
            while left > 0:  # written, not fallocated: every filesystem accepts it for swap
                left -= os.write(fd, chunk[: min(left, len(chunk))])
            os.fsync(fd)
        finally:
            os.close(fd)
        _run_quiet(["mkswap", path])
        with _signals_deferred():  # switched on and recorded at once
            _run_quiet(["swapon", path])
            self._swap_on = True

    def set_sysctl(self, name: str, value: str) -> None:
        """Write a /proc/sys knob, saving its value first (restored by close)."""
        # A dirty knob's partner changes with it: both are saved.
        partners = [q for pair in _DIRTY_PAIRS if name in pair for q in pair if q != name]
        for n in [name] + partners:
            if n != "vm.drop_caches" and n not in self.saved_sysctls:
                self.saved_sysctls[n] = read_text("/proc/sys/" + n.replace(".", "/")).strip()
                self._save_state()
        _write_sysctl(name, value)

    def _save_state(self) -> None:
        """state.json: what close() would undo, for reap_stale() if this process is killed
        outright. Written whole (a temporary file renamed over it)."""
        state = {
            "pid": os.getpid(),
            "cgroup": {"version": self.cgroup.version, "path": self.cgroup.path} if self.cgroup else None,
            "swapfile": self.swapfile,
            "sysctls": self.saved_sysctls,
        }
        tmp = os.path.join(self.tmp, ".state.json.tmp")
        with open(tmp, "w") as f:
            json.dump(state, f)
        os.replace(tmp, os.path.join(self.tmp, "state.json"))

    # -- running ----------------------------------------------------------------------------

    def _enter_cgroup(self) -> None:  # runs in the child between fork and exec
        assert self.cgroup is not None
        # spawn() blocks SIGINT/SIGTERM around the fork; the program itself must get them.
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
        with open(os.path.join(self.cgroup.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        # The twin models 4 KiB pages only: the real run gets no transparent huge pages
        # either (PR_SET_THP_DISABLE, 3.15+; inherited by its children, this process only).
        # With THP "always", reclaim counts each scan of a 2 MiB folio as 512 pages.
        disable_thp()

    def spawn(self, argv: List[str], out_path: str) -> subprocess.Popen:
        """Start a child in the cgroup. SIGINT/SIGTERM are held until it is on the list of
        children, so an interrupt cannot land between fork and bookkeeping and leave an
        unknown child behind (close() kills the listed ones)."""
        out = open(out_path, "wb")
        try:
            with _signals_deferred():
                p = subprocess.Popen(
                    argv,
                    cwd=self.tmp,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    preexec_fn=self._enter_cgroup,
                    start_new_session=True,  # Ctrl-C reaches us only; we stop the children
                    env=dict(os.environ, LC_ALL="C", LANG="C"),
                )
                self.children.append(p)
        finally:
            out.close()
        return p

    def snapshot(self) -> Tuple[Dict[str, int], Dict[str, int]]:
        assert self.cgroup is not None
        return proc_vmstat(), self.cgroup.stat()

    # -- teardown ---------------------------------------------------------------------------

    def kill_children(self) -> None:
        for p in self.children:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
        for p in self.children:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.children = []

    def close(self) -> List[str]:
        """Undo everything; returns the problems met (empty when all was undone)."""
        if self.closed:
            return []
        self.closed = True
        problems: List[str] = []
        with _signals_deferred():
            self.kill_children()
            if self.cgroup is not None:
                problems += _remove_cgroup(self.cgroup)
            if self.swapfile is not None and getattr(self, "_swap_on", False):
                r = subprocess.run(["swapoff", self.swapfile], capture_output=True, text=True)
                if r.returncode != 0:
                    problems.append(f"swapoff {self.swapfile}: {r.stderr.strip()}")
            problems += restore_sysctls(self.saved_sysctls)[1]
            shutil.rmtree(self.tmp, ignore_errors=True)
            if os.path.exists(self.tmp):
                problems.append(f"cannot remove {self.tmp}")
        return problems


def _remove_cgroup(cg: Cgroup) -> List[str]:
    for _ in range(100):
        # Our own children only: they are all dead by now; a straggler still exiting leaves
        # the cgroup busy for a moment.
        try:
            os.rmdir(cg.path)
            return []
        except FileNotFoundError:
            return []
        except OSError:
            time.sleep(0.05)
    return [f"cannot remove cgroup {cg.path} (still has processes: {cg.procs()})"]


def _run_quiet(argv: List[str]) -> None:
    try:
        r = subprocess.run(argv, capture_output=True, text=True)
    except FileNotFoundError:
        raise Refused(f"'{argv[0]}' is not installed") from None
    if r.returncode != 0:
        raise Refused(f"{' '.join(argv)} failed: {r.stderr.strip() or r.stdout.strip()}")


class _signals_deferred:
    """Hold SIGINT/SIGTERM while the host is being restored, so a second Ctrl-C cannot leave
    half of it undone; they are delivered when the block ends."""

    def __enter__(self) -> None:
        self.ok = hasattr(signal, "pthread_sigmask")
        if self.ok:
            self.old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})

    def __exit__(self, *exc: object) -> None:
        if self.ok:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.old)


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like KeyboardInterrupt so that every `finally` runs."""


def install_sigterm() -> object:
    def handler(signum: int, frame: object) -> None:
        raise Terminated()

    return signal.signal(signal.SIGTERM, handler)


# --- a helper program for the real side -----------------------------------------------------


def memhog_main(argv: List[str]) -> int:
    """The real side of the twin's ``memhog SIZE [--active F] [--every S]``: fill SIZE of
    anonymous memory (one write per page), then touch the first F of it every S seconds until
    killed."""
    size = parse_size(argv[0])
    active, every = 0.1, 1.0
    it = iter(argv[1:])
    for a in it:
        if a == "--active":
            active = float(next(it))
        elif a == "--every":
            every = float(next(it))
        elif a == "--comm":
            next(it)
        elif a == "--code":
            next(it)
    import mmap

    buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    npages = size // PAGE
    # One store per page, done by the C slice assignment (no Python loop over pages).
    buf[0 : npages * PAGE : PAGE] = b"\1" * npages
    hot = max(1, int(npages * active))
    while True:
        time.sleep(every)
        _ = bytes(buf[0 : hot * PAGE : PAGE])  # read one byte of each hot page


def parse_size(text: str) -> int:
    """coreutils-style size: 512, 4K, 512M, 1G, 1.5G (binary units)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGTkmgt]?)(i?[Bb])?", text)
    if not m:
        raise ValueError(f"invalid size '{text}'")
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


if __name__ == "__main__":  # python -m memtwin.hostrun memhog SIZE ...
    if len(sys.argv) > 1 and sys.argv[1] == "memhog":
        try:
            sys.exit(memhog_main(sys.argv[2:]))
        except KeyboardInterrupt:
            sys.exit(130)
    sys.stderr.write("usage: python -m memtwin.hostrun memhog SIZE [--active F] [--every S]\n")
    sys.exit(2)
