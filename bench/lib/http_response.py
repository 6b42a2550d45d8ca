"""http_response.py — reading HTTP/1.1 responses in the bench clients (standard library only).

framing(head) tells how a response's body is delimited (RFC 9112 §6); read_response(reader)
reads one whole response from an asyncio StreamReader. Used by keepalive_get.py (its own
non-blocking loop), bench/memory_client.py and bench/tls_hold.py.
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
