"""The distributed heap's in-VM self-test (-XX:+DjavaSelfTest) on build/jdk.

It proves on the running VM that a shared object's tag (mark-word high bits)
and its replica-table entry survive young GCs, full GCs, identity hashing and
monitor inflation/deflation, that local objects never look shared, and that
unreferenced replicas are collected and their entries reused. Run under heap
shapes that make GC move and promote objects differently.
"""

import os
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
JAVA = os.path.join(TOP, "build", "jdk", "bin", "java")
SELF_TEST = ["-XX:+UnlockDiagnosticVMOptions", "-XX:+DjavaSelfTest"]


@pytest.mark.parametrize("heap", [
    [],
    ["-Xmn1m", "-Xmx32m"],
    ["-Xmx16m", "-XX:DjavaSelfTestObjects=20000"],
    ["-Xmn512k", "-XX:MaxTenuringThreshold=0"],
    ["-zero"],
    ["-zero", "-Xmn512k", "-XX:MaxTenuringThreshold=0"],
], ids=["default", "tiny-young", "many-objects", "promote-at-once", "zero",
        "zero-promote-at-once"])
def test_self_test_passes(heap):
    vm = [o for o in heap if o == "-zero"]  # the launcher's option comes first
    heap = [o for o in heap if o != "-zero"]
    p = subprocess.run([JAVA, *vm, *SELF_TEST, *heap, "-version"], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "djava self-test passed:" in p.stdout
    # The VM went on to run normally.
    assert f"djava 64-Bit {'Zero' if vm else 'Server'} VM" in p.stderr


def test_self_test_is_off_by_default():
    p = subprocess.run([JAVA, "-version"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "self-test" not in p.stdout + p.stderr


def test_self_test_flag_is_diagnostic():
    p = subprocess.run([JAVA, "-XX:+DjavaSelfTest", "-version"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 1
    assert "must be enabled via -XX:+UnlockDiagnosticVMOptions" in p.stderr
