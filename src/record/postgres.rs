//! PostgreSQL backend (the synchronous `postgres` crate, no TLS), behind the
//! `postgres` cargo feature.
//!
//! URL: `postgres://user:password@host:port/database` (or any connection
//! string the `postgres` crate accepts). Each transaction starts with
//! `BEGIN ISOLATION LEVEL <level>`. Registers are upserted
//! (`INSERT ... ON CONFLICT (k) DO UPDATE SET v = excluded.v`); lists are
//! comma-separated text appended in SQL as Jepsen's PostgreSQL tests do
//! (`... DO UPDATE SET v = r.v || ',' || excluded.v`).
//!
//! Errors of SQLSTATE class 40 (transaction rollback: serialization
//! failure, deadlock; except 40003, statement completion unknown), class
//! 23 (integrity constraint violation) and 55P03 (`lock_timeout` expired,
//! see [`Backend::limit_lock_wait`]) are [`ErrorClass::Rejected`];
//! everything else, including a connection terminated by the server, is
//! [`ErrorClass::Unknown`] (a terminated backend may have committed before
//! the client heard back).
//!
//! Levels: PostgreSQL runs `READ UNCOMMITTED` as `READ COMMITTED` and
//! `REPEATABLE READ` as snapshot isolation, which is what `--check` checks
//! by default for them.

use std::time::Duration;

use postgres::{Client, NoTls, Statement};

use super::{
    is_loopback, parse_list, redact, table_name, Backend, Database, ErrorClass, Isolation, Observed, RecordError,
    Workload,
};
use crate::gen::closed_predicate::Pred;

/// SQLSTATE 55P03, `lock_not_available`: `lock_timeout` expired (the
/// statement did nothing; the transaction is aborted).
const LOCK_NOT_AVAILABLE: &str = "55P03";

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A PostgreSQL database and the run's table in it.
pub struct Postgres {
    config: postgres::Config,
    describe: String,
    table: String,
    workload: Workload,
}

impl Postgres {
    /// Parses `url`, connects, and creates the run's table: a bad URL, an
    /// unreachable server or missing privileges fail here.
    pub fn open(url: &str, workload: Workload) -> Result<Postgres, RecordError> {
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e: postgres::Error| RecordError::BadUrl { url: redact(url), reason: e.to_string() })?;
        config.connect_timeout(CONNECT_TIMEOUT);
        let db = Postgres { config, describe: redact(url), table: table_name(workload), workload };
        let mut c = db.client()?;
        let value_type = if workload.lists() { "TEXT" } else { "BIGINT" };
        c.batch_execute(&format!("CREATE TABLE {} (k BIGINT PRIMARY KEY, v {value_type} NOT NULL)", db.table))
            .map_err(|e| db.err(e))?;
        Ok(db)
    }

    fn err(&self, e: postgres::Error) -> RecordError {
        RecordError::Connect { db: self.describe.clone(), message: error_text(&e) }
    }

    fn err_text(&self, message: String) -> RecordError {
        RecordError::Connect { db: self.describe.clone(), message }
    }

    fn client(&self) -> Result<Client, RecordError> {
        self.config.connect(NoTls).map_err(|e| self.err(e))
    }
}

/// The driver's message with the server's detail, if any.
fn error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

impl Database for Postgres {
    type Session = PgSession;

    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn connect(&self) -> Result<PgSession, RecordError> {
        let mut client = self.client()?;
        let t = &self.table;
        let read = client.prepare(&format!("SELECT v FROM {t} WHERE k = $1")).map_err(|e| self.err(e))?;
        let upsert = match self.workload {
            Workload::RwRegister | Workload::ClosedPredicate => {
                format!("INSERT INTO {t} AS r (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v")
            }
            Workload::ListAppend => format!(
                "INSERT INTO {t} AS r (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = r.v || ',' || excluded.v"
            ),
        };
        let upsert = client.prepare(&upsert).map_err(|e| self.err(e))?;
        let mut prepare = |sql: String| client.prepare(&sql).map_err(|e| self.err(e));
        let cp = match self.workload {
            Workload::ClosedPredicate => Some(CpStatements {
                insert: prepare(format!("INSERT INTO {t} (k, v) VALUES ($1, $2)"))?,
                delete: prepare(format!("DELETE FROM {t} WHERE k = $1"))?,
                all: prepare(format!("SELECT k, v FROM {t}"))?,
                eq: prepare(format!("SELECT k, v FROM {t} WHERE v = $1"))?,
                modulo: prepare(format!("SELECT k, v FROM {t} WHERE v % $1 = $2"))?,
            }),
            Workload::ListAppend | Workload::RwRegister => None,
        };
        Ok(PgSession { client, workload: self.workload, read, upsert, cp })
    }

    fn teardown(&self) -> Result<(), RecordError> {
        let mut c = self.client()?;
        c.batch_execute(&format!("DROP TABLE {}", self.table)).map_err(|e| self.err(e))
    }

    fn faultable(&self) -> Result<(), String> {
        let local = self.config.get_hosts().iter().all(|h| match h {
            postgres::config::Host::Tcp(name) => is_loopback(name),
            #[cfg(unix)]
            postgres::config::Host::Unix(_) => true,
        });
        if local && !self.config.get_hosts().is_empty() {
            Ok(())
        } else {
            Err(format!("{} is not on this machine; faults are only injected into loopback servers", self.describe))
        }
    }

    fn kill(&self, id: u64) -> Result<(), RecordError> {
        let mut c = self.client()?;
        let pid = i32::try_from(id).map_err(|_| self.err_text(format!("no backend pid {id}")))?;
        c.query_one("SELECT pg_terminate_backend($1)", &[&pid]).map(drop).map_err(|e| self.err(e))
    }

    fn promised_model(&self, level: Isolation) -> &'static str {
        match level {
            Isolation::ReadUncommitted | Isolation::ReadCommitted => "read-committed",
            Isolation::RepeatableRead => "snapshot-isolation",
            Isolation::Serializable => "serializable",
        }
    }
}

/// One PostgreSQL connection.
pub struct PgSession {
    client: Client,
    workload: Workload,
    read: Statement,
    upsert: Statement,
    /// closed-predicate's statements.
    cp: Option<CpStatements>,
}

/// The statements of closed-predicate's micro-ops.
struct CpStatements {
    insert: Statement,
    delete: Statement,
    /// Predicate reads: every row, `v = $1`, `v % $1 = $2`.
    all: Statement,
    eq: Statement,
    modulo: Statement,
}

impl PgSession {
    fn cp(&self) -> Result<&CpStatements, PgError> {
        self.cp.as_ref().ok_or_else(|| PgError::Value(format!("{} runs have no predicate reads", self.workload.name())))
    }
}

/// Keys and values are stored as signed 64-bit integers.
fn int(x: u64) -> Result<i64, PgError> {
    i64::try_from(x).map_err(|_| PgError::Value(format!("{x} does not fit a BIGINT")))
}

/// A PostgreSQL error, or a value the database returned that the workload
/// cannot have written.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// From the driver or the server.
    #[error("{}", error_text(.0))]
    Db(#[from] postgres::Error),
    /// A value that is not what the workload stores.
    #[error("unexpected value: {0}")]
    Value(String),
}

impl Backend for PgSession {
    type Error = PgError;

    fn begin(&mut self, level: Isolation, _writes: bool) -> Result<(), PgError> {
        Ok(self.client.batch_execute(&format!("BEGIN ISOLATION LEVEL {}", level.sql()))?)
    }

    fn read(&mut self, key: u64) -> Result<Observed, PgError> {
        let row = self.client.query_opt(&self.read, &[&int(key)?])?;
        Ok(if self.workload.lists() {
            let v: Option<String> = row.map(|r| r.try_get(0)).transpose()?;
            Observed::List(parse_list(v.as_deref().unwrap_or("")).map_err(PgError::Value)?)
        } else {
            let v: Option<i64> = row.map(|r| r.try_get(0)).transpose()?;
            Observed::Register(
                v.map(|v| u64::try_from(v).map_err(|_| PgError::Value(format!("negative register value {v}"))))
                    .transpose()?,
            )
        })
    }

    fn write(&mut self, key: u64, value: u64) -> Result<(), PgError> {
        self.client.execute(&self.upsert, &[&int(key)?, &int(value)?])?;
        Ok(())
    }

    fn append(&mut self, key: u64, value: u64) -> Result<(), PgError> {
        self.client.execute(&self.upsert, &[&int(key)?, &value.to_string()])?;
        Ok(())
    }

    fn insert(&mut self, key: u64, value: u64) -> Result<(), PgError> {
        let st = self.cp()?.insert.clone();
        self.client.execute(&st, &[&int(key)?, &int(value)?])?;
        Ok(())
    }

    fn delete(&mut self, key: u64) -> Result<(), PgError> {
        let st = self.cp()?.delete.clone();
        self.client.execute(&st, &[&int(key)?])?;
        Ok(())
    }

    fn pred_read(&mut self, pred: Pred) -> Result<Vec<(u64, u64)>, PgError> {
        let cp = self.cp()?;
        let rows = match pred {
            Pred::True => {
                let st = cp.all.clone();
                self.client.query(&st, &[])?
            }
            Pred::Eq(x) => {
                let st = cp.eq.clone();
                self.client.query(&st, &[&int(x)?])?
            }
            Pred::Mod(m, r) => {
                let st = cp.modulo.clone();
                self.client.query(&st, &[&int(m)?, &int(r)?])?
            }
        };
        rows.iter()
            .map(|row| {
                let (k, v): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
                match (u64::try_from(k), u64::try_from(v)) {
                    (Ok(k), Ok(v)) => Ok((k, v)),
                    _ => Err(PgError::Value(format!("negative key or value in the row ({k}, {v})"))),
                }
            })
            .collect()
    }

    fn commit(&mut self) -> Result<(), PgError> {
        Ok(self.client.batch_execute("COMMIT")?)
    }

    fn rollback(&mut self) -> Result<(), PgError> {
        Ok(self.client.batch_execute("ROLLBACK")?)
    }

    fn execute(&mut self, sql: &str) -> Result<(), PgError> {
        Ok(self.client.batch_execute(sql)?)
    }

    /// PostgreSQL's `lock_timeout` (settable by any user), whole
    /// milliseconds, at least 1.
    fn limit_lock_wait(&mut self, timeout: Duration) -> Result<(), PgError> {
        Ok(self.client.batch_execute(&format!("SET lock_timeout = {}", timeout.as_millis().max(1)))?)
    }

    fn prepare_faults(&mut self, timeout: Option<Duration>) -> Result<Option<u64>, PgError> {
        if let Some(t) = timeout {
            self.client.batch_execute(&format!("SET statement_timeout = {}", t.as_millis().max(1)))?;
        }
        let pid: i32 = self.client.query_one("SELECT pg_backend_pid()", &[])?.try_get(0)?;
        Ok(u64::try_from(pid).ok())
    }

    fn classify(err: &PgError) -> ErrorClass {
        let PgError::Db(e) = err else { return ErrorClass::Unknown };
        match e.code().map(|c| c.code()) {
            Some(c) if (c.starts_with("40") && c != "40003") || c.starts_with("23") || c == LOCK_NOT_AVAILABLE => {
                ErrorClass::Rejected
            }
            _ => ErrorClass::Unknown,
        }
    }
}
