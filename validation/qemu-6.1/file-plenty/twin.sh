# machine: machines/qemu-6.1.toml
# guest.sh in the twin: the same commands in the same order; each step is preceded by a
# marker and followed by /proc/vmstat and /proc/meminfo. Run from the repository root.
cat /proc/vmstat /proc/meminfo
echo STEP free; free; cat /proc/vmstat /proc/meminfo
echo STEP dd_write; dd if=/dev/zero of=file bs=1M count=1200; cat /proc/vmstat /proc/meminfo
echo STEP sync; sync; cat /proc/vmstat /proc/meminfo
echo STEP dd_read; dd if=file of=/dev/null bs=1M; cat /proc/vmstat /proc/meminfo
echo STEP dd_900M_anon; dd if=/dev/zero of=/dev/null bs=900M count=1; cat /proc/vmstat /proc/meminfo
echo STEP free; free; cat /proc/vmstat /proc/meminfo
echo STEP dd_reread; dd if=file of=/dev/null bs=1M; cat /proc/vmstat /proc/meminfo
echo STEP free; free; cat /proc/vmstat /proc/meminfo
