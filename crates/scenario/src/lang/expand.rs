//! Run-time expansion of words: variable lookup and field splitting.
//!
//! Unset variables expand to the empty string. An unquoted `$VAR` is split on blanks
//! (space, tab, newline) into several arguments, and vanishes when its value is empty;
//! a quoted `"$VAR"` always stays one argument. `$(...)` and `$((...))` are split like
//! variables; their values are computed by the caller (the shell runs the commands) and
//! handed in per part (see [`Word::expand_fields_with`]). Brace expansion comes first and
//! makes one word per alternative. No globbing or tilde expansion.

use super::ast::{Word, WordPart};

/// Values of a word's `$(...)` / `$((...))` parts, by part index (others are ignored).
pub type PartValues = Vec<Option<String>>;

/// Values computed from the lookup alone: `$((...))` evaluated read-only, `$(...)` empty.
pub fn static_values(word: &Word, lookup: &dyn Fn(&str) -> Option<String>) -> PartValues {
    struct Ro<'a>(&'a dyn Fn(&str) -> Option<String>);
    impl super::arith::ArithVars for Ro<'_> {
        fn get(&self, n: &str) -> Option<String> {
            (self.0)(n)
        }
        fn set(&mut self, _: &str, _: i64) {}
    }
    word.parts
        .iter()
        .map(|p| match p {
            WordPart::Arith { expr, .. } => Some(super::arith::eval(expr, &mut Ro(lookup)).map(|v| v.to_string()).unwrap_or_default()),
            WordPart::CmdSubst { .. } => Some(String::new()),
            _ => None,
        })
        .collect()
}

fn is_ifs(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n')
}

impl Word {
    /// The word as one string, with no field splitting (for assignments, redirection
    /// targets, ...). Unset variables expand to "".
    pub fn expand(&self, lookup: &dyn Fn(&str) -> Option<String>) -> String {
        self.expand_with(lookup, &static_values(self, lookup))
    }

    /// [`Word::expand`] with the values of `$(...)` / `$((...))` parts given.
    pub fn expand_with(&self, lookup: &dyn Fn(&str) -> Option<String>, values: &PartValues) -> String {
        let mut out = String::new();
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                WordPart::Lit(s) => out.push_str(s),
                WordPart::Var(name) | WordPart::QuotedVar(name) => {
                    if let Some(v) = lookup(name) {
                        out.push_str(&v);
                    }
                }
                WordPart::CmdSubst { .. } | WordPart::Arith { .. } => {
                    if let Some(Some(v)) = values.get(i) {
                        out.push_str(v);
                    }
                }
                WordPart::Brace(alts) => out.push_str(&alts.join(" ")),
            }
        }
        out
    }

    /// The arguments this word becomes: unquoted variables are split on blanks; a word made
    /// only of unquoted variables that are empty or unset gives no argument at all.
    pub fn expand_fields(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
        let mut out = Vec::new();
        self.expand_fields_into(lookup, &mut out);
        out
    }

    fn expand_fields_into(&self, lookup: &dyn Fn(&str) -> Option<String>, out: &mut Vec<String>) {
        self.expand_fields_with(lookup, &static_values(self, lookup), out);
    }

    /// The fields of the word with the values of its `$(...)` / `$((...))` parts given.
    pub fn expand_fields_with(&self, lookup: &dyn Fn(&str) -> Option<String>, values: &PartValues, out: &mut Vec<String>) {
        // Brace expansion first: one word per alternative (left to right, nested braces in
        // the later parts vary fastest).
        if let Some(bi) = self.parts.iter().position(|p| matches!(p, WordPart::Brace(_))) {
            if let WordPart::Brace(alts) = &self.parts[bi] {
                for alt in alts {
                    let mut w = self.clone();
                    w.parts[bi] = WordPart::Lit(alt.clone());
                    w.expand_fields_with(lookup, values, out);
                }
            }
            return;
        }
        let mut cur = String::new();
        // Whether `cur` is a field already (it may be empty, e.g. from `""`).
        let mut started = false;
        for (i, part) in self.parts.iter().enumerate() {
            let computed;
            let part = match part {
                WordPart::CmdSubst { quoted, .. } | WordPart::Arith { quoted, .. } => {
                    computed = values.get(i).cloned().flatten().unwrap_or_default();
                    if *quoted {
                        cur.push_str(&computed);
                        started = true;
                        continue;
                    }
                    &WordPart::Var(String::new())
                }
                p => {
                    computed = String::new();
                    p
                }
            };
            match part {
                WordPart::Lit(s) => {
                    cur.push_str(s);
                    started = true;
                }
                WordPart::QuotedVar(name) => {
                    if let Some(v) = lookup(name) {
                        cur.push_str(&v);
                    }
                    started = true;
                }
                WordPart::CmdSubst { .. } | WordPart::Arith { .. } | WordPart::Brace(_) => {}
                WordPart::Var(name) => {
                    let v = if name.is_empty() { computed.clone() } else { lookup(name).unwrap_or_default() };
                    if v.is_empty() {
                        continue;
                    }
                    let starts_blank = v.starts_with(is_ifs);
                    let ends_blank = v.ends_with(is_ifs);
                    let mut pieces = v.split(is_ifs).filter(|s| !s.is_empty()).peekable();
                    if pieces.peek().is_none() {
                        // Only blanks: they separate what comes before from what follows.
                        if started {
                            out.push(std::mem::take(&mut cur));
                            started = false;
                        }
                        continue;
                    }
                    if starts_blank && started {
                        out.push(std::mem::take(&mut cur));
                    }
                    let mut first = true;
                    for piece in pieces {
                        if !first {
                            out.push(std::mem::take(&mut cur));
                        }
                        first = false;
                        cur.push_str(piece);
                    }
                    started = true;
                    if ends_blank {
                        out.push(std::mem::take(&mut cur));
                        started = false;
                    }
                }
            }
        }
        if started {
            out.push(cur);
        }
    }
}

/// Expand a command's words into its arguments (see [`Word::expand_fields`]).
pub fn expand_words(words: &[Word], lookup: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut out = Vec::new();
    for w in words {
        w.expand_fields_into(lookup, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::ast::Span;
    use super::*;

    fn w(parts: Vec<WordPart>) -> Word {
        Word { parts, span: Span::new(1, 1) }
    }
    fn lit(s: &str) -> WordPart {
        WordPart::Lit(s.into())
    }
    fn var(s: &str) -> WordPart {
        WordPart::Var(s.into())
    }
    fn qvar(s: &str) -> WordPart {
        WordPart::QuotedVar(s.into())
    }
    fn env(name: &str) -> Option<String> {
        match name {
            "A" => Some("1 2".into()),
            "B" => Some(" x  y ".into()),
            "E" => Some(String::new()),
            "S" => Some("   ".into()),
            "P" => Some("/tmp/dir".into()),
            "?" => Some("0".into()),
            _ => None,
        }
    }

    #[test]
    fn expand_joins_without_splitting() {
        assert_eq!(w(vec![lit("of="), var("P"), lit("/f")]).expand(&env), "of=/tmp/dir/f");
        assert_eq!(w(vec![var("A")]).expand(&env), "1 2");
        assert_eq!(w(vec![var("UNSET"), lit("x")]).expand(&env), "x");
        assert_eq!(w(vec![var("?")]).expand(&env), "0");
    }

    #[test]
    fn unquoted_vars_split() {
        assert_eq!(w(vec![var("A")]).expand_fields(&env), vec!["1", "2"]);
        assert_eq!(w(vec![lit("a"), var("A"), lit("b")]).expand_fields(&env), vec!["a1", "2b"]);
        assert_eq!(w(vec![lit("a"), var("B"), lit("b")]).expand_fields(&env), vec!["a", "x", "y", "b"]);
        assert_eq!(w(vec![lit("a"), var("S"), lit("b")]).expand_fields(&env), vec!["a", "b"]);
        assert_eq!(w(vec![var("S")]).expand_fields(&env), Vec::<String>::new());
        assert_eq!(w(vec![var("B")]).expand_fields(&env), vec!["x", "y"]);
    }

    #[test]
    fn quoted_vars_stay_one_field() {
        assert_eq!(w(vec![qvar("A")]).expand_fields(&env), vec!["1 2"]);
        assert_eq!(w(vec![qvar("UNSET")]).expand_fields(&env), vec![""]);
        assert_eq!(w(vec![lit("")]).expand_fields(&env), vec![""]);
    }

    #[test]
    fn empty_unquoted_vars_vanish() {
        assert_eq!(w(vec![var("E")]).expand_fields(&env), Vec::<String>::new());
        assert_eq!(w(vec![var("UNSET"), var("E")]).expand_fields(&env), Vec::<String>::new());
        assert_eq!(w(vec![lit(""), var("E")]).expand_fields(&env), vec![""]);
        let words = vec![w(vec![lit("echo")]), w(vec![var("E")]), w(vec![var("A")]), w(vec![qvar("E")])];
        assert_eq!(expand_words(&words, &env), vec!["echo", "1", "2", ""]);
    }
}
