#!/usr/bin/env python3
"""Count the causal (CC) and serializable (SER) histories of a straight-line
`isolde explore` program (no :if, no locals used in writes that matter) by
brute force, independently of `isolde explore`. Used to check tpcc-4
(examples/explore/README.md, "TPC-C 2 and 4").

Usage: scripts/explore-count-straightline.py PROGRAM.edn [--forward]

A history is the write-read relation: for every read of a key the reading
transaction has not written before, the transaction it reads from (another
committed transaction writing the key, or the initial state). Reads of a key
the transaction wrote read its own write; aborted transactions' writes are
visible to nobody else.

* CC: every assignment of writers to reads, pruned as soon as it is
  inconsistent (consistency only loses by adding write-read edges):
  hb = (so ∪ wr)+ acyclic, and hb ∪ {T3 -> T1 : T2 reads x from T1, T3 ≠ T1
  writes x, T3 hb T2} acyclic (causal consistency, Biswas and Enea 2019).
* SER: every serial order the sessions allow, each read reading the last
  committed write before it; distinct write-read relations counted.

--forward keeps only histories in which every read reads from the initial
state or from a transaction earlier in the session-major order (session 1's
transactions, then session 2's, ...): the histories an explore-ce run that
never swaps sees, which is what the PLDI'23 artifact explores on tpcc-4.
"""

import re
import sys


def parse(path):
    text = open(path).read()
    body = text.split(":sessions", 1)[1]
    txs = []  # (session, index, [(op, key)], aborted)
    for si, s in enumerate(re.split(r";; session \d+", body)[1:]):
        for ti, t in enumerate(re.split(r"\n   ; ", s)[1:]):
            ops = [(o, k) for o, k, _ in re.findall(r"\[:(r|w|abort)(?: :([\w-]+) (\S+?))?\]", t)]
            if any(o not in ("r", "w", "abort") for o, _ in ops) or ":if" in t:
                sys.exit("%s: not a straight-line program" % path)
            txs.append((si, ti, ops, any(o == "abort" for o, _ in ops)))
    return txs


def closure(n, edges):
    r = [[False] * n for _ in range(n)]
    for a, b in edges:
        r[a][b] = True
    for k in range(n):
        rk = r[k]
        for i in range(n):
            if r[i][k]:
                ri = r[i]
                for j in range(n):
                    if rk[j]:
                        ri[j] = True
    return r


def count_cc(txs, forward):
    n = len(txs) + 1  # node 0: the initial state
    writes = {}
    for i, (_, _, ops, aborted) in enumerate(txs, 1):
        if not aborted:
            for o, k in ops:
                if o == "w":
                    writes.setdefault(k, set()).add(i)
    reads = []  # (node, key): reads with a choice of writer
    for i, (_, _, ops, _) in enumerate(txs, 1):
        own = set()
        for o, k in ops:
            if o == "w":
                own.add(k)
            elif o == "r" and k not in own and k in writes:
                reads.append((i, k))
    so = {(0, i) for i in range(1, n)}
    for i, a in enumerate(txs, 1):
        for j, b in enumerate(txs, 1):
            if a[0] == b[0] and a[1] < b[1]:
                so.add((i, j))

    def consistent(assign):
        edges = set(so) | {(w, reads[x][0]) for x, w in assign.items()}
        hb = closure(n, edges)
        if any(hb[i][i] for i in range(n)):
            return False
        more = set(edges)
        for x, w in assign.items():
            t, k = reads[x]
            for t3 in writes[k]:
                if t3 not in (w, t) and hb[t3][t]:
                    more.add((t3, w))
        c = closure(n, more)
        return not any(c[i][i] for i in range(n))

    count = 0

    def go(x, assign):
        nonlocal count
        if x == len(reads):
            count += 1
            return
        t, k = reads[x]
        for w in [0] + sorted(v for v in writes[k] - {t} if not forward or v < t):
            assign[x] = w
            if consistent(assign):
                go(x + 1, assign)
            del assign[x]

    go(0, {})
    return count


def count_ser(txs, forward):
    sessions = {}
    for si, ti, ops, aborted in txs:
        sessions.setdefault(si, []).append((ti, ops, aborted))
    order_ids = {(si, ti): i for i, (si, ti, _, _) in enumerate(txs, 1)}
    seen = set()

    def orders(left):
        if not any(left.values()):
            yield []
            return
        for s in sorted(left):
            if left[s]:
                left[s] -= 1
                for rest in orders(left):
                    yield [s] + rest
                left[s] += 1

    for order in orders({s: len(v) for s, v in sessions.items()}):
        pos = {s: 0 for s in sessions}
        last, wr, ok = {}, [], True
        for s in order:
            ti, ops, aborted = sessions[s][pos[s]]
            pos[s] += 1
            me = order_ids[(s, ti)]
            own = set()
            for x, (o, k) in enumerate(ops):
                if o == "r":
                    src = me if k in own else last.get(k, 0)
                    ok = ok and (not forward or src <= me)
                    wr.append((me, x, src))
                elif o == "w":
                    own.add(k)
            if not aborted:
                for k in own:
                    last[k] = me
        if ok:
            seen.add(frozenset(wr))
    return len(seen)


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--forward"):
        sys.exit(__doc__)
    txs = parse(argv[1])
    forward = len(argv) == 3
    print("%s%s: CC %d, SER %d" % (argv[1], " (forward only)" if forward else "", count_cc(txs, forward), count_ser(txs, forward)))


if __name__ == "__main__":
    main(sys.argv)
