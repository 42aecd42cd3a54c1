"""numba's cache written safely by processes side by side, and read only for the kernel asked.

numba 0.68 saves a new compiled signature of a function (``IndexDataCacheFile.save``) by reading
the function's index, naming the data file by the first number the index does not use, writing
the index, then the data.  Two processes that compile two new signatures of one function at the
same time (the test sessions side by side, two Blenders, the workers of a render farm on one
machine, all sharing the user's cache) both pick the same number: the last index written maps
one signature to that file and the last data written may be the other signature's code.  A
later process that loads the first then runs machine code compiled for other argument types
(another dtype, another number of dimensions): wrong numbers or a crash, once in a while.

`install` makes every save (a) name the data file after its key (a hash of the signature, the
machine and the code: two keys never share a file, whoever writes when), (b) write the data
before the index (an index never names data that is not there yet), and (c) do both under an
exclusive lock on a file beside the index where the platform has ``fcntl`` (no entry lost when
two processes add to one index).  `loaded_signature_matches` is the check a load of this
package's kernels makes (`tracevis3d.kernels`): a cached entry compiled for other argument types
(a cache that the race above already damaged) is compiled again instead of run.
"""
from __future__ import annotations

import contextlib
import hashlib
import os

#: the hex digits of a key's hash that number its data file (``<function>-<line>.py311.<number>.nbc``)
NAME_HASH_DIGITS = 16


@contextlib.contextmanager
def _index_lock(index_path: str):
    """An exclusive ``flock`` on ``<index>.lock`` while the body runs (nothing where the platform
    has no ``fcntl`` or the lock file cannot be made: the names alone keep the data apart)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        fd = os.open(index_path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the file releases the lock


def data_name_of(cache_file, key, taken) -> str:
    """The data file of ``key`` in ``cache_file`` (an ``IndexDataCacheFile``, whose names take a
    number): numbered by the first `NAME_HASH_DIGITS` hex digits of the SHA-256 of the key's text
    (signature, machine, code hashes), one further only where that name is ``taken`` by another
    key."""
    number = int(hashlib.sha256(repr(key).encode("utf-8", "replace")).hexdigest()[:NAME_HASH_DIGITS], 16)
    while cache_file._data_name(number) in taken:
        number += 1
    return cache_file._data_name(number)


def install(caching_module) -> bool:
    """Replace ``caching_module.IndexDataCacheFile.save`` (``numba.core.caching``) with the safe
    save; False (nothing replaced) when numba's internals are not the expected ones."""
    cls = getattr(caching_module, "IndexDataCacheFile", None)
    if cls is None or not all(hasattr(cls, a) for a in ("save", "_load_index", "_save_index", "_save_data",
                                                       "_data_name")):
        return False
    if getattr(cls.save, "tracevis3d_safe", False):
        return True

    def save(self, key, data):
        with _index_lock(self._index_path):
            overloads = self._load_index()
            name = overloads.get(key)
            if name is None:
                name = data_name_of(self, key, set(overloads.values()))
            self._save_data(name, data)  # first: the index never names data that is not written
            if overloads.get(key) != name:
                overloads[key] = name
                self._save_index(overloads)

    save.tracevis3d_safe = True
    save.__doc__ = __doc__.split("\n\n")[0]
    cls.save = save
    return True


def loaded_signature_matches(cres, sig) -> bool:
    """Whether a compile result loaded from the cache (``cres``) is the one asked for: its argument
    types are ``sig``'s (a tuple of types, or a signature)."""
    got = getattr(getattr(cres, "signature", None), "args", None)
    want = getattr(sig, "args", sig)
    if got is None or want is None:
        return True  # nothing to compare: numba's own answer stands
    return tuple(got) == tuple(want)
