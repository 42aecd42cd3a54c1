"""Names of the profilers met late (no recordings here: tests/realtraces/test_third_party_profilers.py
loads the real files): Xdebug's PHP names, Austin's ``file:qualname:line`` frames and its
``P``/``T`` lane frames and header in collapsed stacks, yappi's ``name file:line`` in callgrind."""
from __future__ import annotations

import pytest

from tracevis3d.io import load_bytes
from tracevis3d.io.collapsed import load_collapsed
from tracevis3d.model import TraceFormatError
from tracevis3d.names import parse_function_name
from tracevis3d.naming import describe_function

pytestmark = pytest.mark.timeout(120)

# (name, file, module, path, the figures' name, short)
PHP = [
    ("php::strlen", "php:internal", "php", ("php", "strlen"), "php::strlen", "strlen"),
    ("php::DateTime->format", "php:internal", "php", ("php", "DateTime", "format"), "php::DateTime->format",
     "format"),
    ("Inventory->add", "/srv/app/php_work.php", "php_work", ("php_work", "Inventory", "add"), "Inventory->add", "add"),
    ("Rectangle::make", "/srv/app/shapes.php", "shapes", ("shapes", "Rectangle", "make"), "Rectangle::make", "make"),
    ("App\\Models\\User->save", "/srv/app/src/Models/User.php", "App\\Models", ("App", "Models", "User", "save"),
     "App\\Models\\User->save", "save"),
    ("{main}", "/srv/app/index.php", "index", ("index", "{main}"), "{main}", "{main}"),
    ("{closure:/srv/app/php_work.php:76-78}", "/srv/app/php_work.php", "php_work",
     ("php_work", "{closure:php_work.php:76-78}"), "{closure:php_work.php:76-78}", "{closure:php_work.php:76-78}"),
    ("Inventory->{closure:/srv/app/php_work.php:56-58}", "/srv/app/php_work.php", "php_work",
     ("php_work", "Inventory", "{closure:php_work.php:56-58}"), "Inventory->{closure:php_work.php:56-58}",
     "{closure:php_work.php:56-58}"),
    ("require_once::/srv/app/lib/shapes.php", "/srv/app/lib/shapes.php", "shapes",
     ("shapes", "require_once::shapes.php"), "require_once::shapes.php", "require_once::shapes.php"),
    ("fib", "C:\\www\\fib.php", "fib", ("fib", "fib"), "fib", "fib"),
    ("{main}", "/usr/local/bin/composer", "composer", ("composer", "{main}"), "{main}", "{main}"),  # a PHP script
]


@pytest.mark.parametrize("name, file, module, path, display, short", PHP, ids=[r[0] for r in PHP])
def test_php_names_as_xdebug_writes_them(name, file, module, path, display, short):
    p = parse_function_name(name, file=file)
    assert (p.lang, p.module, p.path) == ("php", module, path)
    got = describe_function(name, p)
    assert (got[3], got[4]) == (display, short)


def test_a_name_without_a_php_file_is_not_read_as_php():
    assert parse_function_name("php::strlen").lang != "php"  # a C++-like scoped name, no file said
    assert parse_function_name("Foo::bar", file="/src/foo.cc").lang == "c++"
    assert parse_function_name("main", file="/src/prog.c").lang != "php"
    assert parse_function_name("php::Array::get", file="/src/php/array.cc").lang == "c++"


# (Austin 3 frame, module, qualname, line, the figures' name)
AUSTIN = [
    ("/srv/app/pkg/mod.py:Worker.run:57", "mod", "Worker.run", 57, "mod.Worker.run"),
    ("<frozen importlib._bootstrap>:_find_and_load:1176", "importlib._bootstrap", "_find_and_load", 1176,
     "importlib._bootstrap._find_and_load"),
    ("/usr/lib/python3.11/threading.py:Thread._bootstrap_inner:1045", "threading", "Thread._bootstrap_inner", 1045,
     "threading.Thread._bootstrap_inner"),
    ("/srv/app/mod.py:main.<locals>.<listcomp>:62", "mod", "main.<locals>.<listcomp>", 62, "mod.main.<listcomp>"),
]


@pytest.mark.parametrize("name, module, qual, line, display", AUSTIN, ids=[r[0] for r in AUSTIN])
def test_austin_frames_are_python_names(name, module, qual, line, display):
    p = parse_function_name(name)
    assert (p.lang, p.module.rsplit(".", 1)[-1] if module == "mod" else p.module, p.qualname, p.line) == \
        ("python", module, qual, line)
    assert describe_function(name, p)[3].endswith(display)


AUSTIN_TEXT = b"""# austin: 3.7.0
# interval: 1000
# mode: wall

P42;T0:42;/a/m.py:<module>:1;/a/m.py:main:5 300
P42;T0:42;/a/m.py:<module>:1 20
P42;T0:43;/usr/lib/python3.11/threading.py:Thread._bootstrap:995;/a/m.py:work:9 500
P42;T0:43 7


# duration: 1000

"""


def test_austin_header_lanes_and_unit():
    t = load_bytes(AUSTIN_TEXT, source="austin.txt", warn=False)
    assert t.meta["x_unit"] == "µs"
    assert t.meta["collapsed_header"] == {"austin": "3.7.0", "interval": "1000", "mode": "wall", "duration": "1000"}
    assert not t.meta.get("repairs")  # the header and trailer are no stacks and no bad lines
    assert sorted(t.thread_names) == ["thread 42", "thread 43"]
    assert sorted(t.thread_tid.tolist()) == [42, 43] and set(t.thread_pid.tolist()) == {42}
    used = {t.function_names[f] for f in set(t.func.tolist())}
    assert not any(n.startswith(("P42", "T0:", "#")) for n in used)
    roots = t.parent < 0
    assert sorted(t.duration[roots].tolist()) == [320.0, 500.0]


def test_austin_memory_mode_frees_are_a_repair_not_bad_lines():
    text = AUSTIN_TEXT.replace(b"mode: wall", b"mode: memory").replace(b" 20\n", b" -20\n")
    with pytest.warns(Warning, match="collapsed_freed"):
        t = load_bytes(text, source="austin.txt")
    assert t.meta["x_unit"] == "bytes"
    assert t.meta["repairs"]["collapsed_freed"]["count"] == 1 and "collapsed_line" not in t.meta["repairs"]
    assert t.meta["total_weight"] == 800.0


def test_austin_older_thread_frames_and_a_bad_line_keep_its_line_number():
    text = b"# austin: 2.1.1\n# mode: cpu\nP7;T7f3a2b4c5700;/a/m.py:main:5 10\nP7;T7f3a2b4c5700;/a/m.py:f:6 x\n"
    with pytest.warns(Warning, match=r"collapsed_line \(first: line 4\)"):
        t = load_bytes(text, source="austin.txt")
    assert t.thread_names == ["thread 7f3a2b4c5700"] and int(t.thread_tid[0]) == 0x7f3a2b4c5700
    assert t.meta["x_unit"] == "µs"


def test_a_file_of_austin_header_only_is_refused_in_one_line():
    with pytest.raises(TraceFormatError, match=r"^austin\.txt: it holds only Austin's '#' header, not a collap") as e:
        load_collapsed(b"# austin: 3.7.0\n# mode: wall\n\n# duration: 5\n", source="austin.txt", warn=False)
    assert "\n" not in str(e.value)


def test_other_collapsed_files_keep_their_hash_lines_as_lines():
    with pytest.warns(Warning, match=r"collapsed_line \(first: line 1\)"):
        t = load_bytes(b"# a comment\na;b 3\n", source="x.txt")
    assert t.meta["x_unit"] == "samples" and "collapsed_header" not in t.meta


YAPPI = b"""version: 1
creator: yappi
pid: 1
cmd:  prog.py
part: 1

events: Ticks
fl=(1) /a/prog.py
fl=(2) /a/prog.py
fn=(1) main /a/prog.py:3
fn=(2) work /a/prog.py:9

fl=(1)
fn=(1)
3 100
cfl=(2)
cfn=(2)
calls=2 0
0 900

fl=(2)
fn=(2)
9 400
"""


def test_yappi_names_lines_and_blocked_time():
    t = load_bytes(YAPPI, source="y.callgrind", warn=False)
    assert t.meta["x_unit"] == "µs"
    assert [t.name(i) for i in range(len(t))] == ["main", "work"]
    assert t.function_lines[t.function_names.index("work")] == 9
    # the call line says 900 µs, work's own lines 400: work is shown as its call (900)
    assert t.duration.tolist() == [1000.0, 900.0]
