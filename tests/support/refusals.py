"""The refusal every reader gives bad input (DESIGN.md, "Errors about trace data"): one
`TraceFormatError` whose message is one line that starts with the file's name.  `refusal`
checks that form and returns the message, for a test's table of bad inputs to look for what
the line must say."""
from __future__ import annotations

import pytest

from tracevis3d.model import TraceFormatError


def refusal(load, data, source: str, **options) -> str:
    """The message of the `TraceFormatError` that ``load(data, source=source, warn=False,
    **options)`` raises (failing the test when it raises none), checked to be one line that
    starts with ``"<source>: "``."""
    with pytest.raises(TraceFormatError) as e:
        load(data, source=source, warn=False, **options)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{source}: "), msg
    return msg
