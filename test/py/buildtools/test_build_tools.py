"""The build's own tools: patch round trip, tree sync, pinned-source checks."""

import filecmp
import os
import shutil
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PATCH_TREE = os.path.join(TOP, "jvm", "tools", "patch_tree.py")
PREPARE_TREE = os.path.join(TOP, "jvm", "tools", "prepare_tree.py")
REF_SRC = os.path.join(TOP, "build", "jvm", "ref")
PYTHON = "/usr/bin/python3"


def run(*args, cwd=None):
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=300)


# ---- patch workflow against the real pinned source --------------------------

@pytest.fixture
def patch_tree(tmp_path):
    if not os.path.exists(os.path.join(REF_SRC, ".extracted")):
        pytest.fail("the pristine tree build/jvm/ref is missing: run make first")
    patches = tmp_path / "patches"
    shutil.copytree(os.path.join(TOP, "patches"), patches)
    tree = tmp_path / "tree"
    r = run(PYTHON, PATCH_TREE, "create", "--pristine", REF_SRC, "--tree", str(tree),
            "--patches", str(patches), "--overlay", os.path.join(TOP, "jvm", "hotspot") + ":src/hotspot")
    assert r.returncode == 0, r.stderr
    return tree, patches


def refresh(tree, patches):
    return run(PYTHON, PATCH_TREE, "refresh", "--tree", str(tree), "--patches", str(patches))


def test_round_trip_reproduces_patches_exactly(patch_tree):
    tree, patches = patch_tree
    r = refresh(tree, patches)
    assert r.returncode == 0, r.stderr
    cmp = filecmp.dircmp(os.path.join(TOP, "patches"), patches)
    assert not cmp.diff_files and not cmp.left_only and not cmp.right_only
    assert sorted(os.listdir(patches)) == sorted(os.listdir(os.path.join(TOP, "patches")))
    for name in os.listdir(patches):
        with open(os.path.join(TOP, "patches", name)) as a, open(patches / name) as b:
            assert a.read() == b.read(), name


def test_new_commit_becomes_a_dep3_patch(patch_tree):
    tree, patches = patch_tree
    target = tree / "src" / "hotspot" / "share" / "runtime" / "globals.hpp"
    target.write_text(target.read_text() + "// probe\n")
    run("git", "-C", str(tree), "commit", "-qam", "Probe change\n\nWhy it is there.")
    assert refresh(tree, patches).returncode == 0
    series = (patches / "series").read_text().split()
    new = series[-1]
    assert new.endswith("-probe-change.patch") and new.startswith(f"{len(series):04d}-")
    text = (patches / new).read_text()
    assert text.startswith("Description: Probe change\n Why it is there.\n")
    assert "+// probe" in text


def test_refresh_refuses_uncommitted_work(patch_tree):
    tree, patches = patch_tree
    target = tree / "make" / "Main.gmk"
    target.write_text(target.read_text() + "# uncommitted\n")
    r = refresh(tree, patches)
    assert r.returncode != 0 and "uncommitted changes" in r.stderr


def test_patch_outside_libjvm_sources_is_refused(patch_tree):
    tree, patches = patch_tree
    os.makedirs(tree / "src" / "java.base", exist_ok=True)
    (tree / "src" / "java.base" / "x.java").write_text("class X {}\n")
    run("git", "-C", str(tree), "add", "-A")
    run("git", "-C", str(tree), "commit", "-qm", "Touch the class library")
    r = refresh(tree, patches)
    assert r.returncode != 0 and "changes src/java.base/x.java: only make" in r.stderr
    assert "are built from source" in r.stderr


# ---- prepare_tree: content-based sync of the djava tree ----------------------

def make_tree(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def prepare(pristine, target, patches, overlay):
    return run(PYTHON, PREPARE_TREE, "--pristine", str(pristine), "--target", str(target),
               "--patches", str(patches), "--overlay", f"{overlay}:src")


def test_prepare_tree_applies_overlays_and_reverts(tmp_path):
    pristine, target, patches, overlay = (tmp_path / d for d in ("p", "t", "patches", "o"))
    base = {"src/a.c": "one\ntwo\nthree\n", "src/b.c": "untouched\n"}
    make_tree(pristine, base)
    make_tree(target, base)
    make_tree(overlay, {"new/ours.c": "ours\n"})
    patches.mkdir()
    (patches / "0001-x.patch").write_text(
        "Description: x\n---\n--- a/src/a.c\n+++ b/src/a.c\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n")
    (patches / "series").write_text("0001-x.patch\n")
    untouched_mtime = os.stat(target / "src/b.c").st_mtime_ns

    r = prepare(pristine, target, patches, overlay)
    assert r.returncode == 0, r.stderr
    assert (target / "src/a.c").read_text() == "one\nTWO\nthree\n"
    assert (target / "src/new/ours.c").read_text() == "ours\n"
    assert os.stat(target / "src/b.c").st_mtime_ns == untouched_mtime

    # Nothing changed: nothing is rewritten (incremental builds stay incremental).
    patched_mtime = os.stat(target / "src/a.c").st_mtime_ns
    assert prepare(pristine, target, patches, overlay).stdout == ""
    assert os.stat(target / "src/a.c").st_mtime_ns == patched_mtime

    # Dropping the patch and the overlay file restores the pristine tree.
    (patches / "series").write_text("")
    os.remove(overlay / "new/ours.c")
    assert prepare(pristine, target, patches, overlay).returncode == 0
    assert (target / "src/a.c").read_text() == base["src/a.c"]
    assert not (target / "src/new/ours.c").exists()


def test_prepare_tree_stops_on_a_patch_that_does_not_apply(tmp_path):
    pristine, target, patches, overlay = (tmp_path / d for d in ("p", "t", "patches", "o"))
    make_tree(pristine, {"src/a.c": "different\n"})
    make_tree(target, {"src/a.c": "different\n"})
    overlay.mkdir()
    patches.mkdir()
    (patches / "0001-x.patch").write_text(
        "Description: x\n---\n--- a/src/a.c\n+++ b/src/a.c\n@@ -1,1 +1,1 @@\n-two\n+TWO\n")
    (patches / "series").write_text("0001-x.patch\n")
    r = prepare(pristine, target, patches, overlay)
    assert r.returncode != 0 and "0001-x.patch does not apply" in r.stderr


# ---- pinned sources -----------------------------------------------------------

@pytest.fixture
def fetch_copy(tmp_path):
    """jvm/fetch-sources beside a pins file the test may edit, with an empty cache."""
    jvm = tmp_path / "jvm"
    jvm.mkdir()
    shutil.copy(os.path.join(TOP, "jvm", "fetch-sources"), jvm)
    shutil.copy(os.path.join(TOP, "jvm", "pins"), jvm)
    return jvm, tmp_path / "cache"


def edit_pins(jvm, old, new):
    pins = jvm / "pins"
    text = pins.read_text()
    assert old in text
    pins.write_text(text.replace(old, new))


@pytest.mark.skipif(os.geteuid() != 0, reason="fetching through apt needs root")
def test_missing_pinned_version_names_the_pin(fetch_copy):
    jvm, cache = fetch_copy
    edit_pins(jvm, "PIN_DEB_VERSION='17.0.19+10-1~deb12u2'", "PIN_DEB_VERSION='17.0.0+0-0~nonexistent'")
    r = run(str(jvm / "fetch-sources"), str(cache))
    assert r.returncode != 0
    assert "is not available from Debian's archive" in r.stderr and "jvm/pins" in r.stderr
    assert not any(f.is_file() for f in cache.rglob("*"))


@pytest.mark.skipif(os.geteuid() != 0, reason="fetching through apt needs root")
def test_wrong_checksum_refuses_the_file(fetch_copy):
    jvm, cache = fetch_copy
    bogus = "0" * 64
    edit_pins(jvm, "PIN_SRC_SHA256='7a61915b", f"PIN_SRC_SHA256='{bogus}'\nIGNORED='")
    r = run(str(jvm / "fetch-sources"), str(cache))
    assert r.returncode != 0
    assert "refusing to build another version" in r.stderr and "PIN_SRC_SHA256" in r.stderr
    assert not (cache / bogus).exists()
