# machine: validation/machine-1g-rotational.toml
# Anonymous memory beyond the limit, half of it read again every second: what was swapped
# out comes back through swap readahead (the cluster kind on a rotational swap device),
# whose window grows with the readahead pages the faults find (swap_ra, swap_ra_hit against
# pgmajfault and pswpin).
memhog 1200M --active 0.5 --every 1 &
sleep 8
free -m
