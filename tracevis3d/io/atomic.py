"""Saving a file whole or not at all: `replaced_whole`, the one way every writer of a trace
file (native, compact, Chrome JSON, the live session's recording) replaces its target.

The bytes go to a temporary file of a fresh name beside the target (same folder, so the
final rename is atomic), which replaces the target only once complete.  So a failed or
interrupted save never leaves half a file, never loses the file that was there, and never
overwrites a user's file that happens to have the temporary's name (a fixed ``path + ".tmp"``
did); two saves to one folder never share a temporary.  The saved file gets the permissions
of the file it replaces, or those a plain ``open`` would give (the process's umask): not the
owner-only mode of a temporary.  Errors name the target the user gave, not the temporary.
"""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile

__all__ = ["check_save_target", "replaced_whole"]


def check_save_target(path) -> str:
    """``path`` as a string, once it is known to be a place a file can be saved to: not a
    folder, and in a folder that exists (`IsADirectoryError`, `FileNotFoundError` naming it)."""
    target = os.fspath(path)
    if os.path.isdir(target):
        raise IsADirectoryError(21, "cannot save: it is a folder; give a file name", target)
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise FileNotFoundError(2, f"cannot save: its folder {folder} does not exist", target)
    return target


def _new_file_mode(target: str) -> int:
    """The permission bits the saved file gets: the replaced file's, else 0o666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mask = os.umask(0o022)  # read it (there is no getter) and put it back at once
        os.umask(mask)
        return 0o666 & ~mask


@contextlib.contextmanager
def replaced_whole(path):
    """Yields the path of a new, empty temporary file beside ``path``; the caller writes the
    whole file there.  On a normal exit it replaces ``path``; on any exception it is removed
    and ``path`` is left as it was.  An `OSError` on the way is raised again naming ``path``
    ("cannot save: <reason>")."""
    target = check_save_target(path)
    folder = os.path.dirname(os.path.abspath(target))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".part", dir=folder)
        os.close(fd)
        yield tmp
        with contextlib.suppress(OSError):  # a share that keeps no modes (CIFS, FAT) still saves
            os.chmod(tmp, _new_file_mode(target))
        os.replace(tmp, target)
        tmp = None
    except OSError as e:
        if e.filename == target or e.errno is None:
            raise
        raise type(e)(e.errno, f"cannot save: {e.strerror}", target) from e
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
