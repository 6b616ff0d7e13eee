//! A small writer of Jepsen's store file `test.jepsen`, doing what
//! `jepsen.store.format` does during a run: the header, then the initial
//! test map (a nil history block and the test map naming it), then the
//! history as FressianStream chunks, each sealed (header and CRC written)
//! when the next op finds it full, followed by a new BigVector block and a
//! new index block; at the end the last chunk is sealed the same way and
//! the test map is written again as the root (`save-1!`). Every index
//! block written is recorded with the ops sealed at that point, so tests
//! know what a reader may recover from any prefix of the file.
//!
//! Values are encoded as Jepsen's Fressian writer encodes them: ops as
//! `jepsen.history.Op` structs (type and f through the priority cache),
//! keywords as `key` structs with cached names, vectors as lists, maps as
//! the `map` code over a list of keys and values.

use std::fmt::Write as _;

/// A value of an op.
#[derive(Clone, Debug, PartialEq)]
pub enum V {
    Nil,
    Bool(bool),
    Int(i64),
    Double(f64),
    Str(String),
    Kw(String),
    Vec(Vec<V>),
    Map(Vec<(V, V)>),
    Set(Vec<V>),
    /// A struct of one field with this tag.
    Tagged(String, Box<V>),
}

pub fn kw(s: &str) -> V {
    V::Kw(s.to_string())
}

impl V {
    /// EDN as Clojure prints it.
    pub fn edn(&self, out: &mut String) {
        match self {
            V::Nil => out.push_str("nil"),
            V::Bool(b) => {
                let _ = write!(out, "{b}");
            }
            V::Int(i) => {
                let _ = write!(out, "{i}");
            }
            V::Double(d) => {
                let _ = write!(out, "{d:?}");
            }
            V::Str(s) => {
                let _ = write!(out, "{s:?}");
            }
            V::Kw(k) => {
                out.push(':');
                out.push_str(k);
            }
            V::Vec(items) | V::Set(items) => {
                out.push_str(if matches!(self, V::Set(_)) { "#{" } else { "[" });
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    x.edn(out);
                }
                out.push(if matches!(self, V::Set(_)) { '}' } else { ']' });
            }
            V::Tagged(t, v) => {
                out.push('#');
                out.push_str(t);
                out.push(' ');
                v.edn(out);
            }
            V::Map(kvs) => {
                out.push('{');
                for (i, (k, v)) in kvs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.edn(out);
                    out.push(' ');
                    v.edn(out);
                }
                out.push('}');
            }
        }
    }
}

/// An op as `jepsen.history.Op` holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    pub index: i64,
    pub time: i64,
    pub ty: &'static str,
    pub process: V,
    pub f: V,
    pub value: V,
    pub ext: Vec<(V, V)>,
}

impl Op {
    /// The op map Jepsen prints in `history.edn`.
    pub fn edn(&self) -> String {
        let mut s = format!("{{:index {}, :time {}, :type :{}, :process ", self.index, self.time, self.ty);
        self.process.edn(&mut s);
        s.push_str(", :f ");
        self.f.edn(&mut s);
        s.push_str(", :value ");
        self.value.edn(&mut s);
        for (k, v) in &self.ext {
            s.push_str(", ");
            k.edn(&mut s);
            s.push(' ');
            v.edn(&mut s);
        }
        s.push('}');
        s
    }
}

/// `history.edn` of `ops`, one op per line.
pub fn history_edn(ops: &[Op]) -> String {
    let mut s = String::new();
    for o in ops {
        s.push_str(&o.edn());
        s.push('\n');
    }
    s
}

/// A Fressian writer with its two caches (one per block, as Jepsen makes a
/// writer per block).
#[derive(Default)]
pub struct Fressian {
    pub out: Vec<u8>,
    priority: Vec<V>,
    structs: Vec<String>,
}

impl Fressian {
    pub fn int(&mut self, i: i64) {
        let o = &mut self.out;
        match i {
            -1 => o.push(0xFF),
            0..=63 => o.push(i as u8),
            -4096..=4095 => {
                o.push((0x50 + (i >> 8)) as u8);
                o.push(i as u8);
            }
            -524_288..=524_287 => {
                o.push((0x68 + (i >> 16)) as u8);
                o.extend_from_slice(&(i as u16).to_be_bytes());
            }
            -33_554_432..=33_554_431 => {
                o.push((0x72 + (i >> 24)) as u8);
                o.extend_from_slice(&(i as u32).to_be_bytes()[1..]);
            }
            -8_589_934_592..=8_589_934_591 => {
                o.push((0x76 + (i >> 32)) as u8);
                o.extend_from_slice(&(i as u32).to_be_bytes());
            }
            _ => {
                o.push(0xF8);
                o.extend_from_slice(&i.to_be_bytes());
            }
        }
    }

    pub fn string(&mut self, s: &str) {
        let b = s.as_bytes();
        if b.len() < 8 {
            self.out.push(0xDA + b.len() as u8);
        } else {
            self.out.push(0xE3);
            self.int(b.len() as i64);
        }
        self.out.extend_from_slice(b);
    }

    fn list_head(&mut self, n: usize) {
        if n < 8 {
            self.out.push(0xE4 + n as u8);
        } else {
            self.out.push(0xEC);
            self.int(n as i64);
        }
    }

    /// `writeTag`: a new struct type, or its cache code.
    pub fn tag(&mut self, tag: &str, fields: i64) {
        match self.structs.iter().position(|t| t == tag) {
            Some(i) if i < 16 => self.out.push(0xA0 + i as u8),
            Some(i) => {
                self.out.push(0xF0);
                self.int(i as i64);
            }
            None => {
                self.out.push(0xEF);
                self.string(tag);
                self.int(fields);
                self.structs.push(tag.to_string());
            }
        }
    }

    /// `writeObject(x, true)`.
    pub fn cached(&mut self, v: &V) {
        if matches!(v, V::Nil | V::Bool(_)) {
            return self.value(v);
        }
        match self.priority.iter().position(|c| c == v) {
            Some(i) if i < 32 => self.out.push(0x80 + i as u8),
            Some(i) => {
                self.out.push(0xCC);
                self.int(i as i64);
            }
            None => {
                self.out.push(0xCD);
                self.priority.push(v.clone());
                self.value(v);
            }
        }
    }

    pub fn value(&mut self, v: &V) {
        match v {
            V::Nil => self.out.push(0xF7),
            V::Bool(true) => self.out.push(0xF5),
            V::Bool(false) => self.out.push(0xF6),
            V::Int(i) => self.int(*i),
            V::Double(d) => {
                self.out.push(0xFA);
                self.out.extend_from_slice(&d.to_bits().to_be_bytes());
            }
            V::Str(s) => self.string(s),
            V::Kw(k) => {
                self.out.push(0xCA);
                self.out.push(0xF7);
                self.cached(&V::Str(k.clone()));
            }
            V::Vec(items) => {
                self.list_head(items.len());
                items.iter().for_each(|x| self.value(x));
            }
            V::Set(items) => {
                self.out.push(0xC1);
                self.list_head(items.len());
                items.iter().for_each(|x| self.value(x));
            }
            V::Tagged(t, v) => {
                self.tag(t, 1);
                self.value(v);
            }
            V::Map(kvs) => {
                self.out.push(0xC0);
                self.list_head(kvs.len() * 2);
                for (k, v) in kvs {
                    self.value(k);
                    self.value(v);
                }
            }
        }
    }

    pub fn op(&mut self, o: &Op) {
        self.tag("jepsen.history.Op", 7);
        self.int(o.index);
        self.int(o.time);
        self.cached(&kw(o.ty));
        self.value(&o.process);
        self.cached(&o.f);
        self.value(&o.value);
        if o.ext.is_empty() {
            self.value(&V::Nil);
        } else {
            self.value(&V::Map(o.ext.clone()));
        }
    }

    pub fn block_ref(&mut self, id: i32) {
        self.tag("block-ref", 1);
        self.int(i64::from(id));
    }
}

/// An index block written, and the ops sealed when it was.
#[derive(Clone, Copy, Debug)]
pub struct Checkpoint {
    /// Where the index block ends: a prefix of at least this many bytes
    /// holds it whole.
    pub end: usize,
    /// Ops in the sealed chunks it names.
    pub ops: usize,
    /// Whether its root marks the history complete (after `save-1!`).
    pub complete: bool,
}

/// A `test.jepsen` being written.
pub struct Store {
    pub bytes: Vec<u8>,
    blocks: Vec<(i32, u64)>,
    next_id: i32,
    root: i32,
    pub checkpoints: Vec<Checkpoint>,
    /// Offsets where blocks start (for cutting at block boundaries).
    pub block_starts: Vec<usize>,
}

const HEADER: usize = 28;

impl Store {
    fn new_id(&mut self) -> i32 {
        self.next_id += 1;
        self.next_id
    }

    /// Appends a block of `ty` holding `data`, returns its offset.
    fn block(&mut self, ty: u16, data: &[u8]) -> u64 {
        let off = self.bytes.len();
        self.block_starts.push(off);
        let mut h = [0u8; HEADER];
        h[..8].copy_from_slice(&((HEADER + data.len()) as i64).to_be_bytes());
        h[12..14].copy_from_slice(&ty.to_be_bytes());
        let mut c = flate2::Crc::new();
        c.update(data);
        c.update(&h);
        h[8..12].copy_from_slice(&c.sum().to_be_bytes());
        self.bytes.extend_from_slice(&h);
        self.bytes.extend_from_slice(data);
        off as u64
    }

    fn assoc(&mut self, id: i32, off: u64) {
        self.blocks.retain(|(i, _)| *i != id);
        self.blocks.push((id, off));
    }

    fn index(&mut self, ops: usize, complete: bool) {
        let id = self.new_id();
        let off = self.bytes.len() as u64;
        self.assoc(id, off);
        let mut d = self.root.to_be_bytes().to_vec();
        for (i, o) in &self.blocks {
            d.extend_from_slice(&i.to_be_bytes());
            d.extend_from_slice(&o.to_be_bytes());
        }
        self.block(1, &d);
        self.bytes[10..18].copy_from_slice(&(off as i64).to_be_bytes());
        self.checkpoints.push(Checkpoint { end: self.bytes.len(), ops, complete });
    }

    fn test_map(&mut self, history: i32) -> i32 {
        let mut f = Fressian::default();
        f.out.push(0xC0);
        f.list_head(10);
        for (k, v) in [
            ("name", V::Str("store-test".into())),
            ("concurrency", V::Int(5)),
            ("nodes", V::Vec(vec![V::Str("n1".into()), V::Str("n2".into())])),
        ] {
            f.value(&kw(k));
            f.value(&v);
        }
        f.value(&kw("start-time"));
        f.tag("date-time", 1);
        f.string("20260801T120000.000Z");
        f.value(&kw("history"));
        f.block_ref(history);
        let id = self.new_id();
        let off = self.block(2, &f.out);
        self.assoc(id, off);
        id
    }

    /// Writes a whole run: `ops` in chunks of `chunk` ops. With
    /// `finish`, the history writer closes and the test is saved again.
    pub fn write(ops: &[Op], chunk: usize, finish: bool) -> Store {
        let mut s = Store {
            bytes: Vec::new(),
            blocks: Vec::new(),
            next_id: 0,
            root: 0,
            checkpoints: Vec::new(),
            block_starts: Vec::new(),
        };
        s.bytes.extend_from_slice(b"JEPSEN");
        s.bytes.extend_from_slice(&1i32.to_be_bytes());
        s.bytes.extend_from_slice(&0i64.to_be_bytes());
        // write-initial-test!: a nil history block, the test naming it.
        let history = s.new_id();
        let off = s.block(2, &[0xF7]);
        s.assoc(history, off);
        s.root = s.test_map(history);
        s.index(0, false);
        // The history writer.
        let mut sealed: Vec<(usize, i32)> = Vec::new();
        let mut done = 0usize;
        let mut rest = ops;
        while !rest.is_empty() || sealed.is_empty() {
            let take = rest.len().min(chunk);
            let (now, later) = rest.split_at(take);
            let is_last = later.is_empty();
            if is_last && !finish {
                // The open chunk: data written, header still blank.
                let mut f = Fressian::default();
                now.iter().for_each(|o| f.op(o));
                s.block_starts.push(s.bytes.len());
                s.bytes.extend_from_slice(&[0u8; HEADER]);
                s.bytes.extend_from_slice(&f.out);
                return s;
            }
            let id = s.new_id();
            let mut f = Fressian::default();
            now.iter().for_each(|o| f.op(o));
            let off = s.block(4, &f.out);
            s.assoc(id, off);
            sealed.push((done, id));
            done += take;
            let mut bv = (done as i64).to_be_bytes().to_vec();
            for (first, id) in &sealed {
                bv.extend_from_slice(&(*first as i64).to_be_bytes());
                bv.extend_from_slice(&id.to_be_bytes());
            }
            let off = s.block(5, &bv);
            s.assoc(history, off);
            s.index(done, false);
            rest = later;
            if is_last {
                break;
            }
        }
        // save-1!: the test again, now the root.
        s.root = s.test_map(history);
        s.index(done, true);
        s
    }

    /// Ops a reader may recover from the first `len` bytes: the newest
    /// index block wholly inside them (`None`: no index yet).
    pub fn recoverable(&self, len: usize) -> Option<Checkpoint> {
        self.checkpoints.iter().rev().find(|c| c.end <= len).copied()
    }
}

/// A list-append history: `n` transactions run one after another (so it
/// is valid), each an append to a key and a read of it, by 5 processes,
/// with a nemesis op every 50.
pub fn list_append_ops(n: usize) -> Vec<Op> {
    list_append_ops_keys(n, 7)
}

/// [`list_append_ops`] over `keys` keys.
pub fn list_append_ops_keys(n: usize, keys: usize) -> Vec<Op> {
    let mut ops = Vec::with_capacity(n * 2 + n / 50);
    let mut lists: Vec<Vec<V>> = vec![Vec::new(); keys];
    let mut t = 0;
    for i in 0..n {
        let k = i % keys;
        let p = V::Int((i % 5) as i64);
        let invoke = V::Vec(vec![
            V::Vec(vec![kw("append"), V::Int(k as i64), V::Int(i as i64)]),
            V::Vec(vec![kw("r"), V::Int(k as i64), V::Nil]),
        ]);
        lists[k].push(V::Int(i as i64));
        let ok = V::Vec(vec![
            V::Vec(vec![kw("append"), V::Int(k as i64), V::Int(i as i64)]),
            V::Vec(vec![kw("r"), V::Int(k as i64), V::Vec(lists[k].clone())]),
        ]);
        for (ty, value) in [("invoke", invoke), ("ok", ok)] {
            ops.push(Op { index: ops.len() as i64, time: t, ty, process: p.clone(), f: kw("txn"), value, ext: vec![] });
            t += 1_000_003;
        }
        if i % 50 == 49 {
            ops.push(Op {
                index: ops.len() as i64,
                time: t,
                ty: "info",
                process: kw("nemesis"),
                f: kw("start-partition"),
                value: V::Str("majority".into()),
                ext: vec![(kw("error"), V::Map(vec![(kw("cause"), V::Str("timed out".into()))]))],
            });
            t += 7;
        }
    }
    ops
}
