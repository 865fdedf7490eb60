//! Run-time expansion of words: variable lookup and field splitting.
//!
//! Unset variables expand to the empty string. An unquoted `$VAR` is split on blanks
//! (space, tab, newline) into several arguments, and vanishes when its value is empty;
//! a quoted `"$VAR"` always stays one argument. No globbing, tilde or brace expansion.

use super::ast::{Word, WordPart};

fn is_ifs(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n')
}

impl Word {
    /// The word as one string, with no field splitting (for assignments, redirection
    /// targets, ...). Unset variables expand to "".
    pub fn expand(&self, lookup: &dyn Fn(&str) -> Option<String>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                WordPart::Lit(s) => out.push_str(s),
                WordPart::Var(name) | WordPart::QuotedVar(name) => {
                    if let Some(v) = lookup(name) {
                        out.push_str(&v);
                    }
                }
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
        let mut cur = String::new();
        // Whether `cur` is a field already (it may be empty, e.g. from `""`).
        let mut started = false;
        for part in &self.parts {
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
                WordPart::Var(name) => {
                    let v = lookup(name).unwrap_or_default();
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
