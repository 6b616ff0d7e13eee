//! Short and complete help: `-h`/`--help` and `--help-all`.
//!
//! Most runs need a fraction of a command's options; the others are
//! comparison and tuning knobs (skip a stage of the exact check, pick the
//! reachability kernel, raise a memory budget), the Jepsen checkers' knobs
//! and `--follow`'s, which matter to benchmarks, to those workloads and to
//! people debugging isolde. Those options are under a heading of
//! [`crate::help_headings::HIDDEN_FROM_SHORT_HELP`] (or marked
//! `hide_short_help` one by one), and [`split_help`] marks every option
//! under such a heading `hide_short_help`, so that clap leaves them out of
//! the *short* help and keeps them in the *long* help. It then rebinds the
//! help flags of every command that has such an option: `-h` and `--help`
//! both print the short help (clap's default prints the long help for
//! `--help`), and a new `--help-all` prints the long help, every option
//! included, under the same headings.
//!
//! Nothing here changes what an option does: hidden options parse exactly
//! as before, and docs/usage.md documents every one of them, saying which
//! only `--help-all` shows.

use clap::{Arg, ArgAction, Command};

/// The name of the flag that prints every option.
pub const HELP_ALL: &str = "help-all";

use crate::help_headings::hidden_from_short_help;

/// The help heading of the comparison and tuning knobs; it lives in
/// [`crate::help_headings`], below every command that declares options.
pub use crate::help_headings::TUNING;

/// Gives `cmd` and each of its subcommands that has options hidden from
/// the short help (under a heading of
/// [`crate::help_headings::HIDDEN_FROM_SHORT_HELP`], or marked
/// `hide_short_help`) a `-h`/`--help` flag printing the short help and a
/// `--help-all` flag printing the long help, with every option. Commands
/// that handle their own help (`disable_help_flag`, as `elle-cli`) and
/// commands with nothing hidden keep clap's help flag.
pub fn split_help(cmd: Command) -> Command {
    let cmd = cmd.mut_subcommands(split_help);
    let cmd = cmd.mut_args(|a| {
        let hide = hidden_from_short_help(a.get_help_heading());
        if hide {
            a.hide_short_help(true)
        } else {
            a
        }
    });
    let hides = cmd.get_arguments().any(|a| a.is_hide_short_help_set() && !a.is_hide_set());
    if cmd.is_disable_help_flag_set() || !hides {
        return cmd;
    }
    cmd.disable_help_flag(true)
        .arg(
            Arg::new("help")
                .short('h')
                .long("help")
                .action(ArgAction::HelpShort)
                .help_heading(None::<&str>)
                .help("Print help (the options most runs need; --help-all for every option)"),
        )
        .arg(
            Arg::new(HELP_ALL)
                .long(HELP_ALL)
                .action(ArgAction::HelpLong)
                .help_heading(None::<&str>)
                .help("Print help with every option, comparison and tuning knobs included"),
        )
}

pub use crate::levels::names::wrap_text;

/// The guides of `docs/`, shipped in the binary: `isolde help TOPIC`
/// prints one (an installed binary has no `docs/` beside it).
pub const GUIDES: &[(&str, &str)] = &[
    ("checks", include_str!("../../docs/checks.md")),
    ("differences", include_str!("../../docs/differences.md")),
    ("distributed", include_str!("../../docs/distributed.md")),
    ("explore", include_str!("../../docs/explore.md")),
    ("explore-artifact", include_str!("../../docs/explore-artifact.md")),
    ("explore-bench", include_str!("../../docs/explore-bench.md")),
    ("formats", include_str!("../../docs/formats.md")),
    ("gpu", include_str!("../../docs/gpu.md")),
    ("hermitage", include_str!("../../docs/hermitage.md")),
    ("jepsen", include_str!("../../docs/jepsen.md")),
    ("library", include_str!("../../docs/library.md")),
    ("models", include_str!("../../docs/models.md")),
    ("online", include_str!("../../docs/online.md")),
    ("performance", include_str!("../../docs/performance.md")),
    ("record", include_str!("../../docs/record.md")),
    ("usage", include_str!("../../docs/usage.md")),
];

/// The commands, whose names `isolde help NAME` keeps for their help.
const COMMANDS: &[&str] = &["analyze", "elle-cli", "gen", "record", "explore", "convert", "help"];

/// The guide `topic` names: `formats`, `formats.md` or `docs/formats.md`
/// (a command's name alone, as `record`, is the command's help: its guide
/// is `record.md`).
pub fn guide(topic: &str) -> Option<&'static str> {
    let stem = topic.strip_prefix("docs/").unwrap_or(topic);
    let (stem, md) = match stem.strip_suffix(".md") {
        Some(s) => (s, true),
        None => (stem, false),
    };
    if !md && COMMANDS.contains(&stem) {
        return None;
    }
    GUIDES.iter().find(|(name, _)| *name == stem).map(|(_, text)| *text)
}

/// The guide asked for by a command line `isolde help TOPIC` (the
/// arguments after the program's name), if it asks for one.
pub fn guide_request(args: &[std::ffi::OsString]) -> Option<&'static str> {
    match args {
        [help, topic] if help == "help" => topic.to_str().and_then(guide),
        _ => None,
    }
}

/// The line the top-level help ends with, listing the guides.
pub fn guides_line() -> String {
    let names: Vec<&str> = GUIDES.iter().map(|(n, _)| *n).collect();
    format!("Guides: `isolde help TOPIC` prints one of {}.", names.join(", "))
}

/// The width isolde lays its output out in: `COLUMNS` when set to a
/// usable number, else the terminal's width when standard output is a
/// terminal that reports one, else 80 (pipes, files, a terminal that
/// reports zero); see [`crate::reports::wrap::output_width`].
pub fn output_width() -> u16 {
    use std::io::IsTerminal;
    let terminal = std::io::stdout().is_terminal().then(|| comfy_table::Table::new().width()).flatten();
    crate::reports::wrap::output_width(std::env::var("COLUMNS").ok().as_deref(), terminal)
}

/// `cmd` and every subcommand with their help wrapped to `width` columns
/// (clap's own guess falls back to 100 columns where the width is
/// unknown).
pub fn wrap_to(cmd: Command, width: u16) -> Command {
    cmd.term_width(usize::from(width)).max_term_width(usize::from(width)).mut_subcommands(|c| wrap_to(c, width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_text_fits_and_keeps_every_word() {
        let text = "a fairly long sentence that has to be wrapped over several short lines, word by word";
        let w = wrap_text(text, "  head: ", "    ", 24);
        assert!(w.starts_with("  head: a fairly long"), "{w}");
        assert!(w.lines().all(|l| l.chars().count() <= 24), "{w}");
        assert!(w.lines().skip(1).all(|l| l.starts_with("    ") && !l.starts_with("     ")), "{w}");
        assert_eq!(w.split_whitespace().skip(1).collect::<Vec<_>>().join(" "), text);
        assert_eq!(wrap_text("unbreakable-very-long-word", "", "", 5), "unbreakable-very-long-word");
    }

    #[test]
    fn guides_by_name_with_commands_kept_for_their_help() {
        let formats = guide("formats").expect("formats");
        assert!(formats.starts_with("# Input formats"), "{formats}");
        assert_eq!(guide("formats.md"), Some(formats));
        assert_eq!(guide("docs/formats.md"), Some(formats));
        assert_eq!(guide("record"), None, "the command's help");
        assert!(guide("record.md").is_some_and(|t| t.contains("isolde record")));
        assert_eq!(guide("nonesuch"), None);
        let args: Vec<std::ffi::OsString> = vec!["help".into(), "models".into()];
        assert!(guide_request(&args).is_some());
        assert!(guide_request(&args[..1]).is_none());
    }

    #[test]
    fn help_wraps_to_the_width_given() {
        let long = "word ".repeat(60);
        let cmd = Command::new("top").subcommand(Command::new("sub").arg(Arg::new("x").long("x").help(long)));
        let mut cmd = wrap_to(cmd, 40);
        let help = cmd.find_subcommand_mut("sub").expect("sub").render_help().to_string();
        assert!(help.lines().all(|l| l.chars().count() <= 40), "{help}");
        assert_eq!(help.matches("word").count(), 60, "{help}");
    }

    #[test]
    fn split_help_hides_only_where_something_is_hidden() {
        let cmd = Command::new("top")
            .subcommand(Command::new("plain").arg(Arg::new("x").long("x")))
            .subcommand(Command::new("knobs").arg(Arg::new("y").long("y").hide_short_help(true)));
        let mut cmd = split_help(cmd);
        let short = cmd.find_subcommand_mut("knobs").expect("knobs").render_help().to_string();
        assert!(short.contains("--help-all") && !short.contains("--y"), "{short}");
        let long = cmd.find_subcommand_mut("knobs").expect("knobs").render_long_help().to_string();
        assert!(long.contains("--y"), "{long}");
        let plain = cmd.find_subcommand_mut("plain").expect("plain").render_help().to_string();
        assert!(!plain.contains("--help-all") && plain.contains("--x"), "{plain}");
    }

    #[test]
    fn split_help_hides_every_option_under_a_hidden_heading() {
        let hidden = crate::help_headings::HIDDEN_FROM_SHORT_HELP;
        assert!(hidden.contains(&TUNING));
        let mut sub = Command::new("sub").arg(Arg::new("shown").long("shown").help_heading("Input"));
        for (i, heading) in hidden.iter().enumerate() {
            // clap takes static names here; a test may leak a few.
            let name: &'static str = Box::leak(format!("knob{i}").into_boxed_str());
            sub = sub.arg(Arg::new(name).long(name).help_heading(*heading));
        }
        let mut cmd = split_help(Command::new("top").subcommand(sub));
        let sub = cmd.find_subcommand_mut("sub").expect("sub");
        let short = sub.render_help().to_string();
        assert!(short.contains("--shown") && short.contains("--help-all"), "{short}");
        let long = sub.render_long_help().to_string();
        for (i, heading) in hidden.iter().enumerate() {
            assert!(!short.contains(&format!("--knob{i}")) && !short.contains(heading), "{heading}: {short}");
            assert!(long.contains(&format!("--knob{i}")) && long.contains(heading), "{heading}: {long}");
        }
    }
}
