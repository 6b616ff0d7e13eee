//! The reference material beside the checkout (`../shared`, or the
//! directory named by `ISOLDE_SHARED`): tests that need it skip with a
//! message the test harness does not swallow.

use std::io::Write;
use std::path::PathBuf;

/// The shared directory: `$ISOLDE_SHARED`, else `../shared` beside the
/// checkout.
pub fn root() -> PathBuf {
    match std::env::var_os("ISOLDE_SHARED") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    }
}

/// Tells the person running the tests that `what` was skipped and why. It
/// writes to the process's standard error directly, which the test harness
/// does not capture, so the line shows in a plain `cargo test` run.
pub fn skip(what: &str, why: &str) {
    let line = format!(
        "SKIPPED {what}: {why} (these checks need the shared reference corpus beside the checkout, \
         or ISOLDE_SHARED=DIR naming it)\n"
    );
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// `rel` under [`root`] when it exists; otherwise `None`, after [`skip`]
/// names `what` as skipped.
pub fn path(rel: &str, what: &str) -> Option<PathBuf> {
    let p = root().join(rel);
    if p.exists() {
        Some(p)
    } else {
        skip(what, &format!("{} not found", p.display()));
        None
    }
}
