#!/usr/bin/env python3
"""bench/memory_client.py — the connection-holding client of bench/memory.

    bench/memory_client.py hold HOST PORT N [--close] [--concurrency C] [--timeout S]
    bench/memory_client.py connect HOST PORT N [--timeout S]

hold:    opens N plain TCP connections to HOST:PORT, at most C (default 200) being opened at a
         time, sends one `GET / HTTP/1.1` on each and reads the whole response. Keep-alive by
         default: when all N are open and idle it prints `ready N` on stdout and holds them (no
         byte sent) until SIGTERM or SIGINT, then closes them and exits 0. With --close each
         request says `Connection: close`: the server answers and closes; the client prints
         `ready N` once every response was read and the server's FIN seen, and exits 0.
connect: N back-to-back connects (all started in one go, none waits for another), then one
         keep-alive GET on each as soon as it is connected; prints `connected N SECONDS` where
         SECONDS is the time from the first connect() to the last complete response, then
         closes them and exits 0. A listen queue too short for N shows here as the SYN
         retransmission delay (1 s, then 3 s, ...).

On any failure it prints `error: ...` on stderr and exits 1 (after closing what it opened).
Needs only the Python standard library; raise `ulimit -n` above N before running it.
"""
import argparse
import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from http_response import hold, read_response  # noqa: E402  (bench/lib)


def request(host, port, close):
    conn = "close" if close else "keep-alive"
    return f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: {conn}\r\n\r\n".encode()


async def one_request(host, port, close):
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(request(host, port, close))
    await writer.drain()
    status = await read_response(reader)
    if status != 200:
        raise RuntimeError(f"status {status}")
    if close:
        if await reader.read(1) != b"":  # the server's FIN
            raise RuntimeError("bytes after a Connection: close response")
    return writer


async def hold_idle(args):
    return await hold(lambda: one_request(args.host, args.port, args.close), args.n,
                      args.concurrency, args.timeout, wait=not args.close)


async def connect(args):
    writers = []
    start = time.monotonic()
    try:
        done = await asyncio.wait_for(
            asyncio.gather(*(one_request(args.host, args.port, False) for _ in range(args.n))),
            args.timeout)
        elapsed = time.monotonic() - start
        writers = list(done)
        print(f"connected {len(writers)} {elapsed:.3f}", flush=True)
        rc = 0
    except Exception as e:  # noqa: BLE001
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        rc = 1
    for w in writers:
        w.close()
    await asyncio.sleep(0)
    return rc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["hold", "connect"])
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("--close", action="store_true", help="hold: Connection: close requests")
    ap.add_argument("--concurrency", type=int, default=200)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds for all N")
    args = ap.parse_args()
    return asyncio.run(hold_idle(args) if args.mode == "hold" else connect(args))


if __name__ == "__main__":
    sys.exit(main())
