//! The syntax tree of a scenario script.
//!
//! Every node carries the [`Span`] (1-based line and column, columns counted in characters)
//! of its first token. Words keep their parts unexpanded: variables are looked up when the
//! runner executes the command (see [`crate::lang::expand`]).

use std::fmt;

/// A position in the script: 1-based line and column (the column counts characters, not bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub line: u32,
    pub col: u32,
}

impl Span {
    pub const fn new(line: u32, col: u32) -> Span {
        Span { line, col }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A piece of a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WordPart {
    /// Literal text, quotes and escapes already removed. An empty `Lit("")` records that the
    /// word had (empty) quotes, e.g. `""`: such a word always expands to one argument.
    Lit(String),
    /// An unquoted `$NAME` / `${NAME}` / `$?`: its value is split on blanks into several
    /// arguments (see [`crate::lang::expand_words`]).
    Var(String),
    /// A `$NAME` / `${NAME}` / `$?` inside double quotes: never split.
    QuotedVar(String),
}

/// One shell word, e.g. `of="$DIR/test"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    pub parts: Vec<WordPart>,
    pub span: Span,
}

impl Word {
    /// A word made of literal text only.
    pub fn literal(text: impl Into<String>, span: Span) -> Word {
        Word { parts: vec![WordPart::Lit(text.into())], span }
    }

    /// The text of the word if it contains no variable (after quote removal).
    pub fn as_literal(&self) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                WordPart::Lit(s) => out.push_str(s),
                WordPart::Var(_) | WordPart::QuotedVar(_) => return None,
            }
        }
        Some(out)
    }

    /// True if the word refers to at least one variable.
    pub fn has_vars(&self) -> bool {
        self.parts.iter().any(|p| !matches!(p, WordPart::Lit(_)))
    }
}

/// A whole script.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    pub items: Vec<ListItem>,
}

/// One entry of a command list: an and-or list ended by `;`, a newline, or `&` (background).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListItem {
    pub and_or: AndOr,
    /// Ended by `&`.
    pub background: bool,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Connector {
    /// `&&`
    And,
    /// `||`
    Or,
}

/// `first && second || third ...`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AndOr {
    pub first: Pipeline,
    pub rest: Vec<(Connector, Pipeline)>,
}

/// `[time [-p]] cmd1 | cmd2 | ...`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipeline {
    pub commands: Vec<Command>,
    /// Prefixed by the `time` keyword.
    pub timed: bool,
    /// `time -p` (POSIX output format).
    pub time_posix: bool,
    /// The original text of the pipeline (including a `time` prefix), trimmed. Line
    /// continuations and, for `for`/`if` blocks, newlines are kept as written.
    pub source: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Simple(SimpleCommand),
    For(ForLoop),
    If(IfClause),
}

impl Command {
    pub fn span(&self) -> Span {
        match self {
            Command::Simple(c) => c.span,
            Command::For(f) => f.span,
            Command::If(i) => i.span,
        }
    }
}

/// `NAME=value ... word ... redirection ...`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Leading `NAME=value` words. With no `words` they set shell variables; otherwise they
    /// apply to that command only.
    pub assignments: Vec<(String, Word)>,
    /// The command name and its arguments (unexpanded).
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// The original text of this command (without a `time` prefix or a trailing `&`, `;`,
    /// `|`), trimmed.
    pub source: String,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RedirOp {
    /// `N> file` (default fd 1)
    Out,
    /// `N>> file` (default fd 1)
    Append,
    /// `N< file` (default fd 0)
    In,
    /// `N>&M`: the target word is the file descriptor number M (a single digit 0-9).
    DupOut,
    /// `&> file` or `>& file`: stdout and stderr to the file (fd is 1).
    OutErr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    pub fd: u32,
    pub op: RedirOp,
    pub target: Word,
    pub span: Span,
}

/// `for NAME in WORDS; do LIST; done`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForLoop {
    pub var: String,
    pub words: Vec<Word>,
    pub body: Vec<ListItem>,
    pub span: Span,
}

/// `if LIST; then LIST; [elif LIST; then LIST;]... [else LIST;] fi`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IfClause {
    /// (condition, body) of the `if` and of each `elif`, in order.
    pub branches: Vec<(Vec<ListItem>, Vec<ListItem>)>,
    pub else_body: Option<Vec<ListItem>>,
    pub span: Span,
}
