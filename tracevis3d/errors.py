"""The errors and the warning TraceVis3D raises about trace data.

Standard library only, so that every layer can raise them: the kernels' helpers too (a
buffer the system refuses is a `TraceTooLargeError`), not only the model and the readers.
`tracevis3d.model` re-exports them: ``from tracevis3d.model import TraceFormatError`` is
the usual spelling.
"""

__all__ = ["TraceError", "TraceFormatError", "TraceTooLargeError", "TraceInvariantError", "TraceWarning"]


class TraceError(Exception):
    """Base class of every error TraceVis3D raises about trace data."""


class TraceFormatError(TraceError, ValueError):
    """A file is not a trace we can read; the message names the file and position."""


class TraceTooLargeError(TraceError, MemoryError):
    """The work asked of a trace needs more memory than the system grants; the message names
    what it needs and how to ask for less (a time window, a thread, a depth)."""


class TraceInvariantError(TraceError, AssertionError):
    """`Trace.check()` found a violated invariant; the message names the first one."""


class TraceWarning(UserWarning):
    """A repair made while importing (unmatched events, clipped overlaps, ...)."""
