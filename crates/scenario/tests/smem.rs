//! smem 1.5's process, user and system views: its table layout (Debian's smem_1.5) and PSS
//! from the model's sharing: a shmem object mapped by two processes counts half in each
//! one's PSS and not at all in their USS.

mod common;

use common::*;
use memtwin_scenario::RunResult;

fn run(text: &str) -> RunResult {
    run_text("t.sh", text).unwrap_or_else(|e| panic!("{e}"))
}

fn outputs(r: &RunResult) -> Vec<&str> {
    r.commands.iter().map(|c| &r.transcript[c.output_start..c.output_end]).collect()
}

fn nums(line: &str) -> Vec<u64> {
    line.split_whitespace().filter_map(|w| w.parse().ok()).collect()
}

#[test]
fn process_view_layout_sort_and_totals() {
    let r = run("memhog --active 1 --every 1 64M &\nsleep 2\nsmem -t\nsmem -k -c 'pid rss'\nsmem -H -s rss -r\n");
    let o = outputs(&r);
    let lines: Vec<&str> = o[2].lines().collect();
    assert_eq!(lines[0], "  PID User     Command                         Swap      USS      PSS      RSS ");
    // Sorted by PSS, ascending: the 64 MiB memhog is last but the dashed line and totals.
    let memhog = lines.iter().find(|l| l.contains("memhog")).unwrap_or_else(|| panic!("{}", o[2]));
    let pss_of = |l: &str| nums(l)[nums(l).len() - 2];
    let body = &lines[1..lines.len() - 2];
    assert!(body.windows(2).all(|w| pss_of(w[0]) <= pss_of(w[1])), "sorted by PSS: {}", o[2]);
    let v = nums(memhog);
    let (uss, pss, rss) = (v[v.len() - 3], v[v.len() - 2], v[v.len() - 1]);
    assert!(rss >= 65536 && uss == pss && pss == rss, "private anonymous memory: USS = PSS = RSS: {memhog}");
    assert!(lines[lines.len() - 2].chars().all(|c| c == '-') && lines[lines.len() - 2].len() == lines[0].len());
    assert!(lines.iter().any(|l| l.contains(" /usr/bin/python3 /usr/bin/s ")), "smem sees itself as Python, cut to 27 columns");
    assert!(o[3].lines().any(|l| l.trim_end().ends_with('M')), "-k prints units: {}", o[3]);
    assert!(!o[4].starts_with("  PID"), "-H: no header");
    let rss: Vec<u64> = o[4].lines().map(|l| *nums(l).last().unwrap()).collect();
    assert!(rss.windows(2).all(|w| w[0] >= w[1]), "-s rss -r: largest first: {}", o[4]);
}

#[test]
fn a_file_mapped_by_two_processes_counts_half_in_each_pss() {
    // Two swapdemo programs map the same library file (MAP_SHARED) and each its own data.
    let r = run("dd if=/dev/zero of=library.bin bs=1M count=1024 2>/dev/null\nswapdemo --lib-gb 1 --data-gb 1 --chunk-gb 1 &\nswapdemo --lib-gb 1 --data-gb 1 --chunk-gb 1 &\nsleep 2\nsmem -P swapdemo -c 'pid uss pss rss'\n");
    let o = outputs(&r);
    let rows: Vec<Vec<u64>> = o[4].lines().skip(1).map(nums).filter(|v| v.len() == 4).collect();
    assert!(rows.len() >= 2, "{}", r.transcript);
    for v in &rows {
        let (uss, pss, rss) = (v[1], v[2], v[3]);
        if rss <= memtwin_kernel::exec::IMAGE_ANON_PAGES * 4 {
            continue; // smem itself, its image only (its -P pattern matches its own command line)
        }
        // Private data (USS) in full, the library pages both map at half.
        let shared = rss - uss;
        assert!(shared > 0, "the library is mapped by both: {v:?}");
        assert!((pss - uss).abs_diff(shared / 2) <= 4, "shared pages count half: {v:?}");
    }
}

#[test]
fn smaps_rollup_splits_shared_pages_as_smem_does() {
    let r = run("dd if=/dev/zero of=library.bin bs=1M count=1024 2>/dev/null\nswapdemo --lib-gb 1 --data-gb 1 --chunk-gb 1 &\nA=$!\nswapdemo --lib-gb 1 --data-gb 1 --chunk-gb 1 &\nsleep 2\ngrep -E '^(Rss|Pss|Pss_File|Shared_Clean|Private_Dirty):' /proc/$A/smaps_rollup\nsmem -H -c 'pid pss rss' -P swapdemo\necho $A\n");
    let o = outputs(&r);
    let val = |name: &str| -> u64 { o[5].lines().find(|l| l.starts_with(&format!("{name}:"))).and_then(|l| nums(l).first().copied()).unwrap_or_else(|| panic!("{name}: {}", o[5])) };
    let pid: u64 = o[7].trim().parse().unwrap();
    let row = o[6].lines().map(nums).find(|v| v.first() == Some(&pid)).unwrap_or_else(|| panic!("{}", o[6]));
    // smem reads smaps a few simulated milliseconds later, while both demos run under
    // memory pressure: PSS may have moved since, but no more than RSS did.
    let (dpss, drss) = (val("Pss").abs_diff(row[1]), val("Rss").abs_diff(row[2]));
    assert!(dpss <= drss && drss <= 1024, "smem reads smaps: {} / {}", o[5], o[6]);
    assert!(val("Shared_Clean") > 0 && val("Pss_File") * 2 <= val("Shared_Clean") + 8, "{}", o[5]);
    assert!(val("Private_Dirty") > 0, "{}", o[5]);
}

#[test]
fn user_and_system_views() {
    let r = run("smem -u\nsmem -w -t\n");
    let o = outputs(&r);
    assert_eq!(o[0].lines().next().unwrap(), "User     Count     Swap      USS      PSS      RSS ");
    let sys: Vec<&str> = o[1].lines().collect();
    assert_eq!(sys[0], "Area                           Used      Cache   Noncache ");
    assert!(sys[1].starts_with("firmware/hardware"));
    assert!(sys[5].starts_with("free memory"));
    let used: u64 = sys[1..6].iter().map(|l| nums(l)[0]).sum();
    let total = nums(sys[7])[0];
    assert_eq!(used, total, "totals sum the areas");
}

#[test]
fn bad_options_are_refused() {
    for s in ["smem -m\n", "smem -c 'pid nosuch'\n", "smem -s nosuch\n", "smem --pie name\n", "smem -P '('\n"] {
        assert!(run_text("t.sh", s).is_err(), "{s}");
    }
}
