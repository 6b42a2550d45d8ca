#!/usr/bin/env python3
"""bench/tls_hold.py — opens N TLS keep-alive connections, one request on each, then holds them.

    bench/tls_hold.py HOST PORT N [--concurrency C] [--timeout S]

Opens N connections to HOST:PORT over TLS (no certificate verification, no session resumption,
ALPN http/1.1), sends `GET / HTTP/1.1` with `Connection: keep-alive` on each and reads the whole
response (Content-Length or chunked), at most C handshakes in flight at a time. When all N are
open and idle it prints `ready N` on stdout and waits (connections idle, nothing sent) until it
gets SIGTERM or SIGINT; then it closes them and exits 0. On any failure it prints
`error: ...` on stderr and exits 1 (after closing what it opened). Used by bench/tls for the
memory-per-idle-connection figure; needs only the Python standard library.
"""
import argparse
import asyncio
import os
import ssl
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from http_response import hold, read_response  # noqa: E402  (bench/lib)


async def open_one(host, port, ctx, request):
    reader, writer = await asyncio.open_connection(host, port, ssl=ctx, server_hostname=None)
    writer.write(request)
    await writer.drain()
    status = await read_response(reader)
    if status != 200:
        raise RuntimeError(f"status {status}")
    return writer


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("--concurrency", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds to open all N")
    args = ap.parse_args()

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["http/1.1"])
    ctx.options |= ssl.OP_NO_TICKET
    request = (f"GET / HTTP/1.1\r\nHost: {args.host}:{args.port}\r\n"
               "Connection: keep-alive\r\n\r\n").encode()

    return await hold(lambda: open_one(args.host, args.port, ctx, request), args.n,
                      args.concurrency, args.timeout, abort=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
