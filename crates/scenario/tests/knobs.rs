//! Every setting memtwin accepts acts in the model or is refused: none is accepted and then
//! ignored. The test walks every sysctl (`sysctl_names`) and every machine field `--set`
//! takes (`settable_fields`), changes it in a small probe scenario and checks that
//! something observable changes (the transcript, the exit status, the simulated time or a
//! sampled /proc counter), or that the setting is refused as not modelled.
//!
//! A new knob fails this test until it is given a row here: a probe that shows its effect,
//! or a refusal.

use memtwin_scenario::{RunOptions, RunResult};

/// Memory, page cache, writeback, reclaim and swap on the seed-000 VM at 512 MB.
const MEM: &str = "# machine: seed-000
echo 1 > /proc/sys/vm/drop_caches
vmstat 1 2 &
time dd if=/dev/zero of=f bs=1M count=200
wait
sync
echo 3 > /proc/sys/vm/drop_caches
time dd if=f of=/dev/null bs=4k
time dd if=/dev/vdb of=/dev/null bs=4k skip=1029120
time memhog -r2 700M
sleep 8
free
df
cat /proc/meminfo
";

/// Reclaim that shrinks the dentry cache along with the page cache (no drop_caches first).
const SLAB: &str = "# machine: seed-000
memhog -r2 700M
grep -E 'Slab|SReclaimable' /proc/meminfo
";
/// A stat storm over a generated tree (examples/file-tree.toml): dentry and inode cache
/// misses, directory and inode-table block reads.
const VFS: &str = "time du -s /export
";
/// The same tree's dentries and inodes on a 6.x machine whose memory is full of page cache,
/// while a reader streams a file: the reader's page-cache allocations split the blocks
/// kswapd frees, so slab allocations fall back to smaller movable blocks (and boost the
/// watermarks).
const VFS_BOOST: &str = "dd if=/dev/zero of=/big bs=1M count=600
dd if=/big of=/dev/null bs=1M &
du -s /export
wait
grep -E '^(pgsteal_kswapd|pageoutrun) ' /proc/vmstat
";

/// Swapping to zram: memhog's pages are compressed on the way out and decompressed on the
/// way back.
const ZRAM: &str = "# machine: seed-000
swapoff -a
zramctl --find --size 1G
mkswap /dev/zram0
swapon -p 100 /dev/zram0
time memhog -r2 700M
";

/// The commit charge: an allocation larger than RAM and swap together.
const COMMIT: &str = "# machine: seed-000
memhog 1700M
echo status $?
";

/// The OOM killer: a holder of memory, then another allocation that runs out.
const OOM: &str = "# machine: seed-000
memhog 300M --active 0.5 &
sleep 2
memhog 400M
echo status $?
";

/// A download over TCP (seed 002's machine, Linux 2.4) with SO_RCVBUF set by the program.
const NET: &str = "# machine: seed-002
time ftp -r 1000000 get 20M /dev/null
";

/// A download over TCP with receive-buffer autotuning (seed 002's machine on Linux 6.x).
const NET6: &str = "# machine: seed-002
time ftp get 20M /dev/null
";

/// Dirty data below the background threshold, left to age.
const DIRTY: &str = "# machine: seed-000
dd if=/dev/zero of=g bs=1M count=8
sleep 12
";

/// The flusher's periodic wake-up (wb_check_old_data_flush every dirty_writeback_centisecs)
/// writes inodes dirtied more than dirty_expire_centisecs (30 s) ago: with wake-ups every
/// 5 s the pages written at 0 s are still dirty at 31 s (the wake-up at 30 s found them
/// 29.9 s old); every 1 s they are written by then.
const WB: &str = "# machine: seed-000
dd if=/dev/zero of=g bs=1M count=8
sleep 31
grep -E '^(Dirty|Writeback):' /proc/meminfo
";

/// Linux 2.4's bdflush (seed 002's machine).
const BDFLUSH: &str = "# machine: seed-002
dd if=/dev/zero of=/root/src bs=1M count=40
time cp /root/src /root/dst
sleep 10
free
";

/// Which cgroup hierarchy a process sees (v2: one line; v1: the memory controller's line).
const CGROUP: &str = "# machine: seed-000
cat /proc/self/cgroup
";

/// bonnie++ prints the machine's host name.
const BONNIE: &str = "# machine: seed-000
bonnie++ -d /root -s 16 -r 8 -u root -n 0 --min-time=0.01
";

/// Allocators outrunning kswapd: direct reclaim, classic or split reclaim's page reclaim
/// (`reclaimstat` names the path and counts the invocations).
const SPLIT: &str = "# machine: seed-000
dd if=/dev/zero of=big bs=1M count=400 2>/dev/null
for i in 1 2 3 4 5 6 7 8; do memhog 40M >/dev/null & done
wait
reclaimstat --ns
";

/// Settings applied to both runs of a probe.
fn base_sets(probe: &str) -> Vec<String> {
    match probe {
        "MEM" | "BONNIE" | "DIRTY" | "WB" | "SLAB" | "SPLIT" | "ZRAM" => vec!["ram=512M".into()],
        "SPLIT_ON" => vec!["ram=512M".into(), "reclaim=split".into()],
        "VFS_SPLIT" => vec!["reclaim=split".into()],
        "VFS_BOOST" => vec!["kernel=linux-6.x".into(), "ram=512M".into()],
        // rotational and seek_us act together: a seek costs seek_us on rotational media.
        "MEM_SEEK" => ["ram=512M", "disk.vda.seek_us=8000", "disk.vdb.seek_us=8000"].iter().map(|s| s.to_string()).collect(),
        "MEM_ROT" => ["ram=512M", "disk.vda.rotational=true", "disk.vdb.rotational=true"].iter().map(|s| s.to_string()).collect(),
        // A 20 ms round trip: the receive window limits the transfer.
        "NET6" => vec!["kernel=linux-6.x".into(), "net.rtt_us=20000".into()],
        // ... with 6.x's own tcp_rmem, so autotuning has room to grow the buffer.
        "NET6D" => ["kernel=linux-6.x", "net.rtt_us=20000", "net.ipv4.tcp_rmem=4096 131072 6291456", "net.ipv4.tcp_adv_win_scale=1"].iter().map(|s| s.to_string()).collect(),
        "COMMIT" => vec!["ram=512M".into(), "swap=1G".into()],
        "OOM" => vec!["ram=512M".into(), "swap=0".into()],
        _ => vec![],
    }
}

fn probe_text(probe: &str) -> &'static str {
    match probe {
        "VFS" | "VFS_SPLIT" => VFS,
        "VFS_BOOST" => VFS_BOOST,
        "MEM" | "MEM_SEEK" | "MEM_ROT" => MEM,
        "NET6" | "NET6D" => NET6,
        "DIRTY" => DIRTY,
        "WB" => WB,
        "SLAB" => SLAB,
        "COMMIT" => COMMIT,
        "OOM" => OOM,
        "ZRAM" => ZRAM,
        "NET" => NET,
        "BDFLUSH" => BDFLUSH,
        "BONNIE" => BONNIE,
        "SPLIT" | "SPLIT_ON" => SPLIT,
        "CGROUP" => CGROUP,
        "CPUINFO" => "cat /proc/cpuinfo\n",
        "FREE" => "free\nvmstat\n",
        _ => panic!("no probe {probe}"),
    }
}

/// What a knob does: changed to VALUE, probe PROBE shows it; or it is refused.
enum Row {
    Acts(&'static str, &'static str),
    /// Refused by `--set` with a message containing this text.
    Refused(&'static str, &'static str),
}

fn row(key: &str) -> Option<Row> {
    use Row::*;
    Some(match key {
        "vm.swappiness" => Acts("100", "MEM"),
        "vm.dirty_ratio" => Acts("2", "MEM"),
        "vm.dirty_background_ratio" => Acts("1", "MEM"),
        "vm.dirty_bytes" => Acts("4000000", "MEM"),
        "vm.dirty_background_bytes" => Acts("1000000", "MEM"),
        "vm.dirty_writeback_centisecs" => Acts("100", "WB"),
        "vm.dirty_expire_centisecs" => Acts("100", "DIRTY"),
        "vm.min_free_kbytes" => Acts("60000", "MEM"),
        "vm.watermark_scale_factor" => Acts("500", "MEM"),
        "vm.watermark_boost_factor" => Acts("0", "VFS_BOOST"),
        "vm.page-cluster" => Acts("0", "MEM"),
        "vm.overcommit_memory" => Acts("1", "COMMIT"),
        "vm.overcommit_ratio" => Acts("90", "MEM"),
        "vm.oom_kill_allocating_task" => Acts("1", "OOM"),
        "vm.bdflush" => Acts("80 500 0 0 500 3000 90 60 0", "BDFLUSH"),
        "vm.drop_caches" => Refused("3", "an action, not a setting"),
        "vm.vfs_cache_pressure" => Acts("0", "SLAB"),
        "cpu.cache_miss_ns" => Acts("400", "VFS"),
        "vm.split_reclaim" => Acts("1", "SPLIT"),
        "vm.slab_reclaim_start_percent" => Acts("1", "VFS_SPLIT"),
        "vm.slab_reclaim_start_bytes" => Acts("1048576", "VFS_SPLIT"),
        "vm.page_reclaim_start_kbytes" => Acts("60000", "SPLIT_ON"),
        "reclaim" => Acts("split", "SPLIT"),
        "net.ipv4.tcp_rmem" => Acts("4096 873800 1747600", "NET6"),
        "net.ipv4.tcp_wmem" => Refused("4096 16384 131072", "not modelled"),
        "net.core.rmem_max" => Acts("4096", "NET"),
        "net.core.rmem_default" => Refused("65535", "not modelled"),
        "net.ipv4.tcp_moderate_rcvbuf" => Acts("1", "NET6D"),
        "net.ipv4.tcp_adv_win_scale" => Acts("1", "NET6"),
        "net.ipv4.tcp_window_scaling" => Acts("0", "NET"),
        "ram" => Acts("768M", "MEM"),
        "kernel_reserve" => Acts("64M", "MEM"),
        "cpus" => Acts("1", "MEM"),
        "kernel" => Acts("linux-5.4", "MEM"),
        "hostname" => Acts("probe", "BONNIE"),
        // The default machine's Debian 12 against CentOS 6's procps 3.2.8 layouts.
        "userland" => Acts("centos-6", "FREE"),
        "boot_anon" => Acts("100M", "MEM"),
        "cgroup" => Acts("v1", "CGROUP"),
        "boot_file" => Acts("100M", "MEM"),
        "swap" => Acts("1G", "MEM"),
        "cpu.copy_bw" => Acts("1G", "MEM"),
        // The CPU's identity: what /proc/cpuinfo prints.
        "cpu.vendor_id" => Acts("AuthenticAMD", "CPUINFO"),
        "cpu.model_name" => Acts("Test CPU", "CPUINFO"),
        "cpu.cpu_family" => Acts("15", "CPUINFO"),
        "cpu.model" => Acts("1", "CPUINFO"),
        "cpu.stepping" => Acts("9", "CPUINFO"),
        "cpu.mhz" => Acts("1234.5", "CPUINFO"),
        "cpu.cache_kb" => Acts("512", "CPUINFO"),
        "cpu.cores_per_package" => Acts("2", "CPUINFO"),
        "cpu.threads_per_core" => Acts("2", "CPUINFO"),
        "cpu.cpuid_level" => Acts("7", "CPUINFO"),
        "cpu.flags" => Acts("fpu", "CPUINFO"),
        "cpu.bugs" => Acts("spectre_v1", "CPUINFO"),
        "cpu.address_bits" => Acts("44 48", "CPUINFO"),
        "cpu.microcode" => Acts("0xf0", "CPUINFO"),
        "cpu.vmx_flags" => Acts("vnmi ept", "CPUINFO"),
        "cpu.zero_bw" => Acts("1G", "MEM"),
        "cpu.copy_in_bw" => Acts("100M", "MEM"),
        "cpu.page_cache_add_ns" => Acts("5000", "MEM"),
        "cpu.lru_add_ns" => Acts("5000", "MEM"),
        "cpu.fs_write_page_ns" => Acts("20000", "MEM"),
        "cpu.fs_read_page_ns" => Acts("20000", "MEM"),
        "cpu.compress_scale" => Acts("50", "ZRAM"),
        "cpu.page_alloc_ns" => Acts("2000", "MEM"),
        "cpu.page_cache_ns" => Acts("2000", "MEM"),
        "cpu.reclaim_scan_ns" => Acts("2000", "MEM"),
        "cpu.page_fault_ns" => Acts("5000", "MEM"),
        "cpu.syscall_ns" => Acts("5000", "MEM"),
        "cpu.io_request_ns" => Acts("50000", "MEM"),
        "cpu.stdio_char_ns" => Acts("500", "BONNIE"),
        "net.nic" => Refused("eth1", "not modelled"),
        "net.link_mbit" => Acts("10", "NET"),
        "net.rtt_us" => Acts("20000", "NET"),
        "net.mtu" => Acts("576", "NET"),
        "net.rx_packet_ns" => Acts("100000", "NET"),
        "net.rx_byte_ns" => Acts("50", "NET"),
        "net.bus_bw" => Acts("1M", "NET"),
        k if k.starts_with("disk.") => {
            let field = k.rsplit('.').next().unwrap_or("");
            let v = match field {
                "size" => "4200M",
                "preset" => "hdd-7200",
                "read_bw" => "20M",
                "write_bw" => "20M",
                "latency_us" => "5000",
                "write_latency_us" => "5000",
                "seek_us" => "8000",
                "rotational" => "true",
                "queue_depth" => "1",
                "max_request_kb" => "16",
                "read_ahead_kb" => "8",
                // seed-000's disks are virtio, whose host writes through.
                "write_through" => "false",
                _ => return None,
            };
            let probe = match field {
                "rotational" => "MEM_SEEK",
                "seek_us" => "MEM_ROT",
                _ => "MEM",
            };
            Acts(v, probe)
        }
        _ => return None,
    })
}

fn run(probe: &str, extra: Option<String>) -> Result<RunResult, memtwin_scenario::RunError> {
    let mut sets = base_sets(probe);
    sets.extend(extra);
    memtwin_scenario::run(&RunOptions {
        script_path: Some(format!("{probe}.sh")),
        script_text: Some(probe_text(probe).to_string()),
        machine: if probe.starts_with("VFS") { concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/file-tree.toml").into() } else { String::new() },
        sets,
        seed: 1,
        ..Default::default()
    })
}

fn same(a: &RunResult, b: &RunResult) -> bool {
    a.transcript == b.transcript
        && a.exit_status == b.exit_status
        && a.sim_seconds.to_bits() == b.sim_seconds.to_bits()
        && a.series.columns == b.series.columns
}

fn machine_of(probe: &str) -> memtwin_machine::Machine {
    let name = if probe.starts_with("NET") || probe == "BDFLUSH" { "seed-002" } else { "seed-000" };
    memtwin_machine::load(name).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_knob_acts_or_is_refused() {
    let mut keys: Vec<(String, &str)> = memtwin_machine::sysctl_names().iter().map(|s| (s.to_string(), "sysctl")).collect();
    let mut fields: Vec<String> = memtwin_machine::settable_fields(&machine_of("MEM"));
    fields.extend(memtwin_machine::settable_fields(&machine_of("NET")).into_iter().filter(|f| f.starts_with("net.")));
    fields.sort();
    fields.dedup();
    keys.extend(fields.into_iter().map(|f| (f, "--set")));
    let mut baselines = std::collections::HashMap::new();
    let mut table = String::new();
    let mut failures = Vec::new();
    for (key, kind) in &keys {
        let Some(r) = row(key) else {
            failures.push(format!("{key}: no row in this test (give it a probe that shows its effect, or refuse it)"));
            continue;
        };
        match r {
            Row::Refused(v, why) => match run(if key.starts_with("net.") && !key.contains("ipv4") && !key.contains("core") { "NET" } else { "MEM" }, Some(format!("{key}={v}"))) {
                Err(e) if e.message.contains(why) => table.push_str(&format!("{key:<34} {kind:<7} refused: {}\n", e.message)),
                Err(e) => failures.push(format!("{key}={v}: refused, but not as '{why}': {e}")),
                Ok(_) => failures.push(format!("{key}={v}: accepted, but the model does not read it")),
            },
            Row::Acts(v, probe) => {
                let base = baselines.entry(probe).or_insert_with(|| run(probe, None).unwrap_or_else(|e| panic!("probe {probe}: {e}")));
                let base = base.clone();
                match run(probe, Some(format!("{key}={v}"))) {
                    Err(e) => failures.push(format!("{key}={v}: refused on probe {probe}: {e}")),
                    Ok(r) if same(&r, &base) => failures.push(format!("{key}={v}: accepted, but probe {probe} shows no difference:\n{}", r.transcript)),
                    Ok(_) => table.push_str(&format!("{key:<34} {kind:<7} modelled ({key}={v} changes probe {probe})\n")),
                }
            }
        }
    }
    println!("{table}");
    assert!(failures.is_empty(), "settings accepted and ignored, or unlisted:\n{}\n\nchecked:\n{table}", failures.join("\n"));
}

#[test]
fn not_modelled_sysctls_are_refused_in_scripts_and_the_script_goes_on() {
    for (name, default, _) in memtwin_machine::NOT_MODELLED {
        let path = format!("/proc/sys/{}", name.replace('.', "/"));
        let text = format!("# machine: seed-000\nsysctl -w {name}=7\necho status $?\necho 7 > {path}\necho status $?\nsysctl -w {name}=\"{default}\"\necho status $?\n");
        let r = memtwin_scenario::run(&RunOptions {
            script_path: Some("refused.sh".into()),
            script_text: Some(text),
            machine: String::new(),
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.transcript.lines().filter(|l| l.contains("not modelled")).count(), 2, "{name}: both writes refused:\n{}", r.transcript);
        assert_eq!(r.transcript.matches("status 1\n").count(), 2, "{name}: a refused write fails:\n{}", r.transcript);
        assert!(r.transcript.ends_with("status 0\n"), "{name}: its default is accepted:\n{}", r.transcript);
    }
}

#[test]
fn sysfs_writes_are_refused() {
    let r = memtwin_scenario::run(&RunOptions {
        script_path: Some("thp.sh".into()),
        script_text: Some("# machine: seed-000\necho always > /sys/kernel/mm/transparent_hugepage/enabled\n".into()),
        machine: String::new(),
        ..Default::default()
    });
    let e = r.err().expect("a write to /sys is refused");
    assert!(e.message.starts_with("thp.sh:2:") && e.message.contains("not modelled"), "{e}");
    // "never" is what the model does (4 KiB pages only): accepted, nothing changes.
    let r = memtwin_scenario::run(&RunOptions {
        script_path: Some("thp.sh".into()),
        script_text: Some("# machine: seed-000\necho never > /sys/kernel/mm/transparent_hugepage/enabled\necho $?\ncat /sys/kernel/mm/transparent_hugepage/enabled\n".into()),
        machine: String::new(),
        ..Default::default()
    })
    .expect("never is accepted");
    assert!(r.transcript.contains("# echo $?\n0\n") && r.transcript.contains("always madvise [never]\n"), "{}", r.transcript);
}
