//! What makes a machine possible. One set of rules serves machine files (which turn a problem's
//! `at` into FILE:LINE) and `--set` overrides (which name the override).

use std::collections::HashSet;

use crate::size::format_size;
use crate::{device, KernelProfile, Machine, SwapKind};

pub(crate) const MIN_RAM: u64 = 16 << 20;
pub(crate) const MAX_RAM: u64 = 16 << 40;
pub(crate) const MAX_CPUS: u32 = 1024;
/// The smallest MemTotal a kernel boots into with room for anything at all.
const MIN_MEM_TOTAL: u64 = 8 << 20;
/// mkswap refuses areas smaller than 10 pages.
const MIN_SWAP: u64 = 40 << 10;
/// Filesystem types a mount may have.
pub(crate) const FSTYPES: &[&str] = &["ext4", "ext3", "ext2", "xfs", "tmpfs"];
/// zram compressors (crypto API names the zram driver accepts).
pub(crate) const ZRAM_ALGORITHMS: &[&str] =
    &["lzo", "lzo-rle", "lz4", "lz4hc", "zstd", "deflate", "842"];
/// HOST_NAME_MAX.
const HOST_NAME_MAX: usize = 64;
/// Per-request times and CPU costs above this are not hardware, they are typos.
const MAX_NS: u64 = 10_000_000_000;

/// A rule the machine breaks. `at` names the offending setting with the machine file's
/// spelling: "ram", "cpu.copy_bw", "disk[1].name", "mount[0].source", "swap[0].size".
#[derive(Debug)]
pub(crate) struct Problem {
    pub at: String,
    pub message: String,
}

fn problem(at: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem {
        at: at.into(),
        message: message.into(),
    }
}

/// The mount whose mountpoint is the longest prefix of `path` (the filesystem holding it).
pub(crate) fn mount_of<'a>(m: &'a Machine, path: &str) -> Option<&'a crate::Mount> {
    m.mounts
        .iter()
        .filter(|mt| {
            mt.mountpoint == "/"
                || path == mt.mountpoint
                || path
                    .strip_prefix(mt.mountpoint.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
        .max_by_key(|mt| mt.mountpoint.len())
}

fn clean_abs_path(p: &str) -> bool {
    p.starts_with('/')
        && (p == "/" || !p.ends_with('/'))
        && !p.contains("//")
        && !p.split('/').any(|c| c == "." || c == "..")
        && !p.chars().any(|c| c.is_control())
}

pub(crate) fn check(m: &Machine) -> Result<(), Problem> {
    if m.ram_bytes < MIN_RAM {
        return Err(problem(
            "ram",
            format!(
                "ram = {} is too small (at least 16M)",
                format_size(m.ram_bytes)
            ),
        ));
    }
    if m.ram_bytes > MAX_RAM {
        return Err(problem(
            "ram",
            format!(
                "ram = {} is too large (at most 16T)",
                format_size(m.ram_bytes)
            ),
        ));
    }
    if m.cpus == 0 || m.cpus > MAX_CPUS {
        return Err(problem(
            "cpus",
            format!("cpus = {}: a machine has 1 to {MAX_CPUS} CPUs", m.cpus),
        ));
    }
    if let Some(r) = m.kernel_reserve_bytes {
        if r >= m.ram_bytes {
            return Err(problem(
                "kernel_reserve",
                format!(
                    "kernel_reserve = {} must be less than ram ({})",
                    format_size(r),
                    format_size(m.ram_bytes)
                ),
            ));
        }
    }
    let total = m.mem_total_bytes();
    if total < MIN_MEM_TOTAL {
        let at = if m.kernel_reserve_bytes.is_some() {
            "kernel_reserve"
        } else {
            "ram"
        };
        return Err(problem(
            at,
            format!(
                "ram = {} less the kernel reserve ({}) leaves MemTotal {}, below the 8M a kernel \
                 needs (the default reserve is RAM/64 + min(RAM/32, 64M); set kernel_reserve)",
                format_size(m.ram_bytes),
                format_size(m.ram_bytes - total),
                format_size(total)
            ),
        ));
    }
    let boot = m.boot_anon_bytes.saturating_add(m.boot_file_bytes);
    if boot >= total {
        return Err(problem(
            "boot_anon",
            format!(
                "boot_anon + boot_file = {} does not fit in MemTotal ({})",
                format_size(boot),
                format_size(total)
            ),
        ));
    }
    let h = &m.hostname;
    if h.is_empty()
        || h.len() > HOST_NAME_MAX
        || h.chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '/')
    {
        return Err(problem(
            "hostname",
            format!(
                "hostname '{h}' is not a valid host name (1 to 64 characters, no spaces or '/')"
            ),
        ));
    }

    // Split reclaim exists as a patch to 2.6.39-rc4 (seed 004); the model also runs it on
    // 6.x's reclaim to show what it would change today. Other eras' reclaim differs in the
    // parts the patch touches (2.4 has no shrinker list; 5.x sits between the two) and is
    // not modelled with it.
    let split_knobs = m.sysctl.split_reclaim
        || m.sysctl.slab_reclaim_start_bytes != 0
        || m.sysctl.page_reclaim_start_kbytes != 0
        || m.sysctl.slab_reclaim_start_percent != 50;
    if split_knobs && !matches!(m.kernel, KernelProfile::Linux2639 | KernelProfile::Linux6) {
        return Err(problem(
            "reclaim",
            format!(
                "split reclaim (reclaim = \"split\", vm.split_reclaim and its thresholds) is modelled on linux-2.6.39 and linux-6.x only, not on {}",
                m.kernel.name()
            ),
        ));
    }

    check_era_sysctls(m)?;
    check_cpu(m)?;
    check_net(m)?;
    check_disks(m)?;
    check_mounts(m)?;
    check_swaps(m)?;
    Ok(())
}

/// A tunable the machine's kernel has no file for may only stay at its default (the model
/// would otherwise ignore it): 2.4 has bdflush where later kernels have the dirty_* files
/// (2.5), no swappiness (2.5), min_free_kbytes (2.5), vfs_cache_pressure (2.6.0),
/// overcommit_ratio (2.5) or oom_kill_allocating_task (2.6.24); watermark_scale_factor
/// came with 4.6, watermark_boost_factor with 5.0; bdflush went with 2.5. (2.4's missing tcp_moderate_rcvbuf is the
/// profile's: it never autotunes, whatever the setting.)
fn check_era_sysctls(m: &Machine) -> Result<(), Problem> {
    let s = &m.sysctl;
    let d = crate::Sysctls::default();
    let linux24 = m.kernel == KernelProfile::Linux24;
    let pre_46 = matches!(m.kernel, KernelProfile::Linux24 | KernelProfile::Linux2639);
    let absent = [
        ("vm.bdflush", !linux24, s.bdflush != d.bdflush),
        ("vm.swappiness", linux24, s.swappiness != d.swappiness),
        ("vm.dirty_ratio", linux24, s.dirty_ratio != d.dirty_ratio),
        ("vm.dirty_background_ratio", linux24, s.dirty_background_ratio != d.dirty_background_ratio),
        ("vm.dirty_bytes", linux24, s.dirty_bytes != d.dirty_bytes),
        ("vm.dirty_background_bytes", linux24, s.dirty_background_bytes != d.dirty_background_bytes),
        ("vm.dirty_writeback_centisecs", linux24, s.dirty_writeback_centisecs != d.dirty_writeback_centisecs),
        ("vm.dirty_expire_centisecs", linux24, s.dirty_expire_centisecs != d.dirty_expire_centisecs),
        ("vm.min_free_kbytes", linux24, s.min_free_kbytes.is_some()),
        ("vm.vfs_cache_pressure", linux24, s.vfs_cache_pressure != d.vfs_cache_pressure),
        ("vm.overcommit_ratio", linux24, s.overcommit_ratio != d.overcommit_ratio),
        ("vm.oom_kill_allocating_task", linux24, s.oom_kill_allocating_task != d.oom_kill_allocating_task),
        ("vm.watermark_scale_factor", pre_46, s.watermark_scale_factor != d.watermark_scale_factor),
        ("vm.watermark_boost_factor", pre_46, s.watermark_boost_factor != d.watermark_boost_factor),
    ];
    for (name, lacks, set) in absent {
        if lacks && set {
            return Err(problem(
                name,
                format!("{name}: {} has no such tunable (/proc/sys/{} does not exist there); leave it at its default on this kernel", m.kernel.name(), name.replace('.', "/")),
            ));
        }
    }
    Ok(())
}

fn check_cpu(m: &Machine) -> Result<(), Problem> {
    let c = &m.cpu_model;
    for (name, bw) in [("copy_bw", c.copy_bw), ("copy_in_bw", c.copy_in_bw), ("zero_bw", c.zero_bw)] {
        if !(bw.is_finite() && bw > 0.0) {
            return Err(problem(
                format!("cpu.{name}"),
                format!("cpu.{name} = {bw}: a bandwidth must be a positive number of bytes/s"),
            ));
        }
    }
    if !(c.compress_scale.is_finite() && c.compress_scale > 0.0 && c.compress_scale <= 1000.0) {
        return Err(problem(
            "cpu.compress_scale".to_string(),
            format!("cpu.compress_scale = {}: a time ratio to the reference core, above 0 and at most 1000", c.compress_scale),
        ));
    }
    for (name, ns) in [
        ("page_alloc_ns", c.page_alloc_ns),
        ("page_cache_ns", c.page_cache_ns),
        ("page_cache_add_ns", c.page_cache_add_ns),
        ("lru_add_ns", c.lru_add_ns),
        ("fs_write_page_ns", c.fs_write_page_ns),
        ("fs_read_page_ns", c.fs_read_page_ns),
        ("reclaim_scan_ns", c.reclaim_scan_ns),
        ("page_fault_ns", c.page_fault_ns),
        ("syscall_ns", c.syscall_ns),
        ("io_request_ns", c.io_request_ns),
        ("stdio_char_ns", c.stdio_char_ns),
    ] {
        if ns > MAX_NS {
            return Err(problem(
                format!("cpu.{name}"),
                format!("cpu.{name} = {ns} is implausible (at most 10 s)"),
            ));
        }
    }
    Ok(())
}

fn check_net(m: &Machine) -> Result<(), Problem> {
    let n = &m.net;
    let name_ok = !n.nic.is_empty()
        && n.nic.len() < 16 // IFNAMSIZ
        && n.nic.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if !name_ok {
        return Err(problem(
            "net.nic",
            format!("net.nic = '{}' is not an interface name (1 to 15 letters, digits, '.', '-' or '_', e.g. eth0)", n.nic),
        ));
    }
    if !(n.link_bps.is_finite() && (1e3..=1e13).contains(&n.link_bps)) {
        return Err(problem(
            "net.link_mbit",
            format!("net.link_mbit = {}: a link runs at 0.001 to 10000000 megabits/s", n.link_bps / 1e6),
        ));
    }
    if n.rtt_ns == 0 || n.rtt_ns > MAX_NS {
        return Err(problem(
            "net.rtt_us",
            format!("net.rtt_us = {}: a round trip takes more than 0 and at most 10 s", n.rtt_ns as f64 / 1e3),
        ));
    }
    // IPv4 minimum (RFC 791: every host takes 576-byte datagrams) to the largest jumbo frame.
    if !(576..=65535).contains(&n.mtu) {
        return Err(problem("net.mtu", format!("net.mtu = {}: an IPv4 MTU is 576 to 65535 bytes", n.mtu)));
    }
    if n.rx_packet_ns > MAX_NS {
        return Err(problem("net.rx_packet_ns", format!("net.rx_packet_ns = {} is implausible (at most 10 s)", n.rx_packet_ns)));
    }
    if let Some(bw) = n.bus_bw {
        if !(bw.is_finite() && bw > 0.0) {
            return Err(problem("net.bus_bw", format!("net.bus_bw = {bw}: a bandwidth must be a positive number of bytes/s")));
        }
    }
    if !(n.rx_byte_ns.is_finite() && (0.0..=1e6).contains(&n.rx_byte_ns)) {
        return Err(problem("net.rx_byte_ns", format!("net.rx_byte_ns = {} is implausible (0 to 1000000 ns per byte)", n.rx_byte_ns)));
    }
    Ok(())
}

fn check_disks(m: &Machine) -> Result<(), Problem> {
    let mut seen = HashSet::new();
    let mut nvme = 0;
    for (i, d) in m.disks.iter().enumerate() {
        let at = |f: &str| format!("disk[{i}].{f}");
        let (major, minor) = device::device_numbers(&d.name, nvme)
            .map_err(|e| problem(at("name"), format!("disk name {e}")))?;
        if d.name.starts_with("nvme") {
            nvme += 1;
        }
        if !seen.insert(d.name.as_str()) {
            return Err(problem(
                at("name"),
                format!("duplicate disk name '{}'", d.name),
            ));
        }
        if (d.major, d.minor) != (major, minor) {
            return Err(problem(
                at("name"),
                format!(
                    "disk '{}' has device number {}:{}, but Linux gives it {major}:{minor}",
                    d.name, d.major, d.minor
                ),
            ));
        }
        if d.size_bytes < 1 << 20 {
            return Err(problem(
                at("size"),
                format!(
                    "disk '{}': size = {} is too small (at least 1M)",
                    d.name,
                    format_size(d.size_bytes)
                ),
            ));
        }
        if d.size_bytes % 512 != 0 {
            return Err(problem(
                at("size"),
                format!(
                    "disk '{}': size {} is not a whole number of 512-byte sectors",
                    d.name, d.size_bytes
                ),
            ));
        }
        let dm = &d.model;
        for (f, bw) in [("read_bw", dm.read_bw), ("write_bw", dm.write_bw)] {
            if !(bw.is_finite() && bw > 0.0) {
                return Err(problem(
                    at(f),
                    format!(
                        "disk '{}': {f} = {bw}: a bandwidth must be a positive number of bytes/s",
                        d.name
                    ),
                ));
            }
        }
        for (f, ns) in [("latency_us", dm.latency_ns), ("write_latency_us", dm.write_latency_ns), ("seek_us", dm.seek_ns)] {
            if ns > MAX_NS {
                return Err(problem(
                    at(f),
                    format!(
                        "disk '{}': {f} = {} is implausible (at most 10 s)",
                        d.name,
                        ns / 1000
                    ),
                ));
            }
        }
        if dm.queue_depth == 0 || dm.queue_depth > 65536 {
            return Err(problem(
                at("queue_depth"),
                format!(
                    "disk '{}': queue_depth = {} is out of range (1..65536)",
                    d.name, dm.queue_depth
                ),
            ));
        }
        let mr = dm.max_request_bytes;
        if mr < 4096 || mr % 4096 != 0 || mr > 64 << 20 {
            return Err(problem(
                at("max_request_kb"),
                format!(
                    "disk '{}': max_request_kb = {} must be a multiple of 4 from 4 to 65536",
                    d.name,
                    mr / 1024
                ),
            ));
        }
        if d.read_ahead_kb > 1 << 20 {
            return Err(problem(
                at("read_ahead_kb"),
                format!(
                    "disk '{}': read_ahead_kb = {} is too large (at most 1048576)",
                    d.name, d.read_ahead_kb
                ),
            ));
        }
    }
    Ok(())
}

fn check_mounts(m: &Machine) -> Result<(), Problem> {
    let mut points = HashSet::new();
    let mut mounted_disks = HashSet::new();
    for (i, mt) in m.mounts.iter().enumerate() {
        let at = |f: &str| format!("mount[{i}].{f}");
        if !FSTYPES.contains(&mt.fstype.as_str()) {
            return Err(problem(
                at("fstype"),
                format!(
                    "unknown fstype '{}' (accepted: {})",
                    mt.fstype,
                    FSTYPES.join(", ")
                ),
            ));
        }
        if mt.source == "tmpfs" {
            if mt.fstype != "tmpfs" {
                return Err(problem(
                    at("fstype"),
                    format!("source 'tmpfs' needs fstype 'tmpfs', not '{}'", mt.fstype),
                ));
            }
            if mt.size_bytes == Some(0) {
                return Err(problem(
                    at("size"),
                    "tmpfs size must be positive (omit it for the default, half of RAM)",
                ));
            }
        } else {
            let Some(name) = mt.source.strip_prefix("/dev/") else {
                return Err(problem(
                    at("source"),
                    format!("mount source '{}' must be /dev/DISK or tmpfs", mt.source),
                ));
            };
            if !m.disks.iter().any(|d| d.name == name) {
                return Err(problem(
                    at("source"),
                    format!(
                        "mount source '{}' names no disk of this machine ({})",
                        mt.source,
                        disk_list(m)
                    ),
                ));
            }
            if mt.fstype == "tmpfs" {
                return Err(problem(
                    at("fstype"),
                    format!("fstype 'tmpfs' needs source 'tmpfs', not '{}'", mt.source),
                ));
            }
            if mt.size_bytes.is_some() {
                return Err(problem(
                    at("size"),
                    format!(
                        "size is for tmpfs only; a filesystem on {} has the disk's size",
                        mt.source
                    ),
                ));
            }
            if !mounted_disks.insert(name) {
                return Err(problem(
                    at("source"),
                    format!("{} is mounted twice", mt.source),
                ));
            }
        }
        if !clean_abs_path(&mt.mountpoint) {
            return Err(problem(
                at("at"),
                format!(
                    "mount point '{}' must be an absolute path like /mnt/ram",
                    mt.mountpoint
                ),
            ));
        }
        if !points.insert(mt.mountpoint.as_str()) {
            return Err(problem(
                at("at"),
                format!("two filesystems are mounted at {}", mt.mountpoint),
            ));
        }
    }
    if !points.contains("/") {
        return Err(problem(
            "mount",
            "no filesystem is mounted at / (add a [[mount]] with at = \"/\")",
        ));
    }
    Ok(())
}

fn disk_list(m: &Machine) -> String {
    if m.disks.is_empty() {
        "it has no disks".into()
    } else {
        let names: Vec<&str> = m.disks.iter().map(|d| d.name.as_str()).collect();
        format!("disks: {}", names.join(", "))
    }
}

fn check_swaps(m: &Machine) -> Result<(), Problem> {
    let mut used = HashSet::new();
    for (i, s) in m.swaps.iter().enumerate() {
        let at = |f: &str| format!("swap[{i}].{f}");
        if let Some(p) = s.priority {
            if !(-32768..=32767).contains(&p) {
                return Err(problem(
                    at("priority"),
                    format!("swap priority {p} is out of range (-32768..32767)"),
                ));
            }
        }
        match &s.kind {
            SwapKind::Partition { disk } => {
                let Some(d) = m.disks.iter().find(|d| &d.name == disk) else {
                    return Err(problem(
                        at("kind"),
                        format!(
                            "swap partition '{disk}' names no disk of this machine ({})",
                            disk_list(m)
                        ),
                    ));
                };
                let dev = format!("/dev/{disk}");
                if m.mounts.iter().any(|mt| mt.source == dev) {
                    return Err(problem(
                        at("kind"),
                        format!("{dev} is mounted as a filesystem and cannot also be swap"),
                    ));
                }
                if s.size_bytes > d.size_bytes {
                    return Err(problem(
                        at("size"),
                        format!(
                            "swap partition on {disk} ({}) is larger than the disk ({})",
                            format_size(s.size_bytes),
                            format_size(d.size_bytes)
                        ),
                    ));
                }
                if !used.insert(dev.clone()) {
                    return Err(problem(at("kind"), format!("{dev} is used as swap twice")));
                }
            }
            SwapKind::File { path } => {
                if !clean_abs_path(path) || path == "/" {
                    return Err(problem(
                        at("kind"),
                        format!("swap file '{path}' must be an absolute file path like /swapfile"),
                    ));
                }
                if m.mounts.iter().any(|mt| &mt.mountpoint == path) {
                    return Err(problem(
                        at("kind"),
                        format!("swap file '{path}' is a mount point"),
                    ));
                }
                if let Some(mt) = mount_of(m, path) {
                    if mt.fstype == "tmpfs" {
                        // swapon: "swapon failed: Invalid argument" (shmem has no bmap).
                        return Err(problem(
                            at("kind"),
                            format!(
                                "swap file '{path}' is on tmpfs ({}), where swapon fails",
                                mt.mountpoint
                            ),
                        ));
                    }
                    let disk = mt
                        .source
                        .strip_prefix("/dev/")
                        .and_then(|n| m.disks.iter().find(|d| d.name == n));
                    if let Some(d) = disk {
                        if s.size_bytes > d.size_bytes {
                            return Err(problem(
                                at("size"),
                                format!(
                                    "swap file {path} ({}) is larger than its filesystem's disk {} ({})",
                                    format_size(s.size_bytes),
                                    d.name,
                                    format_size(d.size_bytes)
                                ),
                            ));
                        }
                    }
                }
                if !used.insert(path.clone()) {
                    return Err(problem(at("kind"), format!("{path} is used as swap twice")));
                }
            }
            SwapKind::Zram { algorithm } => {
                if !ZRAM_ALGORITHMS.contains(&algorithm.as_str()) {
                    return Err(problem(
                        at("kind"),
                        format!(
                            "unknown zram algorithm '{algorithm}' (accepted: {})",
                            ZRAM_ALGORITHMS.join(", ")
                        ),
                    ));
                }
            }
        }
        if s.size_bytes < MIN_SWAP {
            return Err(problem(
                at("size"),
                format!(
                    "swap size {} is too small (mkswap needs at least 40K)",
                    format_size(s.size_bytes)
                ),
            ));
        }
    }
    Ok(())
}
