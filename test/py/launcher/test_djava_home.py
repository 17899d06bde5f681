"""build/djava-home: a JDK home whose bin/java is djava, for the tools that
fork a JVM by a path ending in bin/java (issue 25, item 10)."""

import os
import subprocess

from jdk_paths import BUILD, DJAVA, JDK

HOME = os.path.join(BUILD, "djava-home")


def test_home_is_a_jdk_whose_java_is_djava():
    java = os.path.join(HOME, "bin", "java")
    assert os.path.realpath(java) == os.path.realpath(DJAVA)
    for entry in ("bin/javac", "bin/jar", "lib/modules", "release", "conf"):
        assert os.path.exists(os.path.join(HOME, entry)), entry
    assert os.path.realpath(os.path.join(HOME, "lib")) == os.path.realpath(os.path.join(JDK, "lib"))
    p = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "djava 64-Bit Server VM" in p.stderr, p.stderr
