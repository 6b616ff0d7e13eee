//! MySQL and MariaDB backend (the `mysql` crate, no TLS), behind the `mysql`
//! cargo feature.
//!
//! URL: `mysql://user:password@host:port/database` (`mariadb://` is read
//! the same way). Each transaction runs `SET TRANSACTION ISOLATION LEVEL
//! <level>` (which applies to the next transaction only), then `START
//! TRANSACTION`. Tables are InnoDB. Registers are upserted (`INSERT ... ON
//! DUPLICATE KEY UPDATE v = VALUES(v)`); lists are comma-separated text
//! appended in SQL as Jepsen's MySQL tests do (`... v = CONCAT(v, ',',
//! VALUES(v))`).
//!
//! Server errors 1213 (deadlock), 1205 (lock wait timeout), 1020 (record
//! changed since last read: MariaDB's `innodb_snapshot_isolation`) and 1062
//! (duplicate key) are [`ErrorClass::Rejected`]; everything else is
//! [`ErrorClass::Unknown`].

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, Statement};
use std::time::Duration;

use super::{
    is_loopback, parse_list, redact, table_name, Backend, Database, ErrorClass, Isolation, Observed, RecordError,
    Workload,
};
use crate::gen::closed_predicate::Pred;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A MySQL or MariaDB database and the run's table in it.
pub struct Mysql {
    opts: Opts,
    describe: String,
    table: String,
    workload: Workload,
}

impl Mysql {
    /// Parses `url`, connects, and creates the run's table: a bad URL, an
    /// unreachable server or missing privileges fail here.
    pub fn open(url: &str, workload: Workload) -> Result<Mysql, RecordError> {
        let normalized = match url.strip_prefix("mariadb://") {
            Some(rest) => format!("mysql://{rest}"),
            None => url.to_string(),
        };
        let opts =
            Opts::from_url(&normalized).map_err(|e| RecordError::BadUrl { url: redact(url), reason: e.to_string() })?;
        let opts: Opts = OptsBuilder::from_opts(opts).tcp_connect_timeout(Some(CONNECT_TIMEOUT)).into();
        let db = Mysql { opts, describe: redact(url), table: table_name(workload), workload };
        let mut c = db.conn()?;
        let value_type = if workload.lists() { "LONGTEXT" } else { "BIGINT" };
        c.query_drop(format!(
            "CREATE TABLE {} (k BIGINT PRIMARY KEY, v {value_type} NOT NULL) ENGINE = InnoDB",
            db.table
        ))
        .map_err(|e| db.err(e))?;
        Ok(db)
    }

    fn err(&self, e: mysql::Error) -> RecordError {
        RecordError::Connect { db: self.describe.clone(), message: e.to_string() }
    }

    fn conn(&self) -> Result<Conn, RecordError> {
        Conn::new(self.opts.clone()).map_err(|e| self.err(e))
    }
}

impl Database for Mysql {
    type Session = MysqlSession;

    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn connect(&self) -> Result<MysqlSession, RecordError> {
        let mut conn = self.conn()?;
        let t = &self.table;
        let read = conn.prep(format!("SELECT v FROM {t} WHERE k = ?")).map_err(|e| self.err(e))?;
        let upsert = match self.workload {
            Workload::RwRegister | Workload::ClosedPredicate => {
                format!("INSERT INTO {t} (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)")
            }
            Workload::ListAppend => {
                format!("INSERT INTO {t} (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', VALUES(v))")
            }
        };
        let upsert = conn.prep(upsert).map_err(|e| self.err(e))?;
        let mut prepare = |sql: String| conn.prep(sql).map_err(|e| self.err(e));
        let cp = match self.workload {
            Workload::ClosedPredicate => Some(CpStatements {
                insert: prepare(format!("INSERT INTO {t} (k, v) VALUES (?, ?)"))?,
                delete: prepare(format!("DELETE FROM {t} WHERE k = ?"))?,
                all: prepare(format!("SELECT k, v FROM {t}"))?,
                eq: prepare(format!("SELECT k, v FROM {t} WHERE v = ?"))?,
                modulo: prepare(format!("SELECT k, v FROM {t} WHERE MOD(v, ?) = ?"))?,
            }),
            Workload::ListAppend | Workload::RwRegister => None,
        };
        Ok(MysqlSession { conn, workload: self.workload, read, upsert, cp })
    }

    fn faultable(&self) -> Result<(), String> {
        let host = self.opts.get_ip_or_hostname();
        if self.opts.get_socket().is_some() || is_loopback(&host) {
            Ok(())
        } else {
            Err(format!("{} is not on this machine; faults are only injected into loopback servers", self.describe))
        }
    }

    fn kill(&self, id: u64) -> Result<(), RecordError> {
        let mut c = self.conn()?;
        match c.query_drop(format!("KILL CONNECTION {id}")) {
            // 1094: unknown thread id (it ended on its own meanwhile).
            Err(mysql::Error::MySqlError(e)) if e.code == 1094 => Ok(()),
            other => other.map_err(|e| self.err(e)),
        }
    }

    fn teardown(&self) -> Result<(), RecordError> {
        let mut c = self.conn()?;
        c.query_drop(format!("DROP TABLE {}", self.table)).map_err(|e| self.err(e))
    }
}

/// One MySQL or MariaDB connection.
pub struct MysqlSession {
    conn: Conn,
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
    /// Predicate reads: every row, `v = ?`, `MOD(v, ?) = ?`.
    all: Statement,
    eq: Statement,
    modulo: Statement,
}

impl MysqlSession {
    fn cp(&self) -> Result<&CpStatements, MysqlError> {
        self.cp
            .as_ref()
            .ok_or_else(|| MysqlError::Value(format!("{} runs have no predicate reads", self.workload.name())))
    }
}

/// A MySQL error, or a value the database returned that the workload
/// cannot have written.
#[derive(Debug, thiserror::Error)]
pub enum MysqlError {
    /// From the driver or the server.
    #[error("{0}")]
    Db(#[from] mysql::Error),
    /// A value that is not what the workload stores.
    #[error("unexpected value: {0}")]
    Value(String),
}

/// Keys and values are stored as signed 64-bit integers.
fn int(x: u64) -> Result<i64, MysqlError> {
    i64::try_from(x).map_err(|_| MysqlError::Value(format!("{x} does not fit a BIGINT")))
}

impl Backend for MysqlSession {
    type Error = MysqlError;

    fn begin(&mut self, level: Isolation, _writes: bool) -> Result<(), MysqlError> {
        self.conn.query_drop(format!("SET TRANSACTION ISOLATION LEVEL {}", level.sql()))?;
        Ok(self.conn.query_drop("START TRANSACTION")?)
    }

    fn read(&mut self, key: u64) -> Result<Observed, MysqlError> {
        Ok(if self.workload.lists() {
            let v: Option<String> = self.conn.exec_first(&self.read, (int(key)?,))?;
            Observed::List(parse_list(v.as_deref().unwrap_or("")).map_err(MysqlError::Value)?)
        } else {
            let v: Option<i64> = self.conn.exec_first(&self.read, (int(key)?,))?;
            Observed::Register(
                v.map(|v| u64::try_from(v).map_err(|_| MysqlError::Value(format!("negative register value {v}"))))
                    .transpose()?,
            )
        })
    }

    fn write(&mut self, key: u64, value: u64) -> Result<(), MysqlError> {
        Ok(self.conn.exec_drop(&self.upsert, (int(key)?, int(value)?))?)
    }

    fn append(&mut self, key: u64, value: u64) -> Result<(), MysqlError> {
        Ok(self.conn.exec_drop(&self.upsert, (int(key)?, value.to_string()))?)
    }

    fn insert(&mut self, key: u64, value: u64) -> Result<(), MysqlError> {
        let st = self.cp()?.insert.clone();
        Ok(self.conn.exec_drop(&st, (int(key)?, int(value)?))?)
    }

    fn delete(&mut self, key: u64) -> Result<(), MysqlError> {
        let st = self.cp()?.delete.clone();
        Ok(self.conn.exec_drop(&st, (int(key)?,))?)
    }

    fn pred_read(&mut self, pred: Pred) -> Result<Vec<(u64, u64)>, MysqlError> {
        let cp = self.cp()?;
        let rows: Vec<(i64, i64)> = match pred {
            Pred::True => {
                let st = cp.all.clone();
                self.conn.exec(&st, ())?
            }
            Pred::Eq(x) => {
                let st = cp.eq.clone();
                self.conn.exec(&st, (int(x)?,))?
            }
            Pred::Mod(m, r) => {
                let st = cp.modulo.clone();
                self.conn.exec(&st, (int(m)?, int(r)?))?
            }
        };
        rows.into_iter()
            .map(|(k, v)| match (u64::try_from(k), u64::try_from(v)) {
                (Ok(k), Ok(v)) => Ok((k, v)),
                _ => Err(MysqlError::Value(format!("negative key or value in the row ({k}, {v})"))),
            })
            .collect()
    }

    fn commit(&mut self) -> Result<(), MysqlError> {
        Ok(self.conn.query_drop("COMMIT")?)
    }

    fn rollback(&mut self) -> Result<(), MysqlError> {
        Ok(self.conn.query_drop("ROLLBACK")?)
    }

    fn execute(&mut self, sql: &str) -> Result<(), MysqlError> {
        Ok(self.conn.query_drop(sql)?)
    }

    /// `innodb_lock_wait_timeout`, in whole seconds (its unit), rounded up:
    /// at least 1 s. A lock wait timeout (1205) rolls back only the
    /// statement by default, and the recorder then rolls back the rest.
    fn limit_lock_wait(&mut self, timeout: Duration) -> Result<(), MysqlError> {
        let secs = timeout.as_millis().div_ceil(1000).max(1);
        Ok(self.conn.query_drop(format!("SET SESSION innodb_lock_wait_timeout = {secs}"))?)
    }

    /// The timeout is MariaDB's `max_statement_time` (MySQL has no
    /// equivalent for writes).
    fn prepare_faults(&mut self, timeout: Option<Duration>) -> Result<Option<u64>, MysqlError> {
        if let Some(t) = timeout {
            self.conn.query_drop(format!("SET SESSION max_statement_time = {:.3}", t.as_secs_f64().max(0.001)))?;
        }
        let id: Option<u64> = self.conn.query_first("SELECT CONNECTION_ID()")?;
        Ok(id)
    }

    fn classify(err: &MysqlError) -> ErrorClass {
        match err {
            MysqlError::Db(mysql::Error::MySqlError(e)) if matches!(e.code, 1020 | 1062 | 1205 | 1213) => {
                ErrorClass::Rejected
            }
            _ => ErrorClass::Unknown,
        }
    }
}
