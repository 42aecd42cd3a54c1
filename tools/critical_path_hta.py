"""Compare `tracevis3d.critical_path` with HolisticTraceAnalysis' ``critical_path_analysis`` on
a PyTorch profiler trace, one ProfilerStep at a time; print one table.

HTA (PyPI ``HolisticTraceAnalysis``, 0.5; it needs pandas < 3) is not a dependency of the
project: install it into a venv of its own and name that venv's python::

    python3.11 -m venv /tmp/htav && /tmp/htav/bin/pip install "HolisticTraceAnalysis==0.5.*" "pandas<3"
    .venv/bin/python tools/critical_path_hta.py ../shared/realdata/hta-trace-diff/control.json.gz \
        --hta-python /tmp/htav/bin/python --steps 0 1 2

For each step, HTA's path (its nodes: starts and ends of CPU operators, CUDA runtime calls
and GPU kernels, in the order it returns them) is run in a subprocess and cut into pieces
per thread (a CPU thread, or a GPU stream); ours runs on the same events (HTA's clip: CPU
operators and runtime calls of non-zero length that start in the step, and the GPU work they
launched; no user annotations) and is compared instant by instant over the span both cover:
the share of that span both put on the same thread, and each path's hand-offs.  The models
differ where the table says (docs/threads.md, "The critical path").
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HTA_SCRIPT = r'''
import json, sys
from hta.trace_analysis import TraceAnalysis
d, inst, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ta = TraceAnalysis(trace_dir=d)
rank = list(ta.t.traces.keys())[0]
cp, ok = ta.critical_path_analysis(rank=rank, annotation="ProfilerStep", instance_id=inst)
df = ta.t.get_trace(rank)
sym = ta.t.symbol_table.get_sym_table()
names = df["name"].map(lambda i: sym[int(i)])
steps = df[names.str.startswith("ProfilerStep")]
nodes = []
for nid in cp.critical_path_nodes:
    n = cp.node_list[nid]
    row = df.loc[int(n.ev_idx)]
    nodes.append([int(n.ts), bool(n.is_start), int(row["pid"]), int(row["tid"]), int(row["stream"]),
                  sym[int(row["name"])]])
u = cp.critical_path_nodes
edges = [[cp.edges[a, b]["object"].type.value, int(cp.edges[a, b]["object"].weight)] for a, b in zip(u[:-1], u[1:])]
step = steps.iloc[inst]
json.dump({"ok": bool(ok), "nodes": nodes, "edges": edges, "step_ts": int(step["ts"]), "step_dur": float(step["dur"]),
           "step_name": str(names[steps.index[inst]])}, open(out, "w"))
'''


def run_hta(python: str, trace: str, step: int, keep: str | None = None) -> dict:
    """HTA's critical path of ProfilerStep instance ``step`` (its own venv, a subprocess);
    ``keep``: a folder where its answer is kept and read back on the next run."""
    kept = os.path.join(keep, f"{os.path.basename(trace)}.step{step}.hta.json") if keep else None
    if kept and os.path.exists(kept):
        with open(kept) as f:
            return json.load(f)
    with tempfile.TemporaryDirectory() as d:
        os.symlink(os.path.abspath(trace), os.path.join(d, os.path.basename(trace)))
        out = os.path.join(d, "cp.json")
        script = os.path.join(d, "hta_cp.py")
        with open(script, "w") as f:
            f.write(HTA_SCRIPT)
        p = subprocess.run([python, script, d, str(step), out], capture_output=True, text=True, timeout=1800)
        if p.returncode != 0:
            raise SystemExit(f"HTA failed on {trace} step {step}: {p.stderr[-2000:]}")
        with open(out) as f:
            ans = json.load(f)
    if kept:
        os.makedirs(keep, exist_ok=True)
        with open(kept, "w") as f:
            json.dump(ans, f)
    return ans


def hta_clip(trace, t0: float, t1: float):
    """The calls HTA's ``critical_path_analysis`` keeps for a step [t0, t1]: CPU operators and
    CUDA runtime calls of non-zero length that start inside it, and the GPU work (an incoming
    flow) whose launch does; as a Trace (each kept call under its nearest kept ancestor)."""
    from tracevis3d.model import Trace

    cats = np.array(trace.function_cats, object)[trace.func]
    dur = trace.end - trace.start
    cpu = np.isin(cats, ["cpu_op", "cuda_runtime", "cuda_driver"]) & (trace.start >= t0) & (trace.start <= t1) & (dur > 0)
    gpu = np.zeros(len(trace), bool)
    f, g = trace.flow_from, trace.flow_to
    launched = cpu[f] & np.isin(cats[g], ["kernel", "gpu_memcpy", "gpu_memset"])
    gpu[g[launched]] = True
    keep = np.flatnonzero(cpu | gpu)
    kept = np.zeros(len(trace), bool)
    kept[keep] = True
    newpos = np.cumsum(kept) - 1
    parent = np.full(keep.size, -1, np.int64)
    for j, i in enumerate(keep.tolist()):  # nearest kept ancestor (a few levels: python loop, small)
        p = trace.parent[i]
        while p >= 0 and not kept[p]:
            p = trace.parent[p]
        parent[j] = newpos[p] if p >= 0 else -1
    fl = launched & kept[f] & kept[g]
    return Trace.from_arrays(trace.func[keep], trace.start[keep], trace.end[keep], parent, trace.thread[keep],
                             function_names=trace.function_names, thread_names=trace.thread_names,
                             kind=trace.kind[keep], function_cats=trace.function_cats,
                             thread_pid=trace.thread_pid, thread_tid=trace.thread_tid,
                             flow_id=np.arange(int(fl.sum()), dtype=np.int64),
                             flow_from=newpos[f[fl]].astype(np.int32), flow_to=newpos[g[fl]].astype(np.int32),
                             flow_cat=np.zeros(int(fl.sum()), np.int32), flow_cat_names=[""]).check()


def hta_launch_rule(clip):
    """The clip as HTA models it: device synchronisations are no waits (no GPU → CPU edge
    without CUDA sync events), and only the flows HTA takes as launch edges remain: a kernel is woken by its launch
    when no other work was queued on its stream behind it by the time it started (HTA's
    ``queue_length == 0`` at the kernel; the launch after the stream's previous work ended is
    the rule both share)."""
    f, g = clip.flow_from, clip.flow_to
    keep = np.ones(f.size, bool)
    for s in np.unique(clip.thread[g]).tolist():
        m = np.flatnonzero(clip.thread[g] == s)
        launch = np.sort(clip.start[f[m]])
        # launches onto the same stream after this one's and before its kernel started
        later = np.searchsorted(launch, clip.start[g[m]], side="left") - np.searchsorted(launch, clip.start[f[m]],
                                                                                          side="right")
        keep[m] = later == 0
    out = clip.subset()  # a copy with every call
    out.flow_id, out.flow_from, out.flow_to, out.flow_cat = (clip.flow_id[keep], f[keep], g[keep],
                                                            clip.flow_cat[keep])
    # without CUDA sync events (these traces have none: HTA warns) HTA has no GPU → CPU edge: its
    # blocking runtime calls weigh 0 and the path stays on the CPU; ours would take the device sync
    from tracevis3d.analysis.critical_path_handoffs import is_device_sync
    from tracevis3d.model import KIND_OTHER

    syncs = np.array([is_device_sync(n) for n in out.function_names], bool)
    out.kind = np.where(syncs[out.func], KIND_OTHER, out.kind).astype(np.uint8)
    return out


def hta_pieces(trace, hta: dict, offset: float) -> tuple:
    """HTA's path as (thread, a, b) pieces on our clock and its hand-offs (edges between two
    threads: (from thread, to thread, t_from, t_to, edge type))."""
    key = {}
    for k in range(trace.n_threads):
        key[(int(trace.thread_pid[k]), int(trace.thread_tid[k]))] = k
    th = []
    for ts, _start, pid, tid, stream, _name in hta["nodes"]:
        th.append(key.get((pid, tid), key.get((pid, stream), -1)))
    ts = np.array([n[0] for n in hta["nodes"]], float) + offset
    pieces, hand = [], []
    a = 0
    for j in range(1, len(th) + 1):
        if j == len(th) or th[j] != th[a]:
            pieces.append((th[a], ts[a], ts[j - 1]))
            if j < len(th):
                hand.append((th[j - 1], th[j], ts[j - 1], ts[j], hta["edges"][j - 1][0]))
            a = j
    return pieces, hand


def thread_at(pieces, times: np.ndarray) -> np.ndarray:
    """The thread each path is on at each time (-1: not on the path then)."""
    out = np.full(times.size, -1, np.int64)
    for k, a, b in pieces:
        out[(times >= a) & (times < b)] = k
    return out


def compare_step(trace, hta: dict, offset: float) -> dict:
    """One step: our path on HTA's clip, HTA's pieces, their agreement over the common span."""
    from tracevis3d.analysis.critical_path import HANDOFF, critical_path

    t0 = hta["step_ts"] + offset
    clip = hta_clip(trace, t0, t0 + hta["step_dur"])
    theirs, their_hand = hta_pieces(trace, hta, offset)
    whole = critical_path(clip)
    # HTA's path is the heaviest one, not the one that ends last: walk back from where it ends
    end = (theirs[-1][0], theirs[-1][2])
    cp = critical_path(clip, end=end)
    like = critical_path(hta_launch_rule(clip), end=end)  # HTA's launch edges, no device syncs
    a = max(cp.t_first, theirs[0][1])
    b = min(cp.t_last, theirs[-1][2])
    times = np.linspace(a, b, 200001)[:-1]
    y = thread_at(theirs, times)

    def agree(c):
        on = c.why != HANDOFF
        x = thread_at(list(zip(c.thread[on].tolist(), c.start[on].tolist(), c.end[on].tolist())), times)
        both = (x >= 0) & (y >= 0)
        return float((x[both] == y[both]).mean()) if both.any() else 0.0

    def hands(c):
        return [(int(c.from_thread[j]), int(c.thread[j]), float(c.start[j]), float(c.end[j]), int(c.handoff_kind[j]))
                for j in c.handoffs]

    return {"cp": cp, "whole": whole, "like": like, "clip": clip, "theirs": theirs, "their_hand": their_hand,
            "ours_hand": hands(cp), "like_hand": hands(like), "span": (a, b), "agree": agree(cp), "agree_like": agree(like),
            "ours_span": (cp.t_first, cp.t_last),
            "hta_span": (theirs[0][1], theirs[-1][2]), "step": hta["step_name"], "edges": hta["edges"]}


def describe(trace, r: dict) -> list:
    """Table rows of one step."""
    from tracevis3d.analysis.critical_path import HANDOFF, HANDOFF_KINDS

    def names(pieces):
        out = []
        for k, a, b in pieces:
            nm = trace.thread_names[k].strip() if k >= 0 else "?"
            if out and out[-1][0] == nm:
                out[-1][2] += b - a
            else:
                out.append([nm, a, b - a])
        return " → ".join(f"{n} {d / 1e3:.1f} ms" for n, _, d in out)

    def pieces(cp):
        on = cp.why != HANDOFF
        return list(zip(cp.thread[on].tolist(), cp.start[on].tolist(), cp.end[on].tolist()))

    ours = pieces(r["cp"])
    types = {}
    for t, w in r["edges"]:
        types[t] = types.get(t, 0) + w
    def hand_text(hs):
        return ", ".join(f"{trace.thread_names[a].strip()}→{trace.thread_names[b].strip()} {(tb - ta):.0f} µs at "
                         f"{ta / 1e3:.3f} ms ({HANDOFF_KINDS[k]})" for a, b, ta, tb, k in hs) or "none"

    return [
        ("step", r["step"]),
        ("HTA path", names(r["theirs"])),
        ("our path from HTA's end", names(ours)),
        ("our path from HTA's end, HTA's model", names(pieces(r["like"]))),
        ("our path from the step's end", names(pieces(r["whole"]))),
        ("HTA span", f"{(r['hta_span'][0]) / 1e3:.3f} – {r['hta_span'][1] / 1e3:.3f} ms"),
        ("our span", f"{r['ours_span'][0] / 1e3:.3f} – {r['ours_span'][1] / 1e3:.3f} ms"),
        ("same thread as HTA (our rules / HTA's model)",
         f"{100 * r['agree']:.1f} % / {100 * r['agree_like']:.1f} %"),
        ("HTA hand-offs", ", ".join(f"{trace.thread_names[a].strip()}→{trace.thread_names[b].strip()} "
                                    f"{(tb - ta):.0f} µs at {ta / 1e3:.3f} ms ({t.replace('critical_path_', '')})"
                                    for a, b, ta, tb, t in r["their_hand"]) or "none"),
        ("our hand-offs", hand_text(r["ours_hand"])),
        ("our hand-offs, HTA's model", hand_text(r["like_hand"])),
        ("HTA edge weights", ", ".join(f"{k.replace('critical_path_', '')} {v / 1e3:.1f} ms" for k, v in types.items())),
    ]


def same_handoffs(r: dict, tol_us: float = 1.0) -> bool:
    """HTA's hand-offs and ours under HTA's model: the same threads, in the same order, each
    released within ``tol_us`` of HTA's."""
    theirs = [(a, b, ta) for a, b, ta, _tb, _t in r["their_hand"]]
    ours = [(a, b, ta) for a, b, ta, _tb, _k in r["like_hand"]]
    return len(theirs) == len(ours) and all(x[:2] == y[:2] and abs(x[2] - y[2]) <= tol_us
                                            for x, y in zip(theirs, ours))


def summary_row(trace, name: str, r: dict) -> str:
    def threads(pieces):
        out = []
        for k, _a, _b in pieces:
            nm = trace.thread_names[k].strip().replace("thread ", "").replace(" (python3.8)", "") if k >= 0 else "?"
            if not out or out[-1] != nm:
                out.append(nm)
        return " → ".join(out)

    def pieces(cp):
        from tracevis3d.analysis.critical_path import HANDOFF

        on = cp.why != HANDOFF
        return list(zip(cp.thread[on].tolist(), cp.start[on].tolist(), cp.end[on].tolist()))

    return (f"| {name} {r['step']} | {threads(r['theirs'])} | {threads(pieces(r['cp']))} | "
            f"{threads(pieces(r['like']))} | {100 * r['agree']:.0f} % / {100 * r['agree_like']:.0f} % | "
            f"{'yes' if same_handoffs(r) else 'no'} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("trace")
    ap.add_argument("--hta-python", required=True, help="the python of a venv with HolisticTraceAnalysis")
    ap.add_argument("--steps", type=int, nargs="+", default=[0])
    ap.add_argument("--keep", help="a folder where HTA's answers are kept (read back when there)")
    ap.add_argument("--detail", action="store_true", help="a table per step as well")
    args = ap.parse_args(argv)
    import tracevis3d

    trace = tracevis3d.load(args.trace)
    names = np.array(trace.function_names, object)[trace.func]
    steps = np.flatnonzero(np.char.startswith(names.astype(str), "ProfilerStep"))
    rows = []
    for s in args.steps:
        hta = run_hta(args.hta_python, args.trace, s, args.keep)
        mine = steps[[i for i in range(steps.size) if names[steps[i]] == hta["step_name"]][0]]
        offset = float(trace.start[mine]) - hta["step_ts"]
        r = compare_step(trace, hta, offset)
        if args.detail:
            print(f"\n| {os.path.basename(args.trace)} | |\n|---|---|")
            for k, v in describe(trace, r):
                print(f"| {k} | {v} |")
        rows.append(summary_row(trace, os.path.basename(args.trace).split(".")[0], r))
    print("\n| step | HTA's path | ours, from HTA's end | ours, HTA's model | same thread as HTA (ours / HTA's model) "
          "| hand-offs as HTA's (HTA's model) |\n|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
