#!/usr/bin/python3
"""A real WebSocket peer for sluice's integration tests (Debian's python3-websockets).

  ws_peer.py server --port-file FILE [--cert PEM --key PEM]
      An echo server on 127.0.0.1 (a port the kernel picks, written to FILE once listening).
      Every message comes back as it was sent (text as text, binary as binary). The message
      "please-close" makes the server start the close handshake (code 4001, "server bye").
      Prints one line per event, flushed: "open PATH", "closed CODE REASON".

  ws_peer.py client --url URL [--ca PEM --server-name NAME] --scenario NAME
      Connects through sluice and runs one scenario; prints "OK ..." and exits 0, or prints
      "FAIL ..." and exits 1. Scenarios:
        echo          a text and a binary message echo
        big           a 1 MiB binary message echoes intact
        many          1000 messages sent back to back come back in order
        close         the client closes (4000, "bye"); prints the close code the server sent
        server_close  the server closes (4001); prints the code the client received
"""
import argparse
import asyncio
import os
import ssl
import sys

import websockets


def log(*args):
    print(*args, flush=True)


async def serve(args):
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)

    async def echo(ws, path=None):
        log("open", path if path is not None else ws.path)
        try:
            async for message in ws:
                if message == "please-close":
                    await ws.close(4001, "server bye")
                    break
                await ws.send(message)
        except websockets.ConnectionClosed:
            pass
        log("closed", ws.close_code, ws.close_reason or "-")

    async with websockets.serve(echo, "127.0.0.1", 0, ssl=context, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(port))
        os.rename(tmp, args.port_file)
        log("listening", port)
        await asyncio.Future()


async def run_client(args):
    context = None
    if args.url.startswith("wss:"):
        context = ssl.create_default_context(cafile=args.ca)
    kwargs = {"max_size": None, "open_timeout": 10, "close_timeout": 10}
    if context is not None:
        kwargs["ssl"] = context
        if args.server_name:
            kwargs["server_hostname"] = args.server_name
    async with websockets.connect(args.url, **kwargs) as ws:
        if args.scenario == "echo":
            await ws.send("hello through sluice")
            text = await asyncio.wait_for(ws.recv(), 10)
            await ws.send(b"\x00\x01\xfe\xff binary")
            data = await asyncio.wait_for(ws.recv(), 10)
            if text != "hello through sluice" or data != b"\x00\x01\xfe\xff binary":
                return "FAIL echo: %r %r" % (text, data)
            return "OK echo"
        if args.scenario == "big":
            payload = os.urandom(1 << 20)
            await ws.send(payload)
            back = await asyncio.wait_for(ws.recv(), 30)
            if back != payload:
                return "FAIL big: %d bytes back, equal=%s" % (len(back), back == payload)
            return "OK big %d" % len(back)
        if args.scenario == "many":
            n = 1000
            for i in range(n):
                await ws.send("message %d %s" % (i, "x" * (i % 200)))
            for i in range(n):
                got = await asyncio.wait_for(ws.recv(), 30)
                want = "message %d %s" % (i, "x" * (i % 200))
                if got != want:
                    return "FAIL many: message %d was %r" % (i, got[:40])
            return "OK many %d" % n
        if args.scenario == "close":
            await ws.close(4000, "bye")
            return "OK close %s %s" % (ws.close_code, ws.close_reason)
        if args.scenario == "server_close":
            await ws.send("please-close")
            try:
                await asyncio.wait_for(ws.recv(), 10)
                return "FAIL server_close: got a message"
            except websockets.ConnectionClosed as e:
                return "OK server_close %s %s" % (e.rcvd.code if e.rcvd else None,
                                                  e.rcvd.reason if e.rcvd else None)
        return "FAIL unknown scenario " + args.scenario


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("server")
    s.add_argument("--port-file", required=True)
    s.add_argument("--cert")
    s.add_argument("--key")
    c = sub.add_parser("client")
    c.add_argument("--url", required=True)
    c.add_argument("--ca")
    c.add_argument("--server-name")
    c.add_argument("--scenario", required=True)
    args = parser.parse_args()
    if args.mode == "server":
        asyncio.run(serve(args))
        return 0
    try:
        result = asyncio.run(run_client(args))
    except Exception as e:  # the test prints this line on failure
        result = "FAIL %s: %r" % (type(e).__name__, e)
    log(result)
    return 0 if result.startswith("OK") else 1


if __name__ == "__main__":
    sys.exit(main())
