//! One self-contained HTML page per check (`index.html` in the output
//! directory, or `isolde analyze --html FILE`): the verdict, the table of
//! levels, every anomaly type with its count and first cases, each case
//! explained in words with its cycle drawn inline, the transactions the
//! page mentions with their line in the history, and the history's size
//! and stage times.
//!
//! The page needs nothing but itself: CSS and SVG are inline, there is no
//! script and no link outside the page but the history file's. Its size is
//! bounded like the table's: at most [`HtmlOptions::max_cases`] cases per
//! anomaly type (with the count of the rest), values shortened as
//! [`super::elide`] does, and cycles of more than [`MAX_DRAWN`]
//! transactions explained without a drawing. Plots the output directory
//! rendered with Graphviz (`<type>/<i>.svg`) are inlined; otherwise a cycle
//! is drawn here, its transactions on a circle.

use super::elide;
use super::text::{Naming, Values};
use super::words;
use crate::anomaly::{Case, Cycle};
use crate::history::{History, OpId};
use crate::outcome::{ModelStatus, Outcome, Validity};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Cycles longer than this are explained without a drawing.
pub const MAX_DRAWN: usize = 24;

/// Graphviz plots larger than this are not inlined (the drawing made
/// here is used instead).
const MAX_INLINE_SVG: u64 = 256 << 10;

/// What the page shows beyond the outcome.
#[derive(Clone, Debug)]
pub struct HtmlOptions {
    /// Cases shown per anomaly type; the count gives the total.
    pub max_cases: usize,
    /// The output directory whose rendered plots (`<type>/<i>.svg`) are
    /// inlined, if one was written.
    pub plots_dir: Option<PathBuf>,
    /// Where the history file is, relative to the page (or absolute), for
    /// the links from each transaction to its line; `None`: no links.
    pub history_href: Option<String>,
    /// Time spent reading the history, if known.
    pub parse_time: Option<Duration>,
    /// Prefixed to every `id` and in-page link of the history's section,
    /// so that several histories share one page
    /// ([`super::html_set`]); empty for a page of its own.
    pub id_prefix: String,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        HtmlOptions {
            max_cases: super::table::DEFAULT_EXAMPLES,
            plots_dir: None,
            history_href: None,
            parse_time: None,
            id_prefix: String::new(),
        }
    }
}

/// Escapes text for HTML.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes `s` and links every transaction name `T<index>` it holds to the
/// transaction's entry on the page (its `id` prefixed with `prefix`).
fn linked(s: &str, prefix: &str) -> String {
    let e = escape(s);
    let b = e.as_bytes();
    let mut out = String::with_capacity(e.len() + 64);
    let mut i = 0;
    while i < b.len() {
        let starts = b[i] == b'T' && (i == 0 || !b[i - 1].is_ascii_alphanumeric());
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let ends = b.get(i + 1 + digits).is_none_or(|c| !c.is_ascii_alphanumeric());
        if starts && digits > 0 && ends {
            let name = &e[i..i + 1 + digits];
            let _ = write!(out, "<a href=\"#{prefix}{name}\">{name}</a>");
            i += 1 + digits;
        } else {
            let ch = e[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// An HTML anchor for an anomaly type.
fn anchor(prefix: &str, name: &str) -> String {
    let safe: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    format!("{prefix}a-{safe}")
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#222}\
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ccc}\
.v{font-weight:bold;padding:.1em .5em;border-radius:.3em;color:#fff}.valid{background:#2a7d2a}\
.invalid{background:#b52a2a}.unknown{background:#b5862a}.nc{background:#777}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;white-space:pre-wrap}\
.case{margin:1em 0;padding:.5em 1em;border-left:4px solid #b52a2a;background:#fcfcfc}\
.plot svg{max-width:100%;height:auto}code{font-size:.9em}.muted{color:#666}";

/// The verdict's word and CSS class.
pub fn verdict_word(v: Validity) -> (&'static str, &'static str) {
    match v {
        Validity::Valid => ("VALID", "valid"),
        Validity::Invalid => ("INVALID", "invalid"),
        Validity::Unknown => ("UNKNOWN", "unknown"),
    }
}

/// The start of a page titled `title` (escaped here), through `<body>`.
pub fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>isolde: {}</title>\
         <style>{STYLE}</style></head><body>\n",
        escape(title)
    )
}

/// The end of a page.
pub const FOOT: &str = "<p class=\"muted\">Written by isolde.</p>\n</body></html>\n";

/// The page for `o` over `h`.
pub fn page(h: &History, o: &Outcome, opts: &HtmlOptions) -> String {
    let (word, class) = verdict_word(o.valid);
    let mut s = head(&format!("{} {word}", h.source));
    let _ = writeln!(
        s,
        "<h1>{} <span class=\"v {class}\" id=\"{}verdict\">{word}</span></h1>",
        escape(&h.source),
        opts.id_prefix
    );
    section(&mut s, h, o, opts);
    s.push_str(FOOT);
    s
}

/// What the page shows of one history, after its heading: its size and
/// stage times, the levels, the anomalies and the transactions named.
pub fn section(s: &mut String, h: &History, o: &Outcome, opts: &HtmlOptions) {
    let st = &o.stats;
    let mut times = format!(
        "infer {:.3}s, graph {:.3}s, cycles {:.3}s",
        st.infer.as_secs_f64(),
        st.graph.as_secs_f64(),
        st.cycles.as_secs_f64()
    );
    if let Some(p) = opts.parse_time {
        times = format!("parse {:.3}s, {times}", p.as_secs_f64());
    }
    if let Some(l) = st.ladder {
        let _ = write!(times, ", ladder {:.3}s", l.as_secs_f64());
    }
    let _ = writeln!(
        s,
        "<p>{} history: {} client ops ({} non-client ignored), {}, {} dependency edges. \
         <span class=\"muted\">Stage times: {times}.</span></p>",
        o.workload.name(),
        if st.distributed.is_some() { st.ops } else { h.ops.len() },
        h.nonclient_ops,
        match st.distributed {
            Some((p, w)) => format!("checked by {p} processes ({w} workers)"),
            None => format!("{} keys", h.key_count()),
        },
        st.edges
    );
    if let Some(store) = &h.store {
        let _ = writeln!(s, "<p>{}</p>", escape(super::table::store_line(store).trim_end()));
        if let Some(p) = &store.partial {
            let _ = writeln!(s, "<p class=\"invalid\"><strong>Partial history:</strong> {}</p>", escape(&p.describe()));
        }
    }
    if let Some(e) = &o.error {
        let _ = write!(s, "<p>The analysis could not run: {}</p>", escape(&e.to_string()));
    }
    levels(s, h, o, &opts.id_prefix);
    let mut mentioned: Vec<OpId> = Vec::new();
    anomalies(s, h, o, opts, &mut mentioned);
    transactions(s, h, opts, mentioned);
}

/// The table of levels.
fn levels(s: &mut String, h: &History, o: &Outcome, p: &str) {
    if o.levels.is_empty() {
        return;
    }
    let _ = write!(s, "<h2>Levels</h2>\n<table id=\"{p}levels\"><tr><th>level</th><th>verdict</th><th>decided by</th><th>witness</th></tr>\n");
    for row in &o.levels {
        let (v, class) = match row.status {
            ModelStatus::Holds => ("valid", "valid"),
            ModelStatus::Violated(_) => ("invalid", "invalid"),
            ModelStatus::Unknown => ("unknown", "unknown"),
            ModelStatus::NotChecked => ("not checked", "nc"),
        };
        let witness = match (&row.status, &row.witness) {
            (ModelStatus::Violated(a), _) if o.anomalies.contains_key(a) => {
                format!("<a href=\"#{}\">{}</a>", anchor(p, a), escape(a))
            }
            (ModelStatus::Violated(a), Some(w)) => {
                format!("{}: {}", escape(a), linked(&super::witness::short_witness(h, w), p))
            }
            (ModelStatus::Violated(a), None) => escape(a),
            (ModelStatus::Holds, _) => String::new(),
            _ => escape(&row.reason),
        };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td><span class=\"v {class}\">{v}</span></td><td>{}</td><td>{witness}</td></tr>",
            escape(row.level.model),
            escape(&row.decided_by.describe())
        );
    }
    s.push_str("</table>\n");
    let list = |s: &mut String, head: &str, xs: &std::collections::BTreeSet<String>| {
        if !xs.is_empty() {
            let _ = writeln!(s, "<p><b>{head}</b> {}</p>", escape(&xs.iter().cloned().collect::<Vec<_>>().join(", ")));
        }
    };
    list(s, "Not:", &o.not);
    list(s, "Also not:", &o.also_not);
}

/// Every anomaly type: a summary table, then its first cases.
fn anomalies(s: &mut String, h: &History, o: &Outcome, opts: &HtmlOptions, mentioned: &mut Vec<OpId>) {
    let p = opts.id_prefix.as_str();
    if o.anomalies.is_empty() {
        s.push_str("<h2>Anomalies</h2>\n<p>None found.</p>\n");
        return;
    }
    let _ = write!(
        s,
        "<h2>Anomalies</h2>\n<table id=\"{p}anomalies\"><tr><th>anomaly</th><th>count</th><th>example</th></tr>\n"
    );
    for (name, cases) in &o.anomalies {
        let ex = cases.first().map(|c| linked(&super::witness::short_witness(h, c), p)).unwrap_or_default();
        let _ = writeln!(
            s,
            "<tr><td><a href=\"#{}\">{}</a></td><td>{}</td><td>{ex}</td></tr>",
            anchor(p, name),
            escape(name),
            cases.len()
        );
    }
    s.push_str("</table>\n");
    let mut svg_id = 0usize;
    for (name, cases) in &o.anomalies {
        let _ = writeln!(s, "<h2 id=\"{}\">{} ({})</h2>", anchor(p, name), escape(name), cases.len());
        let mut cycle_no = 0usize;
        for (i, c) in cases.iter().enumerate() {
            // The directory numbers the plots of a type's cycles from 0.
            let plot_no = matches!(c, Case::Cycle(_)).then(|| {
                cycle_no += 1;
                cycle_no - 1
            });
            if i >= opts.max_cases {
                continue;
            }
            let text = words::explain_case(h, o.workload, c, Naming::Index, Values::Short);
            let _ = write!(s, "<div class=\"case\"><b>{} #{i}</b><pre>{}</pre>", escape(name), linked(&text, p));
            collect_ops(h, c, mentioned);
            if let (Case::Cycle(cy), Some(k)) = (c, plot_no) {
                s.push_str(&plot(h, cy, name, k, opts, &mut svg_id));
            }
            s.push_str("</div>\n");
        }
        if cases.len() > opts.max_cases {
            let _ = writeln!(
                s,
                "<p class=\"muted\">{} more {} cases not shown ({} in all; the output directory's explanations hold all).</p>",
                cases.len() - opts.max_cases,
                escape(name),
                cases.len()
            );
        }
    }
}

/// The transactions a case names.
fn collect_ops(h: &History, c: &Case, out: &mut Vec<OpId>) {
    match c {
        Case::Cycle(cy) => out.extend(&cy.ops),
        Case::Refuted(r) => {
            for b in &r.branches {
                out.extend(&b.cycle.ops);
            }
        }
        other => out.extend(words::case_ops(h, other).into_iter().map(|(op, _)| op)),
    }
}

/// The cycle's plot: Graphviz's, when the directory rendered one, else one
/// drawn here.
fn plot(h: &History, c: &Cycle, name: &str, k: usize, opts: &HtmlOptions, svg_id: &mut usize) -> String {
    let rendered = opts.plots_dir.as_ref().and_then(|d| {
        let f = d.join(super::directory::safe_file_name(name)).join(format!("{k}.svg"));
        let small = std::fs::metadata(&f).is_ok_and(|m| m.len() <= MAX_INLINE_SVG);
        small.then(|| std::fs::read_to_string(&f).ok()).flatten()
    });
    if let Some(svg) = rendered.as_deref().and_then(|t| t.find("<svg").map(|at| &t[at..])) {
        return format!("<div class=\"plot\">{svg}</div>");
    }
    if c.ops.len() > MAX_DRAWN {
        return format!("<p class=\"muted\">(a cycle of {} transactions: not drawn)</p>", c.ops.len());
    }
    *svg_id += 1;
    format!(
        "<div class=\"plot\">{}</div>",
        draw_cycle_in(h, c, &format!("{}{}", opts.id_prefix, *svg_id), &opts.id_prefix)
    )
}

/// A cycle drawn as SVG: its transactions on a circle, each step an arrow
/// labelled with its type (`rw`, `wr`, `ww`, `process`, `realtime`).
pub fn draw_cycle(h: &History, c: &Cycle, id: usize) -> String {
    draw_cycle_in(h, c, &id.to_string(), "")
}

/// [`draw_cycle`] with its marker named `arr<id>` and its links to
/// transactions' entries prefixed with `prefix`.
fn draw_cycle_in(h: &History, c: &Cycle, id: &str, prefix: &str) -> String {
    let n = c.ops.len().max(1);
    let r = (40.0 * n as f64 / std::f64::consts::PI).max(70.0);
    let size = 2.0 * r + 140.0;
    let center = size / 2.0;
    let pos = |i: usize| {
        let a = 2.0 * std::f64::consts::PI * i as f64 / n as f64 - std::f64::consts::FRAC_PI_2;
        (center + r * a.cos(), center + r * a.sin())
    };
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{size:.0}\" height=\"{size:.0}\" viewBox=\"0 0 {size:.0} {size:.0}\" \
         role=\"img\"><defs><marker id=\"arr{id}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" \
         markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#444\"/></marker></defs>"
    );
    for (i, st) in c.steps.iter().enumerate() {
        let ((x1, y1), (x2, y2)) = (pos(i), pos((i + 1) % n));
        // Bend each arrow outwards, so that a two-transaction cycle shows
        // both; end it at the node's rim.
        let (mx, my) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
        let (dx, dy) = (mx - center, my - center);
        let len = (dx * dx + dy * dy).sqrt().max(1.0);
        let bend = if n == 2 { 45.0 } else { 25.0 };
        let (cx, cy) = if len < 2.0 {
            let (ux, uy) = (-(y2 - y1), x2 - x1);
            let l = (ux * ux + uy * uy).sqrt().max(1.0);
            (mx + ux / l * bend, my + uy / l * bend)
        } else {
            (mx + dx / len * bend, my + dy / len * bend)
        };
        let (ex, ey) = (x2 - cx, y2 - cy);
        let el = (ex * ex + ey * ey).sqrt().max(1.0);
        let (tx, ty) = (x2 - ex / el * 26.0, y2 - ey / el * 26.0);
        let (sx, sy) = {
            let (fx, fy) = (cx - x1, cy - y1);
            let fl = (fx * fx + fy * fy).sqrt().max(1.0);
            (x1 + fx / fl * 26.0, y1 + fy / fl * 26.0)
        };
        let color = match st.type_name() {
            "rw" => "#b52a2a",
            "wr" => "#2a5db5",
            "ww" => "#2a7d2a",
            _ => "#777",
        };
        let _ = write!(
            s,
            "<path d=\"M{sx:.1},{sy:.1} Q{cx:.1},{cy:.1} {tx:.1},{ty:.1}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" \
             marker-end=\"url(#arr{id})\"/><text x=\"{cx:.1}\" y=\"{cy:.1}\" font-size=\"12\" text-anchor=\"middle\" \
             fill=\"{color}\">{}</text>",
            escape(st.type_name())
        );
    }
    for (i, &op) in c.ops.iter().enumerate() {
        let (x, y) = pos(i);
        let name = format!("T{}", h.op(op).index);
        let _ = write!(
            s,
            "<a href=\"#{prefix}{name}\"><circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"24\" fill=\"#fff\" stroke=\"#222\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{name}</text></a>",
            y + 4.0
        );
    }
    s.push_str("</svg>");
    s
}

/// The transactions the page mentions, each with its line in the history.
fn transactions(s: &mut String, h: &History, opts: &HtmlOptions, mut ops: Vec<OpId>) {
    ops.sort_unstable_by_key(|&o| h.op(o).index);
    ops.dedup();
    if ops.is_empty() {
        return;
    }
    let p = opts.id_prefix.as_str();
    let _ = write!(s, "<h2>Transactions</h2>\n<table id=\"{p}transactions\"><tr><th>transaction</th><th>history line</th><th>op</th></tr>\n");
    for op in ops {
        let o = h.op(op);
        let line = match &opts.history_href {
            Some(href) if o.line > 0 => format!("<a href=\"{}#L{}\">{}</a>", escape(href), o.line, o.line),
            _ if o.line > 0 => o.line.to_string(),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "<tr id=\"{p}T{}\"><td>T{}</td><td>{line}</td><td><code>{}</code></td></tr>",
            o.index,
            o.index,
            escape(&elide::op_text(h, op, &Vec::new()))
        );
    }
    s.push_str("</table>\n");
}

/// Writes the page to `path`.
pub fn write(h: &History, o: &Outcome, path: &Path, opts: &HtmlOptions) -> std::io::Result<()> {
    std::fs::write(path, page(h, o, opts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_link_and_text_is_escaped() {
        assert_eq!(linked("T5 <T12> xT3 T4a", ""), "<a href=\"#T5\">T5</a> &lt;<a href=\"#T12\">T12</a>&gt; xT3 T4a");
        assert_eq!(escape("a&\"b\""), "a&amp;&quot;b&quot;");
    }

    #[test]
    fn the_page_of_a_failing_history() {
        let text = "{:index 0, :type :ok, :process 0, :value [[:append :x 1] [:r :y [1]]]}\n\
                    {:index 1, :type :ok, :process 1, :value [[:append :y 1] [:r :x [1]]]}\n";
        let h = crate::ingest::read_bytes("h.edn", text.as_bytes(), crate::ingest::Format::Edn).expect("parses");
        let o = crate::check::check(&h, &crate::check::CheckOptions::default()).expect("runs");
        let p = page(&h, &o, &HtmlOptions { history_href: Some("h.edn".into()), ..HtmlOptions::default() });
        assert!(p.contains("id=\"verdict\">INVALID"), "{p}");
        assert!(p.contains("<h2 id=\"a-G1c\">G1c (1)</h2>"), "{p}");
        assert!(p.contains("<svg") && p.contains("href=\"#T0\""), "{p}");
        assert!(p.contains("<tr id=\"T1\"><td>T1</td><td><a href=\"h.edn#L2\">2</a>"), "{p}");
        assert!(!p.contains("<script") && !p.contains("https://"), "{p}");
    }
}
