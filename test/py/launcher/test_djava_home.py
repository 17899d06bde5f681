"""build/djava-home: a JDK home whose bin/java is djava, for the tools that
fork a JVM by a path ending in bin/java (issue 25, item 10). Maven Surefire
runs a project's JUnit 5 tests in a djava fork, whose threads then run on
thread servers, and reports them as it does on java."""

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

from jdk_paths import BUILD, DJAVA, JDK, STOCK_JAVA, TOP

HOME = os.path.join(BUILD, "djava-home")
MAVEN_PROJECT = os.path.join(TOP, "test", "maven", "threads")
# Maven's own downloads (plugins, JUnit), kept between runs like the build's.
MAVEN_REPO = os.path.join(os.environ.get("DJAVA_CACHE", os.path.expanduser("~/.cache/djava")), "m2")


def test_home_is_a_jdk_whose_java_is_djava():
    java = os.path.join(HOME, "bin", "java")
    assert os.path.realpath(java) == os.path.realpath(DJAVA)
    for entry in ("bin/javac", "bin/jar", "lib/modules", "release", "conf"):
        assert os.path.exists(os.path.join(HOME, entry)), entry
    assert os.path.realpath(os.path.join(HOME, "lib")) == os.path.realpath(os.path.join(JDK, "lib"))
    p = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "djava 64-Bit Server VM" in p.stderr, p.stderr


def test_maven_surefire_runs_junit_tests_on_djava(tmp_path):
    project = tmp_path / "threads"
    shutil.copytree(MAVEN_PROJECT, project)
    # Maven itself runs on the pinned stock JDK (its compiler plugin needs javac).
    env = {**os.environ, "JAVA_HOME": os.path.dirname(os.path.dirname(STOCK_JAVA))}
    env.pop("DJAVA_CLUSTER", None)  # the fork starts a private cluster of its own
    p = subprocess.run(["mvn", "-B", "-ntp", f"-Dmaven.repo.local={MAVEN_REPO}",
                        f"-Djvm={os.path.join(HOME, 'bin', 'java')}", "test"],
                       cwd=project, env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-2000:]
    report = ET.parse(project / "target" / "surefire-reports" / "TEST-example.ThreadsTest.xml").getroot()
    counts = {k: int(report.get(k)) for k in ("tests", "failures", "errors", "skipped")}
    assert counts == {"tests": 2, "failures": 0, "errors": 0, "skipped": 0}, counts
    assert "Tests run: 2, Failures: 0, Errors: 0, Skipped: 0" in p.stdout
    # The fork's JVM is djava's, and the tests' threads ran in other processes.
    fork_pid, pids = (project / "target" / "thread-pids.txt").read_text().splitlines()
    assert set(pids.split()) - {fork_pid}, f"every thread ran in the fork ({fork_pid}): {pids}"
    vm_name = report.find("properties/property[@name='java.vm.name']")
    assert vm_name is not None and vm_name.get("value").startswith("djava"), ET.tostring(report)[:2000]
