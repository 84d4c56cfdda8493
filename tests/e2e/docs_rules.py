#!/usr/bin/env python3
"""The rules that keep the documentation one piece (docs_test.sh runs it).

- Each fact has one home: the exit codes are defined in rcoord(1), EXIT STATUS, and nowhere
  else is there a full table of them; the guarantees are stated in docs/guarantees.md, and no
  other page or man section is headed as guarantees or repeats one of its sentences; the
  README repeats no sentence of a page of docs/. The man pages are rcoord(1) and the prose
  of each group's page (man/rcoord-GROUP.1.in; the rest of it is generated from --help).
- Every relative link between the pages reaches a file, and every #anchor a heading of it.
- Every option the pages or the man page give is one that some `--help` shows, unless it is
  another tool's (listed below, with its tool) or a deprecated spelling rcoord still takes.

Usage: docs_rules.py SOURCE_DIR HELP_OPTIONS_FILE (the long options of every --help, a line each)
"""
import os
import re
import sys

EXIT_CODES = {"0", "1", "2", "3", "4", "5", "124"}
# A sentence is a statement of a fact when it is this long; shorter ones ("Exit 0 when every
# name was removed.") may well be said twice in passing.
LONG_SENTENCE_WORDS = 12

# Options of other tools that the pages show beside rcoord's, each with its tool.
OTHER_TOOLS = {
    "--fcntl": "flock", "--nonblock": "flock",
    "--pipe": "redis-cli", "--scan": "redis-cli", "--pattern": "redis-cli",
    "--cluster": "redis-cli", "--appendonly": "redis-server", "--save": "redis-server",
    "--listen": "etcdctl",
    "--build": "cmake", "--install": "cmake", "--preset": "cmake", "--list-presets": "cmake",
    "--target": "cmake", "--output-on-failure": "ctest", "--test-dir": "ctest",
    "--export-json": "hyperfine", "--runs": "hyperfine", "--prepare": "hyperfine",
    "--quick": "scripts/test", "--configure-only": "scripts/test", "--servers": "scripts/test",
    "--baseline": "scripts/bench", "--write": "scripts/bench", "--objects": "scripts/bench-top",
    "--check": "scripts/gen-completions", "--seconds": "scripts/fuzz", "--only": "scripts/fuzz",
    "--jobs": "scripts/fuzz", "--failovers": "scripts/jepsen-failover",
    "--partition": "scripts/jepsen-failover", "--net": "scripts/jepsen-failover",
    "--modes": "scripts/jepsen-failover", "--rows": "scripts/fault-matrix",
    "--columns": "scripts/fault-matrix", "--keep": "scripts/fault-matrix",
    "--table-from": "scripts/fault-matrix", "--cells": "scripts/fault-matrix",
    "--no-e2e": "scripts/test-aarch64",
    "--e2e": "scripts/test-aarch64", "--tests": "scripts/test-aarch64",
    "--tool": "scripts/bench", "--now": "scripts/bench", "--model": "tests/e2e/history_check.py",
    "--full": "the example's backup.sh", "--fence": "the example's writer",
}
# Spellings rcoord still accepts, with a warning, that --help no longer shows.
DEPRECATED = {"--max-wait": "limit wait --wait"}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def man_text(roff):
    """The words of a man page without its markup, one line per source line."""
    out = []
    for line in roff.splitlines():
        if line.startswith(".\\\""):
            continue
        line = re.sub(r"^\.(B|I|BR|IR|RB|RI|BI|IB|SH|SS|TP|PP|IP|RS|RE|EX|EE|TH|nf|fi)\b ?", "",
                      line)
        line = re.sub(r'\\f[BIRP]|\\f\(CW|\\&|\\c|"', "", line).replace("\\-", "-")
        line = line.replace("\\(mu", "×").replace("\\(em", "—").replace("\\e", "\\")
        out.append(line)
    return "\n".join(out)


def man_sections(roff):
    """{section title: its roff text} of a man page."""
    sections, title, body = {}, "", []
    for line in roff.splitlines():
        if line.startswith(".SH "):
            sections[title] = "\n".join(body)
            title, body = line[4:].strip().strip('"'), []
        else:
            body.append(line)
    sections[title] = "\n".join(body)
    return sections


def prose(markdown):
    """A Markdown page's words: links reduced to their text, no code markup."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    return text.replace("`", "").replace("**", "").replace("*", "")


def normalized(text):
    return re.sub(r"\s+", " ", text.replace("\n", " ")).strip().lower()


def long_sentences(text):
    text = normalized(re.sub(r"^\s*([-|#>]+|\d+\.)\s+", " ", text, flags=re.M))
    return [s.strip() for s in re.split(r"(?<=[.;:!?])\s+", text)
            if len(s.split()) >= LONG_SENTENCE_WORDS]


def markdown_exit_tables(text):
    """The exit codes defined by table rows or list items of a Markdown page."""
    codes = set()
    for line in text.splitlines():
        for pattern in (r"^\|\s*`?(\d+)`?\s*\|", r"\|\s*`?(\d+)`?\s*\|\s*$",
                        r"^\s*[-*]\s+`?(\d+)`?\s*[:—]"):
            m = re.search(pattern, line)
            if m and m.group(1) in EXIT_CODES:
                codes.add(m.group(1))
    return codes


def man_exit_items(roff):
    return set(re.findall(r"^\.TP\n\.B (\d+)$", roff, flags=re.M)) & EXIT_CODES


def slug(heading):
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(markdown):
    seen, result = {}, set()
    in_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        m = re.match(r"^#{1,6} (.*)$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            result.add(s if n == 0 else f"{s}-{n}")
            seen[s] = n + 1
    return result


def without_code_blocks(markdown):
    return re.sub(r"^```.*?^```", "", markdown, flags=re.M | re.S)


def main():
    source, help_file = sys.argv[1], sys.argv[2]
    problems = []
    help_options = set(read(help_file).split()) | {"--help"}
    readme = os.path.join(source, "README.md")
    docs_dir = os.path.join(source, "docs")
    pages = [readme] + sorted(os.path.join(docs_dir, p) for p in os.listdir(docs_dir)
                              if p.endswith(".md"))
    home = os.path.join(docs_dir, "guarantees.md")
    man_dir = os.path.join(source, "man")
    roff = read(os.path.join(man_dir, "rcoord.1"))
    sections = man_sections(roff)
    # the hand-written prose of the group pages, rcoord-GROUP(1)
    group_roffs = {f"man/{f}": read(os.path.join(man_dir, f)) for f in sorted(os.listdir(man_dir))
                   if f.startswith("rcoord-") and f.endswith(".1.in")}
    if len(group_roffs) < 15:
        problems.append(f"only {len(group_roffs)} man/rcoord-GROUP.1.in files: the listing broke")
    rel = lambda p: os.path.relpath(p, source)

    # --- the exit codes: rcoord(1), EXIT STATUS, and nowhere else in full ------------------
    home_codes = man_exit_items(sections.get("EXIT STATUS", ""))
    if home_codes != EXIT_CODES:
        problems.append(f"rcoord(1) EXIT STATUS defines {sorted(home_codes)}, not every code "
                        f"{sorted(EXIT_CODES)}")
    for title, body in sections.items():
        codes = man_exit_items(body)
        if title != "EXIT STATUS" and len(codes) >= 4:
            problems.append(f"rcoord(1) section {title} has a second exit-code table "
                            f"({sorted(codes)}): link to EXIT STATUS instead")
    for where, text in group_roffs.items():
        codes = man_exit_items(text)
        if len(codes) >= 4:
            problems.append(f"{where} has a second exit-code table ({sorted(codes)}): link to "
                            "rcoord(1), EXIT STATUS instead")
    for page in pages:
        codes = markdown_exit_tables(read(page))
        if len(codes) >= 4:
            problems.append(f"{rel(page)} has a second exit-code table ({sorted(codes)}): "
                            "link to rcoord(1), EXIT STATUS instead")

    # --- the guarantees: docs/guarantees.md, and nowhere else -----------------------------
    stated = long_sentences(prose(read(home)))
    others = {rel(p): normalized(prose(read(p))) for p in pages if p != home}
    others["man/rcoord.1"] = normalized(man_text(roff))
    for where, text in group_roffs.items():
        others[where] = normalized(man_text(text))
    for where, text in others.items():
        for sentence in stated:
            if sentence in text:
                problems.append(f"{where} states again what docs/guarantees.md states: "
                                f"'{sentence[:120]}...': link to it instead")
    for page in pages:
        if page == home:
            continue
        for line in without_code_blocks(read(page)).splitlines():
            if re.match(r"^#{1,6} .*guarantee", line, flags=re.I):
                problems.append(f"{rel(page)}: a section on guarantees ('{line}'): they live "
                                "in docs/guarantees.md")
    for where, text in [("rcoord(1)", roff)] + list(group_roffs.items()):
        for title in man_sections(text):
            if "GUARANTEE" in title.upper():
                problems.append(f"{where} has a section {title}: the guarantees live in "
                                "docs/guarantees.md")
    # the README says nothing that a page of docs/ says again
    docs_text = {rel(p): normalized(prose(read(p))) for p in pages if p != readme}
    for sentence in long_sentences(prose(read(readme))):
        for where, text in docs_text.items():
            if sentence in text:
                problems.append(f"README.md and {where} both say '{sentence[:120]}...'")

    # --- links and anchors between the pages ----------------------------------------------
    links = 0
    for page in pages:
        text = without_code_blocks(read(page))
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target):
                continue  # a web address
            links += 1
            path, _, anchor = target.partition("#")
            file = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(file):
                problems.append(f"{rel(page)}: the link {target} reaches no file")
                continue
            if anchor and file.endswith(".md") and anchor not in anchors(read(file)):
                problems.append(f"{rel(page)}: the link {target}: {rel(file)} has no heading "
                                f"#{anchor}")
    if links < 20:
        problems.append(f"only {links} links between the pages: the parsing broke")

    # --- every option shown is one that --help shows ---------------------------------------
    shown = {}
    for page in pages:
        for option in set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", read(page))):
            shown.setdefault(option, rel(page))
    for where, text in [("man/rcoord.1", roff)] + list(group_roffs.items()):
        for option in set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", man_text(text))):
            shown.setdefault(option, where)
    for option, where in sorted(shown.items()):
        if option in help_options or option in OTHER_TOOLS or option in DEPRECATED:
            continue
        problems.append(f"{where} shows {option}, which no `rcoord ... --help` shows")
    for option, tool in OTHER_TOOLS.items():
        if option in help_options:
            problems.append(f"{option} is listed as {tool}'s, but rcoord's --help shows it")

    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    print(f"{len(pages)} pages, {links} links, {len(shown)} options, {len(stated)} statements "
          "of guarantees")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
