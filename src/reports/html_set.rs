//! One self-contained HTML page for a set of histories: the `index.html`
//! that `isolde explore -d DIR` and `isolde hermitage -d DIR` write beside
//! the histories they found.
//!
//! Each history gets its entry, violating ones first (the tool's own
//! verdict: the explored assertion fails, the Hermitage anomaly occurred),
//! and each entry shows what `isolde analyze` shows of that history on its
//! own page ([`super::html::section`]: levels, anomalies with their cases
//! and cycle drawings, the transactions named with links to their lines),
//! its `id`s prefixed with the entry's so that the entries share the page.
//! A contents table at the top lists every entry with both verdicts.

use super::html::{self, escape, HtmlOptions};
use crate::history::History;
use crate::outcome::Outcome;
use std::fmt::Write as _;

/// One history of the set.
pub struct Entry<'a> {
    /// The entry's heading: the history file's name in the directory.
    pub title: String,
    /// The history file, relative to the page.
    pub href: String,
    /// The tool's verdict: the history shows what the tool looks for.
    pub violating: bool,
    /// The tool's one-line finding, as text.
    pub finding: String,
    /// HTML shown before `analyze`'s section (the tool's own view of the
    /// history), already escaped.
    pub extra_html: String,
    /// The history as `analyze` read it.
    pub history: &'a History,
    /// `analyze`'s check of it.
    pub outcome: &'a Outcome,
}

/// The page: `title` and `summary` (text) above the entries.
pub fn page(title: &str, summary: &str, mut entries: Vec<Entry<'_>>) -> String {
    // Violating first; otherwise the tool's order.
    entries.sort_by_key(|e| !e.violating);
    let mut s = html::head(title);
    let _ = writeln!(s, "<h1>{}</h1>\n<p id=\"summary\">{}</p>", escape(title), escape(summary));
    if entries.is_empty() {
        s.push_str("<p>No history was written.</p>\n");
        s.push_str(html::FOOT);
        return s;
    }
    s.push_str(
        "<table id=\"histories\"><tr><th>history</th><th>finding</th><th>analyze</th><th>first anomaly</th></tr>\n",
    );
    for (k, e) in entries.iter().enumerate() {
        let (word, class) = html::verdict_word(e.outcome.valid);
        let first = e.outcome.anomalies.keys().next().map(|a| escape(a)).unwrap_or_default();
        let _ = writeln!(
            s,
            "<tr><td><a href=\"#h{k}\">{}</a></td><td><span class=\"v {}\">{}</span> {}</td>\
             <td><span class=\"v {class}\">{word}</span></td><td>{first}</td></tr>",
            escape(&e.title),
            if e.violating { "invalid" } else { "valid" },
            if e.violating { "violating" } else { "not violating" },
            escape(&e.finding)
        );
    }
    s.push_str("</table>\n");
    for (k, e) in entries.iter().enumerate() {
        let (word, class) = html::verdict_word(e.outcome.valid);
        let _ = writeln!(
            s,
            "<section id=\"h{k}\" class=\"entry\"><h2>{} <span class=\"v {class}\" id=\"h{k}-verdict\">{word}</span></h2>\n\
             <p>{} <a href=\"{}\">{}</a></p>",
            escape(&e.title),
            escape(&e.finding),
            escape(&e.href),
            escape(&e.href)
        );
        s.push_str(&e.extra_html);
        let opts =
            HtmlOptions { history_href: Some(e.href.clone()), id_prefix: format!("h{k}-"), ..Default::default() };
        html::section(&mut s, e.history, e.outcome, &opts);
        s.push_str("</section>\n");
    }
    s.push_str(html::FOOT);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(text: &str) -> (History, Outcome) {
        let h = crate::ingest::read_bytes("h.edn", text.as_bytes(), crate::ingest::Format::Edn).expect("parses");
        let o = crate::check::check(&h, &crate::check::CheckOptions::default()).expect("runs");
        (h, o)
    }

    #[test]
    fn violating_entries_come_first_with_prefixed_ids() {
        let (h1, o1) = checked(
            "{:index 0, :type :ok, :process 0, :value [[:append :x 1]]}\n\
             {:index 1, :type :ok, :process 1, :value [[:r :x [1]] [:append :y 1]]}\n",
        );
        let (h2, o2) = checked(
            "{:index 0, :type :ok, :process 0, :value [[:append :x 1] [:r :y [1]]]}\n\
             {:index 1, :type :ok, :process 1, :value [[:append :y 1] [:r :x [1]]]}\n",
        );
        let entry = |title: &str, violating, h, o| Entry {
            title: title.into(),
            href: title.into(),
            violating,
            finding: if violating { "bad".into() } else { "fine".into() },
            extra_html: String::new(),
            history: h,
            outcome: o,
        };
        let p = page("set", "two histories", vec![entry("a.edn", false, &h1, &o1), entry("b.edn", true, &h2, &o2)]);
        let b = p.find("<section id=\"h0\"").expect("first entry");
        assert!(p[b..].starts_with("<section id=\"h0\" class=\"entry\"><h2>b.edn"), "{p}");
        assert!(p.contains("id=\"h0-verdict\">INVALID") && p.contains("id=\"h1-verdict\">VALID"), "{p}");
        assert!(p.contains("<h2 id=\"h0-a-G1c\">G1c (1)</h2>"), "{p}");
        assert!(p.contains("<tr id=\"h0-T1\"><td>T1</td><td><a href=\"b.edn#L2\">2</a>"), "{p}");
        assert!(p.contains("href=\"#h0-T0\"") && !p.contains("href=\"#T0\""), "{p}");
        assert!(!p.contains("<script"), "{p}");
    }
}
