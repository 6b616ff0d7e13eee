//! Cobra client-log directories written by tests: the binary records of
//! CobraBench's logs (big-endian, one-byte tags `S`, `C`, `W`, `R`), and a
//! small serial "database" whose clients run register transactions with
//! Cobra's fences (every few transactions a client reads the epoch key and,
//! when the epoch there is its own, writes the next one: a write fence;
//! when it is newer, adopts it: a read fence).

use std::path::Path;

/// Cobra's epoch key `FZVERSION` as its logs hold it (signed).
pub const EPOCH_KEY: i64 = 0xb887_3aa8_2ef6_c6d3_u64 as i64;
/// Cobra's id of the initial-state writer.
pub const INIT_ID: i64 = 0xbebe_ebee;

/// `S` or `C` record.
pub fn sc(tag: u8, id: i64) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&id.to_be_bytes());
    v
}

/// `W` record.
pub fn w(write_id: i64, key: i64, value: i64) -> Vec<u8> {
    let mut v = vec![b'W'];
    for x in [write_id, key, value] {
        v.extend_from_slice(&x.to_be_bytes());
    }
    v
}

/// `R` record.
pub fn r(writer: i64, write_id: i64, key: i64, value: i64) -> Vec<u8> {
    let mut v = vec![b'R'];
    for x in [writer, write_id, key, value] {
        v.extend_from_slice(&x.to_be_bytes());
    }
    v
}

/// What a generated directory looks like.
#[derive(Clone, Debug)]
pub struct Shape {
    /// Clients (logs `T0.log` …).
    pub clients: usize,
    /// Transactions per client, fences not counted.
    pub txns: usize,
    /// Keys.
    pub keys: i64,
    /// A fence after every this many transactions.
    pub fence_every: usize,
    /// Clients that never write the epoch key (their fences all read).
    pub readers_only: Vec<usize>,
    /// Seed of the choices.
    pub seed: u64,
}

/// A planted fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plant {
    /// None: the history is serial.
    None,
    /// At this global step (or the first after it where its client has
    /// written before), a read shows the version before its client's own
    /// last write of a key (a stale read, after the write in session
    /// order: `G-single-item-process` at every session level).
    StaleRead(usize),
    /// At this global step, a read shows a write id nobody wrote.
    GarbageRead(usize),
}

/// One register value: writer transaction id, write id.
type Version = (i64, i64);

/// A small serial database: every transaction runs alone, so the logs are
/// serializable unless a fault is planted.
struct Db {
    rng: u64,
    values: std::collections::HashMap<i64, Vec<Version>>,
    next_txn: i64,
    next_write: i64,
    /// Per write id of the epoch key, its epoch.
    epochs: std::collections::HashMap<i64, u64>,
}

impl Db {
    fn rand(&mut self, n: u64) -> u64 {
        self.rng = self.rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.rng >> 33) % n.max(1)
    }

    fn read(&self, key: i64) -> Vec<u8> {
        let versions = self.values.get(&key).map(|v| &v[..]).unwrap_or(&[]);
        Self::record(key, versions.last().copied())
    }

    /// A read of the version before write `id` of `key`.
    fn read_before(&self, key: i64, id: i64) -> Vec<u8> {
        let versions = &self.values[&key];
        let at = versions.iter().position(|v| v.1 == id).expect("own write");
        Self::record(key, at.checked_sub(1).map(|i| versions[i]))
    }

    fn record(key: i64, version: Option<Version>) -> Vec<u8> {
        match version {
            Some((writer, id)) => r(writer, id, key, id.wrapping_mul(7)),
            None => r(INIT_ID, INIT_ID, key, 0),
        }
    }

    fn write(&mut self, txn: i64, key: i64) -> (Vec<u8>, i64) {
        self.next_write += 1;
        let id = self.next_write.wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64) | 1;
        self.values.entry(key).or_default().push((txn, id));
        (w(id, key, id.wrapping_mul(7)), id)
    }
}

/// Writes the logs of `shape` into `dir`, with `plant`; returns the number
/// of transactions written (fences included).
pub fn write_dir(dir: &Path, shape: &Shape, plant: Plant) -> usize {
    let mut db = Db {
        rng: shape.seed ^ 0x5DEE_CE66,
        values: Default::default(),
        next_txn: 0x1_0000_0000,
        next_write: 0,
        epochs: Default::default(),
    };
    let mut logs = vec![Vec::new(); shape.clients];
    let mut done = vec![0usize; shape.clients];
    let mut epoch = vec![0u64; shape.clients];
    let mut since_fence = vec![0usize; shape.clients];
    let mut own = vec![None; shape.clients];
    let (mut step, mut total, mut planted) = (0usize, 0usize, false);
    while done.iter().any(|&d| d < shape.txns) {
        let c = db.rand(shape.clients as u64) as usize;
        if done[c] >= shape.txns {
            continue;
        }
        db.next_txn += 1;
        let id = db.next_txn;
        let mut log = sc(b'S', id);
        if since_fence[c] == shape.fence_every {
            since_fence[c] = 0;
            let seen = db.values.get(&EPOCH_KEY).and_then(|v| v.last().copied());
            let now = seen.map_or(0, |(_, wid)| db.epochs[&wid]);
            log.extend(db.read(EPOCH_KEY));
            if now == epoch[c] && !shape.readers_only.contains(&c) {
                let (bytes, wid) = db.write(id, EPOCH_KEY);
                db.epochs.insert(wid, now + 1);
                epoch[c] = now + 1;
                log.extend(bytes);
            } else {
                epoch[c] = epoch[c].max(now);
            }
        } else {
            since_fence[c] += 1;
            done[c] += 1;
            if let (Plant::StaleRead(at), Some((key, wid)), false) = (plant, own[c], planted) {
                if step >= at {
                    log.extend(db.read_before(key, wid));
                    planted = true;
                }
            }
            for _ in 0..1 + db.rand(3) {
                let key = 1 + db.rand(shape.keys as u64) as i64;
                if db.rand(2) == 0 {
                    let (bytes, wid) = db.write(id, key);
                    own[c] = Some((key, wid));
                    log.extend(bytes);
                } else if plant == Plant::GarbageRead(step) {
                    log.extend(r(id - 1, 0x0BAD_0BAD, key, 1));
                } else {
                    log.extend(db.read(key));
                }
            }
            step += 1;
        }
        log.extend(sc(b'C', id));
        logs[c].extend(log);
        total += 1;
    }
    for (c, log) in logs.iter().enumerate() {
        std::fs::write(dir.join(format!("T{c}.log")), log).expect("writes a log");
    }
    total
}
