//! `isolde convert IN --to FORMAT`: a history in another checker's format.
//!
//! The input is read by the ordinary readers (any format `analyze` reads),
//! then written by the writer of the target format:
//!
//! - `plume` (Plume, PolySI, C4, AWDIT `-f plume`) and `awdit-test`
//!   (AWDIT's `test` format) from any register history
//!   ([`crate::gen::registers`] says how sessions, `:fail`, `:info` and
//!   values are laid out);
//! - `dbcop` (`history.bincode`) from any register history without `:info`
//!   transactions ([`crate::record::convert::dbcop_bytes`]);
//! - `json` (elle-cli JSON) from Jepsen EDN input, rewritten op by op
//!   ([`crate::gen::json::edn_to_json`]).

use crate::gen::{self, registers::ExportOptions, TextFormat};
use crate::ingest::{self, Format, ReadOptions};
use std::io::Write;
use std::path::Path;

/// A format `convert` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// elle-cli JSON (from EDN input).
    Json,
    /// dbcop's `history.bincode`.
    Dbcop,
    /// The Plume / PolySI / AWDIT text format.
    Plume,
    /// AWDIT's `test` format.
    AwditTest,
}

/// Converts the history at `input` (read as `format`) to `to`, writing it
/// to `out`. `pin_initial` applies to `plume` and `awdit-test` (see
/// [`ExportOptions::pin_initial`]). Errors name the input.
pub fn convert(
    input: &Path,
    format: Format,
    read: ReadOptions,
    to: Target,
    pin_initial: bool,
    out: &mut dyn Write,
) -> Result<(), String> {
    let h = ingest::read_path_with(input, format, read).map_err(|e| e.to_string())?;
    let name = input.display();
    match to {
        Target::Plume | Target::AwditTest => {
            let f = if to == Target::Plume { TextFormat::Plume } else { TextFormat::AwditTest };
            gen::write_text(&h, f, ExportOptions { pin_initial }, out)
        }
        Target::Dbcop => {
            let bytes = crate::record::convert::dbcop_bytes(&h).map_err(|e| format!("{name}: {e}"))?;
            out.write_all(&bytes).and_then(|()| out.flush()).map_err(|e| e.to_string())
        }
        Target::Json => {
            if input.as_os_str() == "-" || input.is_dir() {
                return Err(format!("{name}: json is written from an EDN file only"));
            }
            let text = std::fs::read_to_string(input).map_err(|e| format!("{name}: {e}"))?;
            if ingest::detect(&name.to_string(), text.as_bytes(), format) != Format::Edn {
                return Err(format!("{name}: json is written from Jepsen EDN input only"));
            }
            let json =
                gen::json::edn_to_json(text.trim_start_matches('\u{feff}')).map_err(|e| format!("{name}: {e}"))?;
            out.write_all(json.as_bytes()).and_then(|()| out.flush()).map_err(|e| e.to_string())
        }
    }
}
