#!/usr/bin/env python3
"""Translate the client programs of Transactional JPF (the PLDI'23 artifact of
Bouajjani, Enea and Roman-Calvo, github:Galieve/transactional-jpf) into
`isolde explore` programs (EDN, the format of issue 20).

Usage: scripts/explore-programs.py ARTIFACT_DIR OUT_DIR

ARTIFACT_DIR is a checkout of the artifact (its src/benchmarks/ holds the
client programs and the initial database of every application); OUT_DIR gets
<app>-<n>.edn for the 25 programs of the first experiment and
scaling/<app>-<case>-s<i>.edn / scaling/<app>-<case>-t<i>.edn for the session
and transaction scaling runs (TPC-C and Wikipedia, as the paper).

How the translation works (examples/explore/README.md has the details):

* The artifact's database API (APIDatabase.java) is ported operation by
  operation: readRow, readIfIDStartsWith, insertRow, writeRow, deleteRow...
  each issues exactly the reads and writes the Java code issues, in the same
  order, on the same keys: a table is one key holding the ids of its rows (the
  paper's section 7.2), a row is one key per id.
* A table's value is a Java list (insertRow appends, deleteRow removes the
  first occurrence). It becomes a set of integers: element = 10 * index(id) +
  copy, so an id inserted twice is present as two copies; the order of the
  list is not kept (it only orders the reads of rows within a transaction).
* Java control flow that depends on read values becomes `:if` statements. A
  procedure is run in Python by replay: every data-dependent decision is a
  branch; the generator runs the procedure once per path and assembles the
  `:if` tree. Row values are Java strings mapped to integer codes per key (0 is
  the initial value of a key nobody wrote, which the Java code reads as null).
  The set of values a row can hold and the ids a table can gain or lose are
  computed by a fixpoint over the whole program, so every branch is exhaustive.
"""

import os
import re
import sys
from collections import OrderedDict


# --------------------------------------------------------------------------
# EDN terms


class Sym(str):
    pass


class Kw(str):
    pass


class SetLit(tuple):
    pass


class VecKey(tuple):
    """A row key [:table element] used as a map key."""


def edn(t):
    if isinstance(t, bool):
        return "true" if t else "false"
    if isinstance(t, int):
        return str(t)
    if isinstance(t, Kw):
        return ":" + t
    if isinstance(t, str):
        return str(t)
    if isinstance(t, VecKey):
        return "[" + " ".join(edn(x) for x in t) + "]"
    if isinstance(t, SetLit):
        return "#{" + " ".join(edn(x) for x in sorted(t)) + "}"
    if isinstance(t, tuple):
        return "(" + " ".join(edn(x) for x in t) + ")"
    if isinstance(t, list):
        return "[" + " ".join(edn(x) for x in t) + "]"
    raise TypeError(repr(t))


def edn_stmts(stmts, indent):
    """A transaction body, one statement per line, `:if` branches indented."""
    pad = " " * indent
    lines = []
    for s in stmts:
        if s[0] == Kw("if"):
            lines.append(pad + "[:if " + edn(s[1]))
            lines.append(pad + "  [" + edn_stmts(s[2], indent + 3).lstrip())
            lines[-1] += "]"
            if len(s) > 3:
                lines.append(pad + "  [" + edn_stmts(s[3], indent + 3).lstrip() + "]")
            lines[-1] += "]"
        else:
            lines.append(pad + edn(s))
    return "\n".join(lines)


NULL = None


class Abort(Exception):
    pass


class NeedBranch(Exception):
    def __init__(self, cond):
        self.cond = cond


def key_name(s):
    k = re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")
    return k or "k"


# --------------------------------------------------------------------------
# Knowledge computed by the fixpoint


class Knowledge:
    def __init__(self, init_tables, init_rows, numeric=None):
        # tables whose ids are integers: element = id - offset, rows are
        # row keys [:table element], no copies (see get_free_id)
        self.numeric = dict(numeric or {})
        # table -> OrderedDict id -> index (init ids first, then discovered)
        self.ids = {t: OrderedDict() for t in init_tables}
        self.init_mult = {t: {} for t in init_tables}
        for t, lst in init_tables.items():
            for e in lst:
                self.index(t, e)
                self.init_mult[t][e] = self.init_mult[t].get(e, 0) + 1
        self.init_rows = dict(init_rows)
        self.changing = {t: set() for t in init_tables}  # ids inserted or deleted
        self.copies = {t: {} for t in init_tables}  # id -> max copies
        self.values = {}  # row key -> set of values other than the initial one
        self.inserters = {}  # table -> transactions that insert into it
        self.touchers = {}  # (table, id) -> transactions inserting or deleting it
        self.incrementers = {}  # TPC-C district -> transactions incrementing its next order id
        self.codes = {}  # row key -> {value: code}

    def index(self, table, e):
        d = self.ids.setdefault(table, OrderedDict())
        if e not in d:
            d[e] = len(d)
        return d[e]

    def elem(self, table, e, copy):
        if table in self.numeric:
            self.index(table, e)
            return int(e) - self.numeric[table]
        return 10 * self.index(table, e) + copy

    def row_key(self, table, e):
        """The EDN key of a row."""
        if table in self.numeric:
            return [Kw(key_name(table)), int(e) - self.numeric[table]]
        return Kw(key_name(table + ":" + e))

    def max_copies(self, table, e):
        if table in self.numeric:
            return 1
        return max(self.init_mult.get(table, {}).get(e, 0), self.copies.get(table, {}).get(e, 0), 1)

    def code(self, key, v):
        if v is NULL:
            return 0
        if isinstance(v, int) and not isinstance(v, bool):
            assert v != 0, key
            return v  # integer rows hold their value itself
        c = self.codes.setdefault(key, {})
        if v not in c:
            c[v] = len(c) + 1
        return c[v]

    def domain(self, key):
        init = self.init_rows.get(key, NULL)
        vals = {init} | self.values.get(key, set())
        return sorted(vals, key=lambda v: self.code(key, v))

    def snapshot(self):
        return (
            {t: tuple(d) for t, d in self.ids.items() if d},
            {t: frozenset(s) for t, s in self.changing.items() if s},
            {t: tuple(sorted(d.items())) for t, d in self.copies.items() if d},
            {k: frozenset(v) for k, v in self.values.items() if v},
            {t: frozenset(v) for t, v in self.inserters.items() if v},
            {t: frozenset(v) for t, v in self.touchers.items() if v},
            {t: frozenset(v) for t, v in self.incrementers.items() if v},
        )


# --------------------------------------------------------------------------
# One run of a procedure along a path of decisions


class TableView:
    """The value of a table key as read into local `local`."""

    def __init__(self, ctx, table, local):
        self.ctx, self.table, self.local = ctx, table, local
        self.own = set(ctx.own_written)  # what the transaction wrote before this read

    def members(self, pred=lambda e: True):
        """The ids present, in the table's index order, each once.

        The Java list may hold an id twice (insertRow appends), and the Java
        loops then read its row twice in the transaction. At read atomic and
        above a second read of a key must read the same write as the first
        (Fig. A.1b), so reading it once gives the same number of histories at
        RA, CC, SI and SER; only read committed can tell (README)."""
        return [e for e in list(self.ctx.kn.ids.get(self.table, {})) if pred(e) and self.has(e)]

    def presence(self, e):
        """Whether id e is present: True, False, or a condition on the local
        (without branching)."""
        k = self.ctx.kn
        if e not in k.ids.get(self.table, {}):
            return False
        if not self.ctx.changing(self.table, e, self.own):
            return k.init_mult.get(self.table, {}).get(e, 0) > 0
        conds = [("contains?", self.local, k.elem(self.table, e, c)) for c in range(k.max_copies(self.table, e))]
        return conds[0] if len(conds) == 1 else ("or",) + tuple(conds)

    def max_member(self, pred, key):
        """The present id with the largest key(id) among those satisfying
        pred, or None: branches from the largest candidate down (only the
        largest present one matters to the caller)."""
        cands = [e for e in self.ctx.kn.ids.get(self.table, {}) if pred(e)]
        for e in sorted(cands, key=key, reverse=True):
            if self.has(e):
                return e
        return None

    def has(self, e):
        k = self.ctx.kn
        if e not in k.ids.get(self.table, {}):
            return False
        if not self.ctx.changing(self.table, e, self.own):
            return k.init_mult.get(self.table, {}).get(e, 0) > 0
        conds = [("contains?", self.local, k.elem(self.table, e, c)) for c in range(k.max_copies(self.table, e))]
        return self.ctx.branch(conds[0] if len(conds) == 1 else ("or",) + tuple(conds))


class Dyn:
    """An integer the program computes at run time (`:let`): local `sym`
    holding one of `elems`; the Java value is element + lo."""

    def __init__(self, sym, elems, lo):
        self.sym, self.elems, self.lo = sym, list(elems), lo

    def ints(self):
        return [x + self.lo for x in self.elems]

    def ids(self):
        return [str(x) for x in self.ints()]


class RowVal:
    """A row read into a local; its value is branched on only when used."""

    def __init__(self, ctx, key, local):
        self.ctx, self.key, self.local = ctx, key, local

    def is_null(self):
        dom = self.ctx.kn.domain(self.key)
        return self.ctx.choose(self.local, self.key, dom, lambda v: v is NULL)

    def cond(self, f):
        """The condition, without branching, that the row is non-null and f
        holds of its value: True, False or an expression."""
        dom = [v for v in self.ctx.kn.domain(self.key) if v is not NULL]
        yes = [self.ctx.kn.code(self.key, v) for v in dom if f(v)]
        if not yes:
            return False
        if len(yes) == len(self.ctx.kn.domain(self.key)):
            return True
        return any_of([("=", self.local, c) for c in yes])

    def get(self, f):
        """f of the (non-null) value."""
        dom = [v for v in self.ctx.kn.domain(self.key) if v is not NULL]
        if not dom:
            raise RuntimeError("row %s is always null here" % self.key)
        return self.ctx.choose(self.local, self.key, dom, f)


def all_of(conds):
    """Conjunction of True/False/expressions (short-circuit, left to right)."""
    out = []
    for c in conds:
        if c is False:
            return False
        if c is not True:
            out.append(c)
    return True if not out else out[0] if len(out) == 1 else ("and",) + tuple(out)


def any_of(conds):
    out = []
    for c in conds:
        if c is True:
            return True
        if c is not False:
            out.append(c)
    return False if not out else out[0] if len(out) == 1 else ("or",) + tuple(out)


def negate(c):
    return (not c) if isinstance(c, bool) else ("not", c)


def isnull(r):
    return r is NULL or r.is_null()


class Ctx:
    def __init__(self, kn, decisions, record, txn=None, own=()):
        self.kn = kn
        self.txn = txn
        self.decisions = decisions
        self.pos = 0
        self.stmts = []
        self.nlocal = 0
        self.record = record  # Recorder or None
        self.memo = {}
        self.own_written = set(own)  # tables this transaction wrote so far
        self.inline = 0

    def changing(self, table, e, own):
        """Whether the presence of id e in table may differ from the initial
        one when this transaction reads it: another transaction inserts or
        deletes e, or this one did already."""
        who = self.kn.touchers.get((table, e), set())
        return bool(who - {self.txn}) or (table in own and self.txn in who)

    # -- emission
    def emit(self, s):
        if self.pos >= len(self.decisions):
            self.stmts.append(s)

    def fresh(self):
        self.nlocal += 1
        return Sym("v%d" % self.nlocal)

    def when(self, cond, body):
        """Runs body (which must not branch) under cond as an `:if` in the
        program, without splitting this run: for loops whose iterations do
        not steer what follows them."""
        if cond is False:
            return
        if cond is True:
            body()
            return
        saved, self.stmts = self.stmts, []
        self.inline += 1
        try:
            body()
        finally:
            self.inline -= 1
            inner, self.stmts = self.stmts, saved
        self.emit([Kw("if"), cond, inner])

    def abort_stmt(self):
        """`[:abort]` as a statement of a `when` block."""
        self.emit([Kw("abort")])

    def abort_if_null(self, row):
        """`if (row == null) db.abort()` as a program statement."""
        dom = self.kn.domain(row.key)
        if NULL in dom and len(dom) > 1:
            self.emit([Kw("if"), ("=", row.local, 0), [[Kw("abort")]]])
        elif dom == [NULL]:
            self.abort()

    def branch_on(self, c):
        """branch on True/False/expression."""
        return c if isinstance(c, bool) else self.branch(c)

    def branch(self, cond):
        if self.inline:
            raise RuntimeError("a branch inside Ctx.when: %r" % (cond,))
        if cond in self.memo:
            return self.memo[cond]
        if self.pos < len(self.decisions):
            d = self.decisions[self.pos]
            self.pos += 1
            if self.pos == len(self.decisions):
                self.stmts = []
            self.memo[cond] = d
            return d
        raise NeedBranch(cond)

    # -- database primitives (APIDatabase: read, write, begin/commit, abort)
    def read_table(self, table):
        l = self.fresh()
        self.emit([Kw("r"), Kw(key_name(table)), l])
        return TableView(self, table, l)

    def read_row(self, table, e):
        key = table + ":" + e
        l = self.fresh()
        self.emit([Kw("r"), self.kn.row_key(table, e), l])
        return RowVal(self, key, l)

    def choose(self, local, key, values, f):
        """The value of f on the row read into `local`, branching only on
        which class of f the row's code falls in."""
        classes = OrderedDict()
        for v in values:
            classes.setdefault(f(v), []).append(self.kn.code(key, v))
        items = list(classes.items())
        for res, codes in items[:-1]:
            conds = [("=", local, c) for c in codes]
            if self.branch(conds[0] if len(conds) == 1 else ("or",) + tuple(conds)):
                return res
        return items[-1][0]

    def write_row(self, table, e, value):
        if isinstance(e, Dyn):
            keys = [table + ":" + i for i in e.ids()]
            kexpr = [Kw(key_name(table)), e.sym]
        else:
            keys = [table + ":" + e]
            kexpr = self.kn.row_key(table, e)
        for key in keys:
            if self.record is not None:
                for v in value.ints() if isinstance(value, Dyn) else [value]:
                    self.record.row(key, v)
        if isinstance(value, Dyn):
            vexpr = value.sym if value.lo == 0 else ("+", value.sym, value.lo)
        else:
            (vexpr,) = {self.kn.code(k, value) for k in keys}
        self.emit([Kw("w"), kexpr, vexpr])

    def let(self, expr, elems, table):
        l = self.fresh()
        self.emit([Kw("let"), l, expr])
        return Dyn(l, elems, self.kn.numeric[table])

    def abort(self):
        self.emit([Kw("abort")])
        raise Abort()

    def unreachable(self):
        """A path no execution takes (the generator's branches are
        independent, executions are not); it ends the transaction."""
        self.emit([Kw("abort")])
        raise Abort()

    # -- APIDatabase helpers, as in the artifact
    def readRow(self, table, row):
        t = self.read_table(table)
        if t.has(row):
            r = self.read_row(table, row)
            return NULL if r.is_null() else r
        return NULL

    def readIfIDStartsWith(self, table, prefix):
        return self.read_if(table, lambda e: e.startswith(prefix))

    def readIfIDEndsWith(self, table, suffix):
        return self.read_if(table, lambda e: e.endswith(suffix))

    def readAll(self, table):
        return self.read_if(table, lambda e: True)

    def read_if(self, table, pred):
        t = self.read_table(table)
        return [self.read_row(table, e) for e in t.members(pred)]

    def readIfIsIn(self, table, idset):
        return self.read_if(table, lambda e: e in idset)

    def readAllIDs(self, table):
        return self.read_table(table)

    def insertRow(self, table, row, value=False):
        if isinstance(row, Dyn):
            return self.insert_dyn(table, row, value)
        t = self.read_table(table)
        k = self.kn
        if self.record is not None:
            self.record.insert(table, row)
            self.kn.inserters.setdefault(table, set()).add(self.txn)
        k.index(table, row)
        if self.record is not None:
            k.touchers.setdefault((table, row), set()).add(self.txn)
        slots = k.max_copies(table, row) if self.changing(table, row, t.own) else 1
        # append one copy: the first free copy slot
        chosen = None
        for c in range(slots):
            if c == slots - 1 or not self.branch(("contains?", t.local, k.elem(table, row, c))):
                chosen = c
                break
        self.emit([Kw("w"), Kw(key_name(table)), ("conj", t.local, k.elem(table, row, chosen))])
        self.own_written.add(table)
        if value is not False:
            self.write_row(table, row, value)

    def insert_dyn(self, table, row, value):
        """insertRow of an id computed at run time (a numeric table)."""
        t = self.read_table(table)
        k = self.kn
        for e in row.ids():
            k.index(table, e)
            if self.record is not None:
                self.record.insert(table, e)
                k.inserters.setdefault(table, set()).add(self.txn)
                k.touchers.setdefault((table, e), set()).add(self.txn)
        self.emit([Kw("w"), Kw(key_name(table)), ("conj", t.local, row.sym)])
        self.own_written.add(table)
        if value is not False:
            self.write_row(table, row, value)

    def writeRow(self, table, row, value):
        t = self.read_table(table)
        if t.has(row):
            self.write_row(table, row, value)

    def deleteRow(self, table, row):
        t = self.read_table(table)
        k = self.kn
        if self.record is not None:
            self.record.delete(table, row)
        k.index(table, row)
        if self.record is not None:
            k.touchers.setdefault((table, row), set()).add(self.txn)
        self.own_written.add(table)
        if not self.changing(table, row, t.own):
            self.emit([Kw("w"), Kw(key_name(table)), ("disj", t.local, k.elem(table, row, 0))])
            return
        # remove one copy: the highest present one (copies are interchangeable)
        n = k.max_copies(table, row)
        chosen = 0
        for c in range(n - 1, 0, -1):
            if self.branch(("contains?", t.local, k.elem(table, row, c))):
                chosen = c
                break
        self.emit([Kw("w"), Kw(key_name(table)), ("disj", t.local, k.elem(table, row, chosen))])


class Recorder:
    """What one transaction may do to tables and rows (for the fixpoint)."""

    def __init__(self, kn):
        self.kn = kn
        self.inserts = {}  # (table, id) -> count on the current path

    def insert(self, table, row):
        self.kn.changing.setdefault(table, set()).add(row)
        self.inserts[(table, row)] = self.inserts.get((table, row), 0) + 1

    def delete(self, table, row):
        self.kn.changing.setdefault(table, set()).add(row)

    def row(self, key, value):
        init = self.kn.init_rows.get(key, NULL)
        if value != init:
            self.kn.values.setdefault(key, set()).add(value)


def run_path(kn, proc, decisions, record, txn, own=()):
    ctx = Ctx(kn, decisions, record, txn, own)
    try:
        proc(ctx)
        return ctx.stmts, None, ctx
    except Abort:
        return ctx.stmts, None, ctx
    except NeedBranch as b:
        return ctx.stmts, b.cond, ctx


class Parts(list):
    """A transaction body as parts run one after another whose control flow
    does not depend on each other (an abort in a part ends the transaction,
    so the next part never runs then): each part's tree is built on its own
    and the trees are concatenated, instead of repeating the later parts
    under every path of the earlier ones."""


def build_tree(kn, proc, recorder_sink, txn):
    """The statement tree of one transaction; also collects path inserts."""
    if isinstance(proc, Parts):
        out, sinks = [], []
        for i, part in enumerate(proc):
            sink = []
            # a later part may see the tables any earlier part writes as
            # written by this transaction: every table, conservatively
            own = set(kn.ids) if i > 0 else set()
            out.extend(build_part(kn, part, sink, txn, own))
            sinks.append(sink[0])
        merged = {}
        for m in sinks:
            for k, n in m.items():
                merged[k] = merged.get(k, 0) + n
        recorder_sink.append(merged)
        return out
    return build_part(kn, proc, recorder_sink, txn, set())


def build_part(kn, proc, recorder_sink, txn, own):
    max_inserts = {}

    def go(decisions):
        rec = Recorder(kn)
        stmts, cond, _ = run_path(kn, proc, decisions, rec, txn, own)
        if cond is None:
            for k, n in rec.inserts.items():
                max_inserts[k] = max(max_inserts.get(k, 0), n)
            return stmts
        return stmts + [[Kw("if"), cond, go(decisions + [True]), go(decisions + [False])]]

    tree = go([])
    recorder_sink.append(max_inserts)
    return tree


def simplify(stmts):
    """Drop `:if`s whose branches are equal."""
    out = []
    for s in stmts:
        if s[0] == Kw("if"):
            a, b = simplify(s[2]), simplify(s[3]) if len(s) > 3 else []
            if a == b:
                out.extend(a)
            elif not b:
                out.append([Kw("if"), s[1], a])
            else:
                out.append([Kw("if"), s[1], a, b])
        else:
            out.append(s)
    return out


def rename(stmts, prefix, counter, env=None):
    """Give every local a program-wide unique name. A local bound in an `:if`
    branch stays visible after it (a `when` block's reads are used, guarded,
    by later conditions)."""
    env = env if env is not None else {}
    out = []

    def sub(e):
        if isinstance(e, Sym):
            return env[e]
        if isinstance(e, tuple) and not isinstance(e, SetLit):
            return tuple(sub(x) for x in e)
        return e

    def sub_key(k):
        return [k[0], sub(k[1])] if isinstance(k, list) else k

    for s in stmts:
        if s[0] == Kw("r"):
            counter[0] += 1
            n = Sym("%s%d" % (prefix, counter[0]))
            env[s[2]] = n
            out.append([s[0], sub_key(s[1]), n])
        elif s[0] == Kw("let"):
            counter[0] += 1
            n = Sym("%s%d" % (prefix, counter[0]))
            out.append([s[0], n, sub(s[2])])
            env[s[1]] = n
        elif s[0] == Kw("w"):
            out.append([s[0], sub_key(s[1]), sub(s[2])])
        elif s[0] == Kw("if"):
            cond = sub(s[1])
            then_env = dict(env)
            node = [s[0], cond, rename(s[2], prefix, counter, then_env)]
            else_env = dict(env)
            if len(s) > 3:
                node.append(rename(s[3], prefix, counter, else_env))
            env.update(else_env)
            env.update(then_env)
            out.append(node)
        else:
            out.append(s)
    return out


def count_stmts(stmts):
    n = 0
    for s in stmts:
        n += 1
        if s[0] == Kw("if"):
            n += count_stmts(s[2]) + (count_stmts(s[3]) if len(s) > 3 else 0)
    return n


def translate(app, init_tables, init_rows, sessions, numeric=None):
    """sessions: list of list of (label, proc) with proc(ctx)."""
    kn = Knowledge(init_tables, init_rows, numeric)
    for _ in range(20):
        before = kn.snapshot()
        trees = []
        copies = {}
        for si, sess in enumerate(sessions):
            row = []
            for ti, (label, proc) in enumerate(sess):
                sink = []
                row.append((label, build_tree(kn, proc, sink, (si, ti))))
                for (t, e), n in sink[0].items():
                    d = copies.setdefault(t, {})
                    d[e] = d.get(e, kn.init_mult.get(t, {}).get(e, 0)) + n
            trees.append(row)
        kn.copies = copies
        if kn.snapshot() == before:
            return kn, trees
    raise RuntimeError("no fixpoint for " + app)


def render(title, comments, kn, trees, init_tables):
    lines = ["; " + c if c else ";" for c in [title] + comments]
    init = {}
    for t, lst in init_tables.items():
        init[Kw(key_name(t))] = SetLit(sorted(kn.elem(t, e, i) for e, i in copies_of(lst)))
    for key, v in kn.init_rows.items():
        t, e = key.split(":", 1) if key.split(":", 1)[0] in kn.numeric else (None, None)
        k = kn.row_key(t, e) if t else Kw(key_name(key))
        init[VecKey(k) if isinstance(k, list) else k] = kn.code(key, v)
    lines.append(";")
    lines.append("; Tables (a set of row ids, element = 10 * index + copy):")
    for t in init_tables:
        ids = ", ".join("%d %s" % (i, e) for e, i in kn.ids[t].items())
        lines.append(";   %s: %s" % (key_name(t), ids or "-"))
    lines.append("; Row values (code: value); 0 = never written (Java null):")
    for key in sorted(kn.codes):
        c = kn.codes[key]
        if len(c) > 1 or key not in kn.init_rows:
            vals = "; ".join("%d %r" % (n, v) for v, n in sorted(c.items(), key=lambda x: x[1]))
            lines.append(";   %s: %s" % (key_name(key), vals))
    out = ["\n".join(lines)]
    init_s = "\n        ".join("%s %s" % (edn(k), edn(v)) for k, v in init.items())
    out.append("{:init {%s}" % init_s)
    out.append(" :sessions")
    sess_s = []
    counter = [0]
    for si, sess in enumerate(trees):
        txs = []
        for ti, (label, tree) in enumerate(sess):
            body = rename(simplify(tree), "s%dt%dv" % (si + 1, ti + 1), [0])
            txs.append("   ; %s\n   [%s]" % (label, edn_stmts(body, 4).strip()))
        sess_s.append("  [;; session %d\n%s]" % (si + 1, "\n".join(txs)))
    out.append(" [" + "\n".join(sess_s).lstrip() + "]}")
    return "\n".join(out) + "\n"


def copies_of(lst):
    seen = {}
    for e in lst:
        c = seen.get(e, 0)
        seen[e] = c + 1
        yield e, c


# --------------------------------------------------------------------------
# The artifact's files


def read_lines(path):
    """Worker.prepareInfo: one transaction per line; `"..."` is one argument."""
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    while lines and lines[-1] == "":
        lines.pop()  # Java's String.split drops trailing empty strings
    out = []
    for line in lines:
        parts = line.split('"')
        while len(parts) > 1 and parts[-1] == "":
            parts.pop()
        tr = []
        for i, p in enumerate(parts):
            if i % 2 == 1:
                tr.append(p)
            else:
                tr.extend(re.split(r" (?![^\[]*\])", p.strip()))
        if tr == [""]:
            # an empty line: Worker.run throws NoSuchMethodException and the
            # session stops there
            break
        out.append(tr)
    return out


def read_table_file(path, idgen):
    """MainUtility.populateDatabase: the ids, and the rows stored as keys."""
    ids, rows = [], {}
    if path is None:
        return ids, rows
    with open(path) as f:
        lines = f.read().split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    for row in lines:
        i = idgen(row)
        ids.append(i)
        if i != row.replace(";", ":"):
            rows[i] = row
    return ids, rows


def java_bool(s):
    return s.lower() == "true"


# --------------------------------------------------------------------------
# Courseware (CourseWare.java)


def courseware_proc(name, args):
    ST, CO, EN = "STUDENT", "COURSE", "ENROLLMENTS"

    def field(row, i):
        def f(v):
            x = v.split(";")[i].strip()
            return None if x == "null" else x

        return row.get(f)

    def modify(db, cid, label):
        course = db.readRow(CO, cid)
        if course is not NULL:
            db.writeRow(CO, cid, course.get(lambda v: ";".join(v.split(";")[:3] + [label] + v.split(";")[4:])))

    if name == "enroll":
        sid, cid = str(int(args[0])), str(int(args[1]))

        def enroll(db):
            st = db.readRow(ST, sid)
            if st is NULL:
                db.abort()
            c = db.readRow(CO, cid)
            if c is NULL:
                db.abort()
            if not java_bool(field(st, 2)) and field(c, 3) == "open":
                enrollments = db.readIfIDStartsWith(EN, cid)
                if len(enrollments) < int(field(c, 4)):
                    db.insertRow(EN, cid + ":" + sid)

        return enroll
    if name == "getEnrollments":
        return lambda db: db.readAllIDs(EN)
    if name in ("openCourse", "closeCourse"):
        cid = str(int(args[0]))
        label = "open" if name == "openCourse" else "close"
        return lambda db: modify(db, cid, label)
    if name == "deleteCourse":
        cid = str(int(args[0]))

        def delete(db):
            modify(db, cid, "close")
            db.deleteRow(CO, cid)
            enrollments = db.readAllIDs(EN)
            for e in enrollments.members():
                if e.startswith(cid):
                    db.deleteRow(EN, e)

        return delete
    raise ValueError("courseware: unknown procedure " + name)


def first_field(s):
    return s.split(";")[0]


COURSEWARE = dict(
    tables=[
        ("STUDENT", "students.in", first_field),
        ("COURSE", "courses.in", first_field),
        ("ENROLLMENTS", None, first_field),
    ],
    proc=courseware_proc,
)


# --------------------------------------------------------------------------
# Shopping cart (ShoppingCart.java)


def java_double(s):
    v = float(s)
    r = repr(v)
    return r


def shopping_proc(name, args):
    STORE = "STORE:USERID=0"

    if name in ("addItem", "addItemQuantity"):
        product = args[0]
        q = int(args[1]) if name == "addItemQuantity" else 1

        def add(db):
            f = (product + ";" + str(q)).split(";")
            row = "%s;%s;%s;%d" % (f[0], f[1], java_double(f[2]), int(f[3]))
            db.insertRow(STORE, f[0], row)

        return add
    if name == "removeItem":
        pid = str(int(args[0]))
        return lambda db: db.deleteRow(STORE, pid)
    if name in ("getItem", "getQuantity"):
        iid = args[0]
        return lambda db: db.readRow(STORE, iid)
    if name == "getList":
        return lambda db: db.readAll(STORE)
    if name == "changeQuantity":
        iid, q = args[0], int(args[1])

        def change(db):
            row = db.readRow(STORE, iid)
            if row is NULL:
                db.abort()
            db.writeRow(STORE, iid, row.get(lambda v: ";".join(v.split(";")[:3] + [str(q)])))

        return change
    raise ValueError("shoppingCart: unknown procedure " + name)


SHOPPING = dict(tables=[("STORE:USERID=0", "store.in", first_field)], proc=shopping_proc)


# --------------------------------------------------------------------------
# Twitter (Twitter.java)


def twitter_proc(name, args):
    TW, US, FS, FR = "TWEETS", "USERS", "FOLLOWS", "FOLLOWERS"

    def uid(s):
        return s.split(";")[1].strip()

    if name == "getFollowers":
        u = uid(args[0])

        def followers(db):
            t = db.readAllIDs(FR)
            fs = [f[len(u) + 1 :] for f in t.members(lambda e: e.startswith(u))]
            db.readIfIsIn(US, set(fs))

        return followers
    if name == "follow":
        a, b = uid(args[0]), uid(args[1])

        def follow(db):
            if a != b:
                db.insertRow(FS, a + ":" + b)
                db.insertRow(FR, b + ":" + a)

        return follow
    if name == "publishTweet":
        f = args[0].split(";")

        def publish(db):
            db.insertRow(TW, f[0] + ":" + f[1], "%s;%s;%s;%d" % (f[0], f[1], f[2], int(f[3])))

        return publish
    if name == "getNewsfeed":
        u = uid(args[0])

        def newsfeed(db):
            t = db.readAllIDs(FS)
            followees = [f[len(u) + 1 :] for f in t.members(lambda e: e.startswith(u))]
            for f in followees:
                db.readIfIDEndsWith(TW, f)

        return newsfeed
    if name == "getTimeline":
        u = uid(args[0])
        return lambda db: db.readIfIDEndsWith(TW, u)
    if name == "getTweet":
        return lambda db: None
    raise ValueError("twitter: unknown procedure " + name)


TWITTER = dict(
    tables=[
        ("USERS", "users.in", lambda s: s.split(";")[1]),
        ("TWEETS", "tweets.in", lambda s: s.split(";")[0] + ":" + s.split(";")[1]),
        ("FOLLOWS", "follows.in", lambda s: s.replace(";", ":")),
        ("FOLLOWERS", "followers.in", lambda s: s.replace(";", ":")),
    ],
    proc=twitter_proc,
)


# --------------------------------------------------------------------------
# Wikipedia (Wikipedia.java and procedures/*.java). Rows are kept as the
# fields the procedures branch on (the rest never steers control flow):
# PAGE (id, namespace, title, latest revision), REVISION (id, page, text id),
# WATCHLIST (user, notification stamp is null), other rows present/absent.


WIKI_PAGES = {}  # page id -> (namespace, title): never written by a procedure


def wiki_abs(table, row):
    f = row.split(";")
    if table == "PAGE":
        WIKI_PAGES[int(f[0])] = (int(f[1]), f[2])
        return int(f[3])
    if table == "REVISION":
        return (int(f[1]), int(f[2]))
    if table == "WATCHLIST":
        return (int(f[0]), f[3].strip() == "null")
    return table.lower()


def wikipedia_proc(name, args):
    WL, US, PG, PR, IP, RV, TX, UG, RC, LG = (
        "WATCHLIST", "USER", "PAGE", "PAGERESTRICTIONS", "IPBLOCKS", "REVISION", "TEXT", "USERGROUPS",
        "RECENTCHANGES", "LOGGING",
    )

    def update_user_touched(db, uid):
        u = db.readRow(US, str(uid))
        if u is NULL:
            return
        db.writeRow(US, str(uid), "user")

    def select_page(db, ns, title):
        pages = db.readAll(PG)
        for p in pages:
            if p.is_null():
                raise RuntimeError("NullPointerException in selectPage")
            pid = int(p.key.split(":", 1)[1])
            if WIKI_PAGES[pid] == (ns, title):
                return pid
        return NULL

    def select_page_revision(db, page_id):
        revisions = db.readAll(RV)
        page = db.readRow(PG, str(page_id))
        if page is NULL:
            return NULL
        for r in revisions:
            rid = int(r.key.split(":", 1)[1])
            if not r.is_null() and r.get(lambda v: v[0] == page_id) and rid == page.get(lambda v: v):
                return r
        return NULL

    def get_free_id(db, table):
        """WikipediaProcedure.getFreeID: the largest id plus one.

        These tables only grow, each insertion adding the largest id its
        transaction saw plus one, so from read atomic up (where the two
        reads of the table in a transaction see the same write) the ids
        beyond the initial ones are consecutive: the largest is the first
        free id plus their count minus one. The program computes it with
        `:let` from the set's size instead of branching on every id
        (README: at read committed the Java program may differ)."""
        view = db.readAllIDs(table)
        lo = db.kn.numeric[table]
        init = [int(i) for i in db.kn.init_mult.get(table, {})]
        first = (max(init) + 1 if init else -(2 ** 63)) - lo
        c = first - len(init)
        expr = ("count", view.local) if c == 0 else ("+", c, ("count", view.local))
        others = len(db.kn.inserters.get(table, set()) - {db.txn})
        return db.let(expr, range(first, first + others + 1), table)

    def page_body(db, ip, ns, title, auth_user=None):
        page = select_page(db, ns, title)
        if page is NULL:
            db.abort()
        page_id = page
        db.readIfIDStartsWith(PR, str(page_id))
        if auth_user is None:
            db.readIfIDStartsWith(IP, ip)
        else:
            db.readIfIDEndsWith(IP, str(auth_user))
        rev = select_page_revision(db, page_id)
        if rev is NULL:
            db.abort()
        text_id = rev.get(lambda v: v[1])
        text = db.readRow(TX, str(text_id))
        if text is NULL:
            db.abort()
        return page_id, text_id

    if name in ("addWatchList", "removeWatchList"):
        uid, ns, title = int(args[0]), int(args[1]), args[2]

        def watch(db):
            if uid > 0:
                for n in [ns] + ([1] if ns == 0 else []):
                    key = "%d:%d:%s" % (uid, n, title)
                    if name == "addWatchList":
                        db.insertRow(WL, key, (uid, True))
                    else:
                        db.deleteRow(WL, key)
                update_user_touched(db, uid)

        return watch
    if name == "getPageAnonymous":
        ip, ns, title = args[1], int(args[2]), args[3]
        return lambda db: page_body(db, ip, ns, title)
    if name == "getPageAuthenticated":
        ip, uid, ns, title = args[1], int(args[2]), int(args[3]), args[4]

        def auth(db):
            if uid > 0:
                user = db.readRow(US, str(uid))
                if user is NULL:
                    db.abort()
                db.readIfIDStartsWith(UG, str(uid))
            page_body(db, ip, ns, title, auth_user=uid)

        return auth
    if name == "updatePage":
        title, ns, uid, ip = args[0], int(args[2]), int(args[3]), args[4]

        def update(db):
            page_id, text_id = page_body(db, ip, ns, title)
            next_text = get_free_id(db, TX)
            db.insertRow(TX, next_text, "text")
            next_rev = get_free_id(db, RV)
            # insertRevision is passed the article's current text id
            db.insertRow(RV, next_rev, (page_id, text_id))
            page = db.readRow(PG, str(page_id))
            if page is not NULL:
                db.writeRow(PG, str(page_id), next_rev)
            rc = get_free_id(db, RC)
            db.insertRow(RC, rc, "recentchanges")
            others = []
            for wl in db.readIfIDEndsWith(WL, "%d:%s" % (ns, title)):
                if not wl.is_null() and wl.get(lambda v: v[0] != uid and v[1]):
                    others.append(wl.get(lambda v: v[0]))
            for o in others:
                key = "%d:%d:%s" % (o, ns, title)
                w = db.readRow(WL, key)
                if w is not NULL:
                    db.writeRow(WL, key, w.get(lambda v: (v[0], False)))
                db.readRow(US, str(o))
            lg = get_free_id(db, LG)
            db.insertRow(LG, lg, "logging")
            u = db.readRow(US, str(uid))
            if u is not NULL:
                db.writeRow(US, str(uid), "user")
            update_user_touched(db, uid)

        return update
    raise ValueError("wikipedia: unknown procedure " + name)


WIKIPEDIA = dict(
    tables=[
        ("IPBLOCKS", None, first_field),
        ("LOGGING", None, first_field),
        ("PAGE", "page.in", first_field),
        ("PAGERESTRICTIONS", None, first_field),
        ("RECENTCHANGES", None, first_field),
        ("REVISION", "revision.in", first_field),
        ("TEXT", "text.in", first_field),
        ("USER", "user.in", first_field),
        ("USERGROUPS", None, first_field),
        ("WATCHLIST", "watchlist.in", lambda s: ":".join(s.split(";")[:3])),
    ],
    proc=wikipedia_proc,
    abs=wiki_abs,
    # ids are integers: TEXT and REVISION ids as they are, RECENTCHANGES and
    # LOGGING from Long.MIN_VALUE (getFreeID of an empty table) on
    numeric={"TEXT": 0, "REVISION": 0, "RECENTCHANGES": -(2 ** 63), "LOGGING": -(2 ** 63)},
)


# --------------------------------------------------------------------------
# TPC-C (TPCC.java, procedures/*.java). Rows are kept as the fields the
# procedures branch on: DISTRICT its next order id, STOCK its quantity,
# OPENORDER its customer; CUSTOMER rows never change what the procedures
# branch on (surname, first name, credit, id: TPCC_CUSTOMERS), and the other
# rows only matter by being there.

TPCC_CUSTOMERS = {}  # "w:d:id" -> (last, first, credit, id, w, d)


def tpcc_abs(table, row):
    f = [x.strip() for x in row.split(";")]
    if table == "DISTRICT":
        return ("next", int(f[2]))
    if table == "STOCK":
        return ("quantity", int(f[4]))
    if table == "OPENORDER":
        return ("customer", int(f[3]))
    if table == "CUSTOMER":
        TPCC_CUSTOMERS["%s:%s:%s" % (f[0], f[1], f[2])] = (f[8], f[9], f[7], int(f[2]), int(f[0]), int(f[1]))
        return "customer"
    return table.lower()


def java_int_array(s):
    s = s.strip()
    return [] if s == "[]" else [int(x.strip()) for x in s[1:-1].split(",")]


def tpcc_proc(name, args):
    DI, OL, ST, CU, OO, HI, WH, IT, NO = (
        "DISTRICT", "ORDERLINE", "STOCK", "CUSTOMER", "OPENORDER", "HISTORY", "WAREHOUSE", "ITEM", "NEWORDER",
    )

    def by_id(db, w, d, cid):
        c = db.readRow(CU, "%d:%d:%d" % (w, d, cid))
        if c is NULL:
            db.abort()
        return TPCC_CUSTOMERS["%d:%d:%d" % (w, d, cid)]

    def by_surname(db, w, d, last):
        rows = db.readIfIDStartsWith(CU, "%d:%d" % (w, d))
        found = []
        for r in rows:
            if r.is_null():
                db.abort()
            c = TPCC_CUSTOMERS[r.key.split(":", 1)[1]]
            if c[0] == last:
                found.append(c)
        found.sort(key=lambda c: c[1])
        if not found:
            db.abort()
        i = len(found) // 2
        if len(found) % 2 == 0:
            i -= 1
        return found[i]

    def customer(db, w, d, cid, last, by_id_search):
        return by_id(db, w, d, cid) if by_id_search else by_surname(db, w, d, last)

    def district_next(db, w, d):
        r = db.readRow(DI, "%d:%d" % (w, d))
        if r is NULL:
            db.abort()
        return r.get(lambda v: v[1])

    if name == "stockLevel":
        w, d, threshold = int(args[0]), int(args[1]), int(args[2])

        def stock_level(db):
            order_id = district_next(db, w, d)
            # The loop reads every order line of the district and the stock
            # of its item; only whether some line counts steers what follows
            # (count == 0 aborts), so the reads are `:if`s of their own and
            # the count is one condition.
            view = db.read_table(OL)
            counted = []
            for e in [e for e in db.kn.ids.get(OL, {}) if e.startswith("%d:%d" % (w, d))]:
                f = e.split(":")
                ol_order, item = int(f[2]), int(f[4])
                here = view.presence(e)
                found = {}

                def body(e=e, item=item, found=found):
                    ol = db.read_row(OL, e)
                    found["ol"] = ol
                    nonnull = ol.cond(lambda v: True)

                    def stock():
                        sv = db.read_table(ST)
                        sid = "%d:%d" % (w, item)
                        found["st_here"] = sv.presence(sid)

                        def row():
                            found["st"] = db.read_row(ST, sid)

                        db.when(found["st_here"], row)

                    found["nonnull"] = nonnull
                    db.when(nonnull, stock)

                db.when(here, body)
                if here is False or not (order_id - 20 <= ol_order < order_id) or "st_here" not in found:
                    continue
                st = found.get("st")
                low = st.cond(lambda v: v[1] < threshold) if st is not None else False
                counted.append(all_of([here, found["nonnull"], found["st_here"], low]))
            db.when(negate(any_of(counted)), db.abort_stmt)

        return stock_level
    if name == "orderStatus":
        w, d, cid, last, by = int(args[0]), int(args[1]), int(args[2]), args[3], java_bool(args[4])

        def order_status(db):
            c = customer(db, w, d, cid, last, by)
            # getOrderDetails reads every open order of the district (each
            # an `:if` of its own), then takes the one with the largest id
            # among the customer's: a chain of branches, largest id first.
            view = db.read_table(OO)
            orders = []
            for e in [e for e in db.kn.ids.get(OO, {}) if e.startswith("%d:%d" % (w, d))]:
                here = view.presence(e)
                got = {}

                def body(e=e, got=got):
                    o = db.read_row(OO, e)
                    got["o"] = o
                    db.abort_if_null(o)

                db.when(here, body)
                if here is not False:
                    orders.append((int(e.split(":")[2]), here, got["o"]))
            orders.sort(key=lambda x: -x[0])
            for oid, here, o in orders:
                if db.branch_on(all_of([here, o.cond(lambda v: v[1] == c[3])])):
                    lines = db.read_table(OL)
                    for e in [e for e in db.kn.ids.get(OL, {}) if e.startswith("%d:%d:%d" % (w, d, oid))]:
                        db.when(lines.presence(e), lambda e=e: db.read_row(OL, e))
                    return
            db.abort()

        return order_status
    if name == "payment":
        w, d, cid, last, by = int(args[0]), int(args[1]), int(args[2]), args[3], java_bool(args[4])

        def payment(db):
            wr = db.readRow(WH, str(w))
            if wr is not NULL:
                db.writeRow(WH, str(w), "warehouse")
            if db.readRow(WH, str(w)) is NULL:
                db.abort()
            dr = db.readRow(DI, "%d:%d" % (w, d))
            if dr is not NULL:
                db.writeRow(DI, "%d:%d" % (w, d), dr.get(lambda v: v))
            if db.readRow(DI, "%d:%d" % (w, d)) is NULL:
                db.abort()
            c = customer(db, w, d, cid, last, by)
            if c[2] == "BC":
                if db.readRow(CU, "%d:%d:%d" % (w, d, c[3])) is NULL:
                    db.abort()
            db.writeRow(CU, "%d:%d:%d" % (c[4], c[5], c[3]), "customer")
            db.writeRow(HI, "%d:%d" % (w, d), "history")

        return payment
    if name == "createNewOrder":
        w, d, cid, cnt = int(args[0]), int(args[1]), int(args[2]), int(args[3])
        items, suppliers, quantities = java_int_array(args[5]), java_int_array(args[6]), java_int_array(args[7])

        def new_order(db):
            by_id(db, w, d, cid)
            if db.readRow(WH, str(w)) is NULL:
                db.abort()
            order_id = district_next(db, w, d)
            # updateDistrict reads the district again and writes its next
            # order id plus one
            again = district_next(db, w, d)
            key = "%d:%d" % (w, d)
            if db.record is not None:
                db.kn.incrementers.setdefault(key, set()).add(db.txn)
            # a next order id is its initial value plus at most one per
            # other transaction incrementing it
            init = db.kn.init_rows[DI + ":" + key][1]
            bound = init + len(db.kn.incrementers.get(key, set()) - {db.txn})
            if order_id > bound or again > bound:
                db.unreachable()
            db.writeRow(DI, key, ("next", again + 1))
            db.insertRow(OO, "%d:%d:%d" % (w, d, order_id), ("customer", cid))
            db.insertRow(NO, "%d:%d:%d" % (w, d, order_id))
            for i in range(cnt):
                sw, item, q = suppliers[i], items[i], quantities[i]
                if db.readRow(IT, str(item)) is NULL:
                    db.abort()
                if db.readRow(ST, "%d:%d" % (sw, item)) is NULL:
                    db.abort()
                db.insertRow(OL, "%d:%d:%d:%d:%d:%d" % (w, d, order_id, i, item, sw), "orderline")
                db.writeRow(ST, "%d:%d" % (sw, item), ("quantity", q))

        return new_order
    if name == "delivery":
        nd, w = int(args[0]), int(args[1])

        def district(db, d):
            prefix = "%d:%d" % (w, d)
            # Java collects the matching ids and sorts them, largest
            # order id first
            top = db.readAllIDs(NO).max_member(lambda e: e.startswith(prefix), lambda e: int(e.split(":")[2]))
            if top is None:
                return
            o = int(top.split(":")[2])
            key = "%d:%d:%d" % (w, d, o)
            db.deleteRow(NO, key)
            r = db.readRow(OO, key)
            if r is NULL:
                db.abort()
            cust = r.get(lambda v: v[1])
            r2 = db.readRow(OO, key)
            if r2 is NULL:
                db.abort()
            db.writeRow(OO, key, r2.get(lambda v: v))
            # updateDeliveryDate and getOrderLineTotal: what their loops
            # read and write does not steer the rest, so each iteration is
            # an `:if` of its own
            def rewrite(e):
                db.abort_if_null(db.read_row(OL, e))
                again = db.read_table(OL)
                db.when(again.presence(e), lambda: db.write_row(OL, e, "orderline"))

            lines = [e for e in db.kn.ids.get(OL, {}) if e.startswith(key)]
            view = db.read_table(OL)
            for e in lines:
                db.when(view.presence(e), lambda e=e: rewrite(e))
            view = db.read_table(OL)
            for e in lines:
                db.when(view.presence(e), lambda e=e: db.abort_if_null(db.read_row(OL, e)))
            ck = "%d:%d:%d" % (w, d, cust)
            if db.readRow(CU, ck) is NULL:
                db.abort()
            db.writeRow(CU, ck, "customer")

        delivery = Parts([lambda db, d=d: district(db, d) for d in range(nd)])

        return delivery
    raise ValueError("tpcc: unknown procedure " + name)


def tpcc_ids(n):
    return lambda s: ":".join(s.split(";")[:n])


TPCC = dict(
    tables=[
        ("CUSTOMER", "customer.in", tpcc_ids(3)),
        ("DISTRICT", "districts.in", tpcc_ids(2)),
        ("HISTORY", None, tpcc_ids(2)),
        ("ITEM", "item.in", tpcc_ids(1)),
        ("NEWORDER", "neworder.in", tpcc_ids(3)),
        ("OPENORDER", "order.in", tpcc_ids(3)),
        ("ORDERLINE", "orderline.in", tpcc_ids(6)),
        ("STOCK", "stock.in", tpcc_ids(2)),
        ("WAREHOUSE", "warehouse.in", tpcc_ids(1)),
    ],
    proc=tpcc_proc,
    abs=tpcc_abs,
)


APPS = OrderedDict(
    [
        ("courseware", COURSEWARE),
        ("shoppingCart", SHOPPING),
        ("tpcc", TPCC),
        ("twitter", TWITTER),
        ("wikipedia", WIKIPEDIA),
    ]
)


def load_app(artifact, app):
    spec = APPS[app]
    init_tables, init_rows = OrderedDict(), {}
    for table, fname, idgen in spec["tables"]:
        path = os.path.join(artifact, "src/benchmarks", app, "database", fname) if fname else None
        ids, rows = read_table_file(path, idgen)
        init_tables[table] = ids
        for i, r in rows.items():
            init_rows[table + ":" + i] = spec.get("abs", lambda t, r: r)(table, r)
    return spec, init_tables, init_rows


def program(artifact, app, session_files, title, comments):
    spec, init_tables, init_rows = load_app(artifact, app)
    sessions = []
    for path in session_files:
        txs = []
        for tr in read_lines(path):
            label = " ".join(a if " " not in a and len(a) < 40 else '"%s..."' % a[:20] for a in tr)
            txs.append((label, spec["proc"](tr[0], tr[1:])))
        sessions.append(txs)
    kn, trees = translate(app, init_tables, init_rows, sessions, spec.get("numeric"))
    return render(title, comments, kn, trees, init_tables)


FILE_NAMES = {"shoppingCart": "shopping-cart"}

SCALING_SECONDS = 30
SCALING_BYTES = 500_000


class TooBig(Exception):
    pass


def bounded_program(*args):
    """program(), or None when it takes over SCALING_SECONDS or its text is
    over SCALING_BYTES."""
    import signal

    def alarm(_sig, _frame):
        raise TooBig()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(SCALING_SECONDS)
    try:
        text = program(*args)
    except (TooBig, RecursionError, MemoryError):
        return None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return text if len(text) <= SCALING_BYTES else None


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    artifact, out = argv[1], argv[2]
    os.makedirs(out, exist_ok=True)
    src = "github:Galieve/transactional-jpf, src/benchmarks/%s/application-scalability/case%d"
    for app in APPS:
        for case in range(1, 6):
            base = os.path.join(artifact, "src/benchmarks", app, "application-scalability", "case%d" % case)
            files = [os.path.join(base, "thread%d.in" % i) for i in (1, 2, 3)]
            name = "%s-%d" % (FILE_NAMES.get(app, app), case)
            text = program(
                artifact,
                app,
                files,
                "%s: client program %d of the first experiment of Bouajjani, Enea, Roman-Calvo (PLDI'23)." % (name, case),
                [
                    "Translated by scripts/explore-programs.py from the artifact,",
                    src % (app, case) + "/thread{1,2,3}.in",
                    "and the initial database src/benchmarks/%s/database/ (examples/explore/README.md)." % app,
                    "Generated: edit the generator, not this file.",
                ],
            )
            with open(os.path.join(out, name + ".edn"), "w") as f:
                f.write(text)
            print(name, file=sys.stderr)
    # The scaling runs of the paper (Fig. 15, App. F.2 and F.3): TPC-C and
    # Wikipedia, 1-5 sessions of 3 transactions and 3 sessions of 1-5
    # transactions, five client programs each.
    scaling = os.path.join(out, "scaling")
    skipped = []
    os.makedirs(scaling, exist_ok=True)
    for app in ("tpcc", "wikipedia"):
        for kind, sub, tag in (
            ("session-scalability", "%d-sessions", "s"),
            ("transaction-scalability", "%d-transactions-per-session", "t"),
        ):
            for case in range(1, 6):
                for i in range(1, 6):
                    base = os.path.join(artifact, "src/benchmarks", app, kind, "case%d" % case, sub % i)
                    n = i if tag == "s" else 3
                    files = [os.path.join(base, "thread%d.in" % k) for k in range(1, n + 1)]
                    name = "%s-%d-%s%d" % (app, case, tag, i)
                    what = "%d session%s of 3 transactions" % (i, "s" if i > 1 else "") if tag == "s" else "3 sessions of %d transaction%s" % (i, "s" if i > 1 else "")
                    text = bounded_program(
                        artifact,
                        app,
                        files,
                        "%s: scaling run (%s) of Bouajjani, Enea, Roman-Calvo (PLDI'23), Fig. 15." % (name, what),
                        [
                            "Translated by scripts/explore-programs.py from the artifact,",
                            "github:Galieve/transactional-jpf, src/benchmarks/%s/%s/case%d/%s/" % (app, kind, case, sub % i),
                            "Generated: edit the generator, not this file.",
                        ],
                    )
                    path = os.path.join(scaling, name + ".edn")
                    if text is None:
                        skipped.append(name)
                        if os.path.exists(path):
                            os.remove(path)
                        print("scaling/%s: skipped (over %ds or %d bytes)" % (name, SCALING_SECONDS, SCALING_BYTES), file=sys.stderr)
                        continue
                    with open(path, "w") as f:
                        f.write(text)
                    print("scaling/" + name, file=sys.stderr)
    with open(os.path.join(scaling, "SKIPPED"), "w") as f:
        f.write(
            "# Scaling programs the generator does not write: translating them takes over %d s or gives over %d bytes\n"
            "# (the Java loops over tables expand into too many branches; examples/explore/README.md).\n"
            % (SCALING_SECONDS, SCALING_BYTES)
        )
        f.write("".join(n + "\n" for n in skipped))


if __name__ == "__main__":
    main(sys.argv)
