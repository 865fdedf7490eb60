//! Tokenizer: words (with quoting and `$` expansions resolved into [`WordPart`]s),
//! operators, newlines. Comments and line continuations are dropped here.
//!
//! The lexer is context-free (reserved words are recognized by the parser) and never
//! panics: the first lexical error becomes a final [`Tok::Error`] token, so the parser
//! reports errors in source order.

use super::ast::{Span, Word, WordPart};
use super::ParseError;

/// What the `$` expansions accept, quoted in error messages.
const SUPPORTED_EXPANSIONS: &str = "supported: $NAME, ${NAME}, $?, $$, $!";

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
        }
    }

    pub(crate) fn is_redirect(self) -> bool {
        matches!(self, Op::Great | Op::DGreat | Op::Less | Op::GreatAnd | Op::AndGreat)
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
    let mut out = Vec::new();
    loop {
        match lx.next_token() {
            Ok(t) => {
                let eof = matches!(t.tok, Tok::Eof);
                out.push(t);
                if eof {
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
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Lexer<'a> {
        // A UTF-8 byte order mark (editors on Windows) is not part of the first line.
        let pos = if src.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
        Lexer { src, pos, line: 1, col: 1 }
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
                return err("';;' is only valid in 'case', which is not supported (supported: for, if, &&, ||, ;, &, |, redirections)")
            }
            (Some(';'), _) => Op::Semi,
            (Some('&'), Some('&')) => {
                self.bump();
                Op::AndIf
            }
            (Some('&'), Some('>')) => {
                self.bump();
                if self.peek() == Some('>') {
                    return err("'&>>' is not supported (supported: > file, >> file, < file, 2> file, 2>&1, &> file)");
                }
                Op::AndGreat
            }
            (Some('&'), _) => Op::Amp,
            (Some('|'), Some('|')) => {
                self.bump();
                Op::OrIf
            }
            (Some('|'), Some('&')) => return err("'|&' is not supported (write '2>&1 |' instead)"),
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
                if self.peek_at(1) == Some('<') {
                    return err("here-strings ('<<<') are not supported (write the text to a file with echo and use '< file')");
                }
                return err("here-documents ('<<') are not supported (write the file with echo or printf and redirections, then use '< file')");
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
                        return Err(ParseError::new(
                            self.span(),
                            format!(
                                "brace expansion '{pattern}' is not supported (write the words out, e.g. 'for i in 1 2 3', or quote the braces)"
                            ),
                        ));
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
                if self.peek() == Some('?') {
                    self.bump();
                    name.push('?');
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
                if name.starts_with(|c: char| c.is_ascii_digit()) {
                    return Err(ParseError::new(
                        at,
                        format!("positional parameters like '${{{name}}}' are not supported ({SUPPORTED_EXPANSIONS})"),
                    ));
                }
                parts.push(var(name));
            }
            Some('(') => {
                let msg = if self.peek_at(1) == Some('(') {
                    format!("arithmetic expansion '$((...))' is not supported ({SUPPORTED_EXPANSIONS})")
                } else {
                    format!("command substitution '$(...)' is not supported ({SUPPORTED_EXPANSIONS})")
                };
                return Err(ParseError::new(at, msg));
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
            Some(c) if c.is_ascii_digit() => {
                return Err(ParseError::new(
                    at,
                    format!("positional parameters like '${c}' are not supported ({SUPPORTED_EXPANSIONS})"),
                ))
            }
            Some(c @ ('$' | '!')) => {
                // $$: the shell's process id; $!: the last background job's.
                self.bump();
                parts.push(var(c.to_string()));
            }
            Some(c @ ('#' | '@' | '*' | '-')) => {
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
            ("cat <<EOF", "here-documents"),
            ("cat <<<x", "here-strings"),
            ("a |& b", "'|&'"),
            ("a &>> f", "'&>>'"),
            ("echo $(date)", "command substitution"),
            ("echo `date`", "backquotes"),
            ("echo \"`date`\"", "backquotes"),
            ("echo $((1+2))", "arithmetic"),
            ("echo ${A:-x}", "parameter expansion operators"),
            ("echo ${A", "unterminated '${'"),
            ("echo ${}", "bad substitution"),
            ("echo $#", "special parameter '$#'"),
            ("echo $1", "positional"),
            ("echo ${10}", "positional"),
            ("echo $'x'", "ANSI-C"),
            ("diff <(a) b", "process substitution"),
            ("case x in a) ;; esac", "';;'"),
            ("for i in {1..3}", "brace expansion '{1..3}'"),
            ("cp f{,.bak}", "brace expansion '{,.bak}'"),
        ] {
            let e = error(src);
            assert!(e.message.contains(what), "{src:?}: {e}");
            assert_eq!(e.line, 1);
        }
    }
}
