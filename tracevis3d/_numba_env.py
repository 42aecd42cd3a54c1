"""Point numba's on-disk cache at a user directory before numba is imported.

Kernels use ``@njit(cache=True)``; by default numba would write its cache next to
the source files, i.e. into the add-on folder, which an extension must never do.
``NUMBA_CACHE_DIR`` wins when set (the Blender add-on sets it to the extension's
user path before importing the core); otherwise we use the platform cache dir.
Entries written for other versions of the package's numba sources are dropped first
(`kernel_cache.drop_stale_entries`: numba would keep a callee's old code inside a caller).
"""
import os
import sys


def default_cache_dir() -> str:
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "tracevis3d", "numba")


def configure(cache_dir: str | None = None) -> str:
    """Set NUMBA_CACHE_DIR (unless already set) and return the directory used."""
    if cache_dir:
        os.environ["NUMBA_CACHE_DIR"] = cache_dir
    os.environ.setdefault("NUMBA_CACHE_DIR", default_cache_dir())
    d = os.environ["NUMBA_CACHE_DIR"]
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:
        pass
    from .kernel_cache import drop_stale_entries  # stdlib only: numba is not imported

    drop_stale_entries(d, os.path.dirname(os.path.abspath(__file__)))
    if "numba" in sys.modules:  # imported earlier by someone else: tell it now
        try:
            from numba.core import config

            config.reload_config()
        except Exception:  # pragma: no cover - best effort
            pass
    return d


configure()
