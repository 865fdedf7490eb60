//! The scenario language: bash's common part (see docs/shell.md).
//!
//! Scripts are parsed by brush-parser; [`front`] converts its syntax tree into the
//! interpreter's ([`ast`]) with exact positions and echoed text. Supported: comments, line
//! continuations, words with '...', "..." and backslash quoting, `NAME=value` and array
//! assignments, `$NAME` / `${NAME}` / `${#NAME}` / the parameter operators / arrays / `$?` /
//! `$!` / `$$` / `$#` / `$1`..`$9` / `$@`, `$(...)` and backquotes, `$((...))`, brace
//! expansion, `~` and pathname expansion (performed at run time, see [`expand_words`]),
//! lists with `;`, newline, `&&`, `||`, `&`, pipelines `a | b` and `|&`, `!`, the
//! `time [-p]` prefix, redirections (`> f`, `>> f`, `< f`, `N> f`, `N>&M`, `&> f`, `&>> f`,
//! here-documents and here-strings), `for`, `for ((;;))`, `while`, `until`, `if`, `case`,
//! functions, `{ ...; }`, `( ... )`, `(( ... ))` and `[[ ... ]]`, with redirections after a
//! block. Everything else (process substitution, `select`, ...) is a [`ParseError`] that
//! says what is accepted; [`parse_all`] reports every error of a script.

pub mod arith;
pub mod ast;
pub mod expand;
mod front;

use std::fmt;

pub use ast::*;
pub use expand::expand_words;

/// Deepest nesting of `for`/`if` blocks that [`parse`] accepts.
pub const MAX_NESTING: usize = 32;

/// Deepest nesting of subshells `( ... )` and `case` statements together that [`parse`]
/// accepts. brush-parser's PEG grammar parses each of these twice when what follows fails
/// (`case_item` then `case_item_ns` over the same body; `((` as arithmetic, then as a
/// subshell), so a syntax error under N of them costs 2^N: 12 levels cost milliseconds,
/// 32 would cost hours.
pub const MAX_BACKTRACK_NESTING: usize = 12;

/// A syntax error at a position of the script. `Display` is "line:col: message"; the caller
/// prefixes the file name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl ParseError {
    pub fn new(span: Span, message: impl Into<String>) -> ParseError {
        ParseError { line: span.line, col: span.col, message: message.into() }
    }

    pub fn span(&self) -> Span {
        Span::new(self.line, self.col)
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parse a whole script; the first error if there are any (see [`parse_all`]).
pub fn parse(src: &str) -> Result<Script, ParseError> {
    parse_all(src).map_err(|mut e| e.swap_remove(0))
}

/// Parse a whole script, reporting every syntax error (in source order; after each the
/// parse resumes at the next top-level statement on a later line, and a lexical error such
/// as an open quote ends the scan).
pub fn parse_all(src: &str) -> Result<Script, Vec<ParseError>> {
    front::parse_all(src)
}
