#!/usr/bin/env python3
"""Side-by-side runs of the scale benchmark (issue 6); prints the report.

    python3 bench/scale/bench.py ROOT URL TABLE WORKDIR

ROOT is the repository (build/dynamodb.so, bench/scale/), URL DynamoDB
Local's endpoint (loaded by load.py, keys in WORKDIR/keys.json and
keys.sql).  Called by bench/scale/run.sh, which starts and stops the server.

Every measurement is its own process, one after another (never two at
once): the sqlite3 shell with .load build/dynamodb and `.timer on` (whose
user/sys come from getrusage of the shell process, every thread of it), and
the peers py_peer.py (boto3) and js_peer.mjs (AWS SDK v3), which time their
workload in-process the same way.  Each process also runs under
/usr/bin/time for its peak RSS and whole-process CPU.  Nothing is asserted:
this prints.  Environment: BENCH_REPS (3: repetitions of the query and
GetItem workloads; the median is reported), BENCH_SCAN_REPS (2: of the full
Scans of workloads 1 and 2, which DynamoDB Local serves slowly; 1b runs
once), BENCH_BUDGET (seconds, 720:
runs that would start later are skipped and said so), BENCH_DELAY_MS (20).
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
    ("count", "1. full Scan, count items"),
    ("count_items", "1b. full Scan, count by reading items (peers)"),
    ("scan_json", "2. full Scan, every item's JSON"),
    ("query_json", "3. Query of the 10,000-item partition, JSON"),
    ("get_cold", "4. 2,000 GetItem, random keys, cold"),
    ("get_warm", "5. the same 2,000, warm"),
]
EXT_SQL = {
    "count": "SELECT count(*) FROM t;",
    "scan_json": "SELECT count(*), sum(length(item)) FROM t;",
    "query_json": "SELECT count(*), sum(length(item)) FROM t "
                  "WHERE PK = '%s';" % HOT_PK,
    "get": "SELECT count(*), sum(length(t.item)) FROM k CROSS JOIN t "
           "ON t.PK = k.pk AND t.SK = k.sk;",
}
PEERS = ["boto3 client", "boto3 paginator", "JS SDK v3"]


class Bench:
    def __init__(self, root, url, table, work):
        self.root, self.url, self.table, self.work = root, url, table, work
        self.t0 = time.time()
        self.budget = float(os.environ.get("BENCH_BUDGET", "720"))
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
        if time.time() - self.t0 > self.budget:
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
        with open(stdin_path or os.devnull) as fin, open(efile, "w") as ferr:
            p = subprocess.run(full, stdin=fin, stdout=subprocess.PIPE,
                               stderr=ferr, env=env or self.env,
                               cwd=self.root, timeout=RUN_TIMEOUT, text=True)
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
        r = {"client": client, "workload": workload, "rep": rep,
             "items": items, "calls": calls, "wall": wall, "cpu": cpu,
             "check": check, "proc_cpu": proc_cpu, "rss_kib": rss}
        r.update(extra or {})
        self.results.append(r)
        print("bench-scale: %-16s %-12s rep %d: %6d items %5d calls "
              "wall %7.3f s cpu %7.3f s rss %6.1f MiB" %
              (client, workload, rep, items, calls, wall, cpu, rss / 1024),
              file=sys.stderr, flush=True)

    # -- the extension ---------------------------------------------------
    def ext(self, client, workload, rep, opts="", url=None, label=None):
        what = "%s %s rep %d" % (label or client, workload, rep)
        if self.over_budget(what):
            return None
        stmt = EXT_SQL[workload]
        lines = [".load build/dynamodb",
                 "CREATE VIRTUAL TABLE t USING dynamodb(table=%s%s);"
                 % (self.table, opts)]
        if workload == "get":
            lines.append(".read %s" % os.path.join(self.work, "keys.sql"))
        lines += ["EXPLAIN QUERY PLAN %s" % stmt]
        passes = ["get_cold", "get_warm"] if workload == "get" else [workload]
        for _ in passes:
            lines += [".timer on", stmt, ".timer off",
                      "SELECT 'STATS', name, value FROM dynamodb_stats;"]
        script = os.path.join(self.work, "ext-%d.sql" % (self.n + 1))
        with open(script, "w") as f:
            f.write("\n".join(lines) + "\n")
        env = dict(self.env, AWS_ENDPOINT_URL_DYNAMODB=url or self.url)
        argv = ["sqlite3", ":memory:"]
        text = "\n".join(lines).replace(self.work, "$WORK")
        self.commands.append(
            "AWS_ENDPOINT_URL_DYNAMODB=%s sqlite3 :memory: <<'SQL'   # %s\n"
            "%s\nSQL" % ("$PROXY" if url else "$URL",
                         re.sub(r" rep \d+$", "", what), text))
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
        self.plans[(label or client, workload)] = plan
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
        what = "%s %s rep %d" % (client, workload, rep)
        if self.over_budget(what):
            return
        keys = os.path.join(self.work, "keys.json")
        if client == "JS SDK v3":
            argv = ["node", "bench/scale/js_peer.mjs", workload, self.url,
                    self.table]
        else:
            mode = "paginator" if client == "boto3 paginator" else "client"
            argv = ["python3", "bench/scale/py_peer.py", mode, workload,
                    self.url, self.table]
        if workload == "get":
            argv.append(keys)
        self.commands.append(" ".join(shlex.quote(a) for a in argv)
                             .replace(self.url, "$URL")
                             .replace(self.work, "$WORK"))
        out, pwall, pcpu, rss = self.timed(argv)
        for line in out.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                self.record(client, r["workload"], rep, r["items"],
                            r["calls"], r["wall"], r["cpu"], r["check"],
                            pcpu, rss)

    # -- the latency run -------------------------------------------------
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

    def latency(self, delay_ms):
        port = self.url.rsplit(":", 1)[1]
        portfile = os.path.join(self.work, "proxy.port")
        if os.path.exists(portfile):
            os.unlink(portfile)
        cmd = ["python3", "bench/scale/proxy.py", port, str(delay_ms),
               portfile, "1200"]
        self.commands.append(" ".join(cmd).replace(self.work, "$WORK")
                             .replace(" %s " % port, " $PORT ")
                             + "   # the latency proxy, at $PROXY")
        log = open(os.path.join(self.work, "proxy.log"), "w")
        proxy = subprocess.Popen(cmd, cwd=self.root, stdout=log, stderr=log)
        try:
            for _ in range(100):
                if os.path.exists(portfile) or proxy.poll() is not None:
                    break
                time.sleep(0.1)
            with open(portfile) as f:
                purl = "http://127.0.0.1:%d" % int(f.read())

            def ctl(path, post=True):
                req = urllib.request.Request(purl + path, data=b"" if post
                                             else None)
                with urllib.request.urlopen(req, timeout=10) as r:
                    return json.loads(r.read())

            # live: through the proxy to DynamoDB Local; answers remembered
            for wk in ("count", "scan_json"):
                for segs in (1, 8):
                    self.ext("ext", wk, 1,
                             opts=", segments=%d, query_ttl=0" % segs,
                             url=purl, label="live segments=%d" % segs)
            ctl("/__bench/mode/replay")
            # replay: the same requests answered from memory after the delay
            reps = int(os.environ.get("BENCH_REPS", "3"))
            for rep in range(1, reps + 1):
                for wk in ("count", "scan_json"):
                    for segs in (1, 8):
                        self.ext("ext", wk, rep,
                                 opts=", segments=%d, query_ttl=0" % segs,
                                 url=purl, label="replay segments=%d" % segs)
            self.proxy_stats = ctl("/__bench/stats", post=False)
        finally:
            proxy.send_signal(signal.SIGTERM)
            try:
                proxy.wait(10)
            except subprocess.TimeoutExpired:
                proxy.kill()
                proxy.wait()
            log.close()


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
        "load": open("/proc/loadavg").read().split()[:3],
    }


def fmt(x, nd=3):
    return "-" if x is None else ("%.*f" % (nd, x))


def report(b, mach, load_info):
    out = []
    w = out.append
    agg = {}  # (client, workload) -> median row
    for r in b.results:
        agg.setdefault((r["client"], r["workload"]), []).append(r)
    med = {}
    for k, rows in agg.items():
        med[k] = {"items": rows[0]["items"], "calls": rows[0]["calls"],
                  "wall": median_of(rows, "wall"),
                  "cpu": median_of(rows, "cpu"),
                  "proc_cpu": median_of(rows, "proc_cpu"),
                  "rss": max(r["rss_kib"] for r in rows) / 1024,
                  "n": len(rows), "check": rows[0]["check"],
                  "cache_bytes": rows[0].get("cache_bytes"),
                  "cache_max": rows[0].get("cache_max")}
    w("## Results (median of the repetitions; CPU = user+sys of the client "
      "process during the workload)")
    w("")
    w("Machine: %d CPUs, %s, %d GiB; Linux %s; load average at start %s, at "
      "end %s." % (mach["nproc"], mach["cpu"], mach["mem_gib"],
                   mach["kernel"], " ".join(mach["load"]),
                   " ".join(open("/proc/loadavg").read().split()[:3])))
    w("Extension: build/dynamodb.so of ext/, client/, cache/ at %s."
      % mach["extension"])
    w("sqlite3 %s, python %s + boto3 %s, node %s + @aws-sdk/client-dynamodb "
      "%s, DynamoDB Local on %s (2 GiB heap, same machine)." %
      (mach["sqlite3"], mach["python"], mach["boto3"], mach["node"],
       mach["client-dynamodb"], mach["java"]))
    w("Data: %s" % json.dumps(load_info))
    w("")
    w("| workload | client | items | calls | wall s | CPU s | CPU µs/item "
      "| process peak RSS MiB | runs |")
    w("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    clients = ["ext", "ext segments=8"] + PEERS
    for wk, title in WORKLOADS:
        for c in clients:
            m = med.get((c, wk))
            if not m:
                continue
            w("| %s | %s | %d | %d | %s | %s | %s | %.1f | %d |" % (
                title, c, m["items"], m["calls"], fmt(m["wall"]),
                fmt(m["cpu"]), fmt(1e6 * m["cpu"] / max(m["items"], 1), 2),
                m["rss"], m["n"]))
    w("")
    # consistency: every client saw the same number of items
    bad = []
    for wk, _ in WORKLOADS:
        counts = {c: m["items"] for (c, k), m in med.items() if k == wk}
        if len(set(counts.values())) > 1:
            bad.append("%s: %s" % (wk, counts))
    w("Item counts agree across clients: %s" % ("yes" if not bad else
                                                 "NO: " + "; ".join(bad)))
    bad = []
    for wk in ("scan_json", "query_json", "get_cold", "get_warm"):
        sums = {r["client"]: r["check"] for r in b.results
                if r["workload"] == wk}
        if len(set(sums.values())) > 1:
            bad.append("%s: %s" % (wk, sums))
    w("Sums of the JSON lengths agree across clients (workloads 2-5): %s" % (
        "yes" if not bad else "NO: " + "; ".join(bad)))
    w("")
    w("### Ratios: peer ÷ extension (above 1: the extension is better)")
    w("")
    w("| workload | " + " | ".join("CPU ×%s" % p for p in PEERS) + " | "
      + " | ".join("wall ×%s" % p for p in PEERS) + " |")
    w("|---|" + "---:|" * (2 * len(PEERS)))
    goals = {"cpu": [], "wall": []}
    for wk, title in WORKLOADS:
        ew = "count" if wk == "count_items" else wk
        e = med.get(("ext", ew))
        if not e:
            continue
        cells_c, cells_w = [], []
        for p in PEERS:
            m = med.get((p, wk))
            if not m:
                cells_c.append("-")
                cells_w.append("-")
                continue
            rc = m["cpu"] / max(e["cpu"], 1e-6)
            rw = m["wall"] / max(e["wall"], 1e-6)
            cells_c.append("%.1f" % rc)
            cells_w.append("%.2f" % rw)
            need = 20 if p.startswith("boto3") else 5
            goals["cpu"].append((title, p, rc, need))
            goals["wall"].append((title, p, rw))
        w("| %s | %s | %s |" % (title, " | ".join(cells_c),
                                " | ".join(cells_w)))
        e8 = med.get(("ext segments=8", ew))
        if e8:
            cc, cw = [], []
            for p in PEERS:
                m = med.get((p, wk))
                cc.append("%.1f" % (m["cpu"] / max(e8["cpu"], 1e-6))
                          if m else "-")
                cw.append("%.2f" % (m["wall"] / max(e8["wall"], 1e-6))
                          if m else "-")
            w("| %s, ext segments=8 (not the default) | %s | %s |" % (
                title, " | ".join(cc), " | ".join(cw)))
    w("")
    w("(1b compares the peers' item-reading count with the extension's "
      "`count(*)` of workload 1.)")
    w("")
    # latency
    lat = {}
    for wk in ("count", "scan_json"):
        for mode in ("live", "replay"):
            a = med.get(("%s segments=1" % mode, wk))
            z = med.get(("%s segments=8" % mode, wk))
            if a and z:
                lat[(wk, mode)] = (a, z, a["wall"] / max(z["wall"], 1e-6))
    w("### Latency run: the extension's full Scan through a proxy adding %s "
      "ms to every call, segments=1 against segments=8" %
      os.environ.get("BENCH_DELAY_MS", "20"))
    w("")
    w("| statement | mode | segments=1 wall s | segments=8 wall s | speed-up "
      "| calls (1 / 8) | CPU s (1 / 8) | runs |")
    w("|---|---|---:|---:|---:|---:|---:|---:|")
    for (wk, mode), (a, z, ratio) in lat.items():
        w("| `%s` | %s | %.3f | %.3f | %.2f× | %d / %d | %.3f / %.3f | %d |"
          % (EXT_SQL[wk], mode, a["wall"], z["wall"], ratio, a["calls"],
             z["calls"], a["cpu"], z["cpu"], a["n"]))
    w("")
    w("live: the proxy forwards to DynamoDB Local, whose own time per 1 MB "
      "page dominates; replay: the proxy answers the same requests from "
      "memory after the delay (server time ~0, as with a region that scales "
      "out), so only the delay and the client remain.")
    if getattr(b, "proxy_stats", None):
        w("Proxy counters: %s" % json.dumps(b.proxy_stats))
    w("")
    # goals
    w("### Goals of issue 6")
    w("")
    cpu_fail = [g for g in goals["cpu"] if g[2] < g[3]]
    w("* client CPU per item <= 1/20 of boto3's, <= 1/5 of the JS SDK's: "
      "%s" % ("met in every workload" if not cpu_fail and goals["cpu"]
              else "NOT met in %d of %d comparisons: %s" % (
                  len(cpu_fail), len(goals["cpu"]),
                  "; ".join("%s vs %s %.1f× (needs %d×)" % g
                            for g in cpu_fail))))
    wall_fail = [g for g in goals["wall"] if g[2] < 1.0]
    w("* wall time never worse than either peer: %s" % (
        "met" if not wall_fail and goals["wall"] else
        "NOT met in %d of %d comparisons: %s" % (
            len(wall_fail), len(goals["wall"]),
            "; ".join("%s vs %s %.2f×" % g for g in wall_fail))))
    for (wk, mode), (a, z, ratio) in lat.items():
        w("* 8 segments >= 5× faster than 1 at %s ms, `%s`, %s: %.2f× — %s"
          % (os.environ.get("BENCH_DELAY_MS", "20"), EXT_SQL[wk], mode,
             ratio, "met" if ratio >= 5 else "NOT met"))
    for c in ("ext", "ext segments=8"):
        m = med.get((c, "scan_json"))
        if m:
            limit = 64 + (m["cache_max"] or 0) / 1048576
            w("* peak RSS of the full Scan (%s): %.1f MiB, of which the cache "
              "held %.1f MiB at the end; goal < 64 MiB + budget %.0f MiB = "
              "%.0f MiB — %s" % (c, m["rss"], (m["cache_bytes"] or 0)
                                 / 1048576, (m["cache_max"] or 0) / 1048576,
                                 limit, "met" if m["rss"] < limit
                                 else "NOT met"))
    fl = getattr(b, "floor", {})
    if fl.get("curl_us") is not None and fl.get("rows_s") is not None:
        get = med.get(("boto3 client", "get_cold"))
        cnt = med.get(("boto3 client", "count"))
        ecnt = med.get(("ext", "count"))
        eget = med.get(("ext", "get_cold"))
        w("")
        w("### Floors: what the layers under the extension cost alone, "
          "in this run")
        w("")
        w("* a bare libcurl loop of the same GetItem on a kept-alive "
          "connection (`bench/scale/curl_floor.c`: no signing, JSON parsing, "
          "cache or SQL; HTTP %s, %d bytes an answer): **%.1f µs CPU a "
          "request**, user+sys, median of 3 runs of 2,000" %
          (fl.get("curl_status"), fl.get("curl_bytes", 0), fl["curl_us"]))
        w("* SQLite counting 100,000 rows of a virtual table that does "
          "nothing (`SELECT count(*) FROM generate_series(1, 100000)` in "
          "the same shell): **%.1f ms CPU**" % (1e3 * fl["rows_s"]))
        if get and eget:
            w("* cold GetItem: 1/20 of boto3's CPU is %.1f µs a call; "
              "libcurl alone costs %.1f µs (%s); the extension %.1f µs, of "
              "which %.1f µs are its own (signing, parsing, cache, the SQL "
              "join, the JSON)" % (
                  1e6 * get["cpu"] / get["items"] / 20, fl["curl_us"],
                  "the goal is below it" if 1e6 * get["cpu"] / get["items"]
                  / 20 < fl["curl_us"] else "the goal is above it",
                  1e6 * eget["cpu"] / eget["items"],
                  1e6 * eget["cpu"] / eget["items"] - fl["curl_us"]))
        if cnt and ecnt:
            least = fl["rows_s"] + ecnt["calls"] * fl["curl_us"] / 1e6
            w("* Select=COUNT Scan: 1/20 of boto3's CPU is %.2f ms; SQLite's "
              "row loop plus %d bare libcurl calls is %.2f ms (%s); the "
              "extension %.2f ms" % (
                  1e3 * cnt["cpu"] / 20, ecnt["calls"], 1e3 * least,
                  "the goal is below it" if cnt["cpu"] / 20 < least
                  else "the goal is above it", 1e3 * ecnt["cpu"]))
    w("")
    if b.plans:
        w("Plans: " + "; ".join("%s %s: `%s`" % (c, k, p)
                                for (c, k), p in sorted(b.plans.items())
                                if not c.startswith(("live", "replay"))))
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
    scan_reps = int(os.environ.get("BENCH_SCAN_REPS", "2"))
    # cheap workloads first, interleaved by client
    for rep in range(1, reps + 1):
        b.ext("ext", "query_json", rep)
        for p in PEERS:
            b.peer(p, "query_json", rep)
        b.ext("ext", "get", rep)
        b.peer("boto3 client", "get", rep)
        b.peer("JS SDK v3", "get", rep)
    # full Scans; every other repetition in the reverse order of clients
    for rep in range(1, scan_reps + 1):
        for wk in ("count", "scan_json"):
            runs = [lambda: b.ext("ext", wk, rep),
                    lambda: b.ext("ext", wk, rep, opts=", segments=8",
                                  label="ext segments=8")]
            runs += [lambda p=p: b.peer(p, wk, rep) for p in PEERS]
            for run in (runs if rep % 2 else runs[::-1]):
                run()
    b.floors()
    b.latency(float(os.environ.get("BENCH_DELAY_MS", "20")))
    for p in PEERS:
        b.peer(p, "count_items", 1)
    text, med = report(b, mach, load_info)
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump({"machine": mach, "results": b.results,
                   "skipped": b.skipped}, f, indent=1)
    with open(os.path.join(work, "report.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main(sys.argv)
