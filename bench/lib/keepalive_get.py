#!/usr/bin/env python3
"""keepalive_get.py — exactly N keep-alive GETs over C connections, for bench/instructions.

    keepalive_get.py HOST PORT N [--connections C] [--path P] [--header 'Name: value']...

Opens C connections, then sends GETs round robin over them, one outstanding per connection,
until N responses have come back (N is split as evenly as the connections allow). Every response
must be a 200 with a body framed by Content-Length or chunked encoding (RFC 9112 §6); anything
else exits 1 with the reason. The connections are closed at the end. Speed does not matter here:
the proxy runs under callgrind, and what is counted is its instructions, not this client's time.
"""

import argparse
import selectors
import socket
import sys

from http_response import framing  # bench/lib, beside this file


class Conn:
    def __init__(self, host, port, request):
        self.sock = socket.create_connection((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.request = request
        self.buf = b""
        self.remaining = 0  # requests this connection still has to send

    def send(self):
        self.sock.sendall(self.request)

    def response_done(self):
        """Consumes one whole response from buf if it is there; True when it was."""
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return False
        status, length, chunked = framing(self.buf[:end])
        if status != 200:
            line = self.buf[:end].split(b"\r\n")[0]
            sys.exit(f"keepalive_get: unexpected status line {line!r}")
        body = self.buf[end + 4:]
        if chunked:
            pos = 0
            while True:
                eol = body.find(b"\r\n", pos)
                if eol < 0:
                    return False
                size = int(body[pos:eol].split(b";")[0], 16)
                if size == 0:
                    trailer_end = body.find(b"\r\n", eol + 2)
                    if trailer_end < 0:
                        return False
                    self.buf = body[trailer_end + 2:]
                    return True
                if len(body) < eol + 2 + size + 2:
                    return False
                pos = eol + 2 + size + 2
        if length is None:
            sys.exit("keepalive_get: a response without Content-Length or chunked framing")
        if len(body) < length:
            return False
        self.buf = body[length:]
        return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--path", default="/")
    ap.add_argument("--header", action="append", default=[])
    args = ap.parse_args()
    lines = [f"GET {args.path} HTTP/1.1", f"Host: {args.host}:{args.port}"] + args.header
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    conns = [Conn(args.host, args.port, request) for _ in range(args.connections)]
    for i in range(args.n):
        conns[i % len(conns)].remaining += 1
    sel = selectors.DefaultSelector()
    for c in conns:
        if c.remaining:
            c.send()
            sel.register(c.sock, selectors.EVENT_READ, c)
    done = 0
    while done < args.n:
        events = sel.select(timeout=60)
        if not events:
            sys.exit(f"keepalive_get: no response for 60 s after {done} of {args.n}")
        for key, _ in events:
            c = key.data
            data = c.sock.recv(1 << 20)
            if not data:
                sys.exit(f"keepalive_get: the server closed a connection after {done} responses")
            c.buf += data
            while c.remaining and c.response_done():
                c.remaining -= 1
                done += 1
                if c.remaining:
                    c.send()
            if not c.remaining:
                sel.unregister(c.sock)
    for c in conns:
        c.sock.close()
    print(done)


if __name__ == "__main__":
    main()
