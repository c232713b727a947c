"""What SANITIZE=1 changes for the Python drivers, written once (the shell
suites have tests/harness/sanitize.sh): a process that loads the ASan-built
extension must have the ASan runtime first in LD_PRELOAD.  Standard library
only, so that any python3 can import it."""
import os
import subprocess


def sqlite3_env(e, base=None):
    """Put SQLITE3_PRELOAD (the library run-all.sh names under SANITIZE=1:
    the ASan runtime) first in e's LD_PRELOAD, before base's LD_PRELOAD
    (base: os.environ unless given), for a sqlite3 that loads the extension.
    Without SQLITE3_PRELOAD e is left as it is.  Returns e."""
    base = os.environ if base is None else base
    pre = base.get("SQLITE3_PRELOAD")
    if pre:
        e["LD_PRELOAD"] = " ".join(
            x for x in (pre, base.get("LD_PRELOAD")) if x)
    return e


def python_env(e):
    """Under SANITIZE=1, put the ASan runtime (from $CC) first in e's
    LD_PRELOAD and turn its leak checks off (the interpreter's own
    allocations), for a python3 that loads the extension.  Returns e."""
    if os.environ.get("SANITIZE") == "1":
        asan = subprocess.run(
            [os.environ.get("CC", "cc"), "-print-file-name=libasan.so"],
            capture_output=True, text=True).stdout.strip()
        e["LD_PRELOAD"] = " ".join(
            x for x in (asan, e.get("LD_PRELOAD")) if x)
        e["ASAN_OPTIONS"] = "detect_leaks=0:handle_segv=0"
    return e
