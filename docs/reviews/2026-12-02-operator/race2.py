import http.client, json, random, threading, time, sys
D=float(sys.argv[1]); n=[0]
def w(seed):
    r=random.Random(seed); end=time.time()+D
    while time.time()<end:
        c=http.client.HTTPConnection("127.0.0.1",19906,timeout=10)
        body=json.dumps(r.choice([{"max_queue": r.randint(1,100)},{"queue_timeout":"%dms"%r.randint(100,5000)}]))
        c.request("PUT","/pools/api/limits",body=body); c.getresponse().read(); c.close(); n[0]+=1
        time.sleep(0.005)
ts=[threading.Thread(target=w,args=(i,)) for i in range(3)]; [t.start() for t in ts]; [t.join() for t in ts]; print("changes", n[0])
