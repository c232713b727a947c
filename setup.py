"""setup.py -- the Python package sqlite_dynamodb (python/sqlite_dynamodb).

    /usr/bin/python3 -m pip install --no-build-isolation --no-index .

builds the extension with the Makefile (`make loadable`, into setuptools'
temporary folder, never build/ of a checkout's own make) and installs it
beside the module as sqlite_dynamodb/dynamodb.so; `sqlite_dynamodb.load(conn)`
loads it into a sqlite3 connection.  The version is DYN_VERSION of
api/dyndb.h, the one place it is written (the Makefile reads it there too).
Needs make, a C compiler and the -dev packages of the README's
Requirements; nothing is fetched.
"""
import os
import re
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    """DYN_VERSION of api/dyndb.h."""
    with open(os.path.join(ROOT, "api", "dyndb.h"), encoding="utf-8") as f:
        m = re.search(r'^#define DYN_VERSION\s+"([^"]+)"', f.read(), re.M)
    if not m:
        raise SystemExit("setup.py: no DYN_VERSION in api/dyndb.h")
    return m.group(1)


class BuildPy(build_py):
    """build_py, then the extension built by make and copied into the
    package, with _version.py."""

    def run(self):
        super().run()
        temp = os.path.abspath(self.get_finalized_command("build").build_temp)
        jobs = "-j%d" % min(4, os.cpu_count() or 1)
        subprocess.run(["make", "-C", ROOT, "-s", "--no-print-directory", jobs,
                        "BUILD=" + os.path.join(temp, "make"), "SANITIZE=",
                        "loadable"], check=True)
        pkg = os.path.join(self.build_lib, "sqlite_dynamodb")
        os.makedirs(pkg, exist_ok=True)
        shutil.copyfile(os.path.join(temp, "make", "dynamodb.so"),
                        os.path.join(pkg, "dynamodb.so"))
        with open(os.path.join(pkg, "_version.py"), "w", encoding="utf-8") as f:
            f.write('__version__ = "%s"  # DYN_VERSION of api/dyndb.h\n'
                    % version())


class BinaryDistribution(Distribution):
    """The wheel holds a compiled library: tagged for this platform."""

    def has_ext_modules(self):
        return True


setup(
    name="sqlite-dynamodb",
    version=version(),
    description="SQLite virtual table and cache over Amazon DynamoDB: "
                "sqlite_dynamodb.load(conn)",
    license="MIT",
    python_requires=">=3.6",
    package_dir={"": "python"},
    packages=["sqlite_dynamodb"],
    cmdclass={"build_py": BuildPy},
    distclass=BinaryDistribution,
    zip_safe=False,
)
