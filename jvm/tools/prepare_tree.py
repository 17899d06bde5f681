#!/usr/bin/env python3
"""Brings an OpenJDK source tree to "pristine + patches/series + overlay".

The djava tree starts as a fresh extraction of the pinned tarball. On every
build this script computes what each file we manage should contain -- files
the patch series touches, and our own HotSpot files copied from the overlay
directories -- and rewrites only those whose content differs. Untouched files
keep their timestamps, so the OpenJDK build stays incremental; a file dropped
from the series or the overlay goes back to its pristine content (or away).

usage: prepare_tree.py --pristine DIR --target DIR --patches DIR
                       [--overlay SRC:DEST ...]
"""

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile

STATE_FILE = ".djava-managed"
PATCHED_PATH = re.compile(r"^(?:---|\+\+\+) [ab]/(\S+)")


def fail(message):
    sys.exit("djava: " + message)


def read_series(patch_dir):
    series = os.path.join(patch_dir, "series")
    if not os.path.exists(series):
        return []
    names = []
    with open(series) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                if not os.path.exists(os.path.join(patch_dir, line)):
                    fail(f"patches/series names {line}, which does not exist")
                names.append(line)
    return names


def paths_in_patch(patch_file):
    paths = set()
    with open(patch_file) as f:
        for line in f:
            m = PATCHED_PATH.match(line)
            if m:
                paths.add(m.group(1))
    return paths


def apply_series(pristine, patch_dir, scratch):
    """Applies the series to copies of the touched files; returns their paths."""
    touched = set()
    for name in read_series(patch_dir):
        touched |= paths_in_patch(os.path.join(patch_dir, name))
    for rel in touched:
        src = os.path.join(pristine, rel)
        if os.path.exists(src):
            os.makedirs(os.path.dirname(os.path.join(scratch, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(scratch, rel))
    for name in read_series(patch_dir):
        with open(os.path.join(patch_dir, name)) as f:
            r = subprocess.run(["patch", "-p1", "-F0", "-N", "-s", "--no-backup-if-mismatch",
                                "-d", scratch], stdin=f, capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"patch {name} does not apply to the pinned source:\n{r.stdout}{r.stderr}")
    return {rel for rel in touched if os.path.exists(os.path.join(scratch, rel))}


def overlay_files(overlays):
    """Maps tree-relative destination path -> source file for every overlay file."""
    files = {}
    for spec in overlays:
        src_root, dest_root = spec.split(":", 1)
        for dirpath, _, names in os.walk(src_root):
            for n in names:
                src = os.path.join(dirpath, n)
                rel = os.path.join(dest_root, os.path.relpath(src, src_root))
                files[os.path.normpath(rel)] = src
    return files


def install_if_changed(src, dest):
    if os.path.exists(dest) and filecmp.cmp(src, dest, shallow=False):
        return False
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = dest + ".djava-tmp"
    shutil.copyfile(src, tmp)
    shutil.copymode(src, tmp)
    os.replace(tmp, dest)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pristine", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--patches", required=True)
    ap.add_argument("--overlay", action="append", default=[])
    args = ap.parse_args()

    state_path = os.path.join(args.target, STATE_FILE)
    previously = set()
    if os.path.exists(state_path):
        with open(state_path) as f:
            previously = {line.strip() for line in f if line.strip()}

    with tempfile.TemporaryDirectory() as scratch:
        desired = {rel: os.path.join(scratch, rel)
                   for rel in apply_series(args.pristine, args.patches, scratch)}
        for rel, src in overlay_files(args.overlay).items():
            if rel in desired:
                fail(f"{rel} is both patched and overlaid; keep new files out of patches/")
            if os.path.exists(os.path.join(args.pristine, rel)):
                fail(f"overlay file {src} would replace OpenJDK's {rel}; change it with a patch")
            desired[rel] = src

        changed = []
        for rel in sorted(previously | set(desired)):
            dest = os.path.join(args.target, rel)
            if rel in desired:
                if install_if_changed(desired[rel], dest):
                    changed.append(rel)
            elif os.path.exists(os.path.join(args.pristine, rel)):
                if install_if_changed(os.path.join(args.pristine, rel), dest):
                    changed.append(rel)
            elif os.path.exists(dest):
                os.remove(dest)
                changed.append(rel)

    with open(state_path + ".tmp", "w") as f:
        f.write("".join(rel + "\n" for rel in sorted(desired)))
    os.replace(state_path + ".tmp", state_path)
    for rel in changed:
        print("djava: updated " + rel)


if __name__ == "__main__":
    main()
