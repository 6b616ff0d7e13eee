//! Graphviz plots of cycles and SCCs, styled as Elle's (`elle.viz`).
//!
//! Each transaction is a record node named `T<index>` with one field per
//! micro-op (`a :x 1`, `r :y [1 2]`, `w :z 3`), coloured by op type; each edge
//! is labelled with its relationships and the key when a cycle step explains
//! it, coloured per relationship, and attached to the micro-op fields the
//! step names. `.dot` text is always written; rendering to SVG or PNG needs
//! the `dot` program and is bounded by a timeout.

use crate::anomaly::{rel, Rels, Step};
use crate::history::{History, MopValue, OpId, OpType};
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '{' | '}' | '|' | '<' | '>' | '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn mop_label(h: &History, m: &crate::history::Mop) -> String {
    let f = match m.f {
        crate::history::MopFn::Append => "a",
        crate::history::MopFn::Read => "r",
        crate::history::MopFn::Write => "w",
        crate::history::MopFn::Insert => "insert",
        crate::history::MopFn::Delete => "delete",
        crate::history::MopFn::PredRead | crate::history::MopFn::PredEntry => "rp",
    };
    let v = match m.value {
        MopValue::Nil | MopValue::Entries(_) => "nil".to_string(),
        MopValue::Int(i) => h.value_text(i),
        MopValue::List { .. } => {
            format!("[{}]", h.list(m.value).iter().map(|&e| h.value_text(e)).collect::<Vec<_>>().join(" "))
        }
    };
    format!("{f} {} {v}", h.key(m.key))
}

const RELS: [(Rels, &str, &str); 5] = [
    (rel::WW, "ww", "#C02700"),
    (rel::WR, "wr", "#C000A5"),
    (rel::RW, "rw", "#5B00C0"),
    (rel::REALTIME, "rt", "#0050C0"),
    (rel::PROCESS, "p", "#00C0C0"),
];

/// An edge to draw: endpoints, relationships, and optionally the step that
/// explains it (for its key and micro-op ports).
pub struct PlotEdge<'a> {
    /// Source transaction.
    pub from: OpId,
    /// Target transaction.
    pub to: OpId,
    /// Relationships on the edge.
    pub rels: Rels,
    /// The explaining step, if known.
    pub step: Option<&'a Step>,
}

/// DOT text for transactions `vertices` and `edges` among them.
pub fn dot(h: &History, vertices: &[OpId], edges: &[PlotEdge]) -> String {
    let mut s = String::from("digraph G {\n  node [shape=record, fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n");
    for &v in vertices {
        let op = h.op(v);
        let color = match op.op_type {
            OpType::Ok => "#0058AD",
            OpType::Info => "#AC6E00",
            _ => "#A50053",
        };
        let fields: Vec<String> =
            h.mops_of(op).iter().enumerate().map(|(i, m)| format!("<f{i}> {}", escape(&mop_label(h, m)))).collect();
        let mut label = format!("T{}", op.index);
        for f in fields {
            label.push('|');
            label.push_str(&f);
        }
        let _ = writeln!(s, "  T{} [label=\"{label}\", color=\"{color}\", fontcolor=\"{color}\"];", op.index);
    }
    for e in edges {
        let (a, b) = (h.op(e.from).index, h.op(e.to).index);
        let (mut from, mut to) = (format!("T{a}"), format!("T{b}"));
        let mut key = String::new();
        if let Some(step) = e.step {
            let (k, am, bm) = match step {
                Step::Ww { key, a_mop, b_mop, .. } | Step::Rw { key, a_mop, b_mop, .. } => (Some(*key), *a_mop, *b_mop),
                Step::Wr { key, a_mop, b_mop, .. } => (Some(*key), *a_mop, *b_mop),
                _ => (None, None, None),
            };
            if let Some(i) = am {
                from = format!("T{a}:f{i}");
            }
            if let Some(i) = bm {
                to = format!("T{b}:f{i}");
            }
            if let Some(k) = k {
                key = format!(" {}", h.key(k));
            }
        }
        for (r, name, color) in RELS {
            if e.rels & r != 0 {
                let _ = writeln!(
                    s,
                    "  {from} -> {to} [label=\"{}\", color=\"{color}\", fontcolor=\"{color}\"];",
                    escape(&format!("{name}{key}"))
                );
            }
        }
    }
    s.push_str("}\n");
    s
}

/// Whether the `dot` program can be run.
pub fn dot_available() -> bool {
    Command::new("dot").arg("-V").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// Renders `dot_file` to `out` in `format` (`svg` or `png`), killing `dot`
/// after `timeout`. Returns why it failed, if it did, with the start of what
/// `dot` printed. Its stderr is drained by a thread as it is written (a pipe
/// that nobody reads blocks `dot` once it holds 64 KiB of warnings); the
/// first 4 KiB are kept for the message, the rest discarded.
pub fn render(dot_file: &Path, out: &Path, format: &str, timeout: Duration) -> Result<(), String> {
    let mut child = Command::new("dot")
        .arg(format!("-T{format}"))
        .arg(dot_file)
        .arg("-o")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run dot: {e}"))?;
    let drain = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            use std::io::Read;
            let mut kept = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let room = STDERR_KEPT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
            kept
        })
    });
    let said = |drain: Option<std::thread::JoinHandle<Vec<u8>>>| {
        let text = drain.and_then(|d| d.join().ok()).unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        let text = text.trim();
        if text.is_empty() {
            String::new()
        } else {
            format!(": {}", text.lines().take(3).collect::<Vec<_>>().join(" / "))
        }
    };
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => {
                let _ = said(drain);
                return Ok(());
            }
            Ok(Some(status)) => return Err(format!("dot exited with {status}{}", said(drain))),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("dot took longer than {} ms{}", timeout.as_millis(), said(drain)));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// How much of `dot`'s stderr [`render`] keeps for its message.
const STDERR_KEPT: usize = 4096;
