//! `index.html` in `isolde explore -d DIR`: one page with every violating
//! history written (`violation-K.edn`), each as `isolde analyze` shows it
//! on its own page (the levels, the anomalies with their cases and cycle
//! drawings), preceded by the explorer's view of it: its transactions by
//! the explorer's names (`T1.2`, session 1's second) beside the names
//! `analyze` gives them (`T<index>` of the completion in the file), what
//! each read read from, and the locals.

use super::witness::{label, HistView, Source};
use super::Outcome;
use crate::check::{self, CheckOptions};
use crate::ingest::{self, Format};
use crate::reports::html::escape;
use crate::reports::html_set::{self, Entry};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Writes `dir/index.html` for the witnesses written to `files` (the
/// `K`th witness to `files[K]`); returns its path.
pub fn write(dir: &Path, out: &Outcome, program: &str, files: &[PathBuf]) -> Result<PathBuf, String> {
    let mut checked = Vec::with_capacity(files.len());
    for f in files {
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let bytes = std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let h = ingest::read_bytes(&name, &bytes, Format::Edn).map_err(|e| format!("{}: {e}", f.display()))?;
        let o = check::check(&h, &CheckOptions::default()).map_err(|e| format!("{}: {e}", f.display()))?;
        checked.push((name, h, o));
    }
    let entries = checked
        .iter()
        .zip(&out.witnesses)
        .map(|((name, h, o), w)| Entry {
            title: name.clone(),
            href: name.clone(),
            violating: true,
            finding: format!(
                "consistent at {}, breaks the assertion ({} transactions: {} client ops, an invocation and a \
                 completion each)",
                out.level.name(),
                w.txns.len(),
                2 * w.txns.len()
            ),
            extra_html: explorer_view(w),
            history: h,
            outcome: o,
        })
        .collect();
    let s = &out.stats;
    let summary = format!(
        "{program} at {}: {} of {} consistent histories break the assertion; {} written here.",
        out.level.name(),
        s.violations,
        s.histories,
        files.len()
    );
    let page = html_set::page(&format!("isolde explore {program}"), &summary, entries);
    let path = dir.join("index.html");
    std::fs::write(&path, page).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// The explorer's view of a history: a table of its transactions in
/// session order, with both names.
fn explorer_view(w: &HistView) -> String {
    let mut s =
        String::from("<table class=\"explore\"><tr><th>explore</th><th>analyze</th><th>reads and writes</th></tr>\n");
    let mut order: Vec<usize> = (0..w.txns.len()).collect();
    order.sort_by_key(|&i| (w.txns[i].session, w.txns[i].index));
    for i in order {
        let t = &w.txns[i];
        let mut events = Vec::new();
        for ev in &t.events {
            events.push(if ev.read {
                let from = match ev.from {
                    Some(Source::Txn(s, i)) => label(s, i),
                    Some(Source::Own) => "own write".into(),
                    _ => "init".into(),
                };
                format!("r {} = {} (from {from})", ev.key, ev.value)
            } else {
                format!("w {} = {}", ev.key, ev.value)
            });
        }
        let name = HistView::analyze_name(i);
        let _ = writeln!(
            s,
            "<tr><td>{}{}</td><td>{name}</td><td><code>{}</code></td></tr>",
            label(t.session, t.index),
            if t.aborted { " (aborted)" } else { "" },
            escape(&events.join("; "))
        );
    }
    s.push_str("</table>\n");
    if !w.locals.is_empty() {
        let ls: Vec<String> = w.locals.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        let _ = writeln!(s, "<p>Locals: <code>{}</code></p>", escape(&ls.join(", ")));
    }
    s
}
