"""djava takes java's command line and behaves as java does.

Each case runs the same command line under build/bin/djava and under the stock
java of the same version (the pinned Debian JDK with HotSpot's server VM) and
requires the same exit status, standard output and standard error.
"""

import os
import signal
import subprocess

import pytest

from jdk_paths import DJAVA, STOCK_JAVA

TIMEOUT = 120


def run(launcher, args, cwd, stdin=None):
    p = subprocess.run([launcher, *args], cwd=cwd, input=stdin, capture_output=True,
                       text=True, timeout=TIMEOUT)
    return p.returncode, p.stdout, p.stderr


# (id, argument list with {cp} and {jar} placeholders, stdin)
CASES = [
    ("class-not-found", ["-cp", "{cp}", "NoSuchClass"], None),
    ("bad-xx-option", ["-XX:+NoSuchDjavaOption", "-cp", "{cp}", "Args"], None),
    ("bad-launcher-option", ["--no-such-option", "-cp", "{cp}", "Args"], None),
    ("missing-cp-value", ["-cp"], None),
    ("args-with-spaces", ["-cp", "{cp}", "Args", "a b", "", "  c  ", "d\te", "ünï"], None),
    ("classpath-long-form", ["-classpath", "{cp}", "Args", "x"], None),
    ("class-path-gnu-form", ["--class-path", "{cp}", "Args", "y"], None),
    ("class-path-equals-form", ["--class-path={cp}", "Args", "z"], None),
    ("system-property", ["-Ddjava.test.prop=with space", "-cp", "{cp}", "Args"], None),
    ("x-options", ["-Xmx64m", "-Xss1m", "-cp", "{cp}", "MaxHeap"], None),
    ("double-dash-options", ["--add-opens=java.base/java.lang=ALL-UNNAMED", "-cp", "{cp}", "Args"], None),
    ("jar-with-manifest", ["-jar", "{jar}", "one", "two words"], None),
    ("jar-missing", ["-jar", "/nonexistent/app.jar"], None),
    ("exit-0", ["-cp", "{cp}", "Exit", "0"], None),
    ("exit-3", ["-cp", "{cp}", "Exit", "3"], None),
    ("exit-255", ["-cp", "{cp}", "Exit", "255"], None),
    ("uncaught-exception", ["-cp", "{cp}", "Boom", "x", "y"], None),
    ("stdin-echo", ["-cp", "{cp}", "Echo"], "hello\nworld with spaces\n\nlast"),
    ("source-file-mode", ["{src}/Args.java", "from source"], None),
    ("no-main-class", [], None),
]


@pytest.mark.parametrize("case_id,args,stdin", CASES, ids=[c[0] for c in CASES])
def test_same_as_java(case_id, args, stdin, classes, app_jar, tmp_path):
    src = os.path.join(os.path.dirname(__file__), "programs")
    args = [a.format(cp=classes, jar=app_jar, src=src) for a in args]
    expected = run(STOCK_JAVA, args, tmp_path, stdin)
    actual = run(DJAVA, args, tmp_path, stdin)
    if case_id == "no-main-class":
        # The usage text lists the image's VMs (-zero and -server for djava):
        # the status and the opening line must match.
        assert actual[0] == expected[0] == 1
        assert actual[2].splitlines()[0] == expected[2].splitlines()[0]
        return
    assert actual == expected


def test_exit_statuses_are_meaningful(classes, tmp_path):
    """Guards the table above against comparing two equally broken runs."""
    assert run(DJAVA, ["-cp", classes, "Exit", "3"], tmp_path)[0] == 3
    rc, out, err = run(DJAVA, ["-cp", classes, "Boom"], tmp_path)
    assert rc == 1 and "about to fail" in out
    assert 'Exception in thread "main" java.lang.IllegalStateException: boom' in err
    rc, _, err = run(DJAVA, ["-cp", classes, "NoSuchClass"], tmp_path)
    assert rc == 1 and "Could not find or load main class NoSuchClass" in err


@pytest.mark.parametrize("sig,status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_ends_vm_like_java(sig, status, classes, tmp_path):
    """A signal to djava reaches the VM: shutdown hooks run, status is java's."""
    results = []
    # A shell runs background commands with SIGINT ignored, and a JVM keeps an
    # ignored SIGINT ignored: give both launchers the default, whatever ran us.
    default_sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)  # noqa: E731
    for launcher in (STOCK_JAVA, DJAVA):
        p = subprocess.Popen([launcher, "-cp", classes, "Sleeper"], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=default_sigint)
        assert p.stdout.readline() == "ready\n"
        p.send_signal(sig)
        out, err = p.communicate(timeout=TIMEOUT)
        results.append((p.returncode, out, err))
    assert results[1] == results[0]
    assert results[1][0] == status and results[1][1] == "hook ran\n"


def test_stdout_kept_before_set_out_stays_stdout_in_order(classes, tmp_path):
    """A harness keeps stdout in a buffered stream, replaces System.out, and
    a thread of its own (on a thread server under djava) flushes the stream
    while main writes to it: stdout gets every record once, in order, as on
    java; a thread's System.out.println after setOut is captured. Maven
    Surefire's fork lost its goodbye this way (its event channel's flusher
    printed into the capture, and out of order with main)."""
    records = 2000
    expected = "".join(f"record {i}\n" for i in range(records))
    status, out, err = run(DJAVA, ["-cp", classes, "KeptStdout", str(records)], tmp_path)
    assert status == 0, err
    assert out == expected, (len(out), out[:200], err[-2000:])
    assert err.splitlines() == ["captured: a worker's line",
                                "flusher in another process: true"], err[-2000:]
    java = run(STOCK_JAVA, ["-cp", classes, "KeptStdout", str(records)], tmp_path)
    assert java == (0, expected, "captured: a worker's line\nflusher in another process: false\n")
