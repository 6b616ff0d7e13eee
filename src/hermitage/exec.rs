//! Running one scenario at one level, and the history it leaves.
//!
//! Each session is a thread with its own connection. The driver issues
//! the scenario's statements in order, each to its session, and waits for
//! the answer: a statement that has not answered after [`FIRST_WAIT`] and
//! that the server says waits for a lock (PostgreSQL: `pg_blocking_pids`,
//! asked on a separate connection), or, where the server cannot say, that
//! has not answered after [`BLOCK_DETECT`], is *blocked* (waiting for
//! another session's lock), and the driver
//! goes on with the next statements, as Hermitage's scripts do ("T2,
//! BLOCKS ... commit T1, this unblocks T2"). Before a blocked session's
//! next statement the driver waits for the blocked one to finish (it
//! completes once the lock is released, or fails when the database breaks
//! the wait: a deadlock, a serialization failure, or the lock wait limit
//! [`super::conn::LOCK_WAIT`] when the script itself waits on the blocked
//! session). A statement that fails ends its transaction: the session
//! rolls back and its later statements are skipped.
//!
//! The history is Jepsen EDN, rw-register: one transaction per session, a
//! first transaction writing the initial rows, and a last one, after every
//! session ended, reading the whole table (it orders the final versions).
//! Reads of rows that do not exist read `nil`. Invocation lines are placed
//! where each session's first statement was issued, completions where its
//! `COMMIT` or `ROLLBACK` answered (or the statement that ended it failed).

use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use super::conn::{Sql, SqlError, Target};
use super::scenarios::{Op, Scenario, INITIAL, KEYS};
use crate::record::{ErrorClass, Isolation};

/// How long a statement may take before it counts as blocked.
/// How long a statement may take before the driver asks the server
/// whether it waits for a lock.
pub const FIRST_WAIT: Duration = Duration::from_millis(100);

/// Where the server cannot say, how long a statement may take before it
/// counts as blocked. Statements run in a few milliseconds here; the margin
/// is for a loaded machine (a slow statement taken for a blocked one would
/// let the next statements overtake it).
pub const BLOCK_DETECT: Duration = Duration::from_millis(500);

/// How long the driver waits for a blocked statement to finish (the
/// database ends every lock wait within [`super::conn::LOCK_WAIT`]).
const FINISH_WAIT: Duration = Duration::from_secs(30);

/// What one scenario run did.
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// The history, Jepsen EDN.
    pub edn: String,
    /// Statements that blocked, as `T2: UPDATE ...`.
    pub blocked: Vec<String>,
    /// Transactions the database ended, as `T2: <error>`.
    pub aborted: Vec<String>,
    /// Every statement and what it returned, in order.
    pub transcript: Vec<String>,
}

/// A command to a session thread.
enum Cmd {
    Begin(Isolation),
    Rows(String),
    Exec(String),
}

type Reply = Result<Vec<(i64, i64)>, SqlError>;

/// A micro-op of the history.
#[derive(Clone, Copy, Debug)]
enum Mop {
    Read(u64, Option<i64>),
    Write(u64, u64),
}

/// How a transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Ok,
    Fail,
    Info,
}

/// A history line to write: a transaction's invocation or completion.
enum Event {
    Invoke(usize),
    Complete(usize, End),
}

/// The driver's view of a session.
struct Session {
    tx: Sender<Cmd>,
    rx: Receiver<Reply>,
    began: bool,
    /// The server's id of its connection, if the server has one.
    id: Option<i64>,
    /// The statement it is blocked in, if any.
    pending: Option<Op>,
    /// Whether its transaction ended (committed, rolled back or failed).
    ended: bool,
    mops: Vec<Mop>,
}

/// The statement of an operation on `table`.
fn statement(op: Op, table: &str, locking: bool) -> String {
    match op {
        Op::Read(ks) => {
            let ks: Vec<String> = ks.iter().map(u64::to_string).collect();
            format!("SELECT id, value FROM {table} WHERE id IN ({}) ORDER BY id", ks.join(", "))
        }
        Op::Scan => format!("SELECT id, value FROM {table} ORDER BY id"),
        Op::LockingScan if locking => format!("SELECT id, value FROM {table} ORDER BY id FOR UPDATE"),
        Op::LockingScan => format!("SELECT id, value FROM {table} ORDER BY id"),
        Op::Write(k, v) => format!("UPDATE {table} SET value = {v} WHERE id = {k}"),
        Op::Insert(k, v) => format!("INSERT INTO {table} (id, value) VALUES ({k}, {v})"),
        Op::Commit => "COMMIT".into(),
        Op::Abort => "ROLLBACK".into(),
    }
}

/// A fresh table name.
fn table_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    format!("isolde_hermitage_{}_{ms}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Runs `sc` at `level` against `target`: creates the scenario's table,
/// runs the sessions, reads the final state, drops the table.
pub fn run(target: &Target, sc: &Scenario, level: Isolation, init_sql: &[String]) -> Result<Run, String> {
    let table = table_name();
    let mut setup = target.connect(init_sql)?;
    let locking = setup.locking_reads();
    let rows: Vec<String> = INITIAL.iter().map(|(k, v)| format!("({k}, {v})")).collect();
    let err = |e: SqlError| format!("setting up the table: {}", e.message);
    setup.exec(&format!("CREATE TABLE {table} (id INT PRIMARY KEY, value INT)")).map_err(err)?;
    let result = (|| {
        setup.exec(&format!("INSERT INTO {table} (id, value) VALUES {}", rows.join(", "))).map_err(err)?;
        drive(target, sc, level, init_sql, &table, locking)
    })();
    let _ = setup.exec(&format!("DROP TABLE {table}"));
    result
}

/// Starts a session thread on a fresh connection.
fn spawn(mut conn: Box<dyn Sql>) -> Session {
    let id = conn.server_id();
    let (tx, cmds) = channel::<Cmd>();
    let (replies, rx) = channel::<Reply>();
    std::thread::spawn(move || {
        for cmd in cmds {
            let reply = match cmd {
                Cmd::Begin(level) => conn.begin(level).map(|()| Vec::new()),
                Cmd::Rows(sql) => conn.rows(&sql),
                Cmd::Exec(sql) => conn.exec(&sql).map(|()| Vec::new()),
            };
            if replies.send(reply).is_err() {
                return;
            }
        }
    });
    Session { tx, rx, began: false, id, pending: None, ended: false, mops: Vec::new() }
}

/// Sends a command and waits up to `wait` for its answer (`None`: still
/// running).
fn ask(s: &Session, cmd: Cmd, wait: Duration) -> Result<Option<Reply>, String> {
    s.tx.send(cmd).map_err(|_| "a session's connection thread ended".to_string())?;
    collect(s, wait)
}

/// Waits up to `wait` for the answer to the statement in flight.
fn collect(s: &Session, wait: Duration) -> Result<Option<Reply>, String> {
    match s.rx.recv_timeout(wait) {
        Ok(r) => Ok(Some(r)),
        Err(RecvTimeoutError::Timeout) => Ok(None),
        Err(RecvTimeoutError::Disconnected) => Err("a session's connection thread ended".into()),
    }
}

/// Waits for the answer to a statement that did not answer within
/// [`FIRST_WAIT`]: `None` when it is blocked (the server says it waits for
/// a lock; where the server cannot say, it has not answered within
/// [`BLOCK_DETECT`]).
fn blocked_or_answer(
    target: &Target,
    s: &Session,
    monitor: &mut Option<Box<dyn Sql>>,
) -> Result<Option<Reply>, String> {
    let query = s.id.and_then(|id| target.lock_wait_query(id));
    let (Some(query), Some(m)) = (query, monitor.as_mut()) else {
        return collect(s, BLOCK_DETECT.saturating_sub(FIRST_WAIT));
    };
    let t0 = std::time::Instant::now();
    loop {
        match m.rows(&query) {
            Ok(rows) if rows.first().is_some_and(|r| r.1 == 1) => return Ok(None),
            Ok(_) => {}
            // The server cannot say after all: time decides.
            Err(_) => return collect(s, BLOCK_DETECT.saturating_sub(FIRST_WAIT)),
        }
        if let Some(r) = collect(s, Duration::from_millis(20))? {
            return Ok(Some(r));
        }
        if t0.elapsed() > FINISH_WAIT {
            return Err(format!("a statement neither answered nor waited for a lock in {FINISH_WAIT:?}"));
        }
    }
}

/// The driver: runs every statement, then the final read.
fn drive(
    target: &Target,
    sc: &Scenario,
    level: Isolation,
    init_sql: &[String],
    table: &str,
    locking: bool,
) -> Result<Run, String> {
    let mut sessions = Vec::with_capacity(sc.sessions);
    for _ in 0..sc.sessions {
        sessions.push(spawn(target.connect(init_sql)?));
    }
    // Asks the server which sessions wait for a lock, where it can say.
    let mut monitor = match sessions.first().and_then(|s| s.id).and_then(|id| target.lock_wait_query(id)) {
        Some(_) => Some(target.connect(init_sql)?),
        None => None,
    };
    let mut run = Run::default();
    let mut events: Vec<Event> = Vec::new();
    let mut ends: Vec<Option<End>> = vec![None; sc.sessions];
    let name = |i: usize| format!("T{}", i + 1);
    for st in sc.steps {
        let i = st.session;
        if let Some(op) = sessions[i].pending.take() {
            let r = collect(&sessions[i], FINISH_WAIT)?
                .ok_or_else(|| format!("{}: a blocked statement did not finish in {FINISH_WAIT:?}", name(i)))?;
            finish(&mut sessions[i], i, op, r, &mut run, &mut events, &mut ends);
        }
        let sql = statement(st.op, table, locking);
        // Shown with Hermitage's table name.
        let shown = statement(st.op, "test", locking);
        if sessions[i].ended {
            run.transcript.push(format!("{}: {shown}  -- skipped: the transaction already ended", name(i)));
            continue;
        }
        if !sessions[i].began {
            sessions[i].began = true;
            events.push(Event::Invoke(i));
            let r = ask(&sessions[i], Cmd::Begin(level), FINISH_WAIT)?.ok_or("BEGIN did not answer")?;
            if let Err(e) = r {
                run.transcript.push(format!("{}: BEGIN ({}) -> {}", name(i), level.sql(), e.message));
                fail(&mut sessions[i], i, &e, &mut run, &mut events, &mut ends);
                continue;
            }
        }
        let cmd = match st.op {
            Op::Read(_) | Op::Scan | Op::LockingScan => Cmd::Rows(sql.clone()),
            _ => Cmd::Exec(sql.clone()),
        };
        let answer = match ask(&sessions[i], cmd, FIRST_WAIT)? {
            Some(r) => Some(r),
            None => blocked_or_answer(target, &sessions[i], &mut monitor)?,
        };
        match answer {
            Some(r) => {
                run.transcript.push(format!("{}: {shown}", name(i)));
                finish(&mut sessions[i], i, st.op, r, &mut run, &mut events, &mut ends);
            }
            None => {
                let unexpected = if st.blocks { "" } else { " (Hermitage's script does not say it blocks)" };
                run.transcript.push(format!("{}: {shown}  -- BLOCKS{unexpected}", name(i)));
                run.blocked.push(format!("{}: {shown}", name(i)));
                sessions[i].pending = Some(st.op);
            }
        }
        // A statement just answered may have released a blocked one.
        for (j, s) in sessions.iter_mut().enumerate() {
            if let Some(op) = s.pending {
                if let Some(r) = collect(s, Duration::from_millis(50))? {
                    s.pending = None;
                    run.transcript.push(format!("{}: (the blocked statement finished)", name(j)));
                    finish(s, j, op, r, &mut run, &mut events, &mut ends);
                }
            }
        }
    }
    for (j, s) in sessions.iter_mut().enumerate() {
        if let Some(op) = s.pending.take() {
            let r = collect(s, FINISH_WAIT)?
                .ok_or_else(|| format!("{}: a blocked statement did not finish in {FINISH_WAIT:?}", name(j)))?;
            finish(s, j, op, r, &mut run, &mut events, &mut ends);
        }
    }
    // Every transaction has ended: the sessions' threads end with their
    // channels.
    let mops: Vec<Vec<Mop>> = sessions.iter().map(|s| s.mops.clone()).collect();
    drop(sessions);
    let final_read = read_all(target, level, init_sql, table, locking)?;
    run.edn = history(sc.sessions, &events, &mops, &final_read);
    // Messages name the table as Hermitage does.
    for line in run.transcript.iter_mut().chain(run.aborted.iter_mut()).chain(run.blocked.iter_mut()) {
        *line = line.replace(table, "test");
    }
    Ok(run)
}

/// The table's rows as read by a last transaction at `level`.
fn read_all(
    target: &Target,
    level: Isolation,
    init_sql: &[String],
    table: &str,
    locking: bool,
) -> Result<Vec<(i64, i64)>, String> {
    let mut c = target.connect(init_sql)?;
    let e = |e: SqlError| format!("the final read: {}", e.message);
    c.begin(level).map_err(e)?;
    let rows = c.rows(&statement(Op::Scan, table, locking)).map_err(e)?;
    c.exec("COMMIT").map_err(e)?;
    Ok(rows)
}

/// Records the answer to a statement of session `i`.
fn finish(
    s: &mut Session,
    i: usize,
    op: Op,
    reply: Reply,
    run: &mut Run,
    events: &mut Vec<Event>,
    ends: &mut [Option<End>],
) {
    let rows = match reply {
        Ok(rows) => rows,
        Err(e) => {
            run.transcript.push(format!("T{}:   -> {}", i + 1, e.message));
            if op == Op::Commit && e.class == ErrorClass::Unknown {
                // COMMIT was sent and the answer says nothing certain.
                s.ended = true;
                ends[i] = Some(End::Info);
                events.push(Event::Complete(i, End::Info));
                run.aborted.push(format!("T{}: {} (outcome unknown)", i + 1, e.message));
                return;
            }
            fail(s, i, &e, run, events, ends);
            return;
        }
    };
    let value = |k: u64| rows.iter().find(|(id, _)| *id as u64 == k).map(|&(_, v)| v);
    match op {
        Op::Read(ks) => s.mops.extend(ks.iter().map(|&k| Mop::Read(k, value(k)))),
        Op::Scan | Op::LockingScan => s.mops.extend(KEYS.iter().map(|&k| Mop::Read(k, value(k)))),
        Op::Write(k, v) | Op::Insert(k, v) => s.mops.push(Mop::Write(k, v)),
        Op::Commit | Op::Abort => {
            let end = if op == Op::Commit { End::Ok } else { End::Fail };
            s.ended = true;
            ends[i] = Some(end);
            events.push(Event::Complete(i, end));
        }
    }
    if !rows.is_empty() {
        let shown: Vec<String> = rows.iter().map(|(k, v)| format!("{k} => {v}")).collect();
        run.transcript.push(format!("T{}:   -> {}", i + 1, shown.join(", ")));
    }
}

/// Ends session `i`'s transaction after a failed statement: rolls back
/// (best effort) and records a `:fail`.
fn fail(s: &mut Session, i: usize, e: &SqlError, run: &mut Run, events: &mut Vec<Event>, ends: &mut [Option<End>]) {
    let _ = ask(s, Cmd::Exec("ROLLBACK".into()), FINISH_WAIT);
    s.ended = true;
    ends[i] = Some(End::Fail);
    events.push(Event::Complete(i, End::Fail));
    run.aborted.push(format!("T{}: {}", i + 1, e.message));
}

/// Renders the history: the initial rows' transaction (process `n`), the
/// sessions' transactions in event order, the final read (process `n + 1`).
fn history(n: usize, events: &[Event], mops: &[Vec<Mop>], final_read: &[(i64, i64)]) -> String {
    let mut lines: Vec<(String, usize, Vec<Mop>, bool)> = Vec::new();
    let init: Vec<Mop> = INITIAL.iter().map(|&(k, v)| Mop::Write(k, v)).collect();
    lines.push(("invoke".into(), n, init.clone(), false));
    lines.push(("ok".into(), n, init, true));
    for ev in events {
        match *ev {
            Event::Invoke(i) => lines.push(("invoke".into(), i, mops[i].clone(), false)),
            Event::Complete(i, end) => {
                let ty = match end {
                    End::Ok => "ok",
                    End::Fail => "fail",
                    End::Info => "info",
                };
                lines.push((ty.into(), i, mops[i].clone(), end == End::Ok));
            }
        }
    }
    let last: Vec<Mop> = KEYS
        .iter()
        .map(|&k| Mop::Read(k, final_read.iter().find(|(id, _)| *id as u64 == k).map(|&(_, v)| v)))
        .collect();
    lines.push(("invoke".into(), n + 1, last.clone(), false));
    lines.push(("ok".into(), n + 1, last, true));
    let mut out = String::new();
    for (index, (ty, p, mops, values)) in lines.iter().enumerate() {
        let ms: Vec<String> = mops
            .iter()
            .map(|m| match *m {
                Mop::Read(k, Some(v)) if *values => format!("[:r {k} {v}]"),
                Mop::Read(k, _) => format!("[:r {k} nil]"),
                Mop::Write(k, v) => format!("[:w {k} {v}]"),
            })
            .collect();
        out.push_str(&format!(
            "{{:type :{ty}, :f :txn, :value [{}], :process {p}, :time {index}, :index {index}}}\n",
            ms.join(" ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histories_are_jepsen_edn_with_invocations_before_completions() {
        let events = [Event::Invoke(0), Event::Invoke(1), Event::Complete(1, End::Fail), Event::Complete(0, End::Ok)];
        let mops = vec![vec![Mop::Read(1, Some(10)), Mop::Write(1, 11)], vec![Mop::Read(2, None)]];
        let edn = history(2, &events, &mops, &[(1, 11), (2, 20)]);
        let lines: Vec<&str> = edn.lines().collect();
        assert_eq!(lines.len(), 8);
        assert_eq!(lines[0], "{:type :invoke, :f :txn, :value [[:w 1 10] [:w 2 20]], :process 2, :time 0, :index 0}");
        assert_eq!(lines[2], "{:type :invoke, :f :txn, :value [[:r 1 nil] [:w 1 11]], :process 0, :time 2, :index 2}");
        assert_eq!(lines[4], "{:type :fail, :f :txn, :value [[:r 2 nil]], :process 1, :time 4, :index 4}");
        assert_eq!(lines[5], "{:type :ok, :f :txn, :value [[:r 1 10] [:w 1 11]], :process 0, :time 5, :index 5}");
        assert_eq!(
            lines[7],
            "{:type :ok, :f :txn, :value [[:r 1 11] [:r 2 20] [:r 3 nil] [:r 4 nil]], :process 3, :time 7, :index 7}"
        );
        // It parses, as isolde reads histories.
        crate::ingest::read_bytes("h.edn", edn.as_bytes(), crate::ingest::Format::Edn).expect("parses");
    }
}
