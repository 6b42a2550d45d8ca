#!/usr/bin/env python3
"""bench/bodies_backend.py — the backend of bench/bodies: HTTP/1.1, keep-alive, one thread per
connection, standard library only.

  bodies_backend.py PORT FILE

  GET /...          200 with FILE's size in zeros, Content-Length, sent with os.sendfile from a
                    16 MiB sparse chunk file (FILE.chunk) over and over: no user-space copy, and
                    the page cache holds 16 MiB rather than the whole body
  GET /ping         200 "ok\n" (readiness)
  PUT|POST /...     reads the body (Content-Length or chunked) into one reused buffer and drops
                    it, then 200 with the byte count as the body ("<n>\n")

Prints "ready" once listening. Serves until killed. Bodies are never kept: the backend's memory
does not grow with them. Errors close the connection.
"""
import os
import socket
import sys
import threading

CHUNK_FILE_BYTES = 16 * 1024 * 1024
RECV_BYTES = 256 * 1024


class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()  # bytes read and not yet consumed (heads and chunk-size lines)
        self.scratch = bytearray(RECV_BYTES)
        self.view = memoryview(self.scratch)

    def fill(self):
        n = self.sock.recv_into(self.view)
        if n == 0:
            raise EOFError
        self.buf += self.view[:n]

    def line(self, limit=65536):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                out = bytes(self.buf[:i])
                del self.buf[: i + 2]
                return out
            if len(self.buf) > limit:
                raise ValueError("line too long")
            self.fill()

    def skip(self, n):
        """Reads and drops n bytes."""
        take = min(n, len(self.buf))
        del self.buf[:take]
        n -= take
        while n > 0:
            r = self.sock.recv_into(self.view, min(n, RECV_BYTES))
            if r == 0:
                raise EOFError
            n -= r

    def read_body(self, headers):
        te = headers.get(b"transfer-encoding", b"").lower()
        if b"chunked" in te:
            total = 0
            while True:
                size = int(self.line().split(b";", 1)[0].strip(), 16)
                if size == 0:
                    while self.line():  # trailers up to the empty line
                        pass
                    return total
                self.skip(size)
                total += size
                if self.line() != b"":
                    raise ValueError("no CRLF after chunk")
        n = int(headers.get(b"content-length", b"0"))
        self.skip(n)
        return n


def reply(sock, body, extra=b""):
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n%s\r\n%s"
                 % (len(body), extra, body))


def serve(sock, size, chunk_fd):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c = Conn(sock)
    try:
        while True:
            request = c.line()
            if not request:
                continue
            method, target, _ = request.split(b" ", 2)
            headers = {}
            while True:
                h = c.line()
                if not h:
                    break
                name, _, value = h.partition(b":")
                headers[name.strip().lower()] = value.strip()
            if method in (b"PUT", b"POST"):
                n = c.read_body(headers)
                reply(sock, b"%d\n" % n)
            elif target == b"/ping":
                reply(sock, b"ok\n")
            else:
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                             b"Content-Length: %d\r\n\r\n" % size)
                left = size
                while left > 0:
                    want = min(left, CHUNK_FILE_BYTES)
                    off = 0
                    while off < want:
                        sent = os.sendfile(sock.fileno(), chunk_fd, off, want - off)
                        if sent == 0:
                            raise EOFError
                        off += sent
                    left -= want
            if headers.get(b"connection", b"").lower() == b"close":
                return
    except (EOFError, ConnectionError, ValueError, OSError):
        pass
    finally:
        sock.close()


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    size = os.path.getsize(path)
    chunk = path + ".chunk"
    with open(chunk, "wb") as f:
        f.truncate(CHUNK_FILE_BYTES)  # sparse: zeros, no disk blocks
    chunk_fd = os.open(chunk, os.O_RDONLY)
    # Read once: the first read of a sparse file's holes fills the page cache, which is slow on
    # some virtual machines (~14 s/GiB here) and must not land in a measured transfer.
    off = 0
    while off < CHUNK_FILE_BYTES:
        off += len(os.pread(chunk_fd, 1 << 20, off))
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(128)
    print("ready", flush=True)
    while True:
        s, _ = ls.accept()
        threading.Thread(target=serve, args=(s, size, chunk_fd), daemon=True).start()


if __name__ == "__main__":
    main()
