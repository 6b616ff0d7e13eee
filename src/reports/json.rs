//! JSON printing of Elle's result map, as elle-cli's `--verbose` does:
//! keywords and symbols become strings without the colon, sets become arrays,
//! and map keys that are not strings are printed as their EDN text. Map keys
//! come out sorted and the layout is `serde_json`'s pretty one (two-space
//! indent, one element per line), which is what isolde has always printed.
//!
//! The printer streams: operations are expanded from the history as they are
//! written, so a report citing huge operations needs no copy of them.

use super::tree::{op, Node};
use crate::history::History;
use std::fmt::{self, Write};

/// Renders a node as pretty JSON text.
pub fn to_string(h: &History, n: &Node) -> String {
    super::render(|s| write(s, h, n))
}

/// Streams a node's pretty JSON text to `w`.
pub fn write_io(w: &mut (impl std::io::Write + ?Sized), h: &History, n: &Node) -> std::io::Result<()> {
    super::stream(w, |f| write(f, h, n))
}

/// Writes a node's pretty JSON text.
pub fn write(out: &mut impl Write, h: &History, n: &Node) -> fmt::Result {
    value(out, h, n, Some(0))
}

/// Streams a node's JSON text on one line (no whitespace), for JSON lines.
pub fn write_line_io(w: &mut (impl std::io::Write + ?Sized), h: &History, n: &Node) -> std::io::Result<()> {
    super::stream(w, |f| value(f, h, n, None))
}

fn string(out: &mut impl Write, s: &str) -> fmt::Result {
    out.write_str(&serde_json::to_string(s).map_err(|_| fmt::Error)?)
}

/// A line break and indentation in the pretty layout (`Some(depth)`),
/// nothing in the one-line layout (`None`).
fn newline(out: &mut impl Write, indent: Option<usize>) -> fmt::Result {
    let Some(indent) = indent else { return Ok(()) };
    out.write_char('\n')?;
    for _ in 0..indent {
        out.write_str("  ")?;
    }
    Ok(())
}

fn value(out: &mut impl Write, h: &History, n: &Node, indent: Option<usize>) -> fmt::Result {
    let inner = indent.map(|i| i + 1);
    match n {
        Node::Nil => out.write_str("null"),
        Node::Bool(b) => write!(out, "{b}"),
        Node::Int(i) => write!(out, "{i}"),
        Node::BigInt(d) => out.write_str(d.strip_suffix('N').unwrap_or(d)),
        Node::Float(f) => match serde_json::Number::from_f64(*f) {
            Some(x) => write!(out, "{x}"),
            None => out.write_str("null"),
        },
        Node::Keyword(k) => string(out, k.rsplit('/').next().unwrap_or(k)),
        Node::Str(s) | Node::Symbol(s) => string(out, s),
        Node::Vector(xs) | Node::List(xs) | Node::Set(xs) => {
            if xs.is_empty() {
                return out.write_str("[]");
            }
            out.write_char('[')?;
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    out.write_char(',')?;
                }
                newline(out, inner)?;
                value(out, h, x, inner)?;
            }
            newline(out, indent)?;
            out.write_char(']')
        }
        Node::Map(kvs) => {
            // Keys as JSON object keys, sorted; a repeated key keeps its last value.
            let mut entries: std::collections::BTreeMap<String, &Node> = std::collections::BTreeMap::new();
            for (k, v) in kvs {
                let key = match k {
                    Node::Keyword(s) | Node::Str(s) | Node::Symbol(s) => s.clone(),
                    other => super::edn::to_string(h, other),
                };
                entries.insert(key, v);
            }
            if entries.is_empty() {
                return out.write_str("{}");
            }
            out.write_char('{')?;
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.write_char(',')?;
                }
                newline(out, inner)?;
                string(out, k)?;
                out.write_str(if indent.is_some() { ": " } else { ":" })?;
                value(out, h, v, inner)?;
            }
            newline(out, indent)?;
            out.write_char('}')
        }
        Node::Tagged(_, v) => value(out, h, v, indent),
        Node::Op(id) => value(out, h, &op(h, *id), indent),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout and key order `serde_json::to_string_pretty` gives.
    #[test]
    fn prints_like_serde_json_pretty() {
        let h =
            crate::ingest::read_bytes("t.edn", b"{:type :ok, :process 0, :value [[:r :x [1 2]]]}", Default::default())
                .expect("parses");
        let n = Node::Map(vec![
            (Node::Keyword("valid?".into()), Node::Bool(false)),
            (Node::Keyword("anomaly-types".into()), Node::Vector(vec![Node::Keyword("G1c".into())])),
            (Node::Keyword("empty".into()), Node::Vector(vec![])),
            (Node::Keyword("m".into()), Node::Map(vec![])),
            (Node::Int(3), Node::Float(1.5)),
            (Node::Keyword("op".into()), Node::Op(0)),
        ]);
        let expected = serde_json::json!({
            "valid?": false,
            "anomaly-types": ["G1c"],
            "empty": [],
            "m": {},
            "3": 1.5,
            "op": {"index": 0, "type": "ok", "process": 0, "value": [["r", "x", [1, 2]]]}
        });
        assert_eq!(to_string(&h, &n), serde_json::to_string_pretty(&expected).expect("serialises"));
        let mut line = Vec::new();
        write_line_io(&mut line, &h, &n).expect("writes");
        assert_eq!(String::from_utf8(line).expect("utf-8"), serde_json::to_string(&expected).expect("serialises"));
    }
}
