"""ZeroMQ sockets of the live feed: loopback check, CURVE keys, size limits.

The binding side is the CURVE server, the connecting side the client
(docs/live-protocol.md, "Limits and security").
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from .protocol import MAGIC, MAX_MESSAGE

_TCP = re.compile(r"^tcp://(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:/]+)):(?P<port>\d+|\*)$")


class EndpointError(ValueError):
    """An endpoint we refuse (malformed, or not loopback without CURVE keys)."""


def is_loopback(endpoint: str) -> bool:
    """True for ipc://, inproc:// and tcp:// on 127.0.0.0/8, ::1 or localhost."""
    if endpoint.startswith(("ipc://", "inproc://")):
        return True
    m = _TCP.match(endpoint)
    if not m:
        raise EndpointError(f"{endpoint!r}: expected tcp://HOST:PORT, ipc://PATH or inproc://NAME")
    host = m.group("v6") or m.group("host")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name or an interface ('*', eth0): not loopback


@dataclass(frozen=True)
class Curve:
    """CURVE keys (z85 bytes).  Server (the binding side): ``public`` + ``secret``.
    Client (the connecting side): ``server_public``; its own pair is generated when absent."""

    public: bytes | None = None
    secret: bytes | None = None
    server_public: bytes | None = None

    @classmethod
    def server_from_file(cls, path: str) -> "Curve":
        import zmq.auth

        pub, sec = zmq.auth.load_certificate(path)
        if not sec:
            raise EndpointError(f"{path}: no secret key in this certificate (use the .key_secret file)")
        return cls(public=pub, secret=sec)

    @classmethod
    def client_from_file(cls, server_cert: str) -> "Curve":
        import zmq.auth

        pub, _ = zmq.auth.load_certificate(server_cert)
        return cls(server_public=pub)


def check_endpoint(endpoint: str, curve: Curve | None) -> None:
    if not isinstance(endpoint, str) or not endpoint:
        raise EndpointError(f"endpoint must be a non-empty string, got {endpoint!r}")
    if not is_loopback(endpoint) and curve is None:
        raise EndpointError(f"{endpoint}: not a loopback address; a non-loopback feed needs CURVE keys "
                            "(curve=Curve(...), --curve-* options)")


def _apply_curve(sock, curve: Curve | None, bind: bool) -> None:
    import zmq

    if curve is None:
        return
    if bind:
        if not (curve.public and curve.secret):
            raise EndpointError("the binding side is the CURVE server: it needs public and secret keys")
        sock.curve_server = True
        sock.curve_publickey = curve.public
        sock.curve_secretkey = curve.secret
    else:
        if not curve.server_public:
            raise EndpointError("the connecting side needs the server's CURVE public key")
        pub, sec = (curve.public, curve.secret) if curve.secret else zmq.curve_keypair()
        sock.curve_serverkey = curve.server_public
        sock.curve_publickey = pub
        sock.curve_secretkey = sec


def subscriber_socket(ctx, endpoint: str, bind: bool = True, curve: Curve | None = None, rcvhwm: int = 64):
    """A SUB socket subscribed to the protocol magic, size-capped, bound or connected."""
    import zmq

    check_endpoint(endpoint, curve)
    s = ctx.socket(zmq.SUB)
    s.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
    s.setsockopt(zmq.RCVHWM, rcvhwm)
    s.setsockopt(zmq.LINGER, 0)
    _apply_curve(s, curve, bind)
    s.setsockopt(zmq.SUBSCRIBE, MAGIC)
    (s.bind if bind else s.connect)(endpoint)
    return s


def publisher_socket(ctx, endpoint: str, bind: bool = False, curve: Curve | None = None,
                     sndhwm: int = 256, linger_ms: int = 2000):
    """An XPUB socket that reports subscriptions and refuses (EAGAIN) instead of dropping."""
    import zmq

    check_endpoint(endpoint, curve)
    s = ctx.socket(zmq.XPUB)
    s.setsockopt(zmq.XPUB_VERBOSE, 1)
    s.setsockopt(zmq.XPUB_NODROP, 1)
    s.setsockopt(zmq.SNDHWM, sndhwm)
    s.setsockopt(zmq.LINGER, linger_ms)
    s.setsockopt(zmq.MAXMSGSIZE, 1024)  # inbound = subscriptions only
    _apply_curve(s, curve, bind)
    (s.bind if bind else s.connect)(endpoint)
    return s
