"""Every limit the importers enforce, in one place.

A trace is often a file someone sent you, and Blender must not die, freeze or
swap on it.  So each cost of an import is bounded, and each bound is a named,
documented, adjustable limit: pass it to `tracevis3d.load` as a keyword
(``tracevis3d.load(p, max_events=50_000_000)``) or as ``limits=Limits(...)``.
When one is hit, the import stops with a `TraceFormatError` that names the file,
the limit and the keyword that raises it.  Everything else an import does takes
time and memory linear in the bytes it reads.

The defaults keep an import of any file under about 8 GB of memory (the
importer holds the bytes, ~150 bytes per event while it scans and ~100 bytes
per call after), and any input under 10 MB, hostile or not, under 2 GB and a
few seconds.  Real traces stay far inside them: the longest function name seen
in real files is 1.6 K characters, real gzip traces inflate 10-25x and hold one
event per 15 compressed bytes.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

__all__ = ["Limits", "DEFAULT_LIMITS", "resolve_limits"]


@dataclass(frozen=True)
class Limits:
    #: bytes read from a file (or a pipe), and bytes inflated from a gzip stream
    max_bytes: int = 4 << 30
    #: a gzip stream may inflate to at most this many times its own size (plus
    #: ``gzip_slack`` bytes): the guard against decompression bombs
    max_gzip_ratio: float = 100.0
    gzip_slack: int = 64 << 20
    #: a compressed input may hold at most one event per this many compressed bytes
    #: (plus 1 M events): a bomb of tiny events is refused before it costs ~150 bytes each
    gzip_bytes_per_event: float = 4.0
    #: events kept from the file (B E X i I R s t f M; other phases are only counted),
    #: and calls expanded from a sampled profile
    max_events: int = 20_000_000
    #: characters of a function, thread, process, category or object name; a longer
    #: name is cut there and ends with "…" and 8 hex digits of a hash of the whole
    #: name (so distinct long names stay distinct)
    max_name_chars: int = 4096
    #: JSON nesting depth anywhere in the file
    max_nesting: int = 4096
    #: bytes of one call's ``args``; bigger args are dropped (with a warning)
    max_args_bytes: int = 1 << 20
    #: nesting depth inside one call's ``args``; deeper args are dropped (with a
    #: warning): they could not be read back by Python's json
    max_args_nesting: int = 100
    #: a sampled profile (``samples`` + ``stackFrames``) may expand to at most one call
    #: per this many bytes of input (as read from disk), plus 1 M calls: each sample can
    #: open a whole stack, so its calls are not bounded by its size otherwise
    sample_bytes_per_call: float = 2.0
    #: frames in one sampled stack (a ``stackFrames`` parent chain); deeper chains
    #: are cut (with a warning)
    max_stack_depth: int = 100_000
    #: |timestamp| and |timestamp + duration| in µs; beyond it a value is not a
    #: time (1e21 µs: any 64-bit clock, even in picoseconds, fits; spans stay far from
    #: float overflow in every layout)
    max_abs_time: float = 1e21
    #: a compact file (.tv3c) may expand to at most one call per this many bytes of the
    #: file, plus 1 M calls: its DAG stores a repeated subtree once, so a few hundred
    #: bytes could otherwise declare millions of calls (real files: 4-15 bytes a call)
    compact_bytes_per_call: float = 2.0
    #: a compact file may nest calls at most one level deeper per this many bytes of
    #: the file, plus 100 K levels (a chain of distinct nodes compresses to nothing)
    compact_bytes_per_level: float = 8.0
    #: a compact file's header (JSON: tables, metadata, section list) may inflate to at
    #: most this many times its stored size, plus ``compact_header_slack`` bytes (real
    #: headers: 3-8x); Python's json costs up to ~20 bytes of memory per header byte
    compact_header_ratio: float = 10.0
    compact_header_slack: int = 4 << 20
    #: values (objects, lists, scalars, arrays) in a native or compact file's metadata
    max_meta_items: int = 1_000_000
    #: nodes of a tree estimated from a call graph (a pstats dump): past it the smallest
    #: shares are merged into one "…other" child per caller (half the nodes go to those)
    max_callgraph_nodes: int = 100_000
    #: a call graph's callees walked per caller (the heaviest); the rest join "…other":
    #: bounds the walk's work to max_callgraph_nodes × this many edges
    max_callees_per_function: int = 1024
    #: lanes (threads, profiles) of a sampled or aggregated profile: past it the heaviest
    #: max_lanes_read - 1 are kept and the rest merged into one lane "other threads" (repair
    #: ``lanes_capped``); each lane costs its own tables, and 200,000 threads of one sample
    #: each took 13 s (collapsed stacks: past it, one lane, the thread frames kept as frames)
    max_lanes_read: int = 4096

    def events_for_compressed(self, compressed_bytes: int) -> int:
        """The event limit for an input that was ``compressed_bytes`` long on disk."""
        return min(self.max_events, int(compressed_bytes / self.gzip_bytes_per_event) + (1 << 20))

    def sample_calls(self, input_bytes: int) -> int:
        """The most calls a sampled profile of ``input_bytes`` (on disk) may expand to."""
        return min(self.max_events, int(input_bytes / self.sample_bytes_per_call) + (1 << 20))

    def compact_calls(self, file_bytes: int) -> int:
        """The most calls a compact file of ``file_bytes`` may expand to."""
        return min(self.max_events, int(file_bytes / self.compact_bytes_per_call) + (1 << 20))

    def compact_depth(self, file_bytes: int) -> int:
        """The deepest call nesting (levels below a root) a compact file of ``file_bytes`` may hold."""
        return int(file_bytes / self.compact_bytes_per_level) + 100_000

    def compact_header_bytes(self, stored_bytes: int) -> int:
        """The most bytes a compact file's header of ``stored_bytes`` may inflate to."""
        return min(self.max_bytes, int(self.compact_header_ratio * stored_bytes) + self.compact_header_slack)

    def inflate_limit(self, compressed_bytes: int) -> int:
        """The most bytes a gzip stream of ``compressed_bytes`` may inflate to."""
        return min(self.max_bytes, int(self.max_gzip_ratio * compressed_bytes) + self.gzip_slack)


DEFAULT_LIMITS = Limits()
_NAMES = {f.name for f in fields(Limits)}


def resolve_limits(limits: Limits | None = None, options: dict | None = None) -> Limits:
    """``limits`` (default `DEFAULT_LIMITS`) with the limit keywords found in
    ``options`` applied; those keywords are removed from ``options``."""
    lim = limits if limits is not None else DEFAULT_LIMITS
    if not isinstance(lim, Limits):
        raise TypeError(f"limits must be a tracevis3d.io.limits.Limits, not {type(lim).__name__}")
    if options:
        given = {k: options.pop(k) for k in list(options) if k in _NAMES}
        for k, v in given.items():
            if v is None or (isinstance(v, bool) or not isinstance(v, (int, float))) or v <= 0:
                raise ValueError(f"{k} must be a positive number, got {v!r}")
        if given:
            lim = replace(lim, **given)
    return lim
