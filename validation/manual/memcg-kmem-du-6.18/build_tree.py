#!/usr/bin/env python3
# Build /tmp/kmem-real/tree: 200000 empty files, 30 per leaf dir, 30-ary dir tree above.
import os, sys, time
ROOT = "/tmp/kmem-real/tree"
NFILES, FAN = 200000, 30
t0 = time.time()
os.mkdir(ROOT)
nleaf = (NFILES + FAN - 1) // FAN           # 6667
made = set(); ndirs = 1; nf = 0
for leaf in range(nleaf):
    b = leaf // FAN                         # level-2 dir index 0..222
    a = b // FAN                            # level-1 dir index 0..7
    p1 = f"{ROOT}/d{a}"; p2 = f"{p1}/d{b % FAN}"; p3 = f"{p2}/d{leaf % FAN}"
    for p in (p1, p2):
        if p not in made:
            os.mkdir(p); made.add(p); ndirs += 1
    os.mkdir(p3); ndirs += 1
    for i in range(min(FAN, NFILES - leaf * FAN)):
        fd = os.open(f"{p3}/f{i}", os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
        os.close(fd); nf += 1
print(f"files={nf} dirs={ndirs} (incl. root) leafdirs={nleaf} secs={time.time()-t0:.1f}")
