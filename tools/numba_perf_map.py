"""Run a Python script with numba's machine code named for `perf` (a profiling aid, not used by
the package).

    perf record -F 999 -g -o /tmp/run.data -- \\
        .venv/bin/python tools/numba_perf_map.py SCRIPT [ARGS...]
    perf report -i /tmp/run.data --no-children --sort sym

With ``TV3D_PERF_OBJECTS=DIR`` the objects are also written to DIR (``obj-N.o``, for ``objdump
-d``) with ``symbols.tsv`` (address, size, name, object, section, offset), so that the samples
of `perf script` can be placed on the instructions of a kernel:

    .venv/bin/python tools/numba_perf_map.py --annotate DIR /tmp/run.data NAME [MIN_PERCENT]

prints the disassembly (``objdump -d``) of the symbols whose name contains NAME with each
instruction's share of their samples, the runs of instructions under MIN_PERCENT (0.2) elided.

numba's kernels run from memory that its JIT engine filled, so `perf` sees addresses without
names.  perf reads the names of such code from ``/tmp/perf-<pid>.map`` (one line a symbol:
start address and size in hex, then the name).  This script installs a hook that keeps a copy of
every object file numba's engine loads (compiled now, or read from the kernel cache: each
library's object code passes through `CPUCodeLibrary._object_getbuffer_hook` once), runs
SCRIPT as ``__main__``, and on exit writes the map: each object's function symbols (ELF
symbol table: name, section, offset, size), placed where the engine put their section, which is
found from a symbol of that section the engine resolves by name (a section with no such symbol
is left out: its functions stay unnamed).  Inlined helpers are part of their caller's code;
called ones appear as their own symbols (numba's mangled names: ``_ZN`` + the module path and
the function name).
"""
import atexit
import os
import runpy
import struct
import sys

ELF_MAGIC = b"\x7fELF"
SHT_SYMTAB = 2
STT_FUNC = 2


def elf_functions(obj: bytes) -> list:
    """(name, section index, offset in the section, size, global) of each function symbol of a
    64-bit little-endian ELF relocatable object ``obj``."""
    if obj[:4] != ELF_MAGIC or obj[4] != 2 or obj[5] != 1:
        return []
    e_shoff, = struct.unpack_from("<Q", obj, 0x28)
    e_shentsize, e_shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    out = []
    for sh in sections:
        if sh[1] != SHT_SYMTAB:
            continue
        str_off = sections[sh[6]][4]        # sh_link: the symbol names' string table
        for k in range(sh[5] // 24):
            st_name, st_info, _, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", obj, sh[4] + 24 * k)
            if st_info & 0xF != STT_FUNC or st_shndx == 0 or st_shndx >= e_shnum:
                continue
            end = obj.index(b"\0", str_off + st_name)
            name = obj[str_off + st_name:end].decode("utf-8", "replace")
            out.append((name, st_shndx, st_value, st_size, (st_info >> 4) != 0))
    return out


def placed_symbols(objects, resolve) -> list:
    """(address, size, name, object index, section, offset) of the function symbols of the
    object files ``objects``, ``resolve(name)`` giving the address the engine put a global
    symbol at (0 when it has none)."""
    out = []
    for i, obj in enumerate(objects):
        funcs = elf_functions(obj)
        base = {}
        for name, sec, off, _, is_global in funcs:
            if is_global and sec not in base:
                addr = resolve(name)
                if addr:
                    base[sec] = addr - off
        for name, sec, off, size, _ in funcs:
            if sec in base and size > 0:
                out.append((base[sec] + off, size, name, i, sec, off))
    return out


def annotate(dump, data, name, min_percent=0.2) -> None:
    """`perf script`'s sample addresses of the symbols named like ``name`` placed on their
    instructions (the objects and ``symbols.tsv`` that ``TV3D_PERF_OBJECTS`` wrote)."""
    import collections
    import re
    import subprocess

    syms = []
    with open(os.path.join(dump, "symbols.tsv")) as f:
        for line in f:
            a, n, sym, obj, sec, off = line.rstrip("\n").split("\t")
            if name in sym:
                syms.append((int(a, 16), int(n), sym, obj, int(off, 16)))
    ips = [int(ip, 16) for ip in subprocess.run(["perf", "script", "-i", data, "-F", "ip", "--hide-call-graph"],
                                                capture_output=True, text=True, check=True).stdout.split()]
    disassembled = {}         # object -> its objdump lines (several symbols may share one object)
    for a, n, sym, obj, off in syms:
        hits = collections.Counter(ip - a + off for ip in ips if a <= ip < a + n)
        total = sum(hits.values())
        if not total:
            continue
        print(f"== {sym[:120]} ({obj}): {total} samples")
        if obj not in disassembled:
            disassembled[obj] = subprocess.run(["objdump", "-d", "--no-show-raw-insn", os.path.join(dump, obj)],
                                               capture_output=True, text=True, check=True).stdout.splitlines()
        asm = disassembled[obj]
        skipped = 0
        for line in asm:
            m = re.match(r"\s*([0-9a-f]+):\t(.*)", line)
            if not m or not off <= int(m.group(1), 16) < off + n:
                continue
            share = 100.0 * hits.get(int(m.group(1), 16), 0) / total
            if share < min_percent:
                skipped += 1
                continue
            if skipped:
                print(f"         ... {skipped} instructions")
                skipped = 0
            print(f"{share:6.2f}%  {m.group(1)}: {m.group(2)}")


def main(argv) -> None:
    if not argv:
        raise SystemExit(__doc__)
    if argv[0] == "--annotate":
        annotate(argv[1], argv[2], argv[3], *(float(x) for x in argv[4:5]))
        return
    from numba.core import codegen

    kept = []
    hook = codegen.CPUCodeLibrary._object_getbuffer_hook.__func__

    def keeping(cls, ll_module):
        buf = hook(cls, ll_module)
        if buf:
            kept.append(bytes(buf))
        return buf
    codegen.CPUCodeLibrary._object_getbuffer_hook = classmethod(keeping)

    def compiled(self, ll_module, buf, _notify=codegen.CPUCodeLibrary._object_compiled_hook.__func__):
        kept.append(bytes(buf))            # code numba compiled in this run
        return _notify(self, ll_module, buf)
    codegen.CPUCodeLibrary._object_compiled_hook = classmethod(compiled)

    def write_map():
        from numba.core.registry import cpu_target
        engine = cpu_target.target_context.codegen()._engine._ee
        placed = placed_symbols(kept, engine.get_function_address)
        path = f"/tmp/perf-{os.getpid()}.map"
        with open(path, "a") as f:
            f.write("".join(f"{a:x} {n:x} {name}\n" for a, n, name, *_ in placed))
        dump = os.environ.get("TV3D_PERF_OBJECTS")
        if dump:
            os.makedirs(dump, exist_ok=True)
            for i, obj in enumerate(kept):
                with open(os.path.join(dump, f"obj-{i}.o"), "wb") as f:
                    f.write(obj)
            with open(os.path.join(dump, "symbols.tsv"), "w") as f:
                f.write("".join(f"{a:x}\t{n}\t{name}\tobj-{i}.o\t{sec}\t{off:x}\n"
                                for a, n, name, i, sec, off in placed))
        print(f"numba_perf_map: {len(placed)} symbols of {len(kept)} objects -> {path}", file=sys.stderr)
    atexit.register(write_map)
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
