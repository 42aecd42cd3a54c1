"""Random valid call trees for kernel twins and layout tests (shared by several test modules)."""
import numpy as np

from tracevis3d.model import Trace


def random_trace(n_roots=15, fanout=3, max_depth=5, threads=2, seed=0, n_func=10, tiny=0.0,
                 pass_through=0.0, kinds=False, names=None):
    """A valid random trace built recursively (per-thread pre-order); ``tiny`` adds runs
    of very short leaf calls; ``pass_through`` is the chance that a call has one child
    covering 95 % of it (wrapper chains); ``kinds`` gives random wait/release/I/O kinds."""
    rng = np.random.default_rng(seed)
    func, start, end, parent, thread = [], [], [], [], []

    def rec(p, s, e, d, t):
        i = len(func)
        func.append(int(rng.integers(n_func)))
        start.append(s)
        end.append(e)
        parent.append(p)
        thread.append(t)
        if d >= max_depth:
            return
        if pass_through and rng.random() < pass_through:
            rec(i, s + 0.02 * (e - s), e - 0.03 * (e - s), d + 1, t)
            return
        cur = s
        for _ in range(int(rng.integers(0, fanout + 1))):
            span = (e - cur) * rng.uniform(0.05, 0.6)
            gap = (e - cur) * rng.uniform(0, 0.1)
            if span <= 0:
                break
            ce = cur + gap + span
            rec(i, cur + gap, ce, d + 1, t)
            cur = ce
        if tiny and rng.random() < 0.5 and e - cur > 0:
            k = int(rng.integers(1, 8))
            w = (e - cur) * tiny / k
            for j in range(k):
                a = cur + j * w
                rec(i, a, a + w * 0.8, max_depth, t)

    for t in range(threads):
        tc = 0.0
        for _ in range(n_roots):
            dur = rng.exponential(100.0) + 1
            rec(-1, tc, tc + dur, 0, t)
            tc += dur + rng.exponential(5)
    if names is None:
        names = [f"pkg.mod{i % 3}.func_{i}" for i in range(n_func)]
    kind = rng.integers(0, 4, len(func)).astype(np.uint8) * (rng.random(len(func)) < 0.3) if kinds else None
    return Trace.from_arrays(func, start, end, parent, thread, function_names=names, kind=kind).check()
