//! The /proc and /sys files `cat` reads, rendered from the model at the instant of the read
//! (fs/proc/*.c, mm/vmstat.c, mm/swapfile.c): what exists depends on the kernel era.

use memtwin_kernel::{Kernel, TaskId};
use memtwin_machine::KernelProfile;
use memtwin_procfs::{MeminfoExtra, MeminfoLayout};

/// The files that can be read, for error messages.
pub const SUPPORTED: &str = "/proc/meminfo, /proc/vmstat, /proc/swaps, /proc/loadavg, /proc/uptime, /proc/stat, \
/proc/zoneinfo, /proc/slabinfo, /proc/diskstats, /proc/buddyinfo, /proc/pagetypeinfo, /proc/cpuinfo, /proc/PID/{status,stat,sched,io,smaps_rollup,cmdline,comm,wchan,oom_score,oom_score_adj} (PID or self), /proc/sys/..., \
/sys/kernel/mm/transparent_hugepage/{enabled,defrag}, /sys/block/DEV/queue/scheduler";

/// Is `path` a /proc or /sys file this model renders? `Err` says why not and what is.
pub fn check(path: &str, era: Option<KernelProfile>) -> Result<(), String> {
    if path.starts_with("/sys/kernel/mm/transparent_hugepage/") {
        if era == Some(KernelProfile::Linux24) {
            return Err(format!("cat: {path}: transparent huge pages did not exist in Linux 2.4 (2.6.38+)"));
        }
        return match path.rsplit('/').next() {
            Some("enabled" | "defrag") => Ok(()),
            _ => Err(format!("cat: {path}: not modelled (supported: {SUPPORTED})")),
        };
    }
    if let Some(r) = path.strip_prefix("/sys/block/") {
        if r.split('/').count() == 3 && r.ends_with("/queue/scheduler") {
            return Ok(());
        }
    }
    let rest = path.strip_prefix("/proc/").ok_or_else(|| format!("cat: {path}: not modelled (supported: {SUPPORTED})"))?;
    match rest {
        "meminfo" | "vmstat" | "swaps" | "loadavg" | "uptime" | "stat" | "zoneinfo" | "slabinfo" | "diskstats" | "buddyinfo" | "pagetypeinfo" | "cpuinfo" => return Ok(()),
        _ => {}
    }
    if let Some((pid, file)) = rest.split_once('/') {
        if (pid == "self" || pid.parse::<u32>().is_ok())
            && matches!(file, "status" | "stat" | "sched" | "io" | "smaps_rollup" | "cmdline" | "comm" | "wchan" | "oom_score" | "oom_score_adj")
        {
            return Ok(());
        }
    }
    Err(format!("cat: {path}: not modelled (supported: {SUPPORTED})"))
}

fn layout(k: &Kernel) -> MeminfoLayout {
    match k.machine.kernel {
        KernelProfile::Linux6 => MeminfoLayout::V6,
        KernelProfile::Linux58 | KernelProfile::Linux5Pre59 => MeminfoLayout::V5,
        KernelProfile::Linux2639 => MeminfoLayout::V2639,
        KernelProfile::Linux24 => MeminfoLayout::V24,
    }
}

/// The text of a file (after `check`). `Err`: cat's message for a missing file.
pub fn read(k: &Kernel, me: TaskId, path: &str) -> Result<String, String> {
    let nofile = || format!("cat: {path}: No such file or directory\n");
    if let Some(f) = path.strip_prefix("/sys/kernel/mm/transparent_hugepage/") {
        // The model maps every page at 4 KiB: huge pages are never used, which is what
        // "never" says. defrag is the 6.x default (madvise).
        return Ok(match f {
            "enabled" => "always madvise [never]\n".to_string(),
            _ if k.machine.kernel == KernelProfile::Linux2639 => "[always] madvise never\n".to_string(),
            _ => "always defer defer+madvise [madvise] never\n".to_string(),
        });
    }
    if let Some(name) = path.strip_prefix("/sys/block/").and_then(|r| r.strip_suffix("/queue/scheduler")) {
        // The I/O schedulers the device offers, the active one in brackets (elv_iosched_show;
        // 2.4 has no sysfs).
        let d = k.machine.disks.iter().find(|d| d.name == name).filter(|_| k.machine.kernel != KernelProfile::Linux24).ok_or_else(nofile)?;
        let (line, _) = super::ionice::scheduler(&k.machine, d);
        return Ok(if line.ends_with('\n') { line } else { format!("{line}\n") });
    }
    let rest = &path["/proc/".len()..];
    match rest {
        "meminfo" => {
            let mi = k.meminfo();
            let x = MeminfoExtra { ram_kb: k.machine.ram_bytes / 1024, swap_used_kb: mi.swap_total - mi.swap_free };
            return Ok(mi.render_layout(layout(k), &x));
        }
        "vmstat" => return k.vmstat_text().ok_or_else(nofile),
        "swaps" => return Ok(proc_swaps(k, !matches!(k.machine.kernel, KernelProfile::Linux2639 | KernelProfile::Linux24))),
        "loadavg" => return Ok(loadavg(k)),
        "uptime" => return Ok(uptime(k)),
        "stat" => return Ok(stat(k)),
        "zoneinfo" => return Ok(zoneinfo(k)),
        "slabinfo" => {
            // 2.4 prints version 1.1 (with the SMP tunables on SMP kernels).
            let v = if k.machine.kernel == KernelProfile::Linux24 {
                memtwin_procfs::SlabinfoVersion::V11 { smp: k.machine.cpus > 1 }
            } else {
                memtwin_procfs::SlabinfoVersion::V21
            };
            return Ok(memtwin_procfs::slabinfo(&k.slabinfo(), v));
        }
        "buddyinfo" => {
            // frag_show_print: "Node %d, zone %8s " then "%6lu " per order (MAX_ORDER 11
            // orders since 2.6); 2.4 had no such file.
            if k.machine.kernel == KernelProfile::Linux24 {
                return Err(nofile());
            }
            let mut t = format!("Node 0, zone {:>8} ", k.zone_name());
            for n in k.mm.free_blocks_per_order() {
                t.push_str(&format!("{n:6} "));
            }
            t.push('\n');
            return Ok(t);
        }
        "cpuinfo" => return Ok(cpuinfo(k)),
        "pagetypeinfo" => {
            if k.machine.kernel == KernelProfile::Linux24 {
                return Err(nofile());
            }
            return Ok(pagetypeinfo(k));
        }
        "diskstats" => {
            use memtwin_procfs::DiskstatsLayout::*;
            let layout = match k.machine.kernel {
                KernelProfile::Linux24 => return Err(nofile()),
                KernelProfile::Linux2639 => Classic,
                KernelProfile::Linux5Pre59 => Discard,
                KernelProfile::Linux58 | KernelProfile::Linux6 => Flush,
            };
            return Ok(memtwin_procfs::render_diskstats(&k.diskstats(), layout));
        }
        _ => {}
    }
    let (pid, file) = rest.split_once('/').ok_or_else(nofile)?;
    let pid = if pid == "self" { k.tasks[me as usize].pid } else { pid.parse().map_err(|_| nofile())? };
    let tid = (0..k.tasks.len()).find(|&i| k.tasks[i].pid == pid && k.tasks[i].exit_code.is_none() && !k.tasks[i].reaped).ok_or_else(nofile)? as TaskId;
    Ok(match file {
        "status" => pid_status(k, tid),
        "stat" => pid_stat(k, tid),
        "sched" if k.machine.kernel == KernelProfile::Linux24 => return Err(nofile()),
        "sched" => pid_sched(k, tid),
        "io" => pid_io(k, tid),
        "smaps_rollup" => smaps_rollup(k, tid),
        "cmdline" => {
            let t = &k.tasks[tid as usize];
            // NUL-separated arguments; a kernel thread's is empty.
            t.cmdline.split_whitespace().map(|a| format!("{a}\0")).collect()
        }
        "comm" => format!("{}\n", k.task_comm(tid)),
        // proc_pid_wchan: the symbol, or "0" for a running task (no newline).
        "wchan" => match k.wchan(tid) {
            "" => "0".to_string(),
            f => f.to_string(),
        },
        "oom_score" => {
            // proc_oom_score: badness scaled to 0..2000 of RAM + swap (5.x+).
            let total = k.mm.managed + k.swap_totals().0;
            let b = k.oom_badness(tid).unwrap_or(0);
            format!("{}\n", (1000 + b * 1000 / total.max(1) as i64).max(0))
        }
        _ => format!("{}\n", k.tasks[tid as usize].oom_score_adj),
    })
}

/// /proc/swaps (swap_show): the path padded to 40 columns; 5.x+ keeps Size and Used
/// aligned with an extra tab below 10^7 kB.
pub fn proc_swaps(k: &Kernel, aligned: bool) -> String {
    let mut t = String::from(if aligned { "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n" } else { "Filename\t\t\t\tType\t\tSize\tUsed\tPriority\n" });
    for a in k.swap.areas.iter().filter(|a| a.active) {
        let ty = if a.name.starts_with("/dev/") { "partition" } else { "file\t" };
        let pad = if a.name.len() < 40 { 40 - a.name.len() } else { 1 };
        let (size, used) = (a.pages * 4, a.used * 4);
        if aligned {
            let tab = |v: u64| if v < 10_000_000 { "\t" } else { "" };
            t.push_str(&format!("{}{:pad$}{ty}\t{size}{}\t{used}{}\t{}\n", a.name, "", tab(size), tab(used), a.priority));
        } else {
            t.push_str(&format!("{}{:pad$}{ty}\t{size}\t{used}\t{}\n", a.name, "", a.priority));
        }
    }
    t
}

/// /proc/loadavg (loadavg_proc_show): three averages, running/total tasks, last pid.
fn loadavg(k: &Kernel) -> String {
    let s = k.snapshot();
    let [a, b, c] = s.loadavg;
    let total = s.tasks.len();
    let last_pid = k.tasks.iter().map(|t| t.pid).max().unwrap_or(1);
    format!("{a:.2} {b:.2} {c:.2} {}/{} {}\n", s.procs_running.max(1), total, last_pid)
}

/// /proc/uptime (uptime_proc_show): seconds up and idle seconds summed over CPUs.
fn uptime(k: &Kernel) -> String {
    let s = k.snapshot();
    let up = k.now / 10_000_000;
    let idle = s.cpu.idle / 10_000_000;
    format!("{}.{:02} {}.{:02}\n", up / 100, up % 100, idle / 100, idle % 100)
}

/// /proc/stat (show_stat): the cpu line in USER_HZ ticks, then the counters the model
/// keeps. Per-CPU lines are the total split evenly (the scheduler keeps one total).
fn stat(k: &Kernel) -> String {
    let s = k.snapshot();
    let ticks = |ns: u64| ns / 10_000_000;
    let c = s.cpu;
    let line = |name: &str, div: u64| {
        format!(
            "{name} {} 0 {} {} {} 0 0 0 0 0\n",
            ticks(c.user) / div,
            ticks(c.system) / div,
            ticks(c.idle) / div,
            ticks(c.iowait) / div
        )
    };
    if k.machine.kernel == KernelProfile::Linux24 {
        return stat_2_4(k, &s);
    }
    let mut t = line("cpu ", 1);
    for i in 0..s.ncpus {
        t.push_str(&line(&format!("cpu{i}"), s.ncpus as u64));
    }
    t.push_str(&format!("intr {}\nctxt {}\nbtime 0\nprocesses {}\nprocs_running {}\nprocs_blocked {}\n", s.intr, s.ctxt, s.processes, s.procs_running.max(1), s.procs_blocked));
    t
}

/// 2.4's /proc/stat (kstat_read_proc in fs/proc/proc_misc.c): "cpu  user nice system
/// idle" (no iowait: idle is the rest of the jiffies), the page and swap lines (pgpgin and
/// pgpgout in KiB, `kstat.pgpgin >> 1` of sectors; pswpin/pswpout pages, counted in
/// rw_swap_page_base), intr (the sum only: the model keeps no per-IRQ counts), the
/// disk_io line ("(major,disk):(io,rio,rblk,wio,wblk)" for IDE and SCSI disks, blocks in
/// sectors), ctxt, btime, processes. 2.4 has no /proc/vmstat: these are its only
/// paging counters.
fn stat_2_4(k: &Kernel, s: &memtwin_procfs::Snapshot) -> String {
    use memtwin_procfs::VmItem;
    let ticks = |ns: u64| ns / 10_000_000;
    let c = s.cpu;
    let n = s.ncpus.max(1) as u64;
    let mut t = format!("cpu  {} 0 {} {}\n", ticks(c.user), ticks(c.system), ticks(c.idle + c.iowait));
    for i in 0..s.ncpus {
        t.push_str(&format!("cpu{i} {} 0 {} {}\n", ticks(c.user) / n, ticks(c.system) / n, ticks(c.idle + c.iowait) / n));
    }
    let v = &k.vm;
    t.push_str(&format!("page {} {}\nswap {} {}\nintr {}\ndisk_io: ", v.get(VmItem::Pgpgin), v.get(VmItem::Pgpgout), v.get(VmItem::Pswpin), v.get(VmItem::Pswpout), s.intr));
    for d in k.diskstats() {
        // disk_index: 64 minors a disk on IDE (major 3), 16 on SCSI (8);
        // DK_MAX_MAJOR 16, DK_MAX_DISK 16.
        let disk = match d.major {
            3 => d.minor >> 6,
            8 => d.minor >> 4,
            _ => continue,
        };
        if disk >= 16 || d.ios[0] + d.ios[1] + d.sectors[0] + d.sectors[1] == 0 {
            continue;
        }
        t.push_str(&format!("({},{}):({},{},{},{},{}) ", d.major, disk, d.ios[0] + d.ios[1], d.ios[0], d.sectors[0], d.ios[1], d.sectors[1]));
    }
    t.push_str(&format!("\nctxt {}\nbtime 0\nprocesses {}\n", s.ctxt, s.processes));
    t
}

/// /proc/cpuinfo: one block per CPU from the machine's CPU identity, in each era's layout
/// (show_cpuinfo: arch/i386/kernel/setup.c in 2.4, arch/x86/kernel/cpu/proc.c since).
/// 2.4: the i386 fields (fdiv_bug .. coma_bug) and no topology lines; 2.6.39: the
/// topology lines (physical id .. initial apicid) only when a package has more than one
/// thread, no bugs line; 3.18+ (5.x, 6.x): topology lines always on SMP kernels and the
/// bugs line; 5.x/6.x print the microcode revision after stepping when the machine file
/// gives it (c->microcode != 0), and 5.8+ the vmx flags line after flags when the CPU has
/// vmx and the machine file lists its VMX features.
/// CPUs are numbered threads-last, packages before cores (cpu i: thread i / (packages x
/// cores), then package, then core), as the BIOS usually lists them.
fn cpuinfo(k: &Kernel) -> String {
    let id = &k.machine.cpu_id;
    let era = k.machine.kernel;
    let ncpu = k.machine.cpus;
    let (cores, threads) = (id.cores_per_package.max(1), id.threads_per_core.max(1));
    let per_pkg = cores * threads;
    let packages = ncpu.div_ceil(per_pkg).max(1);
    let bits = |n: u32| if n <= 1 { 0 } else { 32 - (n - 1).leading_zeros() };
    let (tshift, pshift) = (bits(threads), bits(threads) + bits(cores));
    // calibrate_delay from the TSC: loops_per_jiffy = tsc_khz * 1000 / HZ, printed as
    // lpj / (500000 / HZ) "." (lpj / (5000 / HZ)) % 100: 2 x MHz.
    let bogomips = (id.mhz * 2.0 * 100.0).floor() / 100.0;
    let mut t = String::new();
    for cpu in 0..ncpu {
        let thread = cpu / (packages * cores);
        let rem = cpu % (packages * cores);
        let (pkg, core) = (rem / cores, rem % cores);
        let apicid = (pkg << pshift) | (core << tshift) | thread;
        t.push_str(&format!(
            "processor\t: {cpu}\nvendor_id\t: {}\ncpu family\t: {}\nmodel\t\t: {}\nmodel name\t: {}\nstepping\t: {}\n",
            id.vendor_id, id.family, id.model, id.model_name, id.stepping
        ));
        if let (Some(mc), false) = (id.microcode, matches!(era, KernelProfile::Linux24 | KernelProfile::Linux2639)) {
            // show_cpuinfo (arch/x86/kernel/cpu/proc.c): `if (c->microcode)`.
            t.push_str(&format!("microcode\t: 0x{mc:x}\n"));
        }
        t.push_str(&format!("cpu MHz\t\t: {:.3}\n", id.mhz));
        t.push_str(&format!("cache size\t: {} KB\n", id.cache_kb));
        if era == KernelProfile::Linux24 {
            t.push_str(&format!(
                "fdiv_bug\t: no\nhlt_bug\t\t: no\nf00f_bug\t: no\ncoma_bug\t: no\nfpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: {}\nwp\t\t: yes\nflags\t\t:{}\nbogomips\t: {bogomips:.2}\n\n",
                id.cpuid_level,
                id.flags.split_whitespace().map(|f| format!(" {f}")).collect::<String>()
            ));
            continue;
        }
        let smp = if era == KernelProfile::Linux2639 { per_pkg > 1 } else { true };
        if smp {
            let siblings = per_pkg.min(ncpu);
            t.push_str(&format!(
                "physical id\t: {pkg}\nsiblings\t: {siblings}\ncore id\t\t: {core}\ncpu cores\t: {}\napicid\t\t: {apicid}\ninitial apicid\t: {apicid}\n",
                cores.min(ncpu)
            ));
        }
        t.push_str(&format!("fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: {}\nwp\t\t: yes\n", id.cpuid_level));
        t.push_str("flags\t\t:");
        for f in id.flags.split_whitespace() {
            t.push(' ');
            t.push_str(f);
        }
        let vmx_names = matches!(era, KernelProfile::Linux58 | KernelProfile::Linux6);
        if vmx_names && !id.vmx_flags.is_empty() && id.flags.split_whitespace().any(|f| f == "vmx") {
            // 5.8+: `if (cpu_has(c, X86_FEATURE_VMX) && c->vmxfeatures)`.
            t.push_str("\nvmx flags\t:");
            for f in id.vmx_flags.split_whitespace() {
                t.push(' ');
                t.push_str(f);
            }
        }
        if era != KernelProfile::Linux2639 {
            t.push_str("\nbugs\t\t:");
            for b in id.bugs.split_whitespace() {
                t.push(' ');
                t.push_str(b);
            }
        }
        t.push_str(&format!("\nbogomips\t: {bogomips:.2}\nclflush size\t: 64\ncache_alignment\t: 64\n"));
        t.push_str(&format!("address sizes\t: {} bits physical, {} bits virtual\npower management:\n\n", id.address_bits.0, id.address_bits.1));
    }
    t
}

/// /proc/pagetypeinfo (pagetypeinfo_show, mm/vmstat.c, 2.6.24+): the pageblock size, free
/// blocks per order of each migrate type, and the pageblocks of each type, for the model's
/// one zone. Migrate types in each era's order and names (migratetype_names): 2.6.39
/// Unmovable, Reclaimable, Movable, Reserve, Isolate; 4.x+ Unmovable, Movable, Reclaimable,
/// HighAtomic, CMA, Isolate (the model has no high-atomic, CMA or isolated blocks). Since 5.4
/// a count stops at 100000 and prints as ">100000".
fn pagetypeinfo(k: &Kernel) -> String {
    use memtwin_kernel::mm::pageblock::MigrateType::{self, *};
    let old = k.machine.kernel == KernelProfile::Linux2639;
    let types: &[(&str, Option<MigrateType>)] = if old {
        &[("Unmovable", Some(Unmovable)), ("Reclaimable", Some(Reclaimable)), ("Movable", Some(Movable)), ("Reserve", Some(Reserve)), ("Isolate", None)]
    } else {
        &[("Unmovable", Some(Unmovable)), ("Movable", Some(Movable)), ("Reclaimable", Some(Reclaimable)), ("HighAtomic", None), ("CMA", None), ("Isolate", None)]
    };
    let cap = !old;
    let zone = k.zone_name();
    let mut t = format!("Page block order: {}\nPages per block:  {}\n\n", memtwin_kernel::mm::compaction::PAGEBLOCK_ORDER, memtwin_kernel::mm::compaction::PAGEBLOCK_NR_PAGES);
    // pagetypeinfo_showfree
    t.push_str(&format!("{:<43} ", "Free pages count per migrate type at order"));
    for order in 0..11 {
        t.push_str(&format!("{order:6} "));
    }
    t.push('\n');
    let free = k.mm.free_blocks_per_type();
    for &(name, mt) in types {
        t.push_str(&format!("Node {:4}, zone {:>8}, type {:>12} ", 0, zone, name));
        for order in 0..11 {
            let n = mt.map_or(0, |m| free[m as usize][order]);
            if cap && n >= 100_000 {
                t.push_str(&format!(">{:6} ", 100_000));
            } else {
                t.push_str(&format!("{n:6} "));
            }
        }
        t.push('\n');
    }
    // pagetypeinfo_showblockcount
    t.push_str(&format!("\n{:<23}", "Number of blocks type "));
    for &(name, _) in types {
        t.push_str(&format!("{name:>12} "));
    }
    t.push('\n');
    let blocks = k.mm.pageblocks.count();
    t.push_str(&format!("Node {}, zone {:>8} ", 0, zone));
    for &(_, mt) in types {
        t.push_str(&format!("{:12} ", mt.map_or(0, |m| blocks[m as usize])));
    }
    t.push('\n');
    t
}

/// /proc/zoneinfo (zoneinfo_show_print) for the model's one zone: free pages,
/// watermarks, spanned/present/managed and the node's counters.
fn zoneinfo(k: &Kernel) -> String {
    let v = k.vmstat();
    // zoneinfo_show_print: the watermarks in force (min_wmark_pages...: boost included),
    // after the boost itself (5.0+).
    let w = k.mm.wmark_pages();
    let present = k.machine.ram_bytes / 4096;
    let mut t = String::from("Node 0, zone   ");
    t.push_str(&format!("{:>6}\n", k.zone_name()));
    t.push_str("  per-node stats\n");
    for &item in memtwin_procfs::VM_ITEMS {
        let (name, val) = (item.name(), v.get(item));
        if name.starts_with("nr_") && !name.starts_with("nr_zone_") && !name.contains("threshold") && name != "nr_free_pages" {
            t.push_str(&format!("      {name:<12} {val}\n"));
        }
    }
    t.push_str(&format!("  pages free     {}\n", k.mm.nr_free()));
    if k.profile.watermark_boost {
        t.push_str(&format!("        boost    {}\n", k.mm.watermark_boost));
    }
    t.push_str(&format!("        min      {}\n        low      {}\n        high     {}\n", w.min, w.low, w.high));
    t.push_str(&format!("        spanned  {present}\n        present  {present}\n        managed  {}\n", k.mm.managed));
    t.push_str("        cma      0\n        protection: (0, 0, 0, 0)\n");
    for &item in memtwin_procfs::VM_ITEMS {
        let (name, val) = (item.name(), v.get(item));
        if name == "nr_free_pages" || name.starts_with("nr_zone_") {
            t.push_str(&format!("      {name:<12} {val}\n"));
        }
    }
    // zoneinfo_show_print: each CPU's list (count, high, batch) and the stat threshold.
    t.push_str("  pagesets\n");
    let pcp = &k.mm.pcp;
    let threshold = pcp.stat_threshold(k.mm.managed);
    for (cpu, &count) in pcp.count.iter().enumerate().filter(|_| pcp.enabled()) {
        t.push_str(&format!("    cpu: {cpu}\n              count: {count}\n              high:  {}\n              batch: {}\n", pcp.high, pcp.batch));
        t.push_str(&format!("  vm stats threshold: {threshold}\n"));
    }
    t.push_str(&format!("  node_unreclaimable:  0\n  start_pfn:           1\n"));
    t
}

fn task_rss(k: &Kernel, tid: TaskId) -> (u64, u64, u64, u64) {
    k.task_mem(tid)
}

/// /proc/PID/status (proc_pid_status, task_mem): the 6.1 layout, memory lines from the
/// model. The model keeps no high-water marks: VmPeak is VmSize (mappings are never
/// shrunk) and VmHWM is the current VmRSS.
fn pid_status(k: &Kernel, tid: TaskId) -> String {
    let t = &k.tasks[tid as usize];
    let snap = k.snapshot();
    let info = snap.tasks.iter().find(|x| x.pid == t.pid);
    let state = match info.map(|i| i.state.letter()) {
        Some('R') => "R (running)",
        Some('D') => "D (disk sleep)",
        Some('I') => "I (idle)",
        Some('Z') => "Z (zombie)",
        _ => "S (sleeping)",
    };
    let (anon, file, shmem, swap) = task_rss(k, tid);
    let rss = (anon + file + shmem) * 4;
    let ppid = if t.kthread { 2 } else { 1 };
    let vm = if t.kthread { 0 } else { t.vm_kb };
    let mut s = format!(
        "Name:\t{}\nUmask:\t0022\nState:\t{state}\nTgid:\t{pid}\nNgid:\t0\nPid:\t{pid}\nPPid:\t{ppid}\nTracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t64\nGroups:\t \nNStgid:\t{pid}\nNSpid:\t{pid}\nNSpgid:\t{pid}\nNSsid:\t{pid}\n",
        k.task_comm(tid),
        pid = t.pid
    );
    if !t.kthread {
        let kb = |n: &str, v: u64| format!("{n}:\t{v:>8} kB\n");
        s.push_str(&kb("VmPeak", vm));
        s.push_str(&kb("VmSize", vm));
        s.push_str(&kb("VmLck", 0));
        s.push_str(&kb("VmPin", 0));
        s.push_str(&kb("VmHWM", rss));
        s.push_str(&kb("VmRSS", rss));
        s.push_str(&format!("RssAnon:\t{:>8} kB\nRssFile:\t{:>8} kB\nRssShmem:\t{:>8} kB\n", anon * 4, file * 4, shmem * 4));
        s.push_str(&kb("VmData", vm.saturating_sub(132 + 772 + 1596)));
        s.push_str(&kb("VmStk", 132));
        s.push_str(&kb("VmExe", 772));
        s.push_str(&kb("VmLib", 1596));
        // mm_pgtables_bytes: the task's page-table pages; the idle system's lump (no
        // tables of its own in the model) a table per 512 pages.
        let tables = t.pgtables.nr_pages();
        s.push_str(&kb("VmPTE", if tables > 0 { tables * 4 } else { ((anon + file + shmem + swap) / 512 + 1) * 4 }));
        s.push_str(&kb("VmSwap", swap * 4));
        s.push_str(&format!("HugetlbPages:\t{:>8} kB\nCoreDumping:\t0\nTHP_enabled:\t1\n", 0));
    }
    s.push_str(&format!("Threads:\t1\nSigQ:\t0/7651\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\n"));
    s.push_str("CapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\nCapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\nNoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n");
    let cpus = k.machine.cpus;
    let mask = if cpus >= 64 { u64::MAX } else { (1u64 << cpus) - 1 };
    s.push_str(&format!(
        "Cpus_allowed:\t{mask:x}\nCpus_allowed_list:\t{}\nMems_allowed:\t00000000,00000001\nMems_allowed_list:\t0\nvoluntary_ctxt_switches:\t0\nnonvoluntary_ctxt_switches:\t0\n",
        if cpus > 1 { format!("0-{}", cpus - 1) } else { "0".to_string() }
    ));
    s
}

/// /proc/PID/stat (do_task_stat): one line, the era's field count (39 on 2.4; 44 from
/// 2.6.24's guest times; 52 from 3.5's argument/environment addresses). Times are USER_HZ
/// ticks; field 18 is the priority (prio - MAX_RT_PRIO: 20 + nice), 19 the niceness. The
/// model has no code or stack addresses: those fields are 0, as a reader without ptrace
/// access sees them.
fn pid_stat(k: &Kernel, tid: TaskId) -> String {
    let t = &k.tasks[tid as usize];
    let st = &k.sched.tasks[tid as usize];
    let snap = k.snapshot();
    let state = snap.tasks.iter().find(|x| x.pid == t.pid).map_or('S', |i| i.state.letter());
    let ticks = |ns: u64| ns / 10_000_000;
    let ppid = if t.kthread { if t.pid == 2 { 0 } else { 2 } } else { 1 };
    let (anon, file, shmem, _) = task_rss(k, tid);
    let vsize = if t.kthread { 0 } else { t.vm_kb * 1024 };
    let rss = if t.kthread { 0 } else { anon + file + shmem };
    // PF_KTHREAD | PF_NOFREEZE | PF_FORKNOEXEC...; a user task: PF_RANDOMIZE.
    let flags: u64 = if t.kthread { 0x0020_8040 } else { 0x0040_0000 };
    let nice = st.nice;
    let mut f: Vec<String> = vec![
        t.pid.to_string(),
        format!("({})", k.task_comm(tid)),
        state.to_string(),
        ppid.to_string(),
        if t.kthread { "0".into() } else { t.pid.to_string() },
        if t.kthread { "0".into() } else { t.pid.to_string() },
        "0".into(),
        "-1".into(),
        flags.to_string(),
        t.min_flt.to_string(),
        "0".into(),
        t.maj_flt.to_string(),
        "0".into(),
        ticks(st.utime).to_string(),
        ticks(st.stime).to_string(),
        ticks(t.child_utime).to_string(),
        ticks(t.child_stime).to_string(),
        (20 + nice).to_string(),
        nice.to_string(),
        "1".into(),
        "0".into(),
        ticks(t.start).to_string(),
        vsize.to_string(),
        rss.to_string(),
        "18446744073709551615".into(),
    ];
    // startcode endcode startstack kstkesp kstkeip signal blocked sigignore sigcatch wchan
    // nswap cnswap, then exit_signal and processor.
    f.extend(std::iter::repeat_n("0".to_string(), 12));
    f.push("17".into());
    f.push(st.cpu.to_string());
    if k.machine.kernel != KernelProfile::Linux24 {
        // rt_priority policy delayacct_blkio_ticks guest_time cguest_time.
        f.extend(["0".to_string(), "0".into(), ticks(st.blkio_delay).to_string(), "0".into(), "0".into()]);
    }
    if !matches!(k.machine.kernel, KernelProfile::Linux24 | KernelProfile::Linux2639) {
        // start_data end_data start_brk arg_start arg_end env_start env_end exit_code.
        f.extend(std::iter::repeat_n("0".to_string(), 8));
    }
    let mut s = f.join(" ");
    s.push('\n');
    s
}

/// /proc/PID/sched (proc_sched_show_task): the fair-scheduling entity's figures the model
/// keeps (se.sum_exec_runtime and se.vruntime in ms with 6 decimals, the switches, the
/// priority and load weight). CFS kernels only (2.6.23+).
fn pid_sched(k: &Kernel, tid: TaskId) -> String {
    let t = &k.tasks[tid as usize];
    let st = &k.sched.tasks[tid as usize];
    let ms = |ns: u64| format!("{}.{:06}", ns / 1_000_000, ns % 1_000_000);
    let head = format!("{} ({}, #threads: 1)", k.task_comm(tid), t.pid);
    let mut s = format!("{head}\n{}\n", "-".repeat(head.len()));
    let line = |name: &str, v: String| format!("{name:<45}:{v:>21}\n");
    s.push_str(&line("se.exec_start", ms(k.now)));
    s.push_str(&line("se.vruntime", ms(st.vruntime)));
    s.push_str(&line("se.sum_exec_runtime", ms(st.utime + st.stime)));
    s.push_str(&line("nr_switches", (st.nvcsw + st.nivcsw).to_string()));
    s.push_str(&line("nr_voluntary_switches", st.nvcsw.to_string()));
    s.push_str(&line("nr_involuntary_switches", st.nivcsw.to_string()));
    s.push_str(&line("se.load.weight", st.weight.to_string()));
    s.push_str(&line("policy", "0".into()));
    s.push_str(&line("prio", (120 + st.nice).to_string()));
    s
}

/// /proc/PID/io (proc_pid_io_accounting).
fn pid_io(k: &Kernel, tid: TaskId) -> String {
    let t = &k.tasks[tid as usize];
    format!(
        "rchar: {}\nwchar: {}\nsyscr: {}\nsyscw: {}\nread_bytes: {}\nwrite_bytes: {}\ncancelled_write_bytes: 0\n",
        t.rchar, t.wchar, t.syscr, t.syscw, t.read_bytes, t.write_bytes
    )
}

/// /proc/PID/smaps_rollup (show_smaps_rollup): the task's mappings summed. The model
/// charges each mapper a file's resident pages in full and keeps no per-PTE
/// referenced or dirty bits: Pss is Rss (one mapper), the anonymous pages are counted
/// private dirty, file pages shared clean.
fn smaps_rollup(k: &Kernel, tid: TaskId) -> String {
    // smaps_account: PSS splits each page among the tasks that map it (Kernel::task_pss);
    // file pages count as clean, anon and shmem pages as dirty.
    let p = k.task_pss(tid);
    let kb = |pages: u64| pages * 4;
    let fkb = |pages: f64| (pages * 4.0) as u64;
    let rss = kb(p.rss);
    let pss_anon = kb(p.anon);
    let rows: [(&str, u64); 22] = [
        ("Rss", rss),
        ("Pss", fkb(p.pss)),
        ("Pss_Dirty", pss_anon + fkb(p.pss_shmem)),
        ("Pss_Anon", pss_anon),
        ("Pss_File", fkb(p.pss_file)),
        ("Pss_Shmem", fkb(p.pss_shmem)),
        ("Shared_Clean", kb(p.shared_file)),
        ("Shared_Dirty", kb(p.shared_shmem)),
        ("Private_Clean", kb(p.private_file)),
        ("Private_Dirty", kb(p.anon + p.private_shmem)),
        ("Referenced", rss),
        ("Anonymous", pss_anon),
        ("KSM", 0),
        ("LazyFree", 0),
        ("AnonHugePages", 0),
        ("ShmemPmdMapped", 0),
        ("FilePmdMapped", 0),
        ("Shared_Hugetlb", 0),
        ("Private_Hugetlb", 0),
        ("Swap", kb(p.swap)),
        ("SwapPss", fkb(p.swap_pss)),
        ("Locked", 0),
    ];
    let mut s = format!("{:<73}[rollup]\n", "00400000-7ffc6fece000 ---p 00000000 00:00 0");
    for (n, v) in rows {
        s.push_str(&format!("{:<16}{v:>8} kB\n", format!("{n}:")));
    }
    s
}
