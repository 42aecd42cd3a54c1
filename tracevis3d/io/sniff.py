"""A cheap, pure-Python look at a trace file before any numba kernel is compiled.

`check_trace_file(path)` rejects, in milliseconds and without importing numba, a file that
can never be a trace: missing (FileNotFoundError), a folder, empty, only whitespace, corrupt gzip, not JSON at
all (the first character is not ``{`` or ``[``), and, for files small enough to read whole
(`FULL_PARSE_BYTES`), JSON that holds no event object or is cut short before its first
complete event.  It raises `TraceFormatError` with one line naming the file, the byte and
what is wrong.  It never rejects what the importer would accept: anything it is not sure
about goes on to the real importer (`tracevis3d.io.load`), which reports the exact place;
pipes and devices are not looked at (reading them would consume them).  The messages use
the importer's wording ("byte N (line L, column C)").
"""
from __future__ import annotations

import json
import os
import stat

from ..model import TraceFormatError
from .formats import CONTAINERS, HEAD_BYTES, IN_PLACE_HEAD_BYTES, Head, detect, fallback, in_place_format, resolve

FULL_PARSE_BYTES = 1 << 20   # files up to this size are parsed whole by Python's json
_BOM = b"\xef\xbb\xbf"
_WS = b" \t\r\n"

__all__ = ["check_trace_file", "check_trace_bytes", "check_json_events", "format_of_file", "is_native_file",
           "content_hint", "HEAD_BYTES", "FULL_PARSE_BYTES"]


def _stat(path: str) -> int | None:
    """The size of the regular file ``path`` (None for a pipe or device: not sniffed, reading
    would consume it); errors for missing paths and folders."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"trace file not found: {path}") from None
    except OSError as e:
        raise TraceFormatError(f"{path}: cannot read it: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise TraceFormatError(f"{path}: is a directory, not a trace file")
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _read_head(path: str, size: int) -> tuple[bytes, bool]:
    """(the first bytes of the file, True when they are the whole file)."""
    limit = FULL_PARSE_BYTES if size <= FULL_PARSE_BYTES else HEAD_BYTES
    try:
        with open(path, "rb") as f:
            data = f.read(limit)
    except OSError as e:
        raise TraceFormatError(f"{path}: cannot read it: {e.strerror or e}") from None
    return data, len(data) >= size


def _open_head(data: bytes, path: str, whole: bool) -> tuple:
    """The first bytes with their wrapper opened (`containers.open_head`, at most
    `FULL_PARSE_BYTES` + 1 of them): (bytes, all of it, what positions are in)."""
    from .containers import open_head

    return open_head(data, path, whole, FULL_PARSE_BYTES)


def _first_char(text: bytes) -> int:
    """Offset of the first byte after a UTF-8 BOM and whitespace (len(text) if none)."""
    start = len(_BOM) if text.startswith(_BOM) else 0
    stripped = text[start:].lstrip(_WS)
    return len(text) - len(stripped)


def content_hint(head) -> str:
    """What a file that is not JSON text may be, from its first bytes ``head`` (16 are enough),
    said after the "not a Chrome trace" / "invalid JSON" messages: ": the file is UTF-16 text …;
    save it as UTF-8" for a UTF-16 or UTF-32 byte order mark or UTF-16 without one (a NUL beside
    its first ``{`` or ``[``: PowerShell's ``>``, some Windows editors); a compressed stream that
    is not gzip (bzip2, xz, zstd, raw zlib) or gzip inside gzip (the wrappers' table,
    `formats.CONTAINERS`); a damaged Perfetto protobuf trace (binary, its first packet's tag 0x0A,
    which the format table did not recognise).  "" otherwise."""
    head = bytes(head[:16])
    for bom, name in ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
                      (b"\xfe\xff", "UTF-16")):
        if head.startswith(bom):
            return f": the file is {name} text (byte order mark {bom.hex(' ').upper()}); save it as UTF-8"
    if len(head) >= 2 and ((head[0:1] in (b"{", b"[") and head[1] == 0) or (head[0] == 0 and head[1:2] in (b"{", b"["))):
        return ": the file looks like UTF-16 text (a NUL byte beside every character); save it as UTF-8"
    for c in CONTAINERS:
        if c.sniff(head):
            return c.hint
    if len(head) >= 4 and head[0] == 0x0A and head[1] and any(c < 9 for c in head[1:]):
        return (": it may be a damaged Perfetto protobuf trace (.pftrace, .perfetto-trace): its first packet is "
                "not a valid TracePacket")
    return ""


def _events_start(text: str, kind: str) -> int | None:
    """Offset just after the ``[`` of the event array (None when it is not in ``text``)."""
    if kind == "[":
        return text.index("[") + 1
    key = text.find('"traceEvents"')
    if key < 0:
        return None
    colon = text.find(":", key + len('"traceEvents"'))
    bracket = text.find("[", colon + 1) if colon >= 0 else -1
    return bracket + 1 if bracket >= 0 and not text[colon + 1:bracket].strip() else None


class _Doc:
    """A whole JSON document in hand: its bytes, its text from the first ``{``/``[`` on, and
    how positions are worded (byte offsets count in ``data``)."""

    def __init__(self, data: bytes, offset: int, source: str, in_what: str):
        self.data, self.offset, self.source, self.in_what = data, offset, source, in_what
        self.text = data[offset:].decode("utf-8", "replace")

    def where(self, k: int) -> str:
        """The importer's "byte N (line L, column C)" of text position ``k``."""
        return _where(self.data, self.offset + len(self.text[:k].encode("utf-8")), self.in_what)

    def fail(self, what: str):
        raise TraceFormatError(f"{self.source}: {what}")


def _skip_ws(text: str, k: int) -> int:
    while k < len(text) and text[k] in " \t\r\n":
        k += 1
    return k


def _check_parsed(doc, d: _Doc, kind: str) -> None:
    """A whole, valid JSON document: is there an event array with an event object?"""
    end = len(d.text.rstrip()) - 1
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        if events is None:
            d.fail(f"JSON object without a 'traceEvents' array (the object ends at {d.where(end)})")
        if not isinstance(events, list):
            d.fail(f"'traceEvents' is a JSON {type(events).__name__}, not an array of events "
                   f"(the object ends at {d.where(end)})")
    else:
        events = doc
    start = _events_start(d.text, kind)
    if start is None:
        return  # "traceEvents" written with escapes: the importer decides
    first = _skip_ws(d.text, start)
    if not events:
        d.fail(f"no trace events: the event array ends at {d.where(first)} and is empty")
    if not isinstance(events[0], dict):
        d.fail(f"an event that is not a JSON object at {d.where(first)} in event #0: "
               f"{d.text[first:first + 40]!r}")


def _where(data: bytes, pos: int, in_what: str = "") -> str:
    """"byte N (line L, column C)", as the importer words a position."""
    line = data.count(b"\n", 0, pos) + 1
    col = pos - (data.rfind(b"\n", 0, pos) + 1) + 1
    return f"byte {pos}{in_what} (line {line}, column {col})"


def _check_first_event(d: _Doc, kind: str) -> None:
    """A whole file that is not valid JSON: reject it only when it ends inside its first event."""
    start = _events_start(d.text, kind)
    if start is None:
        return
    first = _skip_ws(d.text, start)
    if first >= len(d.text) or d.text[first] != "{":
        return  # no event, or not an object: the importer says so precisely
    try:
        json.JSONDecoder().raw_decode(d.text, first)
    except RecursionError:
        return  # nested too deep for Python's parser: the importer reports where
    except json.JSONDecodeError as e:
        if e.pos >= len(d.text.rstrip()):
            d.fail(f"the file is cut short at {_where(d.data, len(d.data), d.in_what)} inside the first "
                   f"event, which starts at {d.where(first)}: no complete event")


def is_native_file(path) -> bool:
    """Is ``path`` a native or compact file (the table's ``kind`` "native"), by its first bytes?
    Loading one reads arrays and checks the tree, no JSON scanner (what the progress announces,
    `kernel_cache.STEP_KERNELS`).  False for a pipe or a device (never peeked at: a peek would
    take its bytes from the load) and for a file that cannot be read (the load says why)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            fmt = detect(Head(f.read(IN_PLACE_HEAD_BYTES)))
    except OSError:
        return False
    return fmt is not None and fmt.kind == "native"


def format_of_file(path):
    """The `io.formats.Format` of the file at ``path`` by its first bytes (gzip inflated); None
    for a pipe, a device, a file that cannot be read or that no format recognises."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        return None
    try:
        data, whole = _read_head(path, os.path.getsize(path))
        data, whole, _ = _open_head(data, path, whole)
    except (OSError, TraceFormatError):
        return None
    return detect(Head(data, whole=whole, name=path))


def check_trace_bytes(data: bytes, whole: bool, source: str = "<bytes>", in_what: str = "") -> None:
    """Check the first bytes of a trace (``whole``: they are all of it); see the module doc.

    ``in_what``: said after a byte position (" of the decompressed data" for gzip).  The format
    the table recognises (else `formats.fallback`'s) is checked by its quick check
    (`Format.quick_check`); a format read in place is left to its reader."""
    if in_place_format(data) is not None:
        return  # the native file or another zip: its reader checks it where it lies
    i = _first_char(data)
    if i >= len(data):
        if whole:
            raise TraceFormatError(f"{source}: empty file, no trace events (it ends at "
                                   f"{_where(data, len(data), in_what)})")
        return
    fmt = detect(Head(data, whole=whole, name=source)) or fallback()
    if not fmt.readable:
        raise TraceFormatError(f"{source}: a {fmt.title} file, which TraceVis3D recognises but does not read: "
                               f"{fmt.why_not}")
    if fmt.quick_check:  # else its loader checks it
        resolve(fmt.quick_check)(data, whole, source, in_what)


def check_json_events(data: bytes, whole: bool, source: str = "<bytes>", in_what: str = "") -> None:
    """Chrome JSON's quick check (the fallback's: bytes no format recognises): bytes that are no
    JSON at all are no trace in any format; a whole file's JSON must hold an event object and not
    end inside its first event (module docstring)."""
    i = _first_char(data)
    c = data[i:i + 1]
    if c not in (b"{", b"["):
        snippet = data[i:i + 40].decode("utf-8", "replace").replace("\n", "\\n")
        raise TraceFormatError(f"{source}: not a trace in any format TraceVis3D reads (tracevis3d formats lists "
                               f"them) at {_where(data, i, in_what)}: {snippet!r}{content_hint(data)}")
    if not whole:
        return
    d = _Doc(data, i, source, in_what)
    try:
        doc = json.loads(d.text)
    except (ValueError, RecursionError):
        _check_first_event(d, c.decode())
        return
    _check_parsed(doc, d, c.decode())


def check_trace_file(path) -> str:
    """Reject a file that cannot be a trace, cheaply (pure Python, no numba); its absolute path.

    Raises `TraceFormatError` (one line: the file, the byte, what is wrong).
    """
    if path is None or not str(os.fspath(path)).strip():
        raise TraceFormatError("no trace file given (the trace path is empty)")
    path = os.path.abspath(os.path.expanduser(os.fspath(path)))
    size = _stat(path)
    if size is None:
        return path  # a pipe or a device: the importer reads it once, under its limits
    if size == 0:
        raise TraceFormatError(f"{path}: empty file, no trace events (it ends at {_where(b'', 0)})")
    data, whole = _read_head(path, size)
    data, whole, in_what = _open_head(data, path, whole)
    check_trace_bytes(data, whole, path, in_what)
    return path
