# SPDX-License-Identifier: MIT
"""Check that the C and C++ code blocks of README.md and docs/*.md are the
compiled examples they name, so that every snippet a reader sees builds and
runs (examples/*.c and examples/cpp_*.cpp are compiled with -Werror and run
by ctest).

A block is marked by the line right above its opening fence:

    <!-- example: examples/foo.c -->        the whole file, minus its SPDX
                                            line and any region markers
    <!-- example: examples/foo.c#name -->   the lines between the two
                                            marker lines `// [name]` of
                                            the file, markers excluded,
                                            their common indentation removed

Fails when a marked block differs from its file or region, when the file or
the region is missing or a region marker appears other than twice, when a
marker is not followed by a fenced block, and when a ```c / ```cpp block
has no marker (code that is not API usage takes another info string, such
as ```text).

Usage: docs_check.py ROOT          check
       docs_check.py ROOT --fix    rewrite every marked block from its source
"""
import difflib
import glob
import os
import re
import sys

MARK = re.compile(r"^<!-- example: ([^\s#]+)(?:#([A-Za-z0-9_.-]+))? -->$")
REGION = re.compile(r"^\s*// \[([A-Za-z0-9_.-]+)\]\s*$")
SPDX = re.compile(r"^(/\*|//|#) SPDX-License-Identifier: ")
CODE_LANGS = {"c", "cpp", "c++", "h", "hpp", "cc", "cxx"}


class Missing(Exception):
    pass


def source_lines(root, path):
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        raise Missing("no file %s" % path)
    with open(full, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if lines and SPDX.match(lines[0]):
        lines = lines[1:]
    return lines


def whole_file(lines):
    return [l for l in lines if not REGION.match(l)]


def region(lines, path, name):
    at = [i for i, l in enumerate(lines)
          if REGION.match(l) and REGION.match(l).group(1) == name]
    if len(at) != 2:
        raise Missing("%s has %d marker lines `// [%s]`, not 2"
                      % (path, len(at), name))
    body = [l for l in lines[at[0] + 1:at[1]] if not REGION.match(l)]
    indents = [len(l) - len(l.lstrip(" ")) for l in body if l.strip()]
    cut = min(indents) if indents else 0
    return [l[cut:] if l.strip() else "" for l in body]


def check_doc(root, doc, fix):
    """Return (errors, blocks checked) for one markdown file."""
    with open(os.path.join(root, doc), encoding="utf-8") as f:
        lines = f.read().split("\n")
    errors = []
    checked = 0
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = MARK.match(line)
        fence = line.startswith("```")
        if not m and not fence:
            out.append(line)
            i += 1
            continue
        if m:
            out.append(line)
            i += 1
            if i >= len(lines) or not lines[i].startswith("```"):
                errors.append("%s:%d: marker not followed by a ``` block"
                              % (doc, i))
                continue
        start = i  # the opening fence
        lang = lines[i][3:].strip().lower()
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        if j >= len(lines):
            errors.append("%s:%d: unclosed ``` block" % (doc, start + 1))
            out.extend(lines[start:])
            break
        block = lines[start + 1:j]
        want = None
        if m:
            path, name = m.group(1), m.group(2)
            where = path + ("#" + name if name else "")
            try:
                src = source_lines(root, path)
                want = region(src, path, name) if name else whole_file(src)
            except Missing as e:
                errors.append("%s:%d: %s" % (doc, start, e))
            checked += 1
            if want is not None and block != want:
                if fix:
                    block = want
                else:
                    diff = difflib.unified_diff(
                        want, block, where, "%s:%d" % (doc, start + 2),
                        lineterm="")
                    errors.append("%s:%d: block differs from %s\n%s"
                                  % (doc, start + 2, where, "\n".join(diff)))
        elif lang in CODE_LANGS:
            errors.append("%s:%d: ```%s block without an "
                          "<!-- example: PATH[#region] --> marker"
                          % (doc, start + 1, lang))
        out.append(lines[start])
        out.extend(block)
        out.append(lines[j])
        i = j + 1
    if fix:
        text = "\n".join(out)
        with open(os.path.join(root, doc), "w", encoding="utf-8") as f:
            f.write(text)
    return errors, checked


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    root = argv[1]
    fix = "--fix" in argv[2:]
    docs = ["README.md"] + sorted(
        os.path.relpath(p, root)
        for p in glob.glob(os.path.join(root, "docs", "*.md")))
    errors = []
    total = 0
    for doc in docs:
        e, n = check_doc(root, doc, fix)
        errors += e
        total += n
        print("%s: %d example blocks" % (doc, n))
    if total == 0:
        errors.append("no <!-- example: PATH --> block in README.md or docs")
    for e in errors:
        print("error: " + e, file=sys.stderr)
    if errors:
        return 1
    print("%d example blocks match their files" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
