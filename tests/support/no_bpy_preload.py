"""A ``dask worker --preload`` module that makes ``import bpy`` fail in the worker process, as
on a machine where the bpy module was never installed (the tests' workers share this
interpreter, which has it)."""
import importlib.abc
import sys


class _NoBpy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "bpy" or name.startswith("bpy.") or name == "_bpy":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.modules.pop("bpy", None)
sys.meta_path.insert(0, _NoBpy())
