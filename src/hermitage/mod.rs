//! `isolde hermitage`: Hermitage's table of isolation anomalies, measured
//! on the database at hand and checked by isolde.
//!
//! Hermitage (github.com/ept/hermitage, Martin Kleppmann) runs, by hand,
//! short scripts of two or three interleaved transactions on each database
//! and level, and tabulates which anomalies (G0, G1a, G1b, G1c, OTV, PMP,
//! P4, G-single, G2-item, G2) each level prevents. This module runs those
//! scripts ([`scenarios`]) step by step, one connection per session,
//! detecting the statements that block ([`exec`]), writes each run as a
//! Jepsen rw-register history and checks it with isolde's own checker
//! ([`crate::check`]): a cell is *possible* when the checker finds the
//! anomaly the script tests (its witness is kept), *prevented* otherwise,
//! with why (a statement blocked, the database aborted a transaction, or
//! the reads saw a consistent state). Cells of scripts testing one column
//! combine as Hermitage's do ([`combine`]: `R/O` when only the read-only
//! variants are prevented), and each row's actual isolation level follows
//! from its cells ([`actual_level`]); `-d` writes the histories, their
//! explanations ([`table`]) and one HTML page of them all ([`page`]). See
//! `docs/hermitage.md`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::check::{self, CheckOptions};
use crate::ingest;
use crate::record::Isolation;

pub mod conn;
pub mod exec;
pub mod page;
pub mod scenarios;
pub mod table;

use scenarios::{Scenario, ANOMALIES, SCENARIOS};

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table for the terminal.
    Table,
    /// A Markdown table, as Hermitage's README has.
    Markdown,
    /// JSON: a list of `{"level": ..., "anomalies": {"G0": "prevented", ...}}`.
    Json,
}

/// The arguments of `isolde hermitage`.
#[derive(Clone, Debug, clap::Args)]
pub struct HermitageArgs {
    /// Database URL: postgres://user:pass@host:port/db or
    /// mysql://user:pass@host:port/db. Default: SQLite, embedded, in a
    /// temporary directory.
    #[arg(long)]
    pub db: Option<String>,
    /// Levels to test, comma separated. Default: every level the database
    /// offers (SQLite: serializable; PostgreSQL: read committed, repeatable
    /// read, serializable; MySQL/MariaDB: those and read uncommitted).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub levels: Option<Vec<Isolation>>,
    /// Write every history (LEVEL/SCENARIO.edn) and its explanation
    /// (LEVEL/SCENARIO.txt: statements, what blocked, errors, the checker's
    /// witness), the table (table.md) and one page with every history as
    /// `analyze -d` shows it (index.html) into this directory.
    #[arg(long, short = 'd')]
    pub directory: Option<PathBuf>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value = "table")]
    pub format: Format,
    /// A statement every connection runs first (repeatable), e.g. `SET
    /// SESSION innodb_snapshot_isolation = ON` on MariaDB.
    #[arg(long)]
    pub init_sql: Vec<String>,
    /// Under the terminal table, say for every scenario why its anomaly
    /// was prevented too (blocked, aborted, not observed), not only the
    /// witnesses of those that occurred.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

/// What one scenario showed at one level.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The scenario.
    pub scenario: &'static Scenario,
    /// Whether the checker found the anomaly.
    pub occurred: bool,
    /// The anomaly found, with its witness (`G-single: T4 -rw-> ...`), or
    /// why it did not occur.
    pub why: String,
    /// The run.
    pub run: exec::Run,
}

/// One row of the table.
#[derive(Clone, Debug)]
pub struct Row {
    /// The level requested.
    pub level: Isolation,
    /// Each column's combined verdict ([`combine`]).
    pub columns: BTreeMap<&'static str, &'static str>,
    /// Every scenario's cell.
    pub cells: Vec<Cell>,
    /// The actual isolation level, from the columns ([`actual_level`]).
    pub actual: &'static str,
}

/// A column's verdict: every scenario prevented it.
pub const PREVENTED: &str = "prevented";
/// A column's verdict: every scenario showed it.
pub const POSSIBLE: &str = "possible";
/// A column's verdict: prevented where the observing transaction only
/// reads, shown where it writes (Hermitage's "R/O").
pub const READ_ONLY: &str = "read-only";
/// A column's verdict: some read-only scenarios showed it, others not.
pub const SOME: &str = "some";

/// Combines a column's cells: prevented if every scenario prevented it;
/// read-only if the column has read-only scenarios, they all prevented it,
/// and a writing one showed it; possible if every read-only scenario
/// showed it (every scenario, in a column without read-only ones); some
/// otherwise.
pub fn combine(cells: &[&Cell]) -> &'static str {
    if cells.iter().all(|c| !c.occurred) {
        return PREVENTED;
    }
    let ro: Vec<&&Cell> = cells.iter().filter(|c| c.scenario.read_only).collect();
    if ro.is_empty() {
        return if cells.iter().all(|c| c.occurred) { POSSIBLE } else { SOME };
    }
    if ro.iter().all(|c| !c.occurred) {
        READ_ONLY
    } else if ro.iter().all(|c| c.occurred) {
        POSSIBLE
    } else {
        SOME
    }
}

/// The actual isolation level a row's columns amount to, in Hermitage's
/// terms (its README's "Actual isolation level" column, from Adya's and
/// Bailis et al.'s definitions): the weakest level whose anomalies it all
/// prevents.
pub fn actual_level(columns: &BTreeMap<&'static str, &'static str>) -> &'static str {
    let prevented = |a: &str| columns.get(a).is_none_or(|v| *v == PREVENTED);
    if !prevented("G0") {
        "none"
    } else if !(prevented("G1a") && prevented("G1b") && prevented("G1c")) {
        "read uncommitted"
    } else if !prevented("OTV") {
        "read committed"
    } else if ["PMP", "P4", "G-single", "G2-item", "G2"].iter().all(|a| prevented(a)) {
        "serializable"
    } else if ["PMP", "P4", "G-single"].iter().all(|a| prevented(a)) {
        "snapshot isolation"
    } else if prevented("P4") && prevented("G2-item") {
        "repeatable read"
    } else {
        "monotonic atomic view"
    }
}

/// Checks a scenario's history: whether it shows one of the scenario's
/// witness anomalies (checked against serializability, so that every
/// anomaly type is looked for), and why not when it does not.
pub fn judge(sc: &'static Scenario, run: exec::Run) -> Result<Cell, String> {
    let h = ingest::read_bytes(&format!("{}.edn", sc.name), run.edn.as_bytes(), ingest::Format::Edn)
        .map_err(|e| format!("{}: the recorded history does not parse: {e}", sc.name))?;
    let opts = CheckOptions { models: Some(vec!["serializable".into()]), ..CheckOptions::default() };
    let o = check::check(&h, &opts).map_err(|e| format!("{}: checking: {e}", sc.name))?;
    let found = o.anomalies.iter().find(|(name, _)| sc.witnesses.iter().any(|w| name.starts_with(w)));
    let (occurred, why) = match found {
        Some((name, cases)) => {
            let witness = cases.first().map(|c| crate::reports::table::short_witness(&h, c)).unwrap_or_default();
            (true, format!("{name}: {witness}"))
        }
        None if !run.aborted.is_empty() => (false, format!("aborted: {}", run.aborted.join("; "))),
        None if !run.blocked.is_empty() => (false, format!("blocked: {}", run.blocked.join("; "))),
        None => (false, "not observed: every read saw a consistent state".into()),
    };
    Ok(Cell { scenario: sc, occurred, why, run })
}

/// Runs every scenario at `level` and combines the cells into a row.
pub fn row(target: &conn::Target, level: Isolation, init_sql: &[String]) -> Result<Row, String> {
    let mut cells = Vec::with_capacity(SCENARIOS.len());
    for sc in SCENARIOS {
        let run =
            exec::run(target, sc, level, init_sql).map_err(|e| format!("{} at {}: {e}", sc.name, level.name()))?;
        cells.push(judge(sc, run)?);
    }
    let mut columns = BTreeMap::new();
    for a in ANOMALIES {
        let of: Vec<&Cell> = cells.iter().filter(|c| c.scenario.anomaly == a).collect();
        columns.insert(a, combine(&of));
    }
    let actual = actual_level(&columns);
    Ok(Row { level, columns, cells, actual })
}

/// Runs `isolde hermitage`: prints the table; returns the exit status (0)
/// or the error (exit 2).
pub fn run(a: &HermitageArgs) -> Result<u8, String> {
    let target = conn::Target::open(a.db.as_deref())?;
    let offered = target.levels();
    let levels = match &a.levels {
        None => offered.clone(),
        Some(ls) => {
            for l in ls {
                if !offered.contains(l) {
                    let names: Vec<&str> = offered.iter().map(|l| l.name()).collect();
                    return Err(format!(
                        "{} does not offer {} as a level of its own; its levels: {}",
                        target.describe(),
                        l.name(),
                        names.join(", ")
                    ));
                }
            }
            ls.clone()
        }
    };
    // Connect once before anything runs: a bad URL or server fails here.
    target.connect(&a.init_sql)?;
    if let Some(dir) = &a.directory {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let version = target.version();
    let mut rows = Vec::with_capacity(levels.len());
    for level in levels {
        let row = row(&target, level, &a.init_sql)?;
        if let Some(dir) = &a.directory {
            table::write_explanations(dir, &row).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        rows.push(row);
    }
    let text = match a.format {
        Format::Table => table::terminal(&version, &rows, a.verbose),
        Format::Markdown => table::markdown(&version, &rows),
        Format::Json => table::json(&version, &rows),
    };
    if let Some(dir) = &a.directory {
        let path = dir.join("table.md");
        std::fs::write(&path, table::markdown(&version, &rows)).map_err(|e| format!("{}: {e}", path.display()))?;
        page::write(dir, &version, &rows)?;
    }
    print!("{text}");
    Ok(0)
}
