//! Test helpers of `isolde explore`: a brute-force enumeration of a
//! program's histories, an independent Jepsen encoding, and consistency by
//! `analyze`'s exact checkers.
//!
//! The enumeration runs whole transactions one after another in every
//! order the sessions allow, each external read taking, in turn, every
//! value any finished, non-aborted transaction (or the initial state) wrote
//! last to its key. Every history with an acyclic `so ∪ wr` arises this way
//! (run the transactions in a topological order), many times over; the
//! results are deduplicated by their identity (per transaction: aborted or
//! not, and who each external read read from). Nothing is pruned, so it is
//! exponential: for tiny programs only.

use isolde::anomaly::Workload;
use isolde::explore::eval::{eval, eval_bool, Env, Val};
use isolde::explore::levels::ALL;
use isolde::explore::program::{KeyExpr, Literal, Program, Stmt};
use isolde::explore::witness::{HistView, Source};
use isolde::explore::{explore_each, Level, Options};
use isolde::ingest::{read_bytes, Format};
use isolde::si_check::{self, ExactOptions, OrderKind};
use isolde::weak::front::{self, Sessions};
use isolde::weak::oracle::{self, Axiom};
use std::collections::{BTreeMap, BTreeSet};

/// A history's identity: per transaction (session, index) in that order,
/// whether it aborted and its external reads as (key, source).
pub type Canon = Vec<((usize, usize), bool, Vec<(String, Source)>)>;

/// The identity of an explorer history.
pub fn canon(v: &HistView) -> Canon {
    let mut out: Canon = v
        .txns
        .iter()
        .map(|t| {
            let reads = t
                .events
                .iter()
                .filter(|e| e.read && e.from != Some(Source::Own))
                .map(|e| (e.key.clone(), e.from.expect("a read has a source")))
                .collect();
            ((t.session, t.index), t.aborted, reads)
        })
        .collect();
    out.sort();
    out
}

/// One finished transaction of the enumeration.
#[derive(Clone, Debug)]
struct Done {
    place: (usize, usize),
    aborted: bool,
    /// (read?, key, value, source of a read)
    events: Vec<(bool, String, Val, Option<Source>)>,
}

/// A history found by brute force.
#[derive(Clone, Debug)]
pub struct Found {
    /// Its identity.
    pub canon: Canon,
    /// Its Jepsen rw-register encoding (unique values).
    pub edn: String,
    /// Whether the assertion holds in it (`None`: it could not be
    /// evaluated, a local without a value).
    pub assert_ok: Option<bool>,
}

fn key_text(p: &Program, k: &KeyExpr, env: &Env) -> Option<String> {
    Some(match k {
        KeyExpr::Name(n) => p.key_text(*n, None),
        KeyExpr::Row(n, e) => match eval(p, e, env).ok()? {
            Val::Int(i) => p.key_text(*n, Some(i)),
            _ => return None,
        },
    })
}

fn init_value(p: &Program, key: &str) -> Val {
    for (lit, v) in &p.init {
        if p.key_text(lit.name, lit.row) == key {
            return match v {
                Literal::Int(i) => Val::Int(*i),
                Literal::Set(s) => Val::Set(s.clone()),
            };
        }
    }
    Val::Int(0)
}

enum Run {
    /// The transaction finished (aborted?) with these events.
    Finished(bool, Vec<(bool, String, Val, Option<Source>)>),
    /// The read number `choices.len()` needs a choice among these.
    Choose(Vec<(Source, Val)>),
}

struct Exec<'a> {
    p: &'a Program,
    done: &'a [Done],
    choices: &'a [usize],
    reads: usize,
    events: Vec<(bool, String, Val, Option<Source>)>,
}

impl Exec<'_> {
    /// Ok(Some(aborted)) when the block ended the transaction, Ok(None) to
    /// go on; Err(candidates) when a choice is needed.
    fn block(&mut self, code: &[Stmt], env: &mut Env) -> Result<Option<bool>, Vec<(Source, Val)>> {
        for st in code {
            match st {
                Stmt::Let { local, value, .. } => {
                    env[*local as usize] = Some(eval(self.p, value, env).expect("no run errors"))
                }
                Stmt::Write { key, value, .. } => {
                    let k = key_text(self.p, key, env).expect("key");
                    let v = eval(self.p, value, env).expect("no run errors");
                    self.events.push((false, k, v, None));
                }
                Stmt::Read { key, local, .. } => {
                    let k = key_text(self.p, key, env).expect("key");
                    if let Some(own) = self.events.iter().rev().find(|e| !e.0 && e.1 == k) {
                        let v = own.2.clone();
                        env[*local as usize] = Some(v.clone());
                        self.events.push((true, k, v, Some(Source::Own)));
                        continue;
                    }
                    let mut cands = vec![(Source::Init, init_value(self.p, &k))];
                    for d in self.done.iter().filter(|d| !d.aborted) {
                        if let Some(w) = d.events.iter().rev().find(|e| !e.0 && e.1 == k) {
                            cands.push((Source::Txn(d.place.0, d.place.1), w.2.clone()));
                        }
                    }
                    match self.choices.get(self.reads) {
                        Some(&c) => {
                            self.reads += 1;
                            let (src, v) = cands[c].clone();
                            env[*local as usize] = Some(v.clone());
                            self.events.push((true, k, v, Some(src)));
                        }
                        None => return Err(cands),
                    }
                }
                Stmt::If { cond, then, els, line } => {
                    let b = eval_bool(self.p, cond, env, *line).expect("no run errors");
                    if let Some(a) = self.block(if b { then } else { els }, env)? {
                        return Ok(Some(a));
                    }
                }
                Stmt::Abort { .. } => return Ok(Some(true)),
            }
        }
        Ok(None)
    }
}

fn run_txn(p: &Program, place: (usize, usize), done: &[Done], choices: &[usize], env: &mut Env) -> Run {
    let mut ex = Exec { p, done, choices, reads: 0, events: Vec::new() };
    match ex.block(&p.sessions[place.0][place.1].body, env) {
        Ok(a) => Run::Finished(a.unwrap_or(false), ex.events),
        Err(c) => Run::Choose(c),
    }
}

/// Every history of `p` with an acyclic `so ∪ wr`, consistent or not, once.
/// Programs must not have run-time errors.
pub fn brute_force(p: &Program) -> Vec<Found> {
    let mut seen: BTreeMap<Canon, Found> = BTreeMap::new();
    let mut next = vec![0usize; p.sessions.len()];
    let env: Env = vec![None; p.locals.len()];
    walk(p, &mut next, &mut Vec::new(), &env, &mut seen);
    seen.into_values().collect()
}

fn walk(p: &Program, next: &mut Vec<usize>, done: &mut Vec<Done>, env: &Env, seen: &mut BTreeMap<Canon, Found>) {
    let mut any = false;
    for s in 0..p.sessions.len() {
        if next[s] == p.sessions[s].len() {
            continue;
        }
        any = true;
        let place = (s, next[s]);
        // Every choice vector for this transaction.
        let mut pending: Vec<Vec<usize>> = vec![Vec::new()];
        while let Some(choices) = pending.pop() {
            let mut env2 = env.clone();
            match run_txn(p, place, done, &choices, &mut env2) {
                Run::Choose(c) => {
                    for i in 0..c.len() {
                        let mut more = choices.clone();
                        more.push(i);
                        pending.push(more);
                    }
                }
                Run::Finished(aborted, events) => {
                    done.push(Done { place, aborted, events });
                    next[s] += 1;
                    walk(p, next, done, &env2, seen);
                    next[s] -= 1;
                    done.pop();
                }
            }
        }
    }
    if !any {
        let mut c: Canon = done
            .iter()
            .map(|d| {
                let reads = d
                    .events
                    .iter()
                    .filter(|e| e.0 && e.3 != Some(Source::Own))
                    .map(|e| (e.1.clone(), e.3.expect("source")))
                    .collect();
                (d.place, d.aborted, reads)
            })
            .collect();
        c.sort();
        if seen.contains_key(&c) {
            return;
        }
        let assert_ok = match &p.assert {
            None => Some(true),
            Some(a) => eval_bool(p, a, env, 1).ok(),
        };
        seen.insert(c.clone(), Found { canon: c, edn: jepsen(done), assert_ok });
    }
}

/// The Jepsen rw-register encoding of finished transactions in execution
/// order: unique values per key (write numbers), `nil` initial, aborted
/// transactions as their external reads only.
fn jepsen(done: &[Done]) -> String {
    let mut numbers: BTreeMap<String, u64> = BTreeMap::new();
    // (txn index, event index) -> number of the write
    let mut num: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    let mut out = String::new();
    for (ti, d) in done.iter().enumerate() {
        let mut mops = Vec::new();
        for (ei, (read, key, _, src)) in d.events.iter().enumerate() {
            if *read {
                let v = match src {
                    Some(Source::Init) => None,
                    Some(Source::Own) => {
                        if d.aborted {
                            continue;
                        }
                        (0..ei).rev().find(|&j| !d.events[j].0 && d.events[j].1 == *key).map(|j| num[&(ti, j)])
                    }
                    Some(Source::Txn(s, i)) => {
                        let w = done.iter().position(|x| x.place == (*s, *i)).expect("writer ran before");
                        let j = done[w].events.iter().rposition(|e| !e.0 && e.1 == *key).expect("writer wrote");
                        Some(num[&(w, j)])
                    }
                    None => unreachable!(),
                };
                mops.push(format!("[:r {key} {}]", v.map_or("nil".into(), |n| n.to_string())));
            } else if !d.aborted {
                let n = numbers.entry(key.clone()).or_insert(0);
                *n += 1;
                num.insert((ti, ei), *n);
                mops.push(format!("[:w {key} {n}]"));
            }
        }
        out.push_str(&format!("{{:type :ok, :f :txn, :process {}, :value [{}]}}\n", d.place.0, mops.join(" ")));
    }
    out
}

/// Whether `analyze`'s exact checkers find the Jepsen history `edn`
/// consistent at `level` (with session order): the weak checker for read
/// committed, read atomic and causal; for SI and SER the exact SI/SER
/// checker and the causal one (the exact checker reads a transaction's
/// reads of one key as one read, so a non-repeatable read inside a
/// transaction is left to the weak checkers, as `analyze` does); the
/// axiomatic enumerator for prefix.
pub fn analyze_consistent(edn: &str, level: Level) -> bool {
    let h = read_bytes("explore.edn", edn.as_bytes(), Format::Edn).expect("the encoding parses");
    if level.filtered() && !analyze_consistent(edn, Level::Weak(isolde::weak::Level::Causal)) {
        return false;
    }
    match level {
        Level::Weak(l) => match isolde::weak::check(&h, Workload::RwRegister, l, &isolde::weak::Options::default()) {
            isolde::weak::Verdict::Valid(_) => true,
            isolde::weak::Verdict::Invalid(_) => false,
            isolde::weak::Verdict::Unknown(why) => panic!("weak check undecided: {why}\n{edn}"),
        },
        Level::Strong(semantics) => {
            let lvl = si_check::Level { semantics, order: OrderKind::Session };
            match si_check::check_level(&h, lvl, &ExactOptions::default()).expect("extracts").verdict {
                si_check::Verdict::Valid => true,
                si_check::Verdict::Invalid(_) => false,
                si_check::Verdict::Unknown(why) => panic!("exact check undecided: {why}\n{edn}"),
            }
        }
        Level::Prefix => {
            let f = front::build(&h, Workload::RwRegister, Sessions::Process).expect("front end");
            oracle::enumerate(&f, Axiom::Prefix).expect("small enough to enumerate")
        }
    }
}

/// Checks the explorer on the program `text` at every level against the
/// brute-force enumeration filtered by `analyze`'s checkers: the same
/// histories, each output once, the same assertion results and counts;
/// explore-ce never blocked; explore-ce*'s end states exactly the causal
/// histories; `analyze` accepts every output in the explorer's own Jepsen
/// encoding. Prefix is compared only up to the enumerator's 8 transactions.
pub fn assert_matches_brute_force(text: &str) {
    let p = Program::parse(text).expect("generated programs parse");
    let brute = brute_force(&p);
    let mut causal: Option<BTreeSet<Canon>> = None;
    for level in ALL {
        if level == Level::Prefix && p.txn_count() > isolde::weak::oracle::MAX_ENUMERATED {
            continue; // analyze has no exact prefix checker; the enumerator stops at 8.
        }
        let expected: BTreeMap<Canon, Option<bool>> = brute
            .iter()
            .filter(|f| analyze_consistent(&f.edn, level))
            .map(|f| (f.canon.clone(), f.assert_ok))
            .collect();
        let mut got: BTreeMap<Canon, bool> = BTreeMap::new();
        let mut ends: BTreeSet<Canon> = BTreeSet::new();
        let mut dup = None;
        let mut disagree = None;
        let opts = Options { check_invariants: true, ..Options::default() };
        let out = explore_each(&p, level, &opts, |v, consistent, assert_ok| {
            let c = canon(v);
            ends.insert(c.clone());
            if consistent {
                if got.insert(c.clone(), assert_ok).is_some() {
                    dup = Some(c);
                }
                if !analyze_consistent(&v.to_jepsen("prop", level.name()), level) {
                    disagree = Some(v.to_text());
                }
            }
        })
        .expect("generated programs run");
        assert_eq!(dup, None, "{} output twice at {}:\n{text}", "a history", level.name());
        assert_eq!(disagree, None, "analyze refutes an output at {}:\n{text}", level.name());
        let got_set: BTreeSet<&Canon> = got.keys().collect();
        let exp_set: BTreeSet<&Canon> = expected.keys().collect();
        assert_eq!(got_set, exp_set, "history sets differ at {}:\n{text}", level.name());
        for (c, ok) in &got {
            assert_eq!(expected[c], Some(*ok), "assertion result differs at {} on {c:?}:\n{text}", level.name());
        }
        assert_eq!(out.stats.inconsistent, 0, "an inconsistent history explored at {}:\n{text}", level.name());
        assert_eq!(out.stats.revisits, 0, "a history explored twice at {}:\n{text}", level.name());
        assert_eq!(out.stats.histories as usize, got.len());
        assert_eq!(out.stats.violations as usize, got.values().filter(|ok| !**ok).count());
        match level {
            Level::Weak(_) => {
                assert_eq!(out.stats.blocked, 0, "explore-ce blocked at {}:\n{text}", level.name());
                assert_eq!(out.stats.explored, out.stats.histories);
                if level == Level::Weak(isolde::weak::Level::Causal) {
                    causal = Some(ends);
                }
            }
            _ => {
                // explore-ce*(causal, L) visits exactly the causal histories.
                assert_eq!(Some(&ends), causal.as_ref(), "end states differ from causal at {}:\n{text}", level.name());
                assert_eq!(out.stats.explored as usize, ends.len(), "an end state twice at {}:\n{text}", level.name());
            }
        }
    }
}
