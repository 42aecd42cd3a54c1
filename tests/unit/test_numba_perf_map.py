"""tools/numba_perf_map.py: numba's machine code named for perf, from the ELF objects its engine
loads (a profiling aid: a wrong map would put samples on the wrong kernel)."""
import numpy as np
from numba import njit

from tools.numba_perf_map import elf_functions, placed_symbols


@njit(cache=False)
def _twice_plus_one(x):
    s = 0
    for i in range(x.shape[0]):
        s += 2 * x[i] + 1
    return s


def _object_of(dispatcher):
    """The ELF object numba's target machine emits for ``dispatcher``'s one compiled library."""
    library = dispatcher.overloads[dispatcher.signatures[0]].library
    return library._codegen._tm.emit_object(library._final_module)


def test_the_function_symbols_of_a_numba_object_are_read_with_their_sizes():
    _twice_plus_one(np.arange(4, dtype=np.int64))
    obj = _object_of(_twice_plus_one)
    funcs = elf_functions(obj)
    ours = [f for f in funcs if "_twice_plus_one" in f[0]]
    assert ours, [f[0] for f in funcs]
    assert all(size > 0 and sec > 0 for _, sec, _, size, _ in ours)
    # the offsets of one section's functions do not overlap
    by_sec = {}
    for _, sec, off, size, _ in funcs:
        by_sec.setdefault(sec, []).append((off, size))
    for spans in by_sec.values():
        spans.sort()
        assert all(a + n <= b for (a, n), (b, _) in zip(spans, spans[1:]))


def test_each_symbol_is_placed_at_its_sections_base_plus_its_offset():
    _twice_plus_one(np.arange(4, dtype=np.int64))
    obj = _object_of(_twice_plus_one)
    funcs = elf_functions(obj)
    known = next(f for f in funcs if f[4])                      # a global symbol the engine resolves
    base = 0x7F0000000000

    def resolve(name):
        return base + known[2] if name == known[0] else 0
    placed = placed_symbols([obj], resolve)
    same_section = [f for f in funcs if f[1] == known[1] and f[3] > 0]
    assert sorted(p[2] for p in placed) == sorted(f[0] for f in same_section)
    for addr, size, name, index, sec, off in placed:
        assert (index, sec) == (0, known[1])
        assert addr == base + off
    # an object whose sections the engine resolves nothing of is left out, not guessed
    assert placed_symbols([obj], lambda name: 0) == []


def test_a_text_that_is_not_an_elf_object_has_no_symbols():
    assert elf_functions(b"") == []
    assert elf_functions(b"not an object at all" * 10) == []
