//! Bad input through `memtwin_scenario::run`: each case is one clear line that names
//! file:line (or the `--set` / machine it is about) and what is accepted — never a panic.
//! Failures a real shell survives (a dd that cannot open its input) are not errors of the
//! run: they show in the transcript and set the exit status, as in bash.

mod common;

use common::*;
use memtwin_scenario::{RunError, RunOptions, RunResult};
use proptest::prelude::*;
use std::path::PathBuf;

fn err_of(r: Result<RunResult, RunError>) -> String {
    match r {
        Ok(res) => panic!("expected an error, the run succeeded:\n{}", res.transcript),
        Err(e) => {
            assert!(!e.message.contains('\n'), "the error should be one line: {:?}", e.message);
            assert!(!e.message.is_empty());
            assert!(!e.message.to_lowercase().contains("panick"), "{}", e.message);
            e.message
        }
    }
}

fn script_err(name: &str, text: &str) -> String {
    err_of(run_text(name, text))
}

fn assert_prefix(msg: &str, prefix: &str) {
    assert!(msg.starts_with(prefix), "expected the error to start with {prefix:?}, got {msg:?}");
}

/// A private temporary directory for machine files.
fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("memtwin-bad-input-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn with_machine_file(tag: &str, toml: &str) -> (String, String) {
    let path = temp_dir(tag).join(format!("{tag}.toml"));
    std::fs::write(&path, toml).expect("write machine file");
    let p = path.to_string_lossy().into_owned();
    let e = err_of(memtwin_scenario::run(&RunOptions {
        script_path: Some("ok.sh".into()),
        script_text: Some("free --old\n".into()),
        machine: p.clone(),
        ..Default::default()
    }));
    let _ = std::fs::remove_file(&path);
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir(dir);
    }
    (p, e)
}

fn set_err(set: &str) -> String {
    err_of(memtwin_scenario::run(&RunOptions {
        script_path: Some("ok.sh".into()),
        script_text: Some("free --old\n".into()),
        machine: "seed-000".into(),
        sets: vec![set.to_string()],
        ..Default::default()
    }))
}

// ---- The scenario file ------------------------------------------------------------------------

#[test]
fn missing_scenario_file() {
    let e = err_of(memtwin_scenario::run(&RunOptions {
        script_path: Some("/nonexistent/dir/nope.sh".into()),
        machine: "seed-000".into(),
        ..Default::default()
    }));
    assert_eq!(e, "cannot read scenario '/nonexistent/dir/nope.sh': No such file or directory");
}

#[test]
fn unterminated_quote_names_line_and_column() {
    let e = script_err("q.sh", "echo a\necho b\necho \"abc\n");
    assert_prefix(&e, "q.sh:3:6: ");
    assert!(e.contains("unterminated"), "{e}");
    let e = script_err("q1.sh", "echo 'abc\n");
    assert_prefix(&e, "q1.sh:1:6: ");
}

#[test]
fn unknown_command_on_line_5() {
    let e = script_err("u.sh", "# a comment\necho a\nfree --old\n\nfoo bar\n");
    assert_prefix(&e, "u.sh:5: unknown command 'foo' (supported: ");
    assert!(e.contains("dd") && e.contains("vmstat") && e.contains("free"), "the message lists what is supported: {e}");
}

#[test]
fn errors_are_found_before_anything_runs() {
    // A typo after a very long command is reported at once (not after simulating it).
    let t = std::time::Instant::now();
    let e = script_err("late.sh", "sleep 10000000\nfoo\n");
    assert_prefix(&e, "late.sh:2: unknown command 'foo'");
    assert!(t.elapsed().as_secs_f64() < 5.0);
    // ... also inside loops and conditionals.
    let e = script_err("loop.sh", "for i in 1 2; do\n  echo $i\n  dd if=/dev/zero of=/dev/null bs=1M count=1 bogus=1\ndone\n");
    assert_prefix(&e, "loop.sh:3: dd: unrecognized operand 'bogus=1'");
}

#[test]
fn unsupported_dd_operand() {
    let e = script_err("o.sh", "echo start\ndd if=/dev/zero of=/dev/null bs=1M count=1 xyz\n");
    assert_prefix(&e, "o.sh:2: dd: unrecognized operand 'xyz'");
    assert!(e.contains("if=") && e.contains("oflag=direct"), "{e}");
}

#[test]
fn bad_dd_size() {
    let e = script_err("s.sh", "dd if=/dev/zero of=/dev/null bs=12QB count=1\n");
    assert_prefix(&e, "s.sh:1: dd: invalid number");
    assert!(e.contains("12QB"), "{e}");
}

#[test]
fn errors_quoting_a_multiline_word_stay_on_one_line() {
    // A quoted word may hold a newline; an error that quotes it must still be one line
    // (escape it, as `ls` and coreutils' quotearg do: 'bs=1M'$'\n''count=4').
    let e = err_of(run_text("nl.sh", "dd if=/dev/zero of=test 'bs=1M\ncount=4'\n"));
    assert_prefix(&e, "nl.sh:1: dd: invalid number");
}

#[test]
fn unknown_sysctl_in_a_script() {
    // A vm file no kernel has: sysctl's own message when it runs, as on a real host (open
    // fails with ENOENT), and the script goes on.
    let r = run_text("y.sh", "free --old\n\nsysctl -w vm.nonsense=1\necho rc=$?\n").unwrap_or_else(|e| panic!("{e}"));
    assert!(r.transcript.contains("sysctl: cannot stat /proc/sys/vm/nonsense: No such file or directory\n"), "{}", r.transcript);
    assert!(r.transcript.contains("rc=255\n"), "{}", r.transcript);
    // A real kernel file the model does not model is refused before the run, naming what is.
    let e = script_err("y.sh", "free --old\n\nsysctl -w vm.nr_hugepages=1\n");
    assert_prefix(&e, "y.sh:3: ");
    assert!(e.contains("nr_hugepages") && e.contains("vm.swappiness"), "names the key and what is supported: {e}");
}

#[test]
fn unknown_commands_in_pipelines_name_their_line() {
    // Pipelines run; an unknown command in one is reported before anything runs.
    let e = script_err("p.sh", "echo a\nfree --old | nosuchtool -x\n");
    assert_prefix(&e, "p.sh:2: ");
    assert!(e.contains("unknown command 'nosuchtool'") && e.contains("grep"), "{e}");
}

#[test]
fn every_error_of_a_script_is_reported() {
    // Unknown commands and options: one line each, in script order, before the run.
    let r = run_text("m.sh", "echo ok\nfrobnicate\nvmstat 1 | grep --bogus x\nwhile true; do nosuch; done\n");
    let e = r.err().expect("an error").message;
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 3, "{e}");
    assert_prefix(lines[0], "m.sh:2: unknown command 'frobnicate'");
    assert_prefix(lines[1], "m.sh:3: grep: unsupported option '--bogus'");
    assert_prefix(lines[2], "m.sh:4: unknown command 'nosuch'");
    // Syntax errors: each with line and column; the scan goes on after each.
    let r = run_text("s.sh", "for i in 1 2\necho $i\ndone\necho fine\nif true; then echo\nfi fi\ncase x in\n");
    let e = r.err().expect("an error").message;
    let lines: Vec<&str> = e.lines().collect();
    assert!(lines.len() >= 2, "{e}");
    // The missing `do` is found at the `done`.
    assert_prefix(lines[0], "s.sh:3:1: expected 'do'");
    assert!(lines.iter().all(|l| l.starts_with("s.sh:")), "{e}");
    assert!(lines.iter().any(|l| l.starts_with("s.sh:6:")), "{e}");
}

// ---- The machine --------------------------------------------------------------------------

#[test]
fn unknown_machine_preset_lists_the_presets() {
    let e = err_of(memtwin_scenario::run(&RunOptions {
        script_path: Some("ok.sh".into()),
        script_text: Some("free --old\n".into()),
        machine: "no-such-preset".into(),
        ..Default::default()
    }));
    assert!(e.contains("no-such-preset"), "{e}");
    for name in memtwin_machine::preset_names() {
        assert!(e.contains(name), "the message should list preset '{name}': {e}");
    }
}

#[test]
fn missing_machine_file() {
    let e = err_of(memtwin_scenario::run(&RunOptions {
        script_path: Some("ok.sh".into()),
        script_text: Some("free --old\n".into()),
        machine: "/nonexistent/dir/m.toml".into(),
        ..Default::default()
    }));
    // Like every other RunError the message carries no program-name prefix: the CLI adds
    // "memtwin: " itself (a doubled "memtwin: memtwin: ..." otherwise).
    assert_eq!(e, "cannot read machine file '/nonexistent/dir/m.toml': No such file or directory");
}

#[test]
fn malformed_machine_toml_names_file_and_line() {
    let (p, e) = with_machine_file("malformed", "name = \"x\"\nram = \"2G\"\ncpus = = 2\n");
    assert_prefix(&e, &format!("{p}:3: "));
}

#[test]
fn unknown_key_in_machine_file() {
    let (p, e) = with_machine_file("unknown-key", "name = \"x\"\nram = \"2G\"\ncpus = 2\nfoo = 3\n");
    assert_prefix(&e, &format!("{p}:4: "));
    assert!(e.contains("foo") && e.contains("ram"), "{e}");
}

#[test]
fn impossible_machine_with_no_cpus() {
    let (p, e) = with_machine_file("zero-cpus", "name = \"zero-cpus\"\nram = \"2G\"\ncpus = 0\n");
    assert_prefix(&e, &format!("{p}:3: "));
    assert!(e.contains("cpus") || e.contains("CPU"), "{e}");
}

#[test]
fn bad_sets() {
    let e = set_err("ram=12QB");
    assert_prefix(&e, "--set ram=12QB: ");
    assert!(e.contains("12QB"), "{e}");
    let e = set_err("nonsense=1");
    assert_prefix(&e, "--set nonsense=1: ");
    assert!(e.contains("nonsense") && e.contains("ram"), "lists what is accepted: {e}");
    let e = set_err("vm.swappiness=300");
    assert_prefix(&e, "--set vm.swappiness=300: ");
    assert!(e.contains("300") && e.contains("200"), "names the range: {e}");
}

// ---- Failures a shell survives ----------------------------------------------------------------

const OPEN_FAIL: &str = "dd: failed to open '/nonexistent': No such file or directory";

#[test]
fn a_failing_command_is_not_a_run_error() {
    let r = run_text("f.sh", "dd if=/nonexistent of=/dev/null\necho ok\n").unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<&str> = r.transcript.lines().collect();
    let at = lines.iter().position(|l| *l == OPEN_FAIL).unwrap_or_else(|| panic!("no {OPEN_FAIL:?} in\n{}", r.transcript));
    let ok = lines.iter().position(|l| *l == "ok").unwrap_or_else(|| panic!("the script should go on:\n{}", r.transcript));
    assert!(ok > at);
    assert_eq!(r.exit_status, 0, "the last command (echo) succeeded");
    // The status of the script is the last command's.
    let r = run_text("f2.sh", "echo ok\ndd if=/nonexistent of=/dev/null\n").unwrap();
    assert_eq!(r.exit_status, 1, "dd exits with EXIT_FAILURE");
}

#[test]
fn set_e_stops_at_the_failing_command() {
    let r = run_text("fe.sh", "set -e\ndd if=/nonexistent of=/dev/null\necho ok\n").unwrap_or_else(|e| panic!("{e}"));
    assert!(r.transcript.lines().any(|l| l == OPEN_FAIL), "{}", r.transcript);
    assert!(!r.transcript.lines().any(|l| l == "ok" || l == "# echo ok"), "nothing runs after the failure:\n{}", r.transcript);
    assert_eq!(r.exit_status, 1);
}

/// coreutils dd: a failed open is `die (EXIT_FAILURE, errno, "failed to open %s", ...)`,
/// before any copying — it exits without the "records in/out" statistics.
#[test]
fn dd_that_cannot_open_its_input_prints_only_the_error() {
    let r = run_text("f3.sh", "dd if=/nonexistent of=/dev/null\n").unwrap_or_else(|e| panic!("{e}"));
    let body: Vec<&str> = r.transcript.lines().filter(|l| !l.starts_with("# ")).collect();
    assert_eq!(body, [OPEN_FAIL], "real dd prints only the error line:\n{}", r.transcript);
}

/// coreutils dd names the file as the operand gave it (`quoteaf (input_file)`), not as an
/// absolute path.
#[test]
fn dd_names_a_relative_input_as_given() {
    let r = run_text("f4.sh", "dd if=nonexistent of=/dev/null bs=1M count=1\n").unwrap_or_else(|e| panic!("{e}"));
    assert!(
        r.transcript.lines().any(|l| l == "dd: failed to open 'nonexistent': No such file or directory"),
        "{}",
        r.transcript
    );
}

// ---- Arbitrary scripts never panic ----------------------------------------------------------

/// Commands whose run time is bounded (a few simulated seconds to minutes at most, even after
/// one mutation): every vmstat/iotop/top has a count, every dd a count, sleeps are short.
const TEMPLATES: &[&str] = &[
    "dd if=/dev/zero of=test bs=1M count=4",
    "dd if=test of=/dev/null bs=1M count=4",
    "dd if=/dev/zero of=test bs=64K count=8 oflag=direct",
    "dd if=test of=/dev/null bs=4K count=16 iflag=direct",
    "dd if=/dev/vda of=/dev/null bs=1M count=2",
    "dd if=/nonexistent of=/dev/null",
    "dd if=/dev/zero of=/dev/null bs=1M count=1 conv=notrunc",
    "dd if=/dev/zero of=t2 bs=1M count=1 status=none",
    "dd if=/dev/zero of=/dev/null bs=2G count=1",
    "free --old",
    "free -m",
    "free",
    "vmstat 1 2",
    "vmstat 1 2 &",
    "vmstat",
    "iotop -b -o -n 1 -d 1",
    "iotop -b -n 1 &",
    "top -b -n 1",
    "rm -f test",
    "rm test",
    "sync",
    "cat test",
    "cat /nonexistent",
    "cp test t2",
    "echo 1 > /proc/sys/vm/drop_caches",
    "echo 3 > /proc/sys/vm/drop_caches",
    "echo 300 > /proc/sys/vm/swappiness",
    "sysctl -w vm.dirty_ratio=5",
    "sysctl -w vm.nonsense=1",
    "sysctl vm.swappiness",
    "swapoff -a",
    "swapon -a",
    "swapoff -a && swapon -a",
    "wait",
    "sleep 1",
    "sleep 0.5",
    "true",
    "false",
    "set -e",
    "set +e",
    "exit 0",
    "exit 3",
    "time dd if=/dev/zero of=/dev/null bs=1M count=1",
    "for i in 1 2; do echo $i; done",
    "if true; then echo y; else echo n; fi",
    "if false; then free; fi",
    "X=5",
    "echo $X ${X} \"$X\" '$X'",
    "cd /tmp",
    "export A=1",
    "echo \"unterminated",
    "echo 'single",
    "foo",
    "dd bs=12QB",
    "dd",
    "echo a > /root/out",
    "cat /root/out",
    "done",
    "then",
    "fi",
    "(",
    ")",
    "{",
    "}",
    "$(free)",
    "`free`",
    "<",
    ">",
    "2>&1",
];

/// Joins between items. No line continuation: it could glue a stray word onto `sleep 1`.
const SEPARATORS: &[&str] = &["\n", "; ", " && ", " || ", " | ", " &\n", "\n\n", " # c\n", " ;; ", " & "];

/// Characters one mutation may insert into a template: none of them can cut a command
/// short (no newline, ';', '&', '|', '#', '$', '`', and no '>' / '<' that would turn a
/// count into a redirection target) or join it with the next line ('\\'), nor stretch a
/// duration far (one digit: at most ~100 s).
const MUTATION_CHARS: &[char] = &['0', '1', '9', ' ', '=', '-', '.', 'x', '"', '\'', '(', ')', 'é'];

fn item() -> impl Strategy<Value = String> {
    prop_oneof![
        // A template, maybe with one character inserted.
        4 => (prop::sample::select(TEMPLATES), prop::option::of((any::<prop::sample::Index>(), prop::sample::select(MUTATION_CHARS))))
            .prop_map(|(t, m)| {
                let mut s = t.to_string();
                if let Some((idx, c)) = m {
                    let chars: Vec<char> = s.chars().collect();
                    let at = idx.index(chars.len() + 1);
                    let mut out: String = chars[..at].iter().collect();
                    out.push(c);
                    out.extend(chars[at..].iter());
                    s = out;
                }
                s
            }),
        // Random characters (any Unicode, control characters included, no newline).
        1 => prop::collection::vec(any::<char>().prop_filter("one line", |c| *c != '\n' && *c != '\r'), 0..10)
            .prop_map(|v| v.into_iter().collect::<String>()),
        // Shell-ish punctuation soup.
        1 => "[-a-z0-9 =/.\"'\\\\(){}<>!*?~\\[\\]]{0,12}",
    ]
}

fn script() -> impl Strategy<Value = String> {
    prop::collection::vec((item(), prop::sample::select(SEPARATORS)), 0..7).prop_map(|v| {
        let mut s = String::new();
        for (i, sep) in v {
            s.push_str(&i);
            s.push_str(sep);
        }
        s
    })
}

/// Run a script on a helper thread: a panic or a run that does not finish in `limit` is
/// reported with the script that caused it.
fn run_guarded(text: &str, limit: std::time::Duration) -> Result<Result<RunResult, RunError>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let owned = text.to_string();
    std::thread::Builder::new()
        .name("fuzz-run".into())
        .spawn(move || {
            let r = run_text("fuzz.sh", &owned);
            let _ = tx.send(r);
        })
        .expect("spawn");
    match rx.recv_timeout(limit) {
        Ok(r) => Ok(r),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(format!("the run did not finish in {limit:?}")),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err("the run panicked".into()),
    }
}

/// A fixed seed keeps the suite deterministic; PROPTEST_RNG_SEED=N explores other cases.
fn fuzz_seed() -> proptest::test_runner::RngSeed {
    match std::env::var("PROPTEST_RNG_SEED").ok().and_then(|s| s.parse().ok()) {
        Some(n) => proptest::test_runner::RngSeed::Fixed(n),
        None => proptest::test_runner::RngSeed::Fixed(0x6d656d74_77696e30),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        max_shrink_iters: 256,
        rng_seed: fuzz_seed(),
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_scripts_never_panic(text in script()) {
        let r = run_guarded(&text, std::time::Duration::from_secs(60));
        match r {
            Err(why) => prop_assert!(false, "{why} on script {text:?}"),
            Ok(Ok(res)) => {
                prop_assert!(res.sim_seconds >= 0.0);
                // A sample at 0 s and at every whole second, and one at the end of a last,
                // partial second.
                let partial = if res.sim_seconds > res.sim_seconds.floor() { 1.0 } else { 0.0 };
                prop_assert_eq!(res.series.t_s.len() as f64, res.sim_seconds.floor() + 1.0 + partial, "one sample per second");
            }
            Ok(Err(e)) => {
                // The machine is fine, so every error is about the script: it names the file.
                // (That messages stay on one line even when they quote a word holding a
                // newline is checked by `errors_quoting_a_multiline_word_stay_on_one_line`.)
                prop_assert!(e.message.starts_with("fuzz.sh:"), "error without file:line {:?} on {:?}", e.message, text);
            }
        }
    }
}
