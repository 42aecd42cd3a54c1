"""Writing an output whole or not at all: `replaced_whole`, the one way every writer of
TraceVis3D replaces a file (trace saves, figures, .blend scenes, video, animation frames,
sessions, manifests).

The bytes go to a temporary file of a fresh name beside the target (same folder, so the final
rename is atomic).  Once the writer is done, the temporary is checked to be complete (a
``verify`` function: the PNG's end chunk, the .blend's end block, the video's index; see
`tracevis3d.io.outputs`), flushed to the disk (fsync), and only then renamed over the target.
So a failed or interrupted write -- a full disk, a quota, a file-size limit, a crash -- never
leaves half a file and never loses the file that was there, and no temporary is left behind.
Errors are one line naming the target the user gave and the cause ("disk full", "file too
large").

Targets are checked first (`check_save_target`): a symbolic link is followed, so the link stays
a link and the file it points to is replaced; a folder, a FIFO, a device or a socket is refused
(replacing ``/dev/null`` with a regular file, or a FIFO another program reads, would break the
system, not save a trace).  The saved file gets the permissions of the file it replaces, or
those a plain ``open`` would give (the process's umask): not the owner-only mode of a temporary.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from typing import Callable

__all__ = ["check_save_target", "replaced_whole", "write_whole", "output_error", "failed_write_cause", "OutputError", "CAUSES"]

#: what the system's errors mean to a user who saves a file
CAUSES = {
    errno.ENOSPC: "disk full",
    errno.EFBIG: "file too large (a file-size limit)",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EIO: "input/output error",
    errno.ENAMETOOLONG: "file name too long",
}


class OutputError(OSError):
    """An output that could not be written whole; the message is one line: the target and the
    cause.  The file that was there (if any) is unchanged."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}" if self.filename else str(self.strerror)


def output_error(e: BaseException, target: str, what: str = "cannot save") -> OutputError:
    """``e`` as an `OutputError` of one line naming ``target`` and the cause."""
    if isinstance(e, OSError):
        cause = CAUSES.get(e.errno) or e.strerror or str(e)
        err = OutputError(e.errno or errno.EIO, f"{what}: {cause}", target)
    else:
        err = OutputError(errno.EIO, f"{what}: {e}", target)
    return err


def failed_write_cause(folder: str, message: str = "") -> str:
    """Why a writer that does not say so (Blender, in C) probably failed to write into
    ``folder``: "disk full" when the file system has less than 1 MiB free, "file too large (a
    file-size limit of N bytes)" under an RLIMIT_FSIZE, else ``message`` (what the writer said)."""
    try:
        st = os.statvfs(folder)
        if st.f_bavail * st.f_frsize < (1 << 20):
            return "disk full"
    except OSError:
        pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if soft != resource.RLIM_INFINITY:
            return f"file too large (a file-size limit of {soft} bytes)"
    except (ImportError, OSError, ValueError):
        pass
    return " ".join(str(message).split()) or "the writer failed"


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def check_save_target(path) -> str:
    """The file a save to ``path`` replaces: ``path`` itself, or, when it is a symbolic link,
    the file the link points to (the link stays).  Refused with an `OSError` naming ``path``: a
    folder (`IsADirectoryError`), a folder that does not exist (`FileNotFoundError`), a FIFO, a
    device or a socket (`OutputError`), a link that loops."""
    target = os.fspath(path)
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, "cannot save: it is a folder; give a file name", target)
    real = target
    if os.path.islink(target):
        try:
            real = os.path.realpath(target, strict=True) if os.path.exists(target) else _dangling(target)
        except OSError as e:  # a loop of links
            raise OutputError(e.errno or errno.ELOOP, "cannot save: a loop of symbolic links", target) from None
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise output_error(e, target) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "cannot save: it is a folder; give a file name", target)
        raise OutputError(errno.EINVAL, f"cannot save: it is {_kind(st.st_mode)}, not a regular file "
                                        f"(nothing was written)", target)
    folder = os.path.dirname(os.path.abspath(real))
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, f"cannot save: its folder {folder} does not exist", target)
    return real


def _dangling(link: str) -> str:
    """Where a link that points to no file yet points (followed link by link, at most 40)."""
    cur = link
    for _ in range(40):
        if not os.path.islink(cur):
            return os.path.abspath(cur)
        nxt = os.readlink(cur)
        cur = nxt if os.path.isabs(nxt) else os.path.join(os.path.dirname(os.path.abspath(cur)), nxt)
    raise OSError(errno.ELOOP, "a loop of symbolic links", link)


def _new_file_mode(target: str) -> int:
    """The permission bits the saved file gets: the replaced file's, else 0o666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mask = os.umask(0o022)  # read it (there is no getter) and put it back at once
        os.umask(mask)
        return 0o666 & ~mask


def _fsync_path(path: str, directory: bool = False) -> None:
    fd = os.open(path, (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)) if directory else os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as e:
        if not directory or e.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def replaced_whole(path, verify: Callable[[str], None] | None = None, suffix: str = ".part",
                   what: str = "cannot save"):
    """Yields the path of a new, empty temporary file beside the file ``path`` names (a link's
    target: `check_save_target`); the caller writes the whole file there.  On a normal exit the
    temporary is checked by ``verify(tmp)`` (raises when it is incomplete), flushed to the disk
    and renamed over the target; on any exception it is removed and the target is left exactly
    as it was.  An `OSError` on the way is raised as an `OutputError` naming ``path`` and the
    cause ("cannot save: disk full"); ``suffix``: the temporary's ending (a writer that picks
    its format by the name, as Blender does, needs the target's own)."""
    shown = os.fspath(path)
    target = check_save_target(path)
    folder = os.path.dirname(os.path.abspath(target))
    tmp = None
    try:
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=suffix, dir=folder)
            os.close(fd)
        except OSError as e:
            raise output_error(e, shown, what) from None
        yield tmp
        try:
            if verify is not None:
                try:
                    verify(tmp)
                except OSError as e:  # named by the temporary: say it of the target
                    raise OutputError(e.errno or errno.EIO, f"{what}: {e.strerror}", shown) from None
            with contextlib.suppress(OSError):  # a share that keeps no modes (CIFS, FAT) still saves
                os.chmod(tmp, _new_file_mode(target))
            _fsync_path(tmp)
            os.replace(tmp, target)
            tmp = None
            with contextlib.suppress(OSError):
                _fsync_path(folder, directory=True)
        except OSError as e:
            if isinstance(e, OutputError):
                raise
            raise output_error(e, shown, what) from None
    except OSError as e:
        if isinstance(e, OutputError) or e.filename == shown:
            raise
        raise output_error(e, shown, what) from e
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_whole(path, data: bytes | str, what: str = "cannot save") -> None:
    """``data`` (bytes, or text written as UTF-8) as the whole content of ``path``, through
    `replaced_whole`: a small output (a JSON manifest, a bench table, a session) that is either
    all there or, on any failure, the file that was there before, untouched."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)

    def same_size(tmp: str) -> None:
        if os.path.getsize(tmp) != len(raw):
            raise OSError(errno.EIO, "written short")

    with replaced_whole(path, verify=same_size, what=what) as tmp, open(tmp, "wb") as f:
        f.write(raw)
