//! A checker's answer: its verdict and its result map, printed as EDN,
//! JSON or a short table through [`crate::reports`]' printers.

pub use crate::outcome::Validity;
pub use crate::reports::tree::Node;

use crate::history::History;

/// A checker's verdict and Jepsen's result map for it (`:valid?` first).
#[derive(Clone, Debug)]
pub struct CheckResult {
    /// The verdict (`:valid?`).
    pub valid: Validity,
    /// The result map, `:valid?` included.
    pub map: Node,
}

impl CheckResult {
    /// Builds a result from the map's other entries, putting `:valid?`
    /// first.
    pub fn new(valid: Validity, entries: Vec<(Node, Node)>) -> CheckResult {
        let mut m = vec![(kw("valid?"), validity(valid))];
        m.extend(entries);
        CheckResult { valid, map: Node::Map(m) }
    }

    /// An `unknown` result with an `:error` saying why.
    pub fn unknown(why: impl Into<String>, mut entries: Vec<(Node, Node)>) -> CheckResult {
        entries.insert(0, (kw("error"), Node::Str(why.into())));
        CheckResult::new(Validity::Unknown, entries)
    }

    /// The value of a top-level key of the map.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.map {
            Node::Map(m) => m.iter().find(|(k, _)| matches!(k, Node::Keyword(x) if x == key)).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The map as EDN.
    pub fn to_edn(&self) -> String {
        edn(&self.map)
    }

    /// The map as pretty JSON.
    pub fn to_json(&self) -> String {
        crate::reports::json::to_string(&History::default(), &self.map)
    }

    /// The map as one line of JSON.
    pub fn to_json_line(&self) -> String {
        let mut v = Vec::new();
        let _ = crate::reports::json::write_line_io(&mut v, &History::default(), &self.map);
        String::from_utf8_lossy(&v).into_owned()
    }

    /// A short human-readable rendering: the verdict, then each top-level
    /// key with its value (long values cut at `width` characters).
    pub fn to_table(&self, width: usize) -> String {
        let mut s = format!(
            "verdict: {}\n",
            match self.valid {
                Validity::Valid => "VALID",
                Validity::Invalid => "INVALID",
                Validity::Unknown => "UNKNOWN",
            }
        );
        if let Node::Map(m) = &self.map {
            let keyw = m.iter().map(|(k, _)| edn(k).len()).max().unwrap_or(0);
            for (k, v) in m.iter().skip(1) {
                let mut text = edn(v);
                if text.chars().count() > width {
                    let cut: String = text.chars().take(width).collect();
                    text = format!("{cut} ...");
                }
                s.push_str(&format!("{:<keyw$}  {text}\n", edn(k)));
            }
        }
        s
    }
}

/// EDN text of a node.
pub fn edn(n: &Node) -> String {
    crate::reports::edn::to_string(&History::default(), n)
}

/// A keyword node.
pub fn kw(s: &str) -> Node {
    Node::Keyword(s.to_string())
}

/// An integer node from a count.
pub fn count(n: usize) -> Node {
    Node::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// `:valid?`'s value: `true`, `false` or `:unknown`.
pub fn validity(v: Validity) -> Node {
    match v {
        Validity::Valid => Node::Bool(true),
        Validity::Invalid => Node::Bool(false),
        Validity::Unknown => kw("unknown"),
    }
}

/// Jepsen's `util/integer-interval-set-str`: a sorted set of integers as
/// `#{1..3 5}`; other values are printed one by one.
pub fn interval_set_str(xs: &[crate::history::Value]) -> String {
    let mut ints: Vec<i64> = Vec::with_capacity(xs.len());
    for x in xs {
        match super::int_of(x) {
            Some(i) => ints.push(i),
            None => {
                let mut v: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
                v.sort();
                return format!("#{{{}}}", v.join(" "));
            }
        }
    }
    int_interval_set_str(ints)
}

/// [`interval_set_str`] of integers.
pub fn int_interval_set_str(mut ints: Vec<i64>) -> String {
    ints.sort_unstable();
    ints.dedup();
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ints.len() {
        let start = ints[i];
        let mut end = start;
        while i + 1 < ints.len() && ints[i + 1] == end + 1 {
            i += 1;
            end = ints[i];
        }
        runs.push(if start == end { start.to_string() } else { format!("{start}..{end}") });
        i += 1;
    }
    format!("#{{{}}}", runs.join(" "))
}

/// A map node from keyword-named entries.
pub fn map(entries: Vec<(&str, Node)>) -> Node {
    Node::Map(entries.into_iter().map(|(k, v)| (kw(k), v)).collect())
}
