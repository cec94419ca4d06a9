#!/usr/bin/env python3
"""One bounded run (review 28; extends review 27's run.py): upstream + gate + load(s),
sampling /status once a second, with timed control events.

run2.py NAME --upstream "CMD with {port} {bin}" --pool none|static:N|adaptive[:k=v,...]
        --load "[PATH|]--rate 300 --duration 20s --patience 2s"   (repeatable: loads run together)
        [--route /a --route /b]  (routes to the one pool; default one route for everything)
        [--queue-timeout 1s] [--max-queue N] [--gate-workers 1] [--extra "toml lines for the pool"]
        [--at "T|upstream-kill" | "T|upstream-start" | "T|pool:SPEC" (rewrite the pool, reload)
              | "T|nopool" (remove pool and routes, reload) | "T|admin:METHOD PATH [BODY]"
              | "T|gate-term" (SIGTERM to the gate: its drain)
              | "T|spawn:SHELL CMD with {gate}" (output in results/NAME.spawnN.out, waited for)]
Writes results/NAME.json and results/NAME.toml.
"""
import argparse, json, os, shlex, signal, socket, subprocess, sys, threading, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("SGBIN", os.path.join(HERE, "sluicegate"))


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


def req(url, method="GET", body=None, t=3):
    r = urllib.request.Request(url, method=method, data=body.encode() if body else None)
    try:
        with urllib.request.urlopen(r, timeout=t) as x:
            return x.status, x.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def pool_toml(spec, up, a):
    pool = f'[[pools]]\nname = "p"\nupstream = "http://127.0.0.1:{up}"\nmax_queue = {a.max_queue}\nqueue_timeout = "{a.queue_timeout}"\n{a.extra}\n'
    if spec == "none":
        pool += "max_concurrency = 2000000\n"
    elif spec.startswith("static:"):
        pool += f"max_concurrency = {spec.split(':')[1]}\n"
    else:
        pool += "[pools.adaptive]\n"
        if ":" in spec:
            for kv in spec.split(":", 1)[1].split(","):
                k, v = kv.split("=")
                pool += f"{k} = {v if v.isdigit() else json.dumps(v)}\n"
    return pool


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name"); ap.add_argument("--upstream", required=True)
    ap.add_argument("--pool", required=True); ap.add_argument("--load", action="append", required=True)
    ap.add_argument("--route", action="append", default=[])
    ap.add_argument("--queue-timeout", default="1s"); ap.add_argument("--max-queue", default="1024")
    ap.add_argument("--gate-workers", default="1"); ap.add_argument("--extra", default="")
    ap.add_argument("--at", action="append", default=[])
    ap.add_argument("--sample-every", type=float, default=1.0)
    a = ap.parse_args()
    up, gp, adm = free_port(), free_port(), free_port()
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    cfg = os.path.join(HERE, "results", a.name + ".toml")
    routes = "".join(f'[[routes]]\npool = "p"\npath_prefix = "{r}"\n' for r in a.route) or '[[routes]]\npool = "p"\n'
    top = f'listen = "127.0.0.1:{gp}"\nworkers = {a.gate_workers}\n[admin]\nlisten = "127.0.0.1:{adm}"\n\n'

    def write_cfg(pool, rts, path=cfg):
        with open(path + ".new", "w") as f:
            f.write(top + pool + "\n" + rts)
        os.replace(path + ".new", path)
    write_cfg(pool_toml(a.pool, up, a), routes)
    procs = []
    log = open(os.path.join(HERE, "results", a.name + ".gate.log"), "w")
    ucmd = shlex.split(a.upstream.replace("{port}", str(up)).replace("{bin}", BIN))
    upproc = [None]
    events = []
    spawned = []
    try:
        upproc[0] = subprocess.Popen(ucmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(up)
        gate = subprocess.Popen([BIN, "serve", "--config", cfg], stdout=log, stderr=log)
        procs.append(gate)
        wait_port(gp); wait_port(adm)
        samples, stop = [], threading.Event()
        t0 = time.time()

        def sampler():
            while not stop.is_set():
                try:
                    st = json.loads(req(f"http://127.0.0.1:{adm}/status")[1])
                    p = st["pools"].get("p") if "pools" in st else st.get("p")
                    if p is None:
                        samples.append({"t": round(time.time() - t0, 2), "nopool": True})
                    else:
                        samples.append({"t": round(time.time() - t0, 2), "limit": p.get("limit"),
                                        "in_flight": p.get("in_flight"), "queued": p.get("queued"),
                                        "algorithm": p.get("algorithm"), "c": p.get("counters")})
                except Exception as e:
                    samples.append({"t": round(time.time() - t0, 2), "err": str(e)})
                stop.wait(a.sample_every)

        def eventer():
            for spec in sorted(a.at, key=lambda s: float(s.split("|", 1)[0])):
                at, what = spec.split("|", 1)
                if stop.wait(max(0, t0 + float(at) - time.time())):
                    return
                ev = {"t": round(time.time() - t0, 2), "what": what}
                try:
                    if what == "upstream-kill":
                        upproc[0].kill(); upproc[0].wait()
                    elif what == "upstream-start":
                        upproc[0] = subprocess.Popen(ucmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    elif what.startswith("pool:"):
                        write_cfg(pool_toml(what[5:], up, a), routes)
                        ev["answer"] = req(f"http://127.0.0.1:{adm}/reload", "POST")
                    elif what == "nopool":
                        write_cfg('[[pools]]\nname = "other"\nupstream = "http://127.0.0.1:1"\nmax_concurrency = 1\n',
                                  '[[routes]]\npool = "other"\npath_prefix = "/__never"\n')
                        ev["answer"] = req(f"http://127.0.0.1:{adm}/reload", "POST")
                    elif what == "gate-term":
                        gate.send_signal(signal.SIGTERM)
                    elif what.startswith("spawn:"):
                        c = what[6:].replace("{gate}", str(gp)).replace("{bin}", BIN)
                        o = open(os.path.join(HERE, "results", f"{a.name}.spawn{len(spawned)}.out"), "w")
                        spawned.append(subprocess.Popen(c, shell=True, stdout=o, stderr=subprocess.STDOUT, cwd=HERE))
                    elif what.startswith("admin:"):
                        parts = what[6:].split(" ", 2)
                        ev["answer"] = req(f"http://127.0.0.1:{adm}{parts[1]}", parts[0], parts[2] if len(parts) > 2 else None)
                except Exception as e:
                    ev["err"] = str(e)
                events.append(ev)
        th = threading.Thread(target=sampler, daemon=True); th.start()
        te = threading.Thread(target=eventer, daemon=True); te.start()
        lps = []
        for l in a.load:
            path, args = (l.split("|", 1) if "|" in l else ("/", l))
            lcmd = [BIN, "load", "--url", f"http://127.0.0.1:{gp}{path}", "--json"] + shlex.split(args)
            lps.append((path, args, subprocess.Popen(lcmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        reps = []
        for path, args, lp in lps:
            try:
                so, se = lp.communicate(timeout=80)
            except subprocess.TimeoutExpired:
                lp.kill(); so, se = lp.communicate()
            try:
                rep = json.loads(so.strip().splitlines()[-1])
            except Exception:
                rep = {"raw": so, "err": se}
            rep.pop("closes", None)
            rep["path"] = path; rep["args"] = args
            reps.append(rep)
        for sp in spawned:
            try: sp.wait(60)
            except subprocess.TimeoutExpired: sp.kill()
        stop.set(); th.join()
        load1 = os.getloadavg()[0]
        try:
            metrics = req(f"http://127.0.0.1:{adm}/metrics")[1]
            status = json.loads(req(f"http://127.0.0.1:{adm}/status")[1])
        except Exception as e:
            metrics, status = None, {"err": str(e)}
        try:
            ustats = json.loads(req(f"http://127.0.0.1:{up}/__upstream/stats")[1])
        except Exception:
            ustats = None
        res = {"name": a.name, "args": vars(a), "load": reps[0], "loads": reps, "samples": samples,
               "events": events, "upstream": ustats, "loadavg1": load1, "status": status, "metrics": metrics}
        with open(os.path.join(HERE, "results", a.name + ".json"), "w") as f:
            json.dump(res, f, indent=1)
        for rep in reps:
            print(json.dumps({"name": a.name, "path": rep.get("path"), "goodput": rep.get("goodput"), "ok": rep.get("ok"),
                              "sent": rep.get("sent"), "refused": rep.get("refused"), "gave_up": rep.get("gave_up"),
                              "failed": rep.get("failed"), "p50": rep.get("p50_ms"), "p99": rep.get("p99_ms"),
                              "by_status": rep.get("by_status"), "by_reason": rep.get("by_reason")}))
        print("upstream max_in_flight", (ustats or {}).get("max_in_flight"), "loadavg1", load1)
        print("limit/s:", " ".join(str(s.get("limit", "-")) for s in samples))
        print("inflight:", " ".join(str(s.get("in_flight", "-")) for s in samples))
        if ustats and ustats.get("per_s"):
            print("up/s:", " ".join(str(ustats["per_s"].get(str(i), "-")) for i in range(max(int(k) for k in ustats["per_s"]) + 1)))
        for ev in events:
            print("event", json.dumps(ev)[:200])
    finally:
        stop_all = [p for p in reversed(procs)] + ([upproc[0]] if upproc[0] else [])
        for p in stop_all:
            try: p.send_signal(signal.SIGTERM)
            except Exception: pass
        for p in stop_all:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill(); p.wait()
        log.close()


if __name__ == "__main__":
    main()
