"""CURVE both ways (issue 20), over real ZeroMQ sockets on loopback: the binding side admits
only the client public keys in its folder of certificates (a ZAP handler), refuses and
counts any other key pair holding its public certificate; a binding program's feed is
read only by admitted viewers."""
import struct
import threading
import time

import pytest
import zmq
import zmq.auth

import tracevis3d
from live_helpers import assert_same_calls, follow, free_endpoint
from tracevis3d.live import Curve, EndpointError, LiveSession, replay
from tracevis3d.live.transport import client_counts


def hdr(mtype, seq, sid):
    return struct.pack("<4sHHQQ", b"TV3L", 1, mtype, sid, seq)


def program_frames(sid):
    hello = struct.pack("<IqII", 42, 0, 1_000_000_000, 4) + b"prog"
    funcs = struct.pack("<II", 0, 1) + struct.pack("<iHH", 7, 4, 0) + b"main"
    threads = struct.pack("<II", 0, 1) + struct.pack("<IQHH", 42, 100, 4, 0) + b"Main"
    events = struct.pack("<II", 2, 0) + struct.pack("<BBHIq", 1, 0, 0, 0, 1000) + struct.pack("<BBHIq", 2, 0, 0, 0, 2000)
    bye = struct.pack("<QQ", 2, 0)
    return [[hdr(t, k, sid), p] for k, (t, p) in enumerate([(1, hello), (2, funcs), (3, threads), (4, events), (6, bye)])]


@pytest.fixture
def keys(tmp_path):
    """server.key(_secret) in keys/, the admitted client's certificate in clients/ (public
    part only there), an unknown client's pair elsewhere."""
    (tmp_path / "keys").mkdir()
    (tmp_path / "clients").mkdir()
    zmq.auth.create_certificates(str(tmp_path / "keys"), "server")
    zmq.auth.create_certificates(str(tmp_path / "keys"), "friend")
    zmq.auth.create_certificates(str(tmp_path / "keys"), "stranger")
    (tmp_path / "clients" / "friend.key").write_bytes((tmp_path / "keys" / "friend.key").read_bytes())
    return tmp_path


def publish(ctx, endpoint, curve, sid):
    """An XPUB peer connecting with ``curve`` (dict of socket options) sending one program."""
    s = ctx.socket(zmq.XPUB)
    for k, v in curve.items():
        setattr(s, k, v)
    s.connect(endpoint)
    return s, program_frames(sid)


def test_viewer_admits_only_its_allow_list(keys):
    server = Curve.server_from_file(str(keys / "keys" / "server.key_secret"), str(keys / "clients"))
    friend = Curve.client_from_file(str(keys / "keys" / "server.key"), str(keys / "keys" / "friend.key_secret"))
    stranger = Curve.client_from_file(str(keys / "keys" / "server.key"), str(keys / "keys" / "stranger.key_secret"))
    ctx = zmq.Context()
    with LiveSession("tcp://127.0.0.1:*", curve=server) as sess:
        peers = []
        for sid, c in ((1, friend), (2, stranger)):
            peers.append(publish(ctx, sess.endpoint, dict(curve_serverkey=c.server_public, curve_publickey=c.public,
                                                         curve_secretkey=c.secret), sid))
        anon_pub, anon_sec = zmq.curve_keypair()  # any key pair with the server's public certificate
        peers.append(publish(ctx, sess.endpoint, dict(curve_serverkey=server.public, curve_publickey=anon_pub,
                                                     curve_secretkey=anon_sec), 3))
        t0 = time.monotonic()
        while time.monotonic() - t0 < 5 and (client_counts(sess.sock)[1] < 2 or not peers[0][0].poll(0)):
            sess.poll_once(wait=0.05)
        assert peers[0][0].poll(1000)  # only the friend gets the viewer's subscription
        peers[0][0].recv()
        for s, frames in peers:
            for f in frames:
                try:
                    s.send_multipart(f, flags=zmq.NOBLOCK)
                except zmq.Again:
                    pass
        follow(sess, timeout=10)
        admitted, refused = sess.clients
        assert admitted >= 1 and refused >= 2
        assert set(sess.sessions) == {1} and sess.n_calls == 1
        for s, _ in peers:
            s.close(0)
    ctx.destroy(linger=0)


def test_a_binding_program_feeds_only_admitted_viewers(keys):
    server = Curve.server_from_file(str(keys / "keys" / "server.key_secret"), str(keys / "clients"))
    want = tracevis3d.synthetic(200, seed=6)
    ep = free_endpoint()
    friend = LiveSession(ep, bind=False, curve=Curve.client_from_file(str(keys / "keys" / "server.key"),
                                                                      str(keys / "keys" / "friend.key_secret")))
    stranger = LiveSession(ep, bind=False, curve=Curve.client_from_file(str(keys / "keys" / "server.key"),
                                                                        str(keys / "keys" / "stranger.key_secret")))
    try:
        th = threading.Thread(target=replay, args=(want, ep), kwargs=dict(bind=True, curve=server,
                                                                         wait_subscriber=5.0, linger=1.0))
        th.start()
        follow(friend, timeout=20)
        th.join()
        assert_same_calls(friend.trace.check(), want, time_tol=1e-3, kinds=False)
        ch = stranger.poll_once(max_messages=10 ** 6, wait=0.3)
        assert ch.messages == 0 and len(stranger.trace) == 0
    finally:
        friend.close()
        stranger.close()


def test_a_curve_server_without_an_allow_list_is_refused(keys, tmp_path, capsys):
    pub, sec = zmq.auth.load_certificate(str(keys / "keys" / "server.key_secret"))
    with pytest.raises(EndpointError, match="folder of the client certificates"):
        LiveSession("tcp://127.0.0.1:*", curve=Curve(public=pub, secret=sec))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EndpointError, match="no client certificates"):
        LiveSession("tcp://127.0.0.1:*", curve=Curve(public=pub, secret=sec, clients=str(empty)))
    from tracevis3d.cli import main

    assert main(["replay", str(tmp_path / "x.json"), "tcp://127.0.0.1:5999", "--bind",
                 "--curve-server-key", str(keys / "keys" / "server.key_secret")]) == 2
    err = [e for e in capsys.readouterr().err.splitlines() if e.startswith("tracevis3d: error")]
    assert len(err) == 1 and "--curve-clients" in err[0]


def test_curve_sessions_one_after_another_on_the_callers_context(keys):
    """A CURVE viewer closed and opened again inside one process, on the caller's ZeroMQ
    context (issue 68): the ZAP handler of the first is gone when ``close()`` returns, so the
    second binds ``inproc://zeromq.zap.01`` again instead of dying with "Address already in use"."""
    server = Curve.server_from_file(str(keys / "keys" / "server.key_secret"), str(keys / "clients"))
    ctx = zmq.Context()
    try:
        for _ in range(3):
            sess = LiveSession("tcp://127.0.0.1:*", curve=server, context=ctx)
            sess.close()
        ctx.socket(zmq.REP).bind("inproc://zeromq.zap.01")  # the caller may bind its own handler now
    finally:
        ctx.destroy(linger=0)


@pytest.mark.timeout(60)
def test_each_authenticator_pipe_has_a_name_of_its_own(keys):
    """pyzmq names a ZAP authenticator's pipe ``inproc://<id(authenticator)>.inproc``; a new one
    made where a closed one lived (ids are reused) bound while libzmq still held the old name
    (1 CI run in several: "Address already in use").  Each pipe is now named by a counter."""
    from tracevis3d.live.transport import _AllowList

    server = Curve.server_from_file(str(keys / "keys" / "server.key_secret"), str(keys / "clients"))
    ctx = zmq.Context()
    names = []
    try:
        for _ in range(3):
            sess = LiveSession("tcp://127.0.0.1:*", curve=server, context=ctx)
            names.append(_AllowList._by_ctx[id(ctx)].auth.pipe_endpoint)
            sess.close()
    finally:
        ctx.destroy(linger=0)
    assert len(set(names)) == 3 and all(n.startswith("inproc://tracevis3d-zap-pipe-") for n in names), names
