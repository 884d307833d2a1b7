"""scripts/bench's library section (issue 27): PortalAuth as an app's HTTP client.

1,000 GETs of a 2 KB JSON body at concurrency 1, 8 and 64 against nginx on 127.0.0.1 over HTTPS (a local CA and
certificate made here, trusted through a bundle of the system's CAs plus it; nginx as this user's own process with
a private configuration, HTTP/2 offered), in interleaved rounds: PortalAuth's `AuthenticationManager.data(for:)`
(Tests/AppPackage's library-bench) against `curl --parallel` (keep-alive), Foundation's URLSession on Linux and
AsyncHTTPClient. Per run: wall time of the whole client process (start-up included, as for curl), connections
nginx saw ($connection), the most threads of the client process. URLSession on Linux cannot be told to trust a
private CA (swift-corelibs-foundation reads URLSessionCertificateAuthorityInfoFile on Android only), so it is
measured over plain http against the same nginx, and its row says so.
In the same interleaved rounds, HTTP/1.1 over TLS (issue 37): the same nginx on a second port that offers no HTTP/2,
PortalAuth against AsyncHTTPClient, so that each connection of a burst (up to 64 at C=64) does its own handshake and
verification against the system bundle. Every run is a fresh process (a cold start: the first burst is measured);
its peak RSS is read from the kernel (wait4's ru_maxrss).
Then the expiry burst: 200 requests at concurrency 64 while the token expires (Tests/Bench/burst_server.py), and
the number of renewals it took.

The CA bundle both TLS clients are given is a private copy of the system bundle (/etc/ssl/certs/ca-certificates.crt,
about 140 certificates) with the bench CA added, so that what a client pays to parse it is the system bundle's.

Goals: PortalAuth <= 1.5x curl's wall time at each concurrency (HTTP/2); PortalAuth <= 1.2x AsyncHTTPClient's wall
time at each concurrency over HTTP/2 and HTTP/1.1, and its peak RSS at C=64 <= 1.3x AsyncHTTPClient's (speed goals:
printed, failing the run only with BENCH_STRICT=1, scripts/bench --strict); <= 8 threads; exactly 1 renewal per
burst; no failed request. The exit status is 1 when a functional goal is missed (a failed request, a burst that took
other than one renewal, more than 8 threads in PortalAuth's process), or a speed goal under BENCH_STRICT=1, else 0.

A debug build of library-bench (scripts/test builds one: the app package's module-name check, without a second
release build of SwiftNIO and BoringSSL) says so in its output ("build"); timing it would say nothing of the
library's speed, so then only PortalAuth runs (the same requests, concurrencies and protocols, and the bursts) and
only the functional goals are checked; the speed goals are printed as not measured.

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
import tempfile
import time

CONCURRENCIES = (1, 8, 64)
SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
THREAD_GOAL = 8
RATIO_GOAL = 1.5
AHC_RATIO_GOAL = 1.2
AHC_RSS_GOAL = 1.3


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


def describe_bundle(bundle):
    """What the TLS clients trust, for the output."""
    count = open(bundle).read().count("BEGIN CERTIFICATE")
    if os.path.exists(SYSTEM_BUNDLE):
        return (f"{bundle}: a private copy of the system bundle {SYSTEM_BUNDLE} plus the bench CA, {count} certificates "
                "(PortalAuth: PORTAL_AUTH_CA_BUNDLE; AsyncHTTPClient: trustRoots .file; curl: --cacert)")
    return f"{bundle}: the bench CA alone ({SYSTEM_BUNDLE} is missing), {count} certificate(s)"


def start_nginx(work, port, http_port, http1_port):
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
        listen 127.0.0.1:{http1_port} ssl;
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
    # Output to files and the child reaped with wait4, whose rusage holds its peak RSS (ru_maxrss, KiB).
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        start = time.monotonic()
        child = subprocess.Popen([binary, client, url, str(requests), str(concurrency)], stdout=stdout,
                                 stderr=stderr, env=environment)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.monotonic() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        output, errors = stdout.read().decode(errors="replace"), stderr.read().decode(errors="replace")
    if child.returncode != 0:
        return {"client": client, "requests": requests, "concurrency": concurrency, "ok": 0, "failed": requests,
                "seconds": 0.0, "max_threads": None, "first_error": errors.strip()[-400:]}
    outcome = json.loads(output.strip().splitlines()[-1])
    outcome["peak_rss_kib"] = usage.ru_maxrss
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
    port, http_port, http1_port = free_ports(3)
    start_nginx(work, port, http_port, http1_port)
    url = f"https://127.0.0.1:{port}/data.json"
    plain_url = f"http://127.0.0.1:{http_port}/data.json"
    http1_url = f"https://127.0.0.1:{http1_port}/data.json"
    clients = ["portalauth", "curl", "urlsession", "ahc"]
    http1_clients = ["portalauth", "ahc"]
    log("CA bundle: " + describe_bundle(bundle))
    build = run_bench(args.binary, "portalauth", url, bundle, 1, 1).get("build", "release")
    speed_measured = build == "release"
    if not speed_measured:
        clients, http1_clients = ["portalauth"], ["portalauth"]
        log(f"{args.binary} is a {build} build: PortalAuth's runs and the bursts only, for the functional goals "
            "(the speed goals need a release build: scripts/bench without --library-binary builds one)")
    runs = []
    try:
        for round_index in range(args.rounds):
            for concurrency in CONCURRENCIES:
                # HTTP/1.1 after HTTP/2, PortalAuth and AsyncHTTPClient in turn first from one round to the next.
                order = http1_clients if round_index % 2 == 0 else list(reversed(http1_clients))
                plan = [(client, "h2") for client in clients] + [(client, "h1") for client in order]
                for client, protocol in plan:
                    before = len(log_lines(work))
                    if client == "curl":
                        outcome = run_curl(work, url, bundle, args.requests, concurrency)
                    else:
                        target = plain_url if client == "urlsession" else http1_url if protocol == "h1" else url
                        outcome = run_bench(args.binary, client, target, bundle, args.requests, concurrency)
                    time.sleep(0.2)  # nginx writes its log line after the response
                    lines = log_lines(work)[before:]
                    outcome["connections"] = len({line.split()[0] for line in lines if line.strip()})
                    outcome["protocol"] = lines[-1].split()[-1] if lines else ""
                    outcome["section"] = protocol
                    outcome["round"] = round_index
                    runs.append(outcome)
                    rss = outcome.get("peak_rss_kib")
                    log(f"round {round_index + 1} C={concurrency} {client} ({outcome['protocol'] or protocol}): "
                        f"{outcome['seconds']:.3f} s, {outcome['ok']} ok, {outcome['failed']} failed, "
                        f"{outcome['connections']} connections, threads {outcome.get('max_threads')}"
                        + (f", peak RSS {rss / 1024:.1f} MiB" if rss else ""))
        bursts = [burst(work, args.binary) for _ in range(args.rounds)]
    finally:
        stop_nginx(work)

    # The table: median wall time per client and concurrency, ratios to curl, connections, threads.
    def median(client, concurrency, key, section="h2"):
        values = [run[key] for run in runs if run["client"] == client and run["concurrency"] == concurrency
                  and run.get("section", "h2") == section and run.get(key) is not None and run["failed"] == 0]
        return statistics.median(values) if values else None

    print()
    print(f"Library section: {args.requests} GETs of a 2 KB JSON body, nginx over HTTPS on 127.0.0.1, "
          f"{args.rounds} interleaved round(s), median wall time of a fresh process per run")
    print("CA bundle: " + describe_bundle(bundle))
    print()
    print("HTTP/2 (one connection per client)")
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
    print("HTTP/1.1 over TLS (nginx offers no HTTP/2 on this port: a connection, handshake and verification per "
          "request in flight)")
    print("| client | " + " | ".join(f"C={c} s | conns | peak RSS MiB" for c in CONCURRENCIES) + " |")
    print("|" + "---|" * (1 + 3 * len(CONCURRENCIES)))
    for client in http1_clients:
        cells = []
        for concurrency in CONCURRENCIES:
            seconds = median(client, concurrency, "seconds", "h1")
            connections = median(client, concurrency, "connections", "h1")
            rss = median(client, concurrency, "peak_rss_kib", "h1")
            cells.append(f"{seconds:.3f} | {connections} | {rss / 1024:.1f}" if seconds and rss else "failed | - | -")
        print(f"| {client} | " + " | ".join(cells) + " |")
    comparisons = []
    if speed_measured:
        print()
        print("PortalAuth against AsyncHTTPClient, the same interleaved rounds (medians)")
        print("| protocol | C | PortalAuth s | AsyncHTTPClient s | ×AHC | PortalAuth peak RSS MiB | AHC peak RSS MiB | ×AHC RSS |")
        print("|---|---|---|---|---|---|---|---|")
        for section, name in (("h2", "HTTP/2"), ("h1", "HTTP/1.1")):
            for concurrency in CONCURRENCIES:
                ours, theirs = median("portalauth", concurrency, "seconds", section), median("ahc", concurrency, "seconds", section)
                our_rss = median("portalauth", concurrency, "peak_rss_kib", section)
                their_rss = median("ahc", concurrency, "peak_rss_kib", section)
                ratio = ours / theirs if ours and theirs else None
                rss_ratio = our_rss / their_rss if our_rss and their_rss else None
                comparisons.append((section, name, concurrency, ratio, rss_ratio, our_rss, their_rss))
                print(f"| {name} | {concurrency} | {ours or 0:.3f} | {theirs or 0:.3f} | "
                      f"{f'{ratio:.2f}' if ratio else '-'} | {(our_rss or 0) / 1024:.1f} | {(their_rss or 0) / 1024:.1f} | "
                      f"{f'{rss_ratio:.2f}' if rss_ratio else '-'} |")
    print()
    print("| expiry burst (200 requests at C=64) | renewals | failed | refused (498) | threads |")
    print("|---|---|---|---|---|")
    for index, outcome in enumerate(bursts):
        print(f"| run {index + 1} | {outcome.get('renewals')} | {outcome['failed']} | {outcome.get('refused')} | "
              f"{outcome.get('max_threads')} |")

    goals = []
    for concurrency in CONCURRENCIES if speed_measured else ():
        seconds, curl = median("portalauth", concurrency, "seconds"), median("curl", concurrency, "seconds")
        met = bool(seconds and curl and seconds <= RATIO_GOAL * curl)
        goals.append((f"PortalAuth <= {RATIO_GOAL}x curl's wall time at C={concurrency}", met, "speed"))
    for section, name, concurrency, ratio, rss_ratio, our_rss, their_rss in comparisons:
        shown = f"{ratio:.2f}x" if ratio else "not measured"
        goals.append((f"PortalAuth <= {AHC_RATIO_GOAL}x AsyncHTTPClient's wall time, {name} C={concurrency} ({shown})",
                      bool(ratio and ratio <= AHC_RATIO_GOAL), "speed"))
        if concurrency == 64:
            shown = (f"{rss_ratio:.2f}x: {our_rss / 1024:.1f} vs {their_rss / 1024:.1f} MiB" if rss_ratio
                     else "not measured")
            goals.append((f"PortalAuth's peak RSS <= {AHC_RSS_GOAL}x AsyncHTTPClient's, {name} C=64 ({shown})",
                          bool(rss_ratio and rss_ratio <= AHC_RSS_GOAL), "speed"))
    portal_threads = max((run["max_threads"] or 0 for run in runs if run["client"] == "portalauth"), default=0)
    burst_threads = max((outcome.get("max_threads") or 0 for outcome in bursts), default=0)
    goals.append((f"PortalAuth's process <= {THREAD_GOAL} threads (most seen: {max(portal_threads, burst_threads)})",
                  max(portal_threads, burst_threads) <= THREAD_GOAL, "functional"))
    goals.append(("exactly 1 renewal per expiry burst", all(outcome.get("renewals") == 1 for outcome in bursts),
                  "functional"))
    failed = sum(run["failed"] for run in runs if run["client"] == "portalauth") + sum(o["failed"] for o in bursts)
    strict = os.environ.get("BENCH_STRICT") == "1"
    goals.append((f"no failed PortalAuth request ({failed} failed)", failed == 0, "functional"))
    print()
    if not speed_measured:
        print(f"speed goals: not measured (library-bench is a {build} build)")
    for text, met, kind in goals:
        print(f"{'PASS' if met else 'FAIL'}  {text}  [{kind}]")
    for run in runs + bursts:
        if run.get("first_error"):
            log(f"{run['client']} C={run['concurrency']}: {run['first_error']}")
    if args.results:
        with open(args.results, "w") as out:
            json.dump({"build": build, "runs": runs, "bursts": bursts, "goals": [[t, m, k] for t, m, k in goals]}, out, indent=1)
    missed_speed = [text for text, met, kind in goals if kind == "speed" and not met]
    if missed_speed:
        print(f"library section: {len(missed_speed)} speed goal(s) missed"
              + (" (BENCH_STRICT=1: failing)" if strict else " (not failing the run; --strict fails it)"))
    if strict and not speed_measured:
        print("library section: BENCH_STRICT=1 needs the speed goals measured, on a release build of library-bench: "
              "failing")
    functional = all(met for _, met, kind in goals if kind == "functional")
    sys.exit(0 if functional and not (strict and (missed_speed or not speed_measured)) else 1)


if __name__ == "__main__":
    main()
