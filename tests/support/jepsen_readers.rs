//! The two ways of reading Jepsen op values (`Reading::Fast`, compact
//! values straight from the EDN text; `Reading::Generic`, a value tree made
//! compact afterwards) compared on one history: the same ops, and for each
//! workload the same verdict and result map, or the same error.

use isolde::cli::jepsen::{check_ops, JepsenOptions};
use isolde::ingest::Format;
use isolde::jepsen::detect::Workload;
use isolde::jepsen::ops::Reading;
use isolde::jepsen::Ops;

/// Reads `bytes` both ways and asserts the ops agree field by field (values
/// as written, and the same compact shape); returns the fast read.
pub fn read_both(name: &str, bytes: &[u8], format: Format) -> Result<(Ops, Ops), String> {
    let fast = Ops::read_bytes_with(name, bytes, format, Reading::Fast).map_err(|e| e.to_string());
    let generic = Ops::read_bytes_with(name, bytes, format, Reading::Generic).map_err(|e| e.to_string());
    match (fast, generic) {
        (Ok(f), Ok(g)) => {
            assert_same_ops(name, &f, &g);
            Ok((f, g))
        }
        (Err(f), Err(g)) => {
            assert_eq!(f, g, "{name}: the two readers fail differently");
            Err(f)
        }
        (f, g) => panic!("{name}: one reader fails: fast {:?}, generic {:?}", f.err(), g.err()),
    }
}

/// Asserts two reads of one history hold the same ops.
pub fn assert_same_ops(name: &str, a: &Ops, b: &Ops) {
    assert_eq!(a.ops.len(), b.ops.len(), "{name}: op count");
    assert_eq!(a.pair, b.pair, "{name}: pairing");
    for (i, (x, y)) in a.ops.iter().zip(&b.ops).enumerate() {
        let at = format!("{name}: op {i} (line {})", x.line);
        assert_eq!(
            (x.index, x.op_type, &x.f, &x.process, x.time, &x.extra, x.line, x.has_value),
            (y.index, y.op_type, &y.f, &y.process, y.time, &y.extra, y.line, y.has_value),
            "{at}"
        );
        assert_eq!(std::mem::discriminant(&x.value), std::mem::discriminant(&y.value), "{at}: value shape");
        let (vx, vy) = (a.value(i), b.value(i));
        assert!(*vx == *vy, "{at}: {vx} vs {vy}");
        assert_eq!(vx.to_string(), vy.to_string(), "{at}");
    }
}

/// Checks both reads as each workload and asserts the same verdict and
/// result map (or the same error); returns the results as EDN (or errors).
pub fn check_both(name: &str, fast: &Ops, generic: &Ops, workloads: &[Workload], o: &JepsenOptions) -> Vec<String> {
    let mut out = Vec::new();
    for &w in workloads {
        let show = |ops: &Ops| match check_ops(ops, w, o) {
            Ok(r) => format!("{} {}", r.valid.name(), r.to_edn()),
            Err(e) => format!("error: {e}"),
        };
        let (f, g) = (show(fast), show(generic));
        assert_eq!(f, g, "{name} as {}", w.name());
        out.push(f);
    }
    out
}
