//! Machine files, presets and --set overrides, through the public API.

use memtwin_machine::size::parse_size;
use memtwin_machine::*;
use proptest::prelude::*;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

/// A valid machine; tests replace one line (1-based) to break it.
const BASE: &str = r#"name = "t"
description = "test machine"
ram = "2G"
kernel_reserve = "100M"
kernel = "linux-6.x"
hostname = "box"
cpus = 2
boot_anon = "100M"
boot_file = "10M"

[cpu]
copy_bw = "6G"
page_fault_ns = 700

[[disk]]
name = "vda"
size = "20G"
preset = "virtio"
read_ahead_kb = 256

[[disk]]
name = "vdb"
size = "4G"
preset = "virtio"

[[mount]]
source = "/dev/vda"
at = "/"
fstype = "ext4"

[[mount]]
source = "tmpfs"
at = "/dev/shm"
size = "512M"

[[swap]]
partition = "vdb"
size = "4G"

[sysctl]
"vm.swappiness" = 60
"net.ipv4.tcp_rmem" = "4096 87380 174760"
"#;

/// BASE with line `n` (1-based) replaced by `with`.
fn replace(n: usize, with: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    lines[n - 1] = with;
    lines.join("\n") + "\n"
}

/// BASE with `extra` appended (it starts on line BASE_LINES + 1).
fn append(extra: &str) -> String {
    format!("{BASE}{extra}")
}

const BASE_LINES: usize = 42;

fn err(text: &str) -> String {
    match parse_toml(text, "bad.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.message,
    }
}

fn assert_err(text: &str, line: usize, contains: &[&str]) {
    let e = err(text);
    let prefix = format!("bad.toml:{line}: ");
    assert!(e.starts_with(&prefix), "expected '{prefix}...', got: {e}");
    for c in contains {
        assert!(e.contains(c), "expected '{c}' in: {e}");
    }
    assert!(!e.contains('\n'), "not one line: {e}");
}

#[test]
fn base_is_valid() {
    assert_eq!(BASE.lines().count(), BASE_LINES);
    let m = parse_toml(BASE, "t.toml").unwrap();
    assert_eq!(m.name, "t");
    assert_eq!(m.ram_bytes, 2 * GIB);
    assert_eq!(m.kernel_reserve_bytes, Some(100 * MIB));
    assert_eq!(m.mem_total_bytes(), 2 * GIB - 100 * MIB);
    assert_eq!(m.cpus, 2);
    assert_eq!(m.kernel, KernelProfile::Linux6);
    assert_eq!(m.hostname, "box");
    assert_eq!(m.cpu_model.copy_bw, 6.0 * GIB as f64);
    assert_eq!(m.cpu_model.zero_bw, CpuModel::default().zero_bw);
    assert_eq!(m.disks.len(), 2);
    assert_eq!((m.disks[0].major, m.disks[0].minor), (253, 0));
    assert_eq!((m.disks[1].major, m.disks[1].minor), (253, 16));
    assert_eq!(m.disks[0].read_ahead_kb, 256);
    assert_eq!(m.disks[1].read_ahead_kb, DEFAULT_READ_AHEAD_KB);
    assert_eq!(m.disks[0].model, DeviceModel::preset("virtio").unwrap());
    assert_eq!(
        m.mounts[1],
        Mount {
            source: "tmpfs".into(),
            mountpoint: "/dev/shm".into(),
            fstype: "tmpfs".into(),
            size_bytes: Some(512 * MIB)
        }
    );
    assert_eq!(
        m.swaps,
        vec![SwapDevice {
            kind: SwapKind::Partition { disk: "vdb".into() },
            size_bytes: 4 * GIB,
            priority: None,
            enabled: true
        }]
    );
    assert_eq!(m.sysctl.tcp_rmem, [4096, 87380, 174760]);
    m.validate().unwrap();
}

#[test]
fn name_defaults_to_the_file_name() {
    let text = BASE.replacen("name = \"t\"\n", "\n", 1);
    assert_eq!(
        parse_toml(&text, "machines/laptop-16g.toml").unwrap().name,
        "laptop-16g"
    );
}

#[test]
fn every_preset_parses_and_validates() {
    assert_eq!(
        preset_names(),
        vec!["default", "seed-000", "seed-003", "seed-002", "optiplex-gx115", "ml110-g4", "ml110-g6", "seed-004", "qemu-6.1", "example"]
    );
    for info in PRESETS {
        let m = preset(info.name).unwrap_or_else(|e| panic!("{}: {e}", info.name));
        assert_eq!(m.name, info.name);
        assert_eq!(
            m.description, info.description,
            "PresetInfo and the file disagree"
        );
        m.validate().unwrap();
        assert_eq!(load(info.name).unwrap(), m);
    }
}

#[test]
fn seed_000_matches_the_article() {
    let m = preset("seed-000").unwrap();
    assert_eq!(m.mem_total_bytes() / 1024, 1924020, "free's total");
    assert_eq!(m.mem_total_bytes() % 1024, 0);
    assert_eq!(m.ram_bytes, 2 * GIB);
    assert_eq!(m.cpus, 2);
    assert_eq!(m.hostname, "sakura-vm");
    let vda = m.disk("vda").unwrap();
    assert_eq!(vda.dev(), "253:0", "[flush-253:0]");
    assert_eq!(vda.model.preset, "virtio");
    assert!(vda.model.write_through, "the host commits each write before the next");
    assert_eq!(vda.model.write_latency_ns, 1_200_000);
    assert!(vda.model.latency_ns < vda.model.write_latency_ns);
    assert_eq!(m.swaps.len(), 1);
    // SwapTotal is the area less its header page.
    assert_eq!((m.swaps[0].size_bytes / 4096 - 1) * 4, 4128760, "free's Swap total");
    assert_eq!(m.swaps[0].kind, SwapKind::Partition { disk: "vdb".into() });
    assert_eq!(m.mounts[0].source, "/dev/vda");
    assert_eq!(m.mounts[0].mountpoint, "/");
    assert_eq!(m.sysctl, Sysctls::default());
}

#[test]
fn seed_003_matches_the_article() {
    let m = preset("seed-003").unwrap();
    assert_eq!(m.ram_bytes, 16 * GIB);
    assert_eq!(m.mem_total_bytes(), 15670 * MIB, "top's 15670,0 total");
    assert_eq!(m.cpus, 8);
    assert_eq!(m.kernel, KernelProfile::Linux58);
    assert_eq!(m.disk("nvme0n1").unwrap().dev(), "259:0");
    assert_eq!(
        m.swaps[0].kind,
        SwapKind::File {
            path: "/swapfile".into()
        }
    );
    assert_eq!(m.swaps[0].size_bytes, 16 * GIB, "top's 16384,0 swap total");
}

#[test]
fn default_preset_is_an_ordinary_server() {
    let m = preset("default").unwrap();
    assert_eq!(m.ram_bytes, 8 * GIB);
    assert_eq!(m.cpus, 4);
    assert_eq!(m.kernel, KernelProfile::Linux6);
    assert_eq!(m.disk("sda").unwrap().model.preset, "sata-ssd");
    assert_eq!(m.disk("sda").unwrap().size_bytes, 256 * GIB);
    assert_eq!(m.disk("sdb").unwrap().dev(), "8:16");
    assert_eq!(m.swaps[0].size_bytes, 2 * GIB);
    assert_eq!(m.cpu_model, CpuModel::default());
}

#[test]
fn example_documents_the_default_machine() {
    let mut ex = preset("example").unwrap();
    let d = preset("default").unwrap();
    ex.name = d.name.clone();
    ex.description = d.description.clone();
    assert_eq!(
        ex, d,
        "example.toml must spell out exactly the default machine"
    );
}

// ---- errors, each with the line of the offending key ----

#[test]
fn cpus_zero_on_line_7() {
    assert_err(&replace(7, "cpus = 0"), 7, &["cpus = 0", "1 to 1024"]);
    assert_err(&replace(7, "cpus = 1025"), 7, &["1 to 1024"]);
    assert_err(
        &replace(7, "cpus = -1"),
        7,
        &["cpus: expected a whole number"],
    );
    assert_err(&replace(7, "cpus = 99999999999"), 7, &["1 to 1024"]);
    assert_err(
        &replace(7, "cpus = \"two\""),
        7,
        &["cpus: expected a whole number, got 'two'"],
    );
}

#[test]
fn ram_out_of_range() {
    assert_err(
        &replace(3, "ram = \"8M\""),
        3,
        &["ram = 8M is too small (at least 16M)"],
    );
    assert_err(
        &replace(3, "ram = \"17T\""),
        3,
        &["too large (at most 16T)"],
    );
    assert_err(
        &replace(3, "ram = \"12QB\""),
        3,
        &["ram: invalid size '12QB'", "e.g. 4096, 512K"],
    );
    assert_err(
        &replace(3, "ram = 2.5"),
        3,
        &["ram: expected a size like \"2G\""],
    );
    assert_err(&replace(3, "ram = [1]"), 3, &["got an array"]);
}

#[test]
fn kernel_reserve_must_be_below_ram() {
    assert_err(
        &replace(4, "kernel_reserve = \"2G\""),
        4,
        &["kernel_reserve = 2G must be less than ram (2G)"],
    );
    assert_err(
        &replace(4, "kernel_reserve = \"2045M\""),
        4,
        &["leaves MemTotal"],
    );
}

#[test]
fn default_reserve_scales_down_on_a_tiny_machine() {
    // memmap (RAM/64) + kernel image and early allocations (RAM/32, at most 64M).
    let text = replace(4, "")
        .replace("ram = \"2G\"", "ram = \"32M\"")
        .replace("boot_anon = \"100M\"", "");
    let m = parse_toml(&text, "tiny.toml").unwrap();
    assert_eq!(m.mem_total_bytes(), (32 << 20) - (32 << 20) / 64 - (32 << 20) / 32);
}

#[test]
fn unknown_kernel_profile_lists_the_accepted() {
    assert_err(
        &replace(5, "kernel = \"linux-7\""),
        5,
        &[
            "unknown kernel profile 'linux-7'",
            "linux-6.x, linux-5.8, linux-5.4, linux-2.6.39, linux-2.4",
        ],
    );
}

#[test]
fn unknown_keys_name_the_accepted_ones() {
    assert_err(
        &replace(2, "colour = \"blue\""),
        2,
        &["unknown key 'colour'", "accepted: name, description, ram"],
    );
    assert_err(
        &replace(13, "page_faults_ns = 700"),
        13,
        &["unknown key 'page_faults_ns' in [cpu]", "page_fault_ns"],
    );
    assert_err(
        &replace(19, "readahead_kb = 256"),
        19,
        &["unknown key 'readahead_kb' in [[disk]] #1", "read_ahead_kb"],
    );
    assert_err(
        &replace(33, "mountpoint = \"/dev/shm\""),
        33,
        &[
            "unknown key 'mountpoint' in [[mount]] #2",
            "accepted: source, at, fstype, size",
        ],
    );
    assert_err(
        &replace(2, "vm.swappiness = 10"),
        2,
        &["unknown key 'vm'", "sysctls go under [sysctl]"],
    );
}

#[test]
fn unknown_device_preset_lists_the_accepted() {
    assert_err(
        &replace(18, "preset = \"floppy\""),
        18,
        &[
            "unknown device preset 'floppy'",
            "hdd-7200, sata-ssd, nvme, virtio, ramdisk",
        ],
    );
}

#[test]
fn custom_devices_need_their_numbers() {
    let text = replace(18, "write_bw = 100e6");
    assert_err(
        &text,
        15,
        &["disk 'vda' has no preset", "missing: read_bw, latency_us"],
    );
    let ok = replace(
        18,
        "read_bw = \"100M\"\nwrite_bw = 50e6\nlatency_us = 0.5\nseek_us = 4000\nrotational = true",
    );
    let m = parse_toml(&ok, "ok.toml").unwrap();
    let d = &m.disk("vda").unwrap().model;
    assert_eq!(
        (
            d.preset.as_str(),
            d.read_bw,
            d.write_bw,
            d.latency_ns,
            d.seek_ns,
            d.rotational
        ),
        ("custom", 100.0 * MIB as f64, 50e6, 500, 4_000_000, true)
    );
}

#[test]
fn bad_device_values() {
    assert_err(
        &replace(19, "read_bw = 0"),
        19,
        &["read_bw: a bandwidth must be a positive"],
    );
    assert_err(
        &replace(19, "read_bw = \"fast\""),
        19,
        &["read_bw: invalid rate 'fast'"],
    );
    assert_err(
        &replace(19, "queue_depth = 0"),
        19,
        &["queue_depth = 0 is out of range"],
    );
    assert_err(&replace(19, "max_request_kb = 6"), 19, &["multiple of 4"]);
    assert_err(&replace(19, "latency_us = -3"), 19, &["out of range"]);
    assert_err(
        &replace(19, "rotational = \"maybe\""),
        19,
        &["expected true or false"],
    );
    assert_err(
        &replace(19, "write_through = 2"),
        19,
        &["expected true or false"],
    );
}

#[test]
fn write_through_overrides_the_preset() {
    let m = parse_toml(&replace(19, "write_through = true"), "wt.toml").unwrap();
    assert!(m.disk("vda").unwrap().model.write_through);
    let m = parse_toml(&replace(19, "write_through = false"), "wt.toml").unwrap();
    assert!(!m.disk("vda").unwrap().model.write_through);
}

#[test]
fn disk_names_are_linux_names() {
    assert_err(
        &replace(16, "name = \"disk0\""),
        16,
        &["'disk0' is not a Linux disk name", "vdX"],
    );
}

#[test]
fn duplicate_disk_names() {
    assert_err(
        &replace(22, "name = \"vda\""),
        22,
        &["duplicate disk name 'vda'"],
    );
}

#[test]
fn mounts_and_swaps_must_name_existing_disks() {
    assert_err(
        &replace(27, "source = \"/dev/vdc\""),
        27,
        &["'/dev/vdc' names no disk of this machine (disks: vda, vdb)"],
    );
    assert_err(
        &replace(37, "partition = \"vdc\""),
        37,
        &["swap partition 'vdc' names no disk"],
    );
    assert_err(
        &replace(27, "source = \"/dev/vdb\""),
        37,
        &["/dev/vdb is mounted as a filesystem"],
    );
}

#[test]
fn swap_partition_larger_than_its_disk() {
    assert_err(
        &replace(38, "size = \"5G\""),
        38,
        &["swap partition on vdb (5G) is larger than the disk (4G)"],
    );
}

#[test]
fn swap_needs_exactly_one_kind() {
    assert_err(
        &replace(37, "priority = 3"),
        36,
        &["[[swap]] #1 needs one of partition = DISK, file = PATH or zram = ALGORITHM"],
    );
    assert_err(
        &replace(38, "zram = \"lz4\""),
        38,
        &["more than one of partition, file and zram"],
    );
    assert_err(
        &replace(37, "zram = \"lz5\""),
        37,
        &["unknown zram algorithm 'lz5'", "lzo-rle"],
    );
    assert_err(&replace(37, "file = \"/dev/shm/swap\""), 37, &["on tmpfs"]);
    assert_err(
        &replace(37, "file = \"swapfile\""),
        37,
        &["absolute file path"],
    );
    assert_err(
        &append("[[swap]]\nfile = \"/swapfile\"\n"),
        BASE_LINES + 1,
        &["[[swap]] #2 has no 'size'"],
    );
}

#[test]
fn swap_partition_without_size_is_the_whole_disk() {
    let m = parse_toml(&replace(38, ""), "ok.toml").unwrap();
    assert_eq!(m.swaps[0].size_bytes, 4 * GIB);
}

#[test]
fn mount_rules() {
    assert_err(
        &replace(28, "at = \"/dev/shm\""),
        33,
        &["two filesystems are mounted at /dev/shm"],
    );
    assert_err(
        &replace(28, "at = \"/data\""),
        26,
        &["no filesystem is mounted at /"],
    );
    assert_err(
        &replace(29, "fstype = \"ntfs\""),
        29,
        &["unknown fstype 'ntfs'", "ext4, ext3"],
    );
    assert_err(
        &replace(29, "size = \"1G\""),
        29,
        &["size is for tmpfs only"],
    );
    assert_err(&replace(33, "at = \"mnt\""), 33, &["absolute path"]);
    assert_err(
        &replace(34, "size = 0"),
        34,
        &["tmpfs size must be positive"],
    );
}

#[test]
fn bad_sysctls_use_the_sysctl_message() {
    assert_err(
        &replace(41, "\"vm.swappiness\" = 300"),
        41,
        &["vm.swappiness: 300 is out of range (0..=200)"],
    );
    assert_err(
        &replace(41, "\"vm.swapiness\" = 30"),
        41,
        &["unknown sysctl 'vm.swapiness'"],
    );
    assert_err(
        &replace(41, "\"vm.drop_caches\" = 3"),
        41,
        &["vm.drop_caches is an action"],
    );
    assert_err(
        &replace(42, "\"net.ipv4.tcp_rmem\" = \"1 2\""),
        42,
        &["expected 3 whitespace-separated numbers"],
    );
    assert_err(
        &replace(41, "\"vm.swappiness\" = 1.5"),
        41,
        &["expected a whole number or a string"],
    );
}

#[test]
fn sysctl_spellings() {
    let text = replace(41, "vm.swappiness = 10\nvm.dirty_ratio = 5\n\"net.ipv4.tcp_wmem\" = [4096, 16384, 4194304]");
    let m = parse_toml(&text, "ok.toml").unwrap();
    assert_eq!(m.sysctl.swappiness, 10);
    assert_eq!(m.sysctl.dirty_ratio, 5);
    assert_eq!(m.sysctl.tcp_wmem, [4096, 16384, 4194304]);
    // A tunable the model does not read is accepted at its default only.
    assert!(parse_toml(&replace(41, "\"vm.split_reclaim\" = 1"), "t.toml").unwrap().sysctl.split_reclaim);
    assert_err(&replace(41, "\"vm.split_reclaim\" = 2"), 41, &["vm.split_reclaim: 2 is out of range (0..=1)"]);
    assert_err(&replace(41, "\"net.ipv4.tcp_wmem\" = [4096, 16384, 8388608]"), 41, &["net.ipv4.tcp_wmem: not modelled"]);
    // A dotted key has no span of its own in toml: the error still lands on its line.
    assert_err(
        &replace(41, "vm.swappiness = 300"),
        41,
        &["vm.swappiness: 300 is out of range"],
    );
    assert_err(
        &replace(41, "[sysctl.vm]\nswappiness = 300"),
        42,
        &["vm.swappiness: 300"],
    );
}

#[test]
fn malformed_toml_gives_origin_and_line() {
    assert_err(&replace(9, "boot_file = \"10M"), 9, &["invalid TOML"]);
    assert_err(&replace(12, "copy_bw = "), 12, &["invalid TOML"]);
    assert_err(&replace(20, "[[disk]"), 20, &["invalid TOML"]);
    assert_err(
        &replace(6, "ram = \"4G\""),
        6,
        &["invalid TOML", "duplicate key"],
    );
    assert_err(
        &replace(6, "hostname = 1979-05-27"),
        6,
        &["dates and times are not used"],
    );
    assert_err(
        "ram = \"2G\"\ncpus = 1\ncpu = 1\n",
        3,
        &["'cpu' must be a table"],
    );
    assert_err(&replace(25, "[mount]"), 26, &["invalid TOML"]);
}

#[test]
fn missing_required_keys() {
    assert_err(&replace(3, ""), 1, &["missing key 'ram'"]);
    assert_err(&replace(7, ""), 1, &["missing key 'cpus'"]);
    assert_err(&replace(16, ""), 15, &["[[disk]] #1 has no 'name'"]);
    assert_err(&replace(17, ""), 15, &["[[disk]] #1 has no 'size'"]);
    assert_err(&replace(28, ""), 26, &["[[mount]] #1 has no 'at'"]);
}

#[test]
fn boot_memory_must_fit() {
    assert_err(
        &replace(8, "boot_anon = \"3G\""),
        8,
        &["does not fit in MemTotal"],
    );
}

#[test]
fn disk_wrongly_written_as_a_table_or_value() {
    let text = "ram = \"2G\"\ncpus = 1\ndisk = \"vda\"\n";
    assert_err(
        text,
        3,
        &["'disk' must be an array of tables: write [[disk]] sections"],
    );
}

// ---- load ----

#[test]
fn load_files_and_presets() {
    let e = load("machines/no-such-machine.toml").unwrap_err().message;
    assert_eq!(e, "cannot read machine file 'machines/no-such-machine.toml': No such file or directory");
    let e = load("laptop").unwrap_err().message;
    assert_eq!(e, "unknown machine preset 'laptop' (presets: default, seed-000, seed-003, seed-002, optiplex-gx115, ml110-g4, ml110-g6, seed-004, qemu-6.1, example; or a path to a .toml file)");

    let dir = std::env::temp_dir().join(format!("memtwin-machine-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.toml");
    std::fs::write(&good, BASE).unwrap();
    assert_eq!(load(good.to_str().unwrap()).unwrap().name, "t");
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, replace(7, "cpus = 0")).unwrap();
    let e = load(bad.to_str().unwrap()).unwrap_err().message;
    assert!(e.starts_with(&format!("{}:7: ", bad.display())), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- --set ----

#[test]
fn apply_set_changes_the_machine() {
    let mut m = parse_toml(BASE, "t.toml").unwrap();
    apply_set(&mut m, "ram=256M").unwrap();
    assert_eq!(m.ram_bytes, 256 * MIB);
    let mut d = preset("default").unwrap();
    let anon = d.boot_anon_bytes;
    apply_set(&mut d, "ram=1G").unwrap();
    assert_eq!(d.boot_anon_bytes, anon / 8, "the idle system scales with RAM");
    apply_set(&mut m, "cpus=4").unwrap();
    assert_eq!(m.cpus, 4);
    apply_set(&mut m, "vm.dirty_ratio=5").unwrap();
    assert_eq!(m.sysctl.dirty_ratio, 5);
    apply_set(&mut m, "vm/swappiness = 1").unwrap();
    assert_eq!(m.sysctl.swappiness, 1);
    apply_set(&mut m, "kernel=linux-2.6.39").unwrap();
    assert_eq!(m.kernel, KernelProfile::Linux2639);
    // 2.4 has no vm.swappiness: the machine's swappiness of 1 could not be honoured there.
    assert!(apply_set(&mut m.clone(), "kernel=linux-2.4").is_err());
    apply_set(&mut m, "kernel_reserve=default").unwrap();
    assert_eq!(m.kernel_reserve_bytes, None);
    apply_set(&mut m, "hostname=box").unwrap();
    assert_eq!(m.hostname, "box");
    apply_set(&mut m, "boot_anon=20M").unwrap();
    assert_eq!(m.boot_anon_bytes, 20 * MIB);
    apply_set(&mut m, "disk.vda.read_bw=100M").unwrap();
    assert_eq!(m.disk("vda").unwrap().model.read_bw, 100.0 * MIB as f64);
    apply_set(&mut m, "disk.vda.latency_us=250").unwrap();
    assert_eq!(m.disk("vda").unwrap().model.latency_ns, 250_000);
    apply_set(&mut m, "disk.vda.read_ahead_kb=512").unwrap();
    assert_eq!(m.disk("vda").unwrap().read_ahead_kb, 512);
    apply_set(&mut m, "disk.vda.preset=hdd-7200").unwrap();
    assert!(m.disk("vda").unwrap().model.rotational);
    apply_set(&mut m, "cpu.copy_bw=3e9").unwrap();
    assert_eq!(m.cpu_model.copy_bw, 3e9);
    apply_set(&mut m, "cpu.page_fault_ns=1000").unwrap();
    assert_eq!(m.cpu_model.page_fault_ns, 1000);
}

#[test]
fn apply_set_swap() {
    let mut m = preset("seed-000").unwrap();
    apply_set(&mut m, "swap=8G").unwrap();
    assert_eq!(m.swaps[0].size_bytes, 8 * GIB);
    assert_eq!(
        m.disk("vdb").unwrap().size_bytes,
        8 * GIB,
        "the swap-only disk grows with its swap"
    );
    apply_set(&mut m, "swap=1G").unwrap();
    assert_eq!(m.swaps[0].size_bytes, GIB);
    apply_set(&mut m, "swap=0").unwrap();
    assert!(m.swaps.is_empty());
    let e = apply_set(&mut m, "swap=1G").unwrap_err().message;
    assert!(
        e.starts_with("--set swap=1G: the machine has no swap device"),
        "{e}"
    );

    let mut laptop = preset("seed-003").unwrap();
    let e = apply_set(&mut laptop, "swap=600G").unwrap_err().message;
    assert!(
        e.contains("larger than its filesystem's disk nvme0n1"),
        "{e}"
    );
}

#[test]
fn apply_set_rejects_nonsense() {
    let orig = preset("default").unwrap();
    let mut m = orig.clone();
    let cases: &[(&str, &str)] = &[
        ("ram=12QB", "--set ram=12QB: invalid size '12QB'"),
        (
            "nonsense=1",
            "--set nonsense=1: unknown key 'nonsense' (accepted: ram, cpus",
        ),
        (
            "vm.swappiness=300",
            "--set vm.swappiness=300: vm.swappiness: 300 is out of range (0..=200)",
        ),
        ("ram", "--set ram: expected KEY=VALUE"),
        ("=4G", "--set =4G: expected KEY=VALUE"),
        ("ram=8M", "--set ram=8M: ram = 8M is too small"),
        (
            "cpus=0",
            "--set cpus=0: cpus = 0: a machine has 1 to 1024 CPUs",
        ),
        (
            "kernel=linux-7",
            "--set kernel=linux-7: unknown kernel profile 'linux-7' (accepted: linux-6.x",
        ),
        (
            "kernel_reserve=9G",
            "--set kernel_reserve=9G: kernel_reserve = 9G must be less than ram",
        ),
        (
            "disk.vdz.read_bw=1G",
            "--set disk.vdz.read_bw=1G: the machine has no disk 'vdz' (disks: sda, sdb)",
        ),
        (
            "disk.sda.speed=1G",
            "--set disk.sda.speed=1G: unknown disk field 'speed' (accepted: disk.NAME.size",
        ),
        (
            "disk.sda.preset=floppy",
            "--set disk.sda.preset=floppy: unknown device preset 'floppy'",
        ),
        ("disk.sda=1", "--set disk.sda=1: expected disk.NAME.FIELD"),
        (
            "disk.sdb.size=1G",
            "--set disk.sdb.size=1G: swap partition on sdb (2G) is larger than the disk (1G)",
        ),
        (
            "cpu.speed=3",
            "--set cpu.speed=3: unknown CPU field 'speed' (accepted: copy_bw",
        ),
        ("cpu.copy_bw=-1", "--set cpu.copy_bw=-1: "),
        (
            "vm.drop_caches=3",
            "--set vm.drop_caches=3: vm.drop_caches is an action",
        ),
        (
            "vm.nonsense=1",
            "--set vm.nonsense=1: unknown sysctl 'vm.nonsense'",
        ),
    ];
    for (kv, want) in cases {
        let e = apply_set(&mut m, kv).expect_err(kv).message;
        assert!(e.starts_with(want), "{kv}: got {e}");
        assert!(!e.contains('\n'));
        assert_eq!(m, orig, "a rejected --set must leave the machine unchanged");
    }
}

#[test]
fn validate_reports_programmatic_mistakes() {
    let mut m = preset("default").unwrap();
    m.disks[0].major = 3;
    assert!(m
        .validate()
        .unwrap_err()
        .message
        .contains("Linux gives it 8:0"));
}

#[test]
fn sizes_in_files_follow_parse_size() {
    for (s, want) in [
        ("\"1.5G\"", 3 * GIB / 2),
        ("\"1536M\"", 3 * GIB / 2),
        ("1610612736", 3 * GIB / 2),
    ] {
        let m = parse_toml(&replace(3, &format!("ram = {s}")), "ok.toml").unwrap();
        assert_eq!(m.ram_bytes, want);
    }
    assert_eq!(parse_size("4128760K").unwrap(), 4128760 * KIB);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn parse_toml_never_panics(text in "\\PC{0,300}") {
        let _ = parse_toml(&text, "fuzz.toml");
    }

    #[test]
    fn parse_toml_never_panics_on_tomlish(text in "[a-z_\\[\\]\"=.0-9 \n#{},-]{0,300}") {
        let _ = parse_toml(&text, "fuzz.toml");
    }

    /// Mutations of a valid file: every error is one line starting with origin:line.
    #[test]
    fn mutated_files_fail_cleanly(line in 1usize..=BASE_LINES, with in "[a-z_\\[\\]\"=. 0-9-]{0,30}") {
        let text = replace(line, &with);
        if let Err(e) = parse_toml(&text, "m.toml") {
            prop_assert!(e.message.starts_with("m.toml:"), "{}", e.message);
            let rest = &e.message["m.toml:".len()..];
            let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            prop_assert!(!n.is_empty() && rest[n.len()..].starts_with(": "), "{}", e.message);
            let n: usize = n.parse().unwrap();
            prop_assert!((1..=BASE_LINES + 1).contains(&n), "{}", e.message);
            prop_assert!(!e.message.contains('\n'));
        }
    }

    #[test]
    fn apply_set_never_panics(kv in "\\PC{0,60}") {
        let mut m = preset("seed-000").unwrap();
        let _ = apply_set(&mut m, &kv);
    }

    #[test]
    fn apply_set_never_panics_on_keyish(
        key in "(ram|cpus|kernel|kernel_reserve|hostname|boot_anon|boot_file|swap|disk\\.vd[ab]\\.[a-z_]{1,14}|cpu\\.[a-z_]{1,15}|vm\\.[a-z_]{1,20})",
        value in "[-0-9.a-zA-Z ]{0,12}",
    ) {
        let mut m = preset("seed-000").unwrap();
        let before = m.clone();
        if apply_set(&mut m, &format!("{key}={value}")).is_err() {
            prop_assert_eq!(m, before);
        } else {
            prop_assert!(m.validate().is_ok());
        }
    }
}

// ---- [net] and the era presets ----

#[test]
fn net_section_and_set() {
    let m = parse_toml(BASE, "t.toml").unwrap();
    assert_eq!(m.net, NetModel::default());
    let text = append("\n[net]\nnic = \"eth0\"\nlink_mbit = 100\nrtt_us = 2500.5\nmtu = 9000\nrx_packet_ns = 4000\nrx_byte_ns = 0.5\nbus_bw = \"100M\"\n");
    let m = parse_toml(&text, "t.toml").unwrap();
    assert_eq!(m.net.nic, "eth0");
    assert_eq!(m.net.link_bps, 100e6);
    assert_eq!(m.net.rtt_ns, 2_500_500);
    assert_eq!(m.net.mtu, 9000);
    assert_eq!(m.net.rx_packet_ns, 4000);
    assert_eq!(m.net.rx_byte_ns, 0.5);
    assert_eq!(m.net.bus_bw, Some(100.0 * MIB as f64));
    assert_err(&append("\n[net]\nmtu = 100\n"), BASE_LINES + 3, &["net.mtu = 100", "576 to 65535"]);
    assert_err(&append("\n[net]\nspeed = 1\n"), BASE_LINES + 3, &["unknown key 'speed' in [net]", "link_mbit"]);
    assert_err(&append("\n[net]\nrtt_us = 0\n"), BASE_LINES + 3, &["net.rtt_us"]);
    // No command shows the interface's name: another name would be accepted and ignored.
    assert_err(&append("\n[net]\nnic = \"eth1\"\n"), BASE_LINES + 3, &["nic", "not modelled", "only 'eth0'"]);
    assert_err(&replace(2, "net.ipv4.tcp_rmem = \"1 2 3\""), 2, &["unknown key 'ipv4' in [net]", "sysctls go under [sysctl]"]);

    let mut m = preset("default").unwrap();
    apply_set(&mut m, "net.rtt_us=1000").unwrap();
    assert_eq!(m.net.rtt_ns, 1_000_000);
    apply_set(&mut m, "net.link_mbit=10000").unwrap();
    assert_eq!(m.net.link_bps, 10e9);
    apply_set(&mut m, "net.bus_bw=none").unwrap();
    assert_eq!(m.net.bus_bw, None);
    // net.ipv4.* is still a sysctl.
    apply_set(&mut m, "net.ipv4.tcp_rmem=4096 873800 1747600").unwrap();
    assert_eq!(m.sysctl.tcp_rmem, [4096, 873800, 1747600]);
    apply_set(&mut m, "net.ipv4.tcp_adv_win_scale=2").unwrap();
    assert_eq!(m.sysctl.tcp_adv_win_scale, 2);
    let e = apply_set(&mut m, "net.mtu=10").unwrap_err().message;
    assert!(e.starts_with("--set net.mtu=10: net.mtu = 10"), "{e}");
    let e = apply_set(&mut m, "net.ipv4.tcp_adv_win_scale=40").unwrap_err().message;
    assert!(e.contains("out of range"), "{e}");
    apply_set(&mut m, "cpu.stdio_char_ns=40").unwrap();
    assert_eq!(m.cpu_model.stdio_char_ns, 40);
}

/// Seed 001's machines: memory bandwidth from the memory technology (55% of one channel's
/// peak for one core; a copy-out moves 1 byte of DRAM traffic per byte, a copy-in to a new
/// page 2), an HDD of the era and a tmpfs RAM disk at /mnt/ram.
#[test]
fn seed_001_machines_follow_their_hardware() {
    let peak_per_channel = [("optiplex-gx115", 133e6 * 8.0), ("ml110-g4", 667e6 * 8.0), ("ml110-g6", 1333e6 * 8.0)];
    let mut last_copy = 0.0;
    for (name, peak) in peak_per_channel {
        let m = preset(name).unwrap();
        let copy = m.cpu_model.copy_bw;
        let derived = 0.55 * peak;
        assert!((copy / derived - 1.0).abs() < 0.02, "{name}: copy_bw {copy} vs 0.55 x {peak}");
        let copy_in = m.cpu_model.copy_in_bw;
        assert!((copy_in / (derived / 2.0) - 1.0).abs() < 0.02, "{name}: copy_in_bw {copy_in} vs 0.55 x {peak} / 2");
        assert!(copy > last_copy, "newer memory copies faster");
        last_copy = copy;
        let ram = m.mounts.iter().find(|mt| mt.mountpoint == "/mnt/ram").expect("a RAM disk at /mnt/ram");
        assert_eq!(ram.fstype, "tmpfs");
        let root = m.mounts.iter().find(|mt| mt.mountpoint == "/").unwrap();
        let disk = m.disk(root.source.trim_start_matches("/dev/")).unwrap();
        assert!(disk.model.rotational && disk.model.preset == "hdd-7200");
        assert!((40e6..=130e6).contains(&disk.model.read_bw), "{name}: a 7200 rpm disk of its era");
    }
    let gx = preset("optiplex-gx115").unwrap();
    assert_eq!((gx.ram_bytes, gx.cpus, gx.kernel), (512 * MIB, 1, KernelProfile::Linux24));
    assert_eq!(gx.disk("hda").unwrap().dev(), "3:0");
    let g6 = preset("ml110-g6").unwrap();
    assert_eq!(g6.mounts[1].size_bytes, Some(GIB));
}

#[test]
fn seed_002_is_a_2002_pc() {
    let m = preset("seed-002").unwrap();
    assert_eq!((m.ram_bytes, m.cpus, m.kernel), (128 * MIB, 1, KernelProfile::Linux24));
    assert_eq!(m.sysctl.bdflush, Bdflush::DEFAULT);
    assert_eq!(m.sysctl.tcp_rmem, [4096, 87380, 174760], "the article's boot-time tcp_rmem");
    assert_eq!(m.sysctl.tcp_adv_win_scale, 2);
    assert_eq!(m.sysctl.tcp_moderate_rcvbuf, 0, "2.4 has no receive autotuning");
    assert_eq!(m.net.link_bps, 1e9);
    let hda = m.disk("hda").unwrap();
    assert!((30e6..=40e6).contains(&hda.model.read_bw));
}

/// Split reclaim (seed 004): `reclaim = "split"` and the vm.split_reclaim sysctl are one
/// switch; S_start is a share of MemTotal or bytes; the patch's eras only.
#[test]
fn split_reclaim_setting() {
    let m = preset("seed-004").unwrap();
    assert!(!m.sysctl.split_reclaim);
    assert_eq!(m.cpus, 32);
    assert_eq!(m.kernel, KernelProfile::Linux2639);
    let set = |m: &Machine, kv: &str| {
        let mut n = m.clone();
        apply_set(&mut n, kv).map(|_| n)
    };
    let s = set(&m, "reclaim=split").unwrap();
    assert!(s.sysctl.split_reclaim);
    assert_eq!(s.sysctl.slab_reclaim_start(64 * GIB), 32 * GIB);
    // S_start as bytes or a share of MemTotal (the byte setting wins when set).
    let mut c = s.sysctl.clone();
    c.slab_reclaim_start_bytes = GIB;
    assert_eq!(c.slab_reclaim_start(64 * GIB), GIB);
    // S_start: a percentage of MemTotal (1-100) or bytes; writing one clears the other.
    let q = set(&s, "vm.slab_reclaim_start_percent=25").unwrap();
    assert_eq!(q.sysctl.slab_reclaim_start(64 * GIB), 16 * GIB);
    assert!(set(&s, "vm.slab_reclaim_start_percent=0").is_err());
    let q = set(&q, "vm.slab_reclaim_start_bytes=1073741824").unwrap();
    assert_eq!(q.sysctl.slab_reclaim_start(64 * GIB), GIB);
    assert!(set(&s, "vm.page_reclaim_start_kbytes=65536").is_ok());
    let e = set(&m, "reclaim=fast").unwrap_err().message;
    assert!(e.contains("accepted: \"classic\""), "{e}");
    // linux-2.6.39 and linux-6.x only.
    assert!(set(&set(&m, "kernel=linux-6.x").unwrap(), "reclaim=split").is_ok());
    let e = set(&set(&m, "kernel=linux-5.8").unwrap(), "reclaim=split").unwrap_err().message;
    assert!(e.contains("linux-2.6.39 and linux-6.x only, not on linux-5.8"), "{e}");
    let e = err(&replace(5, "kernel = \"linux-2.4\"\nreclaim = \"split\""));
    assert!(e.contains("not on linux-2.4"), "{e}");
}

#[test]
fn cpu_identity_is_read_from_the_cpu_table_and_checked() {
    let m = parse_toml(&replace(12, "model_name = \"Intel(R) Xeon(R) CPU X5670 @ 2.93GHz\"\nmhz = 2933.0\nthreads_per_core = 2\naddress_bits = \"40 48\""), "t.toml").unwrap();
    assert_eq!(m.cpu_id.model_name, "Intel(R) Xeon(R) CPU X5670 @ 2.93GHz");
    assert_eq!((m.cpu_id.mhz, m.cpu_id.threads_per_core, m.cpu_id.address_bits), (2933.0, 2, (40, 48)));
    assert_eq!(m.cpu_model.page_fault_ns, 700, "the costs beside it are kept");
    // Without identity keys: the documented generic virtual CPU.
    assert_eq!(parse_toml(BASE, "t.toml").unwrap().cpu_id, memtwin_machine::CpuIdentity::generic());
    assert_err(&replace(12, "mhz = 0"), 12, &["mhz", "out of range"]);
    assert_err(&replace(12, "threads_per_core = 0"), 12, &["at least 1"]);
    assert_err(&replace(12, "address_bits = \"48\""), 12, &["expected \"PHYSICAL VIRTUAL\""]);
    assert_err(&replace(12, "model_name = 7"), 12, &["expected a string"]);
}

#[test]
fn userland_is_stated_or_follows_the_kernel() {
    use memtwin_machine::{KernelProfile, Userland};
    let m = parse_toml(BASE, "t.toml").unwrap();
    assert_eq!(m.userland, None);
    assert_eq!(m.userland(), Userland::Debian12);
    let mut old = m.clone();
    old.kernel = KernelProfile::Linux2639;
    assert_eq!(old.userland(), Userland::Centos6);
    old.kernel = KernelProfile::Linux24;
    assert_eq!(old.userland(), Userland::Centos3);
    old.kernel = KernelProfile::Linux58;
    assert_eq!(old.userland(), Userland::Ubuntu2004);
    // Line 6 is `hostname`: a stated userland wins over the kernel's era.
    let m = parse_toml(&replace(6, "userland = \"centos-6\""), "t.toml").unwrap();
    assert_eq!(m.userland(), Userland::Centos6);
    assert_err(&replace(6, "userland = \"rhel-9\""), 6, &["unknown userland 'rhel-9'", "debian-12", "centos-3"]);
}

/// A tunable the machine's kernel has no file for is refused unless left at its default:
/// the model would otherwise ignore it.
#[test]
fn a_tunable_the_era_lacks_is_refused() {
    let mut m = preset("seed-002").unwrap();
    for kv in ["vm.min_free_kbytes=4096", "vm.dirty_ratio=40", "vm.swappiness=10", "vm.watermark_scale_factor=100"] {
        let e = apply_set(&mut m.clone(), kv).unwrap_err().message;
        assert!(e.contains("linux-2.4 has no such tunable"), "{kv}: {e}");
    }
    apply_set(&mut m, "vm.bdflush=100 500 0 0 500 3000 100 20 0").unwrap();
    let mut old = preset("seed-004").unwrap();
    let e = apply_set(&mut old, "vm.watermark_scale_factor=100").unwrap_err().message;
    assert!(e.contains("linux-2.6.39 has no such tunable"), "{e}");
    apply_set(&mut old, "vm.min_free_kbytes=65536").unwrap();
    let mut new = preset("seed-000").unwrap();
    let e = apply_set(&mut new, "vm.bdflush=100 500 0 0 500 3000 100 20 0").unwrap_err().message;
    assert!(e.contains("has no such tunable"), "{e}");
    apply_set(&mut new, "vm.watermark_scale_factor=100").unwrap();
}
