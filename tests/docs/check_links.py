#!/usr/bin/env python3
"""Every link of the repository's Markdown points inside the repository, and resolves.

  check_links.py REPO
  check_links.py --self-test    (the checker finds the problems of a made-up tree)

Checks each *.md file git lists, tracked or not yet added but not ignored
(every *.md under REPO when REPO is not a git checkout): every inline link or image `[text](target)` outside code is a
relative path to a file or directory that exists inside REPO, and a
`#anchor` on a Markdown target names one of its headings (GitHub's slugs).
Absolute URLs (http:, https:, mailto:, //...) and paths leaving REPO fail,
and so does any mention of the design-material folder beside the repository
(OUTSIDE below; a clone does not have it).
Prints one line per problem; exit 1 when there is any, 0 otherwise.
"""

import pathlib
import re
import subprocess
import sys

# The team's source material sits beside the repository, not in it; built from
# its parts so that this file does not itself point there.
OUTSIDE = "/".join(["..", "shared", ""])

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def markdown_files(repo):
    try:
        listed = subprocess.run(["git", "-C", str(repo), "ls-files", "--cached", "--others",
                                 "--exclude-standard", "*.md"], check=True,
                                capture_output=True, text=True).stdout.split()
        return [repo / name for name in listed]
    except (OSError, subprocess.CalledProcessError):
        return sorted(p for p in repo.rglob("*.md") if "build" not in p.relative_to(repo).parts[:1])


def prose_lines(text):
    """(line number, line) outside fenced code, with inline code spans blanked."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, re.sub(r"`[^`]*`", "``", line)


def slug(heading):
    heading = re.sub(r"`([^`]*)`", r"\1", heading).strip().lower()
    heading = re.sub(r"[^\w\- ]", "", heading)
    return heading.replace(" ", "-")


def anchors(path):
    found, counts = set(), {}
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if match:
            base = slug(match.group(1))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def check(repo):
    problems = []
    for md in markdown_files(repo):
        text = md.read_text(encoding="utf-8")
        where = md.relative_to(repo)
        if OUTSIDE in text:
            problems.append(f"{where}: mentions {OUTSIDE}, which a clone does not have")
        for number, line in prose_lines(text):
            for match in LINK.finditer(line):
                target = match.group(1)
                if not target:
                    problems.append(f"{where}:{number}: empty link target")
                    continue
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
                    problems.append(f"{where}:{number}: '{target}' points outside the repository")
                    continue
                path_part, _, anchor = target.partition("#")
                resolved = (md.parent / path_part).resolve() if path_part else md.resolve()
                try:
                    resolved.relative_to(repo.resolve())
                except ValueError:
                    problems.append(f"{where}:{number}: '{target}' leaves the repository")
                    continue
                if not resolved.exists():
                    problems.append(f"{where}:{number}: '{target}' does not exist")
                    continue
                if anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                    problems.append(f"{where}:{number}: '{target}': no heading with anchor "
                                    f"'#{anchor}' in {resolved.relative_to(repo.resolve())}")
    return problems


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        repo = pathlib.Path(tmp)
        (repo / "docs").mkdir()
        (repo / "docs" / "a.md").write_text(
            "# Title\n\n## Part two: more\n\n[ok](b.md#b-heading) [self](#part-two-more) "
            "[dir](../docs) `[code](nowhere.md)`\n```\n[fenced](nowhere.md)\n```\n"
            "[web](https://example.com) [gone](missing.md) [out](../../x.md) "
            f"[anchor](b.md#nope) see {OUTSIDE}design\n", encoding="utf-8")
        (repo / "docs" / "b.md").write_text("## B heading\n", encoding="utf-8")
        problems = check(repo)
    expected = [f"docs/a.md: mentions {OUTSIDE}, which a clone does not have",
                "docs/a.md:9: 'https://example.com' points outside the repository",
                "docs/a.md:9: 'missing.md' does not exist",
                "docs/a.md:9: '../../x.md' leaves the repository",
                "docs/a.md:9: 'b.md#nope': no heading with anchor '#nope' in docs/b.md"]
    if problems != expected:
        print("self-test: expected", expected, "found", problems, sep="\n")
        return 1
    print("self-test: the checker finds exactly the 5 planted problems")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    repo = pathlib.Path(sys.argv[1]).resolve()
    problems = check(repo)
    for problem in problems:
        print(problem)
    files = len(markdown_files(repo))
    print(f"{files} Markdown files, {len(problems)} problem(s)")
    return 1 if problems or files == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
