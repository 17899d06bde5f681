"""Nodes that die, leave or misuse chunks, against a real sos-server (issue 3,
"Failures"). What the protocol promises:

- a chunk whose only current copy was modified at a node that died (SIGKILL,
  or abandon: disconnecting without the die handshake) is LOST: every later
  access anywhere gets an error naming the chunk and the dead node, never
  the stale home copy;
- a chunk that node had written back (or only read) stays readable with its
  current value, and the dead node's read copies no longer hold anybody up;
- a node that closes (die / okToDie) writes every modified chunk home first:
  nothing is lost;
- the server keeps serving everyone else throughout."""

import re
import signal
import time

import pytest


def error_of(answer):
    assert answer.startswith("error "), f"expected an error, got {answer!r}"
    parts = answer.split(" ", 2)
    return parts[1], (parts[2] if len(parts) > 2 else "")


def assert_lost(answer, cid, dead_name):
    code, msg = error_of(answer)
    assert code == "LOST", answer
    assert f"{cid:016x}" in msg.lower() or str(cid) in msg, f"the error does not name the chunk: {answer}"
    assert dead_name in msg, f"the error does not name the node that died ({dead_name}): {answer}"


def kill_and_wait(p):
    p.proc.send_signal(signal.SIGKILL)
    p.proc.wait(timeout=10)


def check_server_serves(sos_server, probe):
    """A fresh pair of nodes can still allocate, write and read each other's chunks."""
    assert sos_server.alive(), sos_server.log()
    x = probe(sos_server, "fresh-x")
    y = probe(sos_server, "fresh-y")
    cid = x.alloc(16)
    x.write(cid, 8, 4242)
    assert y.read(cid, 8) == 4242
    y.write(cid, 0, 7)
    assert x.read(cid, 0) == 7
    x.ok("abandon")
    y.ok("abandon")


@pytest.mark.parametrize("how", ["sigkill", "abandon"])
def test_dead_nodes_dirty_chunks_are_lost_its_clean_ones_survive(sos_server, probe, how):
    a = probe(sos_server, f"node-a-{how}")
    b = probe(sos_server, "node-b")
    c1, c2, c3 = a.alloc(16), a.alloc(16), a.alloc(16)
    a.write(c1, 0, 11)
    a.write(c2, 0, 22)
    a.write(c3, 0, 33)          # c3: never leaves a
    assert b.read(c1, 0) == 11  # c1 flushed home, shared by a and b
    assert b.read(c2, 0) == 22  # c2 likewise
    a.write(c1, 0, 12)          # c1: only a's copy is current again (home has 11)
    assert a.read(c2, 0) == 22  # c2: a keeps a clean read copy

    if how == "sigkill":
        kill_and_wait(a)
    else:
        assert a.cmd("abandon") == "ok"
        assert a.wait_exit() == 0

    assert_lost(b.cmd(f"read {c1:#x} 0"), c1, a.name)   # never the stale 11
    assert_lost(b.cmd(f"read {c3:#x} 0"), c3, a.name)   # died before anyone fetched it
    assert b.read(c2, 0) == 22
    # a's read copy of c2 died with it: writing needs nobody's acknowledgement.
    b.write(c2, 0, 23)
    # Another node sees the same: lost stays lost, c2 is current.
    c = probe(sos_server, "node-c")
    c.ok(f"prefetch {c1:#x},{c2:#x},{c3:#x}")   # errors come back to the later accesses
    assert_lost(c.cmd(f"read {c1:#x} 0"), c1, a.name)
    assert_lost(c.cmd(f"read {c3:#x} 0"), c3, a.name)
    assert_lost(c.cmd(f"lock {c1:#x}"), c1, a.name)
    assert c.read(c2, 0) == 23
    check_server_serves(sos_server, probe)
    b.ok("abandon")
    c.ok("abandon")


def test_killed_while_an_access_is_in_progress_the_waiter_gets_lost(sos_server, probe):
    """b's read must wait for a's access to end (a flush never tears a
    write); when a dies inside that access, b gets LOST instead of hanging or
    the stale copy."""
    a = probe(sos_server, "holder")
    b = probe(sos_server, "waiter")
    cid = a.alloc(16)
    a.write(cid, 0, 1)
    assert b.read(cid, 0) == 1
    a.ok(f"lock {cid:#x}")
    a.ok(f"set {cid:#x} 0 2")
    b.send(f"read {cid:#x} 0")
    assert not b.answered(0.5), f"b read during a's write access: {b.answer()}"
    kill_and_wait(a)
    assert_lost(b.answer(timeout=10), cid, a.name)
    check_server_serves(sos_server, probe)


def test_an_access_in_progress_delays_the_flush_and_is_not_torn(sos_server, probe):
    a = probe(sos_server, "writer")
    b = probe(sos_server, "reader")
    cid = a.alloc(16)
    a.ok(f"lock {cid:#x}")
    a.ok(f"set {cid:#x} 0 5")
    b.send(f"read {cid:#x} 8")
    assert not b.answered(0.5), f"b read during a's write access: {b.answer()}"
    a.ok(f"set {cid:#x} 8 5")
    a.ok(f"release {cid:#x}")
    assert b.answer() == "ok 5"
    assert b.read(cid, 0) == 5


def test_close_writes_every_dirty_chunk_home(sos_server, probe):
    a = probe(sos_server, "leaver")
    b = probe(sos_server, "stayer")
    ids = [a.alloc(24) for _ in range(5)]
    for n, cid in enumerate(ids):
        a.write(cid, 16, 100 + n)
    assert b.read(ids[0], 16) == 100     # home and shared
    a.write(ids[0], 16, 200)             # dirty at a again
    assert a.cmd("close") == "ok"
    assert a.wait_exit() == 0
    assert [b.read(cid, 16) for cid in ids] == [200, 101, 102, 103, 104]
    c = probe(sos_server, "later")
    assert [c.read(cid, 16) for cid in ids] == [200, 101, 102, 103, 104]
    assert re.search(r"\(leaver at [^)]*\) left", sos_server.log()), sos_server.log()


def test_close_with_nothing_modified(sos_server, probe):
    """A node holding only read copies (or nothing) leaves cleanly too."""
    a = probe(sos_server, "creator")
    cid = a.alloc(16)
    a.write(cid, 0, 9)
    b = probe(sos_server, "reader-only")
    assert b.read(cid, 0) == 9
    assert b.cmd("close") == "ok", f"close of a node with no modified chunk failed; server log: {sos_server.log()}"
    assert b.wait_exit() == 0
    e = probe(sos_server, "empty")
    assert e.cmd("close") == "ok", f"close of a node with no chunks failed; server log: {sos_server.log()}"
    assert e.wait_exit() == 0
    assert a.read(cid, 0) == 9
    a.write(cid, 0, 10)


def test_unknown_freed_and_in_use_chunks(sos_server, probe):
    a = probe(sos_server, "owner")
    b = probe(sos_server, "other")
    # An id of a node that never existed, and an unused id of a live node.
    ghost = (0xFFFFFE << 40) | 1
    code, msg = error_of(b.cmd(f"read {ghost:#x} 0"))
    assert code == "NO_SUCH_CHUNK", msg
    unused = (a.node << 40) | 999999
    code, msg = error_of(b.cmd(f"read {unused:#x} 0"))
    assert code == "NO_SUCH_CHUNK", msg
    assert a.alloc(16) > 0      # a still works after being asked about an id it never made

    private, shared = a.alloc(16), a.alloc(16)
    a.write(shared, 0, 3)
    assert b.read(shared, 0) == 3
    code, msg = error_of(a.cmd(f"free {shared:#x}"))
    assert code == "IN_USE", msg
    assert a.cmd(f"free {private:#x}") == "ok"
    code, msg = error_of(b.cmd(f"read {private:#x} 0"))
    assert code == "FREED", msg
    code, msg = error_of(a.cmd(f"read {private:#x} 0"))
    assert code == "FREED", msg
    assert b.read(shared, 0) == 3


def test_metadata_travels_with_the_chunk(sos_server, probe):
    a = probe(sos_server, "maker")
    b = probe(sos_server, "user")
    arr = a.alloc(40, "[J", 123456)
    obj = a.alloc(16, "com.example.Point", 99)
    a.write(arr, 32, 77)
    meta = dict(kv.split("=", 1) for kv in b.ok(f"meta {arr:#x}").split())
    assert meta["size"] == "40" and meta["class"] == "[J" and meta["hash"] == "123456", meta
    meta = dict(kv.split("=", 1) for kv in b.ok(f"meta {obj:#x}").split())
    assert meta["class"] == "com.example.Point" and meta["hash"] == "99", meta
    assert b.read(arr, 32) == 77
    # A third node, after the class descriptors have crossed other connections.
    c = probe(sos_server, "third")
    b.write(obj, 8, 5)
    meta = dict(kv.split("=", 1) for kv in c.ok(f"meta {obj:#x}").split())
    assert meta["class"] == "com.example.Point" and meta["size"] == "16", meta
    assert c.read(obj, 8) == 5


def test_prefetch_then_loads_need_no_further_misses(sos_server, probe):
    a = probe(sos_server, "maker")
    b = probe(sos_server, "prefetcher")
    ids = [a.alloc(16) for _ in range(20)]
    for n, cid in enumerate(ids):
        a.write(cid, 0, n)
    b.ok("prefetch " + ",".join(f"{cid:#x}" for cid in ids))
    assert [b.read(cid, 0) for cid in ids] == list(range(20))
    stats = dict(kv.split("=") for kv in b.ok("stats").split())
    assert int(stats["misses"]) == 20, stats   # the prefetched ids, counted once each


def test_many_nodes_come_and_go_while_one_keeps_working(sos_server, probe):
    keeper = probe(sos_server, "keeper")
    cid = keeper.alloc(16)
    for round_ in range(6):
        n = probe(sos_server, f"visitor{round_}")
        n.write(cid, 0, round_ + 1)
        mine = n.alloc(16)
        n.write(mine, 0, 50 + round_)
        if round_ % 3 == 0:
            kill_and_wait(n)                  # cid's current copy at n: lost
            assert_lost(keeper.cmd(f"read {cid:#x} 0"), cid, n.name)
            cid = keeper.alloc(16)
        elif round_ % 3 == 1:
            assert n.cmd("close") == "ok"
            assert keeper.read(cid, 0) == round_ + 1
            assert keeper.read(mine, 0) == 50 + round_
        else:
            assert keeper.read(cid, 0) == round_ + 1   # flushed from a live node
            assert n.cmd("abandon") == "ok"
            assert keeper.read(cid, 0) == round_ + 1   # keeper's own copy is current
    check_server_serves(sos_server, probe)


def test_chunk_size_limits(sos_server, probe):
    """The largest chunk the server announces crosses between nodes; one
    byte more is refused at alloc; an empty chunk is a chunk too."""
    a = probe(sos_server, "big-maker")
    b = probe(sos_server, "big-reader")
    limit = 15 << 20
    code, msg = error_of(a.cmd(f"alloc {limit + 1}"))
    assert code == "TOO_LARGE", msg
    big = a.alloc(limit)
    a.write(big, limit - 8, 77)
    a.write(big, 0, 66)
    assert b.read(big, limit - 8) == 77
    assert b.read(big, 0) == 66
    b.write(big, 8, 55)                 # and back
    assert a.read(big, 8) == 55
    empty = a.alloc(0)
    meta = dict(kv.split("=", 1) for kv in b.ok(f"meta {empty:#x}").split())
    assert meta["size"] == "0", meta
    code, _ = error_of(b.cmd(f"read {empty:#x} 0"))
    assert code == "BAD_ARGUMENT"      # the probe's own bounds check
