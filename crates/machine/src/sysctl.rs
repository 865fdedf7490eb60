//! Kernel tunables under /proc/sys, with the kernel's ranges. One setter serves the machine
//! file, `--set`, `sysctl -w` and `echo N > /proc/sys/...` alike.

use std::fmt;

/// Linux 2.4's vm.bdflush vector: `nfract ndirty - - interval age_buffer nfract_sync
/// nfract_stop_bdflush -` (fs/buffer.c, bdf_prm). Times are in jiffies (HZ=100).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bdflush {
    pub values: [i64; 9],
}

impl Bdflush {
    /// 2.4.18 defaults: 30% soft limit, 500 buffers per run, 5 s interval, 30 s age,
    /// 60% hard limit, 20% stop.
    pub const DEFAULT: Bdflush = Bdflush { values: [30, 500, 0, 0, 500, 3000, 60, 20, 0] };
    pub fn nfract(&self) -> i64 { self.values[0] }
    pub fn ndirty(&self) -> i64 { self.values[1] }
    pub fn interval_jiffies(&self) -> i64 { self.values[4] }
    pub fn age_buffer_jiffies(&self) -> i64 { self.values[5] }
    pub fn nfract_sync(&self) -> i64 { self.values[6] }
    pub fn nfract_stop(&self) -> i64 { self.values[7] }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SysctlError(pub String);

impl fmt::Display for SysctlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The tunables the model reads. Defaults are the kernel's.
#[derive(Clone, Debug, PartialEq)]
pub struct Sysctls {
    pub swappiness: u32,
    pub dirty_ratio: u32,
    pub dirty_background_ratio: u32,
    /// 0 = use the ratio (writing one of a ratio/bytes pair zeroes the other, as the kernel does).
    pub dirty_bytes: u64,
    pub dirty_background_bytes: u64,
    pub dirty_writeback_centisecs: u32,
    pub dirty_expire_centisecs: u32,
    /// None: computed from RAM (init_per_zone_wmark_min).
    pub min_free_kbytes: Option<u64>,
    pub watermark_scale_factor: u32,
    /// vm.watermark_boost_factor (5.0+): how far a fragmentation event may raise the
    /// watermarks, in 1/10000 of the high watermark (0: never).
    pub watermark_boost_factor: u32,
    /// vm.vfs_cache_pressure: the shrinkers' scan of the dentry and inode caches, in
    /// percent (mm/shrinker.rs).
    pub vfs_cache_pressure: u32,
    pub page_cluster: u32,
    pub overcommit_memory: u32,
    pub overcommit_ratio: u32,
    pub oom_kill_allocating_task: u32,
    pub bdflush: Bdflush,
    /// net.ipv4.tcp_rmem: min, default, max (bytes).
    pub tcp_rmem: [u64; 3],
    pub tcp_wmem: [u64; 3],
    pub rmem_max: u64,
    pub rmem_default: u64,
    pub tcp_moderate_rcvbuf: u32,
    /// net.ipv4.tcp_adv_win_scale: the share of the receive buffer offered as window is
    /// space - space/2^scale (scale > 0) or space/2^-scale (scale <= 0), the rest being
    /// left for skb overhead (tcp_win_from_space). 2 until Linux 3.4, 1 since.
    pub tcp_adv_win_scale: i32,
    /// net.ipv4.tcp_window_scaling: RFC 1323 window scaling; without it the window stops
    /// at 65535 bytes.
    pub tcp_window_scaling: u32,
    /// Split reclaim (seed 004's patch to 2.6.39-rc4, never merged): direct reclaim is split
    /// into page reclaim (page cache only, by a task allocating a page below P_start) and
    /// slab reclaim (slab only, by a task allocating a slab object once slab >= S_start).
    /// `vm.split_reclaim`, or `reclaim = "split"` in the machine file.
    pub split_reclaim: bool,
    /// S_start as a percentage of MemTotal (the paper's default: half of memory).
    pub slab_reclaim_start_percent: u32,
    /// S_start in bytes; 0 = use the percentage (writing one of the pair zeroes the other,
    /// as vm.dirty_ratio/vm.dirty_bytes do).
    pub slab_reclaim_start_bytes: u64,
    /// P_start in kB of free memory; 0 = the zone's min watermark (the paper: P_start is the
    /// conventional D_start, where direct reclaim starts).
    pub page_reclaim_start_kbytes: u64,
}

impl Default for Sysctls {
    fn default() -> Self {
        Sysctls {
            swappiness: 60,
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_bytes: 0,
            dirty_background_bytes: 0,
            dirty_writeback_centisecs: 500,
            dirty_expire_centisecs: 3000,
            min_free_kbytes: None,
            watermark_scale_factor: 10,
            watermark_boost_factor: 15000,
            vfs_cache_pressure: 100,
            page_cluster: 3,
            overcommit_memory: 0,
            overcommit_ratio: 50,
            oom_kill_allocating_task: 0,
            bdflush: Bdflush::DEFAULT,
            tcp_rmem: [4096, 131072, 6291456],
            tcp_wmem: [4096, 16384, 4194304],
            rmem_max: 212992,
            rmem_default: 212992,
            tcp_moderate_rcvbuf: 1,
            tcp_adv_win_scale: 1,
            tcp_window_scaling: 1,
            split_reclaim: false,
            slab_reclaim_start_percent: 50,
            slab_reclaim_start_bytes: 0,
            page_reclaim_start_kbytes: 0,
        }
    }
}

/// What `sysctl -w` accepts, for error messages.
pub const KNOWN: &[&str] = &[
    "vm.swappiness",
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    "vm.dirty_bytes",
    "vm.dirty_background_bytes",
    "vm.dirty_writeback_centisecs",
    "vm.dirty_expire_centisecs",
    "vm.min_free_kbytes",
    "vm.watermark_scale_factor",
    "vm.watermark_boost_factor",
    "vm.vfs_cache_pressure",
    "vm.page-cluster",
    "vm.overcommit_memory",
    "vm.overcommit_ratio",
    "vm.oom_kill_allocating_task",
    "vm.bdflush",
    "vm.drop_caches",
    "vm.split_reclaim",
    "vm.slab_reclaim_start_percent",
    "vm.slab_reclaim_start_bytes",
    "vm.page_reclaim_start_kbytes",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.core.rmem_max",
    "net.core.rmem_default",
    "net.ipv4.tcp_moderate_rcvbuf",
    "net.ipv4.tcp_adv_win_scale",
    "net.ipv4.tcp_window_scaling",
];

/// Tunables Linux has that the model does not read: (name, the kernel's default as
/// written, why). Setting one to its default is accepted (the model behaves as that
/// default); any other value is refused as not modelled: an error in a machine file or
/// `--set`, a warning on stderr (status 1, the script goes on) for `sysctl -w` and
/// `echo > /proc/sys/...`.
pub const NOT_MODELLED: &[(&str, &str, &str)] = &[
    ("net.ipv4.tcp_wmem", "4096 16384 4194304", "TCP send buffers are not modelled (ftp only receives)"),
    ("net.core.rmem_default", "212992", "TCP sockets start from tcp_rmem; other sockets are not modelled"),
];

/// Why a tunable is not modelled, if it is one of NOT_MODELLED.
pub fn not_modelled(name: &str) -> Option<&'static str> {
    let n = Sysctls::canonical(name);
    NOT_MODELLED.iter().find(|(k, _, _)| *k == n).map(|(_, _, why)| *why)
}

fn int<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, SysctlError> {
    v.trim()
        .parse::<T>()
        .map_err(|_| SysctlError(format!("{name}: invalid value '{v}' (expected a whole number)")))
}

fn ranged(name: &str, v: &str, lo: u64, hi: u64) -> Result<u64, SysctlError> {
    let x: u64 = int(name, v)?;
    if x < lo || x > hi {
        return Err(SysctlError(format!("{name}: {x} is out of range ({lo}..={hi})")));
    }
    Ok(x)
}

fn vector<const N: usize>(name: &str, v: &str) -> Result<[i64; N], SysctlError> {
    let parts: Vec<&str> = v.split_whitespace().collect();
    if parts.len() != N {
        return Err(SysctlError(format!(
            "{name}: expected {N} whitespace-separated numbers, got {} ('{v}')",
            parts.len()
        )));
    }
    let mut out = [0i64; N];
    for (i, p) in parts.iter().enumerate() {
        out[i] = int(name, p)?;
    }
    Ok(out)
}

impl Sysctls {
    /// S_start in bytes for a machine of `mem_total` bytes: the byte setting when set,
    /// else the percentage of MemTotal.
    pub fn slab_reclaim_start(&self, mem_total: u64) -> u64 {
        if self.slab_reclaim_start_bytes != 0 {
            self.slab_reclaim_start_bytes
        } else {
            mem_total * self.slab_reclaim_start_percent as u64 / 100
        }
    }

    /// Normalise a name as sysctl(8) does: "vm/swappiness" and "vm.swappiness" are the same;
    /// a /proc/sys/ prefix is accepted.
    pub fn canonical(name: &str) -> String {
        let n = name.trim().trim_start_matches("/proc/sys/").trim_matches('/');
        n.replace('/', ".")
    }

    /// Set a tunable by name. `vm.drop_caches` is an action, not a setting: the caller
    /// handles it; here it is only validated.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), SysctlError> {
        let name = Sysctls::canonical(name);
        let n = name.as_str();
        let v = value.trim();
        if let Some((_, default, why)) = NOT_MODELLED.iter().find(|(k, _, _)| *k == n) {
            let words: Vec<&str> = v.split_whitespace().collect();
            if words == default.split_whitespace().collect::<Vec<_>>() {
                return Ok(());
            }
            return Err(SysctlError(format!("{n}: not modelled ({why}); only its default '{default}' is accepted")));
        }
        match n {
            "vm.swappiness" => self.swappiness = ranged(n, v, 0, 200)? as u32,
            // Each of the pair zeroes the other when written (mm/page-writeback.c):
            // dirty_ratio_handler and dirty_bytes_handler only when the value changed,
            // dirty_background_ratio_handler and dirty_background_bytes_handler always. The
            // *_bytes minimums (dirty_bytes_min = 2 pages, one_ul) make 0 an EINVAL: a
            // percentage comes back by writing the *_ratio.
            "vm.dirty_ratio" => {
                let r = ranged(n, v, 0, 100)? as u32;
                if r != self.dirty_ratio {
                    self.dirty_bytes = 0;
                }
                self.dirty_ratio = r;
            }
            "vm.dirty_background_ratio" => {
                self.dirty_background_ratio = ranged(n, v, 0, 100)? as u32;
                self.dirty_background_bytes = 0;
            }
            "vm.dirty_bytes" => {
                let b = ranged(n, v, 2 * 4096, u64::MAX)?;
                if b != self.dirty_bytes {
                    self.dirty_ratio = 0;
                }
                self.dirty_bytes = b;
            }
            "vm.dirty_background_bytes" => {
                self.dirty_background_bytes = ranged(n, v, 1, u64::MAX)?;
                self.dirty_background_ratio = 0;
            }
            "vm.dirty_writeback_centisecs" => self.dirty_writeback_centisecs = int(n, v)?,
            "vm.dirty_expire_centisecs" => self.dirty_expire_centisecs = int(n, v)?,
            "vm.min_free_kbytes" => self.min_free_kbytes = Some(ranged(n, v, 0, u32::MAX as u64)?),
            "vm.watermark_scale_factor" => self.watermark_scale_factor = ranged(n, v, 1, 3000)? as u32,
            // proc_dointvec_minmax with extra1 = SYSCTL_ZERO.
            "vm.watermark_boost_factor" => self.watermark_boost_factor = ranged(n, v, 0, i32::MAX as u64)? as u32,
            // proc_dointvec_minmax with extra1 = SYSCTL_ZERO.
            "vm.vfs_cache_pressure" => self.vfs_cache_pressure = ranged(n, v, 0, i32::MAX as u64)? as u32,
            "vm.page-cluster" | "vm.page_cluster" => self.page_cluster = ranged(n, v, 0, 31)? as u32,
            "vm.overcommit_memory" => self.overcommit_memory = ranged(n, v, 0, 2)? as u32,
            "vm.overcommit_ratio" => self.overcommit_ratio = int(n, v)?,
            "vm.oom_kill_allocating_task" => self.oom_kill_allocating_task = ranged(n, v, 0, 1)? as u32,
            "vm.bdflush" => self.bdflush = Bdflush { values: vector::<9>(n, v)? },
            "vm.drop_caches" => {
                ranged(n, v, 1, 4)?;
            }
            "vm.split_reclaim" => self.split_reclaim = ranged(n, v, 0, 1)? == 1,
            "vm.slab_reclaim_start_percent" => {
                self.slab_reclaim_start_percent = ranged(n, v, 1, 100)? as u32;
                self.slab_reclaim_start_bytes = 0;
            }
            "vm.slab_reclaim_start_bytes" => {
                // As dirty_bytes: at least two pages; 0 goes back to the percentage.
                let b = int::<u64>(n, v)?;
                if b != 0 && b < 2 * 4096 {
                    return Err(SysctlError(format!("{n}: {b} is below the minimum of 8192")));
                }
                self.slab_reclaim_start_bytes = b;
            }
            "vm.page_reclaim_start_kbytes" => self.page_reclaim_start_kbytes = int(n, v)?,
            "net.ipv4.tcp_rmem" => {
                let t = vector::<3>(n, v)?;
                if t.iter().any(|&x| x <= 0) || t[0] > t[1] || t[1] > t[2] {
                    return Err(SysctlError(format!("{n}: expected 'min default max' with 0 < min <= default <= max, got '{v}'")));
                }
                let t = [t[0] as u64, t[1] as u64, t[2] as u64];
                self.tcp_rmem = t;
            }
            "net.core.rmem_max" => self.rmem_max = int(n, v)?,
            "net.ipv4.tcp_moderate_rcvbuf" => self.tcp_moderate_rcvbuf = ranged(n, v, 0, 1)? as u32,
            "net.ipv4.tcp_adv_win_scale" => {
                // proc_dointvec_minmax with the kernel's bounds (-31..31).
                let x: i32 = int(n, v)?;
                if !(-31..=31).contains(&x) {
                    return Err(SysctlError(format!("{n}: {x} is out of range (-31..=31)")));
                }
                self.tcp_adv_win_scale = x;
            }
            "net.ipv4.tcp_window_scaling" => self.tcp_window_scaling = ranged(n, v, 0, 1)? as u32,
            _ => {
                return Err(SysctlError(format!(
                    "unknown sysctl '{name}' (supported: {})",
                    KNOWN.join(", ")
                )))
            }
        }
        Ok(())
    }

    /// The value as `sysctl NAME` / `cat /proc/sys/...` prints it.
    pub fn get(&self, name: &str) -> Result<String, SysctlError> {
        let name = Sysctls::canonical(name);
        let vec3 = |t: [u64; 3]| format!("{}\t{}\t{}", t[0], t[1], t[2]);
        Ok(match name.as_str() {
            "vm.swappiness" => self.swappiness.to_string(),
            "vm.dirty_ratio" => self.dirty_ratio.to_string(),
            "vm.dirty_background_ratio" => self.dirty_background_ratio.to_string(),
            "vm.dirty_bytes" => self.dirty_bytes.to_string(),
            "vm.dirty_background_bytes" => self.dirty_background_bytes.to_string(),
            "vm.dirty_writeback_centisecs" => self.dirty_writeback_centisecs.to_string(),
            "vm.dirty_expire_centisecs" => self.dirty_expire_centisecs.to_string(),
            "vm.min_free_kbytes" => self.min_free_kbytes.map(|v| v.to_string()).unwrap_or_default(),
            "vm.watermark_scale_factor" => self.watermark_scale_factor.to_string(),
            "vm.watermark_boost_factor" => self.watermark_boost_factor.to_string(),
            "vm.vfs_cache_pressure" => self.vfs_cache_pressure.to_string(),
            "vm.page-cluster" | "vm.page_cluster" => self.page_cluster.to_string(),
            "vm.overcommit_memory" => self.overcommit_memory.to_string(),
            "vm.overcommit_ratio" => self.overcommit_ratio.to_string(),
            "vm.oom_kill_allocating_task" => self.oom_kill_allocating_task.to_string(),
            "vm.bdflush" => self.bdflush.values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("\t"),
            "vm.split_reclaim" => (self.split_reclaim as u32).to_string(),
            "vm.slab_reclaim_start_percent" => self.slab_reclaim_start_percent.to_string(),
            "vm.slab_reclaim_start_bytes" => self.slab_reclaim_start_bytes.to_string(),
            "vm.page_reclaim_start_kbytes" => self.page_reclaim_start_kbytes.to_string(),
            "net.ipv4.tcp_rmem" => vec3(self.tcp_rmem),
            "net.ipv4.tcp_wmem" => vec3(self.tcp_wmem),
            "net.core.rmem_max" => self.rmem_max.to_string(),
            "net.core.rmem_default" => self.rmem_default.to_string(),
            "net.ipv4.tcp_moderate_rcvbuf" => self.tcp_moderate_rcvbuf.to_string(),
            "net.ipv4.tcp_adv_win_scale" => self.tcp_adv_win_scale.to_string(),
            "net.ipv4.tcp_window_scaling" => self.tcp_window_scaling.to_string(),
            "vm.drop_caches" => "0".to_string(),
            _ => return Err(SysctlError(format!("unknown sysctl '{name}' (supported: {})", KNOWN.join(", ")))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(s: &Sysctls, n: &str) -> String {
        s.get(n).unwrap()
    }

    /// dirty_bytes_handler / dirty_ratio_handler zero the partner when the value changes;
    /// dirty_background_bytes_handler / dirty_background_ratio_handler always do; the
    /// *_bytes minimums (2 pages, 1 byte) refuse 0. Measured the same on a 6.18 host.
    #[test]
    fn dirty_knob_pairs_follow_the_handlers() {
        let mut s = Sysctls::default();
        s.set("vm.dirty_bytes", "50331648").unwrap();
        assert_eq!((get(&s, "vm.dirty_ratio"), get(&s, "vm.dirty_bytes")), ("0".into(), "50331648".into()));
        s.set("vm.dirty_background_bytes", "16777216").unwrap();
        assert_eq!(get(&s, "vm.dirty_background_ratio"), "0");
        assert!(s.set("vm.dirty_bytes", "0").is_err());
        assert!(s.set("vm.dirty_bytes", "4096").is_err());
        assert!(s.set("vm.dirty_background_bytes", "0").is_err());
        assert_eq!(get(&s, "vm.dirty_bytes"), "50331648", "a refused write changes nothing");
        // The ratio written with its current value (0) leaves the bytes in force.
        s.set("vm.dirty_ratio", "0").unwrap();
        assert_eq!(get(&s, "vm.dirty_bytes"), "50331648");
        s.set("vm.dirty_ratio", "20").unwrap();
        assert_eq!(get(&s, "vm.dirty_bytes"), "0");
        // The background ratio zeroes its bytes even unchanged.
        s.set("vm.dirty_background_ratio", "0").unwrap();
        assert_eq!(get(&s, "vm.dirty_background_bytes"), "0");
        // Writing the bytes' current value leaves the ratio alone.
        s.set("vm.dirty_bytes", "8192").unwrap();
        s.set("vm.dirty_ratio", "30").unwrap();
        assert_eq!(get(&s, "vm.dirty_bytes"), "0");
    }
}
