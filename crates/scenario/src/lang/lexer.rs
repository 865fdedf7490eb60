//! Tokenizer: words (with quoting and `$` expansions resolved into [`WordPart`]s),
//! operators, newlines. Comments and line continuations are dropped here.
//!
//! The lexer is context-free (reserved words are recognized by the parser) and never
//! panics: the first lexical error becomes a final [`Tok::Error`] token, so the parser
//! reports errors in source order.

use super::ast::{Span, Word, WordPart};
use super::ParseError;

/// What the `$` expansions accept, quoted in error messages.
const SUPPORTED_EXPANSIONS: &str =
    "supported: $NAME, ${NAME}, $?, $!, $$, $#, $1..$9, $@, $(...), $((...)), {1..3}, {a,b}";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Semi,
    Amp,
    AndIf,
    OrIf,
    Pipe,
    Great,
    DGreat,
    Less,
    GreatAnd,
    AndGreat,
    LParen,
    RParen,
    /// `;;` (ends a `case` arm)
    DSemi,
    /// `<<` here-document
    DLess,
    /// `<<-` here-document with leading tabs removed
    DLessDash,
    /// `<<<` here-string
    TLess,
    /// `&>>`
    AndDGreat,
    /// `|&` (`2>&1 |`)
    PipeAmp,
}

impl Op {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Op::Semi => ";",
            Op::Amp => "&",
            Op::AndIf => "&&",
            Op::OrIf => "||",
            Op::Pipe => "|",
            Op::Great => ">",
            Op::DGreat => ">>",
            Op::Less => "<",
            Op::GreatAnd => ">&",
            Op::AndGreat => "&>",
            Op::LParen => "(",
            Op::RParen => ")",
            Op::DSemi => ";;",
            Op::DLess => "<<",
            Op::DLessDash => "<<-",
            Op::TLess => "<<<",
            Op::AndDGreat => "&>>",
            Op::PipeAmp => "|&",
        }
    }

    pub(crate) fn is_redirect(self) -> bool {
        matches!(
            self,
            Op::Great | Op::DGreat | Op::Less | Op::GreatAnd | Op::AndGreat | Op::AndDGreat | Op::DLess | Op::DLessDash | Op::TLess
        )
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Tok {
    Word(Word),
    /// A single digit written right before `<` or `>` (`2>file`).
    IoNumber(u32),
    Op(Op),
    Newline,
    Eof,
    /// The first lexical error; always the last token.
    Error(ParseError),
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) span: Span,
    /// Byte offsets of the token's text in the source.
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Tokenize the whole script. The result is never empty and ends with `Eof` or `Error`.
pub(crate) fn tokenize(src: &str) -> Vec<Token> {
    let mut lx = Lexer::new(src);
    tokenize_from(&mut lx, false)
}

/// Tokens from the lexer's position; with `until_rparen`, stop after the `)` that closes
/// a `$(` (the `)` is not returned; an `Eof` is).
fn tokenize_from(lx: &mut Lexer<'_>, until_rparen: bool) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    // Here-documents whose body starts after the next newline: (index of the delimiter
    // token, strip tabs).
    let mut pending: Vec<(usize, bool)> = Vec::new();
    let mut depth = 0usize;
    loop {
        match lx.next_token() {
            Ok(t) => {
                if until_rparen {
                    match t.tok {
                        Tok::Op(Op::LParen) => depth += 1,
                        Tok::Op(Op::RParen) if depth == 0 => {
                            out.push(Token { tok: Tok::Eof, ..t });
                            break;
                        }
                        Tok::Op(Op::RParen) => depth -= 1,
                        Tok::Op(Op::DSemi) => {}
                        _ => {}
                    }
                }
                let eof = matches!(t.tok, Tok::Eof);
                let newline = matches!(t.tok, Tok::Newline);
                if matches!(out.last().map(|l| &l.tok), Some(Tok::Op(Op::DLess | Op::DLessDash))) {
                    if let Tok::Word(_) = t.tok {
                        let strip = matches!(out.last().map(|l| &l.tok), Some(Tok::Op(Op::DLessDash)));
                        pending.push((out.len(), strip));
                    }
                }
                out.push(t);
                if (newline || eof) && !pending.is_empty() {
                    for (i, strip) in std::mem::take(&mut pending) {
                        if let Err(e) = lx.read_heredoc(&mut out[i], strip) {
                            let span = Span::new(e.line, e.col);
                            out.push(Token { tok: Tok::Error(e), span, start: lx.pos, end: lx.pos });
                            return out;
                        }
                    }
                }
                if eof {
                    if until_rparen {
                        let span = out.last().map(|t| t.span).unwrap_or_default();
                        out.push(Token {
                            tok: Tok::Error(ParseError::new(span, "unterminated '$(' (no closing ')')")),
                            span,
                            start: lx.pos,
                            end: lx.pos,
                        });
                    }
                    break;
                }
            }
            Err(e) => {
                let span = Span::new(e.line, e.col);
                out.push(Token { tok: Tok::Error(e), span, start: lx.pos, end: lx.pos });
                break;
            }
        }
    }
    out
}

fn is_blank(c: char) -> bool {
    // `\r` is a blank so that scripts saved with CRLF line ends work.
    matches!(c, ' ' | '\t' | '\r')
}

fn is_op_char(c: char) -> bool {
    matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')')
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Append literal text, merging with a preceding literal. Pushing "" after a non-literal
/// (or into an empty word) records a quoted empty string.
fn push_lit(parts: &mut Vec<WordPart>, s: &str) {
    if let Some(WordPart::Lit(last)) = parts.last_mut() {
        last.push_str(s);
    } else {
        parts.push(WordPart::Lit(s.to_string()));
    }
}

fn push_char(parts: &mut Vec<WordPart>, c: char) {
    let mut buf = [0u8; 4];
    push_lit(parts, c.encode_utf8(&mut buf));
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: u32,
    col: u32,
    /// Nesting of `$(...)` being read.
    depth: usize,
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Lexer<'a> {
        // A UTF-8 byte order mark (editors on Windows) is not part of the first line.
        let pos = if src.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
        Lexer { src, pos, line: 1, col: 1, depth: 0 }
    }

    fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.rest().chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.col = 1;
        } else {
            self.col = self.col.saturating_add(1);
        }
        Some(c)
    }

    fn span(&self) -> Span {
        Span::new(self.line, self.col)
    }

    /// At a backslash-newline (or backslash-CR-LF) line continuation?
    fn at_continuation(&self) -> bool {
        self.peek() == Some('\\')
            && match self.peek_at(1) {
                Some('\n') => true,
                Some('\r') => self.peek_at(2) == Some('\n'),
                _ => false,
            }
    }

    fn skip_continuation(&mut self) {
        self.bump(); // '\\'
        if self.peek() == Some('\r') {
            self.bump();
        }
        self.bump(); // '\n'
    }

    fn next_token(&mut self) -> Result<Token, ParseError> {
        loop {
            let Some(c) = self.peek() else {
                return Ok(Token { tok: Tok::Eof, span: self.span(), start: self.pos, end: self.pos });
            };
            match c {
                c if is_blank(c) => {
                    self.bump();
                }
                '\\' if self.at_continuation() => self.skip_continuation(),
                '#' => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.bump();
                    }
                }
                '\n' => {
                    let (span, start) = (self.span(), self.pos);
                    self.bump();
                    return Ok(Token { tok: Tok::Newline, span, start, end: self.pos });
                }
                c if is_op_char(c) => return self.lex_op(),
                _ => return self.lex_word(),
            }
        }
    }

    fn lex_op(&mut self) -> Result<Token, ParseError> {
        let (span, start) = (self.span(), self.pos);
        let err = |msg: &str| Err(ParseError::new(span, msg));
        let c = self.bump();
        let next = self.peek();
        let op = match (c, next) {
            (Some(';'), Some(';')) => {
                self.bump();
                if self.peek() == Some('&') {
                    return err("';;&' (testing the next 'case' patterns) is not supported (end each arm with ';;')");
                }
                Op::DSemi
            }
            (Some(';'), Some('&')) => return err("';&' (fall through in 'case') is not supported (end each arm with ';;')"),
            (Some(';'), _) => Op::Semi,
            (Some('&'), Some('&')) => {
                self.bump();
                Op::AndIf
            }
            (Some('&'), Some('>')) => {
                self.bump();
                if self.peek() == Some('>') {
                    self.bump();
                    Op::AndDGreat
                } else {
                    Op::AndGreat
                }
            }
            (Some('&'), _) => Op::Amp,
            (Some('|'), Some('|')) => {
                self.bump();
                Op::OrIf
            }
            (Some('|'), Some('&')) => {
                self.bump();
                Op::PipeAmp
            }
            (Some('|'), _) => Op::Pipe,
            (Some('>'), Some('>')) => {
                self.bump();
                Op::DGreat
            }
            (Some('>'), Some('&')) => {
                self.bump();
                Op::GreatAnd
            }
            (Some('>'), Some('|')) => {
                // `>|` (write even under noclobber) is a plain `>` here.
                self.bump();
                Op::Great
            }
            (Some('>'), Some('(')) => {
                return err("process substitution '>(...)' is not supported (supported: > file, >> file, < file, 2> file, 2>&1, &> file)")
            }
            (Some('>'), _) => Op::Great,
            (Some('<'), Some('<')) => {
                self.bump();
                match self.peek() {
                    Some('<') => {
                        self.bump();
                        Op::TLess
                    }
                    Some('-') => {
                        self.bump();
                        Op::DLessDash
                    }
                    _ => Op::DLess,
                }
            }
            (Some('<'), Some('&')) => {
                return err("'<&' (duplicating an input descriptor) is not supported (supported: > file, >> file, < file, 2> file, 2>&1, &> file)")
            }
            (Some('<'), Some('>')) => {
                return err("'<>' (open for reading and writing) is not supported (supported: > file, >> file, < file, 2> file, 2>&1, &> file)")
            }
            (Some('<'), Some('(')) => {
                return err("process substitution '<(...)' is not supported (supported: > file, >> file, < file, 2> file, 2>&1, &> file)")
            }
            (Some('<'), _) => Op::Less,
            (Some('('), _) => Op::LParen,
            (Some(')'), _) => Op::RParen,
            _ => return err("internal error: not an operator"),
        };
        Ok(Token { tok: Tok::Op(op), span, start, end: self.pos })
    }

    fn lex_word(&mut self) -> Result<Token, ParseError> {
        let (span, start) = (self.span(), self.pos);
        let mut parts: Vec<WordPart> = Vec::new();
        while let Some(c) = self.peek() {
            if is_blank(c) || c == '\n' || is_op_char(c) {
                break;
            }
            match c {
                '\\' => {
                    if self.at_continuation() {
                        self.skip_continuation();
                        continue;
                    }
                    self.bump();
                    match self.bump() {
                        Some(c) => push_char(&mut parts, c),
                        // A backslash at the very end of the script stays literal.
                        None => push_lit(&mut parts, "\\"),
                    }
                }
                '\'' => self.lex_single_quoted(&mut parts)?,
                '"' => self.lex_double_quoted(&mut parts)?,
                '$' => self.lex_dollar(&mut parts, false)?,
                '`' => return Err(backquote_error(self.span())),
                '{' => {
                    if let Some(pattern) = self.brace_expansion() {
                        let at = self.span();
                        let alts = brace_alternatives(pattern).map_err(|m| ParseError::new(at, m))?;
                        for _ in pattern.chars() {
                            self.bump();
                        }
                        parts.push(WordPart::Brace(alts));
                        continue;
                    }
                    self.bump();
                    push_char(&mut parts, c);
                }
                _ => {
                    self.bump();
                    push_char(&mut parts, c);
                }
            }
        }
        let raw = self.src.get(start..self.pos).unwrap_or("");
        if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) && matches!(self.peek(), Some('<' | '>')) {
            if raw.len() > 1 {
                return Err(ParseError::new(
                    span,
                    format!("file descriptor {raw} is out of range in a redirection (supported: 0-9, as in 2>file)"),
                ));
            }
            let fd = raw.bytes().next().map_or(0, |b| u32::from(b - b'0'));
            return Ok(Token { tok: Tok::IoNumber(fd), span, start, end: self.pos });
        }
        Ok(Token { tok: Tok::Word(Word { parts, span }), span, start, end: self.pos })
    }

    /// At an unquoted `{`: the text of a bash brace expansion (`{1..3}`, `{a,b}`) starting
    /// here, if it is one.
    fn brace_expansion(&self) -> Option<&'a str> {
        let rest = self.rest();
        let after = rest.get(1..)?;
        let len = after.find(|c: char| {
            c == '}' || is_blank(c) || c == '\n' || is_op_char(c) || matches!(c, '\'' | '"' | '\\' | '$' | '`' | '{')
        })?;
        let inner = after.get(..len)?;
        let closed = after.get(len..).is_some_and(|r| r.starts_with('}'));
        (closed && (inner.contains(',') || inner.contains(".."))).then(|| rest.get(..len + 2)).flatten()
    }

    fn lex_single_quoted(&mut self, parts: &mut Vec<WordPart>) -> Result<(), ParseError> {
        let open = self.span();
        self.bump();
        let mut text = String::new();
        loop {
            match self.bump() {
                Some('\'') => break,
                Some(c) => text.push(c),
                None => {
                    return Err(ParseError::new(
                        open,
                        "unterminated single quote (opened here); a single-quoted string ends at the next '",
                    ))
                }
            }
        }
        push_lit(parts, &text);
        Ok(())
    }

    fn lex_double_quoted(&mut self, parts: &mut Vec<WordPart>) -> Result<(), ParseError> {
        let open = self.span();
        self.bump();
        let mut any = false;
        loop {
            let Some(c) = self.peek() else {
                return Err(ParseError::new(
                    open,
                    "unterminated double quote (opened here); a double-quoted string ends at the next unescaped \"",
                ));
            };
            match c {
                '"' => {
                    self.bump();
                    break;
                }
                '\\' => {
                    if self.at_continuation() {
                        self.skip_continuation();
                        continue;
                    }
                    self.bump();
                    match self.peek() {
                        Some(e @ ('"' | '\\' | '$' | '`')) => {
                            self.bump();
                            push_char(parts, e);
                        }
                        _ => push_lit(parts, "\\"),
                    }
                    any = true;
                }
                '$' => {
                    self.lex_dollar(parts, true)?;
                    any = true;
                }
                '`' => return Err(backquote_error(self.span())),
                _ => {
                    self.bump();
                    push_char(parts, c);
                    any = true;
                }
            }
        }
        if !any {
            // `""`: an empty but present argument.
            push_lit(parts, "");
        }
        Ok(())
    }

    /// At a `$`: a variable reference, or a literal `$`.
    fn lex_dollar(&mut self, parts: &mut Vec<WordPart>, quoted: bool) -> Result<(), ParseError> {
        let at = self.span();
        self.bump();
        let var = |name: String| if quoted { WordPart::QuotedVar(name) } else { WordPart::Var(name) };
        match self.peek() {
            Some('{') => {
                self.bump();
                let mut name = String::new();
                if let Some(c @ ('?' | '!' | '$' | '@' | '*')) = self.peek() {
                    self.bump();
                    name.push(c);
                } else if self.peek() == Some('#') && self.peek_at(1) == Some('}') {
                    self.bump();
                    name.push('#');
                } else if self.peek() == Some('#') {
                    self.bump();
                    let mut inner = String::new();
                    while let Some(c) = self.peek() {
                        if !is_name_char(c) {
                            break;
                        }
                        self.bump();
                        inner.push(c);
                    }
                    if self.peek() != Some('}') || inner.is_empty() {
                        return Err(ParseError::new(at, format!("bad substitution: write ${{#NAME}} ({SUPPORTED_EXPANSIONS})")));
                    }
                    self.bump();
                    parts.push(var(format!("#{inner}")));
                    return Ok(());
                } else {
                    while let Some(c) = self.peek() {
                        if !is_name_char(c) {
                            break;
                        }
                        self.bump();
                        name.push(c);
                    }
                }
                match self.peek() {
                    Some('}') => {
                        self.bump();
                    }
                    None | Some('\n') => {
                        return Err(ParseError::new(at, "unterminated '${' (opened here); write ${NAME}"))
                    }
                    Some(_) => {
                        return Err(ParseError::new(
                            at,
                            format!(
                                "'${{{name}...}}': parameter expansion operators are not supported ({SUPPORTED_EXPANSIONS})"
                            ),
                        ))
                    }
                }
                if name.is_empty() {
                    return Err(ParseError::new(at, format!("bad substitution '${{}}' ({SUPPORTED_EXPANSIONS})")));
                }
                if name.len() > 1 && name.starts_with(|c: char| c.is_ascii_digit()) {
                    return Err(ParseError::new(
                        at,
                        format!("positional parameters like '${{{name}}}' are not supported ({SUPPORTED_EXPANSIONS})"),
                    ));
                }
                parts.push(var(name));
            }
            Some('(') if self.peek_at(1) == Some('(') => {
                self.bump();
                self.bump();
                let rest = self.rest();
                let mut depth = 0i32;
                let mut end = None;
                let mut it = rest.char_indices().peekable();
                while let Some((i, c)) = it.next() {
                    match c {
                        '(' => depth += 1,
                        ')' if depth == 0 => {
                            if it.peek().map(|p| p.1) == Some(')') {
                                end = Some(i);
                            }
                            break;
                        }
                        ')' => depth -= 1,
                        _ => {}
                    }
                }
                let Some(end) = end else {
                    return Err(ParseError::new(at, "unterminated '$((' (expected '))')"));
                };
                let expr = rest.get(..end).unwrap_or("").to_string();
                for _ in 0..expr.chars().count() + 2 {
                    self.bump();
                }
                parts.push(WordPart::Arith { expr, quoted });
            }
            Some('(') => {
                self.bump();
                if self.depth >= super::MAX_NESTING {
                    return Err(ParseError::new(at, format!("'$(' is nested too deeply (at most {} levels are supported)", super::MAX_NESTING)));
                }
                self.depth += 1;
                let toks = tokenize_from(self, true);
                self.depth -= 1;
                if let Some(Token { tok: Tok::Error(e), .. }) = toks.last() {
                    return Err(e.clone());
                }
                let script = super::parser::Parser::from_tokens(self.src, toks).parse_script().map_err(|e| {
                    if e.message.starts_with("command substitution") {
                        e
                    } else {
                        ParseError::new(e.span(), format!("in command substitution opened at {}: {}", at, e.message))
                    }
                })?;
                parts.push(WordPart::CmdSubst { script: Box::new(script), quoted });
            }
            Some('?') => {
                self.bump();
                parts.push(var("?".to_string()));
            }
            Some(c) if is_name_start(c) => {
                let mut name = String::new();
                while let Some(c) = self.peek() {
                    if !is_name_char(c) {
                        break;
                    }
                    self.bump();
                    name.push(c);
                }
                parts.push(var(name));
            }
            Some(c @ ('0'..='9' | '$' | '!' | '#' | '@' | '*')) => {
                self.bump();
                parts.push(var(c.to_string()));
            }
            Some(c @ '-') => {
                return Err(ParseError::new(
                    at,
                    format!("special parameter '${c}' is not supported ({SUPPORTED_EXPANSIONS})"),
                ))
            }
            Some('\'') if !quoted => {
                return Err(ParseError::new(at, "ANSI-C quoting $'...' is not supported (use '...' or \"...\")"))
            }
            Some('"') if !quoted => {
                return Err(ParseError::new(at, "locale quoting $\"...\" is not supported (use \"...\")"))
            }
            _ => push_lit(parts, "$"),
        }
        Ok(())
    }
}

impl Lexer<'_> {
    /// Read the body of a here-document (after the newline that follows its `<<` line) and
    /// put it in place of the delimiter word `tok`.
    fn read_heredoc(&mut self, tok: &mut Token, strip: bool) -> Result<(), ParseError> {
        let raw = self.src.get(tok.start..tok.end).unwrap_or("");
        let quoted = raw.contains(['\'', '"', '\\']);
        if !matches!(tok.tok, Tok::Word(_)) {
            return Ok(());
        }
        // The delimiter is the word's text with quotes removed (no expansion: `<<$A` ends
        // at a line `$A`).
        let delim: String = raw.chars().filter(|c| !matches!(c, '\'' | '"' | '\\')).collect();
        let body_span = self.span();
        let mut body = String::new();
        loop {
            if self.peek().is_none() {
                // bash: "here-document delimited by end-of-file"; the text so far is the body.
                break;
            }
            let rest = self.rest();
            let line_len = rest.find('\n').unwrap_or(rest.len());
            let line = rest.get(..line_len).unwrap_or("");
            let line = line.strip_suffix('\r').unwrap_or(line);
            let line = if strip { line.trim_start_matches('\t') } else { line };
            let done = line == delim;
            if !done {
                body.push_str(line);
                body.push('\n');
            }
            for _ in 0..rest.get(..line_len).unwrap_or("").chars().count() {
                self.bump();
            }
            self.bump(); // '\n'
            if done {
                break;
            }
        }
        let parts = if quoted {
            vec![WordPart::Lit(body)]
        } else {
            let mut sub = Lexer { src: &body, pos: 0, line: body_span.line, col: 1, depth: self.depth };
            let mut parts = Vec::new();
            while let Some(c) = sub.peek() {
                match c {
                    '\\' => {
                        sub.bump();
                        match sub.peek() {
                            Some(e @ ('$' | '`' | '\\')) => {
                                sub.bump();
                                push_char(&mut parts, e);
                            }
                            Some('\n') => {
                                sub.bump();
                            }
                            _ => push_lit(&mut parts, "\\"),
                        }
                    }
                    // Positions inside the body's copy are not the script's: an error
                    // there is reported where the body starts.
                    '$' => sub.lex_dollar(&mut parts, true).map_err(|e| ParseError::new(body_span, format!("in the here-document: {}", e.message)))?,
                    '`' => return Err(backquote_error(body_span)),
                    _ => {
                        sub.bump();
                        push_char(&mut parts, c);
                    }
                }
            }
            if parts.is_empty() {
                parts.push(WordPart::Lit(String::new()));
            }
            parts
        };
        tok.tok = Tok::Word(Word { parts, span: tok.span });
        Ok(())
    }
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
        Some(s) => s.parse::<i64>().map_err(|_| bad())?.abs().max(1),
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
            if a <= b { x += i128::from(step) } else { x -= i128::from(step) }
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
            if a <= b { x += step } else { x -= step }
        }
        return Ok(out);
    }
    Err(bad())
}

fn backquote_error(at: Span) -> ParseError {
    ParseError::new(at, format!("command substitution with backquotes is not supported ({SUPPORTED_EXPANSIONS})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<String> {
        tokenize(src)
            .into_iter()
            .map(|t| match t.tok {
                Tok::Word(w) => format!("W{:?}", w.parts),
                Tok::IoNumber(n) => format!("N{n}"),
                Tok::Op(op) => op.as_str().to_string(),
                Tok::Newline => "NL".into(),
                Tok::Eof => "EOF".into(),
                Tok::Error(e) => format!("ERR {e}"),
            })
            .collect()
    }

    fn words(src: &str) -> Vec<Vec<WordPart>> {
        tokenize(src)
            .into_iter()
            .filter_map(|t| match t.tok {
                Tok::Word(w) => Some(w.parts),
                _ => None,
            })
            .collect()
    }

    fn lit(s: &str) -> WordPart {
        WordPart::Lit(s.into())
    }

    fn error(src: &str) -> ParseError {
        match tokenize(src).pop().map(|t| t.tok) {
            Some(Tok::Error(e)) => e,
            other => panic!("expected a lexer error for {src:?}, got {other:?}"),
        }
    }

    #[test]
    fn operators() {
        assert_eq!(
            kinds("a;b&c&&d||e|f>g>>h<i>&j&>k(l)"),
            vec![
                "W[Lit(\"a\")]",
                ";",
                "W[Lit(\"b\")]",
                "&",
                "W[Lit(\"c\")]",
                "&&",
                "W[Lit(\"d\")]",
                "||",
                "W[Lit(\"e\")]",
                "|",
                "W[Lit(\"f\")]",
                ">",
                "W[Lit(\"g\")]",
                ">>",
                "W[Lit(\"h\")]",
                "<",
                "W[Lit(\"i\")]",
                ">&",
                "W[Lit(\"j\")]",
                "&>",
                "W[Lit(\"k\")]",
                "(",
                "W[Lit(\"l\")]",
                ")",
                "EOF"
            ]
        );
    }

    #[test]
    fn io_numbers() {
        assert_eq!(kinds("2>&1"), vec!["N2", ">&", "W[Lit(\"1\")]", "EOF"]);
        assert_eq!(kinds("x 2 >f"), vec!["W[Lit(\"x\")]", "W[Lit(\"2\")]", ">", "W[Lit(\"f\")]", "EOF"]);
        assert_eq!(kinds("a2>f"), vec!["W[Lit(\"a2\")]", ">", "W[Lit(\"f\")]", "EOF"]);
        assert_eq!(kinds("\"2\">f")[0], "W[Lit(\"2\")]");
        assert!(error("echo 12>f").message.contains("out of range"));
    }

    #[test]
    fn quoting() {
        assert_eq!(words("'a b'\"c d\"e\\ f"), vec![vec![lit("a bc de f")]]);
        assert_eq!(words("'' \"\""), vec![vec![lit("")], vec![lit("")]]);
        assert_eq!(words("\"\\\"\\\\\\$\\x\""), vec![vec![lit("\"\\$\\x")]]);
        assert_eq!(words("'$A \\n'"), vec![vec![lit("$A \\n")]]);
        assert_eq!(words("a#b"), vec![vec![lit("a#b")]]);
        assert_eq!(words("a #b"), vec![vec![lit("a")]]);
        assert_eq!(words("$ a$ \"$\""), vec![vec![lit("$")], vec![lit("a$")], vec![lit("$")]]);
        // Braces that are not a brace expansion stay literal.
        assert_eq!(
            words("{} { } {a} x{y}z {..."),
            vec![
                vec![lit("{}")],
                vec![lit("{")],
                vec![lit("}")],
                vec![lit("{a}")],
                vec![lit("x{y}z")],
                vec![lit("{...")]
            ]
        );
        assert_eq!(
            words("'{1..3}' \"{a,b}\" \\{a,b}"),
            vec![vec![lit("{1..3}")], vec![lit("{a,b}")], vec![lit("{a,b}")]]
        );
    }

    #[test]
    fn variables() {
        assert_eq!(
            words("$A ${B}x \"$C-${D}\" $? \"$?\" $_x"),
            vec![
                vec![WordPart::Var("A".into())],
                vec![WordPart::Var("B".into()), lit("x")],
                vec![WordPart::QuotedVar("C".into()), lit("-"), WordPart::QuotedVar("D".into())],
                vec![WordPart::Var("?".into())],
                vec![WordPart::QuotedVar("?".into())],
                vec![WordPart::Var("_x".into())],
            ]
        );
        assert_eq!(words("\"\"$A"), vec![vec![lit(""), WordPart::Var("A".into())]]);
        assert_eq!(words("$A\"\""), vec![vec![WordPart::Var("A".into()), lit("")]]);
    }

    #[test]
    fn continuations_and_comments() {
        assert_eq!(kinds("a \\\nb"), vec!["W[Lit(\"a\")]", "W[Lit(\"b\")]", "EOF"]);
        assert_eq!(kinds("a\\\nb"), vec!["W[Lit(\"ab\")]", "EOF"]);
        assert_eq!(kinds("a\\\r\nb\r\n"), vec!["W[Lit(\"ab\")]", "NL", "EOF"]);
        assert_eq!(kinds("# c \\\nx"), vec!["NL", "W[Lit(\"x\")]", "EOF"]);
        assert_eq!(words("\"a\\\nb\""), vec![vec![lit("ab")]]);
        assert_eq!(words("'a\\\nb'"), vec![vec![lit("a\\\nb")]]);
        assert_eq!(words("a\\"), vec![vec![lit("a\\")]]);
    }

    #[test]
    fn spans() {
        let toks = tokenize("ab  'c'\n  d # x\n\te\\\n f");
        let spans: Vec<(u32, u32)> = toks.iter().map(|t| (t.span.line, t.span.col)).collect();
        // ab, 'c', NL, d, NL, e(continued) f, EOF
        assert_eq!(spans, vec![(1, 1), (1, 5), (1, 8), (2, 3), (2, 8), (3, 2), (4, 2), (4, 3)]);
        let toks = tokenize("\u{feff}é ü");
        assert_eq!((toks[0].span, toks[1].span), (Span::new(1, 1), Span::new(1, 3)));
    }

    #[test]
    fn errors_in_order_and_positioned() {
        let e = error("echo ok\necho 'abc\nmore");
        assert_eq!((e.line, e.col), (2, 6));
        assert!(e.message.contains("unterminated single quote"), "{e}");
        let e = error("x=\"abc");
        assert_eq!((e.line, e.col), (1, 3));
        assert!(e.message.contains("unterminated double quote"), "{e}");
        for (src, what) in [
            ("echo `date`", "backquotes"),
            ("echo \"`date`\"", "backquotes"),
            ("echo ${A:-x}", "parameter expansion operators"),
            ("echo ${A", "unterminated '${'"),
            ("echo ${}", "bad substitution"),
            ("echo ${10}", "positional"),
            ("echo $'x'", "ANSI-C"),
            ("diff <(a) b", "process substitution"),
            ("echo $(date", "unterminated '$('"),
            ("echo $((1+2)", "unterminated '$(('"),
            ("case x in a) ;& esac", "';&'"),
            ("echo {5..1..x}", "brace expansion"),
        ] {
            let e = error(src);
            assert!(e.message.contains(what), "{src:?}: {e}");
            assert_eq!(e.line, 1);
        }
    }
}
