import socket, sys, time, threading
N=int(sys.argv[1]); T=4; BATCH=200
res={}
def worker(t):
    s=socket.create_connection(("127.0.0.1",28080)); f=s.makefile('rb')
    cnt={}
    for b in range(t, N//BATCH, T):
        reqs=b"".join(b"GET / HTTP/1.1\r\nHost: a\r\nX-Deny: 1\r\nX-Key: k%d\r\n\r\n" % (b*BATCH+i) for i in range(BATCH))
        s.sendall(reqs)
        for i in range(BATCH):
            line=f.readline(); st=line[9:12]
            cl=0
            while True:
                h=f.readline()
                if h in (b"\r\n",b""): break
                if h.lower().startswith(b"content-length:"): cl=int(h.split(b":")[1])
            f.read(cl); cnt[st]=cnt.get(st,0)+1
    res[t]=cnt
ts=[threading.Thread(target=worker,args=(t,)) for t in range(T)]
t0=time.time(); [x.start() for x in ts]; [x.join() for x in ts]
tot={}
for c in res.values():
    for k,v in c.items(): tot[k]=tot.get(k,0)+v
print(tot, "%.1fs"%(time.time()-t0))
