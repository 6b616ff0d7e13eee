//! elle-cli JSON output for the generators: [`edn_to_json`] rewrites a
//! generated EDN history (one op map per line) as one JSON array of op
//! objects, so that the EDN and JSON readers can be run on the same history
//! (tests, throughput benchmarks).
//!
//! The rewrite is syntactic and covers the EDN the generators and Jepsen's
//! op maps use: maps, vectors, lists and sets (both become arrays), keywords
//! (strings without the colon), strings, integers, `nil` (`null`) and
//! booleans. Anything else (tagged literals, symbols, characters, floats) is
//! an error rather than a guess. Map keys become JSON object keys, which are
//! strings: keywords by name, integers as decimal strings (the JSON reader
//! reads those back as integers, so a closed-predicate `:init` or predicate
//! read over integer keys round-trips); a string key that spells an integer,
//! or a key of any other kind, is an error.

/// Rewrites `edn`, a history of op maps one per line, as elle-cli JSON: one
/// array, one op object per line. Errors name the 1-based line and what was
/// not understood.
pub fn edn_to_json(edn: &str) -> Result<String, String> {
    let mut out = String::with_capacity(edn.len() + edn.len() / 8 + 4);
    out.push_str("[\n");
    let mut first = true;
    for (n, line) in edn.lines().enumerate() {
        let b = line.as_bytes();
        let mut i = 0;
        skip_blank(b, &mut i);
        if i == b.len() {
            continue;
        }
        if !first {
            out.push_str(",\n");
        }
        first = false;
        value(b, &mut i, &mut out).map_err(|e| format!("line {}: {e}", n + 1))?;
        skip_blank(b, &mut i);
        if i != b.len() {
            return Err(format!("line {}: more than one value", n + 1));
        }
    }
    out.push_str("\n]\n");
    Ok(out)
}

fn skip_blank(b: &[u8], i: &mut usize) {
    while matches!(b.get(*i), Some(b' ' | b'\t' | b',' | b'\r')) {
        *i += 1;
    }
}

fn is_end(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b',' | b'\r' | b']' | b')' | b'}' | b'[' | b'(' | b'{' | b'"')
}

/// Writes the elements of a collection up to `close`, `", "`-separated, with
/// `": "` after every key when `map`.
fn elements(b: &[u8], i: &mut usize, out: &mut String, close: u8, map: bool) -> Result<(), String> {
    let mut n = 0usize;
    loop {
        skip_blank(b, i);
        match b.get(*i) {
            Some(&c) if c == close => {
                *i += 1;
                return Ok(());
            }
            None => return Err(format!("unclosed collection, expected `{}`", close as char)),
            _ => {}
        }
        if n > 0 {
            out.push_str(if map && n % 2 == 1 { ": " } else { ", " });
        }
        if map && n.is_multiple_of(2) {
            map_key(b, i, out)?;
        } else {
            value(b, i, out)?;
        }
        n += 1;
    }
}

/// Writes a map key as a JSON object key, which is a string: a keyword
/// as its name (as everywhere), an integer as its decimal string (which the
/// JSON reader reads back as that integer, see `ingest::json`), a string as
/// it is unless it spells an integer (it would read back as one). Any other
/// key has no JSON spelling: an error.
fn map_key(b: &[u8], i: &mut usize, out: &mut String) -> Result<(), String> {
    skip_blank(b, i);
    let start = *i;
    let mut text = String::new();
    value(b, i, &mut text)?;
    let token = std::str::from_utf8(&b[start..*i]).map_err(|e| e.to_string())?;
    if token.parse::<i64>().is_ok() {
        out.push('"');
        out.push_str(&text);
        out.push('"');
        return Ok(());
    }
    let quoted = text.len() >= 2 && text.starts_with('"') && !matches!(b.get(start), Some(b'{' | b'[' | b'(' | b'#'));
    if !quoted {
        return Err(format!("the map key {token} has no JSON spelling (JSON object keys are strings)"));
    }
    let inner = &text[1..text.len() - 1];
    if b.get(start) == Some(&b'"') && inner.parse::<i64>().is_ok_and(|n| n.to_string() == inner) {
        return Err(format!(
            "the string map key {token} would read back from JSON as the integer {inner} (JSON object keys are strings)"
        ));
    }
    out.push_str(&text);
    Ok(())
}

fn value(b: &[u8], i: &mut usize, out: &mut String) -> Result<(), String> {
    skip_blank(b, i);
    let Some(&c) = b.get(*i) else {
        return Err("expected a value, found end of line".into());
    };
    match c {
        b'{' => {
            *i += 1;
            out.push('{');
            elements(b, i, out, b'}', true)?;
            out.push('}');
        }
        b'[' | b'(' => {
            *i += 1;
            out.push('[');
            elements(b, i, out, if c == b'[' { b']' } else { b')' }, false)?;
            out.push(']');
        }
        b'#' if b.get(*i + 1) == Some(&b'{') => {
            *i += 2;
            out.push('[');
            elements(b, i, out, b'}', false)?;
            out.push(']');
        }
        b'"' => {
            let start = *i;
            *i += 1;
            while let Some(&d) = b.get(*i) {
                *i += if d == b'\\' { 2 } else { 1 };
                if d == b'"' {
                    break;
                }
            }
            let s = b.get(start..*i).ok_or("unterminated string")?;
            out.push_str(std::str::from_utf8(s).map_err(|e| e.to_string())?);
        }
        _ => {
            let start = *i;
            while b.get(*i).is_some_and(|&d| !is_end(d)) {
                *i += 1;
            }
            let token = std::str::from_utf8(&b[start..*i]).map_err(|e| e.to_string())?;
            match token {
                "nil" => out.push_str("null"),
                "true" | "false" => out.push_str(token),
                _ if token.len() > 1 && token.starts_with(':') => {
                    out.push('"');
                    out.push_str(&token[1..]);
                    out.push('"');
                }
                _ if token.parse::<i64>().is_ok() => out.push_str(token),
                _ => return Err(format!("unsupported EDN token {token:?}")),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_op_maps() {
        let edn = "{:type :ok, :f :txn, :value [[:append 1 2] [:r 1 [2]] [:r 3 nil]], :process 0, :time 5, :index 0}\n\n\
                   {:type :info, :f :start, :value [:isolated {\"n1\" #{\"n2\"}}], :process :nemesis, :error \"a\\\"b\"}\n";
        assert_eq!(
            edn_to_json(edn),
            Ok("[\n{\"type\": \"ok\", \"f\": \"txn\", \"value\": [[\"append\", 1, 2], [\"r\", 1, [2]], [\"r\", 3, null]], \
                \"process\": 0, \"time\": 5, \"index\": 0},\n\
                {\"type\": \"info\", \"f\": \"start\", \"value\": [\"isolated\", {\"n1\": [\"n2\"]}], \"process\": \"nemesis\", \
                \"error\": \"a\\\"b\"}\n]\n"
                .to_string())
        );
        assert!(edn_to_json("{:a #inst \"x\"}").is_err());
        // Closed-predicate ops: integer map keys are quoted (JSON keys are
        // strings), predicates are rewritten like any keyword.
        assert_eq!(
            edn_to_json("{:type :ok, :f :init, :value {0 1, 3 0}, :process 0}\n{:type :ok, :f :txn, :value [[:rp [:mod 2 0] {4 2, :x 0}] [:rp :true nil] [:delete 3]], :process 1}"),
            Ok("[\n{\"type\": \"ok\", \"f\": \"init\", \"value\": {\"0\": 1, \"3\": 0}, \"process\": 0},\n\
                {\"type\": \"ok\", \"f\": \"txn\", \"value\": [[\"rp\", [\"mod\", 2, 0], {\"4\": 2, \"x\": 0}], \
                [\"rp\", \"true\", null], [\"delete\", 3]], \"process\": 1}\n]\n"
                .to_string())
        );
        let e = edn_to_json("{:value {\"7\" 1}}").unwrap_err();
        assert!(e.contains("would read back from JSON as the integer 7"), "{e}");
        let e = edn_to_json("{:value {[1 2] 1}}").unwrap_err();
        assert!(e.contains("[1 2] has no JSON spelling"), "{e}");
        assert!(edn_to_json("{:value {nil 1}}").is_err());
        assert!(edn_to_json("{:a [1}").is_err());
        assert!(edn_to_json("{:a 1.5}").is_err());
    }
}
