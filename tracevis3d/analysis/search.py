"""Search and landmarks, bpy-free (SEAT requirements 2 and 5): regex search over function
names with a history, and bookmarks with notes, as plain JSON-able data.  The Blender side
(`tracevis3d.blender.landmarks`) keeps a `Landmarks` in the scene, so a saved .blend is a
session, and flies the camera to hits and bookmarks."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np

from ..model import Trace

__all__ = ["search_calls", "Bookmark", "Landmarks", "HISTORY_MAX"]

HISTORY_MAX = 20
HITS_MAX = 100_000  # hits kept in the scene (the count is exact; flying cycles through these)


def search_calls(trace: Trace, pattern: str, modules: bool = True) -> np.ndarray:
    """Calls whose function (raw name, display name or, with ``modules``, module) matches
    the regular expression ``pattern``, in time order (start, then call index).  A bad
    pattern is a ValueError naming it."""
    from .filters import function_mask
    from ..userregex import user_regex

    rx = user_regex(pattern, "search")  # linear time; bad or backtracking-only: one line
    fmask = function_mask(trace, [pattern])
    if modules and not fmask.all():
        from ..naming import function_table

        ft = function_table(trace)
        for f in np.flatnonzero(~fmask):
            if rx.search(ft.module[f]):
                fmask[f] = True
    hits = np.flatnonzero(fmask[trace.func])
    return hits[np.lexsort((hits, trace.start[hits]))].astype(np.int64)


@dataclass
class Bookmark:
    """A landmark: a call (index in the loaded trace), its function's name when it was
    set, a free note, and the camera (location, target) to come back to."""

    call: int
    name: str = ""
    note: str = ""
    camera: list | None = None  # [location, target, rotation (XYZ Euler), [shift_x, shift_y]]


@dataclass
class Landmarks:
    """The search history (most recent first, at most `HISTORY_MAX`, no duplicates), the
    last search (pattern, its first `HITS_MAX` hits, ``n_hits`` in all, which hit is
    current) and the bookmarks."""

    history: list = field(default_factory=list)
    pattern: str = ""
    hits: list = field(default_factory=list)
    n_hits: int = 0
    current: int = -1
    bookmarks: list = field(default_factory=list)

    def remember(self, pattern: str) -> None:
        self.history = [pattern] + [p for p in self.history if p != pattern]
        del self.history[HISTORY_MAX:]

    def search(self, trace: Trace, pattern: str) -> np.ndarray:
        hits = search_calls(trace, pattern)
        self.take_hits(pattern, hits)
        return hits

    def take_hits(self, pattern: str, hits: np.ndarray) -> None:
        """Remember ``pattern`` and its ``hits`` (`search_calls`' answer, found elsewhere:
        a job searches off Blender's main thread)."""
        self.remember(pattern)
        self.pattern, self.hits, self.current, self.n_hits = pattern, hits[:HITS_MAX].tolist(), -1, int(hits.size)

    def next_hit(self, step: int = 1) -> int | None:
        """The next (``step`` = -1: previous) hit, cyclically; None without hits."""
        if not self.hits:
            return None
        self.current = (self.current + step) % len(self.hits)
        return int(self.hits[self.current])

    def add_bookmark(self, trace: Trace | None, call: int, note: str = "", camera=None) -> Bookmark:
        call = int(call)
        if trace is not None and not 0 <= call < len(trace):
            raise ValueError(f"bookmark: call {call} is not in the trace (0..{len(trace) - 1})")
        name = trace.function_names[trace.func[call]] if trace is not None else ""
        b = Bookmark(call, name, str(note), [list(map(float, v)) for v in camera] if camera is not None else None)
        self.bookmarks.append(asdict(b))
        return b

    def remove_bookmark(self, k: int) -> None:
        if not 0 <= k < len(self.bookmarks):
            raise IndexError(f"no bookmark {k} (there are {len(self.bookmarks)})")
        del self.bookmarks[k]

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | None) -> "Landmarks":
        """Read what `to_json` wrote; anything unreadable gives empty landmarks (a damaged
        scene property must not stop a session from opening)."""
        if not text:
            return cls()
        try:
            d = json.loads(text)
            out = cls()
            out.history = [str(p) for p in d.get("history", [])][:HISTORY_MAX]
            out.pattern = str(d.get("pattern", ""))
            out.hits = [int(h) for h in d.get("hits", [])]
            out.current = int(d.get("current", -1))
            out.n_hits = int(d.get("n_hits", len(out.hits)))
            out.bookmarks = [asdict(Bookmark(int(b["call"]), str(b.get("name", "")), str(b.get("note", "")),
                                             b.get("camera"))) for b in d.get("bookmarks", [])]
            return out
        except (ValueError, TypeError, KeyError, AttributeError):
            return cls()
