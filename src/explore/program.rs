//! Client programs: the EDN format, its abstract syntax, and the parser.
//!
//! A program (spec `explore.md` §1, the paper's Fig. 1) is a set of
//! sessions running in parallel; a session is a sequence of transactions, a
//! transaction a sequence of statements, with no loops (programs are
//! bounded, as stateless model checking needs):
//!
//! ```clojure
//! {:init {:x 0}                                ; optional: keys start at 0
//!  :sessions [[[[:r :x a] [:w :x (+ a 1)]]]    ; session 1: one transaction
//!             [[[:r :x b] [:w :x (+ b 1)]]]]   ; session 2
//!  :assert (not (and (= a 0) (= b 0)))}        ; checked on every history
//! ```
//!
//! Statements: `[:r KEY LOCAL]`, `[:w KEY EXPR]`, `[:if EXPR [STMT…] [STMT…]]`
//! (else optional), `[:abort]`, and `[:let LOCAL EXPR]` (the paper's local
//! computation `a := e`). A `KEY` is a keyword `:x`, or a *row key*
//! `[:table EXPR]` whose index is computed at run time (the paper models a
//! SQL table as a key holding the set of its ids plus one key per row).
//!
//! Locals are named uniquely in a program and bound by `:r` or `:let`; a
//! statement may use a local bound earlier in its session (an earlier
//! transaction's included), and `:assert` may use every local. These scope
//! rules are checked here, so a program that parses refers only to locals
//! that exist; whether a local actually has a value (its statement may sit in
//! an `:if` branch not taken) is known only when the program runs.

use super::reader::{read_all, Form, FormKind, ProgramError};
use rustc_hash::FxHashMap;

/// Most transactions a program may have (histories use 64-bit sets of
/// transactions, one bit kept for the initial transaction).
pub const MAX_TXNS: usize = 63;

/// Index of a local in [`Program::locals`].
pub type LocalId = u32;

/// A parsed program.
#[derive(Clone, Debug)]
pub struct Program {
    /// Initial values given by `:init` (other keys start at 0).
    pub init: Vec<(KeyLit, Literal)>,
    /// Sessions; each a sequence of transactions.
    pub sessions: Vec<Vec<Txn>>,
    /// The assertion, if any.
    pub assert: Option<Expr>,
    /// Local names, by [`LocalId`].
    pub locals: Vec<String>,
    /// Names of tables and plain keys, by index ([`KeyExpr`] refers to them).
    pub names: Vec<String>,
}

/// A key as written in `:init`: a name and, for a row key, its index.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyLit {
    /// Index into [`Program::names`].
    pub name: u32,
    /// The row index of `[:table N]`.
    pub row: Option<i64>,
}

/// A constant initial value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Literal {
    /// An integer.
    Int(i64),
    /// A set of integers.
    Set(Vec<i64>),
}

/// One transaction of a session.
#[derive(Clone, Debug)]
pub struct Txn {
    /// Its statements.
    pub body: Vec<Stmt>,
    /// Line where it starts.
    pub line: usize,
}

/// A key expression.
#[derive(Clone, Debug)]
pub enum KeyExpr {
    /// `:x` (index into [`Program::names`]).
    Name(u32),
    /// `[:table EXPR]`: the row of `table` whose id the expression computes.
    Row(u32, Expr),
}

/// A statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `[:r KEY LOCAL]`
    Read { key: KeyExpr, local: LocalId, line: usize },
    /// `[:w KEY EXPR]`
    Write { key: KeyExpr, value: Expr, line: usize },
    /// `[:if EXPR [THEN…] [ELSE…]]`
    If { cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>, line: usize },
    /// `[:abort]`
    Abort { line: usize },
    /// `[:let LOCAL EXPR]`
    Let { local: LocalId, value: Expr, line: usize },
}

/// An operator of an expression `(op args…)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `+`, any number of integers.
    Add,
    /// `-`: negation of one integer, or the first minus the rest.
    Sub,
    /// `=`
    Eq,
    /// `not=`
    Ne,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `and`, short-circuit, any number of booleans.
    And,
    /// `or`, short-circuit.
    Or,
    /// `not`
    Not,
    /// `(conj set e…)`
    Conj,
    /// `(disj set e…)`
    Disj,
    /// `(contains? set e)`
    Contains,
    /// `(count set)`
    Count,
}

impl Op {
    /// The operator's name in programs.
    pub fn name(self) -> &'static str {
        OPS.iter().find(|(_, o, _)| *o == self).map_or("?", |(n, _, _)| n)
    }
}

/// Operators with their arity (min, max; `usize::MAX` for any).
const OPS: &[(&str, Op, (usize, usize))] = &[
    ("+", Op::Add, (0, usize::MAX)),
    ("-", Op::Sub, (1, usize::MAX)),
    ("=", Op::Eq, (2, 2)),
    ("not=", Op::Ne, (2, 2)),
    ("<", Op::Lt, (2, 2)),
    (">", Op::Gt, (2, 2)),
    ("<=", Op::Le, (2, 2)),
    (">=", Op::Ge, (2, 2)),
    ("and", Op::And, (0, usize::MAX)),
    ("or", Op::Or, (0, usize::MAX)),
    ("not", Op::Not, (1, 1)),
    ("conj", Op::Conj, (1, usize::MAX)),
    ("disj", Op::Disj, (1, usize::MAX)),
    ("contains?", Op::Contains, (2, 2)),
    ("count", Op::Count, (1, 1)),
];

/// An expression.
#[derive(Clone, Debug)]
pub enum Expr {
    /// An integer literal.
    Int(i64),
    /// `true` or `false`.
    Bool(bool),
    /// A local.
    Local(LocalId, usize),
    /// `#{e…}`
    Set(Vec<Expr>, usize),
    /// `(op args…)`
    Call(Op, Vec<Expr>, usize),
}

impl Expr {
    /// The line the expression starts on (0 for literals, which carry none).
    pub fn line(&self) -> usize {
        match self {
            Expr::Int(_) | Expr::Bool(_) => 0,
            Expr::Local(_, l) | Expr::Set(_, l) | Expr::Call(_, _, l) => *l,
        }
    }
}

impl Program {
    /// Parses a program from its EDN text.
    pub fn parse(text: &str) -> Result<Program, ProgramError> {
        let forms = read_all(text)?;
        let mut it = forms.into_iter();
        let Some(top) = it.next() else {
            return Err(ProgramError::new(1, "expected a program map {:sessions [...] ...}, found an empty file"));
        };
        if let Some(extra) = it.next() {
            return Err(ProgramError::new(
                extra.line,
                format!("expected the end of the file after the program map, found {}", extra.describe()),
            ));
        }
        let FormKind::Map(pairs) = top.kind else {
            return Err(ProgramError::new(
                top.line,
                format!("expected a program map {{:sessions [...] ...}}, found {}", top.describe()),
            ));
        };
        let mut p = Parser::default();
        let (mut init, mut sessions, mut assert) = (None, None, None);
        for (k, v) in pairs {
            let FormKind::Keyword(name) = &k.kind else {
                return Err(ProgramError::new(
                    k.line,
                    format!("expected a keyword (:init, :sessions, :assert or :doc), found {}", k.describe()),
                ));
            };
            match name.as_str() {
                "init" => init = Some(v),
                "sessions" => sessions = Some(v),
                "assert" => assert = Some(v),
                "doc" => {}
                other => {
                    return Err(ProgramError::new(
                        k.line,
                        format!("unknown program key :{other} (expected :init, :sessions, :assert or :doc)"),
                    ))
                }
            }
        }
        let Some(sessions) = sessions else {
            return Err(ProgramError::new(top.line, "the program map has no :sessions"));
        };
        let init = match init {
            Some(f) => p.init(f)?,
            None => Vec::new(),
        };
        let sessions = p.sessions(sessions)?;
        let assert = match assert {
            Some(f) => {
                p.scope = p.locals.keys().cloned().collect();
                Some(p.expr(&f)?)
            }
            None => None,
        };
        let mut locals = vec![String::new(); p.locals.len()];
        for (name, (id, _)) in p.locals {
            locals[id as usize] = name;
        }
        Ok(Program { init, sessions, assert, locals, names: p.names })
    }

    /// The number of transactions.
    pub fn txn_count(&self) -> usize {
        self.sessions.iter().map(Vec::len).sum()
    }

    /// The printable name of a key.
    pub fn key_text(&self, name: u32, row: Option<i64>) -> String {
        let n = &self.names[name as usize];
        match row {
            None => format!(":{n}"),
            Some(r) => format!("[:{n} {r}]"),
        }
    }
}

#[derive(Default)]
struct Parser {
    /// Every local: name -> (id, line bound).
    locals: FxHashMap<String, (LocalId, usize)>,
    /// Locals visible at this point of the session.
    scope: rustc_hash::FxHashSet<String>,
    names: Vec<String>,
}

fn expect_vec(f: Form, what: &str) -> Result<(Vec<Form>, usize), ProgramError> {
    match f.kind {
        FormKind::Vector(v) => Ok((v, f.line)),
        _ => Err(ProgramError::new(f.line, format!("expected {what} (a vector), found {}", f.describe()))),
    }
}

impl Parser {
    fn name(&mut self, n: &str) -> u32 {
        match self.names.iter().position(|x| x == n) {
            Some(i) => i as u32,
            None => {
                self.names.push(n.to_string());
                (self.names.len() - 1) as u32
            }
        }
    }

    fn init(&mut self, f: Form) -> Result<Vec<(KeyLit, Literal)>, ProgramError> {
        let FormKind::Map(pairs) = f.kind else {
            return Err(ProgramError::new(
                f.line,
                format!("expected :init to be a map of keys to initial values, found {}", f.describe()),
            ));
        };
        let mut out: Vec<(KeyLit, Literal)> = Vec::new();
        for (k, v) in pairs {
            let key = match &k.kind {
                FormKind::Keyword(n) => KeyLit { name: self.name(n), row: None },
                FormKind::Vector(items) => match items.as_slice() {
                    [Form { kind: FormKind::Keyword(n), .. }, Form { kind: FormKind::Int(i), .. }] => {
                        KeyLit { name: self.name(n), row: Some(*i) }
                    }
                    _ => {
                        return Err(ProgramError::new(
                            k.line,
                            "expected an :init key: a keyword :x or a row [:table 3]",
                        ))
                    }
                },
                _ => {
                    return Err(ProgramError::new(
                        k.line,
                        format!("expected an :init key (a keyword :x or a row [:table 3]), found {}", k.describe()),
                    ))
                }
            };
            let lit = match &v.kind {
                FormKind::Int(i) => Literal::Int(*i),
                FormKind::Set(items) => {
                    let mut s = Vec::new();
                    for it in items {
                        match it.kind {
                            FormKind::Int(i) => s.push(i),
                            _ => {
                                return Err(ProgramError::new(
                                    it.line,
                                    format!("expected an integer in an initial set, found {}", it.describe()),
                                ))
                            }
                        }
                    }
                    s.sort_unstable();
                    s.dedup();
                    Literal::Set(s)
                }
                _ => {
                    return Err(ProgramError::new(
                        v.line,
                        format!("expected an initial value (an integer or a set of integers), found {}", v.describe()),
                    ))
                }
            };
            if out.iter().any(|(x, _)| *x == key) {
                return Err(ProgramError::new(k.line, "this key is given twice in :init"));
            }
            out.push((key, lit));
        }
        Ok(out)
    }

    fn sessions(&mut self, f: Form) -> Result<Vec<Vec<Txn>>, ProgramError> {
        let (items, _) = expect_vec(f, ":sessions, a vector of sessions")?;
        let mut out = Vec::new();
        let mut count = 0usize;
        for s in items {
            let (txns, _) = expect_vec(s, "a session, a vector of transactions")?;
            self.scope.clear();
            let mut session = Vec::new();
            for t in txns {
                let (stmts, line) = expect_vec(t, "a transaction, a vector of statements")?;
                count += 1;
                if count > MAX_TXNS {
                    return Err(ProgramError::new(line, format!("a program may have at most {MAX_TXNS} transactions")));
                }
                let body = self.block(stmts)?;
                session.push(Txn { body, line });
            }
            out.push(session);
        }
        Ok(out)
    }

    fn block(&mut self, stmts: Vec<Form>) -> Result<Vec<Stmt>, ProgramError> {
        stmts.into_iter().map(|s| self.stmt(s)).collect()
    }

    fn bind(&mut self, f: &Form) -> Result<LocalId, ProgramError> {
        let FormKind::Symbol(name) = &f.kind else {
            return Err(ProgramError::new(f.line, format!("expected a local name (a symbol), found {}", f.describe())));
        };
        if matches!(name.as_str(), "true" | "false" | "nil") {
            return Err(ProgramError::new(f.line, format!("{name} cannot name a local")));
        }
        if let Some(&(_, first)) = self.locals.get(name) {
            return Err(ProgramError::new(
                f.line,
                format!("local {name} is bound twice (first on line {first}); locals are named uniquely in a program"),
            ));
        }
        let id = self.locals.len() as LocalId;
        self.locals.insert(name.clone(), (id, f.line));
        self.scope.insert(name.clone());
        Ok(id)
    }

    fn key(&mut self, f: &Form) -> Result<KeyExpr, ProgramError> {
        match &f.kind {
            FormKind::Keyword(n) => Ok(KeyExpr::Name(self.name(n))),
            FormKind::Vector(items) => match items.as_slice() {
                [Form { kind: FormKind::Keyword(n), .. }, e] => {
                    let e = self.expr(e)?;
                    Ok(KeyExpr::Row(self.name(n), e))
                }
                _ => Err(ProgramError::new(f.line, "expected a key: a keyword :x or a row [:table EXPR]")),
            },
            _ => Err(ProgramError::new(
                f.line,
                format!("expected a key (a keyword :x or a row [:table EXPR]), found {}", f.describe()),
            )),
        }
    }

    fn stmt(&mut self, f: Form) -> Result<Stmt, ProgramError> {
        let line = f.line;
        let (items, _) = expect_vec(
            f,
            "a statement ([:r KEY LOCAL], [:w KEY EXPR], [:if EXPR [...] [...]], [:abort] or [:let LOCAL EXPR])",
        )?;
        let Some(Form { kind: FormKind::Keyword(head), .. }) = items.first() else {
            return Err(ProgramError::new(line, "expected a statement starting with :r, :w, :if, :abort or :let"));
        };
        let arity = |n: usize, shape: &str| -> Result<(), ProgramError> {
            if items.len() == n {
                Ok(())
            } else {
                Err(ProgramError::new(line, format!("expected {shape}")))
            }
        };
        match head.as_str() {
            "r" => {
                arity(3, "[:r KEY LOCAL]")?;
                let key = self.key(&items[1])?;
                let local = self.bind(&items[2])?;
                Ok(Stmt::Read { key, local, line })
            }
            "w" => {
                arity(3, "[:w KEY EXPR]")?;
                let key = self.key(&items[1])?;
                let value = self.expr(&items[2])?;
                Ok(Stmt::Write { key, value, line })
            }
            "let" => {
                arity(3, "[:let LOCAL EXPR]")?;
                let value = self.expr(&items[2])?;
                let local = self.bind(&items[1])?;
                Ok(Stmt::Let { local, value, line })
            }
            "abort" => {
                arity(1, "[:abort]")?;
                Ok(Stmt::Abort { line })
            }
            "if" => {
                if items.len() != 3 && items.len() != 4 {
                    return Err(ProgramError::new(
                        line,
                        "expected [:if EXPR [THEN...]] or [:if EXPR [THEN...] [ELSE...]]",
                    ));
                }
                let mut items = items.into_iter().skip(1);
                let cond = self.expr(&items.next().expect("checked length"))?;
                let (then, _) =
                    expect_vec(items.next().expect("checked length"), "the :if's then-branch, a vector of statements")?;
                let then = self.block(then)?;
                let els = match items.next() {
                    Some(e) => {
                        let (e, _) = expect_vec(e, "the :if's else-branch, a vector of statements")?;
                        self.block(e)?
                    }
                    None => Vec::new(),
                };
                Ok(Stmt::If { cond, then, els, line })
            }
            other => Err(ProgramError::new(
                line,
                format!("unknown statement :{other} (expected :r, :w, :if, :abort or :let)"),
            )),
        }
    }

    fn expr(&mut self, f: &Form) -> Result<Expr, ProgramError> {
        match &f.kind {
            FormKind::Int(i) => Ok(Expr::Int(*i)),
            FormKind::Symbol(s) if s == "true" => Ok(Expr::Bool(true)),
            FormKind::Symbol(s) if s == "false" => Ok(Expr::Bool(false)),
            FormKind::Symbol(s) => match self.locals.get(s) {
                Some(&(id, _)) if self.scope.contains(s) => Ok(Expr::Local(id, f.line)),
                Some(&(_, bound)) => Err(ProgramError::new(
                    f.line,
                    format!("local {s} is not bound here (it is bound on line {bound}, in another session or later)"),
                )),
                None => Err(ProgramError::new(f.line, format!("unbound local {s}"))),
            },
            FormKind::Set(items) => {
                Ok(Expr::Set(items.iter().map(|e| self.expr(e)).collect::<Result<_, _>>()?, f.line))
            }
            FormKind::List(items) => {
                let Some(Form { kind: FormKind::Symbol(op), .. }) = items.first() else {
                    return Err(ProgramError::new(
                        f.line,
                        "expected an operator call (op args...) with a symbol first",
                    ));
                };
                let Some(&(_, o, (lo, hi))) = OPS.iter().find(|(n, _, _)| n == op) else {
                    let names: Vec<&str> = OPS.iter().map(|(n, _, _)| *n).collect();
                    return Err(ProgramError::new(
                        f.line,
                        format!("unknown operator {op} (expected one of {})", names.join(" ")),
                    ));
                };
                let args: Vec<Expr> = items[1..].iter().map(|e| self.expr(e)).collect::<Result<_, _>>()?;
                if args.len() < lo || args.len() > hi {
                    let want = if lo == hi {
                        format!("{lo}")
                    } else if hi == usize::MAX {
                        format!("at least {lo}")
                    } else {
                        format!("{lo} to {hi}")
                    };
                    return Err(ProgramError::new(
                        f.line,
                        format!("{op} takes {want} arguments, found {}", args.len()),
                    ));
                }
                Ok(Expr::Call(o, args, f.line))
            }
            _ => Err(ProgramError::new(
                f.line,
                format!("expected an expression (integer, local, set or (op ...)), found {}", f.describe()),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_counter() {
        let p = Program::parse(
            "{:init {:x 0}\n :sessions [[[[:r :x a] [:w :x (+ a 1)]]]\n [[[:r :x b] [:w :x (+ b 1)]]]]\n :assert (not (and (= a 0) (= b 0)))}",
        )
        .unwrap();
        assert_eq!(p.sessions.len(), 2);
        assert_eq!(p.txn_count(), 2);
        assert_eq!(p.locals, vec!["a".to_string(), "b".to_string()]);
        assert!(p.assert.is_some());
    }

    #[test]
    fn errors_name_the_line() {
        let e = Program::parse("{:sessions [[[[:r :x a]\n [:q :x]]]]}").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.msg.contains("unknown statement :q"), "{e}");
        let e = Program::parse("{:sessions [[[[:r :x a]]] [[[:w :x a]]]]}").unwrap_err();
        assert!(e.msg.contains("not bound here"), "{e}");
        let e = Program::parse("{:sessions [[[[:w :x c]]]]}").unwrap_err();
        assert!(e.msg.contains("unbound local c"), "{e}");
        let e = Program::parse("{:sessions [[[[:r :x a] [:r :y a]]]]}").unwrap_err();
        assert!(e.msg.contains("bound twice"), "{e}");
        let e = Program::parse("{:sessions [[[[:w :x (* 2 3)]]]]}").unwrap_err();
        assert!(e.msg.contains("unknown operator *"), "{e}");
    }

    #[test]
    fn later_transactions_see_earlier_locals() {
        let p = Program::parse("{:sessions [[[[:r :x a]] [[:w [:row a] (+ a 1)] [:let c #{a}]]]]}").unwrap();
        assert_eq!(p.sessions[0].len(), 2);
    }
}
