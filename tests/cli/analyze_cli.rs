//! `isolde analyze` as a Jepsen user meets it: several files per call,
//! standard input, `-c`, output bounded per anomaly type, one name per
//! transaction everywhere, tables at any terminal width, the tagged
//! literals Jepsen writes, short `--help` with `--help-all` for the knobs,
//! and hints for model names that are not models.

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;
use support::cli::{anomaly_types, isolde, isolde_columns, listed_options, long_options, temp_dir, Run};

const LIMIT: Duration = Duration::from_secs(120);

const G1C: &str = "{:type :ok, :process 0, :value [[:append :x 1] [:r :y [1]]]}
{:type :ok, :process 1, :value [[:append :y 1] [:r :x [1]]]}
";

const VALID: &str = "{:type :ok, :process 0, :value [[:append :x 1]]}\n{:type :ok, :process 0, :value [[:r :x [1]]]}\n";

/// Only a read of the initial state: serializability cannot be decided.
const UNKNOWN: &str = "{:type :ok, :process 0, :value [[:r :x nil]]}\n";

/// `n` separate G1c pairs on keys of their own, with sparse indices.
fn many_g1c(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let (x, y) = (2 * i, 2 * i + 1);
        s.push_str(&format!(
            "{{:index {}, :type :ok, :process 0, :value [[:append {x} 1] [:r {y} [1]]]}}\n",
            10 * i + 3
        ));
        s.push_str(&format!(
            "{{:index {}, :type :ok, :process 1, :value [[:append {y} 1] [:r {x} [1]]]}}\n",
            10 * i + 7
        ));
    }
    s
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.to_string_lossy().into_owned()
}

fn analyze(args: &[&str]) -> Run {
    isolde(&[&["analyze"], args].concat(), None, LIMIT)
}

/// Several files: one JSON line each, naming its file, in order; the exit
/// status is the worst verdict (invalid, then error, then unknown).
#[test]
fn several_files_give_one_json_line_each_and_the_worst_exit_status() {
    let dir = temp_dir("analyze-many");
    let (bad, good, unknown) =
        (write(&dir, "bad.edn", G1C), write(&dir, "good.edn", VALID), write(&dir, "unk.edn", UNKNOWN));
    let missing = dir.join("missing.edn").to_string_lossy().into_owned();
    let r = analyze(&["-f", "json", "-m", "serializable", &good, &bad, &unknown]);
    assert_eq!(r.code, 1, "{r:?}");
    let lines: Vec<serde_json::Value> =
        r.stdout.lines().map(|l| serde_json::from_str(l).expect("one JSON value per line")).collect();
    assert_eq!(lines.len(), 3, "{}", r.stdout);
    assert_eq!(lines[0]["file"], good.as_str());
    assert_eq!(lines[0]["valid?"], true);
    assert_eq!(lines[1]["file"], bad.as_str());
    assert_eq!(anomaly_types(&lines[1]), vec!["G1c"]);
    assert_eq!(lines[2]["valid?"], "unknown");
    let codes = [
        (&[good.as_str(), unknown.as_str()][..], 3),
        (&[good.as_str(), good.as_str()], 0),
        (&[unknown.as_str(), missing.as_str()], 2),
        (&[missing.as_str(), bad.as_str()], 1),
    ];
    for (files, code) in codes {
        let r = analyze(&[&["-f", "json", "-m", "serializable"][..], files].concat());
        assert_eq!(r.code, code, "{files:?}: {r:?}");
    }
    // An unreadable file is a line of its own, with the error.
    let r = analyze(&["-f", "json", &missing, &good]);
    let first: serde_json::Value = serde_json::from_str(r.stdout.lines().next().unwrap_or_default()).expect("json");
    assert_eq!(first["file"], missing.as_str());
    assert!(first["error"].as_str().is_some_and(|e| e.contains("missing.edn")), "{first}");
    // Tables come one after another, each naming its file.
    let r = analyze(&["-f", "table", &good, &bad]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains(&format!("{good}: list-append history"))
            && r.stdout.contains(&format!("{bad}: list-append history")),
        "{}",
        r.stdout
    );
}

/// `-` reads standard input, alone or among files.
#[test]
fn dash_reads_standard_input() {
    let r = isolde(&["analyze", "-", "-f", "json"], Some(G1C.as_bytes()), LIMIT);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(anomaly_types(&r.json()), vec!["G1c"]);
    let dir = temp_dir("analyze-stdin");
    let good = write(&dir, "good.edn", VALID);
    let r = isolde(&["analyze", &good, "-", "-f", "json"], Some(G1C.as_bytes()), LIMIT);
    let lines: Vec<serde_json::Value> = r.stdout.lines().map(|l| serde_json::from_str(l).expect("json")).collect();
    assert_eq!(lines[1]["file"], "-");
    assert_eq!(anomaly_types(&lines[1]), vec!["G1c"]);
    let r = isolde(&["analyze", "-", "-"], Some(G1C.as_bytes()), LIMIT);
    assert_eq!(r.code, 2, "{r:?}");
}

/// `-c` / `--consistency-models` is `--model`.
#[test]
fn consistency_models_is_an_alias_of_model() {
    let dir = temp_dir("analyze-c");
    // Write skew: snapshot isolation holds, serializability does not.
    let f = write(
        &dir,
        "ws.edn",
        "{:type :ok, :process 0, :value [[:r :x nil] [:append :y 1]]}\n{:type :ok, :process 1, :value [[:r :y nil] [:append :x 1]]}\n",
    );
    for flag in ["-m", "-c", "--model", "--consistency-models"] {
        let r = analyze(&["-f", "json", flag, "snapshot-isolation", &f]);
        assert_eq!(r.code, 0, "{flag}: {r:?}");
        let r = analyze(&["-f", "json", flag, "serializable", &f]);
        assert_eq!(r.code, 1, "{flag}: {r:?}");
    }
}

/// JSON and EDN print at most 10 cases per anomaly type with the total,
/// the table's `--verbose` too; `--all-anomalies` prints all.
#[test]
fn output_is_bounded_per_anomaly_type_with_totals() {
    let dir = temp_dir("analyze-bounded");
    let f = write(&dir, "many.edn", &many_g1c(30));
    let r = analyze(&["-f", "json", &f]);
    assert_eq!(r.code, 1);
    let v = r.json();
    assert_eq!(v["anomalies"]["G1c"].as_array().map(Vec::len), Some(10), "{v}");
    assert_eq!(v["truncated"]["G1c"], serde_json::json!({"shown": 10, "total": 30}));
    assert!(r.stderr.contains("printed 10 of 30 G1c cases") && r.stderr.contains("--all-anomalies"), "{}", r.stderr);
    let r = analyze(&["-f", "json", "--all-anomalies", &f]);
    let v = r.json();
    assert_eq!(v["anomalies"]["G1c"].as_array().map(Vec::len), Some(30));
    assert!(v.get("truncated").is_none(), "{v}");
    let r = analyze(&["-f", "edn", &f]);
    assert!(r.stdout.contains(":truncated {:G1c {:shown 10, :total 30}}"), "{}", r.stdout);
    let r = analyze(&["-f", "table", "--verbose", &f]);
    assert_eq!(r.stdout.matches("\nG1c #").count(), 10, "{}", r.stdout);
    assert!(r.stdout.contains("20 more G1c cases not shown (30 in all"), "{}", r.stdout);
    let r = analyze(&["-f", "table", "--verbose", "--all-anomalies", &f]);
    assert_eq!(r.stdout.matches("\nG1c #").count(), 30);
}

/// `-d` explains every cycle but plots at most 10 per type (and of SCCs),
/// saying so; `--all-plots` plots all.
#[test]
fn directory_explains_all_and_plots_a_bounded_number() {
    let dir = temp_dir("analyze-plots");
    let f = write(&dir, "many.edn", &many_g1c(30));
    let out = dir.join("out");
    let r = analyze(&["-f", "json", "-d", &out.to_string_lossy(), &f]);
    assert_eq!(r.code, 1);
    let text = std::fs::read_to_string(out.join("G1c.txt")).expect("explanations");
    assert_eq!(text.matches("G1c #").count(), 30);
    let dots = |d: &std::path::Path| {
        std::fs::read_dir(d)
            .map(|it| it.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "dot")).count())
            .unwrap_or(0)
    };
    assert_eq!(dots(&out.join("G1c")), 10);
    assert_eq!(dots(&out.join("sccs")), 10);
    assert!(r.stderr.contains("plotted 10 of 30 G1c cases") && r.stderr.contains("--all-plots"), "{}", r.stderr);
    let all = dir.join("all");
    let r = analyze(&["-f", "json", "--all-plots", "-d", &all.to_string_lossy(), &f]);
    assert_eq!(r.code, 1);
    assert_eq!(dots(&all.join("G1c")), 30);
    assert!(!r.stderr.contains("plotted 10"), "{}", r.stderr);
}

/// Several files with `-d`: each file's directory is `DIR/<file name>`.
#[test]
fn directory_per_file_with_several_files() {
    let dir = temp_dir("analyze-dirs");
    let (a, b) = (write(&dir, "a.edn", G1C), write(&dir, "b.edn", G1C));
    let out = dir.join("out");
    let r = analyze(&["-f", "json", "-d", &out.to_string_lossy(), &a, &b]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(out.join("a.edn/G1c.txt").exists() && out.join("b.edn/G1c.txt").exists());
}

fn t_names(s: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let b = s.as_bytes();
    for (i, _) in s.match_indices('T') {
        let prev_ok = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        let digits: String = s[i + 1..].chars().take_while(char::is_ascii_digit).collect();
        if prev_ok && !digits.is_empty() {
            names.insert(format!("T{digits}"));
        }
    }
    names
}

/// One numbering: a transaction has the same name (`T<index>`) in the
/// table, `--verbose`, the JSON result (its `:index`), the `-d`
/// explanation and the plot.
#[test]
fn one_name_per_transaction_everywhere() {
    let dir = temp_dir("analyze-names");
    let f = write(&dir, "h.edn", &many_g1c(1));
    let expected: BTreeSet<String> = ["T3", "T7"].iter().map(|s| s.to_string()).collect();
    let r = analyze(&["-f", "json", &f]);
    let cycle = &r.json()["anomalies"]["G1c"][0]["cycle"];
    let from_json: BTreeSet<String> =
        cycle.as_array().expect("cycle").iter().map(|op| format!("T{}", op["index"])).collect();
    assert_eq!(from_json, expected);
    let table = analyze(&["-f", "table", &f]).stdout;
    let row = table.lines().find(|l| l.contains("G1c") && l.contains("-wr->")).expect("G1c row");
    assert_eq!(t_names(row), expected, "{row}");
    let verbose = analyze(&["-f", "table", "--verbose", &f]).stdout;
    let explanation = &verbose[verbose.find("G1c #0").expect("explained")..];
    assert_eq!(t_names(explanation.split("\n\n\n").next().unwrap_or_default()), expected, "{explanation}");
    let out = dir.join("out");
    analyze(&["-f", "json", "-d", &out.to_string_lossy(), &f]);
    let txt = std::fs::read_to_string(out.join("G1c.txt")).expect("txt");
    assert_eq!(t_names(&txt), expected, "{txt}");
    let dot = std::fs::read_to_string(out.join("G1c/0.dot")).expect("dot");
    assert_eq!(t_names(&dot), expected, "{dot}");
}

/// A terminal width of zero (or unknown) lays tables out in 80 columns; a
/// usable width is kept.
#[test]
fn tables_fit_any_terminal_width() {
    use isolde::reports::table::{effective_width, render_with, TableOptions};
    assert_eq!(effective_width(Some(0)), 80);
    assert_eq!(effective_width(None), 80);
    assert_eq!(effective_width(Some(5)), 80);
    assert_eq!(effective_width(Some(132)), 132);
    let h = isolde::ingest::read_bytes("h.edn", many_g1c(3).as_bytes(), isolde::ingest::Format::Edn).expect("parses");
    let o = isolde::check::check(&h, &isolde::check::CheckOptions::default()).expect("runs");
    for (width, max) in [(Some(0), 80), (Some(40), 40), (Some(200), 200)] {
        let t = render_with(&h, &o, &TableOptions { width, ..TableOptions::default() });
        assert!(t.contains("G1c") && t.contains("read-committed") && t.contains("invalid"), "{width:?}: {t}");
        for l in t.lines().filter(|l| l.starts_with(['┌', '│', '├', '└'])) {
            assert!(l.chars().count() <= max, "{width:?}: {} columns: {l}", l.chars().count());
        }
    }
}

/// `COLUMNS` decides the width of everything `analyze` prints on a table
/// (tables, the header, `also not:`, `--verbose`'s explanations): no line
/// is wider, level names are never cut at 80 columns and are cut only
/// after a hyphen at 60, and nothing is lost to wrapping.
#[test]
fn output_fits_columns_and_names_stay_whole() {
    let levels = [
        "read-committed-be",
        "monotonic-atomic-view",
        "causal-cerone",
        "snapshot-isolation",
        "serializable",
        "strong-session-snapshot-isolation",
        "strong-session-serializable",
        "strict-serializable",
    ];
    for cols in [80usize, 60] {
        for verbose in [false, true] {
            let mut args = vec!["analyze", "examples/sample.edn", "-f", "table"];
            if verbose {
                args.push("--verbose");
            }
            let r = support::cli::isolde_columns(&args, cols);
            assert_eq!(r.code, 1, "{r:?}");
            for l in r.stdout.lines() {
                assert!(l.chars().count() <= cols, "COLUMNS={cols}: {} columns: {l}", l.chars().count());
            }
            // Every level is in a cell of its own line, whole.
            let cells: Vec<String> =
                r.stdout.lines().filter_map(|l| l.split(['│', '┆']).nth(1)).map(|c| c.trim().to_string()).collect();
            for name in levels {
                assert!(cells.iter().any(|c| c == name), "COLUMNS={cols}: {name} cut: {}", r.stdout);
            }
            // `also not:` keeps each of its names whole.
            let also = r.stdout.split("also not: ").nth(1).expect("also not");
            for name in ["strong-session-snapshot-isolation", "parallel-snapshot-isolation", "update-serializable"] {
                assert!(also.split([',', ' ', '\n']).any(|w| w == name), "COLUMNS={cols}: {name}: {also}");
            }
        }
    }
    // Wider, lines grow up to 160 columns and no further.
    let wide = support::cli::isolde_columns(&["analyze", "examples/sample.edn", "-f", "table", "-v"], 300);
    assert!(wide.stdout.lines().all(|l| l.chars().count() <= 160), "{}", wide.stdout);
    assert!(wide.stdout.lines().any(|l| l.chars().count() > 120), "{}", wide.stdout);
}

/// `--help` of every command wraps to `COLUMNS` (60 here), and to 80
/// without it (clap would guess 100).
#[test]
fn help_wraps_to_columns_and_80_without() {
    let narrow = support::cli::isolde_columns(&["analyze", "--help-all"], 60);
    assert_eq!(narrow.code, 0, "{narrow:?}");
    assert!(narrow.stdout.lines().all(|l| l.chars().count() <= 60), "{}", narrow.stdout);
    let plain = isolde(&["analyze", "--help"], None, LIMIT);
    assert!(plain.stdout.contains("--model"), "{plain:?}");
    let wide = plain.stdout.lines().filter(|l| l.chars().count() > 80).collect::<Vec<_>>();
    // The harness may itself run with COLUMNS set; only then may lines be wider.
    if std::env::var_os("COLUMNS").is_none() {
        assert!(wide.is_empty(), "{wide:?}");
    }
}

/// Help texts point to guides the binary prints (`isolde help TOPIC`),
/// never to `docs/` files an installed binary has not got; `isolde help
/// COMMAND` is still the command's help.
#[test]
fn help_points_to_guides_the_binary_prints() {
    for cmd in [
        &[][..],
        &["analyze"],
        &["gen", "list-append"],
        &["gen", "rw-register"],
        &["gen", "closed-predicate"],
        &["record"],
        &["explore"],
        &["convert"],
    ] {
        let r = isolde(&[cmd, &["--help"]].concat(), None, LIMIT);
        assert_eq!(r.code, 0, "{cmd:?}: {r:?}");
        assert!(!r.stdout.contains("docs/"), "{cmd:?}: {}", r.stdout);
    }
    let top = isolde(&["--help"], None, LIMIT).stdout;
    assert!(top.contains("isolde help TOPIC"), "{top}");
    for (topic, file) in [("formats", "formats.md"), ("docs/models.md", "models.md"), ("record.md", "record.md")] {
        let r = isolde(&["help", topic], None, LIMIT);
        assert_eq!(r.code, 0, "{r:?}");
        let doc = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join(file))
            .expect("doc");
        assert_eq!(r.stdout, doc, "{topic}");
    }
    let r = isolde(&["help", "record"], None, LIMIT);
    assert!(r.code == 0 && r.stdout.contains("--db"), "{r:?}");
}

/// The tagged literals Jepsen writes (`#object[...]` with a hex number,
/// `#error {...}`, `#uuid`, `#inst`, and ops as `#jepsen.history.Op{...}`
/// records) are read, never a parse error; records are ops, other tags
/// are echoed as written.
#[test]
fn jepsen_tagged_literals_are_read() {
    let dir = temp_dir("analyze-tags");
    let f = write(
        &dir,
        "tags.edn",
        r#"{:type :invoke, :f :txn, :value [[:append :x 1] [:r :y nil]], :process 0, :time 1, :index 0}
{:type :ok, :f :txn, :value [[:append :x 1] [:r :y [1]]], :process 0, :time 2, :index 1, :id #uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", :at #inst "1985-04-12T23:20:50.52Z"}
{:type :info, :f :kill, :value :all, :process :nemesis, :index 2, :error #object[java.lang.Object 0x1a2b "java.lang.Object@1a2b"]}
{:type :fail, :f :txn, :value [[:r :z nil]], :process 3, :index 3, :error #error {:cause "boom", :via [{:type java.net.SocketException, :message "reset", :at [foo.bar invoke "x.clj" 12]}], :trace [[clojure.core$eval invoke "core.clj" 3]]}}
#jepsen.history.Op{:index 4, :time 3, :type :invoke, :process 1, :f :txn, :value [[:append :y 1] [:r :x nil]]}
#jepsen.history.Op{:index 5, :time 4, :type :ok, :process 1, :f :txn, :value [[:append :y 1] [:r :x [1]]]}
"#,
    );
    let r = analyze(&["-f", "edn", "-m", "read-committed", &f]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains(":anomaly-types (:G1c)"), "{}", r.stdout);
    assert!(r.stdout.contains(r#":id #uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6""#), "{}", r.stdout);
    assert!(r.stdout.contains(r#":at #inst "1985-04-12T23:20:50.52Z""#), "{}", r.stdout);
    assert!(r.stdout.contains("{:index 5, :time 4, :type :ok, :process 1, :f :txn"), "{}", r.stdout);
    let table = analyze(&["-f", "table", "-m", "read-committed", &f]).stdout;
    assert!(table.contains("5 client ops (1 non-client ignored)"), "{table}");
}

/// The README's first example is what isolde prints, with the exit status
/// the README states.
#[test]
fn readme_example_is_what_isolde_prints() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let start = readme.find("$ isolde analyze examples/sample.edn\n").expect("the example") + 37;
    let end = start + readme[start..].find("$ echo $?\n").expect("its exit status");
    let shown = &readme[start..end];
    let code: i32 = readme[end + 10..].lines().next().and_then(|l| l.trim().parse().ok()).expect("a number");
    // Integration tests run in the package root, as the README's reader does.
    // What an 80-column terminal prints (a pipe is laid out in `COLUMNS`,
    // 80 without it).
    let r = support::cli::isolde_columns(&["analyze", "examples/sample.edn", "--format", "table"], 80);
    assert_eq!(r.code, code, "{r:?}");
    for l in shown.lines() {
        assert!(l.chars().count() <= 80, "the README's example is wider than 80 columns: {l}");
    }
    // A pipe prints what a terminal prints: Elle's verdict, then one table
    // of every level.
    assert_eq!(shown, r.stdout, "README:\n{shown}\nprinted:\n{}", r.stdout);
    let Some(script) = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join("script")).find(|p| p.is_file()))
    else {
        eprintln!("SKIPPED (part): no `script` to run isolde on a terminal; the terminal was not compared");
        return;
    };
    let cmd = format!("{} analyze examples/sample.edn", env!("CARGO_BIN_EXE_isolde"));
    let tty = support::cli::run_program(&script, &["-qec", &cmd, "/dev/null"], None, LIMIT);
    assert_eq!(tty.code, code, "{tty:?}");
    // The terminal's width decides where cells wrap: compare the text of
    // the tables, in order, without their drawing and spacing.
    let text = |s: &str| {
        s.chars().filter(|c| !c.is_whitespace() && !('\u{2500}'..='\u{257f}').contains(c)).collect::<String>()
    };
    assert_eq!(text(&tty.stdout), text(shown), "README vs what a terminal shows:\n{}", tty.stdout);
}

/// The options `analyze --help` leaves to `--help-all`: the comparison and
/// tuning knobs, the Jepsen checkers' (`isolde help jepsen`) and
/// `--follow`'s (`isolde help online`).
const ANALYZE_KNOBS: &[&str] = &[
    "--no-pruning",
    "--no-serial-replay",
    "--cc-orders",
    "--cpu-reach",
    "--reach-memory",
    "--max-constraints",
    "--gpu",
    "--max-plot-bytes",
    "--plot-timeout",
    "--group-size",
    "--negative-balances",
    "--total-amount",
    "--max-transfer",
    "--linearizable",
    "--timeout",
    "--round-txns",
    "--round-ms",
    "--follow-idle",
    "--follow-all",
];

/// The most options `analyze --help` may list (help flags included).
const SHORT_HELP_MOST: usize = 25;

/// Whether `help` lists the option `name` (not merely a longer one that
/// starts with it, as `--gpu` is not `--gpus`).
fn lists(help: &str, name: &str) -> bool {
    long_options(help).iter().any(|o| o == name)
}

/// `-h` and `--help` are short: the headings, the options most runs need,
/// `--help-all`, and none of the knobs; `--help-all` adds the knobs.
#[test]
fn help_hides_the_knobs_and_help_all_shows_them() {
    let short = isolde_columns(&["analyze", "--help"], 80);
    assert_eq!(short.code, 0, "{short:?}");
    assert_eq!(short.stdout, isolde_columns(&["analyze", "-h"], 80).stdout, "-h and --help agree");
    for heading in ["Input:", "Models:", "Output:", "Limits:"] {
        assert!(short.stdout.lines().any(|l| l == heading), "{heading} in {}", short.stdout);
    }
    for shown in ["--model", "--workload", "--format", "--directory", "--exact-timeout", "--help-all"] {
        assert!(lists(&short.stdout, shown), "{shown} in {}", short.stdout);
    }
    let listed = listed_options(&short.stdout);
    for knob in ANALYZE_KNOBS {
        assert!(!listed.iter().any(|o| o == knob), "{knob} hidden from --help: {}", short.stdout);
    }
    assert!(listed.iter().any(|o| o == "--follow"), "--follow itself is shown: {}", short.stdout);
    assert!(
        listed.len() <= SHORT_HELP_MOST,
        "--help lists {} options, more than {SHORT_HELP_MOST}: {listed:?}",
        listed.len()
    );
    let all = isolde_columns(&["analyze", "--help-all"], 80);
    assert_eq!(all.code, 0, "{all:?}");
    for heading in isolde::help_headings::HIDDEN_FROM_SHORT_HELP {
        assert!(all.stdout.lines().any(|l| l == format!("{heading}:")), "{heading} in {}", all.stdout);
        assert!(!short.stdout.contains(heading), "{heading} not in --help: {}", short.stdout);
    }
    let every = listed_options(&all.stdout);
    for name in listed.iter().map(String::as_str).chain(ANALYZE_KNOBS.iter().copied()) {
        assert!(every.iter().any(|o| o == name), "{name} in --help-all: {}", all.stdout);
    }
}

/// The Jepsen knobs `--help` leaves out are in `isolde help jepsen`, and
/// `--follow`'s in `isolde help online`: hidden from the short help, each
/// is still documented where its heading points.
#[test]
fn hidden_jepsen_and_follow_knobs_are_in_their_guides() {
    let guide = |topic: &str| {
        let r = isolde(&["help", topic], None, LIMIT);
        assert_eq!(r.code, 0, "{r:?}");
        r.stdout
    };
    let (jepsen, online) = (guide("jepsen"), guide("online"));
    for knob in
        ["--group-size", "--negative-balances", "--total-amount", "--max-transfer", "--linearizable", "--timeout"]
    {
        assert!(jepsen.contains(knob), "{knob} in isolde help jepsen");
    }
    for knob in ["--round-txns", "--round-ms", "--follow-idle", "--follow-all"] {
        assert!(online.contains(knob), "{knob} in isolde help online");
    }
}

/// Every line of every command's help fits 80 columns, and every option
/// any of them lists is documented in docs/usage.md.
#[test]
fn help_fits_80_columns_and_every_option_is_documented() {
    let usage = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/usage.md")).expect("usage.md");
    let commands: &[&[&str]] = &[
        &["analyze"],
        &["gen", "list-append"],
        &["gen", "rw-register"],
        &["gen", "closed-predicate"],
        &["record"],
        &["explore"],
        &["convert"],
        &["elle-cli"],
        &[],
    ];
    for cmd in commands {
        let flags: &[&str] = if cmd.is_empty() || cmd == &["explore"] || cmd == &["elle-cli"] {
            &["--help"]
        } else {
            &["--help", "--help-all"]
        };
        for flag in flags {
            let args = [*cmd, &[*flag]].concat();
            let r = isolde_columns(&args, 80);
            assert_eq!(r.code, 0, "{args:?}: {r:?}");
            for line in r.stdout.lines() {
                assert!(line.chars().count() <= 80, "{args:?}: {} columns: {line}", line.chars().count());
            }
            for name in long_options(&r.stdout) {
                assert!(usage.contains(&format!("`{name}")), "{args:?}: {name} is not in docs/usage.md");
            }
        }
    }
}

/// The options `--help` hides still work as before.
#[test]
fn hidden_options_still_parse_and_run() {
    let dir = temp_dir("hidden-options");
    let f = write(&dir, "valid.edn", VALID);
    let knobs = [
        "--no-pruning",
        "--no-serial-replay",
        "--cc-orders=on",
        "--cpu-reach=mirror",
        "--reach-memory=64",
        "--max-constraints=1000",
        "--gpu=off",
        "--max-plot-bytes=100",
        "--plot-timeout=100",
    ];
    let r = analyze(&[&[f.as_str(), "--format", "json", "-m", "serializable"], &knobs[..]].concat());
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.json()["valid?"], serde_json::json!(true), "{r:?}");
}

/// elle-cli's `-m list-append` habit: a workload given as a model is a
/// usage error (exit 2) with the hint, before the history is read.
#[test]
fn a_workload_given_as_a_model_gets_a_hint() {
    let dir = temp_dir("workload-model");
    let f = write(&dir, "h.edn", VALID);
    for w in ["list-append", "rw-register"] {
        let r = analyze(&["-m", w, &f]);
        assert_eq!(r.code, 2, "{r:?}");
        let hint = format!("{w} is a workload, not a model: did you mean --workload {w}?");
        assert!(r.stderr.contains(&hint), "{}", r.stderr);
        assert!(r.stdout.is_empty(), "{}", r.stdout);
    }
    let r = analyze(&["-m", "bank", &f]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("did you mean --workload bank?"), "{}", r.stderr);
    // In elle-cli's command line the workload is `-m`, and the error is
    // elle-cli's exit status for an unknown model.
    let r = isolde(&["elle-cli", "-m", "list-append", "-c", "list-append", &f], None, LIMIT);
    assert_eq!(r.code, 255, "{r:?}");
    assert!(r.stderr.contains("did you mean -m list-append?"), "{}", r.stderr);
}

/// A misspelt model gets the nearest name and the known names, grouped and
/// wrapped at 80 columns.
#[test]
fn a_misspelt_model_gets_the_nearest_name() {
    let dir = temp_dir("misspelt-model");
    let f = write(&dir, "h.edn", VALID);
    let r = analyze(&["-m", "serializble", &f]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("unknown consistency model \"serializble\"; did you mean serializable?"), "{}", r.stderr);
    for group in ["exact on rw-register:", "Biswas–Enea levels", "Elle's other models:"] {
        assert!(r.stderr.contains(group), "{group} in {}", r.stderr);
    }
    assert!(r.stderr.lines().skip(1).all(|l| l.chars().count() <= 80), "{}", r.stderr);
    assert!(r.stderr.lines().count() > 5, "names on several lines: {}", r.stderr);
    let r = analyze(&["-m", "qwxz", &f]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(!r.stderr.contains("did you mean"), "nothing near: {}", r.stderr);
}
