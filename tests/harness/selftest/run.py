#!/usr/bin/env python3
"""Self-test of the test infrastructure; prints TAP lines.

1. Runs the SQL runner (tests/harness/run_sql.py, without the extension) on
   tests/harness/selftest/sample.test and checks its verdicts: tests named "pass: ..."
   must be "ok", tests named "fail: ..." must be "not ok".
2. Runs it on tests/harness/selftest/requires.test ("-- requires:
   transactions") with SQL_TEST_LACKS=transactions: skipped with its
   "# skip" line and counted, no verdict; without: run; with
   SQL_TEST_SERVER: every name prefixed; requires_bad.test (an unknown
   feature, a near miss, a marker after the first test): format errors,
   not a skip, even where the server lacks the feature; an unknown
   feature in SQL_TEST_LACKS: refused.
3. Runs tests/harness/selftest/tap_sample.py (tests/harness/tap.py's
   tests that fail on purpose) with this python3 and Debian's
   /usr/bin/python3: the exact lines, the 40-line and 300-character bounds
   of a detail, exit status 1; with "pass": 0.
4. Loads the e-commerce example (fixtures.py ecommerce) and checks that
   each of the 15 access patterns of its worksheet
   (examples/ecommerce/README.md) returns the documented items.

Needs AWS_ENDPOINT_URL_DYNAMODB (run by tests/harness/run-all.sh via
tests/suites/00-selftest.sh).
"""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
from tap import Tap  # noqa: E402

TAP = Tap("selftest: ")


def check_runner():
    env = dict(os.environ, DDB_TEST_NO_LOAD="1")
    p = subprocess.run([sys.executable,
                        os.path.join(ROOT, "tests", "harness", "run_sql.py"),
                        os.path.join(HERE, "sample.test")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       cwd=ROOT, env=env, timeout=300)
    out = p.stdout.decode("utf-8", "replace")
    verdicts = re.findall(r"^(ok|not ok) \d+ - sample\.test: (.*)$", out, re.M)
    shown = ["| " + l for l in out.splitlines()]
    if not verdicts:
        TAP.ok(False, "runner produced verdicts", shown)
        return
    for verdict, name in verdicts:
        want = "ok" if name.startswith("pass:") else "not ok"
        TAP.ok(verdict == want, "runner verdict %r for %r" % (verdict, name),
               [] if verdict == want else shown)
    names = [n for _, n in verdicts]
    TAP.ok("setup" not in names, "runner: setup with empty output passes")
    TAP.ok("*** sqlite3 died with SIGSEGV" in out, "runner: a crash is shown",
           [] if "SIGSEGV" in out else shown)
    TAP.ok("block never ran" in out, "runner: tests after a crash fail")
    TAP.ok(p.returncode == 1, "runner exits 1 when a test failed (got %d)"
           % p.returncode)
    m = re.search(r"script and db kept in (\S+)", out)
    if m:   # the failing sample's leftovers: not needed
        import shutil
        shutil.rmtree(os.path.join(ROOT, m.group(1)), ignore_errors=True)


def run_runner(files, **env_over):
    """Run the SQL runner without the extension; (exit status, output)."""
    env = dict(os.environ, DDB_TEST_NO_LOAD="1")
    for k in ("SQL_TEST_LACKS", "SQL_TEST_SERVER"):
        env.pop(k, None)
    env.update(env_over)
    p = subprocess.run([sys.executable,
                        os.path.join(ROOT, "tests", "harness", "run_sql.py")]
                       + [os.path.join(HERE, f) for f in files],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       cwd=ROOT, env=env, timeout=300)
    out = p.stdout.decode("utf-8", "replace")
    m = re.search(r"script and db kept in (\S+)", out)
    if m:   # a failing file's leftovers: not needed
        import shutil
        shutil.rmtree(os.path.join(ROOT, m.group(1)), ignore_errors=True)
    return p.returncode, out


def check_requires():
    def check(ok, name, shown):
        TAP.ok(bool(ok), name, [] if ok else shown)

    rc, out = run_runner(["requires.test"], SQL_TEST_LACKS="transactions",
                         SQL_TEST_SERVER="srv")
    shown = ["| " + l for l in out.splitlines()]
    check("# skip requires.test on srv: no TransactWriteItems (2 tests)\n"
          in out and not re.search(r"^(not )?ok ", out, re.M) and rc == 0,
          "runner: a file that requires what the server lacks is skipped, "
          "with a line saying why", shown)
    check("# skipped on srv: 1 file, 2 tests" in out,
          "runner: the skipped files and tests are counted", shown)
    rc, out = run_runner(["requires.test"], SQL_TEST_LACKS="")
    shown = ["| " + l for l in out.splitlines()]
    check(len(re.findall(r"^ok \d+ - requires\.test: pass: ", out, re.M)) == 2
          and "# skip" not in out and rc == 0,
          "runner: the same file runs where nothing is lacking", shown)
    rc, out = run_runner(["requires.test"], SQL_TEST_SERVER="srv")
    shown = ["| " + l for l in out.splitlines()]
    check(len(re.findall(r"^ok \d+ - srv: requires\.test: pass: ", out,
                         re.M)) == 2,
          "runner: SQL_TEST_SERVER prefixes every test's name", shown)
    rc, out = run_runner(["requires_bad.test"], SQL_TEST_LACKS="transactions")
    shown = ["| " + l for l in out.splitlines()]
    check(re.search(r"^not ok \d+ - requires_bad\.test: setup$", out, re.M)
          and "names no known feature (teleportation" in out
          and "'-- requires: FEATURE'" in out and "# skip" not in out
          and rc == 1,
          "runner: an unknown feature or a near miss of '-- requires:' is a "
          "format error of the setup, and the file is not skipped", shown)
    check(re.search(r"^not ok \d+ - requires_bad\.test: the test runs, "
                    r"and the marker inside it is an error$", out, re.M)
          and "after the first '-- test:'" in out,
          "runner: '-- requires:' inside a test is a format error", shown)
    rc, out = run_runner(["requires.test"], SQL_TEST_LACKS="transaction")
    check(rc == 2 and "unknown features: transaction" in out,
          "runner: an unknown feature in SQL_TEST_LACKS is refused",
          ["| " + l for l in out.splitlines()])


TAP_SAMPLE = """\
ok 1 - sample: pass: a passing test prints no detail
ok 2 - sample: pass: a test that did not run # SKIP no server for it
not ok 3 - sample: fail: a string detail
#   line 1
#   line 2
not ok 4 - sample: fail: a list detail
#   a
#   b
#   c
#   7
not ok 5 - sample: fail: a long detail
""" + "#   %s\n" % ("x" * 300) * 40 + """\
not ok 6 - sample: fail: no detail
1..6
"""


def check_tap():
    """tests/harness/tap.py under each python3 the drivers run with."""
    sample = os.path.join(HERE, "tap_sample.py")
    pythons = [("this python3", sys.executable)]
    if os.path.exists("/usr/bin/python3") and \
            os.path.realpath(sys.executable) != "/usr/bin/python3":
        pythons.append(("/usr/bin/python3", "/usr/bin/python3"))
    for label, py in pythons:
        for args, want, rc in (([], TAP_SAMPLE, 1),
                               (["pass"], "".join(TAP_SAMPLE.splitlines(True)[:2])
                                + "1..2\n", 0)):
            p = subprocess.run([py, sample] + args, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=60)
            out = p.stdout.decode("utf-8", "replace")
            TAP.ok(out == want and p.returncode == rc,
                   "tap.py with %s%s: the exact lines, exit status %d"
                   % (label, " (all passing)" if args else "", rc),
                   ["exit status %d" % p.returncode] +
                   ["| " + l for l in out.splitlines()])


def check_ecommerce():
    import fixtures
    c = fixtures.connect()
    t = "SelftestShop"
    fixtures.ecommerce(c, t)
    try:
        TAP.ok(fixtures.count_items(c, t) == len(fixtures.ecommerce_items()),
               "ecommerce example: item count")

        def q(index=None, kce="", names=None, values=None):
            kw = dict(TableName=t, KeyConditionExpression=kce,
                      ExpressionAttributeValues={
                          k: {"S": v} for k, v in (values or {}).items()})
            if index:
                kw["IndexName"] = index
            if names:
                kw["ExpressionAttributeNames"] = names
            items = []
            while True:
                out = c.query(**kw)
                items += out["Items"]
                if "LastEvaluatedKey" not in out:
                    break
                kw["ExclusiveStartKey"] = out["LastEvaluatedKey"]
            return [i["SK"]["S"] for i in items]

        T = {"#t": "Type"}
        item = fixtures.get_item(c, t, {"PK": {"S": "USER#alice"},
                                        "SK": {"S": "USER#alice"}})
        cases = [
            (1, "user by username", [item["SK"]["S"]] if item else [],
             ["USER#alice"]),
            (2, "all users", q("GSI2", "#t = :t", T, {":t": "USER"}),
             ["USER#alice", "USER#bob", "USER#carol"]),
            (3, "all products", q("GSI2", "#t = :t", T, {":t": "PRODUCT"}),
             ["PRODUCT#dune", "PRODUCT#emma", "PRODUCT#laptop",
              "PRODUCT#phone", "PRODUCT#shovel"]),
            (4, "products in a category",
             q(None, "PK = :p AND begins_with(SK, :s)", None,
               {":p": "CATEGORY#books", ":s": "PRODUCT#"}),
             ["PRODUCT#dune", "PRODUCT#emma"]),
            (5, "product by name",
             q("GSI2", "#t = :t AND SK = :s", T,
               {":t": "PRODUCT", ":s": "PRODUCT#laptop"}),
             ["PRODUCT#laptop"]),
            (6, "orders for a user",
             q(None, "PK = :p AND begins_with(SK, :s)", None,
               {":p": "USER#alice", ":s": "ORDER#"}),
             ["ORDER#o-0001", "ORDER#o-0002", "ORDER#o-0004"]),
            (7, "all orders", q("GSI2", "#t = :t", T, {":t": "ORDER"}),
             ["ORDER#o-000%d" % i for i in range(1, 7)]),
            (8, "order-ID range",
             q("GSI2", "#t = :t AND SK BETWEEN :a AND :b", T,
               {":t": "ORDER", ":a": "ORDER#o-0002", ":b": "ORDER#o-0004"}),
             ["ORDER#o-0002", "ORDER#o-0003", "ORDER#o-0004"]),
            (9, "orders by status and date range",
             q("GSI1", "GSI1PK = :p AND GSI1SK BETWEEN :a AND :b", None,
               {":p": "ORDER", ":a": "STATUS#PENDING#2026-02-01",
                ":b": "STATUS#PENDING#2026-02-28~"}),
             ["ORDER#o-0002", "ORDER#o-0003"]),
            (10, "order by ID",
             q("GSI2", "#t = :t AND SK = :s", T,
               {":t": "ORDER", ":s": "ORDER#o-0005"}),
             ["ORDER#o-0005"]),
            (11, "reviews for a user",
             q(None, "PK = :p AND begins_with(SK, :s)", None,
               {":p": "USER#alice", ":s": "REVIEW#"}),
             ["REVIEW#r-0001", "REVIEW#r-0003"]),
            (12, "all reviews", q("GSI2", "#t = :t", T, {":t": "REVIEW"}),
             ["REVIEW#r-000%d" % i for i in range(1, 5)]),
            (13, "review by ID",
             q("GSI2", "#t = :t AND SK = :s", T,
               {":t": "REVIEW", ":s": "REVIEW#r-0002"}),
             ["REVIEW#r-0002"]),
            (14, "reviews for a product",
             q("GSI1", "GSI1PK = :p AND begins_with(GSI1SK, :s)", None,
               {":p": "PRODUCT#laptop", ":s": "REVIEW#"}),
             ["REVIEW#r-0001", "REVIEW#r-0002"]),
            (15, "all categories", q("GSI2", "#t = :t", T, {":t": "CATEGORY"}),
             ["CATEGORY#books", "CATEGORY#electronics", "CATEGORY#garden"]),
        ]
        for num, name, got, want in cases:
            TAP.ok(got == want, "ecommerce example: access pattern %d: %s" % (num, name),
                   [] if got == want else ["want %r" % want, "got  %r" % got])
    finally:
        fixtures.drop_table(c, t)


def main():
    if not os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"):
        print("Bail out! selftest: AWS_ENDPOINT_URL_DYNAMODB not set")
        return 2
    check_tap()
    check_runner()
    check_requires()
    check_ecommerce()
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
