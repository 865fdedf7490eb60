//! The shell language at run time: pipes (blocking, end of file, SIGPIPE), loops, case,
//! functions, substitutions, arithmetic, brace expansion, here-documents, redirections into
//! the simulated filesystem, and writes to /proc and /sys.

mod common;

use common::*;
use memtwin_scenario::RunResult;

fn run(text: &str) -> RunResult {
    run_text("t.sh", text).unwrap_or_else(|e| panic!("{e}"))
}

/// The output of each top-level command.
fn outputs(r: &RunResult) -> Vec<&str> {
    r.commands.iter().map(|c| &r.transcript[c.output_start..c.output_end]).collect()
}

fn secs(r: &RunResult, i: usize) -> f64 {
    (r.commands[i].end_ns - r.commands[i].start_ns) as f64 / 1e9
}

#[test]
fn head_ends_a_pipeline_and_the_writer_dies_of_sigpipe() {
    // vmstat prints its two header lines and a sample at once, head has its 3 lines and
    // exits; vmstat's next report, a second later, finds no reader: SIGPIPE (141).
    let r = run("vmstat 1 | head -3\necho $?\nset -o pipefail\nvmstat 1 | head -3\necho $?\n");
    let o = outputs(&r);
    assert_eq!(o[0].lines().count(), 3, "{}", o[0]);
    assert!(o[0].starts_with("procs"), "{}", o[0]);
    assert_eq!(o[1], "0\n", "the status is head's");
    let t = secs(&r, 0);
    assert!((0.9..1.5).contains(&t), "the pipeline lasts until vmstat's next write: {t} s");
    assert_eq!(o[4], "141\n", "with pipefail, vmstat's SIGPIPE status");
    assert!(!r.transcript.contains("Killed"), "SIGPIPE is not reported as a kill");
}

#[test]
fn a_full_pipe_stops_the_writer_and_eof_ends_the_reader() {
    // 256 MiB through a 64 KiB pipe: the reader gets every byte, then end of file; the
    // copies cost CPU time at the machine's memory-copy bandwidth.
    let r = run("dd if=/dev/zero of=data bs=1M count=256 2>/dev/null\ntime cat data | wc -c\nyes | head -c 100000 | wc -c\nseq 100000 | tail -1\n");
    let o = outputs(&r);
    assert!(o[1].starts_with("268435456\n"), "{}", o[1]);
    assert_eq!(o[2], "100000\n", "yes blocks on the full pipe, head takes 100000 bytes");
    assert_eq!(o[3], "100000\n");
    // Copying 256 MiB in and out of the pipe takes time (both directions at copy_bw).
    assert!(secs(&r, 1) > 256.0 * 1048576.0 / 20e9, "{} s", secs(&r, 1));
}

#[test]
fn loops_case_functions_and_arithmetic() {
    let script = r#"
i=0
while [ $i -lt 5 ]; do i=$((i + 1)); done
echo "i=$i"
until [ $i -eq 0 ]; do i=$((i - 2)); [ $i -lt 0 ] && break; done; echo "after until $i"
for n in {1..4}; do case $n in 1|2) echo "small $n";; *) echo "big $n";; esac; done
greet() { local who=$1; echo "hello $who ($#)"; return 7; }
greet world x; echo "status $?"; echo "who='$who'"
(( n = 6 * 7 )); echo $n
echo $(( 2 ** 10 )) $(( 7 % 3 )) $(( 1 < 2 ? 10 : 20 ))
echo x{a,b}y file{01..03}.txt
for w in one two three; do if [[ $w == t* ]]; then echo "t-word $w"; continue; fi; echo "other $w"; done
"#;
    let r = run(script);
    let t = &r.transcript;
    for want in [
        "i=5\n", "after until -1\n", "small 1\nsmall 2\nbig 3\nbig 4\n", "hello world (2)\n", "status 7\n", "who=''\n", "42\n",
        "1024 1 10\n", "xay xby file01.txt file02.txt file03.txt\n", "other one\nt-word two\nt-word three\n",
    ] {
        assert!(t.contains(want), "missing {want:?} in\n{t}");
    }
}

#[test]
fn substitutions_here_documents_and_read() {
    let script = r#"
free_kb=$(awk '/^MemFree:/ {print $2}' /proc/meminfo)
[ "$free_kb" -gt 0 ] && echo "free is a number"
echo "lines: $(printf 'a\nb\nc\n' | wc -l)"
cat <<EOF | grep -c line
line one $free_kb
line two
EOF
cat <<'EOF'
literal $free_kb
EOF
while read name value; do echo "$name=$value"; done <<EOF
a 1
b 2 3
EOF
tr a-z A-Z <<< "shout"
"#;
    let r = run(script);
    let t = &r.transcript;
    for want in ["free is a number\n", "lines: 3\n", "2\n", "literal $free_kb\n", "a=1\nb=2 3\n", "SHOUT\n"] {
        assert!(t.contains(want), "missing {want:?} in\n{t}");
    }
}

#[test]
fn redirections_write_files_on_the_simulated_filesystem() {
    let script = "echo hi > note.txt\nls -l note.txt\necho more >> note.txt\ncat note.txt\nwc -c < note.txt\nstat -c %s note.txt\nrm note.txt\ncat note.txt\nls note.txt\n: > empty\nls -l empty\ndd if=/dev/zero of=big bs=1M count=64 2>/dev/null\ncat big > copy\nls -l copy\ngrep -c x /proc/meminfo > count.txt 2>&1\ncat count.txt\n";
    let r = run(script);
    let o = outputs(&r);
    assert!(o[1].contains(" 3 ") && o[1].ends_with("note.txt\n"), "ls sees the 3-byte file: {}", o[1]);
    assert_eq!(o[3], "hi\nmore\n");
    assert_eq!(o[4], "8\n");
    assert!(o[7].contains("No such file or directory"), "{}", o[7]);
    assert!(o[8].contains("cannot access 'note.txt'"), "{}", o[8]);
    assert!(o[10].contains(" 0 "), "{}", o[10]);
    assert!(o[13].contains(" 67108864 "), "cat big > copy makes a copy: {}", o[13]);
    assert!(o[15].trim().parse::<u32>().is_ok(), "{}", o[15]);
    // The copy went through the page cache: both 64 MiB files are cached.
    let cached = col(&r.series, "mi.Cached");
    assert!(*cached.last().unwrap() as f64 > 2.0 * 64.0 * 1024.0 * 0.9, "two 64 MiB files cached: {}", cached.last().unwrap());
}

#[test]
fn proc_and_sys_writes_behave_as_the_kernel_does() {
    let r = run("echo 1 > /proc/meminfo\necho $?\necho 1 > /proc/nosuch\necho $?\necho 3 > /proc/sys/vm/drop_caches\necho $?\n");
    let o = outputs(&r);
    assert_eq!(o[0], "bash: /proc/meminfo: Permission denied\n");
    assert_eq!(o[1], "1\n");
    assert_eq!(o[2], "bash: /proc/nosuch: No such file or directory\n");
    assert_eq!(o[5], "0\n");
    // A sysfs knob the model does not have is refused, naming the line.
    let e = run_text("s.sh", "echo ok\necho always > /sys/kernel/mm/transparent_hugepage/enabled\n").err().expect("refused");
    assert!(e.message.starts_with("s.sh:2:") && e.message.contains("not modelled"), "{}", e.message);
}

#[test]
fn background_pipelines_and_kill() {
    let r = run("sleep infinity &\nkill $!\nwait\necho done\nseq 3 | tail -1 &\nwait\ntimeout 2 sleep infinity\necho $?\n");
    let t = &r.transcript;
    assert!(t.contains("done\n") && t.contains("3\n") && t.ends_with("124\n"), "{t}");
    assert!(r.sim_seconds >= 2.0 && r.sim_seconds < 3.0, "{}", r.sim_seconds);
}

#[test]
fn unsupported_options_name_the_line_and_what_is_supported() {
    let e = run_text("u.sh", "echo a\ntail -f /var/log/syslog\n").err().expect("refused");
    assert!(e.message.starts_with("u.sh:2: tail: -f") && e.message.contains("not supported"), "{}", e.message);
    let e = run_text("u.sh", "grep -P x f\n").err().expect("refused");
    assert!(e.message.starts_with("u.sh:1: grep: unsupported option '-P'") && e.message.contains("-E"), "{}", e.message);
    let e = run_text("u.sh", "awk '{ getline x }' f\n").err().expect("refused");
    assert!(e.message.contains("getline is not supported"), "{}", e.message);
}

/// /proc/PID/fd lists a task's descriptors: the standard streams and the files it has
/// open (dd: its input and output).
#[test]
fn proc_pid_fd_lists_the_open_descriptors() {
    let r = run("dd if=/dev/zero of=/root/out bs=1M count=400 &\nsleep 0.05\nls /proc/$!/fd\nls -1 /proc/self/fd\nwait\n");
    let o = outputs(&r);
    assert_eq!(o[2].split_whitespace().collect::<Vec<_>>(), vec!["0", "1", "2", "3", "4"], "{o:?}");
    assert_eq!(o[3].split_whitespace().collect::<Vec<_>>(), vec!["0", "1", "2"], "{o:?}");
}

#[test]
fn pathname_expansion_matches_the_simulated_files() {
    // bash's glob: sorted (C locale byte order), dot files only for a pattern with a dot,
    // a pattern that matches nothing stays as written, quoted characters are literal.
    let script = r#"
mkdir -p /root/g/sub
cd /root/g
echo b > b.txt; echo a > a.txt; echo c > C.txt; echo h > .hidden.txt; echo x > sub/x.log
echo *.txt
echo ?.txt [ab].txt [!a].txt
echo *.none "*.txt" '*'.txt
echo s*/*.log /root/g/a*
echo .*.txt
for f in *.txt; do echo "f=$f"; done
cat *.txt | wc -l
"#;
    let r = run(script);
    let o = outputs(&r);
    assert_eq!(o[7], "C.txt a.txt b.txt\n", "sorted as the C locale sorts");
    assert_eq!(o[8], "C.txt a.txt b.txt a.txt b.txt C.txt b.txt\n");
    assert_eq!(o[9], "*.none *.txt *.txt\n", "unmatched and quoted patterns stay literal");
    assert_eq!(o[10], "sub/x.log /root/g/a.txt\n");
    assert_eq!(o[11], ".hidden.txt\n");
    assert_eq!(o[12], "f=C.txt\nf=a.txt\nf=b.txt\n");
    assert_eq!(o[13], "3\n");
}

#[test]
fn tilde_backquotes_and_parameter_operators() {
    let script = r#"
echo ~ ~/x "~"
echo `echo back` "q `echo uote`"
unset X; E=
echo "${X:-def} ${E:-empty} ${E-set} ${X:+alt} ${HOME:+alt}"
echo "${X:=assigned} $X"
P=/usr/lib/libfoo.so.1
echo ${#P} ${P#*/} ${P##*/} ${P%.*} ${P%%.*} ${P/lib/LIB} ${P//lib/LIB}
echo "${NOPE:?is required}"
echo not reached
"#;
    let r = run_text("t.sh", script).unwrap_or_else(|e| panic!("{e}"));
    let o = outputs(&r);
    assert_eq!(o[0], "/root /root/x ~\n");
    assert_eq!(o[1], "back q uote\n");
    assert_eq!(o[4], "def empty   alt\n");
    assert_eq!(o[5], "assigned assigned\n");
    assert_eq!(o[7], "20 usr/lib/libfoo.so.1 libfoo.so.1 /usr/lib/libfoo.so /usr/lib/libfoo /usr/LIB/libfoo.so.1 /usr/LIB/LIBfoo.so.1\n");
    assert!(o[8].contains("NOPE: is required"), "{}", o[8]);
    assert_eq!(r.exit_status, 1, "${{X:?}} on an unset X ends the script with status 1");
    assert!(!r.transcript.contains("not reached"));
}

#[test]
fn indexed_arrays_and_c_style_for() {
    let script = r#"
a=(x "y z" w)
a[1]=b
a[5]=f
echo ${#a[@]} ${a[0]} ${a[1]} $a ${a[5]}
for e in "${a[@]}"; do echo "[$e]"; done
for e in ${a[@]}; do echo "<$e>"; done
i=2; echo ${a[i]} ${a[i+3]}
for ((i=0; i<3; i++)); do echo "i=$i"; done
for ((n=10; n>0; n-=4)); do printf '%s ' $n; done; echo
s=0; for ((;;)); do s=$((s+1)); [ $s -ge 3 ] && break; done; echo s=$s
"#;
    let r = run(script);
    let o = outputs(&r);
    assert_eq!(o[3], "4 x b x f\n");
    assert_eq!(o[4], "[x]\n[b]\n[w]\n[f]\n");
    assert_eq!(o[5], "<x>\n<b>\n<w>\n<f>\n");
    assert_eq!(o[7], "w f\n");
    assert_eq!(o[8], "i=0\ni=1\ni=2\n");
    assert_eq!(o[9], "10 6 2 ");
    assert_eq!(o[13], "s=3\n");
}
