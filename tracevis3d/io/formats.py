"""The one table of trace formats: what each is, how it is recognised, what reads and writes it.

`FORMATS` lists every format TraceVis3D knows, in the order they are tried.  Each
`Format` says how its files are recognised from their first bytes (after a wrapper is
opened: gzip is a wrapper, not a format, `CONTAINERS`), which function loads it (a
``"module:function"`` path in `tracevis3d.io`, imported only when a file of that
format is loaded, so this table and the sniffers stay free of numba), which function
reads the memory it records (`Format.memory`: memray captures, Chrome's memory-infra dumps),
which writes it, and a tiny valid file of it (`Format.sample`, for the warm-up and the tests).
A format that is recognised but not read has no loader and a ``why_not``: a file of it is
refused with one line naming the format and what to do.  Magic bytes are written here only.

`tracevis3d.load`, `tracevis3d.io.load`, `tracevis3d.io.load_memory`, the quick check before
any job (`tracevis3d.io.sniff.check_trace_file`), the CLI (``tracevis3d formats``), the
warm-up (`tracevis3d.warmup_formats`) and the panel's file filter all read this table; wrappers
are opened in one place, `tracevis3d.io.containers`.

A loader is called as ``loader(data, source=..., limits=..., **options)``: ``data`` is
the file's bytes (any buffer; a wrapper already opened), ``source`` the name that errors
give, ``limits`` a `tracevis3d.io.limits.Limits`.  ``options`` are the ones every
loader takes (`COMMON_OPTIONS`; a format that has no use for one ignores it) and the
format's own (`Format.options`).  It returns a `tracevis3d.model.Trace` whose
``meta["format"]`` is the format's key, and raises `TraceFormatError` naming the
file, the position and the problem.  A memory reader (`Format.memory`) has the same
signature and returns a `tracevis3d.io.memray_capture.MemoryCapture`.

Sniffers get a `Head`: the first `HEAD_BYTES` of the (inflated) file.  They must be
cheap (pure Python on at most those bytes) and must not accept a file of another
format: the order of the table resolves only true ambiguities (every JSON object
that no other JSON format claims is a Chrome trace, which says what is missing).

Over 600 lines: one table, its sniffers beside it -- the order of the rows and what each
sniffer must not accept are read together, so adding a format is one place to read.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import Callable

from ..views import registry_entry

__all__ = ["Format", "Head", "FORMATS", "COMMON_OPTIONS", "detect", "by_key", "loader_of", "writer_of", "writer_for",
           "file_filter", "describe_formats", "HEAD_BYTES", "ZIP_MAGIC", "GZIP_MAGIC", "COMPACT_MAGIC", "MEMRAY_MAGIC",
           "LZ4_MAGIC", "Container", "CONTAINERS", "container_of", "in_place_format", "fallback", "reader_options",
           "resolve", "samples", "IN_PLACE_HEAD_BYTES"]

#: bytes of a file the sniffers see (after gzip); large enough for the JSON formats whose
#: telling keys come after a long first value (a Gecko profile's ``libs``, DevTools' ``metadata``)
HEAD_BYTES = 1 << 20

#: bytes of a JSON head whose top-level keys are looked for (a tokenizer in Python: ~1 µs a token)
KEY_SCAN_BYTES = 96 << 10

#: options every loader accepts (a format with no use for one ignores it)
COMMON_OPTIONS = frozenset(("keep_args", "kind_rules", "overlap", "warn"))

_BOM = b"\xef\xbb\xbf"
_WS = b" \t\r\n"
#: the magic bytes of the binary wrappers and files, written here only (the readers import them):
#: a zip (the native file is one), gzip (opened before sniffing), the compact file's header, a
#: memray capture's and the LZ4 frame memray compresses it in by default
ZIP_MAGIC = b"PK\x03\x04"
GZIP_MAGIC = b"\x1f\x8b"
COMPACT_MAGIC = b"\x89TV3D-CTF\r\n\n"
MEMRAY_MAGIC = b"memray"
LZ4_MAGIC = b"\x04\x22\x4d\x18"
#: bytes of a file's start that tell whether it is read in place (`in_place_format`)
IN_PLACE_HEAD_BYTES = 4096
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]:,]')


class Head:
    """The first bytes of a file (gzip inflated), with what several sniffers ask of them
    computed once: the first character after a byte order mark and white space, the keys of
    a JSON object's top level (in order, as far as the head reaches), the first text lines."""

    def __init__(self, data, whole: bool = False, name: str = ""):
        self.data = bytes(data[:HEAD_BYTES])
        #: these bytes are the whole file
        self.whole = bool(whole)
        #: the file's name ('' when unknown): a sniffer never decides by it alone
        self.name = name or ""
        self._keys = None
        self._lines = None
        self._text = None

    @property
    def first(self) -> bytes:
        """The first byte after a UTF-8 BOM and white space (b'' when there is none)."""
        s = self.data[3:] if self.data.startswith(_BOM) else self.data
        s = s[:4096].lstrip(_WS)
        return s[:1]

    def starts_json_object(self) -> bool:
        return self.first == b"{"

    @property
    def json_keys(self) -> list:
        """The keys of the top-level JSON object, in order, as far as the first `KEY_SCAN_BYTES`
        hold them ([] when the head does not start a JSON object).  A tokenizer (strings and
        punctuation, by one regular expression) tracking the nesting: values are skipped."""
        if self._keys is None:
            keys: list = []
            if self.starts_json_object():
                depth = 0
                expect_key = False
                for m in _JSON_TOKEN.finditer(self.data, 0, KEY_SCAN_BYTES):
                    tok = m.group()
                    c = tok[:1]
                    if c in (b"{", b"["):
                        depth += 1
                        expect_key = c == b"{" and depth == 1
                    elif c in (b"}", b"]"):
                        depth -= 1
                        if depth <= 0:
                            break
                    elif c == b",":
                        expect_key = depth == 1
                    elif c == b'"' and expect_key and depth == 1:
                        keys.append(tok[1:-1].decode("utf-8", "replace"))
                        expect_key = False
                        if len(keys) >= 256 or keys[-1] == "traceEvents":  # a Chrome trace: its events
                            break  # follow, no other format has that key
            self._keys = keys
        return self._keys

    @property
    def text(self) -> str:
        """The head as text: UTF-16 decoded where it has a byte order mark, else UTF-8
        (undecodable bytes replaced)."""
        if self._text is None:
            d = self.data
            if d.startswith((b"\xff\xfe", b"\xfe\xff")) and not d.startswith(b"\xff\xfe\x00\x00"):
                self._text = d[: len(d) // 2 * 2].decode("utf-16", "replace")
            else:
                self._text = (d[3:] if d.startswith(_BOM) else d).decode("utf-8", "replace")
        return self._text

    def lines(self, n: int = 64) -> list:
        """The first ``n`` complete lines of `text` (a last line cut by the head's end is left
        out unless the head is the whole file), without their line ends."""
        if self._lines is None:
            t = self.text
            cut = len(t) if self.whole else t.rfind("\n") + 1
            self._lines = t[:cut].splitlines()[:4096]
        return self._lines[:n]

    def content_lines(self, n: int = 32) -> list:
        """The first ``n`` lines that are neither empty nor ``#`` comments."""
        out = []
        for ln in self.lines(4096):
            s = ln.strip()
            if s and not s.startswith("#"):
                out.append(ln)
                if len(out) >= n:
                    break
        return out


@dataclass(frozen=True)
class Format:
    """One trace format: its name, how it is recognised, its loader and writer."""

    #: short name used in ``meta["format"]``, ``--format`` and messages
    key: str
    #: what users call it
    title: str
    #: the file name endings its tools write (the panel's filter; never used to decide)
    extensions: tuple
    #: does a file with this `Head` belong to this format?
    sniff: Callable = field(repr=False)
    #: "module:function" in tracevis3d.io that loads it; None: recognised, not read
    loader: str | None = None
    #: "module:function" that writes a Trace in it (``writer(trace, path)``); None: not written
    writer: str | None = None
    #: "timed" (calls on a clock), "sampled" (samples on a clock, made calls), "merged"
    #: (aggregated stacks without a timeline: x is the measure), "native" (TraceVis3D's own)
    kind: str = "timed"
    #: the loader's own keyword options (beyond `COMMON_OPTIONS`); None: every option given goes to
    #: the loader, which refuses those it does not take itself, with the wrapper's facts for its
    #: report (`containers.open_whole`)
    options: tuple | None = ()
    #: for a format recognised but not read: why, and what the user can do
    why_not: str = ""
    #: the tools that write it (for the format list)
    tools: str = ""
    #: the file name endings `tracevis3d.save` writes it for when no format is given (`writer_for`)
    write_suffixes: tuple = ()
    #: "module:function" that reads a file of this format where it lies, given its path
    #: (``reader(path, source=..., limits=..., window=...)``: the native file, memory-mapped; any
    #: other zip, whose refusal the native reader words naming what it holds); None: the file's
    #: bytes go to `loader`
    in_place: str | None = None
    #: "module:function" that reads the memory a file of this format records (``reader(data,
    #: source=..., limits=..., **options)`` -> `MemoryCapture`, `tracevis3d.io.load_memory`); None: none
    memory: str | None = None
    #: "module:function" giving a tiny valid file of it (bytes, a wrapper allowed): what the warm-up
    #: loads (with its memory reader where it has no call reader) to compile its reader's kernels
    #: and what only its sniffer may claim (the tests)
    sample: str | None = None
    #: "module:function" steps applied in order to the trace its loader made (``step(trace) ->
    #: trace``): conventions of the tools that write it which the format leaves out
    conventions: tuple = ()
    #: the kernel step its loader compiles (`tracevis3d.kernel_cache.STEP_KERNELS`: what a load on a
    #: cold cache announces, `blender.session.load_step`)
    kernels: str = "load_formats"
    #: "module:function" of the quick check of a file's first bytes before any job, pure Python
    #: (``check(data, whole, source, in_what)``, `io.sniff.check_trace_file`): it refuses what its
    #: loader would; None: the loader checks the file
    quick_check: str | None = None

    @property
    def readable(self) -> bool:
        return self.loader is not None


# ----------------------------------------------------------------------------- sniffers
#: the first member `io.native`'s writers put in a native file (its header member comes last)
_NATIVE_FIRST_MEMBER = b"func.npy"


def _sniff_native(h: Head) -> bool:
    """A zip whose first member is the native file's first array (the writers' order), or whose
    first 4 KiB name TraceVis3D (a small file's header member): any other zip is "zip"'s."""
    d = h.data
    if not d.startswith(ZIP_MAGIC):
        return False
    n = int.from_bytes(d[26:28], "little") if len(d) >= 30 else 0
    return d[30:30 + n] == _NATIVE_FIRST_MEMBER or b"tracevis3d" in d[:4096]


def _sniff_compact(h: Head) -> bool:
    return h.data.startswith(COMPACT_MAGIC)


def _varint(b: bytes, i: int) -> tuple:
    """(value, next offset) of the protobuf varint at ``i``; (-1, i) when cut or over 10 bytes."""
    v = 0
    shift = 0
    for k in range(10):
        if i + k >= len(b):
            return -1, i
        c = b[i + k]
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i + k + 1
        shift += 7
    return -1, i


def _proto_fields(b: bytes, limit: int = 64) -> list | None:
    """The (field number, wire type, length or value) of the first top-level protobuf fields of
    ``b``, up to ``limit`` fields or the end of ``b``; None when ``b`` does not start a valid
    protobuf message (bad wire type, field 0, a length past 2 GiB)."""
    out = []
    i = 0
    n = len(b)
    while i < n and len(out) < limit:
        tag, j = _varint(b, i)
        if tag < 0:
            return out if out else None  # cut by the head's end
        num, wt = tag >> 3, tag & 7
        if num == 0 or wt not in (0, 1, 2, 5):
            return None
        if wt == 0:
            v, j = _varint(b, j)
            if v < 0:
                return out if out else None
        elif wt == 1:
            v, j = 8, j + 8
        elif wt == 5:
            v, j = 4, j + 4
        else:
            v, j2 = _varint(b, j)
            if v < 0 or v > (1 << 31):
                return out if out and v < 0 else None
            j = j2 + v
        out.append((num, wt, v, i))
        i = j
    return out


def _sniff_perfetto(h: Head) -> bool:
    """A Perfetto trace: a ``Trace`` message whose first field is a ``packet`` (1, bytes) whose
    content starts a valid message too (a ``TracePacket``).  Only the first packet is looked at:
    a trace damaged further on is the Perfetto reader's to refuse, at the byte where it is."""
    d = h.data
    if not d or d[0] != 0x0A:
        return False
    fields_ = _proto_fields(d, 1)
    if not fields_ or any(num != 1 or wt != 2 for num, wt, _, _ in fields_):
        return False
    num, wt, ln, at = fields_[0]
    _, start = _varint(d, at + 1)
    inner = d[start: start + min(ln, 4096)]
    sub = _proto_fields(inner, 8)
    # a packet's fields: timestamp 8, sequence ids 10/58, track_event 11, descriptors 43-44/60,
    # clock snapshot 6, trace config 33, ...; pprof's ValueType (fields 1-2 only) is no packet
    return bool(sub) and not all(f in (1, 2) for f, _, _, _ in sub)


#: the wire type of each top-level field of pprof's ``Profile`` (13, ``comment``, may be packed)
_PPROF_WIRE = {1: (2,), 2: (2,), 3: (2,), 4: (2,), 5: (2,), 6: (2,), 7: (0,), 8: (0,), 9: (0,), 10: (0,), 11: (2,),
               12: (0,), 13: (0, 2), 14: (0,)}


def _sniff_pprof(h: Head) -> bool:
    """A pprof ``Profile`` (gzip inflated): top-level fields numbered 1-14 (sample_type 1,
    sample 2, mapping 3, location 4, function 5, string_table 6, ...), each with its wire
    type, the first sample type (or the period type) a ``ValueType`` (fields 1 and 2,
    varints).  Text rarely passes: its first byte would have to be a tag of the right type."""
    d = h.data
    if not d or h.first in (b"{", b"["):
        return False
    fields_ = _proto_fields(d, 64)
    if not fields_ or any(wt not in _PPROF_WIRE.get(num, ()) for num, wt, _, _ in fields_):
        return False
    vt = [(ln, at) for num, _, ln, at in fields_ if num in (1, 11)]
    if vt:
        ln, at = vt[0]
        _, start = _varint(d, _varint(d, at)[1])
        sub = _proto_fields(d[start: start + min(ln, 64)], 8)
        if ln and not (sub and all(f in (1, 2) and w == 0 for f, w, _, _ in sub)):
            return False
    nums = {num for num, _, _, _ in fields_}
    if nums == {1}:  # a Perfetto trace is all field 1
        return bool(vt) and (len(fields_) < 16 or h.whole)
    return 6 in nums or 1 in nums or 2 in nums


def _keys(h: Head) -> set:
    return set(h.json_keys)


_SPEEDSCOPE_SCHEMA = re.compile(rb'"\$schema"\s*:\s*"https://www\.speedscope\.app/file-format-schema\.json"')


def _sniff_speedscope(h: Head) -> bool:
    """speedscope's JSON: its ``$schema`` anywhere in the head (py-spy and pyinstrument write it
    first, speedscope's own export after ``exporter``...), or ``shared`` and ``profiles`` with
    ``frames``."""
    return h.starts_json_object() and (
        _SPEEDSCOPE_SCHEMA.search(h.data) is not None
        or ({"profiles", "shared"} <= _keys(h) and b'"frames"' in h.data[:65536]))


def _sniff_cpuprofile(h: Head) -> bool:
    """V8's ``.cpuprofile``: ``nodes`` (the new form) or ``head`` with ``hitCount``/``callUID``
    nodes (the old form, Node ≤ 10, Chrome ≤ 58; v8-profiler writes ``typeId``, ``uid`` and
    ``title`` before it); ``samples`` beside them.  A heap profile also has a ``head`` but its
    nodes carry ``selfSize``."""
    if not h.starts_json_object():
        return False
    k = h.json_keys
    if k[:1] == ["nodes"] or ({"nodes", "startTime"} <= set(k) and "traceEvents" not in k):
        return True
    return "head" in k[:4] and "traceEvents" not in k[:4] and \
        (b'"hitCount"' in h.data[:65536] or b'"callUID"' in h.data[:65536]) and b'"selfSize"' not in h.data[:65536]


def _sniff_heapprofile(h: Head) -> bool:
    k = h.json_keys
    return h.starts_json_object() and k[:1] == ["head"] and b'"selfSize"' in h.data[:65536]


def _sniff_firefox_processed(h: Head) -> bool:
    k = _keys(h)
    return h.starts_json_object() and "meta" in k and b'"preprocessedProfileVersion"' in h.data


def _sniff_firefox_gecko(h: Head) -> bool:
    """A Gecko profile (``MOZ_PROFILER_SHUTDOWN``, the Firefox Profiler's "Upload" of the raw
    profile): ``meta``, ``libs``, ``threads``; or Firefox DevTools' older performance panel
    export, which holds one under ``profile``."""
    if not h.starts_json_object():
        return False
    k = _keys(h)
    if "traceEvents" in k or b'"preprocessedProfileVersion"' in h.data:
        return False
    if "meta" in k and ("libs" in k or "threads" in k or "processes" in k):
        return True
    # DevTools' export: {"label", "duration", "markers", ..., "profile": {gecko}} (markers may fill the head)
    return {"label", "duration"} <= k and ("profile" in k or "markers" in k or "ticks" in k)


def _sniff_stackprof(h: Head) -> bool:
    k = _keys(h)
    return h.starts_json_object() and "mode" in k and "frames" in k and ("interval" in k or "raw" in k)


def _sniff_safari(h: Head) -> bool:
    k = h.json_keys
    return h.starts_json_object() and "recording" in k and "version" in k


def _sniff_ghc_json(h: Head) -> bool:
    k = _keys(h)
    return h.starts_json_object() and {"program", "cost_centres"} <= k or \
        (h.starts_json_object() and {"program", "total_ticks"} <= k)


_V8LOG_CODE = re.compile(rb'^\s*\{\s*"code"\s*:\s*\[\s*(?:\]|\{\s*"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"type"\s*:\s*"'
                         rb'(?:CPP|SHARED_LIB|JS|CODE)")')


def _sniff_v8log_json(h: Head) -> bool:
    """``node --prof-process --preprocess``: ``code``, ``functions``, ``ticks``; the code table
    comes first and may fill the head, so its first entry (``name``, ``type``) tells too."""
    if not h.starts_json_object():
        return False
    k = _keys(h)
    d = h.data[3:] if h.data.startswith(_BOM) else h.data
    return {"code", "ticks"} <= k or (h.json_keys[:1] == ["code"] and _V8LOG_CODE.match(d) is not None)


def _sniff_heapsnapshot(h: Head) -> bool:
    k = h.json_keys
    return h.starts_json_object() and k[:1] == ["snapshot"]


def _sniff_pyinstrument(h: Head) -> bool:
    k = _keys(h)
    return h.starts_json_object() and "root_frame" in k and ("duration" in k or "start_time" in k)


def _sniff_chrome_json(h: Head) -> bool:
    """Chrome's Trace Event format (object or array form) and any other JSON no other format
    claims: its loader says what is missing."""
    return h.first in (b"{", b"[")


_PERF_HEADER = re.compile(r"^\S.*?\s+\d+(?:/\d+)?\s+(?:\[\d+\]\s+)?\d+\.\d+:\s")
_PERF_FRAME = re.compile(r"^\s+[0-9a-fA-F]+\s+\S")


def _sniff_perf_script(h: Head) -> bool:
    """``perf script`` output: an event line (comm, pid[/tid], [cpu], time:, event:) followed by
    indented frames (address, symbol, (dso))."""
    lines = h.content_lines(64)
    for i, ln in enumerate(lines[:-1]):
        if _PERF_HEADER.match(ln) and _PERF_FRAME.match(lines[i + 1]):
            return True
    return False


_COLLAPSED = re.compile(r"^.*\S\s+\d+(?:\.\d+)?\s*$")


def _sniff_collapsed(h: Head) -> bool:
    """Brendan Gregg's collapsed stacks: every line ``frame;frame;frame count``."""
    if h.first in (b"{", b"["):
        return False
    lines = h.content_lines(32)
    if not lines:
        return False
    good = sum(1 for ln in lines if _COLLAPSED.match(ln))
    return good >= max(1, int(0.8 * len(lines))) and any(";" in ln for ln in lines) or \
        (good == len(lines) and len(lines) >= 1 and all(" " in ln.strip() for ln in lines))


def _sniff_callgrind(h: Head) -> bool:
    t = h.text[:4096].lstrip()
    if t.startswith("# callgrind format"):
        return True
    lines = [ln for ln in h.lines(64) if ln.strip()]
    heads = sum(1 for ln in lines[:16] if ln.split(":", 1)[0] in ("version", "creator", "pid", "cmd", "part",
                                                                    "positions", "events", "desc", "thread"))
    return heads >= 2 and any(ln.startswith(("fn=", "fl=")) for ln in lines)


def _sniff_v8log(h: Head) -> bool:
    return h.data.startswith(b"v8-version,")


def _sniff_ghc_prof(h: Head) -> bool:
    return "Time and Allocation Profiling Report" in h.text[:512]


def _sniff_jfr(h: Head) -> bool:
    return h.data.startswith(b"FLR\x00")


def _sniff_perf_data(h: Head) -> bool:
    """linux perf's binary ``perf.data``: its "PERFILE2" magic, in either byte order."""
    return h.data.startswith((b"PERFILE2", b"2ELIFREP"))


def _sniff_go_exec_trace(h: Head) -> bool:
    """Go's execution trace (``runtime/trace``, ``go test -trace``): "go 1.N trace" and NULs."""
    return re.match(rb"go 1\.\d+ trace\x00", h.data[:16]) is not None


def _sniff_trace_cmd(h: Head) -> bool:
    """trace-cmd's ``trace.dat``: 0x17 0x08 0x44 then "tracing"."""
    return h.data.startswith(b"\x17\x08\x44tracing")


def _sniff_tracy(h: Head) -> bool:
    """A saved Tracy capture: its raw, LZ4 or Zstandard file header."""
    return h.data.startswith((b"tr\xfdP", b"tlZ\x04", b"tZst"))


def _sniff_ctf(h: Head) -> bool:
    """A Common Trace Format stream (LTTng, barectf): the packet magic 0xC1FC1FC1, either order."""
    return h.data.startswith((b"\xc1\x1f\xfc\xc1", b"\xc1\xfc\x1f\xc1"))


def _sniff_instruments_text(h: Head) -> bool:
    first = h.text.lstrip("\ufeff").split("\n", 1)[0]
    return first.startswith(("Running Time\tSelf", "Weight\tSelf Weight", "Bytes Used\tCount"))


def _sniff_zip_other(h: Head) -> bool:
    return h.data.startswith(ZIP_MAGIC)


def _sniff_pmcstat(h: Head) -> bool:
    return h.data.startswith(b"@ ") and b" samples]" in h.data[:256]


def _sniff_papyrus(h: Head) -> bool:
    return bool(re.match(r"^(Stack|Script)_\S+ log opened", h.text[:128]))


def _sniff_memray(h: Head) -> bool:
    """memray's capture: its "memray" magic, or (memray's default, compressed) an LZ4 frame whose
    first block holds the magic as literals."""
    return h.data.startswith(MEMRAY_MAGIC) or (h.data.startswith(LZ4_MAGIC) and MEMRAY_MAGIC in h.data[:40])


def _sniff_pstats(h: Head) -> bool:
    """cProfile's ``pstats`` dump: a marshalled dict (``{``) whose first key is a tuple
    ``(file, line, function)`` (marshal's ``)``/``(`` small tuple, ``(`` tuple codes)."""
    d = h.data
    return len(d) > 2 and d[0] in (0x7B, 0xFB) and d[1] in (0x29, 0xA9, 0x28, 0xA8)


_TO_JSON = "Save the profile as speedscope JSON or Chrome trace JSON where the tool can"

#: Every format, in the order they are tried.  The specific binary and text formats come first,
#: then the JSON formats by their keys, then Chrome's JSON, which takes any other JSON.
FORMATS: tuple = (
    Format("native", "TraceVis3D native file", (".tv3d.npz", ".npz"), _sniff_native, "native:load_native",
           "native:save_native", kind="native", tools="tracevis3d.save", write_suffixes=(".tv3d.npz", ".npz"),
           in_place="native:load_native", kernels="load_native"),
    Format("compact", "TraceVis3D compact file (SEAT's Compact Trace Format)", (".tv3c",), _sniff_compact,
           "compact:load_compact", "compact:save_compact", kind="native", kernels="load_native",
           tools="tracevis3d.save(format='compact')", write_suffixes=(".tv3c",)),
    Format("perfetto", "Perfetto protobuf trace", (".perfetto-trace", ".pftrace", ".pb", ".proto", ".trace"),
           _sniff_perfetto, "perfetto:load_perfetto", tools="Perfetto SDK, Chrome, Android, tracebox",
           sample="samples:perfetto", kernels="load_perfetto"),
    Format("pprof", "pprof profile (profile.proto)", (".pb.gz", ".pprof", ".prof"), _sniff_pprof,
           "pprof:load_pprof", kind="merged", options=("sample_type",), tools="Go runtime/pprof, gperftools, pprof",
           sample="samples:pprof"),
    Format("memray", "memray capture", (".bin",), _sniff_memray, None,
           why_not="this is a memray capture (memory, not calls): use tracevis3d.load_memory or render-memory",
           tools="memray run", memory="memray:load_memray", sample="samples:memray"),
    Format("jfr", "Java Flight Recorder recording", (".jfr",), _sniff_jfr, None,
           why_not="its binary chunks are not read; convert it with async-profiler's converter "
                   "(java -cp converter.jar jfr2flame --collapsed IN.jfr OUT.txt) and load the collapsed stacks",
           tools="JDK Flight Recorder"),
    Format("pstats", "cProfile/profile pstats dump (tree estimated from its call graph)", (".pstats", ".prof"),
           _sniff_pstats, "pstats:load_pstats", kind="merged",
           tools="python -m cProfile -o, profile, yappi save(type='pstat')", sample="samples:pstats"),
    Format("perf-data", "linux perf.data (binary)", (".data",), _sniff_perf_data, None,
           why_not="perf.data holds raw addresses that only perf resolves, with the recorded binaries' symbols: "
                   "run 'perf script -i perf.data > perf.txt' where it was recorded and load perf.txt",
           tools="perf record"),
    Format("go-trace", "Go execution trace", (".trace", ".out"), _sniff_go_exec_trace, None,
           why_not="Go's execution trace (goroutine events) is not read; for where the time goes, take a CPU "
                   "profile (go test -cpuprofile, runtime/pprof: read), or 'go tool trace -pprof=sched TRACE > "
                   "sched.pprof' and load that",
           tools="runtime/trace, go test -trace"),
    Format("trace-cmd", "trace-cmd / ftrace recording (trace.dat)", (".dat",), _sniff_trace_cmd, None,
           why_not="kernel ftrace buffers are not read (nor 'trace-cmd report' text); record the kernel with "
                   "Perfetto's tracebox instead (Perfetto protobuf: read)",
           tools="trace-cmd record"),
    Format("tracy", "Tracy capture", (".tracy",), _sniff_tracy, None,
           why_not="Tracy's capture format changes with each Tracy version and is not read, and Tracy exports "
                   "only statistics (csvexport); trace the program with perf or uftrace instead",
           tools="Tracy profiler"),
    Format("ctf", "Common Trace Format stream (LTTng)", (".ctf",), _sniff_ctf, None,
           why_not="CTF streams need their metadata file to be decoded and are not read; convert the trace "
                   "directory to Chrome trace JSON (read) with KDAB's ctf2ctf",
           tools="LTTng, barectf"),
    Format("callgrind", "callgrind profile", (".callgrind", ".out"), _sniff_callgrind, "callgrind:load_callgrind",
           kind="merged", options=("event",), tools="valgrind --tool=callgrind, Xdebug (PHP), yappi",
           sample="samples:callgrind"),
    Format("perf-script", "linux perf script output", (".perf", ".txt", ".perf-script"), _sniff_perf_script,
           "perf_script:load_perf_script", kind="merged", options=("event",), tools="perf record -g; perf script",
           sample="samples:perf_script"),
    Format("v8log", "V8 log (node --prof)", (".log",), _sniff_v8log, None,
           why_not="the raw tick log is not read: preprocess it (node --prof-process --preprocess LOG > "
                   "OUT.v8log.json) and load that, or profile with node --cpu-prof",
           tools="node --prof"),
    Format("ghc-prof", "GHC profiling report (text)", (".prof",), _sniff_ghc_prof, "ghc_text:load_ghc_prof",
           kind="merged", options=("measure",), tools="GHC +RTS -p", sample="samples:ghc_prof"),
    Format("instruments-text", "Instruments call tree (text)", (".txt",), _sniff_instruments_text,
           "instruments:load_instruments_text", kind="merged", tools="Xcode Instruments: Copy call tree",
           sample="samples:instruments_text"),
    Format("pmcstat", "pmcstat callgraph (text)", (".txt",), _sniff_pmcstat, None,
           why_not="not read yet; pmcstat -G writes it: use its collapsed-stack output (stackcollapse-pmc.pl)",
           tools="FreeBSD pmcstat -G"),
    Format("papyrus", "Papyrus script profile", (".log",), _sniff_papyrus, None,
           why_not="Skyrim's Papyrus logs are not read", tools="Papyrus profiler"),
    Format("zip", "zip archive", (".zip", ".trace.zip"), _sniff_zip_other, None,
           why_not="unzip it and load the trace inside (Instruments .trace bundles are not read)", tools="",
           in_place="native:load_native"),
    Format("speedscope", "speedscope JSON", (".speedscope.json", ".json"), _sniff_speedscope,
           "speedscope:load_speedscope", kind="sampled", tools="speedscope, py-spy, pyinstrument, rbspy, samply",
           sample="samples:speedscope"),
    Format("cpuprofile", "V8 CPU profile (.cpuprofile)", (".cpuprofile", ".json"), _sniff_cpuprofile,
           "cpuprofile:load_cpuprofile", kind="sampled", tools="node --cpu-prof, Chrome DevTools",
           sample="samples:cpuprofile"),
    Format("heapprofile", "V8 sampling heap profile", (".heapprofile",), _sniff_heapprofile,
           "heapprofile:load_heapprofile", kind="merged", tools="node --heap-prof, Chrome DevTools",
           sample="samples:heapprofile"),
    Format("heapsnapshot", "V8 heap snapshot", (".heapsnapshot",), _sniff_heapsnapshot, None,
           why_not="a heap snapshot holds objects, not calls: record a sampling heap profile (.heapprofile) instead",
           tools="Chrome DevTools, node --heapsnapshot-signal"),
    Format("firefox", "Firefox Profiler (processed)", (".json", ".json.gz"), _sniff_firefox_processed,
           "firefox:load_firefox", kind="sampled", options=("js_only",), tools="profiler.firefox.com, samply",
           sample="samples:firefox_processed"),
    Format("gecko", "Firefox Gecko profile", (".json", ".json.gz"), _sniff_firefox_gecko, "firefox:load_firefox",
           kind="sampled", options=("js_only",), tools="MOZ_PROFILER_SHUTDOWN, Firefox DevTools", sample="samples:gecko"),
    Format("stackprof", "stackprof (Ruby) JSON", (".json",), _sniff_stackprof, "stackprof:load_stackprof",
           kind="sampled", tools="stackprof", sample="samples:stackprof"),
    Format("safari", "Safari timeline recording", (".json",), _sniff_safari, "safari:load_safari",
           kind="sampled", tools="Safari Web Inspector"),
    Format("ghc-json", "GHC profiling report (JSON)", (".prof", ".json"), _sniff_ghc_json, "ghc:load_ghc_json",
           kind="merged", options=("measure",), tools="GHC +RTS -pj", sample="samples:ghc_json"),
    Format("v8log-json", "V8 log, preprocessed (JSON)", (".v8log.json", ".json"), _sniff_v8log_json,
           "v8log:load_v8log_json", kind="sampled", tools="node --prof; node --prof-process --preprocess",
           sample="samples:v8log_json"),
    Format("pyinstrument", "pyinstrument JSON", (".json",), _sniff_pyinstrument, "pyinstrument:load_pyinstrument",
           kind="merged", tools="pyinstrument -r json", sample="samples:pyinstrument"),
    Format("chrome", "Chrome Trace Event JSON", (".json", ".json.gz", ".trace"), _sniff_chrome_json,
           "chrome:load_chrome", "chrome_writer:save_chrome", options=None, conventions=("threadnames:fix_pyspy",),
           quick_check="sniff:check_json_events", kernels="load",
           tools="VizTracer, Chrome, PyTorch, JAX, Perfetto UI, uftrace, Hermes", write_suffixes=(".json", ".json.gz"),
           memory="chrome_memdump:load_memory_dumps"),
    Format("collapsed", "collapsed stacks (Brendan Gregg)", (".txt", ".folded", ".collapsed"), _sniff_collapsed,
           "collapsed:load_collapsed", kind="merged", tools="stackcollapse-*.pl, py-spy --format raw, inferno, Austin",
           sample="samples:collapsed"),
)
#: the format whose loader reads bytes no row recognises (it says precisely what they are not),
#: and the one whose memory reader does (it says the file is no memray capture and why)
FALLBACK, MEMORY_FALLBACK = "chrome", "memray"

_BY_KEY = {f.key: f for f in FORMATS}


def by_key(key: str) -> Format:
    return registry_entry(_BY_KEY, key, "format")


def detect(head, memory: bool = False) -> Format | None:
    """The format of a file whose first bytes (a wrapper opened) are ``head`` (a `Head`, or bytes);
    None when no format recognises them.  ``memory``: only the formats with a memory reader are
    asked, in the table's order (the reader of what a file records as memory)."""
    h = head if isinstance(head, Head) else Head(head)
    for f in FORMATS:
        if (f.memory or not memory) and f.sniff(h):
            return f
    return None


def fallback(memory: bool = False) -> Format:
    """The format whose reader gets bytes no row recognises (`FALLBACK`, `MEMORY_FALLBACK`)."""
    return _BY_KEY[MEMORY_FALLBACK if memory else FALLBACK]


def in_place_format(head) -> Format | None:
    """The format of a file whose first `IN_PLACE_HEAD_BYTES` are ``head`` when it is read where
    it lies (`Format.in_place`: given its path, not its bytes), else None."""
    h = Head(bytes(head[:IN_PLACE_HEAD_BYTES]))
    for f in FORMATS:
        if f.in_place and f.sniff(h):
            return f
    return None


def resolve(path: str) -> Callable:
    """The function ``"module:function"`` of a module under `tracevis3d.io` (imported now)."""
    mod, _, fn = path.partition(":")
    return getattr(importlib.import_module(f"{__package__}.{mod}"), fn)


def loader_of(fmt: Format) -> Callable:
    """The loader function of ``fmt`` (imported now)."""
    if fmt.loader is None:
        raise ValueError(f"{fmt.title} is recognised but not read: {fmt.why_not}")
    return resolve(fmt.loader)


def reader_options(fmt: Format, options: dict, facts: dict) -> dict:
    """The keyword options ``fmt``'s loader gets of those given: `COMMON_OPTIONS` and its own
    (`Format.options`; TypeError naming the format for any other), or, for a loader that checks
    its options itself (``options=None``), all of them and the wrapper's ``facts``."""
    if fmt.options is None:
        return {**options, **facts}
    unknown = set(options) - COMMON_OPTIONS - set(fmt.options)
    if unknown:
        raise TypeError(f"{fmt.title}: unexpected options {sorted(unknown)}")
    return dict(options)


def samples() -> tuple:
    """(format key, sample maker) of every format with a `Format.sample`, in the table's order."""
    return tuple((f.key, resolve(f.sample)) for f in FORMATS if f.sample)


def writer_of(fmt: Format) -> Callable:
    """The writer function of ``fmt`` (imported now); ValueError for a format not written."""
    if fmt.writer is None:
        raise ValueError(f"TraceVis3D does not write {fmt.title} files")
    return resolve(fmt.writer)


#: the format `writer_for` picks for a name whose ending no writable format claims
DEFAULT_WRITE_FORMAT = "native"


def writer_for(path, format: str | None = None) -> Format:
    """The format `tracevis3d.save` writes: ``format`` (a key of a written format) when given,
    else the written format whose `Format.write_suffixes` the file name ends with (the longest
    ending wins: ``.json.gz`` is Chrome JSON, gzip-compressed), else the native file.
    ValueError naming the written formats for a format that is not written."""
    written = [f for f in FORMATS if f.writer is not None]
    if format is not None:
        fmt = _BY_KEY.get(format)
        if fmt is None or fmt.writer is None:
            raise ValueError(f"format must be one of {', '.join(repr(f.key) for f in written)}, got {format!r}")
        return fmt
    name = str(path).lower()
    hits = [(len(s), f) for f in written for s in f.write_suffixes if name.endswith(s)]
    return max(hits, key=lambda h: h[0])[1] if hits else _BY_KEY[DEFAULT_WRITE_FORMAT]


# ----------------------------------------------------------------------------- wrappers
@dataclass(frozen=True)
class Container:
    """A wrapper around a file's bytes (a compression): how it is recognised, what opens it
    (`tracevis3d.io.containers`, the one place wrappers are opened), and what a reader says of
    bytes that start with it (after the wrapper it opened, if any: `io.sniff.content_hint`)."""

    key: str
    #: do these first bytes start this wrapper?
    sniff: Callable = field(repr=False)
    #: "module:function" in tracevis3d.io that opens the whole input (``opener(data, source,
    #: limits) -> (data, repairs)``); None: not opened (``hint`` says what to do)
    opener: str | None = None
    #: "module:function" that opens a file's first bytes for the sniffers (``head_opener(data,
    #: source, whole, limit) -> (data, whole)``)
    head_opener: str | None = None
    #: said after "not a trace in any format ..." of bytes that start with it
    hint: str = ""


def _sniff_zlib(head: bytes) -> bool:
    """A raw zlib stream: 0x78 and a second byte of the levels whose 16-bit header divides by 31."""
    return len(head) >= 2 and head[0] == 0x78 and head[1] in (0x01, 0x5E, 0x9C, 0xDA) and \
        (head[0] * 256 + head[1]) % 31 == 0


#: the wrappers, in the order they are tried: gzip is opened (its members inflated under the
#: limits), the others are named in the refusal of a file that starts with them
CONTAINERS: tuple = (
    Container("gzip", lambda b: bytes(b[:2]) == GZIP_MAGIC, "containers:gunzip", "containers:gunzip_head",
              hint=": it is gzip data again (compressed twice?): gunzip it once and load that"),
    Container("bzip2", lambda b: bytes(b[:3]) == b"BZh",
              hint=": it is bzip2-compressed: decompress it (bunzip2) or gzip it instead"),
    Container("xz", lambda b: bytes(b[:6]) == b"\xfd7zXZ\x00",
              hint=": it is xz-compressed: decompress it (unxz) or gzip it instead"),
    Container("zstd", lambda b: bytes(b[:4]) == b"\x28\xb5\x2f\xfd",
              hint=": it is zstd-compressed: decompress it (unzstd) or gzip it instead"),
    Container("zlib", _sniff_zlib,
              hint=": it looks like a raw zlib stream (gzip without its header): write it with gzip instead"),
)


def container_of(head, opened: bool = True):
    """The `Container` that bytes starting with ``head`` are in (``opened``: only those opened),
    or None."""
    head = bytes(head[:16])
    for c in CONTAINERS:
        if (c.opener or not opened) and c.sniff(head):
            return c
    return None


def file_filter() -> str:
    """The panel's file-browser filter: every readable format's endings (and ``.gz``)."""
    exts = sorted({e for f in FORMATS if f.readable for e in f.extensions} | {".gz"})
    return ";".join("*" + e for e in exts)


def describe_formats() -> str:
    """A plain-text table of the formats (``tracevis3d formats``)."""
    rows = [("format", "read", "x axis", "written by", "name")]
    for f in FORMATS:
        axis = {"merged": "measure", "native": "time"}.get(f.kind, "time")
        rows.append((f.key, "yes" if f.readable else "no", axis if f.readable else "", f.tools, f.title))
    w = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(r[i].ljust(w[i]) for i in range(4)) + "  " + r[4] for r in rows]
    lines.append("")
    lines.append("Recognised but not read:")
    lines += [f"  {f.key}: {f.why_not}" for f in FORMATS if not f.readable and f.why_not]
    lines.append("Any of them gzip-compressed too.")
    return "\n".join(lines)
