#!/usr/bin/env bash
# Links that cannot rot: every relative link in README.md and docs/*.md names a file of the
# source tree, and every "#anchor" (in the same page or another) names a heading of its page,
# slugged as GitHub slugs them (lower case, punctuation dropped, spaces to hyphens, "-1" on a
# repeat). A section moved from one page to another fails here until its links follow.
# tier: exact
set -euo pipefail
: "${KNEE_SRC:?KNEE_SRC must name the source dir}"

python3 - "$KNEE_SRC" <<'PY'
import glob, os, re, sys

src = sys.argv[1]
pages = ["README.md"] + sorted(os.path.relpath(p, src) for p in glob.glob(os.path.join(src, "docs", "*.md")))

def slug(text):
    text = re.sub(r"`|\*\*|\[|\]\([^)]*\)", "", text.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")

def anchors(path):
    """The anchors of a page's headings, outside code blocks."""
    seen, out, in_block = {}, set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_block = not in_block
        elif not in_block and re.match(r"#{1,6} ", line):
            s = slug(line.lstrip("#"))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
    return out

def links(path):
    """(line number, target) of every markdown link outside code blocks and code spans."""
    in_block = False
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.startswith("```"):
            in_block = not in_block
            continue
        if in_block:
            continue
        line = re.sub(r"`[^`]*`", "", line)
        for m in re.finditer(r"\]\(([^)\s]+)\)", line):
            yield no, m.group(1)

failures, checked, cache = [], 0, {}
for page in pages:
    here = os.path.dirname(os.path.join(src, page))
    for no, target in links(os.path.join(src, page)):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        checked += 1
        file, _, anchor = target.partition("#")
        path = os.path.normpath(os.path.join(here, file)) if file else os.path.join(src, page)
        if not os.path.exists(path):
            failures.append("%s:%d: %s: no file %s" % (page, no, target, os.path.relpath(path, src)))
            continue
        if anchor and path.endswith(".md"):
            if path not in cache:
                cache[path] = anchors(path)
            if anchor not in cache[path]:
                failures.append("%s:%d: %s: no heading '#%s' in %s" % (page, no, target, anchor,
                                                                      os.path.relpath(path, src)))
for f in failures:
    print("FAIL: " + f, file=sys.stderr)
if failures:
    print("%d of %d links broken" % (len(failures), checked), file=sys.stderr)
    sys.exit(1)
print("ok: %d relative links in %d pages name a file and a heading" % (checked, len(pages)))
PY
echo "1 passed, 0 failed"
