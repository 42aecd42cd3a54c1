"""The thread view's parameters, where scripts have always found them: declared in
`tracevis3d.params.threads`."""
from __future__ import annotations

from ..params.threads import THREAD_COLOR_BY, THREADS, ThreadsParams  # noqa: F401
