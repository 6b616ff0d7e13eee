//! Connections for `isolde hermitage`: the table's statements on SQLite,
//! PostgreSQL and MySQL/MariaDB, each error classified as `isolde record`
//! classifies it ([`crate::record::Backend::classify`]).

use std::time::Duration;

use crate::record::{ErrorClass, Isolation};

/// How long a statement waits for another session's lock before it fails
/// (PostgreSQL `lock_timeout`, MariaDB `innodb_lock_wait_timeout`, SQLite's
/// busy timeout). A step Hermitage's script expects to block is detected
/// long before (see [`super::exec`]); this bounds the waits a script itself
/// deadlocks on (a session blocked behind a lock its own next statement
/// needs released).
pub const LOCK_WAIT: Duration = Duration::from_secs(1);

/// A statement's error: its message and what it says about the
/// transaction.
#[derive(Clone, Debug)]
pub struct SqlError {
    /// The driver's message.
    pub message: String,
    /// Whether the database refused the transaction (it is certainly not
    /// committed).
    pub class: ErrorClass,
}

/// One connection to the scenario's table.
pub trait Sql: Send {
    /// Starts a transaction at `level` (SQLite: `BEGIN`, its only level).
    fn begin(&mut self, level: Isolation) -> Result<(), SqlError>;
    /// Runs a query returning `(id, value)` rows.
    fn rows(&mut self, sql: &str) -> Result<Vec<(i64, i64)>, SqlError>;
    /// Runs a statement.
    fn exec(&mut self, sql: &str) -> Result<(), SqlError>;
    /// Whether `SELECT ... FOR UPDATE` exists.
    fn locking_reads(&self) -> bool {
        true
    }
    /// The server's id of this connection, where the server can say whether
    /// it waits for a lock ([`Target::lock_wait_query`]).
    fn server_id(&mut self) -> Option<i64> {
        None
    }
}

/// A database the scenarios run against.
pub enum Target {
    /// SQLite: a file in a temporary directory (removed on drop).
    Sqlite(SqliteTarget),
    /// PostgreSQL.
    #[cfg(feature = "postgres")]
    Postgres(Box<postgres::Config>, String),
    /// MySQL or MariaDB.
    #[cfg(feature = "mysql")]
    Mysql(mysql::Opts, String),
}

/// SQLite's database file, in a directory removed when this drops.
pub struct SqliteTarget {
    dir: std::path::PathBuf,
}

impl Drop for SqliteTarget {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Target {
    /// Parses a `--db` URL (`None`: SQLite in a temporary directory).
    pub fn open(url: Option<&str>) -> Result<Target, String> {
        let Some(url) = url else {
            let ms =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
            let dir = std::env::temp_dir().join(format!("isolde-hermitage-{}-{ms}", std::process::id()));
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            return Ok(Target::Sqlite(SqliteTarget { dir }));
        };
        let scheme = url.split_once("://").map(|(s, _)| s).unwrap_or("");
        match scheme {
            "postgres" | "postgresql" => {
                #[cfg(feature = "postgres")]
                {
                    let mut config: postgres::Config = url.parse().map_err(|e: postgres::Error| format!("bad database URL: {e}"))?;
                    config.connect_timeout(Duration::from_secs(10));
                    Ok(Target::Postgres(Box::new(config), redact(url)))
                }
                #[cfg(not(feature = "postgres"))]
                Err("postgres:// URLs need isolde built with the `postgres` cargo feature".into())
            }
            "mysql" | "mariadb" => {
                #[cfg(feature = "mysql")]
                {
                    let normalized = format!("mysql://{}", &url[scheme.len() + 3..]);
                    let opts = mysql::Opts::from_url(&normalized).map_err(|e| format!("bad database URL: {e}"))?;
                    let opts = mysql::OptsBuilder::from_opts(opts).tcp_connect_timeout(Some(Duration::from_secs(10)));
                    Ok(Target::Mysql(opts.into(), redact(url)))
                }
                #[cfg(not(feature = "mysql"))]
                Err("mysql:// URLs need isolde built with the `mysql` cargo feature".into())
            }
            _ => Err(format!(
                "bad database URL {:?}: expected postgres://user@host/db or mysql://user:pass@host/db (no --db: SQLite)",
                redact(url)
            )),
        }
    }

    /// The database for messages (the URL without its password).
    pub fn describe(&self) -> String {
        match self {
            Target::Sqlite(_) => "SQLite (embedded)".into(),
            #[cfg(feature = "postgres")]
            Target::Postgres(_, d) => d.clone(),
            #[cfg(feature = "mysql")]
            Target::Mysql(_, d) => d.clone(),
        }
    }

    /// The levels the database offers, weakest first.
    pub fn levels(&self) -> Vec<Isolation> {
        use Isolation::*;
        match self {
            // One level: every transaction is serializable.
            Target::Sqlite(_) => vec![Serializable],
            // PostgreSQL runs read uncommitted as read committed.
            #[cfg(feature = "postgres")]
            Target::Postgres(..) => vec![ReadCommitted, RepeatableRead, Serializable],
            #[cfg(feature = "mysql")]
            Target::Mysql(..) => vec![ReadUncommitted, ReadCommitted, RepeatableRead, Serializable],
        }
    }

    /// A query returning one row `(0, 1)` when the connection with server
    /// id `id` waits for another transaction's lock, `(0, 0)` when not;
    /// `None` where the server cannot tell (MySQL/MariaDB need the PROCESS
    /// privilege for it, SQLite has no server).
    pub fn lock_wait_query(&self, id: i64) -> Option<String> {
        match self {
            #[cfg(feature = "postgres")]
            Target::Postgres(..) => {
                Some(format!("SELECT 0, CASE WHEN cardinality(pg_blocking_pids({id})) > 0 THEN 1 ELSE 0 END"))
            }
            _ => {
                let _ = id;
                None
            }
        }
    }

    /// Opens a connection; `init_sql` statements run first.
    pub fn connect(&self, init_sql: &[String]) -> Result<Box<dyn Sql>, String> {
        let mut c: Box<dyn Sql> = match self {
            Target::Sqlite(t) => {
                let conn = rusqlite::Connection::open(t.dir.join("hermitage.sqlite")).map_err(|e| e.to_string())?;
                conn.busy_timeout(LOCK_WAIT).map_err(|e| e.to_string())?;
                conn.execute_batch("PRAGMA journal_mode = WAL").map_err(|e| e.to_string())?;
                Box::new(SqliteConn(conn))
            }
            #[cfg(feature = "postgres")]
            Target::Postgres(config, d) => {
                let mut client = config.connect(postgres::NoTls).map_err(|e| format!("{d}: {e}"))?;
                client
                    .batch_execute(&format!("SET lock_timeout = {}", LOCK_WAIT.as_millis()))
                    .map_err(|e| format!("{d}: {e}"))?;
                Box::new(PgConn(client))
            }
            #[cfg(feature = "mysql")]
            Target::Mysql(opts, d) => {
                use mysql::prelude::Queryable;
                let mut conn = mysql::Conn::new(opts.clone()).map_err(|e| format!("{d}: {e}"))?;
                conn.query_drop(format!("SET SESSION innodb_lock_wait_timeout = {}", LOCK_WAIT.as_secs().max(1)))
                    .map_err(|e| format!("{d}: {e}"))?;
                Box::new(MyConn(conn))
            }
        };
        for sql in init_sql {
            c.exec(sql).map_err(|e| format!("--init-sql {sql:?}: {}", e.message))?;
        }
        Ok(c)
    }

    /// The server's version, for the table's title.
    pub fn version(&self) -> String {
        match self {
            Target::Sqlite(_) => format!("SQLite {}", rusqlite::version()),
            #[cfg(feature = "postgres")]
            Target::Postgres(config, _) => config
                .connect(postgres::NoTls)
                .ok()
                .and_then(|mut c| c.query_one("SHOW server_version", &[]).ok())
                .and_then(|r| r.try_get::<_, String>(0).ok())
                .map(|v| format!("PostgreSQL {}", v.split_whitespace().next().unwrap_or(&v)))
                .unwrap_or_else(|| "PostgreSQL".into()),
            #[cfg(feature = "mysql")]
            Target::Mysql(opts, _) => {
                use mysql::prelude::Queryable;
                mysql::Conn::new(opts.clone())
                    .ok()
                    .and_then(|mut c| c.query_first::<String, _>("SELECT version()").ok().flatten())
                    .map(|v| {
                        let name = if v.to_ascii_lowercase().contains("mariadb") { "MariaDB" } else { "MySQL" };
                        format!("{name} {}", v.split('-').next().unwrap_or(&v))
                    })
                    .unwrap_or_else(|| "MySQL".into())
            }
        }
    }
}

/// A URL without its password.
fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        if let Some((userinfo, host)) = rest.rsplit_once('@') {
            if let Some((user, _)) = userinfo.split_once(':') {
                return format!("{scheme}://{user}:***@{host}");
            }
        }
    }
    url.to_string()
}

struct SqliteConn(rusqlite::Connection);

fn sqlite_err(e: rusqlite::Error) -> SqlError {
    use crate::record::Backend;
    SqlError { class: crate::record::sqlite::SqliteSession::classify(&e), message: e.to_string() }
}

impl Sql for SqliteConn {
    fn begin(&mut self, _level: Isolation) -> Result<(), SqlError> {
        self.0.execute_batch("BEGIN").map_err(sqlite_err)
    }
    fn rows(&mut self, sql: &str) -> Result<Vec<(i64, i64)>, SqlError> {
        let mut st = self.0.prepare(sql).map_err(sqlite_err)?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).map_err(sqlite_err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(sqlite_err)
    }
    fn exec(&mut self, sql: &str) -> Result<(), SqlError> {
        self.0.execute_batch(sql).map_err(sqlite_err)
    }
    fn locking_reads(&self) -> bool {
        false
    }
}

#[cfg(feature = "postgres")]
struct PgConn(postgres::Client);

#[cfg(feature = "postgres")]
fn pg_err(e: postgres::Error) -> SqlError {
    use crate::record::Backend;
    let message = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    };
    let e = crate::record::postgres::PgError::Db(e);
    SqlError { class: crate::record::postgres::PgSession::classify(&e), message }
}

#[cfg(feature = "postgres")]
impl Sql for PgConn {
    fn begin(&mut self, level: Isolation) -> Result<(), SqlError> {
        self.0.batch_execute(&format!("BEGIN ISOLATION LEVEL {}", level.sql())).map_err(pg_err)
    }
    fn rows(&mut self, sql: &str) -> Result<Vec<(i64, i64)>, SqlError> {
        let rows = self.0.query(sql, &[]).map_err(pg_err)?;
        rows.iter()
            .map(|r| Ok((r.try_get::<_, i32>(0)? as i64, r.try_get::<_, i32>(1)? as i64)))
            .collect::<Result<Vec<_>, postgres::Error>>()
            .map_err(pg_err)
    }
    fn exec(&mut self, sql: &str) -> Result<(), SqlError> {
        self.0.batch_execute(sql).map_err(pg_err)
    }
    fn server_id(&mut self) -> Option<i64> {
        self.0.query_one("SELECT pg_backend_pid()", &[]).ok()?.try_get::<_, i32>(0).ok().map(i64::from)
    }
}

#[cfg(feature = "mysql")]
struct MyConn(mysql::Conn);

#[cfg(feature = "mysql")]
fn my_err(e: mysql::Error) -> SqlError {
    use crate::record::Backend;
    let message = e.to_string();
    let e = crate::record::mysql::MysqlError::Db(e);
    SqlError { class: crate::record::mysql::MysqlSession::classify(&e), message }
}

#[cfg(feature = "mysql")]
impl Sql for MyConn {
    fn begin(&mut self, level: Isolation) -> Result<(), SqlError> {
        use mysql::prelude::Queryable;
        self.0.query_drop(format!("SET TRANSACTION ISOLATION LEVEL {}", level.sql())).map_err(my_err)?;
        self.0.query_drop("START TRANSACTION").map_err(my_err)
    }
    fn rows(&mut self, sql: &str) -> Result<Vec<(i64, i64)>, SqlError> {
        use mysql::prelude::Queryable;
        self.0.query::<(i64, i64), _>(sql).map_err(my_err)
    }
    fn exec(&mut self, sql: &str) -> Result<(), SqlError> {
        use mysql::prelude::Queryable;
        self.0.query_drop(sql).map_err(my_err)
    }
}
