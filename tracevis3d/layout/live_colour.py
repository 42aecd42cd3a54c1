"""Colours and filters of the live icicle (bpy-free): the colour slot of every function as
functions arrive (`LiveColouring`: module colours by area, the reserved colours,
``--highlight``), and the levels calls are drawn at when ``--hide`` leaves some out
(`drawn_depths`, `DrawnDepths`).  The layout (`live.LiveLayout`) places the boxes.
"""
from __future__ import annotations

import numpy as np

from .colour import FAMILY_HUES, INFRA_RGB, OTHER_RGB, PALE_RGB, SHADES, WAIT_RGB, family_shade
from ..naming import describe_function

N_MODULE_COLOURS = 16
OTHER, WAIT, INFRA, PALE, FIRST_MODULE = 0, 1, 2, 3, 4
#: material per colour slot (Workbench shows material colours): other, wait, infrastructure,
#: outside a highlight (``--highlight``), modules
SLOT_NAMES = ["TV3D_live_other", "TV3D_live_wait", "TV3D_live_infra", "TV3D_live_pale"] + \
    [f"TV3D_live_module_{k}" for k in range(N_MODULE_COLOURS)]
#: clusters of sub-pixel calls: the colour of their longest call, lightened (SyncTrace IV-B2)
CLUSTER_SLOT_NAMES = [f"{nm}_cluster" for nm in SLOT_NAMES]


def drawn_depths(parent, func, hidden, depth, drawn, lo: int, hi: int) -> None:
    """The levels calls ``[lo, hi)`` of one thread are drawn at when the calls of the
    functions ``hidden`` (bool per function, ``--hide``) are left out and their children
    move up (the static views' rule, `analysis.filters`): ``drawn[i] = drawn[p] +
    (0 if hidden[func[p]] else 1)`` for the parent ``p = parent[i]``, 0 for a root; written
    into ``drawn``, whose entries before ``lo`` are known.  A parent is one level above
    its child (``depth``), so the calls are taken a level at a time: O(calls + levels)
    numpy, however the batch's parents interleave."""
    d = depth[lo:hi]
    if not d.shape[0]:
        return
    order = np.argsort(d, kind="stable")
    calls = lo + order
    cuts = np.flatnonzero(np.diff(d[order])) + 1
    for grp in np.split(calls, cuts):
        p = parent[grp]
        q = np.maximum(p, 0)
        drawn[grp] = np.where(p < 0, 0, drawn[q] + (~hidden[func[q]]).astype(drawn.dtype))


def cpp_group(parsed, name: str) -> str:
    """The colour group of a function without a source file: a C++ name's namespace or class
    (``viz::DisplayScheduler::DrawAndSwap`` → ``viz``, ``RunLoop::Run`` → ``RunLoop``: Chromium's
    traces, whose calls were all grey); '' for the rest (a Python C built-in, free text)."""
    from ..names import parse_function_name

    p = parsed if parsed is not None else parse_function_name(name)
    if p.sep != "::" or len(p.path) < 2:
        return ""
    return p.path[0]


class DrawnDepths:
    """``--hide`` in the live view: per thread, the level each call is drawn at
    (`drawn_depths`, kept as calls arrive); without a hide rule, the calls' depths."""

    def __init__(self, colouring: "LiveColouring"):
        self.colouring = colouring
        self.hiding = bool(colouring.hidden_rule)
        self.drawn: list[np.ndarray] = []

    def new_calls(self, ti: int, T, have: int):
        """The drawn levels of thread ``ti``'s new calls ``[have, T.n)`` (their functions'
        hide flags known: `LiveColouring.slots`), and which of them are hidden (bool per
        new call; None when nothing is hidden)."""
        if not self.hiding:
            return None
        from ..live.store import grow_rows

        while len(self.drawn) <= ti:
            self.drawn.append(np.zeros(64, np.int32))
        self.drawn[ti] = grow_rows(self.drawn[ti], T.n)
        hidden = self.colouring.hidden
        drawn_depths(T.parent, T.func, hidden, T.depth, self.drawn[ti], have, T.n)
        return hidden[T.func[have: T.n]]

    def of(self, ti: int, T) -> np.ndarray:
        """The levels thread ``ti``'s calls (``T``) are drawn at."""
        return self.drawn[ti] if self.hiding else T.depth


class LiveColouring:
    """Colour slot of every function (see the module doc).  Reserved slots are given when a
    function first appears; module colours go to the modules that cover the most area so
    far (`rank`, called at a lower rate than the updates: a box's colour changes only
    when the ranking does, and then every box is written again)."""

    MIN_SHARE = 0.002  # a module below this share of the ranked area stays grey

    def __init__(self, highlight=(), hide=(), hide_modules=()):
        """``highlight``: regular expressions; the calls of functions that match none keep
        no colour (`PALE`, SEAT 2.9.1, as `colour.highlight_colouring`); ``hide`` /
        ``hide_modules``: the functions whose calls are not drawn (`hidden`), by the
        static views' rule (`analysis.filters.name_matcher`)."""
        from ..analysis.filters import name_matcher

        self._highlight = name_matcher(highlight)
        self._hide = name_matcher(hide, hide_modules)
        self.hidden_rule = self._hide is not None
        self.highlight_text = ", ".join(highlight)
        self.pale = np.zeros(0, np.bool_)    # per function: outside the highlight
        self.hidden = np.zeros(0, np.bool_)  # per function: its calls are hidden
        self.rgb = np.zeros((len(SLOT_NAMES), 3), np.float32)
        self.rgb[OTHER], self.rgb[WAIT], self.rgb[INFRA], self.rgb[PALE] = OTHER_RGB, WAIT_RGB, INFRA_RGB, PALE_RGB
        self.func_slot = np.zeros(0, np.int32)
        self.func_module = np.zeros(0, np.int64)   # module id, -1: reserved (infra, C, unknown)
        self.reserved = np.zeros(0, np.int32)      # the function's slot when not a ranked module
        self.modules: list = []                    # module id -> (module, family)
        self._module_id: dict = {}
        self.slot_module: dict = {}                # slot -> module name (legend), in rank order
        self.ranked: tuple = ()                    # module ids given colours, by area
        self.overflow = False                      # modules beyond the budget are grey too
        self.used = np.zeros(len(SLOT_NAMES), np.bool_)

    def _add_functions(self, names, files, lines, parsed=None) -> None:
        k0 = self.func_module.shape[0]
        if len(names) <= k0:
            return
        mod = np.full(len(names) - k0, -1, np.int64)
        res = np.full(len(names) - k0, OTHER, np.int32)
        pale = np.zeros(len(names) - k0, np.bool_)
        hidden = np.zeros(len(names) - k0, np.bool_)
        for j, f in enumerate(range(k0, len(names))):
            module, family, _, display, _, infra = describe_function(names[f], parsed[f] if parsed else None)
            if self._highlight is not None:
                pale[j] = not self._highlight(names[f], display, module)
            if self._hide is not None:
                hidden[j] = self._hide(names[f], display, module)
            if infra:
                res[j] = INFRA
                continue
            if not files[f] and lines[f] < 0:  # no source file: a C built-in, or a C++ name (Chrome)
                module = family = cpp_group(parsed[f] if parsed else None, names[f])
            elif family == "builtins" or module.startswith("<"):
                module = ""
            if module:
                mod[j] = self._module_id.setdefault(module, len(self.modules))
                if mod[j] == len(self.modules):
                    self.modules.append((module, family))
        self.func_module = np.concatenate([self.func_module, mod])
        self.reserved = np.concatenate([self.reserved, res])
        self.pale = np.concatenate([self.pale, pale])
        self.hidden = np.concatenate([self.hidden, hidden])
        self.func_slot = np.concatenate([self.func_slot, self._slot_of_modules(mod, res, pale)])

    def _slot_of_modules(self, mod, res, pale) -> np.ndarray:
        lut = np.full(len(self.modules) + 1, OTHER, np.int32)
        for k, m in enumerate(self.ranked):
            lut[m] = FIRST_MODULE + k
        return np.where(pale, PALE, np.where(mod >= 0, lut[mod], res)).astype(np.int32)

    def slots(self, names, files, lines, parsed=None) -> np.ndarray:
        """The slot of every function of the table (``names``, ``files``, ``lines``; new
        functions are given theirs).  A function without a file and line is a C function:
        "C built-ins" (grey), whatever module it belongs to, unless a C++ name groups it
        (`cpp_group`: its namespace or class).  ``parsed``: the names'
        `names.ParsedName`s when known (saves parsing them again)."""
        self._add_functions(names, files, lines, parsed)
        return self.func_slot

    def rank(self, func_area: np.ndarray) -> np.ndarray:
        """Give the module colours to the modules with the most area (``func_area``: the
        summed box widths, µs, of each function's calls); packages are hue families ranked
        by area, their modules shades in rank order (`colour.family_shade`).  Returns the
        functions whose slot changed (their boxes' colours must be written again)."""
        nm = len(self.modules)
        area = np.zeros(nm, np.float64)
        k = min(func_area.shape[0], self.func_module.shape[0])
        m = self.func_module[:k]
        ok = (m >= 0) & ~self.pale[:k]  # outside a highlight: no colour to give
        if nm:
            area = np.bincount(m[ok], weights=func_area[:k][ok], minlength=nm)
        order = [int(i) for i in np.argsort(-area, kind="stable") if area[i] > self.MIN_SHARE * max(area.sum(), 1e-12)]
        self.overflow = len(order) > N_MODULE_COLOURS
        ranked = tuple(order[:N_MODULE_COLOURS])
        if ranked == self.ranked:
            return np.zeros(0, np.int64)
        self.ranked = ranked
        family_rank: dict = {}
        family_shades: dict = {}
        self.slot_module = {}
        for k, mi in enumerate(ranked):
            module, family = self.modules[mi]
            r = family_rank.setdefault(family, len(family_rank))
            shade = family_shades.get(family, 0)
            family_shades[family] = shade + 1
            # beyond the hue families or the shades: a family's muted "rest" shade
            self.rgb[FIRST_MODULE + k] = family_shade(r, shade if shade < len(SHADES) and r < len(FAMILY_HUES) else -1)
            self.slot_module[FIRST_MODULE + k] = module
        before = self.func_slot
        self.func_slot = self._slot_of_modules(self.func_module, self.reserved, self.pale)
        return np.flatnonzero(before != self.func_slot)

    def legend_rows(self) -> list:
        """(text, slot, kind) rows for `annotate.plan_hud`: the coloured modules by area,
        then the reserved colours in use."""
        rows = [("module", -1, "heading")]
        rows += [(m, s, "swatch") for s, m in self.slot_module.items()]
        if self.used[INFRA]:
            rows.append(("imports, start-up, threads", INFRA, "swatch"))
        if self.used[WAIT]:
            rows.append(("waiting (locks, queues, joins)", WAIT, "swatch"))
        if self.used[OTHER]:
            rows.append(("C built-ins, other modules", OTHER, "swatch"))
        if self.used[PALE]:
            rows.append((f"pale: not matching {self.highlight_text}", PALE, "swatch"))
        return rows if len(rows) > 1 else []
