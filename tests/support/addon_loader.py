"""Loads the add-on (the repository root) in a pytest process as the package ``tv3d_addon``
(not a test module).

Its relative imports of the core (``from ..tracevis3d.blender import session``) are answered
with the modules the tests already use (``tracevis3d.blender.session``): one copy of the
core per process, so numba compiles (and caches on disk) every kernel under one module name
only; a second copy under another name would write cache entries that no other process can
load.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import pathlib
import sys

PKG = "tv3d_addon"
REPO = pathlib.Path(__file__).resolve().parents[2]
_CORE = f"{PKG}.tracevis3d"


class _SameCore(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``tv3d_addon.tracevis3d[.x]`` is the module ``tracevis3d[.x]``."""

    def find_spec(self, name, path=None, target=None):
        if name != _CORE and not name.startswith(_CORE + "."):
            return None
        return importlib.util.spec_from_loader(name, self, is_package=True)

    def create_module(self, spec):
        real = importlib.import_module("tracevis3d" + spec.name[len(_CORE):])
        self._specs = getattr(self, "_specs", {})
        self._specs[spec.name] = real.__spec__
        return real

    def exec_module(self, module):
        module.__spec__ = self._specs.get(module.__spec__.name, module.__spec__)  # keep its own


def load_addon():
    """The add-on package (imported once per process, not registered)."""
    if PKG in sys.modules:
        return sys.modules[PKG]
    if not any(isinstance(f, _SameCore) for f in sys.meta_path):
        sys.meta_path.insert(0, _SameCore())
    spec = importlib.util.spec_from_file_location(PKG, REPO / "__init__.py", submodule_search_locations=[str(REPO)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[PKG] = mod
    spec.loader.exec_module(mod)
    return mod


def registered_addon():
    """A module-scoped fixture body: the add-on registered on an empty factory scene, and
    unregistered (scene reset) afterwards."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    mod = load_addon()
    mod.register()
    try:
        yield mod
    finally:
        mod.unregister()
        bpy.ops.wm.read_factory_settings(use_empty=True)
