import socket, time, sys, random
N=int(sys.argv[1]); delay=sys.argv[2]; mode=sys.argv[3]
socks=[]
for i in range(N):
    s=socket.socket(); s.setblocking(True)
    try: s.connect(("127.0.0.1",28080))
    except Exception as e: print("connect fail", i, e); break
    s.sendall(f"GET /x{i} HTTP/1.1\r\nHost: a\r\nX-Probe-Pause: request_headers\r\nX-Probe-Delay-Ms: {delay}\r\n\r\n".encode())
    socks.append(s)
print("sent", len(socks), flush=True)
if mode=="abort":
    time.sleep(0.5)
    for s in socks[::2]:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\x01\x00\x00\x00\x00\x00\x00\x00'); s.close()
    socks=socks[1::2]
ok=0; bad={}
for s in socks:
    s.settimeout(30)
    try:
        d=s.recv(100)
        st=d[:12].decode('latin1')
        if b" 200 " in d[:13]: ok+=1
        else: bad[st]=bad.get(st,0)+1
    except Exception as e: bad[str(e)]=bad.get(str(e),0)+1
print("ok",ok,"bad",bad)
