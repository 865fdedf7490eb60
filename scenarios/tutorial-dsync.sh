# Tutorial: a disk write speed test with O_DSYNC (every block waits for the device)
# against a buffered write of the same data that lands in the page cache.
# machine: default
dd if=/dev/zero of=/root/testfile bs=4k count=2000 oflag=dsync
rm /root/testfile
dd if=/dev/zero of=/root/testfile bs=4k count=2000
sync
dd if=/dev/zero of=/root/testfile bs=1M count=256 conv=fdatasync
rm /root/testfile
