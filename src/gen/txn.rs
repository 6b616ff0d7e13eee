//! Drawing transactions: which keys each transaction touches, whether each
//! micro-op reads or writes, and the unique value every write carries.
//!
//! Shared by the simulated generators ([`super::rw_register`] and
//! [`super::list_append`], which run the drawn transactions against an
//! in-memory store) and by `isolde record` (which runs them against a real
//! database through [`TxnSource`]), so both produce the same workloads from
//! the same knobs and seed.
//!
//! * Registers draw keys from `0..keys` per [`RwKeyDist`]; write values are
//!   `1, 2, 3, ...` per key.
//! * Lists draw keys from Elle's window of active keys per [`KeyDist`];
//!   append values are `1, 2, 3, ...` per key, and a key that has been handed
//!   `max_writes_per_key` appends is retired and replaced in the window by
//!   the next unused integer (Elle's `fresh-key`).
//!
//! A [`Pattern`] shapes each transaction: Elle's and PolySI's mix of random
//! reads and writes, read-modify-write of each key, or the write-skew shape
//! (read two keys, write one).

use super::config::{KeyDist, ListAppendConfig, RwKeyDist, RwRegisterConfig};
use super::rng::Rng;
use super::sim::IntMap;
use super::zipf::Zipf;

/// The shape of each drawn transaction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pattern {
    /// `min_txn_len..=max_txn_len` micro-ops, each a read with probability
    /// `read_fraction`, else a write, of an independently drawn key (Elle's
    /// and PolySI's workloads; what `isolde gen` simulates).
    #[default]
    Mixed,
    /// `min_txn_len..=max_txn_len` pairs: read a drawn key, then write it.
    /// Two concurrent transactions that read the same version of a key and
    /// both write it are a lost update unless the database stops one.
    ReadModifyWrite,
    /// Read two distinct drawn keys, then write one of them (chosen by a
    /// coin flip): the write-skew shape, which snapshot isolation allows and
    /// serializability forbids. Needs a key space of at least two keys.
    WriteSkew,
}

impl Pattern {
    /// The pattern's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Mixed => "mixed",
            Pattern::ReadModifyWrite => "rmw",
            Pattern::WriteSkew => "write-skew",
        }
    }
}

/// Transaction length and read mix.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub min_len: usize,
    pub max_len: usize,
    pub read_fraction: f64,
}

/// A key space a transaction is drawn from. A slot is whatever identifies a
/// drawn key until its micro-op is emitted (the key itself for registers,
/// its window position for lists).
pub(crate) trait Draw {
    /// A drawn key.
    type Slot: Copy;
    /// Draws a key.
    fn pick(&mut self, rng: &mut Rng) -> Self::Slot;
    /// The key a slot stands for now.
    fn key(&self, s: Self::Slot) -> u64;
    /// Emits a read of the slot's key.
    fn read(&mut self, s: Self::Slot);
    /// Emits a write of the slot's key, allocating its value.
    fn write(&mut self, s: Self::Slot);
}

/// Tries at drawing a second key distinct from the first for
/// [`Pattern::WriteSkew`] before settling for the same key (only extremely
/// skewed distributions over tiny key spaces get there).
const DISTINCT_TRIES: usize = 64;

/// Draws one transaction of `pattern` from `d`. The random draws for
/// [`Pattern::Mixed`] are, in order: the length, then per micro-op the key
/// and the read coin (the generators' output per seed depends on it).
pub(crate) fn draw_txn<D: Draw>(rng: &mut Rng, shape: &Shape, pattern: Pattern, d: &mut D) {
    match pattern {
        Pattern::Mixed => {
            let len = rng.range_inclusive(shape.min_len as u64, shape.max_len as u64);
            for _ in 0..len {
                let s = d.pick(rng);
                if rng.chance(shape.read_fraction) {
                    d.read(s);
                } else {
                    d.write(s);
                }
            }
        }
        Pattern::ReadModifyWrite => {
            let len = rng.range_inclusive(shape.min_len as u64, shape.max_len as u64);
            for _ in 0..len {
                let s = d.pick(rng);
                d.read(s);
                d.write(s);
            }
        }
        Pattern::WriteSkew => {
            let a = d.pick(rng);
            let mut b = d.pick(rng);
            for _ in 1..DISTINCT_TRIES {
                if d.key(b) != d.key(a) {
                    break;
                }
                b = d.pick(rng);
            }
            d.read(a);
            d.read(b);
            d.write(if rng.chance(0.5) { a } else { b });
        }
    }
}

/// Draws register keys per [`RwKeyDist`] from `0..keys`.
pub(crate) enum RwKeyPicker {
    Uniform(u64),
    Zipf(Zipf),
    /// Keys `0..hot` are hot, `hot..hot + cold` cold.
    Hotspot {
        hot: u64,
        cold: u64,
        p: f64,
    },
}

impl RwKeyPicker {
    pub(crate) fn new(dist: RwKeyDist, keys: u64) -> Self {
        match dist {
            RwKeyDist::Uniform => RwKeyPicker::Uniform(keys),
            RwKeyDist::Zipf(s) => RwKeyPicker::Zipf(Zipf::new(keys, s)),
            RwKeyDist::Hotspot { hot_fraction, hot_probability } => {
                // Rounded, not ceiled: 0.07 * 100 is 7.000000000000001.
                let hot = ((hot_fraction * keys as f64).round() as u64).clamp(1, keys);
                RwKeyPicker::Hotspot { hot, cold: keys - hot, p: hot_probability }
            }
        }
    }

    #[inline]
    pub(crate) fn pick(&self, rng: &mut Rng) -> u64 {
        match *self {
            RwKeyPicker::Uniform(n) => rng.below(n),
            RwKeyPicker::Zipf(ref z) => z.sample(rng) - 1,
            RwKeyPicker::Hotspot { hot, cold, p } => {
                if cold == 0 || rng.chance(p) {
                    rng.below(hot)
                } else {
                    hot + rng.below(cold)
                }
            }
        }
    }
}

/// Picks window positions per [`KeyDist`].
struct WindowPicker {
    dist: KeyDist,
    n: usize,
    /// Number of top window positions the exponential draw ranges over:
    /// positions below `n - m` have probability < 2^-60 and are skipped so
    /// that `2^m` stays finite.
    m: usize,
    scale: f64,
}

impl WindowPicker {
    const BASE: f64 = 2.0;

    fn new(dist: KeyDist, n: usize) -> Self {
        let m = n.min(60);
        // Elle's key-dist-scale: (base^m - 1) * base / (base - 1).
        let scale = (Self::BASE.powi(m as i32) - 1.0) * Self::BASE / (Self::BASE - 1.0);
        WindowPicker { dist, n, m, scale }
    }

    #[inline]
    fn pick(&self, rng: &mut Rng) -> usize {
        match self.dist {
            KeyDist::Uniform => rng.below(self.n as u64) as usize,
            KeyDist::Exponential => {
                // Elle's rand-key: floor(log_base(rand(scale) + base) - 1).
                let x = rng.next_f64() * self.scale + Self::BASE;
                let j = (x.log2() - 1.0).floor();
                let j = if j <= 0.0 { 0 } else { (j as usize).min(self.m - 1) };
                self.n - self.m + j
            }
        }
    }
}

/// An append handed out by [`Window::append`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Appended {
    /// The key appended to.
    pub key: u64,
    /// The value appended (`1, 2, ...` per key).
    pub val: u64,
    /// The key has now had its last append and left the window; this fresh
    /// key took its place.
    pub replaced_by: Option<u64>,
}

/// Elle's window of active list keys, with the appends handed out per key.
pub(crate) struct Window {
    picker: WindowPicker,
    slots: Vec<u64>,
    /// Appends handed out so far, per key in the window.
    writes: IntMap<u64>,
    max_writes: u64,
    next_key: u64,
}

impl Window {
    /// A window of keys `0..active_keys`.
    pub(crate) fn new(dist: KeyDist, active_keys: usize, max_writes_per_key: usize) -> Self {
        Window {
            picker: WindowPicker::new(dist, active_keys),
            slots: (0..active_keys as u64).collect(),
            writes: IntMap::default(),
            max_writes: max_writes_per_key as u64,
            next_key: active_keys as u64,
        }
    }

    /// Draws a window position.
    #[inline]
    pub(crate) fn pick(&self, rng: &mut Rng) -> usize {
        self.picker.pick(rng)
    }

    /// The key at a window position.
    #[inline]
    pub(crate) fn key(&self, pos: usize) -> u64 {
        self.slots[pos]
    }

    /// Hands out the next append value of the key at `pos`, retiring the key
    /// when that was its last.
    #[inline]
    pub(crate) fn append(&mut self, pos: usize) -> Appended {
        let key = self.slots[pos];
        let w = self.writes.entry(key).or_default();
        *w += 1;
        let val = *w;
        let replaced_by = (val >= self.max_writes).then(|| {
            self.writes.remove(&key);
            let fresh = self.fresh();
            self.slots[pos] = fresh;
            fresh
        });
        Appended { key, val, replaced_by }
    }

    /// A key never used before and never put in the window (for scripted
    /// transactions).
    pub(crate) fn fresh(&mut self) -> u64 {
        self.next_key += 1;
        self.next_key - 1
    }
}

/// A micro-op drawn by a [`TxnSource`], with its write value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawnMop {
    /// Read a register or a list.
    Read(u64),
    /// Write this value to a register.
    Write(u64, u64),
    /// Append this value to a list.
    Append(u64, u64),
}

impl DrawnMop {
    /// The key the micro-op touches.
    pub fn key(self) -> u64 {
        match self {
            DrawnMop::Read(k) | DrawnMop::Write(k, _) | DrawnMop::Append(k, _) => k,
        }
    }
}

/// The key spaces a [`TxnSource`] draws from.
enum Keys {
    /// Registers: the picker and the last value handed out per key.
    Registers { picker: RwKeyPicker, last: IntMap<u64> },
    /// Lists: the window of active keys.
    Lists(Window),
}

/// An endless stream of transactions of one workload (rw-register or
/// list-append), as `isolde gen` would draw them: the same key
/// distributions, lengths, read mix and unique write values per key,
/// deterministic per seed (the order in which concurrent clients take them is
/// up to the clients).
pub struct TxnSource {
    rng: Rng,
    shape: Shape,
    pattern: Pattern,
    keys: Keys,
}

struct SourceDraw<'a> {
    keys: &'a mut Keys,
    out: &'a mut Vec<DrawnMop>,
}

impl Draw for SourceDraw<'_> {
    type Slot = u64;

    fn pick(&mut self, rng: &mut Rng) -> u64 {
        match self.keys {
            Keys::Registers { picker, .. } => picker.pick(rng),
            Keys::Lists(w) => w.pick(rng) as u64,
        }
    }

    fn key(&self, s: u64) -> u64 {
        match &*self.keys {
            Keys::Registers { .. } => s,
            Keys::Lists(w) => w.key(s as usize),
        }
    }

    fn read(&mut self, s: u64) {
        let k = self.key(s);
        self.out.push(DrawnMop::Read(k));
    }

    fn write(&mut self, s: u64) {
        match self.keys {
            Keys::Registers { last, .. } => {
                let v = last.entry(s).or_default();
                *v += 1;
                self.out.push(DrawnMop::Write(s, *v));
            }
            Keys::Lists(w) => {
                let a = w.append(s as usize);
                self.out.push(DrawnMop::Append(a.key, a.val));
            }
        }
    }
}

impl TxnSource {
    /// Register transactions per `cfg` (its seed, lengths, keys, read mix
    /// and key distribution; the client and fault fields are not used) in
    /// `pattern`. Fails with the reason when `cfg` is invalid, or when
    /// write-skew transactions are asked of a single key.
    pub fn rw_register(cfg: &RwRegisterConfig, pattern: Pattern) -> Result<TxnSource, String> {
        cfg.validate()?;
        check_pattern(pattern, cfg.keys)?;
        Ok(TxnSource {
            rng: Rng::new(cfg.seed),
            shape: Shape { min_len: cfg.min_txn_len, max_len: cfg.max_txn_len, read_fraction: cfg.read_fraction },
            pattern,
            keys: Keys::Registers { picker: RwKeyPicker::new(cfg.key_dist, cfg.keys as u64), last: IntMap::default() },
        })
    }

    /// List-append transactions per `cfg` (its seed, lengths, window, read
    /// mix and key distribution; the client and fault fields are not used)
    /// in `pattern`. Fails with the reason when `cfg` is invalid, or when
    /// write-skew transactions are asked of a window of one key.
    pub fn list_append(cfg: &ListAppendConfig, pattern: Pattern) -> Result<TxnSource, String> {
        cfg.validate()?;
        check_pattern(pattern, cfg.active_keys)?;
        Ok(TxnSource {
            rng: Rng::new(cfg.seed),
            shape: Shape { min_len: cfg.min_txn_len, max_len: cfg.max_txn_len, read_fraction: cfg.read_fraction },
            pattern,
            keys: Keys::Lists(Window::new(cfg.key_dist, cfg.active_keys, cfg.max_writes_per_key)),
        })
    }

    /// Draws the next transaction into `out` (cleared first).
    pub fn next_txn(&mut self, out: &mut Vec<DrawnMop>) {
        out.clear();
        let mut d = SourceDraw { keys: &mut self.keys, out };
        draw_txn(&mut self.rng, &self.shape, self.pattern, &mut d);
    }
}

fn check_pattern(pattern: Pattern, keys: usize) -> Result<(), String> {
    if pattern == Pattern::WriteSkew && keys < 2 {
        return Err("the write-skew pattern needs at least 2 keys".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    fn draw_many(src: &mut TxnSource, n: usize) -> Vec<Vec<DrawnMop>> {
        (0..n)
            .map(|_| {
                let mut t = Vec::new();
                src.next_txn(&mut t);
                t
            })
            .collect()
    }

    /// Every write value is unique per key and values count up from 1.
    fn assert_unique_values(txns: &[Vec<DrawnMop>]) {
        let mut seen: HashMap<u64, HashSet<u64>> = HashMap::new();
        for m in txns.iter().flatten() {
            if let DrawnMop::Write(k, v) | DrawnMop::Append(k, v) = *m {
                assert!(v >= 1);
                assert!(seen.entry(k).or_default().insert(v), "value {v} of key {k} drawn twice");
            }
        }
        for vs in seen.values() {
            assert_eq!(*vs.iter().max().unwrap() as usize, vs.len(), "values of a key are 1..=n");
        }
    }

    #[test]
    fn sources_follow_the_config_and_are_deterministic() {
        let rw = RwRegisterConfig { keys: 50, min_txn_len: 2, max_txn_len: 4, ..Default::default() };
        let a = draw_many(&mut TxnSource::rw_register(&rw, Pattern::Mixed).unwrap(), 500);
        assert_eq!(a, draw_many(&mut TxnSource::rw_register(&rw, Pattern::Mixed).unwrap(), 500));
        let other = RwRegisterConfig { seed: 1, ..rw.clone() };
        assert_ne!(a, draw_many(&mut TxnSource::rw_register(&other, Pattern::Mixed).unwrap(), 500));
        assert!(a.iter().all(|t| (2..=4).contains(&t.len())));
        assert!(a.iter().flatten().all(|m| m.key() < 50 && !matches!(m, DrawnMop::Append(..))));
        assert_unique_values(&a);
        let la = ListAppendConfig { active_keys: 5, max_writes_per_key: 3, ..Default::default() };
        let b = draw_many(&mut TxnSource::list_append(&la, Pattern::Mixed).unwrap(), 500);
        assert!(b.iter().flatten().all(|m| !matches!(m, DrawnMop::Write(..))));
        assert_unique_values(&b);
        // Keys retire after 3 appends, so many more than 5 keys get used.
        let keys: HashSet<u64> = b.iter().flatten().map(|m| m.key()).collect();
        assert!(keys.len() > 50, "{}", keys.len());
    }

    #[test]
    fn patterns_have_their_shape() {
        let rw = RwRegisterConfig { keys: 3, min_txn_len: 1, max_txn_len: 2, ..Default::default() };
        let la = ListAppendConfig { active_keys: 3, ..Default::default() };
        for mut src in [
            TxnSource::rw_register(&rw, Pattern::ReadModifyWrite).unwrap(),
            TxnSource::list_append(&la, Pattern::ReadModifyWrite).unwrap(),
        ] {
            let txns = draw_many(&mut src, 300);
            assert_unique_values(&txns);
            for t in &txns {
                assert!(t.len() % 2 == 0 && !t.is_empty());
                for pair in t.chunks(2) {
                    assert!(matches!(pair[0], DrawnMop::Read(_)));
                    assert!(!matches!(pair[1], DrawnMop::Read(_)));
                    assert_eq!(pair[0].key(), pair[1].key());
                }
            }
        }
        for mut src in [
            TxnSource::rw_register(&rw, Pattern::WriteSkew).unwrap(),
            TxnSource::list_append(&la, Pattern::WriteSkew).unwrap(),
        ] {
            let txns = draw_many(&mut src, 300);
            assert_unique_values(&txns);
            let mut wrote_first = 0;
            for t in &txns {
                let [DrawnMop::Read(a), DrawnMop::Read(b), w] = t[..] else { panic!("{t:?}") };
                assert_ne!(a, b);
                assert!(w.key() == a || w.key() == b);
                wrote_first += (w.key() == a) as usize;
            }
            assert!((100..200).contains(&wrote_first), "{wrote_first}");
        }
        let one = RwRegisterConfig { keys: 1, ..rw };
        assert!(TxnSource::rw_register(&one, Pattern::WriteSkew).is_err());
        assert!(TxnSource::rw_register(&one, Pattern::ReadModifyWrite).is_ok());
        assert!(TxnSource::list_append(&ListAppendConfig { active_keys: 1, ..la }, Pattern::WriteSkew).is_err());
    }
}
