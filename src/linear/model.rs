//! Knossos's sequential models (and Porcupine's key-value model), with
//! states and values interned to small integers so that a search
//! configuration is a bitset and a `u32`.

use crate::history::Value;
use rustc_hash::FxHashMap;

/// A sequential specification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// Knossos's `register`: `:read` returns the value, `:write` sets it.
    Register,
    /// Knossos's `cas-register`: a register with `:cas [old new]`, which
    /// sets `new` when the value is `old` and fails otherwise.
    CasRegister,
    /// Knossos's `mutex`: `:acquire` needs it free, `:release` held.
    Mutex,
    /// Porcupine's key-value model (its `test_data/kv`): per key, `:get`
    /// returns the string, `:put` sets it, `:append` appends to it.
    Kv,
}

impl Model {
    /// The model's name.
    pub fn name(self) -> &'static str {
        match self {
            Model::Register => "register",
            Model::CasRegister => "cas-register",
            Model::Mutex => "mutex",
            Model::Kv => "kv",
        }
    }
}

/// A value id; [`NIL`] is `nil`.
pub type Id = u32;

/// The id of `nil` (a register's initial value).
pub const NIL: Id = 0;

/// How a CAS ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CasOutcome {
    /// It swapped: the value was `old`.
    Ok,
    /// It did not swap: the value was not `old` (Porcupine's etcd reading
    /// of `:fail`; Knossos drops failed ops instead).
    Fail,
    /// Unknown (`:info`, or never completed): either.
    Unknown,
}

/// One operation's input and output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// A read that returned the value (`None`: unknown, matches any).
    Read(Option<Id>),
    /// A write.
    Write(Id),
    /// A compare-and-set.
    Cas {
        /// Expected value.
        from: Id,
        /// New value.
        to: Id,
        /// Its outcome.
        outcome: CasOutcome,
    },
    /// Acquire the mutex.
    Acquire,
    /// Release the mutex.
    Release,
    /// kv get returning the string (`None`: unknown).
    Get(Option<Id>),
    /// kv put.
    Put(Id),
    /// kv append.
    Append(Id),
}

/// Interned values (register values, kv strings) and states.
#[derive(Clone, Default, Debug)]
pub struct Interner {
    values: Vec<Value>,
    ids: FxHashMap<Value, Id>,
    strings: Vec<String>,
    string_ids: FxHashMap<String, Id>,
}

impl Interner {
    /// A fresh interner where id 0 is `nil` and the empty string.
    pub fn new() -> Interner {
        let mut i = Interner::default();
        i.value(&Value::Atom(crate::history::Atom::Nil));
        i.string(String::new());
        i
    }

    /// The id of a value.
    pub fn value(&mut self, v: &Value) -> Id {
        if let Some(&id) = self.ids.get(v) {
            return id;
        }
        let id = self.values.len() as Id;
        self.values.push(v.clone());
        self.ids.insert(v.clone(), id);
        id
    }

    /// The id of a string (kv).
    pub fn string(&mut self, s: String) -> Id {
        if let Some(&id) = self.string_ids.get(&s) {
            return id;
        }
        let id = self.strings.len() as Id;
        self.strings.push(s.clone());
        self.string_ids.insert(s, id);
        id
    }

    /// The value of an id.
    pub fn value_of(&self, id: Id) -> &Value {
        &self.values[id as usize]
    }

    /// The string of an id (kv).
    pub fn string_of(&self, id: Id) -> &str {
        &self.strings[id as usize]
    }

    /// Bytes held (for the memory budget).
    pub fn bytes(&self) -> usize {
        self.strings.iter().map(|s| s.len() * 2 + 48).sum::<usize>() + self.values.len() * 96
    }
}

/// The state a model starts in.
pub fn init(model: Model) -> Id {
    match model {
        // nil; a free mutex; the empty string.
        Model::Register | Model::CasRegister | Model::Mutex | Model::Kv => 0,
    }
}

/// Applies `input` to `state`: the next state, or `None` when the
/// operation's output contradicts the state.
pub fn step(state: Id, input: &Input, strings: &mut Interner) -> Option<Id> {
    match *input {
        Input::Read(v) | Input::Get(v) => match v {
            Some(v) if v != state => None,
            _ => Some(state),
        },
        Input::Write(v) | Input::Put(v) => Some(v),
        Input::Cas { from, to, outcome } => match (outcome, from == state) {
            (CasOutcome::Ok, true) => Some(to),
            (CasOutcome::Ok, false) => None,
            (CasOutcome::Fail, true) => None,
            (CasOutcome::Fail, false) => Some(state),
            (CasOutcome::Unknown, true) => Some(to),
            (CasOutcome::Unknown, false) => Some(state),
        },
        Input::Acquire => (state == 0).then_some(1),
        Input::Release => (state == 1).then_some(0),
        Input::Append(v) => {
            let s = format!("{}{}", strings.string_of(state), strings.string_of(v));
            Some(strings.string(s))
        }
    }
}

/// A state as a value, for witnesses.
pub fn describe_state(model: Model, state: Id, interner: &Interner) -> Value {
    use crate::history::Atom;
    match model {
        Model::Register | Model::CasRegister => interner.value_of(state).clone(),
        Model::Mutex => Value::Atom(Atom::Keyword(if state == 1 { "held" } else { "free" }.into())),
        Model::Kv => Value::Atom(Atom::Str(interner.string_of(state).into())),
    }
}
