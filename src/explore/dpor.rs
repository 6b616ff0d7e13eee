//! explore-ce and explore-ce* (spec §3–§5): the swapping-based dynamic
//! partial order reduction.
//!
//! `EXPLORE(h)` asks [`Engine::next`] for the next event: the pending
//! transaction's next database step (found by re-running its code with the
//! values its reads got), or the begin of the `<or`-least transaction not
//! yet started, or `⊥` when every transaction has finished. An external
//! read branches over `VALIDWRITES`: every committed writer of the key that
//! keeps the history consistent at the base level `I₀`. After a commit of
//! `t`, `EXPLORESWAPS` considers every earlier read `r` of a key `t` writes
//! whose transaction is not in `t`'s causal past, and, when `OPTIMALITY`
//! admits it, explores `SWAP(h, r, t)`: `h` cut after `r` (keeping `t`'s
//! causal past), with `r` now reading from `t`. `OPTIMALITY` admits a swap
//! only from one canonical pre-image: the swapped history is consistent, and
//! `r` and every read the swap deletes are not themselves swapped and read
//! from their `readLatest` writer.
//!
//! The pitfalls of spec §8 are handled where they arise: reads of a
//! transaction's own write are [`OWN`] events, never branched or swapped
//! (1, 2); aborted transactions write nothing but their reads branch and
//! swap (3); swaps only after a commit (4); the swapped read's transaction
//! is resumed first (5); `D` keeps `t`'s causal past wherever it lies (6);
//! `readLatest` cuts at `r'` itself and orders candidates by `<` (7); all
//! three conditions of `swapped` (8); explore-ce* checks the target level
//! only on complete histories (9, 10).
//!
//! The search is iterative: a stack of histories still to explore, drained
//! last-in first-out (depth first), so memory is the stack — polynomial in
//! the program (spec §6); no set of seen histories is kept.

use super::eval::{eval, eval_bool, Env, RunError, Val};
use super::history::{bit, EvKind, Event, Hist, KeyId, Status, TxnId, ValId, INIT, OWN};
use super::levels::{self, Level, Scratch};
use super::program::{KeyExpr, Program, Stmt};
use crate::weak;
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// The program's transactions in oracle order, with their sessions.
pub struct Shape {
    /// For each transaction id: (session, index in session); id 0 is `init`.
    pub place: Vec<(usize, usize)>,
    /// For each transaction: its session predecessors and `init`.
    pub so_mask: Vec<u64>,
}

impl Shape {
    /// The shape of `p`.
    pub fn new(p: &Program) -> Shape {
        let mut place = vec![(usize::MAX, 0)];
        let mut so_mask = vec![0u64];
        for (s, txns) in p.sessions.iter().enumerate() {
            let mut before = bit(INIT);
            for i in 0..txns.len() {
                let id = place.len() as TxnId;
                place.push((s, i));
                so_mask.push(before);
                before |= bit(id);
            }
        }
        Shape { place, so_mask }
    }
}

/// A key as the program computes it: a name and, for a row, its id.
pub type KeyVal = (u32, Option<i64>);

/// Keys and values met so far, interned.
#[derive(Default)]
pub struct Tables {
    /// Interned keys.
    pub keys: Vec<KeyVal>,
    key_ids: FxHashMap<KeyVal, KeyId>,
    /// The initial value of each key.
    pub init: Vec<ValId>,
    /// Interned values.
    pub vals: Vec<Val>,
    val_ids: FxHashMap<Val, ValId>,
}

impl Tables {
    /// The id of `v`.
    pub fn val(&mut self, v: Val) -> ValId {
        if let Some(&id) = self.val_ids.get(&v) {
            return id;
        }
        let id = self.vals.len() as ValId;
        self.vals.push(v.clone());
        self.val_ids.insert(v, id);
        id
    }

    fn key(&mut self, p: &Program, k: KeyVal) -> KeyId {
        if let Some(&id) = self.key_ids.get(&k) {
            return id;
        }
        let init = p
            .init
            .iter()
            .find(|(lit, _)| lit.name == k.0 && lit.row == k.1)
            .map(|(_, v)| match v {
                super::program::Literal::Int(i) => Val::Int(*i),
                super::program::Literal::Set(s) => Val::Set(std::rc::Rc::new(s.clone())),
            })
            .unwrap_or(Val::Int(0));
        let iv = self.val(init);
        let id = self.keys.len() as KeyId;
        self.keys.push(k);
        self.key_ids.insert(k, id);
        self.init.push(iv);
        id
    }
}

/// What the program does next (NEXT).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Every transaction finished (`⊥`).
    Done,
    /// Begin this transaction.
    Begin(TxnId),
    /// An external read of this key by the pending transaction.
    Read(KeyId),
    /// A read of the pending transaction's own write.
    OwnRead(KeyId, ValId),
    /// A write.
    Write(KeyId, ValId),
    /// Commit the pending transaction.
    Commit,
    /// Abort it.
    Abort,
}

enum Flow {
    Done,
    Stop(Next),
    Aborted,
}

/// Counters of one exploration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Complete histories reached (end states), before any filter.
    pub explored: u64,
    /// Complete histories consistent at the level (outputs).
    pub histories: u64,
    /// Outputs that break the assertion.
    pub violations: u64,
    /// Calls of EXPLORE.
    pub calls: u64,
    /// EXPLORE calls that could not continue: an external read without a
    /// valid writer (zero for explore-ce: strong optimality).
    pub blocked: u64,
    /// Swaps OPTIMALITY admitted.
    pub swaps: u64,
    /// Swaps OPTIMALITY refused.
    pub refused_swaps: u64,
    /// EXPLORE calls on a history inconsistent at the base level, counted
    /// only with [`Engine::check_invariants`] (zero: strong optimality's
    /// "never explores an inconsistent history").
    pub inconsistent: u64,
    /// EXPLORE calls on a history (transactions and their events, whatever
    /// the order `<`) already explored, counted only with
    /// [`Engine::check_invariants`] (zero: optimality).
    pub revisits: u64,
}

/// Why the search stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A run-time error of the program.
    Error(RunError),
    /// A budget ran out; the reason.
    Budget(String),
}

/// A complete history reached by the search.
pub struct Leaf<'a> {
    /// The history.
    pub hist: &'a Hist,
    /// Whether it is consistent at the target level (an output).
    pub consistent: bool,
    /// Whether the assertion holds (`true` without one); only evaluated for
    /// outputs.
    pub assert_ok: bool,
    /// Every local's value in it (outputs only).
    pub env: &'a Env,
}

/// What a history's text needs: the program, its shape, keys and values.
pub struct View<'a> {
    /// The program.
    pub prog: &'a Program,
    /// Its transactions.
    pub shape: &'a Shape,
    /// Keys and values met.
    pub tables: &'a Tables,
}

/// The explorer's state.
pub struct Engine<'p> {
    /// The program.
    pub prog: &'p Program,
    /// Its transactions.
    pub shape: Shape,
    /// Keys and values.
    pub tables: Tables,
    level: Level,
    base: weak::Level,
    scratch: Scratch,
    /// Counters.
    pub stats: Stats,
    /// Check every explored history's consistency, and that none is
    /// explored twice (a test of the algorithm: it keeps every history
    /// explored, so memory is no longer polynomial).
    pub check_invariants: bool,
    seen: rustc_hash::FxHashSet<Vec<super::history::Log>>,
    /// A reusable environment for NEXT.
    env_buf: Env,
    /// Locals bound in [`Engine::env_buf`] by the last replay.
    dirty: Vec<u32>,
}

/// A history still to explore: whether its last event is a commit (then
/// its swaps are due), and the locals its pending transaction's session
/// bound before it, once computed (shared by the histories that extend it).
type Item = (Hist, bool, Option<Rc<Bound>>);

/// The locals with a value, as (local, value).
type Bound = Vec<(u32, Val)>;

impl<'p> Engine<'p> {
    /// An engine exploring `prog` at `level`.
    pub fn new(prog: &'p Program, level: Level) -> Self {
        let mut tables = Tables::default();
        for (lit, _) in &prog.init {
            tables.key(prog, (lit.name, lit.row));
        }
        Engine {
            prog,
            shape: Shape::new(prog),
            tables,
            level,
            base: level.base(),
            scratch: Scratch::default(),
            stats: Stats::default(),
            check_invariants: false,
            seen: Default::default(),
            env_buf: vec![None; prog.locals.len()],
            dirty: Vec::new(),
        }
    }

    /// Runs the search; `leaf` sees every complete history and returns
    /// whether to go on; `budget` is asked before each step whether to go
    /// on (`Err(reason)` stops).
    pub fn run(
        &mut self,
        mut leaf: impl FnMut(&View, &Leaf) -> bool,
        mut budget: impl FnMut(&Stats) -> Result<(), String>,
    ) -> Result<(), Stop> {
        let mut stack: Vec<Item> = vec![(Hist::initial(self.prog.txn_count()), false, None)];
        while let Some((h, after_commit, base_env)) = stack.pop() {
            budget(&self.stats).map_err(Stop::Budget)?;
            self.stats.calls += 1;
            if self.check_invariants
                && !levels::weak_ok(&h, &self.shape.so_mask, self.tables.keys.len(), self.base, &mut self.scratch)
            {
                self.stats.inconsistent += 1;
            }
            if self.check_invariants && !self.seen.insert(h.txns.clone()) {
                self.stats.revisits += 1;
            }
            if after_commit {
                self.swaps(&h, &mut stack);
            }
            let (next, base_env) = self.next(&h, base_env).map_err(Stop::Error)?;
            match next {
                Next::Done => {
                    self.stats.explored += 1;
                    let consistent = !self.level.filtered()
                        || levels::strong_ok(&h, &self.shape.so_mask, self.level, &mut self.scratch);
                    let mut env = Env::new();
                    let mut assert_ok = true;
                    if consistent {
                        self.stats.histories += 1;
                        env = self.final_env(&h).map_err(Stop::Error)?;
                        if let Some(a) = &self.prog.assert {
                            assert_ok = eval_bool(self.prog, a, &env, a.line().max(1)).map_err(Stop::Error)?;
                        }
                        if !assert_ok {
                            self.stats.violations += 1;
                        }
                    }
                    let view = View { prog: self.prog, shape: &self.shape, tables: &self.tables };
                    if !leaf(&view, &Leaf { hist: &h, consistent, assert_ok, env: &env }) {
                        return Ok(());
                    }
                }
                Next::Begin(t) => {
                    let mut h = h;
                    h.txns[t as usize].status = Status::Pending;
                    h.order.push(t);
                    stack.push((h, false, None));
                }
                Next::Read(key) => {
                    let t = h.pending().expect("a read belongs to the pending transaction");
                    let mut h1 = h;
                    h1.txns[t as usize].events.push(Event { kind: EvKind::Read, key, val: 0, writer: INIT });
                    let writers = self.valid_writes(&mut h1, t);
                    if writers.is_empty() {
                        self.stats.blocked += 1;
                    }
                    for &w in writers.iter().rev() {
                        let mut h2 = h1.clone();
                        self.set_writer(&mut h2, t, w);
                        stack.push((h2, false, base_env.clone()));
                    }
                }
                Next::OwnRead(key, val) | Next::Write(key, val) => {
                    let t = h.pending().expect("a step belongs to the pending transaction");
                    let kind = if matches!(next, Next::OwnRead(..)) { EvKind::Read } else { EvKind::Write };
                    let mut h = h;
                    h.txns[t as usize].events.push(Event { kind, key, val, writer: OWN });
                    stack.push((h, false, base_env));
                }
                Next::Commit | Next::Abort => {
                    let t = h.pending().expect("a commit belongs to the pending transaction");
                    let commit = next == Next::Commit;
                    let mut h = h;
                    h.txns[t as usize].status = if commit { Status::Committed } else { Status::Aborted };
                    stack.push((h, commit, None));
                }
            }
        }
        Ok(())
    }

    /// VALIDWRITES: the committed writers of the pending transaction `t`'s
    /// last event (a read, its writer still to set) that keep `h` consistent
    /// at the base level, in `<` order.
    fn valid_writes(&mut self, h: &mut Hist, t: TxnId) -> Vec<TxnId> {
        let key = h.txns[t as usize].events.last().expect("the read").key;
        let cands: Vec<TxnId> = h
            .order
            .iter()
            .copied()
            .filter(|&w| w != t && h.txns[w as usize].status == Status::Committed && h.writes(w, key))
            .collect();
        let mut out = Vec::new();
        for w in cands {
            self.set_writer(h, t, w);
            if levels::weak_ok(h, &self.shape.so_mask, self.tables.keys.len(), self.base, &mut self.scratch) {
                out.push(w);
            }
        }
        out
    }

    /// Makes `w` the writer of `t`'s last event, with its value.
    fn set_writer(&self, h: &mut Hist, t: TxnId, w: TxnId) {
        let key = h.txns[t as usize].events.last().expect("the read").key;
        let val = h.last_write(w, key).unwrap_or(self.tables.init[key as usize]);
        let e = h.txns[t as usize].events.last_mut().expect("the read");
        e.writer = w;
        e.val = val;
    }

    /// EXPLORESWAPS after the commit of `h`'s last transaction: pushes every
    /// swapped history OPTIMALITY admits.
    fn swaps(&mut self, h: &Hist, stack: &mut Vec<Item>) {
        let t = *h.order.last().expect("a committed transaction");
        let cp = h.causal_pasts(&self.shape.so_mask);
        let pos = h.positions();
        for &u in &h.order[1..] {
            if cp[t as usize] & bit(u) != 0 {
                continue;
            }
            for (k, e) in h.txns[u as usize].events.iter().enumerate() {
                if e.is_external_read() && h.writes(t, e.key) {
                    match self.optimal_swap(h, u, k, t, &cp, &pos) {
                        Some(hs) => {
                            self.stats.swaps += 1;
                            stack.push((hs, false, None));
                        }
                        None => self.stats.refused_swaps += 1,
                    }
                }
            }
        }
    }

    /// SWAP(h, r, t) for the read `r` = event `k` of `u`: everything after
    /// `r` outside `t`'s causal past is deleted, `r` reads from `t`, and
    /// `u` becomes the pending, last transaction.
    fn swap(&self, h: &Hist, u: TxnId, k: usize, t: TxnId, cp: &[u64; 64], pos: &[u8; 64]) -> Hist {
        let mut hs = cut_at(h, u, k, t, cp, pos);
        self.set_writer(&mut hs, u, t);
        hs
    }

    /// OPTIMALITY(h, r, t), returning the swapped history when it holds.
    fn optimal_swap(&mut self, h: &Hist, u: TxnId, k: usize, t: TxnId, cp: &[u64; 64], pos: &[u8; 64]) -> Option<Hist> {
        // The reads r' to check: r, the later reads of u, and the reads of
        // every deleted transaction.
        let mut reads: Vec<(TxnId, usize)> = Vec::new();
        for (i, e) in h.txns[u as usize].events.iter().enumerate().skip(k) {
            if e.is_external_read() {
                reads.push((u, i));
            }
        }
        for &b in &h.order {
            if pos[b as usize] > pos[u as usize] && cp[t as usize] & bit(b) == 0 {
                for (i, e) in h.txns[b as usize].events.iter().enumerate() {
                    if e.is_external_read() {
                        reads.push((b, i));
                    }
                }
            }
        }
        if reads.iter().any(|&(v, i)| self.swapped(h, v, i, cp, pos)) {
            return None;
        }
        let hs = self.swap(h, u, k, t, cp, pos);
        if !levels::weak_ok(&hs, &self.shape.so_mask, self.tables.keys.len(), self.base, &mut self.scratch) {
            return None;
        }
        for &(v, i) in &reads {
            if !self.read_latest(h, v, i, t, cp, pos) {
                return None;
            }
        }
        Some(hs)
    }

    /// swapped(h, r) for the read `r` = event `k` of `u` (spec §5.3).
    ///
    /// Condition (2) ranges over *events* `e' <or r` with `e' < r` (the
    /// oracle order lifted to events: by transaction, then program order),
    /// so it includes the reads of `u` before `r`: a read that NEXT added
    /// after an earlier swap of its own transaction made `w` visible is not
    /// swapped. Read at the level of transactions only, it would block
    /// swaps that some history needs (the property test finds one: a
    /// transaction reading `x` then `y`, each written by another session,
    /// under read committed). Condition (3) is the special case of a
    /// direct read from `w`.
    fn swapped(&self, h: &Hist, u: TxnId, k: usize, cp: &[u64; 64], pos: &[u8; 64]) -> bool {
        let events = &h.txns[u as usize].events;
        let w = events[k].writer;
        // (1) w precedes r in <, yet u precedes w in <or.
        if w == INIT || !(pos[w as usize] < pos[u as usize] && u < w) {
            return false;
        }
        // (2) no transaction t' <or u, t' < r, with w (so ∪ wr)+ t'.
        for &t2 in &h.order {
            if t2 < u && pos[t2 as usize] < pos[u as usize] && t2 != w && cp[t2 as usize] & bit(w) != 0 {
                return false;
            }
        }
        // (2) for the events of u before r, and (3): no earlier read of u
        // has w in its causal past.
        !events[..k].iter().any(|e| e.is_external_read() && cp[e.writer as usize] & bit(w) != 0)
    }

    /// readLatest(h, r', t) for `r'` = event `k` of `u`: its writer is the
    /// `<`-latest writer of its key in `u`'s causal past that the history cut
    /// at `r'` (keeping `t`'s causal past) admits.
    fn read_latest(&mut self, h: &Hist, u: TxnId, k: usize, t: TxnId, cp: &[u64; 64], pos: &[u8; 64]) -> bool {
        let mut cut = cut_at(h, u, k, t, cp, pos);
        let key = h.txns[u as usize].events[k].key;
        // u's causal past in the cut history: session predecessors and the
        // writers of its reads before r'.
        let mut past = 0u64;
        for p in super::history::members(self.shape.so_mask[u as usize]) {
            past |= cp[p as usize];
        }
        for e in &h.txns[u as usize].events[..k] {
            if e.is_external_read() {
                past |= cp[e.writer as usize];
            }
        }
        let mut cands: Vec<TxnId> = super::history::members(past)
            .filter(|&c| c != u && h.txns[c as usize].status == Status::Committed && h.writes(c, key))
            .collect();
        cands.sort_unstable_by_key(|&c| std::cmp::Reverse(pos[c as usize]));
        let w = h.txns[u as usize].events[k].writer;
        for c in cands {
            self.set_writer(&mut cut, u, c);
            if levels::weak_ok(&cut, &self.shape.so_mask, self.tables.keys.len(), self.base, &mut self.scratch) {
                return c == w;
            }
        }
        false
    }

    /// NEXT: the next event of the pending transaction, else the begin of
    /// the `<or`-least transaction not started, else `Done`. `base` is the
    /// pending transaction's session environment if known; the one used is
    /// returned.
    pub fn next(&mut self, h: &Hist, base: Option<Rc<Bound>>) -> Result<(Next, Option<Rc<Bound>>), RunError> {
        if let Some(t) = h.pending() {
            let base = match base {
                Some(b) => b,
                None => {
                    let env = self.session_env(h, t)?;
                    Rc::new(env.into_iter().enumerate().filter_map(|(l, v)| v.map(|v| (l as u32, v))).collect())
                }
            };
            // The reusable environment holds no value between calls: set
            // the session's bound locals, replay, and clear what was set.
            let mut env = std::mem::take(&mut self.env_buf);
            for (l, v) in base.iter() {
                env[*l as usize] = Some(v.clone());
            }
            self.dirty.clear();
            let (s, i) = self.shape.place[t as usize];
            let code = &self.prog.sessions[s][i].body;
            let mut cur = 0;
            let flow = self.replay(code, &mut env, &h.txns[t as usize].events, &mut cur);
            for (l, _) in base.iter() {
                env[*l as usize] = None;
            }
            for &l in &self.dirty {
                env[l as usize] = None;
            }
            self.env_buf = env;
            let next = match flow? {
                Flow::Done => Next::Commit,
                Flow::Aborted => Next::Abort,
                Flow::Stop(n) => n,
            };
            return Ok((next, Some(base)));
        }
        let next = (1..h.txns.len() as TxnId)
            .find(|&t| h.txns[t as usize].status == Status::Absent)
            .map_or(Next::Done, Next::Begin);
        Ok((next, None))
    }

    /// The locals bound by the transactions of `t`'s session before `t`.
    fn session_env(&mut self, h: &Hist, t: TxnId) -> Result<Env, RunError> {
        let mut env: Env = vec![None; self.prog.locals.len()];
        let (s, i) = self.shape.place[t as usize];
        for j in 0..i {
            let id = t - (i - j) as TxnId;
            let mut cur = 0;
            self.replay(&self.prog.sessions[s][j].body, &mut env, &h.txns[id as usize].events, &mut cur)?;
        }
        Ok(env)
    }

    /// Every local's value in the complete history `h`.
    fn final_env(&mut self, h: &Hist) -> Result<Env, RunError> {
        let mut env: Env = vec![None; self.prog.locals.len()];
        for t in 1..h.txns.len() as TxnId {
            let (s, i) = self.shape.place[t as usize];
            let mut cur = 0;
            self.replay(&self.prog.sessions[s][i].body, &mut env, &h.txns[t as usize].events, &mut cur)?;
        }
        Ok(env)
    }

    fn key_of(&mut self, k: &KeyExpr, env: &Env, line: usize) -> Result<KeyId, RunError> {
        let kv = match k {
            KeyExpr::Name(n) => (*n, None),
            KeyExpr::Row(n, e) => match eval(self.prog, e, env)? {
                Val::Int(i) => (*n, Some(i)),
                v => {
                    return Err(RunError {
                        line,
                        msg: format!(
                            "a row key [:{} ...] needs an integer id, found {v}",
                            self.prog.names[*n as usize]
                        ),
                    })
                }
            },
        };
        Ok(self.tables.key(self.prog, kv))
    }

    /// Runs `code` over the recorded events `evs` from `cur`; stops at the
    /// first step with no recorded event.
    fn replay(&mut self, code: &[Stmt], env: &mut Env, evs: &[Event], cur: &mut usize) -> Result<Flow, RunError> {
        for st in code {
            match st {
                Stmt::Let { local, value, .. } => {
                    env[*local as usize] = Some(eval(self.prog, value, env)?);
                    self.dirty.push(*local);
                }
                Stmt::Read { key, local, line } => {
                    let key = self.key_of(key, env, *line)?;
                    if let Some(e) = evs.get(*cur) {
                        debug_assert!(e.kind == EvKind::Read && e.key == key, "replay diverged at line {line}");
                        env[*local as usize] = Some(self.tables.vals[e.val as usize].clone());
                        self.dirty.push(*local);
                        *cur += 1;
                    } else {
                        let own = evs.iter().rev().find(|e| e.kind == EvKind::Write && e.key == key);
                        return Ok(Flow::Stop(match own {
                            Some(w) => Next::OwnRead(key, w.val),
                            None => Next::Read(key),
                        }));
                    }
                }
                Stmt::Write { key, value, line } => {
                    let key = self.key_of(key, env, *line)?;
                    if evs.get(*cur).is_some() {
                        *cur += 1;
                    } else {
                        let v = eval(self.prog, value, env)?;
                        let v = self.tables.val(v);
                        return Ok(Flow::Stop(Next::Write(key, v)));
                    }
                }
                Stmt::If { cond, then, els, line } => {
                    let branch = if eval_bool(self.prog, cond, env, *line)? { then } else { els };
                    match self.replay(branch, env, evs, cur)? {
                        Flow::Done => {}
                        f => return Ok(f),
                    }
                }
                Stmt::Abort { .. } => return Ok(Flow::Aborted),
            }
        }
        Ok(Flow::Done)
    }
}

/// The history SWAP and readLatest start from, for the read `r` = event `k`
/// of `u` and the writer `t`: the transactions before `u` and those in
/// `t`'s causal past (`cp`) are kept in order, every other one is deleted,
/// and `u`, cut right after `r`, becomes the pending, last transaction.
fn cut_at(h: &Hist, u: TxnId, k: usize, t: TxnId, cp: &[u64; 64], pos: &[u8; 64]) -> Hist {
    let mut cut = h.clone();
    cut.order.clear();
    for &b in &h.order {
        if b == u {
            continue;
        }
        if pos[b as usize] < pos[u as usize] || cp[t as usize] & bit(b) != 0 {
            cut.order.push(b);
        } else {
            cut.txns[b as usize] = Default::default();
        }
    }
    let log = &mut cut.txns[u as usize];
    log.events.truncate(k + 1);
    log.status = Status::Pending;
    cut.order.push(u);
    cut
}
