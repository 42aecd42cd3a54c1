"""numba's runtime helpers loaded as machine code a process compiled before, not compiled again.

Before a process runs its first compiled kernel, numba initialises its runtime (NRT: the
reference counts and allocations the kernels call, ``numba.core.runtime.nrt._Runtime.initialize``):
it registers the C helpers' addresses and then compiles a small LLVM module of atomic
reference-count functions (``nrtdynmod.compile_nrt_functions``): LLVM's optimisation and code
generation, 14-31 ms on this project's 2-core machines (53 ms on a slower one), paid by every
process before its first cached kernel runs, on the critical path of a first trace load.

`initialize` (called by `tracevis3d.kernels`' load of a cached kernel) does what numba does but
takes that module's machine code from a file in numba's cache folder, written by the first
process that compiled it (whole, then renamed into place; read back 2 ms).  The file's name is
the SHA-256 of everything the machine code depends on: the module's own LLVM IR text (which
holds numba's debug settings), the machine's triple, the CPU name and features numba compiles
for (``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES`` honoured), and the numba, llvmlite and LLVM
versions; its content carries its own digest.  A file that is missing, short, altered or
unreadable is compiled again (and written again); the result is the library numba would make,
so later compilations link against it as before.
"""
from __future__ import annotations

import hashlib
import os
import struct

#: the file's first bytes (the format's version is in them)
MAGIC = b"TV3DNRT1"
_HEADER = struct.Struct("<8s32sIII")  # magic, SHA-256 of the rest, name / object / bitcode lengths


def _key(ir_text: str, codegen) -> str:
    import llvmlite
    import llvmlite.binding as ll
    import numba

    parts = (ir_text, ll.get_process_triple(), codegen._get_host_cpu_name(), codegen._get_host_cpu_features(),
             numba.__version__, llvmlite.__version__, repr(ll.llvm_version_info))
    return hashlib.sha256("\0".join(map(str, parts)).encode("utf-8", "replace")).hexdigest()


def cache_path(cache_dir: str, ir_text: str, codegen) -> str:
    """The file of the runtime module with IR ``ir_text`` compiled by ``codegen``."""
    return os.path.join(cache_dir, f"tracevis3d-nrt-{_key(ir_text, codegen)[:32]}.bin")


def pack(serialized) -> bytes:
    """numba's object-code serialisation of a library, ``(name, "object", (object code,
    bitcode))``, as the file's bytes."""
    name, kind, (obj, bitcode) = serialized
    if kind != "object":
        raise ValueError(f"not an object-code library: {kind}")
    name_b = name.encode("utf-8")
    body = name_b + bytes(obj) + bytes(bitcode)
    return _HEADER.pack(MAGIC, hashlib.sha256(body).digest(), len(name_b), len(obj), len(bitcode)) + body


def unpack(data: bytes):
    """The serialisation `pack` wrote, or None when ``data`` is not one whole, unaltered file."""
    if len(data) < _HEADER.size:
        return None
    magic, digest, n_name, n_obj, n_bc = _HEADER.unpack_from(data)
    body = data[_HEADER.size:]
    if magic != MAGIC or len(body) != n_name + n_obj + n_bc or hashlib.sha256(body).digest() != digest:
        return None
    name = body[:n_name].decode("utf-8", "replace")
    return name, "object", (body[n_name:n_name + n_obj], body[n_name + n_obj:])


def initialize(rtsys, ctx, cache_dir: str | None = None) -> str:
    """Initialise numba's runtime ``rtsys`` for the target context ``ctx`` as
    ``rtsys.initialize(ctx)`` does, its compiled module read from ``cache_dir``
    (``NUMBA_CACHE_DIR`` by default) where a process wrote it before.  Call it under numba's
    compiler lock (a kernel's cache load holds it).  Returns what happened: "ready" (already
    initialised), "loaded", "compiled" (and written) or "numba" (no cache folder, or numba's
    internals are not the expected ones: numba initialised it)."""
    if rtsys._init:
        return "ready"
    cache_dir = cache_dir or os.environ.get("NUMBA_CACHE_DIR")
    try:
        import llvmlite.binding as ll
        from numba.core import config
        from numba.core.runtime import _nrt_python as _nrt
        from numba.core.runtime import nrtdynmod
        codegen = ctx.codegen()
        ir_mod, library = nrtdynmod.create_nrt_module(ctx)
        path = cache_path(cache_dir, str(ir_mod), codegen) if cache_dir else None
    except (ImportError, AttributeError, TypeError):
        path = None
    if path is None:
        rtsys.initialize(ctx)
        return "numba"
    # what numba's initialize does before it compiles (stats, the C helpers' symbols)
    if config.NRT_STATS:
        _nrt.memsys_enable_stats()
    for py_name, address in _nrt.c_helpers.items():
        ll.add_symbol(py_name if py_name.startswith("_") else "NRT_" + py_name, address)
    serialized = None
    try:
        with open(path, "rb") as f:
            serialized = unpack(f.read())
    except OSError:
        pass
    if serialized is not None:
        try:
            rtsys._library = codegen.unserialize_library(serialized)
            rtsys._init = True
            return "loaded"
        except Exception:  # noqa: BLE001 - anything LLVM refuses: compiled below, as numba would
            pass
    library.enable_object_caching()
    library.add_ir_module(ir_mod)
    library.finalize()
    from ..kernel_cache import _write_whole  # (a temporary of a fresh name, then replaced)

    try:
        _write_whole(path, pack(library.serialize_using_object_code()))
    except (OSError, ValueError, TypeError):  # a read-only or full cache folder: compiled again next time
        pass
    rtsys._library = library
    rtsys._init = True
    return "compiled"
