"""Lambdas and method references travel between nodes: their classes are
hidden, so a lambda object is named on the wire by the call site that made
its class, and the receiving node links that call site again to get its own
class of the same shape (docs/HEAP.md, "Lambdas").

The heap tests: two build/jdk launcher nodes of one real cluster share a
graph of lambdas through djava.runtime.Node's publish/attach (threads stay
local, as in test_shared_heap.py); each node is programs/LambdaProbe.java,
driven one command a line. The thread test: a sos-server, a thread-manager,
two thread-server JVMs and a launcher running programs/LambdaThreads.java,
whose classes only the launcher has; `new Thread(() -> ...)` threads run on
the servers."""

import os
import re
import subprocess
import time

import pytest

from localprocs import JAVA, JAVAC, JDK, ROOT, node_options, read_line

PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")


def compile_program(out, name):
    subprocess.run([JAVAC, "-cp", os.path.join(JDK, "lib", "djava-runtime.jar"), "-d", str(out),
                    os.path.join(PROGRAMS, name)], check=True)
    return str(out)


@pytest.fixture(scope="module")
def probe_classes(tmp_path_factory):
    return compile_program(tmp_path_factory.mktemp("lambda-probe"), "LambdaProbe.java")


@pytest.fixture(scope="module")
def thread_classes(tmp_path_factory):
    return compile_program(tmp_path_factory.mktemp("lambda-threads"), "LambdaThreads.java")


class ProbeNode:
    def __init__(self, procs, cluster, secret, classes):
        self.procs = procs
        self.p = procs.start([JAVA, *node_options(cluster, secret), "-XX:+UnlockDiagnosticVMOptions",
                              "-XX:-DjavaShipThreads", "-cp", classes, "LambdaProbe"],
                             stdin=subprocess.PIPE)

    def ask(self, command, timeout=120):
        self.p.stdin.write(command + "\n")
        self.p.stdin.flush()
        line = read_line(self.p, timeout)
        assert line, f"the node died on {command!r}: {self.procs.stderr_of(self.p)}"
        return line

    def close(self):
        self.p.stdin.close()
        assert self.p.wait(timeout=60) == 0, self.procs.stderr_of(self.p)


@pytest.fixture
def nodes(procs, thread_manager, secret_file, probe_classes):
    def make():
        return ProbeNode(procs, thread_manager, secret_file, probe_classes)
    return make


def fields(line):
    return dict(item.split("=", 1) for item in line.split())


EXPECTED_CALL = {
    "greet": "hello_wörld_42_1099511627776_0.3333333333333333_q_true",
    "addK": "50", "constant": "constant", "length": "5", "prefixer": "pre-x", "maker": "-1",
    "max": "9", "serial": "yes", "viaSuper": "box", "viaString": "3", "viaObject": "5",
    "stringChecked": "true", "objectChecked": "false", "serializable": "false,true",
    "inherited": "hello",
}


def test_lambdas_and_method_references_called_on_another_node(nodes):
    a, b = nodes(), nodes()
    answer = a.ask("publish")
    assert answer.startswith("id "), answer
    assert b.ask("local").startswith("local ")  # b ran the call sites itself first
    assert b.ask(f"attach {answer.split()[1]}") == "attached LambdaProbe$Holder"
    there = fields(b.ask("call"))
    assert {k: there[k] for k in EXPECTED_CALL} == EXPECTED_CALL, there
    assert there["box"] == "100" and there["reader"] == "box100"
    # Node b has its own class for the call site, named as its JDK names it.
    assert re.fullmatch(r"class LambdaProbe\$\$Lambda\$\d+/0x[0-9a-f]+", b.ask("class"))
    # ... the one its own code got from the site, since that ran there first.
    assert b.ask("same-class") == "same-class true,true,true"
    # The lambda captured a shared object: its writes on b are seen on a.
    assert b.ask("bump 3") == "box 121"
    here = fields(a.ask("call"))
    assert here["box"] == "121" and here["reader"] == "box121"
    assert {k: here[k] for k in EXPECTED_CALL} == EXPECTED_CALL, here
    assert a.ask("bump 1") == "box 128"
    assert b.ask("bump 1") == "box 135"
    a.close()
    b.close()


def test_a_lambda_keeps_its_identity_across_nodes(nodes):
    a, b = nodes(), nodes()
    root = a.ask("publish").split()[1]
    b.ask(f"attach {root}")
    here, there = a.ask("identity"), b.ask("identity")
    assert there.startswith("same=true "), there
    assert there == here, "the identity hash of a lambda must be the same everywhere"
    # b stores the lambda it received, and one it made, into the shared root.
    assert b.ask("write-back") == "wrote"
    back = fields(a.ask("read-back"))
    assert back["back"] == "true", "a's own lambda came back as another object"
    assert back["fresh"] == f"made_on_{b.p.pid}"
    assert fields(b.ask("read-back"))["back"] == "true"
    a.close()
    b.close()


def test_a_lambda_as_the_root_of_a_publication(nodes):
    a, b = nodes(), nodes()
    answer = a.ask("publish-lambda 31")
    assert answer.startswith("id "), answer
    # The chunk's own class is the lambda's: named by its call site too.
    assert b.ask(f"attach-lambda {answer.split()[1]}") == "direct 31"
    a.close()
    b.close()


def test_a_hidden_class_that_is_not_a_lambda_is_refused_clearly(nodes):
    a = nodes()
    answer = a.ask("hidden")
    assert answer.startswith("refused djava: a LambdaProbe$Plain/0x"), answer
    assert "cannot be shared: its class is hidden and not a lambda's" in answer, answer
    a.close()


def test_a_proxy_whose_class_a_program_loader_defined_is_refused_clearly(nodes):
    # Proxies of the application, platform or boot loader travel (jtreg
    # distributed/ProxyObjects); another loader exists on its node only.
    a = nodes()
    answer = a.ask("own-loader-proxy")
    assert re.match(r"refused djava: a (jdk\.proxy\d+\.)?\$Proxy\d+ ", answer), answer
    assert "a class loader of the program defined" in answer, answer
    a.close()


# ---- threads of lambdas on thread servers ----------------------------------------------

def run_threads(cluster, secret_file, classes, scenario, timeout=240):
    address, _ = cluster
    return subprocess.run([JAVA, *node_options(address, secret_file), "-cp", classes,
                           "LambdaThreads", scenario], capture_output=True, text=True,
                          timeout=timeout)


def test_lambda_threads_run_on_thread_servers(cluster, secret_file, thread_classes):
    p = run_threads(cluster, secret_file, thread_classes, "lambdas")
    assert p.returncode == 0, p.stdout + p.stderr
    launcher = re.search(r"^launcher (\d+)$", p.stdout, re.M).group(1)
    ran = dict(re.findall(r"^worker (\d) on (\d+)$", p.stdout, re.M))
    assert sorted(ran) == ["0", "1", "2", "3"], p.stdout
    server_pids = {str(s.pid) for s in cluster[1]}
    assert set(ran.values()) <= server_pids and launcher not in ran.values(), (ran, server_pids)
    # Each thread wrote its slot of the shared array; read after join.
    assert "results [1000, 1001, 1004, 1009] sum 4014" in p.stdout, p.stdout


def test_a_thread_of_what_cannot_be_shared_runs_where_it_started(cluster, secret_file,
                                                                 thread_classes):
    # Its lambda captured a file descriptor the launcher opened: shipped, it
    # would fail on first use; it runs on the launcher instead, and says why
    # in -Xlog:dso.
    p = run_threads(cluster, secret_file, thread_classes, "unshareable", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "start refused" not in p.stdout, p.stdout
    ran = re.search(r"^valid true in (\d+)$", p.stdout, re.M)
    main = re.search(r"^main in (\d+) alive=false$", p.stdout, re.M)
    assert ran and main and ran.group(1) == main.group(1), p.stdout + p.stderr
    assert "started" in p.stdout
