//! What a weak-level violation reports: the weakest level violated, the
//! Plume TAP, the Elle anomaly the cycle maps onto (if any), and the
//! transactions, reads and writes that show it.
//!
//! The data is defined with the other anomaly cases, in
//! [`crate::anomaly::weak`], so that [`crate::anomaly`] needs nothing from
//! the weak checker; this module keeps its names where the checker and its
//! users have always found them.

pub use crate::anomaly::weak::{Assumed, Cause, Violation, WCycle, WStep};
