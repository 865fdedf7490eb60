//! Built-in commands: the programs a scenario runs (dd, cp, cat, rm, sync, sysctl, free,
//! vmstat, iotop, top, ...). Each is a `Program` whose steps call the kernel model's system
//! calls and print what the real tool prints. Unsupported commands and options are errors
//! that say what is supported.

mod bonnie;
pub mod cgroup;
pub(crate) mod dd;
mod files;
mod fio;
mod fs_admin;
pub(crate) mod memtools;
mod monitor;
mod net;
pub mod ionice;
pub mod nice;
mod procfiles;
mod sfs;
mod stress;
mod swapdemo;
mod smem;
mod sysctl;
pub mod text;

use memtwin_kernel::{Ns, Program, NS_PER_SEC};
use std::collections::HashMap;

pub type Cmd = Box<dyn Program>;

/// The programs of `build` (the text tools are in `text::TEXT_COMMANDS`, the shell's own
/// commands in the runner's `BUILTINS`); see [`supported`] for the whole list.
pub const SUPPORTED: &[&str] = &[
    "dd", "cp", "cat", "rm", "sync", "sleep", "echo", "sysctl", "free", "vmstat", "iostat", "iotop", "top",
    "mount", "umount", "df", "ls", "stat", "mkdir", "crash", "reboot",
    "ftp", "bonnie++", "fio",
    "swapoff", "swapon", "mkswap", "zramctl", "swapdemo", "memhog", "rmdir", "systemd-run", "cgexec",
    "dmesg", "ps", "uptime", "nproc", "fallocate", "truncate", "chmod", "touch", "du", "smem", "stress-ng", "stress", "fincore", "vmtouch", "pmap", "sar", "slabtop", "reclaimstat", "ionice", "nice", "renice", "rpc.nfsd", "sfs", "wait", "set", "cd", "export", "true", "false", "exit", "time",
];

/// Build the program for a command line; `Err` names what is wrong and what is accepted.
pub fn build(name: &str, args: &[String], cwd: &str, captures: &HashMap<String, u32>) -> Result<Cmd, String> {
    match name {
        "dd" => dd::Dd::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "cp" => files::Cp::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "cat" => files::Cat::parse(args, cwd, captures).map(|d| Box::new(d) as Cmd),
        "rm" => files::Rm::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "sync" => files::Sync::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "mount" => fs_admin::Mount::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "umount" => fs_admin::Umount::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "df" => fs_admin::Df::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "ls" => fs_admin::Ls::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "stat" => fs_admin::StatCmd::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "mkdir" => fs_admin::Mkdir::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "echo" => Ok(Box::new(files::Echo::new(args))),
        "ftp" => net::Ftp::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "bonnie++" => bonnie::Bonnie::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "fio" => fio::Fio::parse(args, cwd, captures).map(|d| Box::new(d) as Cmd),
        "sysctl" => sysctl::Sysctl::parse(args).map(|d| Box::new(d) as Cmd),
        "free" => monitor::Free::parse(args).map(|d| Box::new(d) as Cmd),
        "vmstat" => monitor::Vmstat::parse(args).map(|d| Box::new(d) as Cmd),
        "slabtop" => monitor::Slabtop::parse(args).map(|d| Box::new(d) as Cmd),
        "iostat" => monitor::Iostat::parse(args).map(|d| Box::new(d) as Cmd),
        "iotop" => monitor::Iotop::parse(args).map(|d| Box::new(d) as Cmd),
        "top" => monitor::Top::parse(args).map(|d| Box::new(d) as Cmd),
        "swapoff" | "swapon" | "mkswap" | "zramctl" => sysctl::Swap::parse(name, args, cwd).map(|d| Box::new(d) as Cmd),
        "swapdemo" => swapdemo::Swapdemo::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "memhog" => swapdemo::Memhog::parse(args).map(|(d, _)| Box::new(d) as Cmd),
        "rmdir" => cgroup::Rmdir::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "systemd-run" | "cgexec" => {
            let inner = |n: &str, a: &[String]| -> Result<(Cmd, String), String> {
                if n == "systemd-run" || n == "cgexec" {
                    return Err(format!("{name}: running '{n}' inside it is not supported"));
                }
                Ok((build(n, a, cwd, captures)?, comm_of(n, a)))
            };
            if name == "cgexec" {
                cgroup::RunIn::cgexec(args, &inner).map(|d| Box::new(d) as Cmd)
            } else {
                cgroup::RunIn::systemd_run(args, cwd, &inner).map(|d| Box::new(d) as Cmd)
            }
        }
        "dmesg" => memtools::Dmesg::parse(args).map(|d| Box::new(d) as Cmd),
        "ps" => memtools::Ps::parse(args).map(|d| Box::new(d) as Cmd),
        "uptime" => memtools::Uptime::parse(args).map(|d| Box::new(d) as Cmd),
        "nproc" => memtools::Nproc::parse(args).map(|d| Box::new(d) as Cmd),
        "reclaimstat" => memtools::Reclaimstat::parse(args).map(|d| Box::new(d) as Cmd),
        "rpc.nfsd" => sfs::RpcNfsd::parse(args).map(|d| Box::new(d) as Cmd),
        "sfs" => sfs::Sfs::parse(args).map(|d| Box::new(d) as Cmd),
        "fallocate" => memtools::SetSize::parse("fallocate", args, cwd).map(|d| Box::new(d) as Cmd),
        "truncate" => memtools::SetSize::parse("truncate", args, cwd).map(|d| Box::new(d) as Cmd),
        "chmod" => memtools::Chmod::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "touch" => memtools::Touch::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "smem" => smem::Smem::parse(args).map(|d| Box::new(d) as Cmd),
        "du" => memtools::Du::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "fincore" => memtools::Fincore::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "vmtouch" => memtools::Vmtouch::parse(args, cwd).map(|d| Box::new(d) as Cmd),
        "pmap" => memtools::Pmap::parse(args).map(|d| Box::new(d) as Cmd),
        "sar" => memtools::Sar::parse(args).map(|d| Box::new(d) as Cmd),
        "stress-ng" | "stress" => stress::StressVm::parse(name, args).map(|d| Box::new(d) as Cmd),
        "renice" => nice::Renice::parse(args).map(|d| Box::new(d) as Cmd),
        "ionice" | "nice" => Err(format!("{name}: runs its command from the shell (internal: not built here)")),
        _ => Err(format!("unknown command '{name}' (supported: {})", supported().join(", "))),
    }
}

/// Every command a scenario can use: programs, text tools and the shell's built-ins, each
/// once, in this order. The README's "Built-in commands:" list is this list (a test checks).
pub fn supported() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for &n in SUPPORTED.iter().chain(text::TEXT_COMMANDS).chain(crate::runner::BUILTINS) {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// The name a command's task shows in ps/top (`memhog --comm NAME`).
pub fn comm_of(name: &str, args: &[String]) -> String {
    if name == "ionice" {
        // ionice execs its command: the task is the command's.
        if let Ok(a) = ionice::parse(args) {
            if !a.command.is_empty() {
                return comm_of(&a.command[0], &a.command[1..]);
            }
        }
    }
    if name == "nice" {
        if let Ok(a) = nice::parse(args) {
            if !a.command.is_empty() {
                return comm_of(&a.command[0], &a.command[1..]);
            }
        }
    }
    if name == "stress-ng" || name == "stress" {
        return name.to_string();
    }
    if name == "memhog" {
        if let Ok((_, comm)) = swapdemo::Memhog::parse(args) {
            return comm;
        }
    }
    name.to_string()
}

/// `echo VALUE > /proc/sys/...`: a write to a sysctl file; `> /sys/fs/cgroup/...`: a
/// cgroup file.
pub fn proc_write(path: &str, value: &str) -> Result<Cmd, String> {
    if cgroup::is_cgroup_path(path) {
        return Ok(Box::new(cgroup::CgroupWrite::new(path, value)));
    }
    if path.starts_with("/sys/kernel/mm/transparent_hugepage/") {
        // The model maps everything with 4 KiB pages, which is what "never" means: writing
        // "never" to `enabled` is honoured (and changes nothing); anything else is refused.
        if path.ends_with("/enabled") && value.trim() == "never" {
            return Ok(Box::new(sysctl::ThpNever));
        }
        return Err(format!(
            "cannot write to '{path}': transparent huge pages are not modelled (every mapping uses 4 KiB pages, as with 'never'; only 'echo never > .../enabled' is accepted)"
        ));
    }
    if path == "/proc/sys/vm/compact_memory" {
        // sysctl_compaction_handler -> compact_nodes (mm/compaction.rs).
        return Ok(Box::new(sysctl::CompactMemory));
    }
    let Some(rest) = path.strip_prefix("/proc/sys/") else {
        return Err(format!("cannot write to '{path}' (only /proc/sys/... files are writable)"));
    };
    let name = rest.replace('/', ".");
    if memtwin_machine::Sysctls::default().get(&name).is_err() {
        if name.starts_with("vm.") && !sysctl::vm_key_in_some_era(&name) && !sysctl::SPLIT_RECLAIM_KEYS.contains(&name.as_str()) {
            return Ok(Box::new(sysctl::NoSuchProcFile(path.to_string())));
        }
        return Err(format!("cannot write to '{path}': not a modelled sysctl (supported: {})", memtwin_machine::sysctl_names().join(", ")));
    }
    Ok(Box::new(sysctl::Sysctl::write(&name, value)))
}

/// `sleep N[smhd]...`: the total duration.
pub fn parse_sleep(args: &[String]) -> Result<Ns, String> {
    if args.is_empty() {
        return Err("sleep: missing operand".into());
    }
    let mut total = 0.0;
    for a in args {
        let (num, mult) = match a.chars().last() {
            Some('s') => (&a[..a.len() - 1], 1.0),
            Some('m') => (&a[..a.len() - 1], 60.0),
            Some('h') => (&a[..a.len() - 1], 3600.0),
            Some('d') => (&a[..a.len() - 1], 86400.0),
            _ => (a.as_str(), 1.0),
        };
        let v: f64 = num.parse().map_err(|_| format!("sleep: invalid time interval '{a}' (a number of seconds, optionally with s, m, h or d)"))?;
        if !(v >= 0.0) || !v.is_finite() {
            return Err(format!("sleep: invalid time interval '{a}'"));
        }
        total += v * mult;
    }
    Ok((total * NS_PER_SEC as f64) as Ns)
}

/// bash's `time` report (to the terminal), or POSIX `time -p`.
pub fn format_time(real: Ns, user: Ns, sys: Ns, posix: bool) -> String {
    let s = |ns: Ns| ns as f64 / NS_PER_SEC as f64;
    if posix {
        return format!("real {:.2}\nuser {:.2}\nsys {:.2}\n", s(real), s(user), s(sys));
    }
    let f = |ns: Ns| {
        let ms = (ns + 500_000) / 1_000_000;
        format!("{}m{}.{:03}s", ms / 60_000, (ms / 1000) % 60, ms % 1000)
    };
    format!("\nreal\t{}\nuser\t{}\nsys\t{}\n", f(real), f(user), f(sys))
}

/// gnulib human_readable with autoscaling, rounding to nearest and one decimal below 10,
/// as dd prints sizes and rates: "537 MB", "3.9 GB", "512 MiB".
pub fn human(v: f64, si: bool) -> String {
    let base = if si { 1000.0 } else { 1024.0 };
    let prefixes = ["k", "M", "G", "T", "P", "E", "Z", "Y"];
    if v < base {
        return format!("{} B", v.round() as u64);
    }
    let mut x = v;
    let mut e = 0;
    while x >= base && e < prefixes.len() {
        x /= base;
        e += 1;
    }
    let unit = |e: usize| {
        let p = prefixes[e - 1];
        if si { format!("{p}B") } else { format!("{}iB", p.to_uppercase()) }
    };
    if x < 10.0 {
        let r = (x * 10.0).round() / 10.0;
        if r < 10.0 {
            return format!("{r:.1} {}", unit(e));
        }
        return format!("{} {}", r as u64, unit(e));
    }
    let r = x.round();
    if r >= base && e < prefixes.len() {
        return format!("1.0 {}", unit(e + 1));
    }
    format!("{} {}", r as u64, unit(e))
}

/// Sizes as coreutils parses them (dd's bs=, count= with multipliers): c, w, b, kB, K, KiB,
/// MB, M, MiB, ... and xN products.
pub fn parse_coreutils_size(s: &str) -> Option<u64> {
    if let Some((a, b)) = s.split_once('x') {
        return parse_coreutils_size(a)?.checked_mul(parse_coreutils_size(b)?);
    }
    let digits_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if digits_end == 0 {
        return None;
    }
    let n: u64 = s[..digits_end].parse().ok()?;
    let suffix = &s[digits_end..];
    let mult: u64 = match suffix {
        "" | "c" => 1,
        "w" => 2,
        "b" => 512,
        "kB" => 1000,
        "K" | "k" | "KiB" => 1024,
        "MB" => 1000u64.pow(2),
        "M" | "MiB" => 1024u64.pow(2),
        "GB" => 1000u64.pow(3),
        "G" | "GiB" => 1024u64.pow(3),
        "TB" => 1000u64.pow(4),
        "T" | "TiB" => 1024u64.pow(4),
        _ => return None,
    };
    n.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_matches_coreutils() {
        assert_eq!(human(536870912.0, true), "537 MB");
        assert_eq!(human(536870912.0, false), "512 MiB");
        assert_eq!(human(2147479552.0, true), "2.1 GB");
        assert_eq!(human(3.9e9, true), "3.9 GB");
        assert_eq!(human(304.3e6, true), "304 MB");
        assert_eq!(human(999.0, true), "999 B");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_coreutils_size("1M"), Some(1 << 20));
        assert_eq!(parse_coreutils_size("2G"), Some(2 << 30));
        assert_eq!(parse_coreutils_size("1kB"), Some(1000));
        assert_eq!(parse_coreutils_size("2x512"), Some(1024));
        assert_eq!(parse_coreutils_size("12QB"), None);
        assert_eq!(parse_coreutils_size(""), None);
    }

    #[test]
    fn time_format() {
        assert_eq!(format_time(5_520_000_000, 30_000_000, 1_070_000_000, false), "\nreal\t0m5.520s\nuser\t0m0.030s\nsys\t0m1.070s\n");
        assert_eq!(format_time(65_000_000_000, 0, 0, true), "real 65.00\nuser 0.00\nsys 0.00\n");
    }
}
