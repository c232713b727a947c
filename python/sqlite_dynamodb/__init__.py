"""sqlite_dynamodb: the sqlite-dynamodb extension for Python's sqlite3.

    import sqlite3
    import sqlite_dynamodb

    conn = sqlite3.connect(":memory:")
    sqlite_dynamodb.load(conn)
    conn.execute("CREATE VIRTUAL TABLE shop USING dynamodb(table=Store)")
    for row in conn.execute("SELECT SK FROM shop WHERE PK = ?", ("USER#alice",)):
        print(row)

Installed by `pip install .` from the repository (setup.py builds the
extension with make); docs/python.md.  The Python must be one whose sqlite3
can load extensions: Debian's /usr/bin/python3 can, pyenv's default build
and macOS's system Python cannot (load() says so).
"""
import os

from ._version import __version__

__all__ = ["load", "loadable_path", "__version__"]


def loadable_path():
    """The extension's path without its suffix, as
    Connection.load_extension() and the shell's .load take it."""
    return os.path.normpath(os.path.join(os.path.dirname(__file__), "dynamodb"))


def load(conn):
    """Load the extension into the sqlite3 connection conn: extension
    loading is turned on for the call and off again after it, whether it
    succeeded or not.  Raises sqlite3.OperationalError when the extension
    does not load, and RuntimeError when this Python's sqlite3 cannot load
    extensions at all."""
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError(
            "sqlite_dynamodb: this Python's sqlite3 cannot load extensions "
            "(built without --enable-loadable-sqlite-extensions, as pyenv's "
            "default build and macOS's system Python are): use Debian's "
            "/usr/bin/python3, or rebuild with PYTHON_CONFIGURE_OPTS="
            "--enable-loadable-sqlite-extensions (docs/python.md)")
    conn.enable_load_extension(True)
    try:
        conn.load_extension(loadable_path())
    finally:
        conn.enable_load_extension(False)
