import random, socket, base64, time, sys
R=random.Random(int(sys.argv[1]))
def rb(n): return bytes(R.randrange(256) for _ in range(n))
def pick(*a): return R.choice(a)
bits=[b"%00",b"%",b"%2",b"%zz",b"+",b"&",b"=",b"..",b"%2e",b";",b"\xff",b"\xc0\xaf",b"a",b"1",b"-1",b"1e999",b"true",b"d",b"a=",b"[",b"]",b"{",b'"']
def junk(n): return b"".join(R.choice(bits) for _ in range(n))
def b64(x): return base64.b64encode(x)
def req():
    path=pick(b"/",b"/j",b"/b",b"/k",b"/x")+pick(b"",b"/"+junk(3))
    q=b"&".join(pick(b"a",b"b",b"c",b"d",b"api_key",junk(1))+b"="+junk(R.randrange(4)) for _ in range(R.randrange(6)))
    h=[b"Host: a"]
    if R.random()<.5: h.append(b"Origin: "+pick(b"null",b"https://a.example.com",b"https://x.b.com",b"https://pr-1.x.net",b"https://"+junk(5),b"https://"+b"a"*R.randrange(2000)))
    if R.random()<.3: h.append(b"Access-Control-Request-Method: "+pick(b"GET",b"PUT",b"x"))
    if R.random()<.3: h.append(b"Access-Control-Request-Headers: "+b",".join(pick(b"a",b"",b" ",b"x-y") for _ in range(R.randrange(50))))
    if R.random()<.5: h.append(b"X-Forwarded-For: "+b",".join(pick(b"1.2.3.4",b"10.1.1.1",b"::1",b"[::1]:80",b"garbage",b"",b"unknown",b"1.2.3.4:5") for _ in range(R.randrange(40))))
    if R.random()<.5: h.append(b"Authorization: "+pick(b"Basic ",b"Bearer ",b"basic ",b"")+pick(b64(junk(4)),b64(b"slow:"+junk(2)),junk(5),b".".join(base64.urlsafe_b64encode(junk(4)) for _ in range(3)),b"eyJhbGciOiJIUzI1NiJ9."+b64(b'{"sub":'+junk(3)+b'}')+b".x"))
    if R.random()<.3: h.append(b"X-K: "+junk(3))
    if R.random()<.3: h.append(b"X-T: "+pick(b"x",b"y",b"z",b""))
    if R.random()<.3: h.append(b"X-Api-Key: "+pick(b"k1",junk(2)))
    body=b""
    if R.random()<.5:
        body=pick(b'{"a":{"b":{"c":'+junk(2)+b'}},"s":"'+junk(2)+b'"}', junk(10), b"["*R.randrange(30)+b"]"*R.randrange(30), b'{"s":"\xff"}', b'{"a":1,"a":2}')
        h.append(b"Content-Type: "+pick(b"application/json",b"application/JSON; charset=x",b"text/plain",b"application/x+json"))
        if R.random()<.5: h.append(b"Content-Length: %d"%len(body))
        else:
            h.append(b"Transfer-Encoding: chunked"); body=b"%x\r\n"%len(body)+body+b"\r\n0\r\n\r\n" if body else b"0\r\n\r\n"
    m=pick(b"GET",b"POST",b"OPTIONS",b"HEAD",b"PUT")
    return m+b" "+path+(b"?"+q if q else b"")+b" HTTP/1.1\r\n"+b"\r\n".join(h)+b"\r\n\r\n"+body
n=0; t0=time.time()
while time.time()-t0<float(sys.argv[2]):
    s=socket.create_connection(("127.0.0.1",28080)); s.settimeout(2)
    data=b"".join(req() for _ in range(R.randrange(1,5)))
    try:
        s.sendall(data); s.shutdown(socket.SHUT_WR)
        while s.recv(65536): pass
    except Exception as e: pass
    s.close(); n+=1
print("conns",n)
