//! Throughput of `isolde record` per backend, against a plain client loop
//! running the same transactions through the same drivers and statements
//! without recording anything (no history file, no shared transaction
//! source): the ratio shows what recording costs on top of the database.
//!
//! Run by `scripts/bench-record.sh` (which starts the throwaway servers);
//! by hand: `cargo run --release --example record_bench`, with
//! `ISOLDE_POSTGRES_URL` / `ISOLDE_MYSQL_URL` set to include those servers.
//! `BENCH_TXNS` (default 20000), `BENCH_SESSIONS` (8) and `BENCH_WORKLOAD`
//! (list-append) shape the run; transactions run at read committed.
//! Prints a markdown table on stdout.

use std::time::Instant;

use clap::Parser;
use isolde::record::run::{record, Plan};
use isolde::record::{sqlite::Sqlite, Backend, Database, Mop, RecordArgs, RecordError};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: RecordArgs,
}

fn env(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn main() -> Result<(), RecordError> {
    let txns = env("BENCH_TXNS", "20000");
    let sessions = env("BENCH_SESSIONS", "8");
    let workload = env("BENCH_WORKLOAD", "list-append");
    let args = Cli::parse_from([
        "bench",
        "--workload",
        &workload,
        "--isolation",
        "read-committed",
        "--txns",
        &txns,
        "--sessions",
        &sessions,
    ])
    .args;
    println!("| backend | workload | txns | sessions | plain loop txn/s | isolde record txn/s | record / plain |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    bench("sqlite", || Sqlite::open(None, args.workload), &args)?;
    #[cfg(feature = "postgres")]
    if let Ok(url) = std::env::var("ISOLDE_POSTGRES_URL") {
        bench("postgresql", || isolde::record::postgres::Postgres::open(&url, args.workload), &args)?;
    }
    #[cfg(feature = "mysql")]
    if let Ok(url) = std::env::var("ISOLDE_MYSQL_URL") {
        bench("mariadb", || isolde::record::mysql::Mysql::open(&url, args.workload), &args)?;
    }
    Ok(())
}

/// Times the plain loop, then the recorder, each on fresh tables from
/// `open`, with the same transactions.
fn bench<D: Database>(
    name: &str,
    open: impl Fn() -> Result<D, RecordError>,
    args: &RecordArgs,
) -> Result<(), RecordError> {
    let mut plan = Plan::from_args(args)?;
    let n = plan.txns.unwrap_or(0) as usize;
    let mut txns: Vec<Vec<Mop>> = Vec::with_capacity(n);
    for _ in 0..n {
        let mut t = Vec::new();
        plan.source.next_txn(&mut t);
        txns.push(t);
    }
    let db = open()?;
    let plain = plain_loop(&db, plan.isolation, plan.sessions, &txns);
    db.teardown()?;
    let plain = plain?;
    let db = open()?;
    let dir = std::env::temp_dir().join(format!("isolde-record-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|source| RecordError::Output { path: dir.display().to_string(), source })?;
    let path = dir.join("history.edn");
    let file = std::fs::File::create(&path)
        .map_err(|source| RecordError::Output { path: path.display().to_string(), source })?;
    let t0 = Instant::now();
    let stats = record(&db, Plan::from_args(args)?, std::io::BufWriter::new(file), false);
    db.teardown()?;
    let stats = stats?;
    let rec = stats.invoked as f64 / t0.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "| {name} | {} | {n} | {} | {plain:.0} | {rec:.0} | {:.2} |",
        args.workload.name(),
        plan.sessions,
        rec / plain
    );
    Ok(())
}

/// Runs `txns` on `sessions` connections, each session taking the next
/// transaction when it is free (as the recorder does, so the sessions
/// contend on the same keys), recording nothing; returns transactions per
/// second.
fn plain_loop<D: Database>(
    db: &D,
    level: isolde::record::Isolation,
    sessions: usize,
    txns: &[Vec<Mop>],
) -> Result<f64, RecordError> {
    let conns: Vec<D::Session> = (0..sessions).map(|_| db.connect()).collect::<Result<_, _>>()?;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for mut conn in conns {
            let next = &next;
            s.spawn(move || {
                while let Some(t) = txns.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    let writes = t.iter().any(|m| !m.reads());
                    let body = (|| {
                        conn.begin(level, writes)?;
                        for m in t {
                            match *m {
                                Mop::Read(k) => drop(conn.read(k)?),
                                Mop::PredRead(p) => drop(conn.pred_read(p)?),
                                Mop::Write(k, v) => conn.write(k, v)?,
                                Mop::Append(k, v) => conn.append(k, v)?,
                                Mop::Insert(k, v) => conn.insert(k, v)?,
                                Mop::Delete(k) => conn.delete(k)?,
                            }
                        }
                        conn.commit()
                    })();
                    if let Err(e) = body {
                        if std::env::var_os("BENCH_DEBUG").is_some() {
                            eprintln!("{e}");
                        }
                        let _ = conn.rollback();
                    }
                }
            });
        }
    });
    Ok(txns.len() as f64 / t0.elapsed().as_secs_f64())
}
