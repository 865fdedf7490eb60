//! The TOML tree machine files are read into: every key and value with the byte offset where
//! it is written, so that every error can name its line.
//!
//! toml 0.8 reports the byte span of a key or value to a type that asks for it the way
//! `toml::Spanned` does: `deserialize_struct` with serde_spanned's private struct and field
//! names. Not every key has a span (the inner parts of a dotted key `vm.swappiness = 1` have
//! none), and `toml::Spanned` fails where there is none, so `RawKey`/`RawNode` ask the same way
//! but also accept a plain value. The names below are serde_spanned 0.6's (toml is pinned with
//! `=`); `parse::tests::spans_are_reported` breaks if they ever change.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

const SPANNED_NAME: &str = "$__serde_spanned_private_Spanned";
const SPANNED_START: &str = "$__serde_spanned_private_start";
const SPANNED_END: &str = "$__serde_spanned_private_end";
const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];
/// The key under which toml hands a datetime to `deserialize_any` (toml_datetime's FIELD).
const DATETIME_KEY: &str = "$__toml_private_datetime";

pub(crate) struct RawKey {
    pub(crate) start: Option<usize>,
    pub(crate) name: String,
}

pub(crate) struct RawNode {
    pub(crate) start: Option<usize>,
    pub(crate) kind: RawKind,
}

pub(crate) enum RawKind {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Array(Vec<RawNode>),
    Table(Vec<(RawKey, RawNode)>),
}

impl<'de> Deserialize<'de> for RawKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, RawKeyVisitor)
    }
}

struct RawKeyVisitor;

impl<'de> Visitor<'de> for RawKeyVisitor {
    type Value = RawKey;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E>(self, v: &str) -> Result<RawKey, E> {
        Ok(RawKey {
            start: None,
            name: v.to_string(),
        })
    }
    fn visit_string<E>(self, v: String) -> Result<RawKey, E> {
        Ok(RawKey {
            start: None,
            name: v,
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawKey, A::Error> {
        let (mut start, mut name) = (None, None);
        while let Some(k) = map.next_key::<String>()? {
            match k.as_str() {
                SPANNED_START => start = Some(map.next_value::<usize>()?),
                SPANNED_END => {
                    map.next_value::<usize>()?;
                }
                SPANNED_VALUE => name = Some(map.next_value::<String>()?),
                _ => return Err(serde::de::Error::custom("unexpected key structure")),
            }
        }
        let name = name.ok_or_else(|| serde::de::Error::custom("unexpected key structure"))?;
        Ok(RawKey { start, name })
    }
}

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct(
            SPANNED_NAME,
            SPANNED_FIELDS,
            RawNodeVisitor { spanned: true },
        )
    }
}

/// The bare value (no span wrapper); what the spanned protocol's value field holds.
struct BareNode(RawKind);

impl<'de> Deserialize<'de> for BareNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawNodeVisitor { spanned: false })
            .map(|n| BareNode(n.kind))
    }
}

/// With `spanned`, a map may be the span protocol (start, end, value) rather than a table.
struct RawNodeVisitor {
    spanned: bool,
}

fn bare(kind: RawKind) -> RawNode {
    RawNode { start: None, kind }
}

impl<'de> Visitor<'de> for RawNodeVisitor {
    type Value = RawNode;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a TOML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<RawNode, E> {
        Ok(bare(RawKind::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<RawNode, E> {
        Ok(bare(RawKind::Int(v)))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RawNode, E> {
        i64::try_from(v)
            .map(|i| bare(RawKind::Int(i)))
            .map_err(|_| E::custom("integer is too large"))
    }
    fn visit_f64<E>(self, v: f64) -> Result<RawNode, E> {
        Ok(bare(RawKind::Float(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<RawNode, E> {
        Ok(bare(RawKind::Str(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<RawNode, E> {
        Ok(bare(RawKind::Str(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawNode, A::Error> {
        let mut items = Vec::new();
        while let Some(x) = seq.next_element::<RawNode>()? {
            items.push(x);
        }
        Ok(bare(RawKind::Array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawNode, A::Error> {
        let Some(first) = map.next_key::<RawKey>()? else {
            return Ok(bare(RawKind::Table(Vec::new())));
        };
        if first.name == DATETIME_KEY {
            return Err(serde::de::Error::custom(
                "dates and times are not used in machine files (quote the value if it is a string)",
            ));
        }
        if self.spanned && first.start.is_none() && first.name == SPANNED_START {
            let (mut start, mut kind) = (Some(map.next_value::<usize>()?), None);
            while let Some(k) = map.next_key::<String>()? {
                match k.as_str() {
                    SPANNED_START => start = Some(map.next_value::<usize>()?),
                    SPANNED_END => {
                        map.next_value::<usize>()?;
                    }
                    SPANNED_VALUE => kind = Some(map.next_value::<BareNode>()?.0),
                    _ => return Err(serde::de::Error::custom("unexpected value structure")),
                }
            }
            let kind =
                kind.ok_or_else(|| serde::de::Error::custom("unexpected value structure"))?;
            return Ok(RawNode { start, kind });
        }
        let mut entries = vec![(first, map.next_value::<RawNode>()?)];
        while let Some(k) = map.next_key::<RawKey>()? {
            let v = map.next_value::<RawNode>()?;
            entries.push((k, v));
        }
        Ok(bare(RawKind::Table(entries)))
    }
}

/// A key and its value. `at` is where it is written: the key's byte offset, else its value's,
/// else its table's.
pub(crate) struct Entry {
    pub(crate) key: String,
    pub(crate) at: usize,
    pub(crate) value: Node,
}

pub(crate) enum Node {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// Items with their positions.
    Array(Vec<(usize, Node)>),
    /// Keys in file order.
    Table(Vec<Entry>),
}

/// Give every key and value a position, inheriting the enclosing one where toml has none.
pub(crate) fn resolve(raw: RawNode, inherited: usize) -> (usize, Node) {
    let at = raw.start.unwrap_or(inherited);
    let node = match raw.kind {
        RawKind::Str(s) => Node::Str(s),
        RawKind::Int(i) => Node::Int(i),
        RawKind::Float(f) => Node::Float(f),
        RawKind::Bool(b) => Node::Bool(b),
        RawKind::Array(items) => Node::Array(items.into_iter().map(|n| resolve(n, at)).collect()),
        RawKind::Table(entries) => Node::Table(
            entries
                .into_iter()
                .map(|(k, v)| {
                    let key_at = k.start.or(v.start).unwrap_or(at);
                    let (_, value) = resolve(v, key_at);
                    Entry {
                        key: k.name,
                        at: key_at,
                        value,
                    }
                })
                .collect(),
        ),
    };
    (at, node)
}

impl Node {
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Node::Str(_) => "a string",
            Node::Int(_) => "an integer",
            Node::Float(_) => "a float",
            Node::Bool(_) => "a boolean",
            Node::Array(_) => "an array",
            Node::Table(_) => "a table",
        }
    }
}
