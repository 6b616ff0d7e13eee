//! EDN printing, as Clojure's `pr-str` prints Elle's result map.
//!
//! The printer streams: operations are expanded from the history as they are
//! written, so a report citing huge operations needs no copy of them.

use super::tree::{op, Node};
use crate::history::{write_edn_float, write_edn_string, History};
use std::fmt::{self, Write};

/// Renders a node as EDN text.
pub fn to_string(h: &History, n: &Node) -> String {
    super::render(|s| write(s, h, n))
}

/// Streams a node's EDN text to `w`.
pub fn write_io(w: &mut impl std::io::Write, h: &History, n: &Node) -> std::io::Result<()> {
    super::stream(w, |f| write(f, h, n))
}

fn seq(out: &mut impl Write, h: &History, open: &str, close: &str, xs: &[Node]) -> fmt::Result {
    out.write_str(open)?;
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            out.write_char(' ')?;
        }
        write(out, h, x)?;
    }
    out.write_str(close)
}

/// Writes a node's EDN text.
pub fn write(out: &mut impl Write, h: &History, n: &Node) -> fmt::Result {
    match n {
        Node::Nil => out.write_str("nil"),
        Node::Bool(b) => write!(out, "{b}"),
        Node::Int(i) => write!(out, "{i}"),
        Node::BigInt(d) => out.write_str(d),
        Node::Float(f) => write_edn_float(out, *f),
        Node::Keyword(k) => {
            out.write_char(':')?;
            out.write_str(k)
        }
        Node::Str(s) => write_edn_string(out, s),
        Node::Symbol(s) => out.write_str(s),
        Node::Vector(xs) => seq(out, h, "[", "]", xs),
        Node::List(xs) => seq(out, h, "(", ")", xs),
        Node::Set(xs) => seq(out, h, "#{", "}", xs),
        Node::Map(kvs) => {
            out.write_char('{')?;
            for (i, (k, v)) in kvs.iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                }
                write(out, h, k)?;
                out.write_char(' ')?;
                write(out, h, v)?;
            }
            out.write_char('}')
        }
        Node::Tagged(t, v) => {
            write!(out, "#{t} ")?;
            write(out, h, v)
        }
        Node::Op(id) => write(out, h, &op(h, *id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_clojure() {
        let n = Node::Map(vec![
            (Node::Keyword("valid?".into()), Node::Bool(false)),
            (Node::Keyword("not".into()), Node::Set(vec![Node::Keyword("read-committed".into())])),
            (
                Node::Keyword("v".into()),
                Node::Vector(vec![Node::Symbol("...".into()), Node::Int(3), Node::Nil, Node::Str("a\"b".into())]),
            ),
        ]);
        let h = crate::history::History::default();
        assert_eq!(to_string(&h, &n), r#"{:valid? false, :not #{:read-committed}, :v [... 3 nil "a\"b"]}"#);
    }
}
