"""Hostile function names for the name parser and the demangler (issue 67, part 5).

`HOSTILE_NAMES` lists ``(label, name, check)``: a name built to cost a naive reader
super-linear time, unbounded recursion or memory (10^5-character mangled names, templates
nested ten thousand deep, unbalanced brackets, substitutions that double the text at each
step, Rust back-references that do the same), and ``check(parsed)``, which says whether
the `tracevis3d.names.ParsedName` parsed from it is sane: a string function part no
longer than the input allows, a display that keeps the function's end.  Every name must
parse without raising and in bounded time (a few milliseconds; tests/test_names_languages.py
parses them all, the fuzzer of tests/support/fuzz_hostile.py may time them).
"""
from __future__ import annotations

_B36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _seq(k: int) -> str:
    """The Itanium substitution ``S_``, ``S0_``, … of the k-th candidate."""
    if k == 0:
        return "S_"
    k -= 1
    digits = ""
    while True:
        digits = _B36[k % 36] + digits
        k //= 36
        if not k:
            break
    return f"S{digits}_"


def doubling_substitutions(levels: int) -> str:
    """``f(A<int, int>, B<A<…>, A<…>>, C<B<…>, B<…>>, …)``: each parameter names the last one
    twice by substitution, so the readable text doubles at every level."""
    params = ["1AIiiE"]
    for k in range(1, levels):
        letter = _B36[10 + k % 26] * (1 + k // 26)
        prev = _seq(2 * k - 2 + 1)  # the previous level's template (its name is candidate 2k-2)
        params.append(f"{len(letter)}{letter}I{prev}{prev}E")
    return "_Z1f" + "".join(params)


def pointer_chain(n: int) -> str:
    """``f(int*, int**, int***, …)`` by substitution: a type ``n`` levels deep from a short name."""
    return "_Z1fPi" + "".join("P" + _seq(k) for k in range(n))


def nested_templates(depth: int) -> str:
    """``f<a<a<…<int>…>>>()`` mangled: ``depth`` nested template argument lists."""
    return "_Z1fI" + "1aI" * depth + "i" + "E" * depth + "Evv"


def rust_doubling(levels: int) -> str:
    """A Rust v0 path whose generic arguments name the previous path twice by back-reference."""
    s = "NvC1a1b"
    body = s
    for _ in range(levels):
        body = f"I{body}B0_B0_E"
    return "_R" + body


def _long_parts(sep: str, n: int) -> str:
    return sep.join("p" for _ in range(n))


def _ok_text(limit: int):
    def check(p) -> bool:
        return isinstance(p.function, str) and isinstance(p.display, str) and len(p.display) <= limit
    return check


def _keeps(end: str, limit: int):
    def check(p) -> bool:
        return _ok_text(limit)(p) and p.display.endswith(end)
    return check


N = 100_000
HOSTILE_NAMES = [
    ("mangled nested name, 10^5 chars", "_ZN" + "1a" * (N // 2) + "Ev", _ok_text(N + 10)),
    ("mangled source name longer than the name", "_Z99999999a", _ok_text(20)),
    ("rust legacy path, 10^5 chars", "_ZN" + "1a" * (N // 2) + "17h0123456789abcdefE", _ok_text(N + 30)),
    ("rust v0 path, 10^5 chars", "_RNv" + "Nv" * (N // 4) + "C1a" + "1b" * (N // 4), _ok_text(N + 10)),
    ("templates nested 10^4 deep, mangled", nested_templates(10_000), _ok_text(10 * N)),
    ("templates nested 150 deep, mangled", nested_templates(150), _ok_text(10 * N)),
    ("doubling substitutions", doubling_substitutions(40), _ok_text(10 * N)),
    ("pointer chain by substitution", pointer_chain(1200), _ok_text(10 * N)),
    ("rust back-references doubling", rust_doubling(40), _ok_text(10 * N)),
    ("template parameter naming itself", "_Z1fIT_EvT_", _ok_text(40)),
    ("substitution past the table", "_Z1fS9999_", _ok_text(40)),
    ("text templates nested 4000 deep", "f" + "<a" * 4000 + ">" * 4000 + "()", _keeps("f", N)),
    ("unbalanced opening brackets", "ns::Cls::method" + "<" * N, _ok_text(2 * N)),
    ("unbalanced closing brackets", ">" * N + "ns::Cls::method", _keeps("method", 2 * N)),
    ("unbalanced parentheses", "(" * N + "fn", _ok_text(2 * N)),
    ("closing parentheses", "fn" + ")" * N, _ok_text(2 * N)),
    ("operator< storm", "std::operator" + "<" * N + "(int)", _ok_text(2 * N)),
    ("10^5 scopes", _long_parts("::", N // 3) + "::last", _keeps("last", 2 * N)),
    ("10^5 dots", _long_parts(".", N // 2) + ".last", _keeps("last", 2 * N)),
    ("10^5 slashes (a Go package path)", _long_parts("/", N // 2) + ".(*T).Serve", _keeps("Serve", 2 * N)),
    ("JavaScript location 10^5 chars", "fn (" + "x" * N + ".js:1:2)", _keeps("fn", 10)),
    ("Hermes location 10^5 chars", "fn(http://" + "h" * N + ":1:9)", _keeps("fn", 10)),
    ("Ruby anonymous classes nested", "#<" * 5000 + "Class:0x1" + ">" * 5000 + "#m", _ok_text(2 * N)),
    ("Java descriptor 10^5 chars", "L" + "a/" * (N // 2) + "B;.m(" + "I" * 1000 + ")V", _keeps("m", 2 * N)),
    ("lambda braces unbalanced", "ns::f()::{lambda(" * 2000 + "int", _ok_text(2 * N)),
    ("clone suffixes", "_Z3foov" + ".isra.0" * 5000, _ok_text(2 * N)),
    ("a single character repeated", "a" * N, _ok_text(N)),
    ("NUL and control characters", "\x00\x01_Z3foov\x7f", _ok_text(40)),
    ("lone surrogates", "f\udcff\ud800::g", _ok_text(40)),
]
