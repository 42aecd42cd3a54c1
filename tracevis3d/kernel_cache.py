"""Pre-built numba kernel caches: exported at build time, installed into the user's cache.

Why: compiling the kernels on first use costs about a minute (load ~30 s, layout ~4 s,
compare ~80 s on 2 cores).  numba 0.68 binds a cache entry to

- the source file's content (sha256 of the .py: the same file anywhere matches);
- the absolute folder of the source file: the entries live in
  ``NUMBA_CACHE_DIR/<folder name>_<sha1 of the absolute folder>`` (`cache_subdir`), so a
  cache made at one install path is not found at another;
- the Python version (``…py311.nbi``) and numba's version (stored in every index);
- the function's bytecode and the "magic tuple" (target triple, CPU name, CPU features) of
  the code generator, stored in each index key;
- the module's import name, stored in the data: loading an entry imports it to rebuild the
  kernel's environment (``tracevis3d.kernels.tree`` at build time,
  ``bl_ext.<repository>.tracevis3d.tracevis3d.kernels.tree`` in Blender).

So the extension and the wheel ship caches compiled for the ``generic`` CPU (``NUMBA_CPU_NAME=generic``:
baseline x86-64 code that runs on any x86-64 CPU), keyed by package-relative folder
(`export_cache`), one folder per `tag` (``_kernel_cache/py3.11-numba0.68.1-x86_64/``, made by
``tools/kernel_caches.py``), and beside it, where the build made them, the same kernels compiled
for the x86-64 micro-architecture levels (`CPU_LEVELS`: ``<tag>/x86-64-v3/``, AVX2 and FMA,
and ``<tag>/x86-64-v4/``, AVX-512).  `install_shipped` takes the highest level this CPU
runs (`cpu_level`: every feature of the level present, as LLVM reads them with the OS's
support for the wider registers) and copies it under the subfolders numba computes
for the installed path, rewriting each index key's magic tuple to the host's and the module
names in the data to the installed package's (`rewrite_module_names`), so the running numba
(host CPU settings, nothing changed process-wide) finds and loads them.  The levels matter:
the compare's join walk of 10^6 calls took 2.95-2.99 s with the generic kernels, 2.30-2.48 s
with x86-64-v3's and 1.93-1.96 s with x86-64-v4's on one AMD Zen 4 (the counters and the
window pass are SIMD loops; the generic code is SSE2).  Only
missing index files are installed: what the user's numba compiled itself is never
replaced.  Nothing is ever written into the add-on folder at run time.

Over 600 lines: one topic, numba's on-disk cache of this package's kernels -- what a cache is
valid for (`tag`), exporting and installing the shipped caches, and dropping the entries whose
sources (or their imports') changed (`drop_stale_entries`) -- which all read and write the same
index files and folder names.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import pickletools
import re
import shutil
import struct
import sys
import tempfile

MANIFEST = "manifest.json"
SHIPPED_DIRNAME = "_kernel_cache"  # tracevis3d/_kernel_cache/<tag>/ in the extension zip and the wheel
_SUFFIXES = (".nbi", ".nbc")


def cache_subdir(src_dir: str) -> str:
    """numba's cache subfolder name for sources in ``src_dir`` (UserProvidedCacheLocator)."""
    path = os.path.abspath(src_dir)
    return f"{os.path.basename(path)}_{hashlib.sha1(path.encode()).hexdigest()}"


def package_dirs(root: str) -> list[str]:
    """The package-relative folders under ``root`` that hold Python sources ("" is the root)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")) and d != SHIPPED_DIRNAME)
        if any(f.endswith(".py") for f in filenames):
            rel = os.path.relpath(dirpath, root)
            out.append("" if rel == "." else rel.replace(os.sep, "/"))
    return out


def _numba_version() -> str:
    """numba's installed version, "?" when it is not installed, without importing numba: the one
    ``numba-<version>.dist-info`` folder beside the package where there is one (a directory
    listing), else `importlib.metadata` (whose import and search of every installed package took
    15-25 ms of a process's first trace load, before the file was read)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("numba")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        site = os.path.dirname(os.path.dirname(spec.origin))
        try:
            found = [n[6:-10] for n in os.listdir(site) if n.startswith("numba-") and n.endswith(".dist-info")]
        except OSError:
            found = []
        if len(found) == 1 and re.fullmatch(r"[0-9][0-9A-Za-z.+!_-]*", found[0]):
            return found[0]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("numba")
    except PackageNotFoundError:
        return "?"


#: the x86-64 micro-architecture levels a build can ship beside the generic kernels, lowest
#: first: (LLVM's CPU name, the CPU features a level's code may use, as LLVM names them).  A level
#: is compiled with ``NUMBA_CPU_NAME`` = its name and no extra features (``NUMBA_CPU_FEATURES=""``)
_V3_FEATURES = frozenset({"cx16", "popcnt", "sahf", "sse3", "ssse3", "sse4.1", "sse4.2", "avx", "avx2", "bmi", "bmi2",
                          "f16c", "fma", "lzcnt", "movbe", "xsave"})
CPU_LEVELS = (
    ("x86-64-v3", _V3_FEATURES),
    ("x86-64-v4", _V3_FEATURES | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}),
)
GENERIC_CPU = "generic"
#: every CPU a build can compile the kernels for, lowest first (tools/kernel_caches.py's too)
CPUS = (GENERIC_CPU, *(name for name, _ in CPU_LEVELS))


def cpu_level(features: dict, levels=CPU_LEVELS, avx_enabled: bool = True) -> str:
    """The highest of ``levels`` (`CPU_LEVELS`) whose every feature ``features`` (name → bool, as
    ``llvmlite.binding.get_host_cpu_features`` returns them: LLVM counts AVX and AVX-512 present
    only where the OS saves their registers) has, else `GENERIC_CPU`; `GENERIC_CPU` too when
    numba was told not to use AVX (``avx_enabled`` False: its ``NUMBA_ENABLE_AVX`` or a CPU it
    distrusts)."""
    best = GENERIC_CPU
    if not avx_enabled:
        return best
    have = {k for k, v in features.items() if v}
    for name, needs in levels:
        if needs <= have:
            best = name
    return best


def host_cpu_level() -> str:
    """`cpu_level` of this CPU (imports numba; call it where `install_shipped` runs); `GENERIC_CPU`
    when the user chose numba's CPU (``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES``: their choice of
    code is kept) or the features cannot be read."""
    from numba.core import config

    if config.CPU_NAME is not None or config.CPU_FEATURES is not None:
        return GENERIC_CPU
    try:
        import llvmlite.binding as ll

        features = dict(ll.get_host_cpu_features())
    except Exception:  # noqa: BLE001 - an unknown CPU gets the code that runs everywhere
        return GENERIC_CPU
    return cpu_level(features, avx_enabled=bool(config.ENABLE_AVX))


def tag() -> str:
    """What a shipped cache is valid for: ``py3.11-numba0.68.1-x86_64`` (numba not imported)."""
    import platform

    return f"py{sys.version_info[0]}.{sys.version_info[1]}-numba{_numba_version()}-{platform.machine().lower()}"


SOURCES_MARK = "tracevis3d-sources-{}.txt"  # one per installed package folder, in the cache folder


_KERNEL_SOURCE = re.compile(rb"^\s*@(numba\.)?(njit|jit|vectorize|guvectorize|cfunc|overload)\b", re.M)
# ``from .x import a, b`` / ``from .. import (a,\n b)`` / ``from tracevis3d.x import a`` / ``import tracevis3d.x``,
# at any indentation (an import inside a function counts: over-approximating only recompiles more)
_FROM_IMPORT = re.compile(rb"^[ \t]*from[ \t]+(\.+|tracevis3d\b\.?)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_PLAIN_IMPORT = re.compile(rb"^[ \t]*import[ \t]+tracevis3d((?:\.\w+)+)", re.M)


def _module_sources(root: str) -> dict[str, bytes]:
    """Every ``.py`` under ``root`` (package-relative path with ``/`` → content)."""
    out = {}
    for rel in package_dirs(root):
        folder = os.path.join(root, rel)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                try:
                    with open(os.path.join(folder, name), "rb") as f:
                        out[f"{rel}/{name}" if rel else name] = f.read()
                except OSError:
                    continue
    return out


def _module_file(parts: list[str], sources: dict) -> str | None:
    """The source of the module named by package-relative ``parts``, or None."""
    if not parts:
        return "__init__.py" if "__init__.py" in sources else None
    base = "/".join(parts)
    for cand in (base + ".py", base + "/__init__.py"):
        if cand in sources:
            return cand
    return None


def _imported_modules(rel: str, text: bytes, sources: dict) -> set[str]:
    """The package's modules that ``rel`` imports (relative or absolute, at any depth)."""
    package = rel.split("/")[:-1]  # the folder of the module (an __init__.py is its own package)
    found = set()
    for m in _FROM_IMPORT.finditer(text):
        lead, dotted, names = m.group(1), m.group(2).decode(), m.group(3)
        if lead.startswith(b"."):
            level = len(lead)
            if level - 1 > len(package):
                continue
            base = package[: len(package) - (level - 1)]
        else:
            base = []
        mod = base + [p for p in dotted.split(".") if p]
        target = _module_file(mod, sources)
        if target:
            found.add(target)
        for name in re.findall(rb"[A-Za-z_]\w*", names.split(b"#")[0] if b"(" not in names else names):
            sub = _module_file(mod + [name.decode()], sources)  # ``from . import tree``: a module
            if sub:
                found.add(sub)
    for m in _PLAIN_IMPORT.finditer(text):
        target = _module_file([p for p in m.group(1).decode().split(".") if p], sources)
        if target:
            found.add(target)
    found.discard(rel)
    return found


def kernel_module_hashes(root: str) -> dict[str, str]:
    """For every source under ``root`` that compiles kernels (a numba decorator at the start of
    a line): a sha256 over its content and the content of every package module it imports,
    transitively (a callee kernel, or a constant numba freezes into the caller's code).  A
    module's cached kernels are stale exactly when its hash changes."""
    sources = _module_sources(root)
    deps = {rel: _imported_modules(rel, text, sources) for rel, text in sources.items()}
    digest = {rel: hashlib.sha256(text).hexdigest() for rel, text in sources.items()}
    out = {}
    for rel, text in sources.items():
        if not _KERNEL_SOURCE.search(text):
            continue
        closure, todo = {rel}, [rel]
        while todo:
            for dep in deps[todo.pop()]:
                if dep not in closure:
                    closure.add(dep)
                    todo.append(dep)
        h = hashlib.sha256()
        for dep in sorted(closure):
            h.update(f"{dep}\0{digest[dep]}\n".encode())
        out[rel] = h.hexdigest()
    return out


def kernel_sources_hash(root: str) -> str:
    """One sha256 over `kernel_module_hashes` (every kernel source and what it imports)."""
    return hashlib.sha256(json.dumps(kernel_module_hashes(root), sort_keys=True).encode()).hexdigest()


#: beside the record: the stamp (`sources_stamp`) of the sources it was last checked against
STAMPS_MARK = "tracevis3d-stamps-{}.sig"
#: a source changed this recently (ns) makes no stamp: an edit within the file system's clock step
#: could keep its size and time ("racy git")
_RACY_NS = 3 * 10**9


def sources_stamp(root: str) -> str | None:
    """A digest of every ``.py`` under ``root``'s path, size, mtime, ctime and inode (stat only,
    about 3 ms for the package against 0.4 s for `kernel_module_hashes`, which reads and parses
    them all); None when a source changed in the last few seconds (its stamp could hide a
    second edit) or cannot be read.  Equal stamps: the same files, untouched since."""
    import time

    h = hashlib.sha1()
    newest = 0
    try:
        for rel in package_dirs(root):
            with os.scandir(os.path.join(root, rel)) as it:
                entries = sorted((e for e in it if e.name.endswith(".py")), key=lambda e: e.name)
            for e in entries:
                st = e.stat()
                newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
                h.update(f"{rel}/{e.name}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\n".encode())
    except OSError:
        return None
    if time.time_ns() - newest < _RACY_NS:
        return None
    return h.hexdigest()


def _read_text(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except (OSError, ValueError):
        return None


def _read_mark(path: str) -> dict:
    try:
        with open(path) as f:
            mark = json.load(f)
    except (OSError, ValueError):
        return {}
    return mark if isinstance(mark, dict) else {}


def drop_stale_entries(cache_dir: str, root: str) -> int:
    """Remove the cache entries of this package's kernel modules whose sources changed since
    they were written; the number of files removed.

    numba checks an entry against its own source file only: a kernel that calls a kernel of
    another module keeps the callee's old code, compiled into it, after that module changes
    (an upgrade at the same path, an edit in a checkout).  So the cache folder records, per
    kernel module, the hash of its source and of every package module it imports,
    transitively (`kernel_module_hashes`; one record per installed folder: two checkouts
    sharing a cache do not disturb each other), and a module whose hash differs loses its
    entries (``<module>.<function>-<line>.py311.nbi`` and its ``.nbc`` files): an edit
    recompiles that module and its importers, not every kernel.  Entries of a module the
    record does not know (a record written before per-module hashes, or none) are dropped.
    Every import runs this: the stamp of the sources' file status (`sources_stamp`) kept beside
    the record skips the hashing when no source was touched since it was checked (3 ms, not 0.4 s).
    Best effort: errors are ignored."""
    root = os.path.abspath(root)
    key = hashlib.sha1(root.encode()).hexdigest()[:16]
    mark = os.path.join(cache_dir, SOURCES_MARK.format(key))
    stamps = os.path.join(cache_dir, STAMPS_MARK.format(key))
    try:
        seen = sources_stamp(root)
        if seen is not None and os.path.exists(mark) and _read_text(stamps) == seen:
            return 0  # no source touched since the record was checked: nothing to hash
        now = kernel_module_hashes(root)
        before = _read_mark(mark)
        if before == now:
            if seen is not None:
                _write_whole(stamps, seen.encode())
            return 0
        stale: dict[str, set[str]] = {}  # folder → module stems whose entries go
        for rel, h in now.items():
            if before.get(rel) != h:
                folder, _, name = rel.rpartition("/")
                stale.setdefault(folder, set()).add(name[: -len(".py")])
        for rel in before:  # a kernel module that is gone (or no longer compiles kernels)
            if rel not in now:
                folder, _, name = rel.rpartition("/")
                stale.setdefault(folder, set()).add(name[: -len(".py")])
        removed = 0
        for folder, stems in stale.items():
            d = os.path.join(cache_dir, cache_subdir(os.path.join(root, folder)))
            try:
                names = os.listdir(d)
            except OSError:
                continue
            for name in names:
                if name.endswith(_SUFFIXES) and name.split(".", 1)[0] in stems:
                    try:
                        os.remove(os.path.join(d, name))
                        removed += 1
                    except OSError:
                        pass
        os.makedirs(cache_dir, exist_ok=True)
        _write_whole(mark, (json.dumps(now, sort_keys=True, indent=0) + "\n").encode())
        if seen is not None:
            _write_whole(stamps, seen.encode())
        return removed
    except OSError:
        return 0


def export_cache(cache_dir: str, root: str, dest: str, package: str | None = None, cpu: str = GENERIC_CPU) -> dict:
    """Copy the cache entries of the sources under ``root`` from ``cache_dir`` into ``dest``.

    ``dest/<relative folder>/<file>``; ``dest/manifest.json`` records the tag, the CPU the
    kernels were compiled for (``cpu``: `GENERIC_CPU` or a `CPU_LEVELS` name), the import
    name of the package the kernels were compiled as (``package``, default: this one's) and
    the files.  Returns the manifest.
    """
    files = []
    for rel in package_dirs(root):
        src = os.path.join(cache_dir, cache_subdir(os.path.join(root, rel)))
        if not os.path.isdir(src):
            continue
        out = os.path.join(dest, rel)
        os.makedirs(out, exist_ok=True)
        for name in sorted(os.listdir(src)):
            if name.endswith(_SUFFIXES):
                shutil.copyfile(os.path.join(src, name), os.path.join(out, name))
                files.append(f"{rel}/{name}" if rel else name)
    manifest = {"tag": tag(), "cpu": cpu, "package": package or package_name(), "files": files}
    with open(os.path.join(dest, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def read_manifest(shipped: str) -> dict | None:
    """The manifest of a shipped cache folder (None when absent or unreadable)."""
    try:
        with open(os.path.join(shipped, MANIFEST)) as f:
            m = json.load(f)
    except (OSError, ValueError):
        return None
    return m if isinstance(m, dict) and isinstance(m.get("files"), list) else None


def host_magic_tuple() -> tuple:
    """The magic tuple of this process's numba code generator (imports numba)."""
    from numba.core.registry import cpu_target

    return cpu_target.target_context.codegen().magic_tuple()


def _write_whole(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary of a fresh name beside it, then replace:
    Blender processes that start together (a farm's workers on one machine share the cache)
    never write into one temporary, and no reader sees half a file.  (Not `io.atomic`: this
    module stays free of the package's imports.)"""
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".part", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _rewrite_index(src: str, dst: str, magic: tuple) -> int:
    """Copy a .nbi index with every key's magic tuple replaced by ``magic``; entries kept."""
    with open(src, "rb") as f:
        version = pickle.load(f)
        stamp, overloads = pickle.loads(f.read())
    fixed = {(k[0], magic) + tuple(k[2:]): v for k, v in overloads.items()}
    _write_whole(dst, pickle.dumps(version, protocol=-1) + pickle.dumps((stamp, fixed), protocol=-1))
    return len(fixed)


def shipped_dir(root: str) -> str:
    """Where the extension zip carries the pre-built caches of the package at ``root``."""
    return os.path.join(root, SHIPPED_DIRNAME)


def package_name() -> str:
    """The import name of this package here (``tracevis3d``, or the extension's full name)."""
    return __name__.rpartition(".")[0]


def rewrite_module_names(data: bytes, old: str, new: str) -> bytes:
    """A pickle with every string that is module ``old`` or one of its submodules renamed to
    live under ``new`` (other strings, e.g. mangled symbol names, stay).  Frames are dropped
    (optional in the pickle format); every other opcode is copied byte for byte, so memo
    indices stay valid."""
    if old == new:
        return data
    name = re.compile(re.escape(old) + r"(\.[A-Za-z_]\w*)*\Z")
    ops = list(pickletools.genops(data))
    out = bytearray()
    for k, (op, arg, pos) in enumerate(ops):
        end = ops[k + 1][2] if k + 1 < len(ops) else len(data)
        if op.name == "FRAME":
            continue
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8") and name.match(arg):
            b = (new + arg[len(old):]).encode("utf-8")
            out += (b"\x8c" + bytes([len(b)]) + b) if len(b) < 256 else (b"X" + struct.pack("<I", len(b)) + b)
        else:
            out += data[pos:end]
    return bytes(out)


def install_shipped(shipped: str, root: str, cache_dir: str, package: str | None = None, cpu: str | None = None) -> dict:
    """Install the shipped caches for the sources under ``root`` into ``cache_dir``.

    Returns {"installed": index files copied, "entries": signatures, "skipped": reason or "",
    "cpu": the level installed}.  Nothing happens when the shipped tag does not match this
    Python/numba/machine, or for an index the user's cache already has.  ``cpu``: the level
    to install where it is shipped (default `host_cpu_level`; a level this CPU lacks crashes the
    process that runs its code), else the next lower one shipped, else the generic kernels.
    """
    nothing = "no pre-built kernels in this build"
    if not os.path.isdir(shipped):  # a source tree: nothing shipped (and no tag to work out)
        return {"installed": 0, "entries": 0, "skipped": nothing}
    here = tag()  # (worked out once: a directory listing)
    if os.path.isdir(os.path.join(shipped, here)):  # one folder per Python/numba/machine
        shipped = os.path.join(shipped, here)
    m = read_manifest(shipped)
    if m is None:
        tags = shipped_tags(shipped)
        why = f"pre-built kernels are for {', '.join(tags)}, not {here}" if tags else nothing
        return {"installed": 0, "entries": 0, "skipped": why}
    if m.get("tag") != here:
        return {"installed": 0, "entries": 0, "skipped": f"pre-built kernels are for {m.get('tag')}, not {here}"}
    magic = host_magic_tuple()
    level = host_cpu_level() if cpu is None else cpu
    if level in CPUS[1:]:     # the highest level shipped that this CPU runs (else the generic kernels)
        for name in reversed(CPUS[1:CPUS.index(level) + 1]):
            ml = read_manifest(os.path.join(shipped, name))
            if ml is not None and ml.get("tag") == here and ml.get("cpu") == name:
                shipped, m = os.path.join(shipped, name), ml
                break
    old, new = m.get("package", "tracevis3d"), package or package_name()
    installed = entries = 0
    for item in m["files"]:
        rel, name = os.path.split(item)
        src = os.path.join(shipped, rel, name)
        out_dir = os.path.join(cache_dir, cache_subdir(os.path.join(root, rel)))
        dst = os.path.join(out_dir, name)
        if not name.endswith(".nbi") or os.path.exists(dst) or not os.path.isfile(src):
            continue
        os.makedirs(out_dir, exist_ok=True)
        for data in _data_files(shipped, rel, name, m["files"]):
            target = os.path.join(out_dir, data)
            if not os.path.exists(target):
                with open(os.path.join(shipped, rel, data), "rb") as f:
                    blob = rewrite_module_names(f.read(), old, new)
                _write_whole(target, blob)
        entries += _rewrite_index(src, dst, magic)
        installed += 1
    return {"installed": installed, "entries": entries, "skipped": "", "cpu": m.get("cpu", GENERIC_CPU)}


def shipped_tags(shipped: str) -> list[str]:
    """The tags (Python/numba/machine) a shipped cache folder holds kernels for."""
    try:
        names = sorted(os.listdir(shipped))
    except OSError:
        return []
    return [n for n in names if read_manifest(os.path.join(shipped, n)) is not None]


def _data_files(shipped: str, rel: str, index_name: str, files: list) -> list[str]:
    """The .nbc data files that belong to the index ``index_name`` in folder ``rel``."""
    base = index_name[: -len(".nbi")] + "."
    prefix = f"{rel}/" if rel else ""
    return [f[len(prefix):] for f in files
            if f.startswith(prefix + base) and f.endswith(".nbc") and "/" not in f[len(prefix):]]


# ------------------------------------------------------------------ is a step's code ready?
#: the kernel modules (package-relative, without .py) a step compiles on first use: modules
#: every run of the step compiles (kernels/jsonvalid only when a trace has args,
#: kernels/jsonside only when it has counters or async slices, kernels/rows only when it has
#: async slices, and kernels/setjoin_prefix only with join="filter" are left out, so that a
#: cache the step filled never reads as cold; so is a module of inlined helpers only, such as
#: kernels/repairs, which never has entries of its own)
STEP_KERNELS = {
    "load": ("kernels/jsonscan", "kernels/jsonevent", "kernels/jsontokens", "kernels/jsonspans", "kernels/tree",
             "kernels/sidescan", "kernels/sideshape", "kernels/sidetables"),
    # a file of another format than Chrome's JSON (`io.formats`: sampled and aggregated profiles, built
    # by io/stacks.py; `io.sniff.format_of_file`)
    "load_formats": ("kernels/stacks", "kernels/left_heavy", "kernels/stacklists", "kernels/textscan",
                     "kernels/perf_scan", "kernels/perf_lines", "kernels/callgrind_scan", "kernels/protowire",
                     "kernels/pprof_fields", "kernels/pprof_scan", "kernels/cpuprofile_scan", "kernels/jsonstrict",
                     "kernels/chrome_tree", "kernels/tree"),
    # a Perfetto protobuf trace (`io.perfetto`: the wire scanner and its tables)
    "load_perfetto": ("kernels/protoscan", "kernels/perfetto_wire",
                      "kernels/perfetto_fields", "kernels/perfetto_descriptors", "kernels/perfetto_event",
                      "kernels/perfetto_args", "kernels/perfetto_tracks", "kernels/tree"),
    # a native (.tv3d.npz) or compact (.tv3c) file (`io.sniff.is_native_file`): its arrays are read,
    # the tree only checked (~1-2 s on an empty cache; a native 10^7-call file said "about 45 s")
    "load_native": ("kernels/tree",),
    "layout": ("kernels/fold", "kernels/fold_reduce", "kernels/runs", "kernels/drawn", "kernels/raster",
               "kernels/dominant", "layout/cluster", "kernels/fold_codes", "kernels/fold_context", "kernels/fold_runs",
               "kernels/overview_clusters", "kernels/overview_drawn", "kernels/overview_sums", "kernels/overview_pass"),
    # what every comparison compiles; its class-pair join then takes one of two ways (`STEP_WAYS`)
    "compare": ("kernels/gamma", "kernels/setjoin", "kernels/setjoin_forest", "kernels/setjoin_walk",
                "kernels/setjoin_tiers", "kernels/groups", "kernels/overview", "kernels/repetition"),
}
#: per step whose runs take one of several ways, each way's own modules (`analysis.compare_join`:
#: the fused join of the pairs it does not keep, the streamed one of those it keeps: the index
#: files a comparison of each way writes to an empty cache).  The way is known only
#: once the join's estimate is taken, inside the step, so the step reads as cold while NO way
#: is compiled: a cache that one way filled (a user who only compares huge pairs: always the
#: fused way) does not announce a compile on every run
STEP_WAYS = {
    "compare": {"fused": ("kernels/setjoin_fused", "kernels/setjoin_window", "kernels/overview_rows"),
                "streamed": ("kernels/setjoin_tree",)},
}
#: compile seconds of a step on an empty cache, measured on 2 shared cores with
#: bench/compile_profile.py (load ~44-78 s with the scanner's fast paths for counter and flow
#: events and their shapes, kernels/sidescan and kernels/sideshape; layout ~4-8 s; compare
#: ~80 s): what the "preparing kernels (first run only)" message announces
COLD_SECONDS = {"load": 55.0, "load_formats": 35.0, "load_perfetto": 60.0, "load_native": 2.0, "layout": 5.0, "compare": 80.0}


def package_root() -> str:
    """The folder of this package (``tracevis3d``) as installed."""
    return os.path.dirname(os.path.abspath(__file__))


def step_modules(step: str) -> list[str]:
    """Every kernel module ``step`` may compile: `STEP_KERNELS` and its ways' (`STEP_WAYS`)."""
    return list(STEP_KERNELS[step]) + [mod for mods in STEP_WAYS.get(step, {}).values() for mod in mods]


def cold_modules(step: str, cache_dir: str | None = None, root: str | None = None) -> list[str]:
    """``step``'s kernel modules for which the cache holds no compiled code yet: of `STEP_KERNELS`,
    and of its ways (`STEP_WAYS`) all those missing when no way is compiled in full (the
    first run compiles one of them), none when one is."""
    cache_dir = cache_dir or os.environ.get("NUMBA_CACHE_DIR")
    if not cache_dir:
        return step_modules(step)
    root = root or package_root()
    listing: dict = {}

    def uncached(mods):
        out = []
        for mod in mods:
            rel, name = os.path.split(mod)
            d = os.path.join(cache_dir, cache_subdir(os.path.join(root, rel)))
            if d not in listing:
                try:
                    listing[d] = os.listdir(d)
                except OSError:
                    listing[d] = []
            if not any(f.startswith(name + ".") and f.endswith(".nbi") for f in listing[d]):
                out.append(mod)
        return out

    missing = uncached(STEP_KERNELS[step])
    ways = [uncached(mods) for mods in STEP_WAYS.get(step, {}).values()]
    if ways and all(ways):
        missing += [mod for way in ways for mod in way]
    return missing


def is_cold(step: str, cache_dir: str | None = None, root: str | None = None) -> bool:
    """True when the cache holds no compiled code yet for one of ``step``'s kernel modules."""
    return bool(cold_modules(step, cache_dir, root))


def cold_seconds(step: str, cache_dir: str | None = None, root: str | None = None) -> float:
    """About how long ``step`` compiles on this cache: `COLD_SECONDS` for an empty one, the
    share of it that the missing modules' source bytes make of the step's (a module's
    compile time grows with its code) when some are cached; 0 when none is missing."""
    missing = cold_modules(step, cache_dir, root)
    if not missing:
        return 0.0
    root = root or package_root()

    def size(mod):
        try:
            return os.path.getsize(os.path.join(root, mod + ".py"))
        except OSError:
            return 1
    total = sum(size(m) for m in step_modules(step))
    return COLD_SECONDS[step] * sum(size(m) for m in missing) / max(1, total)


def cold_note(step: str, cache_dir: str | None = None) -> str:
    """"preparing kernels (first run only, about 30 s); " when ``step`` must compile, with
    the seconds of what is missing (`cold_seconds`), else "" (also under 2 s: not worth a word)."""
    seconds = cold_seconds(step, cache_dir)
    if seconds < 2.0:
        return ""
    return f"preparing kernels (first run only, about {seconds:.0f} s); "


_installed: dict = {}


def ensure_installed(cache_dir: str | None = None) -> dict:
    """Install this package's shipped caches into numba's cache folder, once per process.

    Imports numba (call it off the main thread).  Returns `install_shipped`'s report.
    """
    cache_dir = cache_dir or os.environ.get("NUMBA_CACHE_DIR")
    if cache_dir in _installed:
        return _installed[cache_dir]
    root = package_root()
    if not cache_dir:
        rep = {"installed": 0, "entries": 0, "skipped": "NUMBA_CACHE_DIR is not set"}
    else:
        try:
            rep = install_shipped(shipped_dir(root), root, cache_dir)
        except (OSError, ValueError, pickle.UnpicklingError, EOFError) as e:
            rep = {"installed": 0, "entries": 0, "skipped": f"cannot install pre-built kernels: {e}"}
    _installed[cache_dir] = rep
    return rep


def start_background_warmup(cache_dir: str, steps: str = "load,layout,compare,live"):
    """Compile the kernels in a separate, low-priority Python process (the UI stays free).

    The process installs the shipped caches first, then runs `tracevis3d.warmup` (fast when
    they matched).  Returns the ``subprocess.Popen`` (None when it cannot be started).
    """
    import importlib.util
    import subprocess

    spec = importlib.util.find_spec("numba")
    if spec is None or spec.origin is None:
        return None
    site = os.path.dirname(os.path.dirname(spec.origin))
    root = package_root()
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir,
               PYTHONPATH=os.pathsep.join([os.path.dirname(root), site]))
    env.pop("NUMBA_CPU_NAME", None)
    try:
        return subprocess.Popen([sys.executable, "-m", "tracevis3d.warmup", "--install", steps], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, cwd=os.path.dirname(root))
    except OSError:
        return None


def kernels_compiled() -> list[str]:
    """The kernels this process compiled because its cache had no entry for them:
    ``"kernels.tree.build_parents(array(int64, 1d, C), ...)"`` per signature (none when the
    shipped or the user's cache covered everything it ran).  Imports numba."""
    from numba.core.registry import CPUDispatcher

    prefix = package_name() + "."
    out, seen = [], set()
    for name, mod in list(sys.modules.items()):
        if not name.startswith(prefix) or mod is None:
            continue
        for v in list(vars(mod).values()):
            if isinstance(v, CPUDispatcher) and id(v) not in seen:
                seen.add(id(v))
                where = v.py_func.__module__[len(prefix):] + "." + v.py_func.__qualname__
                out += [f"{where}{tuple(sig)}" for sig, n in v._cache_misses.items() if n]
    return sorted(out)
