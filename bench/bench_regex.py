"""User regexes: `tracevis3d.userregex` (our linear-time NFA/lazy DFA) against google-re2 (RE2,
linear time, C++) and Python's `re` (backtracking: the reference for what a pattern means).

    .venv/bin/python bench/bench_regex.py [--names 100000] [--repeat 3]

One table, a row per pattern a user types (``--hide``, ``--highlight``, the panel's search,
filters, kind rules) over a table of ``--names`` function names of the shapes the readers
make (``module.Class.method``, ``func (path/file.py:12)``, C++ and Go symbols, some not
ASCII): compile + search time of each engine as a ratio to `re` (when `re` finishes), and
whether each engine's answers equal `re`'s (``parity``) or how it refuses the pattern.
google-re2 is measured when importable (``pip install google-re2``); otherwise its columns
say so.  The answer to issue 81's question is in docs/performance.md ("User regexes").
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import random
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (pattern, what it stands for); the hostile ones last: `re` is not run on them
PATTERNS = [
    ("parse", "a word"),
    ("Future.result", "a dotted name (the dot unescaped, as typed)"),
    (r"^json\.", "a module prefix"),
    (r"(?i)lock", "any case"),
    (r"queue\.(get|put)$", "alternatives at the end"),
    (r"_(load|dump)s?\b", "a word boundary"),
    (r"[A-Z]\w+Error", "a class and \\w"),
    (r"\w+\.__init__$", "constructors"),
    (r"importlib|_bootstrap", "the import machinery"),
    (r"\d{2,}", "digits"),
    (r"^[a-z_]+\.[a-z_]+$", "a two-part lower-case name"),
    (r"(?i)^(?:std::)?vector<.*>::push_back", "a C++ template member"),
    (r"données|処理", "names not in ASCII"),
    (r"\w+é\w*", "\\w around a non-ASCII letter"),
    (r"(a+)+$", "hostile: nested repeats (re backtracks for ever)"),
    (r"(x+x+)+y", "hostile: nested repeats"),
    (r"(.*a){12}", "hostile: counted repeat of .*"),
    (r"a{1001}", "a counted repeat past RE2's 1000"),
    (r"(\w+)\1", "a backreference (needs backtracking)"),
    (r"foo(?=bar)", "a lookahead (needs backtracking)"),
    (r"end\Z", "Python's \\Z"),
    (r"[[:alpha:]]+x", "a POSIX class (RE2) / a nested set (re)"),
]
HOSTILE = {r"(a+)+$", r"(x+x+)+y", r"(.*a){12}"}


def _userregex():
    """tracevis3d/userregex.py by its path (standard library only: no numba/numpy needed)."""
    spec = importlib.util.spec_from_file_location("tv3d_userregex", os.path.join(REPO, "tracevis3d", "userregex.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def name_table(n: int, seed: int = 7) -> list[str]:
    """``n`` function names of the shapes the readers make (deterministic)."""
    rng = random.Random(seed)
    mods = ["json.decoder", "json.encoder", "importlib._bootstrap", "concurrent.futures._base", "queue",
            "threading", "asyncio.base_events", "numpy.core.fromnumeric", "pandas.core.frame", "sympy.core.expr",
            "docutils.parsers.rst.states", "urllib.parse", "email.feedparser", "re._parser", "données.modèle"]
    classes = ["", "Future", "Queue", "Lock", "JSONDecoder", "Expr", "DataFrame", "RSTState", "ValueError",
               "KeyError", "処理器", "Thread", "Condition"]
    funcs = ["parse", "result", "get", "put", "loads", "dumps", "load", "dump", "__init__", "__exit__", "wait",
             "acquire", "release", "decode", "raw_decode", "_find_and_load", "run", "évaluer", "処理",
             "helper", "visit", "sort", "merge", "apply"]
    cpp = ["std::vector<int, std::allocator<int> >::push_back", "std::__1::basic_string<char>::append",
           "v8::internal::Heap::CollectGarbage", "runtime.mallocgc", "compress/flate.(*compressor).findMatch",
           "main.(*Inventory).largest", "0x7f3a2b1c", "libxul.so+0x7a7702d"]
    out = []
    for i in range(n):
        r = rng.random()
        if r < 0.6:
            cls = rng.choice(classes)
            name = f"{rng.choice(mods)}.{cls + '.' if cls else ''}{rng.choice(funcs)}"
        elif r < 0.85:
            path = rng.choice(mods).replace(".", "/")
            name = f"{rng.choice(funcs)} ({path}.py:{rng.randint(1, 4000)})"
        else:
            name = rng.choice(cpp) + ("" if rng.random() < 0.7 else f"_{i}")
        out.append(name)
    return out


def _timed(fn, repeat: int):
    best, value = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def _run(engine: str, pattern: str, names: list, mods: dict, repeat: int):
    """(seconds, answers or None, refusal text or None) of one engine on one pattern."""
    try:
        if engine == "re":
            import re
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rx = re.compile(pattern)
            return (*_timed(lambda: [rx.search(s) is not None for s in names], repeat), None)
        if engine == "userregex":
            ur = mods["userregex"]
            t, hits = _timed(lambda: [p.search(s) for p in [ur.user_regex(pattern)] for s in names], repeat)
            return t, hits, None
        re2 = mods["re2"]
        opts = re2.Options()
        opts.max_mem = 64 << 20  # RE2's DFA memory bound (then it falls back to the NFA: still linear)
        t, hits = _timed(lambda: [p.search(s) is not None for p in [re2.compile(pattern, opts)] for s in names],
                         repeat)
        return t, hits, None
    except Exception as e:  # a refusal: its first line
        return None, None, f"{type(e).__name__}: {str(e).splitlines()[0][:60]}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--names", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    mods = {"userregex": _userregex()}
    try:
        import re2

        mods["re2"] = re2
    except ImportError:
        pass
    names = name_table(a.names)
    print(f"{len(names):,} names; google-re2: {'yes' if 're2' in mods else 'not installed'}")
    print("| pattern | what | re s | userregex × re | parity | re2 × re | parity |")
    print("|---|---|---|---|---|---|---|")
    for pattern, what in PATTERNS:
        ref_t, ref, ref_err = (None, None, "not run (backtracks)") if pattern in HOSTILE else \
            _run("re", pattern, names, mods, a.repeat)
        cells = [f"`{pattern}`", what, f"{ref_t:.3f}" if ref_t else (ref_err or "")]
        for engine in ("userregex", "re2"):
            if engine not in mods:
                cells += ["—", "not installed"]
                continue
            t, hits, err = _run(engine, pattern, names, mods, 1 if pattern in HOSTILE else a.repeat)
            if err:
                cells += ["refused", err]
                continue
            ratio = f"{t / ref_t:.2f}×" if ref_t else f"{t:.3f} s"
            parity = "—" if ref is None else ("equal" if hits == ref else
                                               f"{sum(x != y for x, y in zip(hits, ref)):,} differ")
            cells += [ratio, parity]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
