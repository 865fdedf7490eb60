# machine: machines/qemu-6.1.toml
# guest.sh (the guest's seed000) in the twin: the same commands in the same order; each
# step is preceded by a marker and followed by /proc/vmstat and /proc/meminfo (the guest
# saves /proc/vmstat per step and samples /proc/meminfo). Run from the repository root.
cat /proc/vmstat /proc/meminfo
echo STEP free; free; cat /proc/vmstat /proc/meminfo
echo STEP swapoff; swapoff -a; cat /proc/vmstat /proc/meminfo
echo STEP swapon; swapon -a; cat /proc/vmstat /proc/meminfo
echo STEP free; free; cat /proc/vmstat /proc/meminfo
echo STEP sync; sync; cat /proc/vmstat /proc/meminfo
echo STEP drop_caches; echo 1 > /proc/sys/vm/drop_caches; cat /proc/vmstat /proc/meminfo
echo STEP dd_write; dd if=/dev/zero of=test bs=1M count=512; cat /proc/vmstat /proc/meminfo
echo STEP sleep35; sleep 35; cat /proc/vmstat /proc/meminfo
echo STEP dd_read; dd if=test of=/dev/null bs=1M count=512; cat /proc/vmstat /proc/meminfo
echo STEP dd_write_direct; dd if=/dev/zero of=test bs=1M count=512 oflag=direct; cat /proc/vmstat /proc/meminfo
echo STEP dd_write; dd if=/dev/zero of=test bs=1M count=512; cat /proc/vmstat /proc/meminfo
echo STEP sleep5; sleep 5; cat /proc/vmstat /proc/meminfo
echo STEP dd_2G_anon; dd if=/dev/zero of=/dev/null bs=2G count=1; cat /proc/vmstat /proc/meminfo
echo STEP dd_read; dd if=test of=/dev/null bs=1M count=512; cat /proc/vmstat /proc/meminfo
echo STEP dd_read; dd if=test of=/dev/null bs=1M count=512; cat /proc/vmstat /proc/meminfo
echo STEP rm; rm -f test; cat /proc/vmstat /proc/meminfo
echo STEP sleep2; sleep 2; cat /proc/vmstat /proc/meminfo
echo STEP free; free; cat /proc/vmstat /proc/meminfo
