"""A naive reading of ``perf script`` text in plain Python, the twin of `tracevis3d.io.perf_script`:
written from speedscope's ``linux-tools-perf.ts`` (events split at blank lines, the event line
and frame lines read by regular expressions), with the reader's choices: one lane per (comm,
pid, tid), x = samples, the first event type; calls as `collapsed_twins.left_heavy` gives them."""
from __future__ import annotations

import re

from collapsed_twins import left_heavy

_TIME = re.compile(r"^\d+\.\d+:$")
_IDS = re.compile(r"^(\d+)(?:/(\d+))?$")


def _frame(line: str):
    """(symbol, dso) of a frame line, or None."""
    m = re.match(r"^\s*[0-9a-fA-F]+\s+(.*)$", line.rstrip())
    if not m or not line[:1].isspace():
        return None
    rest = m.group(1)
    dso = ""
    if rest.endswith(")"):
        depth = 0
        for k in range(len(rest) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(rest[k], 0)
            if depth == 0:
                break
        if depth == 0 and (k == 0 or rest[k - 1].isspace()):
            dso, rest = rest[k + 1:-1], rest[:k].rstrip()
    rest = re.sub(r"\+0x[0-9a-fA-F]+$", "", rest)
    return rest, dso


def naive_perf(text: str, event: str | None = None) -> set:
    events = []
    cur = None
    for line in text.split("\n"):
        if line.startswith("#"):
            continue
        if not line.strip():
            cur = None
            continue
        if line[0].isspace():
            if cur is not None:
                fr = _frame(line)
                if fr:
                    cur["stack"].append(fr)
            continue
        toks = line.split()
        t = next((k for k in range(1, len(toks)) if _TIME.match(toks[k])), None)
        cur = {"stack": [], "ok": t is not None}
        events.append(cur)
        if t is None:
            continue
        k = t - 1
        if toks[k].startswith("[") and toks[k].endswith("]"):
            k -= 1
        m = _IDS.match(toks[k]) if k >= 1 else None
        if m:
            pid, tid = (int(m.group(1)), int(m.group(2))) if m.group(2) else (-1, int(m.group(1)))
            comm = line[: line.index(toks[k], len(toks[0]))].strip() if k > 1 else toks[0]
        else:
            pid, tid, comm = -1, -1, line[: line.index(toks[t])].strip()
        cur["thread"] = (comm, pid, tid)
        cur["event"] = next((x[:-1] for x in toks[t + 1:] if x.endswith(":")), "")
    events = [e for e in events if e["ok"]]
    chosen = event if event is not None else events[0]["event"]
    lanes: dict = {}
    order: dict = {}
    for e in events:
        if e["event"] != chosen:
            continue
        names = tuple(f"??? ({d})" if s == "[unknown]" else s for s, d in reversed(e["stack"]))
        for s, d in e["stack"]:  # frames are numbered as the file lists them, leaf first
            order.setdefault(f"??? ({d})" if s == "[unknown]" else s, len(order))
        lanes.setdefault(e["thread"], []).append((names, 1.0))
    out = set()
    for (comm, _, _), stacks in lanes.items():
        out |= {(comm, p, s, en) for p, s, en in left_heavy(stacks, order)}
    return out
