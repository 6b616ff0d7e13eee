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


def edn(t):
    if isinstance(t, bool):
        return "true" if t else "false"
    if isinstance(t, int):
        return str(t)
    if isinstance(t, Kw):
        return ":" + t
    if isinstance(t, str):
        return str(t)
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
    def __init__(self, init_tables, init_rows):
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
        self.codes = {}  # row key -> {value: code}

    def index(self, table, e):
        d = self.ids.setdefault(table, OrderedDict())
        if e not in d:
            d[e] = len(d)
        return d[e]

    def elem(self, table, e, copy):
        return 10 * self.index(table, e) + copy

    def max_copies(self, table, e):
        return max(self.init_mult.get(table, {}).get(e, 0), self.copies.get(table, {}).get(e, 0), 1)

    def code(self, key, v):
        if v is NULL:
            return 0
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
        )


# --------------------------------------------------------------------------
# One run of a procedure along a path of decisions


class TableView:
    """The value of a table key as read into local `local`."""

    def __init__(self, ctx, table, local):
        self.ctx, self.table, self.local = ctx, table, local

    def members(self, pred=lambda e: True):
        """Ids present (one entry per copy), in the table's index order."""
        k = self.ctx.kn
        out = []
        for e in list(k.ids.get(self.table, {})):
            if not pred(e):
                continue
            if e not in k.changing.get(self.table, set()):
                out.extend([e] * k.init_mult.get(self.table, {}).get(e, 0))
                continue
            for c in range(k.max_copies(self.table, e)):
                if self.ctx.branch(("contains?", self.local, k.elem(self.table, e, c))):
                    out.append(e)
        return out

    def has(self, e):
        k = self.ctx.kn
        if e not in k.ids.get(self.table, {}):
            return False
        if e not in k.changing.get(self.table, set()):
            return k.init_mult.get(self.table, {}).get(e, 0) > 0
        conds = [("contains?", self.local, k.elem(self.table, e, c)) for c in range(k.max_copies(self.table, e))]
        return self.ctx.branch(conds[0] if len(conds) == 1 else ("or",) + tuple(conds))


class Ctx:
    def __init__(self, kn, decisions, record):
        self.kn = kn
        self.decisions = decisions
        self.pos = 0
        self.stmts = []
        self.nlocal = 0
        self.record = record  # Recorder or None
        self.memo = {}

    # -- emission
    def emit(self, s):
        if self.pos >= len(self.decisions):
            self.stmts.append(s)

    def fresh(self):
        self.nlocal += 1
        return Sym("v%d" % self.nlocal)

    def branch(self, cond):
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
        self.emit([Kw("r"), Kw(key_name(key)), l])
        dom = self.kn.domain(key)
        for v in dom[:-1]:
            if self.branch(("=", l, self.kn.code(key, v))):
                return v
        return dom[-1]

    def write_row(self, table, e, value):
        key = table + ":" + e
        if self.record is not None:
            self.record.row(key, value)
        self.emit([Kw("w"), Kw(key_name(key)), self.kn.code(key, value)])

    def abort(self):
        self.emit([Kw("abort")])
        raise Abort()

    # -- APIDatabase helpers, as in the artifact
    def readRow(self, table, row):
        t = self.read_table(table)
        if t.has(row):
            return self.read_row(table, row)
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
        t = self.read_table(table)
        k = self.kn
        if self.record is not None:
            self.record.insert(table, row)
        k.index(table, row)
        slots = k.max_copies(table, row) if row in k.changing.get(table, set()) else 1
        # append one copy: the first free copy slot
        chosen = None
        for c in range(slots):
            if c == slots - 1 or not self.branch(("contains?", t.local, k.elem(table, row, c))):
                chosen = c
                break
        self.emit([Kw("w"), Kw(key_name(table)), ("conj", t.local, k.elem(table, row, chosen))])
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
        if row not in k.changing.get(table, set()):
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


def run_path(kn, proc, decisions, record):
    ctx = Ctx(kn, decisions, record)
    try:
        proc(ctx)
        return ctx.stmts, None, ctx
    except Abort:
        return ctx.stmts, None, ctx
    except NeedBranch as b:
        return ctx.stmts, b.cond, ctx


def build_tree(kn, proc, recorder_sink):
    """The statement tree of one transaction; also collects path inserts."""
    max_inserts = {}

    def go(decisions):
        rec = Recorder(kn)
        stmts, cond, _ = run_path(kn, proc, decisions, rec)
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
            a, b = simplify(s[2]), simplify(s[3])
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
    """Give every local a program-wide unique name; branches get their own."""
    env = dict(env or {})
    out = []

    def sub(e):
        if isinstance(e, Sym):
            return env[e]
        if isinstance(e, tuple) and not isinstance(e, SetLit):
            return tuple(sub(x) for x in e)
        return e

    for s in stmts:
        if s[0] == Kw("r"):
            counter[0] += 1
            n = Sym("%s%d" % (prefix, counter[0]))
            env[s[2]] = n
            out.append([s[0], s[1], n])
        elif s[0] == Kw("w"):
            out.append([s[0], s[1], sub(s[2])])
        elif s[0] == Kw("if"):
            node = [s[0], sub(s[1]), rename(s[2], prefix, counter, env)]
            if len(s) > 3:
                node.append(rename(s[3], prefix, counter, env))
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


def translate(app, init_tables, init_rows, sessions):
    """sessions: list of list of (label, proc) with proc(ctx)."""
    kn = Knowledge(init_tables, init_rows)
    for _ in range(20):
        before = kn.snapshot()
        trees = []
        copies = {}
        for sess in sessions:
            row = []
            for label, proc in sess:
                sink = []
                row.append((label, build_tree(kn, proc, sink)))
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
        init[Kw(key_name(key))] = kn.code(key, v)
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
        v = row.split(";")[i].strip()
        return None if v == "null" else v

    def modify(db, cid, label):
        course = db.readRow(CO, cid)
        if course is not NULL:
            f = course.split(";")
            f[3] = label
            db.writeRow(CO, cid, ";".join(f))

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
            f = row.split(";")
            f[3] = str(q)
            db.writeRow(STORE, iid, ";".join(f))

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


APPS = OrderedDict(
    [
        ("courseware", COURSEWARE),
        ("shoppingCart", SHOPPING),
        ("twitter", TWITTER),
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
            init_rows[table + ":" + i] = r
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
    kn, trees = translate(app, init_tables, init_rows, sessions)
    return render(title, comments, kn, trees, init_tables)


FILE_NAMES = {"shoppingCart": "shopping-cart"}


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


if __name__ == "__main__":
    main(sys.argv)
