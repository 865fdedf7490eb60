# Tutorial: allocate until the OOM killer steps in, then read what the kernel logged.
# machine: default
swapoff -a
free -m
stress-ng --vm 2 --vm-bytes 5G --vm-keep --timeout 30s
dmesg | tail -n 40
dmesg | grep -i "killed process"
