"""scripts/bench's library section (issue 27): PortalAuth as an app's HTTP client.

1,000 GETs of a 2 KB JSON body at concurrency 1, 8 and 64 against nginx on 127.0.0.1 over HTTPS (a local CA and
certificate made here, trusted through a bundle of the system's CAs plus it; nginx as this user's own process with
a private configuration, HTTP/2 offered), in interleaved rounds: PortalAuth's `AuthenticationManager.data(for:)`
(Tests/AppPackage's library-bench) against `curl --parallel` (keep-alive), Foundation's URLSession on Linux and
AsyncHTTPClient. Per run: wall time of the whole client process (start-up included, as for curl), connections
nginx saw ($connection), the most threads of the client process. URLSession on Linux cannot be told to trust a
private CA (swift-corelibs-foundation reads URLSessionCertificateAuthorityInfoFile on Android only), so it is
measured over plain http against the same nginx, and its row says so.
Then the expiry burst: 200 requests at concurrency 64 while the token expires (Tests/Bench/burst_server.py), and
the number of renewals it took.

Goals, printed and not asserted: PortalAuth <= 1.5x curl's wall time at each concurrency; <= 8 threads; exactly 1
renewal per burst; no failed request. The exit status is 1 when a functional goal is missed (a failed request, a
burst that took other than one renewal, more than 8 threads in PortalAuth's process), else 0.

    python3 library.py WORK_DIR LIBRARY_BENCH_BINARY [--rounds R] [--requests N] [--results FILE]
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

CONCURRENCIES = (1, 8, 64)
SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
THREAD_GOAL = 8
RATIO_GOAL = 1.5


def log(message):
    print("[bench-library] " + message, file=sys.stderr, flush=True)


def free_ports(count):
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def make_tls(work):
    """A local CA, a server certificate for 127.0.0.1 signed by it, and the bundle clients trust."""
    def openssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=PortalAuth bench CA",
            "-keyout", f"{work}/ca.key", "-out", f"{work}/ca.pem")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
            "-keyout", f"{work}/server.key", "-out", f"{work}/server.csr")
    with open(f"{work}/server.ext", "w") as ext:
        ext.write("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", f"{work}/server.csr", "-CA", f"{work}/ca.pem", "-CAkey", f"{work}/ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", f"{work}/server.ext", "-out", f"{work}/server.pem")
    bundle = f"{work}/bundle.pem"
    with open(bundle, "w") as out:
        if os.path.exists(SYSTEM_BUNDLE):
            out.write(open(SYSTEM_BUNDLE).read())
        out.write(open(f"{work}/ca.pem").read())
    return bundle


def start_nginx(work, port, http_port):
    os.makedirs(f"{work}/www", exist_ok=True)
    os.makedirs(f"{work}/tmp", exist_ok=True)
    record = {"id": 0, "name": "PortalAuth bench", "padding": ""}
    record["padding"] = "x" * (2048 - len(json.dumps(record)))
    with open(f"{work}/www/data.json", "w") as out:
        out.write(json.dumps(record))  # 2,048 bytes
    user = ""
    if os.geteuid() == 0:
        import grp
        import pwd
        user = "user %s %s;" % (pwd.getpwuid(os.geteuid()).pw_name, grp.getgrgid(os.getegid()).gr_name)
    config = f"""{user}
worker_processes 1;
daemon on;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 1024; }}
http {{
    log_format bench '$connection $connection_requests $status $server_protocol';
    access_log {work}/access.log bench;
    client_body_temp_path {work}/tmp/body;
    proxy_temp_path {work}/tmp/proxy;
    fastcgi_temp_path {work}/tmp/fastcgi;
    uwsgi_temp_path {work}/tmp/uwsgi;
    scgi_temp_path {work}/tmp/scgi;
    keepalive_requests 100000;
    keepalive_timeout 120s;
    server {{
        listen 127.0.0.1:{port} ssl http2;
        listen 127.0.0.1:{http_port};
        ssl_certificate {work}/server.pem;
        ssl_certificate_key {work}/server.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        location = /data.json {{ root {work}/www; default_type application/json; }}
    }}
}}
"""
    with open(f"{work}/nginx.conf", "w") as out:
        out.write(config)
    subprocess.run(["nginx", "-p", work, "-c", f"{work}/nginx.conf", "-e", f"{work}/error.log"], check=True)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("nginx did not start; see " + f"{work}/error.log")


def stop_nginx(work):
    try:
        pid = int(open(f"{work}/nginx.pid").read().strip())
        os.kill(pid, signal.SIGQUIT)
    except (OSError, ValueError):
        pass


def log_lines(work):
    try:
        with open(f"{work}/access.log") as handle:
            return handle.read().splitlines()
    except OSError:
        return []


def run_curl(work, url, bundle, requests, concurrency):
    config = f"{work}/curl-{requests}.conf"
    if not os.path.exists(config):
        with open(config, "w") as out:
            for _ in range(requests):
                out.write(f'url = "{url}"\noutput = "/dev/null"\n')
    start = time.monotonic()
    done = subprocess.run(["curl", "--parallel", "--parallel-max", str(concurrency), "--cacert", bundle, "-s",
                           "-w", "%{http_code}\n", "-K", config], capture_output=True, text=True)
    seconds = time.monotonic() - start
    codes = done.stdout.split()
    ok = sum(1 for code in codes if code == "200")
    return {"client": "curl", "requests": requests, "concurrency": concurrency, "ok": ok, "failed": requests - ok,
            "seconds": seconds, "max_threads": None}


def run_bench(binary, client, url, bundle, requests, concurrency):
    environment = dict(os.environ, PORTAL_AUTH_CA_BUNDLE=bundle, URLSessionCertificateAuthorityInfoFile=bundle,
                       BENCH_CA_FILE=bundle)
    start = time.monotonic()
    done = subprocess.run([binary, client, url, str(requests), str(concurrency)], capture_output=True, text=True,
                          env=environment, timeout=600)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        return {"client": client, "requests": requests, "concurrency": concurrency, "ok": 0, "failed": requests,
                "seconds": 0.0, "max_threads": None, "first_error": done.stderr.strip()[-400:]}
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    # The whole process, as for curl: start-up, loading libcurl and the CA bundle, then the requests.
    outcome["inner_seconds"] = outcome["seconds"]
    outcome["seconds"] = seconds
    return outcome


def burst(work, binary, requests=200, concurrency=64):
    port_file = f"{work}/burst.port"
    if os.path.exists(port_file):
        os.remove(port_file)
    here = os.path.dirname(os.path.abspath(__file__))
    server = subprocess.Popen([sys.executable, f"{here}/burst_server.py", port_file, "--expire-after", "40"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 10
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if time.time() > deadline:
                raise SystemExit("the burst server did not start")
            time.sleep(0.05)
        port = int(open(port_file).read())
        outcome = run_bench(binary, "burst", f"http://127.0.0.1:{port}/portal", "", requests, concurrency)
        import urllib.request
        stats = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=10))
        outcome["renewals"] = stats["generated"] - 1  # the first token is the sign-in's, not a renewal
        outcome["refused"] = stats["refused"]
        return outcome
    finally:
        server.terminate()
        server.wait(timeout=10)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("binary")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--results")
    args = parser.parse_args()
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, mode=0o700)
    bundle = make_tls(work)
    port, http_port = free_ports(2)
    start_nginx(work, port, http_port)
    url = f"https://127.0.0.1:{port}/data.json"
    plain_url = f"http://127.0.0.1:{http_port}/data.json"
    clients = ["portalauth", "curl", "urlsession", "ahc"]
    runs = []
    try:
        for round_index in range(args.rounds):
            for concurrency in CONCURRENCIES:
                for client in clients:
                    before = len(log_lines(work))
                    if client == "curl":
                        outcome = run_curl(work, url, bundle, args.requests, concurrency)
                    else:
                        target = plain_url if client == "urlsession" else url
                        outcome = run_bench(args.binary, client, target, bundle, args.requests, concurrency)
                    time.sleep(0.2)  # nginx writes its log line after the response
                    lines = log_lines(work)[before:]
                    outcome["connections"] = len({line.split()[0] for line in lines if line.strip()})
                    outcome["protocol"] = lines[-1].split()[-1] if lines else ""
                    outcome["round"] = round_index
                    runs.append(outcome)
                    log(f"round {round_index + 1} C={concurrency} {client}: {outcome['seconds']:.3f} s, "
                        f"{outcome['ok']} ok, {outcome['failed']} failed, {outcome['connections']} connections, "
                        f"threads {outcome.get('max_threads')}")
        bursts = [burst(work, args.binary) for _ in range(args.rounds)]
    finally:
        stop_nginx(work)

    # The table: median wall time per client and concurrency, ratios to curl, connections, threads.
    def median(client, concurrency, key):
        values = [run[key] for run in runs if run["client"] == client and run["concurrency"] == concurrency
                  and run.get(key) is not None and run["failed"] == 0]
        return statistics.median(values) if values else None

    print()
    print(f"Library section: {args.requests} GETs of a 2 KB JSON body, nginx over HTTPS on 127.0.0.1, "
          f"{args.rounds} interleaved round(s), median wall time")
    header = "| client | " + " | ".join(f"C={c} s | ×curl | conns | threads" for c in CONCURRENCIES) + " |"
    print(header)
    print("|" + "---|" * (1 + 4 * len(CONCURRENCIES)))
    for client in clients:
        cells = []
        for concurrency in CONCURRENCIES:
            seconds = median(client, concurrency, "seconds")
            curl = median("curl", concurrency, "seconds")
            ratio = f"{seconds / curl:.2f}" if seconds and curl else "-"
            connections = median(client, concurrency, "connections")
            threads = max((run["max_threads"] for run in runs if run["client"] == client
                           and run["concurrency"] == concurrency and run.get("max_threads")), default=None)
            cells.append(f"{seconds:.3f} | {ratio} | {connections if connections is not None else '-'} | "
                         f"{threads if threads is not None else '-'}" if seconds else "failed | - | - | -")
        name = "urlsession (plain http)" if client == "urlsession" else client
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print("| expiry burst (200 requests at C=64) | renewals | failed | refused (498) | threads |")
    print("|---|---|---|---|---|")
    for index, outcome in enumerate(bursts):
        print(f"| run {index + 1} | {outcome.get('renewals')} | {outcome['failed']} | {outcome.get('refused')} | "
              f"{outcome.get('max_threads')} |")

    goals = []
    for concurrency in CONCURRENCIES:
        seconds, curl = median("portalauth", concurrency, "seconds"), median("curl", concurrency, "seconds")
        met = bool(seconds and curl and seconds <= RATIO_GOAL * curl)
        goals.append((f"PortalAuth <= {RATIO_GOAL}x curl's wall time at C={concurrency}", met, "speed"))
    portal_threads = max((run["max_threads"] or 0 for run in runs if run["client"] == "portalauth"), default=0)
    burst_threads = max((outcome.get("max_threads") or 0 for outcome in bursts), default=0)
    goals.append((f"PortalAuth's process <= {THREAD_GOAL} threads (most seen: {max(portal_threads, burst_threads)})",
                  max(portal_threads, burst_threads) <= THREAD_GOAL, "functional"))
    goals.append(("exactly 1 renewal per expiry burst", all(outcome.get("renewals") == 1 for outcome in bursts),
                  "functional"))
    failed = sum(run["failed"] for run in runs if run["client"] == "portalauth") + sum(o["failed"] for o in bursts)
    goals.append((f"no failed PortalAuth request ({failed} failed)", failed == 0, "functional"))
    print()
    for text, met, kind in goals:
        print(f"{'PASS' if met else 'FAIL'}  {text}  [{kind}]")
    for run in runs + bursts:
        if run.get("first_error"):
            log(f"{run['client']} C={run['concurrency']}: {run['first_error']}")
    if args.results:
        with open(args.results, "w") as out:
            json.dump({"runs": runs, "bursts": bursts, "goals": [[t, m, k] for t, m, k in goals]}, out, indent=1)
    sys.exit(0 if all(met for _, met, kind in goals if kind == "functional") else 1)


if __name__ == "__main__":
    main()
