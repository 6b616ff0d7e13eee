//! Values and the evaluation of expressions.
//!
//! A value is an integer, a boolean (what comparisons and `and`/`or`/`not`
//! give), or a finite set of integers (the paper models a SQL table's
//! primary keys as one key holding a set). Nothing converts between them: an
//! integer where a set is needed, or a set in `+`, is a [`RunError`] naming
//! the line, never a guess. Arithmetic wraps around no bound silently: an
//! overflow is an error too.

use super::program::{Expr, LocalId, Op, Program};
use std::fmt;
use thiserror::Error;

/// A value of a local or of a key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Val {
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// A set of integers, sorted, without duplicates.
    Set(Vec<i64>),
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Int(i) => write!(f, "{i}"),
            Val::Bool(b) => write!(f, "{b}"),
            Val::Set(s) => {
                write!(f, "#{{")?;
                for (i, x) in s.iter().enumerate() {
                    if i > 0 {
                        write!(f, " ")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, "}}")
            }
        }
    }
}

impl Val {
    fn kind(&self) -> &'static str {
        match self {
            Val::Int(_) => "an integer",
            Val::Bool(_) => "a boolean",
            Val::Set(_) => "a set",
        }
    }
}

/// An error while running a program (a type error, an overflow, or a local
/// whose statement did not run).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("line {line}: {msg}")]
pub struct RunError {
    /// The 1-based line of the expression or statement.
    pub line: usize,
    /// What went wrong.
    pub msg: String,
}

/// The values of a program's locals (`None`: not bound in this run).
pub type Env = Vec<Option<Val>>;

/// Evaluates `e` in `env`.
pub fn eval(p: &Program, e: &Expr, env: &Env) -> Result<Val, RunError> {
    match e {
        Expr::Int(i) => Ok(Val::Int(*i)),
        Expr::Bool(b) => Ok(Val::Bool(*b)),
        Expr::Local(id, line) => local(p, *id, *line, env),
        Expr::Set(items, line) => {
            let mut s = Vec::with_capacity(items.len());
            for it in items {
                s.push(int(eval(p, it, env)?, *line, "a set element")?);
            }
            s.sort_unstable();
            s.dedup();
            Ok(Val::Set(s))
        }
        Expr::Call(op, args, line) => call(p, *op, args, *line, env),
    }
}

/// Evaluates a condition: it must be a boolean.
pub fn eval_bool(p: &Program, e: &Expr, env: &Env, line: usize) -> Result<bool, RunError> {
    match eval(p, e, env)? {
        Val::Bool(b) => Ok(b),
        v => Err(RunError { line, msg: format!("expected a boolean condition, found {} ({v})", v.kind()) }),
    }
}

fn local(p: &Program, id: LocalId, line: usize, env: &Env) -> Result<Val, RunError> {
    env.get(id as usize).cloned().flatten().ok_or_else(|| RunError {
        line,
        msg: format!(
            "local {} has no value in this run (the statement that binds it did not run: an :if branch not taken, or an abort before it)",
            p.locals[id as usize]
        ),
    })
}

fn int(v: Val, line: usize, what: &str) -> Result<i64, RunError> {
    match v {
        Val::Int(i) => Ok(i),
        v => Err(RunError { line, msg: format!("expected an integer as {what}, found {} ({v})", v.kind()) }),
    }
}

fn set(v: Val, line: usize, op: Op) -> Result<Vec<i64>, RunError> {
    match v {
        Val::Set(s) => Ok(s),
        v => Err(RunError {
            line,
            msg: format!("{} expects a set as its first argument, found {} ({v})", op.name(), v.kind()),
        }),
    }
}

fn call(p: &Program, op: Op, args: &[Expr], line: usize, env: &Env) -> Result<Val, RunError> {
    let overflow = || RunError { line, msg: format!("integer overflow in {}", op.name()) };
    let arg_int =
        |e: &Expr| -> Result<i64, RunError> { int(eval(p, e, env)?, line, &format!("an argument of {}", op.name())) };
    let arg_bool = |e: &Expr| -> Result<bool, RunError> {
        match eval(p, e, env)? {
            Val::Bool(b) => Ok(b),
            v => Err(RunError { line, msg: format!("{} expects booleans, found {} ({v})", op.name(), v.kind()) }),
        }
    };
    Ok(match op {
        Op::Add => {
            let mut acc = 0i64;
            for a in args {
                acc = acc.checked_add(arg_int(a)?).ok_or_else(overflow)?;
            }
            Val::Int(acc)
        }
        Op::Sub => {
            let first = arg_int(&args[0])?;
            if args.len() == 1 {
                Val::Int(first.checked_neg().ok_or_else(overflow)?)
            } else {
                let mut acc = first;
                for a in &args[1..] {
                    acc = acc.checked_sub(arg_int(a)?).ok_or_else(overflow)?;
                }
                Val::Int(acc)
            }
        }
        Op::Eq | Op::Ne => {
            let (a, b) = (eval(p, &args[0], env)?, eval(p, &args[1], env)?);
            if std::mem::discriminant(&a) != std::mem::discriminant(&b) {
                return Err(RunError {
                    line,
                    msg: format!("{} compares {} ({a}) with {} ({b})", op.name(), a.kind(), b.kind()),
                });
            }
            Val::Bool((a == b) == (op == Op::Eq))
        }
        Op::Lt | Op::Gt | Op::Le | Op::Ge => {
            let (a, b) = (arg_int(&args[0])?, arg_int(&args[1])?);
            Val::Bool(match op {
                Op::Lt => a < b,
                Op::Gt => a > b,
                Op::Le => a <= b,
                _ => a >= b,
            })
        }
        Op::And => {
            for a in args {
                if !arg_bool(a)? {
                    return Ok(Val::Bool(false));
                }
            }
            Val::Bool(true)
        }
        Op::Or => {
            for a in args {
                if arg_bool(a)? {
                    return Ok(Val::Bool(true));
                }
            }
            Val::Bool(false)
        }
        Op::Not => Val::Bool(!arg_bool(&args[0])?),
        Op::Conj | Op::Disj => {
            let mut s = set(eval(p, &args[0], env)?, line, op)?;
            for a in &args[1..] {
                let x = arg_int(a)?;
                match (s.binary_search(&x), op) {
                    (Err(i), Op::Conj) => s.insert(i, x),
                    (Ok(i), Op::Disj) => {
                        s.remove(i);
                    }
                    _ => {}
                }
            }
            Val::Set(s)
        }
        Op::Contains => {
            let s = set(eval(p, &args[0], env)?, line, op)?;
            Val::Bool(s.binary_search(&arg_int(&args[1])?).is_ok())
        }
        Op::Count => Val::Int(set(eval(p, &args[0], env)?, line, op)?.len() as i64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(src: &str, env: &[Option<Val>]) -> Result<Val, RunError> {
        let p = Program::parse(&format!("{{:sessions [[[[:r :x a] [:r :y b] [:let c {src}]]]]}}")).unwrap();
        let super::super::program::Stmt::Let { value, .. } = &p.sessions[0][0].body[2] else { panic!() };
        let mut env: Env = env.to_vec();
        env.resize(3, None);
        eval(&p, value, &env)
    }

    #[test]
    fn arithmetic_sets_and_logic() {
        let env = [Some(Val::Int(3)), Some(Val::Set(vec![1, 2]))];
        assert_eq!(run("(+ a 1 2)", &env), Ok(Val::Int(6)));
        assert_eq!(run("(- a)", &env), Ok(Val::Int(-3)));
        assert_eq!(run("(count (conj b a 1))", &env), Ok(Val::Int(3)));
        assert_eq!(run("(contains? (disj b 2) 2)", &env), Ok(Val::Bool(false)));
        assert_eq!(run("(and (< a 4) (not= a 2) (or false (>= a 3)))", &env), Ok(Val::Bool(true)));
        assert_eq!(run("(= #{a 1} (conj #{} 1 3))", &env), Ok(Val::Bool(true)));
    }

    #[test]
    fn type_errors_are_errors() {
        let env = [Some(Val::Int(3)), Some(Val::Set(vec![1, 2]))];
        let e = run("(+ b 1)", &env).unwrap_err();
        assert!(e.msg.contains("found a set"), "{e}");
        assert!(run("(count a)", &env).unwrap_err().msg.contains("expects a set"));
        assert!(run("(= a b)", &env).unwrap_err().msg.contains("compares"));
        assert!(run("(+ a 9223372036854775807)", &env).unwrap_err().msg.contains("overflow"));
        assert!(run("(+ a 1)", &[None]).unwrap_err().msg.contains("has no value"));
    }
}
