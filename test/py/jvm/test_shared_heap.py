"""The shared heap between JVMs: two build/jdk nodes of one real cluster
(thread-manager and sos-server on loopback) share a graph of objects through
djava.runtime.Node's publish/attach, and every field and array kind, object
identity, strings and classes by value, invalidation of stale copies, GC
during sharing and the death of the node that held the only copy behave as
docs/HEAP.md says. Each node is test/py/jvm/programs/HeapProbe.java, driven
one command a line."""

import os
import re
import signal
import subprocess

import pytest

from localprocs import JAVA, JAVAC, JDK, ROOT, read_line

PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    out = tmp_path_factory.mktemp("heap-classes")
    subprocess.run([JAVAC, "-cp", os.path.join(JDK, "lib", "djava-runtime.jar"), "-d", str(out),
                    os.path.join(PROGRAMS, "HeapProbe.java")], check=True)
    return str(out)


class HeapNode:
    def __init__(self, procs, cluster, secret, classes, *options):
        self.procs = procs
        # Threads stay on their node: these tests are about the heap alone
        # (test/py/threads runs them on thread servers).
        self.p = procs.start([JAVA, "-XX:+DistributedJava", f"-XX:DjavaCluster={cluster}",
                              f"-XX:DjavaSecretFile={secret}", "-XX:+UnlockDiagnosticVMOptions",
                              "-XX:-DjavaShipThreads", *options, "-cp", classes,
                              "HeapProbe"], stdin=subprocess.PIPE)

    def send(self, command):
        self.p.stdin.write(command + "\n")
        self.p.stdin.flush()
        self.last = command

    def answer(self, timeout=60):
        line = read_line(self.p, timeout)
        assert line, f"the node died on {self.last!r}: {self.procs.stderr_of(self.p)}"
        return line

    def ask(self, command, timeout=60):
        self.send(command)
        return self.answer(timeout)

    def close(self):
        self.p.stdin.close()
        assert self.p.wait(timeout=60) == 0, self.procs.stderr_of(self.p)


@pytest.fixture
def nodes(procs, thread_manager, secret_file, classes):
    def make(*options):
        return HeapNode(procs, thread_manager, secret_file, classes, *options)
    return make


def fields(line):
    return dict(item.split("=", 1) for item in re.findall(r"\w+(?:\.\w+)?=\S+", line))


def publish(node):
    answer = node.ask("publish")
    assert answer.startswith("id "), answer
    return int(answer.split()[1])


def test_a_graph_published_on_one_node_reads_the_same_on_another(nodes):
    a, b = nodes(), nodes()
    root = publish(a)
    assert b.ask(f"attach {root}") == "attached HeapProbe$Box"
    here, there = fields(a.ask("show")), fields(b.ask("show"))
    assert there == here
    assert there["text"] == "héllo_wörld_☃"
    assert there["ints"] == "[1,2,3]" and there["longs"] == f"[{2**63 - 1},-1]"
    assert there["doubles"] == "[NaN,-0.0,1.0E300]" and there["chars"] == "chars"
    assert there["z"] == "true" and there["b"] == "-7" and there["c"] == "q" and there["s"] == "-300"
    assert there["f"] == "1.5" and there["d"] == "3.141592653589793"
    assert there["objs0"] == "s" and there["objs2"] == "null" and there["objs3"] == "9"
    assert there["type"] == "HeapProbe$Box" and there["other.i"] == "42"
    assert there["interned"] == "true", "an interned string must arrive interned"
    assert there["cycle"] == "true" and there["objs1"] == "true", "identity lost on the way"
    assert there["j"] == str(-2**63 + 3)
    a.close()
    b.close()


def test_writes_on_one_node_are_seen_by_the_other_and_back(nodes):
    a, b = nodes(), nodes()
    root = publish(a)
    b.ask(f"attach {root}")
    for k, writer, reader in [(5, b, a), (6, a, b), (7, b, a)]:
        assert writer.ask(f"write {k}") == f"wrote {k}"
        seen = fields(reader.ask("show"))
        assert seen["i"] == str(k) and seen["j"] == str(k << 33) and seen["text"] == f"t{k}"
        assert seen["ints"] == f"[1,{k},3]" and seen["longs"] == f"[{-k},-1]"
        assert seen["objs0"] == f"o{k}" and seen["other.i"] == str(k + 1)
        assert seen["type"] == ("java.lang.String" if k % 2 else "int")
        assert seen["cycle"] == "true"
        # An object that was local to the writer travelled with the reference.
        assert reader.ask("extra") == f"extra {k * 10} true"
    assert fields(a.ask("show")) == fields(b.ask("show"))
    a.close()
    b.close()


def test_alternating_increments_lose_nothing(nodes):
    a, b = nodes(), nodes()
    root = publish(a)
    b.ask(f"attach {root}")
    start = int(fields(a.ask("show"))["i"])
    for round_ in range(10):
        a.ask("incr 500")
        b.ask("incr 500")
    assert a.ask("incr 0") == f"i {start + 10_000}"
    a.close()
    b.close()


def test_identity_hash_is_the_same_on_every_node(nodes):
    a, b = nodes(), nodes()
    root = publish(a)
    b.ask(f"attach {root}")
    assert fields(a.ask("show"))["hash"] == fields(b.ask("show"))["hash"]
    a.close()
    b.close()


def test_replicas_survive_gc_on_both_nodes(nodes):
    a, b = nodes("-Xmn2m"), nodes("-Xmn2m")
    root = publish(a)
    b.ask(f"attach {root}")
    b.ask("write 11")
    assert a.ask("gc") == "gc" and b.ask("gc") == "gc"
    seen_a, seen_b = fields(a.ask("show")), fields(b.ask("show"))
    assert seen_a == seen_b and seen_a["i"] == "11" and seen_a["cycle"] == "true"
    b.ask("write 12")
    assert a.ask("gc") == "gc"
    assert fields(a.ask("show"))["i"] == "12"
    a.close()
    b.close()


def test_the_only_copy_dying_with_its_node_is_an_error_never_stale_data(nodes, procs):
    a, b = nodes(), nodes()
    root = publish(a)
    b.ask(f"attach {root}")
    b.ask("write 21")  # b now holds the only current copy
    b.p.send_signal(signal.SIGKILL)
    b.p.wait(timeout=10)
    answer = a.ask("show")
    assert answer.startswith("error java.lang.InternalError: djava: cannot read"), answer
    assert "LOST" in answer, answer
    assert "i=41" not in answer
    a.close()


def test_a_thread_of_the_jdk_cannot_be_shared(nodes):
    a = nodes()
    answer = a.ask("share-thread")
    assert answer.startswith("refused djava: a java.lang.Thread cannot be shared: the JDK started "
                             "this thread for this node's own work"), answer
    a.close()


def test_attaching_an_unknown_id_is_a_clear_error(nodes):
    a = nodes()
    answer = a.ask(f"attach {(77 << 40) + 5}")
    assert answer.startswith("error java.lang.IllegalArgumentException: djava: no shared object"), answer
    a.close()


def test_synchronized_counter_from_threads_of_two_nodes_is_exact(nodes):
    a, b = nodes(), nodes()
    root = publish(a)
    b.ask(f"attach {root}")
    start = int(fields(a.ask("show"))["i"])
    a.send("locked-incr 3 400")
    b.send("locked-incr 3 400")
    a.answer(timeout=240)
    b.answer(timeout=240)
    assert a.ask("incr 0") == f"i {start + 2 * 3 * 400}"
    assert b.ask("incr 0") == f"i {start + 2 * 3 * 400}"
    a.close()
    b.close()


def test_wait_and_notify_across_nodes(nodes):
    a, b = nodes(), nodes()
    root = publish(a)
    b.ask(f"attach {root}")
    start = int(fields(a.ask("show"))["i"])
    a.send(f"await {start + 3}")  # a waits on the shared monitor
    for k in range(1, 4):
        assert b.ask("bump") == f"i {start + k}"
    assert a.answer(timeout=30) == f"i {start + 3}"
    a.close()
    b.close()


def test_timed_wait_on_a_shared_monitor_returns_on_time(nodes):
    a = nodes()
    publish(a)
    answer = a.ask("timed-wait 300")
    waited = int(answer.split()[1])
    assert 290 <= waited <= 5000, answer


def test_interrupting_a_thread_waiting_on_a_shared_monitor(nodes):
    a = nodes()
    publish(a)
    assert a.ask("interrupt-wait") == "waiter interrupted holds=true flag=false"
    a.close()


def test_holds_lock_and_unowned_wait_on_a_shared_object(nodes):
    a = nodes()
    publish(a)
    assert a.ask("holds") == "holds false true"
    assert a.ask("unowned-wait") == "refused current thread is not owner"
    a.close()


def test_an_object_that_cannot_be_shared_is_refused_where_it_does_not_live(nodes):
    a, b = nodes(), nodes()
    root = publish(a)
    b.ask(f"attach {root}")
    assert a.ask("foreign-set") == "set"
    answer = b.ask("foreign-use")
    assert answer.startswith("refused djava: cannot read a java.io.FileDescriptor of node "), answer
    assert "it holds a file descriptor of this node" in answer
    b.ask("write 31")  # a's copy is invalidated: it reads the reference back
    assert fields(a.ask("show"))["i"] == "31"
    assert a.ask("foreign-use") == "valid true same true", "the owner must get its own object back"
    a.close()
    b.close()
