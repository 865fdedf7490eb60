//! Fuzz-style property tests: `parse` never panics, and its errors and spans point inside
//! the input.

use memtwin_scenario::lang::*;
use proptest::prelude::*;

/// Highest line number a position in `src` can have (the end of input counts).
fn max_line(src: &str) -> u32 {
    u32::try_from(src.matches('\n').count() + 1).unwrap_or(u32::MAX)
}

/// Characters on 1-based line `line` of `src`, without the newline.
fn line_len(src: &str, line: u32) -> u32 {
    let text = src.split('\n').nth(line as usize - 1).unwrap_or("");
    u32::try_from(text.chars().count()).unwrap_or(u32::MAX)
}

fn check_span(src: &str, span: Span, what: &str) -> Result<(), TestCaseError> {
    prop_assert!(span.line >= 1 && span.line <= max_line(src), "{what} line {} out of range", span.line);
    prop_assert!(span.col >= 1 && span.col <= line_len(src, span.line) + 1, "{what} col {} out of range", span.col);
    Ok(())
}

fn check_word(src: &str, w: &Word) -> Result<(), TestCaseError> {
    check_span(src, w.span, "word")
}

fn check_list(src: &str, items: &[ListItem]) -> Result<(), TestCaseError> {
    // An explicit stack: the tree can be MAX_NESTING deep.
    let mut stack: Vec<&[ListItem]> = vec![items];
    while let Some(items) = stack.pop() {
        for item in items {
            check_span(src, item.span, "list item")?;
            let pipes = std::iter::once(&item.and_or.first).chain(item.and_or.rest.iter().map(|(_, p)| p));
            for p in pipes {
                check_span(src, p.span, "pipeline")?;
                prop_assert!(!p.commands.is_empty());
                prop_assert!(src.contains(p.source.as_str()), "pipeline source {:?} not in the input", p.source);
                for cmd in &p.commands {
                    check_span(src, cmd.span(), "command")?;
                    match cmd {
                        Command::Simple(c) => {
                            prop_assert!(src.contains(c.source.as_str()));
                            prop_assert!(!(c.assignments.is_empty() && c.words.is_empty() && c.redirects.is_empty()));
                            for (name, w) in &c.assignments {
                                prop_assert!(!name.is_empty());
                                check_word(src, w)?;
                            }
                            for w in &c.words {
                                check_word(src, w)?;
                            }
                            for r in &c.redirects {
                                check_span(src, r.span, "redirect")?;
                                check_word(src, &r.target)?;
                                prop_assert!(r.fd <= 9);
                            }
                        }
                        Command::For(f) => {
                            for w in &f.words {
                                check_word(src, w)?;
                            }
                            prop_assert!(!f.body.is_empty());
                            stack.push(&f.body);
                        }
                        Command::If(i) => {
                            prop_assert!(!i.branches.is_empty());
                            for (cond, body) in &i.branches {
                                stack.push(cond);
                                stack.push(body);
                            }
                            if let Some(e) = &i.else_body {
                                stack.push(e);
                            }
                        }
                        Command::ArithFor(f) => {
                            prop_assert!(!f.body.is_empty());
                            stack.push(&f.body);
                        }
                        Command::While(w) => {
                            prop_assert!(!w.cond.is_empty() && !w.body.is_empty());
                            stack.push(&w.cond);
                            stack.push(&w.body);
                        }
                        Command::Case(c) => {
                            check_word(src, &c.word)?;
                            for (pats, body) in &c.arms {
                                prop_assert!(!pats.is_empty());
                                for p in pats {
                                    check_word(src, p)?;
                                }
                                stack.push(body);
                            }
                        }
                        Command::Group(g) => {
                            prop_assert!(!g.body.is_empty());
                            stack.push(&g.body);
                        }
                        Command::FuncDef(f) => {
                            prop_assert!(!f.name.is_empty());
                            check_span(src, f.body.span(), "function body")?;
                        }
                        Command::Arith(a) => prop_assert!(src.contains(a.expr.as_str())),
                    }
                    for r in cmd.redirects() {
                        check_span(src, r.span, "redirect")?;
                        prop_assert!(r.fd <= 9);
                    }
                }
            }
        }
    }
    Ok(())
}

/// A here-document delimiter with a substitution in it is refused, at the '<<', before the
/// tokenizer (brush-parser 0.4.0 allocated without bound on these, found by
/// grammar_token_soup); a here-string of a substitution and a shift in arithmetic are not
/// delimiters.
#[test]
fn a_here_document_delimiter_with_a_substitution_is_refused() {
    for src in ["<<E$( <F;#", "x <<E$( <<E;x;# c", "[ <<-'EOF'$( <<-'EOF';{1..3};# commentfi", "cat <<`x`\nx\n", "cat <<${A}\n"] {
        let e = parse(src).expect_err(src);
        assert!(e.message.contains("here-document delimiter"), "{src}: {e}");
    }
    let e = parse("echo a\ncat <<E$(\n").unwrap_err();
    assert_eq!((e.line, e.col), (2, 5), "{e}");
    for src in ["cat <<< $(echo x)\n", "echo $((1<<2))\n", "echo '<<E$('\n", "echo \"a <<E\"\n", "# <<E$(\n", "cat <<EOF\n$(x)\nEOF\n"] {
        assert!(parse(src).is_ok(), "{src}: {:?}", parse(src));
    }
}

fn check(src: &str) -> Result<(), TestCaseError> {
    let result = parse(src);
    match &result {
        Ok(script) => check_list(src, &script.items)?,
        Err(e) => {
            check_span(src, e.span(), "error")?;
            prop_assert!(!e.message.is_empty());
            let prefix = format!("{}:{}: ", e.line, e.col);
            prop_assert!(e.to_string().starts_with(&prefix));
        }
    }
    // Deterministic.
    prop_assert_eq!(parse(src), result.clone());
    // Reporting every error: the first is `parse`'s, all point inside the input, in order.
    match (parse_all(src), result) {
        (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
        (Err(all), Err(first)) => {
            prop_assert!(!all.is_empty());
            prop_assert_eq!(&all[0], &first);
            for e in &all {
                check_span(src, e.span(), "error")?;
            }
            for w in all.windows(2) {
                prop_assert!(w[0].span() <= w[1].span(), "errors out of order: {} then {}", w[0], w[1]);
            }
        }
        (a, b) => prop_assert!(false, "parse_all {:?} disagrees with parse {:?}", a.is_ok(), b.is_ok()),
    }
    Ok(())
}

/// Tokens of the grammar, valid and not.
const TOKENS: &[&str] = &[
    "echo",
    "dd",
    "if=/dev/zero",
    "of=test",
    "bs=1M",
    "x",
    "A=1",
    "B=\"a b\"",
    "C=",
    "$A",
    "${B}",
    "$?",
    "\"$A\"",
    "'lit'",
    "\"dq\"",
    "\"",
    "'",
    "\\",
    "\\\n",
    "$",
    "${",
    "}",
    "{",
    "$(",
    "$((",
    "))",
    "{1..3}",
    "{a,b}",
    "{9223372036854775807..-9223372036854775808}",
    "<<EOF",
    "<<-'EOF'",
    "EOF",
    "${#A}",
    "$!",
    "$@",
    "`",
    "$$",
    "$1",
    "#",
    "# comment",
    ";",
    ";;",
    "&",
    "&&",
    "|",
    "||",
    "|&",
    ">",
    ">>",
    "<",
    "<<",
    "<<<",
    ">&",
    "&>",
    "&>>",
    "<&",
    "2>",
    "2>&1",
    ">&2",
    "1>",
    "9>",
    "10>",
    ">&-",
    "(",
    ")",
    "((",
    "for",
    "in",
    "do",
    "done",
    "if",
    "then",
    "elif",
    "else",
    "fi",
    "while",
    "until",
    "case",
    "esac",
    "time",
    "-p",
    "!",
    "[[",
    "]]",
    "[",
    "]",
    "function",
    "f()",
    "set",
    "-e",
    "\n",
    "\r\n",
    "\t",
    " ",
    "é",
    "\u{feff}",
    "\0",
    "~",
    "*",
    "=",
    "--",
];

fn token_soup(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec((prop::sample::select(TOKENS), prop::sample::select(&[" ", "", "\n", ";"][..])), 0..max)
        .prop_map(|toks| toks.into_iter().flat_map(|(t, sep)| [t, sep]).collect())
}

/// Well-formed fragments, so that deep and long inputs also reach the parser's later stages.
const FRAGMENTS: &[&str] = &[
    "for i in 1 2; do ",
    "done; ",
    "done\n",
    "if true; then ",
    "elif false; then ",
    "else ",
    "fi\n",
    "fi; ",
    "echo $i > f 2>&1; ",
    "time -p cp a b | cat && ",
    "x || ",
    "sleep 1 &\n",
    "A=1 B=$A\n",
    "\n",
    "# c\n",
    "while [ $i -lt 3 ]; do ",
    "until false; do ",
    "case $x in a|b) ",
    "*) ",
    ";; ",
    "esac\n",
    "f() { ",
    "function g { ",
    "}\n",
    "( ",
    ") ",
    "{ ",
    "echo $(echo $((1 + 2)) {1..3}) | grep -c 1; ",
    "cat <<EOF\nhi $x\nEOF\n",
    "(( i += 1 ))\n",
    "[[ $a == b* && -n $c ]]; ",
];

fn fragment_soup(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..max).prop_map(|f| f.concat())
}

/// Simple commands that are valid on their own.
const SIMPLE: &[&str] = &[
    "echo hi",
    "dd if=/dev/zero of=\"$F\" bs=1M count=8 2>&1",
    "A=1",
    "X=\"a b\" cmd $X '$lit'",
    "sync",
    "cat < in >> out",
    "vmstat 1 5 > v.log",
    "set -e",
    "echo ${A}x \"$?\" >&2",
    "cmd &> all",
    "echo $(date) \"$((1 + 2))\" {1..3}",
    "cat <<< \"x $y\"",
    "[[ $a == b* ]]",
    "(( i++ ))",
    "read -r line",
    "grep -E 'a|b' f | wc -l",
];

/// Whole valid scripts, built from the grammar (nested for/if, pipelines, and-or lists).
fn valid_script() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(SIMPLE).prop_map(str::to_string);
    let cmd = leaf.prop_recursive(6, 64, 4, |inner| {
        let list = prop::collection::vec((inner.clone(), prop::sample::select(&["; ", "\n", " &\n", " & "][..])), 1..4)
            .prop_map(|items| items.into_iter().map(|(c, sep)| c + sep).collect::<String>());
        prop_oneof![
            (list.clone(), prop::collection::vec("[a-z0-9]{1,3}", 0..4), any::<bool>()).prop_map(
                |(body, words, ml)| {
                    let sep = if ml { "\n" } else { "; " };
                    format!("for v in {}{sep}do {body}\ndone", words.join(" "))
                }
            ),
            (list.clone(), list.clone(), prop::option::of(list.clone())).prop_map(|(c, b, e)| {
                let e = e.map(|e| format!("else {e}")).unwrap_or_default();
                format!("if {c}then {b}{e}fi")
            }),
            (inner.clone(), inner.clone(), prop::sample::select(&[" | ", " && ", " ||\n "][..]))
                .prop_map(|(a, b, op)| format!("{a}{op}{b}")),
            (list.clone(), list.clone(), any::<bool>()).prop_map(|(c, b, until)| {
                format!("{} {c}do {b}done", if until { "until" } else { "while" })
            }),
            (list.clone(), list.clone()).prop_map(|(a, b)| format!("case $x in\n a|b) {a};;\n *) {b};;\nesac")),
            list.clone().prop_map(|b| format!("f() {{ {b}}}")),
            list.clone().prop_map(|b| format!("( {b})")),
        ]
    });
    let timed = (cmd, any::<bool>()).prop_map(|(c, t)| if t { format!("time -p {c}") } else { c });
    prop::collection::vec(timed, 0..6).prop_map(|cmds| cmds.join("\n# comment\n"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings(src in any::<String>()) {
        check(&src)?;
    }

    #[test]
    fn arbitrary_bytes_lossy(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn shell_like_chars(src in "[ a-z0-9=$'\"\\\\{}()#;&|<>!\n\t`*-]{0,200}") {
        check(&src)?;
    }

    #[test]
    fn grammar_token_soup(src in token_soup(64)) {
        check(&src)?;
    }

    #[test]
    fn fragment_soup_is_well_behaved(src in fragment_soup(64)) {
        check(&src)?;
    }

    #[test]
    fn generated_valid_scripts_parse(src in valid_script()) {
        let parsed = parse(&src);
        prop_assert!(parsed.is_ok(), "{:?}: {:?}", src, parsed);
        check(&src)?;
    }

    #[test]
    fn mutated_valid_scripts(src in valid_script(), cut in any::<prop::sample::Index>(), len in 0usize..8,
                             insert in prop::sample::select(TOKENS)) {
        // Delete a few characters somewhere and insert a grammar token there.
        let chars: Vec<char> = src.chars().collect();
        let at = if chars.is_empty() { 0 } else { cut.index(chars.len()) };
        let end = (at + len).min(chars.len());
        let mutated: String = chars[..at].iter().copied().chain(insert.chars()).chain(chars[end..].iter().copied()).collect();
        check(&mutated)?;
    }

    #[test]
    fn deep_nesting(
        depth in 0usize..200,
        opener in prop::sample::select(&["for i in 1; do ", "if a; then ", "(", "{ ", "$(", "\"$(", "${", "if for i in 1; do "][..]),
        closer in prop::sample::select(&["done; ", "fi; ", ")", "; }", ""][..]),
        middle in token_soup(8),
    ) {
        let src = opener.repeat(depth) + &middle + &closer.repeat(depth);
        check(&src)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn long_inputs(src in token_soup(5_000), frags in fragment_soup(5_000)) {
        check(&src)?;
        check(&frags)?;
    }
}

#[test]
fn properly_closed_fragment_nesting_parses() {
    let src = "for i in 1; do if a; then ".repeat(MAX_NESTING / 2) + "x" + &"; fi; done".repeat(MAX_NESTING / 2);
    assert!(parse(&src).is_ok());
}

#[test]
fn positions_after_a_line_continuation_point_inside() {
    // `NAME\<newline>X=value`: the value's position is on the second line.
    let src = "x; syn\\\nA=1 &\ncat";
    check(src).unwrap();
    let script = parse(src).unwrap();
    let Command::Simple(c) = &script.items[1].and_or.first.commands[0] else { panic!("not a simple command") };
    assert_eq!(c.assignments[0].0, "synA");
    assert_eq!(c.assignments[0].1.span, Span { line: 2, col: 3 });
    // `1\<newline>> f`: bash reads `1> f`; the descriptor is on the first line.
    let src = "vmstat 1\\\n> v.log &\necho";
    check(src).unwrap();
    let script = parse(src).unwrap();
    let Command::Simple(c) = &script.items[0].and_or.first.commands[0] else { panic!("not a simple command") };
    assert_eq!(c.redirects[0].fd, 1);
    assert_eq!(c.redirects[0].span, Span { line: 1, col: 8 });
}
