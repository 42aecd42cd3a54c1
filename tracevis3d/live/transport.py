"""ZeroMQ sockets of the live feed: loopback check, CURVE keys, size limits.

The binding side is the CURVE server, the connecting side the client
(docs/live-protocol.md, "Limits and security").  CURVE authenticates both ways: the
server admits only the client public keys of its allow-list (a folder of certificates,
as ZeroMQ's authenticator reads them), through a ZAP handler that counts whom it refused.
"""
from __future__ import annotations

import ipaddress
import itertools
import os
import re
import threading
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
    """CURVE keys (z85 bytes).  Server (the binding side): ``public`` + ``secret`` and
    ``clients``, the folder of the client certificates it admits (its allow-list: every
    ``*.key`` / ``*.key_secret`` file there, public keys only are read).  Client (the
    connecting side): ``server_public`` and its own ``public`` + ``secret`` (one of the
    server's allow-list; generated when absent -- then no allow-list admits it)."""

    public: bytes | None = None
    secret: bytes | None = None
    server_public: bytes | None = None
    clients: str | None = None

    @classmethod
    def server_from_file(cls, path: str, clients: str | None = None) -> "Curve":
        pub, sec = _load_cert(path)
        if not sec:
            raise EndpointError(f"{path}: no secret key in this certificate (use the .key_secret file)")
        if clients is not None and not os.path.isdir(clients):
            raise EndpointError(f"{clients}: not a folder of client certificates")
        return cls(public=pub, secret=sec, clients=clients)

    @classmethod
    def client_from_file(cls, server_cert: str, client_cert: str | None = None) -> "Curve":
        pub, _ = _load_cert(server_cert)
        if client_cert is None:
            return cls(server_public=pub)
        cpub, csec = _load_cert(client_cert)
        if not csec:
            raise EndpointError(f"{client_cert}: no secret key in this certificate (use the .key_secret file)")
        return cls(public=cpub, secret=csec, server_public=pub)


def _load_cert(path: str):
    import zmq.auth

    try:
        return zmq.auth.load_certificate(path)
    except (OSError, ValueError) as e:
        raise EndpointError(f"{path}: not a ZeroMQ certificate: {e}") from None


class _Domain:
    """One bound socket's ZAP domain: its allow-list counts and its peer cap.  The cap
    counts the socket's live connections from its monitor (accepted, not yet disconnected:
    the only events libzmq 4.3 gives a file descriptor), so a slot comes back when any
    connection goes, admitted or not.  A peer that stalls its handshake, and a refused one
    (libzmq 4.3.5 keeps a refused connection open until the handshake timer ends it), hold
    a slot for at most `HANDSHAKE_MS`; the refused peer's ZeroMQ then reconnects and is
    admitted once a slot is free (measured: 0.5 s after a peer left)."""

    def __init__(self, cap, monitor):
        self.cap, self.monitor = cap, monitor
        self.lock = threading.Lock()
        self.fds: set = set()
        self.admitted = self.refused = self.full = 0

    def connections(self) -> int:
        """Live connections after the monitor's queued events (call with ``lock`` held)."""
        import zmq
        from zmq.utils.monitor import parse_monitor_message

        while self.monitor is not None:
            try:
                ev = parse_monitor_message(self.monitor.recv_multipart(zmq.NOBLOCK))
            except zmq.Again:
                break
            if ev["event"] == zmq.EVENT_ACCEPTED:
                self.fds.add(ev["value"])
            elif ev["event"] == zmq.EVENT_DISCONNECTED:
                self.fds.discard(ev["value"])
        return len(self.fds)


class _AllowList:
    """One ZAP handler per ZeroMQ context (ZeroMQ asks ``inproc://zeromq.zap.01`` of the
    socket's context), one domain per bound socket that has an allow-list (CURVE: its
    folder of client certificates) or a peer cap; counts the peers it admitted and refused
    per domain.  A peer beyond the cap is refused at the handshake, before ZeroMQ keeps
    any of its messages: a bound viewer's memory is at most cap x its pipe."""

    _lock = threading.Lock()
    _by_ctx: dict = {}
    _domains = itertools.count(1)
    _pipes = itertools.count(1)  # the authenticators' pipe names (`__init__`)

    def __init__(self, ctx):
        from zmq.auth.thread import ThreadAuthenticator

        domains = self.domains = {}

        class Counting(ThreadAuthenticator):
            async def handle_zap_message(self, msg):
                d = domains.get(msg[2].decode("utf-8", "replace")) if len(msg) >= 6 else None
                if d is not None and d.cap is not None:
                    with d.lock:
                        full = d.connections() > d.cap
                    if full:
                        d.full += 1
                        self._send_zap_reply(msg[1], b"400", b"too many peers")
                        return
                await super().handle_zap_message(msg)

            def stop(self):
                """The thread ended (joined), then the ZAP endpoint unbound before its socket is
                closed: a close is finished by ZeroMQ's reaper thread later, and until then a
                new handler on the same context could not bind ``inproc://zeromq.zap.01``
                (a CURVE viewer reconnecting in one process died with "Address already in use")."""
                import zmq

                if self.pipe:
                    self.pipe.send(b"TERMINATE")
                    if self.is_alive():
                        self.thread.join()
                    self.thread = None
                    self.pipe.close(0)
                    self.pipe = None
                if self.zap_socket is not None:
                    try:
                        self.zap_socket.unbind("inproc://zeromq.zap.01")
                    except zmq.ZMQError:
                        pass
                    self.zap_socket.close(0)
                    self.zap_socket = None

            async def _authenticate_curve(self, domain, client_key):
                ok, reason = await super()._authenticate_curve(domain, client_key)
                d = domains.get(domain)
                if d is not None:
                    if ok:
                        d.admitted += 1
                    else:
                        d.refused += 1
                return ok, reason

        self.auth = Counting(ctx)
        # pyzmq names the authenticator's pipe after id(authenticator): a new one made where a
        # closed one lived (ids are reused) binds while libzmq's reaper may still hold the old
        # pipe's name ("Address already in use"): a name never used twice in this process
        self.auth.pipe_endpoint = f"inproc://tracevis3d-zap-pipe-{next(_AllowList._pipes)}"
        self.auth.start()
        self.users = 0

    @classmethod
    def attach(cls, sock, folder: str | None = None, cap: int | None = None) -> str:
        """Give ``sock`` (before it binds) a ZAP domain admitting the keys in ``folder``
        (CURVE) and at most ``cap`` connections at a time."""
        import zmq

        with cls._lock:
            al = cls._by_ctx.get(id(sock.context))
            if al is None:
                al = cls._by_ctx[id(sock.context)] = cls(sock.context)
            al.users += 1
            domain = f"tracevis3d-{next(cls._domains)}"
            monitor = None
            if cap is not None:
                sock.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_MS)
                monitor = sock.get_monitor_socket(zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)
            al.domains[domain] = _Domain(cap, monitor)
            if folder is not None:
                al.auth.configure_curve(domain=domain, location=folder)
                if domain not in al.auth.certs or not al.auth.certs[domain]:
                    cls._drop(al, domain, sock)
                    cls._release(al, sock.context)
                    raise EndpointError(f"{folder}: no client certificates (*.key) in this folder")
        sock.zap_domain = domain.encode()
        return domain

    @classmethod
    def detach(cls, sock, domain: str) -> None:
        """Before ``sock`` closes: its monitor goes, and its share of the handler."""
        with cls._lock:
            al = cls._by_ctx.get(id(sock.context))
            if al is not None:
                cls._drop(al, domain, sock)
                cls._release(al, sock.context)

    @staticmethod
    def _drop(al, domain: str, sock) -> None:
        d = al.domains.pop(domain, None)
        if d is not None and d.monitor is not None:
            with d.lock:
                try:
                    sock.disable_monitor()
                except Exception:  # noqa: BLE001 (closed already)
                    pass
                d.monitor.close(0)
                d.monitor = None

    @classmethod
    def _release(cls, al, ctx) -> None:
        al.users -= 1
        if al.users <= 0:
            al.auth.stop()
            del cls._by_ctx[id(ctx)]

    @classmethod
    def counts_of(cls, ctx, domain: str) -> tuple[int, int, int]:
        al = cls._by_ctx.get(id(ctx))
        d = al.domains.get(domain) if al else None
        return (d.admitted, d.refused, d.full) if d else (0, 0, 0)


#: a peer's handshake must end within this (ms), or its connection and peer slot go
#: (a refused peer's connection too: see `_Domain`)
HANDSHAKE_MS = 2000


_DOMAIN_OF: dict = {}  # id(socket) -> its ZAP domain (a CURVE server's), until close_socket


def client_counts(sock) -> tuple[int, int]:
    """(admitted, refused) CURVE clients of a socket made by this module (0, 0 without CURVE)."""
    return peer_counts(sock)[:2]


def peer_counts(sock) -> tuple[int, int, int]:
    """(CURVE clients admitted, CURVE clients refused, peers refused because the socket had
    its cap of connections) of a socket made by this module."""
    domain = _DOMAIN_OF.get(id(sock))
    return _AllowList.counts_of(sock.context, domain) if domain else (0, 0, 0)


def close_socket(sock, linger: int | None = None) -> None:
    """Close ``sock`` and give back its share of the context's ZAP handler (before the
    context is terminated: the handler's thread holds sockets of it)."""
    domain = _DOMAIN_OF.pop(id(sock), None)
    if domain:
        _AllowList.detach(sock, domain)
    sock.close(linger)


def check_endpoint(endpoint: str, curve: Curve | None) -> None:
    if not isinstance(endpoint, str) or not endpoint:
        raise EndpointError(f"endpoint must be a non-empty string, got {endpoint!r}")
    if not is_loopback(endpoint) and curve is None:
        raise EndpointError(f"{endpoint}: not a loopback address; a non-loopback feed needs CURVE keys "
                            "(curve=Curve(...), --curve-* options)")


def _apply_curve(sock, curve: Curve | None, bind: bool, max_peers: int | None = None) -> None:
    import zmq

    if curve is None:
        if bind and max_peers is not None:
            _DOMAIN_OF[id(sock)] = _AllowList.attach(sock, None, max_peers)
        return
    if bind:
        if not (curve.public and curve.secret):
            raise EndpointError("the binding side is the CURVE server: it needs public and secret keys")
        if not curve.clients:
            raise EndpointError("the binding side is the CURVE server: it needs the folder of the client "
                                "certificates it admits (Curve(clients=...), --curve-clients)")
        _DOMAIN_OF[id(sock)] = _AllowList.attach(sock, curve.clients, max_peers)
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


def subscriber_socket(ctx, endpoint: str, bind: bool = True, curve: Curve | None = None, rcvhwm: int = 64,
                      max_peers: int | None = None):
    """A SUB socket subscribed to the protocol magic, size-capped, bound or connected;
    bound, it admits at most ``max_peers`` connections at a time (None: no cap)."""
    import zmq

    check_endpoint(endpoint, curve)
    s = ctx.socket(zmq.SUB)
    s.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
    s.setsockopt(zmq.RCVHWM, rcvhwm)
    s.setsockopt(zmq.LINGER, 0)
    _apply_curve(s, curve, bind, max_peers)
    s.setsockopt(zmq.SUBSCRIBE, MAGIC)
    _bind_or_connect(s, endpoint, bind)
    return s


def _bind_or_connect(s, endpoint: str, bind: bool) -> None:
    try:
        (s.bind if bind else s.connect)(endpoint)
    except Exception:
        close_socket(s, 0)  # a port in use: the ZAP share goes back too
        raise


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
    _bind_or_connect(s, endpoint, bind)
    return s
