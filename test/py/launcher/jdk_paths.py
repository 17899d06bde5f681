"""Paths of the built JDK images and launcher, for the launcher and image tests."""

import os

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BUILD = os.path.join(TOP, "build")
DJAVA = os.path.join(BUILD, "bin", "djava")
JDK = os.path.join(BUILD, "jdk")
JDK_REF = os.path.join(BUILD, "jdk-ref")
# The pinned Debian JDK exactly as packaged (HotSpot server VM, same class
# library): "stock java" of the very version djava is built from.
STOCK_JAVA = os.path.join(BUILD, "jvm", "base-image", "bin", "java")
PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")
