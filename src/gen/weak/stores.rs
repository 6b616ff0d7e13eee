//! The four weak stores (see the module doc of [`super`] for why each gives
//! its level). They decide which version of a key each read sees; the
//! workload ([`Data`]) keeps the versions and writes the micro-ops.

use super::super::sim::IntMap;
use super::super::txn::{DrawnMop, TxnSource};
use super::{reads_own_write, written_keys, Data, Gen, Outcome};
use std::io::{self, Write};

/// The version of `key` a state holds (`0`: initial).
fn version(state: &IntMap<u32>, key: u64) -> u32 {
    state.get(&key).copied().unwrap_or(0)
}

/// The versions `mops` read from `state` (`0` for writes).
fn read_all(mops: &[DrawnMop], state: &IntMap<u32>, seen: &mut Vec<u32>) {
    seen.clear();
    seen.extend(mops.iter().map(|m| match *m {
        DrawnMop::Read(k) => version(state, k),
        _ => 0,
    }));
}

/// Read committed: interleaved transactions over one store.
pub(super) fn read_committed<D: Data, W: Write>(
    g: &mut Gen<W>,
    src: &mut TxnSource,
    d: &mut D,
    txns: usize,
    p: usize,
) -> io::Result<()> {
    struct Client {
        mops: Vec<DrawnMop>,
        seen: Vec<u32>,
        outcome: Outcome,
    }
    // The latest committed version of each key.
    let mut store: IntMap<u32> = IntMap::default();
    let mut clients: Vec<Option<Client>> = (0..p).map(|_| None).collect();
    let (mut started, mut done) = (0usize, 0usize);
    while done < txns {
        let c = g.rng.below(p as u64) as usize;
        if clients[c].is_none() {
            if started == txns {
                continue;
            }
            let mut mops = Vec::new();
            src.next_txn(&mut mops);
            let outcome = g.outcome();
            clients[c] = Some(Client { mops, seen: Vec::new(), outcome });
            started += 1;
        }
        let Some(cl) = clients[c].as_mut() else { continue };
        if let Some(&m) = cl.mops.get(cl.seen.len()) {
            cl.seen.push(match m {
                DrawnMop::Read(k) => version(&store, k),
                _ => 0,
            });
            continue;
        }
        let Some(cl) = clients[c].take() else { continue };
        let mut outcome = cl.outcome;
        if D::IN_ORDER && list_conflict(&cl.mops, &cl.seen, &store) {
            outcome = outcome.aborted();
        }
        if outcome.takes_effect() {
            for k in written_keys(&cl.mops) {
                store.insert(k, d.commit(k, &cl.mops));
            }
        }
        g.emit(d, c, &cl.mops, &cl.seen, outcome)?;
        done += 1;
    }
    Ok(())
}

/// Whether a list transaction of the read committed store must abort: it
/// read a key twice and saw two versions, or read its own append of a key
/// that has a newer version now.
fn list_conflict(mops: &[DrawnMop], seen: &[u32], store: &IntMap<u32>) -> bool {
    (0..mops.len()).any(|i| match mops[i] {
        DrawnMop::Read(k) => {
            (0..i).any(|j| mops[j] == mops[i] && seen[j] != seen[i])
                || (reads_own_write(mops, i) && version(store, k) != seen[i])
        }
        _ => false,
    })
}

/// A committed transaction shipped to the other replicas.
struct Shipped {
    /// The versions it committed: (key, version).
    writes: Vec<(u64, u32)>,
    /// Per origin, how many of its transactions the committing replica had
    /// applied (causal delivery only).
    deps: Vec<u32>,
}

/// The replicas of [`replicated`].
struct Replicas {
    /// Per replica, the version of each key it shows.
    state: Vec<IntMap<u32>>,
    /// `log[o]`: the transactions of origin `o` that took effect, in order.
    log: Vec<Vec<Shipped>>,
    /// `applied[r][o]`: how many of `log[o]` replica `r` has applied.
    applied: Vec<Vec<u32>>,
}

impl Replicas {
    /// Whether replica `r` may apply `t` now: (causal) everything its
    /// origin had applied, and (`in_order`) the version before each of its
    /// writes.
    fn ready(&self, r: usize, o: usize, t: &Shipped, causal: bool, in_order: bool) -> bool {
        let deps_met = !causal || t.deps.iter().zip(&self.applied[r]).enumerate().all(|(i, (&d, &a))| i == o || d <= a);
        deps_met && (!in_order || t.writes.iter().all(|&(k, v)| version(&self.state[r], k) + 1 == v))
    }

    /// Applies the next transaction of origin `o` at replica `r` (the
    /// latest version of each key wins).
    fn apply(&mut self, r: usize, o: usize) {
        let t = &self.log[o][self.applied[r][o] as usize];
        for &(k, v) in &t.writes {
            let e = self.state[r].entry(k).or_insert(0);
            if v > *e {
                *e = v;
            }
        }
        self.applied[r][o] += 1;
    }

    /// Applies at replica `r` the transactions of origin `o` up to its
    /// `idx`-th, and first whatever each of them needs (`ready`): earlier
    /// transactions of its origin, (causal) what its origin had applied,
    /// and (`writers`, lists) the earlier versions of the keys it writes.
    /// Everything needed committed earlier, so this terminates.
    fn require(&mut self, r: usize, o: usize, idx: u32, causal: bool, writers: Option<&IntMap<Vec<(u32, u32)>>>) {
        let mut todo = vec![(o as u32, idx)];
        while let Some(&(o, idx)) = todo.last() {
            let o = o as usize;
            if self.applied[r][o] > idx {
                todo.pop();
                continue;
            }
            let t = &self.log[o][self.applied[r][o] as usize];
            let dep = t
                .deps
                .iter()
                .enumerate()
                .filter(|&(i, &d)| causal && i != o && d > self.applied[r][i])
                .map(|(i, &d)| (i as u32, d - 1))
                .next()
                .or_else(|| {
                    let writers = writers?;
                    t.writes
                        .iter()
                        .find(|&&(k, v)| version(&self.state[r], k) + 1 < v)
                        .map(|&(k, v)| writers[&k][v as usize - 2])
                });
            match dep {
                Some(d) => todo.push(d),
                None => self.apply(r, o),
            }
        }
    }
}

/// Read atomic (`causal == false`) and causal consistency: a replica per
/// client, transactions shipped to the others and applied atomically later.
pub(super) fn replicated<D: Data, W: Write>(
    g: &mut Gen<W>,
    src: &mut TxnSource,
    d: &mut D,
    txns: usize,
    p: usize,
    causal: bool,
) -> io::Result<()> {
    let mut rs = Replicas {
        state: (0..p).map(|_| IntMap::default()).collect(),
        log: (0..p).map(|_| Vec::new()).collect(),
        applied: vec![vec![0; p]; p],
    };
    // Lists: the writer of each version of each key, as (origin, index in
    // the origin's log).
    let mut writers: IntMap<Vec<(u32, u32)>> = IntMap::default();
    let (mut mops, mut seen) = (Vec::new(), Vec::new());
    for _ in 0..txns {
        let c = g.rng.below(p as u64) as usize;
        // Deliver some of what the other replicas shipped.
        for o in 0..p {
            if o == c || !g.rng.chance(0.5) {
                continue;
            }
            let lag = g.rng.below(4) as usize;
            while (rs.applied[c][o] as usize) + lag < rs.log[o].len() {
                if !rs.ready(c, o, &rs.log[o][rs.applied[c][o] as usize], causal, D::IN_ORDER) {
                    break;
                }
                rs.apply(c, o);
            }
        }
        src.next_txn(&mut mops);
        let outcome = g.outcome();
        let keys = written_keys(&mops);
        if D::IN_ORDER {
            // An append extends the whole list: first apply every version
            // of the keys written (and what those need).
            for k in &keys {
                if let Some(&(o, idx)) = writers.get(k).and_then(|w| w.last()) {
                    rs.require(c, o as usize, idx, causal, Some(&writers));
                }
            }
        }
        read_all(&mops, &rs.state[c], &mut seen);
        if outcome.takes_effect() {
            let at = (c as u32, rs.log[c].len() as u32);
            let mut writes = Vec::with_capacity(keys.len());
            for k in keys {
                let v = d.commit(k, &mops);
                rs.state[c].insert(k, v);
                if D::IN_ORDER {
                    writers.entry(k).or_default().push(at);
                }
                writes.push((k, v));
            }
            let deps = if causal { rs.applied[c].clone() } else { Vec::new() };
            rs.log[c].push(Shipped { writes, deps });
            rs.applied[c][c] += 1;
        }
        g.emit(d, c, &mops, &seen, outcome)?;
    }
    Ok(())
}

/// Prefix consistency: sessions read growing prefixes of one log.
pub(super) fn prefix<D: Data, W: Write>(
    g: &mut Gen<W>,
    src: &mut TxnSource,
    d: &mut D,
    txns: usize,
    p: usize,
) -> io::Result<()> {
    // Per key, the log position of each version.
    let mut versions: IntMap<Vec<u64>> = IntMap::default();
    let mut log_len = 0u64;
    let mut prefix = vec![0u64; p];
    let (mut mops, mut seen) = (Vec::new(), Vec::new());
    for _ in 0..txns {
        let c = g.rng.below(p as u64) as usize;
        let behind = log_len - prefix[c];
        prefix[c] += g.rng.below(behind.min(8) + 1).max(behind.saturating_sub(8));
        src.next_txn(&mut mops);
        let outcome = g.outcome();
        if D::IN_ORDER {
            // A read of the transaction's own append shows the whole list.
            for i in (0..mops.len()).filter(|&i| reads_own_write(&mops, i)) {
                if let Some(&last) = versions.get(&mops[i].key()).and_then(|v| v.last()) {
                    prefix[c] = prefix[c].max(last + 1);
                }
            }
        }
        let snap = prefix[c];
        seen.clear();
        seen.extend(mops.iter().map(|m| match *m {
            DrawnMop::Read(k) => versions.get(&k).map_or(0, |vs| vs.partition_point(|&at| at < snap) as u32),
            _ => 0,
        }));
        if outcome.takes_effect() {
            for k in written_keys(&mops) {
                let v = d.commit(k, &mops);
                let vs = versions.entry(k).or_default();
                vs.push(log_len);
                debug_assert_eq!(vs.len() as u32, v);
            }
            log_len += 1;
            prefix[c] = log_len;
        }
        g.emit(d, c, &mops, &seen, outcome)?;
    }
    Ok(())
}
