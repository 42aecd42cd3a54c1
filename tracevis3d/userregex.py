"""Regular expressions typed by a user (``--hide``, ``--highlight``, the panel's search,
filters, kind rules), matched in time linear in the text.

Python's `re` backtracks: ``(a+)+$`` over 30 ``a`` and a ``b`` takes longer than the
universe, and nothing can interrupt it (it holds the GIL; on Blender's main thread the
interface freezes).  So a user pattern is parsed by Python's own parser (same syntax, same
errors as `re`), compiled to a Thompson NFA (Thompson 1968; Cox, "Regular Expression
Matching Can Be Simple And Fast", 2007) and searched by simulating the NFA as a lazily
built DFA: each character costs one dictionary look-up once its transition is known, and
at most one NFA step (O(states)) when it is not, whatever the pattern.

Supported: everything `re` accepts except what needs backtracking -- backreferences
(``\\1``, ``(?P=name)``, ``(?(1)..)``), lookaround (``(?=``, ``(?!``, ``(?<=``, ``(?<!``),
atomic groups and possessive repeats -- which are refused with one line naming the
pattern.  Flags i, m, s, a, x (global or scoped; ``a`` only global) behave as in `re`
(case folding is `str.lower`/`str.upper`, as `re` does for all but a few special
characters).  Counted repeats expand, so an automaton of more than `MAX_NFA_STATES`
states is refused; each compiled pattern has a work budget (`WORK_BUDGET` NFA steps over
all the texts it is asked about) so that no pattern over any name table runs more than a
few seconds: past it, the search stops with a one-line refusal.  ``search`` answers
whether `re.search` would find a match (a bool: callers only filter).
"""
from __future__ import annotations

import re

try:  # Python >= 3.11
    from re import _constants as _c
    from re import _parser as _sre_parse
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as _c
    import sre_parse as _sre_parse

__all__ = ["UserPattern", "user_regex", "check_user_regex", "MAX_NFA_STATES", "WORK_BUDGET", "MAX_PATTERN_CHARS"]

#: NFA states a pattern may compile to (counted repeats expand: ``a{1000}`` is 1000)
MAX_NFA_STATES = 20_000
#: NFA state visits one compiled pattern may spend over all its searches (~10 s of CPython)
WORK_BUDGET = 50_000_000
#: characters of a user pattern
MAX_PATTERN_CHARS = 10_000
#: DFA states kept before the cache is cleared (memory bound; the work stays linear)
MAX_DFA_STATES = 10_000

_I, _M, _S, _A = (re.IGNORECASE.value, re.MULTILINE.value, re.DOTALL.value, re.ASCII.value)
_CHAR, _SPLIT, _ASSERT, _MATCH, _EPS = range(5)
# character categories around a position (assertions look at them)
_START, _END, _NL_LAST, _NL, _WORD, _OTHER = range(6)


class _Refused(Exception):
    pass


def _ascii_word(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


def _uni_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _category_test(cat, ascii_only: bool):
    C = _c
    if cat in (C.CATEGORY_DIGIT, C.CATEGORY_NOT_DIGIT):
        f = (lambda ch: "0" <= ch <= "9") if ascii_only else str.isdecimal
    elif cat in (C.CATEGORY_SPACE, C.CATEGORY_NOT_SPACE):
        f = (lambda ch: ch in " \t\n\r\f\v") if ascii_only else str.isspace
    elif cat in (C.CATEGORY_WORD, C.CATEGORY_NOT_WORD):
        f = _ascii_word if ascii_only else _uni_word
    else:
        raise _Refused(f"the character category {cat} is not supported")
    if cat in (C.CATEGORY_NOT_DIGIT, C.CATEGORY_NOT_SPACE, C.CATEGORY_NOT_WORD):
        return lambda ch: not f(ch)
    return f


def _fold(ch: str, icase: bool, ascii_only: bool) -> tuple:
    if not icase:
        return (ch,)
    if ascii_only and not ch.isascii():
        return (ch,)
    return (ch, ch.lower(), ch.upper())


class _Builder:
    """Thompson construction: fragments (start, list of dangling (state, slot)) over
    parallel lists ``kind``, ``arg``, ``out1``, ``out2``."""

    def __init__(self, ascii_only: bool):
        self.kind, self.arg, self.out1, self.out2 = [], [], [], []
        self.ascii_only = ascii_only

    def state(self, kind, arg=None) -> int:
        if len(self.kind) >= MAX_NFA_STATES:
            raise _Refused(f"it compiles to more than {MAX_NFA_STATES} automaton states (counted "
                           f"repeats expand: use fewer or smaller {{m,n}})")
        self.kind.append(kind)
        self.arg.append(arg)
        self.out1.append(-1)
        self.out2.append(-1)
        return len(self.kind) - 1

    def patch(self, dangling, target):
        for s, slot in dangling:
            (self.out1 if slot == 1 else self.out2)[s] = target

    def char(self, test):
        s = self.state(_CHAR, test)
        return s, [(s, 1)]

    def empty(self):
        s = self.state(_EPS)
        return s, [(s, 1)]

    def seq(self, items, flags):
        frag = None
        for op, av in items:
            f = self.atom(op, av, flags)
            if frag is None:
                frag = f
            else:
                self.patch(frag[1], f[0])
                frag = (frag[0], f[1])
        return frag if frag is not None else self.empty()

    def atom(self, op, av, flags):
        C = _c
        icase = bool(flags & _I)
        asc = self.ascii_only
        if op is C.LITERAL or op is C.NOT_LITERAL:
            forms = frozenset(_fold(chr(av), icase, asc))
            if op is C.LITERAL:
                return self.char(lambda ch, forms=forms: any(v in forms for v in _fold(ch, icase, asc)))
            return self.char(lambda ch, forms=forms: not any(v in forms for v in _fold(ch, icase, asc)))
        if op is C.ANY:
            return self.char((lambda ch: True) if flags & _S else (lambda ch: ch != "\n"))
        if op is C.IN:
            return self.char(self._class(av, icase))
        if op is C.BRANCH:
            alts = [self.seq(a, flags) for a in av[1]]
            start = alts[0][0]
            dangling = list(alts[0][1])
            for a_start, a_dang in alts[1:]:
                s = self.state(_SPLIT)
                self.out1[s], self.out2[s] = start, a_start
                start = s
                dangling += a_dang
            return start, dangling
        if op is C.SUBPATTERN:
            _gid, add, sub, p = av
            if (add | sub) & (_A | re.LOCALE.value | re.UNICODE.value):
                raise _Refused("a scoped a/L/u flag is not supported (put it at the start)")
            return self.seq(p, (flags | add) & ~sub)
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):  # laziness does not change whether a match exists
            lo, hi, p = av
            return self.repeat(lo, hi, p, flags)
        if op is C.AT:
            return self._at(av, flags)
        if op in (C.GROUPREF, C.GROUPREF_EXISTS):
            raise _Refused("backreferences need backtracking")
        if op in (C.ASSERT, C.ASSERT_NOT):
            raise _Refused("lookahead and lookbehind need backtracking")
        if op in (getattr(C, "ATOMIC_GROUP", None), getattr(C, "POSSESSIVE_REPEAT", None)):
            raise _Refused("atomic groups and possessive repeats need backtracking")
        raise _Refused(f"{op} is not supported")

    def repeat(self, lo, hi, p, flags):
        unbounded = hi is _c.MAXREPEAT or hi >= int(_c.MAXREPEAT)
        if lo > MAX_NFA_STATES or (not unbounded and hi > MAX_NFA_STATES):
            raise _Refused(f"a repeat count over {MAX_NFA_STATES}")
        frag = None

        def append(f):
            nonlocal frag
            if frag is None:
                frag = f
            else:
                self.patch(frag[1], f[0])
                frag = (frag[0], f[1])

        for _ in range(lo):
            append(self.seq(p, flags))
        if unbounded:
            body = self.seq(p, flags)
            s = self.state(_SPLIT)
            self.out1[s] = body[0]
            self.patch(body[1], s)
            append((s, [(s, 2)]))
        else:
            for _ in range(hi - lo):  # each optional copy: skip it, or take it
                body = self.seq(p, flags)
                s = self.state(_SPLIT)
                self.out1[s] = body[0]
                append((s, body[1] + [(s, 2)]))
        return frag if frag is not None else self.empty()

    def _class(self, items, icase):
        C = _c
        asc = self.ascii_only
        negate = False
        singles, ranges, cats = set(), [], []
        for op, av in items:
            if op is C.NEGATE:
                negate = True
            elif op is C.LITERAL:
                singles.add(chr(av))
            elif op is C.RANGE:
                ranges.append((chr(av[0]), chr(av[1])))
            elif op is C.CATEGORY:
                cats.append(_category_test(av, asc))
            else:
                raise _Refused(f"{op} in a character class is not supported")
        singles = frozenset(singles)

        def member(ch):
            for v in _fold(ch, icase, asc):
                if v in singles or any(a <= v <= b for a, b in ranges):
                    return True
            return any(t(ch) for t in cats)
        return (lambda ch: not member(ch)) if negate else member

    def _at(self, code, flags):
        C = _c
        m = bool(flags & _M)
        if code is C.AT_BEGINNING:
            test = (lambda p, n: p == _START or p == _NL) if m else (lambda p, n: p == _START)
        elif code is C.AT_BEGINNING_STRING:
            test = lambda p, n: p == _START  # noqa: E731
        elif code is C.AT_END:
            test = (lambda p, n: n in (_END, _NL_LAST, _NL)) if m else (lambda p, n: n in (_END, _NL_LAST))
        elif code is C.AT_END_STRING:
            test = lambda p, n: n == _END  # noqa: E731
        elif code is C.AT_BOUNDARY:
            test = lambda p, n: (p == _WORD) != (n == _WORD)  # noqa: E731
        elif code is C.AT_NON_BOUNDARY:  # re: never in an empty string
            test = lambda p, n: (p == _WORD) == (n == _WORD) and not (p == _START and n == _END)  # noqa: E731
        else:
            raise _Refused(f"the assertion {code} is not supported")
        s = self.state(_ASSERT, test)
        return s, [(s, 1)]


class UserPattern:
    """A user's pattern compiled for linear-time search (module docstring)."""

    def __init__(self, pattern: str, what: str = "pattern", budget: int = WORK_BUDGET):
        self.pattern, self.what, self.budget = pattern, what, budget
        self.literal, self.required = None, ()
        try:
            parsed = _sre_parse.parse(pattern)
        except re.error as e:
            raise ValueError(f"{what}: bad regular expression {pattern!r}: {e}") from None
        flags = parsed.state.flags
        if not (flags & ~re.UNICODE.value) and all(op is _c.LITERAL for op, _ in parsed):
            self.literal = "".join(chr(av) for _, av in parsed)
            return
        self.required = required_literals(parsed, flags)
        self._lower = bool(flags & _I)
        b = _Builder(bool(flags & _A))
        try:
            start, dangling = b.seq(list(parsed), flags)
            b.patch(dangling, b.state(_MATCH))
        except _Refused as e:
            raise ValueError(f"{what}: regular expression {pattern!r} is refused: {e}") from None
        self._word = _ascii_word if flags & _A else _uni_word
        self.kind, self.arg, self.out1, self.out2 = b.kind, b.arg, b.out1, b.out2
        self.start = start
        self._reset_cache()

    def _reset_cache(self):
        self._ids: dict = {}
        self._sets: list = []
        self._trans: list = []  # per DFA state: {char: next id or -1 (a match)}
        self._ends: list = []  # per DFA state: {next category: matched?}

    def _cat(self, ch: str, last: bool) -> int:
        if ch == "\n":
            return _NL_LAST if last else _NL
        return _WORD if self._word(ch) else _OTHER

    def _dfa(self, nfa_set: frozenset, prev: int) -> int:
        key = (nfa_set, prev)
        d = self._ids.get(key)
        if d is None:
            if len(self._sets) >= MAX_DFA_STATES:
                self._reset_cache()
            d = len(self._sets)
            self._ids[key] = d
            self._sets.append(key)
            self._trans.append({})
            self._ends.append({})
        return d

    def _closure(self, nfa_set, prev: int, nxt: int):
        """NFA states reachable without consuming from ``nfa_set`` + the start state (a search
        may begin anywhere), between a character of category ``prev`` and one of ``nxt``;
        None when the match state is among them."""
        kind, arg, out1, out2 = self.kind, self.arg, self.out1, self.out2
        seen = set()
        todo = [self.start, *nfa_set]
        chars = []
        while todo:
            s = todo.pop()
            if s < 0 or s in seen:
                continue
            seen.add(s)
            k = kind[s]
            if k == _CHAR:
                chars.append(s)
            elif k == _MATCH:
                return None, len(seen)
            elif k == _SPLIT:
                todo.append(out2[s])
                todo.append(out1[s])
            elif k == _EPS:
                todo.append(out1[s])
            elif arg[s](prev, nxt):  # assertion
                todo.append(out1[s])
        return chars, len(seen)

    def _charge(self, work: int):
        self.budget -= work
        if self.budget < 0:
            raise ValueError(f"{self.what}: regular expression {self.pattern!r} is refused: it needs more "
                             f"than {WORK_BUDGET} automaton steps over these names; simplify it")

    def _step(self, d: int, ch: str, last: bool) -> int:
        nfa_set, prev = self._sets[d]
        cat = self._cat(ch, last)
        chars, work = self._closure(nfa_set, prev, cat)
        self._charge(work + 1)
        if chars is None:
            return -1
        arg, out1 = self.arg, self.out1
        nxt = frozenset(out1[s] for s in chars if arg[s](ch))
        return self._dfa(nxt, _NL if cat == _NL_LAST else cat)

    def search(self, text: str) -> bool:
        """Whether ``re.search(pattern, text)`` finds a match."""
        if self.literal is not None:
            return self.literal in text
        if self.required:  # every match meets them (`required_literals`): no step needed if not
            hay = text.lower() if self._lower else text
            for need in self.required:
                if not any(x in hay for x in need):
                    return False
        d = self._dfa(frozenset(), _START)
        n = len(text)
        self._charge(n)
        for i, ch in enumerate(text):
            last = i == n - 1
            if last and ch == "\n":
                nd = self._step(d, ch, True)  # "$" before a final newline: not cached with "\n"
            else:
                trans = self._trans[d]
                nd = trans.get(ch)
                if nd is None:
                    nd = self._step(d, ch, False)
                    if d < len(self._trans) and self._trans[d] is trans:
                        trans[ch] = nd
            if nd < 0:
                return True
            d = nd
        ends = self._ends[d]
        hit = ends.get(_END)
        if hit is None:
            nfa_set, prev = self._sets[d]
            chars, work = self._closure(nfa_set, prev, _END)
            self._charge(work)
            hit = ends[_END] = chars is None
        return hit


_FOLDS_BEYOND_LOWER = frozenset("iIsS")  # re._casefix: ı, İ fold to i and ſ to s under IGNORECASE


def _needed(items, icase: bool) -> list:
    """Conditions every match of the concatenation ``items`` meets: tuples of literals, one of
    each tuple in the match (`required_literals`)."""
    conds, run = [], []
    for op, av in list(items) + [(None, None)]:
        if op is _c.LITERAL and not (icase and (av > 127 or chr(av) in _FOLDS_BEYOND_LOWER)):
            run.append(chr(av).lower() if icase else chr(av))
            continue
        if run:
            conds.append(("".join(run),))
            run = []
        if op is _c.SUBPATTERN and not av[1] and not av[2]:  # a group without scoped flags
            conds += _needed(av[3], icase)
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and av[0] >= 1:  # repeated at least once
            conds += _needed(av[2], icase)
        elif op is _c.BRANCH:
            alts = [_needed(alt, icase) for alt in av[1]]
            if all(alts):  # one literal of the best condition of each alternative
                conds.append(tuple(dict.fromkeys(x for a in alts for x in max(a, key=_strength))))
    return conds


def _strength(cond: tuple) -> tuple:
    return (min(map(len, cond)), -len(cond))


def required_literals(parsed, flags: int, most: int = 3) -> tuple:
    """Conditions every match of ``parsed`` meets, strongest first (at most ``most``): each a
    tuple of literals one of which is in the match (() when none is known).

    The pattern's top level is a concatenation, so a run of consecutive literals in it (or
    in a group in it, or in a part repeated at least once) is in every match, and one of
    the literals of each alternative of an alternation is.  A name that fails a condition
    cannot match: searching a table of names, `UserPattern.search` skips the automaton for
    those (C-speed ``in``s, as RE2 and Hyperscan prefilter by required literals).  Under
    IGNORECASE only ASCII letters other than ``i`` and ``s`` are kept in the runs: every
    character `re` folds to one of those lower-cases to it (``re._casefix`` adds only
    ``ı``/``İ`` to ``i`` and ``ſ`` to ``s``), and the search looks in ``text.lower()``."""
    conds = _needed(parsed, bool(flags & _I))
    conds = sorted(dict.fromkeys(conds), key=_strength, reverse=True)
    return tuple(conds[:most])


def user_regex(pattern: str, what: str = "pattern") -> UserPattern:
    """``pattern`` compiled for `UserPattern.search`; a ValueError of one line naming
    ``what`` and the pattern when it is bad, too long or needs backtracking."""
    if not isinstance(pattern, str):
        raise ValueError(f"{what}: a regular expression must be text, got {type(pattern).__name__}")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(f"{what}: regular expression {pattern[:40]!r}... is refused: longer than "
                         f"{MAX_PATTERN_CHARS} characters")
    return UserPattern(pattern, what)


def check_user_regex(pattern: str, what: str = "pattern") -> str:
    """``pattern`` when `user_regex` accepts it (raises its ValueError otherwise)."""
    user_regex(pattern, what)
    return pattern
