#!/usr/bin/env python3
# Parse logs/*.txt into markdown tables (printed to stdout).
import re, glob, os
L = "/tmp/kmem-real/logs"
def parse(fn):
    t = open(fn).read()
    before, after = t.split("== command:")[0], t.split("== global AFTER")[1]
    mid = t.split("== du cgroup AFTER")[1].split("== global AFTER")[0]
    r = {}
    g = lambda pat, s, f=int: f(re.search(pat, s, re.M).group(1))
    r["elapsed"] = g(r"Elapsed \(wall clock\).*: (\S+)", t, str)
    r["user"] = g(r"User time \(seconds\): (\S+)", t, str); r["sys"] = g(r"System time \(seconds\): (\S+)", t, str)
    r["maxrss_kB"] = g(r"Maximum resident set size \(kbytes\): (\d+)", t)
    r["fsin"] = g(r"File system inputs: (\d+)", t); r["fsout"] = g(r"File system outputs: (\d+)", t)
    for k in ["usage_in_bytes", "max_usage_in_bytes", "failcnt", "kmem.usage_in_bytes", "kmem.max_usage_in_bytes", "kmem.failcnt"]:
        r[k] = g(r"^  memory\.%s\s+(\d+)" % re.escape(k), mid)
    r["kmem_slabinfo_bytes"] = g(r"memory.kmem.slabinfo \((\d+) bytes", mid)
    for k in ["cache", "dirty", "pgpgin", "pgpgout", "workingset_refault_file", "active_file", "inactive_file", "rss"]:
        r["stat_"+k] = g(r"^    %s (\d+)" % k, mid)
    for tag, s in (("b", before), ("a", after)):
        for k in ["slabs_scanned", "pginodesteal", "kswapd_inodesteal"]:
            r[f"{k}_{tag}"] = g(r"%s (\d+)" % k, s)
        for k in ["Slab", "SReclaimable", "Buffers"]:
            r[f"{k}_{tag}"] = g(r"%s: (\d+) kB" % k, s)
        for c in ["dentry", "ext4_inode_cache", "buffer_head"]:
            m = re.search(r"^  %s\s+(\d+)\s+(\d+)\s+(\d+)" % c, s, re.M)
            r[f"{c}_{tag}"] = (int(m.group(1)), int(m.group(2))); r[f"{c}_objsize"] = int(m.group(3))
    sm = [l.split() for l in open(fn.replace(".txt", ".samples")).read().splitlines()[1:]]
    r["samples"] = [(float(x[0]), int(x[1]), int(x[2]), int(x[3]), int(x[4])) for x in sm if len(x) == 5]
    return r
MB = lambda b: f"{b/1048576:.1f}"
def table(runs):
    cols = [n for n, _ in runs]
    rows = []
    def row(name, f): rows.append([name] + [f(r) for _, r in runs])
    row("du wall time (s)", lambda r: r["elapsed"])
    row("du user / sys (s)", lambda r: f'{r["user"]} / {r["sys"]}')
    row("du max RSS (kB)", lambda r: r["maxrss_kB"])
    row("du FS inputs (512B sectors)", lambda r: r["fsin"])
    row("kmem usage ~0.5 s / ~1.0 s into run (MB)", lambda r: " / ".join(MB(s[2]) for s in r["samples"][1:3]))
    row("usage_in_bytes (MB)", lambda r: f'{r["usage_in_bytes"]} ({MB(r["usage_in_bytes"])})')
    row("max_usage_in_bytes (MB)", lambda r: f'{r["max_usage_in_bytes"]} ({MB(r["max_usage_in_bytes"])})')
    row("failcnt", lambda r: r["failcnt"])
    row("kmem.usage_in_bytes (MB)", lambda r: f'{r["kmem.usage_in_bytes"]} ({MB(r["kmem.usage_in_bytes"])})')
    row("kmem.max_usage_in_bytes (MB)", lambda r: f'{r["kmem.max_usage_in_bytes"]} ({MB(r["kmem.max_usage_in_bytes"])})')
    row("kmem.failcnt", lambda r: r["kmem.failcnt"])
    row("memory.kmem.slabinfo size", lambda r: f'{r["kmem_slabinfo_bytes"]} bytes (empty)')
    row("stat cache / rss (MB)", lambda r: f'{MB(r["stat_cache"])} / {MB(r["stat_rss"])}')
    row("stat dirty (B)", lambda r: r["stat_dirty"])
    row("stat active_file / inactive_file (MB)", lambda r: f'{MB(r["stat_active_file"])} / {MB(r["stat_inactive_file"])}')
    row("stat pgpgin / pgpgout (pages)", lambda r: f'{r["stat_pgpgin"]} / {r["stat_pgpgout"]}')
    row("stat workingset_refault_file", lambda r: r["stat_workingset_refault_file"])
    for c in ["dentry", "ext4_inode_cache", "buffer_head"]:
        row(f"global {c} active/num before → after", lambda r, c=c: f'{r[c+"_b"][0]}/{r[c+"_b"][1]} → {r[c+"_a"][0]}/{r[c+"_a"][1]}')
        row(f"  Δ active {c} (≈ held by du cgroup)", lambda r, c=c: r[c+"_a"][0] - r[c+"_b"][0])
    row("global slabs_scanned Δ", lambda r: r["slabs_scanned_a"] - r["slabs_scanned_b"])
    row("global pginodesteal b→a", lambda r: f'{r["pginodesteal_b"]}→{r["pginodesteal_a"]}')
    row("global kswapd_inodesteal b→a", lambda r: f'{r["kswapd_inodesteal_b"]}→{r["kswapd_inodesteal_a"]}')
    for k in ["Slab", "SReclaimable", "Buffers"]:
        row(f"meminfo {k} kB b→a", lambda r, k=k: f'{r[k+"_b"]}→{r[k+"_a"]}')
    out = ["| figure | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    out += ["| " + " | ".join(str(x) for x in rw) + " |" for rw in rows]
    return "\n".join(out)
if __name__ == "__main__":
    for mode, lims in (("du", ["unlimited", "64M", "32M"]), ("find", ["64M", "unlimited"])):
        for lim in lims:
            fs = sorted(glob.glob(f"{L}/{mode}_{lim}_r*.txt"))
            if not fs: continue
            runs = [(os.path.basename(f)[:-4], parse(f)) for f in fs]
            print(f"\n### {mode} — limit {lim}\n"); print(table(runs))
    r = parse(f"{L}/du_unlimited_r1.txt")
    print(f'\nobjsize (/proc/slabinfo): dentry {r["dentry_objsize"]} B, ext4_inode_cache {r["ext4_inode_cache_objsize"]} B, buffer_head {r["buffer_head_objsize"]} B')
