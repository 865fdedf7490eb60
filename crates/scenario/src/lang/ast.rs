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
    /// `$(...)`: the commands' standard output, trailing newlines removed. Split like a
    /// variable unless `quoted`.
    CmdSubst { script: Box<Script>, quoted: bool },
    /// `$((...))`: the expression's text, evaluated at run time (see [`crate::lang::arith`]).
    Arith { expr: String, quoted: bool },
    /// An unquoted brace expansion (`{1..3}`, `{a,b}`): the word becomes one word per
    /// alternative, in order.
    Brace(Vec<String>),
    /// Unquoted text with glob characters (`*`, `?`, `[...]`): after field splitting, a field
    /// containing it is replaced by the sorted names of the simulated filesystem that match
    /// (or stays as written when nothing matches).
    Glob(String),
    /// `${NAME<op>ARG}` (`${NAME:-x}`, `${NAME#pat}`, `${NAME/pat/rep}`, `${NAME:off:len}`,
    /// ...): computed at run time (see [`crate::lang::expand::apply_param`]); split like a
    /// variable unless `quoted`.
    Param { name: String, op: ParamOp, arg: Box<Word>, arg2: Option<Box<Word>>, quoted: bool },
    /// `${NAME[@]}`: one field per element of the array (quoted: each element one field,
    /// unsplit).
    ArrayAll { name: String, quoted: bool },
    /// `<(...)`: the path `/dev/fd/N` from which the commands' output is read.
    ProcSubst(Box<Script>),
    /// The value of an array assignment `NAME=(WORDS)`: the elements' words, each with its
    /// `[SUBSCRIPT]=` when written `NAME=([i]=x ...)` (an arithmetic expression; elements
    /// without one follow the previous element).
    Array(Vec<(Option<String>, Word)>),
}

/// The operator of a `${NAME<op>...}` expansion. `colon`: the `:` form, which treats an
/// empty value as unset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamOp {
    /// `${NAME:-WORD}` / `${NAME-WORD}`
    Default { colon: bool },
    /// `${NAME:=WORD}` / `${NAME=WORD}`: also assigns WORD.
    Assign { colon: bool },
    /// `${NAME:+WORD}` / `${NAME+WORD}`
    Alt { colon: bool },
    /// `${NAME:?WORD}` / `${NAME?WORD}`: an error (status 1, the script stops) if unset.
    Error { colon: bool },
    /// `${NAME#PAT}` / `${NAME##PAT}` (`longest`)
    RemovePrefix { longest: bool },
    /// `${NAME%PAT}` / `${NAME%%PAT}` (`longest`)
    RemoveSuffix { longest: bool },
    /// `${NAME/PAT/REP}` / `${NAME//PAT/REP}` (`all`); `arg2` is REP.
    Replace { all: bool },
    /// `${NAME:OFFSET}` / `${NAME:OFFSET:LENGTH}`: arithmetic expressions.
    Substring,
    /// `${NAME^^PAT}` / `${NAME^PAT}` (`all`: every character, else the first) and
    /// `${NAME,,PAT}` / `${NAME,PAT}` (`upper`: false); an empty PAT matches any character.
    Case { upper: bool, all: bool },
    /// `${!NAME}`: the value of the variable whose name is NAME's value.
    Indirect,
    /// `${!PREFIX*}` / `${!PREFIX@}` (`at`): the names of the set variables that start
    /// with PREFIX (NAME), sorted.
    Names { at: bool },
    /// `${!NAME[@]}` / `${!NAME[*]}` (`at`): the subscripts of array NAME.
    Keys { at: bool },
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
                WordPart::Lit(s) | WordPart::Glob(s) => out.push_str(s),
                _ => return None,
            }
        }
        Some(out)
    }

    /// True if the word refers to at least one variable.
    pub fn has_vars(&self) -> bool {
        self.parts.iter().any(|p| !matches!(p, WordPart::Lit(_) | WordPart::Glob(_)))
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
    /// Prefixed by `!`: the status is inverted.
    pub negated: bool,
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
    /// `while LIST; do LIST; done` / `until ...`
    While(WhileLoop),
    Case(CaseClause),
    /// `name() { ...; }` / `function name { ...; }`
    FuncDef(FuncDef),
    /// `{ LIST; }` (`subshell`: false) or `( LIST )` (`subshell`: true: variables and the
    /// directory set inside are restored after it).
    Group(Group),
    /// `(( EXPR ))`: status 0 if the value is not zero.
    Arith(ArithCommand),
    /// `for (( INIT; COND; STEP )); do LIST; done`
    ArithFor(ArithFor),
}

impl Command {
    pub fn span(&self) -> Span {
        match self {
            Command::Simple(c) => c.span,
            Command::For(f) => f.span,
            Command::If(i) => i.span,
            Command::While(w) => w.span,
            Command::Case(c) => c.span,
            Command::FuncDef(f) => f.span,
            Command::Group(g) => g.span,
            Command::Arith(a) => a.span,
            Command::ArithFor(a) => a.span,
        }
    }

    /// Redirections written after a compound command (`done > f`, `} < f`).
    pub fn redirects(&self) -> &[Redirect] {
        match self {
            Command::Simple(c) => &c.redirects,
            Command::For(f) => &f.redirects,
            Command::If(i) => &i.redirects,
            Command::While(w) => &w.redirects,
            Command::Case(c) => &c.redirects,
            Command::Group(g) => &g.redirects,
            Command::ArithFor(f) => &f.redirects,
            Command::FuncDef(_) | Command::Arith(_) => &[],
        }
    }
}

/// `NAME=value ... word ... redirection ...`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Leading `NAME=value` words. With no `words` they set shell variables; otherwise they
    /// apply to that command only. A name ending in `+` is `NAME+=value` (appends).
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
    /// `N<&M` (default fd 0): the target word is the file descriptor number M.
    DupIn,
    /// `N>&-` / `N<&-`: file descriptor N is closed.
    Close,
    /// `N<> file` (default fd 0): the file opened for reading and writing (created if
    /// missing, not truncated).
    ReadWrite,
    /// `&> file` or `>& file`: stdout and stderr to the file (fd is 1).
    OutErr,
    /// `&>> file`: stdout and stderr appended to the file.
    AppendErr,
    /// `<< WORD` here-document or `<<< word` here-string: the target is the text itself
    /// (expanded as in double quotes unless the delimiter was quoted).
    HereDoc,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    pub fd: u32,
    pub op: RedirOp,
    pub target: Word,
    pub span: Span,
}

/// `for NAME in WORDS; do LIST; done` (or `select NAME in WORDS; ...`)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForLoop {
    pub var: String,
    pub words: Vec<Word>,
    pub body: Vec<ListItem>,
    pub redirects: Vec<Redirect>,
    pub span: Span,
    /// `select NAME in WORDS; do LIST; done`: a menu on standard error, NAME from the
    /// lines read from standard input.
    pub select: bool,
}

/// `if LIST; then LIST; [elif LIST; then LIST;]... [else LIST;] fi`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IfClause {
    /// (condition, body) of the `if` and of each `elif`, in order.
    pub branches: Vec<(Vec<ListItem>, Vec<ListItem>)>,
    pub else_body: Option<Vec<ListItem>>,
    pub redirects: Vec<Redirect>,
    pub span: Span,
}

/// `while COND; do BODY; done` (`until`: runs while COND fails).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhileLoop {
    pub until: bool,
    pub cond: Vec<ListItem>,
    pub body: Vec<ListItem>,
    pub redirects: Vec<Redirect>,
    pub span: Span,
}

/// `case WORD in PATTERN[|PATTERN]...) LIST ;; ... esac`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseClause {
    pub word: Word,
    pub arms: Vec<(Vec<Word>, Vec<ListItem>)>,
    /// How each arm ends, in the order of `arms`.
    pub ends: Vec<CaseEnd>,
    pub redirects: Vec<Redirect>,
    pub span: Span,
}

/// The terminator of a `case` arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseEnd {
    /// `;;`: the `case` ends.
    Break,
    /// `;&`: the next arm's commands run too, without testing its patterns.
    FallThrough,
    /// `;;&`: the patterns of the following arms are tested too.
    Continue,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncDef {
    pub name: String,
    pub body: Box<Command>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub subshell: bool,
    pub body: Vec<ListItem>,
    pub redirects: Vec<Redirect>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArithCommand {
    pub expr: String,
    pub span: Span,
}

/// `for (( INIT; COND; STEP )); do BODY; done`: arithmetic expressions (an empty COND is
/// true).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArithFor {
    pub init: String,
    pub cond: String,
    pub step: String,
    pub body: Vec<ListItem>,
    pub redirects: Vec<Redirect>,
    pub span: Span,
}
