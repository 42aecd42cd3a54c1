"""Numba kernels over the Trace arrays (pure functions, no bpy).

Loading a compiled kernel from numba's cache starts, in numba 0.68, with a full refresh of the
target context (``Cache.load_overload`` → ``BaseContext.refresh``): the first one imports and
installs every typing and lowering registry numba has (numpy, linalg, random, typed containers,
...), a third of a second on 2 cores, which only compiling needs -- a cached kernel's machine
code links against numba's runtime alone.  `_light_cache_loads` makes the loads of this
package's kernels (its other modules' too: `layout.cluster`'s first load had cost a 10^7 icicle's
layout the refresh, ~0.1 s) initialise the runtime only (`numba.core.runtime.rtsys.initialize`,
what the refresh does first; its compiled module read from the cache folder, `nrt_cache`); a
compilation refreshes the contexts itself, as always (``CompilerBase``), and other packages'
kernels load as numba loads them.  `lazy_link`
(installed with it) keeps a loaded kernel's linking module as bytes until something links
against it, and a loaded entry compiled for other argument types than asked is compiled again.  `cache_save` makes every save
to numba's cache safe for processes that compile side by side.
"""
import os
import sys
import threading


class _NoYamlForNumba:
    """An import finder that refuses ``yaml`` to one thread while it imports numba.

    numba's config module imports PyYAML whenever it is installed (dask and many other packages
    bring it), only to read a ``.numba_config.yaml`` in the working folder if there is one; the
    import (libyaml's extension and nine modules) cost 20-60 ms of a first JSON load's critical
    path (the reader's import on the second core).  Installed by `_import_numba` only when numba
    and yaml are not imported yet and the working folder has no such file; other threads import
    yaml as always, and so does this one after numba's import (the finder is inert then).  numba
    then runs as without PyYAML: a config file made later in the process (read only on
    ``numba.core.config.reload_config()``) draws numba's warning that PyYAML is missing."""

    def __init__(self, ident: int):
        self.ident = ident
        #: refusing (while numba is imported); afterwards the finder stays in ``sys.meta_path``,
        #: inert: removing it from the list another thread may be walking in an import could
        #: make that thread skip the next finder (its import then fails), inserting cannot
        self.active = True

    def find_spec(self, name, path=None, target=None):
        if self.active and (name == "yaml" or name.startswith("yaml.")) and threading.get_ident() == self.ident:
            raise ModuleNotFoundError(f"No module named {name!r} (numba reads no config file here)", name=name)
        return None


def _import_numba():
    """numba's cache, code generation and runtime modules (what this package's patches need),
    numba imported without PyYAML where it does not need it (`_NoYamlForNumba`); (None, None,
    None) without numba."""
    blocker = None
    if "numba" not in sys.modules and "yaml" not in sys.modules and not os.path.exists(".numba_config.yaml"):
        blocker = _NoYamlForNumba(threading.get_ident())
        sys.meta_path.insert(0, blocker)
    try:
        from numba.core import caching, codegen
        from numba.core.runtime import rtsys
    except ImportError:  # pragma: no cover - numba is a dependency
        return None, None, None
    finally:
        if blocker is not None:
            blocker.active = False
    return caching, codegen, rtsys


_caching, _codegen, _rtsys = _import_numba()


def _light_cache_loads() -> bool:
    """Install the light load for this package's kernels once per process; False when numba's
    internals are not the expected ones (then numba loads them as it does) or
    ``TRACEVIS3D_FULL_REFRESH`` is set."""
    if _caching is None or os.environ.get("TRACEVIS3D_FULL_REFRESH"):
        return False
    cache_cls = _caching.Cache
    full = cache_cls.load_overload
    if getattr(full, "tracevis3d_light", False):
        return True
    if not all(hasattr(cache_cls, a) for a in ("_load_overload", "_guard_against_spurious_io_errors")) \
            or not hasattr(_rtsys, "initialize"):
        return False
    prefix = __name__.rpartition(".")[0] + "."  # the package's: `layout.cluster`'s kernel too
    from . import cache_save, lazy_link, nrt_cache

    lazy = lazy_link.install(_codegen)

    def load_overload(self, sig, target_context):
        if not getattr(getattr(self, "_py_func", None), "__module__", "").startswith(prefix):
            return full(self, sig, target_context)
        # the runtime the cached code calls (allocation, ...), its module from the cache folder
        nrt_cache.initialize(_rtsys, target_context)
        before = lazy_link.lazy_loading(lazy)
        try:
            with self._guard_against_spurious_io_errors():
                cres = self._load_overload(sig, target_context)
        finally:
            lazy_link.lazy_loading(before)
        if cres is not None and not cache_save.loaded_signature_matches(cres, sig):
            return None  # another signature's code under this one's entry (`cache_save`): compiled again
        return cres

    load_overload.tracevis3d_light = True
    load_overload.__doc__ = full.__doc__
    cache_cls.load_overload = load_overload
    return True


def _safe_cache_saves() -> bool:
    """Every numba cache save made safe for processes side by side (`cache_save`), once per
    process; False when numba's internals are not the expected ones."""
    if _caching is None:
        return False
    from . import cache_save

    return cache_save.install(_caching)


def _cache_folders_checked_once() -> bool:
    """numba checks a kernel's cache folder as it makes the kernel's dispatcher
    (``_CacheLocator.ensure_cache_path``: ``os.makedirs``, then a temporary file made and removed
    to see that the folder is writable), for every kernel: 163 of them, ~0.055 ms each, on a first
    JSON load's critical path (the reader's modules are imported while the file is read), and again
    before each save.  For this package's kernels a folder that passed is only looked up again in
    the process (``os.path.isdir``: one removed meanwhile is checked and made again, as numba
    would).  False when numba's internals are not the expected ones."""
    if _caching is None or not hasattr(_caching, "_CacheLocator"):
        return False
    locator = _caching._CacheLocator
    full = getattr(locator, "ensure_cache_path", None)
    if full is None or getattr(full, "tracevis3d_once", False):
        return full is not None
    package_dir = os.path.dirname(os.path.abspath(__file__)).rpartition(os.sep)[0] + os.sep
    checked: set = set()

    def ensure_cache_path(self):
        if not str(getattr(self, "_py_file", "")).startswith(package_dir):
            return full(self)
        path = self.get_cache_path()
        if path not in checked or not os.path.isdir(path):  # (a save checks again: one removed is made)
            full(self)              # raises as numba's does when it cannot be made or written
            checked.add(path)

    ensure_cache_path.tracevis3d_once = True
    ensure_cache_path.__doc__ = full.__doc__
    locator.ensure_cache_path = ensure_cache_path
    return True


_safe_cache_saves()
_light_cache_loads()
_cache_folders_checked_once()
