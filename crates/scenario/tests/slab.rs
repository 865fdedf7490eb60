//! Slab caches as the tools show them: /proc/slabinfo per era, `slabtop -o`, `vmstat -m`,
//! and drop_caches 2 / reclaim shrinking the reclaimable caches.

mod common;
use common::run_on;

fn meminfo_kb(t: &str, field: &str) -> Vec<u64> {
    t.lines()
        .filter_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .map(|v| v.trim().trim_end_matches("kB").trim().parse().unwrap())
        .collect()
}

#[test]
fn proc_slabinfo_has_each_eras_layout_and_matches_meminfo() {
    let r = run_on("cat /proc/slabinfo\ncat /proc/meminfo\n", "default", &["kernel=linux-6.x"]);
    let t = &r.transcript;
    assert!(t.contains("\nslabinfo - version: 2.1\n# name            <active_objs>"), "{t}");
    let dentry = t.lines().find(|l| l.starts_with("dentry ")).expect("a dentry cache");
    assert!(dentry.contains("  192   21    1 : tunables    0    0    0 : slabdata"), "{dentry}");
    // Slab in /proc/meminfo is the sum of every cache's slabs.
    let pages: u64 = t
        .lines()
        .filter(|l| l.contains(": slabdata") && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f[5].parse::<u64>().unwrap() * f[14].parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(meminfo_kb(t, "Slab")[0], pages * 4);

    // 2.6.39's SLAB prints its per-cpu tunables.
    let r = run_on("cat /proc/slabinfo\n", "default", &["kernel=linux-2.6.39"]);
    let l = r.transcript.lines().find(|l| l.starts_with("dentry ")).unwrap().to_string();
    assert!(l.contains("  192   20    1 : tunables  120   60    8 : slabdata"), "{l}");
    // 2.4 prints version 1.1.
    let r = run_on("cat /proc/slabinfo\n", "default", &["kernel=linux-2.4"]);
    assert!(r.transcript.contains("\nslabinfo - version: 1.1"), "{}", r.transcript);
}

#[test]
fn slabtop_and_vmstat_m_read_the_caches() {
    let r = run_on("slabtop -o\nvmstat -m\n", "default", &[]);
    let t = &r.transcript;
    assert!(t.contains("\n Active / Total Objects (% used)    : "), "{t}");
    assert!(t.contains("\n  OBJS ACTIVE  USE OBJ SIZE  SLABS OBJ/SLAB CACHE SIZE NAME                   \n"));
    assert!(t.contains("\nCache                       Num  Total   Size  Pages\n"));
    // The interactive screen is refused before the run, naming the line.
    let e = memtwin_scenario::run(&memtwin_scenario::RunOptions {
        script_path: Some("t.sh".into()),
        script_text: Some("slabtop\n".into()),
        machine: "default".into(),
        ..Default::default()
    })
    .err()
    .expect("slabtop without -o is refused");
    assert!(e.to_string().contains("t.sh:1") && e.to_string().contains("slabtop -o"), "{e}");
}

#[test]
fn drop_caches_2_frees_reclaimable_slab_and_free_shows_it() {
    let r = run_on(
        "grep -E 'SReclaimable|SUnreclaim' /proc/meminfo\necho 2 > /proc/sys/vm/drop_caches\ngrep -E 'SReclaimable|SUnreclaim' /proc/meminfo\n",
        "default",
        &["kernel=linux-6.x"],
    );
    let t = &r.transcript;
    let (rc, un) = (meminfo_kb(t, "SReclaimable"), meminfo_kb(t, "SUnreclaim"));
    assert_eq!(rc.len(), 2, "{t}");
    // The unused half of the reclaimable slab goes; unreclaimable slab stays.
    assert_eq!(rc[1], rc[0] - rc[0] / 8 * 4, "{t}");
    assert_eq!(un[1], un[0]);
}

/// The `sys` time of `time echo 2 > /proc/sys/vm/drop_caches`, seconds, and the
/// slabs_scanned the write added.
fn drop_caches_cost(sets: &[&str]) -> (f64, u64) {
    let r = run_on(
        "grep slabs_scanned /proc/vmstat\ntime echo 2 > /proc/sys/vm/drop_caches\ngrep slabs_scanned /proc/vmstat\n",
        "default",
        sets,
    );
    let t = &r.transcript;
    let scanned: Vec<u64> =
        t.lines().filter_map(|l| l.strip_prefix("slabs_scanned ")).map(|v| v.trim().parse().unwrap()).collect();
    let sys = t.lines().find_map(|l| l.strip_prefix("sys\t")).unwrap_or_else(|| panic!("no sys line: {t}"));
    let (m, s) = sys.trim_end_matches('s').split_once('m').unwrap();
    (m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap(), scanned[1] - scanned[0])
}

#[test]
fn drop_caches_2_costs_the_writer_its_shrinkers_walk() {
    // drop_slab walks every object on the shrinkers' lists (slabs_scanned) in the writer's
    // context: a visit is at least one memory access to a cold object, and a real 6.18 took
    // 0.12 s of system time for 300,000 dentries (docs/vfs.md), 400 ns each. The pages it
    // frees cost far less than the walk (about one page per 20 dentries).
    for sets in [&["kernel=linux-6.x"][..], &["kernel=linux-2.6.39", "ram=8G"][..]] {
        let (sys, scanned) = drop_caches_cost(sets);
        assert!(scanned > 10_000, "{sets:?}: {scanned} objects scanned");
        let per_obj_ns = sys * 1e9 / scanned as f64;
        assert!((50.0..2_000.0).contains(&per_obj_ns), "{sets:?}: {sys} s for {scanned} objects: {per_obj_ns:.0} ns each");
    }
}

#[test]
fn reclaim_shrinks_the_dentry_cache_with_vfs_cache_pressure() {
    // Memory pressure (an allocation larger than RAM, with swap): global reclaim runs the
    // shrinkers; with vfs_cache_pressure 0 they find nothing to free. (The dentry cache's
    // objects, not SReclaimable: the swap cache's tree nodes, reclaimable slab too, grow
    // with what is swapped out.)
    let dentries = |t: &str| -> u64 {
        let line = t.lines().find(|l| l.starts_with("dentry ")).unwrap_or_else(|| panic!("no dentry line: {t}"));
        line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("active objects")
    };
    let script = "memhog -r2 700M\ngrep -E '^dentry ' /proc/slabinfo\n";
    let before = run_on("grep -E '^dentry ' /proc/slabinfo\n", "seed-000", &["ram=512M"]);
    let base = dentries(&before.transcript);
    let pressed = run_on(script, "seed-000", &["ram=512M"]);
    let none = run_on(script, "seed-000", &["ram=512M", "vm.vfs_cache_pressure=0"]);
    let (p, n) = (dentries(&pressed.transcript), dentries(&none.transcript));
    assert!(p < base, "reclaim freed dentries: {base} -> {p}");
    assert_eq!(n, base, "vfs_cache_pressure=0: dentries kept");
}
