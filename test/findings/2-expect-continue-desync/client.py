# A client that sends Expect: 100-continue, gets a final 401 instead of 100, so (as RFC 9110
# §10.1.1 allows) does not send the body, and reuses the connection for its next request.
import socket, time
s = socket.create_connection(("127.0.0.1", 28280)); s.settimeout(2)
s.sendall(b"POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n")
time.sleep(0.3)
print(s.recv(4096).decode())
s.sendall(b"GET /next HTTP/1.1\r\nHost: a\r\nX-Api-Key: secret-key-1\r\n\r\n")
out = b""
try:
    while True:
        d = s.recv(4096)
        if not d: break
        out += d
except socket.timeout: pass
print(out.decode())
