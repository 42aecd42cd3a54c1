"""Brute-force twins for the collapsed-stack family of readers (collapsed, perf script, pprof,
callgrind): every call of a trace as a set, and speedscope's Left Heavy view of weighted stacks
built with dictionaries (``bg-flamegraph.ts``'s semantics)."""


def calls_of(trace) -> set:
    """(thread name, frame-name path, start, end) of every call."""
    out = set()
    for i in range(len(trace)):
        p, x = [], i
        while x >= 0:
            p.append(trace.function_names[trace.func[x]])
            x = int(trace.parent[x])
        out.add((trace.thread_names[trace.thread[i]], tuple(reversed(p)), float(trace.start[i]), float(trace.end[i])))
    return out


def left_heavy(stacks, order: dict) -> list:
    """speedscope's Left Heavy view of weighted stacks [(path of names, weight)], naively:
    (path, start, end) per frame path of weight > 0; siblings heaviest first, ties by
    ``order`` (the frame's first appearance)."""
    total: dict = {}
    for path, w in stacks:
        for d in range(1, len(path) + 1):
            total[path[:d]] = total.get(path[:d], 0.0) + w
    out = []

    def lay(prefix, x):
        kids = [p for p in total if len(p) == len(prefix) + 1 and p[:-1] == prefix and total[p] > 0]
        kids.sort(key=lambda p: (-total[p], order[p[-1]]))
        for p in kids:
            out.append((p, x, x + total[p]))
            lay(p, x)
            x += total[p]

    lay((), 0.0)
    return out
