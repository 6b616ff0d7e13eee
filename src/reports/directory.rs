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
use std::path::{Path, PathBuf};

/// The plots `--directory` renders per anomaly type (and of SCCs) unless
/// told to render all: each is a Graphviz run, and a history with thousands
/// of cycles would otherwise spend most of its time drawing.
pub const DEFAULT_PLOTS_PER_TYPE: usize = 10;

/// How to write the directory and render its plots.
#[derive(Clone, Debug)]
pub struct PlotOptions {
    /// `svg` or `png`.
    pub format: String,
    /// Plots whose DOT text is larger are skipped (Elle: 65536).
    pub max_bytes: usize,
    /// Each render is abandoned after this long (Elle: 5 s).
    pub timeout: std::time::Duration,
    /// At most this many plots per anomaly type, and of SCCs (the first
    /// ones, in the order of the `.txt` files); `None` plots every one, as
    /// Elle does. Explanations (`<type>.txt`) always hold every case.
    pub max_plots_per_type: Option<usize>,
    /// How explanations name transactions.
    pub naming: text::Naming,
    /// How explanations print values: [`text::Values::Full`] as Elle
    /// does, or shortened around what each step is about.
    pub values: text::Values,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            format: "svg".into(),
            max_bytes: 65536,
            timeout: std::time::Duration::from_millis(5000),
            max_plots_per_type: Some(DEFAULT_PLOTS_PER_TYPE),
            naming: text::Naming::Elle,
            values: text::Values::Full,
        }
    }
}

/// One plot to write: directory, file stem, DOT text.
struct PlotJob {
    dir: PathBuf,
    name: String,
    text: String,
}

/// Progress of [`write_with_progress`]: plots done out of the total.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Plots written (or skipped) so far.
    pub done: usize,
    /// Plots to write in all.
    pub total: usize,
}

/// Writes one plot: always the `.dot`, and the rendered image when `dot` is
/// installed. Returns notes about plots skipped or not rendered.
fn plot(job: &PlotJob, opts: &PlotOptions, can_render: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if let Err(e) = fs::create_dir_all(&job.dir) {
        notes.push(format!("could not write {}: {e}", job.dir.display()));
        return notes;
    }
    if job.text.len() > opts.max_bytes {
        notes.push(format!(
            "skipped plot {}/{}: {} bytes of DOT exceed {}",
            job.dir.display(),
            job.name,
            job.text.len(),
            opts.max_bytes
        ));
        return notes;
    }
    let dot_file = job.dir.join(format!("{}.dot", job.name));
    if let Err(e) = fs::write(&dot_file, &job.text) {
        notes.push(format!("could not write {}: {e}", dot_file.display()));
        return notes;
    }
    if can_render {
        let out = job.dir.join(format!("{}.{}", job.name, opts.format));
        if let Err(e) = super::dot::render(&dot_file, &out, &opts.format, opts.timeout) {
            notes.push(format!("could not render {}: {e}", out.display()));
        }
    }
    notes
}

/// Writes every file Elle would write for this outcome under `dir`: the text
/// files, and plots of SCCs (`sccs/<i>`) and reported cycles (`<type>/<i>`),
/// at most [`PlotOptions::max_plots_per_type`] of each. Returns notes for
/// the user (plots left out or skipped, `dot` missing, files that could not
/// be written): a file that cannot be written is noted and the rest are
/// still written. Fails only when `dir` itself cannot be created.
pub fn write(h: &History, o: &Outcome, dir: &Path, plots: &PlotOptions) -> io::Result<Vec<String>> {
    write_with_progress(h, o, dir, plots, &|_| {})
}

/// [`write`], rendering plots in parallel and calling `progress` after each.
pub fn write_with_progress(
    h: &History,
    o: &Outcome,
    dir: &Path,
    plots: &PlotOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> io::Result<Vec<String>> {
    use rayon::prelude::*;
    fs::create_dir_all(dir)?;
    let mut notes = Vec::new();
    let can_render = super::dot::dot_available();
    if !can_render {
        notes
            .push("graphviz `dot` is not installed: wrote .dot files only (install graphviz for SVG/PNG plots)".into());
    }
    let failed = |notes: &mut Vec<String>, what: &Path, r: io::Result<()>| {
        if let Err(e) = r {
            notes.push(format!("could not write {}: {e}", what.display()));
        }
    };
    let limit = plots.max_plots_per_type.unwrap_or(usize::MAX);
    let mut left_out: Vec<(String, usize, usize)> = Vec::new();
    let mut jobs: Vec<PlotJob> = Vec::new();
    for (i, scc) in o.sccs.iter().enumerate().take(limit) {
        let edges: Vec<super::dot::PlotEdge> =
            scc.edges.iter().map(|&(from, to, rels)| super::dot::PlotEdge { from, to, rels, step: None }).collect();
        jobs.push(PlotJob {
            dir: dir.join("sccs"),
            name: i.to_string(),
            text: super::dot::dot(h, &scc.vertices, &edges),
        });
    }
    if o.sccs.len() > limit {
        left_out.push(("SCC".into(), limit, o.sccs.len()));
    }
    for (name, cases) in &o.anomalies {
        let refutations: Vec<&crate::anomaly::Refutation> =
            cases.iter().filter_map(|c| if let Case::Refuted(r) = c { Some(&**r) } else { None }).collect();
        let file = dir.join(format!("{}.txt", safe_file_name(name)));
        let sub = dir.join(safe_file_name(name));
        if !refutations.is_empty() {
            let body: Vec<String> = refutations
                .iter()
                .enumerate()
                .map(|(i, r)| format!("{name} #{i}\n{}", text::explain_refutation_named(h, r, plots.naming)))
                .collect();
            failed(&mut notes, &file, fs::write(&file, body.join("\n\n\n")));
            // One plot per case of each refutation: `<type>/<i>-<case>`.
            let all: Vec<(usize, usize, &Cycle)> = refutations
                .iter()
                .enumerate()
                .flat_map(|(i, r)| r.branches.iter().enumerate().map(move |(j, b)| (i, j, &b.cycle)))
                .collect();
            for &(i, j, c) in all.iter().take(limit) {
                jobs.push(PlotJob { dir: sub.clone(), name: format!("{i}-{j}"), text: cycle_dot(h, c) });
            }
            if all.len() > limit {
                left_out.push((name.clone(), limit, all.len()));
            }
            continue;
        }
        let cycles: Vec<&Cycle> =
            cases.iter().filter_map(|c| if let Case::Cycle(c) = c { Some(c) } else { None }).collect();
        if crate::cycles::search::CycleType::parse(name).is_some() && !cycles.is_empty() {
            failed(
                &mut notes,
                &file,
                fs::write(&file, text::cycles_file_values(h, o.workload, name, &cycles, plots.naming, plots.values)),
            );
            for (i, c) in cycles.iter().enumerate().take(limit) {
                jobs.push(PlotJob { dir: sub.clone(), name: i.to_string(), text: cycle_dot(h, c) });
            }
            if cycles.len() > limit {
                left_out.push((name.clone(), limit, cycles.len()));
            }
        }
    }
    if o.workload == Workload::ListAppend {
        if let Some(cases) = o.anomalies.get("incompatible-order") {
            let sub = dir.join("incompatible-order");
            failed(&mut notes, &sub, fs::create_dir_all(&sub));
            for c in cases {
                if let Case::IncompatibleOrder { key, .. } = c {
                    let file = sub.join(format!("{}.html", safe_file_name(&h.key(*key).to_string())));
                    failed(&mut notes, &file, fs::write(&file, incompatible_order_html(h, *key)));
                }
            }
        }
    }
    let total = jobs.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    progress(Progress { done: 0, total });
    let plot_notes: Vec<Vec<String>> = jobs
        .par_iter()
        .map(|job| {
            let n = plot(job, plots, can_render);
            let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(Progress { done: d, total });
            n
        })
        .collect();
    notes.extend(plot_notes.into_iter().flatten());
    for (what, shown, all) in left_out {
        notes.push(format!(
            "plotted {shown} of {all} {what} {}; the explanations hold all of them (--all-plots plots every one)",
            if what == "SCC" { "components" } else { "cases" }
        ));
    }
    Ok(notes)
}

/// The longest file name stem [`safe_file_name`] produces, in bytes: room
/// for an extension within the 255 bytes most file systems allow.
const MAX_STEM: usize = 200;

/// A file name stem for `s` (a key as printed) that every file system
/// accepts and that names nothing but a file in its directory: kept as it is
/// when it is short and made of letters, digits and `-_.:+=@,` (Elle's names
/// for ordinary keys: `x.html`, `12.html`); otherwise every other byte is
/// percent-escaped (`a/b` is `a%2Fb`, and `.`/`..` become `%2E`/`%2E.`), and
/// a stem that is still too long is cut and ends with a hash of the whole
/// key, so different keys keep different files.
pub fn safe_file_name(s: &str) -> String {
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"-_.:+=@,".contains(&b);
    let mut out = String::with_capacity(s.len());
    for (i, &b) in s.as_bytes().iter().enumerate() {
        if plain(b) && !(i == 0 && b == b'.') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.is_empty() {
        // Every escape is `%XX`, so a lone `%` names nothing else.
        out.push('%');
    }
    if out.len() > MAX_STEM {
        let hash = s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        let mut cut = MAX_STEM - 17;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str(&format!("~{hash:016x}"));
    }
    out
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
    fn file_names_are_safe_and_distinct() {
        assert_eq!(safe_file_name("x"), "x");
        assert_eq!(safe_file_name(":x"), ":x");
        assert_eq!(safe_file_name("12"), "12");
        assert_eq!(safe_file_name("a/b"), "a%2Fb");
        assert_eq!(safe_file_name(".."), "%2E.");
        assert_eq!(safe_file_name("\"k\""), "%22k%22");
        assert_eq!(safe_file_name(""), "%");
        assert_eq!(safe_file_name(" "), "%20");
        let (a, b) = ("k".repeat(300) + "a", "k".repeat(300) + "b");
        assert!(safe_file_name(&a).len() <= MAX_STEM);
        assert_ne!(safe_file_name(&a), safe_file_name(&b));
    }

    #[test]
    fn colours_match_elle() {
        // Elle colours element 3 this way in its contradictory-read-orders test.
        assert_eq!(bg_color(3), "#d6aa9d");
    }
}
