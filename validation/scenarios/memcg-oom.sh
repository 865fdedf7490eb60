# machine: validation/machine-1g.toml
# Scenario (b) of docs/memcg.md: anonymous memory beyond the cgroup's memory + swap limit:
# the cgroup swaps up to its memory+swap limit, then the memcg OOM killer kills the job.
memhog 1700M
free -m
