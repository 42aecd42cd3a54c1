"""Text measurement and shortening for labels (bpy-free).

Widths come from the advance table of Blender's built-in font (`font_metrics`, measured by
tools/measure_font.py), in units of the text size ("em"), so a label fitted here fits the
rendered text object.  Glyphs outside the table count as one em (wide scripts) or the mean
advance.
"""
from __future__ import annotations

import functools
import re

from ..names import fold_cpp_templates, is_script, is_url, split_line_col, strip_cpp_arguments
from ..naming import location_label, name_separators
from .font_metrics import ADVANCE, ASCENT, CAP_HEIGHT, DEFAULT_ADVANCE, DESCENT  # noqa: F401

ELLIPSIS = "…"
_PACKED = re.compile(r"^\d[\d,]*× ")  # a shared lane's name: "6× process_request_thread"
#: a name cut at a word boundary keeps a last word at least this long (or two words)
MIN_WORD = 6
#: no form of a name is longer: a longer one loses its location, arguments and templates
#: first, then what is left is cut at a separator to its last MAX_NAME characters
MAX_NAME = 240


def text_width(text: str) -> float:
    """Advance width of ``text`` in em (short texts, the labels' candidates measured again
    by every candidate figure and legend plan, from a bounded cache)."""
    return _cached_width(text) if len(text) <= CACHED_WIDTH_CHARS else _width(text)


#: texts up to this long are measured once (`text_width`'s cache holds at most 2^14 of them)
CACHED_WIDTH_CHARS = 256


@functools.lru_cache(maxsize=1 << 14)
def _cached_width(text: str) -> float:
    return _width(text)


def _width(text: str) -> float:
    w = 0.0
    for ch in text:
        a = ADVANCE.get(ch)
        if a is None:
            a = 1.0 if ord(ch) >= 0x2E80 else DEFAULT_ADVANCE
        w += a
    return w


_WORD_CUT = re.compile(r"(?<=[a-z0-9])_(?=[A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: a location at a name's end: ``fn (file:12:3)``, ``fn (url:1:9)``, ``fn(url:1:9)``
_FILE_LIKE = re.compile(r"[/\\]|\.[A-Za-z][\w+]{0,5}$|^<[^<>]+>$|^self-hosted$")
_WORD_LOCATION = re.compile(r"^[A-Za-z][\w.@-]*$")  # a script named by one word (Node's "loader")


def split_location(text: str):
    """(function, file, line) of a name that ends in its location (``render (app.js:12:3)``,
    Hermes' ``fn(http://host/index.bundle:1:9)``, VizTracer's ``fib (/src/mod.py:6)``), else
    None: free text in parentheses (``Memcpy DtoD (Device -> Device)``) is no location."""
    if not text.endswith(")"):
        return None
    k = text.rfind("(")
    if k <= 0 or ")" in text[k:-1]:
        return None
    head, loc = text[:k], text[k + 1:-1]
    if " -> " in loc:
        loc = loc.rsplit(" -> ", 1)[1]
    f, line = split_line_col(loc)
    f = f.strip()
    if not f or not head.strip():
        return None
    if not (is_script(f) or _FILE_LIKE.search(f) or (line >= 0 and " " not in f) or _WORD_LOCATION.match(f)):
        return None
    if not head.endswith(" ") and not is_url(f):  # no blank before "(": arguments, unless a URL (Hermes)
        return None
    return head.rstrip(), f, line


def has_qualifier(form: str) -> bool:
    """Whether a form of a name (`name_candidates`) says more than the function's bare name:
    a scope, package or class before it (``…encoder._iterencode_dict``, ``…Heap::Scavenge``,
    ``…Read#read_attribute``) or its location (``render (app.js)``)."""
    body = form[1:] if form.startswith(ELLIPSIS) else form
    return bool(name_separators(body)) or split_location(body) is not None


def name_candidates(display: str) -> list:
    """Ways to write a function's name, most informative first, each shorter than the last;
    every one keeps the function's own name whole, but the last resort of cutting that from
    its start at word boundaries.

    ``json.encoder._iterencode_dict`` → [``json.encoder._iterencode_dict``,
    ``…encoder._iterencode_dict``, ``…_iterencode_dict``]: a name is shortened from the
    left, at its separators (``.``, ``::``, a package path's ``/``, Ruby's ``#``, never inside
    brackets), so what remains is its informative end (the function), never its start.
    Before that, what the function is not: its location (``render (app.js:12)`` →
    ``render (app.js)`` → ``render``; a URL becomes its file's base name), its arguments
    and clone suffixes (``ns::f(int) const [clone .cold]`` → ``ns::f``) and its template
    arguments (``std::vector<int, std::allocator<int> >::push_back`` → ``std::vector<…>::push_back``
    → ``…vector<…>::push_back`` → ``…push_back``).  A long last part is then cut at word
    boundaries (``…shortest_path_basic``, ``…path_basic``), keeping a final word of at least
    `MIN_WORD` characters or two words; a dunder is one word (``__build_class__``)."""
    out = []

    def add(form: str):
        if form and len(form) <= MAX_NAME + 1 and (not out or len(form) < len(out[-1])):
            out.append(form)

    if len(display) <= MAX_NAME:
        out.append(display)
    s = display
    loc = split_location(s)
    if loc is not None:
        head, f, line = loc
        if line >= 0:
            add(f"{head} ({location_label(f, line)})")
        add(f"{head} ({location_label(f)})")
        s = head
        add(s)
    s = strip_cpp_arguments(s)
    add(s)
    s = fold_cpp_templates(s)
    add(s)
    if len(s) > MAX_NAME:  # names are data: a hostile one must not cost quadratic time
        s = s[-MAX_NAME - 64:]
        cut = next((p + n for p, n in name_separators(s) if len(s) - p - n <= MAX_NAME), None)
        s = ELLIPSIS + (s[cut:] if cut is not None else s[-MAX_NAME:])
        add(s)
    body = s[1:] if s.startswith(ELLIPSIS) else s
    seps = name_separators(body)
    for p, n in seps:
        tail = body[p + n:]
        if tail and not tail.startswith("<"):
            add(ELLIPSIS + tail)
    last = body[seps[-1][0] + seps[-1][1]:] if seps else body
    if (last.startswith("__") and last.endswith("__")) or last[:1] in "{<(~":
        return out  # a dunder is one word (``__build_class__``, never ``…class__``); a lambda, an operator
    cuts = [m.end() if m.group(0) == "_" else m.start() for m in _WORD_CUT.finditer(last)]
    for c in cuts:
        rest = last[c:]
        if len(rest) >= MIN_WORD or _WORD_CUT.search(rest):
            add(ELLIPSIS + rest)
    return out


#: a run of digits long enough to be an id rather than a number ("tf_XLAEigen/2914633416442290764")
_LONG_DIGITS = re.compile(r"\d{7,}")


def _short_digits(name: str) -> str:
    """``name`` with each run of 7 or more digits cut to its first and last two
    ("tf_XLAEigen/2914633416442290764" → "tf_XLAEigen/29…64"): an id, whose ends still tell
    the threads of a pool apart, where the words say what the thread is."""
    return _LONG_DIGITS.sub(lambda m: m.group(0)[:2] + ELLIPSIS + m.group(0)[-2:], name)


#: the number `Trace.thread_name_counts` gives one of several processes of one name ("Renderer #2")
_PROCESS_NUMBER = re.compile(r" (#\d+)$")


def thread_name_candidates(name: str) -> tuple:
    """Ways to write a thread's name (`Trace.thread_label`), most informative first: whole,
    then, when its process is one of several of that name, with only that process's number
    ("Renderer #2: CrRendererMain (JS)" → "#2: CrRendererMain (JS)": two renderers' main threads
    read alike without it), then without its process ("MainProcess: Thread-1 (_handle_workers)"
    → "Thread-1 (_handle_workers)"), then each with its long ids shortened (`_short_digits`: JAX's
    "tf_PjRtCompilerThreadPool/7864021877501028789" → "tf_PjRtCompilerThreadPool/78…89"; cut
    in its middle it lost its words); a thread's name is no dotted function name, and its end
    alone ("…workers)") says nothing.  Cut (`fit_lane_name`) when none fits."""
    head, sep, rest = name.partition(": ")
    out = (name, rest) if sep and rest else (name,)
    numbered = _PROCESS_NUMBER.search(head) if sep and rest else None
    if numbered:  # one of several processes of that name: its number tells its thread from theirs
        out = (name, f"{numbered.group(1)}: {rest}", rest)
    short = tuple(dict.fromkeys(_short_digits(c) for c in out if _LONG_DIGITS.search(c)))
    return out + short


def fit_thread_label(name: str, width_em: float) -> str:
    """A thread's name as a short label in ``width_em`` ('' when even its id does not fit): the
    first of `thread_name_candidates` that fits, else its words up to the first that carries a
    number, ids shortened ("thread 3113936 (python3.8)" → "thread 31…36", "Thread-1 (worker)"
    → "Thread-1": what tells it from its siblings), else it cut at its end (a name without a
    number: "ThreadPoolForegr…"); a shared lane's "238× process_request_thread" is cut at its
    end ("238× process_re…", never the bare count "238×")."""
    for c in thread_name_candidates(name):
        if text_width(c) <= width_em:
            return c
    if _PACKED.match(name):  # "5000× handle": the count is no id, what the threads run must show
        count = name.split(" ", 1)[0]
        cut = cut_end(name, width_em)
        return cut if len(cut) >= len(count) + 4 else ""  # the count and three letters at least
    words = _short_digits(name).split(" ")
    for k in range(1, len(words) + 1):
        if any(ch.isdigit() for ch in words[k - 1]):
            head = " ".join(words[:k])
            return head if text_width(head) <= width_em else ""
    return cut_end(name, width_em)


def cut_thread_name(name: str, width_em: float) -> str:
    """A thread's name cut to ``width_em`` where it keeps what tells it from its siblings: in
    its middle when its last word carries a number ("ThreadPoolFor…oundWorker #4",
    "ThreadPoolEx…or-0_3"), else at its end ("Thread-1 (_hand…": the number leads)."""
    last = name.rsplit(" ", 1)[-1]
    return cut_middle(name, width_em) if any(ch.isdigit() for ch in last) else cut_end(name, width_em)


def fit_lane_name(name: str, width_em: float) -> str:
    """A lane's name in ``width_em`` label sizes: the first of `thread_name_candidates` that
    fits ("MainProcess: ThreadPoolExecutor-0_3" → "ThreadPoolExecutor-0_3"), else the shortest
    of them cut in its middle, keeping its end: threads of one program differ in their last
    characters ("ThreadPoolEx…or-0_3"; cut at its end, four lanes would read the same).  A
    shared lane's name ("6× process_request_thread", `select.packed_name_of`) is cut at its
    end: its count and what its threads run come first."""
    cands = thread_name_candidates(name)
    for c in cands:
        if text_width(c) <= width_em:
            return c
    if _PACKED.match(cands[-1]):  # "6× process_request_thread": what they run, from its start
        return cut_end(cands[-1], width_em)
    return cut_middle(cands[-1], width_em)


def cut_middle(text: str, width_em: float) -> str:
    """``text`` with an ellipsis in place of its middle, to fit ``width_em``: as much of its
    start as of its end (by width), at least its last character."""
    if text_width(text) <= width_em:
        return text
    adv = [ADVANCE.get(ch, 1.0 if ord(ch) >= 0x2E80 else DEFAULT_ADVANCE) for ch in text]
    room = max(width_em - text_width(ELLIPSIS), 0.0)
    head, used = 0, 0.0
    while head < len(text) - 1 and used + adv[head] <= 0.5 * room:
        used += adv[head]
        head += 1
    tail = len(text)
    while tail - 1 > head and used + adv[tail - 1] <= room:
        used += adv[tail - 1]
        tail -= 1
    tail = min(tail, len(text) - 1)  # at least the last character
    return text[:head].rstrip() + ELLIPSIS + text[tail:]


def cut_end(text: str, width_em: float) -> str:
    """``text`` cut at its end with an ellipsis to fit ``width_em`` (titles, legend notes).

    Linear in the text: one pass of advances, then a binary search on their running sum."""
    if text_width(text) <= width_em:
        return text
    adv = [ADVANCE.get(ch, 1.0 if ord(ch) >= 0x2E80 else DEFAULT_ADVANCE) for ch in text]
    room = width_em - text_width(ELLIPSIS)
    total, k = 0.0, 0
    for a in adv:  # one pass
        if total + a > room:
            break
        total += a
        k += 1
    return text[:k].rstrip(" ·") + ELLIPSIS


def fit_text(candidates, width_em: float) -> str:
    """The first candidate whose width is at most ``width_em``, else "" (no label).

    Names are never cut inside a word: `name_candidates` already offers every shorter
    form worth showing (``…encoder._iterencode_dict``, ``…path_basic``), so a box too
    narrow for the shortest one gets no label rather than ``_call…`` or ``…nit__``."""
    for c in candidates:
        if text_width(c) <= width_em:
            return c
    return ""
