//! The crate's own import graph, file by file, and its circles.
//!
//! A file *imports* another when its code (not its comments or strings)
//! names an item through a path that leads into that file: `use
//! crate::a::b::X`, `use super::X`, an inline `crate::a::b::f(…)` or
//! `super::b::T`, and, in a module that has children, a bare `child::X`
//! (Rust resolves a bare first segment to the module's own children). Each
//! path is made absolute (`super` climbs from the module the path is written
//! in, inline `mod tests { … }` blocks included) and resolved to the
//! *longest prefix that is a file*: `crate::a::b::X` names `a/b.rs` or
//! `a/b/mod.rs` when that exists, else `a.rs` / `a/mod.rs`. The segment after
//! the prefix (the imported name) is kept, so a circle can be shown with the
//! names that tie it.
//!
//! One kind of path is not an edge: a file naming an item of a module that
//! *contains* it (a child's `use super::Item` into its folder's `mod.rs`, or
//! any path into an enclosing module's file). A folder's `mod.rs` is the
//! face its children stand behind; a child reaching up into it is tied
//! through it, not into a loop with it, and this is what `farm-studio look`
//! counts too. The other direction, a `mod.rs` importing its own children,
//! is an edge like any other, so a `mod.rs` that takes part in a loop
//! through files outside its folder is in a circle.
//!
//! Test code is no part of the graph, as it is no part of what is built:
//! an item under `#[cfg(test)]` (a `mod tests { … }`, a test-only `use`) is
//! skipped, and a file declared by `#[cfg(test)] mod name;` (a test kit)
//! adds no arrows of its own.
//!
//! A *circle* is a strongly connected component of more than one file
//! (Tarjan's algorithm).
//!
//! [`modules`] folds the file graph into the graph of the crate's
//! top-level modules (a module is `src/<name>.rs` or everything under
//! `src/<name>/`; the crate root and each binary stay on their own), whose
//! circles are loops between modules that no single file loop shows.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

/// A lexical token of Rust code, comments and literals left out.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
}

/// Which crate a file belongs to: the library, or a binary under `src/bin`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Krate {
    Lib,
    Bin(String),
}

/// The file-level import graph of one crate's sources.
#[derive(Debug, Default)]
pub struct Graph {
    /// Files, as given (e.g. `src/weak/front.rs`), sorted.
    pub files: Vec<String>,
    /// `(from, to)` file indices to the names `from` takes from `to`.
    pub edges: BTreeMap<(usize, usize), BTreeSet<String>>,
}

/// Every `.rs` file under `root/src`, as `(src/…, text)`, sorted by path.
pub fn read_sources(root: &Path) -> std::io::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p.strip_prefix(root).expect("under root").to_string_lossy().replace('\\', "/");
                out.push((rel, std::fs::read_to_string(&p)?));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The crate and module path a file under `src/` defines, or `None` for a
/// file outside `src/`.
fn module_of(path: &str) -> Option<(Krate, Vec<String>)> {
    let rel = path.strip_prefix("src/")?.strip_suffix(".rs")?;
    if rel == "lib" {
        return Some((Krate::Lib, vec![]));
    }
    if let Some(bin) = rel.strip_prefix("bin/") {
        let name = bin.strip_suffix("/main").unwrap_or(bin);
        return (!name.contains('/')).then(|| (Krate::Bin(name.to_string()), vec![]));
    }
    let mut segs: Vec<String> = rel.split('/').map(str::to_string).collect();
    if segs.last().is_some_and(|s| s == "mod") {
        segs.pop();
    }
    Some((Krate::Lib, segs))
}

/// Builds the graph of `sources` (`(src/…, text)` pairs); `lib_name` is the
/// library's name as binaries spell it (`isolde`).
pub fn graph(sources: &[(String, String)], lib_name: &str) -> Graph {
    let mut files: Vec<String> = sources.iter().map(|(p, _)| p.clone()).collect();
    files.sort();
    let index: HashMap<&str, usize> = files.iter().enumerate().map(|(i, f)| (f.as_str(), i)).collect();
    let modules: HashMap<(Krate, Vec<String>), usize> =
        files.iter().enumerate().filter_map(|(i, f)| module_of(f).map(|m| (m, i))).collect();
    let scanned: Vec<(String, Krate, Vec<String>, Scan)> = sources
        .iter()
        .filter_map(|(path, text)| {
            let (krate, module) = module_of(path)?;
            let file = FileCtx { krate: &krate, module: &module, lib_name, modules: &modules };
            let scan = scan(&tokens(text), &file);
            Some((path.clone(), krate, module, scan))
        })
        .collect();
    let test_only: Vec<(Krate, Vec<String>)> = scanned
        .iter()
        .flat_map(|(_, krate, module, scan)| {
            scan.test_modules.iter().map(move |m| (krate.clone(), module.iter().chain([m]).cloned().collect()))
        })
        .collect();
    let mut edges: BTreeMap<(usize, usize), BTreeSet<String>> = BTreeMap::new();
    for (path, krate, module, scan) in &scanned {
        if test_only.iter().any(|(k, m)| k == krate && module.starts_with(m)) {
            continue;
        }
        let from = index[path.as_str()];
        for (abs_krate, abs) in &scan.paths {
            let Some((to, name)) = resolve(&modules, abs_krate, abs) else { continue };
            let to_module = module_of(&files[to]).expect("a module file");
            // A path into an enclosing module's file (a child's `super::Item`)
            // is not an edge; see the module doc.
            let encloses = to_module.0 == *krate && module.starts_with(&to_module.1);
            if to != from && !encloses {
                edges.entry((from, to)).or_default().insert(name);
            }
        }
    }
    Graph { files, edges }
}

/// The names a file's `use` declarations bring into scope, to the absolute
/// paths they stand for (`use crate::weak;` makes `weak::elle::X` a path into
/// `weak/elle.rs`).
type Aliases = HashMap<String, (Krate, Vec<String>)>;

/// Where a path is written: the file's crate and module, and the module map.
struct FileCtx<'a> {
    krate: &'a Krate,
    module: &'a [String],
    lib_name: &'a str,
    modules: &'a HashMap<(Krate, Vec<String>), usize>,
}

impl FileCtx<'_> {
    /// `segs`, written in the inline module `inline` of this file, made
    /// absolute; `None` when it does not start in this crate's modules
    /// (`std::…`, a local type, a dependency).
    fn absolute(&self, inline: &[String], segs: &[String], aliases: &Aliases) -> Option<(Krate, Vec<String>)> {
        let mut scope: Vec<String> = self.module.iter().chain(inline).cloned().collect();
        let first = segs.first()?.as_str();
        let rest = match first {
            "crate" => return Some((self.krate.clone(), segs[1..].to_vec())),
            "self" => &segs[1..],
            "super" => {
                let ups = segs.iter().take_while(|s| *s == "super").count();
                for _ in 0..ups {
                    scope.pop()?;
                }
                &segs[ups..]
            }
            _ if first == self.lib_name && *self.krate != Krate::Lib => {
                return Some((Krate::Lib, segs[1..].to_vec()));
            }
            _ if aliases.contains_key(first) => {
                let (krate, mut abs) = aliases[first].clone();
                abs.extend(segs[1..].iter().cloned());
                return Some((krate, abs));
            }
            _ => {
                // A bare first segment names a child module of the scope, if
                // that child is a file.
                let mut child = scope.clone();
                child.push(first.to_string());
                if !self.modules.contains_key(&(self.krate.clone(), child)) {
                    return None;
                }
                segs
            }
        };
        scope.extend(rest.iter().cloned());
        Some((self.krate.clone(), scope))
    }
}

/// The file the longest file-backed prefix of `abs` names, and the name
/// taken from it (the next segment, or the module's own name).
fn resolve(modules: &HashMap<(Krate, Vec<String>), usize>, krate: &Krate, abs: &[String]) -> Option<(usize, String)> {
    (0..=abs.len()).rev().find_map(|k| {
        let file = *modules.get(&(krate.clone(), abs[..k].to_vec()))?;
        let name = abs.get(k).or(abs.last()).cloned().unwrap_or_else(|| "crate".to_string());
        Some((file, name))
    })
}

/// What one file's code names.
struct Scan {
    /// Every path that may lead into the crate, made absolute: the leaves of
    /// `use` trees, and inline paths of two or more segments.
    paths: Vec<(Krate, Vec<String>)>,
    /// Child modules the file declares under `#[cfg(test)]`.
    test_modules: Vec<String>,
}

/// Scans the tokens of one file, skipping `#[cfg(test)]` items.
fn scan(toks: &[Tok], file: &FileCtx) -> Scan {
    let (written, test_modules) = written_paths(toks);
    // Aliases first, from `use` leaves that resolve without one.
    let none = Aliases::new();
    let aliases: Aliases = written
        .iter()
        .filter_map(|(inline, (segs, alias))| Some((alias.clone()?, file.absolute(inline, segs, &none)?)))
        .collect();
    let paths = written.iter().filter_map(|(inline, (segs, _))| file.absolute(inline, segs, &aliases)).collect();
    Scan { paths, test_modules }
}

/// The paths as written in `toks` outside `#[cfg(test)]` items, each with
/// the inline modules it is written in (use leaves with the name they bring
/// into scope, inline paths with none), and the child modules declared under
/// `#[cfg(test)]`.
fn written_paths(toks: &[Tok]) -> (Vec<(Vec<String>, Leaf)>, Vec<String>) {
    let mut out = Vec::new();
    let mut test_modules = Vec::new();
    let mut inline: Vec<(String, usize)> = Vec::new(); // inline `mod name {` and its depth
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let names: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
        match &toks[i] {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
            }
            Tok::Punct('#') if is_cfg_test(toks, i) => {
                let (end, declared) = skip_item(toks, i);
                test_modules.extend(declared.filter(|_| inline.is_empty()));
                i = end;
                continue;
            }
            Tok::Ident(k) if k == "mod" => {
                if let (Some(Tok::Ident(name)), Some(Tok::Punct('{'))) = (toks.get(i + 1), toks.get(i + 2)) {
                    inline.push((name.clone(), depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            Tok::Ident(k) if k == "use" => {
                let mut leaves = Vec::new();
                i = use_tree(toks, i + 1, &mut Vec::new(), &mut leaves, true);
                out.extend(leaves.into_iter().map(|l| (names.clone(), l)));
                continue;
            }
            Tok::Ident(_) if starts_path(toks, i) => {
                let (segs, next) = inline_path(toks, i);
                out.push((names, (segs, None)));
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    (out, test_modules)
}

/// Whether `toks[i..]` is the attribute `#[cfg(test)]`.
fn is_cfg_test(toks: &[Tok], i: usize) -> bool {
    let want = [Tok::Punct('#'), Tok::Punct('['), Tok::Ident("cfg".into()), Tok::Punct('(')];
    let tail = [Tok::Ident("test".into()), Tok::Punct(')'), Tok::Punct(']')];
    toks.get(i..i + 7).is_some_and(|t| t[..4] == want && t[4..] == tail)
}

/// The index after the item whose attributes start at `i`: its `;`, or the
/// `}` closing its first block. When the item is `mod name;`, the name.
fn skip_item(toks: &[Tok], mut i: usize) -> (usize, Option<String>) {
    while matches!(toks.get(i), Some(Tok::Punct('#'))) {
        // An attribute: `#` then a bracketed group.
        i += 1;
        let mut depth = 0usize;
        while let Some(t) = toks.get(i) {
            i += 1;
            match t {
                Tok::Punct('[') => depth += 1,
                Tok::Punct(']') if depth <= 1 => break,
                Tok::Punct(']') => depth -= 1,
                _ => {}
            }
        }
    }
    let start = i;
    let mut depth = 0usize;
    while let Some(t) = toks.get(i) {
        i += 1;
        match t {
            Tok::Punct(';') if depth == 0 => {
                let declared = match &toks[start..i] {
                    [.., Tok::Ident(m), Tok::Ident(name), Tok::Punct(';')] if m == "mod" => Some(name.clone()),
                    _ => None,
                };
                return (i, declared);
            }
            Tok::Punct('{') => depth += 1,
            // A `}` opened before the item closes the enclosing block: leave it.
            Tok::Punct('}') if depth == 0 => return (i - 1, None),
            Tok::Punct('}') if depth == 1 => return (i, None),
            Tok::Punct('}') => depth -= 1,
            _ => {}
        }
    }
    (i, None)
}

/// Whether `toks[i]` begins a path of two or more segments: an identifier
/// followed by `::`, not itself after `::`, `.` or `$` (a `$crate` macro path).
fn starts_path(toks: &[Tok], i: usize) -> bool {
    let before = i.checked_sub(1).map(|j| &toks[j]);
    let after_ok = matches!(toks.get(i + 1), Some(Tok::Sep)) && matches!(toks.get(i + 2), Some(Tok::Ident(_)));
    after_ok && !matches!(before, Some(Tok::Sep | Tok::Punct('.' | '$')))
}

/// The identifiers of the path starting at `i`, and the index after it.
fn inline_path(toks: &[Tok], mut i: usize) -> (Vec<String>, usize) {
    let mut segs = Vec::new();
    while let Some(Tok::Ident(s)) = toks.get(i) {
        segs.push(s.clone());
        i += 1;
        if matches!(toks.get(i), Some(Tok::Sep)) && matches!(toks.get(i + 1), Some(Tok::Ident(_))) {
            i += 1;
        } else {
            break;
        }
    }
    (segs, i)
}

/// A `use` tree's leaf: its path, and the name it brings into scope.
type Leaf = (Vec<String>, Option<String>);

/// The name a leaf ending in `path`'s last segment brings into scope, given
/// the tokens after it (`as name`, `as _`, or none).
fn alias(toks: &[Tok], i: usize, path: &[String]) -> Option<String> {
    match (toks.get(i), toks.get(i + 1)) {
        (Some(Tok::Ident(a)), Some(Tok::Ident(name))) if a == "as" => Some(name.clone()),
        (Some(Tok::Ident(a)), Some(Tok::Punct('_'))) if a == "as" => None,
        _ => path.last().cloned(),
    }
}

/// Parses the `use` tree at `i` (right after `use` when `top`, else inside a
/// `{…}` group) under `prefix`, pushing each leaf's full path (a `self` leaf
/// names the prefix, a glob ends in `*`). Returns the index after the tree:
/// past its `;` at the top, at the `,` or `}` that ends it in a group.
fn use_tree(toks: &[Tok], mut i: usize, prefix: &mut Vec<String>, leaves: &mut Vec<Leaf>, top: bool) -> usize {
    let base = prefix.len();
    if matches!(toks.get(i), Some(Tok::Sep)) {
        i += 1; // a leading `::` (an extern crate path)
    }
    loop {
        match toks.get(i) {
            Some(Tok::Ident(s)) if s == "self" && !prefix.is_empty() => {
                i += 1;
                leaves.push((prefix.clone(), alias(toks, i, prefix)));
            }
            Some(Tok::Ident(s)) => {
                prefix.push(s.clone());
                i += 1;
                if matches!(toks.get(i), Some(Tok::Sep)) {
                    i += 1;
                    continue;
                }
                leaves.push((prefix.clone(), alias(toks, i, prefix)));
            }
            Some(Tok::Punct('*')) => {
                leaves.push((prefix.iter().cloned().chain(["*".to_string()]).collect(), None));
                i += 1;
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                while !matches!(toks.get(i), Some(Tok::Punct('}')) | None) {
                    let end = use_tree(toks, i, prefix, leaves, false);
                    if end == i {
                        return end; // malformed: stop rather than loop
                    }
                    i = end + usize::from(matches!(toks.get(end), Some(Tok::Punct(','))));
                }
                i += 1;
            }
            _ => {}
        }
        break;
    }
    // `as name` and anything else up to the end of this tree.
    while let Some(t) = toks.get(i) {
        match t {
            Tok::Punct(',' | '}') if !top => break,
            Tok::Punct(';') => {
                i += usize::from(top);
                break;
            }
            _ => i += 1,
        }
    }
    prefix.truncate(base);
    i
}

/// Rust source as tokens, comments, string, byte-string, raw-string and
/// character literals left out (lifetimes too). Identifiers keep `r#`-less
/// spelling; numbers become identifiers, which no path starts with.
fn tokens(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            i = skip_block_comment(&c, i);
        } else if ch == '"' {
            i = skip_string(&c, i + 1);
        } else if let Some(end) = raw_or_byte_string(&c, i) {
            i = end;
        } else if ch == '\'' {
            i = skip_char_or_lifetime(&c, i);
        } else if ch == ':' && next == Some(':') {
            out.push(Tok::Sep);
            i += 2;
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
        } else {
            if !ch.is_whitespace() {
                out.push(Tok::Punct(ch));
            }
            i += 1;
        }
    }
    out
}

/// The index after the (nested) block comment opening at `i`.
fn skip_block_comment(c: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// The index after a `"…"` string whose body starts at `i`.
fn skip_string(c: &[char], mut i: usize) -> usize {
    while i < c.len() && c[i] != '"' {
        i += if c[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

/// The index after a `b"…"`, `r"…"`, `r#"…"#` or `br#"…"#` literal
/// starting at `i`, if one does (and `i` does not continue an identifier).
fn raw_or_byte_string(c: &[char], i: usize) -> Option<usize> {
    if i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    if c.get(j) == Some(&'b') {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return (j > i && c.get(j) == Some(&'"')).then(|| skip_string(c, j + 1));
    }
    j += 1;
    let hashes = c[j..].iter().take_while(|&&h| h == '#').count();
    j += hashes;
    if c.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < c.len() {
        if c[j] == '"' && c[j + 1..].iter().take(hashes).filter(|&&h| h == '#').count() == hashes {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(j)
}

/// The index after the character literal or lifetime at `i` (a `'`).
fn skip_char_or_lifetime(c: &[char], i: usize) -> usize {
    if c.get(i + 1) == Some(&'\\') {
        let mut j = i + 3; // past the escaped character, which may be a `'`
        while j < c.len() && c[j] != '\'' {
            j += 1;
        }
        return j + 1;
    }
    if c.get(i + 2) == Some(&'\'') {
        return i + 3; // 'x'
    }
    i + 1 // a lifetime: its name lexes as an identifier after no `::`
}

/// The circles of `g`: its strongly connected components of more than one
/// file, each as sorted file indices, in order of their first file.
pub fn circles(g: &Graph) -> Vec<Vec<usize>> {
    let n = g.files.len();
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in g.edges.keys() {
        adj[a].push(b);
    }
    let mut t =
        Tarjan { adj: &adj, index: vec![usize::MAX; n], low: vec![0; n], on: vec![false; n], ..Tarjan::default() };
    for v in 0..n {
        if t.index[v] == usize::MAX {
            t.visit(v);
        }
    }
    let mut out: Vec<Vec<usize>> = t.comps.into_iter().filter(|c| c.len() > 1).collect();
    out.iter_mut().for_each(|c| c.sort());
    out.sort();
    out
}

#[derive(Default)]
struct Tarjan<'a> {
    adj: &'a [Vec<usize>],
    index: Vec<usize>,
    low: Vec<usize>,
    on: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    comps: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, v: usize) {
        self.index[v] = self.next;
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on[v] = true;
        for &w in &self.adj[v] {
            if self.index[w] == usize::MAX {
                self.visit(w);
                self.low[v] = self.low[v].min(self.low[w]);
            } else if self.on[w] {
                self.low[v] = self.low[v].min(self.index[w]);
            }
        }
        if self.low[v] == self.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            self.comps.push(comp);
        }
    }
}

/// A shortest loop through the circle's first file, staying in the circle:
/// `a.rs -> b.rs -> a.rs`.
pub fn loop_through(g: &Graph, circle: &[usize]) -> String {
    let start = circle[0];
    let inside: BTreeSet<usize> = circle.iter().copied().collect();
    let mut parent: BTreeMap<usize, usize> = BTreeMap::new();
    let mut frontier = vec![start];
    let mut last = None;
    'bfs: while !frontier.is_empty() {
        let mut next = Vec::new();
        for &v in &frontier {
            for &(a, b) in g.edges.keys().filter(|&&(a, _)| a == v) {
                if b == start {
                    last = Some(a);
                    break 'bfs;
                }
                if inside.contains(&b) && b != start && !parent.contains_key(&b) {
                    parent.insert(b, a);
                    next.push(b);
                }
            }
        }
        frontier = next;
    }
    let mut walk = vec![start];
    let mut v = last.expect("a strongly connected component has a loop through each file");
    while v != start {
        walk.push(v);
        v = parent[&v];
    }
    walk.push(start);
    walk.reverse();
    walk.iter().map(|&f| g.files[f].as_str()).collect::<Vec<_>>().join(" -> ")
}

/// The circle in words: its loop, then each arrow inside it with the names
/// that make it.
pub fn describe(g: &Graph, circle: &[usize]) -> String {
    describe_as(g, circle, "files")
}

/// [`describe`], with the nodes called `nodes` (`modules` for the graph of
/// [`modules`]).
pub fn describe_as(g: &Graph, circle: &[usize], nodes: &str) -> String {
    let mut s = format!("{} {nodes}: {}\n", circle.len(), loop_through(g, circle));
    for (&(a, b), names) in &g.edges {
        if circle.contains(&a) && circle.contains(&b) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let _ = writeln!(s, "  {} -> {}: {}", g.files[a], g.files[b], names.join(", "));
        }
    }
    s
}

/// The top-level module `file` belongs to: `src/<name>/` for every file
/// under `src/<name>/`, the file itself otherwise (`src/<name>.rs`, the
/// crate root `src/lib.rs`, a binary `src/bin/<name>.rs`).
pub fn module_of_file(file: &str) -> String {
    match file.strip_prefix("src/").and_then(|rest| rest.split_once('/')) {
        Some((top, _)) if top != "bin" => format!("src/{top}/"),
        _ => file.to_string(),
    }
}

/// `g` folded into top-level modules (see [`module_of_file`]): one node per
/// module, and an arrow from one module to another wherever a file of the
/// first imports a file of the second, with the names of every such import.
pub fn modules(g: &Graph) -> Graph {
    let of: Vec<String> = g.files.iter().map(|f| module_of_file(f)).collect();
    let files: Vec<String> = of.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
    let index = |m: &str| files.binary_search_by(|x| x.as_str().cmp(m)).expect("a module of a file");
    let mut edges: BTreeMap<(usize, usize), BTreeSet<String>> = BTreeMap::new();
    for (&(a, b), names) in &g.edges {
        let (ma, mb) = (index(&of[a]), index(&of[b]));
        if ma != mb {
            edges.entry((ma, mb)).or_default().extend(names.iter().cloned());
        }
    }
    Graph { files, edges }
}
