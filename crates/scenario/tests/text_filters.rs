//! The text tools against GNU coreutils 9, grep 3.8, sed 4.9 (and awk's common subset as
//! mawk 1.3.4 and gawk 5 print it): each case runs `cat input | COMMAND` in a scenario and
//! compares the output with what the real tool printed for the same input (LC_ALL=C).
//! Where mawk and gawk differ the expectation is gawk's (`print 2^31` is 2147483648 in gawk,
//! 2.14748e+09 in mawk).

use memtwin_scenario::RunOptions;

/// (command, input, expected output)
const CASES: &[(&str, &str, &str)] = &[
    ("grep x", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\ngamma 33 x\nDelta 5 x\n"),
    ("grep -v x", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "beta 2 y\nalpha 4 z\n\nbeta 2 y\n"),
    ("grep -c alpha", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "2\n"),
    ("grep -i delta", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "Delta 5 x\n"),
    ("grep -w beta", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "beta 2 y\nbeta 2 y\n"),
    ("grep -o '[0-9][0-9]*'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "10\n2\n33\n4\n5\n2\n"),
    ("grep -n a", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "1:alpha 10 x\n2:beta 2 y\n3:gamma 33 x\n4:alpha 4 z\n5:Delta 5 x\n7:beta 2 y\n"),
    ("grep -E 'Dirty|Writeback'", "MemTotal:        8000000 kB\nMemFree:         7000000 kB\nDirty:               128 kB\nWriteback:             0 kB\nWritebackTmp:          0 kB\n", "Dirty:               128 kB\nWriteback:             0 kB\nWritebackTmp:          0 kB\n"),
    ("grep 'Dirty\\|Writeback:'", "MemTotal:        8000000 kB\nMemFree:         7000000 kB\nDirty:               128 kB\nWriteback:             0 kB\nWritebackTmp:          0 kB\n", "Dirty:               128 kB\nWriteback:             0 kB\n"),
    ("grep -x 'beta 2 y'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "beta 2 y\nbeta 2 y\n"),
    ("grep -F 'a 1'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\n"),
    ("grep -E '^(alpha|gamma)'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\ngamma 33 x\nalpha 4 z\n"),
    ("grep -m 1 alpha", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\n"),
    ("grep -q alpha; echo $?", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "0\n"),
    ("grep nomatch; echo $?", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "1\n"),
    ("head -n 2", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\nbeta 2 y\n"),
    ("head -3", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\nbeta 2 y\ngamma 33 x\n"),
    ("head -c 7", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 1"),
    ("head -n -5", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\nbeta 2 y\n"),
    ("tail -n 2", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "\nbeta 2 y\n"),
    ("tail -2", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "\nbeta 2 y\n"),
    ("tail -n +6", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "\nbeta 2 y\n"),
    ("tail -c 5", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", " 2 y\n"),
    ("wc", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "      7      18      61\n"),
    ("wc -l", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "7\n"),
    ("wc -w", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "18\n"),
    ("wc -c", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "61\n"),
    ("wc -lw", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "      7      18\n"),
    ("sort", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "\nDelta 5 x\nalpha 10 x\nalpha 4 z\nbeta 2 y\nbeta 2 y\ngamma 33 x\n"),
    ("sort -r", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "gamma 33 x\nbeta 2 y\nbeta 2 y\nalpha 4 z\nalpha 10 x\nDelta 5 x\n\n"),
    ("sort -n -k2", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "\nbeta 2 y\nbeta 2 y\nalpha 4 z\nDelta 5 x\nalpha 10 x\ngamma 33 x\n"),
    ("sort -k2,2n -r", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "\nbeta 2 y\nbeta 2 y\nalpha 4 z\nDelta 5 x\nalpha 10 x\ngamma 33 x\n"),
    ("sort -u", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "\nDelta 5 x\nalpha 10 x\nalpha 4 z\nbeta 2 y\ngamma 33 x\n"),
    ("sort -t, -k2 -n", "name,size,kind\nfoo,10,a\nbar,200,b\nbaz,3,a\n", "name,size,kind\nbaz,3,a\nfoo,10,a\nbar,200,b\n"),
    ("sort -h", "10K a\n2M b\n512 c\n1G d\n3K e\n", "512 c\n3K e\n10K a\n2M b\n1G d\n"),
    ("sort -k3,3 -k1,1", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "\nDelta 5 x\nalpha 10 x\ngamma 33 x\nbeta 2 y\nbeta 2 y\nalpha 4 z\n"),
    ("sort | uniq -c", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "      1 \n      1 Delta 5 x\n      1 alpha 10 x\n      1 alpha 4 z\n      2 beta 2 y\n      1 gamma 33 x\n"),
    ("sort | uniq -d", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "beta 2 y\n"),
    ("uniq", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n"),
    ("sort | uniq -u", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "\nDelta 5 x\nalpha 10 x\nalpha 4 z\ngamma 33 x\n"),
    ("cut -d' ' -f1", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha\nbeta\ngamma\nalpha\nDelta\n\nbeta\n"),
    ("cut -d, -f1,3", "name,size,kind\nfoo,10,a\nbar,200,b\nbaz,3,a\n", "name,kind\nfoo,a\nbar,b\nbaz,a\n"),
    ("cut -c1-3", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alp\nbet\ngam\nalp\nDel\n\nbet\n"),
    ("cut -d' ' -f2-", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "10 x\n2 y\n33 x\n4 z\n5 x\n\n2 y\n"),
    ("cut -d, -f2 -s", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\nname,size,kind\nfoo,10,a\nbar,200,b\nbaz,3,a\n", "size\n10\n200\n3\n"),
    ("tr a-z A-Z", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "ALPHA 10 X\nBETA 2 Y\nGAMMA 33 X\nALPHA 4 Z\nDELTA 5 X\n\nBETA 2 Y\n"),
    ("tr -d ' '", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha10x\nbeta2y\ngamma33x\nalpha4z\nDelta5x\n\nbeta2y\n"),
    ("tr -s ' '", "a  b   c\n", "a b c\n"),
    ("tr '[:lower:]' '[:upper:]'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "ALPHA 10 X\nBETA 2 Y\nGAMMA 33 X\nALPHA 4 Z\nDELTA 5 X\n\nBETA 2 Y\n"),
    ("tr -d '\\n'", "a\nb\n", "ab"),
    ("tr ' ' '\\n'", "a b c\n", "a\nb\nc\n"),
    ("awk '{print $1}'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha\nbeta\ngamma\nalpha\nDelta\n\nbeta\n"),
    ("awk '{s += $2} END {print s}'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "56\n"),
    ("awk -F: '/Dirty/ {print $2}'", "MemTotal:        8000000 kB\nMemFree:         7000000 kB\nDirty:               128 kB\nWriteback:             0 kB\nWritebackTmp:          0 kB\n", "               128 kB\n"),
    ("awk '$2 > 4 {print $1, $2*2}'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 20\ngamma 66\nDelta 10\n"),
    ("awk '{n[$1]++} END {for (k in n) print k, n[k]}' | sort", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", " 1\nDelta 1\nalpha 2\nbeta 2\ngamma 1\n"),
    ("awk 'NR==2 || NR==4'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "beta 2 y\nalpha 4 z\n"),
    ("awk '{print NF}'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "3\n3\n3\n3\n3\n0\n3\n"),
    ("awk 'BEGIN {printf \"%-6s|%5.2f|%d\\n\", \"ab\", 3.14159, 42}'", "", "ab    | 3.14|42\n"),
    ("awk '/^Mem/ {printf \"%s %.1f GiB\\n\", $1, $2/1048576}'", "MemTotal:        8000000 kB\nMemFree:         7000000 kB\nDirty:               128 kB\nWriteback:             0 kB\nWritebackTmp:          0 kB\n", "MemTotal: 7.6 GiB\nMemFree: 6.7 GiB\n"),
    ("awk -F, 'NR>1 {t+=$2} END {print t/(NR-1)}'", "name,size,kind\nfoo,10,a\nbar,200,b\nbaz,3,a\n", "71\n"),
    ("awk '{ $2 = \"-\"; print }'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha - x\nbeta - y\ngamma - x\nalpha - z\nDelta - x\n -\nbeta - y\n"),
    ("awk 'length($1) > 4'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\ngamma 33 x\nalpha 4 z\nDelta 5 x\n"),
    ("awk '{print toupper(substr($1,1,1)) substr($1,2)}'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "Alpha\nBeta\nGamma\nAlpha\nDelta\n\nBeta\n"),
    ("awk 'BEGIN { x = 1/3; print x, 2^31, int(-3.7), 1e6, 100000000 }'", "", "0.333333 2147483648 -3 1000000 100000000\n"),
    ("sed -n 2p", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "beta 2 y\n"),
    ("sed 's/a/A/'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "Alpha 10 x\nbetA 2 y\ngAmma 33 x\nAlpha 4 z\nDeltA 5 x\n\nbetA 2 y\n"),
    ("sed 's/a/A/g'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "AlphA 10 x\nbetA 2 y\ngAmmA 33 x\nAlphA 4 z\nDeltA 5 x\n\nbetA 2 y\n"),
    ("sed '/^$/d'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\nbeta 2 y\n"),
    ("sed -n '/beta/p'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "beta 2 y\nbeta 2 y\n"),
    ("sed '2,4d'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\nDelta 5 x\n\nbeta 2 y\n"),
    ("sed -n '$p'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "beta 2 y\n"),
    ("sed 's/\\([a-z]*\\) \\([0-9]*\\)/\\2 \\1/'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "10 alpha x\n2 beta y\n33 gamma x\n4 alpha z\nD5 elta x\n\n2 beta y\n"),
    ("sed -E 's/([a-z]+) ([0-9]+)/\\2-\\1/'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "10-alpha x\n2-beta y\n33-gamma x\n4-alpha z\nD5-elta x\n\n2-beta y\n"),
    ("sed 3q", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\nbeta 2 y\ngamma 33 x\n"),
    ("sed -n '/alpha/,/gamma/p'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n"),
    ("sed 's/x$/[&]/'", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "alpha 10 [x]\nbeta 2 y\ngamma 33 [x]\nalpha 4 z\nDelta 5 [x]\n\nbeta 2 y\n"),
    ("seq 3", "", "1\n2\n3\n"),
    ("seq 2 5", "", "2\n3\n4\n5\n"),
    ("seq 0 2 10", "", "0\n2\n4\n6\n8\n10\n"),
    ("seq -w 8 11", "", "08\n09\n10\n11\n"),
    ("seq -s, 4", "", "1,2,3,4\n"),
    ("seq 1.5 0.5 3", "", "1.5\n2.0\n2.5\n3.0\n"),
    ("printf '%s=%d\\n' a 1 b 2", "", "a=1\nb=2\n"),
    ("printf '%5s|%-5s|%05.1f\\n' x y 3.14159", "", "    x|y    |003.1\n"),
    ("printf 'no newline'", "", "no newline"),
    ("printf '%x %o %c\\n' 255 8 hello", "", "ff 10 h\n"),
    ("echo -n hi; echo", "", "hi\n"),
    ("echo -e 'a\\tb\\nc'", "", "a\tb\nc\n"),
    ("echo a   b", "", "a b\n"),
    ("basename /usr/lib/file.txt .txt", "", "file\n"),
    ("dirname /usr/lib/file.txt", "", "/usr/lib\n"),
    ("basename /usr/lib/", "", "lib\n"),
    ("dirname file", "", ".\n"),
    ("xargs echo", "a b\nc\n", "a b c\n"),
    ("xargs -n 2 echo", "a b c d e\n", "a b\nc d\ne\n"),
    ("xargs -I{} echo item {}", "x\ny\n", "item x\nitem y\n"),
    ("tee /dev/null | wc -l", "alpha 10 x\nbeta 2 y\ngamma 33 x\nalpha 4 z\nDelta 5 x\n\nbeta 2 y\n", "7\n"),
];

#[test]
fn filters_match_gnu_output() {
    let mut script = String::new();
    for (n, (cmd, input, _)) in CASES.iter().enumerate() {
        if input.is_empty() {
            script.push_str(&format!(": > in{n}.txt\n"));
        } else {
            script.push_str(&format!("cat > in{n}.txt << 'END_OF_INPUT'\n{input}END_OF_INPUT\n"));
        }
        if cmd.contains(';') {
            script.push_str(&format!("cat in{n}.txt | {{ {cmd}; }}\n"));
        } else {
            script.push_str(&format!("cat in{n}.txt | {cmd}\n"));
        }
    }
    let r = memtwin_scenario::run(&RunOptions {
        script_path: Some("filters.sh".into()),
        script_text: Some(script),
        machine: "seed-000".into(),
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.commands.len(), 2 * CASES.len(), "one record per command");
    let mut failures = Vec::new();
    for (n, (cmd, input, want)) in CASES.iter().enumerate() {
        let rec = &r.commands[2 * n + 1];
        let got = &r.transcript[rec.output_start..rec.output_end];
        if got != *want {
            failures.push(format!("{cmd:?} on {input:?}:\n  want {want:?}\n  got  {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}

/// grep over several files names each line's file, /proc and /sys files included (GNU grep:
/// `FILE:line`; `-c` gives `FILE:count`).
#[test]
fn grep_names_proc_and_sys_files_it_reads() {
    let r = memtwin_scenario::run(&RunOptions {
        script_path: Some("g.sh".into()),
        script_text: Some(
            "grep . /proc/sys/vm/swappiness /proc/sys/vm/dirty_ratio\ncd /proc/sys/vm\ngrep -c . swappiness dirty_ratio\necho 5 | grep . - /proc/sys/vm/swappiness\n".into(),
        ),
        machine: "default".into(),
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let t = &r.transcript;
    assert!(t.contains("\n/proc/sys/vm/swappiness:60\n/proc/sys/vm/dirty_ratio:20\n"), "{t}");
    assert!(t.contains("\nswappiness:1\ndirty_ratio:1\n"), "{t}");
    assert!(t.contains("\n(standard input):5\n/proc/sys/vm/swappiness:60\n"), "{t}");
}
