# Seed 003's swapdemo at a small scale, for sweeps: run it with --set ram=3G and a swappiness
# from the sweep's grid (the script itself sets none). The demo maps a 1 GiB library and
# 3 GiB of shared anonymous data on a 3 GiB machine (data + library = RAM + 1 GiB, as in the
# article), beside an idle application holding 256 MiB.
# machine: seed-003
dd if=/dev/urandom of=library.bin bs=1M count=1024 status=none
sync
memhog 256M --comm firefox --active 0.15 &
sleep 5
time swapdemo --mem-gb 3 --lib-gb 1 --data-gb 3 --chunk-gb 1
free -m
