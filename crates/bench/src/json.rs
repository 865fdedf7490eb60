//! The figures as a JSON document (written by `memtwin_scenario::outfile`: whole or not at
//! all for a regular file, in place for a device or FIFO, through symlinks, never over one).

use crate::figures::{Figures, Val};

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn value(v: &Val) -> String {
    match v {
        Val::Int(i) => i.to_string(),
        Val::Float(x) if x.is_finite() => {
            // Keep floats floats for readers that care ("62" would read back as an integer).
            let s = format!("{x}");
            if s.contains(['.', 'e', 'E']) {
                s
            } else {
                format!("{s}.0")
            }
        }
        Val::Float(_) => "null".into(),
        Val::Str(s) => escape(s),
    }
}

fn object(f: &Figures, indent: &str) -> String {
    if f.items.is_empty() {
        return "{}".into();
    }
    let inner = format!("{indent}  ");
    let body: Vec<String> = f.items.iter().map(|(k, v)| format!("{inner}{}: {}", escape(k), value(v))).collect();
    format!("{{\n{}\n{indent}}}", body.join(",\n"))
}

pub fn document(command: &str, quick: bool, host: &Figures, results: &[(String, Result<Figures, String>)], total_s: f64) -> String {
    let mut out = String::from("{\n");
    out.push_str("  \"schema\": \"memtwin-bench/1\",\n");
    out.push_str(&format!("  \"command\": {},\n", escape(command)));
    out.push_str(&format!("  \"quick\": {quick},\n"));
    out.push_str(&format!("  \"total_wall_s\": {},\n", value(&Val::Float(total_s))));
    out.push_str(&format!("  \"host\": {},\n", object(host, "  ")));
    out.push_str("  \"benchmarks\": {");
    let parts: Vec<String> = results
        .iter()
        .map(|(name, r)| {
            let body = match r {
                Ok(f) => object(f, "    "),
                Err(m) => {
                    let mut e = Figures::default();
                    e.str("error", m.clone());
                    object(&e, "    ")
                }
            };
            format!("\n    {}: {}", escape(name), body)
        })
        .collect();
    out.push_str(&parts.join(","));
    out.push_str(if parts.is_empty() { "}\n" } else { "\n  }\n" });
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn document_shape() {
        let mut f = Figures::default();
        f.int("a", 1);
        f.float("b", 0.5);
        f.str("c", "x\"y");
        let doc = document("memtwin-bench --quick", true, &f, &[("x".into(), Ok(f.clone())), ("y".into(), Err("bad".into()))], 1.0);
        assert!(doc.contains("\"c\": \"x\\\"y\""));
        assert!(doc.contains("\"error\": \"bad\""));
        assert!(doc.ends_with("}\n"));
    }
}
