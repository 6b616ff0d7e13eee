//! Elle's output directory (`--directory`): one `<type>.txt` per reportable
//! cycle type with every witness explained, and for list-append an HTML table
//! per key with incompatible read orders (`incompatible-order/<key>.html`),
//! byte for byte as Elle writes them.

use super::text;
use crate::anomaly::{Case, Cycle, Workload};
use crate::check::Outcome;
use crate::history::{Atom, History, MopFn, MopValue, OpType};
use std::fs;
use std::io;
use std::path::Path;

/// How to render plots.
#[derive(Clone, Debug)]
pub struct PlotOptions {
    /// `svg` or `png`.
    pub format: String,
    /// Plots whose DOT text is larger are skipped (Elle: 65536).
    pub max_bytes: usize,
    /// Each render is abandoned after this long (Elle: 5 s).
    pub timeout: std::time::Duration,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions { format: "svg".into(), max_bytes: 65536, timeout: std::time::Duration::from_millis(5000) }
    }
}

/// Writes one plot: always the `.dot`, and the rendered image when `dot` is
/// installed. Returns notes about plots skipped or not rendered.
fn plot(
    dir: &Path,
    name: &str,
    text: &str,
    opts: &PlotOptions,
    can_render: bool,
    notes: &mut Vec<String>,
) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    if text.len() > opts.max_bytes {
        notes.push(format!(
            "skipped plot {}/{name}: {} bytes of DOT exceed {}",
            dir.display(),
            text.len(),
            opts.max_bytes
        ));
        return Ok(());
    }
    let dot_file = dir.join(format!("{name}.dot"));
    fs::write(&dot_file, text)?;
    if can_render {
        let out = dir.join(format!("{name}.{}", opts.format));
        if let Err(e) = super::dot::render(&dot_file, &out, &opts.format, opts.timeout) {
            notes.push(format!("could not render {}: {e}", out.display()));
        }
    }
    Ok(())
}

/// Writes every file Elle would write for this outcome under `dir`: the text
/// files, and plots of every SCC (`sccs/<i>`) and every reported cycle
/// (`<type>/<i>`). Returns notes for the user (plots skipped, `dot` missing).
pub fn write(h: &History, o: &Outcome, dir: &Path, plots: &PlotOptions) -> io::Result<Vec<String>> {
    fs::create_dir_all(dir)?;
    let mut notes = Vec::new();
    let can_render = super::dot::dot_available();
    if !can_render {
        notes
            .push("graphviz `dot` is not installed: wrote .dot files only (install graphviz for SVG/PNG plots)".into());
    }
    for (i, scc) in o.sccs.iter().enumerate() {
        let edges: Vec<super::dot::PlotEdge> =
            scc.edges.iter().map(|&(from, to, rels)| super::dot::PlotEdge { from, to, rels, step: None }).collect();
        plot(
            &dir.join("sccs"),
            &i.to_string(),
            &super::dot::dot(h, &scc.vertices, &edges),
            plots,
            can_render,
            &mut notes,
        )?;
    }
    for (name, cases) in &o.anomalies {
        let refutations: Vec<String> = cases
            .iter()
            .filter_map(|c| if let Case::Refuted(r) = c { Some(text::explain_refutation(h, r)) } else { None })
            .collect();
        if !refutations.is_empty() {
            let body: Vec<String> = refutations.iter().enumerate().map(|(i, t)| format!("{name} #{i}\n{t}")).collect();
            fs::write(dir.join(format!("{name}.txt")), body.join("\n\n\n"))?;
            // One plot per case of each refutation: `<type>/<i>-<case>`.
            for (i, r) in cases.iter().filter_map(|c| if let Case::Refuted(r) = c { Some(r) } else { None }).enumerate()
            {
                for (j, b) in r.branches.iter().enumerate() {
                    let text = cycle_dot(h, &b.cycle);
                    plot(&dir.join(name), &format!("{i}-{j}"), &text, plots, can_render, &mut notes)?;
                }
            }
            continue;
        }
        let cycles: Vec<&Cycle> =
            cases.iter().filter_map(|c| if let Case::Cycle(c) = c { Some(c) } else { None }).collect();
        if crate::cycles::search::CycleType::parse(name).is_some() && !cycles.is_empty() {
            fs::write(dir.join(format!("{name}.txt")), text::cycles_file(h, o.workload, name, &cycles))?;
            for (i, c) in cycles.iter().enumerate() {
                plot(&dir.join(name), &i.to_string(), &cycle_dot(h, c), plots, can_render, &mut notes)?;
            }
        }
    }
    if o.workload == Workload::ListAppend {
        if let Some(cases) = o.anomalies.get("incompatible-order") {
            let sub = dir.join("incompatible-order");
            fs::create_dir_all(&sub)?;
            for c in cases {
                if let Case::IncompatibleOrder { key, .. } = c {
                    let name = format!("{}.html", h.key(*key));
                    fs::write(sub.join(name), incompatible_order_html(h, *key))?;
                }
            }
        }
    }
    Ok(notes)
}

/// The Graphviz text of one cycle, each edge labelled by its step.
fn cycle_dot(h: &History, c: &Cycle) -> String {
    let n = c.ops.len();
    let edges: Vec<super::dot::PlotEdge> = (0..n)
        .map(|j| super::dot::PlotEdge {
            from: c.ops[j],
            to: c.ops[(j + 1) % n],
            rels: c.steps[j].rel(),
            step: Some(&c.steps[j]),
        })
        .collect();
    super::dot::dot(h, &c.ops, &edges)
}

/// Elle's `rand-bg-color`: a light colour derived from the element's hash.
pub fn bg_color(x: i64) -> String {
    let h = crate::clojure_hash::hash_long(x) as i64;
    let compress = |c: i64| (c * 120 / 255) + 130;
    let (r, g, b) = (h & 255, (h & 0xff00) >> 8, (h & 0xff_0000) >> 16);
    format!("#{:02x}{:02x}{:02x}", compress(r), compress(g), compress(b))
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The HTML table of every ok read of `key`, elements that disagree with the
/// longest read highlighted.
pub fn incompatible_order_html(h: &History, key: crate::history::KeyId) -> String {
    // The longest read among ok and info ops (first of maximal length).
    let mut longest: &[i64] = &[];
    for op in &h.ops {
        if matches!(op.op_type, OpType::Ok | OpType::Info) {
            for m in h.mops_of(op) {
                if m.f == MopFn::Read && m.key == key && h.list(m.value).len() > longest.len() {
                    longest = h.list(m.value);
                }
            }
        }
    }
    let title = html_escape(&h.key(key).to_string());
    let mut s = format!(
        "<html><head><style>th {{ text-align: left; }}</style></head><body><h1>All Reads of {title}</h1><table><thead><tr><th>Index</th><th>Time (s)</th><th>Process</th><th>Fun</th><th colspan=\"32\">Value</th></tr></thead><tbody>"
    );
    for op in &h.ops {
        if op.op_type != OpType::Ok {
            continue;
        }
        for m in h.mops_of(op) {
            if m.f != MopFn::Read || m.key != key {
                continue;
            }
            let f = match h.f_of(op) {
                Atom::Nil => String::new(),
                Atom::Keyword(k) | Atom::Symbol(k) | Atom::Str(k) => k.to_string(),
                other => other.to_string(),
            };
            s.push_str(&format!(
                "<tr><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td>",
                op.index,
                op.time as f64 / 1e9,
                op.process,
                html_escape(&f)
            ));
            if let MopValue::List { .. } = m.value {
                for (i, &e) in h.list(m.value).iter().enumerate() {
                    let text = html_escape(&h.value_text(e));
                    if longest.get(i) == Some(&e) {
                        s.push_str(&format!("<td>{text}</td>"));
                    } else {
                        s.push_str(&format!("<td style=\"background: {}\">{text}</td>", bg_color(e)));
                    }
                }
            }
            s.push_str("</tr>");
        }
    }
    s.push_str("</tbody></table></body></html>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_match_elle() {
        // Elle colours element 3 this way in its contradictory-read-orders test.
        assert_eq!(bg_color(3), "#d6aa9d");
    }
}
