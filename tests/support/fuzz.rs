//! Machinery of the standing fuzz campaign (`tests/infer/fuzz.rs`): the targets
//! (one per reader, plus the checker on parsed histories), seed inputs in
//! every format, a mutation strategy, and the store of regression inputs.
//!
//! A target run must not panic; a reader must answer a history or a clean
//! error (one line, no raw control characters), and a parsed history is then
//! checked, which must answer a verdict or a clean error. A failing input is
//! shrunk by proptest and the minimal one is kept under
//! `tests/fuzz-regressions/<target>/`, where the replay test runs it on every
//! `cargo test`.

use isolde::check::{check, CheckOptions};
use isolde::gen::list_append::{list_append_string, KeyDist, ListAppendConfig};
use isolde::gen::rw_register::{rw_register_string, write_rw_register_with, RwKeyDist, RwRegisterConfig};
use isolde::gen::{GenOptions, OutputFormat};
use isolde::ingest::{read_bytes, Format};
use proptest::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Duration;

/// What a fuzz input is fed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The Jepsen EDN reader.
    Edn,
    /// The elle-cli JSON reader.
    Json,
    /// The dbcop bincode reader.
    Dbcop,
    /// The PolySI / C4 text reader.
    PolysiText,
    /// The Cobra log reader (one log).
    Cobra,
    /// The checker, on random EDN histories.
    Check,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 6] =
        [Target::Edn, Target::Json, Target::Dbcop, Target::PolysiText, Target::Cobra, Target::Check];

    /// Its folder under `tests/fuzz-regressions/`.
    pub fn dir_name(self) -> &'static str {
        match self {
            Target::Edn => "edn",
            Target::Json => "json",
            Target::Dbcop => "dbcop",
            Target::PolysiText => "polysi-text",
            Target::Cobra => "cobra",
            Target::Check => "check",
        }
    }

    fn format(self) -> Format {
        match self {
            Target::Edn | Target::Check => Format::Edn,
            Target::Json => Format::Json,
            Target::Dbcop => Format::Dbcop,
            Target::PolysiText => Format::PolysiText,
            Target::Cobra => Format::Cobra,
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Target::Edn | Target::Check => "edn",
            Target::Json => "json",
            Target::Dbcop => "bincode",
            Target::PolysiText => "txt",
            Target::Cobra => "log",
        }
    }
}

/// Cases per target: `ISOLDE_FUZZ_CASES` if set (a long campaign), else
/// `default` (a few seconds, for every `cargo test`).
pub fn cases(default: u32) -> u32 {
    std::env::var("ISOLDE_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Checker options for fuzzing: short budgets; the requested models vary
/// with the input so that both the default and the exact levels run.
fn options(bytes: &[u8]) -> CheckOptions {
    let mut o = CheckOptions { cycle_search_timeout: Duration::from_millis(200), ..CheckOptions::default() };
    if let Some(e) = o.exact.as_mut() {
        e.timeout = Some(Duration::from_secs(5));
    }
    if bytes.len() % 2 == 1 {
        o.models = Some(vec!["serializable".into(), "snapshot-isolation".into()]);
    }
    o
}

/// Feeds `bytes` to `target`: `Ok` for a history with a verdict or a clean
/// error, `Err` (with the reason) for a panic or a malformed error message.
pub fn run(target: Target, bytes: &[u8]) -> Result<(), String> {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let name = format!("fuzz.{}", target.extension());
        match read_bytes(&name, bytes, target.format()) {
            Err(e) => {
                let msg = e.to_string();
                if msg.is_empty() || msg.chars().any(char::is_control) {
                    return Err(format!("unclean error message: {msg:?}"));
                }
                Ok(())
            }
            Ok(h) => {
                if h.ops.len() <= 400 {
                    // An error here (a workload's ground rules broken) is clean.
                    let _ = check(&h, &options(bytes));
                }
                Ok(())
            }
        }
    }));
    match outcome {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("panic: {msg}"))
        }
    }
}

/// The folder of `target`'s regression inputs.
pub fn regression_dir(target: Target) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions").join(target.dir_name())
}

/// Keeps a failing input as a regression file named by its content's hash;
/// returns its path.
pub fn save(target: Target, bytes: &[u8]) -> PathBuf {
    // FNV-1a, 64-bit.
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let dir = regression_dir(target);
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("crash-{hash:016x}.{}", target.extension()));
    let _ = std::fs::write(&path, bytes);
    path
}

/// A small list-append history from the generator, with faults.
fn la(seed: u64) -> String {
    list_append_string(&ListAppendConfig {
        seed,
        txns: 12,
        processes: 3,
        max_txn_len: 4,
        active_keys: 3,
        max_writes_per_key: 4,
        key_dist: KeyDist::Uniform,
        fail_fraction: 0.1,
        info_fraction: 0.1,
        ..ListAppendConfig::default()
    })
}

fn rw_cfg(seed: u64) -> RwRegisterConfig {
    RwRegisterConfig {
        seed,
        txns: 12,
        processes: 3,
        min_txn_len: 1,
        max_txn_len: 4,
        keys: 3,
        key_dist: RwKeyDist::Uniform,
        fail_fraction: 0.1,
        info_fraction: 0.1,
        ..RwRegisterConfig::default()
    }
}

/// Hand-written EDN using most of the syntax a Jepsen history may hold.
const EDN_EXTRA: &str = r#"; a comment
{:type :invoke, :f :txn, :value [[:append :x 1] [:r :y nil]], :process 0, :time 1, :index 0}
{:type :info, :f :start-partition, :value [:isolated {"n1" #{"n2" "n3"}}], :process :nemesis, :time 2, :index 1}
{:type :ok, :f :txn, :value [[:append :x 1] [:r :y [1 2]]], :process 0, :time 3, :index 2, :error "e\u00e9\n", :node "n1"}
{:type :fail, :f :txn, :value [[:w "k" -5] [:r "k" 7]], :process 1, #_ :ignored :time 4N, :index 3, :ts #inst "2020-01-01", :x 1.5, :c \a}
"#;

/// Hand-written elle-cli JSON with nemesis ops, extras and string keys.
const JSON_EXTRA: &str = r#"[{"type": "invoke", "f": "txn", "value": [["append", "x", 1], ["r", "y", null]], "process": 0, "time": 1, "index": 0},
{"type": "info", "f": "kill", "value": {"n1": ["n2"]}, "process": "nemesis", "time": 2, "index": 1},
{"type": "ok", "f": "txn", "value": [["append", "x", 1], ["r", "y", [1, 2]]], "process": 0, "time": 3, "index": 2, "error": "e\u00e9\n", "x": 1.5, "b": true}
]"#;

/// PolySI / C4 text, with aborted (`-1`) transactions and blank lines.
const TEXT: &str = "w(1,1,0,0)\nr(1,0,1,0)\n\nw(2,5,1,0)\r\nw(1,2,0,-1)\n r(2,5,0,1) \nr(1,1,1,-1)\nw(3,3,2,7)\n";

/// Seed inputs of `target`.
pub fn seeds(target: Target) -> Vec<Vec<u8>> {
    match target {
        Target::Edn | Target::Check => {
            vec![la(1).into_bytes(), rw_register_string(&rw_cfg(2)).into_bytes(), EDN_EXTRA.as_bytes().to_vec()]
        }
        Target::Json => {
            let mut v = vec![JSON_EXTRA.as_bytes().to_vec()];
            for edn in [la(3), rw_register_string(&rw_cfg(4))] {
                if let Ok(json) = isolde::gen::json::edn_to_json(&edn) {
                    v.push(json.into_bytes());
                }
            }
            v
        }
        Target::Dbcop => (5..7)
            .map(|seed| {
                let opts = GenOptions {
                    output_format: OutputFormat::Dbcop,
                    txns_per_session: Some(4),
                    ..GenOptions::default()
                };
                let mut out = Vec::new();
                let cfg = RwRegisterConfig { fail_fraction: 0.0, info_fraction: 0.0, ..rw_cfg(seed) };
                let _ = write_rw_register_with(&cfg, &opts, &mut out);
                out
            })
            .collect(),
        Target::PolysiText => vec![TEXT.as_bytes().to_vec()],
        Target::Cobra => vec![cobra_log(false), cobra_log(true)],
    }
}

/// A Cobra log of three transactions (the last left open), with or without
/// the timestamped `S`/`C` layout.
fn cobra_log(ts: bool) -> Vec<u8> {
    let mut v = Vec::new();
    let rec = |v: &mut Vec<u8>, tag: u8, xs: &[i64]| {
        v.push(tag);
        for x in xs {
            v.extend_from_slice(&x.to_be_bytes());
        }
    };
    let stamp = |id: i64| if ts { vec![id, 1_700_000_000] } else { vec![id] };
    rec(&mut v, b'S', &stamp(1));
    rec(&mut v, b'R', &[0xbebe_ebee, 0xbebe_ebee, 7, 0]);
    rec(&mut v, b'W', &[100, 7, 42]);
    rec(&mut v, b'C', &stamp(1));
    rec(&mut v, b'S', &stamp(2));
    rec(&mut v, b'R', &[1, 100, 7, 42]);
    rec(&mut v, b'R', &[9, 0x2333_2333, 7, 0]);
    rec(&mut v, b'C', &stamp(2));
    rec(&mut v, b'S', &stamp(3));
    rec(&mut v, b'W', &[101, 8, 1]);
    v
}

/// Tokens worth inserting into inputs of `target`.
fn dictionary(target: Target) -> Vec<Vec<u8>> {
    let text: &[&str] = match target {
        Target::Edn | Target::Check => &[
            ":ok",
            ":invoke",
            ":fail",
            ":info",
            ":type",
            ":process",
            ":value",
            ":f",
            ":index",
            ":time",
            ":append",
            ":r",
            ":w",
            "nil",
            "[",
            "]",
            "{",
            "}",
            "(",
            ")",
            "#{",
            "\"",
            "\\",
            "#_",
            "#inst",
            ";",
            "\n",
            ",",
            "-1",
            "0",
            "9223372036854775808",
            "-9223372036854775809",
            "1N",
            "1.5",
            "1/2",
            "\u{feff}",
            "é",
            "\u{1b}",
            ":nemesis",
            "[:r :x [1 2 3]]",
            "[:append :x 1]",
            "[:w :x 1]",
            "{:type :ok, :process 0, :value []}",
        ],
        Target::Json => &[
            "\"ok\"",
            "\"invoke\"",
            "\"fail\"",
            "\"info\"",
            "\"type\"",
            "\"process\"",
            "\"value\"",
            "null",
            "[",
            "]",
            "{",
            "}",
            ":",
            ",",
            "\"",
            "\\u0000",
            "\\ud800",
            "-1",
            "0",
            "1e400",
            "-0",
            "9223372036854775808",
            "true",
            "\u{feff}",
            "\n",
            "[\"r\", \"x\", [1, 2]]",
            "[\"append\", \"x\", 1]",
        ],
        Target::PolysiText => &[
            "r(",
            "w(",
            ",",
            ")",
            "-1",
            "-",
            "0",
            "\n",
            "\r\n",
            " ",
            "\t",
            "18446744073709551616",
            "9223372036854775807",
            "w(1,1,0,-1)\n",
            "r(1,1,0,1)\n",
            "\u{feff}",
        ],
        Target::Dbcop | Target::Cobra => &["S", "C", "W", "R", "{"],
    };
    let mut v: Vec<Vec<u8>> = text.iter().map(|t| t.as_bytes().to_vec()).collect();
    for x in [0u64, 1, 2, 0xff, u64::MAX, i64::MAX as u64, i64::MAX as u64 + 1, 0xbebe_ebee, 0xdead_beef, 1 << 32] {
        if matches!(target, Target::Dbcop) {
            v.push(x.to_le_bytes().to_vec());
        }
        if matches!(target, Target::Cobra) {
            v.push(x.to_be_bytes().to_vec());
        }
    }
    v
}

/// Applies one mutation (`kind`, with arguments `x`, `y`) to `b`.
fn mutate(b: &mut Vec<u8>, kind: u8, x: u32, y: u32, dict: &[Vec<u8>]) {
    let len = b.len();
    let at = |n: usize| if n == 0 { 0 } else { x as usize % n };
    match kind {
        0 if len > 0 => {
            let i = at(len);
            b[i] = y as u8;
        }
        1 | 5 if !dict.is_empty() => {
            let i = at(len + 1);
            let t = &dict[y as usize % dict.len()];
            b.splice(i..i, t.iter().copied());
        }
        2 if len > 0 => {
            let i = at(len);
            let j = (i + 1 + y as usize % 16).min(len);
            b.drain(i..j);
        }
        3 => b.truncate(at(len + 1)),
        4 if len > 0 && len < 1 << 16 => {
            let i = at(len);
            let j = (i + 1 + y as usize % 64).min(len);
            let piece = b[i..j].to_vec();
            b.splice(i..i, piece);
        }
        _ => {}
    }
}

/// Inputs for `target`: random bytes, or seeds with a few mutations.
pub fn inputs(target: Target) -> BoxedStrategy<Vec<u8>> {
    let seeds = seeds(target);
    let dict = dictionary(target);
    let n = seeds.len();
    let mutated =
        (0..n, proptest::collection::vec((0u8..6, any::<u32>(), any::<u32>()), 1..8)).prop_map(move |(s, muts)| {
            let mut b = seeds[s].clone();
            for (kind, x, y) in muts {
                mutate(&mut b, kind, x, y, &dict);
            }
            b
        });
    prop_oneof![1 => proptest::collection::vec(any::<u8>(), 0..256), 6 => mutated].boxed()
}

/// Random small EDN histories (list-append, rw-register, or a mix) for the
/// checker. Written values are mostly unique per key and reads mostly return
/// values (or list prefixes) that were written, so inference gets past the
/// workloads' ground rules into cycles and the exact check; random types,
/// processes, out-of-order prefixes and the odd duplicate write still give
/// anomalies of every kind, unpaired ops and broken ground rules.
pub fn histories() -> BoxedStrategy<Vec<u8>> {
    // (function, key, choice, skip, shuffle, duplicate)
    let mop = (0u8..3, 0u8..3, any::<u16>(), any::<u8>(), any::<bool>(), 0u8..40);
    let op = (0u8..4, 0u8..5, proptest::collection::vec(mop, 0..5));
    (0u8..3, proptest::collection::vec(op, 1..32))
        .prop_map(|(kind, ops)| {
            let mut s = String::new();
            // Per key: values written (register) or appended (list), in order.
            let mut written: [Vec<u32>; 3] = Default::default();
            let mut next = 1u32;
            for (t, p, mops) in ops {
                let ty = ["invoke", "ok", "fail", "info"][t as usize];
                let mut value = String::new();
                for (f, k, choice, skip, shuffle, dup) in mops {
                    let w = &mut written[k as usize];
                    let append = match kind {
                        0 => true,
                        1 => false,
                        _ => f == 2,
                    };
                    let item = if f == 0 {
                        let pick = choice as usize % (w.len() + 1);
                        if ty == "invoke" || pick == w.len() {
                            format!("[:r {k} nil]")
                        } else if append {
                            let mut l: Vec<u32> = w[..=pick].to_vec();
                            if shuffle && l.len() > 1 {
                                let i = skip as usize % l.len();
                                l.swap(0, i);
                            } else if skip % 7 == 0 && !l.is_empty() {
                                l.remove(skip as usize % l.len());
                            }
                            let l: Vec<String> = l.iter().map(|e| e.to_string()).collect();
                            format!("[:r {k} [{}]]", l.join(" "))
                        } else {
                            format!("[:r {k} {}]", w[pick])
                        }
                    } else {
                        let v = if dup == 0 && !w.is_empty() {
                            w[choice as usize % w.len()]
                        } else {
                            next += 1;
                            next
                        };
                        w.push(v);
                        if append {
                            format!("[:append {k} {v}]")
                        } else {
                            format!("[:w {k} {v}]")
                        }
                    };
                    value.push_str(&item);
                    value.push(' ');
                }
                s.push_str(&format!("{{:type :{ty}, :f :txn, :value [{value}], :process {p}}}\n"));
            }
            s.into_bytes()
        })
        .boxed()
}
