//! sysctl(8), writes to /proc/sys, and swapon/swapoff.

use memtwin_kernel::{Kernel, Program, Step, TaskId};
use memtwin_machine::Sysctls;

enum Op {
    Set(String, String),
    Show(String),
    /// sysctl -a
    All,
}

pub struct Sysctl {
    ops: Vec<Op>,
    /// `-n`: values only; `-q`: quiet; `echo > /proc/sys` prints nothing.
    values_only: bool,
    quiet: bool,
    status: i32,
    done: bool,
}

impl Sysctl {
    pub fn parse(args: &[String]) -> Result<Sysctl, String> {
        let mut s = Sysctl { ops: Vec::new(), values_only: false, quiet: false, status: 0, done: false };
        let mut write = false;
        for a in args {
            match a.as_str() {
                "-w" | "--write" => write = true,
                "-n" | "--values" => s.values_only = true,
                "-q" | "--quiet" => s.quiet = true,
                "-a" | "-A" | "-X" | "--all" => s.ops.push(Op::All),
                o if o.starts_with('-') => return Err(format!("sysctl: unsupported option '{o}' (supported: -a, -w, -n, -q)")),
                kv => {
                    if let Some((k, v)) = kv.split_once('=') {
                        let name = Sysctls::canonical(k);
                        // A name the model does not know stops the scenario at its line; a
                        // bad value is the kernel's EINVAL when the command runs (procps
                        // prints its message and sysctl exits 1), and a tunable the model
                        // does not read is refused then.
                        // A vm name no kernel has fails when the command runs ("cannot stat").
                        if memtwin_machine::not_modelled(&name).is_none() && !absent_everywhere(&name) {
                            Sysctls::default().get(&name).map_err(|e| format!("sysctl: {e}"))?;
                        }
                        s.ops.push(Op::Set(name, v.to_string()));
                    } else if write {
                        return Err(format!("sysctl: \"{kv}\" must be of the form name=value"));
                    } else {
                        let name = Sysctls::canonical(kv);
                        if !absent_everywhere(&name) {
                            Sysctls::default().get(&name).map_err(|e| format!("sysctl: {e}"))?;
                        }
                        s.ops.push(Op::Show(name));
                    }
                }
            }
        }
        if s.ops.is_empty() {
            return Err("sysctl: no variables specified (sysctl [-w] NAME[=VALUE]...)".into());
        }
        Ok(s)
    }

    /// `echo VALUE > /proc/sys/NAME`.
    pub fn write(name: &str, value: &str) -> Sysctl {
        Sysctl { ops: vec![Op::Set(name.to_string(), value.to_string())], values_only: false, quiet: true, status: 0, done: false }
    }
}

/// Apply a setting to the running kernel, including the actions some files trigger.
fn apply(k: &mut Kernel, me: TaskId, name: &str, value: &str) -> Result<(), String> {
    k.sysctl.set(name, value).map_err(|e| e.to_string())?;
    match name {
        "vm.drop_caches" => {
            let what: u32 = value.trim().parse().unwrap_or(0);
            let scanned = k.vm.get(memtwin_procfs::VmItem::SlabsScanned);
            let freed = k.drop_caches(what);
            let scanned = k.vm.get(memtwin_procfs::VmItem::SlabsScanned) - scanned;
            // drop_caches_sysctl_handler (fs/drop_caches.c, 4.x+): "%s (%d): drop_caches: %d"
            // once per writer; 2.6.x dropped silently.
            if !matches!(k.machine.kernel, memtwin_machine::KernelProfile::Linux2639 | memtwin_machine::KernelProfile::Linux24) {
                let (comm, pid) = (k.tasks[me as usize].comm.clone(), k.tasks[me as usize].pid);
                let comm = if comm == "echo" { "bash".to_string() } else { comm };
                k.printk(memtwin_kernel::printk::KERN_INFO, &format!("{comm} ({pid}): drop_caches: {what}"));
            }
            // Walking the inodes and freeing each page, and the shrinkers' walk of their
            // objects, cost the writer CPU time (its step's burst: the RCU grace periods of
            // the objects pruned first pass during it, as on a real kernel, where a drop of
            // 300,000 dentries took 0.12 s of system time).
            let per_page = k.machine.cpu_model.page_cache_ns + k.machine.cpu_model.page_alloc_ns;
            k.charge_sys(me, freed * per_page + scanned * k.shrinker_obj_ns());
        }
        "vm.min_free_kbytes" | "vm.watermark_scale_factor" => k.setup_per_zone_wmarks(),
        "vm.watermark_boost_factor" => k.mm.watermark_boost_factor = k.watermark_boost_factor(),
        _ => {}
    }
    Ok(())
}

/// Whether some era's /proc/sys/vm has the file `name` (`vm.x`): a real kernel file the model
/// may not model. A vm name no era has does not exist at all (open fails with ENOENT).
pub fn vm_key_in_some_era(name: &str) -> bool {
    use memtwin_machine::KernelProfile::*;
    [Linux6, Linux58, Linux5Pre59, Linux2639, Linux24].into_iter().any(|e| vm_keys(e).iter().any(|(n, _)| *n == name))
        || ["vm.drop_caches", "vm.compact_memory", "vm.stat_refresh"].contains(&name)
}

/// A vm name that is no file in any era (and not one of the model's own knobs).
fn absent_everywhere(name: &str) -> bool {
    name.starts_with("vm.") && !vm_key_in_some_era(name) && !SPLIT_RECLAIM_KEYS.contains(&name) && !memtwin_machine::sysctl_names().contains(&name)
}

/// `echo never > /sys/kernel/mm/transparent_hugepage/enabled`: what the model already does
/// (every mapping uses 4 KiB pages); 2.4 has no such file.
pub struct ThpNever;

impl Program for ThpNever {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if k.machine.kernel == memtwin_machine::KernelProfile::Linux24 {
            k.eprint(me, "bash: /sys/kernel/mm/transparent_hugepage/enabled: No such file or directory\n");
            return Step::Exit(1);
        }
        Step::Exit(0)
    }
}

/// `echo V > /proc/sys/vm/NAME` for a file no kernel has: bash cannot create a file in
/// /proc/sys (open fails with ENOENT), prints its message and the status is 1.
pub struct NoSuchProcFile(pub String);

impl Program for NoSuchProcFile {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        k.eprint(me, &format!("bash: {}: No such file or directory\n", self.0));
        Step::Exit(1)
    }
}

/// `echo 1 > /proc/sys/vm/compact_memory`: the writer compacts the zone
/// (sysctl_compaction_handler -> compact_nodes); 2.4 has no such file.
pub struct CompactMemory;

impl Program for CompactMemory {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if k.profile.compaction == memtwin_kernel::profile::Compaction::None {
            k.eprint(me, "bash: /proc/sys/vm/compact_memory: No such file or directory\n");
            return Step::Exit(1);
        }
        k.compact_nodes(me);
        Step::Exit(0)
    }
}

impl Program for Sysctl {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.done {
            return Step::Exit(self.status);
        }
        self.done = true;
        for op in std::mem::take(&mut self.ops) {
            let missing = match &op {
                Op::Set(n, _) | Op::Show(n) if !era_has_key(k.machine.kernel, n) => Some(n.clone()),
                _ => None,
            };
            if let Some(n) = missing {
                let path = format!("/proc/sys/{}", n.replace('.', "/"));
                if self.quiet {
                    k.eprint(me, &format!("bash: {path}: No such file or directory\n"));
                } else {
                    k.eprint(me, &format!("sysctl: cannot stat {path}: No such file or directory\n"));
                }
                self.status = if self.quiet { 1 } else { 255 };
                continue;
            }
            match op {
                Op::Set(name, value) => match apply(k, me, &name, &value) {
                    Ok(()) => {
                        if !self.quiet {
                            let shown = k.sysctl.get(&name).unwrap_or(value);
                            if self.values_only {
                                k.print(me, &format!("{shown}\n"));
                            } else {
                                k.print(me, &format!("{name} = {shown}\n"));
                            }
                        }
                    }
                    Err(e) if memtwin_machine::not_modelled(&name).is_some() => {
                        // Refused, loudly; the script goes on as after a failed write.
                        if self.quiet {
                            k.eprint(me, &format!("memtwin: /proc/sys/{}: {e}; the write is refused\n", name.replace('.', "/")));
                        } else {
                            k.eprint(me, &format!("sysctl: setting key \"{name}\": {e}; refused by memtwin\n"));
                        }
                        self.status = 1;
                    }
                    Err(e) => {
                        if self.quiet {
                            let _ = e;
                            k.eprint(me, "bash: echo: write error: Invalid argument\n");
                        } else {
                            // procps sysctl's message for a write the kernel rejects
                            // (proc_dointvec_minmax & co. return -EINVAL).
                            let _ = e;
                            k.eprint(me, &format!("sysctl: setting key \"{name}\": Invalid argument\n"));
                        }
                        self.status = 1;
                    }
                },
                Op::All => {
                    let t = sysctl_all(k);
                    let t = if self.values_only { t.lines().map(|l| format!("{}\n", l.split_once(" = ").map_or(l, |x| x.1))).collect() } else { t };
                    k.print(me, &t);
                }
                Op::Show(name) => {
                    let v = k.sysctl.get(&name).unwrap_or_default();
                    if self.values_only {
                        k.print(me, &format!("{v}\n"));
                    } else {
                        k.print(me, &format!("{name} = {v}\n"));
                    }
                }
            }
        }
        k.charge_sys(me, 20_000);
        Step::Cpu { user: 0, sys: 0 }
    }
}

/// swapon, swapoff, mkswap and zramctl (util-linux).
pub struct Swap {
    op: SwapOp,
    /// swapoff in progress: the area being emptied.
    draining: Option<usize>,
    /// How far the scan of the address spaces has got in the area being emptied.
    unuse: memtwin_kernel::mm::swap_state::UnuseCursor,
    queue: Vec<usize>,
    status: i32,
    started: bool,
}

enum SwapOp {
    /// swapon -a / swapon [-p PRIO] PATH
    On { path: Option<String>, prio: Option<i32> },
    /// swapon --show (libsmartcols table)
    Show,
    /// swapon -s / --summary (the deprecated /proc/swaps-like list)
    Summary,
    /// swapoff -a / swapoff PATH
    Off { path: Option<String> },
    Mkswap { path: String },
    /// zramctl --find --size SIZE [--algorithm ALG]
    ZramFind { size: u64, alg: String },
    /// zramctl (the table)
    ZramShow,
}

impl Swap {
    pub fn parse(name: &str, args: &[String], cwd: &str) -> Result<Swap, String> {
        let abs = |p: &str| memtwin_kernel::fs::normalize(cwd, p);
        let op = match name {
            "swapon" | "swapoff" => {
                let mut path = None;
                let mut prio = None;
                let mut all = false;
                let mut show = false;
                let mut summary = false;
                let mut it = args.iter();
                while let Some(a) = it.next() {
                    match a.as_str() {
                        "-a" | "--all" => all = true,
                        "--show" if name == "swapon" => show = true,
                        "-s" | "--summary" if name == "swapon" => summary = true,
                        "-p" | "--priority" if name == "swapon" => {
                            prio = Some(it.next().and_then(|v| v.parse::<i32>().ok()).ok_or("swapon: -p needs a priority (-1..32767)")?);
                        }
                        o if o.starts_with('-') => return Err(format!("{name}: unsupported option '{o}' (supported: -a, PATH{})", if name == "swapon" { ", -p PRIO, --show, -s" } else { "" })),
                        p => path = Some(abs(p)),
                    }
                }
                if summary {
                    SwapOp::Summary
                } else if show {
                    SwapOp::Show
                } else if !all && path.is_none() {
                    return Err(format!("{name}: nothing to do: give -a or a device/file"));
                } else if name == "swapon" {
                    SwapOp::On { path, prio }
                } else {
                    SwapOp::Off { path }
                }
            }
            "mkswap" => match args {
                [p] if !p.starts_with('-') => SwapOp::Mkswap { path: abs(p) },
                _ => return Err("mkswap: expected one device or file (mkswap PATH)".into()),
            },
            _ => {
                // zramctl
                let mut find = false;
                let mut size = None;
                let mut alg = "lzo-rle".to_string();
                let mut it = args.iter();
                while let Some(a) = it.next() {
                    match a.as_str() {
                        "-f" | "--find" => find = true,
                        "-s" | "--size" => size = Some(it.next().and_then(|v| super::parse_coreutils_size(v)).ok_or("zramctl: --size needs a size (e.g. 8G)")?),
                        "-a" | "--algorithm" => alg = it.next().cloned().ok_or("zramctl: --algorithm needs a name (lzo-rle, lz4, zstd)")?,
                        o => return Err(format!("zramctl: unsupported argument '{o}' (supported: zramctl, zramctl --find --size SIZE [--algorithm ALG])")),
                    }
                }
                match (find, size) {
                    (true, Some(size)) => SwapOp::ZramFind { size, alg },
                    (false, None) => SwapOp::ZramShow,
                    _ => return Err("zramctl: use 'zramctl --find --size SIZE' to set up a device".into()),
                }
            }
        };
        Ok(Swap { op, draining: None, unuse: Default::default(), queue: Vec::new(), status: 0, started: false })
    }
}

fn human_iec(bytes: u64) -> String {
    // util-linux size_to_human_string: "4G", "1.5G", "512M".
    let units = ["B", "K", "M", "G", "T"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if (v - v.round()).abs() < 0.05 { format!("{}{}", v.round() as u64, units[u]) } else { format!("{:.1}{}", v, units[u]) }
}

impl Program for Swap {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        k.charge_sys(me, 20_000);
        if !self.started {
            self.started = true;
            match &self.op {
                SwapOp::On { path, prio } => {
                    let (path, prio) = (path.clone(), *prio);
                    let mut n = 0;
                    let mut switched = Vec::new();
                    let mut busy = Vec::new();
                    for (i, a) in k.swap.areas.iter_mut().enumerate() {
                        if path.as_ref().is_none_or(|p| *p == a.name) {
                            if !a.active {
                                a.active = true;
                                if let Some(pr) = prio {
                                    a.priority = pr;
                                }
                                switched.push(i);
                            } else if path.is_some() {
                                // sys_swapon on an active area: EBUSY.
                                busy.push(a.name.clone());
                            }
                            n += 1;
                        }
                    }
                    for i in switched {
                        k.log_swapon(i);
                    }
                    for name in busy {
                        k.eprint(me, &format!("swapon: {name}: swapon failed: Device or resource busy\n"));
                        self.status = 255;
                    }
                    if let (Some(p), 0) = (&path, n) {
                        k.eprint(me, &format!("swapon: {p}: read swap header failed\n"));
                        self.status = 255;
                    }
                    return Step::Exit(self.status);
                }
                SwapOp::Show => {
                    let rows: Vec<Vec<String>> = k
                        .swap.areas
                        .iter()
                        .filter(|a| a.active)
                        .map(|a| {
                            let ty = if a.name.starts_with("/dev/") { "partition" } else { "file" };
                            vec![a.name.clone(), ty.to_string(), human_iec(a.pages * 4096), human_iec(a.used * 4096), a.priority.to_string()]
                        })
                        .collect();
                    // util-linux prints nothing at all when no swap is active.
                    if !rows.is_empty() {
                        let t = memtwin_tools::smartcols(&["NAME", "TYPE", "SIZE", "USED", "PRIO"], &[false, false, true, true, true], &rows);
                        k.print(me, &t);
                    }
                    return Step::Exit(0);
                }
                SwapOp::Summary => {
                    // util-linux display_summary: "the same formatting as the kernel for
                    // /proc/swaps" (the 5.x+ layout), header included.
                    let t = super::procfiles::proc_swaps(k, true);
                    k.print(me, &t);
                    return Step::Exit(0);
                }
                SwapOp::Mkswap { path } => {
                    let path = path.clone();
                    let (kind, size) = if let Some(i) = path.strip_prefix("/dev/zram").and_then(|n| n.parse::<usize>().ok()) {
                        match k.swap.zram_disks.get(i) {
                            Some((size, alg)) => (memtwin_machine::SwapKind::Zram { algorithm: alg.clone() }, *size),
                            None => {
                                k.eprint(me, &format!("mkswap: cannot open {path}: No such file or directory\n"));
                                return Step::Exit(1);
                            }
                        }
                    } else if let Some(disk) = path.strip_prefix("/dev/").filter(|d| k.block.find(d).is_some()) {
                        let d = k.block.find(disk).unwrap_or(0);
                        (memtwin_machine::SwapKind::Partition { disk: disk.to_string() }, k.block.devs[d as usize].disk.size_bytes)
                    } else {
                        match k.fs.lookup(&path) {
                            Some(ino) => (memtwin_machine::SwapKind::File { path: path.clone() }, k.fs.inodes[ino as usize].size),
                            None => {
                                k.eprint(me, &format!("mkswap: cannot open {path}: No such file or directory\n"));
                                return Step::Exit(1);
                            }
                        }
                    };
                    if size < 10 * 4096 {
                        k.eprint(me, &format!("mkswap: error: swap area needs to be at least 40 KiB\n"));
                        return Step::Exit(1);
                    }
                    if k.swap.areas.iter().any(|a| a.name == path && a.active) {
                        k.eprint(me, &format!("mkswap: error: {path} is mounted; will not make swapspace\n"));
                        return Step::Exit(1);
                    }
                    k.swap.areas.retain(|a| a.name != path || a.used > 0);
                    let prio = -2 - k.swap.areas.len() as i32;
                    match k.add_swap_area(&kind, size, prio, false) {
                        Ok(_) => {
                            let usable = (size / 4096 - 1) * 4096;
                            k.print(me, &format!("Setting up swapspace version 1, size = {} ({} bytes)\nno label, UUID=5f3c2a1e-8d4b-4c2a-9e1f-{:012x}\n", human_iec(usable).replace('G', " GiB").replace('M', " MiB"), usable, size));
                        }
                        Err(e) => {
                            k.eprint(me, &format!("mkswap: {e}\n"));
                            self.status = 1;
                        }
                    }
                    return Step::Exit(self.status);
                }
                SwapOp::ZramFind { size, alg } => {
                    let (size, alg) = (*size, alg.clone());
                    k.swap.zram_disks.push((size, alg));
                    let n = k.swap.zram_disks.len() - 1;
                    // zram_add and disksize_store (drivers/block/zram): the device appears,
                    // then its capacity (set_capacity_and_notify, in 512-byte sectors).
                    if !matches!(k.machine.kernel, memtwin_machine::KernelProfile::Linux2639 | memtwin_machine::KernelProfile::Linux24) {
                        k.printk(memtwin_kernel::printk::KERN_INFO, &format!("zram: Added device: zram{n}"));
                        k.printk(memtwin_kernel::printk::KERN_INFO, &format!("zram{n}: detected capacity change from 0 to {}", size / 512));
                    }
                    k.print(me, &format!("/dev/zram{n}\n"));
                    return Step::Exit(0);
                }
                SwapOp::ZramShow => {
                    let mut t = String::from("NAME       ALGORITHM DISKSIZE  DATA COMPR TOTAL STREAMS MOUNTPOINT\n");
                    let streams = k.machine.cpus;
                    let mut zi = 0;
                    for a in &k.swap.areas {
                        if let memtwin_kernel::mm::swapfile::AreaKind::Zram { algorithm } = &a.kind {
                            t.push_str(&format!(
                                "/dev/zram{zi} {:<9} {:>8} {:>5} {:>5} {:>5} {:>7} {}\n",
                                algorithm,
                                human_iec((a.pages + 1) * 4096),
                                human_iec(a.zram_pages * 4096),
                                human_iec(a.zram_compr_bytes),
                                human_iec(a.zram_frames * 4096),
                                streams,
                                if a.active { "[SWAP]" } else { "" }
                            ));
                            zi += 1;
                        }
                    }
                    k.print(me, &t);
                    return Step::Exit(0);
                }
                SwapOp::Off { path } => {
                    let path = path.clone();
                    self.queue = (0..k.swap.areas.len()).filter(|&i| k.swap.areas[i].active && path.as_ref().is_none_or(|p| *p == k.swap.areas[i].name)).collect();
                    if self.queue.is_empty() && path.is_some() {
                        k.eprint(me, &format!("swapoff: {}: swapoff failed: Invalid argument\n", path.unwrap_or_default()));
                        return Step::Exit(255);
                    }
                }
            }
        }
        // swapoff: empty each area in turn (try_to_unuse), then switch it off.
        loop {
            let ai = match self.draining {
                Some(a) => a,
                None => match self.queue.pop() {
                    Some(a) => {
                        self.draining = Some(a);
                        a
                    }
                    None => return Step::Exit(self.status),
                },
            };
            // Pages that come back must not go straight out again to the same area.
            k.swap.areas[ai].active = false;
            match k.swapoff_area_step(me, ai, 64, &mut self.unuse) {
                Ok(None) => self.draining = None,
                Ok(Some(t)) if t > k.now => return Step::SleepUntil { t, io: true },
                Ok(Some(_)) => return Step::Cpu { user: 0, sys: 0 },
                Err(step) => return step,
            }
        }
    }
}

/// The vm.* files of each era's /proc/sys/vm (readable ones: drop_caches, compact_memory
/// and stat_refresh are write-only and `sysctl -a` skips them), with the kernel's default
/// for those the model does not read. `None`: the value comes from the model.
fn vm_keys(era: memtwin_machine::KernelProfile) -> Vec<(&'static str, Option<&'static str>)> {
    use memtwin_machine::KernelProfile::*;
    let common_modern: &[(&str, Option<&str>)] = &[
        ("vm.admin_reserve_kbytes", Some("8192")),
        ("vm.compact_unevictable_allowed", Some("1")),
        ("vm.dirty_background_bytes", None),
        ("vm.dirty_background_ratio", None),
        ("vm.dirty_bytes", None),
        ("vm.dirty_expire_centisecs", None),
        ("vm.dirty_ratio", None),
        ("vm.dirty_writeback_centisecs", None),
        ("vm.dirtytime_expire_seconds", Some("43200")),
        ("vm.extfrag_threshold", Some("500")),
        ("vm.hugetlb_shm_group", Some("0")),
        ("vm.laptop_mode", Some("0")),
        ("vm.legacy_va_layout", Some("0")),
        ("vm.lowmem_reserve_ratio", Some("256\t256\t32\t0\t0")),
        ("vm.max_map_count", Some("65530")),
        ("vm.memory_failure_early_kill", Some("0")),
        ("vm.memory_failure_recovery", Some("1")),
        ("vm.min_free_kbytes", None),
        ("vm.min_slab_ratio", Some("5")),
        ("vm.min_unmapped_ratio", Some("1")),
        ("vm.mmap_min_addr", Some("65536")),
        ("vm.mmap_rnd_bits", Some("28")),
        ("vm.mmap_rnd_compat_bits", Some("8")),
        ("vm.nr_hugepages", Some("0")),
        ("vm.nr_hugepages_mempolicy", Some("0")),
        ("vm.nr_overcommit_hugepages", Some("0")),
        ("vm.numa_stat", Some("1")),
        ("vm.numa_zonelist_order", Some("Node")),
        ("vm.oom_dump_tasks", Some("1")),
        ("vm.oom_kill_allocating_task", None),
        ("vm.overcommit_kbytes", Some("0")),
        ("vm.overcommit_memory", None),
        ("vm.overcommit_ratio", None),
        ("vm.page-cluster", None),
        ("vm.panic_on_oom", Some("0")),
        ("vm.stat_interval", Some("1")),
        ("vm.swappiness", None),
        ("vm.unprivileged_userfaultfd", Some("0")),
        ("vm.user_reserve_kbytes", Some("USER_RESERVE")),
        ("vm.vfs_cache_pressure", None),
        ("vm.watermark_boost_factor", None),
        ("vm.watermark_scale_factor", None),
        ("vm.zone_reclaim_mode", Some("0")),
    ];
    let mut v: Vec<(&str, Option<&str>)> = match era {
        Linux6 | Linux58 | Linux5Pre59 => common_modern.to_vec(),
        Linux2639 => vec![
            ("vm.block_dump", Some("0")),
            ("vm.dirty_background_bytes", None),
            ("vm.dirty_background_ratio", None),
            ("vm.dirty_bytes", None),
            ("vm.dirty_expire_centisecs", None),
            ("vm.dirty_ratio", None),
            ("vm.dirty_writeback_centisecs", None),
            ("vm.extfrag_threshold", Some("500")),
            ("vm.hugepages_treat_as_movable", Some("0")),
            ("vm.hugetlb_shm_group", Some("0")),
            ("vm.laptop_mode", Some("0")),
            ("vm.legacy_va_layout", Some("0")),
            ("vm.lowmem_reserve_ratio", Some("256\t256\t32")),
            ("vm.max_map_count", Some("65530")),
            ("vm.memory_failure_early_kill", Some("0")),
            ("vm.memory_failure_recovery", Some("1")),
            ("vm.min_free_kbytes", None),
            ("vm.min_slab_ratio", Some("5")),
            ("vm.min_unmapped_ratio", Some("1")),
            ("vm.mmap_min_addr", Some("4096")),
            ("vm.nr_hugepages", Some("0")),
            ("vm.nr_hugepages_mempolicy", Some("0")),
            ("vm.nr_overcommit_hugepages", Some("0")),
            ("vm.nr_pdflush_threads", Some("0")),
            ("vm.numa_zonelist_order", Some("default")),
            ("vm.oom_dump_tasks", Some("1")),
            ("vm.oom_kill_allocating_task", None),
            ("vm.overcommit_memory", None),
            ("vm.overcommit_ratio", None),
            ("vm.page-cluster", None),
            ("vm.panic_on_oom", Some("0")),
            ("vm.percpu_pagelist_fraction", Some("0")),
            ("vm.scan_unevictable_pages", Some("0")),
            ("vm.stat_interval", Some("1")),
            ("vm.swappiness", None),
            ("vm.vfs_cache_pressure", None),
            ("vm.zone_reclaim_mode", Some("0")),
        ],
        // 2.4.18 /proc/sys/vm.
        Linux24 => vec![
            ("vm.bdflush", None),
            ("vm.kswapd", Some("512\t32\t8")),
            ("vm.max-readahead", Some("31")),
            ("vm.max_map_count", Some("65536")),
            ("vm.min-readahead", Some("3")),
            ("vm.overcommit_memory", None),
            ("vm.page-cluster", None),
            ("vm.pagetable_cache", Some("25\t50")),
        ],
    };
    match era {
        Linux6 => v.extend([
            ("vm.compaction_proactiveness", Some("20")),
            ("vm.hugetlb_optimize_vmemmap", Some("0")),
            ("vm.page_lock_unfairness", Some("5")),
            ("vm.percpu_pagelist_high_fraction", Some("0")),
        ]),
        Linux58 | Linux5Pre59 => v.push(("vm.percpu_pagelist_fraction", Some("0"))),
        _ => {}
    }
    v
}

/// The files seed 004's split reclaim patch adds to /proc/sys/vm (docs/seed-004.md).
pub const SPLIT_RECLAIM_KEYS: &[&str] =
    &["vm.page_reclaim_start_kbytes", "vm.slab_reclaim_start_bytes", "vm.slab_reclaim_start_percent", "vm.split_reclaim"];

/// Does the era's /proc/sys have this file? (vm.* keys by era; drop_caches and
/// compact_memory are write-only files; other keys are the model's own.)
pub fn era_has_key(era: memtwin_machine::KernelProfile, name: &str) -> bool {
    if !name.starts_with("vm.") {
        return true;
    }
    if !vm_key_in_some_era(name) && !SPLIT_RECLAIM_KEYS.contains(&name) && !memtwin_machine::sysctl_names().contains(&name) {
        return false;
    }
    if SPLIT_RECLAIM_KEYS.contains(&name) {
        // Seed 004's split reclaim patch: its files on the patched 2.6.39 and on the model's
        // port of it to 6.x; other eras refuse it (memtwin_machine::validate).
        return matches!(era, memtwin_machine::KernelProfile::Linux2639 | memtwin_machine::KernelProfile::Linux6);
    }
    if memtwin_machine::not_modelled(name).is_some() {
        // Tunables accepted at their default only (some are vendor kernels' own keys):
        // their own refusal applies.
        return true;
    }
    if name == "vm.drop_caches" {
        // fs/drop_caches.c came with 2.6.16: a 2.4 kernel has no such file.
        return era != memtwin_machine::KernelProfile::Linux24;
    }
    vm_keys(era).iter().any(|(n, _)| *n == name) || !memtwin_machine::sysctl_names().contains(&name)
}

/// `sysctl -a`: every readable key of the era, sorted by name as procps lists them, with
/// the model's value where it has one and the kernel's default otherwise.
pub fn sysctl_all(k: &Kernel) -> String {
    let mut keys: Vec<(String, String)> = Vec::new();
    for (name, default) in vm_keys(k.machine.kernel) {
        let v = match default {
            Some("USER_RESERVE") => {
                // init_user_reserve: min(free kB / 32, 128 MiB).
                (k.mm.nr_free() * 4 / 32).min(1 << 17).to_string()
            }
            Some(d) => d.to_string(),
            None => k.sysctl.get(name).unwrap_or_default(),
        };
        keys.push((name.to_string(), v));
    }
    // The patched 2.6.39 lists the split reclaim files; a stock 6.x has none (the model's
    // port of the patch answers for them but `sysctl -a` shows the real kernel's keys).
    if k.machine.kernel == memtwin_machine::KernelProfile::Linux2639 {
        for name in SPLIT_RECLAIM_KEYS {
            keys.push((name.to_string(), k.sysctl.get(name).unwrap_or_default()));
        }
    }
    for name in memtwin_machine::sysctl_names().iter().filter(|n| n.starts_with("net.")) {
        if let Ok(v) = k.sysctl.get(name) {
            keys.push((name.to_string(), v));
        }
    }
    keys.sort();
    keys.into_iter().map(|(n, v)| format!("{n} = {v}\n")).collect()
}
