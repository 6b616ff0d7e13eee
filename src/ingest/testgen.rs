//! Test-only generator of realistic list-append histories, rendered as
//! Jepsen EDN (one op map per line) or elle-cli JSON.

use std::fmt::Write;

/// A generated micro-op.
pub enum GenMop {
    Append(i64, i64),
    /// Key, and the observed list (`None` in invocations).
    Read(i64, Option<Vec<i64>>),
    Write(i64, Option<i64>),
}

/// A generated op.
pub struct GenOp {
    pub typ: &'static str,
    /// `None` for a nemesis op.
    pub process: Option<i64>,
    pub time: i64,
    pub index: i64,
    pub mops: Vec<GenMop>,
    pub error: Option<&'static str>,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Generates ops whose EDN rendering is about `target_bytes` long.
pub fn ops(target_bytes: usize, seed: u64) -> Vec<GenOp> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut lists: Vec<Vec<i64>> = Vec::new();
    let mut first_key = 0usize; // keys below this are retired
    let mut next_value = 1i64;
    let mut out = Vec::new();
    let mut bytes = 0usize;
    let mut time = 0i64;
    while bytes < target_bytes {
        let index = out.len() as i64;
        time += 1 + rng.below(100_000) as i64;
        if rng.below(100) == 0 {
            let op = GenOp { typ: "info", process: None, time, index, mops: vec![], error: None };
            bytes += to_edn(std::slice::from_ref(&op)).len();
            out.push(op);
            continue;
        }
        let process = rng.below(30) as i64;
        // Retire a key once its list holds ~100 elements; keep ~8 live keys.
        while lists.len() < first_key + 8 {
            lists.push(Vec::new());
        }
        let n = 2 + rng.below(5) as usize;
        let mut inv = Vec::with_capacity(n);
        let mut done = Vec::with_capacity(n);
        for _ in 0..n {
            let k = first_key + rng.below(8) as usize;
            match rng.below(10) {
                0..=2 => {
                    let v = next_value;
                    next_value += 1;
                    lists[k].push(v);
                    inv.push(GenMop::Append(k as i64, v));
                    done.push(GenMop::Append(k as i64, v));
                }
                3..=8 => {
                    inv.push(GenMop::Read(k as i64, None));
                    done.push(GenMop::Read(k as i64, Some(lists[k].clone())));
                }
                _ => {
                    let v = rng.below(1000) as i64;
                    inv.push(GenMop::Write(k as i64, if v == 0 { None } else { Some(v) }));
                    done.push(GenMop::Write(k as i64, if v == 0 { None } else { Some(v) }));
                }
            }
        }
        if lists[first_key].len() >= 100 {
            first_key += 1;
        }
        let outcome = match rng.below(50) {
            0 => ("fail", Some("conflict")),
            1 => ("info", Some("timeout")),
            _ => ("ok", None),
        };
        let inv_op = GenOp { typ: "invoke", process: Some(process), time, index, mops: inv, error: None };
        time += 1 + rng.below(1000) as i64;
        let done_op = GenOp {
            typ: outcome.0,
            process: Some(process),
            time,
            index: index + 1,
            mops: if outcome.0 == "ok" { done } else { inv_op.mops.iter().map(copy_mop).collect() },
            error: outcome.1,
        };
        for op in [inv_op, done_op] {
            bytes += to_edn(std::slice::from_ref(&op)).len();
            out.push(op);
        }
    }
    out
}

fn copy_mop(m: &GenMop) -> GenMop {
    match m {
        GenMop::Append(k, v) => GenMop::Append(*k, *v),
        GenMop::Read(k, l) => GenMop::Read(*k, l.clone()),
        GenMop::Write(k, v) => GenMop::Write(*k, *v),
    }
}

/// Renders ops as Jepsen EDN, one op map per line.
pub fn to_edn(ops: &[GenOp]) -> String {
    let mut s = String::new();
    for op in ops {
        let _ = write!(s, "{{:type :{}, :f ", op.typ);
        match op.process {
            None => s.push_str(":start-partition, :value [:isolated {\"n1\" #{\"n2\" \"n3\"}}], :process :nemesis"),
            Some(p) => {
                s.push_str(":txn, :value [");
                for (i, m) in op.mops.iter().enumerate() {
                    if i > 0 {
                        s.push(' ');
                    }
                    match m {
                        GenMop::Append(k, v) => {
                            let _ = write!(s, "[:append {k} {v}]");
                        }
                        GenMop::Read(k, None) => {
                            let _ = write!(s, "[:r {k} nil]");
                        }
                        GenMop::Read(k, Some(l)) => {
                            let _ = write!(s, "[:r {k} [");
                            for (j, e) in l.iter().enumerate() {
                                if j > 0 {
                                    s.push(' ');
                                }
                                let _ = write!(s, "{e}");
                            }
                            s.push_str("]]");
                        }
                        GenMop::Write(k, v) => match v {
                            Some(v) => {
                                let _ = write!(s, "[:w {k} {v}]");
                            }
                            None => {
                                let _ = write!(s, "[:w {k} nil]");
                            }
                        },
                    }
                }
                let _ = write!(s, "], :process {p}");
            }
        }
        let _ = write!(s, ", :time {}, :index {}", op.time, op.index);
        if let Some(e) = op.error {
            let _ = write!(s, ", :error \"{e}\"");
        }
        s.push_str("}\n");
    }
    s
}

/// Renders ops as elle-cli JSON: one array, one op object per line.
pub fn to_json(ops: &[GenOp]) -> String {
    let mut s = String::from("[\n");
    for (n, op) in ops.iter().enumerate() {
        let _ = write!(s, "{{\"type\": \"{}\", \"f\": ", op.typ);
        match op.process {
            None => s.push_str(
                "\"start-partition\", \"value\": [\"isolated\", {\"n1\": [\"n2\", \"n3\"]}], \"process\": \"nemesis\"",
            ),
            Some(p) => {
                s.push_str("\"txn\", \"value\": [");
                for (i, m) in op.mops.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    match m {
                        GenMop::Append(k, v) => {
                            let _ = write!(s, "[\"append\", {k}, {v}]");
                        }
                        GenMop::Read(k, None) => {
                            let _ = write!(s, "[\"r\", {k}, null]");
                        }
                        GenMop::Read(k, Some(l)) => {
                            let items: Vec<String> = l.iter().map(|e| e.to_string()).collect();
                            let _ = write!(s, "[\"r\", {k}, [{}]]", items.join(", "));
                        }
                        GenMop::Write(k, v) => match v {
                            Some(v) => {
                                let _ = write!(s, "[\"w\", {k}, {v}]");
                            }
                            None => {
                                let _ = write!(s, "[\"w\", {k}, null]");
                            }
                        },
                    }
                }
                let _ = write!(s, "], \"process\": {p}");
            }
        }
        let _ = write!(s, ", \"time\": {}, \"index\": {}", op.time, op.index);
        if let Some(e) = op.error {
            let _ = write!(s, ", \"error\": \"{e}\"");
        }
        s.push('}');
        if n + 1 < ops.len() {
            s.push(',');
        }
        s.push('\n');
    }
    s.push_str("]\n");
    s
}

/// An EDN history of at least `min_bytes` bytes.
pub fn edn_history(min_bytes: usize, seed: u64) -> String {
    to_edn(&ops(min_bytes, seed))
}

/// An op's micro-ops as `"w 1 5, r 2 nil"` (f, key, value), for compact
/// assertions in the format readers' tests.
pub(crate) fn mops_text(h: &crate::history::History, op: &crate::history::Op) -> String {
    let mops: Vec<String> = h
        .mops_of(op)
        .iter()
        .map(|m| {
            let v = match m.value {
                crate::history::MopValue::Int(v) => h.value_text(v),
                _ => "nil".into(),
            };
            format!("{} {} {v}", m.f.name(), h.key(m.key))
        })
        .collect();
    mops.join(", ")
}
