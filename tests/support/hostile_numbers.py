"""Hostile files of issue 78 (the reader cases): numbers a reader turns into Python ints or
floats, lanes without a cap, and the two cProfile dumps that hung or blew up.

- **Numbers**: every place a reader reads a number out of file text, written as a huge integer
  (past int64, or 5,000 digits: past Python's 4,300-digit limit of ``int(str)``), in
  non-ASCII digits (superscripts, which ``str.isdigit`` accepts and ``int`` refuses;
  Arabic-Indic and fullwidth, which both accept), or as the largest float: callgrind's
  ``pid:``, yappi's ``name file:line`` suffix, a V8 tick log's ``name file:line:col``, a Gecko
  location's line, GHC's ``total ticks``, speedscope's ``Thread N``, py-spy's ``process N:``
  and ``thread (N)``, Austin's ``P``/``T`` ids.  Each must load (the number left out: no line,
  pid 0...) or give one line naming the file.
- **Lanes**: perf script with 200,000 threads of one event each, speedscope with 100,000
  profiles, Gecko and pprof files of many threads: at most ``Limits.max_lanes_read`` lanes, the
  rest merged into one "other threads" lane, a repair (``lanes_capped``) naming the cap.
- **pstats**: a dump whose root cumulative time is the largest float (the tree fit's bound
  overflowed to infinity and a loop never ended), and code objects nested 13 deep whose
  innermost fails to read (read once per candidate layout per level: 3^13 reads).

``CASES`` is a list of ``(name, factory, expected, options)`` as in hostile_more_formats.py
(``expected``: None, the file loads; a regular expression the one-line `TraceFormatError`
matches; ``("repair", code)``: it loads with that repair).  tests/unit/test_hostile_numbers.py
loads each; tests/support/fuzz_hostile.py draws from them, cut or flipped at random.
"""
from __future__ import annotations

import json
import marshal

#: an integer past int64, one past Python's ``int(str)`` limit of 4,300 digits, and digits that
#: are not ASCII: superscripts (``"²".isdigit()`` but ``int("²")`` fails), Arabic-Indic and
#: fullwidth (``int`` reads both)
HUGE = "9" * 25
HUGE_5000 = "9" * 5000
SUPERSCRIPT = "\u00b9\u00b2"  # ¹²
ARABIC_INDIC = "\u0661\u0662"  # ١٢
FULLWIDTH = "\uff11\uff12"  # １２
NUMBER_SPELLINGS = {"huge": HUGE, "5000": HUGE_5000, "superscript": SUPERSCRIPT, "arabic": ARABIC_INDIC,
                    "fullwidth": FULLWIDTH}


def _j(doc) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


# ----------------------------------------------------------------------------- callgrind (valgrind, yappi)
def callgrind_pid(pid: str) -> bytes:
    return (f"version: 1\ncreator: callgrind-3.22\npid: {pid}\ncmd: prog\npositions: line\nevents: Ir\n\n"
            "fl=(1) /a.c\nfn=(1) main\n1 10\ncfn=(2) work\ncalls=1 5\n2 30\n\nfn=(2)\n5 30\n").encode()


def yappi_line(line: str) -> bytes:
    return ("version: 1\ncreator: yappi 1.6.10\npid: 7\ncmd: prog\nevents: Ticks\n\n"
            f"fl=(1) /a.py\nfn=(1) main /a.py:{line}\n3 10\ncfn=(2) work /a.py:9\ncalls=1 0\n3 30\n\n"
            "fn=(2)\n9 30\n").encode()


# ----------------------------------------------------------------------------- V8 tick log (preprocessed)
def v8log_line(line: str) -> bytes:
    code = [{"name": f"f /app.js:{line}:1", "type": "JS", "kind": "Opt"},
            {"name": "g /app.js:3:7", "type": "JS", "kind": "Opt"}]
    return _j({"code": code, "functions": [], "ticks": [{"tm": 10, "vm": 0, "s": [1, 0, 0, 0]},
                                                         {"tm": 20, "vm": 0, "s": [0, 0]}]})


# ----------------------------------------------------------------------------- Gecko (Firefox's raw profile)
def _gecko(strings, n_threads: int = 1, tid=1) -> dict:
    def thread(k):
        return {"name": f"T{k}", "pid": 1, "tid": tid if k == 0 else k + 1, "processType": "default",
                "stringTable": strings,
                "frameTable": {"schema": {"location": 0, "line": 1}, "data": [[0], [1], [2]]},
                "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[None, 0], [0, 1], [1, 2]]},
                "samples": {"schema": {"stack": 0, "time": 1}, "data": [[2, 0.0], [1, 1.0]]},
                "markers": {"schema": {"name": 0, "startTime": 1}, "data": []}}

    return {"meta": {"version": 27, "interval": 1, "startTime": 1000.0}, "libs": [],
            "threads": [thread(k) for k in range(n_threads)], "processes": []}


def gecko_line(line: str) -> bytes:
    return _j(_gecko(["(root)", f"f (a.js:{line}:1)", f"g (a.js:{line})"]))


def gecko_tid(tid: str) -> bytes:
    return _j(_gecko(["(root)", "f (a.js:1:1)", "g (a.js:5:1)"], tid=tid))


def gecko_nested_threads(n: int) -> bytes:
    """The oldest Gecko files: each content process's profile written as JSON text in ``threads``."""
    inner = json.dumps(_gecko(["(root)", "f (a.js:1:1)", "g (a.js:5:1)"]))
    doc = _gecko([])
    doc["threads"] = [inner] * n
    return _j(doc)


def gecko_threads(n: int) -> bytes:
    return _j(_gecko(["(root)", "f (a.js:1:1)", "g (a.js:5:1)"], n_threads=n))


def processed_threads(n: int) -> bytes:
    """A processed Firefox profile of ``n`` threads (the first one with more samples)."""
    from hostile_profiles import _ff, _ff_thread

    threads = [_ff_thread(tid=k + 1, name=f"T{k}") for k in range(n)]
    threads[0] = _ff_thread(**{"samples.stack": [0, 1, 2, 2, 1], "samples.time": [0.0, 1.0, 2.0, 3.0, 4.0],
                               "samples.length": 5})
    return _ff(*threads)


# ----------------------------------------------------------------------------- GHC reports
_GHC_TREE = ("COST CENTRE MODULE SRC no. entries %time %alloc %time %alloc\n\n"
             "MAIN MAIN <built-in> 1 0 10.0 0.0 100.0 100.0\n main Main a.hs:1:1 2 1 90.0 20.0 90.0 80.0\n")


def ghc_total_ticks(ticks: str) -> bytes:
    return ("\tSat Nov 28 18:00 2026 Time and Allocation Profiling Report  (Final)\n\n\t   p +RTS -p -RTS\n\n"
            f"\ttotal time  =        0.17 secs   ({ticks} ticks @ 1000 us, 1 processor)\n"
            f"\ttotal alloc = {ticks} bytes  (excludes profiling overheads)\n\n" + _GHC_TREE).encode()


def ghc_weight(value: str) -> bytes:
    """A tree row whose individual %time is written in other digits."""
    return ghc_total_ticks("173").replace(b" main Main a.hs:1:1 2 1 90.0", f" main Main a.hs:1:1 2 1 {value}".encode())


def ghc_json_total(value) -> bytes:
    raw = json.dumps({"program": "p", "total_ticks": 0, "tick_interval": 0, "total_alloc": 0,
                      "cost_centres": [{"id": 1, "label": "MAIN", "module": "MAIN", "src_loc": "<built-in>"},
                                       {"id": 2, "label": "f", "module": "Main", "src_loc": "a.hs:1:1"}],
                      "profile": {"id": 1, "ticks": 1, "alloc": 0, "entries": 0, "children": [
                          {"id": 2, "ticks": 5, "alloc": 10, "entries": 1, "children": []}]}})
    for k in ("total_ticks", "tick_interval", "total_alloc"):
        raw = raw.replace(f'"{k}": 0', f'"{k}": {value}')
    return raw.encode()


# ----------------------------------------------------------------------------- speedscope
def _speedscope(names: list) -> dict:
    return {"$schema": "https://www.speedscope.app/file-format-schema.json",
            "shared": {"frames": [{"name": "main", "file": "a.py", "line": 1}, {"name": "work"}]},
            "profiles": [{"type": "sampled", "name": nm, "unit": "seconds", "startValue": 0, "endValue": 2,
                          "samples": [[0, 1], [0]], "weights": [1, 1]} for nm in names]}


def speedscope_thread(tid: str) -> bytes:
    return _j(_speedscope([f'Thread {tid} "MainThread"']))


def speedscope_frame_line(line) -> bytes:
    doc = _speedscope(["p"])
    doc["shared"]["frames"][0]["line"] = line
    return json.dumps(doc).encode()


def speedscope_profiles(n: int) -> bytes:
    return _j(_speedscope([f"Thread {k} \"w{k}\"" for k in range(n)]))


def speedscope_evented_profiles(n: int) -> bytes:
    """``n`` evented profiles of two frames each (read one by one past the cap: 61 s for 10^5)."""
    doc = _speedscope([])
    ev = [{"type": t, "frame": f, "at": a} for t, f, a in (("O", 0, 0), ("O", 1, 1), ("C", 1, 2), ("C", 0, 3))]
    doc["profiles"] = [{"type": "evented", "name": f"p{k}", "unit": "milliseconds", "startValue": 0,
                        "endValue": 10, "events": ev} for k in range(n)]
    return _j(doc)


# ----------------------------------------------------------------------------- collapsed (py-spy, Austin)
def pyspy_process(pid: str) -> bytes:
    return (f'process {pid}:"python prog.py";thread (7): MainThread;main (a.py:1);work (a.py:3) 5\n'
            f'process {pid}:"python prog.py";thread (8);main (a.py:1) 2\n').encode()


def pyspy_thread(tid: str) -> bytes:
    return f"thread ({tid});main (a.py:1);work (a.py:3) 5\nthread (8);main (a.py:1) 2\n".encode()


def austin_ids(pid: str, tid: str, iid: str = "0") -> bytes:
    return ("# austin: 3.7.0\n# interval: 1000\n# mode: wall\n\n"
            f"P{pid};T{iid}:{tid};/a.py:main:1;/a.py:work:3 1000\nP{pid};T{iid}:{tid};/a.py:main:1 500\n").encode()


def pyspy_chrome_line(line: str) -> bytes:
    """py-spy's Chrome trace (``--format chrometrace``): each frame's file and line in its args,
    read after the import (`io.threadnames.locate_pyspy_frames`)."""
    return ('[{"ph":"X","cat":"py-spy","name":"work","ts":0,"dur":10,"pid":1,"tid":1,'
            '"args":{"filename":"a.py","line":' + line + '}}]').encode()


def chrome_v8_profiles(n: int) -> bytes:
    """A Chrome trace of ``n`` V8 CPU profiles (Profile + ProfileChunk events), one per thread,
    profile k sampling 1 + k mod 4 times."""
    def frame(name):
        return {"functionName": name, "url": "file:///a.js", "lineNumber": 1, "columnNumber": 1, "scriptId": "1"}

    nodes = [{"id": 1, "callFrame": dict(frame("(root)"), url="")}, {"id": 2, "parent": 1, "callFrame": frame("main")},
             {"id": 3, "parent": 2, "callFrame": frame("work")}]
    ev = [{"ph": "X", "name": "host", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]
    for k in range(n):
        m = 1 + k % 4
        ev.append({"ph": "P", "name": "Profile", "id": f"0x{k + 1:x}", "pid": 1, "tid": k + 2, "ts": 0,
                   "args": {"data": {"startTime": 0}}})
        ev.append({"ph": "P", "name": "ProfileChunk", "id": f"0x{k + 1:x}", "pid": 1, "tid": k + 2, "ts": 0,
                   "args": {"data": {"cpuProfile": {"nodes": nodes, "samples": [2 + j % 2 for j in range(m + 1)]},
                                     "timeDeltas": [5] * (m + 1)}}})
    return _j({"traceEvents": ev})


# ----------------------------------------------------------------------------- perf script
def perf_threads(n: int) -> bytes:
    """``n`` threads of one event each (one lane each, uncapped: 12.6 s for 200,000)."""
    ev = "prog {tid}  100.{k:06d}:    1000 cpu-clock:\n\t    11ad leaf+0x34 (/p)\n\t    1348 main+0x62 (/p)\n\n"
    return "".join(ev.format(tid=1000 + k, k=k % 1_000_000) for k in range(n)).encode()


def perf_tid(tid: str) -> bytes:
    return (f"prog {tid}  100.000001:    1000 cpu-clock:\n\t    11ad leaf+0x34 (/p)\n\n"
            f"prog 1/{tid}  100.000002:    1000 cpu-clock:\n\t    1348 main+0x62 (/p)\n\n").encode()


# ----------------------------------------------------------------------------- pstats
def _diamond(layers: int, scale: float) -> dict:
    """``layers`` layers of two functions each calling both of the next: 2^layers paths, more
    than the tree's node limit, so the threshold search runs."""
    s = {("d.py", 0, "top"): (1, 1, 0.0, scale, {})}
    for k in range(layers):
        for j in range(2):
            callers = {("d.py", 0, "top"): (1, 1, 0.0, scale / 2)} if k == 0 else \
                {("d.py", k - 1, f"L{k - 1}_{i}"): (1, 1, 0.0, scale / 4) for i in range(2)}
            nc = 2 if k else 1
            s[("d.py", k, f"L{k}_{j}")] = (nc, nc, scale / 2 if k == layers - 1 else 0.0, scale / 2, callers)
    return s


def pstats_largest_float() -> bytes:
    """A diamond whose root's cumulative time is the largest float (hung for ever)."""
    return marshal.dumps(_diamond(24, 1.7976931348623157e308))


def pstats_one_huge_root() -> bytes:
    """One root of 1e300 s beside a normal program: that time is 0 (a repair), the rest loads."""
    return marshal.dumps({("~", 0, "<built-in method builtins.exec>"): (1, 1, 0.0, 1e300, {}),
                          ("m.py", 1, "main"): (1, 1, 0.5, 2.0, {}),
                          ("m.py", 5, "work"): (1, 1, 1.5, 1.5, {("m.py", 1, "main"): (1, 1, 1.5, 1.5)})})


def nested_code_dump(levels: int, break_innermost: bool = True) -> bytes:
    """The ``profile`` module's dump keyed by a script's code object holding functions nested
    ``levels`` deep (this Python's layout); with ``break_innermost`` the innermost code object's
    bytecode is None, which no layout reads (each level was read once per layout, per try of
    the level above: 3^levels reads)."""
    body = "return 1"
    for d in range(levels):
        body = f"def f{d}():\n" + "\n".join("    " + ln for ln in body.splitlines()) + f"\nreturn f{d}"
    code = compile("def top():\n" + "\n".join("    " + ln for ln in body.splitlines()), "p.py", "exec")
    data = marshal.dumps({("profile", 0, "profiler"): (1, 1, 0.0, 0.0, {}),
                          ("p.py", 1, code): (1, 1, 0.5, 0.5, {})})
    if break_innermost:
        i = data.rfind(b"c\x00\x00\x00\x00")  # the innermost code object (no arguments, no locals)
        k = i + 1 + 4 * _int_fields()
        assert data[k] & 0x7F == 0x73, data[k]  # its bytecode: a bytes object
        data = data[:k] + b"N" + data[k + 1:]
    return data


def _int_fields() -> int:
    import sys

    return 6 if (3, 8) <= sys.version_info[:2] < (3, 11) else 5


CASES = [
    # issue 78 case 6: numbers from the file
    *[(f"callgrind_pid_{k}", (lambda v=v: callgrind_pid(v)), None, {}) for k, v in NUMBER_SPELLINGS.items()],
    *[(f"yappi_line_{k}", (lambda v=v: yappi_line(v)), None, {}) for k, v in NUMBER_SPELLINGS.items()],
    *[(f"v8log_line_{k}", (lambda v=v: v8log_line(v)), None, {}) for k, v in NUMBER_SPELLINGS.items()],
    *[(f"gecko_line_{k}", (lambda v=v: gecko_line(v)), None, {}) for k, v in NUMBER_SPELLINGS.items()],
    *[(f"gecko_tid_{k}", (lambda v=v: gecko_tid(v)), None, {}) for k, v in NUMBER_SPELLINGS.items()],
    *[(f"ghc_total_ticks_{k}", (lambda v=v: ghc_total_ticks(v)), None, {}) for k, v in NUMBER_SPELLINGS.items()],
    ("ghc_weight_arabic", lambda: ghc_weight(ARABIC_INDIC), r"line 11: expected numbers", {}),
    ("ghc_weight_fullwidth", lambda: ghc_weight(FULLWIDTH + ".0"), r"line 11: expected numbers", {}),
    *[(f"ghc_json_total_{k}", (lambda v=v: ghc_json_total(v)), None, {})
      for k, v in (("huge", HUGE), ("1e308", "1e308"), ("-1", "-1"))],
    ("ghc_json_total_5000", lambda: ghc_json_total(HUGE_5000), r"not valid JSON|exceeds|past", {}),
    *[(f"speedscope_thread_{k}", (lambda v=v: speedscope_thread(v)), None, {}) for k, v in NUMBER_SPELLINGS.items()],
    *[(f"speedscope_frame_line_{k}", (lambda v=v: speedscope_frame_line(v)), None, {})
      for k, v in (("huge", 10 ** 25), ("negative", -(10 ** 25)), ("float", 1e308))],
    *[(f"pyspy_process_{k}", (lambda v=v: pyspy_process(v)), None, {}) for k, v in NUMBER_SPELLINGS.items()],
    *[(f"collapsed_mangled_{k}", (lambda v=v: f"_ZN3foo{v}barEv;_ZN{v}aE;main 5\n_ZN3foo3barEv 1\n".encode()),
       None, {}) for k, v in NUMBER_SPELLINGS.items()],
    *[(f"pyspy_thread_{k}", (lambda v=v: pyspy_thread(v)), None, {}) for k, v in NUMBER_SPELLINGS.items()],
    *[(f"austin_pid_{k}", (lambda v=v: austin_ids(v, "7")), None, {}) for k, v in NUMBER_SPELLINGS.items()],
    *[(f"austin_tid_{k}", (lambda v=v: austin_ids("7", v)), None, {}) for k, v in NUMBER_SPELLINGS.items()],
    *[(f"austin_iid_{k}", (lambda v=v: austin_ids("7", "8", v)), None, {}) for k, v in NUMBER_SPELLINGS.items()],
    ("austin_tid_hex_5000", lambda: austin_ids("7", "f" * 5000), None, {}),
    *[(f"pyspy_chrome_line_{k}", (lambda v=v: pyspy_chrome_line(v)), None, {})
      for k, v in (("huge", HUGE), ("1e300", "1e300"), ("negative", "-5"), ("string", '"12"'))],
    *[(f"perf_tid_{k}", (lambda v=v: perf_tid(v)), None, {}) for k, v in NUMBER_SPELLINGS.items() if k != "superscript"],
    ("perf_tid_superscript", lambda: perf_tid(SUPERSCRIPT), r"not a trace in any format", {}),
    # issue 78 case 7: lanes
    ("perf_200k_threads", lambda: perf_threads(200_000), ("repair", "lanes_capped"), {}),
    ("speedscope_100k_profiles", lambda: speedscope_profiles(100_000), ("repair", "lanes_capped"), {}),
    ("speedscope_50k_evented_profiles", lambda: speedscope_evented_profiles(50_000), ("repair", "lanes_capped"), {}),
    ("gecko_20k_threads", lambda: gecko_threads(20_000), ("repair", "lanes_capped"), {}),
    ("firefox_processed_20k_threads", lambda: processed_threads(20_000), ("repair", "lanes_capped"), {}),
    ("perf_10_threads_3_lanes", lambda: perf_threads(10), ("repair", "lanes_capped"), {"max_lanes_read": 3}),
    ("speedscope_10_profiles_3_lanes", lambda: speedscope_profiles(10), ("repair", "lanes_capped"), {"max_lanes_read": 3}),
    ("gecko_10_threads_3_lanes", lambda: gecko_threads(10), ("repair", "lanes_capped"), {"max_lanes_read": 3}),
    ("gecko_10_nested_process_threads_3_lanes", lambda: gecko_nested_threads(10), ("repair", "lanes_capped"),
     {"max_lanes_read": 3}),
    ("chrome_v8_10_profiles_3_lanes", lambda: chrome_v8_profiles(10), ("repair", "lanes_capped"), {"max_lanes_read": 3}),
    ("chrome_v8_6000_profiles", lambda: chrome_v8_profiles(6000), ("repair", "lanes_capped"), {}),
    ("pyspy_10_threads_3_lanes", lambda: b"".join(pyspy_thread(str(k)) for k in range(10, 20)),
     ("repair", "collapsed_lanes"), {"max_lanes_read": 3}),
    # issue 78 cases 1 and 3: pstats
    ("pstats_largest_float", pstats_largest_float, r"no function takes time .*past 1e\+15 s", {}),
    ("pstats_one_huge_root", pstats_one_huge_root, ("repair", "pstats_number"), {}),
    ("pstats_nested_code_13_broken", lambda: nested_code_dump(13), r"a code object's code that is a NoneType", {}),
    ("pstats_nested_code_13", lambda: nested_code_dump(13, False), None, {}),
]
