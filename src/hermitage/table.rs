//! Printing Hermitage's table: for the terminal, as Markdown (Hermitage's
//! README's layout and symbols: ✓ prevented, — possible, R/O, some), as
//! JSON, and the per-scenario explanations `-d` writes.

use std::path::Path;

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

use super::scenarios::ANOMALIES;
use super::{Row, POSSIBLE, PREVENTED, READ_ONLY};

/// Hermitage's symbol for a column verdict.
pub fn symbol(verdict: &str) -> &'static str {
    match verdict {
        PREVENTED => "✓",
        POSSIBLE => "—",
        READ_ONLY => "R/O",
        _ => "some",
    }
}

fn header() -> Vec<String> {
    let mut h = vec!["So-called isolation level".to_string(), "Actual isolation level".to_string()];
    h.extend(ANOMALIES.iter().map(|a| a.to_string()));
    h
}

fn cells(r: &Row) -> Vec<String> {
    let mut c = vec![format!("\"{}\"", r.level.sql().to_ascii_lowercase()), r.actual.to_string()];
    c.extend(ANOMALIES.iter().map(|a| symbol(r.columns.get(a).copied().unwrap_or("")).to_string()));
    c
}

/// The table for the terminal, titled with the database's version, and a
/// line per scenario whose anomaly occurred, with its witness (`verbose`:
/// a line per scenario, with why the others did not occur).
pub fn terminal(version: &str, rows: &[Row], verbose: bool) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    t.set_header(header());
    for r in rows {
        t.add_row(cells(r));
    }
    let mut out =
        format!("{version}: Hermitage's anomalies, each run and checked by isolde (✓ prevented, — possible)\n{t}\n");
    for r in rows {
        for c in r.cells.iter().filter(|c| c.occurred || verbose) {
            let verdict = if c.occurred { "" } else { "prevented, " };
            out.push_str(&format!(
                "{} {} ({}): {verdict}{}\n",
                r.level.name(),
                c.scenario.anomaly,
                c.scenario.name,
                c.why
            ));
        }
    }
    out
}

/// The table as Markdown, Hermitage's README's columns.
pub fn markdown(version: &str, rows: &[Row]) -> String {
    let mut out = String::from("| DBMS | ");
    out.push_str(&header().join(" | "));
    out.push_str(" |\n|:--|:--|:--|");
    out.push_str(&ANOMALIES.iter().map(|_| ":-:").collect::<Vec<_>>().join("|"));
    out.push_str("|\n");
    for (i, r) in rows.iter().enumerate() {
        let db = if i == 0 { version } else { "" };
        out.push_str(&format!("| {db} | {} |\n", cells(r).join(" | ")));
    }
    out
}

/// JSON: one object per level, `{"level": "repeatable-read", "database":
/// ..., "actual": ..., "anomalies": {"G0": "prevented", ...}, "cells":
/// [{"scenario": ..., "anomaly": ..., "occurred": ..., "why": ...}]}`.
pub fn json(version: &str, rows: &[Row]) -> String {
    let list: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let anomalies: serde_json::Map<String, serde_json::Value> =
                ANOMALIES.iter().map(|a| (a.to_string(), r.columns.get(a).copied().unwrap_or("").into())).collect();
            let cells: Vec<serde_json::Value> = r
                .cells
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "scenario": c.scenario.name,
                        "anomaly": c.scenario.anomaly,
                        "occurred": c.occurred,
                        "why": c.why,
                    })
                })
                .collect();
            serde_json::json!({
                "database": version,
                "level": r.level.name(),
                "actual": r.actual,
                "anomalies": anomalies,
                "cells": cells,
            })
        })
        .collect();
    let mut s = serde_json::Value::Array(list).to_string();
    s.push('\n');
    s
}

/// Writes `DIR/LEVEL/SCENARIO.edn` (the history) and `.txt` (statements,
/// blocking, errors, the verdict and its witness) for every cell of a row.
pub fn write_explanations(dir: &Path, row: &Row) -> std::io::Result<()> {
    let d = dir.join(row.level.name());
    std::fs::create_dir_all(&d)?;
    for c in &row.cells {
        std::fs::write(d.join(format!("{}.edn", c.scenario.name)), &c.run.edn)?;
        let mut text = format!(
            "{} at {}: {}\n\n",
            c.scenario.title,
            row.level.name(),
            if c.occurred { "POSSIBLE" } else { "prevented" }
        );
        for line in &c.run.transcript {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(&format!("\n{}\n", c.why));
        std::fs::write(d.join(format!("{}.txt", c.scenario.name)), text)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{actual_level, combine, exec, scenarios::SCENARIOS, Cell};
    use super::*;
    use std::collections::BTreeMap;

    fn columns(possible: &[(&'static str, &'static str)]) -> BTreeMap<&'static str, &'static str> {
        let mut m: BTreeMap<&'static str, &'static str> = ANOMALIES.iter().map(|a| (*a, PREVENTED)).collect();
        for (a, v) in possible {
            m.insert(a, v);
        }
        m
    }

    fn cell(name: &str, occurred: bool) -> Cell {
        let scenario = SCENARIOS.iter().find(|s| s.name == name).expect("scenario");
        Cell { scenario, occurred, why: String::new(), run: exec::Run::default() }
    }

    /// Columns combine as Hermitage's cells do.
    #[test]
    fn columns_combine_as_hermitages_cells() {
        let (a, b, c) = (cell("g-single", false), cell("g-single-predicate", false), cell("g-single-write", true));
        assert_eq!(combine(&[&a, &b, &c]), READ_ONLY);
        let (a2, b2) = (cell("g-single", true), cell("g-single-predicate", true));
        assert_eq!(combine(&[&a2, &b2, &c]), POSSIBLE);
        assert_eq!(combine(&[&a2, &b, &c]), "some");
        let c2 = cell("g-single-write", false);
        assert_eq!(combine(&[&a, &b, &c2]), PREVENTED);
        // Columns without read-only scenarios: possible or some.
        let (g2, fekete) = (cell("g2", true), cell("g2-fekete", true));
        assert_eq!(combine(&[&g2, &fekete]), POSSIBLE);
        let fekete2 = cell("g2-fekete", false);
        assert_eq!(combine(&[&g2, &fekete2]), "some");
    }

    /// Hermitage's README rows give its actual levels.
    #[test]
    fn actual_levels_follow_hermitages_rows() {
        let p = POSSIBLE;
        assert_eq!(actual_level(&columns(&[])), "serializable");
        assert_eq!(actual_level(&columns(&[("G2-item", p), ("G2", p)])), "snapshot isolation");
        let rc = [("PMP", p), ("P4", p), ("G-single", p), ("G2-item", p), ("G2", p)];
        assert_eq!(actual_level(&columns(&rc)), "monotonic atomic view");
        let mysql_rr = [("PMP", READ_ONLY), ("P4", p), ("G-single", READ_ONLY), ("G2-item", p), ("G2", p)];
        assert_eq!(actual_level(&columns(&mysql_rr)), "monotonic atomic view");
        let mssql_rr = [("PMP", p), ("G-single", "some"), ("G2", p)];
        assert_eq!(actual_level(&columns(&mssql_rr)), "repeatable read");
        let ru = [("G1a", p), ("G1b", p), ("G1c", p), ("OTV", p), ("PMP", p), ("P4", p), ("G-single", p)];
        assert_eq!(actual_level(&columns(&ru)), "read uncommitted");
        assert_eq!(symbol(PREVENTED), "✓");
        assert_eq!(symbol(READ_ONLY), "R/O");
        assert_eq!(symbol(POSSIBLE), "—");
    }
}
