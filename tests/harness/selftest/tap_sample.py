#!/usr/bin/env python3
"""tests/harness/tap.py's sample, run by tests/harness/selftest/run.py
with each python3 that runs the drivers: tests that fail on purpose.

    tap_sample.py         a passing test, failing ones with each kind of
                          detail, a skip; exits 1
    tap_sample.py pass    the passing test and the skip alone; exits 0
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tap import Tap  # noqa: E402


def main():
    t = Tap("sample: ")
    t.ok(True, "pass: a passing test prints no detail", "never shown")
    t.skip("pass: a test that did not run", "no server for it")
    if sys.argv[1:] != ["pass"]:
        t.ok(False, "fail: a string detail", "line 1\nline 2")
        t.ok(0, "fail: a list detail", ["a", "b\nc", 7])
        t.ok(None, "fail: a long detail", ["x" * 400] * 50)
        t.ok([], "fail: no detail")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
