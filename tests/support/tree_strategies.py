"""Call forests drawn by hypothesis: `ops_strategy` draws a list of (go up, function) steps and
`forest` builds the trace they describe, times strictly nested (integer or irrational µs); for
the DAG, filter and cone tests that check a kernel against a brute force on any tree."""
import numpy as np
from hypothesis import strategies as st

from tracevis3d.model import Trace


def forest(ops, ticks: bool, threads: int) -> Trace:
    """A forest from a list of (go_up, func) steps: pop ``go_up`` open calls, then open a call
    of ``func`` under what is left; times strictly nested (integer or irrational µs)."""
    func, parent, thread, start, end = [], [], [], [], []
    per = max(1, len(ops) // threads)
    clock = 0.0
    stack: list[int] = []
    for j, (up, f) in enumerate(ops):
        t = min(j // per, threads - 1)
        if thread and thread[-1] != t:
            for s in stack:
                end[s] = None
            while stack:
                clock += 1.0
                end[stack.pop()] = clock
        for _ in range(min(up, len(stack))):
            clock += 1.0
            end[stack.pop()] = clock
        clock += 1.0 if ticks else np.pi / 7
        func.append(f)
        parent.append(stack[-1] if stack else -1)
        thread.append(t)
        start.append(clock)
        end.append(None)
        stack.append(len(func) - 1)
    while stack:
        clock += 1.0
        end[stack.pop()] = clock
    return Trace.from_arrays(func, start, end, parent, thread).check()


ops_strategy = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=60)
