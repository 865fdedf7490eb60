//! The scenario language: bash's common part (see docs/shell.md).
//!
//! Supported: comments, line continuations, words with '...', "..." and backslash quoting,
//! `NAME=value` assignments, `$NAME` / `${NAME}` / `${#NAME}` / `$?` / `$!` / `$$` / `$#` /
//! `$1`..`$9` / `$@`, `$(...)`, `$((...))` and brace expansion (performed at run time, see
//! [`expand_words`]), lists with `;`, newline, `&&`, `||`, `&`, pipelines `a | b` and `|&`,
//! `!`, the `time [-p]` prefix, redirections (`> f`, `>> f`, `< f`, `N> f`, `N>&M`, `&> f`,
//! `&>> f`, here-documents and here-strings), `for`, `while`, `until`, `if`, `case`,
//! functions, `{ ...; }`, `( ... )`, `(( ... ))` and `[[ ... ]]`, with redirections after a
//! block. Everything else (backquotes, parameter operators, process substitution, ...) is a
//! [`ParseError`] that says what is accepted; [`parse_all`] reports every error of a script.

pub mod arith;
pub mod ast;
pub mod expand;
mod lexer;
mod parser;

use std::fmt;

pub use ast::*;
pub use expand::expand_words;

/// Deepest nesting of `for`/`if` blocks that [`parse`] accepts.
pub const MAX_NESTING: usize = 64;

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

/// Parse a whole script, reporting every syntax error (in source order; the scan goes on
/// at the next line after each, and stops at a lexical error such as an open quote).
pub fn parse_all(src: &str) -> Result<Script, Vec<ParseError>> {
    parser::Parser::new(src).parse_script_all()
}
