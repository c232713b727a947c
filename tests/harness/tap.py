"""TAP lines for the Python test drivers: one counter, one format.

    import os, sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "harness"))   # from tests/<folder>/
    from tap import Tap

    t = Tap("throttle: ")
    t.ok(got == want, "GetItem retried", ["want %r" % want, "got  %r" % got])
    t.skip("a TransactWriteItems case", "the server has no TransactWriteItems")
    sys.exit(t.done())

prints, on stdout, flushed after every line:

    ok 1 - throttle: GetItem retried
    not ok 2 - throttle: Query retried
    #   want 'a'
    #   got  'b'
    ok 3 - throttle: a TransactWriteItems case # SKIP the server has no TransactWriteItems
    1..3

and exits 1 (0 when no test failed).  The detail of a failing test comes
as "#   " lines: a string (split into its lines), a list, tuple or
generator (each member one or more lines), or any other value (its
str()); at most MAX_LINES lines of MAX_CHARS characters, and none for a
passing test.

What reads these lines: tests/harness/run-all.sh counts every line that
starts with "ok " as passed and every one that starts with "not ok " as
failed (an "ok ... # SKIP why" line is a passing test that says it did not
run); "# skip NAME: why (N tests)" lines (printed by a runner for what it
did not run at all) are added to "N skipped".  The plan "1..N" comes last;
the suites that join several drivers drop each plan and number the lines
again.  The numbers and names printed are the test's identity in `make
test`'s output: the prefix and the name are printed exactly as given.

The standard library only: Debian's /usr/bin/python3 and the pyenv
python3 (with boto3) both run drivers that import it, each finding it by
its path (sys.path), not as an installed package.
"""

import sys

MAX_LINES = 40   # detail lines printed for one failing test
MAX_CHARS = 300  # characters of one detail line


def detail_lines(detail):
    """The lines of a failing test's detail (see the usage above): [] for
    None or an empty value; at most MAX_LINES of MAX_CHARS characters."""
    if detail is None:
        return []
    if isinstance(detail, (str, bytes, dict)) or not hasattr(detail,
                                                             "__iter__"):
        parts = [detail]
    else:
        parts = detail  # a list, tuple or generator of lines
    lines = []
    for part in parts:
        lines.extend(str(part).splitlines())
        if len(lines) >= MAX_LINES:
            break
    return [line[:MAX_CHARS] for line in lines[:MAX_LINES]]


class Tap:
    """The TAP lines of one driver: tests numbered from 1, each named
    prefix + name; n (tests so far) and failed (failing tests so far)."""

    def __init__(self, prefix=""):
        self.prefix = prefix
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, detail=None):
        """Prints test n+1, "ok" when cond is true, else "not ok" and the
        detail's lines; returns bool(cond)."""
        cond = bool(cond)
        self.n += 1
        if not cond:
            self.failed += 1
        out = ["%s %d - %s%s" % ("ok" if cond else "not ok", self.n,
                                 self.prefix, name)]
        if not cond:
            out.extend("#   " + line for line in detail_lines(detail))
        sys.stdout.write("\n".join(out) + "\n")
        sys.stdout.flush()
        return cond

    def skip(self, name, why):
        """Prints a passing test that did not run: "ok N - NAME # SKIP why"."""
        self.ok(True, "%s # SKIP %s" % (name, why))

    def done(self):
        """Prints the plan "1..N"; returns the exit status: 1 when a test
        failed, else 0."""
        sys.stdout.write("1..%d\n" % self.n)
        sys.stdout.flush()
        return 1 if self.failed else 0
