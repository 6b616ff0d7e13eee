//! Text laid out within a terminal's width: lines wrapped at spaces and
//! after the hyphens inside words (never between two letters of a name
//! while a space or a hyphen would do), and table columns sized so that
//! level and anomaly names stay whole whenever the width allows.
//!
//! A piece that fits no line at all (a key name longer than the terminal
//! is wide) is cut by characters: the one case where a line would
//! otherwise exceed the width.

/// Below this many columns a table cannot show its rows; a terminal that
/// reports a narrower (or zero) width gets [`FALLBACK_WIDTH`].
pub const MIN_WIDTH: u16 = 20;

/// The width used when the terminal's is zero, unknown or unusable.
pub const FALLBACK_WIDTH: u16 = 80;

/// The width to lay output out in: `COLUMNS` (the text of the environment
/// variable, when set) if it is a usable number, else what the terminal
/// reports if usable, else [`FALLBACK_WIDTH`] (a pipe, a terminal that
/// reports zero, a `COLUMNS` below [`MIN_WIDTH`]).
pub fn output_width(columns_env: Option<&str>, terminal: Option<u16>) -> u16 {
    let env = columns_env.and_then(|s| s.trim().parse::<u16>().ok()).filter(|&w| w > 0);
    match env.or(terminal) {
        Some(w) if w >= MIN_WIDTH => w,
        _ => FALLBACK_WIDTH,
    }
}

/// The number of columns `s` takes (one per character: isolde's output is
/// ASCII but for the tables' drawing).
pub fn cols(s: &str) -> usize {
    s.chars().count()
}

/// The pieces of a word between its break points: after each hyphen that
/// follows a letter or digit and precedes one (`G-single-item` is `G-`,
/// `single-`, `item`; an arrow such as `-rw->` is one piece).
fn pieces(word: &str) -> Vec<&str> {
    let b = word.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..b.len().saturating_sub(1) {
        if b[i] == b'-' && b[i - 1].is_ascii_alphanumeric() && b[i + 1].is_ascii_alphanumeric() {
            out.push(&word[start..=i]);
            start = i + 1;
        }
    }
    out.push(&word[start..]);
    out
}

/// The longest word of `text` (split at whitespace), in columns.
fn longest_word(text: &str) -> usize {
    text.split_whitespace().map(cols).max().unwrap_or(0)
}

/// The longest piece of `text` between break points, in columns.
fn longest_piece(text: &str) -> usize {
    text.split_whitespace().flat_map(pieces).map(cols).max().unwrap_or(0)
}

/// Cuts `s` into chunks of at most `width` characters.
fn chunks(s: &str, width: usize) -> Vec<String> {
    let cs: Vec<char> = s.chars().collect();
    cs.chunks(width.max(1)).map(|c| c.iter().collect()).collect()
}

/// Wraps one line of text (no newline in it) to `width` columns: words
/// stay whole where they fit a line, a longer word breaks after its
/// hyphens, and a piece longer than a line is cut. Runs of spaces inside
/// the line are kept where the line does not break.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    wrap_hanging(text, width, width)
}

/// [`wrap`] with the first line `first` columns wide and the others
/// `rest` wide (for a hanging indent).
pub fn wrap_hanging(text: &str, first: usize, rest: usize) -> Vec<String> {
    let (first, rest) = (first.max(1), rest.max(1));
    if cols(text) <= first {
        return vec![text.to_string()];
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let room = |lines: &Vec<String>| if lines.is_empty() { first } else { rest };
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let sep = usize::from(!line.is_empty());
        if cols(&line) + sep + cols(word) <= room(&lines) {
            if sep == 1 {
                line.push(' ');
            }
            line.push_str(word);
            continue;
        }
        if !line.is_empty() && cols(word) <= rest {
            lines.push(std::mem::take(&mut line));
            line.push_str(word);
            continue;
        }
        // Longer than a line: piece by piece, the first after a space.
        for (i, p) in pieces(word).into_iter().enumerate() {
            let sep = usize::from(i == 0 && !line.is_empty());
            if cols(&line) + sep + cols(p) <= room(&lines) {
                if sep == 1 {
                    line.push(' ');
                }
                line.push_str(p);
                continue;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            let mut cs = chunks(p, room(&lines));
            line = cs.pop().unwrap_or_default();
            lines.extend(cs);
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Wraps every line of `text` longer than `width`; continuation lines are
/// indented two columns deeper than the line they continue (and no deeper
/// than half the width).
pub fn wrap_block(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if cols(line) <= width {
            out.push_str(line);
            continue;
        }
        let body = line.trim_start_matches(' ');
        let lead = (line.len() - body.len()).min(width / 2);
        let indent = (lead + 2).min(width / 2);
        for (j, l) in wrap_hanging(body, width - lead, width - indent).into_iter().enumerate() {
            if j > 0 {
                out.push('\n');
            }
            out.push_str(&" ".repeat(if j == 0 { lead } else { indent }));
            out.push_str(&l);
        }
    }
    out
}

/// `head` followed by `items` joined with `, `, wrapped to `width` with
/// continuation lines indented under the first item.
pub fn wrap_list(head: &str, items: &[String], width: usize) -> String {
    let indent = cols(head).min(width / 2);
    let text = items.join(", ");
    let mut out = String::from(head);
    for (i, l) in wrap(&text, width.saturating_sub(indent).max(1)).into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(&l);
    }
    out
}

/// Column widths for `rows` (the header first) in a table `width` columns
/// wide with one column of padding on each side of a cell and a rule
/// between cells: each column as wide as its content where that fits;
/// otherwise the narrow columns keep their width and the wide ones share
/// the rest. No column is narrower than its longest word while the words
/// fit, the last columns giving way first (to their longest piece
/// between hyphens, then to cutting).
pub fn column_widths(rows: &[Vec<String>], width: usize) -> Vec<usize> {
    column_widths_padded(rows, width, 2)
}

/// Whether every word of every cell fits whole in a table `width` wide
/// whose cells have `pad` columns of padding.
pub fn words_fit(rows: &[Vec<String>], width: usize, pad: usize) -> bool {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let words: usize =
        (0..n).map(|j| rows.iter().filter_map(|r| r.get(j)).map(|c| longest_word(c)).max().unwrap_or(0).max(1)).sum();
    words + (pad + 1) * n < width
}

/// [`column_widths`] for cells with `pad` columns of padding in all.
pub fn column_widths_padded(rows: &[Vec<String>], width: usize, pad: usize) -> Vec<usize> {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    if n == 0 {
        return Vec::new();
    }
    let avail = width.saturating_sub((pad + 1) * n + 1).max(n);
    let col = |j: usize| rows.iter().filter_map(move |r| r.get(j));
    let natural: Vec<usize> = (0..n).map(|j| col(j).flat_map(|c| c.lines()).map(cols).max().unwrap_or(0)).collect();
    let mut min: Vec<usize> = (0..n).map(|j| col(j).map(|c| longest_word(c)).max().unwrap_or(0).max(1)).collect();
    // Give way from the last column: words, then pieces, then characters.
    for j in (0..n).rev() {
        if min.iter().sum::<usize>() <= avail {
            break;
        }
        min[j] = col(j).map(|c| longest_piece(c)).max().unwrap_or(0).max(1);
    }
    for j in (0..n).rev() {
        let total: usize = min.iter().sum();
        if total <= avail {
            break;
        }
        min[j] = min[j].saturating_sub(total - avail).max(1);
    }
    let min: Vec<usize> = min.iter().zip(&natural).map(|(&m, &nat)| m.min(nat.max(1))).collect();
    // The largest cap such that every column at min(natural, cap), never
    // below its minimum, fits.
    let at = |cap: usize| -> Vec<usize> { (0..n).map(|j| natural[j].min(cap).max(min[j])).collect() };
    let (mut lo, mut hi) = (0, natural.iter().copied().max().unwrap_or(0));
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if at(mid).iter().sum::<usize>() <= avail {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut w = at(lo);
    // Hand what is left to the columns the cap cut, first first.
    let mut left = avail.saturating_sub(w.iter().sum());
    for j in 0..n {
        let more = natural[j].saturating_sub(w[j]).min(left);
        w[j] += more;
        left -= more;
    }
    w
}

/// Each cell of `rows` wrapped to its column's width from
/// [`column_widths`], lines joined with `\n`.
pub fn wrap_rows(rows: &[Vec<String>], width: usize) -> Vec<Vec<String>> {
    wrap_rows_padded(rows, width, 2)
}

/// [`wrap_rows`] for cells with `pad` columns of padding in all.
pub fn wrap_rows_padded(rows: &[Vec<String>], width: usize, pad: usize) -> Vec<Vec<String>> {
    let w = column_widths_padded(rows, width, pad);
    rows.iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .map(|(j, c)| c.lines().flat_map(|l| wrap(l, w[j])).collect::<Vec<_>>().join("\n"))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_from_the_environment_then_the_terminal() {
        assert_eq!(output_width(Some("60"), Some(200)), 60);
        assert_eq!(output_width(Some("0"), Some(132)), 132);
        assert_eq!(output_width(Some("x"), None), 80);
        assert_eq!(output_width(None, Some(0)), 80);
        assert_eq!(output_width(Some("10"), Some(132)), 80);
    }

    #[test]
    fn wraps_at_spaces_then_hyphens_then_characters() {
        assert_eq!(
            wrap("also not: serializable, snapshot-isolation", 24),
            ["also not: serializable,", "snapshot-isolation"]
        );
        assert_eq!(wrap("strong-session-snapshot-isolation", 20), ["strong-session-", "snapshot-isolation"]);
        assert_eq!(wrap("T5 -rw-> T4 -ww-> T5", 9), ["T5 -rw->", "T4 -ww->", "T5"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        for w in 1..40 {
            for l in wrap("key :x: T4, T5 all read the same-version and wrote it", w) {
                assert!(cols(&l) <= w, "{w}: {l}");
            }
        }
    }

    #[test]
    fn names_stay_whole_while_they_fit() {
        let rows = vec![
            vec!["level".into(), "verdict".into(), "how".into()],
            vec!["strong-session-snapshot-isolation".into(), "invalid".into(), "G-single-item (elle)".into()],
        ];
        let w = column_widths(&rows, 60);
        assert_eq!(w[0], 33, "{w:?}");
        assert!(w.iter().sum::<usize>() + 10 <= 60, "{w:?}");
        let w = column_widths(&rows, 80);
        assert_eq!(w, [33, 7, 20]);
    }

    #[test]
    fn blocks_and_lists_fit() {
        let items: Vec<String> = (0..30).map(|i| format!("level-{i}")).collect();
        let l = wrap_list("also not: ", &items, 40);
        assert!(l.lines().all(|x| cols(x) <= 40), "{l}");
        assert!(l.lines().skip(1).all(|x| x.starts_with("          l")), "{l}");
        let b = wrap_block(&format!("  - {}", "word ".repeat(40)), 30);
        assert!(b.lines().all(|x| cols(x) <= 30), "{b}");
        assert_eq!(b.split_whitespace().filter(|w| *w == "word").count(), 40);
    }
}
