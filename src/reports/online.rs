//! One line per anomaly as the online checker (`analyze --follow`,
//! `record --check`) reports it: a table row on a terminal, one JSON or
//! EDN object per line otherwise, so that a program reading the stream can
//! act on each line as it comes.

use crate::anomaly::{Case, Workload};
use crate::history::History;

use super::tree::Node;
use super::{edn, json, result_map, table};

/// How anomaly lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineFormat {
    /// `round 3  G1c  T40027 -wr-> T40034 -wr-> T40027`.
    Table,
    /// `{"anomaly":"G1c","case":{…},"round":3}`.
    Json,
    /// `{:round 3, :anomaly :G1c, :case {…}}`.
    Edn,
}

/// The line (with its newline) reporting anomaly `name`'s `case`, found
/// final in `round`.
pub fn anomaly_line(
    h: &History,
    workload: Workload,
    round: usize,
    name: &str,
    case: &Case,
    format: LineFormat,
) -> String {
    if format == LineFormat::Table {
        return format!("round {round}  {name}  {}\n", table::short_witness(h, case));
    }
    let node = Node::Map(vec![
        (Node::Keyword("round".into()), Node::Int(round as i64)),
        (Node::Keyword("anomaly".into()), Node::Keyword(name.to_string())),
        (Node::Keyword("case".into()), result_map::case(h, workload, case)),
    ]);
    match format {
        LineFormat::Json => {
            let mut v = Vec::new();
            let _ = json::write_line_io(&mut v, h, &node);
            format!("{}\n", String::from_utf8_lossy(&v))
        }
        _ => format!("{}\n", edn::to_string(h, &node)),
    }
}
