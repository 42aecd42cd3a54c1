"""Functions written in assembly keep their own names: pprof gives Go's runtime routines their
``.s`` file (``runtime.memmove`` in ``runtime/memmove_amd64.s``), glibc's perf symbols an ``.S``
one. An assembly file says nothing about the language of its symbols: the name is read by its
own shape (Go's ``pkg.Func`` for a Go assembly file, named with a GOARCH suffix), never as a
function of a Python module ``runtime.memmove_amd64.s``, which labelled the Go recording's
icicle ``runtime.asm_amd64.s.runtime.gcWriteBarrier`` and drew ``…s`` classes in its
EXTRAVIS views.

The names and files are those of tests/data/formats/go/cpu.pprof (Go 1.19).
"""
import pytest

from tracevis3d.naming import describe_function
from tracevis3d.names import parse_function_name

GO_ROOT = "/usr/lib/go-1.19/src/"

# (name, file, module, the figures' full name (display), short)
GO_ASSEMBLY = [
    ("runtime.asyncPreempt", GO_ROOT + "runtime/preempt_amd64.s", "runtime", "runtime.asyncPreempt", "asyncPreempt"),
    ("runtime.memmove", GO_ROOT + "runtime/memmove_amd64.s", "runtime", "runtime.memmove", "memmove"),
    ("runtime.gcWriteBarrier", GO_ROOT + "runtime/asm_amd64.s", "runtime", "runtime.gcWriteBarrier", "gcWriteBarrier"),
    ("internal/bytealg.IndexByte", GO_ROOT + "internal/bytealg/indexbyte_arm64.s", "internal/bytealg",
     "internal/bytealg.IndexByte", "IndexByte"),
    # pprof writes no package for it: the package is its folder under src/
    ("cmpbody", GO_ROOT + "internal/bytealg/compare_amd64.s", "internal/bytealg", "internal/bytealg.cmpbody", "cmpbody"),
]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name,file,module,display,short", GO_ASSEMBLY)
def test_go_assembly_functions_are_named_as_go_names_them(name, file, module, display, short):
    p = parse_function_name(name, file, 42)
    assert (p.module, p.file, p.line) == (module, file, 42)
    assert ".s" not in p.module and "asm" not in p.module and "_amd64" not in ".".join(p.path)
    mod, _family, _qual, shown, sh, _infra = describe_function(name, p)
    assert (shown, sh) == (display, short)
    if module:
        assert p.lang == "go"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name,file", [
    ("__memmove_avx_unaligned_erms", "../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S"),
    ("__strcmp_evex", "../sysdeps/x86_64/multiarch/strcmp-evex.S"),
    ("_start", "start.asm"),
])
def test_c_assembly_symbols_are_named_by_themselves(name, file):
    p = parse_function_name(name, file, 7)
    assert (p.function, p.qualname, p.module, p.file) == (name, name, "", file)
    assert describe_function(name, p)[3] == name


@pytest.mark.timeout(30)
def test_other_files_still_say_their_language():
    """The assembly rule reads only ``.s``/``.S``/``.asm``: a Go source file's names stay Go's,
    a Python file's stay Python's."""
    assert parse_function_name("main.fib", GO_ROOT + "../main.go", 3).lang == "go"
    p = parse_function_name("helper", "/src/pkg/mod.py", 3)
    assert (p.module, p.lang) == ("pkg.mod", "python")


# ----------------------------------------------------------------------------- callgrind's C names
# tests/data/formats/callgrind/prog.callgrind (valgrind 3.x, glibc 2.35): glibc's versioned
# symbols and the frames valgrind knows no file of.  The icicle labelled them
# "pthread_create@@GLIBC_2.34 (pthread_create.c)" (shortened to "…34"), "???.(below main)"
# and "???.0x000000000001ab70"; callgrind_annotate, kcachegrind and perf name the C function.
CALLGRIND = [
    ("pthread_create@@GLIBC_2.34", "./nptl/./nptl/pthread_create.c", "pthread_create (pthread_create.c)",
     "pthread_create"),
    ("__libc_start_main@@GLIBC_2.34", "./csu/../csu/libc-start.c", "__libc_start_main (libc-start.c)",
     "__libc_start_main"),
    ("memcpy@GLIBC_2.2.5", "", "memcpy", "memcpy"),
    ("(below main)", "???", "(below main)", "(below main)"),
    ("0x000000000001ab70", "???", "0x000000000001ab70", "0x000000000001ab70"),
    ("main", "??", "main", "main"),  # addr2line's unknown file
]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name,file,display,short", CALLGRIND)
def test_c_names_drop_symbol_versions_and_unknown_files(name, file, display, short):
    p = parse_function_name(name, file)
    assert "?" not in p.module and "@" not in p.function and "GLIBC" not in ".".join(p.path)
    assert describe_function(name, p)[3:5] == (display, short)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name", ["user@host1", "lambda@Main", "block in Foo#bar@2"])
def test_an_at_sign_that_is_no_symbol_version_stays(name):
    assert "@" in describe_function(name, parse_function_name(name))[3]
