//! From tree-sitter-bash's syntax tree to the scenario AST ([`super::ast`]).
//!
//! tree-sitter parses the whole script and recovers from errors (ERROR and MISSING nodes),
//! so every syntax error of a script is found in one pass. This module turns the concrete
//! tree into the AST the interpreter runs, refuses what the interpreter does not model
//! (each refusal names what is supported), and reports positions as line:column.
//!
//! Every node of the tree carries its byte range: a command's echoed text is the slice of
//! the script it spans (here-document bodies left out, as the shell echoes the command line).

use super::ast::*;
use super::{ParseError, MAX_NESTING};
use tree_sitter::Node;

/// What the language accepts, quoted in error messages about unsupported constructs.
pub(crate) const SUPPORTED: &str =
    "supported: for, while, until, if, case, functions, { ...; }, ( ... ), (( ... )), [[ ... ]], !, &&, ||, ;, &, |, redirections";
const SUPPORTED_REDIRECTS: &str =
    "supported: > file, >> file, < file, 2> file, 2>&1, >&2, &> file, &>> file, << EOF, <<< word";
/// What the `$` expansions accept.
pub(crate) const SUPPORTED_EXPANSIONS: &str =
    "supported: $NAME, ${NAME}, ${#NAME}, ${NAME:-x}, ${NAME:=x}, ${NAME:+x}, ${NAME#pat}, ${NAME%pat}, ${NAME/pat/rep}, ${NAME:off:len}, ${a[i]}, ${a[@]}, ${#a[@]}, $?, $!, $$, $#, $1..$9, $@, $(...), `...`, $((...)), {1..3}, {a,b}, ~";

/// Reserved words that close a block, with what an unexpected one means.
fn closer_why(w: &str) -> Option<&'static str> {
    Some(match w {
        "do" | "done" => "there is no open loop",
        "then" | "elif" | "else" | "fi" => "there is no open 'if'",
        "esac" => "there is no open 'case'",
        "}" => "there is no open '{'",
        ")" => "there is no open '('",
        _ => return None,
    })
}

pub(crate) fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Short, one-line rendering of source text for messages.
fn excerpt(raw: &str) -> String {
    let first_line = raw.lines().next().unwrap_or("");
    let mut out: String = first_line.chars().take(40).collect();
    if out.len() < raw.len() {
        out.push_str("...");
    }
    out
}

/// Most syntax errors reported for one script.
const MAX_ERRORS: usize = 100;

/// Parse `src` with tree-sitter-bash and convert it; every error, in source order.
///
/// tree-sitter's error recovery may fold the rest of a script into one ERROR node, so after
/// the first syntax error the script is parsed again from the next line (the lines before
/// blanked out, positions unchanged) until no error is left.
pub(crate) fn parse_all(src: &str) -> Result<Script, Vec<ParseError>> {
    let mut parser = tree_sitter::Parser::new();
    let fail = |m: &str| vec![ParseError::new(Span::new(1, 1), m)];
    if parser.set_language(&tree_sitter_bash::LANGUAGE.into()).is_err() {
        return Err(fail("the bash grammar could not be loaded"));
    }
    let (text, timed) = mask_time(&mut parser, src);
    let (items, syntax, mut errors) = match parse_once(&mut parser, src, &text, &timed, true) {
        Some(r) => r,
        None => return Err(fail("the script could not be parsed")),
    };
    if syntax.is_empty() && errors.is_empty() {
        return Ok(Script { items });
    }
    let mut first = syntax.iter().min_by_key(|e| (e.line, e.col)).cloned();
    let mut masked = text;
    while let Some(e) = first.take() {
        errors.push(e.clone());
        if errors.len() >= MAX_ERRORS {
            break;
        }
        // Blank out everything up to the end of the error's line.
        let Some(off) = line_start(&masked, e.line as usize + 1) else { break };
        masked = masked[..off].chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect::<String>() + &masked[off..];
        if let Some((_, syn, _)) = parse_once(&mut parser, &masked, &masked, &timed, false) {
            first = syn.into_iter().filter(|x| x.line > e.line).min_by_key(|x| (x.line, x.col));
        }
    }
    errors.sort_by_key(|e| (e.line, e.col));
    // One report per position: a construct refused by the converter inside a syntax error
    // is the same problem.
    errors.dedup_by(|b, a| (a.line, a.col) == (b.line, b.col));
    Err(errors)
}

/// Byte offset where 1-based `line` starts, if the text has it.
fn line_start(src: &str, line: usize) -> Option<usize> {
    if line <= 1 {
        return Some(0);
    }
    src.match_indices('\n').nth(line - 2).map(|(i, _)| i + 1)
}

/// `time [-p] [--]` before a compound command (`time for ...`, `time { ...; }`): bash's
/// `time` is a reserved word, tree-sitter-bash reads it as a command name. Such prefixes are
/// blanked out of the text tree-sitter reads (byte offsets unchanged) and given back to the
/// pipeline that starts after them: (start of `time`, start of the command, `-p`).
fn mask_time(parser: &mut tree_sitter::Parser, src: &str) -> (String, Vec<(usize, usize, bool)>) {
    let mut text = src.to_string();
    let mut timed: Vec<(usize, usize, bool)> = Vec::new();
    if !src.contains("time") {
        return (text, timed);
    }
    for _ in 0..8 {
        let Some(tree) = parser.parse(&text, None) else { break };
        let mut found = Vec::new();
        let mut cursor = tree.walk();
        let mut descend = true;
        loop {
            let n = cursor.node();
            if descend && n.kind() == "command" && n.child_by_field_name("name").is_some_and(|c| text.get(c.byte_range()) == Some("time")) {
                let mut posix = false;
                let mut cmd_at = None;
                let mut decided = false;
                let mut c2 = n.walk();
                for (i, a) in n.children(&mut c2).enumerate() {
                    if n.field_name_for_child(i as u32) != Some("argument") || decided {
                        continue;
                    }
                    match text.get(a.byte_range()) {
                        Some("-p") => posix = true,
                        Some("--") => {}
                        Some(w) => {
                            decided = true;
                            if is_compound_start(w) {
                                cmd_at = Some(a.start_byte());
                            }
                        }
                        None => decided = true,
                    }
                }
                if !decided {
                    let rest = &text[n.end_byte()..];
                    let line = rest.split('\n').next().unwrap_or("");
                    let next = line.trim_start().split(|c: char| c.is_whitespace() || c == ';').next().unwrap_or("");
                    if is_compound_start(next) {
                        cmd_at = Some(n.end_byte() + (line.len() - line.trim_start().len()));
                    }
                }
                if let Some(cmd_at) = cmd_at {
                    found.push((n.start_byte(), cmd_at, cmd_at, posix));
                }
            }
            if descend && cursor.goto_first_child() {
                continue;
            }
            descend = true;
            if cursor.goto_next_sibling() {
                continue;
            }
            loop {
                if !cursor.goto_parent() {
                    break;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
            }
            if cursor.node() == tree.root_node() {
                break;
            }
        }
        if found.is_empty() {
            break;
        }
        let mut bytes = std::mem::take(&mut text).into_bytes();
        for &(a, b, cmd_at, posix) in &found {
            for x in &mut bytes[a..b] {
                if *x != b'\n' {
                    *x = b' ';
                }
            }
            timed.push((a, cmd_at, posix));
        }
        text = String::from_utf8(bytes).unwrap_or_else(|_| src.to_string());
    }
    (text, timed)
}

/// One parse of `text` (`src` with `time` prefixes blanked out): the converted items (if
/// `convert`), the syntax errors, the converter's errors.
fn parse_once(
    parser: &mut tree_sitter::Parser,
    src: &str,
    text: &str,
    timed: &[(usize, usize, bool)],
    convert: bool,
) -> Option<(Vec<ListItem>, Vec<ParseError>, Vec<ParseError>)> {
    let tree = parser.parse(text, None)?;
    let mut cv = Conv { src, lines: LineIndex::new(src), errors: Vec::new(), depth: 0, timed };
    let root = tree.root_node();
    cv.syntax_errors(root);
    let syntax = std::mem::take(&mut cv.errors);
    let items = if convert && !root.is_error() { cv.list(root) } else { Vec::new() };
    Some((items, syntax, cv.errors))
}

/// Byte offset to 1-based line and column (characters).
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(src: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(src.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    fn span(&self, src: &str, byte: usize) -> Span {
        let byte = byte.min(src.len());
        let line = self.starts.partition_point(|&s| s <= byte).max(1);
        let start = self.starts[line - 1];
        let col = src.get(start..byte).map_or(byte - start, |s| s.chars().count()) + 1;
        Span::new(u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(col).unwrap_or(u32::MAX))
    }
}

/// A piece of a word before quote removal is finished.
enum Piece {
    /// Unquoted source text: backslash escapes, braces, `~` and glob characters are live.
    Unq(String),
    /// Quoted text: literal.
    Quoted(String),
    /// An expansion.
    Part(WordPart),
}

struct Conv<'a> {
    src: &'a str,
    lines: LineIndex,
    errors: Vec<ParseError>,
    /// Nesting of blocks and substitutions being converted.
    depth: usize,
    /// `time` prefixes blanked out before parsing (see [`mask_time`]).
    timed: &'a [(usize, usize, bool)],
}

impl<'a> Conv<'a> {
    fn text(&self, n: Node) -> &'a str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    fn span(&self, n: Node) -> Span {
        self.lines.span(self.src, n.start_byte())
    }

    fn span_at(&self, byte: usize) -> Span {
        self.lines.span(self.src, byte)
    }

    fn error(&mut self, n: Node, msg: impl Into<String>) {
        let span = self.span(n);
        self.errors.push(ParseError::new(span, msg));
    }

    fn unsupported(&mut self, n: Node, what: impl std::fmt::Display) {
        self.error(n, format!("{what} ({SUPPORTED})"));
    }

    // ---- syntax errors -------------------------------------------------------------

    /// Report every ERROR and MISSING node (not the ones inside an ERROR node).
    fn syntax_errors(&mut self, root: Node) {
        if !root.has_error() {
            return;
        }
        let mut cursor = root.walk();
        let mut descend = true;
        loop {
            let n = cursor.node();
            if descend {
                if n.is_error() {
                    self.error_node(n);
                } else if n.is_missing() {
                    self.missing_node(n);
                } else if n.has_error() && cursor.goto_first_child() {
                    continue;
                }
            }
            if cursor.goto_next_sibling() {
                descend = true;
                continue;
            }
            if !cursor.goto_parent() {
                break;
            }
            descend = false;
        }
    }

    /// The first leaf of `n` that is not a comment.
    fn first_leaf<'t>(n: Node<'t>) -> Node<'t> {
        let mut cur = n;
        while let Some(c) = cur.child(0) {
            cur = c;
        }
        cur
    }

    /// The block keyword that opens the construct `n` belongs to, with its position.
    fn opener(&self, n: Node) -> Option<(&'static str, u32)> {
        let mut cur = Some(n);
        while let Some(c) = cur {
            let kw = match c.kind() {
                "for_statement" | "c_style_for_statement" => "for",
                "while_statement" => {
                    if self.text(c).starts_with("until") {
                        "until"
                    } else {
                        "while"
                    }
                }
                "if_statement" => "if",
                "case_statement" => "case",
                "compound_statement" => "{",
                "subshell" => "(",
                _ => {
                    cur = c.parent();
                    continue;
                }
            };
            return Some((kw, self.span(c).line));
        }
        None
    }

    fn missing_node(&mut self, n: Node) {
        let kind = n.kind();
        let at = self.span(n);
        let msg = match (kind, self.opener(n)) {
            ("done", Some((kw, line))) => format!("expected 'done' to close the '{kw}' started at line {line}"),
            ("fi", Some((_, line))) => format!("expected 'fi' to close the 'if' started at line {line}"),
            ("then", Some((_, line))) => format!("expected 'then' after the condition of the 'if' started at line {line}"),
            ("do", Some((kw, line))) => format!("expected 'do' after the head of the '{kw}' started at line {line}"),
            ("esac", Some((_, line))) => format!("expected 'esac' to close the 'case' started at line {line}"),
            ("}", Some((_, line))) => format!("expected '}}' to close the '{{' started at line {line}"),
            (")", Some((_, line))) => format!("expected ')' to close the '(' started at line {line}"),
            ("\"", _) => "unterminated double quote; a double-quoted string ends at the next unescaped \"".to_string(),
            ("'", _) => "unterminated single quote; a single-quoted string ends at the next '".to_string(),
            ("))", _) => "unterminated '((' (expected '))')".to_string(),
            (k, _) => {
                let before = self.src[..n.start_byte()].trim_end();
                match ["&&", "||", "|&", "|"].iter().find(|op| before.ends_with(*op)) {
                    Some(op) => format!("expected a command after '{op}'"),
                    None if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => "expected a command here".to_string(),
                    None => format!("expected '{k}'"),
                }
            }
        };
        let rest = self.src.get(n.end_byte()..).unwrap_or("");
        let msg = if rest.trim().is_empty() {
            format!("{msg}, found end of input")
        } else {
            match self.next_token(n.end_byte()) {
                Some((_, t)) => format!("{msg}, found '{}'", excerpt(t)),
                None => msg,
            }
        };
        self.errors.push(ParseError::new(at, msg));
    }

    fn error_node(&mut self, n: Node) {
        if let Some((at, msg)) = self.unbalanced(n) {
            self.errors.push(ParseError::new(self.span_at(at), msg));
            return;
        }
        let leaf = Self::first_leaf(n);
        let tok = self.text(leaf);
        let at = leaf.start_byte();
        let line_end = self.src[at..].find('\n').map_or(self.src.len(), |i| at + i);
        let rest = &self.src[at..line_end];
        let next = self.next_token(n.end_byte());
        let ntext = self.text(n);
        let msg = if let Some(i) = ntext.find(";&") {
            let op = if ntext[..i].ends_with(';') { ";;&" } else { ";&" };
            let at = n.start_byte() + i - usize::from(op.len() == 3);
            self.errors.push(ParseError::new(self.span_at(at), format!("'{op}' in 'case' is not supported (end each pattern's commands with ';;'; {SUPPORTED})")));
            return;
        } else if let Some(why) = closer_why(tok) {
            format!("unexpected '{tok}' ({why})")
        } else if tok.starts_with('\'') && !self.src[at + 1..].contains('\'') {
            "unterminated single quote (opened here); a single-quoted string ends at the next '".to_string()
        } else if tok.starts_with('"') && !self.src[at + 1..].contains('"') {
            "unterminated double quote (opened here); a double-quoted string ends at the next unescaped \"".to_string()
        } else if tok == "${" || rest.starts_with("${") {
            "unterminated '${' (opened here); write ${NAME}".to_string()
        } else if tok == "$((" || rest.starts_with("$((") {
            "unterminated '$((' (expected '))')".to_string()
        } else if tok == "$(" || rest.starts_with("$(") {
            "unterminated '$(' (no closing ')')".to_string()
        } else if tok == "select" {
            format!("'select' loops are not supported ({SUPPORTED})")
        } else if matches!(tok, ">" | ">>" | "<" | ">&" | "&>" | "&>>" | ">|") {
            let found = next.map_or("end of input".to_string(), |(_, t)| format!("'{}'", excerpt(t)));
            let what = if tok == ">&" { "a file descriptor number" } else { "a file name" };
            let at = next.map_or(self.src.trim_end().len(), |(b, _)| b);
            self.errors.push(ParseError::new(self.span_at(at), format!("expected {what} after '{tok}', found {found} ({SUPPORTED_REDIRECTS})")));
            return;
        } else if n.parent().is_some_and(|p| p.kind() == "for_statement") {
            let line = n.parent().map_or(1, |p| self.span(p).line);
            format!("unexpected '{}' in the word list of the 'for' started at line {line} (expected words, then ';' or a newline, then 'do')", excerpt(tok))
        } else if n.parent().is_some_and(|p| p.kind() == "case_statement" || p.kind() == "case_item") {
            let line = n.parent().map_or(1, |p| self.span(p).line);
            format!("expected '|' or ')' after a pattern of the 'case' started at line {line}, found '{}'", excerpt(tok))
        } else if matches!(tok, ";" | ";;" | "&" | "&&" | "||" | "|" | "|&" | ";&" | ";;&") {
            match after_op(self.src, at) {
                Some(op) => format!("expected a command after '{op}', found '{tok}'"),
                None => format!("expected a command, found '{tok}' ({SUPPORTED})"),
            }
        } else if tok == "(" && is_name(self.src[..at].trim_end().rsplit(char::is_whitespace).next().unwrap_or("")) && rest.starts_with("()") {
            let name = self.src[..at].trim_end().rsplit(char::is_whitespace).next().unwrap_or("");
            let body_at = self.next_token(at + 2).map_or(at + 2, |x| x.0);
            self.errors.push(ParseError::new(self.span_at(body_at), format!("expected '{{' to start the body of function '{name}'")));
            return;
        } else if matches!(tok, "(" | "<(" | ">(") {
            format!("unexpected '{tok}' (quote it as '(' to pass it as an argument; {SUPPORTED})")
        } else if tok.is_empty() {
            format!("syntax error ({SUPPORTED})")
        } else if n.named_child_count() > 0 && (0..n.named_child_count()).all(|i| n.named_child(i).is_some_and(|c| is_statement(c.kind()) && !c.has_error())) {
            if let Some((b, t)) = next {
                self.errors.push(ParseError::new(
                    self.span_at(b),
                    format!("unexpected '{}' after the end of a command (expected ';', '&', '&&', '||', '|' or a newline)", excerpt(t)),
                ));
                return;
            }
            format!("syntax error near '{}' ({SUPPORTED})", excerpt(tok))
        } else {
            format!("syntax error near '{}' ({SUPPORTED})", excerpt(tok))
        };
        self.errors.push(ParseError::new(self.span_at(at), msg));
    }

    /// The next blank-separated token at or after byte `from`.
    fn next_token(&self, from: usize) -> Option<(usize, &'a str)> {
        let rest = self.src.get(from..)?;
        let skip = rest.len() - rest.trim_start().len();
        let t = rest.trim_start();
        if t.is_empty() {
            return None;
        }
        let len = t.find(char::is_whitespace).unwrap_or(t.len());
        Some((from + skip, &t[..len]))
    }

    /// Block keywords that do not match inside an ERROR node: the position and message.
    fn unbalanced(&self, n: Node) -> Option<(usize, String)> {
        // (keyword, line, what comes next, tokens seen since the keyword, saw 'in')
        let mut stack: Vec<(&str, u32, &str, usize, bool)> = Vec::new();
        let mut toks: Vec<Node> = Vec::new();
        let mut cursor = n.walk();
        for c in n.children(&mut cursor) {
            if c.kind() == "ERROR" {
                let mut cur = c.walk();
                toks.extend(c.children(&mut cur));
            } else {
                toks.push(c);
            }
        }
        for c in toks {
            let t = self.text(c);
            let kw = !c.is_named() || c.kind() == "word";
            let line = self.span(c).line;
            if let Some(top) = stack.last_mut() {
                top.3 += 1;
                if t == "in" && !c.is_named() {
                    top.4 = true;
                }
            }
            if !kw {
                continue;
            }
            match t {
                "for" | "while" | "until" | "select" if !c.is_named() => stack.push((t, line, "do", 0, false)),
                "if" if !c.is_named() => stack.push((t, line, "then", 0, false)),
                "case" if !c.is_named() => stack.push((t, line, "esac", 0, false)),
                "{" if !c.is_named() => stack.push((t, line, "}", 0, false)),
                "do" | "then" | "done" | "fi" | "esac" | "}" | "elif" | "else" => {
                    let Some(top) = stack.last_mut() else {
                        let why = closer_why(t).unwrap_or("expected a command");
                        return Some((c.start_byte(), format!("unexpected '{t}' ({why})")));
                    };
                    let (open, oline, want) = (top.0, top.1, top.2);
                    let ok = t == want || (want == "fi" && matches!(t, "elif" | "else")) || (want == "then" && false);
                    if (t == "then" || t == "do") && ok && top.3 <= 1 {
                        return Some((c.start_byte(), format!("expected a condition after '{open}'")));
                    }
                    if t == "do" && ok && open == "for" && !top.4 {
                        return Some((c.start_byte(), "'for NAME' without 'in WORDS' is not supported (write 'for NAME in WORDS; do ...; done')".to_string()));
                    }
                    if !ok {
                        let what = match want {
                            "do" => format!("expected 'do' after the head of the '{open}' started at line {oline}"),
                            "then" => format!("expected 'then' after the condition of the 'if' started at line {oline}"),
                            "fi" => format!("expected 'elif', 'else' or 'fi' to close the 'if' started at line {oline}"),
                            w => format!("expected '{w}' to close the '{open}' started at line {oline}"),
                        };
                        return Some((c.start_byte(), format!("{what}, found '{t}'")));
                    }
                    match t {
                        "do" => top.2 = "done",
                        "then" | "elif" => top.2 = if t == "then" { "fi" } else { "then" },
                        "else" => top.2 = "fi",
                        _ => {
                            stack.pop();
                        }
                    }
                }
                _ => {}
            }
        }
        let (open, oline, want, _, _) = stack.last()?;
        let rest = self.src.get(n.end_byte()..).unwrap_or("");
        let what = match *want {
            "do" => format!("expected 'do' after the head of the '{open}' started at line {oline}"),
            "then" => format!("expected 'then' after the condition of the 'if' started at line {oline}"),
            "fi" => format!("expected 'elif', 'else' or 'fi' to close the 'if' started at line {oline}"),
            w => format!("expected '{w}' to close the '{open}' started at line {oline}"),
        };
        if rest.trim().is_empty() {
            return Some((self.src.trim_end().len(), format!("{what}, found end of input")));
        }
        let (b, t) = self.next_token(n.end_byte())?;
        Some((b, format!("{what}, found '{}'", excerpt(t))))
    }

    // ---- lists and statements ------------------------------------------------------

    /// The statements among `n`'s children (a program, a `do` group, a block body).
    fn list(&mut self, n: Node) -> Vec<ListItem> {
        let mut items = Vec::new();
        let mut cursor = n.walk();
        let children: Vec<Node> = n.children(&mut cursor).collect();
        let mut i = 0;
        while i < children.len() {
            let c = children[i];
            i += 1;
            if matches!(c.kind(), ";;" | ";&" | ";;&") {
                let t = self.text(c);
                self.error(c, format!("unexpected '{t}' (it ends a 'case' pattern's commands; {SUPPORTED})"));
                continue;
            }
            if !c.is_named() || c.is_error() || c.is_missing() || !is_statement(c.kind()) {
                continue;
            }
            let background = children.get(i).is_some_and(|s| s.kind() == "&");
            if let Some(and_or) = self.and_or(c) {
                items.push(ListItem { and_or, background, span: self.span(c) });
            }
        }
        items
    }

    /// The statements of a block body: the named children of `n` after the `after`-th
    /// child and before a child of kind `stop`.
    fn body_between(&mut self, n: Node, from: usize, stop: &[&str]) -> Vec<ListItem> {
        let mut items = Vec::new();
        let count = n.child_count();
        let mut i = from;
        while i < count {
            let Some(c) = n.child(i) else { break };
            i += 1;
            if stop.contains(&c.kind()) {
                break;
            }
            if !c.is_named() || c.is_error() || c.is_missing() || !is_statement(c.kind()) || n.field_name_for_child(i as u32 - 1).is_some_and(|f| f == "variable" || f == "value") {
                continue;
            }
            let background = n.child(i).is_some_and(|s| s.kind() == "&");
            if let Some(and_or) = self.and_or(c) {
                items.push(ListItem { and_or, background, span: self.span(c) });
            }
        }
        items
    }

    fn and_or(&mut self, n: Node) -> Option<AndOr> {
        self.and_or_outer(n, Vec::new())
    }

    /// `outer`: `redirected_statement`s around `n` whose redirections belong to its last
    /// command (tree-sitter reads `a && b > f` as `(a && b) > f`), innermost first.
    fn and_or_outer<'t>(&mut self, n: Node<'t>, outer: Vec<Node<'t>>) -> Option<AndOr> {
        self.and_or_inner(n, outer, true)
    }

    fn and_or_inner<'t>(&mut self, n: Node<'t>, outer: Vec<Node<'t>>, heredoc_tail: bool) -> Option<AndOr> {
        if outer.is_empty() && heredoc_tail {
            if let Some((op, x)) = heredoc_continuation(n) {
                return self.heredoc_and_or(n, op, x);
            }
        }
        if n.kind() == "redirected_statement" {
            if let Some(b) = n.child_by_field_name("body").filter(|b| b.kind() == "list") {
                let mut o = vec![n];
                o.extend(outer);
                return self.and_or_outer(b, o);
            }
        }
        // `a && b || c` is a left-nested `list`: walk down the left side.
        let mut rights: Vec<(Connector, Node)> = Vec::new();
        let mut cur = n;
        let mut outer = outer;
        let mut last_outer: Option<Vec<Node>> = None;
        while cur.kind() == "list" {
            let (Some(left), Some(op), Some(right)) = (cur.child(0), cur.child(1), cur.child(2)) else { break };
            let conn = if op.kind() == "||" { Connector::Or } else { Connector::And };
            rights.push((conn, right));
            cur = left;
        }
        if rights.is_empty() {
            last_outer = Some(std::mem::take(&mut outer));
        }
        let first = self.pipeline_outer(cur, last_outer.take().unwrap_or_default())?;
        let mut rest = Vec::new();
        let nr = rights.len();
        for (i, (conn, r)) in rights.into_iter().rev().enumerate() {
            let what = if conn == Connector::And { "'&&'" } else { "'||'" };
            if r.is_missing() || r.is_error() {
                continue;
            }
            if let Some(closer) = closer_why(self.text(r)).map(|_| self.text(r)) {
                self.error(r, format!("expected a command after {what}, found '{closer}'"));
                continue;
            }
            let o = if i + 1 == nr { std::mem::take(&mut outer) } else { Vec::new() };
            if let Some(p) = self.pipeline_outer(r, o) {
                rest.push((conn, p));
            }
        }
        Some(AndOr { first, rest })
    }

    /// `cat <<EOF | grep x && echo ok`: tree-sitter puts what follows the here-document's
    /// delimiter on its line (`| grep x && echo ok`) inside the redirection; `op` is its first
    /// token, `x` the rest.
    fn heredoc_and_or(&mut self, n: Node, op: &str, x: Node) -> Option<AndOr> {
        let mut head = self.and_or_inner(n, vec![], false)?;
        let tail = self.and_or(x)?;
        match op {
            "|" | "|&" => {
                // The pipeline goes on: its text ends where the first pipeline of `x` ends.
                let mut left = x;
                while left.kind() == "list" {
                    match left.child(0) {
                        Some(c) => left = c,
                        None => break,
                    }
                }
                let end = if self.text(left).contains("<<") { self.end_without_heredocs(left).unwrap_or(left.end_byte()) } else { left.end_byte() };
                let last = match head.rest.last_mut() {
                    Some((_, p)) => p,
                    None => &mut head.first,
                };
                if op == "|&" {
                    if let Some(Command::Simple(c)) = last.commands.last_mut() {
                        let pspan = c.span;
                        c.redirects.push(Redirect { fd: 2, op: RedirOp::DupOut, target: Word::literal("1", pspan), span: pspan });
                    }
                }
                last.commands.extend(tail.first.commands);
                let start = self.byte_of(last.span, 0);
                last.source = self.src.get(start..end.max(start)).unwrap_or("").trim().to_string();
                head.rest.extend(tail.rest);
            }
            "&&" | "||" => {
                let conn = if op == "&&" { Connector::And } else { Connector::Or };
                head.rest.push((conn, tail.first));
                head.rest.extend(tail.rest);
            }
            other => {
                self.unsupported(x, format!("'{other}' after a here-document's delimiter is not supported here (write it on the next line)"));
                return None;
            }
        }
        Some(head)
    }

    /// The source text of `n` up to its last token, here-document bodies left out.
    fn source(&self, n: Node) -> String {
        let text = self.text(n);
        if !text.contains("<<") {
            return text.trim().to_string();
        }
        let end = self.end_without_heredocs(n).unwrap_or(n.end_byte());
        self.src.get(n.start_byte()..end.max(n.start_byte())).unwrap_or("").trim().to_string()
    }

    fn end_without_heredocs(&self, n: Node) -> Option<usize> {
        let mut end = None;
        let mut stack = vec![n];
        while let Some(c) = stack.pop() {
            if matches!(c.kind(), "heredoc_body" | "heredoc_end") {
                continue;
            }
            // What follows a here-document's delimiter on its line is another command.
            if c.parent().is_some_and(|p| p.kind() == "heredoc_redirect") && c.is_named() && !matches!(c.kind(), "heredoc_start" | "file_redirect" | "herestring_redirect" | "heredoc_redirect") {
                continue;
            }
            if c.child_count() == 0 {
                end = end.max(Some(c.end_byte()));
                continue;
            }
            let mut cursor = c.walk();
            stack.extend(c.children(&mut cursor));
        }
        end
    }

    /// The members of a pipeline node, each with the `redirected_statement`s whose
    /// redirections are its own (innermost first) and whether `|&` follows it.
    fn members<'t>(&self, n: Node<'t>, outer: Vec<Node<'t>>, out: &mut Vec<(Node<'t>, Vec<Node<'t>>, bool)>) {
        if n.kind() == "redirected_statement" {
            if let Some(b) = n.child_by_field_name("body").filter(|b| b.kind() == "pipeline") {
                let mut o = vec![n];
                o.extend(outer);
                return self.members(b, o, out);
            }
        }
        if n.kind() != "pipeline" {
            out.push((n, outer, false));
            return;
        }
        let mut cursor = n.walk();
        let kids: Vec<Node> = n.children(&mut cursor).collect();
        let named: Vec<usize> = (0..kids.len()).filter(|&i| kids[i].is_named() && !kids[i].is_error() && !kids[i].is_missing() && !is_skipped(kids[i].kind())).collect();
        let last = named.last().copied();
        let mut outer = Some(outer);
        for (i, c) in kids.iter().enumerate() {
            match c.kind() {
                "|" => {}
                "|&" => {
                    if let Some(m) = out.last_mut() {
                        m.2 = true;
                    }
                }
                _ if named.contains(&i) => {
                    let o = if Some(i) == last { outer.take().unwrap_or_default() } else { Vec::new() };
                    self.members(*c, o, out);
                }
                _ => {}
            }
        }
    }

    fn pipeline_outer<'t>(&mut self, n: Node<'t>, outer: Vec<Node<'t>>) -> Option<Pipeline> {
        let top = outer.last().copied().unwrap_or(n);
        let mut span = self.span(top);
        let mut source = self.source(top);
        let mut negated = false;
        let mut timed = false;
        let mut time_posix = false;
        if let Some(&(t, _, posix)) = self.timed.iter().find(|x| x.1 == top.start_byte()) {
            timed = true;
            time_posix = posix;
            span = self.span_at(t);
            let end = top.start_byte() + self.text(top).trim_end().len();
            let full = self.src.get(t..end).unwrap_or("").trim().to_string();
            source = if source.is_empty() { full } else { self.src.get(t..top.start_byte() + source.len()).unwrap_or("").trim().to_string() };
        }
        let mut members: Vec<(Node, Vec<Node>, bool)> = Vec::new();
        self.members(n, outer, &mut members);
        if members.is_empty() {
            return None;
        }
        // `! a | b`: tree-sitter puts the `!` on the first member; bash negates the pipeline.
        while members[0].0.kind() == "negated_command" {
            let inner = members[0].0.named_child(0)?;
            negated = !negated;
            members[0].0 = inner;
        }
        let mut commands = Vec::new();
        for (i, (m, outer, pipe_err)) in members.into_iter().enumerate() {
            let after = if i == 0 { None } else { Some("'|'") };
            let Some(mut cmd) = self.command_outer(m, &outer, after) else { continue };
            if let Command::Simple(sc) = &mut cmd {
                if sc.words.first().and_then(Word::as_literal).as_deref() == Some("time") {
                    if i > 0 {
                        self.error(m, format!("'time' is only accepted at the start of a pipeline ({SUPPORTED})"));
                        continue;
                    }
                    match self.strip_time(m, sc) {
                        Some(posix) => {
                            timed = true;
                            time_posix = posix;
                        }
                        None => continue,
                    }
                }
            }
            if pipe_err {
                let pspan = self.span_at(m.end_byte());
                let dup = Redirect { fd: 2, op: RedirOp::DupOut, target: Word::literal("1", pspan), span: pspan };
                match &mut cmd {
                    Command::Simple(c) => c.redirects.push(dup),
                    Command::For(c) => c.redirects.push(dup),
                    Command::If(c) => c.redirects.push(dup),
                    Command::While(c) => c.redirects.push(dup),
                    Command::Case(c) => c.redirects.push(dup),
                    Command::Group(c) => c.redirects.push(dup),
                    _ => {}
                }
            }
            commands.push(cmd);
        }
        if commands.is_empty() {
            return None;
        }
        Some(Pipeline { commands, timed, negated, time_posix, source, span })
    }

    /// `time [-p] [--] cmd ...` written as one command: drop the prefix. `Some(posix)`.
    fn strip_time(&mut self, n: Node, sc: &mut SimpleCommand) -> Option<bool> {
        let mut posix = false;
        let mut k = 1;
        while let Some(w) = sc.words.get(k) {
            match w.as_literal().as_deref() {
                Some("-p") => posix = true,
                Some("--") => {
                    k += 1;
                    break;
                }
                Some(o) if o.starts_with('-') && o.len() > 1 => {
                    let span = w.span;
                    self.errors.push(ParseError::new(
                        span,
                        format!("'time' accepts only -p, not '{}' (for GNU time's options run /usr/bin/time)", excerpt(o)),
                    ));
                    return None;
                }
                _ => break,
            }
            k += 1;
        }
        sc.words.drain(..k);
        let Some(first) = sc.words.first() else {
            let at = self.span_at(n.end_byte());
            self.errors.push(ParseError::new(at, "expected a command after 'time', found end of input"));
            return None;
        };
        sc.span = first.span;
        let start = self.byte_of(first.span, n.start_byte());
        let end = (n.start_byte() + sc.source.len()).max(start);
        sc.source = self.src.get(start..end).unwrap_or("").trim().to_string();
        Some(posix)
    }

    /// The byte offset of `span` at or after `from` (spans come from this source).
    fn byte_of(&self, span: Span, from: usize) -> usize {
        let line_start = self.lines.starts.get(span.line as usize - 1).copied().unwrap_or(from);
        let rest = self.src.get(line_start..).unwrap_or("");
        rest.char_indices().nth(span.col as usize - 1).map_or(self.src.len(), |(i, _)| line_start + i)
    }

    fn enter(&mut self, n: Node, what: &str) -> bool {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            self.error(n, format!("'{what}' is nested too deeply (at most {MAX_NESTING} nested blocks are supported)"));
            self.depth -= 1;
            return false;
        }
        true
    }

    /// A command with the redirections of the `redirected_statement`s in `outer`.
    fn command_outer(&mut self, n: Node, outer: &[Node], after: Option<&str>) -> Option<Command> {
        if outer.is_empty() {
            return self.command(n, after);
        }
        if matches!(n.kind(), "command" | "variable_assignment" | "variable_assignments" | "declaration_command" | "unset_command" | "test_command") {
            return self.simple(n, outer).map(Command::Simple);
        }
        let mut cmd = self.command(n, after)?;
        for &o in outer {
            let (redirects, extra) = self.redirects_of(o);
            if let Some(w) = extra.first() {
                self.errors.push(ParseError::new(w.span, "unexpected word after the end of a command (expected ';', '&', '&&', '||', '|' or a newline)"));
            }
            match &mut cmd {
                Command::For(c) => c.redirects.extend(redirects),
                Command::If(c) => c.redirects.extend(redirects),
                Command::While(c) => c.redirects.extend(redirects),
                Command::Case(c) => c.redirects.extend(redirects),
                Command::Group(c) => c.redirects.extend(redirects),
                Command::Simple(c) => c.redirects.extend(redirects),
                Command::FuncDef(_) | Command::Arith(_) => {
                    self.unsupported(o, "redirections after a function definition or '(( ... ))' are not supported here");
                    return None;
                }
            }
        }
        Some(cmd)
    }

    fn command(&mut self, n: Node, after: Option<&str>) -> Option<Command> {
        let span = self.span(n);
        match n.kind() {
            "command" | "variable_assignment" | "variable_assignments" | "declaration_command" | "unset_command" | "test_command" => {
                self.simple(n, &[]).map(Command::Simple)
            }
            "redirected_statement" => self.redirected(n),
            "pipeline" | "list" | "negated_command" => {
                // A pipeline or list where a command is expected (`a | { b; }` is a group;
                // this is tree-sitter's grouping of `! a`): run it as a `{ ...; }` group.
                let and_or = self.and_or(n)?;
                Some(Command::Group(Group { subshell: false, body: vec![ListItem { and_or, background: false, span }], redirects: Vec::new(), span }))
            }
            "for_statement" => {
                if !self.enter(n, "for") {
                    return None;
                }
                let r = self.for_loop(n);
                self.depth -= 1;
                r.map(Command::For)
            }
            "c_style_for_statement" => {
                if !self.enter(n, "for") {
                    return None;
                }
                let r = self.c_for(n);
                self.depth -= 1;
                r
            }
            "while_statement" => {
                let until = self.text(n).starts_with("until");
                if !self.enter(n, if until { "until" } else { "while" }) {
                    return None;
                }
                let cond = match n.child_by_field_name("condition") {
                    Some(_) => {
                        let mut items = Vec::new();
                        let mut cursor = n.walk();
                        for (i, c) in n.children(&mut cursor).enumerate() {
                            if n.field_name_for_child(i as u32) == Some("condition") && c.is_named() && !is_skipped(c.kind()) {
                                if let Some(and_or) = self.and_or(c) {
                                    let background = n.child(i + 1).is_some_and(|s| s.kind() == "&");
                                    items.push(ListItem { and_or, background, span: self.span(c) });
                                }
                            }
                        }
                        items
                    }
                    None => Vec::new(),
                };
                let body = n.child_by_field_name("body").map(|b| self.do_group(b, if until { "until" } else { "while" }, span)).unwrap_or_default();
                self.depth -= 1;
                Some(Command::While(WhileLoop { until, cond, body, redirects: Vec::new(), span }))
            }
            "if_statement" => {
                if !self.enter(n, "if") {
                    return None;
                }
                let r = self.if_clause(n);
                self.depth -= 1;
                Some(Command::If(r))
            }
            "case_statement" => {
                if !self.enter(n, "case") {
                    return None;
                }
                let r = self.case(n);
                self.depth -= 1;
                r.map(Command::Case)
            }
            "function_definition" => {
                if !self.enter(n, "function") {
                    return None;
                }
                let name = n.child_by_field_name("name").map(|c| self.text(c).to_string()).unwrap_or_default();
                let body = n.child_by_field_name("body").and_then(|b| self.command(b, Some("the function name")));
                self.depth -= 1;
                let body = body?;
                if !matches!(body, Command::Group(_) | Command::If(_) | Command::For(_) | Command::While(_) | Command::Case(_)) {
                    self.error(n, format!("expected '{{' to start the body of function '{name}'"));
                    return None;
                }
                Some(Command::FuncDef(FuncDef { name, body: Box::new(body), span }))
            }
            "compound_statement" => {
                if n.child(0).is_some_and(|c| c.kind() == "((") {
                    return Some(Command::Arith(ArithCommand { expr: self.arith_text(n, 2), span }));
                }
                if !self.enter(n, "{") {
                    return None;
                }
                let body = self.body_between(n, 1, &["}"]);
                self.depth -= 1;
                if body.is_empty() {
                    self.error(n, format!("expected a command inside '{{ ... }}' started at line {}", span.line));
                    return None;
                }
                Some(Command::Group(Group { subshell: false, body, redirects: Vec::new(), span }))
            }
            "subshell" => {
                if !self.enter(n, "(") {
                    return None;
                }
                let body = self.body_between(n, 1, &[")"]);
                self.depth -= 1;
                if body.is_empty() {
                    self.error(n, format!("expected a command inside '( ... )' started at line {}", span.line));
                    return None;
                }
                Some(Command::Group(Group { subshell: true, body, redirects: Vec::new(), span }))
            }
            "arithmetic_expansion" => Some(Command::Arith(ArithCommand { expr: self.arith_text(n, 3), span })),
            "comment" | "heredoc_body" => None,
            k => {
                let after = after.map(|a| format!(" after {a}")).unwrap_or_default();
                let what = if k.ends_with("_statement") { k.trim_end_matches("_statement").replace('_', " ") } else { excerpt(self.text(n)) };
                self.unsupported(n, format!("'{what}' is not supported here{after}"));
                None
            }
        }
    }

    /// The text inside `((`...`))` (`open` bytes for the opening).
    fn arith_text(&self, n: Node, open: usize) -> String {
        let t = self.text(n);
        let inner = t.get(open..).unwrap_or("");
        inner.strip_suffix("))").unwrap_or(inner).to_string()
    }

    fn redirected(&mut self, n: Node) -> Option<Command> {
        let body = n.child_by_field_name("body");
        match body {
            None => self.simple(n, &[]).map(Command::Simple),
            Some(b) if matches!(b.kind(), "command" | "variable_assignment" | "variable_assignments" | "declaration_command" | "unset_command" | "test_command") => {
                self.simple(b, &[n]).map(Command::Simple)
            }
            Some(b) => {
                let mut cmd = self.command(b, None)?;
                let (redirects, extra) = self.redirects_of(n);
                if let Some(w) = extra.first() {
                    let at = w.span;
                    self.errors.push(ParseError::new(at, format!("unexpected word after the end of a command (expected ';', '&', '&&', '||', '|' or a newline) ({SUPPORTED})")));
                }
                let target = match &mut cmd {
                    Command::For(c) => &mut c.redirects,
                    Command::If(c) => &mut c.redirects,
                    Command::While(c) => &mut c.redirects,
                    Command::Case(c) => &mut c.redirects,
                    Command::Group(c) => &mut c.redirects,
                    Command::FuncDef(f) => match f.body.as_mut() {
                        Command::Group(c) => &mut c.redirects,
                        Command::For(c) => &mut c.redirects,
                        Command::If(c) => &mut c.redirects,
                        Command::While(c) => &mut c.redirects,
                        Command::Case(c) => &mut c.redirects,
                        _ => return Some(cmd),
                    },
                    Command::Simple(c) => &mut c.redirects,
                    Command::Arith(_) => {
                        self.unsupported(n, "redirections after '(( ... ))' are not supported");
                        return None;
                    }
                };
                target.extend(redirects);
                Some(cmd)
            }
        }
    }

    /// The redirections that are children of `n` (a `redirected_statement` or a `command`),
    /// and words tree-sitter took as extra redirection targets (`> f x`: `x` is an argument).
    fn redirects_of(&mut self, n: Node) -> (Vec<Redirect>, Vec<Word>) {
        let mut nodes = Vec::new();
        let mut cursor = n.walk();
        for c in n.children(&mut cursor) {
            if matches!(c.kind(), "file_redirect" | "heredoc_redirect" | "herestring_redirect") {
                nodes.push(c);
            }
        }
        // Here-document bodies, in order (tree-sitter puts them in the redirection or
        // after it).
        let mut bodies: Vec<(Option<Node>, Option<Node>)> = Vec::new();
        let mut stack = vec![n];
        let mut order: Vec<Node> = Vec::new();
        while let Some(c) = stack.pop() {
            if matches!(c.kind(), "heredoc_body" | "heredoc_end") {
                order.push(c);
                continue;
            }
            if c.kind() == "command_substitution" {
                continue;
            }
            let mut cur = c.walk();
            let kids: Vec<Node> = c.children(&mut cur).collect();
            stack.extend(kids.into_iter().rev());
        }
        for c in order {
            if c.kind() == "heredoc_body" {
                bodies.push((Some(c), None));
            } else if let Some(last) = bodies.last_mut().filter(|b| b.1.is_none()) {
                last.1 = Some(c);
            } else {
                bodies.push((None, Some(c)));
            }
        }
        let mut bodies = bodies.into_iter();
        let mut out = Vec::new();
        let mut extra = Vec::new();
        let mut i = 0;
        while i < nodes.len() {
            let r = nodes[i];
            i += 1;
            let mut nested = Vec::new();
            let next_start = nodes.get(i).map(|x| x.start_byte());
            if let Some(red) = self.redirect(r, &mut bodies, &mut extra, &mut nested, next_start) {
                out.push(red);
            }
            // A redirection tree-sitter nested inside a here-document redirection.
            for x in nested.into_iter().rev() {
                nodes.insert(i, x);
            }
        }
        // `0<in` after another redirection: tree-sitter takes `0` as a target of the one
        // before; it is the descriptor of the next.
        (out, extra)
    }

    fn redirect<'t>(
        &mut self,
        r: Node<'t>,
        bodies: &mut impl Iterator<Item = (Option<Node<'t>>, Option<Node<'t>>)>,
        extra: &mut Vec<Word>,
        nested: &mut Vec<Node<'t>>,
        next_start: Option<usize>,
    ) -> Option<Redirect> {
        let span = self.span(r);
        let mut fd: Option<u32> = None;
        let mut op = "";
        let mut dests: Vec<Node> = Vec::new();
        let mut heredoc_start = None;
        let mut cursor = r.walk();
        for (i, c) in r.children(&mut cursor).enumerate() {
            let field = r.field_name_for_child(i as u32);
            match c.kind() {
                "file_descriptor" => {
                    let t = self.text(c);
                    match t.parse::<u32>() {
                        Ok(v) if v <= 9 && t.len() == 1 => fd = Some(v),
                        _ => {
                            self.error(c, format!("file descriptor {t} is out of range in a redirection (supported: 0-9, as in 2>file)"));
                            return None;
                        }
                    }
                }
                "heredoc_start" => heredoc_start = Some(c),
                "file_redirect" | "herestring_redirect" | "heredoc_redirect" => nested.push(c),
                "heredoc_body" | "heredoc_end" | "comment" => {}
                _ if !c.is_named() && field.is_none() && op.is_empty() => op = self.text(c),
                _ if c.is_named() && !c.is_missing() => dests.push(c),
                _ => {}
            }
        }
        match r.kind() {
            "heredoc_redirect" => {
                let (body, end) = bodies.next().unwrap_or((None, None));
                let start = heredoc_start?;
                let strip = op == "<<-";
                let target = self.heredoc(start, body, end, strip);
                Some(Redirect { fd: fd.unwrap_or(0), op: RedirOp::HereDoc, target, span })
            }
            "herestring_redirect" => {
                let Some(&w) = dests.first() else {
                    self.error(r, format!("expected a word after '<<<' ({SUPPORTED_REDIRECTS})"));
                    return None;
                };
                let mut target = self.word(w, Ctx::Plain)?;
                push_lit(&mut target.parts, "\n");
                Some(Redirect { fd: fd.unwrap_or(0), op: RedirOp::HereDoc, target, span })
            }
            _ => {
                let (rop, default_fd) = match op {
                    ">" | ">|" => (RedirOp::Out, 1),
                    ">>" => (RedirOp::Append, 1),
                    "<" => (RedirOp::In, 0),
                    ">&" => (RedirOp::DupOut, 1),
                    "&>" => (RedirOp::OutErr, 1),
                    "&>>" => (RedirOp::AppendErr, 1),
                    ">&-" | "<&-" => {
                        self.error(r, format!("closing a file descriptor ('{op}') is not supported ({SUPPORTED_REDIRECTS})"));
                        return None;
                    }
                    other => {
                        self.error(r, format!("the redirection '{other}' is not supported ({SUPPORTED_REDIRECTS})"));
                        return None;
                    }
                };
                let Some(&d) = dests.first() else {
                    let what = if op == ">&" { "a file descriptor number" } else { "a file name" };
                    self.error(r, format!("expected {what} after '{op}' ({SUPPORTED_REDIRECTS})"));
                    return None;
                };
                for &x in &dests[1..] {
                    let t = self.text(x);
                    // `&>both 0<in`: a digit right before the next redirection is its
                    // descriptor, not an argument.
                    if Some(x.end_byte()) == next_start && t.len() == 1 && t.bytes().all(|b| b.is_ascii_digit()) {
                        continue;
                    }
                    if let Some(w) = self.word(x, Ctx::Arg) {
                        extra.push(w);
                    }
                }
                let mut rop = rop;
                let target = self.word(d, Ctx::Plain)?;
                if op == ">&" {
                    let raw = self.text(d);
                    if raw == "-" {
                        self.error(d, format!("closing a file descriptor ('>&-') is not supported ({SUPPORTED_REDIRECTS})"));
                        return None;
                    }
                    let is_fd = raw.len() == 1 && raw.bytes().all(|b| b.is_ascii_digit());
                    if !is_fd {
                        if fd.is_some() {
                            self.error(d, format!("'>&' must be followed by a file descriptor number 0-9, found '{}' ({SUPPORTED_REDIRECTS})", excerpt(raw)));
                            return None;
                        }
                        // `>& file` is bash's spelling of `&> file`.
                        rop = RedirOp::OutErr;
                    }
                }
                let fd = fd.or_else(|| self.fd_before(r)).unwrap_or(default_fd);
                Some(Redirect { fd, op: rop, target, span: self.fd_span(r, span) })
            }
        }
    }

    /// A one-digit descriptor written right before `r` that tree-sitter gave to the
    /// redirection before it (`&>both 0<in`).
    fn fd_before(&self, r: Node) -> Option<u32> {
        let s = r.start_byte();
        let b = self.src.as_bytes();
        if s >= 1 && b[s - 1].is_ascii_digit() && (s < 2 || matches!(b[s - 2], b' ' | b'\t')) && !matches!(b.get(s), Some(b'0'..=b'9')) {
            let prev = r.prev_sibling()?;
            if prev.end_byte() == s && matches!(prev.kind(), "file_redirect") {
                return Some(u32::from(b[s - 1] - b'0'));
            }
        }
        None
    }

    fn fd_span(&self, r: Node, span: Span) -> Span {
        if self.fd_before(r).is_some() {
            self.span_at(r.start_byte() - 1)
        } else {
            span
        }
    }

    /// A here-document's body as a word: literal if the delimiter was quoted, otherwise
    /// with `$` expansions and `\` escapes as in double quotes.
    fn heredoc(&mut self, start: Node, body: Option<Node>, end: Option<Node>, strip: bool) -> Word {
        let span = self.span(start);
        let quoted = self.text(start).contains(['\'', '"', '\\']);
        let Some(body) = body else {
            return Word { parts: vec![WordPart::Lit(String::new())], span };
        };
        // The body starts at the beginning of its first line (tree-sitter's range leaves
        // out leading tabs of `<<-`) and ends where the delimiter line starts.
        let from = self.src[..body.start_byte()].rfind('\n').map_or(0, |i| i + 1).max(start.end_byte());
        let to = end.map_or(body.end_byte(), |e| e.start_byte()).max(from);
        let mut parts = Vec::new();
        let mut at = from;
        let mut line_start = true;
        let text_piece = |cv: &mut Conv, a: usize, b: usize, parts: &mut Vec<WordPart>, line_start: &mut bool| {
            let raw = cv.src.get(a..b).unwrap_or("");
            let mut out = String::new();
            let mut chars = raw.chars().peekable();
            while let Some(c) = chars.next() {
                if *line_start && strip && c == '\t' {
                    continue;
                }
                *line_start = false;
                match c {
                    '\\' if !quoted => match chars.peek() {
                        Some(&e @ ('$' | '`' | '\\')) => {
                            chars.next();
                            out.push(e);
                        }
                        Some('\n') => {
                            chars.next();
                        }
                        _ => out.push('\\'),
                    },
                    '\r' if chars.peek() == Some(&'\n') => {}
                    '\n' => {
                        out.push('\n');
                        *line_start = true;
                    }
                    c => out.push(c),
                }
            }
            push_lit(parts, &out);
        };
        if !quoted {
            let mut cursor = body.walk();
            let kids: Vec<Node> = body.children(&mut cursor).filter(|c| c.kind() != "heredoc_content").collect();
            for k in kids {
                if k.start_byte() < at {
                    continue;
                }
                text_piece(self, at, k.start_byte(), &mut parts, &mut line_start);
                let mut pieces = Vec::new();
                self.word_pieces(k, true, &mut pieces);
                for p in pieces {
                    match p {
                        Piece::Part(p) => parts.push(p),
                        Piece::Quoted(s) | Piece::Unq(s) => push_lit(&mut parts, &s),
                    }
                }
                line_start = false;
                at = k.end_byte();
            }
        }
        text_piece(self, at, to, &mut parts, &mut line_start);
        if parts.is_empty() {
            parts.push(WordPart::Lit(String::new()));
        }
        Word { parts, span }
    }

    /// A simple command from `n` (a `command`, assignment, declaration, `[[`/`[` test), with
    /// the redirections of the enclosing `redirected_statement`s in `outer`.
    fn simple(&mut self, n: Node, outer: &[Node]) -> Option<SimpleCommand> {
        let span = self.span(n);
        let mut assignments = Vec::new();
        let mut words: Vec<(usize, Word)> = Vec::new();
        let (mut redirects, extra) = self.redirects_of(n);
        for w in extra {
            words.push((self.byte_of(w.span, 0), w));
        }
        for &o in outer {
            let (r, extra) = self.redirects_of(o);
            redirects.extend(r);
            for w in extra {
                words.push((self.byte_of(w.span, 0), w));
            }
        }
        match n.kind() {
            "variable_assignment" => {
                if let Some(a) = self.assignment(n) {
                    assignments.push(a);
                }
            }
            "test_command" => {
                let mut out = Vec::new();
                self.test_words(n, &mut out);
                for w in out {
                    words.push((self.byte_of(w.span, 0), w));
                }
            }
            "declaration_command" | "unset_command" => {
                let mut cursor = n.walk();
                for c in n.children(&mut cursor) {
                    let w = match c.kind() {
                        "variable_assignment" => self.assignment_word(c),
                        "comment" => None,
                        _ if !c.is_named() => Some(Word::literal(self.text(c), self.span(c))),
                        _ => self.word(c, Ctx::Arg),
                    };
                    if let Some(w) = w {
                        words.push((c.start_byte(), w));
                    }
                }
            }
            _ => {
                let mut cursor = n.walk();
                for (i, c) in n.children(&mut cursor).enumerate() {
                    let field = n.field_name_for_child(i as u32);
                    match c.kind() {
                        "variable_assignment" if words.is_empty() => {
                            if let Some(a) = self.assignment(c) {
                                assignments.push(a);
                            }
                        }
                        "variable_assignments" => {
                            let mut cur = c.walk();
                            for a in c.named_children(&mut cur) {
                                if let Some(a) = self.assignment(a) {
                                    assignments.push(a);
                                }
                            }
                        }
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" | "heredoc_body" | "heredoc_end" | "comment" => {}
                        "command_name" => {
                            if let Some(w) = c.named_child(0).and_then(|w| self.word(w, Ctx::Arg)) {
                                words.push((c.start_byte(), w));
                            }
                        }
                        _ if field == Some("argument") || c.is_named() => {
                            if let Some(w) = self.word(c, Ctx::Arg) {
                                words.push((c.start_byte(), w));
                            }
                        }
                        _ => {
                            let t = self.text(c);
                            let fname = words.first().and_then(|w| w.1.as_literal()).filter(|w| is_name(w) && words.len() == 1);
                            if let (Some(f), "(") = (fname, t) {
                                let at = self.text(n).find(')').map_or(c.end_byte(), |i| n.start_byte() + i + 1);
                                let at = self.next_token(at).map_or(at, |x| x.0);
                                self.errors.push(ParseError::new(self.span_at(at), format!("expected '{{' to start the body of function '{f}'")));
                                return None;
                            }
                            if t == "(" || t == ")" {
                                self.error(c, format!("unexpected '{t}' (quote it as '{t}' to pass it as an argument; {SUPPORTED})"));
                            }
                        }
                    }
                }
            }
        }
        words.sort_by_key(|w| w.0);
        let words: Vec<Word> = words.into_iter().map(|w| w.1).collect();
        if n.kind() == "command" {
            if let Some(name) = n.child_by_field_name("name") {
                let t = self.text(name);
                if let Some(why) = closer_why(t) {
                    let msg = match after_op(self.src, name.start_byte()) {
                        Some(op) => format!("expected a command after '{op}', found '{t}'"),
                        None => format!("unexpected '{t}' ({why})"),
                    };
                    self.error(name, msg);
                    return None;
                }
            }
        }
        let source = match outer.last() {
            None => self.source(n),
            Some(&o) => {
                let end = if self.text(o).contains("<<") { self.end_without_heredocs(o).unwrap_or(o.end_byte()) } else { o.end_byte() };
                self.src.get(n.start_byte()..end.max(n.start_byte())).unwrap_or("").trim().to_string()
            }
        };
        if assignments.is_empty() && words.is_empty() && redirects.is_empty() {
            return None;
        }
        Some(SimpleCommand { assignments, words, redirects, source, span })
    }

    /// `[ ... ]` / `[[ ... ]]` as the words the `[`/`[[` built-ins read.
    fn test_words(&mut self, n: Node, out: &mut Vec<Word>) {
        let mut stack = vec![n];
        let mut leaves: Vec<Node> = Vec::new();
        while let Some(c) = stack.pop() {
            let expr = matches!(c.kind(), "test_command" | "binary_expression" | "unary_expression" | "parenthesized_expression" | "negated_expression" | "postfix_expression" | "ternary_expression");
            if c == n || expr {
                let mut cur = c.walk();
                let kids: Vec<Node> = c.children(&mut cur).collect();
                stack.extend(kids.into_iter().rev());
            } else {
                leaves.push(c);
            }
        }
        for c in leaves {
            if c.kind() == "comment" || c.is_missing() {
                continue;
            }
            if !c.is_named() || matches!(c.kind(), "test_operator" | "regex" | "extglob_pattern") {
                out.push(Word::literal(self.text(c), self.span(c)));
            } else if let Some(w) = self.word(c, Ctx::Plain) {
                out.push(w);
            }
        }
    }

    /// `NAME=value` (or `NAME[i]=value`, `NAME=(...)`).
    fn assignment(&mut self, n: Node) -> Option<(String, Word)> {
        let name_node = n.child_by_field_name("name")?;
        let op = n.child(1).map(|c| self.text(c)).unwrap_or("=");
        if op == "+=" {
            self.error(n, format!("'+=' is not supported (write NAME=\"${{NAME}}more\"; {SUPPORTED})"));
            return None;
        }
        let value = n.child_by_field_name("value");
        let name = match name_node.kind() {
            "variable_name" => self.text(name_node).to_string(),
            "subscript" => return self.element_assignment(n, name_node, value),
            _ => {
                self.error(name_node, format!("'{}' is not a valid variable name", excerpt(self.text(name_node))));
                return None;
            }
        };
        let eq_end = name_node.end_byte() + op.len();
        let vspan = self.span_at(eq_end);
        let word = match value {
            None => Word { parts: Vec::new(), span: vspan },
            Some(v) if v.kind() == "array" => return self.array_assignment(n, name, v),
            Some(v) => {
                let mut w = self.word(v, Ctx::Assign)?;
                if v.start_byte() > eq_end {
                    // `A= cmd`: tree-sitter takes the next word as the value; bash runs it.
                    self.error(v, format!("a space after '=' makes '{}' a command, not the value (write {name}=VALUE or {name}=\"\" {})", excerpt(self.text(v)), excerpt(self.text(v))));
                    return None;
                }
                w.span = vspan;
                w
            }
        };
        Some((name, word))
    }

    /// An assignment written as an argument of `export`/`local`/...: one word `NAME=value`.
    fn assignment_word(&mut self, n: Node) -> Option<Word> {
        let span = self.span(n);
        let name = n.child_by_field_name("name")?;
        let mut parts = vec![WordPart::Lit(format!("{}=", self.text(name)))];
        if let Some(v) = n.child_by_field_name("value") {
            if v.kind() == "array" {
                self.unsupported(v, "arrays in declarations are not supported (write NAME=(...) on its own line)");
                return None;
            }
            let w = self.word(v, Ctx::Assign)?;
            for p in w.parts {
                match p {
                    WordPart::Lit(s) => push_lit(&mut parts, &s),
                    p => parts.push(p),
                }
            }
        }
        Some(Word { parts, span })
    }

    fn element_assignment(&mut self, n: Node, sub: Node, value: Option<Node>) -> Option<(String, Word)> {
        let _ = (sub, value);
        self.error(n, format!("array element assignments are not supported ({SUPPORTED_EXPANSIONS})"));
        None
    }

    fn array_assignment(&mut self, n: Node, name: String, v: Node) -> Option<(String, Word)> {
        let _ = (name, v);
        self.error(n, format!("arrays are not supported ({SUPPORTED_EXPANSIONS})"));
        None
    }

    fn for_loop(&mut self, n: Node) -> Option<ForLoop> {
        let span = self.span(n);
        if n.child(0).is_some_and(|c| c.kind() == "select") {
            self.unsupported(n, "'select' loops are not supported");
            return None;
        }
        let var_node = n.child_by_field_name("variable")?;
        let var = self.text(var_node).to_string();
        if !is_name(&var) {
            self.error(var_node, format!("'{}' is not a valid variable name after 'for'", excerpt(&var)));
            return None;
        }
        let mut words = Vec::new();
        let mut has_in = false;
        let mut cursor = n.walk();
        for (i, c) in n.children(&mut cursor).enumerate() {
            if c.kind() == "in" {
                has_in = true;
            }
            if n.field_name_for_child(i as u32) == Some("value") {
                if let Some(w) = self.word(c, Ctx::Arg) {
                    words.push(w);
                }
            }
        }
        if !has_in {
            let at = n.child_by_field_name("body").map_or(var_node.end_byte(), |b| b.start_byte());
            let semi = self.src[var_node.end_byte()..at].find(';').map_or(at, |i| var_node.end_byte() + i);
            self.errors.push(ParseError::new(self.span_at(semi), "'for NAME' without 'in WORDS' is not supported (write 'for NAME in WORDS; do ...; done')"));
            return None;
        }
        let body = n.child_by_field_name("body").map(|b| self.do_group(b, "for", span)).unwrap_or_default();
        Some(ForLoop { var, words, body, redirects: Vec::new(), span })
    }

    /// `for ((INIT; COND; STEP)); do BODY; done` as the loop bash runs: INIT once, then
    /// `while COND` with STEP evaluated before each test but the first (so `continue` runs
    /// STEP, as in bash). A hidden variable per loop, named after its position, marks the
    /// first test. INIT and STEP never fail the script under `set -e`, as in bash.
    fn c_for(&mut self, n: Node) -> Option<Command> {
        let span = self.span(n);
        let open = (0..n.child_count()).filter_map(|i| n.child(i)).find(|c| c.kind() == "((")?;
        let close = (0..n.child_count()).filter_map(|i| n.child(i)).find(|c| c.kind() == "))")?;
        let inner = self.src.get(open.end_byte()..close.start_byte()).unwrap_or("");
        let parts: Vec<&str> = inner.split(';').map(str::trim).collect();
        let [init, cond, step] = parts[..] else {
            self.unsupported(n, "expected 'for ((INIT; COND; STEP))'");
            return None;
        };
        let flag = format!("__memtwin_for_{}", n.start_byte());
        let or = |e: &str, d: &str| if e.is_empty() { d.to_string() } else { format!("({e})") };
        let init = format!("{flag} = 0, {}, 1", or(init, "0"));
        let cond = format!("({flag} ? ({}) : ({flag} = 1)), {}", or(step, "0"), or(cond, "1"));
        let body = n.child_by_field_name("body").map(|b| {
            if b.kind() == "do_group" {
                self.do_group(b, "for", span)
            } else {
                self.body_between(b, 1, &["}"])
            }
        })?;
        let item = |cmd: Command, source: String| ListItem {
            and_or: AndOr { first: Pipeline { commands: vec![cmd], timed: false, negated: false, time_posix: false, source, span }, rest: Vec::new() },
            background: false,
            span,
        };
        let head = format!("(({inner}))");
        let lp = WhileLoop { until: false, cond: vec![item(Command::Arith(ArithCommand { expr: cond.clone(), span }), head.clone())], body, redirects: Vec::new(), span };
        let body = vec![item(Command::Arith(ArithCommand { expr: init, span }), head.clone()), item(Command::While(lp), self.source(n))];
        Some(Command::Group(Group { subshell: false, body, redirects: Vec::new(), span }))
    }

    fn do_group(&mut self, b: Node, kw: &str, span: Span) -> Vec<ListItem> {
        let body = if b.kind() == "do_group" { self.body_between(b, 1, &["done"]) } else { Vec::new() };
        if body.is_empty() && !b.has_error() {
            let at = b.child(1).map_or(b.end_byte(), |c| c.start_byte());
            self.errors.push(ParseError::new(self.span_at(at), format!("expected a command in the body of the '{kw}' started at line {}", span.line)));
        }
        body
    }

    fn if_clause(&mut self, n: Node) -> IfClause {
        let span = self.span(n);
        let mut branches = Vec::new();
        let mut else_body = None;
        let (cond, then_at) = self.cond_and_then(n);
        let body = self.body_between(n, then_at, &["elif_clause", "else_clause", "fi"]);
        self.check_then_body(n, then_at, &body);
        branches.push((cond, body));
        let mut cursor = n.walk();
        for c in n.children(&mut cursor) {
            match c.kind() {
                "elif_clause" => {
                    let (cond, then_at) = self.cond_and_then(c);
                    let body = self.body_between(c, then_at, &[]);
                    self.check_then_body(c, then_at, &body);
                    branches.push((cond, body));
                }
                "else_clause" => {
                    let body = self.body_between(c, 1, &[]);
                    if body.is_empty() && !c.has_error() {
                        self.error(c, "expected a command after 'else'");
                    }
                    else_body = Some(body);
                }
                _ => {}
            }
        }
        IfClause { branches, else_body, redirects: Vec::new(), span }
    }

    /// The condition of an `if`/`elif` node and the index of the child after `then`.
    fn cond_and_then(&mut self, n: Node) -> (Vec<ListItem>, usize) {
        let then_at = (0..n.child_count()).find(|&i| n.child(i).is_some_and(|c| c.kind() == "then")).map_or(n.child_count(), |i| i + 1);
        let cond = self.body_between(n, 1, &["then"]);
        if cond.is_empty() && !n.has_error() {
            let kw = self.text(n.child(0).unwrap_or(n)).to_string();
            self.error(n.child(1).unwrap_or(n), format!("expected a condition after '{kw}'"));
        }
        (cond, then_at)
    }

    fn check_then_body(&mut self, n: Node, then_at: usize, body: &[ListItem]) {
        if body.is_empty() && !n.has_error() {
            let at = n.child(then_at).unwrap_or(n);
            self.error(at, "expected a command after 'then'");
        }
    }

    fn case(&mut self, n: Node) -> Option<CaseClause> {
        let span = self.span(n);
        let word = self.word(n.child_by_field_name("value")?, Ctx::Plain)?;
        let mut arms = Vec::new();
        let mut cursor = n.walk();
        for item in n.children(&mut cursor).filter(|c| c.kind() == "case_item") {
            let mut patterns = Vec::new();
            let mut first_stmt = None;
            let mut cur = item.walk();
            for (i, c) in item.children(&mut cur).enumerate() {
                match item.field_name_for_child(i as u32) {
                    Some("value") => {
                        if let Some(w) = self.word(c, Ctx::Pattern) {
                            patterns.push(w);
                        }
                    }
                    Some("termination") | Some("fallthrough") => {
                        let t = self.text(c);
                        if t != ";;" {
                            self.unsupported(c, format!("'{t}' in 'case' is not supported (end each pattern's commands with ';;')"));
                        }
                    }
                    _ => {
                        if c.kind() == ")" && first_stmt.is_none() {
                            first_stmt = Some(i + 1);
                        }
                        if matches!(c.kind(), ";&" | ";;&") {
                            let t = self.text(c);
                            self.unsupported(c, format!("'{t}' in 'case' is not supported (end each pattern's commands with ';;')"));
                        }
                    }
                }
            }
            let body = self.body_between(item, first_stmt.unwrap_or(item.child_count()), &[";;", ";&", ";;&"]);
            arms.push((patterns, body));
        }
        Some(CaseClause { word, arms, redirects: Vec::new(), span })
    }

    // ---- words ---------------------------------------------------------------------

    fn word(&mut self, n: Node, ctx: Ctx) -> Option<Word> {
        let span = self.span(n);
        let mut pieces = Vec::new();
        let before = self.errors.len();
        self.word_pieces(n, false, &mut pieces);
        if self.errors.len() > before {
            return None;
        }
        let parts = self.finish(pieces, ctx, span)?;
        Some(Word { parts, span })
    }

    /// The pieces of the word node `n` (`quoted`: inside double quotes).
    fn word_pieces(&mut self, n: Node, quoted: bool, out: &mut Vec<Piece>) {
        let var = |name: String| if quoted { WordPart::QuotedVar(name) } else { WordPart::Var(name) };
        match n.kind() {
            "word" | "number" | "extglob_pattern" | "regex" | "test_operator" | "variable_name" | "special_variable_name" | "brace_expression" => {
                out.push(if quoted { Piece::Quoted(self.text(n).to_string()) } else { Piece::Unq(self.text(n).to_string()) });
            }
            "concatenation" | "command_name" => {
                let mut cursor = n.walk();
                let kids: Vec<Node> = n.children(&mut cursor).collect();
                let mut at = n.start_byte();
                for c in kids {
                    // Text between children (tree-sitter leaves some punctuation out).
                    if c.start_byte() > at {
                        out.push(Piece::Unq(self.src.get(at..c.start_byte()).unwrap_or("").to_string()));
                    }
                    at = c.end_byte();
                    if c.is_named() {
                        self.word_pieces(c, quoted, out);
                    } else {
                        out.push(Piece::Unq(self.text(c).to_string()));
                    }
                }
            }
            "raw_string" => {
                let t = self.text(n);
                let inner = t.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')).unwrap_or(t);
                out.push(Piece::Quoted(inner.to_string()));
            }
            "string" => {
                let inner_start = n.start_byte() + 1;
                let inner_end = n.end_byte().saturating_sub(1).max(inner_start);
                let mut at = inner_start;
                let mut any = false;
                let mut cursor = n.walk();
                let kids: Vec<Node> = n.children(&mut cursor).filter(|c| c.is_named() && c.kind() != "string_content").collect();
                for c in kids {
                    if c.start_byte() > at {
                        self.dq_text(at, c.start_byte(), out);
                    }
                    self.word_pieces(c, true, out);
                    any = true;
                    at = c.end_byte();
                }
                if inner_end > at {
                    self.dq_text(at, inner_end, out);
                    any = true;
                }
                if !any {
                    out.push(Piece::Quoted(String::new()));
                }
            }
            "simple_expansion" => {
                let t = self.text(n);
                let name = t.strip_prefix('$').unwrap_or(t);
                if name == "-" {
                    self.error(n, format!("special parameter '$-' is not supported ({SUPPORTED_EXPANSIONS})"));
                    return;
                }
                out.push(Piece::Part(var(name.to_string())));
            }
            "expansion" => self.expansion(n, quoted, out),
            "command_substitution" => {
                let at = self.span(n);
                if !self.enter(n, "$(") {
                    return;
                }
                let before = self.errors.len();
                let items = self.list(n);
                self.depth -= 1;
                for e in &mut self.errors[before..] {
                    if !e.message.starts_with("in command substitution") {
                        e.message = format!("in command substitution opened at {at}: {}", e.message);
                    }
                }
                out.push(Piece::Part(WordPart::CmdSubst { script: Box::new(Script { items }), quoted }));
            }
            "arithmetic_expansion" => {
                let t = self.text(n);
                let open = if t.starts_with("$((") { 3 } else { 2 };
                let expr = t.get(open..).unwrap_or("");
                let expr = expr.strip_suffix("))").or_else(|| expr.strip_suffix(']')).unwrap_or(expr).to_string();
                out.push(Piece::Part(WordPart::Arith { expr, quoted }));
            }
            "ansi_c_string" => self.error(n, "ANSI-C quoting $'...' is not supported (use '...' or \"...\")"),
            "translated_string" => self.error(n, "locale quoting $\"...\" is not supported (use \"...\")"),
            "process_substitution" => self.unsupported(n, "process substitution '<(...)' is not supported"),
            "subshell" => self.unsupported(n, "unexpected '(' (quote it as '(' to pass it as an argument)"),
            // Reported by the syntax check.
            "ERROR" => {}
            "string_content" | "heredoc_content" => out.push(Piece::Quoted(self.text(n).to_string())),
            k => {
                let what = excerpt(self.text(n));
                self.unsupported(n, format!("'{what}' ({}) is not supported as a word", k.replace('_', " ")));
            }
        }
    }

    /// Text inside double quotes: `\"`, `\\`, `\$`, `` \` `` and `\newline` are escapes.
    fn dq_text(&self, a: usize, b: usize, out: &mut Vec<Piece>) {
        let raw = self.src.get(a..b).unwrap_or("");
        let mut s = String::new();
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.peek() {
                    Some(&e @ ('"' | '\\' | '$' | '`')) => {
                        chars.next();
                        s.push(e);
                    }
                    Some('\n') => {
                        chars.next();
                    }
                    _ => s.push('\\'),
                }
            } else {
                s.push(c);
            }
        }
        out.push(Piece::Quoted(s));
    }

    /// `${...}`.
    fn expansion(&mut self, n: Node, quoted: bool, out: &mut Vec<Piece>) {
        let t = self.text(n);
        let inner = t.strip_prefix("${").and_then(|s| s.strip_suffix('}'));
        let Some(inner) = inner else {
            self.error(n, "unterminated '${' (opened here); write ${NAME}");
            return;
        };
        let var = |name: String| if quoted { WordPart::QuotedVar(name) } else { WordPart::Var(name) };
        let special = |s: &str| matches!(s, "?" | "!" | "$" | "@" | "*" | "#") || (s.len() == 1 && s.as_bytes()[0].is_ascii_digit());
        if is_name(inner) || special(inner) {
            out.push(Piece::Part(var(inner.to_string())));
            return;
        }
        if let Some(rest) = inner.strip_prefix('#') {
            if is_name(rest) {
                out.push(Piece::Part(var(format!("#{rest}"))));
                return;
            }
        }
        if inner.is_empty() {
            self.error(n, format!("bad substitution '${{}}' ({SUPPORTED_EXPANSIONS})"));
            return;
        }
        if inner.bytes().all(|b| b.is_ascii_digit()) {
            self.error(n, format!("positional parameters like '${{{inner}}}' are not supported ({SUPPORTED_EXPANSIONS})"));
            return;
        }
        // `${NAME<op>ARG[<op2>ARG2]}`: the operator tokens and the nodes after each.
        let mut name = None;
        let mut ops: Vec<(&str, usize, usize)> = Vec::new();
        let mut cursor = n.walk();
        let kids: Vec<Node> = n.children(&mut cursor).collect();
        let body_end = n.end_byte().saturating_sub(1);
        for (i, c) in kids.iter().enumerate() {
            match c.kind() {
                "${" | "}" => {}
                "variable_name" | "special_variable_name" if name.is_none() && ops.is_empty() => name = Some(self.text(*c).to_string()),
                "subscript" if name.is_none() => {
                    self.error(n, format!("arrays are not supported ({SUPPORTED_EXPANSIONS})"));
                    return;
                }
                _ if n.field_name_for_child(i as u32) == Some("operator") || (!c.is_named() && name.is_some()) => {
                    ops.push((self.text(*c), c.end_byte(), body_end));
                    if ops.len() > 1 {
                        let k = ops.len() - 2;
                        ops[k].2 = c.start_byte();
                    }
                }
                _ => {}
            }
        }
        let name = name.unwrap_or_default();
        let op = ops.first().map(|o| o.0).unwrap_or("");
        let pop = match op {
            ":-" | "-" => Some(ParamOp::Default { colon: op.starts_with(':') }),
            ":=" | "=" => Some(ParamOp::Assign { colon: op.starts_with(':') }),
            ":+" | "+" => Some(ParamOp::Alt { colon: op.starts_with(':') }),
            "#" | "##" => Some(ParamOp::RemovePrefix { longest: op == "##" }),
            "%" | "%%" => Some(ParamOp::RemoveSuffix { longest: op == "%%" }),
            "/" | "//" => Some(ParamOp::Replace { all: op == "//" }),
            ":" => Some(ParamOp::Substring),
            _ => None,
        };
        let valid_name = is_name(&name) || special(&name);
        let (Some(pop), true) = (pop, valid_name) else {
            let shown: String = inner.chars().take(20).collect();
            self.error(n, format!("'${{{shown}}}': this parameter expansion is not supported ({SUPPORTED_EXPANSIONS})"));
            return;
        };
        let second = matches!(pop, ParamOp::Replace { .. } | ParamOp::Substring);
        if ops.len() > 2 || (ops.len() == 2 && !second) {
            self.error(n, format!("'${{{}}}': one operator per expansion is supported ({SUPPORTED_EXPANSIONS})", excerpt(inner)));
            return;
        }
        let (_, a0, a1) = ops[0];
        let Some(arg) = self.param_arg(n, &kids, a0, a1, quoted) else { return };
        let arg2 = match ops.get(1) {
            Some(&(_, b0, b1)) => match self.param_arg(n, &kids, b0, b1, quoted) {
                Some(w) => Some(Box::new(w)),
                None => return,
            },
            None => None,
        };
        out.push(Piece::Part(WordPart::Param { name, op: pop, arg: Box::new(arg), arg2, quoted }));
    }

    /// The argument of a `${...}` operator: the text from byte `a` to `b` as a word (the
    /// nodes tree-sitter made of it, and the text between them).
    fn param_arg(&mut self, n: Node, kids: &[Node], a: usize, b: usize, quoted: bool) -> Option<Word> {
        let span = self.span_at(a);
        let mut pieces = Vec::new();
        let mut at = a;
        let before = self.errors.len();
        for &c in kids {
            if c.start_byte() < a || c.end_byte() > b || !c.is_named() {
                continue;
            }
            if c.start_byte() > at {
                let gap = self.src.get(at..c.start_byte()).unwrap_or("").to_string();
                pieces.push(if quoted { Piece::Quoted(gap) } else { Piece::Unq(gap) });
            }
            self.word_pieces(c, quoted, &mut pieces);
            at = c.end_byte();
        }
        if b > at {
            let gap = self.src.get(at..b).unwrap_or("").to_string();
            pieces.push(if quoted { Piece::Quoted(gap) } else { Piece::Unq(gap) });
        }
        if self.errors.len() > before {
            return None;
        }
        if pieces.iter().any(|p| matches!(p, Piece::Part(WordPart::Brace(_)))) {
            self.error(n, format!("brace expansion inside '${{...}}' is not supported ({SUPPORTED_EXPANSIONS})"));
            return None;
        }
        let parts = self.finish(pieces, Ctx::Plain, span)?;
        Some(Word { parts, span })
    }

    /// Quote removal, brace expansion and `~` on the pieces of a word.
    fn finish(&mut self, pieces: Vec<Piece>, ctx: Ctx, span: Span) -> Option<Vec<WordPart>> {
        let mut parts: Vec<WordPart> = Vec::new();
        // Merge adjacent unquoted text first: tree-sitter splits `x{a,b}y` into pieces.
        let mut merged: Vec<Piece> = Vec::new();
        for p in pieces {
            match (merged.last_mut(), p) {
                (Some(Piece::Unq(a)), Piece::Unq(b)) => a.push_str(&b),
                (_, p) => merged.push(p),
            }
        }
        let n = merged.len();
        for (i, p) in merged.into_iter().enumerate() {
            match p {
                Piece::Quoted(s) => push_lit(&mut parts, &s),
                Piece::Part(p) => parts.push(p),
                Piece::Unq(raw) => {
                    let mut raw = raw.as_str();
                    // `~` and `~/...` at the start of a word (or of an assignment's value).
                    if i == 0 && ctx != Ctx::Pattern && (raw == "~" || raw.starts_with("~/") || (raw == "~" && n > 1)) {
                        parts.push(WordPart::QuotedVar("HOME".into()));
                        raw = &raw[1..];
                    }
                    self.unquoted(raw, ctx, span, &mut parts)?;
                }
            }
        }
        Some(parts)
    }

    /// Unquoted text: backslash escapes removed, brace expansions found.
    fn unquoted(&mut self, raw: &str, ctx: Ctx, span: Span, parts: &mut Vec<WordPart>) -> Option<()> {
        let mut lit = String::new();
        let mut i = 0;
        let b = raw.as_bytes();
        while i < raw.len() {
            let c = raw[i..].chars().next().unwrap_or('\0');
            match c {
                '\\' => {
                    let next = raw[i + 1..].chars().next();
                    match next {
                        Some('\n') => i += 2,
                        Some('\r') if b.get(i + 2) == Some(&b'\n') => i += 3,
                        Some(e) => {
                            if ctx == Ctx::Pattern {
                                lit.push('\\');
                            }
                            lit.push(e);
                            i += 1 + e.len_utf8();
                        }
                        None => {
                            lit.push('\\');
                            i += 1;
                        }
                    }
                }
                '{' if ctx != Ctx::Pattern => {
                    if let Some(len) = brace_len(&raw[i..]) {
                        let pattern = &raw[i..i + len];
                        match brace_alternatives(pattern) {
                            Ok(alts) => {
                                push_lit(parts, &std::mem::take(&mut lit));
                                if parts.last().is_some_and(|p| matches!(p, WordPart::Lit(s) if s.is_empty())) {
                                    parts.pop();
                                }
                                parts.push(WordPart::Brace(alts));
                            }
                            Err(m) => {
                                self.errors.push(ParseError::new(span, m));
                                return None;
                            }
                        }
                        i += len;
                    } else {
                        lit.push('{');
                        i += 1;
                    }
                }
                c => {
                    lit.push(c);
                    i += c.len_utf8();
                }
            }
        }
        if !lit.is_empty() {
            push_lit(parts, &lit);
        }
        Some(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ctx {
    /// A command's argument or a `for` word.
    Arg,
    /// An assignment's value.
    Assign,
    /// A redirection target, a `case` word, a test operand.
    Plain,
    /// A `case` pattern: backslashes are kept for the pattern matcher.
    Pattern,
}

/// The `&&`, `||` or `|` written right before byte `at`, if any.
fn after_op(src: &str, at: usize) -> Option<&'static str> {
    let before = src.get(..at)?.trim_end();
    ["&&", "||", "|&", "|"].into_iter().find(|op| before.ends_with(op))
}

/// What follows a here-document's delimiter inside `n`'s here-document redirection: the
/// operator and the node after it.
fn heredoc_continuation<'t>(n: Node<'t>) -> Option<(&'static str, Node<'t>)> {
    if n.kind() != "redirected_statement" {
        return None;
    }
    let mut cursor = n.walk();
    let hd = n.children(&mut cursor).find(|c| c.kind() == "heredoc_redirect")?;
    let mut cur = hd.walk();
    let cont = hd.named_children(&mut cur).find(|c| !matches!(c.kind(), "heredoc_start" | "heredoc_body" | "heredoc_end" | "file_redirect" | "herestring_redirect" | "heredoc_redirect" | "comment"))?;
    let op = cont.child(0)?;
    let opk = match op.kind() {
        "|" => "|",
        "|&" => "|&",
        "&&" => "&&",
        "||" => "||",
        ";" => ";",
        _ => return None,
    };
    let x = cont.named_child(0)?;
    Some((opk, x))
}

/// A word that starts a compound command (after `time`).
fn is_compound_start(w: &str) -> bool {
    matches!(w, "for" | "while" | "until" | "if" | "case" | "{" | "[[" | "!") || w.starts_with('(')
}

fn is_statement(kind: &str) -> bool {
    matches!(
        kind,
        "command" | "pipeline" | "list" | "redirected_statement" | "negated_command" | "variable_assignment" | "variable_assignments"
            | "declaration_command" | "unset_command" | "test_command" | "subshell" | "compound_statement" | "if_statement"
            | "for_statement" | "c_style_for_statement" | "while_statement" | "case_statement" | "function_definition"
    )
}

fn is_skipped(kind: &str) -> bool {
    matches!(kind, "comment" | "heredoc_body" | "heredoc_end" | "heredoc_start")
}

fn push_lit(parts: &mut Vec<WordPart>, s: &str) {
    if let Some(WordPart::Lit(last)) = parts.last_mut() {
        last.push_str(s);
    } else {
        parts.push(WordPart::Lit(s.to_string()));
    }
}

/// At an unquoted `{`: the length of a bash brace expansion (`{1..3}`, `{a,b}`), if it is one.
fn brace_len(rest: &str) -> Option<usize> {
    let after = rest.get(1..)?;
    let len = after.find(|c: char| c == '}' || c.is_whitespace() || matches!(c, '\'' | '"' | '\\' | '$' | '`' | '{' | ';' | '&' | '|' | '<' | '>' | '(' | ')'))?;
    let inner = after.get(..len)?;
    let closed = after.get(len..).is_some_and(|r| r.starts_with('}'));
    (closed && (inner.contains(',') || inner.contains(".."))).then_some(len + 2)
}

/// The words of a brace expansion `{a,b}`, `{1..5}`, `{01..10..2}`, `{a..e}`.
fn brace_alternatives(pattern: &str) -> Result<Vec<String>, String> {
    let inner = &pattern[1..pattern.len() - 1];
    if inner.contains(',') {
        return Ok(inner.split(',').map(str::to_string).collect());
    }
    let pieces: Vec<&str> = inner.split("..").collect();
    let bad = || format!("brace expansion '{pattern}': expected {{FIRST..LAST[..STEP]}} of numbers or letters, or {{a,b,...}}");
    if pieces.len() < 2 || pieces.len() > 3 {
        return Err(bad());
    }
    let step: i64 = match pieces.get(2) {
        Some(s) => s.parse::<i64>().map_err(|_| bad())?.saturating_abs().max(1),
        None => 1,
    };
    if let (Ok(a), Ok(b)) = (pieces[0].parse::<i64>(), pieces[1].parse::<i64>()) {
        let width = if (pieces[0].starts_with('0') && pieces[0].len() > 1) || (pieces[1].starts_with('0') && pieces[1].len() > 1) {
            pieces[0].len().max(pieces[1].len())
        } else {
            0
        };
        let n = (i128::from(a) - i128::from(b)).unsigned_abs() / step as u128 + 1;
        if n > 100_000 {
            return Err(format!("brace expansion '{pattern}' makes {n} words (at most 100000 are supported)"));
        }
        let mut out = Vec::new();
        let mut x = i128::from(a);
        for _ in 0..n {
            out.push(format!("{x:0width$}"));
            if a <= b {
                x += i128::from(step)
            } else {
                x -= i128::from(step)
            }
        }
        return Ok(out);
    }
    let (ca, cb) = (pieces[0].chars().collect::<Vec<_>>(), pieces[1].chars().collect::<Vec<_>>());
    if ca.len() == 1 && cb.len() == 1 && ca[0].is_ascii_alphabetic() && cb[0].is_ascii_alphabetic() {
        let (a, b) = (ca[0] as i64, cb[0] as i64);
        let mut out = Vec::new();
        let mut x = a;
        loop {
            out.push(char::from(x as u8).to_string());
            if x == b || (a <= b && x + step > b) || (a > b && x - step < b) {
                break;
            }
            if a <= b {
                x += step
            } else {
                x -= step
            }
        }
        return Ok(out);
    }
    Err(bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_name("_a1") && is_name("A") && !is_name("1a") && !is_name("") && !is_name("a-b"));
    }

    #[test]
    fn excerpt_is_short_and_one_line() {
        assert_eq!(excerpt("abc"), "abc");
        assert_eq!(excerpt("'a\nb'"), "'a...");
        assert_eq!(excerpt(&"x".repeat(100)).len(), 43);
    }

    #[test]
    fn braces() {
        assert_eq!(brace_len("{1..3}x"), Some(6));
        assert_eq!(brace_len("{a}"), None);
        assert_eq!(brace_alternatives("{01..03}").unwrap(), vec!["01", "02", "03"]);
        assert_eq!(brace_alternatives("{a..c}").unwrap(), vec!["a", "b", "c"]);
        assert!(brace_alternatives("{1..x}").is_err());
    }

    #[test]
    fn line_index() {
        let src = "ab\ncé d\n";
        let li = LineIndex::new(src);
        assert_eq!(li.span(src, 0), Span::new(1, 1));
        assert_eq!(li.span(src, 3), Span::new(2, 1));
        assert_eq!(li.span(src, 7), Span::new(2, 4));
        assert_eq!(li.span(src, 100), Span::new(3, 1));
    }
}
