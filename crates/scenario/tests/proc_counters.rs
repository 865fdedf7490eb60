//! The paging counters as each era's kernel shows them: 2.4's /proc/stat page and swap
//! lines (it has no /proc/vmstat), /proc/vmstat in the era's names.

mod common;

use common::*;

fn outputs(r: &memtwin_scenario::RunResult) -> Vec<&str> {
    r.commands.iter().map(|c| &r.transcript[c.output_start..c.output_end]).collect()
}

#[test]
fn linux_2_4_shows_paging_in_proc_stat() {
    let r = run_on("dd if=/dev/zero of=/root/f bs=1M count=32 status=none\nsync\ncat /proc/stat\ncat /proc/vmstat\n", "optiplex-gx115", &[]);
    let o = outputs(&r);
    let stat = o[2];
    // kstat_read_proc: "cpu  user nice system idle", no iowait field.
    let cpu = stat.lines().next().unwrap();
    assert!(cpu.starts_with("cpu  ") && cpu.split_whitespace().count() == 5, "{stat}");
    let field = |name: &str| -> Vec<u64> {
        let l = stat.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("no {name} line: {stat}"));
        l.split_whitespace().skip(1).map(|v| v.parse().unwrap()).collect()
    };
    let page = field("page");
    assert!(page[1] >= 32 * 1024, "pgpgout in KiB after writing 32 MiB: {page:?}");
    assert_eq!(field("swap"), vec![0, 0]);
    assert!(stat.lines().any(|l| l.starts_with("disk_io: (")), "{stat}");
    assert!(!stat.contains("procs_running"), "2.4 has no procs_running: {stat}");
    let lines: Vec<&str> = stat.lines().map(|l| l.split(' ').next().unwrap()).collect();
    let pos = |n: &str| lines.iter().position(|l| *l == n).unwrap();
    assert!(pos("page") < pos("swap") && pos("swap") < pos("intr") && pos("intr") < pos("disk_io:") && pos("disk_io:") < pos("ctxt"));
    assert!(o[3].contains("No such file or directory"), "{}", o[3]);
}

#[test]
fn proc_vmstat_uses_the_eras_names() {
    let r = run_on("cat /proc/vmstat\n", "default", &["kernel=linux-2.6.39"]);
    let t = &r.transcript;
    assert!(t.contains("\nkswapd_steal ") && t.contains("\nallocstall ") && !t.contains("pgsteal_kswapd"), "{t}");
    let r = run_on("cat /proc/vmstat\n", "default", &["kernel=linux-5.4"]);
    assert!(r.transcript.contains("\nworkingset_refault ") && !r.transcript.contains("workingset_refault_file"));
}
