//! `index.html` in `isolde hermitage -d DIR`: one page with every
//! scenario's history (`LEVEL/SCENARIO.edn`), those whose anomaly occurred
//! first, each with Hermitage's finding (POSSIBLE or prevented, and why)
//! and the check `isolde analyze --model serializable` makes of it (the
//! model [`super::judge`] checks, so that every anomaly type is looked
//! for): the levels, the anomalies with their cases and cycle drawings,
//! and the transactions named with links to their lines.

use super::Row;
use crate::check::{self, CheckOptions};
use crate::ingest::{self, Format};
use crate::reports::html::escape;
use crate::reports::html_set::{self, Entry};
use std::path::{Path, PathBuf};

/// Writes `dir/index.html` for `rows` (tested on `version`); returns its
/// path.
pub fn write(dir: &Path, version: &str, rows: &[Row]) -> Result<PathBuf, String> {
    let opts = CheckOptions { models: Some(vec!["serializable".into()]), ..CheckOptions::default() };
    let mut checked = Vec::new();
    for row in rows {
        for c in &row.cells {
            let href = format!("{}/{}.edn", row.level.name(), c.scenario.name);
            let h = ingest::read_bytes(&href, c.run.edn.as_bytes(), Format::Edn).map_err(|e| format!("{href}: {e}"))?;
            let o = check::check(&h, &opts).map_err(|e| format!("{href}: {e}"))?;
            let finding = format!(
                "{} at {}: {} ({})",
                c.scenario.title,
                row.level.name(),
                if c.occurred { "POSSIBLE" } else { "prevented" },
                c.why
            );
            let transcript = format!("<pre class=\"muted\">{}</pre>\n", escape(&c.run.transcript.join("\n")));
            checked.push((href, c.occurred, finding, transcript, h, o));
        }
    }
    let entries = checked
        .iter()
        .map(|(href, occurred, finding, transcript, h, o)| Entry {
            title: href.clone(),
            href: href.clone(),
            violating: *occurred,
            finding: finding.clone(),
            extra_html: transcript.clone(),
            history: h,
            outcome: o,
        })
        .collect();
    let possible = checked.iter().filter(|c| c.1).count();
    let levels: Vec<String> = rows.iter().map(|r| format!("{} (actual: {})", r.level.name(), r.actual)).collect();
    let summary = format!(
        "{version}: {} scenario runs at {}; the anomaly occurred in {possible}.",
        checked.len(),
        levels.join(", ")
    );
    let page = html_set::page(&format!("isolde hermitage: {version}"), &summary, entries);
    let path = dir.join("index.html");
    std::fs::write(&path, page).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}
