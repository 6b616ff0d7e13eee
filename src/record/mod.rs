//! Recording histories from real databases (`isolde record`).
//!
//! # What is recorded
//!
//! `P` sessions (threads, one database connection each, Jepsen `:process`
//! `0..P`) run transactions drawn by [`crate::gen::TxnSource`], the same
//! workloads `isolde gen` simulates (list-append or rw-register, the same
//! knobs, unique write values per key) in Elle's shape by default (short
//! transactions over a sliding window of keys, [`shape`]), against a
//! database at one requested isolation level; or Elle's closed-predicate
//! workload ([`crate::gen::closed_predicate::CpSource`]: an `:init` that
//! inserts a universe of rows, run before the sessions start, then inserts,
//! writes and deletes of each key once and SQL predicate reads). Each
//! transaction is written to the history file twice,
//! one Jepsen op map per line, each line flushed to the file as soon as it is
//! known:
//!
//! * an `:invoke` line just before the session sends the transaction's first
//!   statement (reads `nil`);
//! * a completion line just after the database answered its `COMMIT` (or
//!   the transaction failed), with the values reads observed for `:ok`.
//!
//! `:time` is nanoseconds on a monotonic clock since the run began, taken
//! when the line is written, so line order (`:index`) is real-time order: a
//! transaction whose completion line precedes another's invocation line
//! really finished before the other began. The file is a complete, readable
//! history at every line boundary, including when a run stops early
//! (`--duration`, a dead server).
//!
//! # How outcomes are classified
//!
//! Outcomes never claim more than the client saw:
//!
//! * `:ok`: `COMMIT` returned success; reads show what the database returned.
//! * `:fail`: the transaction certainly did not commit: a statement before
//!   `COMMIT` failed (the session then rolls back, or its connection is gone
//!   and the server aborts the transaction), or `COMMIT` itself was refused
//!   with an error that means rollback ([`ErrorClass::Rejected`]:
//!   serialization failure, deadlock, constraint violation, SQLite's busy).
//!   Its reads are not reported (the completion repeats the invocation).
//! * `:info`: `COMMIT` was sent and the answer was anything else (connection
//!   lost, timeout, an unexpected error; [`ErrorClass::Unknown`]): the
//!   transaction may or may not have committed. As Jepsen does for a crashed
//!   client, the session then reconnects under a new process id (`p + P`).
//!
//! # Backends
//!
//! Each backend implements [`Database`] (setup of the run's own tables, and
//! connections) and [`Backend`] (one connection: begin with a level, read,
//! write, append, insert, delete, read a predicate, commit, rollback, and
//! classify an error): [`sqlite`]
//! (embedded, the default), `postgres` and `mysql` (behind the cargo
//! features of those names, on by default; a URL whose feature is not built
//! is a clear error). Every run creates fresh tables with a unique
//! name, so no value from an earlier run can be read back, and drops them at
//! the end.
//!
//! # Faults
//!
//! With `--faults` (servers on this machine only), a nemesis thread kills a
//! random session's connection every `--fault-interval-ms`
//! (`kill-connections`: `pg_terminate_backend`, MariaDB's `KILL`), and/or
//! every statement runs under a short server-side timeout (`timeouts`). The
//! outcomes stay honest by the rules above: a transaction killed before its
//! `COMMIT` is a `:fail`, one killed or timed out during it an `:info`.
//!
//! [`run::RecordArgs`] is the command line and [`run::run`] its entry point.

use std::fmt;
use std::time::Duration;

use thiserror::Error;

use crate::gen::closed_predicate::{CpMop, Pred};
use crate::gen::DrawnMop;

pub mod convert;
pub mod follow;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod run;
pub mod shape;
pub mod sqlite;
mod writer;

pub use run::{run, RecordArgs};

/// Which workload a run records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// Elle's list-append: reads return a key's list, writes append to it.
    ListAppend,
    /// Read/write registers: reads return a key's value, writes overwrite it.
    RwRegister,
    /// Elle's closed-predicate: an :init inserts a universe of rows, each
    /// key is then inserted, written or deleted once, and transactions read
    /// rows by key and by predicate (`SELECT k, v ... WHERE v = ?`, `v mod m
    /// = r`, or every row).
    ClosedPredicate,
}

impl Workload {
    /// The workload's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Workload::ListAppend => "list-append",
            Workload::RwRegister => "rw-register",
            Workload::ClosedPredicate => "closed-predicate",
        }
    }

    /// Whether a key's row holds a list (as text) rather than an integer.
    pub(crate) fn lists(self) -> bool {
        match self {
            Workload::ListAppend => true,
            Workload::RwRegister | Workload::ClosedPredicate => false,
        }
    }
}

/// A micro-op a session runs: list-append's and rw-register's
/// ([`DrawnMop`]) and closed-predicate's ([`CpMop`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mop {
    /// Reads a key's row.
    Read(u64),
    /// Sets a register (an upsert).
    Write(u64, u64),
    /// Appends to a list.
    Append(u64, u64),
    /// Inserts a row (closed-predicate).
    Insert(u64, u64),
    /// Deletes a row (closed-predicate).
    Delete(u64),
    /// Reads the rows a predicate matches (closed-predicate).
    PredRead(Pred),
}

impl Mop {
    /// Whether the micro-op only reads.
    pub fn reads(self) -> bool {
        matches!(self, Mop::Read(_) | Mop::PredRead(_))
    }
}

impl From<DrawnMop> for Mop {
    fn from(m: DrawnMop) -> Mop {
        match m {
            DrawnMop::Read(k) => Mop::Read(k),
            DrawnMop::Write(k, v) => Mop::Write(k, v),
            DrawnMop::Append(k, v) => Mop::Append(k, v),
        }
    }
}

impl From<CpMop> for Mop {
    fn from(m: CpMop) -> Mop {
        match m {
            CpMop::Read(k) => Mop::Read(k),
            CpMop::Write(k, v) => Mop::Write(k, v),
            CpMop::Insert(k, v) => Mop::Insert(k, v),
            CpMop::Delete(k) => Mop::Delete(k),
            CpMop::PredRead(p) => Mop::PredRead(p),
        }
    }
}

/// The isolation level transactions are run at (the SQL standard's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Isolation {
    /// `READ UNCOMMITTED`.
    ReadUncommitted,
    /// `READ COMMITTED`.
    ReadCommitted,
    /// `REPEATABLE READ`.
    RepeatableRead,
    /// `SERIALIZABLE`.
    Serializable,
}

impl Isolation {
    /// The level's SQL spelling.
    pub fn sql(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "READ UNCOMMITTED",
            Isolation::ReadCommitted => "READ COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE READ",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }

    /// The level's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "read-uncommitted",
            Isolation::ReadCommitted => "read-committed",
            Isolation::RepeatableRead => "repeatable-read",
            Isolation::Serializable => "serializable",
        }
    }

    /// The Elle model of the same name, which a database running this level
    /// as the SQL standard describes it promises.
    pub fn standard_model(self) -> &'static str {
        self.name()
    }
}

/// What a read observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    /// A register's value; `None` when the key has no row.
    Register(Option<u64>),
    /// A list's elements in order; empty when the key has no row.
    List(Vec<u64>),
    /// A predicate read's rows, `(k, v)` by key.
    Rows(Vec<(u64, u64)>),
}

/// What a failed statement says about its transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The database refused the transaction and rolled it back (or will on
    /// `ROLLBACK`): serialization failure, deadlock, constraint violation,
    /// lock timeout (PostgreSQL's `lock_timeout`, MariaDB's
    /// `innodb_lock_wait_timeout`). A refused `COMMIT` is a `:fail`.
    Rejected,
    /// Anything else: connection lost, timeout, an unexpected error. After
    /// `COMMIT` was sent this is an `:info`; the session reconnects.
    Unknown,
}

/// One database connection, running one transaction at a time. Keys and
/// values are the workload's integers; the tables are the run's own (see
/// [`Database::connect`]).
pub trait Backend {
    /// The driver's error type.
    type Error: fmt::Display;
    /// Starts a transaction at `level`, using the database's own statement.
    /// `writes` says whether the transaction will write (SQLite takes its
    /// write lock up front for those).
    fn begin(&mut self, level: Isolation, writes: bool) -> Result<(), Self::Error>;
    /// Reads a key (a register's value or a list's elements).
    fn read(&mut self, key: u64) -> Result<Observed, Self::Error>;
    /// Sets a register (an upsert).
    fn write(&mut self, key: u64, value: u64) -> Result<(), Self::Error>;
    /// Appends an element to a list (in SQL, to the key's text column).
    fn append(&mut self, key: u64, value: u64) -> Result<(), Self::Error>;
    /// Inserts a row (a plain `INSERT`: an existing row is a constraint
    /// violation).
    fn insert(&mut self, key: u64, value: u64) -> Result<(), Self::Error>;
    /// Deletes a key's row, if any.
    fn delete(&mut self, key: u64) -> Result<(), Self::Error>;
    /// Reads the rows `pred` matches (`SELECT k, v ... WHERE ...`), in any
    /// order.
    fn pred_read(&mut self, pred: Pred) -> Result<Vec<(u64, u64)>, Self::Error>;
    /// Commits the transaction.
    fn commit(&mut self) -> Result<(), Self::Error>;
    /// Rolls the transaction back.
    fn rollback(&mut self) -> Result<(), Self::Error>;
    /// What an error says about the transaction it ended.
    fn classify(err: &Self::Error) -> ErrorClass;
    /// Runs a statement outside any transaction (`--init-sql`).
    fn execute(&mut self, sql: &str) -> Result<(), Self::Error>;
    /// Makes a statement that waits longer than `timeout` for another
    /// transaction's lock fail, as a refusal ([`ErrorClass::Rejected`]), so
    /// that a lock wait (a deadlock the server would detect only after its
    /// own timeout, a queue behind a hot row) ends the transaction as a
    /// `:fail` quickly (`--lock-timeout-ms`). The default does nothing.
    fn limit_lock_wait(&mut self, timeout: Duration) -> Result<(), Self::Error> {
        let _ = timeout;
        Ok(())
    }
    /// Prepares the connection for `--faults`: makes every later statement
    /// fail once it runs longer than `timeout` (if given), and returns the
    /// server's id of the connection for [`Database::kill`] (if it has one).
    fn prepare_faults(&mut self, timeout: Option<Duration>) -> Result<Option<u64>, Self::Error>;
}

/// A database a run records against: it sets up the run's tables and opens
/// one connection per session.
pub trait Database: Sync {
    /// A connection.
    type Session: Backend + Send;
    /// A short description for messages (the URL without its password).
    fn describe(&self) -> String;
    /// Opens a connection to the run's tables.
    fn connect(&self) -> Result<Self::Session, RecordError>;
    /// Drops the run's tables (best effort, at the end of a run).
    fn teardown(&self) -> Result<(), RecordError>;
    /// The Elle model `level` promises on this database: what `--check`
    /// checks by default.
    fn promised_model(&self, level: Isolation) -> &'static str {
        level.standard_model()
    }
    /// Whether `--faults` may be injected: only into a server on this
    /// machine (loopback or a Unix socket); the reason when not.
    fn faultable(&self) -> Result<(), String>;
    /// Kills the connection with this server id (see
    /// [`Backend::prepare_faults`]) from a separate connection.
    fn kill(&self, id: u64) -> Result<(), RecordError>;
}

/// Why a run could not start, or stopped.
#[derive(Debug, Error)]
pub enum RecordError {
    /// The `--db` URL is malformed or names an unknown scheme.
    #[error("bad database URL {url:?}: {reason}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The URL needs a backend this binary was built without.
    #[error("{scheme}:// URLs need isolde built with the `{feature}` cargo feature (cargo build --release --features {feature})")]
    MissingFeature {
        /// The URL's scheme.
        scheme: String,
        /// The cargo feature to enable.
        feature: &'static str,
    },
    /// Connecting, or creating the run's tables, failed.
    #[error("{db}: {message}")]
    Connect {
        /// The database.
        db: String,
        /// The driver's message.
        message: String,
    },
    /// The workload knobs are inconsistent.
    #[error("{0}")]
    Workload(String),
    /// The history file could not be written.
    #[error("{path}: {source}")]
    Output {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Analysing the recorded history failed.
    #[error("checking {path}: {message}")]
    Check {
        /// The history file.
        path: String,
        /// Why.
        message: String,
    },
    /// The recorded history (complete, in EDN) cannot be written in the
    /// requested `--output-format`.
    #[error("{path}: cannot write it as {format}: {message}")]
    Convert {
        /// The EDN history.
        path: String,
        /// The format asked for.
        format: &'static str,
        /// Why.
        message: String,
    },
}

/// A table name no earlier run used: `isolde_<unix ms>_<pid>_<workload>`.
pub(crate) fn table_name(workload: Workload) -> String {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let w = match workload {
        Workload::ListAppend => "la",
        Workload::RwRegister => "rw",
        Workload::ClosedPredicate => "cp",
    };
    format!("isolde_{ms}_{}_{w}", std::process::id())
}

/// Whether a host name is this machine's loopback.
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub(crate) fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h == "localhost" || h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A database URL without its password (for messages).
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub(crate) fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        if let Some((userinfo, host)) = rest.rsplit_once('@') {
            if let Some((user, _)) = userinfo.split_once(':') {
                return format!("{scheme}://{user}:***@{host}");
            }
        }
    }
    url.to_string()
}

/// Parses a list stored as comma-separated decimal elements (Jepsen's SQL
/// list-append encoding); the empty string is the empty list. A malformed
/// element is an error, never dropped.
pub(crate) fn parse_list(text: &str) -> Result<Vec<u64>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(',').map(|e| e.parse::<u64>().map_err(|_| format!("malformed list element {e:?} in {text:?}"))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_strictly() {
        assert_eq!(parse_list(""), Ok(vec![]));
        assert_eq!(parse_list("3"), Ok(vec![3]));
        assert_eq!(parse_list("3,1,2"), Ok(vec![3, 1, 2]));
        assert!(parse_list("3,,2").is_err());
        assert!(parse_list("3,x").is_err());
    }

    #[cfg(any(feature = "postgres", feature = "mysql"))]
    #[test]
    fn passwords_are_redacted() {
        assert_eq!(redact("postgres://u:secret@h:5/db"), "postgres://u:***@h:5/db");
        assert_eq!(redact("mysql://u:p@ss@h/db"), "mysql://u:***@h/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
    }

    #[cfg(any(feature = "postgres", feature = "mysql"))]
    #[test]
    fn loopback_hosts() {
        for h in ["localhost", "127.0.0.1", "127.3.4.5", "::1", "[::1]"] {
            assert!(is_loopback(h), "{h}");
        }
        for h in ["example.com", "10.0.0.1", "", "localhost.example.com"] {
            assert!(!is_loopback(h), "{h}");
        }
    }

    #[test]
    fn table_names_are_fresh_identifiers() {
        let a = table_name(Workload::ListAppend);
        assert!(a.starts_with("isolde_") && a.ends_with("_la"), "{a}");
        assert!(a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    }
}
