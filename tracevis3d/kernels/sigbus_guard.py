"""The SIGBUS handler that `io.mapguard.exit_on_sigbus` installs: machine code, cached like every
kernel.

A handler for SIGBUS must be machine code (async-signal-safe: no Python, no GIL, no allocation):
it writes `SIGBUS_MESSAGE` to stderr with ``write(2, ...)`` and leaves with ``_exit(1)``.  Both are
called by name (``types.ExternalFunction``: the loader resolves them in the process, as it resolves
numba's own helpers) and the message is a constant of the compiled code, so nothing in it depends
on the process and numba caches it.  Compiled in each process as it was (``@cfunc`` without a
cache: libc's addresses and the message's were constants of the code), it cost every command-line
run that maps a file 0.14 s of CPU and numba's compiler registries; loaded from the cache it costs
a few milliseconds.  Importing this module compiles or loads the handler; it is installed only by
`io.mapguard.exit_on_sigbus`.
"""
import numpy as np
from numba import cfunc, types

SIGBUS_MESSAGE = (b"tracevis3d: error: a memory-mapped trace file was cut short or changed by another program "
                  b"while it was read (SIGBUS); stopped, nothing written\n")
_MESSAGE = np.frombuffer(SIGBUS_MESSAGE, np.uint8)  # frozen into the code as a constant
_STDERR = 2

_write = types.ExternalFunction("write", types.intp(types.int32, types.uintp, types.uintp))
_exit = types.ExternalFunction("_exit", types.void(types.int32))


@cfunc(types.void(types.int32), cache=True)
def on_sigbus(signum):
    """``void handler(int)``: write(2, message, len) then _exit(1); no return."""
    _write(_STDERR, _MESSAGE.ctypes.data, _MESSAGE.size)
    _exit(1)
