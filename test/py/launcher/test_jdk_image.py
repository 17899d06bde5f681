"""build/jdk is a self-contained JDK whose default VM is djava's Zero VM."""

import os
import re
import shutil
import subprocess

import pytest

from jdk_paths import JDK, JDK_REF, TOP


def version(java, *opts):
    p = subprocess.run([java, *opts, "-version"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stderr


def git_commit():
    return subprocess.run(["git", "-C", TOP, "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True).stdout.strip()


def test_vm_line_identifies_djava():
    """The default VM is djava's server VM (its template interpreter, C1 and
    C2, with the barrier set's checks)."""
    vm_line = version(os.path.join(JDK, "bin", "java")).splitlines()[2]
    m = re.fullmatch(r"djava 64-Bit Server VM \(build 17\.0\.19\+10-djava-(\d+\.\d+\.\d+)-"
                     r"([0-9a-f]{12}|unknown)(-dirty)?, mixed mode\)", vm_line)
    assert m, vm_line
    commit = git_commit()
    if commit:
        assert m.group(2) == commit


def test_class_library_is_the_pinned_one():
    runtime_line = version(os.path.join(JDK, "bin", "java")).splitlines()[1]
    assert runtime_line == "OpenJDK Runtime Environment (build 17.0.19+10-1-deb12u2-Debian)"


def test_reference_vm_is_unpatched_zero():
    vm_line = version(os.path.join(JDK_REF, "bin", "java")).splitlines()[2]
    assert vm_line == "OpenJDK 64-Bit Zero VM (build 17.0.19+10, interpreted mode)"


def test_zero_vm_is_djavas():
    """-zero selects djava's Zero VM (the reference engine, with its hooks)."""
    vm_line = version(os.path.join(JDK, "bin", "java"), "-zero").splitlines()[2]
    assert re.fullmatch(r"djava 64-Bit Zero VM \(build 17\.0\.19\+10-djava-\d+\.\d+\.\d+-"
                        r"([0-9a-f]{12}|unknown)(-dirty)?, interpreted mode\)", vm_line), vm_line


def final_flags(*opts):
    """The flags as the VM settled them (printed before a node joins its
    cluster: without one, the VM then stops)."""
    p = subprocess.run([os.path.join(JDK, "bin", "java"), *opts, "-XX:+UnlockDiagnosticVMOptions",
                        "-XX:+PrintFlagsFinal", "-version"],
                       capture_output=True, text=True, timeout=120)
    return {m.group(1): m.group(2) for m in
            re.finditer(r"^\s*\S+\s+(\w+)\s+= (\S+)", p.stdout, re.M)}


def test_server_vm_node_compiles_with_c1_only():
    """A cluster node on the server VM compiles with C1 alone (its code
    carries the shared-object checks; C2's does not yet), and code that
    reads Java arrays and objects behind the barrier set is off; the same VM
    without -XX:+DistributedJava is stock HotSpot's."""
    node = final_flags("-server", "-XX:+DistributedJava")
    plain = final_flags("-server")
    assert node["UseCompiler"] == "true"
    assert node["TieredStopAtLevel"] == "1"
    assert plain["TieredStopAtLevel"] == "4"
    for flag in ("UseCRC32Intrinsics", "UseAdler32Intrinsics", "UseFastJNIAccessors",
                 "UseVectorizedMismatchIntrinsic", "InlineNIOCheckIndex"):
        assert node[flag] == "false", flag
        assert plain[flag] == "true", flag
    # C1's loop-invariant code motion stays on: on a node it leaves field and
    # element loads, whose checks re-execute their own bytecode, in their
    # loops (patches/0038).
    assert node["UseLoopInvariantCodeMotion"] == "true"
    # System.arraycopy's intrinsic stays on for C2, which copies only arrays
    # it tested local; C1 refuses it on a node (patches/0033; the distributed
    # CompiledArrayCopiesOnSharedArrays fails if C1 copies a replica).
    assert node["InlineArrayCopy"] == "true"
    # Unsafe's accesses and atomics are C1 accesses, checked like the others.
    assert node["InlineUnsafeOps"] == "true"
    # A user's -Xint and a higher level are the user's, and C1's is the limit.
    assert final_flags("-server", "-XX:+DistributedJava", "-Xint")["UseCompiler"] == "false"
    assert final_flags("-server", "-XX:+DistributedJava",
                       "-XX:TieredStopAtLevel=4")["TieredStopAtLevel"] == "1"


def test_stock_server_vm_is_the_base_images():
    vm_line = version(os.path.join(TOP, "build", "jvm", "base-image", "bin", "java")).splitlines()[2]
    assert vm_line.startswith("OpenJDK 64-Bit Server VM (build 17.0.19+10-1-deb12u2-Debian")


def test_no_link_leaves_the_image():
    for image in (JDK, JDK_REF):
        for dirpath, dirnames, filenames in os.walk(image):
            for n in dirnames + filenames:
                path = os.path.join(dirpath, n)
                if os.path.islink(path):
                    target = os.path.realpath(path)
                    assert target.startswith(image + os.sep), f"{path} -> {target}"
                    assert os.path.exists(target), f"{path} is dangling"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="hiding the host JDK needs root and unshare")
def test_runs_with_host_jdk_hidden(tmp_path):
    """With every host JDK path covered by an empty directory, the image still
    runs a program that uses TLS trust anchors, security config and javac."""
    program = tmp_path / "UsesConfig.java"
    program.write_text(
        "import javax.net.ssl.TrustManagerFactory;\n"
        "public class UsesConfig { public static void main(String[] a) throws Exception {\n"
        "  TrustManagerFactory f = TrustManagerFactory.getInstance(\"PKIX\");\n"
        "  f.init((java.security.KeyStore) null);\n"
        "  var tm = (javax.net.ssl.X509TrustManager) f.getTrustManagers()[0];\n"
        "  System.out.println(\"anchors \" + (tm.getAcceptedIssuers().length > 50));\n"
        "  System.out.println(java.security.Security.getProperty(\"securerandom.source\"));\n"
        "}}\n")
    hidden = [p for p in ("/usr/lib/jvm", "/etc/java-17-openjdk", "/etc/ssl/certs/java")
              if os.path.isdir(p)]
    mounts = " && ".join(f"mount -t tmpfs none {p}" for p in hidden) or "true"
    java = os.path.join(JDK, "bin", "java")
    script = f"{mounts} && ls /usr/lib/jvm | wc -l && {java} {program}"
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["0", "anchors", "true", "file:/dev/random"]
