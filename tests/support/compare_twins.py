"""Brute-force twins of the comparison's kernels (TraceDiff Sec. III, IV-A, IV-D), written from
the paper's definitions in plain Python over *all* call pairs, independently of the kernels'
data structures (Γ-sets as frozensets of function NAMES, pairs enumerated one by one), and the
builders they run on: traces from hypothesis-drawn op lists (`build_trace`, `trace_ops`) and
random class pairs for the tier kernels; shared by the comparison tests."""
import numpy as np
from hypothesis import strategies as st

from tracevis3d.model import Trace


def build_trace(threads_ops, names):
    """Trace from per-thread op lists [(pops, func), ...] in pre-order.

    Each op closes ``pops`` open calls (bounded by the stack), then opens a call of
    ``func`` as a child of the call on top (or a root).  Call i starts at 2i and
    ends just after its last descendant starts, so siblings never overlap.
    """
    func, parent, thread = [], [], []
    for t, ops in enumerate(threads_ops):
        stack = []
        for pops, f in ops:
            for _ in range(min(pops, len(stack))):
                stack.pop()
            parent.append(stack[-1] if stack else -1)
            func.append(f)
            thread.append(t)
            stack.append(len(func) - 1)
    n = len(func)
    start = 2.0 * np.arange(n)
    tr = Trace.from_arrays(np.array(func, np.int32), start, start + 1.0, np.array(parent, np.int32),
                           thread=np.array(thread, np.int32), function_names=list(names),
                           thread_names=[f"t{i}" for i in range(len(threads_ops))])
    tr.end = 2.0 * (tr.end_index.astype(np.float64) - 1.0) + 1.0
    return tr.check()


op = st.tuples(st.integers(0, 3), st.integers(0, 5))
thread_ops = st.lists(op, min_size=1, max_size=14)
trace_ops = st.lists(thread_ops, min_size=1, max_size=2)
NAMES_A = [f"f{i}" for i in range(6)]
NAMES_B = [f"f{i}" for i in (3, 0, 5, 1, 4, 2)]   # same functions, other ids in B


def gammas(t):
    return [frozenset(t.function_names[f] for f in t.func[i:t.end_index[i]]) for i in range(len(t))]


def rel_start(t):
    t0 = float(t.start.min())
    span = max(float(t.end.max()) - t0, 0.0)
    return (t.start - t0) / (span if span > 0 else 1.0)


def all_pairs(a, b, tau):
    ga, gb = gammas(a), gammas(b)
    out = {}
    for i, x in enumerate(ga):
        for j, y in enumerate(gb):
            s = len(x & y) / len(x | y)
            if s > tau:
                out[(i, j)] = s
    return out


def kept_pairs(a, b, allp, k):
    ra, rb = rel_start(a), rel_start(b)
    by_a, by_b = {}, {}
    for (i, j), s in allp.items():
        by_a.setdefault(i, []).append((-s, abs(ra[i] - rb[j]), j))
        by_b.setdefault(j, []).append((-s, abs(rb[j] - ra[i]), i))
    kept = set()
    for i, lst in by_a.items():
        kept |= {(i, j) for _, _, j in sorted(lst)[:k]}
    for j, lst in by_b.items():
        kept |= {(i, j) for _, _, i in sorted(lst)[:k]}
    return kept


def overview_bf(a, b, allp, n_bins, viewer_is_a=True):
    if not viewer_is_a:
        a, b = b, a
        allp = {(j, i): s for (i, j), s in allp.items()}
    t0a, t0b = float(a.start.min()), float(b.start.min())
    span = max(float(a.end.max()) - t0a, 0.0)
    tol = span / n_bins
    bars = np.zeros((n_bins, 3))
    delta = np.zeros(n_bins)
    for (i, j), s in allp.items():
        t = a.start[i] - t0a
        tv = b.start[j] - t0b
        k = min(max(int(t / (span / n_bins)) if span > 0 else 0, 0), n_bins - 1)
        if abs(tv - t) <= tol:
            bars[k, 0] += s
        elif tv < t - tol:
            bars[k, 1] += s
        else:
            bars[k, 2] += s
        delta[k] += abs(t - tv)
    return bars, delta


def tiers_twin(ptr, others, inter, size_row, size_other, count_other, k):
    """Per row: its partners in the best distinct-similarity tiers, descending,
    until they hold >= k calls, as [(partner, sim)] by (sim desc, partner asc)."""
    out = []
    for r in range(len(ptr) - 1):
        sims = {}
        for j in range(ptr[r], ptr[r + 1]):
            q, c = int(others[j]), int(inter[j])
            sims[q] = c / (size_row[r] + size_other[q] - c)
        want, got_calls = [], 0
        for v in sorted(set(sims.values()), reverse=True):
            if got_calls >= k:
                break
            tier = sorted(q for q in sims if sims[q] == v)
            want += [(q, v) for q in tier]
            got_calls += sum(int(count_other[q]) for q in tier)
        out.append(want)
    return out


def random_class_pairs(rng, n_rows: int, n_other: int, max_per_row: int, max_count: int):
    """Random class pairs as a CSR (rows ascending, each row's partners ascending), the
    classes' sizes and call counts, overlaps within both sizes, and the transposed order:
    (rows, others, ptr, inter, size_row, size_other, count_row, count_other, tptr, by_col)."""
    lists = [np.sort(rng.choice(n_other, size=rng.integers(0, max_per_row), replace=False)) for _ in range(n_rows)]
    rows = np.repeat(np.arange(n_rows), [x.size for x in lists]).astype(np.int32)
    others = np.concatenate(lists).astype(np.int32)
    ptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum([x.size for x in lists], out=ptr[1:])
    size_row = rng.integers(5, 9, n_rows).astype(np.int64)
    size_other = rng.integers(5, 9, n_other).astype(np.int64)
    inter = np.minimum(rng.integers(1, 6, rows.size), np.minimum(size_row[rows], size_other[others]))
    inter = inter.astype(np.uint16)
    tptr = np.zeros(n_other + 1, np.int64)
    np.cumsum(np.bincount(others, minlength=n_other), out=tptr[1:])
    by_col = np.argsort(others, kind="stable")  # the transposed CSR: each column lists its rows ascending
    count_row = rng.integers(1, max_count, n_rows).astype(np.int64)
    count_other = rng.integers(1, max_count, n_other).astype(np.int64)
    return rows, others, ptr, inter, size_row, size_other, count_row, count_other, tptr, by_col


def assert_tiers_are_the_twins(pairs, k: int, row_tiers, col_tiers, n_calls: int, partners=None) -> None:
    """Tiers of the class pairs ``pairs`` (`random_class_pairs`) found by a kernel, against
    `tiers_twin` both ways: ``row_tiers`` / ``col_tiers`` (ptr, partner, similarity) per row and
    per column, int32 partners and float64 similarities; ``n_calls`` the exact call-pair count;
    with ``partners`` (per row, per column), the partners' calls."""
    rows, others, ptr, inter, size_row, size_other, count_row, count_other, tptr, by_col = pairs
    assert n_calls == int((count_row[rows] * count_other[others]).sum())
    if partners is not None:
        partners_row, partners_col = partners
        assert partners_row.tolist() == np.bincount(rows, weights=count_other[others],
                                                    minlength=size_row.size).tolist()
        assert partners_col.tolist() == np.bincount(others, weights=count_row[rows],
                                                    minlength=size_other.size).tolist()
    for (got_ptr, got_i, got_s), want in (
            (row_tiers, tiers_twin(ptr, others, inter, size_row, size_other, count_other, k)),
            (col_tiers, tiers_twin(tptr, rows[by_col], inter[by_col], size_other, size_row, count_row, k))):
        assert got_i.dtype == np.int32 and got_s.dtype == np.float64
        assert len(got_ptr) == len(want) + 1
        for r, w in enumerate(want):
            lo, hi = got_ptr[r], got_ptr[r + 1]
            assert list(zip(got_i[lo:hi].tolist(), got_s[lo:hi].tolist())) == w, (k, r)



def repetition_rows(seqs, key, max_period):
    """The rows (parent, first call, period, count) of `kernels.repetition`'s greedy scan over
    each sequence ``(parent, calls)`` of ``seqs`` in order (its module docstring): at each
    position the smallest period up to ``max_period`` whose next block repeats, with as many
    full copies as follow, the scan going on after them; the calls' keys ``key[c]``."""
    rows = []
    for par, seq in seqs:
        ks = [key[c] for c in seq]
        s = 0
        while s + 1 < len(ks):
            for p in range(1, min(max_period, (len(ks) - s) // 2) + 1):
                count = 1
                while ks[s + count * p: s + (count + 1) * p] == ks[s: s + p]:
                    count += 1
                if count >= 2:
                    rows.append((par, seq[s], p, count))
                    s += p * count
                    break
            else:
                s += 1
    return rows
