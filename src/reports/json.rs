//! JSON printing of Elle's result map, as elle-cli's `--verbose` does:
//! keywords and symbols become strings without the colon, sets become arrays,
//! and map keys that are not strings are printed as their EDN text.

use super::tree::Node;
use serde_json::{Map, Value};

/// Converts a node to a JSON value.
pub fn to_json(n: &Node) -> Value {
    match n {
        Node::Nil => Value::Null,
        Node::Bool(b) => Value::Bool(*b),
        Node::Int(i) => Value::from(*i),
        Node::Float(f) => serde_json::Number::from_f64(*f).map(Value::Number).unwrap_or(Value::Null),
        Node::Keyword(k) => Value::String(k.rsplit('/').next().unwrap_or(k).to_string()),
        Node::Str(s) | Node::Symbol(s) => Value::String(s.clone()),
        Node::Vector(xs) | Node::List(xs) | Node::Set(xs) => Value::Array(xs.iter().map(to_json).collect()),
        Node::Map(kvs) => {
            let mut m = Map::new();
            for (k, v) in kvs {
                let key = match k {
                    Node::Keyword(s) | Node::Str(s) | Node::Symbol(s) => s.clone(),
                    other => super::edn::to_string(other),
                };
                m.insert(key, to_json(v));
            }
            Value::Object(m)
        }
    }
}

/// Renders a node as pretty JSON text.
pub fn to_string(n: &Node) -> String {
    serde_json::to_string_pretty(&to_json(n)).unwrap_or_else(|_| "null".to_string())
}
