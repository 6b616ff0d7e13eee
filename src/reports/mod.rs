//! Rendering results for people and programs.
//!
//! [`tree`] turns an [`crate::check::Outcome`] into Elle's result map as a
//! small value tree (ops as Jepsen op maps, steps and cases with Elle's keys);
//! [`edn`] and [`json`] print that tree, so both formats always agree; [`table`]
//! prints a terminal summary laid out by [`wrap`] within the terminal's
//! width, with one-line [`witness`]es; [`text`] explains cycles in Elle's
//! words, [`words`] every other anomaly, [`elide`] shortens long values for
//! people; [`directory`] writes Elle's output directory and [`html`] one
//! self-contained page of the whole check ([`html_set`] one page for the
//! histories `explore` and `hermitage` write); [`online`] the one-line
//! reports of the online checker.

pub mod directory;
pub mod dot;
pub mod edn;
pub mod elide;
pub mod html;
pub mod html_set;
pub mod json;
pub mod online;
pub mod result_map;
pub mod table;
pub mod text;
pub mod tree;
pub mod weak;
pub mod witness;
pub mod words;
pub mod wrap;

use std::fmt;

/// Runs a printer into a string (which cannot fail).
fn render(print: impl FnOnce(&mut String) -> fmt::Result) -> String {
    let mut s = String::new();
    let _ = print(&mut s);
    s
}

/// Runs a printer over a byte stream, reporting the stream's own error.
fn stream<W: std::io::Write + ?Sized>(
    w: &mut W,
    print: impl FnOnce(&mut IoFmt<'_, W>) -> fmt::Result,
) -> std::io::Result<()> {
    let mut f = IoFmt { w, err: None };
    let r = print(&mut f);
    match (r, f.err) {
        (_, Some(e)) => Err(e),
        (Err(_), None) => Err(std::io::Error::other("formatting failed")),
        (Ok(()), None) => Ok(()),
    }
}

/// A `fmt::Write` over an `io::Write` that keeps the first I/O error, so each
/// printer is written once for strings and for streams.
struct IoFmt<'a, W: std::io::Write + ?Sized> {
    w: &'a mut W,
    err: Option<std::io::Error>,
}

impl<W: std::io::Write + ?Sized> fmt::Write for IoFmt<'_, W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.w.write_all(s.as_bytes()).map_err(|e| {
            self.err.get_or_insert(e);
            fmt::Error
        })
    }
}
