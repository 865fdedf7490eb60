# Tutorial: add a swap file (the steps of the usual "how to add swap" guides).
# machine: default
fallocate -l 1G /swapfile
chmod 600 /swapfile
mkswap /swapfile
swapon /swapfile
swapon --show
free -h
cat /proc/swaps
dmesg | tail -n 1
