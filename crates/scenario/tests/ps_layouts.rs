//! procps-ng 4.0.2's `ps -l`, `ps -f` and `ps -lf` layouts and its column placement (an
//! overflowing column pushes the next only as far as it must). Headers are those of the
//! real ps 4.0.2 with pid_max 32768 (5-digit PIDs), recorded on a Debian 12 host.

mod common;

use common::*;
use memtwin_scenario::RunResult;

fn run(text: &str) -> RunResult {
    run_text("t.sh", text).unwrap_or_else(|e| panic!("{e}"))
}

fn outputs(r: &RunResult) -> Vec<&str> {
    r.commands.iter().map(|c| &r.transcript[c.output_start..c.output_end]).collect()
}

#[test]
fn long_and_full_layouts_print_procps_headers_and_rows() {
    let r = run("sleep 30 &\nps -el | grep -E 'CMD|sleep|kswapd'\nps -ef | grep -E 'CMD|sleep 30'\nps -elf | grep -E 'CMD|sleep'\ncat /proc/$!/wchan; echo\n");
    let o = outputs(&r);
    let l: Vec<&str> = o[1].lines().collect();
    assert_eq!(l[0], "F S   UID   PID  PPID  C PRI  NI ADDR SZ WCHAN  TTY          TIME CMD");
    let kswapd = l.iter().find(|x| x.ends_with("kswapd0")).expect("kswapd0 row");
    assert!(kswapd.starts_with("1 S     0 "), "a kernel thread: F=1, sleeping: {kswapd}");
    assert!(kswapd.contains(" kswapd ?"), "it sleeps in kswapd(): {kswapd}");
    let sleep = l.iter().find(|x| x.ends_with(" sleep")).expect("sleep row");
    assert!(sleep.starts_with("0 S     0 "), "{sleep}");
    assert!(sleep.contains("  80   0 - "), "PRI 80, NI 0, ADDR -: {sleep}");
    assert!(sleep.contains(" hrtime "), "nanosleep, cut to 6 columns: {sleep}");
    let f: Vec<&str> = o[2].lines().collect();
    assert_eq!(f[0], "UID        PID  PPID  C STIME TTY          TIME CMD");
    assert!(f[1].starts_with("root "), "{}", f[1]);
    assert!(f[1].contains(" 10:00 ") && f[1].ends_with("sleep 30"), "{}", f[1]);
    let lf: Vec<&str> = o[3].lines().collect();
    assert_eq!(lf[0], "F S UID        PID  PPID  C PRI  NI ADDR SZ WCHAN  STIME TTY          TIME CMD");
    assert_eq!(o[4], "hrtimer_nanosleep", "no newline, as the kernel prints it");
}

#[test]
fn an_overflowing_column_pushes_only_the_next_one() {
    // The idle system's RSS (over 99999 kB) is wider than RSS's 5 columns: TTY starts one
    // column later, and STAT is back at its place (procps prints "?       Ss").
    let r = run("ps aux | head -2\n");
    let o = outputs(&r);
    let row = o[0].lines().nth(1).unwrap();
    let hdr = o[0].lines().next().unwrap();
    assert_eq!(hdr, "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND".replace("USER         PID", "USER       PID"));
    let stat_col = hdr.find("STAT").unwrap();
    assert_eq!(&row[stat_col..stat_col + 2], "Ss", "{row}");
}

#[test]
fn extra_full_layout_adds_size_rss_and_the_cpu() {
    // Headers of procps-ng 4.0.2 on a 6.18 host (pid_max 32768):
    //   ps -F:  UID        PID  PPID  C    SZ   RSS PSR STIME TTY          TIME CMD
    //   ps -lF: F S UID        PID  PPID  C PRI  NI ADDR SZ WCHAN    RSS PSR STIME TTY          TIME CMD
    let r = run("dd if=/dev/zero of=/dev/null bs=64M count=1000 &\nsleep 0.1\nps -F | grep -E 'CMD|dd '\nps -lF | grep -E 'CMD|dd '\nps -eo pid,psr,comm | grep -E 'PSR|dd'\n");
    let o = outputs(&r);
    let f: Vec<&str> = o[2].lines().collect();
    assert_eq!(f[0], "UID        PID  PPID  C    SZ   RSS PSR STIME TTY          TIME CMD");
    // dd's 64 MiB buffer: RSS over 65536 kB, SZ its virtual size in pages.
    let row = f[1];
    let cols: Vec<&str> = row.split_whitespace().collect();
    let (sz, rss, psr): (u64, u64, u32) = (cols[4].parse().unwrap(), cols[5].parse().unwrap(), cols[6].parse().unwrap());
    assert!(rss >= 65536 && sz * 4 >= rss, "{row}");
    assert!(psr < 8, "{row}");
    // Right-aligned under its header.
    let end = f[0].find("PSR").unwrap() + 3;
    assert_eq!(row[..end].trim_end().len(), end, "{row}");
    let lf: Vec<&str> = o[3].lines().collect();
    assert_eq!(lf[0], "F S UID        PID  PPID  C PRI  NI ADDR SZ WCHAN    RSS PSR STIME TTY          TIME CMD");
    // -o psr agrees with /proc/PID/stat's processor field.
    let eo: Vec<&str> = o[4].lines().collect();
    assert_eq!(eo[0], "  PID PSR COMMAND");
    assert_eq!(eo[1].split_whitespace().nth(1), Some(cols[6]), "{}", o[4]);
}
