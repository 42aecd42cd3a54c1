"""The quick reading of plain scoped names (``names._plain_scoped``, what most frames of
collapsed stacks and perf profiles are) against the general rules (``names._parse_general``):
the same `ParsedName` for every name, whichever of the two reads it."""
from __future__ import annotations

import itertools
import random

import pytest

from tracevis3d import names
from tracevis3d.names import parse_function_name

SEGMENTS = ["std", "v8", "internal", "Heap", "heap", "Scavenge", "locale", "classic", "Foo", "~Foo", "foo", "core",
            "alloc", "ptr", "drop_in_place", "_Z3foov", "_ZN3foo3barEv", "_R", "__Z", "__R", "operator", "operator_x",
            "h0123456789abcdef", "org/apache/http/Pool0", "java/util/HashMap", "a/b", "A1", "é", "Ünï", "x_1",
            "_private", "__init__", "a1b", "run_3", "invoke_0", "thread", "string", "Pool", "pool", "~pool", "L",
            "block", "nn", "Main", "GHC", "Data", "do_syscall_64", "__libc_start_main", "main", "_start"]
#: names near the plain shape that the general rules must read (each misses the quick path somewhere)
NEAR = ["std::vector<int>::push_back", "Foo::bar(int)", "a::b::operator()", "a:::b", "a::b::", "::a", "a::b c",
        "a.b::c", "Foo::Bar::h0123456789abcdef", "core::ptr::drop_in_place", "alloc::vec::Vec::push",
        "_ZN3foo3barEv", "__ZN3foo3barEv", "java/util/HashMap.get", "org/x::a.b", "$mod func", "a::b+0x1f",
        "Lcom/x/Y;.m", "Foo#bar", "Foo::bar#baz", "thread (7): MainThread", "a::~~b", "a::1b", "1a::b", "a/b::c/d",
        "", " ", "x", "X", "_", "é::ü", "std::locale::classic", "std::string::size", "Heap::Heap", "Heap::~Heap",
        "heap::heap", "heap::~heap", "v8::internal::Heap::Scavenge", "operator", "operator_new::x"]


def _same(name: str, line: int = -1):
    got = parse_function_name(name, line=line)
    want = names._parse_general(name, "", line)
    assert got == want, (name, got, want)


@pytest.mark.parametrize("name", NEAR + SEGMENTS)
def test_near_names_read_as_the_general_rules_read_them(name):
    _same(name)
    _same(name, 12)


def test_every_pair_and_triple_of_segments():
    for k in (1, 2, 3):
        for combo in itertools.product(SEGMENTS, repeat=k) if k < 3 else itertools.islice(
                itertools.product(SEGMENTS, repeat=3), 0, None, 7):
            _same("::".join(combo))


def test_random_scoped_names():
    rng = random.Random(67)
    alphabet = "abcXYZ_~/019é:.<> ("
    for _ in range(20000):
        if rng.random() < 0.5:
            name = "::".join(rng.choice(SEGMENTS) for _ in range(rng.randint(1, 6)))
        else:
            name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
        _same(name)


def test_the_quick_path_takes_the_plain_names():
    """Most frames of native profiles are read without trying each dialect in turn."""
    for name in ("v8::internal::Heap::Scavenge", "org/apache/http/Pool0::invoke_0", "do_syscall_64", "std::Pool3::run_3"):
        assert names._plain_scoped(name, -1) is not None
    for name in ("core::ptr::drop_in_place", "_ZN3foo3barEv", "a::operator_x", "Foo::bar(int)", "a.b"):
        assert names._plain_scoped(name, -1) is None
    p = parse_function_name("v8::internal::Heap::Scavenge")
    assert (p.module, p.qualname, p.function, p.path) == ("v8::internal", "Heap::Scavenge", "Scavenge",
                                                          ("v8", "internal", "Heap", "Scavenge"))


def test_the_list_wide_paths_are_the_quick_path_s():
    """`names.plain_scoped_paths` gives a path exactly where `_plain_scoped` reads the name, and
    that path; the builder's function tables (io/stacks.py) equal a name-by-name parse."""
    import numpy as np

    from tracevis3d.io.stacks import FrameTable, _function_tables

    rng = random.Random(68)
    alphabet = "abcXYZ_~/019é:.<> ("
    pool = NEAR + SEGMENTS + ["::".join(c) for c in itertools.product(SEGMENTS, repeat=2)]
    pool += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14))) for _ in range(5000)]
    pool += ["a" * (names.MAX_PARSED_CHARS + 1), "a::" * 6000 + "b"]
    got = names.plain_scoped_paths(pool)
    for name, path in zip(pool, got):
        quick = names._plain_scoped(name, -1) if len(name) <= names.MAX_PARSED_CHARS else None
        assert (path is None) == (quick is None), name
        if path is not None:
            assert path == parse_function_name(name).path, name
    ft = FrameTable()
    ft.names = pool
    ft.files = [rng.choice(["", "", "a.cpp", "/x/y.py", "lib.rs"]) for _ in pool]
    ft.lines = [rng.choice([-1, 0, 7]) for _ in pool]
    tables = _function_tables(ft, True, None, "sample")
    want = [parse_function_name(n, file=f, line=ln) for n, f, ln in zip(ft.names + ["(unknown frame)"],
                                                                        ft.files + [""], ft.lines + [-1])]
    assert tables["function_paths"] == [p.path for p in want]
    assert tables["function_files"] == [p.file or f for p, f in zip(want, ft.files + [""])]
    assert np.array_equal(tables["function_lines"],
                          [p.line if p.line >= 0 else ln for p, ln in zip(want, ft.lines + [-1])])
