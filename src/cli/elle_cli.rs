//! elle-cli's command line (ligurio/elle-cli), translated onto isolde.
//!
//! `isolde elle-cli ARGS...`, or the `isolde` binary run through a link
//! named `elle-cli`, takes elle-cli's options with elle-cli's meanings and
//! defaults and answers as elle-cli does:
//!
//! | option | meaning | default |
//! |---|---|---|
//! | `-m`, `--model MODEL` | the workload: `list-append`, `rw-register` (Elle), `bank`, `counter`, `set`, `set-full`, `long-fork` (Jepsen's checkers, [`crate::jepsen`]), `comments`, `sequential` (elle-cli's own), `cas-register`, `mutex` (Knossos's linearizability, [`crate::linear`]) | required |
//! | `-f`, `--format edn\|json` | input syntax | by extension |
//! | `-v`, `--output text\|json` | per file, `path \t verdict`, or the whole result map as pretty JSON | `text` |
//! | `--verbose` | `--output json` | |
//! | `-c`, `--consistency-models A,B` | models expected to hold; `""` for none | `strict-serializable` |
//! | `-a`, `--anomalies A,B` | anomalies to look for besides those the models prohibit | `G0` |
//! | `-s`, `--cycle-search-timeout MS` | per-SCC cycle search budget | 1000 |
//! | `-d`, `--directory DIR` | write Elle's explanation files and plots there | none |
//! | `-p`, `--plot-format svg\|png` | plot image format | `svg` |
//! | `-t`, `--plot-timeout MS` | per-plot render budget | 5000 |
//! | `-b`, `--max-plot-bytes N` | skip plots whose DOT text is larger | 65536 |
//! | `-g`, `--group-size N` | long-fork: keys per read group (0: the first read's key count; elle-cli's 0 makes every read an error) | 0 |
//! | `-n`, `--allow-negative-balances` | bank: negative balances are allowed | |
//! | `-o`, `--total-amount N` | bank: the total every read must sum to | the first read's sum |
//! | `--max-transfer N` | bank: the largest transfer (larger ones are counted, not errors) | |
//!
//! isolde adds `--initial-value V` (cas-register, rw-register: the value
//! every register starts at, Knossos's model argument; neither elle-cli nor
//! Knossos's own CLI takes one), `--linearizable` (set-full: stale reads are errors, Jepsen's
//! `:linearizable?`), `--timeout SECS` (cas-register, mutex: the search's
//! budget; past it the verdict is `unknown`), `--all-anomalies` (print every case in `--output json`, which
//! otherwise shows [`crate::reports::table::DEFAULT_EXAMPLES`] per anomaly
//! type with the totals) and `--all-plots` (render a plot of every cycle in
//! `-d`, which otherwise renders
//! [`crate::reports::directory::DEFAULT_PLOTS_PER_TYPE`] per type; the
//! explanation files always hold every cycle).
//!
//! Output and exit status, as elle-cli's: one line `path \t true|false|unknown`
//! per file (elle-cli's `(println path "\t" valid?)`, so a space on both sides
//! of the tab; for the Jepsen and Knossos models, the result map of their
//! checker with `--output json`); exit 1 if any file is invalid, else 0
//! (`unknown` included);
//! 1 for an option error or a model that does not match the history; 0 with
//! the usage for `--help` or when `-m` is missing; 255 when a file cannot be
//! read or checked (elle-cli's uncaught exception).
//!
//! Where isolde answers differently, on purpose: histories are checked with
//! isolde's analysis, which finds what Elle misses (a read of a value no
//! transaction wrote is `garbage-read`, so elle-cli's `rw-register.edn`
//! example is invalid here), and rw-register serializability is decided
//! exactly; an unknown anomaly name is ignored with a warning (Elle ignores it
//! silently); a file that cannot be read is reported and the remaining files
//! are still checked (elle-cli stops); with several files and `-d`, each
//! file's output goes to `DIR/<file name>` (elle-cli overwrites one
//! directory).

use crate::anomaly::Workload;
use crate::check::{self, CheckOptions, Validity, WorkloadChoice};
use crate::history::{History, MopFn};
use crate::ingest::{Format, ReadOptions};
use crate::levels::names as model_names;
use crate::reports::{self, directory::PlotOptions, text::Naming};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;

/// elle-cli's models, each with the checker that implements it (kept
/// with the other model names, see [`crate::levels::names`]).
pub use crate::levels::names::ELLE_CLI_MODELS as MODELS;

/// An error in elle-cli's options (exit status 1, as elle-cli's).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ElleCliError {
    /// An option elle-cli does not have.
    #[error("Unknown option: \"{0}\"")]
    UnknownOption(String),
    /// An option that needs a value came last.
    #[error("Missing required argument for \"{0}\"")]
    MissingArgument(String),
    /// A value the option does not accept.
    #[error("Failed to validate \"{option} {value}\": {reason}")]
    Invalid {
        /// The option as written.
        option: String,
        /// Its value.
        value: String,
        /// What it accepts.
        reason: String,
    },
    /// A command-line argument that is not valid UTF-8 where text is needed.
    #[error("option {0:?} is not valid UTF-8")]
    NotUtf8(OsString),
}

/// The output of each file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// `path \t verdict`.
    Text,
    /// The result map as pretty JSON.
    Json,
}

/// elle-cli's options, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Args {
    /// `-m`: the model (workload) name; `None` prints the usage.
    pub model: Option<String>,
    /// `-f`: `Some(Format::Edn | Format::Json)`, or by extension.
    pub format: Option<Format>,
    /// `-v` / `--verbose`.
    pub output: Output,
    /// `-h`.
    pub help: bool,
    /// `--version`.
    pub version: bool,
    /// `-c`, split on commas (`""` is no model).
    pub consistency_models: Vec<String>,
    /// `-a`, split on commas.
    pub anomalies: Vec<String>,
    /// `-s`, milliseconds.
    pub cycle_search_timeout: u64,
    /// `-d`.
    pub directory: Option<PathBuf>,
    /// `-p`: `svg` or `png`.
    pub plot_format: String,
    /// `-t`, milliseconds.
    pub plot_timeout: u64,
    /// `-b`.
    pub max_plot_bytes: u64,
    /// `--all-anomalies` (isolde's).
    pub all_anomalies: bool,
    /// `-g`: long-fork's group size.
    pub group_size: u64,
    /// `-n`: bank's negative balances allowed.
    pub negative_balances: bool,
    /// `-o`: bank's total.
    pub total_amount: Option<i64>,
    /// `--max-transfer`: bank's largest transfer.
    pub max_transfer: Option<i64>,
    /// `--linearizable` (isolde's): set-full's `:linearizable?`.
    pub linearizable: bool,
    /// `--timeout SECS` (isolde's): the linearizability search's budget.
    pub timeout: Option<u64>,
    /// `--all-plots` (isolde's).
    pub all_plots: bool,
    /// `--initial-value V` (isolde's; neither elle-cli nor Knossos's CLI has
    /// one): the registers' initial value (cas-register, rw-register).
    pub initial_value: Option<crate::history::Value>,
    /// The history files (`-` is standard input).
    pub files: Vec<PathBuf>,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            model: None,
            format: None,
            output: Output::Text,
            help: false,
            version: false,
            consistency_models: vec!["strict-serializable".into()],
            anomalies: vec!["G0".into()],
            cycle_search_timeout: 1000,
            directory: None,
            plot_format: "svg".into(),
            plot_timeout: 5000,
            max_plot_bytes: 65536,
            all_anomalies: false,
            all_plots: false,
            group_size: 0,
            negative_balances: false,
            total_amount: None,
            max_transfer: None,
            linearizable: false,
            timeout: None,
            initial_value: None,
            files: Vec::new(),
        }
    }
}

/// Clojure's `(str/split s #",")` as elle-cli's `str->keywords` uses it: an
/// empty string is no names, trailing empty names are dropped, and a leading
/// colon is Elle's keyword spelling.
fn names(s: &str) -> Vec<String> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut v: Vec<String> = s.split(',').map(|x| x.trim_start_matches(':').to_string()).collect();
    while v.last().is_some_and(|x| x.is_empty()) {
        v.pop();
    }
    v
}

fn number(option: &str, value: &str) -> Result<u64, ElleCliError> {
    value.trim().parse::<u64>().map_err(|e| ElleCliError::Invalid {
        option: option.to_string(),
        value: value.to_string(),
        reason: format!("not a non-negative integer ({e})"),
    })
}

fn signed(option: &str, value: &str) -> Result<i64, ElleCliError> {
    value.trim().parse::<i64>().map_err(|e| ElleCliError::Invalid {
        option: option.to_string(),
        value: value.to_string(),
        reason: format!("not an integer ({e})"),
    })
}

fn one_of(option: &str, value: &str, allowed: &[&str]) -> Result<String, ElleCliError> {
    if allowed.contains(&value) {
        Ok(value.to_string())
    } else {
        Err(ElleCliError::Invalid {
            option: option.to_string(),
            value: value.to_string(),
            reason: format!("Must be one of {}", allowed.join(", ")),
        })
    }
}

/// Parses elle-cli's arguments (without the program name), as tools.cli
/// does: options before, between or after the files, `-x VALUE`, `-xVALUE`,
/// `--long VALUE` and `--long=VALUE`, `--` ending the options, and
/// `--verbose` meaning `--output json`.
pub fn parse(args: &[OsString]) -> Result<Args, ElleCliError> {
    let mut a = Args::default();
    let mut i = 0;
    let mut only_files = false;
    while i < args.len() {
        let raw = &args[i];
        i += 1;
        let Some(arg) = raw.to_str() else {
            // Only file names may be other than UTF-8.
            if only_files || !raw.to_string_lossy().starts_with('-') {
                a.files.push(PathBuf::from(raw));
                continue;
            }
            return Err(ElleCliError::NotUtf8(raw.clone()));
        };
        if only_files || arg == "-" || !arg.starts_with('-') {
            a.files.push(PathBuf::from(raw));
            continue;
        }
        if arg == "--" {
            only_files = true;
            continue;
        }
        // Split into the option's canonical long name and an attached value.
        let (name, attached): (&str, Option<String>) = if let Some(long) = arg.strip_prefix("--") {
            match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            }
        } else {
            let mut cs = arg[1..].chars();
            let c = cs.next().unwrap_or('-');
            let rest: String = cs.collect();
            let long = match c {
                'm' => "model",
                'f' => "format",
                'v' => "output",
                'h' => "help",
                'c' => "consistency-models",
                'a' => "anomalies",
                's' => "cycle-search-timeout",
                'd' => "directory",
                'p' => "plot-format",
                't' => "plot-timeout",
                'b' => "max-plot-bytes",
                'g' => "group-size",
                'n' => "allow-negative-balances",
                'o' => "total-amount",
                _ => return Err(ElleCliError::UnknownOption(arg.to_string())),
            };
            (long, (!rest.is_empty()).then_some(rest))
        };
        let flag = matches!(
            name,
            "help" | "version" | "verbose" | "allow-negative-balances" | "all-anomalies" | "all-plots" | "linearizable"
        );
        let known = flag
            || matches!(
                name,
                "model"
                    | "format"
                    | "output"
                    | "consistency-models"
                    | "anomalies"
                    | "cycle-search-timeout"
                    | "directory"
                    | "plot-format"
                    | "plot-timeout"
                    | "max-plot-bytes"
                    | "group-size"
                    | "max-transfer"
                    | "total-amount"
                    | "timeout"
                    | "initial-value"
            );
        if !known {
            return Err(ElleCliError::UnknownOption(arg.to_string()));
        }
        if flag {
            if attached.is_some() {
                return Err(ElleCliError::UnknownOption(arg.to_string()));
            }
            match name {
                "help" => a.help = true,
                "version" => a.version = true,
                "verbose" => a.output = Output::Json,
                "all-anomalies" => a.all_anomalies = true,
                "all-plots" => a.all_plots = true,
                "linearizable" => a.linearizable = true,
                _ => a.negative_balances = true,
            }
            continue;
        }
        let value = match attached {
            Some(v) => v,
            None => {
                let Some(v) = args.get(i) else { return Err(ElleCliError::MissingArgument(arg.to_string())) };
                i += 1;
                v.to_str().ok_or_else(|| ElleCliError::NotUtf8(v.clone()))?.to_string()
            }
        };
        match name {
            "model" => {
                let all: Vec<&str> = MODELS.iter().map(|(m, _)| *m).collect();
                a.model = Some(one_of(arg, &value, &all)?);
            }
            "format" => {
                a.format = Some(match one_of(arg, &value, &["edn", "json"])?.as_str() {
                    "edn" => Format::Edn,
                    _ => Format::Json,
                })
            }
            "output" => {
                a.output = if one_of(arg, &value, &["text", "json"])? == "json" { Output::Json } else { Output::Text }
            }
            "consistency-models" => a.consistency_models = names(&value),
            "anomalies" => a.anomalies = names(&value),
            "cycle-search-timeout" => a.cycle_search_timeout = number(arg, &value)?,
            "directory" => a.directory = Some(PathBuf::from(value)),
            "plot-format" => a.plot_format = one_of(arg, value.trim_start_matches(':'), &["svg", "png"])?,
            "plot-timeout" => a.plot_timeout = number(arg, &value)?,
            "max-plot-bytes" => a.max_plot_bytes = number(arg, &value)?,
            "group-size" => a.group_size = number(arg, &value)?,
            "timeout" => a.timeout = Some(number(arg, &value)?),
            "initial-value" => {
                a.initial_value = Some(super::jepsen::parse_initial_value(&value).map_err(|reason| {
                    ElleCliError::Invalid { option: arg.to_string(), value: value.clone(), reason }
                })?)
            }
            "max-transfer" => a.max_transfer = Some(signed(arg, &value)?),
            _ => a.total_amount = Some(signed(arg, &value)?),
        }
    }
    Ok(a)
}

/// elle-cli's options for the usage: the option, its default, what it does.
const OPTIONS: &[(&str, &str, &str)] = &[
    ("-m, --model MODEL", "", "A name of the workload to check (see the supported models)."),
    ("-f, --format FORMAT", "", "Format of file with history. Either 'edn' or 'json' (default: by extension)."),
    ("-v, --output OUTPUT", "text", "Output format. Either 'text' or 'json'."),
    ("    --verbose", "", "Same as --output json."),
    ("-h, --help", "", "Print usage."),
    ("    --version", "", "Print version and exit."),
    (
        "-c, --consistency-models MODELS",
        "strict-serializable",
        "Consistency models this history should obey, comma separated (\"\" for none).",
    ),
    ("-a, --anomalies ANOMALIES", "G0", "Specific anomalies to look for, comma separated."),
    ("-s, --cycle-search-timeout MS", "1000", "Milliseconds for searching a single SCC for a cycle."),
    (
        "-d, --directory DIRECTORY",
        "",
        "Where to write explanations and plots (with several files, one subdirectory per file).",
    ),
    ("-p, --plot-format FORMAT", "svg", "Either 'png' or 'svg'."),
    ("-t, --plot-timeout MS", "5000", "Milliseconds to wait for each plot to render."),
    ("-b, --max-plot-bytes BYTES", "65536", "Skip plots whose DOT text is larger."),
    ("-g, --group-size GROUP-SIZE", "0", "(Jepsen) long-fork: keys per read group (0: the first read's)."),
    ("-n, --allow-negative-balances", "", "(Bank) Allow negative balances in a bank model."),
    ("    --max-transfer MAX-TRANSFER", "", "(Bank) The largest transfer the test executes."),
    ("-o, --total-amount TOTAL-AMOUNT", "", "(Bank) Total amount every read must sum to (default: the first read's)."),
    ("    --linearizable", "", "(set-full) Stale reads make the history invalid."),
    ("    --timeout SECS", "", "(Knossos) Seconds the linearizability search may take; then unknown."),
    ("    --initial-value V", "nil", "(Knossos, rw-register) The value every register starts at (an EDN value)."),
    (
        "    --all-anomalies",
        "",
        "With --output json, print every case (default: the first 10 per anomaly type, with totals).",
    ),
    ("    --all-plots", "", "With -d, plot every cycle (default: 10 per anomaly type; explanations hold all)."),
];

/// The usage text (`-h`, or no `-m`), wrapped at 80 columns: each option
/// and its default on one line, what it does on the next ones.
pub fn usage() -> String {
    use super::help::wrap_text;
    let mut s = String::from(
        "elle-cli (isolde) - command-line transactional safety checker.\n\n\
         Usage: elle-cli -m model [options] files\n\n\
         Supported models (isolde's own implementations of these checkers):\n",
    );
    for (m, tool) in MODELS {
        s.push_str(&wrap_text(&format!("{m} - {tool}."), "  ", "      ", 80));
        s.push('\n');
    }
    s.push_str("\nOptions:\n");
    for (option, default, what) in OPTIONS {
        s.push_str(&format!("  {option}"));
        if !default.is_empty() {
            s.push_str(&format!("  (default: {default})"));
        }
        s.push('\n');
        s.push_str(&wrap_text(what, "        ", "        ", 80));
        s.push('\n');
    }
    s.push('\n');
    s.push_str(&wrap_text(
        "Exit status: 1 if any history is invalid, else 0 (unknown included); 1 for an option error or a model \
         that does not match the history; 255 when a file cannot be read or checked.",
        "",
        "",
        80,
    ));
    s.push('\n');
    s
}

/// The Jepsen or Knossos workload of an elle-cli model (every model but
/// Elle's two).
pub fn jepsen_workload(model: &str) -> Option<crate::jepsen::detect::Workload> {
    crate::jepsen::detect::Workload::from_name(model)
}

/// Runs a Jepsen or Knossos model over the files, as elle-cli prints and
/// exits: `path \t verdict` or the result map as JSON per file; 1 if any
/// is invalid or does not fit the model, 255 if any cannot be read, else 0.
fn run_jepsen(a: &Args, w: crate::jepsen::detect::Workload, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    use super::jepsen::{check_ops, JepsenOptions};
    use crate::jepsen::{JepsenError, Ops};
    let opts = JepsenOptions {
        bank: crate::jepsen::bank::BankOptions {
            negative_balances: a.negative_balances,
            total_amount: a.total_amount,
            max_transfer: a.max_transfer,
        },
        group_size: usize::try_from(a.group_size).unwrap_or(usize::MAX),
        set_full: crate::jepsen::set_full::SetFullOptions { linearizable: a.linearizable },
        queue_model: Default::default(),
        linear: crate::linear::LinearOptions {
            timeout: a.timeout.map(Duration::from_secs),
            initial: a.initial_value.clone(),
            ..Default::default()
        },
    };
    let (mut invalid, mut mismatch, mut failed) = (false, false, false);
    for file in &a.files {
        let checked = Ops::read(file, a.format.unwrap_or(Format::Auto)).and_then(|ops| check_ops(&ops, w, &opts));
        let r = match checked {
            Ok(r) => r,
            Err(e @ JepsenError::Model { .. }) => {
                let _ = writeln!(err, "{e}");
                mismatch = true;
                continue;
            }
            Err(e) => {
                let _ = writeln!(err, "isolde: {e}");
                failed = true;
                continue;
            }
        };
        invalid |= r.valid == Validity::Invalid;
        let written = match a.output {
            Output::Text => writeln!(out, "{} \t {}", file.display(), r.valid.name()),
            Output::Json => writeln!(out, "{}", r.to_json()),
        };
        if let Err(e) = written.and_then(|()| out.flush()) {
            let _ = writeln!(err, "isolde: writing the result: {e}");
            return EXIT_ERROR;
        }
    }
    if failed {
        EXIT_ERROR
    } else if invalid || mismatch {
        1
    } else {
        0
    }
}

/// The workload of an elle-cli model isolde checks.
pub fn workload(model: &str) -> Option<Workload> {
    match model {
        "list-append" => Some(Workload::ListAppend),
        "rw-register" => Some(Workload::RwRegister),
        _ => None,
    }
}

/// elle-cli's model-mismatch check: a list-append history holds only
/// appends and reads, an rw-register history only writes and reads. Returns
/// elle-cli's message for the first client op that does not fit.
pub fn model_mismatch(h: &History, w: Workload) -> Option<String> {
    let (bad, bad_name, other) = match w {
        Workload::ListAppend => (MopFn::Write, ":w", "rw-register"),
        Workload::RwRegister => (MopFn::Append, ":append", "list-append"),
        Workload::ClosedPredicate => return None,
    };
    let op = h.ops.iter().find(|o| h.mops_of(o).iter().any(|m| m.f == bad))?;
    let fits_other = !h.mops.iter().any(|m| {
        m.f == match w {
            Workload::ListAppend => MopFn::Append,
            Workload::RwRegister | Workload::ClosedPredicate => MopFn::Write,
        }
    });
    let hint = if fits_other { format!(". This history looks like a \"{other}\" workload") } else { String::new() };
    Some(format!(
        "Model \"{}\" does not match this history: op at :index {} contains a micro-operation with key {bad_name}, \
         which is not supported by this model{hint} - wrong model selected?",
        w.name(),
        op.index
    ))
}

impl Args {
    /// The check these options ask for: elle-cli's defaults, Elle's
    /// inference, isolde's exact check of register histories. Anomaly names
    /// isolde does not know are left out (Elle never matches them), each
    /// with a warning in `warnings`. Fails for an unknown model name, as
    /// Elle does.
    pub fn check_options(&self, w: Workload, warnings: &mut Vec<String>) -> Result<CheckOptions, String> {
        let models = Some(self.consistency_models.clone());
        check::resolve_models(&models).map_err(|e| match &e {
            check::CheckError::UnknownModel(m, _) => model_names::workload_hint(m, "-m").unwrap_or(e.to_string()),
            _ => e.to_string(),
        })?;
        let mut anomalies = Vec::new();
        for a in &self.anomalies {
            match check::resolve_anomalies(std::slice::from_ref(a)) {
                Ok(mut v) => anomalies.append(&mut v),
                Err(_) => warnings.push(format!(
                    "ignoring anomaly \"{a}\", which Elle does not know (elle-cli ignores it silently); known: {}",
                    check::known_anomaly_names().join(", ")
                )),
            }
        }
        Ok(CheckOptions {
            workload: WorkloadChoice::Fixed(w),
            models,
            anomalies,
            cycle_search_timeout: Duration::from_millis(self.cycle_search_timeout),
            rw: crate::infer::rw_register::RwOptions::default(),
            keep_sccs: self.directory.is_some(),
            keep_order: false,
            exact: Some(crate::si_check::ExactOptions::default()),
            weak: crate::weak::Options::default(),
            // elle-cli prints a verdict per file: no ladder.
            ladder: false,
            initial_value: self.initial_value.clone(),
        })
    }

    /// Options for `-d`: Elle's file names and explanations, and at most
    /// [`crate::reports::directory::DEFAULT_PLOTS_PER_TYPE`] plots per type
    /// unless `--all-plots`.
    pub fn plot_options(&self) -> PlotOptions {
        PlotOptions {
            format: self.plot_format.clone(),
            max_bytes: usize::try_from(self.max_plot_bytes).unwrap_or(usize::MAX),
            timeout: Duration::from_millis(self.plot_timeout),
            max_plots_per_type: (!self.all_plots).then_some(reports::directory::DEFAULT_PLOTS_PER_TYPE),
            naming: Naming::Elle,
            values: reports::text::Values::Full,
        }
    }
}

/// The exit status elle-cli gives when a file cannot be read or checked.
pub const EXIT_ERROR: u8 = 255;

/// Runs elle-cli's command line (without the program name): checks each
/// file, prints elle-cli's output on `out` and messages on `err`, and
/// returns elle-cli's exit status.
pub fn run(args: &[OsString], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let a = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            let _ = writeln!(err, "{e}");
            return 1;
        }
    };
    if a.version {
        let _ = writeln!(out, "elle-cli (isolde {})", env!("CARGO_PKG_VERSION"));
        return 0;
    }
    let Some(model) = a.model.clone().filter(|_| !a.help) else {
        let _ = write!(out, "{}", usage());
        return 0;
    };
    if let Some(w) = jepsen_workload(&model) {
        return run_jepsen(&a, w, out, err);
    }
    let Some(w) = workload(&model) else {
        let _ = writeln!(err, "isolde: unknown model {model}");
        return 1;
    };
    let mut warnings = Vec::new();
    let opts = match a.check_options(w, &mut warnings) {
        Ok(o) => o,
        Err(e) => {
            let _ = writeln!(err, "isolde: {e}");
            return EXIT_ERROR;
        }
    };
    for warning in warnings {
        let _ = writeln!(err, "isolde: {warning}");
    }
    let (mut invalid, mut mismatch, mut failed) = (false, false, false);
    let several = a.files.len() > 1;
    let limit = (!a.all_anomalies).then_some(reports::table::DEFAULT_EXAMPLES);
    for file in &a.files {
        let format = a.format.unwrap_or(Format::Auto);
        let checked = match super::read_and_check(file, format, ReadOptions::default(), &opts) {
            Ok(c) => c,
            Err(e) => {
                let _ = writeln!(err, "isolde: {e}");
                failed = true;
                continue;
            }
        };
        let (h, o) = (&checked.history, &checked.outcome);
        if let Some(msg) = model_mismatch(h, w) {
            let _ = writeln!(err, "{msg}");
            mismatch = true;
            continue;
        }
        invalid |= o.valid == Validity::Invalid;
        let written = match a.output {
            Output::Text => writeln!(out, "{} \t {}", file.display(), o.valid.name()),
            Output::Json => {
                let tree = reports::result_map::result_map_limited(h, o, limit);
                reports::json::write_io(out, h, &tree).and_then(|()| writeln!(out))
            }
        };
        if let Err(e) = written.and_then(|()| out.flush()) {
            let _ = writeln!(err, "isolde: writing the result: {e}");
            return EXIT_ERROR;
        }
        if a.output == Output::Json {
            note_truncated(err, o, limit);
        }
        if let Some(dir) = &a.directory {
            super::write_directory(h, o, &super::directory_for(dir, file, several), &a.plot_options());
        }
    }
    if failed {
        EXIT_ERROR
    } else if invalid || mismatch {
        1
    } else {
        0
    }
}

/// Tells on `err` which anomaly types were cut to `limit` cases.
pub fn note_truncated(err: &mut dyn Write, o: &check::Outcome, limit: Option<usize>) {
    let Some(limit) = limit else { return };
    for (name, cases) in &o.anomalies {
        if cases.len() > limit {
            let _ = writeln!(
                err,
                "isolde: printed {limit} of {} {name} cases (--all-anomalies prints all; -d DIR writes all)",
                cases.len()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Args, ElleCliError> {
        parse(&args.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn defaults_are_elle_clis() {
        let a = p(&["-m", "list-append", "h.edn"]).expect("parses");
        assert_eq!(a.model.as_deref(), Some("list-append"));
        assert_eq!(a.consistency_models, vec!["strict-serializable"]);
        assert_eq!(a.anomalies, vec!["G0"]);
        assert_eq!((a.cycle_search_timeout, a.plot_timeout, a.max_plot_bytes), (1000, 5000, 65536));
        assert_eq!(a.output, Output::Text);
        assert_eq!(a.files, vec![PathBuf::from("h.edn")]);
    }

    #[test]
    fn options_anywhere_attached_or_separate() {
        let a = p(&[
            "h1.edn",
            "--model=rw-register",
            "-cserializable,snapshot-isolation",
            "h2.json",
            "--verbose",
            "-s",
            "5",
        ])
        .expect("parses");
        assert_eq!(a.model.as_deref(), Some("rw-register"));
        assert_eq!(a.consistency_models, vec!["serializable", "snapshot-isolation"]);
        assert_eq!(a.output, Output::Json);
        assert_eq!(a.cycle_search_timeout, 5);
        assert_eq!(a.files, vec![PathBuf::from("h1.edn"), PathBuf::from("h2.json")]);
        let a = p(&["-m", "list-append", "-c", "", "-a", "G1c,G2,", "--", "-weird.edn"]).expect("parses");
        assert!(a.consistency_models.is_empty());
        assert_eq!(a.anomalies, vec!["G1c", "G2"]);
        assert_eq!(a.files, vec![PathBuf::from("-weird.edn")]);
    }

    #[test]
    fn bad_options_are_errors() {
        assert_eq!(p(&["-x"]), Err(ElleCliError::UnknownOption("-x".into())));
        assert_eq!(p(&["-m"]), Err(ElleCliError::MissingArgument("-m".into())));
        assert!(matches!(p(&["-m", "bogus"]), Err(ElleCliError::Invalid { .. })));
        assert!(matches!(p(&["-f", "xml"]), Err(ElleCliError::Invalid { .. })));
        assert!(matches!(p(&["-v", "yaml"]), Err(ElleCliError::Invalid { .. })));
        assert!(matches!(p(&["-s", "soon"]), Err(ElleCliError::Invalid { .. })));
        assert!(matches!(p(&["-p", "gif"]), Err(ElleCliError::Invalid { .. })));
    }

    #[test]
    fn every_model_has_a_checker() {
        for (m, _) in MODELS {
            assert_ne!(jepsen_workload(m).is_some(), workload(m).is_some(), "{m}");
        }
        let a = p(&["-m", "bank", "-n", "-o", "-5", "--max-transfer", "7", "-g", "3", "f.edn"]).expect("parses");
        assert!(a.negative_balances);
        assert_eq!((a.total_amount, a.max_transfer, a.group_size), (Some(-5), Some(7), 3));
        assert!(matches!(p(&["-g", "x"]), Err(ElleCliError::Invalid { .. })));
    }
}
