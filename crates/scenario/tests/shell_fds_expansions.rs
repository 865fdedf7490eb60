//! The shell's descriptor table (`exec 3> f`, `N>&M`, `N<&M`, `N>&-`, `<>`, left-to-right
//! dup2 order), the expansions bash has beyond POSIX (`${!X}`, `${!P*}`, `${X^^}`, `~user`,
//! globs from unquoted values), array and string appends, `case` fall-through, and
//! `read NAME < file`.

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

#[test]
fn exec_opens_and_closes_descriptors_of_the_shell() {
    let r = run("exec 3> log\necho one >&3\necho two 1>&3\nexec 3>&-\necho three >&3\necho $?\ncat log\nwc -l < log\n");
    let o = outputs(&r);
    assert_eq!(o[1], "", "the line goes to fd 3, the file");
    assert_eq!(o[4], "bash: 3: Bad file descriptor\n", "fd 3 is closed");
    assert_eq!(o[5], "1\n");
    assert_eq!(o[6], "one\ntwo\n");
    assert_eq!(o[7], "2\n");
}

#[test]
fn redirections_are_applied_left_to_right_as_dup2() {
    // 2>&1 >/dev/null: the error goes where stdout was (the pipe), then stdout is dropped.
    let r = run("cat nosuch 2>&1 >/dev/null | wc -l\ncat nosuch >/dev/null 2>&1 | wc -l\n{ echo out; echo err >&2; } 3>&1 1>/dev/null 2>&3\n{ echo out; echo err >&2; } 3>&1 1>&2 2>&3 | tr a-z A-Z\n");
    let o = outputs(&r);
    assert_eq!(o[0], "1\n", "the message reaches the pipe");
    assert_eq!(o[1], "0\n");
    assert_eq!(o[2], "err\n", "stdout dropped, stderr on the old stdout");
    // Swapped: "err" goes into the pipe (upper-cased), "out" to the terminal.
    assert!(o[3].contains("out\n") && o[3].contains("ERR\n"), "{}", o[3]);
}

#[test]
fn input_descriptors_read_write_and_close() {
    let r = run("printf 'a\\nb\\n' > f\nexec 4< f\nread -r l <&4\necho \"[$l]\"\ncat <&4\nexec 4<&-\necho x 1<>rw\ncat rw\ncat <&-\necho $?\n");
    let o = outputs(&r);
    assert_eq!(o[3], "[a]\n");
    assert_eq!(o[4], "b\n", "read moved the shared offset past the first line");
    assert_eq!(o[7], "x\n", "<> creates the file");
    assert_eq!(o[8], "", "a closed stdin reads nothing");
}

#[test]
fn read_from_a_file_redirection_reads_the_file() {
    // The block's here-string is the shell's stdin; `read x < f` still reads f.
    let r = run("printf 'one\\ntwo\\n' > f\n{ read x < f; read y; read z < f; echo \"$x $y $z\"; } <<< 'stdin'\n");
    assert_eq!(outputs(&r)[1], "one stdin one\n");
}

#[test]
fn unquoted_values_are_globbed() {
    let r = run(": > a.txt\n: > b.txt\n: > c.log\nf='*.txt'\necho $f\necho \"$f\"\nls $f | wc -l\ng='*.none'\necho $g\n");
    let o = outputs(&r);
    assert_eq!(o[4], "a.txt b.txt\n");
    assert_eq!(o[5], "*.txt\n", "a quoted value is not a pattern");
    assert_eq!(o[6], "2\n");
    assert_eq!(o[8], "*.none\n", "no match: the word stays");
}

#[test]
fn bash_expansions_indirect_names_and_case() {
    let r = run(concat!(
        "a=hello n=a ab=1 ac=2\n",
        "echo ${!n} ${!a*}\n",
        "for v in \"${!a@}\"; do echo \"<$v>\"; done\n",
        "X=hello Y=WORLD\n",
        "echo ${X^^} ${X^} ${Y,,} ${Y,} ${X^^[lo]}\n",
        "echo ~root ~nobody/x ~\n",
    ));
    let o = outputs(&r);
    assert_eq!(o[1], "hello a ab ac\n");
    assert_eq!(o[2], "<a>\n<ab>\n<ac>\n");
    assert_eq!(o[4], "HELLO Hello world wORLD heLLO\n");
    assert_eq!(o[5], "/root ~nobody/x /root\n");
}

#[test]
fn array_subscripts_and_appends() {
    let r = run(concat!(
        "a=([2]=x y [0]=z)\n",
        "echo ${!a[@]} / ${a[@]}\n",
        "a+=(w)\n",
        "echo ${a[@]} ${#a[@]}\n",
        "{ s=ab; s+=cd; s+=$s; }\n",
        "echo $s\n",
        "{ a[1]+=q; echo ${a[1]}; }\n",
    ));
    let o = outputs(&r);
    assert_eq!(o[1], "0 2 3 / z x y\n");
    assert_eq!(o[3], "z x y w 4\n");
    assert_eq!(o[5], "abcdabcd\n");
    assert_eq!(o[6], "q\n");
}

#[test]
fn case_fall_through_and_continue() {
    let r = run("case b in a) echo A;; b) echo B;& c) echo C;; d) echo D;; esac\ncase ab in a*) echo 1;;& *b) echo 2;;& x) echo 3;; *) echo 4;; esac\n");
    let o = outputs(&r);
    assert_eq!(o[0], "B\nC\n", ";& runs the next arm without testing it");
    assert_eq!(o[1], "1\n2\n4\n", ";;& goes on testing");
}

/// /proc/cpuinfo's microcode line (3.x+, when the revision is not 0) and 5.8+'s vmx flags
/// line (when the CPU has vmx), from the machine file's CPU identity.
#[test]
fn cpuinfo_microcode_and_vmx_flags_where_the_era_prints_them() {
    let sets = ["cpu.microcode=0xf0", "cpu.vmx_flags=vnmi preemption_timer ept vpid"];
    let r = run_on("head -30 /proc/cpuinfo\n", "default", &sets);
    let t = &r.transcript;
    assert!(t.contains("stepping\t: 3\nmicrocode\t: 0xf0\ncpu MHz"), "{t}");
    assert!(t.contains("\nvmx flags\t: vnmi preemption_timer ept vpid\nbugs\t\t:"), "{t}");
    // 2.6.39 prints neither; without the keys 6.x prints neither.
    let r = run_on("cat /proc/cpuinfo\n", "ml110-g6", &sets);
    assert!(!r.transcript.contains("microcode") && !r.transcript.contains("vmx flags"), "{}", r.transcript);
    let r = run_on("cat /proc/cpuinfo\n", "default", &[]);
    assert!(!r.transcript.contains("microcode") && !r.transcript.contains("vmx flags"), "{}", r.transcript);
}

/// `select`: the menu and `#? ` on stderr, one line of stdin per choice, REPLY, end of file
/// ends the loop with status 1 after a newline.
#[test]
fn select_reads_choices_from_standard_input() {
    let r = run("select f in apple pear plum; do echo \"[$f] [$REPLY]\"; done <<< \"$(printf '2\\n\\n9')\"\necho $?\n");
    let o = outputs(&r);
    assert_eq!(o[0], "1) apple\n2) pear\n3) plum\n#? [pear] [2]\n#? 1) apple\n2) pear\n3) plum\n#? [] [9]\n#? \n", "{}", o[0]);
    assert_eq!(o[1], "1\n");
    // Too many for one row: columns down, then across (COLUMNS 80).
    let words: Vec<String> = (1..=30).map(|i| format!("item{i:02}")).collect();
    let r = run(&format!("select x in {}; do break; done < /dev/null\n", words.join(" ")));
    let menu = &outputs(&r)[0];
    // 30 entries of 12 columns: 6 columns of 5 rows.
    assert!(menu.starts_with(" 1) item01   6) item06\t11) item11"), "{menu:?}");
    assert_eq!(menu.lines().count(), 6, "5 rows and the prompt's line: {menu}");
}

/// `<(cmd)`: the command's output is read through /dev/fd/63 (62 for the next).
#[test]
fn process_substitution_reads_the_commands_output() {
    let r = run("wc -l <(seq 5)\ngrep -c 1 <(seq 20) <(seq 10)\nwhile read n; do echo \"got $n\"; done < <(seq 2)\necho <(true)\n");
    let o = outputs(&r);
    assert_eq!(o[0], "5 /dev/fd/63\n");
    assert_eq!(o[1], "/dev/fd/63:11\n/dev/fd/62:2\n");
    assert_eq!(o[2], "got 1\ngot 2\n");
    assert_eq!(o[3], "/dev/fd/63\n");
}

/// An error inside `$(...)` after a line continuation is reported on the line it is on.
#[test]
fn errors_inside_a_substitution_count_continued_lines() {
    let e = memtwin_scenario::lang::parse("x=$(echo a \\\n  b \\\n  c; fi)\n").unwrap_err();
    assert_eq!((e.line, e.col), (3, 6), "{e}");
    assert!(e.message.contains("'fi'"), "{e}");
    let s = memtwin_scenario::lang::parse("x=$(echo a \\\n  b)\necho ok\n").unwrap();
    assert_eq!(s.items.len(), 2);
}

/// The tutorial scenarios run as written (pipes included) on the machine their header names.
#[test]
fn tutorial_scenarios_run_unmodified() {
    for (name, want) in [
        ("tutorial-swapfile.sh", "/swapfile"),
        ("tutorial-oom.sh", "Killed process"),
        ("tutorial-dsync.sh", "copied"),
        ("tutorial-drop-caches.sh", "Dirty"),
        ("tutorial-pipes.sh", "pass 4"),
    ] {
        let p = format!("{}/../../scenarios/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&p).unwrap();
        let machine = text.lines().find_map(|l| l.strip_prefix("# machine: ")).unwrap_or("default").trim().to_string();
        let r = run_on(&text, &machine, &[]);
        assert_eq!(r.exit_status, 0, "{name}:\n{}", r.transcript);
        assert!(r.transcript.contains(want), "{name}:\n{}", r.transcript);
    }
}

/// The tools, files and options of a new user's tutorials, one line each, in one script:
/// every line is accepted and runs (statuses as the real tools give them).
#[test]
fn tutorial_userland_runs() {
    let script = r#"seq 10 | grep -E '1|5' | wc -l
seq 10 | grep -v 1 | grep -c .
printf 'Foo\nfoo bar\n' | grep -iw foo
seq 20 | head -3 | tail -1
printf 'b 2\na 10\nc 1\n' | sort -n -k2 -r
printf 'a:b:c\n' | cut -d: -f2
echo hello | tr a-z A-Z
printf 'a\na\nb\n' | uniq -c
printf '1 2\n3 4\n' | awk '{s+=$2} END {printf "%d %d\n", NR, s}'
seq 5 | sed -n '2,3p'
echo abc | sed 's/b/X/'
echo hi | tee t1 > /dev/null
seq 3 | xargs echo
sleep 1
true; false; :
dmesg | tail -2
ps aux | head -2
ps -eo pid,rss,vsz,comm --sort=-rss | head -3
uptime
nproc
sar -r 1 1
sar -B 1 1
sar -W 1 1
sar -S 1 1
iostat -x 1 1
vmstat -m | head -3
vmstat -d
vmstat -D
slabtop -o | head -5
dd if=/dev/zero of=f1 bs=1M count=4 oflag=dsync
dd if=f1 of=f2 bs=1M iflag=nocache oflag=sync
fincore f1
vmtouch f1
fallocate -l 1M f3
truncate -s 2M f3
chmod 600 f3
du -sh f3
sync -f
swapon -s
pmap -x $$ | tail -1
mkdir -p d1/d2
echo x > d1/d2/y
cp -r d1 d3
ls d3/d2
stat f1
sysctl -a | wc -l
echo 1 > /proc/sys/vm/compact_memory
grep compact_stall /proc/vmstat
cat /proc/swaps
head -3 /proc/buddyinfo
head -3 /proc/zoneinfo
head -3 /proc/pagetypeinfo
head -2 /proc/slabinfo
cat /proc/pressure/memory /proc/pressure/io /proc/pressure/cpu
grep -E 'VmRSS|VmSwap|RssFile|RssShmem' /proc/self/status
cat /proc/self/io
cat /proc/self/smaps_rollup | head -3
cat /proc/loadavg
head -1 /proc/stat
grep -c processor /proc/cpuinfo
cat /sys/kernel/mm/transparent_hugepage/enabled
grep -E 'HugePages_|Vmalloc|DirectMap' /proc/meminfo
stress-ng --vm 1 --vm-bytes 64M --vm-keep --timeout 2
stress --vm 1 --vm-bytes 64M --timeout 2
memhog 32M
echo done
"#;
    let r = run_on(script, "default", &[]);
    let o = outputs(&r);
    assert_eq!(r.exit_status, 0, "{}", r.transcript);
    assert!(!r.transcript.contains("not supported") && !r.transcript.contains("command not found"), "{}", r.transcript);
    assert_eq!(o[0], "3\n", "1, 5, 10");
    assert_eq!(o[1], "8\n");
    assert_eq!(o[2], "Foo\nfoo bar\n");
    assert_eq!(o[3], "3\n");
    assert_eq!(o[4], "a 10\nb 2\nc 1\n");
    assert_eq!(o[8], "2 6\n");
    assert_eq!(o[r.commands.len() - 1], "done\n");
}

#[test]
fn output_to_a_closed_stdout_is_a_write_error() {
    let r = run("echo hi >&-\necho $?\nls / >&-\necho $?\necho data > f\ncat f 0<&-\necho $?\ncat f 2>&- >&-\necho $?\n");
    let o = outputs(&r);
    assert_eq!(o[0], "bash: echo: write error: Bad file descriptor\n");
    assert_eq!(o[1], "1\n");
    assert_eq!(o[2], "ls: write error: Bad file descriptor\n");
    assert_eq!(o[3], "2\n", "ls exits with LS_FAILURE");
    assert_eq!(o[5], "data\n", "closing stdin does not touch stdout");
    assert_eq!(o[6], "0\n");
    assert_eq!(o[7], "", "no stderr to report on");
    assert_eq!(o[8], "1\n");
}
