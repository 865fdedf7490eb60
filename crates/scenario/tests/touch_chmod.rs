//! touch and chmod on the simulated filesystem: touch creates empty inodes and sets times
//! (utimensat), chmod changes permission bits (ls -l, stat), neither costs memory.

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
fn touch_creates_files_and_sets_times() {
    let r = run("touch a b\nls a b\nstat -c '%s %F' a\ntouch -c nosuch\nls nosuch\nsleep 5\ntouch -m a\nstat a | grep -E '^(Access|Modify|Change):'\ntouch -d '2026-12-01 12:00:00' b\nstat -c %y b\ntouch -r b a\nstat a | grep Modify\n");
    let o = outputs(&r);
    assert_eq!(o[1], "a  b\n", "ls on a terminal: columns");
    assert_eq!(o[2], "0 regular empty file\n");
    assert_eq!(o[3], "", "-c creates nothing and says nothing");
    assert!(o[4].contains("No such file or directory"), "{}", o[4]);
    let lines: Vec<&str> = o[7].lines().collect();
    // The first "Access:" line is the permissions; then atime, mtime, ctime.
    let time = |l: &str| l.split_once(": ").unwrap().1.to_string();
    let (atime, mtime, ctime) = (time(lines[1]), time(lines[2]), time(lines[3]));
    assert!(mtime.starts_with("2026-11-23 10:00:05"), "mtime moved to now: {mtime}");
    assert!(atime.starts_with("2026-11-23 10:00:00"), "-m leaves atime: {atime}");
    assert_eq!(mtime, ctime, "ctime follows the change");
    assert!(o[9].starts_with("2026-12-01 12:00:00"), "{}", o[9]);
    assert!(o[11].contains("2026-12-01 12:00:00"), "-r copies the reference's time: {}", o[11]);
}

#[test]
fn touch_refuses_what_it_cannot_model() {
    assert!(run_text("t.sh", "touch -d 1999-01-01 f\n").is_err(), "a time before boot");
    assert!(run_text("t.sh", "touch -z f\n").is_err());
    assert!(run_text("t.sh", "touch\n").is_err());
}

#[test]
fn chmod_changes_the_permission_bits() {
    let r = run("touch f\nchmod 600 f\nstat -c %a f\nchmod g+r,o=r f\nstat -c %A f\nchmod +x f\nstat -c %a f\nchmod u=rw,go= f\nls -l f | cut -c1-10\nchmod 600 nosuch\necho rc=$?\n");
    let o = outputs(&r);
    assert_eq!(o[2], "600\n");
    assert_eq!(o[4], "-rw-r--r--\n");
    assert_eq!(o[6], "755\n", "+x under umask 022 sets all three x bits");
    assert_eq!(o[8], "-rw-------\n");
    assert!(o[9].contains("chmod: cannot access 'nosuch': No such file or directory"), "{}", o[9]);
    assert_eq!(o[10], "rc=1\n");
}
