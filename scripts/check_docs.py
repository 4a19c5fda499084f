#!/usr/bin/env python3
"""Checks that the documentation and its files agree (stdlib only, well under a second).

Fails (exit 1, listing each problem) when:
  1. a committed figure under docs/figures/ (.png, .svg, .jpg, .jpeg, .gif, .pdf; not the
     data under docs/figures/data/) is named by no .md file of the repository. A figure is
     named when its file name appears in a .md file; an .svg also counts as named through its
     .png twin of the same stem (`tuna plot` writes both; the pages show the PNG);
  2. a relative markdown link or image in README.md, docs/*.md, docs/*/*.md (guides,
     results, figures/README.md) or sim/results/README.md points to a file that does not exist (links inside code are not
     links; http(s)/mailto links and pure #anchors are not checked);
  3. a top-level entry of sim/results/ is missing from the index sim/results/README.md: some
     `code span` of the index must match it, where {a,b} is alternation, [x] optional text
     and * any text; a directory matches a span that starts with "NAME/";
  4. docs/reference.md and the code disagree (each table's first cell is its key):
     - "## Environment variables": every variable the C code in src/ and tools/ reads, i.e.
       each getenv("NAME") and each string literal "TUNA_..." (names passed to getenv through
       a table; prefixes compared with strncmp are not names) has a row, and no row names a
       variable the code does not read;
     - "## tuna-bench options": one row per long option of tools/bench/bench.c's `longopts`
       (`--name`; several options may share a row), none that the parser lacks;
     - "## Algorithms", "### alltoallv|alltoall|allgather|allreduce": one row per row of
       that collective's registry (src/<coll>/table.c and the shared rows of
       src/alltoallv/rows.h and src/alltoall/uniform_rows.h), its second cell listing exactly
       the row's parameters (`-` for none);
  5. a guide or how-it-works page (docs/*.md and docs/guides/*.md, except docs/history.md; the
     results under docs/results/ have no limit) is longer than 400 lines (pages stay short:
     measurements and dated records go to docs/results/, superseded material to
     docs/history.md, details to the pages they link);
  6. a page of docs/*.md or docs/guides/*.md that README.md does not link (its map of the
     docs must name every page; results are reached through docs/results/README.md);
  7. a link's #anchor into a markdown page (the same page or another, as in 2) names no
     heading of that page (GitHub's rule: lower case, punctuation but "-" and "_" dropped,
     spaces to "-", "-1", "-2", ... for repeats).

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


C_LITERAL_ENV = re.compile(r'getenv\(\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*\)')
C_LITERAL_TUNA = re.compile(r'"(TUNA_[A-Z0-9_]*[A-Z0-9])"')
REF = "docs/reference.md"
COLLECTIVES = ("alltoallv", "alltoall", "allgather", "allreduce", "neighbor_alltoallv")
FOLDER = {"neighbor_alltoallv": "neighbor"}  # a collective whose folder has another name


def c_sources(root, files, dirs):
    if files is None:
        files = walk_files(root)
    return [f for f in files if f.split("/")[0] in dirs and f.endswith((".c", ".h"))
            and os.path.exists(os.path.join(root, f))]


def code_env_vars(root, files):
    """Variables the C code reads: getenv("X") and "TUNA_..." literals (not strncmp prefixes)."""
    names = set()
    for f in c_sources(root, files, ("src", "tools")):
        text = read(root, f)
        if "TUNA_" not in text and "getenv" not in text:
            continue
        names.update(n for n in C_LITERAL_ENV.findall(text) if not n.startswith(
            ("OMPI_", "PMI_", "PMIX_", "MPI_")))  # launcher variables tuna-bench only peeks at
        for line in text.splitlines():
            if "strncmp" in line:
                continue
            names.update(C_LITERAL_TUNA.findall(line))
    return names


def bench_options(root):
    text = read(root, "tools/bench/bench.c")
    m = re.search(r"longopts\[\]\s*=\s*\{(.*?)\{\s*0\s*,\s*0\s*,", text, flags=re.S)
    return set(re.findall(r'\{\s*"([a-z][a-z0-9-]*)"\s*,', m.group(1))) if m else set()


ROW_NAME = re.compile(r'\.info\s*=\s*\{\s*"([a-z0-9-]+)"')
PARAM = re.compile(r'\{\s*"([a-z_]+)"\s*,\s*-?\d+\s*,')


def registry_rows(root, coll):
    """{algorithm: set of parameters} of one collective's registry, from its C tables."""
    paths = [f"src/{FOLDER.get(coll, coll)}/table.c"]
    if coll in ("alltoallv", "alltoall"):
        paths.append("src/alltoallv/rows.h")
    if coll == "alltoall":
        paths.append("src/alltoall/uniform_rows.h")
    rows = {}
    for p in paths:
        if not os.path.exists(os.path.join(root, p)):
            continue
        text = read(root, p)
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        text = text.replace("STRIDE_PARAM", '{"stride", 1, 0,')
        # the shared rows and parameters of src/core/tuna_registry.h and
        # src/allgather_allreduce/shared.h
        text = text.replace("TUNA_VENDOR_DESC(", '{.info = {"vendor", ')
        text = text.replace("TUNA_AUTO_DESC(", '{.info = {"auto", ')
        text = re.sub(r"TUNA_AGAR_ROW(_K)?\(", "{.info = {", text)
        text = re.sub(r"TUNA_PARAM_K_(RADIX|GROUP)", '{{"k", 2, }}', text)
        starts = [m for m in ROW_NAME.finditer(text)]
        for i, m in enumerate(starts):
            end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
            body = text[m.end():end]
            body = body.split(".family", 1)[0].split(".kind", 1)[0]
            rows[m.group(1)] = set(PARAM.findall(body))
    return rows


def section(text, heading, level):
    """The text under a heading (up to the next heading of the same or a higher level)."""
    m = re.search(r"^" + "#" * level + r" " + re.escape(heading) + r"[^\n]*\n", text, flags=re.M)
    if not m:
        return None
    nxt = re.search(r"^#{1,%d} " % level, text[m.end():], flags=re.M)
    return text[m.end():m.end() + nxt.start()] if nxt else text[m.end():]


def table_rows(text):
    """(first cell, second cell) of each markdown table row, separator rows skipped."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|") or re.match(r"^\|[\s:|-]+\|?\s*$", line):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append((cells[0], cells[1] if len(cells) > 1 else ""))
    return rows


def check_reference(root, files):
    if not os.path.exists(os.path.join(root, REF)):
        return [f"{REF}: missing"]
    text = read(root, REF)
    problems = []

    env = section(text, "Environment variables", 2)
    if env is None:
        problems.append(f"{REF}: no '## Environment variables' section")
    else:
        documented = set()
        for first, _ in table_rows(env):
            documented.update(re.findall(r"`([A-Z][A-Z0-9_]+)`", first))
        code = code_env_vars(root, files)
        for n in sorted(code - documented):
            problems.append(f"{REF}: environment variable {n} is read by the code but has no row")
        for n in sorted(documented - code):
            problems.append(f"{REF}: environment variable {n} has a row but no code reads it")

    opts = section(text, "tuna-bench options", 2)
    if opts is None:
        problems.append(f"{REF}: no '## tuna-bench options' section")
    else:
        documented = set()
        for first, _ in table_rows(opts):
            documented.update(re.findall(r"--([a-z][a-z0-9-]*)", first))
        code = bench_options(root)
        if not code:
            problems.append("tools/bench/bench.c: no longopts table found")
        for n in sorted(code - documented):
            problems.append(f"{REF}: tuna-bench option --{n} has no row")
        for n in sorted(documented - code):
            problems.append(f"{REF}: tuna-bench option --{n} has a row but the parser lacks it")

    algs = section(text, "Algorithms", 2)
    if algs is None:
        problems.append(f"{REF}: no '## Algorithms' section")
        return problems
    for coll in COLLECTIVES:
        code = registry_rows(root, coll)
        sec = section(algs, f"`{coll}`", 3)
        if sec is None:
            problems.append(f"{REF}: no '### `{coll}`' section under Algorithms")
            continue
        documented = {}
        for first, second in table_rows(sec):
            m = re.fullmatch(r"`([a-z0-9-]+)`", first)
            if m:
                documented[m.group(1)] = set(re.findall(r"`([a-z_]+)`", second))
        for n in sorted(set(code) - set(documented)):
            problems.append(f"{REF}: {coll} algorithm {n} (registry) has no row")
        for n in sorted(set(documented) - set(code)):
            problems.append(f"{REF}: {coll} algorithm {n} has a row but is not in the registry")
        for n in sorted(set(code) & set(documented)):
            if code[n] != documented[n]:
                problems.append(f"{REF}: {coll} algorithm {n}: parameters "
                                f"{sorted(documented[n])} in the row, {sorted(code[n])} in the code")
    return problems


GUIDE_MAX_LINES = 400
LENGTH_EXEMPT = {"docs/history.md"}


def check_lengths(root, md_files):
    """Guides and how-it-works pages stay short enough to read; results and history do not."""
    problems = []
    for md in md_files:
        if md in LENGTH_EXEMPT or not re.fullmatch(r"docs/(guides/)?[^/]+\.md", md):
            continue
        n = read(root, md).count("\n")
        if n > GUIDE_MAX_LINES:
            problems.append(f"{md}: {n} lines; a guide or how-it-works page has at most "
                            f"{GUIDE_MAX_LINES}: move measurements and dated records to "
                            f"docs/results/, superseded material to docs/history.md, and link them")
    return problems


def check_readme_map(root, md_files):
    """README.md links every guide and how-it-works page (its map of the docs)."""
    if not os.path.exists(os.path.join(root, "README.md")):
        return ["README.md: missing"]
    linked = set()
    for m in LINK.finditer(strip_code(read(root, "README.md"))):
        target = m.group(1).split("#", 1)[0]
        if target and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            linked.add(os.path.normpath(target).replace(os.sep, "/"))
    return [f"README.md: its map of the docs does not link {md}" for md in md_files
            if re.fullmatch(r"docs/(guides/)?[^/]+\.md", md) and md not in linked]


def heading_anchors(text):
    """The anchors GitHub gives a page's headings (fenced code is not headings)."""
    text = re.sub(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$", "", text, flags=re.S | re.M)
    anchors, seen = set(), {}
    for m in re.finditer(r"^#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$", text, flags=re.M):
        h = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))
        slug = re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def check_anchors(root, md_files):
    problems, cache = [], {}
    for md in md_files:
        text = strip_code(read(root, md))
        for m in list(LINK.finditer(text)) + list(REFDEF.finditer(text)):
            target = m.group(1)
            if "#" not in target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue
            path, anchor = target.split("#", 1)
            rel = md if not path else os.path.normpath(
                os.path.join(os.path.dirname(md), path)).replace(os.sep, "/")
            if not rel.endswith(".md") or not os.path.isfile(os.path.join(root, rel)):
                continue  # not a page, or a missing file (reported by check_links)
            if rel not in cache:
                cache[rel] = heading_anchors(read(root, rel))
            if anchor not in cache[rel]:
                problems.append(f"{md}: link to a heading {rel} does not have: {target}")
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    files = tracked_files(root)
    listing = files if files is not None else walk_files(root)
    all_md = [f for f in listing if f.endswith(".md") and os.path.exists(os.path.join(root, f))]
    pages = [f for f in all_md if f == "README.md" or re.fullmatch(r"docs/([^/]+/)?[^/]+\.md", f)
             or f in ("docs/figures/README.md", "sim/results/README.md")]
    problems = (check_figures(root, listing, all_md) + check_links(root, pages)
                + check_results(root, files) + check_reference(root, files)
                + check_lengths(root, all_md) + check_readme_map(root, all_md)
                + check_anchors(root, pages))
    for p in problems:
        print(p)
    if problems:
        print(f"check_docs: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_docs: {len(all_md)} .md files, figures, links and their anchors, the results "
          f"index, {REF} (environment, tuna-bench options, algorithms), the pages' lengths "
          f"(at most {GUIDE_MAX_LINES} lines) and README's map of the docs agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
