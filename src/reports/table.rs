//! A terminal summary: the verdict, one row per anomaly type with a short
//! witness, and the models ruled out.

use crate::history::History;
use crate::outcome::{DecidedBy, LevelRow, ModelStatus, Outcome, Validity};
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

/// The witnesses per anomaly type printed (table `--verbose`, JSON, EDN)
/// unless all are asked for: a history with thousands of cycles otherwise
/// prints megabytes. The full lists always go to `--directory`.
pub const DEFAULT_EXAMPLES: usize = 10;

pub use super::witness::short_witness;

pub use super::wrap::{FALLBACK_WIDTH, MIN_WIDTH};

/// The width to lay a table out in, given what the terminal reports:
/// the reported width when it is usable, else [`FALLBACK_WIDTH`].
pub fn effective_width(reported: Option<u16>) -> u16 {
    super::wrap::output_width(None, reported)
}

/// Output is laid out in at most this many columns, however wide the
/// terminal: longer lines are hard to read, and a cycle of fifty
/// transactions or the `also not:` list would otherwise run on for
/// hundreds of columns.
pub const MAX_LAYOUT_WIDTH: usize = 160;

/// The width to lay output out in for a reported width `w`.
fn layout_width(w: u16) -> usize {
    usize::from(effective_width(Some(w))).min(MAX_LAYOUT_WIDTH)
}

/// A table of `header` and `rows`; with a width, each cell wrapped (see
/// [`super::wrap::column_widths`]) so that the table fits it.
fn table(header: &[&str], rows: Vec<Vec<String>>, width: Option<u16>) -> String {
    let mut all: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    all.extend(rows);
    // Where the words fit whole only without the cells' right padding (a
    // level named in full in the last column, at 80 columns), the table
    // drops that padding rather than cut a name.
    let mut tight = false;
    if let Some(w) = width {
        let w = layout_width(w);
        tight = !super::wrap::words_fit(&all, w, 2) && super::wrap::words_fit(&all, w, 1);
        all = super::wrap::wrap_rows_padded(&all, w, if tight { 1 } else { 2 });
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Disabled);

    let mut rows = all.into_iter();
    if let Some(h) = rows.next() {
        t.set_header(h);
    }
    for r in rows {
        t.add_row(r);
    }
    if tight {
        for c in t.column_iter_mut() {
            c.set_padding((1, 0));
        }
    }
    format!("{t}\n")
}

/// The first line: the file, the kind of history and its size. Wrapped, it
/// breaks only after `history,` (the counts go on the next line, whole)
/// and never inside the path, which people copy (a path wider than the
/// terminal stays wider, on a line of its own).
fn header_line(h: &History, o: &Outcome, width: Option<u16>) -> String {
    // A distributed run's history holds only the ops its result names.
    let (ops, by) = match o.stats.distributed {
        Some((p, w)) => (o.stats.ops, format!(", checked by {p} processes ({w} workers)")),
        None => (h.ops.len(), String::new()),
    };
    let counts = format!("{ops} client ops ({} non-client ignored){by}", h.nonclient_ops);
    let kind = format!("{} history,", o.workload.name());
    let line = format!("{}: {kind} {counts}\n", h.source);
    let Some(w) = width.map(layout_width) else { return line };
    if super::wrap::cols(&line) <= w + 1 {
        return line;
    }
    let path = format!("{}:", h.source);
    let first = format!("{path} {kind}");
    if super::wrap::cols(&first) <= w {
        return format!("{first}\n  {counts}\n");
    }
    format!("{path}\n{}\n", fit(format!("  {kind} {counts}"), width))
}

/// What the database's commit order contributed: the verdict holds *given*
/// it (its write orders are facts to every check that uses them).
fn order_line(order: &crate::history::transaction_order::TransactionOrder) -> String {
    let failed = match order.ignored_failed {
        0 => String::new(),
        n => format!("; {n} :fail completions it numbers are ignored"),
    };
    format!(
        "(write orders given by the transaction order of {} ops, from {}{failed}; the verdict holds given that order)\n",
        order.len(),
        order.source
    )
}

/// The test a Jepsen store file describes: name, start, nodes, concurrency.
pub fn store_line(s: &crate::history::StoreNote) -> String {
    let mut parts = vec![format!("Jepsen test {}", s.name.as_deref().unwrap_or("(unnamed)"))];
    if let Some(t) = &s.start_time {
        parts.push(format!("started {t}"));
    }
    if !s.nodes.is_empty() {
        parts.push(format!("nodes {}", s.nodes.join(" ")));
    }
    if let Some(c) = s.concurrency {
        parts.push(format!("concurrency {c}"));
    }
    format!("{}\n", parts.join(", "))
}

/// Free text laid out in `width` (unchanged without one).
fn fit(text: String, width: Option<u16>) -> String {
    match width {
        Some(w) => super::wrap::wrap_block(&text, layout_width(w)),
        None => text,
    }
}

/// How to render the summary.
#[derive(Clone, Debug, Default)]
pub struct TableOptions {
    /// Print witnesses in full (cycle explanations in Elle's words, with
    /// transactions named `T<index>` as in the table).
    pub verbose: bool,
    /// With `verbose`, at most this many witnesses per anomaly type (`None`:
    /// all); the count column always gives the total.
    pub max_examples: Option<usize>,
    /// Print values whole in `verbose` explanations (by default long
    /// lists and transactions are shortened around what matters, see
    /// [`super::elide`]).
    pub full_values: bool,
    /// Lay the tables out within this many columns (see
    /// [`effective_width`]); `None` leaves rows unwrapped (for pipes).
    pub width: Option<u16>,
}

/// Renders the summary; `verbose` adds every witness in full.
pub fn render(h: &History, o: &Outcome, verbose: bool) -> String {
    render_with(h, o, &TableOptions { verbose, ..TableOptions::default() })
}

/// Renders the summary with options.
pub fn render_with(h: &History, o: &Outcome, opts: &TableOptions) -> String {
    let verbose = opts.verbose;
    let width = opts.width;
    let mut out = String::new();
    let verdict = match o.valid {
        Validity::Valid => "VALID",
        Validity::Invalid => "INVALID",
        Validity::Unknown => "UNKNOWN",
    };
    out.push_str(&header_line(h, o, width));
    let mut head = String::new();
    if let Some(s) = &h.store {
        head.push_str(&store_line(s));
        if let Some(p) = &s.partial {
            head.push_str(&format!("PARTIAL: {}\n", p.describe()));
        }
    }
    head.push_str(&format!("verdict: {verdict}\n"));
    if let (Some(order), true) = (&h.transaction_order, o.stats.transaction_order > 0) {
        head.push_str(&order_line(order));
    }
    if h.dropped_events > 0 {
        head.push_str(&format!("({} input events that did not happen were left out)\n", h.dropped_events));
    }
    if h.indeterminate_txns > 0 {
        head.push_str(&format!(
            "({} transactions marked committed held a failed event and were read as indeterminate (:info): \
             their writes may or may not have taken effect; --failed-events as-committed reads them as committed)\n",
            h.indeterminate_txns
        ));
    }
    if let Some(e) = &o.error {
        head.push_str(&format!("analysis could not run: {e}\n"));
        out.push_str(&fit(head, width));
        return out;
    }
    out.push_str(&fit(head, width));
    let levels = levels_table(h, o, width);
    if o.anomalies.is_empty() {
        out.push_str(&levels);
        return out;
    }
    let rows = o
        .anomalies
        .iter()
        .map(|(name, cases)| {
            let ex = cases.first().map(|c| short_witness(h, c)).unwrap_or_default();
            vec![name.clone(), cases.len().to_string(), ex]
        })
        .collect();
    out.push_str(&table(&["anomaly", "count", "example"], rows, width));
    out.push_str(&levels);
    if verbose {
        let naming = super::text::Naming::Index;
        let limit = opts.max_examples.unwrap_or(usize::MAX);
        let mut v = String::new();
        for (name, cases) in &o.anomalies {
            for (i, c) in cases.iter().enumerate().take(limit) {
                v.push_str(&format!("\n{name} #{i}\n"));
                let values = if opts.full_values { super::text::Values::Full } else { super::text::Values::Short };
                v.push_str(&super::words::explain_case(h, o.workload, c, naming, values));
                v.push('\n');
            }
            if cases.len() > limit {
                v.push_str(&format!(
                    "\n... {} more {name} cases not shown ({} in all; --all-anomalies prints all, -d DIR writes all)\n",
                    cases.len() - limit,
                    cases.len()
                ));
            }
        }
        v.push('\n');
        out.push_str(&fit(v, width));
    }
    let list = |head: &str, items: &std::collections::BTreeSet<String>| {
        let items: Vec<String> = items.iter().cloned().collect();
        match width {
            Some(w) => super::wrap::wrap_list(head, &items, layout_width(w)),
            None => format!("{head}{}", items.join(", ")),
        }
    };
    if !o.not.is_empty() {
        out.push_str(&list("not: ", &o.not));
        out.push('\n');
    }
    if !o.also_not.is_empty() {
        out.push_str(&list("also not: ", &o.also_not));
        out.push('\n');
    }
    out
}

/// The table of levels: every level of the ladder, weakest first, with its
/// verdict and how it was decided: the checker and the anomaly that breaks
/// it (with a short witness when the anomaly table above does not already
/// show one), the level it follows from, or why it is undecided. Level
/// names are never cut while the width allows them whole.
fn levels_table(h: &History, o: &Outcome, width: Option<u16>) -> String {
    let mut witnessed: Vec<&str> = Vec::new();
    let rows = o
        .levels
        .iter()
        .map(|row| vec![row.level.model.to_string(), verdict(row), how(h, o, row, &mut witnessed)])
        .collect();
    table(&["level", "verdict", "how"], rows, width)
}

/// One level in one line, for `--stats`: `serializable: unknown (…why…)`,
/// `read-atomic: invalid, fractured-read (weak)`, `prefix: valid, implied
/// by strong-session-snapshot-isolation`.
pub fn level_line(row: &LevelRow) -> String {
    let by = row.decided_by.describe();
    match &row.status {
        ModelStatus::Violated(a) => format!("{}: invalid, {a} ({by})", row.level.model),
        ModelStatus::Holds => format!("{}: valid ({by})", row.level.model),
        _ => format!("{}: {} ({})", row.level.model, verdict(row), row.reason),
    }
}

/// A row's verdict word.
fn verdict(row: &LevelRow) -> String {
    match row.status {
        ModelStatus::Holds => "valid",
        ModelStatus::Violated(_) => "invalid",
        ModelStatus::Unknown => "unknown",
        ModelStatus::NotChecked => "not checked",
    }
    .to_string()
}

/// How a row was decided (see [`levels_table`]); a witness is shown once
/// per anomaly (`witnessed` keeps which).
fn how<'a>(h: &History, o: &Outcome, row: &'a LevelRow, witnessed: &mut Vec<&'a str>) -> String {
    let by = row.decided_by.describe();
    match (&row.status, &row.decided_by) {
        (_, DecidedBy::Implied(_)) => by,
        (ModelStatus::Violated(a), _) => match &row.witness {
            Some(w) if !o.anomalies.contains_key(a) && !witnessed.contains(&a.as_str()) => {
                witnessed.push(a);
                format!("{a} ({by}): {}", short_witness(h, w))
            }
            _ => format!("{a} ({by})"),
        },
        (ModelStatus::Holds, _) => by,
        _ => row.reason.clone(),
    }
}
