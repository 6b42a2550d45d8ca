"""http_response.py — the bench clients' HTTP/1.1 pieces (standard library only): reading responses,
holding many connections open.

framing(head) tells how a response's body is delimited (RFC 9112 §6); read_response(reader)
reads one whole response from an asyncio StreamReader; hold(...) opens and holds many
connections. Used by keepalive_get.py (its own non-blocking loop), bench/memory_client.py and
bench/tls_hold.py.
"""


def framing(head):
    """head: the response head without its final CRLFCRLF (bytes). Returns (status, length,
    chunked): the status code, the Content-Length (None when absent) and whether the body is
    chunked."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    length = None
    chunked = False
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value.strip())
        elif name == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    return status, length, chunked


async def read_response(reader):
    """Reads one HTTP/1.1 response (head and body) from an asyncio StreamReader; returns its
    status code. A chunked body's trailer section is expected empty."""
    head = await reader.readuntil(b"\r\n\r\n")
    status, length, chunked = framing(head[:-4])
    if chunked:
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    elif length:
        await reader.readexactly(length)
    return status


async def hold(open_one, n, concurrency, timeout, wait=True, abort=False):
    """Opens n connections with open_one() (a coroutine function returning a StreamWriter), at
    most `concurrency` at once, all within `timeout` seconds; prints "ready N" when they are all
    open; then, with `wait`, holds them until SIGTERM or SIGINT. Closes them at the end (resets
    them with `abort`, and after a failure). Returns the exit code: 0, or 1 after a failure
    (reported on stderr as "error: ...")."""
    import asyncio
    import signal
    import sys

    writers = []
    sem = asyncio.Semaphore(concurrency)

    async def guarded():
        async with sem:
            writers.append(await open_one())

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    rc = 0
    try:
        await asyncio.wait_for(asyncio.gather(*(guarded() for _ in range(n))), timeout)
        print(f"ready {len(writers)}", flush=True)
        if wait:
            await stop.wait()
    except Exception as e:  # noqa: BLE001 - any failure ends the run
        print(f"error: {type(e).__name__}: {e} ({len(writers)} connections were open)",
              file=sys.stderr, flush=True)
        rc = 1
    for w in writers:
        if rc or abort:
            w.transport.abort()
        else:
            w.close()
    await asyncio.sleep(0)
    return rc
