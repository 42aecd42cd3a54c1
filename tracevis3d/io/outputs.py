"""Is an output file complete?  The cheap checks `atomic.replaced_whole` runs on a temporary
before it replaces the user's file (bpy-free: they read bytes only).

Blender writes figures, scenes and videos in C and does not always report a failed write (a
full disk or a file-size limit left a truncated PNG or a .blend without its end block, and the
render still said "FINISHED"), so each check reads what a complete file must end with:

- PNG: the signature, then chunks (length, type, data, CRC) walked to an ``IEND`` chunk that ends
  the file exactly;
- JPEG: SOI at the start, EOI (``FF D9``) at the end;
- OpenEXR: the magic number and a header that ends inside the file, and every offset of the first
  part's chunk table inside the file;
- TIFF: the byte-order mark and the first IFD inside the file;
- .blend: the ``BLENDER`` header (or a zstd frame, a compressed .blend) and, uncompressed, the
  ``ENDB`` block at its end;
- MP4 / MOV: top-level boxes that tile the file exactly, one of them ``moov`` (the index a
  player needs; FFmpeg writes it last);
- Matroska / WebM: the EBML header and a Segment whose declared size fits the file;
- zip (the native trace file): the end-of-central-directory record;
- anything else: not empty.
Each raises `IncompleteOutput` (an `OSError`: the writers report it like a full disk) naming
what is missing.
"""
from __future__ import annotations

import errno
import os
import struct

from .atomic import OutputError

__all__ = ["IncompleteOutput", "verify_output", "verify_png", "verify_blend", "verify_video", "VERIFIERS"]


class IncompleteOutput(OutputError):
    """An output file that is not complete (its writer was stopped: full disk, size limit...)."""

    def __init__(self, path: str, what: str):
        from .atomic import failed_write_cause

        cause = failed_write_cause(os.path.dirname(os.path.abspath(path)), "")
        why = f"{cause}: " if cause != "the writer failed" else ""
        super().__init__(errno.EIO, f"{why}the file written is incomplete ({what}): not kept", path)


def _size(path: str) -> int:
    return os.path.getsize(path)


def verify_png(path: str) -> None:
    n = _size(path)
    with open(path, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            raise IncompleteOutput(path, "no PNG signature")
        pos = 8
        while pos + 12 <= n:
            f.seek(pos)
            head = f.read(8)
            length, kind = struct.unpack(">I4s", head)
            end = pos + 12 + length
            if end > n:
                break
            if kind == b"IEND":
                if end != n:
                    raise IncompleteOutput(path, f"{n - end} bytes after the PNG's end chunk")
                return
            pos = end
    raise IncompleteOutput(path, "the PNG has no end chunk (IEND)")


def verify_jpeg(path: str) -> None:
    n = _size(path)
    with open(path, "rb") as f:
        head = f.read(2)
        f.seek(max(0, n - 2))
        tail = f.read(2)
    if head != b"\xff\xd8" or tail != b"\xff\xd9":
        raise IncompleteOutput(path, "the JPEG has no end marker")


#: scan lines per chunk of each OpenEXR compression (none, RLE, ZIPS, ZIP, PIZ, PXR24, B44, B44A, DWAA, DWAB)
_EXR_LINES = (1, 1, 1, 16, 32, 16, 32, 32, 32, 256)


def verify_exr(path: str) -> None:
    """A single-part scan-line OpenEXR: magic, a header that ends, an offset table whose every
    chunk lies inside the file, the last chunk's data too (tiled and multi-part files: the header
    only)."""
    n = _size(path)
    with open(path, "rb") as f:
        data = f.read(min(n, 1 << 20))
    if data[:4] != b"\x76\x2f\x31\x01":
        raise IncompleteOutput(path, "no OpenEXR magic number")
    pos = 8
    attrs = {}
    while True:
        if pos >= len(data):
            raise IncompleteOutput(path, "the OpenEXR header is cut short")
        if data[pos] == 0:
            pos += 1
            break
        z1 = data.find(b"\0", pos)
        z2 = data.find(b"\0", z1 + 1) if z1 >= 0 else -1
        if z1 < 0 or z2 < 0 or z2 + 5 > len(data):
            raise IncompleteOutput(path, "the OpenEXR header is cut short")
        size = struct.unpack("<i", data[z2 + 1: z2 + 5])[0]
        if size < 0 or z2 + 5 + size > len(data):
            raise IncompleteOutput(path, "the OpenEXR header is cut short")
        attrs[data[pos:z1]] = data[z2 + 5: z2 + 5 + size]
        pos = z2 + 5 + size
    if data[5] & 0x12 or b"dataWindow" not in attrs or b"compression" not in attrs:
        return  # tiled or multi-part: the header is all that is checked
    y0, y1 = struct.unpack("<4i", attrs[b"dataWindow"][:16])[1::2]
    comp = attrs[b"compression"][0] if attrs[b"compression"] else 0
    per = _EXR_LINES[comp] if comp < len(_EXR_LINES) else 1
    count = (max(1, y1 - y0 + 1) + per - 1) // per
    if pos + 8 * count > n:
        raise IncompleteOutput(path, "the OpenEXR offset table is cut short")
    with open(path, "rb") as f:
        f.seek(pos)
        table = struct.unpack(f"<{count}Q", f.read(8 * count))
        last = max(table)
        if last + 8 > n:
            raise IncompleteOutput(path, "a chunk of the OpenEXR image lies past the end of the file")
        f.seek(last)
        _, size = struct.unpack("<ii", f.read(8))
    if size < 0 or last + 8 + size > n:
        raise IncompleteOutput(path, "the last chunk of the OpenEXR image is cut short")


def verify_tiff(path: str) -> None:
    n = _size(path)
    with open(path, "rb") as f:
        head = f.read(8)
    if head[:4] not in (b"II*\x00", b"MM\x00*"):
        raise IncompleteOutput(path, "no TIFF header")
    off = struct.unpack("<I" if head[:2] == b"II" else ">I", head[4:8])[0]
    if not 8 <= off < n:
        raise IncompleteOutput(path, "the TIFF's first image directory lies past the end")


def verify_blend(path: str) -> None:
    """A .blend: its header, then blocks to an ``ENDB`` block that ends the file exactly (its size
    by the header: ``BLENDER17-01`` (Blender 5) 32 bytes, ``BLENDER-`` (64-bit pointers) 24,
    ``BLENDER_`` (32-bit) 20).  A zstd-compressed .blend: its frame magic only (TraceVis3D saves
    uncompressed)."""
    n = _size(path)
    with open(path, "rb") as f:
        head = f.read(17)
        f.seek(max(0, n - 64))
        tail = f.read(64)
    if head[:4] == b"\x28\xb5\x2f\xfd":
        return
    if not head.startswith(b"BLENDER"):
        raise IncompleteOutput(path, "no .blend header")
    end_block = 32 if head[7:9] == b"17" else 24 if head[7:8] == b"-" else 20
    if len(tail) < end_block or tail[len(tail) - end_block: len(tail) - end_block + 4] != b"ENDB":
        raise IncompleteOutput(path, "the .blend has no end block (ENDB)")


def _verify_isobmff(path: str) -> None:
    n = _size(path)
    seen = set()
    with open(path, "rb") as f:
        pos = 0
        while pos < n:
            f.seek(pos)
            head = f.read(16)
            if len(head) < 8:
                raise IncompleteOutput(path, "a video box is cut short")
            size, kind = struct.unpack(">I4s", head[:8])
            if size == 1:
                if len(head) < 16:
                    raise IncompleteOutput(path, "a video box is cut short")
                size = struct.unpack(">Q", head[8:16])[0]
            elif size == 0:
                size = n - pos
            if size < 8 or pos + size > n:
                raise IncompleteOutput(path, f"the video's {kind.decode('latin-1')!r} box runs past the end")
            seen.add(kind)
            pos += size
    if b"moov" not in seen:
        raise IncompleteOutput(path, "the video has no index (moov box)")


def _ebml_vint(data: bytes, pos: int) -> tuple:
    first = data[pos]
    length = 1
    mask = 0x80
    while length <= 8 and not first & mask:
        mask >>= 1
        length += 1
    if length > 8 or pos + length > len(data):
        raise ValueError("bad EBML number")
    value = first & (mask - 1)
    for b in data[pos + 1: pos + length]:
        value = (value << 8) | b
    unknown = value == (1 << (7 * length)) - 1
    return value, pos + length, unknown


def _verify_matroska(path: str) -> None:
    n = _size(path)
    with open(path, "rb") as f:
        data = f.read(min(n, 4096))
    if data[:4] != b"\x1a\x45\xdf\xa3":
        raise IncompleteOutput(path, "no EBML header")
    try:
        size, pos, _ = _ebml_vint(data, 4)
        pos += size
        if data[pos: pos + 4] != b"\x18\x53\x80\x67":
            raise IncompleteOutput(path, "no Matroska segment")
        seg, pos, unknown = _ebml_vint(data, pos + 4)
    except (ValueError, IndexError):
        raise IncompleteOutput(path, "the Matroska header is cut short") from None
    if not unknown and pos + seg > n:
        raise IncompleteOutput(path, "the Matroska segment runs past the end")
    if unknown:
        raise IncompleteOutput(path, "the Matroska segment's size was never written")


def verify_video(path: str) -> None:
    ext = os.path.splitext(path)[1].lower()
    if ext in (".mkv", ".webm"):
        _verify_matroska(path)
    else:
        _verify_isobmff(path)


def verify_zip(path: str) -> None:
    import zipfile

    if not zipfile.is_zipfile(path):
        raise IncompleteOutput(path, "the zip has no end record")


def verify_nonempty(path: str) -> None:
    if _size(path) == 0:
        raise IncompleteOutput(path, "it is empty")


#: checks by the target's extension
VERIFIERS = {".png": verify_png, ".jpg": verify_jpeg, ".jpeg": verify_jpeg, ".exr": verify_exr, ".tif": verify_tiff,
             ".tiff": verify_tiff, ".blend": verify_blend, ".mp4": verify_video, ".mov": verify_video,
             ".mkv": verify_video, ".webm": verify_video, ".npz": verify_zip}


def verify_output(path: str, like: str | None = None) -> None:
    """Check ``path`` by the extension of ``like`` (default: its own): `VERIFIERS`, else not empty."""
    ext = os.path.splitext(like or path)[1].lower()
    VERIFIERS.get(ext, verify_nonempty)(path)
