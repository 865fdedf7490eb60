# "Why was my container OOM-killed while free shows gigabytes available?" A batch job in
# a cgroup with memory.max=1G and no swap allowed (memory.swap.max=0) allocates 1.5 GiB.
# The limit is the cgroup's, not the machine's: reclaim inside the cgroup finds nothing
# to take (anonymous memory, no swap for it), and after MAX_RECLAIM_RETRIES the memcg OOM
# killer kills the job (constraint=CONSTRAINT_MEMCG) — while `free`, which reads the
# host's /proc/meminfo, shows most of the 8 GiB free before and after.
# machine: default

mkdir /sys/fs/cgroup/batch
echo 1G > /sys/fs/cgroup/batch/memory.max
echo 0 > /sys/fs/cgroup/batch/memory.swap.max
free -m
cgexec -g memory:batch memhog 1500M
echo status $?
cat /sys/fs/cgroup/batch/memory.events
cat /sys/fs/cgroup/batch/memory.peak
free -m
