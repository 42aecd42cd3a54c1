"""Cached kernels made callable without reading their linking module until something links them.

A kernel that numba loads from its cache (numba 0.68, ``CPUCodeLibrary._unserialize``, the
"object" kind) arrives as two things: its machine code, which the process runs, and the LLVM
bitcode of its whole module, which numba parses at once (``llvmlite.binding.parse_bitcode``)
and then walks symbol by symbol (``JitEngine._load_defined_symbols``, three foreign calls a
symbol) so that it could link the kernel into code compiled later.  A process that only runs
cached kernels never links them, yet pays both: the 21 kernel loads of a first Chrome JSON load
took 0.135-0.142 s with them and take 0.055-0.059 s without (fresh processes, quiet 2-core
machine; 0.58-0.63 s against 0.21-0.27 s at load average 5).

`install` makes the loads of this package's kernels keep the bitcode as bytes and read it only
when it is asked for, which is exactly where numba asks:

* the module for linking (``CPUCodeLibrary._get_module_for_linking``: a kernel compiled later
  that calls a cached one) parses the bytes then, and records its symbols as the load did;
* the kernel's own entry point (``JITCodeLibrary.get_pointer_to_function``, what the dispatcher
  calls once a load) is asked of the execution engine directly (MCJIT answers 0 for a name it
  lacks; then numba's own path answers, from its symbol set);
* any other question of the symbol set (``JitEngine.is_symbol_defined``) that misses first reads
  every library still holding its bytes, so the answer is the one numba would give.

Other packages' kernels, compilations and numba's bitcode caches load as numba loads them.
Installed once, by `tracevis3d.kernels`, when numba's internals are the expected ones and
``TRACEVIS3D_FULL_REFRESH`` is not set (numba's own loads, end to end).
"""
from __future__ import annotations

import threading
import weakref

#: the thread's load of one of this package's kernels is under way (`install`'s load wrapper)
_loading = threading.local()
#: on a library loaded lazily: its linking module's bitcode, not parsed yet
PENDING = "_tracevis3d_bitcode"
#: on numba's execution engine: weak references to the libraries still holding their bitcode
_PENDING_LIBS = "_tracevis3d_pending"


def lazy_loading(flag: bool) -> bool:
    """Mark (``flag``) whether this thread is loading one of the package's kernels; the flag
    before, to restore."""
    before = getattr(_loading, "on", False)
    _loading.on = flag
    return before


def pending_bitcode(library) -> bool:
    """Whether ``library`` (a numba code library) still holds its linking module unread."""
    return PENDING in getattr(library, "__dict__", {})


def _read_linking_module(library):
    """Parse ``library``'s kept bitcode into its linking module and record its symbols, as
    numba's load would have; the module."""
    import llvmlite.binding as ll

    bitcode = library.__dict__.pop(PENDING, None)
    if bitcode is not None:
        library._shared_module = ll.parse_bitcode(bitcode)
        library._codegen._engine._load_defined_symbols(library._shared_module)
    return library._shared_module


def install(codegen_module) -> bool:
    """Patch numba's code libraries and engine (``codegen_module``: ``numba.core.codegen``) for
    lazy linking modules; False (nothing patched) when they are not the expected ones."""
    lib_cls = getattr(codegen_module, "CPUCodeLibrary", None)
    jit_cls = getattr(codegen_module, "JITCodeLibrary", None)
    eng_cls = getattr(codegen_module, "JitEngine", None)
    if lib_cls is None or jit_cls is None or eng_cls is None:
        return False
    unserialize = lib_cls.__dict__.get("_unserialize")
    if getattr(getattr(unserialize, "__func__", None), "tracevis3d_lazy", False):
        return True
    needed = (hasattr(lib_cls, "_get_module_for_linking") and hasattr(jit_cls, "get_pointer_to_function")
              and hasattr(eng_cls, "is_symbol_defined") and hasattr(eng_cls, "_load_defined_symbols")
              and isinstance(unserialize, classmethod))
    if not needed:
        return False
    full_unserialize = unserialize.__func__
    full_linking = lib_cls._get_module_for_linking
    full_pointer = jit_cls.get_pointer_to_function
    full_defined = eng_cls.is_symbol_defined

    def _unserialize(cls, codegen, state):
        name, kind, data = state
        if kind != "object" or not getattr(_loading, "on", False):
            return full_unserialize(cls, codegen, state)
        library = codegen.create_library(name)
        object_code, bitcode = data
        library.enable_object_caching()
        library._set_compiled_object(object_code)
        library.__dict__[PENDING] = bitcode
        library._finalize_final_module()  # the machine code given to the engine, as numba does
        engine = library._codegen._engine
        engine.__dict__.setdefault(_PENDING_LIBS, []).append(weakref.ref(library))
        return library

    def _get_module_for_linking(self):
        if PENDING in self.__dict__:
            self._ensure_finalized()
            return _read_linking_module(self)
        return full_linking(self)

    def get_pointer_to_function(self, name):
        if PENDING in self.__dict__:
            self._ensure_finalized()
            address = self._codegen._engine._ee.get_function_address(name)  # 0: not there
            if address:
                return address
        return full_pointer(self, name)

    def is_symbol_defined(self, name):
        if name in self._defined_symbols:
            return True
        waiting = self.__dict__.pop(_PENDING_LIBS, None)
        for ref in waiting or ():
            library = ref()
            if library is not None:
                _read_linking_module(library)
        return full_defined(self, name)

    _unserialize.tracevis3d_lazy = True
    lib_cls._unserialize = classmethod(_unserialize)
    lib_cls._get_module_for_linking = _get_module_for_linking
    jit_cls.get_pointer_to_function = get_pointer_to_function
    eng_cls.is_symbol_defined = is_symbol_defined
    return True
