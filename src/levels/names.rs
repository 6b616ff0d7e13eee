//! What to say about a consistency-model name isolde does not know.
//!
//! Two mistakes are common. elle-cli's `-m` names the *workload*
//! (`elle-cli -m list-append`), while isolde's `-m` names consistency
//! models, so `isolde analyze -m list-append` is an elle-cli habit: the
//! message says so and points at `--workload`. elle-cli's other models
//! (`bank`, `set`, `counter`, ...) are Jepsen's, Knossos's and elle-cli's
//! own checkers, not isolation levels, and isolde checks none of them: the
//! message says which checker does. Any other unknown name is most often a
//! misspelling: the message suggests the nearest known name by edit
//! distance (Levenshtein, ignoring case) when it is close enough, and lists
//! the known names grouped by what checks them, wrapped at 80 columns,
//! rather than 57 names on one line.

/// elle-cli's models, each with the checker that implements it. isolde
/// checks the two Elle workloads; the others are named in the error.
pub const ELLE_CLI_MODELS: &[(&str, &str)] = &[
    ("bank", "Jepsen's bank checker (jepsen.tests.bank)"),
    ("cas-register", "Knossos's linearizability checker (knossos.competition with the cas-register model)"),
    ("comments", "elle-cli's own comments checker (elle-cli.comments)"),
    ("counter", "Jepsen's counter checker (jepsen.checker/counter)"),
    ("list-append", "Elle's list-append checker"),
    ("long-fork", "Jepsen's long-fork checker (jepsen.tests.long-fork)"),
    ("mutex", "Knossos's linearizability checker (knossos.competition with the mutex model)"),
    ("rw-register", "Elle's rw-register checker"),
    ("sequential", "elle-cli's own sequential checker (elle-cli.sequential)"),
    ("set", "Jepsen's set checker (jepsen.checker/set)"),
    ("set-full", "Jepsen's set-full checker (jepsen.checker/set-full)"),
];

/// Width the listed names are wrapped to.
const WIDTH: usize = 80;

/// Indentation of a group's continuation lines.
const INDENT: &str = "    ";

/// The message for a consistency-model name that is not among `known`
/// (every name the caller accepts; the workload and group logic is
/// independent of who calls). `name` is the name as given, without a
/// leading `:`.
pub fn unknown_model(name: &str, known: &[&str]) -> String {
    if let Some(hint) = workload_hint(name, "--workload") {
        return hint;
    }
    let mut msg = format!("unknown consistency model {name:?}");
    if let Some(near) = nearest(name, known) {
        msg.push_str(&format!("; did you mean {near}?"));
    }
    msg.push_str("\nknown models (docs/models.md):");
    for (title, names) in groups(known) {
        if !names.is_empty() {
            msg.push('\n');
            msg.push_str(&wrap(&format!("  {title}: "), &names));
        }
    }
    msg
}

/// The hint for a model name that is one of elle-cli's models (which are
/// workloads or other checkers), `None` for any other name. `flag` is the
/// option that picks the workload where the hint is shown (`--workload`
/// for `analyze` and `record`, `-m` for elle-cli's command line).
pub fn workload_hint(name: &str, flag: &str) -> Option<String> {
    let lower = name.trim().trim_start_matches(':').to_ascii_lowercase();
    let (model, _) = ELLE_CLI_MODELS.iter().find(|(m, _)| *m == lower)?;
    Some(format!("{model} is a workload, not a model: did you mean {flag} {model}?"))
}

/// The known name nearest to `name`, ignoring case, if one is within a
/// third of the name's length (at least 2 edits).
pub fn nearest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let name = name.to_ascii_lowercase();
    let limit = (name.chars().count() / 3).max(2);
    known
        .iter()
        .map(|k| (edit_distance(&name, &k.to_ascii_lowercase()), *k))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

/// Levenshtein distance (insertions, deletions, substitutions) over chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb)).min(above + 1).min(row[j] + 1);
            diag = above;
        }
    }
    row[b.len()]
}

/// `known` split into titled groups: the levels the exact register check
/// decides (their Elle aliases included), the Biswas–Enea levels, `all`, and Elle's other models, each
/// in `known`'s order.
fn groups<'a>(known: &[&'a str]) -> Vec<(&'static str, Vec<&'a str>)> {
    let exact = |k: &str| crate::si_check::Level::from_model(k).is_some();
    let weak = |k: &str| crate::weak::MODEL_NAMES.iter().any(|(n, _)| *n == k);
    let all = |k: &str| k == crate::levels::ALL;
    let pick = |f: &dyn Fn(&str) -> bool| known.iter().copied().filter(|k| f(k)).collect::<Vec<_>>();
    vec![
        ("exact on rw-register", pick(&exact)),
        ("Biswas–Enea levels, exact", pick(&weak)),
        ("every level at once", pick(&all)),
        ("Elle's other models", pick(&|k| !exact(k) && !weak(k) && !all(k))),
    ]
}

/// `head` followed by `names`, comma separated, wrapped at [`WIDTH`]
/// columns with [`INDENT`] before each continuation line.
fn wrap(head: &str, names: &[&str]) -> String {
    wrap_text(&names.join(", "), head, INDENT, WIDTH)
}

/// `text` wrapped at `width` columns at spaces: the first line starts with
/// `first`, the others with `rest`. A word longer than a line stays whole.
/// Columns are counted in chars (the help text is ASCII but for `–`).
pub fn wrap_text(text: &str, first: &str, rest: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("serializble", "serializable"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn nearest_is_close_or_nothing() {
        let known = ["serializable", "snapshot-isolation", "read-committed", "PL-2"];
        assert_eq!(nearest("serializble", &known), Some("serializable"));
        assert_eq!(nearest("Snapshot-Isolaton", &known), Some("snapshot-isolation"));
        assert_eq!(nearest("pl2", &known), Some("PL-2"));
        assert_eq!(nearest("bogus", &known), None);
    }

    #[test]
    fn workloads_and_other_checkers_get_hints() {
        let la = workload_hint("list-append", "--workload").expect("a hint");
        assert_eq!(la, "list-append is a workload, not a model: did you mean --workload list-append?");
        assert!(workload_hint("RW-Register", "-m").expect("a hint").ends_with("did you mean -m rw-register?"));
        let bank = workload_hint("bank", "--workload").expect("a hint");
        assert!(bank.ends_with("did you mean --workload bank?"), "{bank}");
        assert_eq!(workload_hint("serializable", "--workload"), None);
    }

    #[test]
    fn groups_cover_every_name_once_and_lines_fit() {
        let known = ["1SR", "PL-2", "all", "read-atomic", "serializable", "strict-serializable", "update-atomic"];
        let msg = unknown_model("serializble", &known);
        assert!(msg.starts_with("unknown consistency model \"serializble\"; did you mean serializable?"), "{msg}");
        for k in known {
            let hits = msg.split([' ', ',', '\n']).filter(|w| *w == k).count();
            assert_eq!(hits, 1, "{k} in {msg}");
        }
        let long: Vec<String> = (0..40).map(|i| format!("model-{i}")).collect();
        let long: Vec<&str> = long.iter().map(String::as_str).collect();
        let msg = unknown_model("x", &long);
        assert!(msg.lines().count() > 5, "{msg}");
        assert!(msg.lines().skip(1).all(|l| l.chars().count() <= WIDTH), "{msg}");
    }
}
