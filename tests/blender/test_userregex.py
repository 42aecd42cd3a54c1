"""User regexes in linear time (tracevis3d/userregex.py, issue 20): a brute-force twin against
Python's re on random patterns and texts, the refusals (one line naming the pattern), the
catastrophic patterns answered, and every user-pattern entry point routed through it."""
import random
import re

import numpy as np
import pytest

from tracevis3d import userregex
from tracevis3d.userregex import user_regex

ALPHABET = "aAb_1 \n.-"


def random_pattern(rng: random.Random, depth: int = 0) -> str:
    """A small random pattern over ALPHABET: literals, classes, escapes, anchors, groups,
    alternation and every kind of repeat."""
    r = rng.random()
    if depth > 3 or r < 0.3:
        return rng.choice(["a", "b", "A", "_", "1", " ", ".", r"\.", r"\n", r"\d", r"\w", r"\s", r"\W",
                           "[ab]", "[^a]", "[a-b1]", r"[\d_]", "[^ \n]", "^", "$", r"\b", r"\B", r"\A", r"\Z"])
    if r < 0.55:
        return "".join(random_pattern(rng, depth + 1) for _ in range(rng.randint(2, 3)))
    if r < 0.7:
        return "(" + "|".join(random_pattern(rng, depth + 1) for _ in range(rng.randint(2, 3))) + ")"
    q = rng.choice(["*", "+", "?", "*?", "+?", "??", "{2}", "{1,3}", "{0,2}?", "{2,}"])
    return "(?:" + random_pattern(rng, depth + 1) + ")" + q


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 10)))


@pytest.mark.parametrize("flags", ["", "(?i)", "(?m)", "(?s)", "(?a)", "(?ims)"])
def test_twin_against_python_re(flags):
    rng = random.Random(hash(flags) & 0xFFFF)
    checked = 0
    for _ in range(400):
        pat = flags + random_pattern(rng)
        rx = re.compile(pat)
        up = user_regex(pat)
        for _ in range(12):
            text = random_text(rng)
            assert up.search(text) == bool(rx.search(text)), (pat, text)
            checked += 1
    assert checked == 400 * 12


def test_twin_on_real_looking_names():
    names = ["numpy.core._methods._sum (/usr/lib/python3.11/site-packages/numpy/core/_methods.py:48)",
             "<built-in method acquire of _thread.lock object at 0x7f>", "Foo::bar<int>(int) const",
             "ThreadPoolExecutor-0_0", "main", "", "a\nb", "ſ K é É ß"]
    pats = [r"numpy\.", r"^_?sum", r"(?i)THREAD", r"acquire|release", r"\bbar\b", r"\d+\)$", r"[^\x00-\x7f]",
            r"(?i)é", r"^$", r"b$", r"(?m)^b", r"lock.*0x[0-9a-f]+", r"(\w+)::\w+<", r"\s{2,}"]
    for p in pats:
        up, rx = user_regex(p), re.compile(p)
        for s in names:
            assert up.search(s) == bool(rx.search(s)), (p, s)


def test_catastrophic_patterns_answer():
    """(a+)+$ and friends: exponential for re, linear here (no timing: they return)."""
    text = "a" * 30 + "b"
    expected = {r"(a+)+$": False, r"(a|a)*$": True, r"(a|aa)+$": False, r"(\w+\s?)*$": True,
                r"(.*a){12}$": False, r"^(a?){30}a{30}$": False, r"(a+)+b": True}
    for p, want in expected.items():
        assert user_regex(p).search(text) is want, p
    assert user_regex(r"^(a?){30}a{30}$").search("a" * 30) is True


def test_refusals_are_one_line_naming_the_pattern():
    for p, why in [(r"(a)\1", "backreferences"), (r"(?P<x>a)(?P=x)", "backreferences"),
                   (r"(a)?(?(1)b|c)", "backreferences"), (r"(?=a)", "lookahead"), (r"(?<!a)b", "lookahead"),
                   (r"(?>a+)", "atomic"), (r"a++", "possessive"), (r"(a{1000}){1000}", "automaton states"),
                   ("(", "bad regular expression"), ("x" * 20_000, "longer than")]:
        with pytest.raises(ValueError) as e:
            user_regex(p, "--hide")
        msg = str(e.value)
        assert "\n" not in msg and msg.startswith("--hide: ") and why in msg, msg
        assert repr(p[:40]) in msg or repr(p[:40])[:-1] in msg


def test_work_budget_refuses_instead_of_running_long(monkeypatch):
    """A pattern whose DFA keeps missing its cache is refused once its budget is spent."""
    monkeypatch.setattr(userregex, "WORK_BUDGET", 20_000)
    up = userregex.UserPattern(r"(a|b)*a(a|b){12}", "search", budget=20_000)
    rng = random.Random(1)
    with pytest.raises(ValueError, match=r"^search: regular expression .* is refused: it needs more than 20000"):
        for _ in range(1000):
            up.search("".join(rng.choice("ab") for _ in range(60)))


def test_entry_points_use_it():
    """--hide/--highlight parameters, the function mask (filters, search) and kind rules all
    refuse a backtracking-only pattern and answer a catastrophic one."""
    from tracevis3d.analysis.filters import function_mask
    from tracevis3d.analysis.search import search_calls
    from tracevis3d.kinds import classify_functions
    from tracevis3d.params.icicle import IcicleParams
    from tree_factory import random_trace

    t = random_trace(n_roots=3, fanout=2, max_depth=2, threads=1, seed=2, n_func=4)
    t.function_names[0] = "a" * 30 + "b"
    assert not function_mask(t, [r"(a+)+$"])[0]
    assert function_mask(t, [r"(a+)+b$"])[0]
    assert search_calls(t, r"(a+)+$").size == 0
    for bad in (lambda: function_mask(t, [r"(a)\1"]), lambda: search_calls(t, r"(?=a)"),
                lambda: IcicleParams(hide=[r"(a)\1"]).validate(),
                lambda: classify_functions(["x"], [(1, r"(?<=a)b")])):
        with pytest.raises(ValueError, match="refused"):
            bad()
    from tracevis3d.cli import main

    assert main(["render-icicle", "x.json", "--hide", r"(?<=a)b"]) == 2  # refused by the argument parser
    kinds = classify_functions(["a" * 30 + "b", "lock"], [(3, r"(a+)+$"), (2, r"lock")])
    assert list(kinds) == [0, 2]
    assert np.asarray(kinds).dtype == np.uint8


def test_required_literals_are_in_every_match_and_prefilter():
    """`required_literals`: literals one of which every match holds; a name without any is
    answered without the automaton (and without spending the work budget)."""
    cases = {r"Future\.result": (("Future.result",),), r"queue\.(get|put)$": (("queue.",), ("get", "put")),
             r"^json\.": (("json.",),), r"[A-Z]\w+Error": (("Error",),), r"(?i)lock": (("lock",),),
             r"(?i)list": (("l",), ("t",)), r"(?i)Sort": (("ort",),), r"a|b\d": (("a", "b"),), r"ab*c": (("a",), ("c",)),
             r"x(?i:Y)z": (("x",), ("z",)), r"(?x) f o o \d": (("foo",),), r"(ab)+": (("ab",),),
             r"(ab)*c": (("c",),), r"\d+": (), r"importlib|_bootstrap": (("importlib", "_bootstrap"),),
             r"x|\d": (), r"(?i)(Tree|Node)\.": (("tree", "node"), (".",)),
             r"(a+)+$X": (("a",), ("X",))}
    for pat, want in cases.items():
        up = user_regex(pat)
        assert (((up.literal,),) if up.literal is not None else up.required) == want, (pat, up.required)
    assert user_regex("ſ").literal == "ſ"
    up = user_regex(r"(a+)+$X")
    budget = up.budget
    assert not up.search("a" * 5000)  # no "X": no step, no work spent
    assert up.budget == budget
    assert user_regex(r"(?i)K\d").search("\u212a1") and user_regex(r"(?i)(ab|cd)e").search("CDE")
    rng = random.Random(5)
    for flags in ("", "(?i)"):
        for _ in range(300):  # the twin: prefiltered answers equal re's
            pat = flags + "ab" + random_pattern(rng) + "(b.|A_)"
            rx, up = re.compile(pat), user_regex(pat)
            for _ in range(8):
                text = random_text(rng) + rng.choice(["", "ab", "AB1b.", "b.", "Ab A_"])
                assert up.search(text) == bool(rx.search(text)), (pat, text)
