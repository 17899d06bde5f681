"""Fixtures for the launcher and JDK-image tests: compiled test programs."""

import os
import subprocess
import zipfile

import pytest

from jdk_paths import PROGRAMS, STOCK_JAVA


@pytest.fixture(scope="session")
def classes(tmp_path_factory):
    """Compiles the test programs once; returns the class directory."""
    out = tmp_path_factory.mktemp("classes")
    sources = sorted(os.path.join(PROGRAMS, f) for f in os.listdir(PROGRAMS) if f.endswith(".java"))
    javac = os.path.join(os.path.dirname(STOCK_JAVA), "javac")
    subprocess.run([javac, "-d", str(out), *sources], check=True)
    return str(out)


@pytest.fixture(scope="session")
def app_jar(classes, tmp_path_factory):
    """A jar whose manifest names JarMain as its Main-Class."""
    jar = tmp_path_factory.mktemp("jar") / "app.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nMain-Class: JarMain\n\n")
        z.write(os.path.join(classes, "JarMain.class"), "JarMain.class")
    return str(jar)
