"""Blocks of lanes: consecutive lanes that threads of one kind share (`select.pack_lanes` put
a server's 5,000 request threads in 21 rows), named once by the figures instead of 21 times
"238× handle": the icicle beside the block's middle with a bracket, the thread view's ring
and legend once, the cutaway by that name, the live view on its own lanes
(`live_lanes.LiveLanes.name_blocks`, with the same `LANE_RUN_MIN`)."""
from __future__ import annotations

from .select import Selection, kind_of, packed_lane_name
from .text import text_width


#: consecutive shared lanes of one kind are named once, as a block, from this many on
LANE_RUN_MIN = 3


def lane_name_runs(sel: Selection) -> list:
    """Blocks of consecutive lanes that threads of ONE kind share (`pack_lanes` put a server's
    5,000 request threads in 21 rows): ``(first lane, last lane, name of the block)``, the name
    counting every thread of it ("5000× handle"; `block_name` adds its lanes), for blocks of
    `LANE_RUN_MIN` lanes or more, so that a figure names them once and not 21 times
    "238× handle".  Lanes named by their threads (``member_named``) are never in a block."""
    if sel.lane_members is None or len(sel.lane_members) < LANE_RUN_MIN:
        return []
    tr, members = sel.trace, sel.lane_members
    named = sel.member_named
    kinds = [(kind_of(tr, m[0]) if len(m) > 1 and not (named is not None and named[k]) else None)
             for k, m in enumerate(members)]
    runs, first = [], 0
    for k in range(1, len(kinds) + 1):
        if k < len(kinds) and kinds[k] is not None and kinds[k] == kinds[first]:
            continue
        if kinds[first] is not None and k - first >= LANE_RUN_MIN:
            threads = [t for m in members[first:k] for t in m]
            runs.append((first, k - 1, packed_lane_name(tr, threads)))
        first = k
    return runs


def lane_names_by_run(sel: Selection) -> tuple:
    """The lanes' names for a figure that names a block of shared lanes once (`lane_name_runs`):
    (names with '' for every lane of a block, [(first, last, name)] of the blocks)."""
    runs = lane_name_runs(sel)
    names = list(sel.lane_names)
    for a, b, _ in runs:
        names[a: b + 1] = [""] * (b - a + 1)
    return names, runs


def block_name(run: tuple) -> str:
    """A block's name with its lanes, "5000× handle in 21 lanes" (where no bracket shows them)."""
    a, b, name = run
    return block_label(name, b - a + 1)


def block_label(name: str, n_lanes: int, max_em: float = float("inf")) -> str:
    """The name ``name`` of a block of ``n_lanes`` lanes with its lanes ("459× handle in 8
    lanes"), or without them where that is wider than ``max_em`` (the live view's name room)."""
    whole = f"{name} in {n_lanes} lanes"
    return whole if text_width(whole) <= max_em else name
