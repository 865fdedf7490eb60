//! The scenario language parser: constructs, spans, errors, expansion.

use memtwin_scenario::lang::*;

fn ok(src: &str) -> Script {
    match parse(src) {
        Ok(s) => s,
        Err(e) => panic!("parse failed for {src:?}: {e}"),
    }
}

fn err(src: &str) -> ParseError {
    match parse(src) {
        Ok(s) => panic!("expected an error for {src:?}, got {s:?}"),
        Err(e) => e,
    }
}

fn no_vars(_: &str) -> Option<String> {
    None
}

/// The literal words of a simple command.
fn argv(cmd: &Command) -> Vec<String> {
    match cmd {
        Command::Simple(c) => expand_words(&c.words, &no_vars),
        other => panic!("not a simple command: {other:?}"),
    }
}

fn simple(cmd: &Command) -> &SimpleCommand {
    match cmd {
        Command::Simple(c) => c,
        other => panic!("not a simple command: {other:?}"),
    }
}

fn first_cmd(item: &ListItem) -> &Command {
    &item.and_or.first.commands[0]
}

fn lit(w: &Word) -> String {
    w.as_literal().unwrap_or_else(|| panic!("not literal: {w:?}"))
}

const REALISTIC: &str = "# seed 000
swapoff -a && swapon -a
echo 1 > /proc/sys/vm/drop_caches
vmstat 1 45 > vmstat.log &
time dd if=/dev/zero of=test bs=1M count=512
sleep 30; wait
for i in 1 2 3; do dd if=test of=/dev/null bs=1M count=512 2>&1; done
";

#[test]
fn realistic_script() {
    let s = ok(REALISTIC);
    assert_eq!(s.items.len(), 7);

    // swapoff -a && swapon -a
    let it = &s.items[0];
    assert_eq!(it.span, Span::new(2, 1));
    assert!(!it.background);
    assert_eq!(argv(first_cmd(it)), vec!["swapoff", "-a"]);
    assert_eq!(it.and_or.rest.len(), 1);
    assert_eq!(it.and_or.rest[0].0, Connector::And);
    assert_eq!(argv(&it.and_or.rest[0].1.commands[0]), vec!["swapon", "-a"]);
    assert_eq!(it.and_or.rest[0].1.span, Span::new(2, 15));
    assert_eq!(it.and_or.first.source, "swapoff -a");
    assert_eq!(it.and_or.rest[0].1.source, "swapon -a");

    // echo 1 > /proc/sys/vm/drop_caches
    let c = simple(first_cmd(&s.items[1]));
    assert_eq!(argv(first_cmd(&s.items[1])), vec!["echo", "1"]);
    assert_eq!(c.redirects.len(), 1);
    assert_eq!(c.redirects[0].fd, 1);
    assert_eq!(c.redirects[0].op, RedirOp::Out);
    assert_eq!(lit(&c.redirects[0].target), "/proc/sys/vm/drop_caches");
    assert_eq!(c.redirects[0].span, Span::new(3, 8));
    assert_eq!(c.redirects[0].target.span, Span::new(3, 10));
    assert_eq!(c.source, "echo 1 > /proc/sys/vm/drop_caches");

    // vmstat 1 45 > vmstat.log &
    let it = &s.items[2];
    assert!(it.background);
    assert_eq!(it.span, Span::new(4, 1));
    assert_eq!(argv(first_cmd(it)), vec!["vmstat", "1", "45"]);
    assert_eq!(lit(&simple(first_cmd(it)).redirects[0].target), "vmstat.log");
    assert_eq!(it.and_or.first.source, "vmstat 1 45 > vmstat.log");

    // time dd ...
    let p = &s.items[3].and_or.first;
    assert!(p.timed);
    assert!(!p.time_posix);
    assert_eq!(p.span, Span::new(5, 1));
    assert_eq!(p.commands[0].span(), Span::new(5, 6));
    assert_eq!(argv(&p.commands[0]), vec!["dd", "if=/dev/zero", "of=test", "bs=1M", "count=512"]);
    assert_eq!(p.source, "time dd if=/dev/zero of=test bs=1M count=512");
    assert_eq!(simple(&p.commands[0]).source, "dd if=/dev/zero of=test bs=1M count=512");

    // sleep 30; wait
    assert_eq!(argv(first_cmd(&s.items[4])), vec!["sleep", "30"]);
    assert_eq!(argv(first_cmd(&s.items[5])), vec!["wait"]);
    assert_eq!(s.items[5].span, Span::new(6, 11));

    // for i in 1 2 3; do dd ... 2>&1; done
    let it = &s.items[6];
    let Command::For(f) = first_cmd(it) else { panic!("not a for loop") };
    assert_eq!(f.var, "i");
    assert_eq!(f.span, Span::new(7, 1));
    assert_eq!(expand_words(&f.words, &no_vars), vec!["1", "2", "3"]);
    assert_eq!(f.body.len(), 1);
    let dd = simple(first_cmd(&f.body[0]));
    assert_eq!(dd.span, Span::new(7, 20));
    assert_eq!(dd.redirects.len(), 1);
    assert_eq!((dd.redirects[0].fd, dd.redirects[0].op), (2, RedirOp::DupOut));
    assert_eq!(lit(&dd.redirects[0].target), "1");
    assert_eq!(it.and_or.first.source, "for i in 1 2 3; do dd if=test of=/dev/null bs=1M count=512 2>&1; done");
}

#[test]
fn empty_and_comment_only_scripts() {
    assert!(ok("").items.is_empty());
    assert!(ok("\n\n  \n# only a comment\n\t# another\n").items.is_empty());
    assert!(ok("#!/bin/sh\n").items.is_empty());
}

#[test]
fn lists_and_connectors() {
    let s = ok("a; b & c\nd && e || f\n");
    let bg: Vec<bool> = s.items.iter().map(|i| i.background).collect();
    assert_eq!(bg, vec![false, true, false, false]);
    let ao = &s.items[3].and_or;
    let conns: Vec<Connector> = ao.rest.iter().map(|(c, _)| *c).collect();
    assert_eq!(conns, vec![Connector::And, Connector::Or]);
    // Newlines are allowed after && || and |.
    let s = ok("a &&\n\n b ||\n c |\n d");
    assert_eq!(s.items.len(), 1);
    assert_eq!(s.items[0].and_or.rest.len(), 2);
    assert_eq!(s.items[0].and_or.rest[1].1.commands.len(), 2);
    assert_eq!(s.items[0].and_or.rest[1].1.commands[1].span(), Span::new(5, 2));
    // Trailing ; and & with nothing after.
    assert_eq!(ok("a;").items.len(), 1);
    assert!(ok("a &").items[0].background);
    assert_eq!(ok("a & b &").items.iter().filter(|i| i.background).count(), 2);
}

#[test]
fn pipelines() {
    let s = ok("cat f | grep x | wc -l > n");
    let p = &s.items[0].and_or.first;
    assert_eq!(p.commands.len(), 3);
    assert_eq!(argv(&p.commands[1]), vec!["grep", "x"]);
    assert_eq!(p.commands[2].span(), Span::new(1, 18));
    assert_eq!(p.source, "cat f | grep x | wc -l > n");
    assert_eq!(simple(&p.commands[2]).source, "wc -l > n");
    let s = ok("time -p cp a b | cat");
    let p = &s.items[0].and_or.first;
    assert!(p.timed && p.time_posix);
    assert_eq!(p.commands.len(), 2);
    assert_eq!(argv(&p.commands[0]), vec!["cp", "a", "b"]);
    assert_eq!(p.source, "time -p cp a b | cat");
    let s = ok("time -- true && time false");
    assert!(s.items[0].and_or.first.timed);
    assert!(s.items[0].and_or.rest[0].1.timed);
    // /usr/bin/time is an ordinary command.
    let s = ok("/usr/bin/time -v dd if=a of=b");
    assert!(!s.items[0].and_or.first.timed);
    assert_eq!(argv(first_cmd(&s.items[0]))[..2], ["/usr/bin/time", "-v"]);
}

#[test]
fn redirections() {
    let s = ok("cmd >o >>a <i 2>e 2>&1 >&2 &>both 0<in 9>nine 1> sp");
    let c = simple(first_cmd(&s.items[0]));
    let got: Vec<(u32, RedirOp, String)> = c.redirects.iter().map(|r| (r.fd, r.op, lit(&r.target))).collect();
    assert_eq!(
        got,
        vec![
            (1, RedirOp::Out, "o".into()),
            (1, RedirOp::Append, "a".into()),
            (0, RedirOp::In, "i".into()),
            (2, RedirOp::Out, "e".into()),
            (2, RedirOp::DupOut, "1".into()),
            (1, RedirOp::DupOut, "2".into()),
            (1, RedirOp::OutErr, "both".into()),
            (0, RedirOp::In, "in".into()),
            (9, RedirOp::Out, "nine".into()),
            (1, RedirOp::Out, "sp".into()),
        ]
    );
    assert_eq!(argv(first_cmd(&s.items[0])), vec!["cmd"]);
    // Spans: of the fd digit when there is one.
    let cols: Vec<u32> = c.redirects.iter().map(|r| r.span.col).collect();
    assert_eq!(cols, vec![5, 8, 12, 15, 19, 24, 28, 35, 40, 47]);
    // With or without a space, anywhere in the command.
    let s = ok("> out echo 2 > x hi 2 >y");
    let c = simple(first_cmd(&s.items[0]));
    assert_eq!(argv(first_cmd(&s.items[0])), vec!["echo", "2", "hi", "2"]);
    assert_eq!(c.redirects.len(), 3);
    assert!(c.redirects.iter().all(|r| r.fd == 1));
    // `>& file` is `&> file`; quoted and variable targets.
    let s = ok("cmd >& log 2> \"$DIR/err log\"");
    let c = simple(first_cmd(&s.items[0]));
    assert_eq!(c.redirects[0].op, RedirOp::OutErr);
    let lookup = |n: &str| (n == "DIR").then(|| "/tmp".to_string());
    assert_eq!(c.redirects[1].target.expand(&lookup), "/tmp/err log");
    // A digit right after `>&` or `>` is the target even when a `>` follows (bash does the same).
    let s = ok("cmd 2>&1>/dev/null");
    let c = simple(first_cmd(&s.items[0]));
    let got: Vec<(u32, RedirOp, String)> = c.redirects.iter().map(|r| (r.fd, r.op, lit(&r.target))).collect();
    assert_eq!(got, vec![(2, RedirOp::DupOut, "1".into()), (1, RedirOp::Out, "/dev/null".into())]);
    assert_eq!(c.redirects[0].target.span, Span::new(1, 8));
    // `>|` is a plain `>`.
    assert_eq!(simple(first_cmd(&ok("a >| f").items[0])).redirects[0].op, RedirOp::Out);
    // A command made only of redirections.
    let s = ok("> empty");
    let c = simple(first_cmd(&s.items[0]));
    assert!(c.words.is_empty() && c.redirects.len() == 1);
}

#[test]
fn assignments() {
    let s = ok("A=1\nB=\"x y\" C='' cmd D=2\nE=$A${B}");
    let c = simple(first_cmd(&s.items[0]));
    assert_eq!(c.assignments.len(), 1);
    assert_eq!(c.assignments[0].0, "A");
    assert_eq!(lit(&c.assignments[0].1), "1");
    assert_eq!(c.assignments[0].1.span, Span::new(1, 3));
    assert!(c.words.is_empty());

    let c = simple(first_cmd(&s.items[1]));
    let names: Vec<&str> = c.assignments.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["B", "C"]);
    assert_eq!(c.assignments[0].1.expand(&no_vars), "x y");
    assert_eq!(c.assignments[1].1.expand(&no_vars), "");
    // After the command name, NAME=value is an ordinary argument.
    assert_eq!(argv(first_cmd(&s.items[1])), vec!["cmd", "D=2"]);

    let c = simple(first_cmd(&s.items[2]));
    assert_eq!(c.assignments[0].1.parts, vec![WordPart::Var("A".into()), WordPart::Var("B".into())]);
    // Not assignments: quoted or invalid names.
    let s = ok("\"A\"=1 1A=2 a-b=3");
    let c = simple(first_cmd(&s.items[0]));
    assert!(c.assignments.is_empty());
    assert_eq!(argv(first_cmd(&s.items[0])), vec!["A=1", "1A=2", "a-b=3"]);
}

#[test]
fn expansion_with_quoting() {
    let s = ok(r#"echo $X "$X" '$X' \$X "${X}y" pre$X ${Y}post "" $UNSET "$UNSET" "a\"b\\c\$d" $? "$?""#);
    let lookup = |n: &str| match n {
        "X" => Some("1  2".to_string()),
        "Y" => Some("y".to_string()),
        "?" => Some("3".to_string()),
        _ => None,
    };
    let Command::Simple(c) = first_cmd(&s.items[0]) else { panic!() };
    assert_eq!(
        expand_words(&c.words, &lookup),
        vec!["echo", "1", "2", "1  2", "$X", "$X", "1  2y", "pre1", "2", "ypost", "", "", "a\"b\\c$d", "3", "3"]
    );
}

#[test]
fn for_loops() {
    let src = "# header\n\nfor f in a \"b c\" $LIST\ndo\n  echo $f\n  sync\ndone\necho after\n";
    let s = ok(src);
    assert_eq!(s.items.len(), 2);
    let Command::For(f) = first_cmd(&s.items[0]) else { panic!() };
    assert_eq!(f.span, Span::new(3, 1));
    assert_eq!(s.items[0].span, Span::new(3, 1));
    assert_eq!(f.var, "f");
    let lookup = |n: &str| (n == "LIST").then(|| "x y".to_string());
    assert_eq!(expand_words(&f.words, &lookup), vec!["a", "b c", "x", "y"]);
    assert_eq!(f.body.len(), 2);
    assert_eq!(f.body[0].span, Span::new(5, 3));
    assert_eq!(f.body[1].span, Span::new(6, 3));
    assert_eq!(s.items[1].span, Span::new(8, 1));
    assert_eq!(s.items[0].and_or.first.source, "for f in a \"b c\" $LIST\ndo\n  echo $f\n  sync\ndone");
    // `do` on the same line, empty word list, keywords as loop words.
    let s = ok("for x in; do true; done");
    let Command::For(f) = first_cmd(&s.items[0]) else { panic!() };
    assert!(f.words.is_empty());
    let s = ok("for x in do done if fi; do echo $x; done");
    let Command::For(f) = first_cmd(&s.items[0]) else { panic!() };
    assert_eq!(f.words.len(), 4);
    // Nested, in a pipeline, backgrounded, and-or'ed.
    let s = ok("for a in 1; do for b in 2; do echo $a$b & done; done | cat && echo ok &");
    let it = &s.items[0];
    assert!(it.background);
    assert_eq!(it.and_or.first.commands.len(), 2);
    let Command::For(outer) = first_cmd(it) else { panic!() };
    let Command::For(inner) = first_cmd(&outer.body[0]) else { panic!() };
    assert!(inner.body[0].background);
}

#[test]
fn if_clauses() {
    let src = "if [ -f x ]; then\n  echo yes\nelif test -d x\nthen echo dir; echo 2\nelse\n  echo no\nfi\n";
    let s = ok(src);
    let Command::If(c) = first_cmd(&s.items[0]) else { panic!() };
    assert_eq!(c.span, Span::new(1, 1));
    assert_eq!(c.branches.len(), 2);
    assert_eq!(argv(first_cmd(&c.branches[0].0[0])), vec!["[", "-f", "x", "]"]);
    assert_eq!(argv(first_cmd(&c.branches[0].1[0])), vec!["echo", "yes"]);
    assert_eq!(c.branches[1].0[0].span, Span::new(3, 6));
    assert_eq!(c.branches[1].1.len(), 2);
    let else_body = c.else_body.as_ref().unwrap();
    assert_eq!(else_body[0].span, Span::new(6, 3));
    // Reserved words are only special in command position.
    let s = ok("if true; then echo fi then; fi");
    let Command::If(c) = first_cmd(&s.items[0]) else { panic!() };
    assert_eq!(argv(first_cmd(&c.branches[0].1[0])), vec!["echo", "fi", "then"]);
    assert!(c.else_body.is_none());
    // if inside for inside if, `done fi` on one line.
    let s = ok("if a; then for i in 1; do if b; then c; fi; done fi");
    assert_eq!(s.items.len(), 1);
    // `&&` after fi.
    let s = ok("if a; then b; fi && echo done");
    assert_eq!(s.items[0].and_or.rest.len(), 1);
}

#[test]
fn set_e_is_an_ordinary_command() {
    let s = ok("set -e\nset +e\n");
    assert_eq!(argv(first_cmd(&s.items[0])), vec!["set", "-e"]);
    assert_eq!(argv(first_cmd(&s.items[1])), vec!["set", "+e"]);
}

#[test]
fn spans_after_comments_and_continuations() {
    let src = "# comment\n  # indented comment\n\ndd if=/dev/zero \\\n   of=out \\\n   bs=1M   # trailing\necho \"multi\nline\" next\n\t last\n";
    let s = ok(src);
    assert_eq!(s.items.len(), 3);
    let c = simple(first_cmd(&s.items[0]));
    assert_eq!(c.span, Span::new(4, 1));
    let spans: Vec<Span> = c.words.iter().map(|w| w.span).collect();
    assert_eq!(spans, vec![Span::new(4, 1), Span::new(4, 4), Span::new(5, 4), Span::new(6, 4)]);
    assert_eq!(argv(first_cmd(&s.items[0])), vec!["dd", "if=/dev/zero", "of=out", "bs=1M"]);
    assert_eq!(c.source, "dd if=/dev/zero \\\n   of=out \\\n   bs=1M");
    let c = simple(first_cmd(&s.items[1]));
    assert_eq!(c.span, Span::new(7, 1));
    assert_eq!(c.words[2].span, Span::new(8, 7));
    assert_eq!(argv(first_cmd(&s.items[1])), vec!["echo", "multi\nline", "next"]);
    assert_eq!(s.items[2].span, Span::new(9, 3));
    // CRLF line ends.
    let s = ok("a 1\r\nfor i in 1 2\r\ndo\r\n  b $i\r\ndone\r\n");
    assert_eq!(argv(first_cmd(&s.items[0])), vec!["a", "1"]);
    let Command::For(f) = first_cmd(&s.items[1]) else { panic!() };
    assert_eq!(expand_words(&f.words, &no_vars), vec!["1", "2"]);
    assert_eq!(f.body[0].span, Span::new(4, 3));
}

#[test]
fn error_display_is_line_col_message() {
    let e = err("echo ok\ncoproc x");
    assert_eq!(e.to_string(), format!("2:1: {}", e.message));
    assert_eq!(e.span(), Span::new(2, 1));
}

/// (script, line, col, part of the message)
const ERRORS: &[(&str, u32, u32, &str)] = &[
    ("coproc cat", 1, 1, "'coproc'"),
    ("echo ${!X:-y}", 1, 6, "an operator on an indirect expansion"),
    ("echo ~+", 1, 6, "tilde expansions"),
    ("echo 'a'\necho b'c\nd", 2, 7, "unterminated single quote (opened here)"),
    ("x=1\necho \"abc\n\ndef", 2, 6, "unterminated double quote (opened here)"),
    ("echo ${X", 1, 6, "unterminated '${'"),
    ("for i in 1 2; do\n  echo $i\n", 3, 1, "expected 'done' to close the 'for' started at line 1, found end of input"),
    ("\n\nfor i in 1 2; do echo; fi", 3, 24, "expected 'done' to close the 'for' started at line 3, found 'fi'"),
    ("for i in 1 2\necho $i\ndone", 3, 1, "expected 'do' after the word list of the 'for' started at line 1"),
    ("for i in 1; do done", 1, 16, "expected a command after 'do', found 'done'"),
    ("for 1x in a; do b; done", 1, 5, "not a valid variable name"),
    ("for i; do b; done", 1, 6, "without 'in WORDS' is not supported"),
    ("for i do b; done", 1, 7, "without 'in WORDS' is not supported"),
    ("for i in a > b; do c; done", 1, 12, "syntax error near unexpected token '>'"),
    ("if true; then\n  x\n", 3, 1, "expected 'fi' to close the 'if' started at line 1, found end of input"),
    ("if true; then x; else y; done", 1, 26, "expected 'fi' to close the 'if' started at line 1, found 'done'"),
    ("if true\nx\nfi", 3, 1, "expected 'then' after the condition of the 'if' started at line 1"),
    ("if then x; fi", 1, 4, "expected a condition after 'if'"),
    ("if a; then fi", 1, 12, "expected a command after 'then'"),
    ("echo\ndone", 2, 1, "unexpected 'done' (there is no open loop)"),
    ("fi", 1, 1, "unexpected 'fi' (there is no open 'if')"),
    ("a\n; b", 2, 1, "syntax error near unexpected token ';'"),
    ("a ;; b", 1, 3, "';;'"),
    ("a && ; b", 1, 6, "syntax error near unexpected token ';'"),
    ("a ||", 1, 5, "found end of input"),
    ("a |\n\n", 3, 1, "found end of input"),
    ("a && done", 1, 6, "expected a command after '&&', found 'done'"),
    ("& a", 1, 1, "syntax error near unexpected token '&'"),
    ("a & ; b", 1, 5, "syntax error near unexpected token ';'"),
    ("a | time b", 1, 5, "'time' is only accepted at the start of a pipeline"),
    ("time", 1, 5, "expected a command after 'time', found end of input"),
    ("time -v dd", 1, 6, "'time' accepts only -p"),
    ("echo >", 1, 7, "found end of input"),
    ("echo > ; x", 1, 8, "syntax error near unexpected token ';'"),
    ("echo 2>&x", 1, 9, "'>&' must be followed by a file descriptor number 0-9"),
    ("echo 10>f", 1, 6, "file descriptor 10 is out of range"),
    ("cat <&x", 1, 7, "'<&' must be followed by a file descriptor number"),
    ("tee >(a)", 1, 5, "output process substitution"),
    ("for i in 1; do x; done extra", 1, 24, "syntax error near unexpected token 'extra'"),
    ("echo (x)", 1, 6, "unexpected '('"),
    ("a )", 1, 3, "')'"),
    ("echo $'x\\n'", 1, 6, "ANSI-C quoting"),
    ("while true; do x; od", 1, 21, "expected 'done' to close the 'while' started at line 1"),
    ("case x in\n a b) c;;\nesac", 2, 4, "syntax error near unexpected token 'b'"),
    ("f() x", 1, 5, "syntax error near unexpected token 'x'"),
    ("echo $(( 1 + 2 )", 1, 6, "unterminated '$(('"),
    ("{ a; b", 1, 7, "expected '}' to close the '{' started at line 1"),
    ("( a", 1, 4, "expected ')' to close the '(' started at line 1"),
    ("echo $(for)", 1, 11, "expected 'done' to close the 'for' started at line 1"),
];

#[test]
fn unsupported_constructs_and_syntax_errors() {
    let mut failures = Vec::new();
    for &(src, line, col, what) in ERRORS {
        match parse(src) {
            Ok(s) => failures.push(format!("{src:?}: parsed OK: {s:?}")),
            Err(e) => {
                if (e.line, e.col) != (line, col) || !e.message.contains(what) {
                    failures.push(format!("{src:?}: got {e}, want {line}:{col}: ...{what}..."));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn first_error_in_source_order_wins() {
    // The parser error on line 1 comes before the lexical error on line 2.
    let e = err("coproc y\necho 'open");
    assert_eq!(e.line, 1);
    let e = err("echo 'open\nwhile x; do y; done");
    assert_eq!((e.line, e.message.contains("single quote")), (1, true));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let n = 10_000;
    let src = "for i in 1; do ".repeat(n) + "x" + &"; done".repeat(n);
    let e = err(&src);
    assert!(e.message.contains("nested too deeply"), "{e}");
    assert_eq!(e.line, 1);
    let src = "if a; then\n".repeat(n);
    let e = err(&src);
    assert_eq!(e.line, MAX_NESTING as u32 + 1);
    for src in ["(".repeat(n), "{ ".repeat(n), "$(".repeat(n), "\"$(".repeat(n), "${".repeat(n), "'".repeat(n + 1)] {
        assert!(parse(&src).is_err());
    }
    let ok_src = "if a; then ".repeat(MAX_NESTING) + "b" + &"; fi".repeat(MAX_NESTING);
    ok(&ok_src);
}

#[test]
fn subshells_and_cases_nest_to_a_lower_limit() {
    // Both are parsed twice when what is inside them fails: the limit keeps a syntax error
    // under them from costing 2^depth.
    let n = MAX_BACKTRACK_NESTING;
    for (open, close) in [("( ", " )"), ("case a in a) ", ";; esac")] {
        let ok_src = open.repeat(n) + "x" + &close.repeat(n);
        ok(&ok_src);
        // One more level, with a syntax error under it: refused at the opener that is too deep.
        let src = open.repeat(n + 1) + "x >;" + &close.repeat(n + 1);
        let e = err(&src);
        assert!(e.message.contains("subshells and 'case' statements are nested too deeply"), "{e}");
        assert_eq!((e.line, e.col as usize), (1, open.len() * n + 1), "{src}");
    }
    // The two count together; other blocks between them do not.
    let src = "( if a; then case a in a) ".repeat(n / 2) + "( x )" + &";; esac; fi )".repeat(n / 2);
    assert!(err(&src).message.contains("nested too deeply"));
    let src = "( if a; then case a in a) ".repeat(n / 2 - 1) + "( x )" + &";; esac; fi )".repeat(n / 2 - 1);
    ok(&src);
}

#[test]
fn long_inputs() {
    let line = "dd if=/dev/zero of=\"f $X\" bs=1M count=1 2>&1 | cat > /dev/null &\n";
    let src = line.repeat(20_000);
    let s = ok(&src);
    assert_eq!(s.items.len(), 20_000);
    assert_eq!(s.items[19_999].span, Span::new(20_000, 1));
    let long_word = "a".repeat(1_000_000);
    let s = ok(&format!("echo {long_word}"));
    assert_eq!(argv(first_cmd(&s.items[0]))[1].len(), 1_000_000);
}

/// The argv of every top-level command, with `|` between pipeline members and the
/// connectors, as the script's commands are run: what the parser must never get wrong.
fn commands_of(src: &str) -> Vec<String> {
    let s = ok(src);
    let pipe = |p: &Pipeline| {
        p.commands
            .iter()
            .map(|c| match c {
                Command::Simple(c) => {
                    let mut v = expand_words(&c.words, &no_vars);
                    for r in &c.redirects {
                        let t = r.target.expand(&no_vars);
                        v.push(format!("{}{:?}{}", r.fd, r.op, t.replace('\n', "\\n")));
                    }
                    v.join(" ")
                }
                other => format!("<{:?}>", std::mem::discriminant(other)),
            })
            .collect::<Vec<_>>()
            .join(" | ")
    };
    s.items
        .iter()
        .map(|it| {
            let mut line = pipe(&it.and_or.first);
            for (c, p) in &it.and_or.rest {
                line.push_str(if *c == Connector::And { " && " } else { " || " });
                line.push_str(&pipe(p));
            }
            if it.background {
                line.push_str(" &");
            }
            line
        })
        .collect()
}

#[test]
fn multi_line_shapes_parse_into_the_commands_written() {
    // A three-command pipeline, then a command with a here-document on the next line: two
    // commands (tree-sitter-bash 0.25.1 joined them into one pipeline).
    assert_eq!(
        commands_of("grep -v x /proc/meminfo | sort | head -3\ncat > f << 'E'\nline $X\nE\necho done\n"),
        vec!["grep -v x /proc/meminfo | sort | head -3", "cat 1Out\"f\" 0HereDoc\"line $X\\n\"", "echo done"]
            .iter()
            .map(|s| s.replace('"', ""))
            .collect::<Vec<_>>()
    );
    // A here-document after a pipeline member, and after the last one.
    assert_eq!(
        commands_of("cat <<E | grep a\nabc\nE\nwc -l <<-T\n\tx\n\tT\nseq 3\n"),
        vec!["cat 0HereDocabc\\n | grep a", "wc -l 0HereDocx\\n", "seq 3"]
    );
    assert_eq!(commands_of("a | b | c <<E\nbody\nE\nd\n"), vec!["a | b | c 0HereDocbody\\n", "d"]);
    // Two here-documents on one line.
    assert_eq!(commands_of("cat <<A <<B\n1\nA\n2\nB\nz\n"), vec!["cat 0HereDoc1\\n 0HereDoc2\\n", "z"]);
    // Line continuations, inside a word too, and the echoed text as written.
    let src = "dd if=/dev/zero \\\n  of=out \\\n  bs=1M # comment\nec\\\nho x\\\ny\n";
    assert_eq!(commands_of(src), vec!["dd if=/dev/zero of=out bs=1M", "echo xy"]);
    assert_eq!(ok(src).items[0].and_or.first.source, "dd if=/dev/zero \\\n  of=out \\\n  bs=1M");
    assert_eq!(ok(src).items[1].span, Span::new(4, 1));
    // && and || at the end of a line continue the list; a newline after a command ends it.
    assert_eq!(commands_of("a &&\n  b ||\n\n  c\nd\n"), vec!["a && b || c", "d"]);
    assert_eq!(commands_of("a |\n b\nc &\nd"), vec!["a | b", "c &", "d"]);
    // Comments: whole lines, after commands, `#` inside a word is not one.
    assert_eq!(commands_of("# x | y\necho a#b # c && d\n  # e\necho '#' \"#\" \\# f\n"), vec!["echo a#b", "echo # # # f"]);
    // Blocks with redirections and a command after them on the next line.
    assert_eq!(commands_of("for i in 1; do echo $i; done > f\ncat f | wc -l\n").len(), 2);
    assert_eq!(commands_of("if true; then\n  echo y\nfi | cat\necho z\n").len(), 2);
    // The commands of a block are those written in it.
    let s = ok("while read l; do\n  echo \"$l\" | tr a b\n  n=1\ndone < f\necho end\n");
    let Command::While(w) = first_cmd(&s.items[0]) else { panic!("not a while loop") };
    assert_eq!(w.body.len(), 2);
    assert_eq!(w.body[0].and_or.first.commands.len(), 2);
    assert_eq!(w.redirects.len(), 1);
}

#[test]
fn every_syntax_error_is_reported_and_parsing_resumes_after_it() {
    let e = parse_all("echo a |\necho ok\nfi\nfor i in 1; do x; done\nwhile true; do y; od\necho fine\ncase\n").unwrap_err();
    let at: Vec<(u32, u32)> = e.iter().map(|e| (e.line, e.col)).collect();
    assert!(at.contains(&(3, 1)), "{e:?}");
    assert!(at.iter().any(|&(l, _)| l >= 5), "errors after the first are reported: {e:?}");
    assert!(at.windows(2).all(|w| w[0] < w[1]), "in order: {e:?}");
    // An unterminated quote ends the scan; the errors before it are still reported.
    let e = parse_all("fi\necho ok\necho 'open\n").unwrap_err();
    assert_eq!(e.len(), 2, "{e:?}");
    assert_eq!((e[0].line, e[1].line), (1, 3));
}

#[test]
fn new_expansions_parse() {
    let s = ok("echo ~ ~/x `date` ${X:-y} ${X:=y} ${X:+y} ${X:?m} ${#X} ${X#p} ${X##p} ${X%p} ${X%%p} ${X/a/b} *.txt \"*.txt\"\na=(x 'y z')\na[1]=z\necho ${a[@]} \"${a[@]}\" ${#a[@]} ${a[i]}\nfor ((i=0; i<3; i++)); do echo $i; done\n");
    let c = simple(first_cmd(&s.items[0]));
    assert_eq!(c.words[1].parts, vec![WordPart::QuotedVar("HOME".into())]);
    assert_eq!(c.words[2].parts, vec![WordPart::QuotedVar("HOME".into()), WordPart::Lit("/x".into())]);
    assert!(matches!(c.words[3].parts[0], WordPart::CmdSubst { .. }));
    assert!(c.words[4..14].iter().all(|w| matches!(w.parts[0], WordPart::Param { .. } | WordPart::Var(_))), "{:?}", &c.words[4..14]);
    assert_eq!(c.words[8].parts, vec![WordPart::Var("#X".into())]);
    assert_eq!(c.words[14].parts, vec![WordPart::Glob("*.txt".into())]);
    assert_eq!(c.words[15].parts, vec![WordPart::Lit("*.txt".into())]);
    let a = simple(first_cmd(&s.items[1]));
    assert!(matches!(&a.assignments[0].1.parts[0], WordPart::Array(w) if w.len() == 2));
    assert_eq!(simple(first_cmd(&s.items[2])).assignments[0].0, "a[1]");
    let e = simple(first_cmd(&s.items[3]));
    assert_eq!(e.words[1].parts, vec![WordPart::ArrayAll { name: "a".into(), quoted: false }]);
    assert_eq!(e.words[2].parts, vec![WordPart::ArrayAll { name: "a".into(), quoted: true }]);
    assert_eq!(e.words[3].parts, vec![WordPart::Var("#a[@]".into())]);
    assert_eq!(e.words[4].parts, vec![WordPart::Var("a[i]".into())]);
    let Command::ArithFor(f) = first_cmd(&s.items[4]) else { panic!("not a C-style for") };
    assert_eq!((f.init.as_str(), f.cond.as_str(), f.step.as_str()), ("i=0", "i<3", "i++"));
}
