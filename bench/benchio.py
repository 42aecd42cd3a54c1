"""Bench outputs users keep (``--json`` tables) written whole or not at all: the JSON goes to a
temporary file beside the target, is flushed to the disk, then renamed over it, so an
interrupted or failed bench never leaves half a file in place of the last good one.  (Plain
standard library: the bench scripts also run against other checkouts of tracevis3d.)"""
from __future__ import annotations

import json
import os
import tempfile


def write_json_whole(path, obj, **dump_options) -> None:
    target = os.path.realpath(os.fspath(path))  # a link stays a link; the file it names is replaced
    folder = os.path.dirname(target) or "."
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(obj, f, **dump_options)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
