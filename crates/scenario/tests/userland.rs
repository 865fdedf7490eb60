//! A machine's userland decides what free, vmstat and ps print: procps-ng on Debian 12 and
//! Ubuntu 20.04, procps 3.2.8 on CentOS 6 (seed 000's article), procps 2.0 on the Linux 2.4
//! distributions. By default it follows the kernel profile; `userland = "..."` (or
//! `--set userland=...`) states it.

mod common;
use common::run_on;

const NG_HEADER: &str = "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n";
// The header of seed 000's article (CentOS 6, procps 3.2.8).
const P3_HEADER: &str = "procs -----------memory---------- ---swap-- -----io---- --system-- -----cpu-----\n";
// procps 2.0's showheader(): "%8s%28s%10s%12s%11s%9s" and the r b w columns.
const P2_HEADER: &str = "   procs                      memory      swap          io     system      cpu\n r  b  w   swpd   free   buff  cache   si   so    bi    bo   in    cs us sy id\n";
const OLD_FREE_HEADER: &str = "             total       used       free     shared    buffers     cached\n";

#[test]
fn free_prints_the_layout_of_the_machines_userland() {
    // Seed 000's machine states CentOS 6: the -/+ buffers/cache line by default, -o hides it.
    let r = run_on("free\nfree -o\n", "seed-000", &[]);
    let t = &r.transcript;
    assert_eq!(t.matches(OLD_FREE_HEADER).count(), 2, "{t}");
    assert_eq!(t.matches("-/+ buffers/cache:").count(), 1, "only the plain free has the line: {t}");
    // The same machine with Debian 12's tools: today's layout, and -o is not an option of
    // procps-ng (its getopt error and usage, status 1; the script goes on).
    let r = run_on("free\nfree -o\necho rc=$?\nfree --old\n", "seed-000", &["userland=debian-12"]);
    let t = &r.transcript;
    assert!(t.contains("               total        used        free      shared  buff/cache   available\n"), "{t}");
    assert!(t.contains("free: invalid option -- 'o'\n\nUsage:\n free [options]\n"), "{t}");
    assert!(t.contains("rc=1\n"), "{t}");
    // --old stays memtwin's documented name for the 3.2.8 layout.
    assert!(t.contains(OLD_FREE_HEADER) && t.contains("-/+ buffers/cache:"), "{t}");
}

#[test]
fn procps_3_free_refuses_what_it_did_not_have() {
    // procps 3.2.8's getopt "bkmglotc:s:V": -h came with procps-ng; a long option is an
    // invalid '-'. The message, then its usage on stderr, status 1.
    let r = run_on("free -h\necho rc=$?\nfree --human\nfree -V\n", "seed-000", &[]);
    let t = &r.transcript;
    assert!(t.contains("free: invalid option -- 'h'\nusage: free [-b|-k|-m|-g] [-l] [-o] [-t] [-s delay] [-c count] [-V]\n"), "{t}");
    assert!(t.contains("rc=1\n"), "{t}");
    assert!(t.contains("free: invalid option -- '-'\n"), "{t}");
    assert!(t.contains("procps version 3.2.8\n"), "{t}");
    // Each procps-ng names its own release.
    let r = run_on("free -V\n", "default", &["userland=ubuntu-20.04"]).transcript;
    assert!(r.contains("free from procps-ng 3.3.16\n"), "{r}");
    let r = run_on("free -V\n", "default", &[]).transcript;
    assert!(r.contains("free from procps-ng 4.0.2\n"), "{r}");
}

#[test]
fn the_userland_follows_the_kernel_profile_unless_stated() {
    let script = "vmstat 1 2\nfree\n";
    let ng = run_on(script, "default", &[]).transcript;
    assert!(ng.contains(NG_HEADER) && !ng.contains("-/+ buffers/cache"), "{ng}");
    let p3 = run_on(script, "default", &["kernel=linux-2.6.39"]).transcript;
    assert!(p3.contains(P3_HEADER) && p3.contains("-/+ buffers/cache"), "{p3}");
    let p2 = run_on(script, "default", &["kernel=linux-2.4"]).transcript;
    assert!(p2.contains(P2_HEADER) && p2.contains("-/+ buffers/cache"), "{p2}");
    // Stated: a 2.6.39 kernel with Debian 12's tools.
    let stated = run_on(script, "default", &["kernel=linux-2.6.39", "userland=debian-12"]).transcript;
    assert!(stated.contains(NG_HEADER) && !stated.contains("-/+ buffers/cache"), "{stated}");
}

#[test]
fn procps_3_and_2_vmstat_count_cache_without_sreclaimable() {
    // procps-ng adds SReclaimable to `cache`; 3.2.8 and 2.0 print Cached alone, which is
    // what seed 000's article shows (cache 8280 = free's cached 8280 on the idle machine).
    let p3 = run_on("vmstat\nfree\n", "seed-000", &[]).transcript;
    let row = p3.lines().find(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())).unwrap();
    let cache: u64 = row.split_whitespace().nth(5).unwrap().parse().unwrap();
    let mem = p3.lines().find(|l| l.starts_with("Mem:")).unwrap();
    let cached: u64 = mem.split_whitespace().nth(6).unwrap().parse().unwrap();
    assert_eq!(cache, cached, "{p3}");
    let ng = run_on("vmstat\nfree\n", "seed-000", &["userland=debian-12"]).transcript;
    let row = ng.lines().find(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())).unwrap();
    let ng_cache: u64 = row.split_whitespace().nth(5).unwrap().parse().unwrap();
    assert!(ng_cache > cache, "SReclaimable counted by procps-ng only: {ng_cache} vs {cache}");
}

#[test]
fn procps_2_vmstat_has_r_b_w_and_no_wa_or_st() {
    // procps 2.0's getrunners(): vmstat itself is taken out of r; a running kernel thread
    // (no resident pages) counts under w. A 2.4 kernel's idle time includes I/O wait.
    let r = run_on("dd if=/dev/zero of=f bs=1M count=300 &\nvmstat 1 4\nwait\nvmstat -w 1 1\necho rc=$?\n", "ml110-g4", &[]);
    let t = &r.transcript;
    assert!(t.contains(P2_HEADER), "{t}");
    for l in t.lines().filter(|l| l.starts_with(' ') && l.trim_start().starts_with(|c: char| c.is_ascii_digit())) {
        let f: Vec<u64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
        assert_eq!(f.len(), 16, "r b w swpd free buff cache si so bi bo in cs us sy id: {l}");
        assert!((99..=101).contains(&(f[13] + f[14] + f[15])), "us+sy+id is the whole: {l}");
    }
    assert!(t.contains("vmstat: -w is not an option of procps 2.0 (userland centos-3)"), "{t}");
    assert!(t.contains("rc=1\n"), "{t}");
}

#[test]
fn a_bad_userland_names_what_is_accepted() {
    let e = memtwin_scenario::run(&memtwin_scenario::RunOptions {
        script_path: Some("t.sh".into()),
        script_text: Some("free\n".into()),
        machine: "default".into(),
        sets: vec!["userland=fedora".into()],
        ..Default::default()
    })
    .err()
    .expect("refused");
    let m = e.to_string();
    assert!(m.contains("fedora") && m.contains("debian-12") && m.contains("centos-6"), "{m}");
}

#[test]
fn ps_e_prints_the_command_name() {
    // procps's default format is "pid,tname,time,ucmd": the name, no arguments and no
    // brackets around kernel threads.
    let r = run_on("ps -e\n", "default", &[]);
    let t = &r.transcript;
    assert!(t.contains("  PID TTY          TIME CMD\n"), "{t}");
    assert!(t.contains(" systemd\n") && t.contains(" kswapd0\n") && t.contains(" ps\n"), "{t}");
    assert!(!t.contains('[') && !t.contains("/sbin/init"), "{t}");
}

#[test]
fn pid_1_is_the_userlands_init() {
    let ng = run_on("ps -e | head -2\n", "default", &[]).transcript;
    assert!(ng.contains("    1 ?        00:00:00 systemd\n"), "{ng}");
    let c6 = run_on("ps -e | head -2\nps -ef | head -2\n", "ml110-g6", &[]).transcript;
    assert!(c6.contains("    1 ?        00:00:00 init\n") && c6.contains(" /sbin/init\n"), "{c6}");
    let c3 = run_on("ps -ef | head -2\n", "ml110-g4", &[]).transcript;
    assert!(c3.contains(" init [3]\n"), "{c3}");
}

#[test]
fn text_tools_read_the_eras_proc_files() {
    // grep and head read /proc as cat does: 2.4's meminfo has no MemAvailable (3.14+) and
    // its /proc/sys/vm has no dirty_ratio (bdflush instead).
    let r = run_on(
        "grep MemAvailable /proc/meminfo\necho rc=$?\nhead -1 /proc/meminfo\ngrep . /proc/sys/vm/dirty_ratio\necho rc=$?\n",
        "ml110-g4",
        &[],
    );
    let t = &r.transcript;
    assert!(!t.contains("MemAvailable:"), "{t}");
    assert!(t.contains("        total:    used:    free:  shared: buffers:  cached:\n"), "{t}");
    assert_eq!(t.matches("rc=1\n").count() + t.matches("rc=2\n").count(), 2, "{t}");
}
