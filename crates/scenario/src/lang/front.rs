//! The front end: brush-parser's tokens and syntax tree turned into the scenario AST
//! ([`super::ast`]).
//!
//! brush-parser (the parser of the brush shell) tokenizes and parses a script; this module
//! converts its tree, refuses what the interpreter does not model (each refusal says what is
//! supported) and reports positions as line:column.
//!
//! brush-parser's tree has source positions on words and compound commands but not on
//! redirections, pipelines or simple commands. Positions come from the token stream instead:
//! the tree is walked in source order with a cursor in the tokens, so each redirection's
//! operator (and its file descriptor digit) is the token before its target word, and a
//! command's span runs from its first token to its last (here-document bodies left out, as
//! the shell echoes the command line). The echoed text of a command is that slice of the
//! script.
//!
//! brush-parser stops at the first syntax error. After an error, parsing resumes at the next
//! top-level statement boundary after the error's line: the first later line that starts
//! with no block (`if`, `for`, `while`, `until`, `case`, `{`, `(`) open, as counted on the
//! tokens; the script is parsed again from there (positions unchanged), so every error is
//! reported. An unterminated quote ends the scan.

use std::sync::Arc;

use brush_parser::ast as b;
use brush_parser::word::{self as bw, Parameter, ParameterExpr, ParameterTestType, SpecialParameter, WordPiece};
use brush_parser::{ParserOptions, SourcePosition, SourceSpan, Token, TokenizerError};

use super::ast::*;
use super::{ParseError, MAX_BACKTRACK_NESTING, MAX_NESTING};

/// What the language accepts, quoted in error messages about unsupported constructs.
pub(crate) const SUPPORTED: &str = "supported: for, for ((...)), select, while, until, if, case (;; ;& ;;&), functions, { ...; }, ( ... ), (( ... )), [[ ... ]], !, &&, ||, ;, &, |, <(...), redirections";
const SUPPORTED_REDIRECTS: &str = "supported: N> file, N>> file, N< file, N<> file, N>&M, N<&M, N>&-, N<&-, &> file, &>> file, << EOF, <<< word (N and M 0-9)";
/// What the `$` expansions accept.
pub(crate) const SUPPORTED_EXPANSIONS: &str = "supported: $NAME, ${NAME}, ${#NAME}, ${NAME:-x}, ${NAME:=x}, ${NAME:+x}, ${NAME:?msg}, ${NAME#pat}, ${NAME##pat}, ${NAME%pat}, ${NAME%%pat}, ${NAME/pat/rep}, ${NAME^^}, ${NAME,,}, ${NAME^}, ${NAME,}, ${!NAME}, ${!PREFIX*}, ${a[i]}, ${a[@]}, ${!a[@]}, ${#a[@]}, $?, $!, $$, $#, $1..$9, $@, $(...), `...`, $((...)), {1..3}, {a,b}, ~";

/// Most syntax errors reported for one script.
const MAX_ERRORS: usize = 100;

/// Stack of the thread brush-parser runs on (it recurses per nesting level; the nesting
/// checks keep the depth far below what this holds). Reserved, not committed, memory.
const PARSE_STACK: usize = 256 << 20;

fn opts() -> ParserOptions {
    ParserOptions { enable_extended_globbing: false, tilde_expansion_at_word_start: true, ..ParserOptions::default() }
}

pub(crate) fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
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

/// Where a text starts in the script: positions inside it are shifted by this.
#[derive(Clone, Copy, Debug)]
struct Base {
    line: u32,
    col: u32,
}

/// Line and column of a character index of a text. brush-parser's own line and column do
/// not count the newline of a `\` line continuation; its character index is exact.
struct Lines {
    base: Base,
    /// Character index where each line starts.
    starts: Vec<usize>,
    /// Character index in the text brush-parser read -> in the text as written.
    map: Arc<Vec<usize>>,
}

impl Lines {
    fn new(text: &str, base: Base, map: Arc<Vec<usize>>) -> Lines {
        let mut starts = vec![0];
        for (i, c) in text.chars().enumerate() {
            if c == '\n' {
                starts.push(i + 1);
            }
        }
        Lines { base, starts, map }
    }

    fn at(&self, index: usize) -> Span {
        let index = map_index(&self.map, index);
        let l = self.starts.partition_point(|&s| s <= index).max(1);
        self.base.span(l, index - self.starts[l - 1] + 1)
    }

    fn pos(&self, p: &SourcePosition) -> Span {
        self.at(p.index)
    }

    /// Whether a position is inside the text (a position found by counting in a copy of a
    /// part of it, where a line continuation was removed, may not be).
    fn contains(&self, sp: Span) -> bool {
        let Some(l) = (sp.line + 1).checked_sub(self.base.line).map(|l| l as usize) else { return false };
        if l == 0 || l > self.starts.len() {
            return false;
        }
        let len = self.starts.get(l).map_or(usize::MAX, |n| n - self.starts[l - 1] - 1);
        let col = if l == 1 { sp.col.saturating_sub(self.base.col - 1) } else { sp.col } as usize;
        col >= 1 && (len == usize::MAX || col <= len + 1)
    }
}

impl Base {
    const TOP: Base = Base { line: 1, col: 1 };

    fn span(self, line: usize, col: usize) -> Span {
        let line = u32::try_from(line).unwrap_or(u32::MAX).max(1);
        let col = u32::try_from(col).unwrap_or(u32::MAX).max(1);
        if line == 1 {
            Span::new(self.line, self.col.saturating_add(col - 1))
        } else {
            Span::new(self.line.saturating_add(line - 1), col)
        }
    }

    /// The base of a text that starts `prefix` after position `at`.
    fn after(at: Span, prefix: &str) -> Base {
        let mut b = Base { line: at.line, col: at.col };
        for c in prefix.chars() {
            if c == '\n' {
                b.line += 1;
                b.col = 1;
            } else {
                b.col += 1;
            }
        }
        b
    }
}

/// Parse a whole script; every error, in source order.
pub(crate) fn parse_all(src: &str) -> Result<Script, Vec<ParseError>> {
    let src = src.to_string();
    // brush-parser recurses per nesting level: run it on a thread with a large stack (the
    // nesting checks keep the depth far below what that stack holds).
    let res = std::thread::Builder::new()
        .stack_size(PARSE_STACK)
        .spawn(move || std::panic::catch_unwind(|| parse_text(&src, Base::TOP, 0)))
        .ok()
        .and_then(|h| h.join().ok());
    match res {
        Some(Ok(r)) => r,
        _ => Err(vec![ParseError::new(Span::new(1, 1), "the script could not be parsed (the parser failed on it)")]),
    }
}

/// Parse `text` (which starts at `base` in the script), recovering after errors.
fn parse_text(text: &str, base: Base, depth: usize) -> Result<Script, Vec<ParseError>> {
    // Echoed text is sliced from the script as written.
    let written = text;
    // CRLF line ends: the `\r` becomes a blank (positions unchanged).
    let owned;
    let text = if text.contains('\r') {
        owned = text.replace("\r\n", " \n");
        owned.as_str()
    } else {
        text
    };
    let mut errors = Vec::new();
    if let Some(e) = bracket_depth_error(text, base, depth) {
        return Err(vec![e]);
    }
    if let Some(e) = here_tag_error(text, base) {
        return Err(vec![e]);
    }
    // Line continuations are removed before brush-parser reads the text (its positions
    // after one are off); `map` takes positions back to the text as written.
    let (proc, map) = strip_continuations(text);
    let map = Arc::new(map);
    let lines = Lines::new(text, base, map.clone());
    let toks = match brush_parser::tokenize_str_with_options(&proc, &opts().tokenizer_options()) {
        Ok(t) => t,
        Err(e) => {
            // Report the errors before the one that ends the scan, then it.
            let (span, msg) = tokenizer_error(&e, &proc, &lines);
            let cut = line_start(text, (span.line + 1).saturating_sub(base.line) as usize).unwrap_or(text.len());
            if cut > 0 && cut < text.len() {
                if let Err(mut before) = parse_text(&text[..cut], base, depth) {
                    before.retain(|x| (x.line, x.col) < (span.line, span.col));
                    errors.extend(before);
                }
            }
            errors.push(ParseError::new(span, msg));
            return Err(errors);
        }
    };
    let chars = CharIndex::new(text, map.clone());
    let scan = scan_tokens(&toks, &lines);
    let mut toks = toks;
    for &i in &scan.selects {
        let loc = toks[i].location().clone();
        toks[i] = Token::Word("for".into(), loc);
    }
    let mut items = Vec::new();
    let mut from = 0usize; // token index where the current piece starts
    while from < toks.len() {
        // Errors the token scan found (nesting depth, unclosed '(' on which brush-parser's
        // backtracking is exponential, `select`, misplaced reserved words): the statements
        // before the first one are parsed, then it is reported.
        let pre = scan.errors.iter().find(|(i, _)| *i >= from).cloned();
        let limit = match &pre {
            Some((i, _)) => scan.starts.iter().copied().filter(|&s| s >= from && s <= *i).max().unwrap_or(from),
            None => toks.len(),
        };
        let mut stop_at = None;
        // One top-level statement (line) at a time: linear in the script, and an error
        // stays inside its statement.
        let mut a = from;
        while a < limit && stop_at.is_none() {
            let k = scan.starts.partition_point(|&s| s <= a);
            let b = scan.starts.get(k).copied().unwrap_or(toks.len()).min(limit);
            match parse_tokens(&toks[a..b], &chars, written, &lines, depth) {
                Ok((mut its, mut errs)) => {
                    items.append(&mut its);
                    errors.append(&mut errs);
                }
                Err(e) => {
                    stop_at = Some(e.line);
                    errors.push(e);
                    from = a;
                }
            }
            a = b;
        }
        if stop_at.is_none() {
            match pre {
                Some((_, e)) => {
                    stop_at = Some(e.line);
                    errors.push(e);
                }
                None => break,
            }
        }
        if errors.len() >= MAX_ERRORS {
            break;
        }
        // Resume at the first statement boundary on a later line.
        let stop_at = stop_at.unwrap_or(base.line);
        match scan.starts.iter().find(|&&i| i > from && lines.pos(&toks[i].location().start).line > stop_at) {
            Some(&i) => from = i,
            None => break,
        }
    }
    if errors.is_empty() {
        Ok(Script { items })
    } else {
        errors.sort_by_key(|e| (e.line, e.col));
        errors.dedup_by(|b, a| (a.line, a.col) == (b.line, b.col));
        Err(errors)
    }
}

/// Parse and convert one run of tokens: the items, and the converter's errors; or the
/// syntax error.
fn parse_tokens(toks: &[Token], chars: &CharIndex, text: &str, lines: &Lines, depth: usize) -> Result<(Vec<ListItem>, Vec<ParseError>), ParseError> {
    let prog = match brush_parser::parse_tokens(toks, &opts()) {
        Ok(p) => p,
        Err(e) => return Err(syntax_error(&e, toks, lines)),
    };
    let mut conv = Conv { text, chars, toks, lines, base: lines.base, cursor: 0, errors: Vec::new(), depth };
    let mut items = Vec::new();
    for cc in &prog.complete_commands {
        items.extend(conv.list(cc));
    }
    Ok((items, conv.errors))
}

fn line_start(src: &str, line: usize) -> Option<usize> {
    if line <= 1 {
        return Some(0);
    }
    src.match_indices('\n').nth(line - 2).map(|(i, _)| i + 1)
}

/// Character index (of the text brush-parser read) -> byte offset of the text as written.
struct CharIndex {
    bytes: Vec<usize>,
    map: Arc<Vec<usize>>,
}

impl CharIndex {
    fn new(text: &str, map: Arc<Vec<usize>>) -> CharIndex {
        let mut bytes: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        bytes.push(text.len());
        CharIndex { bytes, map }
    }
    fn at(&self, ci: usize) -> usize {
        self.bytes.get(ci).copied().unwrap_or_else(|| self.bytes.last().copied().unwrap_or(0))
    }
    /// Where a span starting at `ci` starts.
    fn byte(&self, ci: usize) -> usize {
        self.at(map_index(&self.map, ci))
    }
    /// Where a span ending (exclusive) at `ci` ends: right after its last character.
    fn byte_end(&self, ci: usize) -> usize {
        if ci == 0 {
            return self.byte(0);
        }
        let last = map_index(&self.map, ci - 1);
        self.at(last + 1)
    }
}

fn map_index(map: &[usize], i: usize) -> usize {
    if map.is_empty() {
        i
    } else {
        map.get(i).copied().unwrap_or_else(|| map.last().copied().unwrap_or(0) + (i + 1).saturating_sub(map.len()))
    }
}

/// The text without its line continuations (`\` newline outside single quotes and
/// comments; here-document bodies are kept as written), and for each character of it (and
/// its end) the character index in `text`. Empty when there is none.
fn strip_continuations(text: &str) -> (String, Vec<usize>) {
    if !text.contains("\\\n") && !(text.contains("((") && text.contains(";;")) {
        return (text.to_string(), Vec::new());
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::with_capacity(chars.len() + 1);
    let mut i = 0;
    let mut word_start = true;
    // Here-document delimiters whose bodies start at the next newline.
    let mut pending: Vec<(String, bool)> = Vec::new();
    let keep = |out: &mut String, map: &mut Vec<usize>, i: usize| {
        out.push(chars[i]);
        map.push(i);
    };
    // Inside `for ((...))`: brush-parser 0.4.0 reads `;;` there as the `case` terminator
    // and refuses `for ((;;))`; a blank goes between the two semicolons.
    let mut in_cfor = false;
    while i < chars.len() {
        let c = chars[i];
        if in_cfor {
            if c == ';' && chars.get(i + 1) == Some(&';') {
                keep(&mut out, &mut map, i);
                out.push(' ');
                map.push(i + 1);
                i += 1;
                continue;
            }
            if c == ')' && chars.get(i + 1) == Some(&')') {
                in_cfor = false;
            }
        } else if word_start && c == 'f' && chars[i..].starts_with(&['f', 'o', 'r']) {
            let mut j = i + 3;
            while j < chars.len() && matches!(chars[j], ' ' | '\t') {
                j += 1;
            }
            if chars.get(j) == Some(&'(') && chars.get(j + 1) == Some(&'(') {
                in_cfor = true;
            }
        }
        match c {
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                i += 2;
                continue;
            }
            '\\' => {
                keep(&mut out, &mut map, i);
                if i + 1 < chars.len() {
                    keep(&mut out, &mut map, i + 1);
                }
                i += 2;
                word_start = false;
                continue;
            }
            '\'' => {
                keep(&mut out, &mut map, i);
                i += 1;
                while i < chars.len() {
                    keep(&mut out, &mut map, i);
                    i += 1;
                    if chars[i - 1] == '\'' {
                        break;
                    }
                }
                word_start = false;
                continue;
            }
            '#' if word_start => {
                while i < chars.len() && chars[i] != '\n' {
                    keep(&mut out, &mut map, i);
                    i += 1;
                }
                continue;
            }
            '<' if chars.get(i + 1) == Some(&'<') && chars.get(i + 2) != Some(&'<') => {
                // `<<[-] WORD`: remember the delimiter.
                let mut j = i + 2;
                let strip = chars.get(j) == Some(&'-');
                if strip {
                    j += 1;
                }
                while j < chars.len() && matches!(chars[j], ' ' | '\t') {
                    j += 1;
                }
                let mut delim = String::new();
                while j < chars.len() && !matches!(chars[j], ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')') {
                    if !matches!(chars[j], '\'' | '"' | '\\') {
                        delim.push(chars[j]);
                    }
                    j += 1;
                }
                if !delim.is_empty() {
                    pending.push((delim, strip));
                }
                keep(&mut out, &mut map, i);
                i += 1;
                word_start = false;
                continue;
            }
            '\n' => {
                keep(&mut out, &mut map, i);
                i += 1;
                word_start = true;
                // Here-document bodies, verbatim.
                for (delim, strip) in std::mem::take(&mut pending) {
                    while i < chars.len() {
                        let start = i;
                        while i < chars.len() && chars[i] != '\n' {
                            i += 1;
                        }
                        let line: String = chars[start..i].iter().collect();
                        let line = if strip { line.trim_start_matches('\t').to_string() } else { line };
                        for k in start..(i + 1).min(chars.len()) {
                            keep(&mut out, &mut map, k);
                        }
                        i = (i + 1).min(chars.len());
                        if line.trim_end_matches('\r') == delim {
                            break;
                        }
                    }
                }
                continue;
            }
            c => {
                keep(&mut out, &mut map, i);
                i += 1;
                word_start = c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')');
            }
        }
    }
    map.push(chars.len());
    (out, map)
}

/// The deepest nesting of brackets (outside single quotes and comments) must stay below
/// [`MAX_NESTING`]: brush-parser's tokenizer and parser recurse per level.
fn bracket_depth_error(text: &str, base: Base, depth: usize) -> Option<ParseError> {
    let mut d = depth;
    let (mut line, mut col) = (1usize, 0usize);
    let mut it = text.chars().peekable();
    let mut prev = ' ';
    while let Some(c) = it.next() {
        col += 1;
        match c {
            '\n' => {
                line += 1;
                col = 0;
            }
            '\\' => {
                if it.next() == Some('\n') {
                    line += 1;
                    col = 0;
                } else {
                    col += 1;
                }
            }
            '\'' => {
                for q in it.by_ref() {
                    if q == '\n' {
                        line += 1;
                        col = 0;
                    } else {
                        col += 1;
                    }
                    if q == '\'' {
                        break;
                    }
                }
            }
            '#' if prev.is_whitespace() || col == 1 => {
                for q in it.by_ref() {
                    if q == '\n' {
                        line += 1;
                        col = 0;
                        break;
                    }
                }
            }
            '(' | '{' | '`' => {
                d += 1;
                if d > MAX_NESTING {
                    return Some(ParseError::new(
                        base.span(line, col),
                        format!("'{c}' is nested too deeply (at most {MAX_NESTING} levels are supported)"),
                    ));
                }
            }
            ')' | '}' => d = d.saturating_sub(1),
            _ => {}
        }
        prev = c;
    }
    None
}

/// A here-document whose delimiter word has a substitution in it (`<<E$(`, `` <<`x` ``,
/// `<<${A}`): refused before brush-parser 0.4.0 sees it, whose tokenizer, looking for the
/// end of such a delimiter inside the nested construct, allocates without bound (`<<E$( <F;#`
/// took all of a 24 GiB host). bash does not expand a delimiter either (quote removal only).
fn here_tag_error(text: &str, base: Base) -> Option<ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let (mut line, mut col) = (1usize, 0usize);
    let mut i = 0;
    let mut prev = ' ';
    let advance = |c: char, line: &mut usize, col: &mut usize| {
        if c == '\n' {
            *line += 1;
            *col = 0;
        } else {
            *col += 1;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        advance(c, &mut line, &mut col);
        match c {
            '\\' => {
                if let Some(&n) = chars.get(i + 1) {
                    advance(n, &mut line, &mut col);
                    i += 1;
                }
            }
            '\'' | '"' => {
                // A quoted string: its '<<' is text.
                i += 1;
                while i < chars.len() && chars[i] != c {
                    if c == '"' && chars[i] == '\\' && i + 1 < chars.len() {
                        advance(chars[i], &mut line, &mut col);
                        i += 1;
                    }
                    advance(chars[i], &mut line, &mut col);
                    i += 1;
                }
                if i < chars.len() {
                    advance(chars[i], &mut line, &mut col);
                }
            }
            '#' if prev.is_whitespace() || col == 1 => {
                while i + 1 < chars.len() && chars[i + 1] != '\n' {
                    i += 1;
                }
            }
            '<' if chars.get(i + 1) == Some(&'<') && chars.get(i + 2) != Some(&'<') && prev != '<' => {
                let (at_line, at_col) = (line, col);
                let mut j = i + 2;
                if chars.get(j) == Some(&'-') {
                    j += 1;
                }
                while matches!(chars.get(j), Some(' ' | '\t')) {
                    j += 1;
                }
                let start = j;
                while j < chars.len() && !chars[j].is_whitespace() && !matches!(chars[j], ';' | '&' | '|' | '<' | '>' | ')') {
                    j += 1;
                }
                let word: String = chars[start..j].iter().collect();
                if word.contains("$(") || word.contains("${") || word.contains('`') {
                    return Some(ParseError::new(
                        base.span(at_line, at_col),
                        format!("here-document delimiter '{word}': a substitution in a delimiter is not supported (bash does not expand it: quote it or use a plain word)"),
                    ));
                }
            }
            _ => {}
        }
        prev = c;
        i += 1;
    }
    None
}

/// What the token scan finds: statement starts at block depth 0 (token indices), and errors
/// found before parsing (token index, error).
struct Scan {
    starts: Vec<usize>,
    errors: Vec<(usize, ParseError)>,
    /// Token indices of `select` keywords (brush-parser 0.4.0 has no `select`: the token
    /// becomes `for`, and the converter marks the loop as a `select`).
    selects: Vec<usize>,
}

fn tok_str(t: &Token) -> (&str, bool) {
    match t {
        Token::Operator(s, _) => (s.as_str(), true),
        Token::Word(s, _) => (s.as_str(), false),
    }
}

fn closer_of(opener: &str) -> &'static str {
    match opener {
        "if" => "fi",
        "case" => "esac",
        "{" => "}",
        "(" => ")",
        _ => "done",
    }
}

/// Open subshells and `case` statements: the blocks brush-parser may parse twice.
fn backtrack_depth(stack: &[(&str, usize)]) -> usize {
    stack.iter().filter(|(o, _)| matches!(*o, "(" | "case")).count()
}

fn backtrack_message() -> String {
    format!("subshells and 'case' statements are nested too deeply (at most {MAX_BACKTRACK_NESTING} levels together are supported)")
}

/// Walk the tokens counting blocks (reserved words in command position, `{`, `(`), and
/// find the errors brush-parser would report late or not where they are: misplaced
/// reserved words, `time` inside a pipeline, `select`, nesting too deep, `(` after a word.
/// After a misplaced closing word the open blocks are forgotten (the recovery rule).
fn scan_tokens(toks: &[Token], base: &Lines) -> Scan {
    let mut starts = Vec::new();
    let mut errors: Vec<(usize, ParseError)> = Vec::new();
    // (opener, token index)
    let mut stack: Vec<(&str, usize)> = Vec::new();
    // Per open block: whether its `then` / `do` came.
    let mut body_seen: Vec<bool> = Vec::new();
    let mut cmd_pos = true;
    let mut at_line_start = true;
    // `for NAME in WORDS`: the words are not in command position until `;`/newline/`do`.
    let mut in_words = false;
    let mut in_words_n = 0usize;
    let mut case_pattern = false;
    // The reserved word or operator that wants a command next (`then`, `&&`, ...).
    let mut wants: Option<&str> = None;
    let span_of = |i: usize| base.pos(&toks[i].location().start);
    let push_err = |errors: &mut Vec<(usize, ParseError)>, i: usize, m: String| {
        if !errors.iter().any(|(j, _)| *j == i) {
            errors.push((i, ParseError::new(span_of(i), m)));
        }
    };
    let mut prev_word = false;
    let mut selects = Vec::new();
    // The `)` of a function definition's `()`.
    let mut fn_paren = false;
    // The walk stopped at a nesting limit: what is still open is not unclosed.
    let mut cut_short = false;
    for (i, t) in toks.iter().enumerate() {
        let (s, op) = tok_str(t);
        if at_line_start && stack.is_empty() && !matches!(wants, Some("&&" | "||" | "|" | "|&")) && !(op && s == "\n") {
            starts.push(i);
        }
        at_line_start = false;
        if op {
            match s {
                "\n" | ";" | "&" | "&&" | "||" | "|" | "|&" | ";;" | ";&" | ";;&" => {
                    if s == "\n" {
                        at_line_start = true;
                    }
                    if matches!(s, ";;" | ";&" | ";;&") {
                        case_pattern = true;
                        wants = None;
                    }
                    if matches!(s, "&&" | "||" | "|" | "|&") {
                        wants = Some(s);
                    } else if matches!(s, ";" | "&") && matches!(wants, Some("&&" | "||" | "|" | "|&")) {
                        // brush-parser reports this one itself.
                        wants = None;
                    }
                    cmd_pos = true;
                    in_words = false;
                }
                "(" => {
                    if cmd_pos && !case_pattern {
                        stack.push(("(", i));
                        if stack.len() > MAX_NESTING {
                            push_err(&mut errors, i, format!("blocks are nested too deeply (at most {MAX_NESTING} levels are supported)"));
                            cut_short = true;
                            break;
                        }
                        if backtrack_depth(&stack) > MAX_BACKTRACK_NESTING {
                            push_err(&mut errors, i, backtrack_message());
                            cut_short = true;
                            break;
                        }
                        wants = None;
                    } else if matches!(toks.get(i + 1).map(tok_str), Some((")", true)))
                        || (i > 0 && matches!(tok_str(&toks[i - 1]), (w, false) if w.ends_with('=')))
                    {
                        // `f()`, or an array assignment `a=(...)`.
                        fn_paren = true;
                    } else if !case_pattern && !in_words && prev_word {
                        push_err(&mut errors, i, format!("unexpected '(' (quote it as '(' to pass it as an argument; {SUPPORTED})"));
                    }
                    cmd_pos = true;
                }
                ")" => {
                    if fn_paren {
                        fn_paren = false;
                    } else if case_pattern && stack.last().is_some_and(|(o, _)| *o == "case") {
                        case_pattern = false;
                    } else if stack.last().is_some_and(|(o, _)| *o == "(") {
                        stack.pop();
                    }
                    cmd_pos = true;
                }
                _ => cmd_pos = false,
            }
            prev_word = false;
            continue;
        }
        prev_word = true;
        if in_words {
            in_words_n += 1;
            // `for NAME do`: the body; `for NAME in ... do` is a word until `;` or newline.
            if s == "do" && in_words_n == 2 {
                if let Some(seen) = body_seen.last_mut() {
                    *seen = true;
                }
                in_words = false;
                cmd_pos = true;
                wants = Some("do");
            }
            continue;
        }
        if case_pattern {
            if s == "esac" {
                case_pattern = false;
                if stack.last().is_some_and(|(o, _)| *o == "case") {
                    stack.pop();
                }
            }
            continue;
        }
        if !cmd_pos {
            continue;
        }
        let closer = matches!(s, "fi" | "done" | "esac" | "}" | "then" | "do" | "else" | "elif");
        if closer {
            if let Some(w) = wants {
                let m = match w {
                    "if" | "elif" | "while" | "until" => format!("expected a condition after '{w}', found '{s}'"),
                    _ => format!("expected a command after '{w}', found '{s}'"),
                };
                push_err(&mut errors, i, m);
                stack.clear();
                wants = None;
                cmd_pos = false;
                continue;
            }
        }
        wants = None;
        match s {
            "if" | "case" | "for" | "while" | "until" | "{" | "select" => {
                if s == "select" {
                    selects.push(i);
                }
                stack.push((s, i));
                body_seen.resize(stack.len() - 1, false);
                body_seen.push(!matches!(s, "if" | "for" | "while" | "until" | "select"));
                if stack.len() > MAX_NESTING {
                    push_err(&mut errors, i, format!("blocks are nested too deeply (at most {MAX_NESTING} levels are supported)"));
                    cut_short = true;
                    break;
                }
                if s == "case" && backtrack_depth(&stack) > MAX_BACKTRACK_NESTING {
                    push_err(&mut errors, i, backtrack_message());
                    cut_short = true;
                    break;
                }
                if matches!(s, "for" | "select") {
                    in_words = true;
                    in_words_n = 0;
                }
                if matches!(s, "if" | "while" | "until") {
                    wants = Some(s);
                }
                cmd_pos = !matches!(s, "case" | "for" | "select");
            }
            "in" if stack.last().is_some_and(|(o, _)| *o == "case") => {
                case_pattern = true;
                cmd_pos = false;
            }
            "fi" | "done" | "esac" | "}" => {
                match stack.iter().rposition(|(o, _)| closer_of(o) == s) {
                    Some(k) if k + 1 == stack.len() && !body_seen.get(k).copied().unwrap_or(true) => {
                        let (o, j) = stack[k];
                        let m = if o == "if" {
                            format!("expected 'then' after the condition of the 'if' started at line {}, found '{s}'", span_of(j).line)
                        } else if o == "for" || o == "select" {
                            format!("expected 'do' after the word list of the '{o}' started at line {}, found '{s}'", span_of(j).line)
                        } else {
                            format!("expected 'do' after the condition of the '{o}' started at line {}, found '{s}'", span_of(j).line)
                        };
                        push_err(&mut errors, i, m);
                        stack.clear();
                    }
                    Some(k) if k + 1 == stack.len() => {
                        stack.truncate(k);
                    }
                    _ => {
                        let m = match stack.last() {
                            Some((o, j)) => format!("expected '{}' to close the '{o}' started at line {}, found '{s}'", closer_of(o), span_of(*j).line),
                            None => {
                                let why = match s {
                                    "done" => "there is no open loop",
                                    "fi" => "there is no open 'if'",
                                    "esac" => "there is no open 'case'",
                                    _ => "there is no open '{'",
                                };
                                format!("unexpected '{s}' ({why})")
                            }
                        };
                        push_err(&mut errors, i, m);
                        stack.clear();
                    }
                }
                cmd_pos = false;
            }
            "then" | "do" | "else" | "elif" => {
                if let (Some(seen), Some((o, _))) = (body_seen.get_mut(stack.len().wrapping_sub(1)), stack.last()) {
                    if (s == "then" && *o == "if") || (s == "do" && matches!(*o, "while" | "until" | "for" | "select")) {
                        *seen = true;
                    }
                }
                if s == "elif" {
                    if let Some(seen) = body_seen.get_mut(stack.len().wrapping_sub(1)) {
                        *seen = false;
                    }
                }
                if stack.is_empty() {
                    let why = if s == "do" { "there is no open loop" } else { "there is no open 'if'" };
                    push_err(&mut errors, i, format!("unexpected '{s}' ({why})"));
                }
                wants = Some(s);
                if s == "elif" {
                    wants = Some("elif");
                }
                cmd_pos = true;
            }
            "!" => cmd_pos = true,
            "-p" | "--" if i > 0 && matches!(tok_str(&toks[i - 1]), ("time" | "-p", false)) => cmd_pos = true,
            "time" => {
                if i > 0 && matches!(tok_str(&toks[i - 1]), ("|" | "|&", true)) {
                    push_err(&mut errors, i, format!("'time' is only accepted at the start of a pipeline ({SUPPORTED})"));
                }
                wants = Some("time");
                cmd_pos = true;
            }
            _ => cmd_pos = false,
        }
    }
    // An unclosed '(' at the end: reported here (brush-parser's backtracking on it is
    // exponential in the number of open parentheses).
    if let Some(&(_, i)) = stack.iter().find(|(o, _)| *o == "(").filter(|_| !cut_short) {
        let end = toks.last().map(|t| base.pos(&t.location().end)).unwrap_or(Span::new(base.base.line, base.base.col));
        let at = span_of(i);
        if !errors.iter().any(|(j, _)| *j <= i) {
            errors.push((i, ParseError::new(end, format!("expected ')' to close the '(' started at line {}, found end of input", at.line))));
        }
    }
    errors.sort_by_key(|(i, _)| *i);
    Scan { starts, errors, selects }
}

/// A syntax error from brush-parser, with what was open at that point.
fn syntax_error(e: &brush_parser::ParseError, toks: &[Token], base: &Lines) -> ParseError {
    let (idx, at) = match e {
        brush_parser::ParseError::ParsingNear(p) => (toks.iter().position(|t| t.location().start.index >= p.index), base.pos(p)),
        brush_parser::ParseError::ParsingAtEndOfInput => (None, toks.last().map(|t| base.pos(&t.location().end)).unwrap_or(Span::new(base.base.line, base.base.col))),
        brush_parser::ParseError::Tokenizing { position, .. } => (None, position.as_ref().map(|p| base.pos(p)).unwrap_or(Span::new(base.base.line, base.base.col))),
    };
    // The blocks open before the error.
    let upto = idx.unwrap_or(toks.len());
    let mut stack: Vec<(String, Span)> = Vec::new();
    let mut cmd_pos = true;
    for t in &toks[..upto] {
        let (s, op) = tok_str(t);
        if op {
            cmd_pos = matches!(s, "\n" | ";" | "&" | "&&" | "||" | "|" | "(" | ")" | ";;");
            if s == "(" && cmd_pos {
                stack.push(("(".into(), base.pos(&t.location().start)));
            } else if s == ")" && stack.last().is_some_and(|(o, _)| o == "(") {
                stack.pop();
            }
            continue;
        }
        if !cmd_pos {
            continue;
        }
        match s {
            "if" | "case" | "for" | "while" | "until" | "{" => stack.push((s.to_string(), base.pos(&t.location().start))),
            "fi" | "done" | "esac" | "}" => {
                if let Some(k) = stack.iter().rposition(|(o, _)| closer_of(o) == s) {
                    stack.truncate(k);
                }
            }
            _ => {}
        }
        cmd_pos = matches!(s, "then" | "do" | "else" | "elif" | "!" | "time" | "{");
    }
    let found = match idx.and_then(|i| toks.get(i)) {
        Some(t) => match tok_str(t) {
            ("\n", true) => "a newline".to_string(),
            (s, _) => format!("'{}'", excerpt(s)),
        },
        None => "end of input".to_string(),
    };
    let found_word = idx.and_then(|i| toks.get(i)).map(|t| tok_str(t).0.to_string()).unwrap_or_default();
    let is_closer = matches!(found_word.as_str(), "fi" | "done" | "esac" | "}" | ")" | "then" | "do" | "else" | "elif");
    let msg = match stack.last() {
        Some((o, sp)) if idx.is_none() || is_closer => {
            format!("syntax error: expected '{}' to close the '{o}' started at line {}, found {found}", closer_of(o), sp.line)
        }
        None if is_closer => {
            let why = match found_word.as_str() {
                "do" | "done" => "there is no open loop",
                "then" | "elif" | "else" | "fi" => "there is no open 'if'",
                "esac" => "there is no open 'case'",
                "}" => "there is no open '{'",
                _ => "there is no open '('",
            };
            format!("syntax error: unexpected {found} ({why})")
        }
        _ if idx.is_none() => match toks.iter().rev().map(tok_str).find(|t| *t != ("\n", true)) {
            Some((o @ ("&&" | "||" | "|" | "|&"), true)) => format!("syntax error: expected a command after '{o}', found end of input"),
            Some((o, true)) if is_redir_op(o) => format!("syntax error: expected a file name after '{o}', found end of input"),
            _ => "syntax error: unexpected end of input".to_string(),
        },
        _ => format!("syntax error near unexpected token {found}"),
    };
    ParseError::new(at, msg)
}

fn tokenizer_error(e: &TokenizerError, text: &str, base: &Lines) -> (Span, String) {
    let end = base.at(text.chars().count());
    // Where the last unclosed opener is (brush-parser reports the end of the input).
    let last = |open: &str| text.rfind(open).map(|i| base.at(text[..i].chars().count())).unwrap_or(end);
    match e {
        TokenizerError::UnterminatedSingleQuote(p) => (base.pos(p), "unterminated single quote (opened here)".into()),
        TokenizerError::UnterminatedDoubleQuote(p) => (base.pos(p), "unterminated double quote (opened here)".into()),
        TokenizerError::UnterminatedAnsiCQuote(p) => (base.pos(p), "unterminated $'...' quote (opened here)".into()),
        TokenizerError::UnterminatedBackquote(p) => (base.pos(p), "unterminated backquote (opened here)".into()),
        TokenizerError::UnterminatedExtendedGlob(p) => (base.pos(p), "unterminated extended glob".into()),
        TokenizerError::UnterminatedCommandSubstitution | TokenizerError::UnterminatedExpansion if text.contains("$((") => {
            (last("$(("), "unterminated '$((' (opened here; expected '))')".into())
        }
        TokenizerError::UnterminatedCommandSubstitution => (last("$("), "unterminated '$(' (opened here; expected ')')".into()),
        TokenizerError::UnterminatedVariable | TokenizerError::UnterminatedExpansion => (last("${"), "unterminated '${' (opened here; expected '}')".into()),
        TokenizerError::UnterminatedEscapeSequence => (end, "a '\\' at the end of the script".into()),
        TokenizerError::UnterminatedHereDocuments(tags, _) => (end, format!("here-document delimited by end of input (wanted '{tags}')")),
        other => (end, other.to_string()),
    }
}

/// The converter of one parsed run of tokens.
struct Conv<'a> {
    text: &'a str,
    chars: &'a CharIndex,
    toks: &'a [Token],
    lines: &'a Lines,
    base: Base,
    /// Index of the next token not yet attributed to a node.
    cursor: usize,
    errors: Vec<ParseError>,
    /// Nesting of command substitutions.
    depth: usize,
}

/// A located part of a command: its first and last token, and end position.
#[derive(Clone, Copy)]
struct Extent {
    start: usize,
    end: usize,
}

impl<'a> Conv<'a> {
    fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.errors.push(ParseError::new(span, msg));
    }

    fn pos(&self, p: &SourcePosition) -> Span {
        self.lines.pos(p)
    }

    fn tok_at(&self, index: usize) -> Option<usize> {
        self.toks.binary_search_by_key(&index, |t| t.location().start.index).ok().or_else(|| {
            // Here-document bodies and tags are out of order: search linearly.
            self.toks.iter().position(|t| t.location().start.index == index)
        })
    }

    /// The text between two character indices.
    fn slice(&self, from: usize, to: usize) -> &'a str {
        let (a, b) = (self.chars.byte(from), self.chars.byte_end(to.max(from)).max(self.chars.byte(from)));
        self.text.get(a..b).unwrap_or("")
    }

    fn list(&mut self, l: &b::CompoundList) -> Vec<ListItem> {
        let mut out = Vec::new();
        for item in &l.0 {
            let before = self.errors.len();
            match self.and_or(&item.0) {
                Some(ao) => {
                    let span = ao.first.span;
                    out.push(ListItem { and_or: ao, background: matches!(item.1, b::SeparatorOperator::Async), span });
                }
                None if self.errors.len() == before => {
                    // Never drop a command silently.
                    let sp = self.toks.get(self.cursor).map(|t| self.pos(&t.location().start)).unwrap_or(Span::new(self.base.line, self.base.col));
                    self.error(sp, "this command could not be read (no position for it in the parsed script)");
                }
                None => {}
            }
        }
        out
    }

    fn and_or(&mut self, l: &b::AndOrList) -> Option<AndOr> {
        let first = self.pipeline(&l.first);
        let mut rest = Vec::new();
        for a in &l.additional {
            let (c, p) = match a {
                b::AndOr::And(p) => (Connector::And, p),
                b::AndOr::Or(p) => (Connector::Or, p),
            };
            if let Some(p) = self.pipeline(p) {
                rest.push((c, p));
            }
        }
        Some(AndOr { first: first?, rest })
    }

    fn pipeline(&mut self, p: &b::Pipeline) -> Option<Pipeline> {
        let (timed, time_posix, time_start) = match &p.timed {
            Some(b::PipelineTimed::Timed(s)) => (true, false, Some(s.start.index)),
            Some(b::PipelineTimed::TimedWithPosixOutput(s)) => (true, true, Some(s.start.index)),
            None => (false, false, None),
        };
        if timed {
            // `time -v`: brush-parser takes `-v` as the command.
            if let Some(b::Command::Simple(sc)) = p.seq.first() {
                if let Some(w) = &sc.word_or_name {
                    if w.value.starts_with('-') && w.value != "-" && w.value != "--" {
                        let sp = w.loc.as_ref().map(|l| self.pos(&l.start)).unwrap_or_default();
                        self.error(sp, format!("'time' accepts only -p, not '{}' (for GNU time's options run /usr/bin/time)", excerpt(&w.value)));
                        return None;
                    }
                }
            }
        }
        let mut commands = Vec::new();
        let mut ext: Option<Extent> = None;
        let mut first_start = None;
        for c in &p.seq {
            let (cmd, e) = self.command(c)?;
            if first_start.is_none() {
                first_start = Some(e.start);
            }
            ext = Some(Extent { start: ext.map_or(e.start, |x| x.start), end: e.end });
            commands.push(cmd);
        }
        let Some(e) = ext else {
            if let Some(t) = time_start {
                let i = self.tok_at(t).map(|i| i + 1).unwrap_or(self.toks.len());
                let (sp, found) = match self.toks.get(i) {
                    Some(t) => (self.pos(&t.location().start), format!("'{}'", excerpt(tok_str(t).0).replace('\n', "\\n"))),
                    None => (self.toks.last().map(|t| self.pos(&t.location().end)).unwrap_or_default(), "end of input".into()),
                };
                self.error(sp, format!("expected a command after 'time', found {found}"));
            }
            return None;
        };
        let mut start = time_start.unwrap_or(e.start);
        if p.bang {
            // The `!` is the token before the first command.
            if let Some(i) = first_start.and_then(|s| self.tok_at(s)) {
                let mut k = i;
                while k > 0 {
                    k -= 1;
                    if tok_str(&self.toks[k]).0 == "!" {
                        let s = self.toks[k].location().start.index;
                        if time_start.is_none() {
                            start = s;
                        }
                        break;
                    }
                }
            }
        }
        let span = self.span_of_index(start);
        let source = self.slice(start, e.end).trim().to_string();
        Some(Pipeline { commands, timed, negated: p.bang, time_posix, source, span })
    }

    /// The span of the token starting at character `index` (or the position counted in the
    /// text).
    fn span_of_index(&self, index: usize) -> Span {
        match self.tok_at(index) {
            Some(i) => self.pos(&self.toks[i].location().start),
            None => self.lines.at(index),
        }
    }

    fn command(&mut self, c: &b::Command) -> Option<(Command, Extent)> {
        match c {
            b::Command::Simple(sc) => {
                let (s, e) = self.simple(sc)?;
                Some((Command::Simple(s), e))
            }
            b::Command::Compound(cc, redirs) => {
                let (mut cmd, mut e) = self.compound(cc)?;
                if let Some(rl) = redirs {
                    let mut rs = Vec::new();
                    for r in &rl.0 {
                        if let Some((red, end)) = self.redirect(r) {
                            e.end = e.end.max(end);
                            rs.push(red);
                        }
                    }
                    match &mut cmd {
                        Command::For(f) => f.redirects = rs,
                        Command::ArithFor(f) => f.redirects = rs,
                        Command::If(f) => f.redirects = rs,
                        Command::While(f) => f.redirects = rs,
                        Command::Case(f) => f.redirects = rs,
                        Command::Group(f) => f.redirects = rs,
                        Command::Arith(a) if !rs.is_empty() => {
                            self.error(a.span, format!("redirections after '(( ... ))' are not supported ({SUPPORTED_REDIRECTS})"));
                        }
                        _ => {}
                    }
                }
                Some((cmd, e))
            }
            b::Command::Function(f) => {
                let name = f.fname.value.clone();
                let loc = f.fname.loc.clone()?;
                let span = self.pos(&loc.start);
                self.seek(loc.end.index);
                let (mut body, mut e) = self.compound(&f.body.0)?;
                if let Some(rl) = &f.body.1 {
                    let mut rs = Vec::new();
                    for r in &rl.0 {
                        if let Some((red, end)) = self.redirect(r) {
                            e.end = e.end.max(end);
                            rs.push(red);
                        }
                    }
                    if let Command::Group(g) = &mut body {
                        g.redirects = rs;
                    }
                }
                if !(is_name(&name) || name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))) {
                    self.error(span, format!("'{}' is not a valid function name", excerpt(&name)));
                }
                // `function f { ...; }`: the span starts at `function`.
                let mut start = loc.start.index;
                if let Some(i) = self.tok_at(start) {
                    if i > 0 && tok_str(&self.toks[i - 1]) == ("function", false) {
                        start = self.toks[i - 1].location().start.index;
                    }
                }
                let span = self.span_of_index(start).min(span);
                Some((Command::FuncDef(FuncDef { name, body: Box::new(body), span }), Extent { start, end: e.end }))
            }
            b::Command::ExtendedTest(t, redirs) => {
                let span = self.pos(&t.loc.start);
                let (a, z) = (t.loc.start.index, t.loc.end.index);
                let mut words = Vec::new();
                let first = self.tok_at(a).unwrap_or(self.cursor);
                let mut k = first;
                while k < self.toks.len() && self.toks[k].location().start.index < z {
                    let t = &self.toks[k];
                    let sp = self.pos(&t.location().start);
                    match t {
                        Token::Word(w, loc) => {
                            let w = self.word_raw(w, sp, Ctx::Plain, loc.start.index)?;
                            words.push(w);
                        }
                        Token::Operator(o, _) => words.push(Word::literal(o.clone(), sp)),
                    }
                    k += 1;
                }
                self.cursor = self.cursor.max(k);
                let mut e = Extent { start: a, end: z };
                let mut redirects = Vec::new();
                if let Some(rl) = redirs {
                    for r in &rl.0 {
                        if let Some((red, end)) = self.redirect(r) {
                            e.end = e.end.max(end);
                            redirects.push(red);
                        }
                    }
                }
                let source = self.slice(e.start, e.end).trim().to_string();
                Some((Command::Simple(SimpleCommand { assignments: Vec::new(), words, redirects, source, span }), e))
            }
        }
    }

    /// Move the token cursor past the token that starts at or after character `index`.
    fn seek(&mut self, index: usize) {
        while self.cursor < self.toks.len() && self.toks[self.cursor].location().start.index < index {
            self.cursor += 1;
        }
    }

    fn compound(&mut self, cc: &b::CompoundCommand) -> Option<(Command, Extent)> {
        let loc_of = |l: &SourceSpan| Extent { start: l.start.index, end: l.end.index };
        match cc {
            b::CompoundCommand::Arithmetic(a) => {
                let e = loc_of(&a.loc);
                let span = self.pos(&a.loc.start);
                self.seek(e.end);
                // The expression as written between `((` and `))`.
                let written = self.slice(e.start, e.end);
                let expr = written.strip_prefix("((").and_then(|x| x.strip_suffix("))")).map_or_else(|| a.expr.value.clone(), str::to_string);
                Some((Command::Arith(ArithCommand { expr, span }), e))
            }
            b::CompoundCommand::ArithmeticForClause(f) => {
                let e = loc_of(&f.loc);
                let span = self.pos(&f.loc.start);
                self.seek(f.body.loc.start.index);
                let body = self.list(&f.body.list);
                self.seek(e.end);
                let text = |x: &Option<b::UnexpandedArithmeticExpr>| x.as_ref().map(|x| x.value.clone()).unwrap_or_default();
                Some((
                    Command::ArithFor(ArithFor { init: text(&f.initializer), cond: text(&f.condition), step: text(&f.updater), body, redirects: Vec::new(), span }),
                    e,
                ))
            }
            b::CompoundCommand::BraceGroup(g) => {
                let e = loc_of(&g.loc);
                let span = self.pos(&g.loc.start);
                self.seek(e.start + 1);
                let body = self.list(&g.list);
                self.seek(e.end);
                Some((Command::Group(Group { subshell: false, body, redirects: Vec::new(), span }), e))
            }
            b::CompoundCommand::Subshell(g) => {
                let e = loc_of(&g.loc);
                let span = self.pos(&g.loc.start);
                self.seek(e.start + 1);
                let body = self.list(&g.list);
                self.seek(e.end);
                Some((Command::Group(Group { subshell: true, body, redirects: Vec::new(), span }), e))
            }
            b::CompoundCommand::ForClause(f) => {
                let e = loc_of(&f.loc);
                let span = self.pos(&f.loc.start);
                let ti = self.tok_at(e.start).unwrap_or(self.cursor);
                let at = |k: usize| self.toks.get(ti + k).map(|t| self.pos(&t.location().start)).unwrap_or(span);
                let (name_at, after_name) = (at(1), at(2));
                self.seek(e.start + 1);
                if !is_name(&f.variable_name) {
                    self.error(name_at, format!("'{}' is not a valid variable name", excerpt(&f.variable_name)));
                }
                let empty = Vec::new();
                let values = match &f.values {
                    Some(v) => v,
                    // `for x in; do`: no words.
                    None if self.toks.get(ti + 2).map(tok_str) == Some(("in", false)) => &empty,
                    None => {
                        self.error(after_name, "'for NAME' without 'in WORDS' is not supported (write 'for NAME in \"$@\"')");
                        return None;
                    }
                };
                let mut words = Vec::new();
                for w in values {
                    if let Some(w) = self.word(w, Ctx::Arg) {
                        words.push(w);
                    }
                }
                self.seek(f.body.loc.start.index);
                let body = self.list(&f.body.list);
                self.seek(e.end);
                let select = self.slice(e.start, e.start + 6) == "select";
                Some((Command::For(ForLoop { var: f.variable_name.clone(), words, body, redirects: Vec::new(), span, select }), e))
            }
            b::CompoundCommand::CaseClause(c) => {
                let e = loc_of(&c.loc);
                let span = self.pos(&c.loc.start);
                self.seek(e.start + 1);
                let word = self.word(&c.value, Ctx::Plain)?;
                let mut arms = Vec::new();
                let mut ends = Vec::new();
                for item in &c.cases {
                    ends.push(match item.post_action {
                        b::CaseItemPostAction::ExitCase => CaseEnd::Break,
                        b::CaseItemPostAction::UnconditionallyExecuteNextCaseItem => CaseEnd::FallThrough,
                        b::CaseItemPostAction::ContinueEvaluatingCases => CaseEnd::Continue,
                    });
                    let mut pats = Vec::new();
                    for p in &item.patterns {
                        if let Some(w) = self.word(p, Ctx::Pattern) {
                            pats.push(w);
                        }
                    }
                    let body = item.cmd.as_ref().map(|l| self.list(l)).unwrap_or_default();
                    arms.push((pats, body));
                }
                self.seek(e.end);
                Some((Command::Case(CaseClause { word, arms, ends, redirects: Vec::new(), span }), e))
            }
            b::CompoundCommand::IfClause(i) => {
                let e = loc_of(&i.loc);
                let span = self.pos(&i.loc.start);
                self.seek(e.start + 1);
                let mut branches = vec![(self.list(&i.condition), self.list(&i.then))];
                let mut else_body = None;
                for el in i.elses.iter().flatten() {
                    match &el.condition {
                        Some(c) => {
                            let cond = self.list(c);
                            let body = self.list(&el.body);
                            branches.push((cond, body));
                        }
                        None => else_body = Some(self.list(&el.body)),
                    }
                }
                self.seek(e.end);
                Some((Command::If(IfClause { branches, else_body, redirects: Vec::new(), span }), e))
            }
            b::CompoundCommand::WhileClause(w) | b::CompoundCommand::UntilClause(w) => {
                let until = matches!(cc, b::CompoundCommand::UntilClause(_));
                let e = loc_of(&w.2);
                let span = self.pos(&w.2.start);
                self.seek(e.start + 1);
                let cond = self.list(&w.0);
                self.seek(w.1.loc.start.index);
                let body = self.list(&w.1.list);
                self.seek(e.end);
                Some((Command::While(WhileLoop { until, cond, body, redirects: Vec::new(), span }), e))
            }
            b::CompoundCommand::Coprocess(c) => {
                let span = self.pos(&c.loc.start);
                self.error(span, format!("'coproc' is not supported: the shell would hold both ends of the coprocess's pipes while the script goes on, and a script that reads a reply the coprocess has not written would wait forever here (run it with '&' and a file, or in a pipeline) ({SUPPORTED})"));
                None
            }
        }
    }

    fn simple(&mut self, sc: &b::SimpleCommand) -> Option<(SimpleCommand, Extent)> {
        let mut items: Vec<&b::CommandPrefixOrSuffixItem> = Vec::new();
        let name_item;
        if let Some(p) = &sc.prefix {
            items.extend(p.0.iter());
        }
        if let Some(w) = &sc.word_or_name {
            name_item = b::CommandPrefixOrSuffixItem::Word(w.clone());
            items.push(&name_item);
        }
        if let Some(s) = &sc.suffix {
            items.extend(s.0.iter());
        }
        let mut assignments = Vec::new();
        let mut words = Vec::new();
        let mut redirects = Vec::new();
        let mut ext: Option<Extent> = None;
        let grow = |ext: &mut Option<Extent>, a: usize, z: usize| {
            *ext = Some(match *ext {
                None => Extent { start: a, end: z },
                Some(e) => Extent { start: e.start.min(a), end: e.end.max(z) },
            });
        };
        let mut ok = true;
        for it in items {
            match it {
                b::CommandPrefixOrSuffixItem::Word(w) => {
                    let Some(loc) = &w.loc else { continue };
                    grow(&mut ext, loc.start.index, loc.end.index);
                    self.seek(loc.end.index);
                    match self.word(w, Ctx::Arg) {
                        Some(w) => words.push(w),
                        None => ok = false,
                    }
                }
                b::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                    let Some(loc) = &w.loc else { continue };
                    grow(&mut ext, loc.start.index, loc.end.index);
                    self.seek(loc.end.index);
                    if !words.is_empty() {
                        // After the command name, NAME=value is an ordinary argument.
                        match self.word(w, Ctx::Arg) {
                            Some(w) => words.push(w),
                            None => ok = false,
                        }
                        continue;
                    }
                    match self.assignment(a, w) {
                        Some(x) => assignments.push(x),
                        None => ok = false,
                    }
                }
                b::CommandPrefixOrSuffixItem::IoRedirect(r) => {
                    let before = self.cursor;
                    match self.redirect(r) {
                        Some((red, end)) => {
                            let start = self.toks.get(before..self.cursor).and_then(|ts| ts.iter().find(|t| matches!(t, Token::Operator(..)))).map(|t| t.location().start.index);
                            let start = start.map(|s| s.saturating_sub(fd_digits(&red, r))).unwrap_or(end);
                            grow(&mut ext, start, end);
                            redirects.push(red);
                        }
                        None => ok = false,
                    }
                }
                b::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, s) => {
                    let start = s.loc.start.index.saturating_sub(1);
                    let sp = self.lines.at(start);
                    match self.proc_subst(kind, s, sp) {
                        Some(w) => {
                            grow(&mut ext, start, s.loc.end.index);
                            words.push(w);
                        }
                        None => ok = false,
                    }
                }
            }
        }
        let e = ext?;
        if !ok {
            return None;
        }
        let span = self.span_of_index(e.start);
        let source = self.slice(e.start, e.end).trim().to_string();
        Some((SimpleCommand { assignments, words, redirects, source, span }, e))
    }

    /// `<(LIST)` as a word; `>(LIST)` is refused.
    fn proc_subst(&mut self, kind: &b::ProcessSubstitutionKind, s: &b::SubshellCommand, sp: Span) -> Option<Word> {
        if matches!(kind, b::ProcessSubstitutionKind::Write) {
            self.error(sp, format!("output process substitution '>(...)' is not supported ('<(...)' is; write 'cmd | tee file | other' or use a temporary file) ({SUPPORTED})"));
            return None;
        }
        let e = Extent { start: s.loc.start.index, end: s.loc.end.index };
        self.seek(e.start + 1);
        let items = self.list(&s.list);
        self.seek(e.end);
        Some(Word { parts: vec![WordPart::ProcSubst(Box::new(Script { items }))], span: sp })
    }

    fn assignment(&mut self, a: &b::Assignment, w: &b::Word) -> Option<(String, Word)> {
        let loc = w.loc.as_ref()?;
        let raw = &w.value;
        let eq = raw.find('=')?;
        let name_end = if a.append { eq.saturating_sub(1) } else { eq };
        let lhs = &raw[..name_end];
        let value_raw = &raw[eq + 1..];
        // Through the index map: a line continuation may split `NAME=` from its value.
        let vspan = self.lines.at(loc.start.index + raw[..=eq].chars().count());
        // `NAME+=value`: the name keeps a `+` (see `SimpleCommand::assignments`).
        let name = if a.append { format!("{lhs}+") } else { lhs.to_string() };
        match &a.value {
            b::AssignmentValue::Scalar(_) => {
                let word = self.word_raw(value_raw, vspan, Ctx::Assign, loc.start.index + raw[..=eq].chars().count())?;
                Some((name, word))
            }
            b::AssignmentValue::Array(elems) => {
                // `a=(x y)`, `a=([i]=x y)`: the elements as one word of Array parts.
                let mut parts = Vec::new();
                for (idx, v) in elems {
                    let w = self.word_raw(&v.value, vspan, Ctx::Arg, usize::MAX)?;
                    parts.push((idx.as_ref().map(|i| i.value.clone()), w));
                }
                Some((name, Word { parts: vec![WordPart::Array(parts)], span: vspan }))
            }
        }
    }

    /// Convert a redirection; moves the cursor past its tokens. The redirection and the
    /// character index where it ends.
    fn redirect(&mut self, r: &b::IoRedirect) -> Option<(Redirect, usize)> {
        // Find the operator token from the cursor on.
        let op_idx = (self.cursor..self.toks.len()).find(|&i| matches!(&self.toks[i], Token::Operator(o, _) if is_redir_op(o)));
        let (op_span, op_text, op_start) = match op_idx {
            Some(i) => {
                let t = &self.toks[i];
                (self.pos(&t.location().start), tok_str(t).0.to_string(), t.location().start.index)
            }
            None => (Span::new(self.base.line, self.base.col), String::new(), 0),
        };
        let span_with_fd = |fd: Option<i32>, this: &Self| -> Span {
            match fd {
                Some(n) if op_start > 0 => {
                    let digits = n.to_string();
                    let before = this.slice(op_start.saturating_sub(digits.len()), op_start);
                    if before == digits {
                        // Through the index map: a line continuation may split `2\<newline>>`.
                        this.lines.at(op_start - digits.len())
                    } else {
                        op_span
                    }
                }
                _ => op_span,
            }
        };
        let check_fd = |this: &mut Self, fd: Option<i32>| -> Option<u32> {
            match fd {
                Some(n) if !(0..=9).contains(&n) => {
                    let sp = span_with_fd(fd, this);
                    this.error(sp, format!("file descriptor {n} is out of range (0-9 are supported; {SUPPORTED_REDIRECTS})"));
                    None
                }
                Some(n) => Some(n as u32),
                None => Some(u32::MAX),
            }
        };
        match r {
            b::IoRedirect::File(fd, kind, target) => {
                let span = span_with_fd(*fd, self);
                let fdv = check_fd(self, *fd)?;
                let (op, default_fd) = match kind {
                    b::IoFileRedirectKind::Read => (RedirOp::In, 0),
                    b::IoFileRedirectKind::Write | b::IoFileRedirectKind::Clobber => (RedirOp::Out, 1),
                    b::IoFileRedirectKind::Append => (RedirOp::Append, 1),
                    b::IoFileRedirectKind::DuplicateOutput => (RedirOp::DupOut, 1),
                    b::IoFileRedirectKind::ReadAndWrite => (RedirOp::ReadWrite, 0),
                    b::IoFileRedirectKind::DuplicateInput => (RedirOp::DupIn, 0),
                };
                let fd = if fdv == u32::MAX { default_fd } else { fdv };
                match target {
                    b::IoFileRedirectTarget::Filename(w) | b::IoFileRedirectTarget::Duplicate(w) => {
                        let loc = w.loc.clone()?;
                        self.seek(loc.end.index);
                        let mut op = op;
                        if matches!(op, RedirOp::DupOut | RedirOp::DupIn) {
                            let raw = w.value.as_str();
                            if raw == "-" {
                                // `N>&-` / `N<&-`: close N.
                                return Some((Redirect { fd, op: RedirOp::Close, target: Word::literal("-", self.pos(&loc.start)), span }, loc.end.index));
                            }
                            let is_fd = raw.len() == 1 && raw.bytes().all(|b| b.is_ascii_digit());
                            if !is_fd {
                                if fdv != u32::MAX || op == RedirOp::DupIn {
                                    let o = if op == RedirOp::DupIn { "<&" } else { ">&" };
                                    self.error(self.pos(&loc.start), format!("'{o}' must be followed by a file descriptor number 0-9 or '-', found '{}' ({SUPPORTED_REDIRECTS})", excerpt(raw)));
                                    return None;
                                }
                                // `>& file` is bash's spelling of `&> file`.
                                op = RedirOp::OutErr;
                            }
                        }
                        let target = self.word(w, Ctx::Plain)?;
                        Some((Redirect { fd, op, target, span }, loc.end.index))
                    }
                    b::IoFileRedirectTarget::Fd(n) => {
                        // `|&`: brush-parser adds `2>&1` to the command before the pipe.
                        let end = match op_idx {
                            Some(i) => {
                                self.cursor = i + 1;
                                self.toks[i].location().start.index
                            }
                            None => 0,
                        };
                        let target = Word::literal(n.to_string(), op_span);
                        Some((Redirect { fd, op, target, span: op_span }, end))
                    }
                    b::IoFileRedirectTarget::ProcessSubstitution(pk, s) => {
                        let sp = self.lines.at(s.loc.start.index.saturating_sub(1));
                        let target = self.proc_subst(pk, s, sp)?;
                        Some((Redirect { fd, op, target, span }, s.loc.end.index))
                    }
                }
            }
            b::IoRedirect::OutputAndError(w, append) => {
                let loc = w.loc.clone()?;
                self.seek(loc.end.index);
                let target = self.word(w, Ctx::Plain)?;
                let op = if *append { RedirOp::AppendErr } else { RedirOp::OutErr };
                Some((Redirect { fd: 1, op, target, span: op_span }, loc.end.index))
            }
            b::IoRedirect::HereString(fd, w) => {
                let span = span_with_fd(*fd, self);
                let fdv = check_fd(self, *fd)?;
                let loc = w.loc.clone()?;
                self.seek(loc.end.index);
                let mut target = self.word(w, Ctx::Plain)?;
                // A here-string is the word and a newline.
                target.parts.push(WordPart::Lit("\n".into()));
                Some((Redirect { fd: if fdv == u32::MAX { 0 } else { fdv }, op: RedirOp::HereDoc, target, span }, loc.end.index))
            }
            b::IoRedirect::HereDocument(fd, h) => {
                let span = span_with_fd(*fd, self);
                let fdv = check_fd(self, *fd)?;
                let tag_loc = h.here_end.loc.clone();
                let tag_span = tag_loc.as_ref().map(|l| self.pos(&l.start)).unwrap_or(op_span);
                let end = tag_loc.as_ref().map(|l| l.end.index).unwrap_or(op_start + op_text.chars().count());
                // The cursor goes past the tag (the body's token follows it).
                if let Some(i) = op_idx {
                    self.cursor = (i + 2).min(self.toks.len());
                }
                let body = h.doc.value.as_str();
                let body_span = h.doc.loc.as_ref().map(|l| self.pos(&l.start)).unwrap_or(tag_span);
                let parts = if !h.requires_expansion {
                    vec![WordPart::Lit(body.to_string())]
                } else {
                    match bw::parse_heredoc(body, &opts()) {
                        Ok(pieces) => {
                            let mut parts = Vec::new();
                            let mut failed = false;
                            for p in &pieces {
                                let bi = h.doc.loc.as_ref().map_or(usize::MAX, |l| l.start.index);
                                if self.piece(&p.piece, true, (body_span, bi), body, p.start_index, Ctx::Plain, &mut parts).is_none() {
                                    failed = true;
                                }
                            }
                            if failed {
                                return None;
                            }
                            if parts.is_empty() {
                                parts.push(WordPart::Lit(String::new()));
                            }
                            parts
                        }
                        Err(_) => {
                            self.error(body_span, format!("in the here-document: a '$' expansion that is not understood ({SUPPORTED_EXPANSIONS})"));
                            return None;
                        }
                    }
                };
                let target = Word { parts, span: tag_span };
                Some((Redirect { fd: if fdv == u32::MAX { 0 } else { fdv }, op: RedirOp::HereDoc, target, span }, end))
            }
        }
    }

    fn word(&mut self, w: &b::Word, ctx: Ctx) -> Option<Word> {
        let (sp, index) = match &w.loc {
            Some(l) => (self.pos(&l.start), l.start.index),
            None => (Span::new(self.base.line, self.base.col), usize::MAX),
        };
        self.word_raw(&w.value, sp, ctx, index)
    }

    /// Convert the raw text of a word (as written, quotes included) that starts at `sp`.
    fn word_raw(&mut self, raw: &str, sp: Span, ctx: Ctx, index: usize) -> Option<Word> {
        let pieces = match bw::parse(raw, &opts()) {
            Ok(p) => p,
            Err(_) => {
                self.error(sp, format!("'{}': a '$' expansion that is not understood ({SUPPORTED_EXPANSIONS})", excerpt(raw)));
                return None;
            }
        };
        let mut parts = Vec::new();
        let mut ok = true;
        let n = pieces.len();
        for (i, p) in pieces.iter().enumerate() {
            if let WordPiece::Text(t) = &p.piece {
                // Unquoted text: brace expansion, kept escapes of patterns.
                let at = self.at_in(sp, index, raw, p.start_index);
                if self.unquoted(t, ctx, at, &mut parts).is_none() {
                    ok = false;
                }
                continue;
            }
            if let WordPiece::TildeExpansion(tx) = &p.piece {
                if i == 0 && ctx != Ctx::Pattern && matches!(tx, bw::TildeExpr::Home) {
                    parts.push(WordPart::QuotedVar("HOME".into()));
                    continue;
                }
                if let (0, bw::TildeExpr::UserHome(user)) = (i, tx) {
                    if ctx != Ctx::Pattern {
                        // bash (tilde_expand_word): the user's home directory from the password
                        // database; for a user who does not exist the word stays as written. The
                        // simulated system has one account, root (home /root).
                        push_lit(&mut parts, &if user == "root" { "/root".to_string() } else { format!("~{user}") });
                        continue;
                    }
                }
                let at = self.at_in(sp, index, raw, p.start_index);
                self.error(at, "only '~', '~/...' and '~USER' are supported as tilde expansions ('~+', '~-' and the directory stack are not)");
                ok = false;
                let _ = n;
                continue;
            }
            if self.piece(&p.piece, false, (sp, index), raw, p.start_index, ctx, &mut parts).is_none() {
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        if parts.is_empty() {
            parts.push(WordPart::Lit(String::new()));
        }
        Some(Word { parts, span: sp })
    }

    /// The position of byte `start` of a word's text `raw` that starts at `sp` (character
    /// index `index` of the text brush-parser read, or `usize::MAX` if not known).
    fn at_in(&self, sp: Span, index: usize, raw: &str, start: usize) -> Span {
        let prefix = raw.get(..start).unwrap_or("");
        if index != usize::MAX {
            return self.lines.at(index + prefix.chars().count());
        }
        let b = Base::after(sp, prefix);
        Span::new(b.line, b.col)
    }

    /// Convert one piece of a word. `raw` is the text the piece's `start` indexes.
    #[allow(clippy::too_many_arguments)]
    fn piece(&mut self, p: &WordPiece, quoted: bool, (sp, index): (Span, usize), raw: &str, start: usize, ctx: Ctx, parts: &mut Vec<WordPart>) -> Option<()> {
        let at = || self.at_in(sp, index, raw, start);
        match p {
            WordPiece::Text(t) => {
                if quoted {
                    push_lit(parts, t);
                } else {
                    self.unquoted(t, ctx, at(), parts)?;
                }
            }
            WordPiece::SingleQuotedText(t) => {
                if ctx == Ctx::Pattern {
                    push_lit(parts, &escape_pattern(t));
                } else {
                    push_lit(parts, t);
                }
            }
            WordPiece::AnsiCQuotedText(_) => {
                self.error(at(), "ANSI-C quoting $'...' is not supported (use '...' or \"...\")");
                return None;
            }
            WordPiece::GettextDoubleQuotedSequence(_) => {
                self.error(at(), "locale quoting $\"...\" is not supported (use \"...\")");
                return None;
            }
            WordPiece::DoubleQuotedSequence(seq) => {
                if seq.is_empty() {
                    push_lit(parts, "");
                }
                // An empty `""` still makes an argument.
                let mark = parts.len();
                for q in seq {
                    self.piece(&q.piece, true, (sp, index), raw, q.start_index, ctx, parts)?;
                }
                if parts.len() == mark {
                    parts.push(WordPart::Lit(String::new()));
                }
            }
            WordPiece::EscapeSequence(e) => {
                let c = e.strip_prefix('\\').unwrap_or(e);
                if c == "\n" || c == "\r\n" {
                    // Line continuation.
                } else if quoted {
                    // Inside "...", only \$ \` \" \\ are escapes; brush-parser gives those.
                    push_lit(parts, c);
                } else if ctx == Ctx::Pattern {
                    push_lit(parts, e);
                } else {
                    push_lit(parts, c);
                }
            }
            WordPiece::TildeExpansion(_) => {
                push_lit(parts, "~");
            }
            WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
                let open = if matches!(p, WordPiece::CommandSubstitution(_)) { "$(" } else { "`" };
                let here = at();
                if self.depth >= MAX_NESTING {
                    self.error(here, format!("'{open}' is nested too deeply (at most {MAX_NESTING} levels are supported)"));
                    return None;
                }
                let inner_base = Base::after(here, open);
                // The text as written (line continuations kept), so that positions inside
                // it count the lines a continuation takes.
                let written: String = if index != usize::MAX {
                    let begin = index + raw.get(..start).unwrap_or("").chars().count() + open.chars().count();
                    let w = self.slice(begin, begin + s.chars().count());
                    if w != s.as_str() && w.replace("\\\n", "") == *s { w.to_string() } else { s.clone() }
                } else {
                    s.clone()
                };
                let script = match parse_text(&written, inner_base, self.depth + 1) {
                    Ok(s) => s,
                    Err(es) => {
                        for e in es {
                            let sp = if self.lines.contains(e.span()) { e.span() } else { here };
                            let msg = if e.message.starts_with("in command substitution") { e.message } else { format!("in command substitution opened at {here}: {}", e.message) };
                            self.errors.push(ParseError::new(sp, msg));
                        }
                        return None;
                    }
                };
                parts.push(WordPart::CmdSubst { script: Box::new(script), quoted });
            }
            WordPiece::ArithmeticExpression(e) => {
                parts.push(WordPart::Arith { expr: e.value.clone(), quoted });
            }
            WordPiece::ParameterExpansion(pe) => {
                let part = self.param(pe, quoted, at())?;
                parts.push(part);
            }
        }
        Some(())
    }

    fn param(&mut self, pe: &ParameterExpr, quoted: bool, at: Span) -> Option<WordPart> {
        let unsupported = |this: &mut Self, what: &str| {
            this.error(at, format!("{what} is not supported ({SUPPORTED_EXPANSIONS})"));
            None
        };
        let var = |name: String| if quoted { WordPart::QuotedVar(name) } else { WordPart::Var(name) };
        let sub = |this: &mut Self, s: &Option<String>| -> Option<Box<Word>> {
            let s = s.clone().unwrap_or_default();
            // The argument is expanded as a word (quotes inside it count).
            let w = this.word_raw(&s, at, Ctx::Plain, usize::MAX)?;
            Some(Box::new(w))
        };
        let (param, indirect) = match pe {
            ParameterExpr::Parameter { parameter, indirect }
            | ParameterExpr::UseDefaultValues { parameter, indirect, .. }
            | ParameterExpr::AssignDefaultValues { parameter, indirect, .. }
            | ParameterExpr::IndicateErrorIfNullOrUnset { parameter, indirect, .. }
            | ParameterExpr::UseAlternativeValue { parameter, indirect, .. }
            | ParameterExpr::ParameterLength { parameter, indirect }
            | ParameterExpr::RemoveSmallestSuffixPattern { parameter, indirect, .. }
            | ParameterExpr::RemoveLargestSuffixPattern { parameter, indirect, .. }
            | ParameterExpr::RemoveSmallestPrefixPattern { parameter, indirect, .. }
            | ParameterExpr::RemoveLargestPrefixPattern { parameter, indirect, .. }
            | ParameterExpr::ReplaceSubstring { parameter, indirect, .. }
            | ParameterExpr::Substring { parameter, indirect, .. }
            | ParameterExpr::UppercaseFirstChar { parameter, indirect, .. }
            | ParameterExpr::UppercasePattern { parameter, indirect, .. }
            | ParameterExpr::LowercaseFirstChar { parameter, indirect, .. }
            | ParameterExpr::LowercasePattern { parameter, indirect, .. } => (parameter, *indirect),
            ParameterExpr::VariableNames { prefix, concatenate } => {
                let arg = Box::new(Word::literal("", at));
                return Some(WordPart::Param { name: prefix.clone(), op: ParamOp::Names { at: !*concatenate }, arg, arg2: None, quoted });
            }
            ParameterExpr::MemberKeys { variable_name, concatenate } => {
                let arg = Box::new(Word::literal("", at));
                return Some(WordPart::Param { name: variable_name.clone(), op: ParamOp::Keys { at: !*concatenate }, arg, arg2: None, quoted });
            }
            _ => return unsupported(self, "this '${...}' operator"),
        };
        if indirect && !matches!(pe, ParameterExpr::Parameter { .. }) {
            return unsupported(self, "an operator on an indirect expansion '${!NAME...}' (plain '${!NAME}' is)");
        }
        let name = match param {
            Parameter::Positional(n) => n.to_string(),
            Parameter::Named(n) => n.clone(),
            Parameter::Special(s) => match s {
                SpecialParameter::AllPositionalParameters { concatenate } => (if *concatenate { "*" } else { "@" }).to_string(),
                SpecialParameter::PositionalParameterCount => "#".into(),
                SpecialParameter::LastExitStatus => "?".into(),
                SpecialParameter::ProcessId => "$".into(),
                SpecialParameter::LastBackgroundProcessId => "!".into(),
                SpecialParameter::ShellName => "0".into(),
                SpecialParameter::CurrentOptionFlags => return unsupported(self, "special parameter '$-'"),
            },
            Parameter::NamedWithIndex { name, index } => format!("{name}[{index}]"),
            Parameter::NamedWithAllIndices { name, concatenate } => format!("{name}[{}]", if *concatenate { "*" } else { "@" }),
        };
        if let Parameter::NamedWithAllIndices { concatenate: false, .. } = param {
            if matches!(pe, ParameterExpr::Parameter { .. }) {
                // `${a[@]}` / `"${a[@]}"`: one field per element.
                return Some(WordPart::ArrayAll { name: name.split('[').next().unwrap_or("").to_string(), quoted });
            }
        }
        let colon = |t: &ParameterTestType| matches!(t, ParameterTestType::UnsetOrNull);
        let mk = |this: &mut Self, op: ParamOp, arg: &Option<String>| -> Option<WordPart> {
            let arg = sub(this, arg)?;
            Some(WordPart::Param { name: name.clone(), op, arg, arg2: None, quoted })
        };
        match pe {
            ParameterExpr::Parameter { .. } if indirect => {
                let arg = Box::new(Word::literal("", at));
                Some(WordPart::Param { name, op: ParamOp::Indirect, arg, arg2: None, quoted })
            }
            ParameterExpr::Parameter { .. } => Some(var(name.clone())),
            ParameterExpr::UppercaseFirstChar { pattern, .. } => mk(self, ParamOp::Case { upper: true, all: false }, pattern),
            ParameterExpr::UppercasePattern { pattern, .. } => mk(self, ParamOp::Case { upper: true, all: true }, pattern),
            ParameterExpr::LowercaseFirstChar { pattern, .. } => mk(self, ParamOp::Case { upper: false, all: false }, pattern),
            ParameterExpr::LowercasePattern { pattern, .. } => mk(self, ParamOp::Case { upper: false, all: true }, pattern),
            ParameterExpr::ParameterLength { .. } => {
                let n = match param {
                    Parameter::NamedWithAllIndices { name, .. } => format!("#{name}[@]"),
                    _ => format!("#{name}"),
                };
                Some(var(n))
            }
            ParameterExpr::UseDefaultValues { test_type, default_value, .. } => mk(self, ParamOp::Default { colon: colon(test_type) }, default_value),
            ParameterExpr::AssignDefaultValues { test_type, default_value, .. } => mk(self, ParamOp::Assign { colon: colon(test_type) }, default_value),
            ParameterExpr::UseAlternativeValue { test_type, alternative_value, .. } => mk(self, ParamOp::Alt { colon: colon(test_type) }, alternative_value),
            ParameterExpr::IndicateErrorIfNullOrUnset { test_type, error_message, .. } => mk(self, ParamOp::Error { colon: colon(test_type) }, error_message),
            ParameterExpr::RemoveSmallestPrefixPattern { pattern, .. } => mk(self, ParamOp::RemovePrefix { longest: false }, pattern),
            ParameterExpr::RemoveLargestPrefixPattern { pattern, .. } => mk(self, ParamOp::RemovePrefix { longest: true }, pattern),
            ParameterExpr::RemoveSmallestSuffixPattern { pattern, .. } => mk(self, ParamOp::RemoveSuffix { longest: false }, pattern),
            ParameterExpr::RemoveLargestSuffixPattern { pattern, .. } => mk(self, ParamOp::RemoveSuffix { longest: true }, pattern),
            ParameterExpr::ReplaceSubstring { pattern, replacement, match_kind, .. } => {
                let (all, prefix) = match match_kind {
                    bw::SubstringMatchKind::FirstOccurrence => (false, ""),
                    bw::SubstringMatchKind::Anywhere => (true, ""),
                    bw::SubstringMatchKind::Prefix => (false, "#"),
                    bw::SubstringMatchKind::Suffix => (false, "%"),
                };
                let pat = sub(self, &Some(format!("{prefix}{pattern}")))?;
                let rep = sub(self, replacement)?;
                Some(WordPart::Param { name, op: ParamOp::Replace { all }, arg: pat, arg2: Some(rep), quoted })
            }
            ParameterExpr::Substring { offset, length, .. } => {
                let off = Box::new(Word::literal(offset.value.clone(), at));
                let len = length.as_ref().map(|l| Box::new(Word::literal(l.value.clone(), at)));
                Some(WordPart::Param { name, op: ParamOp::Substring, arg: off, arg2: len, quoted })
            }
            _ => unsupported(self, "this '${...}' operator"),
        }
    }

    /// Unquoted text: brace expansions found (patterns keep their escapes).
    fn unquoted(&mut self, raw: &str, ctx: Ctx, span: Span, parts: &mut Vec<WordPart>) -> Option<()> {
        let mut lit = String::new();
        let mut i = 0;
        while i < raw.len() {
            let c = raw[i..].chars().next().unwrap_or('\0');
            match c {
                '{' if ctx != Ctx::Pattern && ctx != Ctx::Plain => {
                    if let Some(len) = brace_len(&raw[i..]) {
                        let pattern = &raw[i..i + len];
                        match brace_alternatives(pattern) {
                            Ok(alts) => {
                                if !lit.is_empty() {
                                    let l = std::mem::take(&mut lit);
                                    if ctx == Ctx::Arg && is_glob(&l) {
                                        parts.push(WordPart::Glob(l));
                                    } else {
                                        push_lit(parts, &l);
                                    }
                                }
                                parts.push(WordPart::Brace(alts));
                            }
                            Err(m) => {
                                self.error(span, m);
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
            if ctx == Ctx::Arg && is_glob(&lit) {
                parts.push(WordPart::Glob(lit));
            } else {
                push_lit(parts, &lit);
            }
        }
        Some(())
    }
}

/// Whether unquoted text is a pathname pattern: `*`, `?`, or a `[` closed by a `]`.
fn is_glob(s: &str) -> bool {
    s.contains(['*', '?']) || s.find('[').is_some_and(|i| s[i + 1..].contains(']'))
}

/// How many characters of file descriptor number precede a redirection's operator.
fn fd_digits(_red: &Redirect, r: &b::IoRedirect) -> usize {
    let fd = match r {
        b::IoRedirect::File(fd, ..) | b::IoRedirect::HereDocument(fd, _) | b::IoRedirect::HereString(fd, _) => *fd,
        b::IoRedirect::OutputAndError(..) => None,
    };
    fd.map_or(0, |n| n.to_string().len())
}

fn is_redir_op(o: &str) -> bool {
    matches!(o, ">" | ">>" | "<" | ">&" | "<&" | "&>" | "&>>" | "<<" | "<<-" | "<<<" | ">|" | "<>" | "|&")
}

/// A glob pattern matching `s` literally.
fn escape_pattern(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ctx {
    /// A command's argument or a `for` word.
    Arg,
    /// An assignment's value.
    Assign,
    /// A redirection target, a `case` word, a test operand.
    Plain,
    /// A `case` pattern: backslashes and quotes keep their meaning for the pattern matcher.
    Pattern,
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
