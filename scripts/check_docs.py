#!/usr/bin/env python3
"""Checks that the documentation and its files agree (stdlib only, well under a second).

Fails (exit 1, listing each problem) when:
  1. a committed figure under docs/figures/ (.png, .svg, .jpg, .jpeg, .gif, .pdf; not the
     data under docs/figures/data/) is named by no .md file of the repository. A figure is
     named when its file name appears in a .md file; an .svg also counts as named through its
     .png twin of the same stem (`tuna plot` writes both; the pages show the PNG);
  2. a relative markdown link or image in README.md, docs/*.md, docs/figures/README.md or
     sim/results/README.md points to a file that does not exist (links inside code are not
     links; http(s)/mailto links and pure #anchors are not checked);
  3. a top-level entry of sim/results/ is missing from the index sim/results/README.md: some
     `code span` of the index must match it, where {a,b} is alternation, [x] optional text
     and * any text; a directory matches a span that starts with "NAME/".

Committed files come from `git ls-files` when the tree is a git checkout, otherwise from the
file system. Usage: scripts/check_docs.py [ROOT] (default: the directory above scripts/).
"""
import fnmatch
import os
import re
import subprocess
import sys

FIGURE_EXTS = (".png", ".svg", ".jpg", ".jpeg", ".gif", ".pdf")
RESULTS_SKIP = {"README.md"}
SKIP_DIRS = {".git", ".venv", "build", "node_modules", "__pycache__"}


def tracked_files(root):
    """Committed files (paths relative to root, '/'-separated); None outside a git checkout."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def walk_files(root):
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")]
        rel = os.path.relpath(d, root)
        for n in names:
            files.append(n if rel == "." else os.path.join(rel, n).replace(os.sep, "/"))
    return files


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        return f.read()


def strip_code(text):
    """Removes fenced code blocks and inline code spans (links there are not links)."""
    text = re.sub(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$", "", text, flags=re.S | re.M)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", text, flags=re.S)


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)


def check_links(root, md_files):
    problems = []
    for md in md_files:
        text = strip_code(read(root, md))
        for m in list(LINK.finditer(text)) + list(REFDEF.finditer(text)):
            target = m.group(1)
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0].split("?", 1)[0]
            if not path:
                continue
            base = root if path.startswith("/") else os.path.join(root, os.path.dirname(md))
            if not os.path.exists(os.path.normpath(os.path.join(base, path.lstrip("/")))):
                problems.append(f"{md}: link to missing file: {target}")
    return problems


def check_figures(root, files, all_md):
    figures = [f for f in files if f.startswith("docs/figures/")
               and not f.startswith("docs/figures/data/") and f.lower().endswith(FIGURE_EXTS)]
    text = "\n".join(read(root, md) for md in all_md)
    named = set(re.findall(r"[\w.+-]+\.(?:png|svg|jpe?g|gif|pdf)\b", text, flags=re.I))
    problems = []
    for fig in sorted(figures):
        name = os.path.basename(fig)
        stem, ext = os.path.splitext(name)
        if name in named or (ext.lower() == ".svg" and stem + ".png" in named):
            continue
        problems.append(f"{fig}: figure named by no .md file (show or link it, or git rm it)")
    return problems


def expand(pattern):
    """{a,b} alternation and [x] optional text, as the results index writes them."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if m:
        return [v for alt in m.group(1).split(",")
                for v in expand(pattern[:m.start()] + alt + pattern[m.end():])]
    m = re.search(r"\[([^\[\]]*)\]", pattern)
    if m:
        return (expand(pattern[:m.start()] + m.group(1) + pattern[m.end():])
                + expand(pattern[:m.start()] + pattern[m.end():]))
    return [pattern]


def check_results(root, files):
    index_rel = "sim/results/README.md"
    if not os.path.exists(os.path.join(root, index_rel)):
        return [f"{index_rel}: missing"]
    if files is not None:
        entries = {f[len("sim/results/"):].split("/")[0] + ("/" if f.count("/") > 2 else "")
                   for f in files if f.startswith("sim/results/")}
    else:
        d = os.path.join(root, "sim/results")
        entries = {n + ("/" if os.path.isdir(os.path.join(d, n)) else "") for n in os.listdir(d)}
    patterns = [p for span in re.findall(r"`([^`]+)`", read(root, index_rel))
                for p in expand(span.strip())]
    problems = []
    for entry in sorted(entries):
        name = entry.rstrip("/")
        if name in RESULTS_SKIP:
            continue
        if entry.endswith("/"):
            ok = any(p == name or p.startswith(name + "/") for p in patterns)
        else:
            ok = any(fnmatch.fnmatchcase(name, p) for p in patterns if "/" not in p)
        if not ok:
            problems.append(f"sim/results/{entry}: not in the index {index_rel}")
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    files = tracked_files(root)
    listing = files if files is not None else walk_files(root)
    all_md = [f for f in listing if f.endswith(".md") and os.path.exists(os.path.join(root, f))]
    pages = [f for f in all_md if f == "README.md" or re.fullmatch(r"docs/[^/]+\.md", f)
             or f in ("docs/figures/README.md", "sim/results/README.md")]
    problems = (check_figures(root, listing, all_md) + check_links(root, pages)
                + check_results(root, files))
    for p in problems:
        print(p)
    if problems:
        print(f"check_docs: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_docs: {len(all_md)} .md files, figures, links and the results index agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
