//! /proc/pressure/* read by every reader a script has: cat, the text tools, a pipe, a
//! redirection. Each read brings the totals up to now first, as psi_show does.

mod common;

use common::run_on;

/// The lines a command printed (the transcript without the echoed `# ` lines).
fn outputs(transcript: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for l in transcript.lines() {
        if l.starts_with("# ") {
            out.push(Vec::new());
        } else if let Some(last) = out.last_mut() {
            last.push(l.to_string());
        }
    }
    out
}

#[test]
fn every_reader_sees_the_pressure_files_with_stalls_so_far() {
    let script = "memhog -r1 700M >/dev/null
cat /proc/pressure/memory
grep full /proc/pressure/memory
cat /proc/pressure/io | wc -l
head -1 /proc/pressure/cpu
while read a b; do echo \"$a\"; done < /proc/pressure/memory
";
    let r = run_on(script, "default", &["ram=512M", "kernel=linux-6.x"]);
    let o = outputs(&r.transcript);
    assert_eq!(o[1].len(), 2, "{}", r.transcript);
    let total = |l: &str| l.rsplit("total=").next().and_then(|t| t.parse::<u64>().ok()).unwrap_or_else(|| panic!("{l}"));
    assert!(o[1][0].starts_with("some avg10=") && total(&o[1][0]) > 0, "memhog under reclaim stalled on memory: {}", r.transcript);
    assert_eq!(o[2].len(), 1);
    assert!(o[2][0].starts_with("full avg10="));
    assert!(total(&o[2][0]) >= total(&o[1][1]), "later reads never go back: {} vs {}", o[2][0], o[1][1]);
    assert_eq!(o[3], vec!["2".to_string()]);
    assert!(o[4][0].starts_with("some avg10="));
    assert_eq!(o[5], vec!["some".to_string(), "full".to_string()], "{}", r.transcript);
}

#[test]
fn before_4_20_there_are_no_pressure_files() {
    let r = run_on("grep some /proc/pressure/memory\n", "default", &["kernel=linux-2.6.39"]);
    assert!(r.transcript.contains("grep: /proc/pressure/memory: No such file or directory"), "{}", r.transcript);
}
