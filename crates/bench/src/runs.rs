//! The benchmarks themselves, run in a child process each (see main.rs).

use crate::figures::Figures;
use crate::host::{status_bytes, thread_cpu_s};
use memtwin_scenario::{RunOptions, RunResult};
use std::time::Instant;

const PAGE: u64 = 4096;
const MIB: u64 = 1 << 20;

/// Last value minus first of a /proc/vmstat counter ("pgpgin") in the run's series.
fn vm_delta(r: &RunResult, name: &str) -> Result<u64, String> {
    let col = format!("vm.{name}");
    let (_, v) = r.series.columns.iter().find(|(n, _)| *n == col).ok_or_else(|| format!("the run's series has no column {col}"))?;
    Ok(match (v.first(), v.last()) {
        (Some(a), Some(b)) => b.saturating_sub(*a),
        _ => 0,
    })
}

/// Largest sample of a /proc/meminfo field ("Buffers"), in bytes.
fn mi_max_bytes(r: &RunResult, name: &str) -> Result<u64, String> {
    let col = format!("mi.{name}");
    let (_, v) = r.series.columns.iter().find(|(n, _)| *n == col).ok_or_else(|| format!("the run's series has no column {col}"))?;
    Ok(v.iter().copied().max().unwrap_or(0) * 1024)
}

/// The machine the sets describe, built the way the runner builds it, to know its RAM.
fn machine_ram_pages(sets: &[String]) -> Result<u64, String> {
    let mut m = memtwin_machine::preset("default").map_err(|e| e.to_string())?;
    for s in sets {
        memtwin_machine::apply_set(&mut m, s).map_err(|e| e.to_string())?;
    }
    Ok(m.ram_bytes / PAGE)
}

/// dd's summary lines ("... bytes (...) copied, 1.2 s, 400 MB/s"), in order.
fn dd_lines(r: &RunResult) -> Vec<String> {
    r.transcript.lines().filter(|l| l.contains(" copied, ")).map(|l| l.trim().to_string()).collect()
}

/// One timed scenario run on machine "default" with `sets`; the figures every page-cache
/// benchmark reports. `read_pages` and `written_pages` are what the script's dd commands
/// read and write through the page cache (known from the script: these counts are not in
/// /proc/vmstat).
fn timed_run(script: &str, sets: &[String], read_pages: u64, written_pages: u64) -> Result<(Figures, RunResult), String> {
    let ram_pages = machine_ram_pages(sets)?;
    let opts = RunOptions { script_text: Some(script.to_string()), machine: "default".into(), sets: sets.to_vec(), seed: 0, ..Default::default() };
    let rss_before = status_bytes("VmRSS");
    let c0 = thread_cpu_s();
    let t0 = Instant::now();
    let r = memtwin_scenario::run(&opts).map_err(|e| e.message)?;
    let wall = t0.elapsed().as_secs_f64();
    let cpu = thread_cpu_s() - c0;
    let hwm = status_bytes("VmHWM");

    let pgpgin_pages = vm_delta(&r, "pgpgin")? * 1024 / PAGE;
    let pgpgout_pages = vm_delta(&r, "pgpgout")? * 1024 / PAGE;
    let pgalloc = vm_delta(&r, "pgalloc_normal")?;
    let pgfree = vm_delta(&r, "pgfree")?;
    // Every page dd read that did not come from the disk came from the page cache.
    let cache_hits = read_pages.saturating_sub(pgpgin_pages);
    let page_events = pgalloc + pgfree + pgpgin_pages + pgpgout_pages + cache_hits;
    let workload = read_pages + written_pages;
    let pgscan = vm_delta(&r, "pgscan_kswapd")? + vm_delta(&r, "pgscan_direct")?;
    let pgsteal = vm_delta(&r, "pgsteal_kswapd")? + vm_delta(&r, "pgsteal_direct")?;

    let mut f = Figures::default();
    f.str("machine", format!("default + {}", sets.join(" ")));
    f.str("script", script.trim().replace('\n', "; "));
    f.int("exit_status", r.exit_status as u64);
    f.float("wall_s", wall);
    f.float("cpu_s", cpu);
    f.float("sim_s", r.sim_seconds);
    f.float("sim_speedup", r.sim_seconds / wall);
    f.int("ram_pages", ram_pages);
    f.int("workload_pages", workload);
    f.float("workload_pages_per_s", workload as f64 / wall);
    f.int("pgpgin_pages", pgpgin_pages);
    f.int("pgpgout_pages", pgpgout_pages);
    f.int("pgalloc", pgalloc);
    f.int("pgfree", pgfree);
    f.int("cache_hit_pages", cache_hits);
    f.int("page_events", page_events);
    f.float("page_events_per_s", page_events as f64 / wall);
    f.float("page_events_per_cpu_s", page_events as f64 / cpu);
    f.int("pgscan", pgscan);
    f.int("pgsteal", pgsteal);
    f.float("pgscan_per_s", pgscan as f64 / wall);
    f.float("pgsteal_per_s", pgsteal as f64 / wall);
    f.int("pgactivate", vm_delta(&r, "pgactivate")?);
    f.int("pgdeactivate", vm_delta(&r, "pgdeactivate")?);
    f.int("pgrefill", vm_delta(&r, "pgrefill")?);
    f.int("allocstall", vm_delta(&r, "allocstall_normal")?);
    f.int("rss_before_bytes", rss_before);
    f.int("peak_rss_bytes", hwm);
    f.float("host_bytes_per_page", hwm as f64 / ram_pages as f64);
    f.float("host_bytes_per_page_run", hwm.saturating_sub(rss_before) as f64 / ram_pages as f64);
    f.int("core_table_bytes_per_page", memtwin_kernel::mm::page::Pages::HOST_BYTES_PER_PAGE as u64);
    for (i, l) in dd_lines(&r).iter().enumerate() {
        f.str(&format!("dd_{}", i + 1), l.clone());
    }
    if r.exit_status != 0 {
        return Err(format!("the scenario exited with status {}; transcript:\n{}", r.exit_status, r.transcript));
    }
    Ok((f, r))
}

/// The series is sampled once per simulated second and its last row is the last whole
/// second the run reached: a script's final `sleep 1` makes that row come after the last
/// command, so that last-minus-first counts everything the commands did.
const FINAL_SAMPLE: &str = "sleep 1\n";

/// Write a file, drop it from the cache, read it twice.
fn write_drop_read_twice(file_mib: u64) -> String {
    format!(
        "dd if=/dev/zero of=big bs=1M count={file_mib}\n\
         sync\n\
         echo 3 > /proc/sys/vm/drop_caches\n\
         dd if=big of=/dev/null bs=1M\n\
         dd if=big of=/dev/null bs=1M\n\
         {FINAL_SAMPLE}"
    )
}

/// Benchmark 1: a 64 GiB, 16-CPU machine with an NVMe disk: a 48 GiB file written, dropped from the
/// cache and read twice (the second read is served from the page cache).
pub fn bigcache(scale: u64) -> Result<Figures, String> {
    let ram_mib = 64 * 1024 / scale;
    let file_mib = 48 * 1024 / scale;
    let sets: Vec<String> = vec![format!("ram={ram_mib}M"), "cpus=16".into(), "disk.sda.preset=nvme".into(), "disk.sda.size=256G".into()];
    let pages = file_mib * MIB / PAGE;
    timed_run(&write_drop_read_twice(file_mib), &sets, 2 * pages, pages).map(|(f, _)| f)
}

/// Benchmark 3: the default 8 GiB machine (SATA SSD) streaming a 32 GiB file: written, dropped, read
/// twice; reclaim (kswapd) runs all along.
pub fn reclaim(scale: u64) -> Result<Figures, String> {
    let ram_mib = 8 * 1024 / scale;
    let file_mib = 32 * 1024 / scale;
    let sets: Vec<String> = vec![format!("ram={ram_mib}M"), "disk.sda.size=256G".into()];
    let pages = file_mib * MIB / PAGE;
    timed_run(&write_drop_read_twice(file_mib), &sets, 2 * pages, pages).map(|(f, _)| f)
}

/// Benchmark 2: the embedded default scenario, 1 untimed warm-up and 5 timed runs.
pub fn seed000() -> Result<Figures, String> {
    let opts = RunOptions::default();
    let rss_before = status_bytes("VmRSS");
    let warm = memtwin_scenario::run(&opts).map_err(|e| e.message)?;
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    for _ in 0..5 {
        let c0 = thread_cpu_s();
        let t0 = Instant::now();
        let r = memtwin_scenario::run(&opts).map_err(|e| e.message)?;
        walls.push(t0.elapsed().as_secs_f64());
        cpus.push(thread_cpu_s() - c0);
        std::hint::black_box(&r);
    }
    cpus.sort_by(|a, b| a.partial_cmp(b).unwrap());
    walls.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mut f = Figures::default();
    f.str("script", memtwin_scenario::DEFAULT_SCENARIO_NAME);
    f.int("exit_status", warm.exit_status as u64);
    f.int("runs", walls.len() as u64);
    f.float("wall_median_s", walls[walls.len() / 2]);
    f.float("wall_min_s", walls[0]);
    f.float("wall_max_s", walls[walls.len() - 1]);
    f.float("cpu_median_s", cpus[cpus.len() / 2]);
    f.float("sim_s", warm.sim_seconds);
    f.float("sim_speedup", warm.sim_seconds / walls[walls.len() / 2]);
    f.int("rss_before_bytes", rss_before);
    f.int("peak_rss_bytes", status_bytes("VmHWM"));
    Ok(f)
}

/// Benchmark: every seed-003 scenario as it ships (16 GiB machine, 17 GiB of mappings),
/// one run each: wall and CPU seconds against the simulated seconds they cover.
pub fn seed003() -> Result<Figures, String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let mut f = Figures::default();
    for case in ["swappiness-60", "swappiness-1", "swappiness-0", "swapoff", "zram-zero", "zram-random"] {
        let opts = RunOptions { script_path: Some(format!("{dir}/seed-003-{case}.sh")), ..Default::default() };
        let c0 = thread_cpu_s();
        let t0 = Instant::now();
        let r = memtwin_scenario::run(&opts).map_err(|e| e.message)?;
        let wall = t0.elapsed().as_secs_f64();
        let cpu = thread_cpu_s() - c0;
        f.float(&format!("{case}.wall_s"), wall);
        f.float(&format!("{case}.cpu_s"), cpu);
        f.float(&format!("{case}.sim_s"), r.sim_seconds);
        // Simulated seconds per second of wall and of CPU time (the target is >= 100).
        f.float(&format!("{case}.sim_speedup"), r.sim_seconds / wall);
        f.float(&format!("{case}.sim_speedup_cpu"), r.sim_seconds / cpu);
    }
    f.int("peak_rss_bytes", status_bytes("VmHWM"));
    Ok(f)
}

/// The memtwin half of the LRU comparison: the default 8 GiB machine reads the first
/// `scan_mib` of its raw disk twice (`dd if=/dev/sda`), which fills the buffer cache with no
/// write phase before it. The trace is that page sequence: pages 0..N, then 0..N again.
pub fn lru_memtwin(scale: u64, trace_out: Option<&str>) -> Result<Figures, String> {
    let ram_mib = 8 * 1024 / scale;
    let scan_mib = 16 * 1024 / scale;
    let n = scan_mib * MIB / PAGE;
    let script = format!("dd if=/dev/sda of=/dev/null bs=1M count={scan_mib}\ndd if=/dev/sda of=/dev/null bs=1M count={scan_mib}\n{FINAL_SAMPLE}");
    let sets: Vec<String> = vec![format!("ram={ram_mib}M")];
    let opts = RunOptions { script_text: Some(script.clone()), machine: "default".into(), sets: sets.clone(), seed: 0, ..Default::default() };
    let c0 = thread_cpu_s();
    let t0 = Instant::now();
    let r = memtwin_scenario::run(&opts).map_err(|e| e.message)?;
    let wall = t0.elapsed().as_secs_f64();
    let cpu = thread_cpu_s() - c0;
    if r.exit_status != 0 {
        return Err(format!("the scenario exited with status {}; transcript:\n{}", r.exit_status, r.transcript));
    }
    let requests = 2 * n;
    let misses = (vm_delta(&r, "pgpgin")? * 1024 / PAGE).min(requests);
    let cache_pages = mi_max_bytes(&r, "Buffers")? / PAGE;
    let mut f = Figures::default();
    f.str("machine", format!("default + {}", sets.join(" ")));
    f.str("script", script.trim().replace('\n', "; "));
    f.int("requests", requests);
    f.int("cache_pages", cache_pages);
    f.float("wall_s", wall);
    f.float("cpu_s", cpu);
    f.float("sim_s", r.sim_seconds);
    f.int("misses", misses);
    f.float("miss_ratio", misses as f64 / requests as f64);
    f.float("requests_per_s", requests as f64 / wall);
    f.float("requests_per_cpu_s", requests as f64 / cpu);
    if let Some(path) = trace_out {
        crate::lru::write_oracle_general(path, n).map_err(|e| format!("cannot write the trace {path}: {e}"))?;
    }
    Ok(f)
}

/// Boot a 1 TiB machine (machine `default` + `ram=1T`) and nothing else: wall and CPU
/// time of `Kernel::boot`, and the host memory it took (VmRSS after minus before). Twice:
/// bare (`boot_anon=0 boot_file=0`: the kernel's own boot), then as the preset ships, whose
/// idle processes' memory and page cache (proportional to RAM) are simulated page by page.
pub fn boot(scale: u64) -> Result<Figures, String> {
    let ram_mib = (1u64 << 20) / scale;
    let mut f = Figures::default();
    f.int("ram_bytes", ram_mib * MIB);
    f.int("ram_pages", ram_mib * MIB / PAGE);
    for (name, extra) in [("bare", &["boot_anon=0", "boot_file=0"][..]), ("preset", &[][..])] {
        let mut m = memtwin_machine::preset("default").map_err(|e| e.to_string())?;
        memtwin_machine::apply_set(&mut m, &format!("ram={ram_mib}M")).map_err(|e| e.to_string())?;
        for s in extra {
            memtwin_machine::apply_set(&mut m, s).map_err(|e| e.to_string())?;
        }
        let rss_before = status_bytes("VmRSS");
        let c0 = thread_cpu_s();
        let t0 = Instant::now();
        let k = memtwin_kernel::Kernel::boot(m, 0).map_err(|e| e.to_string())?;
        let wall = t0.elapsed().as_secs_f64();
        let cpu = thread_cpu_s() - c0;
        let rss_after = status_bytes("VmRSS");
        let mi = k.meminfo();
        f.float(&format!("{name}.wall_s"), wall);
        f.float(&format!("{name}.cpu_s"), cpu);
        f.int(&format!("{name}.mem_free_kb"), mi.mem_free);
        f.int(&format!("{name}.rss_growth_bytes"), rss_after.saturating_sub(rss_before));
        f.float(&format!("{name}.rss_growth_bytes_per_page"), rss_after.saturating_sub(rss_before) as f64 / (ram_mib * MIB / PAGE) as f64);
        drop(k);
    }
    // Each shipped machine preset as the scenarios boot it (its boot memory: slab, the
    // idle system's processes and page cache), the median of 7 boots after one untimed.
    for name in ["default", "seed-000", "seed-002", "seed-003", "optiplex-gx115", "ml110-g6"] {
        let m = memtwin_machine::preset(name).map_err(|e| e.to_string())?;
        drop(memtwin_kernel::Kernel::boot(m.clone(), 0).map_err(|e| e.to_string())?);
        let mut cpus = Vec::new();
        for _ in 0..7 {
            let c0 = thread_cpu_s();
            let k = memtwin_kernel::Kernel::boot(m.clone(), 0).map_err(|e| e.to_string())?;
            cpus.push(thread_cpu_s() - c0);
            drop(k);
        }
        cpus.sort_by(|a, b| a.partial_cmp(b).unwrap());
        f.float(&format!("machine.{name}.cpu_median_s"), cpus[cpus.len() / 2]);
    }
    Ok(f)
}

/// Benchmark: every seed-000, seed-001 and seed-002 scenario as it ships (each on the
/// machine its script names), one untimed warm-up and `runs` timed runs each: simulated
/// seconds per second of wall time (the target is >= 1000) and per CPU second.
pub fn seeds(runs: usize) -> Result<Figures, String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {dir}: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".sh") && ["seed-000-", "seed-001-", "seed-002-"].iter().any(|p| n.starts_with(p)))
        .collect();
    names.sort();
    let mut f = Figures::default();
    let mut worst = f64::INFINITY;
    for name in &names {
        let opts = RunOptions { script_path: Some(format!("{dir}/{name}")), ..Default::default() };
        let warm = memtwin_scenario::run(&opts).map_err(|e| e.message)?;
        let mut walls = Vec::new();
        let mut cpus = Vec::new();
        for _ in 0..runs.max(1) {
            let c0 = thread_cpu_s();
            let t0 = Instant::now();
            let r = memtwin_scenario::run(&opts).map_err(|e| e.message)?;
            walls.push(t0.elapsed().as_secs_f64());
            cpus.push(thread_cpu_s() - c0);
            std::hint::black_box(&r);
        }
        walls.sort_by(|a, b| a.partial_cmp(b).unwrap());
        cpus.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let case = name.trim_end_matches(".sh");
        let (wall, cpu) = (walls[walls.len() / 2], cpus[cpus.len() / 2]);
        f.float(&format!("{case}.sim_s"), warm.sim_seconds);
        f.float(&format!("{case}.wall_min_s"), walls[0]);
        f.float(&format!("{case}.wall_median_s"), wall);
        f.float(&format!("{case}.cpu_median_s"), cpu);
        // Simulated seconds per wall second (median run) and per CPU second.
        f.float(&format!("{case}.sim_speedup"), warm.sim_seconds / wall);
        f.float(&format!("{case}.sim_speedup_cpu"), warm.sim_seconds / cpu);
        worst = worst.min(warm.sim_seconds / wall);
    }
    f.float("worst_sim_speedup", worst);
    f.float("worst_over_target_1000x", worst / 1000.0);
    f.int("peak_rss_bytes", status_bytes("VmHWM"));
    Ok(f)
}

/// Benchmark: a 1 TiB machine (`default` + `ram=1T`, NVMe disk of 2 TiB) writes a 512 GiB
/// file and reads it back (the read is served from the page cache: 512 GiB fits): 1 TiB
/// streamed through the page cache. The target is under 60 s of wall time. Not in the
/// default set: it commits about 3 GB of host memory (16 B per page touched plus the page
/// index).
pub fn stream1t(scale: u64) -> Result<Figures, String> {
    let ram_mib = (1u64 << 20) / scale;
    let file_mib = (512 * 1024) / scale;
    let sets: Vec<String> = vec![format!("ram={ram_mib}M"), "cpus=16".into(), "disk.sda.preset=nvme".into(), format!("disk.sda.size={}M", 2 * ram_mib)];
    let script = format!("dd if=/dev/zero of=big bs=1M count={file_mib}\ndd if=big of=/dev/null bs=1M\n{FINAL_SAMPLE}");
    let pages = file_mib * MIB / PAGE;
    let (mut f, _) = timed_run(&script, &sets, pages, pages)?;
    let wall = f.items.iter().find(|(k, _)| k == "wall_s").and_then(|(_, v)| v.as_f64()).unwrap_or(0.0);
    f.float("target_wall_s", 60.0);
    f.float("wall_over_target", wall / 60.0);
    Ok(f)
}
