//! Recursive-descent parser over the lexer's tokens.
//!
//! Recursion only happens through `for`/`if` bodies and is bounded by [`MAX_NESTING`];
//! everything else is iterative, so no input can overflow the stack.

use super::ast::*;
use super::lexer::{tokenize, Op, Tok, Token};
use super::{ParseError, MAX_NESTING};

/// What the language accepts, quoted in error messages about unsupported constructs.
const SUPPORTED: &str =
    "supported: for, while, until, if, case, functions, { ...; }, ( ... ), (( ... )), [[ ... ]], !, &&, ||, ;, &, |, redirections";
const SUPPORTED_REDIRECTS: &str =
    "supported: > file, >> file, < file, 2> file, 2>&1, >&2, &> file, &>> file, << EOF, <<< word";

/// Reserved words that end a command list.
const CLOSERS: &[&str] = &["then", "elif", "else", "fi", "do", "done", "esac", "}"];

/// A cheap view of the current token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind<'a> {
    /// A word, as written in the source.
    Word(&'a str),
    Io(u32),
    Op(Op),
    Newline,
    Eof,
}

pub(crate) struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    i: usize,
    /// Current nesting of for/if blocks.
    depth: usize,
    /// Byte offset of the end of the last consumed token.
    last_end: usize,
    eof: Token,
}

pub(crate) fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `NAME=...` as written: the length of NAME.
fn assignment_name_len(raw: &str) -> Option<usize> {
    let eq = raw.find('=')?;
    let name = raw.get(..eq)?;
    is_name(name).then_some(eq)
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

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str) -> Parser<'a> {
        let toks = tokenize(src);
        let eof = Token { tok: Tok::Eof, span: Span::new(1, 1), start: src.len(), end: src.len() };
        let eof = toks.last().map(|t| Token { tok: Tok::Eof, ..t.clone() }).unwrap_or(eof);
        Parser { src, toks, i: 0, depth: 0, last_end: 0, eof }
    }

    /// A parser over tokens already made from `src` (the inside of a `$(...)`).
    pub(crate) fn from_tokens(src: &'a str, toks: Vec<Token>) -> Parser<'a> {
        let eof = Token { tok: Tok::Eof, span: Span::new(1, 1), start: src.len(), end: src.len() };
        let eof = toks.last().map(|t| Token { tok: Tok::Eof, ..t.clone() }).unwrap_or(eof);
        Parser { src, toks, i: 0, depth: 0, last_end: 0, eof }
    }

    /// Parse the whole script, going on after an error at the next line so that every
    /// error is reported (a lexical error ends the scan).
    pub(crate) fn parse_script_all(mut self) -> Result<Script, Vec<ParseError>> {
        let mut errors: Vec<ParseError> = Vec::new();
        let mut items = Vec::new();
        loop {
            match self.parse_list() {
                Ok(mut more) => {
                    items.append(&mut more);
                    match self.look() {
                        Ok((Kind::Eof, _)) => break,
                        Ok((kind, span)) => {
                            let msg = match kind {
                                Kind::Word(w) => {
                                    let why = match w {
                                        "do" | "done" => "there is no open loop",
                                        "then" | "elif" | "else" | "fi" => "there is no open 'if'",
                                        "esac" => "there is no open 'case'",
                                        "}" => "there is no open '{'",
                                        _ => "expected a command",
                                    };
                                    format!("unexpected '{w}' ({why})")
                                }
                                Kind::Op(Op::RParen) => "unexpected ')' (there is no open '(')".to_string(),
                                other => format!("unexpected {}", Self::describe(other)),
                            };
                            errors.push(ParseError::new(span, msg));
                        }
                        Err(e) => {
                            errors.push(e);
                            break;
                        }
                    }
                }
                Err(e) => {
                    let lexical = matches!(self.cur().tok, Tok::Error(_));
                    errors.push(e);
                    if lexical {
                        break;
                    }
                }
            }
            // Recover: skip to the next line, and past lines that only close a block.
            self.depth = 0;
            loop {
                match &self.cur().tok {
                    Tok::Eof | Tok::Error(_) => break,
                    Tok::Newline => {
                        self.bump();
                        match self.kind() {
                            Ok(Kind::Word(w)) if CLOSERS.contains(&w) => continue,
                            _ => break,
                        }
                    }
                    _ => {
                        self.bump();
                    }
                }
            }
            if let Tok::Error(e) = &self.cur().tok {
                errors.push(e.clone());
                break;
            }
            if matches!(self.cur().tok, Tok::Eof) {
                break;
            }
        }
        if errors.is_empty() {
            Ok(Script { items })
        } else {
            errors.dedup();
            Err(errors)
        }
    }

    fn cur(&self) -> &Token {
        self.toks.get(self.i).unwrap_or(&self.eof)
    }

    fn raw(&self, t: &Token) -> &'a str {
        self.src.get(t.start..t.end).unwrap_or("")
    }

    /// The current token (a lexical error surfaces here, in source order).
    fn look(&self) -> Result<(Kind<'a>, Span), ParseError> {
        let t = self.cur();
        let kind = match &t.tok {
            Tok::Word(_) => Kind::Word(self.raw(t)),
            Tok::IoNumber(n) => Kind::Io(*n),
            Tok::Op(op) => Kind::Op(*op),
            Tok::Newline => Kind::Newline,
            Tok::Eof => Kind::Eof,
            Tok::Error(e) => return Err(e.clone()),
        };
        Ok((kind, t.span))
    }

    fn kind(&self) -> Result<Kind<'a>, ParseError> {
        Ok(self.look()?.0)
    }

    fn at_word(&self, w: &str) -> Result<bool, ParseError> {
        Ok(self.kind()? == Kind::Word(w))
    }

    /// Consume the current token (never past the end).
    fn bump(&mut self) -> Token {
        match self.toks.get_mut(self.i) {
            Some(t) if !matches!(t.tok, Tok::Eof | Tok::Error(_)) => {
                let tok = std::mem::replace(&mut t.tok, Tok::Newline);
                let out = Token { tok, span: t.span, start: t.start, end: t.end };
                self.last_end = t.end;
                self.i += 1;
                out
            }
            _ => self.cur().clone(),
        }
    }

    /// Consume the current token, which the caller checked is a word.
    fn bump_word(&mut self) -> Word {
        let t = self.bump();
        match t.tok {
            Tok::Word(w) => w,
            _ => Word { parts: Vec::new(), span: t.span },
        }
    }

    fn skip_newlines(&mut self) -> Result<(), ParseError> {
        while self.kind()? == Kind::Newline {
            self.bump();
        }
        Ok(())
    }

    fn describe(kind: Kind<'_>) -> String {
        match kind {
            Kind::Word(w) => format!("'{}'", excerpt(w)),
            Kind::Io(n) => format!("'{n}'"),
            Kind::Op(op) => format!("'{}'", op.as_str()),
            Kind::Newline => "end of line".to_string(),
            Kind::Eof => "end of input".to_string(),
        }
    }

    /// An error at the current token (or the lexical error found there).
    fn error_here(&self, message: impl Into<String>) -> ParseError {
        match self.look() {
            Ok((_, span)) => ParseError::new(span, message),
            Err(e) => e,
        }
    }

    fn source_from(&self, start: usize) -> String {
        self.src.get(start..self.last_end.max(start)).unwrap_or("").trim().to_string()
    }

    pub(crate) fn parse_script(mut self) -> Result<Script, ParseError> {
        let items = self.parse_list()?;
        let (kind, span) = self.look()?;
        match kind {
            Kind::Eof => Ok(Script { items }),
            Kind::Word(w) => {
                let why = match w {
                    "do" | "done" => "there is no open 'for' loop",
                    "then" | "elif" | "else" | "fi" => "there is no open 'if'",
                    "esac" => "there is no open 'case'",
                    "}" => "there is no open '{'",
                    _ => "expected a command",
                };
                Err(ParseError::new(span, format!("unexpected '{w}' ({why})")))
            }
            Kind::Op(Op::RParen) => Err(ParseError::new(span, "unexpected ')' (there is no open '(')")),
            other => Err(ParseError::new(span, format!("unexpected {}", Self::describe(other)))),
        }
    }

    /// A list of and-or lists separated by `;`, `&` or newlines; stops before a closing
    /// reserved word (`then`, `fi`, `do`, `done`, ...) or the end of input.
    fn parse_list(&mut self) -> Result<Vec<ListItem>, ParseError> {
        let mut items = Vec::new();
        loop {
            self.skip_newlines()?;
            let (kind, span) = self.look()?;
            match kind {
                Kind::Eof | Kind::Op(Op::RParen | Op::DSemi) => break,
                Kind::Word(w) if CLOSERS.contains(&w) => break,
                _ => {}
            }
            let and_or = self.parse_and_or()?;
            let mut background = false;
            let (kind, _) = self.look()?;
            match kind {
                Kind::Op(Op::Amp) => {
                    self.bump();
                    background = true;
                }
                Kind::Op(Op::Semi) | Kind::Newline => {
                    self.bump();
                }
                Kind::Eof | Kind::Op(Op::RParen | Op::DSemi) => {}
                Kind::Word(w) if CLOSERS.contains(&w) => {}
                other => {
                    return Err(self.error_here(format!(
                        "unexpected {} after the end of a command (expected ';', '&', '&&', '||', '|' or a newline)",
                        Self::describe(other)
                    )))
                }
            }
            items.push(ListItem { and_or, background, span });
        }
        Ok(items)
    }

    /// Redirections written after a compound command.
    fn parse_trailing_redirects(&mut self) -> Result<Vec<Redirect>, ParseError> {
        let mut out = Vec::new();
        loop {
            let (kind, span) = self.look()?;
            match kind {
                Kind::Io(fd) => {
                    self.bump();
                    out.push(self.parse_redirect(Some(fd), span)?);
                }
                Kind::Op(op) if op.is_redirect() => out.push(self.parse_redirect(None, span)?),
                _ => return Ok(out),
            }
        }
    }

    fn parse_and_or(&mut self) -> Result<AndOr, ParseError> {
        let first = self.parse_pipeline(None)?;
        let mut rest = Vec::new();
        loop {
            let (connector, what) = match self.kind()? {
                Kind::Op(Op::AndIf) => (Connector::And, "'&&'"),
                Kind::Op(Op::OrIf) => (Connector::Or, "'||'"),
                _ => break,
            };
            self.bump();
            self.skip_newlines()?;
            rest.push((connector, self.parse_pipeline(Some(what))?));
        }
        Ok(AndOr { first, rest })
    }

    /// `[time [-p]] command [| command]...`; `after` names what precedes it, for messages.
    fn parse_pipeline(&mut self, after: Option<&str>) -> Result<Pipeline, ParseError> {
        let span = self.look()?.1;
        let start = self.cur().start;
        let mut timed = false;
        let mut time_posix = false;
        let mut ctx = after;
        if self.at_word("time")? {
            self.bump();
            timed = true;
            ctx = Some("'time'");
            loop {
                match self.kind()? {
                    Kind::Word("-p") => {
                        self.bump();
                        time_posix = true;
                    }
                    Kind::Word("--") => {
                        self.bump();
                        break;
                    }
                    Kind::Word(w) if w.starts_with('-') && w.len() > 1 => {
                        return Err(self.error_here(format!(
                            "'time' accepts only -p, not '{}' (for GNU time's options run /usr/bin/time)",
                            excerpt(w)
                        )))
                    }
                    _ => break,
                }
            }
        }
        let mut negated = false;
        while self.at_word("!")? {
            self.bump();
            negated = !negated;
            ctx = Some("'!'");
        }
        let mut commands = vec![self.parse_command(ctx)?];
        loop {
            let (kind, pspan) = self.look()?;
            match kind {
                Kind::Op(Op::Pipe) => {}
                Kind::Op(Op::PipeAmp) => {
                    // `a |& b` is `a 2>&1 | b`.
                    let dup = Redirect { fd: 2, op: RedirOp::DupOut, target: Word::literal("1", pspan), span: pspan };
                    match commands.last_mut() {
                        Some(Command::Simple(c)) => c.redirects.push(dup),
                        Some(Command::For(c)) => c.redirects.push(dup),
                        Some(Command::If(c)) => c.redirects.push(dup),
                        Some(Command::While(c)) => c.redirects.push(dup),
                        Some(Command::Case(c)) => c.redirects.push(dup),
                        Some(Command::Group(c)) => c.redirects.push(dup),
                        _ => {}
                    }
                }
                _ => break,
            }
            self.bump();
            self.skip_newlines()?;
            commands.push(self.parse_command(Some("'|'"))?);
        }
        Ok(Pipeline { commands, timed, time_posix, negated, source: self.source_from(start), span })
    }

    fn parse_command(&mut self, after: Option<&str>) -> Result<Command, ParseError> {
        let (kind, span) = self.look()?;
        let unsupported = |what: String| Err(ParseError::new(span, format!("{what} ({SUPPORTED})")));
        match kind {
            Kind::Word("for") => {
                if matches!(self.toks.get(self.i + 1).map(|t| &t.tok), Some(Tok::Op(Op::LParen))) {
                    return unsupported("C-style 'for ((i=0; i<N; i++))' loops are not supported (write 'for i in $(seq 0 9)' or 'for i in {0..9}')".into());
                }
                let mut f = self.parse_for()?;
                f.redirects = self.parse_trailing_redirects()?;
                Ok(Command::For(f))
            }
            Kind::Word("if") => {
                let mut i = self.parse_if()?;
                i.redirects = self.parse_trailing_redirects()?;
                Ok(Command::If(i))
            }
            Kind::Word(w @ ("while" | "until")) => {
                let until = w == "until";
                let mut l = self.parse_while(until)?;
                l.redirects = self.parse_trailing_redirects()?;
                Ok(Command::While(l))
            }
            Kind::Word("case") => {
                let mut c = self.parse_case()?;
                c.redirects = self.parse_trailing_redirects()?;
                Ok(Command::Case(c))
            }
            Kind::Word("select") => unsupported("'select' loops are not supported".into()),
            Kind::Word("function") => {
                self.bump();
                let name = match self.kind()? {
                    Kind::Word(w) if is_name(w) || w.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) => w.to_string(),
                    other => return Err(self.error_here(format!("expected a function name after 'function', found {}", Self::describe(other)))),
                };
                self.bump();
                if self.kind()? == Kind::Op(Op::LParen) {
                    self.bump();
                    if self.kind()? != Kind::Op(Op::RParen) {
                        return Err(self.error_here(format!("expected ')' after 'function {name}('")));
                    }
                    self.bump();
                }
                self.parse_func_body(name, span)
            }
            Kind::Word("{") => {
                self.bump();
                self.enter_block("{", span)?;
                let body = self.parse_list()?;
                if body.is_empty() {
                    return Err(self.error_here(format!("expected a command inside '{{ ... }}' started at line {}", span.line)));
                }
                if !self.at_word("}")? {
                    let found = Self::describe(self.kind()?);
                    return Err(self.error_here(format!("expected '}}' to close the '{{' started at line {}, found {found}", span.line)));
                }
                self.bump();
                self.depth -= 1;
                let redirects = self.parse_trailing_redirects()?;
                Ok(Command::Group(Group { subshell: false, body, redirects, span }))
            }
            Kind::Word("[[") => self.parse_dbracket().map(Command::Simple),
            Kind::Word("time") => unsupported("'time' is only accepted at the start of a pipeline".into()),
            Kind::Word(w) if CLOSERS.contains(&w) || w == "esac" => Err(ParseError::new(
                span,
                format!("expected a command{}, found '{w}'", after.map(|a| format!(" after {a}")).unwrap_or_default()),
            )),
            Kind::Word(w)
                if is_name(w)
                    && matches!(self.toks.get(self.i + 1).map(|t| &t.tok), Some(Tok::Op(Op::LParen)))
                    && matches!(self.toks.get(self.i + 2).map(|t| &t.tok), Some(Tok::Op(Op::RParen))) =>
            {
                let name = w.to_string();
                self.bump();
                self.bump();
                self.bump();
                self.parse_func_body(name, span)
            }
            Kind::Word(_) | Kind::Io(_) => self.parse_simple().map(Command::Simple),
            Kind::Op(op) if op.is_redirect() => self.parse_simple().map(Command::Simple),
            Kind::Op(Op::LParen) => {
                let next = self.toks.get(self.i + 1);
                let double =
                    matches!(next, Some(t) if matches!(t.tok, Tok::Op(Op::LParen)) && t.start == self.cur().end);
                if double {
                    self.parse_arith_command(span)
                } else {
                    self.bump();
                    self.enter_block("(", span)?;
                    let body = self.parse_list()?;
                    if body.is_empty() {
                        return Err(self.error_here(format!("expected a command inside '( ... )' started at line {}", span.line)));
                    }
                    if self.kind()? != Kind::Op(Op::RParen) {
                        let found = Self::describe(self.kind()?);
                        return Err(self.error_here(format!("expected ')' to close the '(' started at line {}, found {found}", span.line)));
                    }
                    self.bump();
                    self.depth -= 1;
                    let redirects = self.parse_trailing_redirects()?;
                    Ok(Command::Group(Group { subshell: true, body, redirects, span }))
                }
            }
            other => Err(ParseError::new(
                span,
                format!(
                    "expected a command{}, found {}",
                    after.map(|a| format!(" after {a}")).unwrap_or_default(),
                    Self::describe(other)
                ),
            )),
        }
    }

    fn parse_simple(&mut self) -> Result<SimpleCommand, ParseError> {
        let span = self.look()?.1;
        let start = self.cur().start;
        let mut assignments = Vec::new();
        let mut words: Vec<Word> = Vec::new();
        let mut redirects = Vec::new();
        loop {
            let (kind, tspan) = self.look()?;
            match kind {
                Kind::Word(raw) => {
                    let name_len = if words.is_empty() { assignment_name_len(raw) } else { None };
                    let mut word = self.bump_word();
                    match name_len {
                        Some(n) => {
                            let name = raw.get(..n).unwrap_or("").to_string();
                            let prefix = raw.get(..=n).unwrap_or("");
                            if let Some(WordPart::Lit(first)) = word.parts.first_mut() {
                                if let Some(rest) = first.strip_prefix(prefix) {
                                    *first = rest.to_string();
                                }
                            }
                            if matches!(word.parts.first(), Some(WordPart::Lit(s)) if s.is_empty()) {
                                word.parts.remove(0);
                            }
                            let col = tspan.col.saturating_add(u32::try_from(n + 1).unwrap_or(u32::MAX));
                            word.span = Span::new(tspan.line, col);
                            assignments.push((name, word));
                        }
                        None => words.push(word),
                    }
                }
                Kind::Io(fd) => {
                    self.bump();
                    redirects.push(self.parse_redirect(Some(fd), tspan)?);
                }
                Kind::Op(op) if op.is_redirect() => redirects.push(self.parse_redirect(None, tspan)?),
                Kind::Op(Op::LParen) => {
                    let msg = format!("unexpected '(' (quote it as '(' to pass it as an argument; {SUPPORTED})");
                    return Err(ParseError::new(tspan, msg));
                }
                _ => break,
            }
        }
        Ok(SimpleCommand { assignments, words, redirects, source: self.source_from(start), span })
    }

    /// At a redirection operator; `fd` is an explicit descriptor written before it.
    fn parse_redirect(&mut self, fd: Option<u32>, span: Span) -> Result<Redirect, ParseError> {
        let (kind, op_span) = self.look()?;
        let op = match kind {
            Kind::Op(op) if op.is_redirect() => op,
            other => {
                return Err(ParseError::new(
                    op_span,
                    format!("expected a redirection operator, found {} ({SUPPORTED_REDIRECTS})", Self::describe(other)),
                ))
            }
        };
        self.bump();
        let (mut rop, default_fd) = match op {
            Op::Great => (RedirOp::Out, 1),
            Op::DGreat => (RedirOp::Append, 1),
            Op::Less => (RedirOp::In, 0),
            Op::GreatAnd => (RedirOp::DupOut, 1),
            Op::AndDGreat => (RedirOp::AppendErr, 1),
            Op::DLess | Op::DLessDash | Op::TLess => (RedirOp::HereDoc, 0),
            _ => (RedirOp::OutErr, 1),
        };
        let raw = match self.kind()? {
            Kind::Word(raw) => raw,
            // `2>&1>f`, `> 2>f`: a digit right before `>` is this redirection's target here.
            Kind::Io(n) => {
                let target = Word::literal(n.to_string(), self.bump().span);
                return Ok(Redirect { fd: fd.unwrap_or(default_fd), op: rop, target, span });
            }
            other => {
                let what = if op == Op::GreatAnd { "a file descriptor number" } else { "a file name" };
                return Err(self.error_here(format!(
                    "expected {what} after '{}', found {} ({SUPPORTED_REDIRECTS})",
                    op.as_str(),
                    Self::describe(other)
                )));
            }
        };
        if op == Op::GreatAnd {
            let is_fd = raw.len() == 1 && raw.bytes().all(|b| b.is_ascii_digit());
            if raw == "-" {
                return Err(self.error_here(format!(
                    "closing a file descriptor ('>&-') is not supported ({SUPPORTED_REDIRECTS})"
                )));
            }
            if !is_fd {
                if fd.is_some() {
                    return Err(self.error_here(format!(
                        "'>&' must be followed by a file descriptor number 0-9, found '{}' ({SUPPORTED_REDIRECTS})",
                        excerpt(raw)
                    )));
                }
                // `>& file` is bash's spelling of `&> file`.
                rop = RedirOp::OutErr;
            }
        }
        let mut target = self.bump_word();
        if op == Op::TLess {
            // A here-string is the word and a newline.
            target.parts.push(WordPart::Lit("\n".into()));
        }
        Ok(Redirect { fd: fd.unwrap_or(default_fd), op: rop, target, span })
    }

    fn parse_func_body(&mut self, name: String, span: Span) -> Result<Command, ParseError> {
        self.skip_newlines()?;
        self.enter_block("function", span)?;
        let body = match self.kind()? {
            Kind::Word("{" | "if" | "for" | "while" | "until" | "case") | Kind::Op(Op::LParen) => self.parse_command(Some("the function name"))?,
            other => {
                return Err(self.error_here(format!(
                    "expected '{{' to start the body of function '{name}', found {}",
                    Self::describe(other)
                )))
            }
        };
        self.depth -= 1;
        Ok(Command::FuncDef(FuncDef { name, body: Box::new(body), span }))
    }

    /// `(( EXPR ))`: the text up to the matching `))`.
    fn parse_arith_command(&mut self, span: Span) -> Result<Command, ParseError> {
        let start = self.cur().start + 2;
        let text = self.src.get(start..).unwrap_or("");
        let mut depth = 0i32;
        let mut end = None;
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'(' => depth += 1,
                b')' if depth == 0 => {
                    if bytes.get(i + 1) == Some(&b')') {
                        end = Some(i);
                    }
                    break;
                }
                b')' => depth -= 1,
                b'\n' => break,
                _ => {}
            }
            i += 1;
        }
        let Some(end) = end else {
            return Err(ParseError::new(span, "unterminated '((' (expected '))' on the same line)"));
        };
        let expr = text.get(..end).unwrap_or("").to_string();
        let stop = start + end + 2;
        while self.cur().start < stop && !matches!(self.cur().tok, Tok::Eof | Tok::Error(_)) {
            self.bump();
        }
        self.last_end = stop;
        Ok(Command::Arith(ArithCommand { expr, span }))
    }

    /// `[[ ... ]]`: a simple command whose operators (`&&`, `||`, `<`, `>`, `(`, `)`) are
    /// its arguments, run by the `[[` built-in.
    fn parse_dbracket(&mut self) -> Result<SimpleCommand, ParseError> {
        let (_, span) = self.look()?;
        let start = self.cur().start;
        let mut words = vec![self.bump_word()];
        loop {
            let (kind, tspan) = self.look()?;
            match kind {
                Kind::Word("]]") => {
                    words.push(self.bump_word());
                    break;
                }
                Kind::Word(_) => words.push(self.bump_word()),
                Kind::Op(op @ (Op::AndIf | Op::OrIf | Op::Less | Op::Great | Op::LParen | Op::RParen)) => {
                    self.bump();
                    words.push(Word::literal(op.as_str(), tspan));
                }
                Kind::Io(n) => {
                    self.bump();
                    words.push(Word::literal(n.to_string(), tspan));
                }
                other => {
                    return Err(self.error_here(format!(
                        "expected ']]' to close the '[[' started at line {}, found {}",
                        span.line,
                        Self::describe(other)
                    )))
                }
            }
        }
        let redirects = self.parse_trailing_redirects()?;
        Ok(SimpleCommand { assignments: Vec::new(), words, redirects, source: self.source_from(start), span })
    }

    fn parse_while(&mut self, until: bool) -> Result<WhileLoop, ParseError> {
        let kw = if until { "until" } else { "while" };
        let span = self.bump().span;
        self.enter_block(kw, span)?;
        let line = span.line;
        let cond = self.parse_list()?;
        if cond.is_empty() {
            let found = Self::describe(self.kind()?);
            return Err(self.error_here(format!("expected a condition after '{kw}', found {found}")));
        }
        if !self.at_word("do")? {
            let found = Self::describe(self.kind()?);
            return Err(self.error_here(format!("expected 'do' after the condition of the '{kw}' started at line {line}, found {found}")));
        }
        self.bump();
        let body = self.parse_list()?;
        if body.is_empty() {
            let found = Self::describe(self.kind()?);
            return Err(self.error_here(format!("expected a command in the body of the '{kw}' started at line {line}, found {found}")));
        }
        if !self.at_word("done")? {
            let found = Self::describe(self.kind()?);
            return Err(self.error_here(format!("expected 'done' to close the '{kw}' started at line {line}, found {found}")));
        }
        self.bump();
        self.depth -= 1;
        Ok(WhileLoop { until, cond, body, redirects: Vec::new(), span })
    }

    fn parse_case(&mut self) -> Result<CaseClause, ParseError> {
        let span = self.bump().span;
        self.enter_block("case", span)?;
        let line = span.line;
        let word = match self.kind()? {
            Kind::Word(_) => self.bump_word(),
            other => return Err(self.error_here(format!("expected a word after 'case', found {}", Self::describe(other)))),
        };
        self.skip_newlines()?;
        if !self.at_word("in")? {
            let found = Self::describe(self.kind()?);
            return Err(self.error_here(format!("expected 'in' after 'case WORD', found {found}")));
        }
        self.bump();
        let mut arms = Vec::new();
        loop {
            self.skip_newlines()?;
            if self.at_word("esac")? {
                self.bump();
                break;
            }
            if self.kind()? == Kind::Op(Op::LParen) {
                self.bump();
            }
            let mut patterns = Vec::new();
            loop {
                match self.kind()? {
                    Kind::Word(_) => patterns.push(self.bump_word()),
                    other => {
                        return Err(self.error_here(format!(
                            "expected a pattern in the 'case' started at line {line}, found {}",
                            Self::describe(other)
                        )))
                    }
                }
                match self.kind()? {
                    Kind::Op(Op::Pipe) => {
                        self.bump();
                    }
                    Kind::Op(Op::RParen) => {
                        self.bump();
                        break;
                    }
                    other => {
                        return Err(self.error_here(format!(
                            "expected '|' or ')' after a pattern of the 'case' started at line {line}, found {}",
                            Self::describe(other)
                        )))
                    }
                }
            }
            let body = self.parse_list()?;
            arms.push((patterns, body));
            match self.kind()? {
                Kind::Op(Op::DSemi) => {
                    self.bump();
                }
                Kind::Word("esac") => {}
                other => {
                    return Err(self.error_here(format!(
                        "expected ';;' or 'esac' in the 'case' started at line {line}, found {}",
                        Self::describe(other)
                    )))
                }
            }
        }
        self.depth -= 1;
        Ok(CaseClause { word, arms, redirects: Vec::new(), span })
    }

    fn enter_block(&mut self, what: &str, span: Span) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(ParseError::new(
                span,
                format!("'{what}' is nested too deeply (at most {MAX_NESTING} nested 'for'/'if' blocks are supported)"),
            ));
        }
        Ok(())
    }

    fn parse_for(&mut self) -> Result<ForLoop, ParseError> {
        let span = self.bump().span;
        self.enter_block("for", span)?;
        let line = span.line;
        let var = match self.kind()? {
            Kind::Word(w) if is_name(w) => w.to_string(),
            Kind::Word(w) => {
                return Err(self.error_here(format!("'{}' is not a valid variable name after 'for'", excerpt(w))))
            }
            other => {
                return Err(
                    self.error_here(format!("expected a variable name after 'for', found {}", Self::describe(other)))
                )
            }
        };
        self.bump();
        self.skip_newlines()?;
        match self.kind()? {
            Kind::Word("in") => {
                self.bump();
            }
            Kind::Word("do") | Kind::Op(Op::Semi) => {
                return Err(self.error_here(
                    "'for NAME' without 'in WORDS' is not supported (write 'for NAME in WORDS; do ...; done')",
                ))
            }
            other => {
                return Err(self.error_here(format!(
                    "expected 'in' after 'for {var}', found {} (write 'for NAME in WORDS; do ...; done')",
                    Self::describe(other)
                )))
            }
        }
        let mut words = Vec::new();
        loop {
            match self.kind()? {
                Kind::Word(_) => words.push(self.bump_word()),
                Kind::Op(Op::Semi) | Kind::Newline => {
                    self.bump();
                    break;
                }
                other => {
                    return Err(self.error_here(format!(
                        "unexpected {} in the word list of the 'for' started at line {line} (expected words, then ';' or a newline, then 'do')",
                        Self::describe(other)
                    )))
                }
            }
        }
        self.skip_newlines()?;
        if !self.at_word("do")? {
            let found = Self::describe(self.kind()?);
            return Err(self.error_here(format!(
                "expected 'do' after the word list of the 'for' started at line {line}, found {found}"
            )));
        }
        self.bump();
        let body = self.parse_list()?;
        if body.is_empty() {
            let found = Self::describe(self.kind()?);
            return Err(self.error_here(format!(
                "expected a command in the body of the 'for' started at line {line}, found {found}"
            )));
        }
        if !self.at_word("done")? {
            let found = Self::describe(self.kind()?);
            return Err(
                self.error_here(format!("expected 'done' to close the 'for' started at line {line}, found {found}"))
            );
        }
        self.bump();
        self.depth -= 1;
        Ok(ForLoop { var, words, body, redirects: Vec::new(), span })
    }

    fn parse_if(&mut self) -> Result<IfClause, ParseError> {
        let span = self.bump().span;
        self.enter_block("if", span)?;
        let line = span.line;
        let mut branches = Vec::new();
        let mut else_body = None;
        let mut keyword = "if";
        loop {
            let cond = self.parse_list()?;
            if cond.is_empty() {
                let found = Self::describe(self.kind()?);
                return Err(self.error_here(format!("expected a condition after '{keyword}', found {found}")));
            }
            if !self.at_word("then")? {
                let found = Self::describe(self.kind()?);
                return Err(self.error_here(format!(
                    "expected 'then' after the condition of the 'if' started at line {line}, found {found}"
                )));
            }
            self.bump();
            let body = self.parse_list()?;
            if body.is_empty() {
                let found = Self::describe(self.kind()?);
                return Err(self.error_here(format!("expected a command after 'then', found {found}")));
            }
            branches.push((cond, body));
            match self.kind()? {
                Kind::Word("elif") => {
                    self.bump();
                    keyword = "elif";
                }
                Kind::Word("else") => {
                    self.bump();
                    let body = self.parse_list()?;
                    if body.is_empty() {
                        let found = Self::describe(self.kind()?);
                        return Err(self.error_here(format!("expected a command after 'else', found {found}")));
                    }
                    else_body = Some(body);
                    if !self.at_word("fi")? {
                        let found = Self::describe(self.kind()?);
                        return Err(self.error_here(format!(
                            "expected 'fi' to close the 'if' started at line {line}, found {found}"
                        )));
                    }
                    self.bump();
                    break;
                }
                Kind::Word("fi") => {
                    self.bump();
                    break;
                }
                other => {
                    return Err(self.error_here(format!(
                        "expected 'elif', 'else' or 'fi' to close the 'if' started at line {line}, found {}",
                        Self::describe(other)
                    )))
                }
            }
        }
        self.depth -= 1;
        Ok(IfClause { branches, else_body, redirects: Vec::new(), span })
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    #[test]
    fn names_and_assignments() {
        assert!(is_name("_a1") && is_name("A") && !is_name("1a") && !is_name("") && !is_name("a-b"));
        assert_eq!(assignment_name_len("A=1"), Some(1));
        assert_eq!(assignment_name_len("=1"), None);
        assert_eq!(assignment_name_len("a-b=1"), None);
        assert_eq!(assignment_name_len("ab"), None);
    }

    #[test]
    fn excerpt_is_short_and_one_line() {
        assert_eq!(excerpt("abc"), "abc");
        assert_eq!(excerpt("'a\nb'"), "'a...");
        assert_eq!(excerpt(&"x".repeat(100)).len(), 43);
    }

    #[test]
    fn bump_never_passes_the_end() {
        let mut p = Parser::new("a");
        p.bump();
        p.bump();
        p.bump();
        assert_eq!(p.kind(), Ok(Kind::Eof));
    }

    #[test]
    fn nesting_depth_is_limited() {
        let ok = "for i in 1; do ".repeat(MAX_NESTING) + "true" + &"; done".repeat(MAX_NESTING);
        assert!(parse(&ok).is_ok());
        let deep = "if true; then ".repeat(MAX_NESTING + 1) + "true" + &"; fi".repeat(MAX_NESTING + 1);
        let e = parse(&deep).unwrap_err();
        assert!(e.message.contains("nested too deeply"), "{e}");
    }
}
