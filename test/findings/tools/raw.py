import socket, sys, time
def raw(data, port=28080, wait=1.0, chunks=None, delay=0.0, half_close=False):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(wait)
    if chunks is None: chunks=[data]
    for c in chunks:
        s.sendall(c if isinstance(c, bytes) else c.encode())
        if delay: time.sleep(delay)
    if half_close: s.shutdown(socket.SHUT_WR)
    out=b""
    try:
        while True:
            d=s.recv(65536)
            if not d: out+=b"<EOF>"; break
            out+=d
    except socket.timeout:
        out+=b"<TIMEOUT>"
    except ConnectionResetError:
        out+=b"<RST>"
    s.close()
    return out
if __name__=="__main__":
    d=sys.argv[1].encode().decode('unicode_escape').encode('latin1')
    print(raw(d, wait=float(sys.argv[2]) if len(sys.argv)>2 else 1.0).decode('latin1'))
