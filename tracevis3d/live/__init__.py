"""The live trace feed over ZeroMQ (docs/live-protocol.md).

Viewer side: `LiveSession(endpoint).poll_once()`; program side: ``with publish(endpoint):``
or ``python -m tracevis3d.live run --endpoint E script.py``; recorded traces:
`replay(trace, endpoint)`.
"""
from .protocol import BadMessage
from .publisher import Publisher, publish
from .replay import replay, trace_events
from .session import Changes, LiveSession
from .transport import Curve, EndpointError, is_loopback

DEFAULT_ENDPOINT = "tcp://127.0.0.1:5599"

__all__ = ["BadMessage", "Changes", "Curve", "DEFAULT_ENDPOINT", "EndpointError", "LiveSession",
           "Publisher", "is_loopback", "publish", "replay", "trace_events"]
