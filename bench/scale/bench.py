#!/usr/bin/env python3
"""Side-by-side runs of the scale benchmark (reads at scale); prints the
report.

    python3 bench/scale/bench.py ROOT URL TABLE WORKDIR

ROOT is the repository (build/dynamodb.so, bench/scale/), URL DynamoDB
Local's endpoint (loaded by load.py, keys in WORKDIR/keys.json and
keys.sql).  Called by bench/scale/run.sh, which starts and stops the server.

The headline run goes through bench/scale/proxy.py, which holds every
request BENCH_DELAY_MS (20) before forwarding it to DynamoDB Local (a
region's distance): the extension, boto3 (py_peer.py) and the AWS SDK for
JavaScript v3 (js_peer.mjs) on workloads 1-5 (full Scan count, full Scan
JSON, Query, 2,000 GetItems cold, the same keys batched, warm).  The
extension runs with its defaults (segments=auto for the Scans), the peers'
full Scans with BENCH_PEER_SEGMENTS (8) parallel segments.  Then, if the
time budget allows, the same without the proxy (no added latency), and
the floors.

Every measurement is its own process, one after another (never two at
once): the sqlite3 shell with .load build/dynamodb and `.timer on` (whose
user/sys come from getrusage of the shell process, every thread of it), and
the peers, which time their workload in-process the same way.  Each process
also runs under /usr/bin/time for its peak RSS.  Nothing is asserted: this
prints.  Environment: BENCH_REPS (3: repetitions of the Query, the
batched keys and the replayed count(*); the median is reported),
BENCH_COUNT_REPS (9: of the full Scan's count(*), each client first in
the order equally often), BENCH_SCAN_REPS (2: of the full Scan of every
item), BENCH_GET_REPS (1: of the 2,000 single GetItems, 40 s a client at
20 ms), BENCH_BUDGET (seconds, 780: the optional runs -- segments=1, no
added latency, floors -- that would start later are skipped and said so;
the headline always runs whole), BENCH_DELAY_MS (20), BENCH_PEER_SEGMENTS
(8).
"""

import json
import os
import platform
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

RUN_TIMEOUT = 420  # seconds, one process at the most
HOT_PK = "HOT#0"

WORKLOADS = [
    ("count", "1. full Scan, count(*)"),
    ("scan_json", "2. full Scan, every item's JSON"),
    ("query_json", "3. Query of the 10,000-item partition, JSON"),
    ("get_cold", "4. 2,000 GetItems, cold (join / one call a key)"),
    ("get_batch", "4b. the 2,000 keys batched (keys = / batch_get_item)"),
    ("get_warm", "5. the 2,000 again, warm (item cache / no cache)"),
]
EXT_SQL = {
    "count": "SELECT count(*) FROM t;",
    "scan_json": "SELECT count(*), sum(length(item)) FROM t;",
    "query_json": "SELECT count(*), sum(length(item)) FROM t "
                  "WHERE PK = '%s';" % HOT_PK,
    "get": "SELECT count(*), sum(length(t.item)) FROM k CROSS JOIN t "
           "ON t.PK = k.pk AND t.SK = k.sk;",
    "batch": "SELECT count(*), sum(length(item)) FROM t WHERE keys = "
             "(SELECT json_group_array(json_array(pk, sk)) FROM k);",
}
PASSES = {"get": ["get_cold", "get_warm"], "batch": ["get_batch"]}
PEERS = ["boto3", "JS SDK v3"]
SCANS = ("count", "scan_json")
RUNS = ("20ms", "0ms")  # the proxy's run first: the headline
RUN_REPLAY = "20ms replay"  # count(*) with the proxy replaying answers


def rotated(runs, rep):
    """runs in the order of repetition rep (1, 2, ...): rep 1 as given, rep
    2 starting with the second, ...: over len(runs) repetitions every run
    is in every place once."""
    k = (rep - 1) % len(runs)
    return runs[k:] + runs[:k]


class Bench:
    def __init__(self, root, url, table, work):
        self.root, self.url, self.table, self.work = root, url, table, work
        self.t0 = time.time()
        self.budget = float(os.environ.get("BENCH_BUDGET", "780"))
        self.delay = float(os.environ.get("BENCH_DELAY_MS", "20"))
        self.nseg = int(os.environ.get("BENCH_PEER_SEGMENTS", "8"))
        self.run = "20ms"  # which run the records go to
        self.optional = False  # the budget skips only optional runs
        self.target = url  # where the clients send their requests
        self.results = []  # dicts: client, workload, rep, items, calls, ...
        self.skipped = []
        self.commands = []
        self.plans = {}
        self.n = 0
        self.env = dict(os.environ, AWS_ACCESS_KEY_ID="test",
                        AWS_SECRET_ACCESS_KEY="test", AWS_REGION="us-east-1",
                        AWS_CONFIG_FILE="/dev/null",
                        AWS_SHARED_CREDENTIALS_FILE="/dev/null",
                        NODE_NO_WARNINGS="1")
        for k in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
            self.env.pop(k, None)

    # -- running one process -------------------------------------------
    def over_budget(self, what):
        if self.optional and time.time() - self.t0 > self.budget:
            self.skipped.append(what)
            print("bench-scale: skipped (time budget): %s" % what,
                  file=sys.stderr)
            return True
        return False

    def timed(self, argv, stdin_path=None, env=None):
        """Run argv under /usr/bin/time; (stdout, proc wall, proc cpu, rss KiB)."""
        self.n += 1
        tfile = os.path.join(self.work, "time.%d" % self.n)
        efile = os.path.join(self.work, "stderr.%d" % self.n)
        full = ["/usr/bin/time", "-f", "%e %U %S %M", "-o", tfile] + argv
        self.window = [time.time(), None]
        with open(stdin_path or os.devnull) as fin, open(efile, "w") as ferr:
            p = subprocess.run(full, stdin=fin, stdout=subprocess.PIPE,
                               stderr=ferr, env=env or self.env,
                               cwd=self.root, timeout=RUN_TIMEOUT, text=True)
        self.window[1] = time.time()
        with open(tfile) as f:
            last = f.read().strip().splitlines()[-1].split()
        if p.returncode != 0:
            with open(efile) as f:
                err = f.read()[-2000:]
            raise RuntimeError("%s exited %d: %s" % (argv, p.returncode, err))
        wall, user, sys_, rss = (float(x) for x in last)
        return p.stdout, wall, user + sys_, int(rss)

    def record(self, client, workload, rep, items, calls, wall, cpu, check,
               proc_cpu, rss, extra=None):
        r = {"run": self.run, "client": client, "workload": workload,
             "rep": rep,
             "items": items, "calls": calls, "wall": wall, "cpu": cpu,
             "check": check, "proc_cpu": proc_cpu, "rss_kib": rss,
             "window": list(self.window)}
        r.update(extra or {})
        self.results.append(r)
        print("bench-scale: %-4s %-16s %-10s rep %d: %6d items %5d calls "
              "wall %7.3f s cpu %7.3f s rss %6.1f MiB" %
              (self.run, client, workload, rep, items, calls, wall, cpu,
               rss / 1024),
              file=sys.stderr, flush=True)

    # -- the extension ---------------------------------------------------
    def ext(self, client, workload, rep, opts="", label=None):
        what = "%s %s %s rep %d" % (self.run, label or client, workload, rep)
        if self.over_budget(what):
            return None
        stmt = EXT_SQL[workload]
        lines = [".load build/dynamodb",
                 "CREATE VIRTUAL TABLE t USING dynamodb(table=%s%s);"
                 % (self.table, opts)]
        if workload in PASSES:
            lines.append(".read %s" % os.path.join(self.work, "keys.sql"))
        lines += ["EXPLAIN QUERY PLAN %s" % stmt]
        passes = PASSES.get(workload, [workload])
        for _ in passes:
            lines += [".timer on", stmt, ".timer off",
                      "SELECT 'STATS', name, value FROM dynamodb_stats;"]
        script = os.path.join(self.work, "ext-%d.sql" % (self.n + 1))
        with open(script, "w") as f:
            f.write("\n".join(lines) + "\n")
        env = dict(self.env, AWS_ENDPOINT_URL_DYNAMODB=self.target)
        argv = ["sqlite3", ":memory:"]
        text = "\n".join(lines).replace(self.work, "$WORK")
        self.commands.append(
            "AWS_ENDPOINT_URL_DYNAMODB=%s sqlite3 :memory: <<'SQL'   # %s\n"
            "%s\nSQL" % ("$URL" if self.target == self.url else "$PROXY",
                         re.sub(r"^\S+ | rep \d+$", "", what), text))
        out, pwall, pcpu, rss = self.timed(argv, stdin_path=script, env=env)
        res, stats, plan = [], [], None
        cur = {}
        prev_line = None
        for line in out.splitlines():
            m = re.match(r"Run Time: real ([\d.]+) user ([\d.]+) sys ([\d.]+)",
                         line)
            if m:
                vals = prev_line.split("|")
                res.append((float(m.group(1)),
                            float(m.group(2)) + float(m.group(3)),
                            int(vals[0]), int(vals[1]) if len(vals) > 1
                            and vals[1] else 0))
            elif line.startswith("STATS|"):
                _, name, value = line.split("|", 2)
                cur[name] = float(value)
                if name == "consumed_wcu":  # the last counter of a block
                    stats.append(cur)
                    cur = {}
            elif "VIRTUAL TABLE INDEX" in line:
                plan = line.split("VIRTUAL TABLE INDEX", 1)[1].strip()
            prev_line = line
        if cur:
            stats.append(cur)
        if len(res) != len(passes):
            raise RuntimeError("%s: could not read the timings:\n%s"
                               % (what, out[-2000:]))
        self.plans[(self.run, label or client, workload)] = plan
        before = 0.0
        for i, name in enumerate(passes):
            wall, cpu, items, check = res[i]
            st = stats[i] if i < len(stats) else {}
            calls = st.get("requests", 0) - before - (1 if i == 0 else 0)
            before = st.get("requests", 0)
            extra = {"cache_bytes": st.get("bytes", 0),
                     "cache_max": st.get("bytes_max", 0),
                     "item_hits": st.get("item_hits", 0),
                     "item_misses": st.get("item_misses", 0)}
            self.record(label or client, name, rep, items, int(calls), wall,
                        cpu, check, pcpu, rss, extra)
        return res

    # -- the peers -------------------------------------------------------
    def peer(self, client, workload, rep):
        what = "%s %s %s rep %d" % (self.run, client, workload, rep)
        if self.over_budget(what):
            return
        keys = os.path.join(self.work, "keys.json")
        if client == "JS SDK v3":
            argv = ["node", "bench/scale/js_peer.mjs", workload, self.target,
                    self.table]
        else:
            argv = ["python3", "bench/scale/py_peer.py", "client", workload,
                    self.target, self.table]
        if workload in PASSES:
            argv.append(keys)
        segs = self.nseg if workload in SCANS else 1
        env = dict(self.env, BENCH_PEER_SEGMENTS=str(segs))
        self.commands.append(
            ("BENCH_PEER_SEGMENTS=%d " % segs if segs > 1 else "")
            + " ".join(shlex.quote(a) for a in argv)
            .replace(self.target, "$URL" if self.target == self.url
                     else "$PROXY").replace(self.work, "$WORK"))
        out, pwall, pcpu, rss = self.timed(argv, env=env)
        for line in out.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                self.record(client, r["workload"], rep, r["items"],
                            r["calls"], r["wall"], r["cpu"], r["check"],
                            pcpu, rss)

    # -- the proxy -------------------------------------------------------
    def start_proxy(self):
        """Start proxy.py in front of DynamoDB Local with self.delay ms a
        request, in "pass" mode (forward, remember nothing); its URL."""
        port = self.url.rsplit(":", 1)[1]
        portfile = os.path.join(self.work, "proxy.port")
        if os.path.exists(portfile):
            os.unlink(portfile)
        cmd = ["python3", "bench/scale/proxy.py", port, "%g" % self.delay,
               portfile, "1800"]
        self.commands.append(" ".join(cmd).replace(self.work, "$WORK")
                             .replace(" %s " % port, " $PORT ")
                             + "   # the latency proxy, at $PROXY, then "
                             "POST $PROXY/__bench/mode/pass")
        self.proxy_log = open(os.path.join(self.work, "proxy.log"), "w")
        self.timeline = os.path.join(self.work, "proxy-timeline.log")
        self.proxy = subprocess.Popen(cmd, cwd=self.root,
                                      env=dict(os.environ,
                                               BENCH_PROXY_LOG=self.timeline),
                                      stdout=self.proxy_log,
                                      stderr=self.proxy_log)
        for _ in range(100):
            if os.path.exists(portfile) or self.proxy.poll() is not None:
                break
            time.sleep(0.1)
        with open(portfile) as f:
            self.purl = "http://127.0.0.1:%d" % int(f.read())
        self.proxy_ctl("/__bench/mode/pass")
        return self.purl

    def proxy_ctl(self, path, post=True):
        req = urllib.request.Request(self.purl + path,
                                     data=b"" if post else None)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def stop_proxy(self):
        """Stop the proxy by its PID (SIGTERM, then SIGKILL after 10 s)."""
        try:
            self.proxy_stats = self.proxy_ctl("/__bench/stats", post=False)
        except OSError:
            self.proxy_stats = None
        self.proxy.send_signal(signal.SIGTERM)
        try:
            self.proxy.wait(10)
        except subprocess.TimeoutExpired:
            self.proxy.kill()
            self.proxy.wait()
        self.proxy_log.close()

    def workloads(self, reps, count_reps, scan_reps, get_reps, seg1=False,
                  replay=0):
        """Workloads 1-5 for the extension and PEERS against self.target,
        cheap ones first, interleaved by client; count(*) in a rotating
        order of clients, the Scan of items in the reverse order every
        other repetition.  seg1: one more run of the extension's count(*)
        with segments=1, optional (skipped past the budget).  replay: that
        many repetitions of count(*) with the proxy replaying the answers
        it recorded (replayed_counts)."""
        for rep in range(1, reps + 1):
            self.ext("ext", "query_json", rep)
            for p in PEERS:
                self.peer(p, "query_json", rep)
            self.ext("ext", "batch", rep)
            for p in PEERS:
                self.peer(p, "batch", rep)
        for rep in range(1, get_reps + 1):
            self.ext("ext", "get", rep)
            for p in PEERS:
                self.peer(p, "get", rep)
        # count(*): DynamoDB Local's own time per page decides it, and
        # that time drifts (its JIT, its garbage collector, the machine),
        # so more repetitions, and every client in every place of the
        # order equally often (rep r starts with client r mod 3)
        if replay:
            self.record_counts()
        for rep in range(1, count_reps + 1):
            for run in rotated(self.scan_runs("count", rep), rep):
                run()
        for rep in range(1, scan_reps + 1):
            runs = self.scan_runs("scan_json", rep)
            for run in (runs if rep % 2 else runs[::-1]):
                run()
        if replay:
            self.replay_counts(replay)
        if seg1:
            self.optional = True
            self.ext("ext", "count", 1, opts=", segments=1",
                     label="ext segments=1")
            self.optional = False

    def scan_runs(self, wk, rep):
        """The runs of full Scan workload wk, one per client, ext first."""
        return ([lambda: self.ext("ext", wk, rep)]
                + [lambda p=p: self.peer(p, wk, rep) for p in PEERS])

    def record_counts(self):
        """count(*) once per client with the proxy recording the answers
        (mode live), not counted in the results: it also warms DynamoDB
        Local's Scan path (its JIT), whose first Scans after the GetItems
        are slower for whichever client comes first."""
        saved = self.run
        self.proxy_ctl("/__bench/mode/live")
        self.run = "record"
        for run in self.scan_runs("count", 0):
            run()
        self.proxy_ctl("/__bench/mode/pass")
        self.run = saved

    def replay_counts(self, reps):
        """count(*) reps times per client with the proxy answering every
        request from what record_counts recorded, after the same delay
        (mode replay), recorded as run RUN_REPLAY: DynamoDB Local's own
        time per page taken out, what is left is the delay and each
        client's own work (threads, connections, signing, parsing)."""
        saved = self.run
        self.proxy_ctl("/__bench/mode/replay")
        self.run = RUN_REPLAY
        for rep in range(1, reps + 1):
            for run in rotated(self.scan_runs("count", rep), rep):
                run()
        self.replay_stats = self.proxy_ctl("/__bench/stats", post=False)
        self.proxy_ctl("/__bench/mode/pass")
        self.run = saved

    # -- floors -------------------------------------------------------
    def floors(self, reps=3):
        """What the parts below the extension cost on their own, in this
        run: a bare libcurl request loop (curl_floor.c: the same GetItem,
        no signing, parsing, cache or SQL), and SQLite counting 100,000 rows
        of a virtual table that does nothing (generate_series) in the same
        sqlite3 shell.  Medians of reps runs into self.floor."""
        self.floor = {}
        exe = os.path.join(self.work, "curl_floor")
        try:
            subprocess.run(["cc", "-O2", "-o", exe,
                            os.path.join(self.root, "bench/scale/curl_floor.c"),
                            "-lcurl"], check=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as e:
            self.skipped.append("floors: cannot build curl_floor: %s" % e)
            return
        us, rows = [], []
        for _ in range(reps):
            if self.over_budget("floors"):
                break
            out, _, _, _ = self.timed([exe, self.url + "/", "2000"])
            m = re.search(r"status (\d+) cpu_us ([\d.]+) bytes (\d+)", out)
            if m:
                us.append(float(m.group(2)))
                self.floor["curl_status"] = int(m.group(1))
                self.floor["curl_bytes"] = int(m.group(3))
            script = os.path.join(self.work, "floor.sql")
            with open(script, "w") as f:
                f.write(".timer on\nSELECT count(*) FROM "
                        "generate_series(1, 100000);\n")
            out, _, _, _ = self.timed(["sqlite3", ":memory:"],
                                      stdin_path=script)
            m = re.search(r"Run Time: real [\d.]+ user ([\d.]+) sys ([\d.]+)",
                          out)
            if m:
                rows.append(float(m.group(1)) + float(m.group(2)))
        if us:
            self.floor["curl_us"] = statistics.median(us)
        if rows:
            self.floor["rows_s"] = statistics.median(rows)
        print("bench-scale: floors %s" % json.dumps(self.floor),
              file=sys.stderr, flush=True)

def median_of(rows, key):
    return statistics.median(r[key] for r in rows)


def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) // 1024 // 1024

    def ver(argv):
        try:
            p = subprocess.run(argv, capture_output=True, text=True,
                               timeout=30)
            return (p.stdout + p.stderr).strip().splitlines()[0]
        except Exception:
            return "?"
    import boto3
    sdk = "?"
    try:
        with open("bench/scale/node_modules/@aws-sdk/client-dynamodb/"
                  "package.json") as f:
            sdk = json.load(f)["version"]
    except OSError:
        pass
    def git(*args):
        try:
            return subprocess.run(["git"] + list(args), capture_output=True,
                                  text=True, timeout=30).stdout.strip()
        except Exception:
            return "?"
    ext = git("log", "-1", "--format=%h", "--", "ext", "client", "cache")
    if git("status", "--porcelain", "--", "ext", "client", "cache"):
        ext += " + uncommitted changes"
    return {
        "extension": ext,
        "nproc": os.cpu_count(), "cpu": model, "mem_gib": mem,
        "kernel": platform.release(),
        "sqlite3": ver(["sqlite3", "--version"]).split()[0],
        "python": platform.python_version(), "boto3": boto3.__version__,
        "node": ver(["node", "--version"]),
        "client-dynamodb": sdk,
        "java": ver(["java", "-version"]) or "?",
        # the server's own word (its log's Version line), from run.sh
        "ddblocal": os.environ.get("DDBLOCAL_VERSION") or "?",
        "load": open("/proc/loadavg").read().split()[:3],
    }


def fmt(x, nd=3):
    return "-" if x is None else ("%.*f" % (nd, x))


def aggregate(results):
    """(run, client, workload) -> medians of the repetitions."""
    agg = {}
    for r in results:
        agg.setdefault((r["run"], r["client"], r["workload"]), []).append(r)
    med = {}
    for k, rows in agg.items():
        med[k] = {"items": rows[0]["items"], "calls": rows[0]["calls"],
                  "wall": median_of(rows, "wall"),
                  "wall_min": min(r["wall"] for r in rows),
                  "wall_max": max(r["wall"] for r in rows),
                  "cpu": median_of(rows, "cpu"),
                  "rss": max(r["rss_kib"] for r in rows) / 1024,
                  "n": len(rows), "check": rows[0]["check"],
                  "cache_bytes": rows[0].get("cache_bytes"),
                  "cache_max": rows[0].get("cache_max")}
    return med


def server_side(b):
    """(client, workload) -> medians over the 20 ms runs of the full Scans
    of what the proxy's timeline (BENCH_PROXY_LOG) says of each run: the
    mean time a request spent in DynamoDB Local (sent on to answered), and
    the time no request of the run was in it between its first request's
    arrival and its last answer (the client's own gaps, the delay, the
    last segment's lone pages).  {} without a timeline."""
    try:
        with open(b.timeline) as f:
            rows = [ln.split() for ln in f]
        tl = [(float(r[1]), float(r[2]), float(r[3])) for r in rows
              if len(r) == 5]
    except (OSError, AttributeError, ValueError):
        return {}
    per = {}
    for r in b.results:
        if r["run"] != "20ms" or r["workload"] not in SCANS:
            continue
        t0, t1 = r["window"]
        reqs = sorted(x for x in tl if t0 <= x[0] <= t1)
        if not reqs:
            continue
        ev = sorted([(x[1], 1) for x in reqs] + [(x[2], -1) for x in reqs])
        idle, depth, last = 0.0, 0, reqs[0][0]
        for t, d in ev:
            if depth == 0:
                idle += t - last
            depth += d
            last = t
        per.setdefault((r["client"], r["workload"]), []).append(
            (sum(x[2] - x[1] for x in reqs) / len(reqs), idle, len(reqs)))
    return {k: (statistics.median(v[0] for v in vs),
                statistics.median(v[1] for v in vs),
                statistics.median(v[2] for v in vs), len(vs))
            for k, vs in per.items()}


def agreement(b, run):
    """'yes', or what differs: every client's item count and JSON length
    sum, for every repetition, the same within a workload of run."""
    bad = []
    for wk, _ in WORKLOADS:
        seen = {(r["client"], r["items"], r["check"]) for r in b.results
                if r["run"] == run and r["workload"] == wk}
        if len({(i, c) for _, i, c in seen}) > 1:
            bad.append("%s: %s" % (wk, sorted(seen)))
    return "yes" if not bad else "NO: " + "; ".join(bad)


def headline(b, med, run, w):
    """The headline table: workload | extension | boto3 | JS SDK | ratio
    (extension / best peer), wall time; returns {workload: ratio}."""
    ratios = {}
    w("| workload | extension | boto3 | JS SDK v3 | ratio (ext / best "
      "peer) | items | JSON bytes |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    for wk, title in WORKLOADS:
        e = med.get((run, "ext", wk))
        peers = [med.get((run, p, wk)) for p in PEERS]
        if not e and not any(peers):
            continue
        best = min((m["wall"] for m in peers if m), default=None)
        ratio = e["wall"] / best if e and best else None
        if ratio is not None:
            ratios[wk] = ratio
        cells = ["%.3f s (%d calls)" % (m["wall"], m["calls"]) if m else "-"
                 for m in [e] + peers]
        any_m = e or next(m for m in peers if m)
        w("| %s | %s | %s | %s |" % (
            title, " | ".join(cells),
            "-" if ratio is None else "%.2f×" % ratio if ratio >= 0.01
            else "1/%.0f" % (1 / max(ratio, 1e-9)),
            "%d | %s" % (any_m["items"], "-" if wk == "count"
                         else "{:,}".format(any_m["check"]))))
    return ratios


def report(b, mach, load_info):
    out = []
    w = out.append
    med = aggregate(b.results)
    nseg = b.nseg
    plan = b.plans.get(("20ms", "ext", "count"), "")
    w("## Results (wall time, median of the repetitions)")
    w("")
    w("Machine: %d CPUs, %s, %d GiB; Linux %s; load average at start %s, at "
      "end %s." % (mach["nproc"], mach["cpu"], mach["mem_gib"],
                   mach["kernel"], " ".join(mach["load"]),
                   " ".join(open("/proc/loadavg").read().split()[:3])))
    w("Extension: build/dynamodb.so of ext/, client/, cache/ at %s."
      % mach["extension"])
    w("sqlite3 %s, python %s + boto3 %s, node %s + @aws-sdk/client-dynamodb "
      "%s, DynamoDB Local %s on %s (2 GiB heap, same machine)." %
      (mach["sqlite3"], mach["python"], mach["boto3"], mach["node"],
       mach["client-dynamodb"], mach["ddblocal"], mach["java"]))
    w("Data: %s" % json.dumps(load_info))
    w("")
    w("### %g ms added to every request (bench/scale/proxy.py, forwarding "
      "to DynamoDB Local)" % b.delay)
    w("")
    w("Extension with its defaults (full Scans: segments=auto, plan `%s`); "
      "boto3 and the JS SDK's full Scans as %d parallel segments; batched "
      "keys: 100 a call, 4 calls in flight for every client." % (plan, nseg))
    w("")
    r20 = headline(b, med, "20ms", w)
    w("")
    w("Item counts and JSON length sums agree across clients and "
      "repetitions: %s" % agreement(b, "20ms"))
    s1 = med.get(("20ms", "ext segments=1", "count"))
    e8 = med.get(("20ms", "ext", "count"))
    if s1 and e8:
        w("")
        w("The extension's count(*) with segments=1 (one request at a time): "
          "%.3f s, %d calls; with its default %.3f s, %d calls (%.1f× "
          "faster, the table's read capacity consumed that many requests "
          "at a time)." % (s1["wall"], s1["calls"], e8["wall"], e8["calls"],
                           s1["wall"] / max(e8["wall"], 1e-6)))
    w("")
    w("### Goals (batched keys, count(*), SELECT item), at %g ms" % b.delay)
    w("")
    kb = med.get(("20ms", "ext", "get_batch"))
    bb = med.get(("20ms", "boto3", "get_batch"))
    if kb and bb:
        x = kb["wall"] / bb["wall"]
        w("* joins on the full key, `keys =` form <= 1.5× boto3's batched "
          "wall time: %.3f s / %.3f s = %.2f× — %s" % (
              kb["wall"], bb["wall"], x, "met" if x <= 1.5 else "NOT met"))
    for wk in SCANS:
        if wk in r20:
            e = med[("20ms", "ext", wk)]
            w("* %s <= 1.1× the best peer: %.2f× — %s (medians of %d runs "
              "each; the extension's ranged %.3f-%.3f s)" % (
                  dict(WORKLOADS)[wk], r20[wk],
                  "met" if r20[wk] <= 1.1 else "NOT met", e["n"],
                  e["wall_min"], e["wall_max"]))
    w("")
    if any(k[0] == RUN_REPLAY for k in med):
        w("### count(*) with DynamoDB Local's own time taken out")
        w("")
        w("The proxy recorded each client's answers to its count(*) Scan, "
          "then answered the same requests from memory after the same "
          "%g ms, without asking DynamoDB Local: what is left is the "
          "delay and the client's own work. With the server in the loop "
          "(above), the pages' time inside DynamoDB Local is most of the "
          "wall time (see the next table)." % b.delay)
        w("")
        w("| client | wall (median) | min-max | calls | runs |")
        w("|---|---:|---:|---:|---:|")
        for c in ["ext"] + PEERS:
            m = med.get((RUN_REPLAY, c, "count"))
            if m:
                w("| %s | %.3f s | %.3f-%.3f s | %d | %d |" % (
                    c, m["wall"], m["wall_min"], m["wall_max"], m["calls"],
                    m["n"]))
        rs = getattr(b, "replay_stats", None)
        if rs:
            w("")
            w("Requests answered from memory: %d; not seen before (sent "
              "on to DynamoDB Local): %d." % (rs.get("replayed", 0),
                                              rs.get("misses", 0)))
        w("")
    ss = server_side(b)
    if ss:
        w("### The full Scans at 20 ms, seen from the proxy")
        w("")
        w("From the proxy's timeline: the mean time a request spent in "
          "DynamoDB Local (sent on to answered), and the time no request "
          "of the run was in it between its first request and its last "
          "answer (the %g ms delay, the client's own gaps, the last "
          "segments' lone pages). Medians over the runs." % b.delay)
        w("")
        w("Requests: the Scans and the client's DescribeTable.")
        w("")
        w("| workload | client | requests | in DynamoDB Local, mean | "
          "nothing in DynamoDB Local | runs |")
        w("|---|---|---:|---:|---:|---:|")
        for wk in SCANS:
            for c in ["ext"] + PEERS:
                m = ss.get((c, wk))
                if m:
                    w("| %s | %s | %d | %.0f ms | %.3f s | %d |" % (
                        dict(WORKLOADS)[wk], c, m[2], 1e3 * m[0], m[1],
                        m[3]))
        w("")
    if any(k[0] == "0ms" for k in med):
        w("### No added latency (DynamoDB Local directly)")
        w("")
        headline(b, med, "0ms", w)
        w("")
        w("Item counts and JSON length sums agree across clients and "
          "repetitions: %s" % agreement(b, "0ms"))
        w("")
    w("### Every measurement (medians; CPU = user+sys of the client process "
      "during the workload)")
    w("")
    w("| run | workload | client | items | calls | wall s | CPU s | "
      "CPU µs/item | process peak RSS MiB | runs |")
    w("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for run in RUNS:
        for wk, title in WORKLOADS:
            for c in ["ext", "ext segments=1"] + PEERS:
                m = med.get((run, c, wk))
                if not m:
                    continue
                w("| %s | %s | %s | %d | %d | %s | %s | %s | %.1f | %d |" % (
                    run, title, c, m["items"], m["calls"], fmt(m["wall"]),
                    fmt(m["cpu"]),
                    fmt(1e6 * m["cpu"] / max(m["items"], 1), 2),
                    m["rss"], m["n"]))
    w("")
    if getattr(b, "proxy_stats", None):
        w("Proxy counters: %s" % json.dumps(b.proxy_stats))
        w("")
    fl = getattr(b, "floor", {})
    if fl.get("curl_us") is not None and fl.get("rows_s") is not None:
        w("### Floors: what the layers under the extension cost alone, "
          "in this run (no added latency)")
        w("")
        w("* a bare libcurl loop of the same GetItem on a kept-alive "
          "connection (`bench/scale/curl_floor.c`: no signing, JSON parsing, "
          "cache or SQL; HTTP %s, %d bytes an answer): **%.1f µs CPU a "
          "request**, user+sys, median of 3 runs of 2,000" %
          (fl.get("curl_status"), fl.get("curl_bytes", 0), fl["curl_us"]))
        w("* SQLite counting 100,000 rows of a virtual table that does "
          "nothing (`SELECT count(*) FROM generate_series(1, 100000)` in "
          "the same shell): **%.1f ms CPU**" % (1e3 * fl["rows_s"]))
        w("")
    if b.plans:
        w("Plans: " + "; ".join("%s %s %s: `%s`" % (r, c, k, p)
                                for (r, c, k), p in sorted(b.plans.items())))
        w("")
    if b.skipped:
        w("Skipped (time budget %d s): %s" % (b.budget,
                                               "; ".join(b.skipped)))
        w("")
    w("### Commands")
    w("")
    w("cwd: the repository; env AWS_ACCESS_KEY_ID=test "
      "AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 "
      "AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null; "
      "each under `/usr/bin/time -f '%e %U %S %M'`. $URL: DynamoDB Local "
      "(`tests/harness/ddblocal.sh start --heap 2g DIR`), $PORT its port, $WORK: "
      "the run's folder (build/bench-scale/latest), $PROXY: the proxy.")
    w("")
    w("```")
    w("python3 bench/scale/load.py $URL Store $WORK")
    seen = set()
    for c in b.commands:
        if c not in seen:
            seen.add(c)
            w(c)
    w("```")
    return "\n".join(out) + "\n", med


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    root, url, table, work = argv[1:5]
    os.chdir(root)
    b = Bench(root, url, table, work)
    mach = machine()
    try:
        with open(os.path.join(work, "load.json")) as f:
            load_info = json.load(f)
    except OSError:
        load_info = {}
    reps = int(os.environ.get("BENCH_REPS", "3"))
    count_reps = int(os.environ.get("BENCH_COUNT_REPS", "9"))
    scan_reps = int(os.environ.get("BENCH_SCAN_REPS", "2"))
    get_reps = int(os.environ.get("BENCH_GET_REPS", "1"))
    # the headline: every client through the proxy
    b.target = b.start_proxy()
    try:
        b.workloads(reps, count_reps, scan_reps, get_reps, seg1=True,
                    replay=reps)
    finally:
        b.stop_proxy()
    # then, as the budget allows, no added latency, once each
    b.run, b.target, b.optional = "0ms", url, True
    b.workloads(1, 1, 1, 1)
    b.floors()
    text, med = report(b, mach, load_info)
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump({"machine": mach, "results": b.results,
                   "skipped": b.skipped}, f, indent=1)
    with open(os.path.join(work, "report.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main(sys.argv)
