//! /proc and /sys files read by the text tools (`cat F | head`, `grep X /proc/F`, `head F`,
//! `wc -l < F`, several operands at once): every file `cat` can read is readable by them too,
//! rendered when the tool reaches it; /proc/self is the reading tool.

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
fn every_proc_file_cat_reads_is_readable_through_a_pipe() {
    let files = ["swaps", "loadavg", "uptime", "stat", "zoneinfo", "slabinfo", "diskstats", "buddyinfo", "pagetypeinfo", "cpuinfo", "meminfo", "vmstat"];
    let mut script = String::new();
    for f in files {
        script.push_str(&format!("cat /proc/{f} > /dev/null; cat /proc/{f} | wc -l; head -n 1000000 /proc/{f} | wc -l\n"));
    }
    let r = run(&script);
    let o = outputs(&r);
    for (i, f) in files.iter().enumerate() {
        let (piped, head) = (o[i * 3 + 1], o[i * 3 + 2]);
        let n: u64 = piped.trim().parse().unwrap_or_else(|_| panic!("/proc/{f} through a pipe: {piped:?}"));
        assert!(n >= 1, "/proc/{f} is empty through a pipe");
        assert_eq!(piped, head, "/proc/{f}: cat | wc and head | wc differ");
    }
}

#[test]
fn several_operands_and_per_process_files() {
    let r = run("cat /proc/vmstat /proc/swaps | grep -c '^Filename'\nsleep 5 &\ngrep -E '^(VmRSS|VmSwap|RssFile|RssShmem):' /proc/$!/status | wc -l\nhead -1 /proc/self/comm\ngrep -c . /proc/$!/io\nwc -l < /proc/loadavg\ncat /proc/99999/status | wc -l\n");
    let o = outputs(&r);
    assert_eq!(o[0], "1\n", "the second operand is read too");
    assert_eq!(o[2], "4\n", "{}", o[2]);
    assert_eq!(o[3], "head\n", "/proc/self is the reading tool");
    assert!(o[4].trim().parse::<u32>().unwrap() >= 6, "{}", o[4]);
    assert_eq!(o[5], "1\n");
    assert!(o[6].contains("cat: /proc/99999/status: No such file or directory"), "{}", o[6]);
}

#[test]
fn a_proc_sys_file_no_kernel_has_fails_as_in_bash_and_the_script_goes_on() {
    let r = run("echo 1 > /proc/sys/vm/no_such_knob\necho rc=$?\nsysctl -w vm.no_such_knob=1\necho rc=$?\n");
    let o = outputs(&r);
    assert_eq!(o[0], "bash: /proc/sys/vm/no_such_knob: No such file or directory\n");
    assert_eq!(o[1], "rc=1\n");
    assert!(o[2].contains("no_such_knob"), "{}", o[2]);
    assert_ne!(o[3], "rc=0\n");
    // A real file the model does not model is still refused before the run.
    assert!(run_text("t.sh", "echo 1 > /proc/sys/vm/nr_hugepages\n").is_err());
}
