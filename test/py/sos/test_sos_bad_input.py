"""Bad input to sos-server over raw sockets (issue 3, "Bad input"): wrong
secret, no handshake, garbage, truncated frames, huge length prefixes,
unknown, malformed and out-of-order messages before and after
authentication, on the main and the bypass connection. Each must close only
that connection (the server closes the socket within a few seconds), while
well-behaved nodes (sos-probe) keep working before and after.

No protobuf library here: the few messages needed are hand-encoded in the
proto3 wire format (proto/wire.proto, proto/sos.proto), and the handshake's
HMAC proofs computed as proto/wire/handshake.cc does."""

import hashlib
import hmac
import os
import socket
import struct
import time

import pytest

# ---- proto3 wire format ------------------------------------------------------------


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_varint(field, n):
    return varint(field << 3 | 0) + varint(n)


def f_bytes(field, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(field << 3 | 2) + varint(len(data)) + data


def f_fixed64(field, n):
    return varint(field << 3 | 1) + struct.pack("<Q", n)


def parse(data):
    """{field: [values]}: ints for varint/fixed, bytes for length-delimited."""
    out, i = {}, 0
    while i < len(data):
        key, i = read_varint(data, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            v, i = read_varint(data, i)
        elif wt == 1:
            v = struct.unpack_from("<Q", data, i)[0]
            i += 8
        elif wt == 2:
            n, i = read_varint(data, i)
            v = data[i:i + n]
            i += n
        elif wt == 5:
            v = struct.unpack_from("<I", data, i)[0]
            i += 4
        else:
            raise ValueError(f"wire type {wt}")
        out.setdefault(field, []).append(v)
    return out


def read_varint(data, i):
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


# ---- frames and the handshake -----------------------------------------------------

PROTOCOL_VERSION = 1


def frame(payload):
    return struct.pack(">I", len(payload)) + payload


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError(f"closed after {len(buf)} of {n} bytes")
        buf += chunk
    return buf


def recv_frame(s, timeout=5.0):
    s.settimeout(timeout)
    (n,) = struct.unpack(">I", recv_exact(s, 4))
    assert n < 1 << 20, n
    return recv_exact(s, n)


def client_proof(secret, server_nonce, client_nonce, service):
    return hmac.new(secret, b"djava client\0" + server_nonce + client_nonce + service.encode(),
                    hashlib.sha256).digest()


def server_proof(secret, server_nonce, client_nonce):
    return hmac.new(secret, b"djava server\0" + client_nonce + server_nonce, hashlib.sha256).digest()


def connect(server):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def handshake(s, secret, service, version=PROTOCOL_VERSION, proof=None):
    """Runs the client side; returns the verdict as parsed fields."""
    hello = parse(recv_frame(s))
    assert hello.get(1) == [PROTOCOL_VERSION], hello
    server_nonce = hello[2][0]
    assert len(server_nonce) == 32
    nonce = os.urandom(32)
    if proof is None:
        proof = client_proof(secret, server_nonce, nonce, service)
    s.sendall(frame(f_varint(1, version) + f_bytes(2, nonce) + f_bytes(3, service) + f_bytes(4, proof)))
    verdict = parse(recv_frame(s))
    if verdict.get(1) == [1]:
        assert verdict[2][0] == server_proof(secret, server_nonce, nonce), \
            "the server's proof does not check out"
    return verdict


def accepted(verdict):
    return verdict.get(1) == [1]


def closed_by_server(s, timeout=5.0):
    """True when the server closes the connection within timeout (anything it
    sends before closing is read and dropped)."""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                if s.recv(65536) == b"":
                    return True
            except socket.timeout:
                return False
    except (ConnectionResetError, BrokenPipeError):
        return True
    finally:
        s.close()
    return False


# sos.proto messages
def node_request(seq, field, body):
    return f_varint(1, seq) + f_bytes(field, body)


def hello_req(seq=1, name="raw"):
    return node_request(seq, 2, f_bytes(1, name))


def read_req(seq, cid):
    return node_request(seq, 3, f_fixed64(1, cid))


def bypass_hello(node, token):
    return f_bytes(1, f_varint(1, node) + f_bytes(2, token))


class RawNode:
    """A node speaking the protocol by hand: main connection with Welcome,
    and its bypass connection joined."""

    def __init__(self, server, secret, name="raw-node", join_bypass=True):
        self.main = connect(server)
        assert accepted(handshake(self.main, secret, "sos"))
        self.main.sendall(frame(hello_req(1, name)))
        m = parse(recv_frame(self.main))
        assert 2 in m, f"no Welcome: {m}"
        w = parse(m[2][0])
        self.node = w[1][0]
        self.token = w.get(2, [b""])[0]
        self.bypass = None
        if join_bypass:
            self.bypass = connect(server)
            assert accepted(handshake(self.bypass, secret, "sos-bypass"))
            self.bypass.sendall(frame(bypass_hello(self.node, self.token)))
            # The server takes the first bypass hello that names the node,
            # on whichever connection it reads first: until it says the node
            # joined, a test's second hello could be taken instead of this.
            deadline = time.monotonic() + 10
            while f"node {self.node} ({name} at " not in server.log():
                assert time.monotonic() < deadline, "the node's bypass never joined: " + server.log()
                time.sleep(0.01)

    def close(self):
        for s in (self.main, self.bypass):
            if s is not None:
                s.close()


# ---- the well-behaved nodes --------------------------------------------------------


class Witness:
    """Two probe nodes sharing chunks; check() moves a counter between them."""

    def __init__(self, server, probe):
        self.server = server
        self.a = probe(server, "witness-a")
        self.b = probe(server, "witness-b")
        self.cid = self.a.alloc(16)
        self.value = 0
        self.check()

    def check(self, what="before"):
        assert self.server.alive(), f"sos-server died ({what}): {self.server.log()}"
        self.value += 1
        self.a.write(self.cid, 0, self.value)
        assert self.b.read(self.cid, 0) == self.value, what
        self.value += 1
        self.b.write(self.cid, 8, self.value)
        assert self.a.read(self.cid, 8) == self.value, what
        # A fresh chunk each time, dirty at a until b asks.
        fresh = self.a.alloc(8)
        self.a.write(fresh, 0, self.value)
        assert self.b.read(fresh, 0) == self.value, what


@pytest.fixture
def witness(sos_server, probe):
    w = Witness(sos_server, probe)
    yield w
    w.check("after")
    w.a.ok("abandon")
    w.b.ok("abandon")


@pytest.fixture
def secret(secret_file):
    """The secret as proto/wire/secret.cc reads it: trailing whitespace dropped."""
    with open(secret_file, "rb") as f:
        return f.read().rstrip(b"\n\r \t")


# ---- before authentication --------------------------------------------------------------


def test_wrong_secret_is_refused_and_closed(sos_server, secret, witness):
    s = connect(sos_server)
    verdict = handshake(s, b"not the cluster secret at all!!", "sos")
    assert not accepted(verdict)
    assert b"authentication" in verdict.get(3, [b""])[0], verdict
    assert closed_by_server(s)
    assert "authentication failed" in sos_server.log()


def test_wrong_proof_length_is_refused(sos_server, secret, witness):
    s = connect(sos_server)
    assert not accepted(handshake(s, secret, "sos", proof=b"\0"))
    assert closed_by_server(s)


def test_unknown_service_is_refused(sos_server, secret, witness):
    s = connect(sos_server)
    verdict = handshake(s, secret, "no-such-service")
    assert not accepted(verdict)
    assert closed_by_server(s)


def test_other_protocol_version_is_refused(sos_server, secret, witness):
    s = connect(sos_server)
    assert not accepted(handshake(s, secret, "sos", version=99))
    assert closed_by_server(s)


def test_silent_client_is_closed_after_the_handshake_timeout(sos_server, witness):
    s = connect(sos_server)
    recv_frame(s)  # the ServerHello
    witness.check("while a silent client waits")
    assert closed_by_server(s, timeout=15), "a client that never answers the ServerHello stays connected"


@pytest.mark.parametrize("junk", [
    b"GET / HTTP/1.1\r\nHost: sos\r\n\r\n",                 # length prefix 'GET ' is huge
    b"\xff\xff\xff\xff" + b"x" * 100,                       # the largest length prefix
    frame(b"\xff\xfe\xfd\xfc\xfb\xfa"),                     # a frame that is no ClientHello
    frame(b""),                                             # an empty ClientHello
    frame(os.urandom(200)),
], ids=["http", "huge-prefix", "garbage-frame", "empty-frame", "random-frame"])
def test_garbage_instead_of_the_handshake_is_closed(sos_server, witness, junk):
    s = connect(sos_server)
    recv_frame(s)
    s.sendall(junk)
    assert closed_by_server(s)


def test_garbage_before_reading_the_server_hello(sos_server, witness):
    s = connect(sos_server)
    s.sendall(os.urandom(5000))
    assert closed_by_server(s)


def test_truncated_handshake_frame_then_close(sos_server, witness):
    s = connect(sos_server)
    recv_frame(s)
    s.sendall(struct.pack(">I", 100) + b"0123456789")
    s.shutdown(socket.SHUT_WR)
    assert closed_by_server(s)


# ---- authenticated main connection ("sos") ----------------------------------------------


def authed(server, secret, service="sos"):
    s = connect(server)
    assert accepted(handshake(s, secret, service))
    return s


@pytest.mark.parametrize("junk", [
    b"\xff\xff\xff\xff",                                   # huge length prefix
    struct.pack(">I", (16 << 20) + 1) + b"abc",             # just above the frame limit
    frame(b"\xff\xff\xff\xff\xff"),                         # not protobuf
    frame(read_req(1, 1 << 40 | 1)),                        # Read before Hello
    frame(bypass_hello(1, b"t" * 16)),                      # a bypass message on the main connection
    frame(f_varint(99, 5)),                                 # only an unknown field: no body
    frame(b""),                                             # an empty request
    frame(node_request(1, 6, f_fixed64(1, 1 << 40 | 1))),   # Free before Hello
], ids=["huge-prefix", "above-limit", "not-protobuf", "read-before-hello", "bypass-message",
        "unknown-field", "empty", "free-before-hello"])
def test_invalid_first_request_closes_the_main_connection(sos_server, secret, witness, junk):
    s = authed(sos_server, secret)
    s.sendall(junk)
    assert closed_by_server(s)


def test_truncated_request_then_close(sos_server, secret, witness):
    s = authed(sos_server, secret)
    s.sendall(struct.pack(">I", 50) + hello_req()[:10])
    s.shutdown(socket.SHUT_WR)
    assert closed_by_server(s)


@pytest.mark.parametrize("junk", [
    frame(hello_req(2, "again")),                          # a second Hello
    frame(b"\x0a\x0b\x0c"),                                 # malformed
    frame(f_varint(1, 5)),                                  # seq only, no body
    b"\xff\xff\xff\xff",                                   # huge length prefix
    frame(bypass_hello(1, b"x")),                           # bypass message on main
    # An exclusive prefetch (Prefetch, field 5) of one id without its version,
    # and a read prefetch with one.
    frame(node_request(3, 5, f_fixed64(1, 1 << 40 | 7) + f_varint(2, 1))),
    frame(node_request(3, 5, f_fixed64(1, 1 << 40 | 7) + f_varint(3, 4))),
    # A read prefetch asking only for first writes (which only writes can be).
    frame(node_request(3, 5, f_fixed64(1, 1 << 40 | 7) + f_varint(5, 1))),
], ids=["second-hello", "malformed", "no-body", "huge-prefix", "bypass-message",
        "exclusive-prefetch-without-versions", "read-prefetch-with-versions",
        "read-prefetch-of-first-writes"])
def test_invalid_request_of_a_joined_node_ends_only_its_session(sos_server, secret, witness, junk):
    n = RawNode(sos_server, secret)
    # The node works: a Read of the witness's chunk is granted.
    n.main.sendall(frame(read_req(2, witness.cid)))
    m = parse(recv_frame(n.main))
    assert 3 in m, f"expected a Grant, got {m}"
    # (No witness.check() here: the raw node does not answer invalidates, so
    # a write of that chunk would wait for it.)
    n.main.sendall(junk)
    assert closed_by_server(n.main)
    assert closed_by_server(n.bypass), "the session's bypass connection stayed open"
    # The raw node held a read copy; the witness can still write without it.
    witness.check("after the raw node's session ended")


def test_hello_without_a_bypass_is_dropped_after_its_timeout(sos_server, secret, witness):
    n = RawNode(sos_server, secret, join_bypass=False)
    witness.check("while a node waits for its bypass")
    assert closed_by_server(n.main, timeout=15)


def test_an_idle_joined_node_stays_connected(sos_server, secret, witness):
    """The opposite check: a correct node that is merely quiet is not closed."""
    n = RawNode(sos_server, secret)
    n.main.settimeout(1.5)
    with pytest.raises(socket.timeout):
        n.main.recv(1)
    n.main.sendall(frame(read_req(2, witness.cid)))
    assert 3 in parse(recv_frame(n.main))
    n.close()


# ---- bypass connection ("sos-bypass") ------------------------------------------------------


def test_bypass_naming_another_nodes_with_a_wrong_token_is_closed(sos_server, secret, witness):
    """Trying to take over a live node's bypass (its number is public)."""
    s = authed(sos_server, secret, "sos-bypass")
    s.sendall(frame(bypass_hello(witness.a.node, b"\0" * 16)))
    assert closed_by_server(s)
    s = authed(sos_server, secret, "sos-bypass")
    s.sendall(frame(bypass_hello(witness.a.node, b"")))
    assert closed_by_server(s)


def test_second_bypass_for_a_joined_node_is_closed(sos_server, secret, witness):
    n = RawNode(sos_server, secret)
    s = authed(sos_server, secret, "sos-bypass")
    s.sendall(frame(bypass_hello(n.node, n.token)))
    assert closed_by_server(s)
    # The node's own connections still work.
    n.main.sendall(frame(read_req(2, witness.cid)))
    assert 3 in parse(recv_frame(n.main))
    n.close()


@pytest.mark.parametrize("junk", [
    frame(f_bytes(2, f_fixed64(1, 1) + f_varint(2, 1))),   # an InvalidateAck before the hello
    frame(b"\xff\xff\xff"),
    frame(b""),
    b"\xff\xff\xff\xff",
    frame(hello_req()),                                     # a main-connection message
], ids=["ack-first", "malformed", "empty", "huge-prefix", "main-message"])
def test_invalid_bypass_hello_is_closed(sos_server, secret, witness, junk):
    s = authed(sos_server, secret, "sos-bypass")
    s.sendall(junk)
    assert closed_by_server(s)


@pytest.mark.parametrize("junk", [
    frame(b"\xff\xff\xff"),                                 # malformed
    frame(f_varint(9, 1)),                                  # unknown field only
    frame(bypass_hello(1, b"again")),                       # a second hello
    b"\xff\xff\xff\xff",
], ids=["malformed", "unknown", "second-hello", "huge-prefix"])
def test_invalid_bypass_message_of_a_joined_node_ends_its_session(sos_server, secret, witness, junk):
    n = RawNode(sos_server, secret)
    n.bypass.sendall(junk)
    assert closed_by_server(n.bypass)
    assert closed_by_server(n.main), "the node's main connection stayed open without its bypass"


def test_unsolicited_answers_on_the_bypass_do_not_break_others(sos_server, secret, witness, probe):
    """An InvalidateAck and a FlushReply nobody asked for (wrong txn) for the
    witness's chunk: ignored or fatal for this node, never harmful to others."""
    n = RawNode(sos_server, secret)
    n.bypass.sendall(frame(f_bytes(2, f_fixed64(1, witness.cid) + f_varint(2, 12345))))
    chunk = f_fixed64(1, witness.cid) + f_bytes(7, b"\x99" * 16)
    n.bypass.sendall(frame(f_bytes(3, f_varint(1, 777) + f_varint(2, 1) + f_bytes(3, chunk)
                                   + f_fixed64(4, witness.cid))))
    time.sleep(0.3)
    # The forged flush reply did not overwrite the chunk's home copy: a new
    # node reads what the witnesses last wrote.
    c = probe(sos_server, "fresh-reader")
    assert c.read(witness.cid, 0) == witness.value - 1
    assert c.read(witness.cid, 8) == witness.value
    c.ok("abandon")
    witness.check("after unsolicited answers")
    n.close()


def test_many_bad_connections_at_once(sos_server, secret, witness):
    socks = []
    for i in range(40):
        s = connect(sos_server)
        if i % 2:
            s.sendall(os.urandom(64))
        socks.append(s)
    witness.check("with 40 bad connections open")
    for s in socks:
        s.close()
    witness.check("after 40 bad connections")


def test_a_node_that_never_answers_an_invalidate_is_dropped_and_writers_go_on(sos_server_with, secret,
                                                                            probe):
    """A joined node takes a read copy and then ignores the invalidate (its
    connections stay open, it just never answers). The server survives any
    single client's behaviour: after --answer-timeout-ms the silent node is
    dropped, its copy counts as invalidated, and the writer is granted."""
    server = sos_server_with("--answer-timeout-ms", "500")
    a = probe(server, "owner")
    cid = a.alloc(16)
    a.write(cid, 0, 1)
    n = RawNode(server, secret, name="deaf-node")
    n.main.sendall(frame(read_req(2, cid)))
    assert 3 in parse(recv_frame(n.main))
    a.send(f"write {cid:#x} 0 2")
    try:
        assert a.answered(8.0), "the write still waits for the silent node's acknowledgement after 8 s"
        assert a.answer() == "ok"
        # The silent node's connections were closed, and the log says why.
        assert closed_by_server(n.main)
        log = server.log()
        assert "deaf-node" in log and "unanswered for 500 ms" in log, log
        # The others go on: a second node reads what the writer wrote.
        b = probe(server, "reader")
        assert b.read(cid, 0) == 2
    finally:
        n.close()


def test_a_node_that_answers_slowly_within_the_deadline_is_kept(sos_server_with, secret, probe):
    """The opposite check: an answer that comes late but within the deadline
    keeps the node."""
    server = sos_server_with("--answer-timeout-ms", "3000")
    a = probe(server, "owner")
    cid = a.alloc(16)
    a.write(cid, 0, 1)
    n = RawNode(server, secret, name="slow-node")
    n.main.sendall(frame(read_req(2, cid)))
    assert 3 in parse(recv_frame(n.main))
    a.send(f"write {cid:#x} 0 2")
    inv = parse(recv_frame(n.main))
    assert 4 in inv, f"expected an Invalidate, got {inv}"
    body = parse(inv[4][0])
    time.sleep(1.0)
    assert not a.answered(0.01), "the write was granted before the reader acknowledged"
    n.bypass.sendall(frame(f_bytes(2, f_fixed64(1, body[1][0]) + f_varint(2, body[2][0]))))
    try:
        assert a.answered(5.0) and a.answer() == "ok"
        n.main.sendall(frame(read_req(3, cid)))
        assert 3 in parse(recv_frame(n.main)), "the slow node was dropped"
    finally:
        n.close()
