#!/usr/bin/env python3
"""The README and docs/ as a newcomer meets them (tests/suites/35-readme.sh).

  1. The README's first session, typed into `make shell`, gives the output
     the README shows: the block after `<!-- session:` is split into what
     is typed (after `sqlite> ` and `   ...> `) and what is printed; the
     typed lines go to tools/shell.sh (the script `make shell` runs: its
     own DynamoDB Local, the e-commerce example, sqlite3 with
     examples/ecommerce/shell.sql), and its output must be the printed
     lines (trailing blanks aside).
  2. `make shell` on a terminal (a pseudo-terminal): the prompt comes, a
     Ctrl-C leaves the server running and a query answers, the shell sees
     only its own endpoint and dummy credentials, and the server it
     started is stopped when the shell ends, by `.quit`, by end of input
     and by a hang-up; after a mistyped statement and `.quit`, make shell
     exits 0.
  3. The pages: the README fits (at most 250 lines), names the licence, and
     nothing a user reads points outside the repository; every relative
     link of README.md, docs/, ARCHITECTURE.md, CONTRIBUTING.md and
     examples/ leads to a file and an anchor that exist; every section and
     table of the README as it was before docs/ has a home there; docs/README.md
     lists every page.

Needs nothing from the environment: tools/shell.sh starts its own
server.  Prints TAP lines.
"""
import difflib
import glob
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
from tap import Tap  # noqa: E402

TAP = Tap("readme: ")


def read(path):
    """The text of a file of the repository; "" when it does not exist."""
    try:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return ""


# --------------------------------------------------------------------------
# 1. the session

def session_block(readme):
    """(typed lines, printed lines) of the README's session block."""
    m = re.search(r"<!-- session:[^>]*-->\s*\n```[^\n]*\n(.*?)\n```",
                  readme, re.S)
    if not m:
        return None, None
    typed, printed, started = [], [], False
    for line in m.group(1).split("\n"):
        if line.startswith("sqlite> "):
            started = True
            typed.append(line[len("sqlite> "):])
        elif line.startswith("   ...> "):
            typed.append(line[len("   ...> "):])
        elif started:
            printed.append(line.rstrip())
    return typed, printed


def check_session():
    typed, printed = session_block(read("README.md"))
    if typed is None:
        TAP.ok(False, "the README has a session block (<!-- session: ... -->)")
        return
    p = subprocess.run([os.path.join(ROOT, "tools/shell.sh")], cwd=ROOT,
                       input="\n".join(typed) + "\n", capture_output=True,
                       text=True, timeout=600)
    got = [l.rstrip() for l in p.stdout.split("\n")]
    while got and not got[-1]:
        got.pop()
    while printed and not printed[-1]:
        printed.pop()
    diff = list(difflib.unified_diff(printed, got, "README", "make shell",
                                     lineterm=""))
    TAP.ok(p.returncode == 0 and not diff,
           "the README's session (%d lines typed) prints what the README shows"
           % len(typed),
           diff + ["exit status %d" % p.returncode]
           + ["stderr: " + l for l in p.stderr.splitlines()[-10:]])


# --------------------------------------------------------------------------
# 2. make shell on a terminal

class Term:
    """`make shell` on a pseudo-terminal."""

    def __init__(self, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(ROOT)
            os.execvpe("make", ["make", "-s", "--no-print-directory",
                                "-o", "deps", "shell"], env)
        self.out = b""

    def expect(self, pattern, timeout):
        """Read until `pattern` (bytes regex) shows; the match or None."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.out)
            if m:
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                try:
                    data = os.read(self.fd, 4096)
                except OSError:
                    return None
                if not data:
                    return None
                self.out += data

    def send(self, text):
        os.write(self.fd, text.encode())

    def wait(self, timeout):
        """The exit status of make, or None if it is still running."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return status
            try:   # keep the terminal drained
                if select.select([self.fd], [], [], 0.1)[0]:
                    self.out += os.read(self.fd, 4096)
            except OSError:
                time.sleep(0.1)
        return None

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass

    def tail(self):
        text = self.out.decode("utf-8", "replace").replace("\r", "")
        return ["| " + l for l in text.split("\n")[-15:]]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:   # a zombie is not a server
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def gone(pid, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.2)
    return False


def state_dirs():
    return set(glob.glob(os.path.join(ROOT, ".test-tmp", "shell.*")))


def check_terminal():
    env = dict(os.environ)
    # what the user's environment may hold must not reach the shell
    env.update(AWS_PROFILE="someone-elses", AWS_SESSION_TOKEN="not-yours",
               AWS_ENDPOINT_URL="http://192.0.2.1:9", TERM="dumb")
    env.pop("AWS_EC2_METADATA_DISABLED", None)
    before = state_dirs()
    for how in ("quit", "mistake", "eof", "hangup"):
        t = Term(env)
        m = t.expect(rb"(?s)\(pid (\d+)\).*?sqlite> ", 300)
        if not m:
            TAP.ok(False, "make shell (%s): the prompt" % how, t.tail())
            t.kill()
            continue
        server = int(m.group(1))
        if how == "quit":
            t.out = b""
            t.send("\x03")   # Ctrl-C: for the shell, not for the server
            time.sleep(1)
            t.send("SELECT count(*) AS items FROM shop;\n")
            ok = t.expect(rb"\n21\s", 60) is not None
            TAP.ok(ok and alive(server),
                   "make shell: a prompt; after a Ctrl-C a query is answered "
                   "(21 items) and the server (pid %d) runs on" % server,
                   t.tail())
            t.out = b""
            t.send(".shell echo \"[$AWS_ENDPOINT_URL_DYNAMODB]"
                   "[$AWS_ACCESS_KEY_ID][$AWS_REGION]"
                   "[$AWS_EC2_METADATA_DISABLED][$AWS_PROFILE]"
                   "[$AWS_SESSION_TOKEN][$AWS_ENDPOINT_URL]\"\n")
            m2 = t.expect(rb"\n\[(http://127\.0\.0\.1:\d+)\]\[([^]]*)\]"
                          rb"\[([^]]*)\]\[([^]]*)\]\[([^]]*)\]\[([^]]*)\]"
                          rb"\[([^]]*)\]", 30)
            vals = [v.decode() for v in m2.groups()] if m2 else []
            TAP.ok(bool(vals) and vals[1:] == ["shell", "us-east-1", "true",
                                                "", "", ""],
                   "make shell: the shell's environment has its own endpoint, "
                   "dummy keys, a region, AWS_EC2_METADATA_DISABLED=true and "
                   "none of the user's AWS_PROFILE, AWS_SESSION_TOKEN, "
                   "AWS_ENDPOINT_URL",
                   ["got %r" % (vals,)] + t.tail())
            t.send(".quit\n")
        elif how == "mistake":
            # a mistyped statement, its error seen, then .quit: make shell
            # ends with 0 (sqlite3 itself exits 1 after any error)
            t.out = b""
            t.send("SELEC 1;\n")
            seen = t.expect(rb"error", 30) is not None
            t.send(".quit\n")
        elif how == "eof":
            t.send("\x04")
        else:
            os.close(t.fd)
        status = t.wait(60)
        stopped = gone(server)
        if how == "hangup":
            ok = status is not None and stopped
        elif how == "mistake":
            ok = seen and status is not None and os.WIFEXITED(status) and \
                os.WEXITSTATUS(status) == 0 and stopped
        else:
            ok = status is not None and os.WIFEXITED(status) and \
                os.WEXITSTATUS(status) == 0 and stopped
        TAP.ok(ok, "make shell: %s ends it (status %r) and stops its server "
               "(pid %d)" % ({"quit": ".quit", "eof": "end of input (Ctrl-D)",
                              "mistake": "a mistyped statement, then .quit,",
                              "hangup": "a hang-up (the terminal closed)"}[how],
                             status, server), t.tail())
        if status is None:
            t.kill()
        if how != "hangup":
            os.close(t.fd)
    left = state_dirs() - before
    TAP.ok(not left, "make shell leaves no server state behind", sorted(left))


# --------------------------------------------------------------------------
# 3. the pages

PAGES = (["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"]
         + sorted(glob.glob("docs/*.md", root_dir=ROOT))
         + sorted(glob.glob("examples/**/*.md", root_dir=ROOT,
                            recursive=True)))

# Every section and table of the README before docs/ existed, and the page
# that has it now (a table by its header row).
HOMES = [
    ("## Columns", "docs/reference.md"),
    ("## Options", "docs/reference.md"),
    ("## Functions and tables", "docs/reference.md"),
    ("## Views and triggers", "docs/reference.md"),
    ("## WHERE → DynamoDB call", "docs/query-planning.md"),
    ("### Joins on the full key: the `keys` column", "docs/query-planning.md"),
    ("## Indexes and items without all index keys", "docs/query-planning.md"),
    ("## Trust model", "docs/trust-model.md"),
    ("### Cache isolation and lifetime", "docs/trust-model.md"),
    ("### Untrusted database files", "docs/trust-model.md"),
    ("### fork, interrupts and bounds", "docs/trust-model.md"),
    ("### Writes and transactions", "docs/trust-model.md"),
    ("## Performance", "docs/performance.md"),
    ("## The cache", "docs/cache.md"),
    ("## Writes", "docs/writes.md"),
    ("## C API", "docs/c-api.md"),
    ("## Real AWS: credentials, TLS, retries, faults", "docs/aws.md"),
    ("## Tests", "docs/development.md"),
    ("## Rules", "CONTRIBUTING.md"),           # the old Contributing
    ("## Names", "ARCHITECTURE.md"),           # the old Layout section
    ("## Dependencies", "ARCHITECTURE.md"),
    ("## A first session", "README.md"),       # the old "A session"
    ("## Start", "README.md"),                 # the old "Two commands"
    ("| DynamoDB | key column | in `item` |", "docs/reference.md"),
    ("| option | default | meaning |", "docs/reference.md"),
    ("| WHERE on key columns | call |", "docs/query-planning.md"),
    ("| in EXPLAIN | DynamoDB | when |", "docs/query-planning.md"),
    ("| 20 ms a request | extension | boto3 | JS SDK v3 | ratio (ext / best peer) |",
     "docs/performance.md"),
    ("| goal | result |", "docs/performance.md"),
    ("| name | meaning |", "docs/cache.md"),
    ("| statement | DynamoDB (one row; several rows: see *One statement is one batch* below) |",
     "docs/writes.md"),
    ("| name | what |", "docs/reference.md"),
    ("| write | on a retry after a lost answer |", "docs/aws.md"),
    ("| operation | throttle | 500 | 503 | reset | truncated | bad crc32 | delay |",
     "docs/aws.md"),
    ("| prefix | folder | declared in | who may call it |", "ARCHITECTURE.md"),
]


def slug(heading):
    """GitHub's anchor of a heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(text):
    out = set()
    for line in text.split("\n"):
        m = re.match(r"#{1,6} (.*)", line)
        if m:
            out.add(slug(m.group(1)))
    return out


def check_pages():
    readme = read("README.md")
    n = readme.count("\n")
    TAP.ok(n <= 250, "README.md is %d lines (at most 250)" % n)
    lic = read("LICENSE") if os.path.exists(os.path.join(ROOT, "LICENSE")) \
        else ""
    TAP.ok(lic.startswith("MIT License") and "[LICENSE](LICENSE)" in readme
           and "MIT" in readme.split("## License")[-1],
           "LICENSE is the MIT licence, and the README names it")

    outside = []
    seen = set()
    for pat in ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md", "docs/*",
                "examples/**/*", "tools/*", "Makefile", "mk/*",
                "tests/suites/*", "test-sql/*.test"]:
        for path in glob.glob(pat, root_dir=ROOT, recursive=True):
            full = os.path.join(ROOT, path)
            if path in seen or not os.path.isfile(full):
                continue
            seen.add(path)
            try:
                text = read(path)
            except UnicodeDecodeError:
                continue
            for i, line in enumerate(text.split("\n"), 1):
                if re.search(r"shared/seeds|\bseeds?[ _]?0{2}\d", line, re.I) \
                        and path != "tests/docs/readme_check.py":
                    outside.append("%s:%d: %s" % (path, i, line.strip()))
    TAP.ok(not outside, "nothing a user reads points at design texts outside "
           "the repository", outside[:20])

    broken = ["%s: missing" % p for p in PAGES
              if not os.path.exists(os.path.join(ROOT, p))]
    for page in PAGES:
        text = read(page)
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page),
                                                 path)) if path else page
            full = os.path.join(ROOT, dest)
            if not os.path.exists(full):
                broken.append("%s: %s (no %s)" % (page, target, dest))
            elif anchor and (not dest.endswith(".md")
                             or anchor not in anchors(read(dest))):
                broken.append("%s: %s (no #%s in %s)"
                              % (page, target, anchor, dest))
    TAP.ok(not broken, "every relative link of the %d pages leads to a file "
           "and an anchor that exist" % len(PAGES), broken)

    homeless = [h + "  (expected in " + f + ")" for h, f in HOMES
                if h not in read(f).split("\n")]
    TAP.ok(not homeless, "every section and table of the former README has a "
           "home (%d)" % len(HOMES), homeless)

    index = read("docs/README.md")
    unlisted = [p for p in glob.glob("docs/*.md", root_dir=ROOT)
                if p != "docs/README.md" and
                "(%s)" % os.path.basename(p) not in index]
    TAP.ok(not unlisted, "docs/README.md lists every page of docs/", unlisted)


def main():
    check_pages()
    check_session()
    check_terminal()
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
