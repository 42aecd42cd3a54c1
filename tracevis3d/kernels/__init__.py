"""Numba kernels over the Trace arrays (pure functions, no bpy).

Loading a compiled kernel from numba's cache starts, in numba 0.68, with a full refresh of the
target context (``Cache.load_overload`` → ``BaseContext.refresh``): the first one imports and
installs every typing and lowering registry numba has (numpy, linalg, random, typed containers,
...), a third of a second on 2 cores, which only compiling needs -- a cached kernel's machine
code links against numba's runtime alone.  `_light_cache_loads` makes the loads of this
package's kernels (its other modules' too: `layout.cluster`'s first load had cost a 10^7 icicle's
layout the refresh, ~0.1 s) initialise the runtime only (`numba.core.runtime.rtsys.initialize`,
what the refresh does first); a compilation refreshes the contexts itself, as always
(``CompilerBase``), and other packages' kernels load as numba loads them.  `lazy_link`
(installed with it) keeps a loaded kernel's linking module as bytes until something links
against it, and a loaded entry compiled for other argument types than asked is compiled again.  `cache_save` makes every save
to numba's cache safe for processes that compile side by side.
"""
import os

try:
    from numba.core import caching as _caching
    from numba.core import codegen as _codegen
    from numba.core.runtime import rtsys as _rtsys
except ImportError:  # pragma: no cover - numba is a dependency
    _caching = _codegen = _rtsys = None


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
    from . import cache_save, lazy_link

    lazy = lazy_link.install(_codegen)

    def load_overload(self, sig, target_context):
        if not getattr(getattr(self, "_py_func", None), "__module__", "").startswith(prefix):
            return full(self, sig, target_context)
        _rtsys.initialize(target_context)  # the runtime the cached code calls (allocation, ...)
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


_safe_cache_saves()
_light_cache_loads()
