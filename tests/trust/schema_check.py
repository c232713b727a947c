#!/usr/bin/env python3
"""Untrusted database files stay offline (suite 26).

A database file can come from anyone, and the arguments of its CREATE
VIRTUAL TABLE ... USING dynamodb(...) are whatever its author wrote.  An
"attacker" socket on a free loopback port records every connection, and an
AWS config file has a profile `prod` whose credential_process writes a
marker file.  A database made by a real CREATE against DynamoDB Local then
has its endpoint edited (PRAGMA writable_schema) to the attacker with
profile=prod.  Opening it in the sqlite3 shell (extension loaded first)
and running .schema, PRAGMA table_info, SELECT * FROM sqlite_schema, a
view in the file over the table, or DROP TABLE must make no connection and
run no credential_process.  The same for such a file without the stored
description (made by an older version) and for one whose options are bad.
The normal path still works: CREATE, close, reopen, SELECT; and after the
DynamoDB table gets a new GSI, dynamodb_refresh() stores it.

Needs AWS_ENDPOINT_URL_DYNAMODB.  Prints TAP lines.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import fixtures  # noqa: E402
from tap import Tap  # noqa: E402

TABLE = "Schema26"
SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
EXT = os.environ.get("DDB_EXT", os.path.join(ROOT, "build", "dynamodb"))


class Attacker:
    """A listening socket that records every connection and its first
    bytes (a signed request would carry Authorization: ... Credential=)."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.seen = []
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.settimeout(2)
            data = b""
            try:
                data = conn.recv(65536)
            except OSError:
                pass
            with self.lock:
                self.seen.append(data)
            conn.close()  # no answer: the client fails (or retries)

    def take(self):
        with self.lock:
            s, self.seen = self.seen, []
        return s


class FakeRedis:
    """A "Redis" on a free loopback port that answers like one (+OK to
    AUTH, SELECT and SET, nils to GET and MGET) and records every byte it
    receives: the shared tier's password must never reach a Redis that a
    database file names."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.url = "redis://127.0.0.1:%d" % self.port
        self.lock = threading.Lock()
        self.got = b""
        self.conns = 0
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.conns += 1
            threading.Thread(target=self.serve, args=(conn,),
                             daemon=True).start()

    @staticmethod
    def commands(buf):
        """The complete RESP arrays at the start of buf: ([args], rest)."""
        out = []
        while True:
            if not buf.startswith(b"*") or b"\r\n" not in buf:
                return out, buf
            head, rest = buf.split(b"\r\n", 1)
            args = []
            for _ in range(int(head[1:])):
                if b"\r\n" not in rest:
                    return out, buf
                ln, rest2 = rest.split(b"\r\n", 1)
                n = int(ln[1:])
                if len(rest2) < n + 2:
                    return out, buf
                args.append(rest2[:n])
                rest = rest2[n + 2:]
            out.append(args)
            buf = rest

    def serve(self, conn):
        buf = b""
        conn.settimeout(10)
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                with self.lock:
                    self.got += data
                buf += data
                cmds, buf = self.commands(buf)
                for a in cmds:
                    op = a[0].upper()
                    if op == b"MGET":
                        conn.sendall(b"*%d\r\n" % (len(a) - 1) +
                                     b"$-1\r\n" * (len(a) - 1))
                    elif op == b"GET":
                        conn.sendall(b"$-1\r\n")
                    elif op == b"DEL":
                        conn.sendall(b":0\r\n")
                    else:
                        conn.sendall(b"+OK\r\n")
        except (OSError, ValueError):
            pass
        finally:
            conn.close()

    def take(self):
        with self.lock:
            g, n, self.got, self.conns = self.got, self.conns, b"", 0
        return g, n


def run_shell(db, script, env, timeout=60):
    """Run script in `sqlite3 -batch db` with the extension loaded first.
    Returns stdout and stderr merged."""
    p = subprocess.run([SQLITE3, "-batch", db],
                       input=".bail off\n.load %s\n%s\n" % (EXT, script),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env, timeout=timeout)
    return p.stdout


def plain_shell(db, script):
    """sqlite3 without the extension (to edit a file like an attacker)."""
    p = subprocess.run([SQLITE3, "-batch", db], input=script,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=60)
    return p.stdout


def check_shared_cache(t, tmp, good, victim):
    """shared_cache= in a database file: the user's
    DYNAMODB_SHARED_CACHE_PASSWORD goes only to the Redis that
    DYNAMODB_SHARED_CACHE names, never to one a file (or any other
    shared_cache=) names."""
    pw = "victim-redis-pw-28"
    theirs, mine = FakeRedis(), FakeRedis()
    env = dict(victim, DYNAMODB_SHARED_CACHE_PASSWORD=pw)
    env.pop("DYNAMODB_SHARED_CACHE", None)
    env_mine = dict(env, DYNAMODB_SHARED_CACHE=mine.url)
    read = "SELECT PK, SK FROM x WHERE PK = 'A' AND SK = '1';"

    def file_with(opts):
        db = os.path.join(tmp, "shared.db")
        shutil.copy(good, db)
        plain_shell(db, "PRAGMA writable_schema=ON;\nUPDATE sqlite_schema SET "
                    "sql = 'CREATE VIRTUAL TABLE x USING dynamodb(table=%s%s)'"
                    " WHERE name = 'x';\n" % (TABLE, opts.replace("'", "''")))
        return db

    def seen(fake):
        time.sleep(0.1)
        got, n = fake.take()
        ops = [a[0].upper() for a in FakeRedis.commands(got)[0]]
        return n, ops, pw.encode() in got, got

    def detail(out, s):
        return "%s\nconnections %d, commands %r, password sent: %s\n%r" % (
            out, s[0], s[1], s[2], s[3][:300])

    opts = ", shared_cache='%s', shared_cache_timeout=1" % theirs.url
    db = file_with(opts)
    out = run_shell(db, ".schema x\nPRAGMA table_info(x);", env)
    s = seen(theirs)
    t.ok(s[0] == 0, "a file naming shared_cache: reading its schema makes "
         "no connection to that Redis", detail(out, s))
    for label, e in (("DYNAMODB_SHARED_CACHE unset", env),
                     ("DYNAMODB_SHARED_CACHE another Redis", env_mine)):
        out = run_shell(db, read, e)
        s = seen(theirs)
        t.ok(out == "A|1\n" and s[0] >= 1 and not s[2] and
             b"AUTH" not in s[1],
             "a file's shared_cache (%s): the first SELECT uses that Redis "
             "(documented, as for endpoint) and never sends it "
             "DYNAMODB_SHARED_CACHE_PASSWORD, nor any AUTH" % label,
             detail(out, s))
        mine.take()
    # a user in the file's URL needs a password, which it cannot have
    db = file_with(", shared_cache='redis://default@127.0.0.1:%d'"
                   % theirs.port)
    out = run_shell(db, read, env)
    s = seen(theirs)
    t.ok("a user needs a password" in out and s[0] == 0 and pw not in out,
         "a file's shared_cache with a user: its first use fails, saying "
         "why; nothing reaches that Redis", detail(out, s))
    # a wait on Redis does not see an interrupt: a file cannot make one
    # longer than a second
    db = file_with(", shared_cache='%s', shared_cache_timeout=86400"
                   % theirs.url)
    out = run_shell(db, read, env)
    s = seen(theirs)
    t.ok("bad value for shared_cache_timeout: '86400' (expected seconds "
         "from 0.001 to 1" in out and s[0] == 0,
         "a file's shared_cache_timeout=86400: its first use fails "
         "(at most 1 s), nothing reaches that Redis", detail(out, s))
    # typed by the user, not read from a file: the same rule
    out = run_shell(os.path.join(tmp, "typed.db"),
                    "CREATE VIRTUAL TABLE temp.y USING dynamodb(table=%s%s);\n"
                    "SELECT PK, SK FROM y WHERE PK = 'A' AND SK = '1';"
                    % (TABLE, opts), env)
    s = seen(theirs)
    t.ok(out == "A|1\n" and s[0] >= 1 and not s[2] and
         b"AUTH" not in s[1],
         "shared_cache= typed in CREATE VIRTUAL TABLE, not "
         "DYNAMODB_SHARED_CACHE: no password sent either", detail(out, s))
    # the control: the environment's own Redis does get the password
    # (from DYNAMODB_SHARED_CACHE, or named again by the option)
    for label, o in (("no shared_cache option", ""),
                     ("shared_cache naming it again",
                      ", shared_cache='%s/0'" % mine.url)):
        db = file_with(o + ", shared_cache_timeout=1")
        out = run_shell(db, read, env_mine)
        s = seen(mine)
        t.ok(out == "A|1\n" and s[2] and b"AUTH" in s[1],
             "the control (%s): the Redis of DYNAMODB_SHARED_CACHE gets "
             "AUTH with DYNAMODB_SHARED_CACHE_PASSWORD" % label,
             detail(out, s))
    theirs.take()


def main():
    if not os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"):
        print("1..0 # SKIP AWS_ENDPOINT_URL_DYNAMODB not set")
        return 0
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="trust-schema-")
    client = fixtures.connect()
    fixtures.create_table(client, TABLE, "PK", "SK",
                          gsis=[("GSI1", "GSI1PK", "GSI1SK", "ALL")])
    fixtures.put_items(client, TABLE, [
        {"PK": "A", "SK": "1", "GSI1PK": "G", "GSI1SK": "x", "Cat": "c1"},
        {"PK": "A", "SK": "2", "GSI1PK": "G", "GSI1SK": "y", "Cat": "c2"},
        {"PK": "B", "SK": "1", "Cat": "c1"}])

    att = Attacker()
    marker = os.path.join(tmp, "credential_process_ran")
    config = os.path.join(tmp, "config")
    with open(config, "w") as f:
        f.write("[profile prod]\nregion = us-east-1\n"
                "credential_process = sh -c 'touch %s; echo "
                "{\\\"Version\\\":1,\\\"AccessKeyId\\\":\\\"AKIDPROD\\\","
                "\\\"SecretAccessKey\\\":\\\"prodsecret\\\","
                "\\\"SessionToken\\\":\\\"prodtoken\\\"}'\n" % marker)
    creds = os.path.join(tmp, "credentials")
    open(creds, "w").close()
    # the victim: an ordinary environment (its own keys and endpoint), and
    # the config file that has the profile `prod`
    victim = dict(os.environ)
    victim.update(AWS_CONFIG_FILE=config, AWS_SHARED_CREDENTIALS_FILE=creds,
                  AWS_EC2_METADATA_DISABLED="true")
    attacker_url = "http://127.0.0.1:%d" % att.port
    evil_args = "table=%s, endpoint='%s', profile=prod" % (TABLE,
                                                           attacker_url)

    # the profile's credential_process works (so a test that sees no
    # marker means it was not run, not that it could not run)
    probe = os.path.join(tmp, "probe.db")
    out = run_shell(probe, "CREATE VIRTUAL TABLE p USING dynamodb(%s);"
                    % evil_args, victim)
    t.ok(os.path.exists(marker) and att.take(),
         "setup: a CREATE with the attacker's options does reach the "
         "attacker and run credential_process (the probes work)", out)
    if os.path.exists(marker):
        os.unlink(marker)

    # the attacker's file: made by a real CREATE, then edited
    good = os.path.join(tmp, "made.db")
    out = run_shell(good, "CREATE VIRTUAL TABLE x USING dynamodb(table=%s);"
                    "\nCREATE VIEW v AS SELECT PK FROM x;" % TABLE, victim)
    t.ok(out == "", "setup: CREATE against DynamoDB Local", out)
    edit = ("PRAGMA writable_schema=ON;\n"
            "UPDATE sqlite_schema SET sql = 'CREATE VIRTUAL TABLE x USING "
            "dynamodb(%s)' WHERE name = 'x';\n" % evil_args.replace("'", "''"))
    evil = os.path.join(tmp, "evil.db")
    shutil.copy(good, evil)
    out = plain_shell(evil, edit)
    t.ok(out == "", "setup: endpoint edited with writable_schema", out)
    # the same file as an older version wrote it: no stored description
    old = os.path.join(tmp, "old.db")
    shutil.copy(evil, old)
    plain_shell(old, "PRAGMA writable_schema=ON;\n"
                "DELETE FROM sqlite_schema WHERE name = 'x_schema';\n")
    # options that do not even parse, or a bad endpoint
    bad = os.path.join(tmp, "bad.db")
    shutil.copy(good, bad)
    plain_shell(bad, edit.replace(evil_args.replace("'", "''"),
                                  "table=%s, endpoint=''ftp://nowhere'', "
                                  "scan=sideways, profile=prod" % TABLE))
    att.take()

    ops = [
        (".schema", ".schema"),
        ("PRAGMA table_info(x)", "PRAGMA table_info(x);"),
        ("SELECT * FROM sqlite_schema", "SELECT * FROM sqlite_schema;"),
        ("SELECT * FROM pragma_table_xinfo('x')",
         "SELECT * FROM pragma_table_xinfo('x');"),
        ("a view in the file over the table",
         "SELECT * FROM v;"),
        ("DROP TABLE",
         "DROP TABLE x;\nSELECT 'left:', name FROM sqlite_schema "
         "WHERE name LIKE 'x%';"),
    ]
    for label, path in (("attacker's file", evil),
                        ("attacker's file without stored description", old),
                        ("file with bad options", bad)):
        for name, script in ops:
            db = os.path.join(tmp, "run.db")
            shutil.copy(path, db)
            out = run_shell(db, script, victim)
            time.sleep(0.05)
            conns = att.take()
            ran = os.path.exists(marker)
            if ran:
                os.unlink(marker)
            t.ok(not conns and not ran,
                 "%s: %s makes no connection and resolves no "
                 "credentials" % (label, name),
                 "connections: %d%s; credential_process ran: %s\n%s" % (
                     len(conns),
                     (" (first bytes: %r)" % conns[0][:300]) if conns
                     else "", ran, out))
            if name == "DROP TABLE":
                t.ok("Error" not in out and "left:" not in out,
                     "%s: DROP TABLE works and leaves nothing" % label,
                     out)
            if name == "PRAGMA table_info(x)" and path == evil:
                t.ok("|PK|TEXT|" in out and "|GSI1PK|TEXT|" in out,
                     "%s: table_info lists the stored columns" % label,
                     out)
            if name == "a view in the file over the table":
                t.ok("unsafe use of virtual table" in out,
                     "%s: the view is refused (DIRECTONLY)" % label, out)

    # The file without a stored description says what to do on a SELECT
    db = os.path.join(tmp, "run.db")
    shutil.copy(old, db)
    out = run_shell(db, "SELECT count(*) FROM x;", victim)
    t.ok("dynamodb_refresh('x')" in out and not att.take()
         and not os.path.exists(marker),
         "a file without a stored description: SELECT says to run "
         "dynamodb_refresh, without a call", out)

    # The first real read of the attacker's file does use its options:
    # that is the documented limit (opening is safe, querying is not)
    shutil.copy(evil, db)
    out = run_shell(db, "SELECT count(*) FROM x;", victim)
    t.ok(att.take() and os.path.exists(marker),
         "a SELECT on the attacker's table does use its endpoint and "
         "profile (documented: querying trusts the file)", out)
    if os.path.exists(marker):
        os.unlink(marker)

    check_shared_cache(t, tmp, good, victim)

    # The normal path: CREATE, close, reopen, SELECT (no DescribeTable)
    norm = os.path.join(tmp, "normal.db")
    out = run_shell(norm, "CREATE VIRTUAL TABLE n USING dynamodb(table=%s);"
                    % TABLE, victim)
    t.ok(out == "", "CREATE against DynamoDB Local", out)
    out = run_shell(norm, "SELECT PK, SK FROM n WHERE PK = 'A';\n"
                    "SELECT PK, SK FROM n WHERE GSI1PK = 'G' "
                    "AND GSI1SK = 'y';\nSELECT dynamodb_calls();", victim)
    t.ok(out == "A|1\nA|2\nA|2\nQuery, Query GSI1\n",
         "reopened: SELECT works, the stored description is used (no "
         "DescribeTable)", out)

    # A new GSI on a new attribute: dynamodb_refresh stores it
    client.update_table(
        TableName=TABLE,
        AttributeDefinitions=[{"AttributeName": "Cat",
                               "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "ByCat",
            "KeySchema": [{"AttributeName": "Cat", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}}])
    fixtures._wait(lambda: fixtures._active(client, TABLE), "ByCat")
    out = run_shell(norm, "PRAGMA table_info(n);", victim)
    t.ok("|Cat|" not in out,
         "before dynamodb_refresh: the stored columns (no Cat)", out)
    out = run_shell(norm, "SELECT dynamodb_refresh('n');\n"
                    "SELECT dynamodb_calls();\n"
                    "SELECT name FROM pragma_table_info('n');\n"
                    "SELECT PK, SK FROM n WHERE Cat = 'c1';\n"
                    "SELECT dynamodb_calls();", victim)
    t.ok(out.startswith("n: DynamoDB table Schema26, 2 indexes (ByCat, "
                        "GSI1)\nDescribeTable\n")
         and "\nCat\n" in out
         and out.endswith("A|1\nB|1\nQuery ByCat\n"),
         "dynamodb_refresh('n') picks up the new GSI (column Cat, "
         "Query ByCat) in the same session", out)
    out = run_shell(norm, "SELECT PK, SK FROM n WHERE Cat = 'c2';\n"
                    "SELECT dynamodb_calls();", victim)
    t.ok(out == "A|2\nQuery ByCat\n",
         "reopened after dynamodb_refresh: the new GSI is stored", out)

    # dynamodb_refresh on the file without a stored description stores it
    db2 = os.path.join(tmp, "old2.db")
    shutil.copy(good, db2)
    plain_shell(db2, "PRAGMA writable_schema=ON;\n"
                "DELETE FROM sqlite_schema WHERE name = 'x_schema';\n")
    out = run_shell(db2, "SELECT dynamodb_refresh('x');", victim)
    out2 = run_shell(db2, "SELECT PK, SK FROM x WHERE Cat = 'c2';", victim)
    t.ok(out2 == "A|2\n",
         "an older file: dynamodb_refresh stores the description, then "
         "it opens and reads", out + out2)

    fixtures.drop_table(client, TABLE)
    shutil.rmtree(tmp, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
