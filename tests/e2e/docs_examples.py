#!/usr/bin/env python3
"""Runs every example of the README and docs/ against real servers (docs_examples_test.sh).

An example is a fenced block tagged console (the `$ ` lines), sh, cron (the command of each
line), ini (ExecStart=) or yaml (the `rcoord` lines of a CI script) that runs rcoord, and a
toml block (a config file, given to `rcoord --config FILE ping`). An sh block that starts
with `#!` and names itself in its first comment (`# send-mail.sh: ...`) is a script the
other examples run: it is written into the sandbox, not run. Blocks without a tag are
pictures (trees, tables of figures) and are not run.

Each command line runs in the sandbox, in one bash per page (so a TOKEN set by one line is
there for the next), with `rcoord` on PATH being a wrapper that records the exit code of every
call. A call fails the test when it exits 2 (usage: a renamed option, a verb gone), 3 or 4
(connection, server) unless its line says `exit N` for that code, or when it runs past the
time limit without being a call that waits. Where a console example shows `field: value`
lines or a JSON object, those field names must be in what the call printed when it exits 0.

Usage: docs_examples.py SOURCE_DIR SANDBOX SUBSTITUTIONS_FILE
SUBSTITUTIONS_FILE holds lines `FROM<TAB>TO`: the addresses and paths of the examples
(redis.internal, 10.0.0.N, /etc/rcoord/password...) and the servers and files that stand for
them here; a line `re:FROM<TAB>TO` is a regular expression.
"""
import json
import os
import re
import subprocess
import sys

RUN_TAGS = {"console", "sh", "cron", "ini", "yaml"}
WAITING = re.compile(r"\b(wait|observe|consume)\b|--follow|--watch|--wait")
RCOORD_CALL = re.compile(r"(^|[\s|;&(]|\$\()rcoord\s")


def fenced_blocks(path):
    """(tag, first line number, lines) of each fenced block of a Markdown file."""
    blocks, tag, start, body = [], None, 0, []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("```"):
                if tag is None:
                    tag, start, body = line[3:].strip(), number, []
                else:
                    blocks.append((tag, start, body))
                    tag = None
            elif tag is not None:
                body.append(line)
    return blocks


def joined(lines):
    """Lines with their backslash continuations joined."""
    out, pending = [], ""
    for line in lines:
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def strip_comment(command):
    """The command without a trailing `# comment` (one after a space, outside quotes)."""
    quote = None
    for i, c in enumerate(command):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or command[i - 1] in " \t"):
            return command[:i].rstrip(), command[i:]
    return command, ""


def console_steps(lines):
    """(command, comment, expected output lines) for each `$ ` line of a console block."""
    steps = []
    for line in joined(lines):
        if line.startswith("$ "):
            command, comment = strip_comment(line[2:])
            steps.append([command, comment, []])
        elif steps:
            steps[-1][2].append(line)
    return steps


def cron_command(line):
    fields = line.split()
    # /etc/cron.d lines have a sixth field: the user
    skip = 6 if len(fields) > 6 and not fields[5].startswith(("rcoord", "/")) else 5
    return " ".join(fields[skip:])


def steps_of(tag, lines):
    """The commands of one block, as (command, comment, expected output lines)."""
    if tag == "console":
        return console_steps(lines)
    if tag == "sh":
        steps = []
        for line in joined(lines):
            command, comment = strip_comment(line)
            if command.strip():
                steps.append((command, comment, []))
        return steps
    if tag == "cron":
        return [(cron_command(l), "", []) for l in lines if l.strip() and not l.startswith("#")]
    if tag == "ini":
        return [(l.split("=", 1)[1], "", []) for l in joined(lines) if l.startswith("ExecStart=")]
    if tag == "yaml":
        steps = []
        for line in lines:
            text = line.strip()
            text = text[2:] if text.startswith("- ") else text
            if text.startswith("rcoord "):
                command, comment = strip_comment(text)
                steps.append((command, comment, []))
        return steps
    return []


def ini_environment(lines):
    env = {}
    for line in lines:
        if line.startswith("Environment="):
            name, value = line[len("Environment="):].split("=", 1)
            env[name] = value
    return env


def substitute(text, substitutions):
    for pattern, replacement in substitutions:
        text = pattern.sub(lambda _m, r=replacement: r, text)
    return text


def expected_fields(output_lines):
    """The field names a console example shows: `name: value` lines and JSON objects."""
    names = set()
    for line in output_lines:
        m = re.match(r"^([a-z_]+): ", line + " ")
        if m and m.group(1) != "rcoord":  # `rcoord: ...` is a message on stderr
            names.add(m.group(1))
        elif line.startswith("{") and "..." not in line:
            try:
                names.update(json.loads(line).keys())
            except json.JSONDecodeError:
                pass
    return names


def printed_fields(text):
    names = set()
    for line in text.splitlines():
        m = re.match(r"^([a-z_]+):( |$)", line)
        if m:
            names.add(m.group(1))
        elif line.startswith("{"):
            try:
                names.update(json.loads(line).keys())
            except json.JSONDecodeError:
                pass
    return names


class Page:
    """The examples of one page, run in one bash, step by step."""

    def __init__(self, path, sandbox, substitutions):
        self.path, self.sandbox, self.subs = path, sandbox, substitutions
        self.steps = []  # (block line, command, comment, expected, env)
        self.configs = []  # (block line, toml text)

    def collect(self):
        for tag, start, lines in fenced_blocks(self.path):
            if tag == "sh" and lines and lines[0].startswith("#!"):
                continue  # a script of the examples: written into the sandbox beforehand
            if tag == "toml":
                self.configs.append((start, substitute("\n".join(lines), self.subs)))
                continue
            if tag not in RUN_TAGS:
                continue
            steps = steps_of(tag, lines)
            if not any(RCOORD_CALL.search(" " + c) for c, _, _ in steps):
                continue  # a block of another tool (cmake, ctest...), not an rcoord example
            env = ini_environment(lines) if tag == "ini" else {}
            for command, comment, expected in steps:
                self.steps.append((start, substitute(command, self.subs), comment, expected,
                                   {k: substitute(v, self.subs) for k, v in env.items()}))
        return len(self.steps) + len(self.configs)

    def script(self, outdir):
        """One bash script for the page: each step's output kept apart, its calls logged."""
        parts = ["cd \"$DOCS_SANDBOX\"", "exec </dev/null"]
        for i, (_, command, _, _, env) in enumerate(self.steps):
            exports = "".join(f"export {k}={json.dumps(v)}; " for k, v in env.items())
            parts.append(f"export DOCS_STEP={i}")
            # a step that may `exit` (`... || exit 1`) runs in a subshell, the others in this
            # shell, so that what a step sets (TOKEN=...) is there for the next
            opening, closing = ("(", ")") if re.search(r"\bexit\b", command) else ("{", "}")
            parts.append(f"{opening} {exports}{command}\n{closing} >{outdir}/{i}.out "
                         f"2>{outdir}/{i}.err")
        return "\n".join(parts) + "\n"


def calls_of(log_path):
    calls = {}
    if os.path.exists(log_path):
        with open(log_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                step, rc, timed_out, args = line.rstrip("\n").split("\t", 3)
                calls.setdefault(int(step), []).append((int(rc), timed_out == "1", args))
    return calls


def check_page(page, sandbox):
    name = os.path.relpath(page.path, sys.argv[1])
    problems = []
    outdir = os.path.join(sandbox, "out", name.replace("/", "_"))
    os.makedirs(outdir, exist_ok=True)
    log = os.path.join(outdir, "calls.log")
    env = dict(os.environ, DOCS_CALL_LOG=log)
    script = page.script(outdir)
    done = subprocess.run(["bash", "-c", script], env=env, cwd=sandbox, timeout=900,
                          capture_output=True, text=True)
    if done.returncode != 0 and not page.steps:
        problems.append(f"{name}: the examples' shell failed: {done.stderr.strip()}")
    calls = calls_of(log)
    for i, (line, command, comment, expected, _) in enumerate(page.steps):
        where = f"{name}:{line}: {command}"
        step_calls = calls.get(i, [])
        if RCOORD_CALL.search(" " + command) and not step_calls:
            err = open(os.path.join(outdir, f"{i}.err"), encoding="utf-8", errors="replace").read()
            problems.append(f"{where}: rcoord never ran ({err.strip()[:200]})")
            continue
        said = {int(n) for n in re.findall(r"\bexit (\d+)", comment)}
        for rc, timed_out, args in step_calls:
            if timed_out:
                if not WAITING.search(args):
                    problems.append(f"{where}: `rcoord {args}` did not end in time")
                continue
            if rc in (2, 3, 4) and rc not in said:
                err = open(os.path.join(outdir, f"{i}.err"), encoding="utf-8",
                           errors="replace").read().strip()
                problems.append(f"{where}: `rcoord {args}` exited {rc}: {err[:300]}")
        fields = expected_fields(expected)
        # a "no" (exit 1) prints less, or nothing: what a yes shows is what is checked
        if fields and step_calls and step_calls[-1][0] == 0 and not step_calls[-1][1]:
            out = open(os.path.join(outdir, f"{i}.out"), encoding="utf-8", errors="replace").read()
            missing = fields - printed_fields(out)
            if missing:
                problems.append(f"{where}: shows {sorted(missing)}, which it does not print "
                                f"(it printed: {out.strip()[:300]!r})")
    for line, text in page.configs:
        path = os.path.join(sandbox, "config-example.toml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        done = subprocess.run(["rcoord", "--config", path, "ping"], env=dict(os.environ),
                              capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            problems.append(f"{name}:{line}: the config file example does not work: "
                            f"{done.stderr.strip()}")
    return problems


def read_substitutions(path):
    subs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            frm, to = line.split("\t", 1)
            if frm.startswith("re:"):
                subs.append((re.compile(frm[3:]), to))
            else:
                subs.append((re.compile(re.escape(frm)), to))
    return subs


def main():
    source, sandbox, subs_file = sys.argv[1], sys.argv[2], sys.argv[3]
    subs = read_substitutions(subs_file)
    pages = [os.path.join(source, "README.md")]
    docs = os.path.join(source, "docs")
    pages += sorted(os.path.join(docs, p) for p in os.listdir(docs) if p.endswith(".md"))
    # The scripts the examples run, as the pages show them.
    for page in pages:
        for tag, _, lines in fenced_blocks(page):
            if tag == "sh" and lines and lines[0].startswith("#!") and len(lines) > 1:
                m = re.match(r"#\s*([\w.-]+):", lines[1])
                if m:
                    target = os.path.join(sandbox, m.group(1))
                    with open(target, "w", encoding="utf-8") as f:
                        f.write("\n".join(lines) + "\n")
                    os.chmod(target, 0o755)
    problems, examples = [], 0
    for path in pages:
        page = Page(path, sandbox, subs)
        count = page.collect()
        if not count:
            continue
        examples += count
        # each page starts from empty servers, as a reader trying it would
        subprocess.run(["bash", "-c", os.environ["DOCS_RESET"]], check=True)
        problems += check_page(page, sandbox)
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    print(f"{examples} examples run")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
