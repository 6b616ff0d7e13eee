//! EDN printing, as Clojure's `pr-str` prints Elle's result map.

use super::tree::Node;
use crate::history::write_edn_string;
use std::fmt::Write;

/// Renders a node as EDN text.
pub fn to_string(n: &Node) -> String {
    let mut s = String::new();
    write(&mut s, n);
    s
}

fn seq(out: &mut String, open: &str, close: &str, xs: &[Node]) {
    out.push_str(open);
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        write(out, x);
    }
    out.push_str(close);
}

/// Appends a node's EDN text to `out`.
pub fn write(out: &mut String, n: &Node) {
    match n {
        Node::Nil => out.push_str("nil"),
        Node::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Node::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Node::Float(f) => {
            let _ = write!(out, "{f:?}");
        }
        Node::Keyword(k) => {
            out.push(':');
            out.push_str(k);
        }
        Node::Str(s) => {
            let _ = write_edn_string(out, s);
        }
        Node::Symbol(s) => out.push_str(s),
        Node::Vector(xs) => seq(out, "[", "]", xs),
        Node::List(xs) => seq(out, "(", ")", xs),
        Node::Set(xs) => seq(out, "#{", "}", xs),
        Node::Map(kvs) => {
            out.push('{');
            for (i, (k, v)) in kvs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(out, k);
                out.push(' ');
                write(out, v);
            }
            out.push('}');
        }
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
        assert_eq!(to_string(&n), r#"{:valid? false, :not #{:read-committed}, :v [... 3 nil "a\"b"]}"#);
    }
}
