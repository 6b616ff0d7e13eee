//! Naming a cycle from its explained steps (Elle's `cycle-explainer`).
//!
//! Only the data dependencies decide the base name: exactly one rw edge is
//! G-single (read skew), several non-adjacent rw edges G-nonadjacent (e.g. long
//! fork), several with two adjacent (cyclically) G2 (e.g. write skew), none
//! with a wr edge G1c (circular information flow), only ww edges G0 (write
//! cycle). Predicate steps count as their item kind (wwp as ww, wrp as wr,
//! rwp as rw); a cycle with an rwp step is a predicate anomaly (`G-single`,
//! `G-nonadjacent`, `G2`), one without uses the `-item` spellings, as Elle's
//! explainer has it (a wrp step alone does not make a predicate anomaly). A
//! realtime step adds `-realtime`; otherwise a process step adds `-process`.

use crate::anomaly::{rel, Rels};

/// Classifies a cycle given the relationship of each step, in order.
/// Returns `None` if the cycle has no data dependency at all.
pub fn classify(steps: &[Rels]) -> Option<String> {
    let count = |r: Rels| steps.iter().filter(|&&s| s & r != 0).count();
    let is_rw = |s: Rels| s & (rel::RW | rel::RWP) != 0;
    let rw = count(rel::RW | rel::RWP);
    let predicate = count(rel::RWP) > 0;
    let n = steps.len();
    let adjacent = (0..n).any(|i| is_rw(steps[i]) && is_rw(steps[(i + 1) % n]));
    let base = if rw == 1 {
        if predicate {
            "G-single"
        } else {
            "G-single-item"
        }
    } else if rw > 1 {
        match (adjacent, predicate) {
            (true, true) => "G2",
            (true, false) => "G2-item",
            (false, true) => "G-nonadjacent",
            (false, false) => "G-nonadjacent-item",
        }
    } else if count(rel::WR | rel::WRP) > 0 {
        "G1c"
    } else if count(rel::WW | rel::WWP) > 0 {
        "G0"
    } else {
        return None;
    };
    let suffix = if count(rel::REALTIME) > 0 {
        "-realtime"
    } else if count(rel::PROCESS) > 0 {
        "-process"
    } else {
        ""
    };
    Some(format!("{base}{suffix}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rel::*;

    #[test]
    fn names_cycles_like_elle() {
        assert_eq!(classify(&[WW, WW]).as_deref(), Some("G0"));
        assert_eq!(classify(&[WW, WR]).as_deref(), Some("G1c"));
        assert_eq!(classify(&[RW, WR]).as_deref(), Some("G-single-item"));
        assert_eq!(classify(&[RW, WR, RW, WW]).as_deref(), Some("G-nonadjacent-item"));
        // The last and first steps are adjacent too.
        assert_eq!(classify(&[RW, WR, RW]).as_deref(), Some("G2-item"));
        assert_eq!(classify(&[RW, RW]).as_deref(), Some("G2-item"));
        assert_eq!(classify(&[WW, PROCESS]).as_deref(), Some("G0-process"));
        assert_eq!(classify(&[RW, PROCESS, REALTIME]).as_deref(), Some("G-single-item-realtime"));
        assert_eq!(classify(&[REALTIME, PROCESS]), None);
        // Predicate steps: rwp makes a predicate anomaly, wrp alone does not.
        assert_eq!(classify(&[WRP, WRP]).as_deref(), Some("G1c"));
        assert_eq!(classify(&[RW, WRP]).as_deref(), Some("G-single-item"));
        assert_eq!(classify(&[RWP, WRP]).as_deref(), Some("G-single"));
        assert_eq!(classify(&[RWP, RWP]).as_deref(), Some("G2"));
        assert_eq!(classify(&[RWP, RW]).as_deref(), Some("G2"));
        assert_eq!(classify(&[RWP, WR, RW, WW]).as_deref(), Some("G-nonadjacent"));
        assert_eq!(classify(&[RWP, REALTIME]).as_deref(), Some("G-single-realtime"));
    }
}
