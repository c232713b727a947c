#!/usr/bin/env python3
"""A loopback HTTP/1.1 proxy that adds a fixed delay to every call.

    python3 bench/scale/proxy.py UPSTREAM_PORT DELAY_MS PORTFILE [MAX_SECONDS]

Listens on 127.0.0.1 (a free port, written to PORTFILE), forwards each
request to 127.0.0.1:UPSTREAM_PORT (DynamoDB Local) over one upstream
connection per client connection (keep-alive both sides), and holds every
request DELAY_MS before sending it on: the round trip to a distant region.

Three modes, switched by a POST to /__bench/mode/live, /__bench/mode/replay
or /__bench/mode/pass:

  live    forward, and remember each answer by (X-Amz-Target, body);
  replay  answer a request seen before from memory, after the same delay,
          without asking DynamoDB Local: DynamoDB's own time per page
          becomes ~0, so what is left is the delay and the client (the
          situation of a client far from a region whose servers scale).
          A request not seen before is forwarded (counted as a miss).
  pass    forward, remember nothing (bench.py's mode: every client's
          requests see DynamoDB Local and the delay, and the proxy's
          memory stays small).

With BENCH_PROXY_LOG=PATH in its environment, it appends one line per
request it forwards to DynamoDB Local: the client connection's number, the
times (seconds since the epoch) the request arrived, was sent on, and was
answered, and its X-Amz-Target; bench.py reads it to show DynamoDB Local's
own time per request for each client.

GET /__bench/stats returns JSON counters.  Bounded: at most 64 client
connections at once (more are closed), request heads of 64 KiB and bodies
of 16 MiB at the most, idle connections closed after 300 s, and the
process exits by itself after MAX_SECONDS (default 1800).  Loopback only.
"""

import asyncio
import json
import os
import sys
import time

MAX_CONN = 64
MAX_HEAD = 64 * 1024
MAX_BODY = 16 * 1024 * 1024
IDLE = 300.0
MAX_REMEMBERED = 512 * 1024 * 1024  # bytes of remembered answers

TIMELINE = None  # the BENCH_PROXY_LOG file, or None
conn_seq = [0]
state = {"mode": "live", "calls": 0, "replayed": 0, "misses": 0,
         "remembered_bytes": 0, "refused": 0, "conns": 0}
memory = {}


class Closed(Exception):
    pass


async def read_head(reader):
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE)
    except (asyncio.IncompleteReadError, asyncio.TimeoutError,
            ConnectionError):
        raise Closed()
    except asyncio.LimitOverrunError:
        raise Closed()
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return head, lines[0], headers


async def read_body(reader, headers):
    """The body as received (raw bytes), and its decoded content."""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        raw, data = bytearray(), bytearray()
        for _ in range(1 << 20):
            line = await reader.readuntil(b"\r\n")
            raw += line
            size = int(line.split(b";")[0].strip(), 16)
            if len(data) + size > MAX_BODY:
                raise Closed()
            chunk = await reader.readexactly(size + 2)
            raw += chunk
            data += chunk[:-2]
            if size == 0:
                # no trailers expected: chunk is just CRLF
                return bytes(raw), bytes(data)
        raise Closed()
    n = int(headers.get("content-length", "0"))
    if n > MAX_BODY:
        raise Closed()
    body = await reader.readexactly(n)
    return body, body


def strip_expect(head):
    lines = head.decode("latin-1").split("\r\n")
    keep = [l for l in lines if not l.lower().startswith("expect:")]
    return "\r\n".join(keep).encode("latin-1")


async def control(writer, reqline):
    path = reqline.split(" ")[1]
    if path.startswith("/__bench/mode/"):
        state["mode"] = path.rsplit("/", 1)[1]
    body = json.dumps(state).encode()
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()


async def handle(reader, writer, upstream_port, delay):
    if state["conns"] >= MAX_CONN:
        state["refused"] += 1
        writer.close()
        return
    state["conns"] += 1
    conn_seq[0] += 1
    conn_id = conn_seq[0]
    up = None
    try:
        for _ in range(10 ** 7):
            head, reqline, headers = await read_head(reader)
            if "100-continue" in headers.get("expect", "").lower():
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                await writer.drain()
                head = strip_expect(head)
            raw_body, body = await read_body(reader, headers)
            if " /__bench/" in reqline:
                await control(writer, reqline)
                continue
            state["calls"] += 1
            key = (headers.get("x-amz-target", ""), body)
            t_arrived = time.time()
            await asyncio.sleep(delay)
            if state["mode"] == "replay" and key in memory:
                state["replayed"] += 1
                writer.write(memory[key])
                await writer.drain()
                continue
            if state["mode"] == "replay":
                state["misses"] += 1
            t_sent = time.time()
            for attempt in (1, 2):
                fresh = up is None
                if fresh:
                    up = await asyncio.open_connection(
                        "127.0.0.1", upstream_port, limit=MAX_HEAD)
                try:
                    up[1].write(head + raw_body)
                    await up[1].drain()
                    rhead, _, rheaders = await read_head(up[0])
                    rraw, _ = await read_body(up[0], rheaders)
                    break
                except (Closed, ConnectionError,
                        asyncio.IncompleteReadError):
                    # a kept-alive upstream connection that the server
                    # closed meanwhile: once more on a new one
                    up[1].close()
                    up = None
                    if fresh or attempt == 2:
                        raise Closed()
            answer = rhead + rraw
            if TIMELINE:
                TIMELINE.write("%d %.6f %.6f %.6f %s\n" % (
                    conn_id, t_arrived, t_sent, time.time(),
                    key[0].rsplit(".", 1)[-1] or "-"))
            if (state["mode"] == "live" and state["remembered_bytes"]
                    + len(answer) <= MAX_REMEMBERED and key not in memory):
                memory[key] = answer
                state["remembered_bytes"] += len(answer)
            writer.write(answer)
            await writer.drain()
            if rheaders.get("connection", "").lower() == "close":
                up[1].close()
                up = None
    except (Closed, ConnectionError, asyncio.IncompleteReadError,
            asyncio.LimitOverrunError, ValueError):
        pass
    finally:
        state["conns"] -= 1
        if up is not None:
            up[1].close()
        writer.close()


async def main(argv):
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    global TIMELINE
    upstream_port, delay = int(argv[1]), float(argv[2]) / 1000.0
    if os.environ.get("BENCH_PROXY_LOG"):
        TIMELINE = open(os.environ["BENCH_PROXY_LOG"], "a", buffering=1)
    portfile = argv[3]
    max_seconds = float(argv[4]) if len(argv) == 5 else 1800.0
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, upstream_port, delay), "127.0.0.1", 0,
        limit=MAX_HEAD)
    port = server.sockets[0].getsockname()[1]
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.replace(tmp, portfile)
    async with server:
        try:
            await asyncio.wait_for(server.serve_forever(), max_seconds)
        except asyncio.TimeoutError:
            pass


if __name__ == "__main__":
    asyncio.run(main(sys.argv))
