"""Text measurement and shortening for labels (bpy-free).

Widths come from the advance table of Blender's built-in font (`font_metrics`, measured by
tools/measure_font.py), in units of the text size ("em"), so a label fitted here fits the
rendered text object.  Glyphs outside the table count as one em (wide scripts) or the mean
advance.
"""
from __future__ import annotations

from .font_metrics import ADVANCE, ASCENT, CAP_HEIGHT, DEFAULT_ADVANCE, DESCENT  # noqa: F401

ELLIPSIS = "…"
#: the smallest readable remainder of a shortened name (characters after the ellipsis)
MIN_CHARS = 5


def text_width(text: str) -> float:
    """Advance width of ``text`` in em."""
    w = 0.0
    for ch in text:
        a = ADVANCE.get(ch)
        if a is None:
            a = 1.0 if ord(ch) >= 0x2E80 else DEFAULT_ADVANCE
        w += a
    return w


def name_candidates(display: str) -> list:
    """Ways to write a dotted name, most informative first, each shorter than the last.

    ``json.encoder._iterencode_dict`` → [``json.encoder._iterencode_dict``,
    ``…encoder._iterencode_dict``, ``…_iterencode_dict``]: a name is shortened from the
    left, at dots, so what remains is its informative end (the function), never its start.
    """
    parts = display.split(".")
    out = [display]
    # keep dotted pieces together when a piece is empty (e.g. '..' in odd names)
    for k in range(1, len(parts)):
        tail = ".".join(parts[k:])
        if tail and not tail.startswith("<"):
            out.append(ELLIPSIS + tail)
    return out


def fit_text(candidates, width_em: float) -> str:
    """The first candidate whose width is at most ``width_em``; else the last one cut from
    the left to fit (``…code_dict``), or "" when fewer than `MIN_CHARS` characters fit."""
    if not candidates:
        return ""
    for c in candidates:
        if text_width(c) <= width_em:
            return c
    last = candidates[-1]
    core = last[1:] if last.startswith(ELLIPSIS) else last
    if core.startswith("__") and core.endswith("__"):
        return ""  # a cut dunder (``…nit__``) says nothing
    room = width_em - text_width(ELLIPSIS)
    w = 0.0
    k = len(core)
    while k > 0:
        a = text_width(core[k - 1])
        if w + a > room:
            break
        w += a
        k -= 1
    kept = core[k:]
    if len(kept) < MIN_CHARS:
        return ""
    return ELLIPSIS + kept
