# machine: validation/machine-1g.toml
# Anonymous memory beyond the limit with swap: every page written to swap is counted as
# stolen when reclaim frees it (pgsteal_anon follows pswpout).
memhog 1200M --active 0.01 --every 1 &
sleep 6
free -m
