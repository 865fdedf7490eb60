//! TOML machine files and `--set` overrides.
//!
//! # Machine file format
//!
//! `machines/example.toml` is the fully commented reference; in short:
//!
//! ```toml
//! name = "seed-000"            # optional; default: the file name without .toml
//! description = "..."          # optional
//! ram = "2G"                   # required: installed RAM (size, 16M..16T)
//! kernel_reserve = "173132K"   # optional: RAM not in MemTotal; default RAM/64 + min(RAM/32, 64M)
//! cpus = 2                     # required: 1..1024
//! kernel = "linux-6.x"         # optional: linux-6.x (default), linux-5.8, linux-5.4, linux-2.6.39, linux-2.4
//! hostname = "memtwin"         # optional; default "memtwin"
//! boot_anon = "190M"           # optional: anonymous memory the idle system uses (default 0)
//! boot_file = "8M"             # optional: page cache at boot (default 0)
//! reclaim = "classic"          # optional: classic (default) | split (seed 004's split reclaim;
//!                              # linux-2.6.39 and linux-6.x); the same switch as vm.split_reclaim
//!
//! [cpu]                        # optional; each field optional (defaults: CpuModel::default())
//! copy_bw = 6e9                # bytes/s: a number or a size string ("6G" = 6 GiB/s)
//! zero_bw = 10e9
//! page_alloc_ns = 150          # whole nanoseconds
//! page_cache_ns = 120
//! reclaim_scan_ns = 80
//! page_fault_ns = 700
//! syscall_ns = 150
//! io_request_ns = 5000
//! stdio_char_ns = 6            # putc()/getc() through stdio, per character
//!
//! [net]                        # optional; each field optional (defaults: NetModel::default())
//! nic = "eth0"
//! link_mbit = 1000             # line rate, megabits/s (decimal, as Ethernet is rated)
//! rtt_us = 100                 # round trip to the peer, µs (may be fractional)
//! mtu = 1500
//! rx_packet_ns = 1500          # CPU per received segment
//! rx_byte_ns = 0               # CPU per received byte beyond the copy (software checksum)
//! bus_bw = 93e6                # NIC-to-memory bus limit, bytes/s (default: none)
//!
//! [[disk]]                     # any number; names as Linux gives them (vda, sdb, nvme0n1, ram0)
//! name = "vda"                 # required; major:minor derived from it (vda = 253:0)
//! size = "20G"                 # required
//! preset = "virtio"            # hdd-7200 | sata-ssd | nvme | virtio | ramdisk; without a preset
//!                              # read_bw, write_bw and latency_us are required ("custom")
//! read_bw = "520M"             # optional overrides of the preset (bytes/s)
//! write_bw = 160e6
//! latency_us = 1200            # per-request overhead, µs (may be fractional); both directions
//! write_latency_us = 1200      # optional: a different per-request overhead for writes
//! seek_us = 0                  # extra cost of a non-sequential request, µs
//! rotational = false
//! queue_depth = 64
//! max_request_kb = 512         # max_sectors_kb, a multiple of 4
//! write_through = false        # writes complete one at a time (their latency in series)
//! read_ahead_kb = 128          # default 128
//!
//! [[mount]]                    # exactly one at "/"
//! source = "/dev/vda"          # /dev/DISK or "tmpfs"
//! at = "/"
//! fstype = "ext4"              # ext4 | ext3 | ext2 | xfs | tmpfs; default ext4 (tmpfs for tmpfs)
//! size = "1G"                  # tmpfs only; default half of RAM
//!
//! [[swap]]                     # any number
//! partition = "vdb"            # exactly one of: partition = DISK | file = PATH | zram = ALGORITHM
//! size = "4G"                  # required for file and zram; a partition defaults to its disk
//! priority = 5                 # optional (-32768..32767); default: the kernel's -2, -3, ...
//! enabled = true               # optional, default true (swapon at boot)
//!
//! [sysctl]                     # any tunable Sysctls::set accepts
//! "vm.swappiness" = 60         # integers, strings, booleans (1/0) or arrays of integers
//! "net.ipv4.tcp_rmem" = "4096 87380 174760"
//! ```
//!
//! Sizes are strings with binary units ("512K", "1.9G", "16GiB"; see `size`) or whole numbers
//! of bytes. Every error names the file and line: `bad.toml:7: cpus = 0: ...`.
//!
//! # `--set KEY=VALUE`
//!
//! `ram`, `cpus`, `kernel`, `kernel_reserve` (a size or `default`), `hostname`, `boot_anon`,
//! `boot_file`, `reclaim`, `swap` (`0` removes every swap device; a size resizes the first one, growing its
//! disk if the disk holds nothing else), `disk.NAME.FIELD` (`size`, `preset` or any override
//! field above), `cpu.FIELD`, `net.FIELD`, and any sysctl (`vm.swappiness=10`, `vm/dirty_ratio=5`).

use std::collections::HashMap;
use std::fmt;

use crate::device::{device_numbers, DEFAULT_READ_AHEAD_KB, DEVICE_PRESETS};
use crate::size::parse_size;
use crate::tree::{resolve, Entry, Node, RawNode};
use crate::validate::{self, Problem};
use crate::{
    CpuModel, DeviceModel, Disk, KernelProfile, Machine, MachineError, Mount, NetModel, SwapDevice,
    SwapKind, Sysctls, TreeSpec,
};

// ---------------------------------------------------------------------------------------------
// Scalar values, from a TOML node or a --set string, and their conversions.

/// One setting's value: from the file (typed) or from `--set` (always a string).
enum Val<'a> {
    Str(&'a str),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// An array or table where a scalar belongs (its type name).
    Other(&'static str),
}

fn val(n: &Node) -> Val<'_> {
    match n {
        Node::Str(s) => Val::Str(s),
        Node::Int(i) => Val::Int(*i),
        Node::Float(f) => Val::Float(*f),
        Node::Bool(b) => Val::Bool(*b),
        other => Val::Other(other.type_name()),
    }
}

impl Val<'_> {
    fn got(&self) -> String {
        match self {
            Val::Str(s) => format!("'{s}'"),
            Val::Int(i) => i.to_string(),
            Val::Float(f) => f.to_string(),
            Val::Bool(b) => b.to_string(),
            Val::Other(t) => t.to_string(),
        }
    }
}

fn to_size(v: &Val) -> Result<u64, String> {
    match v {
        Val::Str(s) => parse_size(s),
        Val::Int(i) if *i >= 0 => Ok(*i as u64),
        Val::Int(i) => Err(format!("a size cannot be negative ({i})")),
        _ => Err(format!(
            "expected a size like \"2G\" or a whole number of bytes, got {}",
            v.got()
        )),
    }
}

/// Bytes per second: a size string ("520M" = 520 MiB/s) or a number (520e6).
fn to_rate(v: &Val) -> Result<f64, String> {
    let r = match v {
        Val::Str(s) => match (parse_size(s), s.trim().parse::<f64>()) {
            (Ok(b), _) => b as f64,
            (_, Ok(f)) => f,
            _ => {
                return Err(format!(
                    "invalid rate '{s}': expected bytes per second as a number (520e6) or a size (\"520M\" = 520 MiB/s)"
                ))
            }
        },
        Val::Int(i) => *i as f64,
        Val::Float(f) => *f,
        _ => return Err(format!("expected bytes per second (a number, or a size like \"520M\"), got {}", v.got())),
    };
    if r.is_finite() && r > 0.0 {
        Ok(r)
    } else {
        Err(format!(
            "a bandwidth must be a positive number of bytes/s, got {}",
            v.got()
        ))
    }
}

fn to_u64(v: &Val) -> Result<u64, String> {
    match v {
        Val::Int(i) if *i >= 0 => Ok(*i as u64),
        Val::Str(s) => s
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("expected a whole number, got {}", v.got())),
        _ => Err(format!("expected a whole number, got {}", v.got())),
    }
}

fn to_u32(v: &Val) -> Result<u32, String> {
    let n = to_u64(v)?;
    u32::try_from(n).map_err(|_| format!("{n} is too large (at most {})", u32::MAX))
}

fn to_i64(v: &Val) -> Result<i64, String> {
    match v {
        Val::Int(i) => Ok(*i),
        Val::Str(s) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| format!("expected an integer, got {}", v.got())),
        _ => Err(format!("expected an integer, got {}", v.got())),
    }
}

fn to_f64(v: &Val) -> Result<f64, String> {
    let f = match v {
        Val::Int(i) => *i as f64,
        Val::Float(f) => *f,
        Val::Str(s) => s
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("expected a number, got {}", v.got()))?,
        _ => return Err(format!("expected a number, got {}", v.got())),
    };
    if f.is_finite() {
        Ok(f)
    } else {
        Err(format!("expected a finite number, got {}", v.got()))
    }
}

fn to_bool(v: &Val) -> Result<bool, String> {
    match v {
        Val::Bool(b) => Ok(*b),
        Val::Str(s) => match s.trim() {
            "true" | "1" | "yes" => Ok(true),
            "false" | "0" | "no" => Ok(false),
            _ => Err(format!("expected true or false, got {}", v.got())),
        },
        _ => Err(format!("expected true or false, got {}", v.got())),
    }
}

fn to_string(v: &Val) -> Result<String, String> {
    match v {
        Val::Str(s) => Ok(s.to_string()),
        _ => Err(format!("expected a string, got {}", v.got())),
    }
}

/// Microseconds (possibly fractional) to whole nanoseconds.
fn to_us_as_ns(v: &Val) -> Result<u64, String> {
    let us = to_f64(v)?;
    if !(0.0..=10e6).contains(&us) {
        return Err(format!("{} µs is out of range (0 to 10 s)", v.got()));
    }
    Ok((us * 1000.0).round() as u64)
}

// ---------------------------------------------------------------------------------------------
// Settings shared by machine files and --set.

/// Top-level scalar keys of a machine file, all settable with --set too.
const TOP_SCALARS: &[&str] = &[
    "ram",
    "kernel_reserve",
    "cpus",
    "kernel",
    "hostname",
    "boot_anon",
    "boot_file",
    "cgroup",
    "reclaim",
    "userland",
];

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "ram",
    "kernel_reserve",
    "cpus",
    "kernel",
    "hostname",
    "boot_anon",
    "boot_file",
    "cgroup",
    "reclaim",
    "userland",
    "cpu",
    "net",
    "disk",
    "mount",
    "swap",
    "tree",
    "sysctl",
];

const CPU_FIELDS: &[&str] = &[
    "copy_bw",
    "copy_in_bw",
    "zero_bw",
    "page_alloc_ns",
    "page_cache_ns",
    "page_cache_add_ns",
    "lru_add_ns",
    "fs_write_page_ns",
    "fs_read_page_ns",
    "compress_scale",
    "reclaim_scan_ns",
    "page_fault_ns",
    "syscall_ns",
    "io_request_ns",
    "stdio_char_ns",
    "cache_miss_ns",
    "vendor_id",
    "model_name",
    "cpu_family",
    "model",
    "stepping",
    "mhz",
    "cache_kb",
    "cores_per_package",
    "threads_per_core",
    "cpuid_level",
    "flags",
    "bugs",
    "address_bits",
    "microcode",
    "vmx_flags",
];

const NET_FIELDS: &[&str] = &["nic", "link_mbit", "rtt_us", "mtu", "rx_packet_ns", "rx_byte_ns", "bus_bw"];

/// Device fields a disk may override on top of its preset.
const DEVICE_FIELDS: &[&str] = &[
    "read_bw",
    "write_bw",
    "latency_us",
    "write_latency_us",
    "seek_us",
    "rotational",
    "queue_depth",
    "max_request_kb",
    "write_through",
    "read_ahead_kb",
];

const MOUNT_KEYS: &[&str] = &["source", "at", "fstype", "size"];
const SWAP_KEYS: &[&str] = &["partition", "file", "zram", "size", "priority", "enabled"];
const SWAP_KINDS: &[&str] = &["partition", "file", "zram"];

fn kernel_names() -> String {
    KernelProfile::NAMES
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

fn set_top_field(m: &mut Machine, key: &str, v: &Val) -> Result<(), String> {
    match key {
        "ram" => m.ram_bytes = to_size(v)?,
        "kernel_reserve" => {
            m.kernel_reserve_bytes = match v {
                Val::Str(s) if s.trim() == "default" => None,
                _ => Some(to_size(v)?),
            }
        }
        "cpus" => {
            let n = to_u64(v)?;
            m.cpus = u32::try_from(n).map_err(|_| {
                format!("cpus = {n}: a machine has 1 to {} CPUs", validate::MAX_CPUS)
            })?;
        }
        "kernel" => {
            let s = to_string(v)?;
            m.kernel = KernelProfile::from_name(s.trim()).ok_or_else(|| {
                format!(
                    "unknown kernel profile '{s}' (accepted: {})",
                    kernel_names()
                )
            })?;
        }
        "hostname" => m.hostname = to_string(v)?,
        "userland" => {
            let s = to_string(v)?;
            m.userland = Some(crate::Userland::from_name(s.trim()).ok_or_else(|| {
                let names: Vec<&str> = crate::Userland::NAMES.iter().map(|(n, _)| *n).collect();
                format!("unknown userland '{s}' (accepted: {}; the default follows the kernel profile)", names.join(", "))
            })?);
        }
        "boot_anon" => m.boot_anon_bytes = to_size(v)?,
        "boot_file" => m.boot_file_bytes = to_size(v)?,
        "cgroup" => {
            m.cgroup_v1 = match to_string(v)?.trim() {
                "v1" => true,
                "v2" => false,
                o => return Err(format!("cgroup = '{o}': accepted: \"v1\" (the v1 memory controller at /sys/fs/cgroup/memory) or \"v2\" (the unified hierarchy, the default on 5.x and 6.x)")),
            }
        }
        // Seed 004's split reclaim patch (Linux 2.6.39-rc4): the same switch as vm.split_reclaim.
        "reclaim" => {
            m.sysctl.split_reclaim = match to_string(v)?.trim() {
                "classic" => false,
                "split" => true,
                o => return Err(format!("reclaim = '{o}': accepted: \"classic\" (direct reclaim frees page cache and slab) or \"split\" (page reclaim below P_start, slab reclaim by slab allocators above S_start; linux-2.6.39 and linux-6.x only)")),
            }
        }
        _ => return Err(format!("unknown key '{key}'")),
    }
    Ok(())
}

/// A `[cpu]` key: a cost (CpuModel) or the identity /proc/cpuinfo prints (CpuIdentity).
fn set_cpu_key(m: &mut Machine, field: &str, v: &Val) -> Result<(), String> {
    let small = |v: &Val| -> Result<u32, String> {
        let n = to_u64(v)?;
        u32::try_from(n).ok().filter(|&n| n <= 65535).ok_or_else(|| format!("{n} is out of range (0 to 65535)"))
    };
    let id = &mut m.cpu_id;
    match field {
        "vendor_id" => id.vendor_id = to_string(v)?,
        "model_name" => id.model_name = to_string(v)?,
        "cpu_family" => id.family = small(v)?,
        "model" => id.model = small(v)?,
        "stepping" => id.stepping = small(v)?,
        "mhz" => {
            let f = to_f64(v)?;
            if !(1.0..=100_000.0).contains(&f) {
                return Err(format!("{f} MHz is out of range (1 to 100000)"));
            }
            id.mhz = f;
        }
        "cache_kb" => id.cache_kb = u32::try_from(to_u64(v)?).map_err(|_| "too large".to_string())?,
        "cores_per_package" | "threads_per_core" => {
            let n = small(v)?;
            if n == 0 {
                return Err("must be at least 1".into());
            }
            if field == "cores_per_package" {
                id.cores_per_package = n;
            } else {
                id.threads_per_core = n;
            }
        }
        "cpuid_level" => id.cpuid_level = small(v)?,
        "flags" => id.flags = to_string(v)?.split_whitespace().collect::<Vec<_>>().join(" "),
        "bugs" => id.bugs = to_string(v)?.split_whitespace().collect::<Vec<_>>().join(" "),
        "vmx_flags" => id.vmx_flags = to_string(v)?.split_whitespace().collect::<Vec<_>>().join(" "),
        "microcode" => {
            // An integer, or the "0x..." text /proc/cpuinfo prints.
            let n = match to_string(v) {
                Ok(s) => u32::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| format!("microcode = \"{s}\": expected a revision such as \"0xf0\" or an integer"))?,
                Err(_) => u32::try_from(to_u64(v)?).map_err(|_| "microcode: out of range (0 to 0xffffffff)".to_string())?,
            };
            id.microcode = (n != 0).then_some(n);
        }
        "address_bits" => {
            let s = to_string(v)?;
            let bad = || format!("address_bits = \"{s}\": expected \"PHYSICAL VIRTUAL\", e.g. \"46 48\"");
            let mut it = s.split_whitespace().map(|x| x.parse::<u32>());
            match (it.next(), it.next(), it.next()) {
                (Some(Ok(p)), Some(Ok(vb)), None) if (20..=64).contains(&p) && (32..=64).contains(&vb) => id.address_bits = (p, vb),
                _ => return Err(bad()),
            }
        }
        _ => return set_cpu_field(&mut m.cpu_model, field, v),
    }
    Ok(())
}

fn set_cpu_field(c: &mut CpuModel, field: &str, v: &Val) -> Result<(), String> {
    match field {
        "copy_bw" => c.copy_bw = to_rate(v)?,
        "copy_in_bw" => c.copy_in_bw = to_rate(v)?,
        "page_cache_add_ns" => c.page_cache_add_ns = to_u64(v)?,
        "lru_add_ns" => c.lru_add_ns = to_u64(v)?,
        "fs_write_page_ns" => c.fs_write_page_ns = to_u64(v)?,
        "fs_read_page_ns" => c.fs_read_page_ns = to_u64(v)?,
        "compress_scale" => c.compress_scale = to_f64(v)?,
        "zero_bw" => c.zero_bw = to_rate(v)?,
        "page_alloc_ns" => c.page_alloc_ns = to_u64(v)?,
        "page_cache_ns" => c.page_cache_ns = to_u64(v)?,
        "reclaim_scan_ns" => c.reclaim_scan_ns = to_u64(v)?,
        "page_fault_ns" => c.page_fault_ns = to_u64(v)?,
        "syscall_ns" => c.syscall_ns = to_u64(v)?,
        "io_request_ns" => c.io_request_ns = to_u64(v)?,
        "stdio_char_ns" => c.stdio_char_ns = to_u64(v)?,
        "cache_miss_ns" => c.cache_miss_ns = to_u64(v)?,
        _ => {
            return Err(format!(
                "unknown CPU field '{field}' (accepted: {})",
                CPU_FIELDS.join(", ")
            ))
        }
    }
    Ok(())
}

fn set_net_field(n: &mut NetModel, field: &str, v: &Val) -> Result<(), String> {
    match field {
        "nic" => {
            // No command shows the interface's name: only the default is accepted.
            let name = to_string(v)?;
            if name != "eth0" {
                return Err(format!("nic: '{name}': the interface name is not modelled (no command shows it); only 'eth0' is accepted"));
            }
            n.nic = name;
        }
        "link_mbit" => {
            let mbit = to_f64(v)?;
            if !(mbit > 0.0) {
                return Err(format!("link_mbit must be a positive number of megabits/s, got {}", v.got()));
            }
            n.link_bps = mbit * 1e6;
        }
        "rtt_us" => n.rtt_ns = to_us_as_ns(v)?,
        "mtu" => n.mtu = to_u32(v)?,
        "rx_packet_ns" => n.rx_packet_ns = to_u64(v)?,
        "rx_byte_ns" => {
            let x = to_f64(v)?;
            if x < 0.0 {
                return Err(format!("rx_byte_ns cannot be negative, got {}", v.got()));
            }
            n.rx_byte_ns = x;
        }
        "bus_bw" => {
            n.bus_bw = match v {
                Val::Str(s) if matches!(s.trim(), "none" | "0") => None,
                Val::Int(0) => None,
                _ => Some(to_rate(v)?),
            }
        }
        _ => {
            return Err(format!(
                "unknown net field '{field}' (accepted: {})",
                NET_FIELDS.join(", ")
            ))
        }
    }
    Ok(())
}

fn set_device_field(d: &mut Disk, field: &str, v: &Val) -> Result<(), String> {
    let dm = &mut d.model;
    match field {
        "read_bw" => dm.read_bw = to_rate(v)?,
        "write_bw" => dm.write_bw = to_rate(v)?,
        "latency_us" => {
            let ns = to_us_as_ns(v)?;
            // One latency for both directions unless write_latency_us says otherwise.
            if dm.write_latency_ns == dm.latency_ns {
                dm.write_latency_ns = ns;
            }
            dm.latency_ns = ns;
        }
        "write_latency_us" => dm.write_latency_ns = to_us_as_ns(v)?,
        "seek_us" => dm.seek_ns = to_us_as_ns(v)?,
        "rotational" => dm.rotational = to_bool(v)?,
        "queue_depth" => dm.queue_depth = to_u32(v)?,
        "max_request_kb" => {
            let kb = to_u64(v)?;
            dm.max_request_bytes = kb
                .checked_mul(1024)
                .ok_or_else(|| format!("max_request_kb = {kb} is too large"))?;
        }
        "read_ahead_kb" => d.read_ahead_kb = to_u32(v)?,
        "write_through" => dm.write_through = to_bool(v)?,
        _ => {
            return Err(format!(
                "unknown device field '{field}' (accepted: {})",
                DEVICE_FIELDS.join(", ")
            ))
        }
    }
    Ok(())
}

fn device_preset(name: &str) -> Result<DeviceModel, String> {
    DeviceModel::preset(name.trim()).ok_or_else(|| {
        format!(
            "unknown device preset '{name}' (accepted: {})",
            DEVICE_PRESETS.join(", ")
        )
    })
}

/// Set a sysctl by name as `sysctl -w` would. vm.drop_caches is an action, not a setting.
fn set_sysctl(s: &mut Sysctls, name: &str, value: &str) -> Result<(), String> {
    if Sysctls::canonical(name) == "vm.drop_caches" {
        return Err("vm.drop_caches is an action, not a setting: use `echo 1 > /proc/sys/vm/drop_caches` in the scenario".into());
    }
    s.set(name, value).map_err(|e| e.0)
}

// ---------------------------------------------------------------------------------------------
// Machine files.

struct Src<'a> {
    text: &'a str,
    origin: &'a str,
}

impl Src<'_> {
    fn line(&self, pos: usize) -> usize {
        let b = self.text.as_bytes();
        let end = pos.min(b.len());
        b[..end].iter().filter(|&&c| c == b'\n').count() + 1
    }
    /// "ORIGIN:LINE: message" for a byte offset.
    fn err(&self, pos: usize, msg: impl fmt::Display) -> MachineError {
        self.err_line(self.line(pos), msg)
    }
    fn err_line(&self, line: usize, msg: impl fmt::Display) -> MachineError {
        MachineError {
            message: format!("{}:{}: {}", self.origin, line, one_line(&msg.to_string())),
        }
    }
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

fn syntax_error(src: &Src, e: &toml::de::Error) -> MachineError {
    let msg = one_line(e.message());
    // Our own messages (from RawNodeVisitor) are already about machine files.
    let msg = if msg.starts_with("dates and times") {
        msg
    } else {
        format!("invalid TOML: {msg}")
    };
    match e.span() {
        Some(span) => src.err(span.start, msg),
        None => MachineError {
            message: format!("{}: {}", src.origin, msg),
        },
    }
}

/// A table of the file being read: its entries, where it starts, and what to call it.
struct Table<'a> {
    entries: &'a [Entry],
    at: usize,
    what: String,
}

impl<'a> Table<'a> {
    fn check_keys(&self, src: &Src, accepted: &[&str]) -> Result<(), MachineError> {
        for e in self.entries {
            if !accepted.contains(&e.key.as_str()) {
                let hint = match e.key.as_str() {
                    "vm" | "net" | "fs" | "ipv4" | "ipv6" | "core" => " (sysctls go under [sysctl])",
                    _ => "",
                };
                return Err(src.err(
                    e.at,
                    format!(
                        "unknown key '{}' in {}{hint} (accepted: {})",
                        e.key,
                        self.what,
                        accepted.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn get(&self, key: &str) -> Option<&'a Entry> {
        self.entries.iter().find(|e| e.key == key)
    }
}

/// Where each setting was written, by the paths `validate::Problem::at` uses.
type Spans = HashMap<String, usize>;

/// Read one key with `f`, reporting a bad value at its line as "KEY: message".
fn read<T>(
    src: &Src,
    spans: &mut Spans,
    path: &str,
    e: &Entry,
    f: impl FnOnce(&Val) -> Result<T, String>,
) -> Result<T, MachineError> {
    spans.insert(path.to_string(), e.at);
    f(&val(&e.value)).map_err(|msg| src.err(e.at, format!("{}: {msg}", e.key)))
}

/// The tables of an array of tables (`[[disk]]`), or an error saying how to write one.
fn tables<'a>(src: &Src, e: &'a Entry) -> Result<Vec<Table<'a>>, MachineError> {
    let key = &e.key;
    let wrong = |at| {
        src.err(
            at,
            format!("'{key}' must be an array of tables: write [[{key}]] sections"),
        )
    };
    let Node::Array(items) = &e.value else {
        return Err(wrong(e.at));
    };
    let mut out = Vec::new();
    for (i, (at, item)) in items.iter().enumerate() {
        let Node::Table(entries) = item else {
            return Err(wrong(*at));
        };
        out.push(Table {
            entries,
            at: *at,
            what: format!("[[{key}]] #{}", i + 1),
        });
    }
    Ok(out)
}

fn section<'a>(src: &Src, e: &'a Entry) -> Result<Table<'a>, MachineError> {
    let key = &e.key;
    match &e.value {
        Node::Table(entries) => Ok(Table {
            entries,
            at: e.at,
            what: format!("[{key}]"),
        }),
        other => Err(src.err(
            e.at,
            format!(
                "'{key}' must be a table ([{key}]), not {}",
                other.type_name()
            ),
        )),
    }
}

fn name_from_origin(origin: &str) -> String {
    let base = origin.rsplit(['/', '\\']).next().unwrap_or(origin);
    let stem = base.strip_suffix(".toml").unwrap_or(base);
    if stem.is_empty() {
        "machine".to_string()
    } else {
        stem.to_string()
    }
}

/// Parse a machine file's text; `origin` names it in errors.
pub fn parse_toml(text: &str, origin: &str) -> Result<Machine, MachineError> {
    let src = Src { text, origin };
    let raw: RawNode = toml::from_str(text).map_err(|e| syntax_error(&src, &e))?;
    let (_, root) = resolve(raw, 0);
    let Node::Table(top_entries) = &root else {
        return Err(src.err_line(1, "a machine file is a TOML table of settings"));
    };
    let top = Table {
        entries: top_entries,
        at: 0,
        what: "the machine file".into(),
    };
    top.check_keys(&src, TOP_KEYS)?;

    let mut spans = Spans::new();
    let mut m = Machine {
        name: name_from_origin(origin),
        description: String::new(),
        ram_bytes: 0,
        kernel_reserve_bytes: None,
        cpus: 0,
        kernel: KernelProfile::Linux6,
        cpu_model: CpuModel::default(),
        cpu_id: crate::CpuIdentity::generic(),
        disks: Vec::new(),
        mounts: Vec::new(),
        swaps: Vec::new(),
        trees: Vec::new(),
        sysctl: Sysctls::default(),
        net: NetModel::default(),
        boot_anon_bytes: 0,
        boot_file_bytes: 0,
        hostname: "memtwin".into(),
        cgroup_v1: false,
        userland: None,
    };

    if let Some(e) = top.get("name") {
        m.name = read(&src, &mut spans, "name", e, to_string)?;
    }
    if let Some(e) = top.get("description") {
        m.description = read(&src, &mut spans, "description", e, to_string)?;
    }
    for key in TOP_SCALARS {
        if let Some(e) = top.get(key) {
            read(&src, &mut spans, key, e, |v| set_top_field(&mut m, key, v))?;
        }
    }
    for (key, what) in [
        ("ram", "installed RAM, e.g. ram = \"2G\""),
        ("cpus", "e.g. cpus = 2"),
    ] {
        if top.get(key).is_none() {
            return Err(src.err_line(1, format!("missing key '{key}' ({what})")));
        }
    }
    if let Some(e) = top.get("cpu") {
        let t = section(&src, e)?;
        t.check_keys(&src, CPU_FIELDS)?;
        for entry in t.entries {
            let field = entry.key.as_str();
            read(&src, &mut spans, &format!("cpu.{field}"), entry, |v| set_cpu_key(&mut m, field, v))?;
        }
    }
    if let Some(e) = top.get("net") {
        let t = section(&src, e)?;
        t.check_keys(&src, NET_FIELDS)?;
        for entry in t.entries {
            let field = entry.key.as_str();
            read(&src, &mut spans, &format!("net.{field}"), entry, |v| {
                set_net_field(&mut m.net, field, v)
            })?;
        }
    }
    if let Some(e) = top.get("disk") {
        spans.insert("disk".into(), e.at);
        for (i, t) in tables(&src, e)?.iter().enumerate() {
            let disk = read_disk(&src, &mut spans, i, t, &m.disks)?;
            m.disks.push(disk);
        }
    }
    if let Some(e) = top.get("mount") {
        spans.insert("mount".into(), e.at);
        for (i, t) in tables(&src, e)?.iter().enumerate() {
            let mount = read_mount(&src, &mut spans, i, t)?;
            m.mounts.push(mount);
        }
    }
    if let Some(e) = top.get("swap") {
        spans.insert("swap".into(), e.at);
        for (i, t) in tables(&src, e)?.iter().enumerate() {
            let swap = read_swap(&src, &mut spans, i, t, &m.disks)?;
            m.swaps.push(swap);
        }
    }
    if let Some(e) = top.get("tree") {
        spans.insert("tree".into(), e.at);
        for (i, t) in tables(&src, e)?.iter().enumerate() {
            let tree = read_tree(&src, &mut spans, i, t)?;
            m.trees.push(tree);
        }
    }
    if let Some(e) = top.get("sysctl") {
        let t = section(&src, e)?;
        read_sysctls(&src, &mut m.sysctl, "", t.entries)?;
    }

    validate::check(&m).map_err(|p| locate(&src, &spans, p))?;
    Ok(m)
}

/// FILE:LINE of a validation problem: the setting itself, else its table, else line 1.
fn locate(src: &Src, spans: &Spans, p: Problem) -> MachineError {
    let mut at = p.at.as_str();
    loop {
        if let Some(&pos) = spans.get(at) {
            return src.err(pos, &p.message);
        }
        if let Some((parent, _)) = at.rsplit_once('.') {
            at = parent;
        } else if let Some((parent, _)) = at.split_once('[') {
            at = parent;
        } else {
            return src.err_line(1, &p.message);
        }
    }
}

fn required<'a>(
    src: &Src,
    t: &Table<'a>,
    key: &str,
    example: &str,
) -> Result<&'a Entry, MachineError> {
    t.get(key).ok_or_else(|| {
        src.err(
            t.at,
            format!("{} has no '{key}' (e.g. {key} = {example})", t.what),
        )
    })
}

fn read_disk(
    src: &Src,
    spans: &mut Spans,
    i: usize,
    t: &Table,
    before: &[Disk],
) -> Result<Disk, MachineError> {
    let mut accepted = vec!["name", "size", "preset"];
    accepted.extend_from_slice(DEVICE_FIELDS);
    t.check_keys(src, &accepted)?;
    let p = |f: &str| format!("disk[{i}].{f}");
    spans.insert(format!("disk[{i}]"), t.at);

    let name_entry = required(src, t, "name", "\"vda\"")?;
    let name = read(src, spans, &p("name"), name_entry, to_string)?;
    let nvme_before = before.iter().filter(|d| d.name.starts_with("nvme")).count() as u32;
    let (major, minor) = device_numbers(&name, nvme_before)
        .map_err(|e| src.err(name_entry.at, format!("name: disk name {e}")))?;
    let size_bytes = read(
        src,
        spans,
        &p("size"),
        required(src, t, "size", "\"20G\"")?,
        to_size,
    )?;

    let model = match t.get("preset") {
        Some(e) => read(src, spans, &p("preset"), e, |v| {
            device_preset(&to_string(v)?)
        })?,
        None => {
            let missing: Vec<&str> = ["read_bw", "write_bw", "latency_us"]
                .into_iter()
                .filter(|f| t.get(f).is_none())
                .collect();
            if !missing.is_empty() {
                return Err(src.err(
                    t.at,
                    format!(
                        "disk '{name}' has no preset: give preset = \"{}\" or all of read_bw, write_bw and latency_us (missing: {})",
                        DEVICE_PRESETS.join("\" | \""),
                        missing.join(", ")
                    ),
                ));
            }
            DeviceModel {
                preset: "custom".into(),
                read_bw: 0.0,
                write_bw: 0.0,
                latency_ns: 0,
                write_latency_ns: 0,
                seek_ns: 0,
                rotational: false,
                queue_depth: 32,
                max_request_bytes: 512 * 1024,
                write_through: false,
            }
        }
    };
    let mut disk = Disk {
        name,
        major,
        minor,
        size_bytes,
        model,
        read_ahead_kb: DEFAULT_READ_AHEAD_KB,
    };
    for entry in t.entries {
        let field = entry.key.as_str();
        if DEVICE_FIELDS.contains(&field) {
            read(src, spans, &p(field), entry, |v| {
                set_device_field(&mut disk, field, v)
            })?;
        }
    }
    Ok(disk)
}

fn read_mount(src: &Src, spans: &mut Spans, i: usize, t: &Table) -> Result<Mount, MachineError> {
    t.check_keys(src, MOUNT_KEYS)?;
    let p = |f: &str| format!("mount[{i}].{f}");
    spans.insert(format!("mount[{i}]"), t.at);
    let source = read(
        src,
        spans,
        &p("source"),
        required(src, t, "source", "\"/dev/vda\"")?,
        to_string,
    )?;
    let mountpoint = read(
        src,
        spans,
        &p("at"),
        required(src, t, "at", "\"/\"")?,
        to_string,
    )?;
    let fstype = match t.get("fstype") {
        Some(e) => read(src, spans, &p("fstype"), e, to_string)?,
        None if source == "tmpfs" => "tmpfs".into(),
        None => "ext4".into(),
    };
    let size_bytes = match t.get("size") {
        Some(e) => Some(read(src, spans, &p("size"), e, to_size)?),
        None => None,
    };
    Ok(Mount {
        source,
        mountpoint,
        fstype,
        size_bytes,
    })
}

const TREE_KEYS: &[&str] = &["at", "files", "files_per_dir", "dirs_per_dir", "file_size", "seed"];

fn read_tree(src: &Src, spans: &mut Spans, i: usize, t: &Table) -> Result<TreeSpec, MachineError> {
    t.check_keys(src, TREE_KEYS)?;
    let p = |f: &str| format!("tree[{i}].{f}");
    spans.insert(format!("tree[{i}]"), t.at);
    let at = read(src, spans, &p("at"), required(src, t, "at", "\"/export\"")?, to_string)?;
    if !at.starts_with('/') || at == "/" {
        return Err(src.err(t.at, format!("{}: at = \"{at}\": give an absolute directory below / (e.g. \"/export\")", t.what)));
    }
    let files = read(src, spans, &p("files"), required(src, t, "files", "1000000")?, to_u64)?;
    let mut num = |key: &str, default: u64| -> Result<u64, MachineError> {
        match t.get(key) {
            Some(e) => read(src, spans, &p(key), e, to_u64),
            None => Ok(default),
        }
    };
    let files_per_dir = num("files_per_dir", 30)?;
    let dirs_per_dir = num("dirs_per_dir", 30)?;
    let seed = num("seed", 1)?;
    let file_size = match t.get("file_size") {
        Some(e) => read(src, spans, &p("file_size"), e, to_size)?,
        None => 4096,
    };
    if files == 0 || files > u32::MAX as u64 / 2 {
        return Err(src.err(t.at, format!("{}: files = {files}: give 1 to {}", t.what, u32::MAX / 2)));
    }
    if files_per_dir == 0 || files_per_dir > 1_000_000 || !(2..=100_000).contains(&dirs_per_dir) {
        return Err(src.err(t.at, format!("{}: files_per_dir must be 1 to 1000000 and dirs_per_dir 2 to 100000", t.what)));
    }
    Ok(TreeSpec { at, files, files_per_dir, dirs_per_dir, file_size, seed })
}

fn read_swap(
    src: &Src,
    spans: &mut Spans,
    i: usize,
    t: &Table,
    disks: &[Disk],
) -> Result<SwapDevice, MachineError> {
    t.check_keys(src, SWAP_KEYS)?;
    let p = |f: &str| format!("swap[{i}].{f}");
    spans.insert(format!("swap[{i}]"), t.at);
    let kinds: Vec<&Entry> = SWAP_KINDS.iter().filter_map(|k| t.get(k)).collect();
    let kind_entry = match kinds.as_slice() {
        [one] => *one,
        [] => {
            return Err(src.err(
                t.at,
                format!(
                    "{} needs one of partition = DISK, file = PATH or zram = ALGORITHM",
                    t.what
                ),
            ))
        }
        [_, second, ..] => {
            return Err(src.err(
                second.at,
                format!(
                    "{} has more than one of partition, file and zram; give exactly one",
                    t.what
                ),
            ))
        }
    };
    let target = read(src, spans, &p("kind"), kind_entry, to_string)?;
    let kind = match kind_entry.key.as_str() {
        "partition" => SwapKind::Partition {
            disk: target.trim_start_matches("/dev/").to_string(),
        },
        "file" => SwapKind::File { path: target },
        _ => SwapKind::Zram { algorithm: target },
    };
    let size_bytes = match (t.get("size"), &kind) {
        (Some(e), _) => read(src, spans, &p("size"), e, to_size)?,
        // A partition without a size is the whole disk (mkswap /dev/vdb). An unknown disk is
        // reported by validation at the partition key.
        (None, SwapKind::Partition { disk }) => disks
            .iter()
            .find(|d| &d.name == disk)
            .map_or(0, |d| d.size_bytes),
        (None, _) => {
            return Err(src.err(
                t.at,
                format!("{} has no 'size' (e.g. size = \"4G\")", t.what),
            ))
        }
    };
    let priority = match t.get("priority") {
        Some(e) => Some(read(src, spans, &p("priority"), e, |v| {
            let n = to_i64(v)?;
            i32::try_from(n)
                .map_err(|_| format!("swap priority {n} is out of range (-32768..32767)"))
        })?),
        None => None,
    };
    let enabled = match t.get("enabled") {
        Some(e) => read(src, spans, &p("enabled"), e, to_bool)?,
        None => true,
    };
    Ok(SwapDevice {
        kind,
        size_bytes,
        priority,
        enabled,
    })
}

/// [sysctl] entries in file order. Quoted dotted names ("vm.swappiness" = 60) and bare dotted
/// keys (vm.swappiness = 60, which TOML reads as nested tables) are both accepted.
fn read_sysctls(
    src: &Src,
    s: &mut Sysctls,
    prefix: &str,
    entries: &[Entry],
) -> Result<(), MachineError> {
    for e in entries {
        let name = format!("{prefix}{}", e.key);
        let value = match &e.value {
            Node::Table(inner) => {
                read_sysctls(src, s, &format!("{name}."), inner)?;
                continue;
            }
            Node::Str(x) => x.clone(),
            Node::Int(i) => i.to_string(),
            Node::Bool(b) => u8::from(*b).to_string(),
            Node::Array(items) => {
                let mut parts = Vec::new();
                for (at, it) in items {
                    match it {
                        Node::Int(i) => parts.push(i.to_string()),
                        other => {
                            return Err(src.err(
                                *at,
                                format!(
                                    "{name}: expected an array of integers, found {}",
                                    other.type_name()
                                ),
                            ))
                        }
                    }
                }
                parts.join(" ")
            }
            Node::Float(f) => {
                return Err(src.err(
                    e.at,
                    format!("{name}: expected a whole number or a string, got {f}"),
                ))
            }
        };
        set_sysctl(s, &name, &value).map_err(|msg| src.err(e.at, msg))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Presets, files and --set.

/// A preset name or a path to a TOML file.
pub fn load(spec: &str) -> Result<Machine, MachineError> {
    if crate::presets::find(spec).is_some() {
        return crate::preset(spec);
    }
    if spec.ends_with(".toml") || spec.contains('/') {
        let text = std::fs::read_to_string(spec).map_err(|e| MachineError {
            message: format!(
                "cannot read machine file '{spec}': {}",
                io_reason(&e)
            ),
        })?;
        return parse_toml(&text, spec);
    }
    Err(MachineError {
        message: format!(
            "unknown machine preset '{spec}' (presets: {}; or a path to a .toml file)",
            crate::preset_names().join(", ")
        ),
    })
}

/// "No such file or directory", without Rust's " (os error 2)".
fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

const SET_KEYS_HELP: &str =
    "ram, cpus, kernel, kernel_reserve, hostname, boot_anon, boot_file, cgroup, swap, \
                             disk.NAME.FIELD, cpu.FIELD, net.FIELD, or a sysctl such as vm.swappiness";

/// Every machine field `--set` accepts on machine `m` (sysctls aside: `sysctl_names`).
pub fn settable_fields(m: &Machine) -> Vec<String> {
    let mut out: Vec<String> = TOP_SCALARS.iter().map(|s| s.to_string()).collect();
    out.push("swap".into());
    out.extend(CPU_FIELDS.iter().map(|f| format!("cpu.{f}")));
    out.extend(NET_FIELDS.iter().map(|f| format!("net.{f}")));
    for d in &m.disks {
        for f in ["size", "preset"].iter().chain(DEVICE_FIELDS) {
            out.push(format!("disk.{}.{f}", d.name));
        }
    }
    out
}

/// Apply one "KEY=VALUE" override (a machine field or a sysctl).
pub fn apply_set(m: &mut Machine, kv: &str) -> Result<(), MachineError> {
    let fail = |msg: String| MachineError {
        message: format!("--set {kv}: {}", one_line(&msg)),
    };
    let Some((key, value)) = kv.split_once('=') else {
        return Err(fail(
            "expected KEY=VALUE, e.g. --set ram=4G or --set vm.swappiness=10".into(),
        ));
    };
    let (key, value) = (key.trim(), value.trim());
    if key.is_empty() {
        return Err(fail(
            "expected KEY=VALUE, e.g. --set ram=4G or --set vm.swappiness=10".into(),
        ));
    }
    let v = Val::Str(value);
    let mut new = m.clone();
    if TOP_SCALARS.contains(&key) {
        set_top_field(&mut new, key, &v).map_err(fail)?;
        if key == "ram" && m.ram_bytes > 0 {
            // The same system on another amount of RAM: the idle system's memory and an
            // explicit kernel reserve scale with it.
            let scale = |x: u64| ((x as u128 * new.ram_bytes as u128) / m.ram_bytes as u128) as u64;
            new.boot_anon_bytes = scale(m.boot_anon_bytes);
            new.boot_file_bytes = scale(m.boot_file_bytes);
            new.kernel_reserve_bytes = m.kernel_reserve_bytes.map(scale);
        }
    } else if key == "swap" {
        set_swap_size(&mut new, &v).map_err(fail)?;
    } else if let Some(rest) = key.strip_prefix("disk.") {
        set_disk(&mut new, rest, &v).map_err(fail)?;
    } else if let Some(field) = key.strip_prefix("cpu.") {
        set_cpu_key(&mut new, field, &v).map_err(fail)?;
    } else if let Some(field) = key.strip_prefix("net.").filter(|f| NET_FIELDS.contains(f)) {
        // net.ipv4.* and net.core.* are sysctls; net.FIELD is the interface.
        set_net_field(&mut new.net, field, &v).map_err(fail)?;
    } else if key.contains('.') || key.contains('/') {
        set_sysctl(&mut new.sysctl, key, value).map_err(fail)?;
    } else {
        return Err(fail(format!(
            "unknown key '{key}' (accepted: {SET_KEYS_HELP})"
        )));
    }
    validate::check(&new).map_err(|p| fail(p.message))?;
    *m = new;
    Ok(())
}

/// `swap=0` removes every swap device; `swap=SIZE` resizes the first one. A swap partition's
/// disk grows with it when the disk holds nothing else (it is only swap).
fn set_swap_size(m: &mut Machine, v: &Val) -> Result<(), String> {
    let size = to_size(v)?;
    if size == 0 {
        m.swaps.clear();
        return Ok(());
    }
    let Some(first) = m.swaps.first_mut() else {
        return Err(
            "the machine has no swap device to resize (add a [[swap]] to the machine file)".into(),
        );
    };
    first.size_bytes = size;
    if let SwapKind::Partition { disk } = &first.kind {
        let dev = format!("/dev/{disk}");
        let mounted = m.mounts.iter().any(|mt| mt.source == dev);
        if let Some(d) = m.disks.iter_mut().find(|d| &d.name == disk) {
            if !mounted && d.size_bytes < size {
                d.size_bytes = size;
            }
        }
    }
    Ok(())
}

/// disk.NAME.FIELD=VALUE
fn set_disk(m: &mut Machine, rest: &str, v: &Val) -> Result<(), String> {
    let fields = || {
        let mut all = vec!["size", "preset"];
        all.extend_from_slice(DEVICE_FIELDS);
        all.iter()
            .map(|f| format!("disk.NAME.{f}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some((name, field)) = rest.split_once('.') else {
        return Err(format!("expected disk.NAME.FIELD (accepted: {})", fields()));
    };
    let names: Vec<String> = m.disks.iter().map(|d| d.name.clone()).collect();
    let Some(d) = m.disks.iter_mut().find(|d| d.name == name) else {
        let list = if names.is_empty() {
            "it has none".to_string()
        } else {
            names.join(", ")
        };
        return Err(format!("the machine has no disk '{name}' (disks: {list})"));
    };
    match field {
        "size" => d.size_bytes = to_size(v)?,
        "preset" => d.model = device_preset(&to_string(v)?)?,
        f if DEVICE_FIELDS.contains(&f) => set_device_field(d, f, v)?,
        _ => {
            return Err(format!(
                "unknown disk field '{field}' (accepted: {})",
                fields()
            ))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::RawKind;

    /// toml hands spans to our key and value types (see the SPANNED_* names): a value deep in
    /// the file is reported on its own line, not on line 1.
    #[test]
    fn spans_are_reported() {
        let text = "ram = \"2G\"\ncpus = 2\n\n[[disk]]\nname = \"vda\"\nsize = \"20G\"\npreset = \"virtio\"\nqueue_depth = 0\n";
        let e = parse_toml(text, "s.toml").unwrap_err().message;
        assert!(e.starts_with("s.toml:8: "), "{e}");
        let raw: RawNode = toml::from_str(text).unwrap();
        let RawKind::Table(entries) = raw.kind else {
            panic!("not a table")
        };
        assert_eq!(entries[1].0.name, "cpus");
        assert_eq!(entries[1].0.start, Some(11), "key span");
        assert_eq!(entries[1].1.start, Some(18), "value span");
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        for text in [
            format!("x = {}1{}", "[".repeat(5000), "]".repeat(5000)),
            format!("{} = 1", vec!["a"; 20000].join(".")),
            format!("[sysctl]\n{} = 1", vec!["a"; 20000].join(".")),
            format!("x = {}", "{a = ".repeat(5000) + "1" + &"}".repeat(5000)),
        ] {
            let e = parse_toml(&text, "deep.toml").unwrap_err().message;
            assert!(e.starts_with("deep.toml:"), "{e}");
        }
    }
}
