#!/usr/bin/env python3
"""The patch workflow: patches/ <-> a git working tree of the patched source.

  patch_tree.py create  --pristine DIR --tree DIR --patches DIR --overlay SRC:DEST ...
  patch_tree.py refresh --tree DIR --patches DIR

`create` makes a git repository of the parts of OpenJDK that djava builds
(make/, src/hotspot/ and the java.base sources djava compiles into its
java.base patch, lib/djava-java.base.jar): one commit "upstream" with the pristine files, then
one commit per patch of patches/series. Our own HotSpot files (the overlay) are
linked into the tree, not committed, so editing them edits the repo's files.

`refresh` writes every commit after "upstream" back as a patch: the commit's
subject is the patch file name, its body the patch's DEP-3 header. A commit
whose message has no DEP-3 header (a new one) gets one made from its message.
Patches are produced only by this script, so create+refresh is an exact round
trip.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

# Only libjvm and the few java.base classes of lib/djava-java.base.jar are
# built from source (the rest of the class library is Debian's binary), so a
# patch anywhere else would silently have no effect. Directories and files.
PATCHABLE = ("make", "src/hotspot",
             "src/java.base/share/classes/java/util/concurrent",
             "src/java.base/share/classes/java/util/Locale.java",
             "src/java.base/share/classes/java/util/TimeZone.java")
SEPARATOR = "---\n"
DIFF_OPTIONS = ["--no-color", "--no-ext-diff", "--no-renames", "-U3",
                "--src-prefix=a/", "--dst-prefix=b/"]


def fail(message):
    sys.exit("djava: " + message)


def git(tree, *args, input=None):
    r = subprocess.run(["git", "-C", tree, *args], input=input, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"git {' '.join(args)} failed in {tree}:\n{r.stderr}")
    return r.stdout


def series(patch_dir):
    path = os.path.join(patch_dir, "series")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [l.split("#", 1)[0].strip() for l in f if l.split("#", 1)[0].strip()]


def split_patch(text):
    """Returns (DEP-3 header, diff) of a patch file written by refresh."""
    if text.startswith(SEPARATOR):
        return "", text[len(SEPARATOR):]
    i = text.find("\n" + SEPARATOR)
    if i < 0:
        fail("patch has no '---' line between its DEP-3 header and its diff")
    return text[:i + 1], text[i + 1 + len(SEPARATOR):]


def overlay_links(tree, overlays):
    """Links each overlay directory (or file, in a directory OpenJDK has) into tree."""
    links = []
    for spec in overlays:
        src_root, dest_root = spec.split(":", 1)
        src_root = os.path.abspath(src_root)
        for dirpath, dirnames, names in os.walk(src_root):
            rel = os.path.relpath(dirpath, src_root)
            dest_dir = os.path.normpath(os.path.join(dest_root, rel))
            if not os.path.exists(os.path.join(tree, dest_dir)):
                os.symlink(dirpath, os.path.join(tree, dest_dir))
                links.append(dest_dir)
                dirnames[:] = []
                continue
            for n in names:
                os.symlink(os.path.join(dirpath, n), os.path.join(tree, dest_dir, n))
                links.append(os.path.join(dest_dir, n))
    return links


def create(args):
    tree = args.tree
    if os.path.exists(tree):
        dirty = git(tree, "status", "--porcelain")
        exported = subprocess.run([sys.executable, __file__, "refresh", "--tree", tree,
                                   "--patches", args.patches, "--check"]).returncode == 0
        if dirty or not exported:
            fail(f"{tree} has work that is not in patches/ yet: run `make refresh-patches` "
                 f"first, or remove {tree} to throw it away")
        shutil.rmtree(tree)
    os.makedirs(tree)
    for part in PATCHABLE:
        os.makedirs(os.path.dirname(os.path.join(tree, part)) or tree, exist_ok=True)
        if os.path.isdir(os.path.join(args.pristine, part)):
            shutil.copytree(os.path.join(args.pristine, part), os.path.join(tree, part), symlinks=True)
        else:
            shutil.copy2(os.path.join(args.pristine, part), os.path.join(tree, part))
    git(tree, "init", "-q", "-b", "djava")
    git(tree, "config", "user.name", "djava patch tree")
    git(tree, "config", "user.email", "patch-tree@djava.invalid")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "upstream")
    git(tree, "tag", "upstream")
    for name in series(args.patches):
        with open(os.path.join(args.patches, name)) as f:
            header, diff = split_patch(f.read())
        git(tree, "apply", "--index", "--whitespace=nowarn", "-", input=diff)
        git(tree, "commit", "-q", "-m", name + "\n\n" + header)
    links = overlay_links(tree, args.overlay)
    with open(os.path.join(tree, ".git", "info", "exclude"), "a") as f:
        f.write("".join("/" + l + "\n" for l in links))
    print(f"djava: patch tree ready in {tree} (branch djava; one commit per patch)")


def dep3_header(message, author):
    lines = message.rstrip("\n").split("\n")
    subject, body = lines[0], [l for l in lines[2:]]
    text = "Description: " + subject + "\n"
    text += "".join((" " + l if l.strip() else " .") + "\n" for l in body)
    return text + "Author: " + author + "\nForwarded: not-needed\n"


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:50] or "change"


def render_patches(tree):
    """Returns [(file name, text)] for the commits after upstream, in order."""
    patches = []
    commits = git(tree, "rev-list", "--reverse", "upstream..HEAD").split()
    for number, commit in enumerate(commits, 1):
        message = git(tree, "log", "-1", "--format=%B", commit)
        subject, _, rest = message.partition("\n")
        rest = rest.lstrip("\n")
        if subject.endswith(".patch") and rest.startswith("Description:"):
            name, header = subject, rest.rstrip("\n") + "\n"
        else:
            author = git(tree, "log", "-1", "--format=%an <%ae>", commit).strip()
            name = f"{number:04d}-{slug(subject)}.patch"
            header = dep3_header(message, author)
        paths = git(tree, "diff", "--name-only", commit + "^", commit).split()
        stray = [p for p in paths
                 if p not in PATCHABLE and not p.startswith(tuple(part + "/" for part in PATCHABLE))]
        if stray:
            fail(f"commit {commit[:12]} changes {', '.join(stray)}: only {', '.join(PATCHABLE)} "
                 "are built from source, so a patch elsewhere would have no effect")
        diff = git(tree, "diff", *DIFF_OPTIONS, commit + "^", commit)
        patches.append((name, header + SEPARATOR + diff))
    return patches


def refresh(args):
    tree, patch_dir = args.tree, args.patches
    if not os.path.isdir(os.path.join(tree, ".git")):
        fail(f"no patch tree in {tree}: run `make patch-tree` first")
    if git(tree, "status", "--porcelain", "--untracked-files=no"):
        fail(f"{tree} has uncommitted changes: commit them (amend the patch's commit, or a new "
             "commit whose message says what and why) before `make refresh-patches`")
    untracked = git(tree, "ls-files", "--others", "--exclude-standard").split()
    if untracked:
        fail(f"{tree} has untracked files ({', '.join(untracked[:5])}): new HotSpot files "
             "belong in jvm/hotspot/ (the overlay); commit other new files into a patch")
    patches = render_patches(tree)
    wanted = {name: text for name, text in patches}
    series_text = "".join(name + "\n" for name, _ in patches)
    existing = {n for n in os.listdir(patch_dir) if n.endswith(".patch")} if os.path.isdir(patch_dir) else set()
    if args.check:
        same = existing == set(wanted) and all(
            open(os.path.join(patch_dir, n)).read() == t for n, t in wanted.items())
        old_series = open(os.path.join(patch_dir, "series")).read() if os.path.exists(
            os.path.join(patch_dir, "series")) else ""
        sys.exit(0 if same and old_series == series_text else 1)
    os.makedirs(patch_dir, exist_ok=True)
    for name in existing - set(wanted):
        os.remove(os.path.join(patch_dir, name))
    for name, text in wanted.items():
        with open(os.path.join(patch_dir, name), "w") as f:
            f.write(text)
    with open(os.path.join(patch_dir, "series"), "w") as f:
        f.write(series_text)
    print(f"djava: wrote {len(patches)} patch(es) to {patch_dir}")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("create")
    c.add_argument("--pristine", required=True)
    c.add_argument("--tree", required=True)
    c.add_argument("--patches", required=True)
    c.add_argument("--overlay", action="append", default=[])
    r = sub.add_parser("refresh")
    r.add_argument("--tree", required=True)
    r.add_argument("--patches", required=True)
    r.add_argument("--check", action="store_true", help="exit 1 if patches/ would change")
    args = ap.parse_args()
    create(args) if args.command == "create" else refresh(args)


if __name__ == "__main__":
    main()
