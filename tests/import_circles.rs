//! No import circles between the crate's files.
//!
//! Every `src/**/*.rs` is read and each path its code names into the crate
//! (`use crate::…`, `use super::…`, an inline `crate::a::b::X`, a `mod.rs`'s
//! bare `child::X`) is resolved to the file it leads into; see
//! `support::imports` for the rules, among them the one exception: a file
//! reaching up into the `mod.rs` of a module that contains it is not an edge.
//! A circle (files importing each other in a loop) fails this test, listed as
//! `a.rs -> b.rs -> a.rs` with every arrow inside it and the names that make
//! it. The fix is to move what both sides share down into a file both import,
//! never to merge the files.
//!
//! The same holds one level up, between the crate's top-level modules
//! (`src/<name>.rs` or `src/<name>/`): two modules whose files import each
//! other, even through files that form no loop, are a circle, listed as
//! `src/a/ -> src/b.rs -> src/a/` with the names each way. The fix is the
//! same: what both share moves down into a module both import.

mod support;

use std::collections::BTreeSet;

use support::imports::{circles, describe, describe_as, graph, modules, read_sources, Graph};

fn crate_graph() -> Graph {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = read_sources(root).expect("read src/");
    graph(&sources, &env!("CARGO_PKG_NAME").replace('-', "_"))
}

fn names(g: &Graph, circle: &[usize]) -> BTreeSet<String> {
    circle.iter().map(|&f| g.files[f].clone()).collect()
}

#[test]
fn no_import_circles() {
    let g = crate_graph();
    let report: String = circles(&g).iter().map(|c| format!("circle of {}", describe(&g, c))).collect();
    assert!(report.is_empty(), "import circles between the crate's files:\n{report}");
}

#[test]
fn no_import_circles_between_top_level_modules() {
    let m = modules(&crate_graph());
    let report: String = circles(&m).iter().map(|c| format!("circle of {}", describe_as(&m, c, "modules"))).collect();
    assert!(report.is_empty(), "import circles between the crate's top-level modules:\n{report}");
}

/// The module graph is the crate's: every top-level module is a node, and
/// known arrows between modules are there.
#[test]
fn the_module_graph_sees_known_arrows() {
    let m = modules(&crate_graph());
    let module =
        |p: &str| m.files.iter().position(|f| f == p).unwrap_or_else(|| panic!("{p} not a module: {:?}", m.files));
    let arrow = |a: &str, b: &str| m.edges.get(&(module(a), module(b))).cloned().unwrap_or_default();
    assert!(m.files.len() > 20, "only {} modules: {:?}", m.files.len(), m.files);
    assert!(arrow("src/check/", "src/history.rs").contains("History"));
    assert!(arrow("src/si_check/", "src/accel/").contains("Engine"));
    assert!(!arrow("src/bin/isolde.rs", "src/cli/").is_empty(), "the binary is a node of its own");
    assert!(m.edges.keys().all(|&(a, b)| a != b), "no arrow from a module into itself");
}

/// The scan sees the crate: a graph without files or arrows would pass the
/// test above for nothing.
#[test]
fn the_scan_sees_known_arrows() {
    let g = crate_graph();
    let file = |p: &str| g.files.iter().position(|f| f == p).unwrap_or_else(|| panic!("{p} not scanned"));
    let arrow = |a: &str, b: &str| g.edges.get(&(file(a), file(b))).cloned().unwrap_or_default();
    assert!(g.files.len() > 100, "only {} files read", g.files.len());
    assert!(arrow("src/check/mod.rs", "src/history.rs").contains("History"));
    assert!(
        arrow("src/si_check/mod.rs", "src/si_check/polygraph.rs").contains("DepEdge"),
        "a mod.rs's bare child path"
    );
    assert!(!arrow("src/bin/isolde.rs", "src/cli/mod.rs").is_empty(), "the binary's isolde:: paths");
    assert!(g.edges.len() > 300, "only {} arrows", g.edges.len());
}

/// Builds the graph of a made-up crate.
fn toy(files: &[(&str, &str)]) -> Graph {
    let sources: Vec<(String, String)> = files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
    graph(&sources, "toy")
}

fn circle_files(g: &Graph) -> Vec<Vec<String>> {
    circles(g).iter().map(|c| names(g, c).into_iter().collect()).collect()
}

#[test]
fn use_trees_inline_paths_and_super_make_arrows() {
    let g = toy(&[
        ("src/lib.rs", "pub mod a; pub mod b; pub mod c; pub mod e;"),
        ("src/a.rs", "use crate::{b::{self, X as Y}, c::*};"),
        ("src/b.rs", "fn f() { let _ = crate::a::g::<u8>(); }"),
        ("src/c/mod.rs", "mod d; pub use d::Z;"),
        ("src/c/d.rs", "use super::super::e::Q; use super::Face;"),
        ("src/e.rs", "pub struct Q;"),
    ]);
    let arrow = |a: &str, b: &str| {
        let i = |p| g.files.iter().position(|f| f == p).unwrap();
        g.edges.get(&(i(a), i(b))).map(|n| n.iter().cloned().collect::<Vec<_>>())
    };
    assert_eq!(arrow("src/a.rs", "src/b.rs"), Some(vec!["X".to_string(), "b".to_string()]));
    assert_eq!(arrow("src/a.rs", "src/c/mod.rs"), Some(vec!["*".to_string()]));
    assert_eq!(arrow("src/b.rs", "src/a.rs"), Some(vec!["g".to_string()]));
    assert_eq!(arrow("src/c/mod.rs", "src/c/d.rs"), Some(vec!["Z".to_string()]));
    assert_eq!(arrow("src/c/d.rs", "src/e.rs"), Some(vec!["Q".to_string()]));
    assert_eq!(arrow("src/c/d.rs", "src/c/mod.rs"), None, "a child's super::Item is not an arrow");
    assert_eq!(circle_files(&g), vec![vec!["src/a.rs".to_string(), "src/b.rs".to_string()]]);
    assert!(describe(&g, &circles(&g)[0]).contains("src/a.rs -> src/b.rs -> src/a.rs"));
}

#[test]
fn comments_strings_and_macros_make_no_arrows() {
    let g = toy(&[
        ("src/lib.rs", "pub mod a; pub mod b;"),
        (
            "src/a.rs",
            "// use crate::b::X;\n/* crate::b::Y /* nested */ crate::b::Z */\n/// [`crate::b::W`]\n\
             const S: &str = \"crate::b::V\"; const R: &str = r#\"use crate::b::U;\"#;\n\
             const C: char = '\\''; fn f<'a>(x: &'a str) {}\nmacro_rules! m { () => { $crate::b::T } }",
        ),
        ("src/b.rs", "use crate::a::S;"),
    ]);
    assert_eq!(g.edges.len(), 1, "{:?}", g.edges);
    assert!(circle_files(&g).is_empty());
}

#[test]
fn test_code_makes_no_arrows() {
    let g = toy(&[
        ("src/lib.rs", "pub mod a; pub mod b;"),
        (
            "src/a/mod.rs",
            "#[cfg(test)]\npub(crate) mod kit;\n#[cfg(test)]\nmod tests { use crate::b::B; }\npub struct A;",
        ),
        ("src/a/kit.rs", "use crate::b::B;"),
        ("src/b.rs", "use crate::a::A;"),
    ]);
    assert_eq!(g.edges.len(), 1, "{:?}", g.edges);
}

#[test]
fn paths_through_a_used_module_lead_into_its_files() {
    let g = toy(&[
        ("src/lib.rs", "pub mod a; pub mod w;"),
        ("src/a.rs", "use crate::w; use crate::w::{self as v}; fn f() { w::inner::g(); v::other::h(); }"),
        ("src/w/mod.rs", "pub mod inner; pub mod other;"),
        ("src/w/inner.rs", "use crate::a::A;"),
        ("src/w/other.rs", "pub fn h() {}"),
    ]);
    let i = |p| g.files.iter().position(|f| f == p).unwrap();
    assert!(g.edges.contains_key(&(i("src/a.rs"), i("src/w/other.rs"))), "{:?}", g.edges);
    let expected: Vec<String> = ["src/a.rs", "src/w/inner.rs"].map(String::from).to_vec();
    assert_eq!(circle_files(&g), vec![expected]);
}

#[test]
fn inline_modules_shift_super() {
    let g = toy(&[
        ("src/lib.rs", "pub mod a; pub mod b;"),
        ("src/a.rs", "fn f() {}\nmod inner { use super::*; use super::super::b::K; }"),
        ("src/b.rs", "use crate::a::f;"),
    ]);
    assert_eq!(circle_files(&g), vec![vec!["src/a.rs".to_string(), "src/b.rs".to_string()]]);
}

#[test]
fn a_mod_rs_in_a_loop_through_outside_files_is_a_circle() {
    let g = toy(&[
        ("src/lib.rs", "pub mod p; pub mod q;"),
        ("src/p/mod.rs", "pub mod kid; use kid::K;"),
        ("src/p/kid.rs", "use crate::q::Q; use super::Face;"),
        ("src/q.rs", "use crate::p::P;"),
    ]);
    let expected: Vec<String> = ["src/p/kid.rs", "src/p/mod.rs", "src/q.rs"].map(String::from).to_vec();
    assert_eq!(circle_files(&g), vec![expected]);
}

/// `src/lib.rs`'s map (its module docs, the first thing a new engineer reads)
/// names every top-level module as an intra-doc link: `` [`name`] `` or a
/// path through it, `` [`name::Item`] ``.
#[test]
fn the_crate_map_names_every_module() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("read src/lib.rs");
    let docs: String = lib.lines().filter_map(|l| l.strip_prefix("//!")).collect::<Vec<_>>().join("\n");
    let modules: Vec<&str> =
        lib.lines().filter_map(|l| l.strip_prefix("pub mod ").and_then(|m| m.strip_suffix(';'))).collect();
    assert!(modules.len() > 20, "only {} modules declared", modules.len());
    let missing: Vec<&&str> =
        modules.iter().filter(|m| !docs.contains(&format!("[`{m}`]")) && !docs.contains(&format!("[`{m}::"))).collect();
    assert!(missing.is_empty(), "src/lib.rs's map does not name {missing:?}");
}

/// Files that form no loop can still tie their modules into one: `a/x.rs`
/// imports `b.rs`, which imports `a/y.rs`. The module graph has the circle;
/// files folded together lose their inner arrows.
#[test]
fn a_loop_between_modules_through_different_files_is_a_module_circle() {
    let g = toy(&[
        ("src/lib.rs", "pub mod a; pub mod b; pub mod c;"),
        ("src/a/mod.rs", "pub mod x; pub mod y;"),
        ("src/a/x.rs", "use crate::b::B; use super::y::Y;"),
        ("src/a/y.rs", "pub struct Y;"),
        ("src/b.rs", "use crate::a::y::Y; use crate::c::C;"),
        ("src/c.rs", "pub struct C;"),
        ("src/bin/tool.rs", "use toy::a::x::X;"),
    ]);
    assert!(circle_files(&g).is_empty(), "no circle between files: {:?}", circle_files(&g));
    let m = modules(&g);
    assert_eq!(m.files, ["src/a/", "src/b.rs", "src/bin/tool.rs", "src/c.rs", "src/lib.rs"]);
    assert_eq!(circle_files(&m), vec![vec!["src/a/".to_string(), "src/b.rs".to_string()]]);
    let text = describe_as(&m, &circles(&m)[0], "modules");
    assert!(text.starts_with("2 modules: "), "{text}");
    assert!(text.contains("src/a/ -> src/b.rs: B"), "{text}");
    assert!(text.contains("src/b.rs -> src/a/: Y"), "{text}");
    let i = |p: &str| m.files.iter().position(|f| f == p).unwrap();
    assert!(m.edges.contains_key(&(i("src/bin/tool.rs"), i("src/a/"))), "{:?}", m.edges);
    assert!(!m.edges.contains_key(&(i("src/a/"), i("src/a/"))), "{:?}", m.edges);
}
