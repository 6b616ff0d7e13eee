//! The fast op-value reader (compact bank, counter and set values straight
//! from the EDN text) against the generic one (a value tree, made compact
//! afterwards): the same ops, verdicts and result maps on every shipped and
//! generated bank, counter and set history, and on values that send the
//! fast path back to the generic one; and a malformed value's error names
//! the file, the line and what was expected.

use crate::support;

use isolde::cli::jepsen::JepsenOptions;
use isolde::gen::jepsen::{generate, Fault, JepsenGenConfig, Kind};
use isolde::ingest::Format;
use isolde::jepsen::detect::Workload;
use support::cli::{isolde, temp_dir};
use support::jepsen_readers::{check_both, read_both};

const LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

fn data(rel: &str) -> String {
    format!("{}/tests/data/jepsen/elle-cli/jepsen/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn options(linearizable: bool) -> JepsenOptions {
    let mut o = JepsenOptions::default();
    o.set_full.linearizable = linearizable;
    o
}

#[test]
fn shipped_histories_read_alike() {
    let cases: &[(&str, &[Workload])] = &[
        ("bank.edn", &[Workload::Bank]),
        ("bank.json", &[Workload::Bank]),
        ("bank-neg.edn", &[Workload::Bank]),
        ("bank-tidb.edn", &[Workload::Bank]),
        ("bank-negative-balances.json", &[Workload::Bank]),
        ("counter.edn", &[Workload::Counter]),
        ("counter.json", &[Workload::Counter]),
        ("set.edn", &[Workload::Set, Workload::SetFull]),
        ("set_full.edn", &[Workload::Set, Workload::SetFull]),
        ("set_full.json", &[Workload::Set, Workload::SetFull]),
    ];
    for &(file, workloads) in cases {
        let bytes = std::fs::read(data(file)).expect("shipped history");
        let (fast, generic) = read_both(file, &bytes, Format::Auto).unwrap_or_else(|e| panic!("{file}: {e}"));
        for linearizable in [false, true] {
            let results = check_both(file, &fast, &generic, workloads, &options(linearizable));
            assert!(results.iter().all(|r| !r.starts_with("error")), "{file}: {results:?}");
        }
    }
}

#[test]
fn generated_histories_read_alike() {
    // 20,000 operations: over 2 MB, so EDN is read in parallel chunks.
    let kinds: [(Kind, &[Fault], &[Workload]); 3] = [
        (Kind::Bank, &[Fault::NegativeBalance, Fault::WrongTotal], &[Workload::Bank]),
        (Kind::Counter, &[Fault::WrongTotal, Fault::StaleRead], &[Workload::Counter]),
        (Kind::Set, &[Fault::LostElement, Fault::StaleRead], &[Workload::Set, Workload::SetFull]),
    ];
    for (kind, faults, workloads) in kinds {
        for (seed, faults) in [(1, faults), (2, &[][..])] {
            let cfg = JepsenGenConfig {
                kind,
                seed,
                ops: 20_000,
                info_fraction: 0.05,
                faults: faults.to_vec(),
                ..Default::default()
            };
            let mut bytes = Vec::new();
            generate(&cfg, &mut bytes).expect("generates");
            assert!(bytes.len() > 2 << 20, "{kind:?}: {} bytes", bytes.len());
            let name = format!("{kind:?}-{seed}.edn");
            let (fast, generic) = read_both(&name, &bytes, Format::Edn).unwrap_or_else(|e| panic!("{name}: {e}"));
            let results = check_both(&name, &fast, &generic, workloads, &options(true));
            let want = if faults.is_empty() { "true" } else { "false" };
            assert!(
                results.iter().all(|r| r.starts_with(want)),
                "{name}: {:?}",
                results.iter().map(|r| r.chars().take(60).collect::<String>()).collect::<Vec<_>>()
            );
        }
    }
}

/// Values the fast path does not decode itself (comments, discards, other
/// spellings, keyword accounts, maps that only start like a transfer) and
/// values that do not fit the model read the same both ways.
#[test]
fn fallbacks_read_alike() {
    let bank = "\
{:type :invoke, :f :transfer, :value {:from 1, :to 2, :amount 3}, :process 0}
{:type :ok, :f :transfer, :value {:from 1 ; a comment
  :to 2, :amount 3}, :process 0}
{:type :invoke, :f :transfer, :value {:from :a, :to nil, :amount +4}, :process 1}
{:type :info, :f :transfer, :value {:from 1, :to 2, :amount 4, :note 1}, :process 1}
{:type :invoke, :f :transfer, :value {:to 1, :from 2, :amount 0x10}, :process 2}
{:type :invoke, :f :read, :value nil, :process 3}
{:type :ok, :f :read, :value {0 10, #_ 9 1 10, :x nil, \"y\" -3, 3000000000 0, -1 5}, :process 3}
{:type :invoke, :f :read, :process 4}
{:type :ok, :f :read, :value {:from 1, :to 2, :amount 3}, :process 4}
{:type :ok, :f :read, :value {0 7N, 1 1.5}, :process 5}
";
    let counter = "\
{:type :invoke, :f :add, :value 1, :process 0}
{:type :ok, :f :add, :value 1, :process 0}
{:type :invoke, :f :read, :value nil, :process 1}
{:type :ok, :f :read, :value 0x1, :process 1}
{:type :invoke, :f :add, :value 2N, :process 2}
";
    let set = "\
{:type :invoke, :f :add, :value 1, :process 0}
{:type :ok, :f :add, :value 1, :process 0}
{:type :invoke, :f :add, :value :k, :process 1}
{:type :ok, :f :add, :value :k, :process 1}
{:type :invoke, :f :add, :value [1 2], :process 2}
{:type :ok, :f :read, :value #{1 :k [1 2] 1}, :process 3}
{:type :ok, :f :read, :value [1, 2 ; two
  3], :process 4}
{:type :ok, :f :read, :value (1 017 2), :process 5}
{:type :ok, :f :read, :value [], :process 6}
";
    let all = [Workload::Bank, Workload::Counter, Workload::Set, Workload::SetFull];
    let mut kinds = Vec::new();
    for (name, text) in [("bank.edn", bank), ("counter.edn", counter), ("set.edn", set)] {
        let (fast, generic) = read_both(name, text.as_bytes(), Format::Edn).unwrap_or_else(|e| panic!("{name}: {e}"));
        kinds.extend(fast.ops.iter().map(|o| format!("{:?}", std::mem::discriminant(&o.value))));
        check_both(name, &fast, &generic, &all, &options(false));
    }
    // Every compact shape and the generic one occur.
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds.len(), 6, "{kinds:?}");
    // A syntax error inside a value is the same error either way.
    let e = read_both("bad.edn", b"{:type :ok, :f :read, :value {0 10, 1 }}\n", Format::Edn).expect_err("malformed");
    assert!(e.starts_with("bad.edn:1:"), "{e}");
}

/// A malformed bank value is an error naming the file, the line, what the
/// model expects and what in the value does not fit: exit 2.
#[test]
fn a_malformed_value_is_named() {
    let dir = temp_dir("jepsen-readers-bad");
    let head = "{:type :invoke, :f :transfer, :value {:from 1, :to 2, :amount 3}, :process 0}\n";
    for (value_line, want) in [
        (
            "{:type :ok, :f :read, :value {0 10, 1 1.5}, :process 1}",
            "account 1 has the balance 1.5, not an integer or nil - wrong model selected?",
        ),
        ("{:type :ok, :f :read, :value [10 10], :process 1}", "the read's value [10 10] is not a map"),
        (
            "{:type :invoke, :f :transfer, :value {:from 1, :to 2}, :process 1}",
            "the transfer's value has no integer :amount",
        ),
    ] {
        let f = dir.join("t.edn");
        std::fs::write(&f, format!("{head}{value_line}\n")).expect("write");
        let r = isolde(&["analyze", "--workload", "bank", &f.to_string_lossy()], None, LIMIT);
        assert_eq!(r.code, 2, "{value_line}: {r:?}");
        let line = r.stderr.lines().find(|l| l.contains("t.edn:2: op ")).unwrap_or_else(|| panic!("{}", r.stderr));
        assert!(line.contains("does not fit the bank model, which expects :transfer ops with values"), "{line}");
        assert!(line.contains(want), "{line}");
    }
}
