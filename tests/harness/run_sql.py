#!/usr/bin/env python3
"""SQL test runner: runs test-sql/*.test files through the sqlite3 shell.

Usage: tests/harness/run-sql.sh [--show] [FILE.test ... | NAME-FILTER ...]

  FILE.test     run these files (default: every test-sql/*.test, sorted)
  NAME-FILTER   any other argument: run every file, but report only the tests
                whose "file.test: test name" contains one of the filters
                (case-insensitive). The whole file still runs, since its
                blocks share state.
  --show        also print each test's actual output (as "#   | line"),
                handy when writing the expected output of a new test.

Test file format
----------------
    -- anything before the first "-- test:" line is setup
    .shell python3 tests/harness/fixtures.py lesson Lesson
    CREATE VIRTUAL TABLE t USING dynamodb(table=Lesson);
    -- test: pattern 1, profile and orders in one query
    SELECT SK FROM t WHERE PK = 'CUSTOMER#alice';
    -- expect:
    ORDER#2026-01-05#o-100
    PROFILE
    -- test: next test
    ...

* "-- env: NAME=VALUE" (anywhere) sets NAME for the whole file's sqlite3
  process; an empty VALUE unsets it. Placeholders work in VALUE.
* "-- requires: FEATURE" (before the first "-- test:"; several features
  separated by commas) says the file needs a part of DynamoDB that a test
  server may lack. Features: see FEATURES below ("transactions":
  TransactWriteItems; "ttl": UpdateTimeToLive; "streams": a table's
  StreamSpecification; "multikey": a GSI key of several attributes). When
  SQL_TEST_LACKS names one of them, the file is
  not run and the line "# skip FILE on SERVER: no CALL (N tests)" says so.
  An unknown feature, or a near miss of the marker, is a format error.
* Lines before the first "-- test: NAME" line are the setup. Their output
  must be empty; otherwise a failed test "<file>: setup" is reported.
* "-- test: NAME" starts a test. Its SQL / dot-commands run until the line
  "-- expect:"; the lines after it, up to the next "-- test:" line or the end
  of the file, are the exact expected output: stdout and stderr merged, in
  the order written. Trailing blank lines (of expected and actual) are
  ignored; everything else, including leading and trailing spaces, counts.
  Both marker lines must be written exactly so (a line like "--test:" or
  "-- Expect:" is reported as a format error rather than silently ignored).
* Every block of a file runs in ONE sqlite3 process, in file order, so
  blocks share state (tables, temp tables, settings like .mode).
* The script starts with the prelude
      .bail off / .headers off / .mode list / .load build/dynamodb
  and runs in a fresh database file (under .test-tmp/sql/), cwd = repo root.
* The runner appends a line ";" after each block, so a block whose last
  statement lacks its semicolon does not swallow the next block.
* Placeholders replaced everywhere in the file before running:
      @DB@   path of this file's database file (e.g. for ".open @DB@")
      @TMP@  a scratch directory private to this file
      @EXT@  the extension path used by the prelude's .load
      @ENDPOINT@  AWS_ENDPOINT_URL_DYNAMODB (e.g. in an expected error)
* DynamoDB is shared by all files: use table names unique to your file.

Output normalization (applied to the actual output only)
--------------------------------------------------------
* "Parse error near line N: MSG"   -> "Parse error: MSG"
  "Runtime error near line N: MSG" -> "Runtime error: MSG"
  "Error: near line N: MSG"        -> "Error: MSG"   (older shells)
* The two lines the shell prints after a parse error to show where it is
  (the statement echoed on one line, then "    ^--- error here") are dropped.
* Nothing else: the shell appends " (CODE)" to errors whose result code is
  not SQLITE_ERROR, e.g. "Runtime error: UNIQUE constraint failed: t.a (19)",
  and dot-command errors read "Error: ...".

Environment
-----------
  AWS_ENDPOINT_URL_DYNAMODB  expected to be set (tests/harness/run-all.sh does it)
  AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_REGION default to
      test / test / us-east-1; AWS_PROFILE is unset.
  SQLITE3            sqlite3 shell to use (default: sqlite3)
  DDB_EXT            extension path for .load (default: build/dynamodb)
  DDB_TEST_NO_LOAD=1 leave the .load out of the prelude (self-tests)
  SQLITE3_PRELOAD    library to LD_PRELOAD into sqlite3 (e.g. libasan.so for
                     an ASan-built extension); python3 run from .shell runs
                     without LD_PRELOAD (a shim first on PATH, which is also
                     a python3 that can import boto3)
  SQL_TEST_TIMEOUT   seconds per file before sqlite3 is killed (default 300)
  SQL_TEST_SERVER    name of the server (e.g. dynalite): prefixes every
                     test's name ("ok 5 - dynalite: file.test: name") and
                     names the server in skip lines
  SQL_TEST_LACKS     features (as in "-- requires:") the server lacks,
                     separated by commas or spaces: files that require one
                     are skipped, each with a "# skip" line
  KEEP_TEST_TMP=1    keep the generated script and db even when all pass

Results are TAP-like lines "ok N - file.test: name" / "not ok N - ...", a
unified diff (expected vs actual) under each failure, prefixed with "#", and a
plan line "1..N" at the end. Exit status 1 if any test failed.
"""

import difflib
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile

import preload  # tests/harness/preload.py, beside this file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEST_DIR = os.path.join(ROOT, "test-sql")
TMP_BASE = os.path.join(ROOT, ".test-tmp", "sql")

TEST_RE = re.compile(r"^-- test:[ \t]*(.*?)[ \t]*$")
EXPECT_RE = re.compile(r"^-- expect:[ \t]*$")
NEAR_MISS_RE = re.compile(r"^\s*--\s*(test|expect)\s*:", re.IGNORECASE)
REQUIRES_RE = re.compile(r"^-- requires: *(.*?) *$")
REQUIRES_NEAR_RE = re.compile(r"^\s*--\s*requires?\s*:", re.IGNORECASE)

# What "-- requires: FEATURE" may name: the feature and the DynamoDB calls
# it stands for (what a skip line says the server lacks).
FEATURES = {
    "transactions": "TransactWriteItems",
    "ttl": "UpdateTimeToLive",
    "streams": "StreamSpecification",
    "table_arn": "TableName ARNs",
    "multikey": "multi-attribute GSI keys",
}


def parse_features(text):
    """Words of a "-- requires:" line or of SQL_TEST_LACKS -> (known, unknown)."""
    words = [w for w in re.split(r"[\s,]+", text) if w]
    return ([w for w in words if w in FEATURES],
            [w for w in words if w not in FEATURES])

ERR_NEAR_LINE_RE = re.compile(
    r"^(Parse error|Runtime error|Error:?) near line \d+: ")
CARET_RE = re.compile(r"^ *\^--- error here$")


class Block:
    def __init__(self, name, lineno):
        self.name = name          # None for setup
        self.lineno = lineno
        self.sql = []
        self.expected = []
        self.has_expect = False
        self.format_errors = []
        self.requires = []        # setup only: the "-- requires:" features


def parse_test_file(text):
    """Split a .test file into [setup Block, test Block, ...]."""
    setup = Block(None, 1)
    blocks = [setup]
    cur = setup
    in_expect = False
    for n, line in enumerate(text.split("\n"), 1):
        m = TEST_RE.match(line)
        if m:
            cur = Block(m.group(1), n)
            if not cur.name:
                cur.format_errors.append(
                    "line %d: '-- test:' without a name" % n)
                cur.name = "(line %d)" % n
            blocks.append(cur)
            in_expect = False
            continue
        if EXPECT_RE.match(line):
            if cur.name is None:
                setup.format_errors.append(
                    "line %d: '-- expect:' before the first '-- test:'" % n)
            elif in_expect:
                cur.format_errors.append(
                    "line %d: second '-- expect:' in one test" % n)
            cur.has_expect = True
            in_expect = True
            continue
        if REQUIRES_NEAR_RE.match(line):
            m = REQUIRES_RE.match(line)
            if not m:
                cur.format_errors.append(
                    "line %d: looks like a marker but is not exactly "
                    "'-- requires: FEATURE': %r" % (n, line))
            elif cur.name is not None:
                cur.format_errors.append(
                    "line %d: '-- requires:' after the first '-- test:' "
                    "(it is for the whole file)" % n)
            else:
                known, unknown = parse_features(m.group(1))
                if unknown or not known:
                    setup.format_errors.append(
                        "line %d: '-- requires:' names no known feature "
                        "(%s; known: %s)" % (n, ", ".join(unknown) or "none",
                                            ", ".join(sorted(FEATURES))))
                setup.requires += known
        elif NEAR_MISS_RE.match(line):
            cur.format_errors.append(
                "line %d: looks like a marker but is not exactly "
                "'-- test: NAME' or '-- expect:': %r" % (n, line))
        if in_expect:
            cur.expected.append(line)
        else:
            cur.sql.append(line)
    for b in blocks[1:]:
        if not b.has_expect:
            b.format_errors.append(
                "line %d: test has no '-- expect:' line" % b.lineno)
    return blocks


def strip_trailing_blank(lines):
    lines = list(lines)
    while lines and lines[-1].strip() == "":
        lines.pop()
    return lines


def normalize(lines):
    out = []
    for line in lines:
        if CARET_RE.match(line):
            # drop the caret line and the echoed statement just before it
            if out:
                out.pop()
            continue
        m = ERR_NEAR_LINE_RE.match(line)
        if m:
            head = m.group(1)
            if head.startswith("Error"):
                head = "Error"
            line = head + ": " + line[m.end():]
        out.append(line)
    return out


def signal_name(num):
    try:
        return signal.Signals(num).name
    except ValueError:
        return "signal %d" % num


class Reporter:
    def __init__(self, filters, show, server=""):
        self.n = 0
        self.failed = 0
        self.filters = [f.lower() for f in filters]
        self.show = show
        self.server = server        # SQL_TEST_SERVER: prefix of every name
        self.skipped_files = 0
        self.skipped_tests = 0

    def wanted(self, label):
        if not self.filters:
            return True
        low = label.lower()
        return any(f in low for f in self.filters)

    def result(self, label, ok, expected=None, actual=None, notes=()):
        self.n += 1
        if not ok:
            self.failed += 1
        print("%s %d - %s%s" % ("ok" if ok else "not ok", self.n,
                                self.server + ": " if self.server else "",
                                label))
        for note in notes:
            print("# " + note)
        if not ok and expected is not None and actual is not None:
            diff = difflib.unified_diff(expected, actual, "expected", "actual",
                                        lineterm="", n=3)
            for d in diff:
                print("#   " + d)
        if self.show and actual is not None:
            for a in actual:
                print("#   | " + a)
        sys.stdout.flush()

    def skip(self, fname, ntests, missing):
        """A file not run: the server lacks `missing` (feature names)."""
        self.skipped_files += 1
        self.skipped_tests += ntests
        print("# skip %s on %s: no %s (%d test%s)"
              % (fname, self.server or "this server",
                 ", ".join(FEATURES[f] for f in missing), ntests,
                 "" if ntests == 1 else "s"))
        sys.stdout.flush()


def run_file(path, reporter, env, lacks=()):
    fname = os.path.basename(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    head = parse_test_file(text)
    missing = [f for f in FEATURES
               if f in head[0].requires and f in lacks]
    if missing and not head[0].format_errors:
        if any(reporter.wanted("%s: %s" % (fname, b.name)) for b in head[1:]):
            reporter.skip(fname, len(head) - 1, missing)
        return

    os.makedirs(TMP_BASE, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", fname.rsplit(".test", 1)[0])
    workdir = tempfile.mkdtemp(prefix=stem + ".", dir=TMP_BASE)
    dbfile = os.path.join(workdir, "test.db")
    scratch = os.path.join(workdir, "tmp")
    os.makedirs(scratch)
    ext = env.get("DDB_EXT", "build/dynamodb")
    for ph, val in (("@DB@", dbfile), ("@TMP@", scratch), ("@EXT@", ext),
                    ("@ENDPOINT@", env.get("AWS_ENDPOINT_URL_DYNAMODB", ""))):
        text = text.replace(ph, val)

    # "-- env: NAME=VALUE" lines set (an empty VALUE: unset) a variable for
    # this file's sqlite3 process, e.g. AWS_CONFIG_FILE=@TMP@/config
    file_env = {}
    for m in re.finditer(r"^-- env: ([A-Za-z_][A-Za-z0-9_]*)=(.*)$", text, re.M):
        file_env[m.group(1)] = m.group(2)

    blocks = parse_test_file(text)
    token = secrets.token_hex(6)
    marker = "###BLOCK-%s " % token
    end_marker = "###END-%s" % token

    script = [".bail off", ".headers off", ".mode list"]
    if env.get("DDB_TEST_NO_LOAD") != "1":
        script.append(".load " + ext)
    for i, b in enumerate(blocks):
        if i > 0:
            script.append(".print %s%d" % (marker, i))
        script.extend(b.sql)
        script.append(";")
    script.append(".print " + end_marker)
    script_path = os.path.join(workdir, "script.sql")
    with open(script_path, "w", encoding="utf-8") as f:
        f.write("\n".join(script) + "\n")

    sqlite3 = env.get("SQLITE3", "sqlite3")
    cmd = [sqlite3, "-batch", dbfile]
    if shutil.which("stdbuf"):
        # sqlite3 writes results to stdout (block-buffered on a pipe) and
        # errors to stderr: make both unbuffered so that merging them into
        # one pipe keeps the order in which they were written.
        cmd = ["stdbuf", "-o0", "-e0"] + cmd
    run_env = dict(env)
    for k, v in file_env.items():
        if v:
            run_env[k] = v
        else:
            run_env.pop(k, None)
    preload.sqlite3_env(run_env, env)
    timeout = float(env.get("SQL_TEST_TIMEOUT", "300"))
    crash_note = None
    try:
        with open(script_path, "rb") as stdin:
            # Own process group, so that on timeout sqlite3 and whatever its
            # .shell commands started can be killed together.
            proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, cwd=ROOT,
                                    env=run_env, start_new_session=True)
        try:
            raw, _ = proc.communicate(timeout=timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            raw, _ = proc.communicate()
            rc = None
            crash_note = "*** sqlite3 killed after %gs timeout" % timeout
        except BaseException:       # e.g. Ctrl-C: don't leave sqlite3 behind
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            raise
    except OSError as e:
        raw, rc = b"", None
        crash_note = "*** cannot run %s: %s" % (sqlite3, e)
    if rc is not None and rc < 0:
        crash_note = "*** sqlite3 died with %s" % signal_name(-rc)

    out_lines = raw.decode("utf-8", errors="replace").split("\n")
    if out_lines and out_lines[-1] == "":
        out_lines.pop()

    # Split the output at the markers.
    segments = {0: []}      # block index -> output lines
    cur = 0
    after_end = None
    for line in out_lines:
        if after_end is not None:
            after_end.append(line)
            continue
        if line.startswith(marker):
            try:
                cur = int(line[len(marker):])
            except ValueError:
                pass
            else:
                segments[cur] = []
                continue
        if line == end_marker:
            after_end = []
            continue
        segments[cur].append(line)
    reached_end = after_end is not None
    last_started = cur

    failed = False
    # setup
    setup = blocks[0]
    setup_out = strip_trailing_blank(normalize(segments.get(0, [])))
    notes = list(setup.format_errors)
    if not reached_end and last_started == 0 and crash_note:
        setup_out.append(crash_note)
    if setup_out or notes:
        failed = True
        reporter.result("%s: setup" % fname, False, [], setup_out,
                        ["format error: " + e for e in notes])

    for i, b in enumerate(blocks[1:], 1):
        label = "%s: %s" % (fname, b.name)
        expected = strip_trailing_blank(b.expected)
        notes = ["format error: " + e for e in b.format_errors]
        if i in segments:
            actual = strip_trailing_blank(normalize(segments[i]))
            if not reached_end and i == last_started:
                if crash_note:
                    actual.append(crash_note)
                else:
                    actual.append("*** sqlite3 stopped in this block "
                                  "(exit status %s)" % rc)
                    notes.append("a statement in this block may be unterminated "
                                 "(string literal, comment or trigger body?)")
        else:
            actual = ["*** block never ran (sqlite3 stopped earlier)"]
        ok = (actual == expected) and not notes
        if not ok:
            failed = True
        if reporter.wanted(label):
            reporter.result(label, ok, expected, actual, notes)

    if reached_end:
        tail = strip_trailing_blank(normalize(after_end))
        if crash_note:
            tail.append(crash_note)
        if tail:
            failed = True
            reporter.result("%s: teardown" % fname, False, [], tail,
                            ["output after the last test (e.g. a sanitizer "
                             "report at exit) or a crash at exit"])
    if failed or env.get("KEEP_TEST_TMP") == "1":
        print("# %s: script and db kept in %s" % (fname, os.path.relpath(workdir, ROOT)))
    else:
        shutil.rmtree(workdir, ignore_errors=True)


def find_python_with_boto3(env):
    """Absolute path of a python3 interpreter that can import boto3."""
    cands = []
    for d in env.get("PATH", "").split(os.pathsep):
        c = os.path.join(d, "python3")
        if os.access(c, os.X_OK) and c not in cands:
            cands.append(c)
    cands += [sys.executable, "/usr/bin/python3"]
    for c in cands:
        try:
            r = subprocess.run([c, "-c", "import sys, boto3; print(sys.executable)"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env=env, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.decode().strip()
    return None


def install_python_shim(env):
    """Put a `python3` first on PATH for the tests' .shell commands: one that
    can import boto3, and that runs without LD_PRELOAD (a sanitizer runtime
    preloaded into sqlite3 would otherwise make python print leak reports)."""
    real = find_python_with_boto3(env)
    if not real:
        print("# warning: no python3 with boto3 found; "
              "'.shell python3 tests/harness/fixtures.py' will fail")
        return
    bindir = os.path.join(TMP_BASE, "bin")
    os.makedirs(bindir, exist_ok=True)
    shim = os.path.join(bindir, "python3")
    tmp = shim + ".%d" % os.getpid()
    with open(tmp, "w") as f:
        f.write("#!/bin/sh\nunset LD_PRELOAD\nexec '%s' \"$@\"\n" % real)
    os.chmod(tmp, 0o755)
    os.replace(tmp, shim)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")


def main(argv):
    show = False
    files, filters = [], []
    for a in argv:
        if a == "--show":
            show = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.endswith(".test") and os.path.isfile(a):
            files.append(os.path.abspath(a))
        elif a.endswith(".test") and os.path.isfile(os.path.join(TEST_DIR, a)):
            files.append(os.path.join(TEST_DIR, a))
        else:
            filters.append(a)
    if not files:
        if os.path.isdir(TEST_DIR):
            files = sorted(os.path.join(TEST_DIR, f) for f in os.listdir(TEST_DIR)
                           if f.endswith(".test"))
    env = dict(os.environ)
    env.pop("AWS_PROFILE", None)
    env.setdefault("AWS_ACCESS_KEY_ID", "test")
    env.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    env.setdefault("AWS_REGION", "us-east-1")
    env.setdefault("AWS_DEFAULT_REGION", env["AWS_REGION"])
    env["PYTHONUNBUFFERED"] = "1"
    install_python_shim(env)
    if not env.get("AWS_ENDPOINT_URL_DYNAMODB") and env.get("DDB_TEST_NO_LOAD") != "1":
        # without it the extension would talk to real AWS
        print("# run_sql: AWS_ENDPOINT_URL_DYNAMODB is not set "
              "(use tests/harness/run-all.sh, or set it yourself)")
        return 2

    lacks, unknown = parse_features(env.get("SQL_TEST_LACKS", ""))
    if unknown:
        print("# run_sql: SQL_TEST_LACKS names unknown features: %s (known: %s)"
              % (", ".join(unknown), ", ".join(sorted(FEATURES))))
        return 2
    reporter = Reporter(filters, show, env.get("SQL_TEST_SERVER", ""))
    if not files:
        print("# no test files found in %s" % os.path.relpath(TEST_DIR, ROOT))
    for path in files:
        run_file(path, reporter, env, lacks)
    print("1..%d" % reporter.n)
    if reporter.skipped_files:
        print("# skipped on %s: %d file%s, %d tests"
              % (reporter.server or "this server", reporter.skipped_files,
                 "" if reporter.skipped_files == 1 else "s",
                 reporter.skipped_tests))
    if reporter.n == 0:
        print("# no tests ran")
    return 1 if reporter.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
