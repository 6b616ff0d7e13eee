//! `isolde gen rw-register --level read-committed-be|read-atomic|
//! causal-cerone|prefix`: every generated history satisfies its level
//! (checked by `isolde::weak::check`, and for prefix consistency by the
//! exhaustive enumerator on small histories), and some seeds break the next
//! stronger level, so no store is trivially stronger than its level.

mod support;

use isolde::gen::rw_register::{RwKeyDist, RwRegisterConfig};
use isolde::gen::weak::{write_weak, WeakLevel};
use isolde::weak::front::Sessions;
use isolde::weak::oracle::{enumerate, Axiom};
use support::weak::{edn, front_of, weak_verdicts};

fn history(level: WeakLevel, seed: u64, txns: usize, processes: usize, keys: usize, faults: f64) -> String {
    let cfg = RwRegisterConfig {
        seed,
        txns,
        processes,
        min_txn_len: 1,
        max_txn_len: 4,
        keys,
        read_fraction: 0.5,
        key_dist: RwKeyDist::Uniform,
        fail_fraction: faults,
        info_fraction: faults,
    };
    let mut out = Vec::new();
    write_weak(&cfg, level, &mut out).expect("generates");
    String::from_utf8(out).expect("utf-8")
}

/// The weakest level index (RC 0, RA 1, CC 2) a level implies.
fn implied(level: WeakLevel) -> usize {
    match level {
        WeakLevel::ReadCommitted => 0,
        WeakLevel::ReadAtomic => 1,
        WeakLevel::Causal | WeakLevel::Prefix => 2,
    }
}

const LEVELS: [WeakLevel; 4] = [WeakLevel::ReadCommitted, WeakLevel::ReadAtomic, WeakLevel::Causal, WeakLevel::Prefix];

#[test]
fn generated_histories_satisfy_their_level() {
    for level in LEVELS {
        for seed in 0..6 {
            let faults = if seed % 2 == 0 { 0.0 } else { 0.1 };
            let h = edn(&history(level, seed, 600, 5, 12, faults));
            let got = weak_verdicts(&h);
            for (i, v) in got.iter().enumerate().take(implied(level) + 1) {
                assert_eq!(*v, Some(true), "{level:?} seed {seed}: level {i} of {got:?}");
            }
        }
    }
}

#[test]
fn small_prefix_histories_satisfy_prefix_consistency() {
    for seed in 0..60 {
        let h = edn(&history(WeakLevel::Prefix, seed, 7, 3, 2, 0.0));
        let f = front_of(&h, Sessions::Process);
        assert_eq!(enumerate(&f, Axiom::Prefix), Some(true), "seed {seed}");
    }
}

/// Some seed breaks the next stronger level: read committed's store gives
/// fractured reads, read atomic's causality violations, causal's long
/// forks, prefix's lost updates.
#[test]
fn each_store_can_break_the_next_stronger_level() {
    for level in LEVELS {
        let broken = (0..400u64).any(|seed| {
            let h = edn(&history(level, seed, 7, 3, 2, 0.0));
            let f = front_of(&h, Sessions::Process);
            let own = match level {
                WeakLevel::ReadCommitted => Axiom::ReadCommitted,
                WeakLevel::ReadAtomic => Axiom::ReadAtomic,
                WeakLevel::Causal => Axiom::Causal,
                WeakLevel::Prefix => Axiom::Prefix,
            };
            let next = match level {
                WeakLevel::ReadCommitted => Axiom::ReadAtomic,
                WeakLevel::ReadAtomic => Axiom::Causal,
                WeakLevel::Causal => Axiom::Prefix,
                WeakLevel::Prefix => Axiom::SnapshotIsolation,
            };
            assert_eq!(enumerate(&f, own), Some(true), "{level:?} seed {seed}");
            enumerate(&f, next) == Some(false)
        });
        assert!(broken, "{level:?}: no seed breaks the next level");
    }
}
