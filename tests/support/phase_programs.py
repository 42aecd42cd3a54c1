"""Small hand-made programs for the comparison tests: ``main`` running named phases in a
given order, each phase a call with a few leaf children whose functions are the phase's own."""
from tracevis3d.model import Trace


def phase_calls(name, t0, n_children=4, width=100.0, tag=""):
    """A phase: a call with a few leaf children, functions unique to the phase."""
    func = [name]
    start, end, parent = [t0], [t0 + width], [0]
    step = width / (n_children + 1)
    for k in range(n_children):
        func.append(f"{name}_{tag}{k}")
        start.append(t0 + (k + 0.5) * step)
        end.append(t0 + (k + 1.2) * step)
        parent.append(1)  # relative: the phase itself
    return func, start, end, parent


def phase_program(order, extra=None):
    """main → phases in ``order`` (each 100 µs), optionally an extra phase at the end."""
    names, start, end, parent = ["main"], [0.0], [0.0], [-1]
    t = 10.0
    for ph in list(order) + ([extra] if extra else []):
        f, s, e, p = phase_calls(ph, t)
        base = len(names)
        for k in range(len(f)):
            names.append(f[k])
            start.append(s[k])
            end.append(e[k])
            parent.append(0 if k == 0 else base)
        t += 110.0
    end[0] = t
    uniq = sorted(set(names))
    func = [uniq.index(n) for n in names]
    return Trace.from_arrays(func, start, end, parent, function_names=uniq,
                             thread_names=["MainThread"]).check()
