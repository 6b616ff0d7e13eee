//! Criterion benchmarks of `isolde::check` on generated histories: 10k
//! transactions of strict-serializable list-append (Elle's default shape,
//! uniform keys) and rw-register (PolySI's default shape). Histories are
//! generated and parsed once, outside the timed loop, so the numbers are the
//! analysis alone. Run with `cargo bench --bench analyze`.

use criterion::{criterion_group, criterion_main, Criterion};
use isolde::check::{check, CheckOptions, Validity};
use isolde::gen::list_append::{list_append_string, KeyDist, ListAppendConfig};
use isolde::gen::rw_register::{rw_register_string, RwRegisterConfig};
use isolde::history::History;
use isolde::ingest::{read_bytes, Format};

/// Parses a generated history (generator output always parses).
fn parse(text: &str) -> History {
    match read_bytes("bench.edn", text.as_bytes(), Format::Edn) {
        Ok(h) => h,
        Err(e) => panic!("generated history does not parse: {e}"),
    }
}

fn bench_check(c: &mut Criterion) {
    let la = parse(&list_append_string(&ListAppendConfig {
        seed: 42,
        txns: 10_000,
        processes: 20,
        key_dist: KeyDist::Uniform,
        ..ListAppendConfig::default()
    }));
    let rw = parse(&rw_register_string(&RwRegisterConfig { seed: 42, txns: 10_000, ..RwRegisterConfig::default() }));
    let opts = CheckOptions::default();
    let mut g = c.benchmark_group("check");
    g.sample_size(10);
    for (name, h) in [("list-append-10k", &la), ("rw-register-10k", &rw)] {
        // A benchmark of a failing analysis would measure the wrong thing.
        match check(h, &opts) {
            Ok(o) if o.valid == Validity::Valid => {}
            other => panic!("{name}: expected a valid history, got {:?}", other.map(|o| o.anomaly_types)),
        }
        g.bench_function(name, |b| b.iter(|| check(std::hint::black_box(h), &opts)));
    }
    g.finish();
}

criterion_group!(benches, bench_check);
criterion_main!(benches);
