"""The native TraceVis3D file: a versioned, uncompressed .npz.

Every array of the `Trace` is stored as a .npy member (so loading maps the file's
bytes in place, or copies them: no parsing), and the small tables (names, paths, metadata) as one
JSON document in the member ``tracevis3d_header`` (a uint8 array).  The header
carries ``format: "tracevis3d"`` and ``version``; files from a newer major
version are refused with a clear error.  Round-trips are exact.  Loading
validates everything (see `load_native`): a tampered file is refused, never
handed on.
"""
from __future__ import annotations

import io
import json
import math
import os
import struct
import zipfile
import zlib

import numpy as np
from numpy.lib import format as npformat

from ..kernels import jsonvalid as jv
from ..kernels.tree import BAD_CALL, first_bad_call
from ..model import (ARRAY_DTYPES, CALL_DTYPES, KIND_NAMES, STRING_TABLES, Trace, TraceFormatError, flow_instant_mismatch,
                     length_mismatch)
from ..model_side import ADDED_ARRAYS, ADDED_TABLES, OPTIONAL_TABLES, check_side
from . import mapguard
from .atomic import replaced_whole
from .formats import ZIP_MAGIC
from .limits import DEFAULT_LIMITS, Limits, resolve_limits

FORMAT = "tracevis3d"
VERSION = 1
HEADER = "tracevis3d_header"


def save_native(trace: Trace, path) -> None:
    """Write ``trace`` to ``path`` (conventionally ``*.tv3d.npz``), whole or not at all
    (`atomic.replaced_whole`)."""
    from .outputs import verify_zip

    header, arrays = _native_members(trace)
    arrays[HEADER] = np.frombuffer(header, np.uint8)
    with replaced_whole(path, verify=verify_zip) as tmp, open(tmp, "wb") as f:
        _savez(f, arrays)


def _savez(f, arrays: dict) -> None:
    """``arrays`` as the stored members ``NAME.npy`` of a zip written to the open file ``f``
    (what ``np.savez`` writes), the zip closed whatever happens: a write that fails (a full
    disk) must not leave a ZipFile whose finaliser later writes to the closed file."""
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, a in arrays.items():
            with zf.open(name + ".npy", "w", force_zip64=True) as member:
                npformat.write_array(member, np.asanyarray(a), allow_pickle=False)


def save_native_in_place(path, n_calls: int, fill) -> None:
    """Write a native file whose per-call arrays are written in place: ``fill(arrays)``
    gets a dict of writable arrays that are the file's own mapped pages (the members
    ``func``, ``start``, ``end``, ``depth``, ``parent``, ``end_index``, ``thread``,
    ``kind`` of ``n_calls`` entries and ``obj_ptr`` of ``n_calls + 1``, zeros at first),
    fills them and returns the `Trace` built on them; the rest of the trace (tables,
    metadata, its other arrays: small) is then written after them like `save_native`.
    So a trace larger than the memory can be written: its calls go through the page
    cache, which the system writes back and drops, never through the process's own
    memory.  The file is the same zip (stored members, zip64) that `save_native`
    writes, CRCs included; whole or not at all (`atomic.replaced_whole`)."""
    from .outputs import verify_zip

    in_place = {**CALL_DTYPES, "obj_ptr": np.int64}
    with replaced_whole(path, verify=verify_zip) as tmp:
        _fill_in_place(tmp, n_calls, fill, in_place)


def _fill_in_place(tmp: str, n_calls: int, fill, in_place: dict) -> None:
    """`save_native_in_place`'s zip, written to the file ``tmp``."""
    zw = _StoredZip(tmp)
    try:
        arrays = {}
        for k, dt in in_place.items():
            count = n_calls + (k == "obj_ptr")
            at = zw.reserve(k + ".npy", _npy_header(np.dtype(dt), (count,)), count * np.dtype(dt).itemsize)
            arrays[k] = (np.memmap(tmp, dtype=dt, mode="r+", offset=at, shape=(count,)).view(np.ndarray)
                         if count else np.zeros(0, dt))
        trace = fill(arrays)
        for k in in_place:
            if getattr(trace, k) is not arrays[k]:
                raise ValueError(f"fill must return the Trace built on the arrays it was given ({k})")
        for a in arrays.values():
            if isinstance(a.base, np.memmap):
                a.base.flush()
        header, rest = _native_members(trace)
        for k in in_place:
            del rest[k]
        del trace, arrays
        zw.seal_reserved()
        for k, a in rest.items():
            zw.add(k + ".npy", _npy_header(a.dtype, a.shape), a)
        zw.add(HEADER + ".npy", _npy_header(np.dtype(np.uint8), (len(header),)), np.frombuffer(header, np.uint8))
        zw.close()
    except BaseException:
        zw.abort()
        raise


def _native_members(trace: Trace) -> tuple[bytes, dict]:
    """(the header's JSON bytes, the arrays by member name) of ``trace``, as `save_native` writes them."""
    header = {
        "format": FORMAT,
        "version": VERSION,
        "n_calls": len(trace),
        "tables": {k: list(getattr(trace, k)) for k in STRING_TABLES},
        "function_paths": [list(p) for p in trace.function_paths],
        "meta": None,
    }
    arrays = {k: np.ascontiguousarray(getattr(trace, k), dtype=dt) for k, dt in ARRAY_DTYPES.items()}
    header["meta"] = meta_out(trace.meta, "meta", arrays)
    return json.dumps(header, default=json_default).encode("utf-8"), arrays


def _npy_header(dtype: np.dtype, shape: tuple) -> bytes:
    """The .npy header (magic, version 1.0, dict, padding) of a C-order array."""
    buf = io.BytesIO()
    npformat.write_array_header_1_0(buf, {"descr": npformat.dtype_to_descr(dtype), "fortran_order": False,
                                          "shape": tuple(int(x) for x in shape)})
    return buf.getvalue()


class _StoredZip:
    """A zip of stored (uncompressed) members, zip64 throughout, written in two parts:
    members of known size reserved first (their data space left as zeros for the caller to
    fill through a mapping; CRCs computed by `seal_reserved`, reading them back in chunks),
    then members appended whole (`add`), then the central directory (`close`)."""

    _CHUNK = 1 << 22

    def __init__(self, path: str):
        self.path = path
        self.f = open(path, "w+b")
        self.entries = []  # [name, header offset, size, crc, npy header, data offset]
        self.pos = 0

    def _local(self, name: bytes, crc: int, size: int) -> bytes:
        extra = struct.pack("<HHQQ", 1, 16, size, size)
        return struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                           len(name), len(extra)) + name + extra

    def reserve(self, name: str, npy_head: bytes, nbytes: int) -> int:
        """Room for member ``name`` (its .npy header then ``nbytes`` of data); the data's offset."""
        nm = name.encode()
        local = self._local(nm, 0, len(npy_head) + nbytes)
        self.f.seek(self.pos)
        self.f.write(local + npy_head)
        data_at = self.pos + len(local) + len(npy_head)
        self.entries.append([nm, self.pos, len(npy_head) + nbytes, None, npy_head, data_at])
        self.pos = data_at + nbytes
        self.f.truncate(self.pos)
        return data_at

    def seal_reserved(self) -> None:
        """The reserved members' CRCs, read back from the file in chunks, into their local headers."""
        for e in self.entries:
            if e[3] is not None:
                continue
            crc = zlib.crc32(e[4])
            self.f.seek(e[5])
            left = e[2] - len(e[4])
            while left:
                b = self.f.read(min(left, self._CHUNK))
                if not b:
                    raise OSError(f"{self.path}: cut short while reading member {e[0].decode()!r} back")
                crc = zlib.crc32(b, crc)
                left -= len(b)
            e[3] = crc
            self.f.seek(e[1] + 14)
            self.f.write(struct.pack("<I", crc))

    def add(self, name: str, npy_head: bytes, a: np.ndarray) -> None:
        nm = name.encode()
        data = memoryview(np.ascontiguousarray(a).reshape(-1).view(np.uint8))
        crc = zlib.crc32(data, zlib.crc32(npy_head))
        size = len(npy_head) + len(data)
        local = self._local(nm, crc, size)
        self.f.seek(self.pos)
        self.f.write(local)
        self.f.write(npy_head)
        self.f.write(data)
        self.entries.append([nm, self.pos, size, crc, npy_head, self.pos + len(local) + len(npy_head)])
        self.pos += len(local) + size

    def close(self) -> None:
        """The central directory and the zip64 end records; closes the file."""
        self.f.seek(self.pos)
        cd_at = self.pos
        for nm, at, size, crc, _, _ in self.entries:
            extra = struct.pack("<HHQQQ", 1, 24, size, size, at)
            self.f.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0x21, crc,
                                     0xFFFFFFFF, 0xFFFFFFFF, len(nm), len(extra), 0, 0, 0, 0o600 << 16,
                                     0xFFFFFFFF) + nm + extra)
        end64 = self.f.tell()
        n = len(self.entries)
        self.f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, end64 - cd_at, cd_at))
        self.f.write(struct.pack("<IIQI", 0x07064B50, 0, end64, 1))
        self.f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0))
        self.f.truncate()
        self.f.close()

    def abort(self) -> None:
        self.f.close()
        if os.path.exists(self.path):
            os.remove(self.path)


def meta_out(v, path, arrays):
    """Metadata for the JSON header; numpy arrays (e.g. perturb's per-call
    ``origin``) become .npy members, referenced as {"__ndarray__": member}."""
    if isinstance(v, np.ndarray) and v.dtype != object:
        arrays[path] = np.ascontiguousarray(v)
        return {"__ndarray__": path}
    if isinstance(v, dict):
        return {str(k): meta_out(x, f"{path}__{k}", arrays) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [meta_out(x, f"{path}__{i}", arrays) for i, x in enumerate(v)]
    return v


def json_default(o):
    """A numpy scalar or array as Python values for JSON, anything else as its str."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


#: files at least this large are memory-mapped by default (`load_native`): the size from which
#: a copy costs more memory than a machine spares lightly (a 10^7-call trace is ~450 MB)
MAP_FROM_BYTES = 256 << 20


def _file_size(path) -> int:
    """The size of the file at ``path``, 0 where it cannot be read (the open says why)."""
    try:
        return os.path.getsize(path)
    except (OSError, TypeError, ValueError):
        return 0


def load_native(path, *, limits: Limits | None = None, source: str | None = None, mmap: bool | None = None,
                window: tuple | None = None, **_common) -> Trace:
    """Read a native file (a path, a seekable binary file object, or the file's bytes: the format
    table's loader and in-place reader, `io.formats`) into a
    validated `Trace`: nothing it holds is trusted.  Every member must be stored
    (no compression, so nothing inflates), every array must have its .npy
    header's dtype, a 1-D shape and exactly the bytes it declares, the header
    must have the documented structure, and the trace must pass `Trace.check()`,
    the time range and the args rules of the Chrome importer (`validate_trace`).
    Anything else is a `TraceFormatError` naming the file and the member or
    invariant.  (Members are not CRC-checked: the structure is, completely.)

    ``mmap`` (a path only; default: files of `MAP_FROM_BYTES` or more, or over ``max_bytes``, everywhere but
    Windows, where a mapped file could not be replaced by a later save; smaller files are
    read): the arrays are mapped copy-on-write instead
    of read into memory: opening costs no copy, the pages are read when used and belong to
    the page cache (the system can drop them again), so a file larger than the memory can
    be opened (``max_bytes`` then bounds its header, the part read, not the file); ``window=(t0, t1)`` (µs) then
    keeps only the calls that overlap it (`Trace.subset`: copies of the window's calls only).
    What is mapped is a private copy of the file (`mapguard.private_copy`: a reflink, else a
    copy in the kernel), unless the process guards against SIGBUS (`mapguard.exit_on_sigbus`,
    the command line): a mapped file that another program cuts short kills the process when a
    page past its new end is touched, and inside Blender that is the user's whole session."""
    lim = resolve_limits(limits)
    if not isinstance(path, (str, os.PathLike)) and not hasattr(path, "read"):  # the file's bytes
        path = io.BytesIO(bytes(path))
    source = source if source is not None else (os.fspath(path) if not hasattr(path, "read") else "<native>")
    if mmap is None:
        # large files, and those over the read limit (they could not be read at all)
        mmap = os.name != "nt" and not hasattr(path, "read") and \
            _file_size(path) >= min(MAP_FROM_BYTES, lim.max_bytes + 1)
    try:
        trace = _load_native(path, lim, source, mmap)
        return trace if window is None else trace.subset(time_window=window)
    except TraceFormatError:
        raise
    except MemoryError:
        raise
    except RecursionError:
        raise TraceFormatError(f"{source}: damaged TraceVis3D file: nested too deeply") from None
    except Exception as e:  # zipfile, numpy and json raise many kinds on damaged input
        raise TraceFormatError(f"{source}: damaged TraceVis3D file: {type(e).__name__}: {e}") from None


def _load_native(path, lim: Limits, source: str, mmap: bool = True) -> Trace:
    def bad(msg):
        raise TraceFormatError(f"{source}: damaged TraceVis3D file: {msg}")

    mapped = mmap and not hasattr(path, "read")
    snapshot = None  # the private copy a mapped file is read from (`mapguard`)

    if not hasattr(path, "read"):
        path = os.fspath(path)
        size = os.path.getsize(path)
        if mapped and not mapguard.guarded():
            # another program may cut the file short while it is mapped (SIGBUS: no Python handler can
            # catch it): a private copy of it is mapped instead (`mapguard`)
            snapshot = mapguard.private_copy(path, source)
        if size > lim.max_bytes and not mapped:  # mapped, the calls are not read: the header is checked below
            raise TraceFormatError(f"{source}: file is {size} bytes, over the limit of {lim.max_bytes} "
                                   f"(max_bytes= to allow more)")
        fh = open(path, "rb") if snapshot is None else snapshot
    else:
        fh = path
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(0)
    try:
        try:
            zf = zipfile.ZipFile(fh)
        except zipfile.BadZipFile as e:
            raise TraceFormatError(f"{source}: damaged TraceVis3D file: not a readable zip ({e})") from None
        infos = zf.infolist()
        members = {info.filename: info for info in infos}
        if HEADER + ".npy" not in members:
            # (before the members' check: a zip of a JSON trace is no damaged TraceVis3D file)
            names = ", ".join(repr(i.filename) for i in infos[:3]) + (f" and {len(infos) - 3} more" if len(infos) > 3
                                                                      else "")
            raise TraceFormatError(f"{source}: a zip archive, not a TraceVis3D trace (no {HEADER}); "
                                   + (f"it holds {names}: unpack the trace from it and load that"
                                      if infos else "it is empty"))
        for info in infos:
            if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
                bad(f"member {info.filename!r} is compressed (TraceVis3D files are stored, never compressed)")

        def array(name: str, dtype=None, one_d=True) -> np.ndarray:
            """Member ``name``: its .npy header checked against ``dtype`` (and a 1-D
            shape), its declared size against the bytes it holds; then read straight
            from the file (stored members are plain bytes in it)."""
            info = members.get(name + ".npy")
            if info is None:
                bad(f"no member {name!r}")
            fh.seek(info.header_offset)
            local = fh.read(30)
            if len(local) < 30 or local[:4] != ZIP_MAGIC:
                bad(f"member {name!r}: no local header at byte {info.header_offset}")
            data_at = info.header_offset + 30 + struct.unpack("<H", local[26:28])[0] \
                + struct.unpack("<H", local[28:30])[0]
            if data_at + info.file_size > size:
                bad(f"member {name!r} runs past the end of the file")
            fh.seek(data_at)
            head = io.BytesIO(fh.read(min(info.file_size, 1 << 16)))
            version = npformat.read_magic(head)
            if version == (1, 0):
                shape, fortran, dt = npformat.read_array_header_1_0(head)
            elif version == (2, 0):
                shape, fortran, dt = npformat.read_array_header_2_0(head)
            else:
                bad(f"member {name!r}: .npy version {version} (1.0 or 2.0 expected)")
            if dt.hasobject or (one_d and (fortran or len(shape) != 1)):
                bad(f"member {name!r}: a 1-D array of plain values expected, got shape {shape}, dtype {dt}")
            if dtype is not None and dt != np.dtype(dtype):
                bad(f"member {name!r} has dtype {dt}, expected {np.dtype(dtype)}")
            count = math.prod(int(d) for d in shape)
            left = info.file_size - head.tell()
            if count * dt.itemsize != left:
                bad(f"member {name!r} declares {shape[0] if len(shape) == 1 else shape} values "
                    f"({count * dt.itemsize} bytes) but holds {left} bytes")
            fh.seek(data_at + head.tell())
            if mapped and count:  # in place: the file's pages, read when touched, private when written
                a = np.memmap(path if snapshot is None else snapshot, dtype=dt, mode="c", offset=data_at + head.tell(),
                              shape=(count,)).view(np.ndarray)
            elif hasattr(fh, "fileno") and not isinstance(fh, io.BytesIO):
                a = np.fromfile(fh, dtype=dt, count=count)
            else:
                a = np.frombuffer(bytearray(fh.read(left)), dt)
            if a.shape[0] != count:
                bad(f"member {name!r} is cut short")
            return a if one_d else a.reshape(shape, order="F" if fortran else "C")

        if members[HEADER + ".npy"].file_size > lim.max_bytes:
            raise TraceFormatError(f"{source}: header is {members[HEADER + '.npy'].file_size} bytes, over the "
                                   f"limit of {lim.max_bytes} (max_bytes= to allow more)")
        raw = array(HEADER, np.uint8).tobytes()
        try:
            header = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            bad(f"the header is not JSON ({type(e).__name__}: {e})")
        if not isinstance(header, dict):
            bad("the header is not a JSON object")
        if header.get("format") != FORMAT:
            raise TraceFormatError(f"{source}: header format {header.get('format')!r} is not {FORMAT!r}")
        version = header.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            bad(f"header version {version!r} is not an integer")
        if version > VERSION:
            raise TraceFormatError(
                f"{source}: written by a newer TraceVis3D (file version {version}, this one reads up to {VERSION})")
        tables = header.get("tables")
        if not isinstance(tables, dict):
            bad("header 'tables' is not an object")
        text = {}
        long_cap = lim.max_name_chars + 9  # a name the importer cut ends with "…" and 8 hex digits
        for k in STRING_TABLES:
            v = tables.get(k)
            if v is None and k in OPTIONAL_TABLES + ADDED_TABLES:  # a file from before counters, async slices
                # or the flows' categories
                v = []
            if not isinstance(v, list):
                bad(f"header table {k!r} is not a list")
            for j, x in enumerate(v):
                check_text(x, f"header table {k!r} entry {j}", long_cap, bad)
            text[k] = list(v)
        paths = header.get("function_paths")
        if not isinstance(paths, list):
            bad("header 'function_paths' is not a list")
        for j, pth in enumerate(paths):
            if not isinstance(pth, list):
                bad(f"header function_paths entry {j} is not a list")
            for x in pth:
                check_text(x, f"header function_paths entry {j}", long_cap, bad)
        arrays = {k: array(k, dt) for k, dt in ARRAY_DTYPES.items()
                  if k not in ADDED_ARRAYS or k + ".npy" in members}
        meta = meta_in(header.get("meta") or {}, lambda name: array(name, one_d=False), bad,
                       lim.max_meta_items)
        if not isinstance(meta, dict):
            bad("header 'meta' is not an object")
    finally:
        if not hasattr(path, "read"):
            fh.close()
    n_calls = header.get("n_calls")
    if n_calls is not None and n_calls != arrays["func"].shape[0]:
        bad(f"header n_calls {n_calls!r} but {arrays['func'].shape[0]} calls")
    trace = Trace(**arrays, **text, function_paths=[tuple(p) for p in paths], meta=meta)
    validate_trace(trace, source, lim)
    return trace


def check_text(x, what: str, max_chars: int, bad) -> None:
    """Call ``bad`` with the problem when ``x`` is not a string, is longer than ``max_chars``, or does not encode
    as UTF-8."""
    if not isinstance(x, str):
        bad(f"{what} is {type(x).__name__}, not a string")
    if len(x) > max_chars:
        bad(f"{what} is {len(x)} characters long (max_name_chars={max_chars - 9})")
    if not x.isascii():
        try:
            x.encode("utf-8")
        except UnicodeEncodeError:
            bad(f"{what} is not valid Unicode (a lone surrogate)")


_MAX_META_DEPTH = 32


def meta_in(v, array, bad, max_items: int | None = None):
    """The header's ``meta`` with its {"__ndarray__": member} references read
    (`meta_out` writes them).  Iterative, at most 32 levels deep and ``max_items``
    values (default: `Limits.max_meta_items`)."""
    cap = DEFAULT_LIMITS.max_meta_items if max_items is None else max_items
    root = [v]
    todo = [(root, 0, 0)]  # (container, key, depth)
    seen = 0
    while todo:
        box, key, depth = todo.pop()
        seen += 1
        if seen > cap:
            bad(f"'meta' holds more than {cap} values (max_meta_items= to allow more)")
        x = box[key]
        if depth > _MAX_META_DEPTH:
            bad(f"'meta' nested deeper than {_MAX_META_DEPTH} levels")
        if isinstance(x, dict):
            if set(x) == {"__ndarray__"}:
                ref = x["__ndarray__"]
                if not isinstance(ref, str) or ref == HEADER or ref in ARRAY_DTYPES:
                    bad(f"'meta' refers to {ref!r}, which is not one of its own arrays")
                box[key] = array(ref)
                continue
            for k2 in x:
                todo.append((x, k2, depth + 1))
        elif isinstance(x, list):
            for k2 in range(len(x)):
                todo.append((x, k2, depth + 1))
    return root[0]


def _decreases(a: np.ndarray, chunk: int = 1 << 22) -> bool:
    """Does ``a`` ever decrease?  In chunks: a mapped file's array may be larger than the memory."""
    last = a.shape[0] - 1
    return any(bool(np.any(a[k + 1: min(k + chunk, last) + 1] < a[k: min(k + chunk, last)]))
               for k in range(0, max(last, 0), chunk))


def validate_trace(t: Trace, source: str, lim: Limits) -> None:
    """Everything a Trace must satisfy before a layout or `compare` may use it
    (they index arrays with its values): the invariants of `Trace.check()` --
    per call by one numba pass (`kernels.tree.first_bad_call`), the tables by
    numpy --, times within the time range, instant scopes, and args that
    Python's json reads back.  Raises `TraceFormatError` naming ``source`` and
    the first violation.  O(size of the trace)."""
    def bad(msg):
        raise TraceFormatError(f"{source}: not a valid trace: {msg}")

    for name, dt in ARRAY_DTYPES.items():
        a = getattr(t, name)
        if not isinstance(a, np.ndarray) or a.dtype != dt or a.ndim != 1:
            bad(f"{name} must be a 1-D {np.dtype(dt)} array")
    n = len(t)
    problem = length_mismatch(t)
    if problem:
        bad(problem)
    nf, nt = len(t.function_names), t.thread_pid.shape[0]
    op = t.obj_ptr
    if op.shape[0] != n + 1 or op[0] != 0 or op[-1] != t.obj_ids.shape[0] or _decreases(op):
        bad("obj_ptr must have len(func)+1 entries, start at 0, not decrease and end at len(obj_ids)")
    if t.obj_ids.size and (t.obj_ids.min() < 0 or t.obj_ids.max() >= len(t.object_names)):
        bad(f"obj_ids outside 0..{len(t.object_names) - 1}")
    span = 2 * lim.max_abs_time
    code, i = first_bad_call(t.func, t.start, t.end, t.depth, t.parent, t.end_index, t.thread, t.kind,
                             nf, nt, len(KIND_NAMES), span)
    if code:
        bad(f"call {i}: {BAD_CALL[code]}")
    problem = flow_instant_mismatch(t, n, nt)
    if problem:
        bad(problem)
    if t.instant_ts.shape[0]:
        it, sc = t.instant_thread, t.instant_scope
        if not np.isin(sc, np.frombuffer(b"gpt", np.uint8)).all() or np.any((it >= 0) != (sc == ord("t"))):
            bad("instant_scope must be g, p or t, and t exactly for instants on a thread")
        if not (np.isfinite(t.instant_ts).all() and np.abs(t.instant_ts).max() <= span):
            bad("instant_ts holds a value that is not a time")
    check_side(t, nt, bad)
    for name in ("counter_ts", "async_start", "async_end"):
        a = getattr(t, name)
        if a.size and np.abs(a).max() > span:
            bad(f"{name} holds a value that is not a time")
    na = t.args_call.shape[0]
    ptr = t.args_ptr
    if ptr.shape[0] != na + 1 or ptr[0] != 0 or ptr[-1] != t.args_blob.shape[0] or np.any(ptr[1:] < ptr[:-1]):
        bad("args_ptr must have len(args_call)+1 entries, start at 0, not decrease and end at len(args_blob)")
    if na:
        ac = t.args_call
        if np.any(ac[1:] <= ac[:-1]) or ac[0] < 0 or ac[-1] >= n:
            bad("args_call must be strictly increasing call indices")
        st = jv.json_spans_status(t.args_blob, ptr[:-1], ptr[1:] - ptr[:-1], lim.max_args_nesting,
                                  lim.max_args_bytes)
        if np.any(st != jv.JSON_OK):
            k = int(np.flatnonzero(st != jv.JSON_OK)[0])
            why = {jv.JSON_INVALID: "not JSON", jv.JSON_TOO_DEEP: f"nested deeper than {lim.max_args_nesting}",
                   jv.JSON_TOO_BIG: f"longer than {lim.max_args_bytes} bytes"}[int(st[k])]
            bad(f"the args of call {int(t.args_call[k])} are {why}")
