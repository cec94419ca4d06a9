#!/usr/bin/env python3
"""One bounded run: upstream + gate (one pool) + load, sampling the pool's limit once a second.

run.py NAME --upstream "CMD with {port}" --pool none|static:N|adaptive[:k=v,...]
       --load "--rate 30 --duration 25s --patience 3s" [--queue-timeout 1s] [--max-queue N]
Writes results/NAME.json (load report, samples, upstream stats, metrics at the end).
"""
import argparse, json, os, shlex, signal, socket, subprocess, sys, threading, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "../../.."))
BIN = os.environ.get("SGBIN", os.path.join(ROOT, "target/release/sluicegate"))


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def wait_port(port, t=10):
    end = time.time() + t
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close(); return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"port {port} never opened")


def get(url, t=2):
    with urllib.request.urlopen(url, timeout=t) as r:
        return r.read().decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name"); ap.add_argument("--upstream", required=True)
    ap.add_argument("--pool", required=True); ap.add_argument("--load", required=True)
    ap.add_argument("--queue-timeout", default="1s"); ap.add_argument("--max-queue", default="1024")
    ap.add_argument("--gate-workers", default="1"); ap.add_argument("--extra", default="")
    a = ap.parse_args()
    up, gp, ap_ = free_port(), free_port(), free_port()
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    cfg = os.path.join(HERE, "results", a.name + ".toml")
    pool = f'[[pools]]\nname = "p"\nupstream = "http://127.0.0.1:{up}"\nmax_queue = {a.max_queue}\nqueue_timeout = "{a.queue_timeout}"\n{a.extra}\n'
    if a.pool == "none":
        pool += "max_concurrency = 2000000\n"
    elif a.pool.startswith("static:"):
        pool += f"max_concurrency = {a.pool.split(':')[1]}\n"
    else:
        pool += "[pools.adaptive]\n"
        if ":" in a.pool:
            for kv in a.pool.split(":", 1)[1].split(","):
                k, v = kv.split("=")
                pool += f"{k} = {v if v.isdigit() else json.dumps(v)}\n"
    with open(cfg, "w") as f:
        f.write(f'listen = "127.0.0.1:{gp}"\nworkers = {a.gate_workers}\n[admin]\nlisten = "127.0.0.1:{ap_}"\n\n{pool}\n[[routes]]\npool = "p"\n')
    procs = []
    log = open(os.path.join(HERE, "results", a.name + ".gate.log"), "w")
    try:
        ucmd = a.upstream.replace("{port}", str(up)).replace("{bin}", BIN)
        procs.append(subprocess.Popen(shlex.split(ucmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_port(up)
        procs.append(subprocess.Popen([BIN, "serve", "--config", cfg], stdout=log, stderr=log))
        wait_port(gp); wait_port(ap_)
        samples, stop = [], threading.Event()
        t0 = time.time()

        def sampler():
            while not stop.is_set():
                try:
                    st = json.loads(get(f"http://127.0.0.1:{ap_}/status"))
                    p = st["pools"]["p"] if "pools" in st else st["p"]
                    samples.append({"t": round(time.time() - t0, 2), "limit": p.get("limit"),
                                    "in_flight": p.get("in_flight"), "queued": p.get("queued"),
                                    "c": p.get("counters")})
                except Exception as e:
                    samples.append({"t": round(time.time() - t0, 2), "err": str(e)})
                stop.wait(1.0)
        th = threading.Thread(target=sampler, daemon=True); th.start()
        lcmd = [BIN, "load", "--url", f"http://127.0.0.1:{gp}/", "--json"] + shlex.split(a.load)
        lp = subprocess.Popen(lcmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(lp)
        try:
            so, se = lp.communicate(timeout=45)
        except subprocess.TimeoutExpired:
            lp.kill(); so, se = lp.communicate()
        out = argparse.Namespace(stdout=so or "", stderr=se or "")
        stop.set(); th.join()
        try:
            rep = json.loads(out.stdout.strip().splitlines()[-1])
        except Exception:
            rep = {"raw": out.stdout, "err": out.stderr}
        load1 = os.getloadavg()[0]
        metrics = get(f"http://127.0.0.1:{ap_}/metrics")
        status = json.loads(get(f"http://127.0.0.1:{ap_}/status"))
        try:
            ustats = json.loads(get(f"http://127.0.0.1:{up}/__upstream/stats"))
        except Exception:
            ustats = None
        res = {"name": a.name, "args": vars(a), "load": rep, "samples": samples,
               "upstream": ustats, "loadavg1": load1, "status": status, "metrics": metrics}
        rep.pop("closes", None)
        if ustats: ustats.pop("late_starts", None)
        with open(os.path.join(HERE, "results", a.name + ".json"), "w") as f:
            json.dump(res, f, indent=1)
        lim = [s.get("limit") for s in samples if "limit" in s]
        infl = [s.get("in_flight") for s in samples if "in_flight" in s]
        print(json.dumps({"name": a.name, "goodput": rep.get("goodput"), "ok": rep.get("ok"),
                          "sent": rep.get("sent"), "refused": rep.get("refused"), "gave_up": rep.get("gave_up"),
                          "failed": rep.get("failed"), "p50": rep.get("p50_ms"), "p99": rep.get("p99_ms"),
                          "by_status": rep.get("by_status"), "by_reason": rep.get("by_reason"),
                          "up_max_in_flight": (ustats or {}).get("max_in_flight"), "loadavg1": load1}))
        print("limit/s:", " ".join(str(x) for x in lim))
        print("inflight:", " ".join(str(x) for x in infl))
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill(); p.wait()
        log.close()


if __name__ == "__main__":
    main()
