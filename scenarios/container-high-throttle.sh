# memory.high throttles instead of killing: the same 800 MiB job runs twice, first
# unconstrained, then in a cgroup with memory.high=256M. Over high, every return to user
# space reclaims the pages charged above it (reclaim_high: the job's pages go to swap)
# and sleeps the penalty calculate_high_delay gives for the overage left (at most 2 s per
# return). The job finishes — slower — with no OOM kill; memory.events counts "high".
# machine: default

time memhog 800M
mkdir /sys/fs/cgroup/job
echo 256M > /sys/fs/cgroup/job/memory.high
time cgexec -g memory:job memhog 800M
cat /sys/fs/cgroup/job/memory.events
cat /sys/fs/cgroup/job/memory.peak
cat /sys/fs/cgroup/job/memory.swap.peak
