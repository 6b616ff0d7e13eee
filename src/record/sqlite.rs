//! SQLite backend (embedded, via `rusqlite` with the bundled library).
//!
//! URLs: `sqlite:PATH` or `sqlite://PATH` (a database file, created if
//! missing); without `--db` a fresh file in a temporary directory, removed at
//! the end. The file is put in WAL mode with `synchronous = NORMAL` (no
//! fsync per commit); every connection waits up to [`BUSY_TIMEOUT`] for
//! locks, retrying every millisecond ([`retry_often`]).
//!
//! SQLite has one isolation level: without shared-cache mode (never used
//! here) every transaction is serializable, so every requested level is
//! accepted and run serializably. Transactions that write start with
//! `BEGIN IMMEDIATE` (taking the write lock up front, queueing behind other
//! writers), read-only ones with `BEGIN DEFERRED` (reading a WAL snapshot
//! concurrently). `SQLITE_BUSY`, `SQLITE_LOCKED` and constraint errors are
//! [`ErrorClass::Rejected`]: the statement did nothing and the transaction is
//! rolled back, so such a transaction is a `:fail`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OptionalExtension};

use super::{parse_list, table_name, Backend, Database, ErrorClass, Isolation, Observed, RecordError, Workload};
use crate::gen::closed_predicate::Pred;

/// How long a statement waits for another connection's lock before
/// `SQLITE_BUSY`.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How often a connection waiting for a lock tries again.
const BUSY_RETRY: Duration = Duration::from_millis(1);

/// The wait before the `n`-th try is `n` × [`BUSY_RETRY`], up to this many.
const RAMP: u32 = 10;

/// The busy handler of every connection: the `n`-th try waits `n` ×
/// [`BUSY_RETRY`], at most [`RAMP`] × that, for up to [`BUSY_TIMEOUT`] in
/// all (`tries` is how many times SQLite has called it for this wait).
/// SQLite's own (`busy_timeout`) ramps up to 100 ms between tries, so a
/// session that loses a few tries in a row sleeps while the others take the
/// write lock again and again: with 8 sessions on a loaded 2-core machine
/// one waited more than a second (10,000 ops without a transaction of it),
/// and a session that runs nothing runs no fence either, which holds
/// `--follow-window`'s window open behind it (CI, 2026-12-07: 21,452 of
/// 79,651 transactions held at the end). Measured on this machine, loaded
/// with three busy loops: the window test failed 2 runs of 4 before and
/// none of 8 after; unloaded, the run's throughput is 5-10% lower (11.7k
/// against 10.4-11.1k txn/s, three paired runs of a debug build). Retrying
/// every millisecond throughout cost 20-40%. A user's `--timeout`
/// ([`Database::prepare_faults`]) uses SQLite's own handler with that
/// limit.
fn retry_often(tries: i32) -> bool {
    let tries = u32::try_from(tries).unwrap_or(0);
    let waited = BUSY_RETRY * (tries.min(RAMP) * (tries.min(RAMP) + 1) / 2 + tries.saturating_sub(RAMP) * RAMP);
    if waited >= BUSY_TIMEOUT {
        return false;
    }
    std::thread::sleep(BUSY_RETRY * (tries + 1).min(RAMP));
    true
}

/// A SQLite database file and the run's table in it.
pub struct Sqlite {
    path: PathBuf,
    table: String,
    workload: Workload,
    /// A temporary directory to remove at teardown.
    temp_dir: Option<PathBuf>,
}

impl Sqlite {
    /// Opens (creating if needed) the database at `path`, puts it in WAL
    /// mode and creates the run's table; `None` uses a fresh file in a new
    /// temporary directory.
    pub fn open(path: Option<&Path>, workload: Workload) -> Result<Sqlite, RecordError> {
        let (path, temp_dir) = match path {
            Some(p) => (p.to_path_buf(), None),
            None => {
                let dir = std::env::temp_dir().join(format!("isolde-record-{}", table_name(workload)));
                std::fs::create_dir_all(&dir).map_err(|e| RecordError::Connect {
                    db: dir.display().to_string(),
                    message: format!("cannot create a temporary directory: {e}"),
                })?;
                (dir.join("history.sqlite"), Some(dir))
            }
        };
        let db = Sqlite { path, table: table_name(workload), workload, temp_dir };
        let conn = db.raw_connect()?;
        let value_type = if workload.lists() { "TEXT" } else { "INTEGER" };
        conn.execute_batch(&format!(
            "PRAGMA journal_mode = WAL; CREATE TABLE {} (k INTEGER PRIMARY KEY, v {value_type} NOT NULL);",
            db.table
        ))
        .map_err(|e| db.err(e))?;
        Ok(db)
    }

    fn err(&self, e: impl std::fmt::Display) -> RecordError {
        RecordError::Connect { db: self.describe(), message: e.to_string() }
    }

    fn raw_connect(&self) -> Result<Connection, RecordError> {
        let mut conn = Connection::open(&self.path).map_err(|e| self.err(e))?;
        conn.busy_handler(Some(retry_often)).map_err(|e| self.err(e))?;
        // WAL with NORMAL sync: commits survive a crash of this process (not
        // a power cut), without an fsync per transaction.
        conn.execute_batch("PRAGMA synchronous = NORMAL").map_err(|e| self.err(e))?;
        Ok(conn)
    }
}

impl Database for Sqlite {
    type Session = SqliteSession;

    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }

    fn connect(&self) -> Result<SqliteSession, RecordError> {
        let conn = self.raw_connect()?;
        let t = &self.table;
        // Prepare (and cache) every statement now: a missing table or a
        // privilege problem shows before any transaction runs.
        let stmts = [
            format!("SELECT v FROM {t} WHERE k = ?1"),
            format!("INSERT INTO {t} (k, v) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET v = excluded.v"),
            format!(
                "INSERT INTO {t} (k, v) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET v = {t}.v || ',' || excluded.v"
            ),
            format!("INSERT INTO {t} (k, v) VALUES (?1, ?2)"),
            format!("DELETE FROM {t} WHERE k = ?1"),
            format!("SELECT k, v FROM {t}"),
            format!("SELECT k, v FROM {t} WHERE v = ?1"),
            format!("SELECT k, v FROM {t} WHERE v % ?1 = ?2"),
        ];
        for s in &stmts {
            conn.prepare_cached(s).map_err(|e| self.err(e))?;
        }
        let [read, write, append, insert, delete, all, eq, modulo] = stmts;
        Ok(SqliteSession { conn, workload: self.workload, read, write, append, insert, delete, all, eq, modulo })
    }

    fn teardown(&self) -> Result<(), RecordError> {
        match &self.temp_dir {
            Some(dir) => std::fs::remove_dir_all(dir).map_err(|e| self.err(e)),
            None => {
                let conn = self.raw_connect()?;
                conn.execute_batch(&format!("DROP TABLE {}", self.table)).map_err(|e| self.err(e))
            }
        }
    }

    fn faultable(&self) -> Result<(), String> {
        Err("SQLite has no server connections to kill or time out; --faults needs a postgres:// or mysql:// URL".into())
    }

    fn kill(&self, _id: u64) -> Result<(), RecordError> {
        Err(self.err("SQLite connections have no server to kill them"))
    }

    /// Every level runs serializably, and SQLite is a single node whose
    /// commits are immediately visible: strict serializability.
    fn promised_model(&self, _level: Isolation) -> &'static str {
        "strict-serializable"
    }
}

/// One SQLite connection.
pub struct SqliteSession {
    conn: Connection,
    workload: Workload,
    read: String,
    write: String,
    append: String,
    insert: String,
    delete: String,
    /// Predicate reads: every row, `v = ?1`, `v % ?1 = ?2`.
    all: String,
    eq: String,
    modulo: String,
}

impl Backend for SqliteSession {
    type Error = rusqlite::Error;

    fn begin(&mut self, _level: Isolation, writes: bool) -> Result<(), rusqlite::Error> {
        self.conn.execute_batch(if writes { "BEGIN IMMEDIATE" } else { "BEGIN DEFERRED" })
    }

    fn read(&mut self, key: u64) -> Result<Observed, rusqlite::Error> {
        let k = key_param(key)?;
        let mut st = self.conn.prepare_cached(&self.read)?;
        if self.workload.lists() {
            let v: Option<String> = st.query_row([k], |r| r.get(0)).optional()?;
            parse_list(v.as_deref().unwrap_or("")).map(Observed::List).map_err(bad_value)
        } else {
            let v: Option<i64> = st.query_row([k], |r| r.get(0)).optional()?;
            v.map(|v| u64::try_from(v).map_err(|_| bad_value(format!("negative register value {v}"))))
                .transpose()
                .map(Observed::Register)
        }
    }

    fn write(&mut self, key: u64, value: u64) -> Result<(), rusqlite::Error> {
        let mut st = self.conn.prepare_cached(&self.write)?;
        st.execute([key_param(key)?, key_param(value)?]).map(drop)
    }

    fn append(&mut self, key: u64, value: u64) -> Result<(), rusqlite::Error> {
        let mut st = self.conn.prepare_cached(&self.append)?;
        st.execute(rusqlite::params![key_param(key)?, value.to_string()]).map(drop)
    }

    fn insert(&mut self, key: u64, value: u64) -> Result<(), rusqlite::Error> {
        let mut st = self.conn.prepare_cached(&self.insert)?;
        st.execute([key_param(key)?, key_param(value)?]).map(drop)
    }

    fn delete(&mut self, key: u64) -> Result<(), rusqlite::Error> {
        let mut st = self.conn.prepare_cached(&self.delete)?;
        st.execute([key_param(key)?]).map(drop)
    }

    fn pred_read(&mut self, pred: Pred) -> Result<Vec<(u64, u64)>, rusqlite::Error> {
        let (sql, params) = match pred {
            Pred::True => (&self.all, vec![]),
            Pred::Eq(x) => (&self.eq, vec![key_param(x)?]),
            Pred::Mod(m, r) => (&self.modulo, vec![key_param(m)?, key_param(r)?]),
        };
        let mut st = self.conn.prepare_cached(sql)?;
        let rows =
            st.query_map(rusqlite::params_from_iter(params), |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
        rows.map(|row| {
            let (k, v) = row?;
            match (u64::try_from(k), u64::try_from(v)) {
                (Ok(k), Ok(v)) => Ok((k, v)),
                _ => Err(bad_value(format!("negative key or value in the row ({k}, {v})"))),
            }
        })
        .collect()
    }

    fn commit(&mut self) -> Result<(), rusqlite::Error> {
        self.conn.execute_batch("COMMIT")
    }

    fn rollback(&mut self) -> Result<(), rusqlite::Error> {
        self.conn.execute_batch("ROLLBACK")
    }

    fn execute(&mut self, sql: &str) -> Result<(), rusqlite::Error> {
        self.conn.execute_batch(sql)
    }

    /// SQLite's only timeout is the lock wait ([`BUSY_TIMEOUT`] by default);
    /// there is no server id.
    fn prepare_faults(&mut self, timeout: Option<Duration>) -> Result<Option<u64>, rusqlite::Error> {
        if let Some(t) = timeout {
            self.conn.busy_timeout(t)?;
        }
        Ok(None)
    }

    fn classify(err: &rusqlite::Error) -> ErrorClass {
        match err.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked | ErrorCode::ConstraintViolation) => {
                ErrorClass::Rejected
            }
            _ => ErrorClass::Unknown,
        }
    }
}

/// SQLite integers are signed 64-bit.
fn key_param(x: u64) -> Result<i64, rusqlite::Error> {
    i64::try_from(x).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(0, i64::MAX))
}

fn bad_value(msg: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, msg.into())
}
