"""The VM's paths other than the bytecode interpreter, on shared objects: two
build/jdk nodes of one real cluster (thread-manager and sos-server on
loopback) share a Root graph through djava.runtime.Node's publish/attach and
use it through java.util.concurrent atomics, a field updater and VarHandles
(all Unsafe underneath on Zero), System.arraycopy, Object.clone, reflection,
sun.misc.Unsafe itself and JNI. Every read must see the other node's last
write and every read-modify-write must be atomic across nodes
(jvm/hotspot/share/dso/dsoAccess.hpp, patches/0010). Each node is
test/py/jvm/programs/PathsProbe.java, driven one command a line; the JNI
commands use a small library built here with gcc against build/jdk's jni.h.
A replica without a cache (a VM that is not a cluster node) must be refused on
these paths: the self-test drives them (-XX:+DjavaSelfTest)."""

import os
import re
import shutil
import signal
import subprocess

import pytest

from localprocs import JAVA, JAVAC, JDK, ROOT, read_line

PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")

JNI_SOURCE = r"""
#include <jni.h>

static jfieldID plain(JNIEnv* env, jobject o) {
  return (*env)->GetFieldID(env, (*env)->GetObjectClass(env, o), "plain", "I");
}

JNIEXPORT jint JNICALL Java_PathsProbe_jniGetInt(JNIEnv* env, jclass c, jobject o) {
  jfieldID f = plain(env, o);
  return f == NULL ? -1 : (*env)->GetIntField(env, o, f);
}

JNIEXPORT void JNICALL Java_PathsProbe_jniSetInt(JNIEnv* env, jclass c, jobject o, jint v) {
  jfieldID f = plain(env, o);
  if (f != NULL) (*env)->SetIntField(env, o, f, v);
}

JNIEXPORT jintArray JNICALL Java_PathsProbe_jniGetRegion(JNIEnv* env, jclass c, jintArray a,
                                                         jint start, jint n) {
  jint buf[64];
  jintArray r;
  if (n > 64) return NULL;
  (*env)->GetIntArrayRegion(env, a, start, n, buf);
  if ((*env)->ExceptionCheck(env)) return NULL;
  r = (*env)->NewIntArray(env, n);
  if (r != NULL) (*env)->SetIntArrayRegion(env, r, 0, n, buf);
  return r;
}

JNIEXPORT void JNICALL Java_PathsProbe_jniSetRegion(JNIEnv* env, jclass c, jintArray a, jint start,
                                                    jintArray values) {
  jint buf[64];
  jint n = (*env)->GetArrayLength(env, values);
  if (n > 64) return;
  (*env)->GetIntArrayRegion(env, values, 0, n, buf);
  if ((*env)->ExceptionCheck(env)) return;
  (*env)->SetIntArrayRegion(env, a, start, n, buf);
}

JNIEXPORT jobject JNICALL Java_PathsProbe_jniGetElement(JNIEnv* env, jclass c, jobjectArray a,
                                                        jint i) {
  return (*env)->GetObjectArrayElement(env, a, i);
}

JNIEXPORT void JNICALL Java_PathsProbe_jniSetElement(JNIEnv* env, jclass c, jobjectArray a, jint i,
                                                     jobject v) {
  (*env)->SetObjectArrayElement(env, a, i, v);
}

JNIEXPORT void JNICALL Java_PathsProbe_jniAddElements(JNIEnv* env, jclass c, jintArray a, jint d) {
  jint n = (*env)->GetArrayLength(env, a);
  jint* p = (*env)->GetIntArrayElements(env, a, NULL);
  jint i;
  if (p == NULL) return;
  for (i = 0; i < n; i++) p[i] += d;
  (*env)->ReleaseIntArrayElements(env, a, p, 0);
}

JNIEXPORT void JNICALL Java_PathsProbe_jniAddCritical(JNIEnv* env, jclass c, jintArray a, jint d) {
  jint n = (*env)->GetArrayLength(env, a);
  jint* p = (*env)->GetPrimitiveArrayCritical(env, a, NULL);
  jint i;
  if (p == NULL) return;
  for (i = 0; i < n; i++) p[i] += d;
  (*env)->ReleasePrimitiveArrayCritical(env, a, p, 0);
}
"""


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    out = tmp_path_factory.mktemp("paths-classes")
    subprocess.run([JAVAC, "-cp", os.path.join(JDK, "lib", "djava-runtime.jar"), "-d", str(out),
                    os.path.join(PROGRAMS, "PathsProbe.java")], check=True, timeout=300)
    return str(out)


@pytest.fixture(scope="module")
def jni_library(tmp_path_factory):
    """The probe's natives, or None when this machine cannot build them."""
    include = os.path.join(JDK, "include")
    gcc = shutil.which("gcc")
    if gcc is None or not os.path.exists(os.path.join(include, "jni.h")):
        return None
    out = tmp_path_factory.mktemp("paths-jni")
    (out / "paths.c").write_text(JNI_SOURCE)
    library = out / "libpathsprobe.so"
    subprocess.run([gcc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-I", include,
                    "-I", os.path.join(include, "linux"), "-o", str(library), str(out / "paths.c")],
                   check=True, timeout=120)
    return str(library)


class PathsNode:
    def __init__(self, procs, cluster, secret, classes, jni, *options):
        self.procs = procs
        jni_option = [f"-Dpaths.jni={jni}"] if jni else []
        # Threads stay on their node: these tests are about the heap alone.
        self.p = procs.start([JAVA, "-XX:+DistributedJava", f"-XX:DjavaCluster={cluster}",
                              f"-XX:DjavaSecretFile={secret}", "-XX:+UnlockDiagnosticVMOptions",
                              "-XX:-DjavaShipThreads", *jni_option, *options,
                              "-cp", classes, "PathsProbe"], stdin=subprocess.PIPE)

    def send(self, command):
        self.p.stdin.write(command + "\n")
        self.p.stdin.flush()

    def answer(self, command, timeout=120):
        line = read_line(self.p, timeout)
        assert line, f"the node died on {command!r}: {self.procs.stderr_of(self.p)}"
        return line

    def ask(self, command, timeout=120):
        self.send(command)
        return self.answer(command, timeout)

    def close(self):
        self.p.stdin.close()
        assert self.p.wait(timeout=60) == 0, self.procs.stderr_of(self.p)


@pytest.fixture
def pair(procs, thread_manager, secret_file, classes, jni_library):
    """Two nodes sharing one Root: a published it, b attached it."""
    def make(*options):
        a = PathsNode(procs, thread_manager, secret_file, classes, jni_library, *options)
        b = PathsNode(procs, thread_manager, secret_file, classes, jni_library, *options)
        answer = a.ask("publish")
        assert answer.startswith("id "), answer
        assert b.ask(f"attach {int(answer.split()[1])}") == "attached PathsProbe$Root"
        return a, b
    return make


def fields(line):
    return dict(item.split("=", 1) for item in re.findall(r"[\w-]+=\S+", line))


def ints(text):
    return [int(x) for x in text.strip("[]").split(",")]


def test_atomics_incremented_alternately_from_two_nodes_give_exact_totals(pair):
    a, b = pair()
    for _ in range(5):
        assert a.ask("atomics 100").startswith("atomics ")
        assert b.ask("atomics 100").startswith("atomics ")
    assert a.ask("atomics 0") == "atomics 1000 1000 1000"
    assert b.ask("atomics 0") == "atomics 1000 1000 1000"
    a.close()
    b.close()


def test_atomics_incremented_at_once_from_two_nodes_lose_nothing(pair):
    a, b = pair()
    # Both nodes run their compare-and-set loops at the same time.
    a.send("atomics 300")
    b.send("atomics 300")
    assert a.answer("atomics 300").startswith("atomics ")
    assert b.answer("atomics 300").startswith("atomics ")
    assert a.ask("atomics 0") == "atomics 600 600 600"
    assert b.ask("atomics 0") == "atomics 600 600 600"
    a.close()
    b.close()


def test_atomics_from_several_threads_on_each_node_lose_nothing(pair):
    a, b = pair()
    a.send("atomics-threads 3 100")
    b.send("atomics-threads 3 100")
    assert a.answer("atomics-threads").startswith("atomics ")
    assert b.answer("atomics-threads").startswith("atomics ")
    assert a.ask("atomics 0") == "atomics 600 600 600"
    assert b.ask("atomics 0") == "atomics 600 600 600"
    a.close()
    b.close()


def test_field_updater_and_varhandles_work_across_nodes(pair):
    a, b = pair()
    for _ in range(3):
        a.ask("updaters 40")
        b.ask("updaters 40")
    assert b.ask("updaters 0") == "updaters 240 240 240"
    a.send("updaters 100")  # and at once
    b.send("updaters 100")
    a.answer("updaters 100")
    b.answer("updaters 100")
    assert a.ask("updaters 0") == "updaters 440 440 440"
    a.close()
    b.close()


def test_arraycopy_shared_to_local_local_to_shared_and_shared_to_shared(pair):
    a, b = pair()
    # shared -> local sees the other node's writes
    assert b.ask("set-ints 3") == "set 3"
    out = fields(a.ask("copy-out"))
    assert ints(out["ints"]) == [30 + x for x in range(8)]
    assert out["tail"] == "[36,37]" and out["local"] == "true"
    # local -> shared is seen by the other node, references included
    assert a.ask("copy-in 4") == "copied-in 4"
    seen = fields(b.ask("show-arrays"))
    assert ints(seen["ints"]) == [400 + x for x in range(8)]
    assert seen["objs"] == "[s4,cell:4,null,int:5004]"
    out = fields(b.ask("copy-out"))
    assert ints(out["ints"]) == [400 + x for x in range(8)] and out["objs"] == seen["objs"]
    # shared -> shared (two arrays, then one overlapping itself), seen by the other node
    assert b.ask("copy-in 5") == "copied-in 5"
    assert a.ask("copy-shared") == "copied-shared"
    seen = fields(b.ask("show-arrays"))
    assert ints(seen["ints2"]) == [500, 500, 501, 502, 503, 504, 505, 506]
    assert seen["objs2"] == "[cell:5,null,int:5005,int:5005]"
    assert fields(a.ask("show-arrays")) == seen
    # and back the other way
    assert a.ask("set-ints 6") == "set 6"
    assert b.ask("copy-shared") == "copied-shared"
    assert ints(fields(a.ask("show-arrays"))["ints2"]) == [60, 60, 61, 62, 63, 64, 65, 66]
    a.close()
    b.close()


def test_clone_of_a_shared_object_returns_current_values(pair):
    a, b = pair()
    assert b.ask("set-ints 7") == "set 7" and b.ask("set-box 7") == "set 7"
    assert b.ask("copy-in 7") == "copied-in 7"
    c = fields(a.ask("clone"))
    assert c["i"] == "7" and c["j"] == str(7 << 33) and c["text"] == "b7"
    assert c["same-ints"] == "true" and c["same-other"] == "true", "a clone is shallow"
    assert ints(c["ints"]) == [700 + x for x in range(8)]
    assert c["objs"] == "[s7,cell:7,null,int:5007]"
    assert c["local"] == "true" and c["shared"] == "true", "the clone is a new local object"
    assert a.ask("set-box 8") == "set 8"
    c = fields(b.ask("clone"))
    assert c["i"] == "8" and c["j"] == str(8 << 33) and c["text"] == "b8"
    a.close()
    b.close()


def test_reflection_on_shared_objects_is_coherent_across_nodes(pair):
    a, b = pair()
    for k, writer, reader in [(11, a, b), (12, b, a), (13, a, b)]:
        assert writer.ask(f"reflect-set {k}") == f"reflected {k}"
        r = fields(reader.ask("reflect-get"))
        assert r["plain"] == str(k) and r["name"] == f"n{k}" and r["ref"] == f"cell:{k}"
        assert r["boxed"] == str(1000 + k) and r["ints2"] == str(k) and r["ints3"] == str(k + 1)
        assert r["objs1"] == f"a{k}"
        assert r["invoke"] == str(2 * (1000 + k)) and r["boxed-shared"] == "true"
        assert r["local-set"] == str(1000 + k)
    # the volatile field was read-modified-written by each node in turn
    assert fields(b.ask("reflect-get"))["updated"] == str(11 + 12 + 13)
    a.close()
    b.close()


def test_unsafe_on_shared_objects_is_coherent_across_nodes(pair):
    a, b = pair()
    for k, writer, reader in [(21, a, b), (22, b, a)]:
        assert writer.ask(f"unsafe-set {k}") == f"unsafe-set {k}"
        u = fields(reader.ask("unsafe-get"))
        assert u["plain"] == str(k) and u["ints5"] == str(k + 5) and u["ints6"] == str(k + 6)
        assert ints(u["bytes"]) == [k] * 8 + [k + x for x in range(8)]
        assert u["cas"] == "true" and u["after"] == str(k + 1)
        assert ints(u["ints2"])[5:7] == [k + 5, k + 6]
        assert ints(u["ints2"])[0:2] == [k + 7, k + 8] and u["swapped"] == f"[{k + 7},{k + 8}]"
        # the compare-and-set and the shared-to-shared copy are seen back
        back = fields(writer.ask("reflect-get"))
        assert back["plain"] == str(k + 1)
        assert ints(fields(writer.ask("show-arrays"))["ints2"])[5:7] == [k + 5, k + 6]
    a.close()
    b.close()


def test_jni_field_and_array_functions_are_coherent_across_nodes(pair, jni_library):
    if jni_library is None:
        pytest.skip("no gcc or no include/jni.h in build/jdk: the JNI library cannot be built")
    a, b = pair()
    assert a.ask("set-ints 1") == "set 1"
    for k, writer, reader in [(31, b, a), (32, a, b), (33, b, a)]:
        assert writer.ask(f"jni-set {k}") == f"jni-set {k}"
        j = fields(reader.ask("jni-get"))
        assert j["plain"] == str(k) and j["objs2"] == f"cell:{k}"
        assert ints(j["region"])[1:4] == [k, k + 1, k + 2]
        r = fields(reader.ask("reflect-get"))  # and the interpreter's view agrees
        assert r["plain"] == str(k)
    before = ints(fields(a.ask("show-arrays"))["ints"])
    assert b.ask("jni-add 1000") == "jni-added 1000"  # elements, then critical
    assert a.ask("jni-add 10") == "jni-added 10"
    after = ints(fields(b.ask("show-arrays"))["ints"])
    assert after == [x + 2020 for x in before]
    j = fields(a.ask("jni-get"))
    assert ints(j["region"]) == after[3:8]
    a.close()
    b.close()


def test_replicas_survive_gc_on_these_paths(pair):
    a, b = pair("-Xmn2m")
    b.ask("copy-in 41")
    assert a.ask("gc") == "gc" and b.ask("gc") == "gc"
    assert fields(a.ask("copy-out"))["objs"] == "[s41,cell:41,null,int:5041]"
    a.ask("atomics 50")
    assert b.ask("gc") == "gc"
    assert b.ask("atomics 50") == "atomics 100 100 100"
    a.close()
    b.close()


def test_the_only_copy_dying_is_an_error_on_these_paths_never_stale_data(pair):
    a, b = pair()
    assert b.ask("copy-in 51") == "copied-in 51"
    assert b.ask("atomics 5") == "atomics 5 5 5"
    assert b.ask("set-box 51") == "set 51"
    b.p.send_signal(signal.SIGKILL)  # b held the only current copies
    b.p.wait(timeout=10)
    for command in ["copy-out", "atomics 1", "clone"]:
        answer = a.ask(command)
        assert answer.startswith("error java.lang.InternalError: djava: cannot"), (command, answer)
        assert "LOST" in answer and "chunk 0x" in answer, (command, answer)
    a.close()


def test_without_a_cache_these_paths_refuse_replicas():
    # The self-test drives Unsafe, System.arraycopy, Object.clone and
    # reflection into replicas that have no chunk: each must throw.
    p = subprocess.run([JAVA, "-XX:+UnlockDiagnosticVMOptions", "-XX:+DjavaSelfTest", "-version"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "the runtime paths refuse replicas without a cache" in p.stdout, p.stdout
