"""The agent section of scripts/bench (issue 46): a token through `portal-auth agent` against oidc-agent, in one run.

    agent.py run      measure, print the table, write bench-results/agent-<UTC time>.json

scripts/bench passes everything in BENCH_* variables (the installed tool, the signed-in store, the oidc-agent account
made with `oidc-gen --flow=password`; OIDC_SOCK names oidc-agent's socket). Standard library only.

Socket rows (BENCH_AGENT_REQUESTS requests, default 10,000, at each concurrency C of 1, 16 and 64; C client
processes, every request timed):
  - agent, AgentProtocol.md client: the page's own `agent_token` (taken from the page at run time), a connection
    per request, JSON encoded and decoded per request: what a Python program gets;
  - agent, raw loop: the bench's own loop on the same protocol: one connection per client kept for all its requests
    (the protocol allows it), the request line built once, the answer checked for `"ok": true` without decoding;
  - oidc-agent, liboidc-agent: oidc-agent's own client library (`getAccessToken3` through ctypes): a connection
    per request with oidc-agent's encrypted exchange, as `oidc-token` does without the process.
Process rows (BENCH_AGENT_PROCESS_REQUESTS, default 1,000, at each C): `portal-auth token` reading the store and
`portal-auth token` asking the agent (PORTAL_AUTH_AGENT) as one paired run: every client process runs both, one after
the other, in alternating order (store then agent, agent then store), so both see the same load at the same moments
(run one after the other, the rows differed by the load's drift: a short run passed at one C and failed at the next);
their goal compares the median run time of a process (latency); then `oidc-token`.

"Per request" is the wall time divided by the requests served: the completions are cut into windows of
BENCH_AGENT_WINDOW (1,000; fewer when the run is short) and each window's time over its requests is one sample;
median and p95 are over those samples. The latency (send to answer, what one client waits, about C times the time
per request once the agent is the bottleneck) is printed beside it.

The agent's RSS is read from /proc/PID/status (VmRSS) at its start, after each row, and, with BENCH_AGENT_LONG=N
(scripts/bench --agent-long; 1,000,000 by the issue), over N raw-loop requests at C=16 at the start, the middle and
the end of that run.
"""
import array
import ctypes
import json
import os
import re
import select
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

E = os.environ
ROOT = Path(E["PROJECT_ROOT"])
WORK = Path(E["BENCH_WORK"])
TOOL = E["BENCH_TOOL"]
STORE = E["BENCH_STORE"]
PORTAL = E["PORTAL_AUTH_TEST_PORTAL"]
ACCOUNT = E.get("BENCH_OIDC_ACCOUNT", "bench")
REQUESTS = int(E.get("BENCH_AGENT_REQUESTS", "10000"))
PROCESS_REQUESTS = int(E.get("BENCH_AGENT_PROCESS_REQUESTS", "1000"))
WINDOW = int(E.get("BENCH_AGENT_WINDOW", "1000"))
LONG = int(E.get("BENCH_AGENT_LONG", "0"))
CONCURRENCY = [int(c) for c in E.get("BENCH_AGENT_CONCURRENCY", "1 16 64").split()]
MIN_VALID = 60
SOCKET = str(WORK / "agent" / "agent.sock")

PER_REQUEST_GOAL_MS = 0.2  # the raw loop at C=16
RSS_GOAL_KIB = 20 * 1024
RSS_FLAT_KIB = 1024  # middle -> end of the long run
CLIENT_INDEX = 0  # in a client process: which of the C clients it is


def log(message):
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# MARK: - The agent


def rss_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit(f"bench: no VmRSS for the agent (pid {pid})")


def ask(line, path=SOCKET, timeout=10):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(timeout)
        connection.connect(path)
        connection.sendall(line + b"\n")
        return json.loads(connection.makefile("rb").readline())


def start_agent():
    (WORK / "agent").mkdir(mode=0o700, exist_ok=True)
    log_file = open(WORK / "agent.log", "wb")
    process = subprocess.Popen([TOOL, "agent", "--socket", SOCKET, "--store", STORE], stdin=subprocess.DEVNULL,
                               stdout=log_file, stderr=log_file)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"bench: the agent exited with {process.returncode}: {(WORK / 'agent.log').read_text()}")
        try:
            if ask(b'{"v": 1, "op": "status"}').get("ok"):
                return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("bench: the agent did not answer within 20 s")


def stop_agent(process):
    try:
        ask(b'{"v": 1, "op": "stop"}')
        process.wait(timeout=10)
    except Exception:
        process.kill()
        process.wait()


def documented_client():
    """`agent_token` as AgentProtocol.md shows it (the first Python block that defines it)."""
    page = (ROOT / "Sources/PortalAuth/PortalAuth.docc/AgentProtocol.md").read_text()
    for block in re.findall(r"```python\n(.*?)```", page, re.S):
        if "def agent_token" in block:
            namespace = {}
            exec(compile(block, "AgentProtocol.md", "exec"), namespace)
            return namespace["agent_token"]
    raise SystemExit("bench: AgentProtocol.md has no Python client (def agent_token)")


# MARK: - Clients (each returns a function run by one client process: (count) -> [(latency_ns, completed_ns)], failures;
# a paired client's samples carry a third value, the kind: the index of the environment it ran with)


def doc_worker(agent_token):
    selection = {"portal": PORTAL}

    def run(count):
        samples, failures = [], 0
        for _ in range(count):
            started = time.perf_counter_ns()
            try:
                agent_token(selection, min_valid=MIN_VALID, socket_path=SOCKET)
            except Exception:
                failures += 1
            done = time.perf_counter_ns()
            samples.append((done - started, done))
        return samples, failures
    return run


def raw_worker():
    line = json.dumps({"v": 1, "op": "token", "portal": PORTAL, "min_valid": MIN_VALID}).encode() + b"\n"

    def run(count):
        samples, failures = [], 0
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(60)
        connection.connect(SOCKET)
        try:
            for _ in range(count):
                started = time.perf_counter_ns()
                connection.sendall(line)
                answer = connection.recv(65536)
                while not answer.endswith(b"\n"):
                    more = connection.recv(65536)
                    if not more:
                        raise OSError("the agent closed the connection")
                    answer += more
                done = time.perf_counter_ns()
                if b'"ok": true' not in answer and b'"ok":true' not in answer:
                    failures += 1
                samples.append((done - started, done))
        finally:
            connection.close()
        return samples, failures
    return run


def oidc_library():
    library = ctypes.CDLL("liboidc-agent.so.4")
    library.getAccessToken3.restype = ctypes.c_void_p
    library.getAccessToken3.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_char_p, ctypes.c_char_p,
                                        ctypes.c_char_p]
    library._secFree.argtypes = [ctypes.c_void_p]
    return library


def oidc_worker(library):
    account = ACCOUNT.encode()

    def run(count):
        samples, failures = [], 0
        for _ in range(count):
            started = time.perf_counter_ns()
            token = library.getAccessToken3(account, MIN_VALID, None, b"portal-auth-bench", None)
            done = time.perf_counter_ns()
            if token:
                library._secFree(token)
            else:
                failures += 1
            samples.append((done - started, done))
        return samples, failures
    return run


def process_worker(command, env=None):
    def run(count):
        samples, failures = [], 0
        for _ in range(count):
            started = time.perf_counter_ns()
            done_process = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
            done = time.perf_counter_ns()
            if done_process.returncode != 0 or not done_process.stdout.strip():
                failures += 1
            samples.append((done - started, done))
        return samples, failures
    return run


def paired_process_worker(command, envs):
    """`command` once with each of `envs` per request, the order alternating from one request to the next and
    starting the other way round in every other client (so that at any moment about half the clients run each: with
    two requests per client at C=64, clients all starting the same way ran the kinds in waves)."""
    def run(count):
        samples, failures = [], [0] * len(envs)
        for index in range(count):
            order = list(range(len(envs)))
            if (index + CLIENT_INDEX) % 2:
                order.reverse()
            for kind in order:
                started = time.perf_counter_ns()
                done_process = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                              env=envs[kind])
                done = time.perf_counter_ns()
                if done_process.returncode != 0 or not done_process.stdout.strip():
                    failures[kind] += 1
                samples.append((done - started, done, kind))
        return samples, failures
    return run


def measure(make, requests, concurrency, deadline=600, kinds=1):
    """`requests` spread over `concurrency` client processes (forked, each running `make()`'s worker on its share),
    started together once all are ready. A client still running after `deadline` seconds is killed and its requests
    count as failed. With `kinds` > 1 the worker is a paired one (each request runs every kind): the result is a list,
    one entry per kind, each with its latency and failures (the time per request is the pair's, not a kind's). (Processes, not threads: 16 threads calling liboidc-agent at once hung, clients blocked in
    connect and oidc-agent idle; and the Python clients then share no interpreter lock.)"""
    shares = [requests // concurrency + (1 if index < requests % concurrency else 0) for index in range(concurrency)]
    ready_read, ready_write = os.pipe()
    go_read, go_write = os.pipe()
    children = []
    for index in range(concurrency):
        out_read, out_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(go_write)
            os.close(ready_read)
            os.close(out_read)
            samples, failures = [], [shares[index]] * kinds
            global CLIENT_INDEX
            CLIENT_INDEX = index
            try:
                worker = make()
                os.write(ready_write, b"r")
                os.read(go_read, 1)
                samples, failures = worker(shares[index])
                if kinds == 1:
                    samples, failures = [(*sample, 0) for sample in samples], [failures]
            except BaseException as error:  # a client that cannot run: every request of it failed
                log(f"a client failed: {error}")
            finally:
                os.write(ready_write, b"r")  # harmless after the first; unblocks a parent still waiting
            data = array.array("q", failures + [value for sample in samples for value in sample]).tobytes()
            with os.fdopen(out_write, "wb") as out:
                out.write(data)
            os._exit(0)
        os.close(out_write)
        children.append((pid, out_read, index))
    os.close(ready_write)
    os.close(go_read)
    waiting = concurrency
    while waiting > 0:
        waiting -= len(os.read(ready_read, waiting) or b"x" * waiting)
    started = time.perf_counter_ns()
    os.write(go_write, b"g" * concurrency)
    os.close(go_write)
    limit = time.monotonic() + deadline
    results = []
    for pid, out_read, index in children:
        chunks = []
        while True:
            left = limit - time.monotonic()
            if left <= 0 or not select.select([out_read], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                chunks = None
                break
            chunk = os.read(out_read, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(out_read)
        os.waitpid(pid, 0)
        if chunks is None:
            log(f"a client ran past {deadline} s and was stopped")
            results.append(([], [shares[index]] * kinds))
            continue
        values = array.array("q")
        values.frombytes(b"".join(chunks))
        if len(values) < kinds:
            results.append(([], [shares[index]] * kinds))
            continue
        rest = values[kinds:]
        results.append((list(zip(rest[0::3], rest[1::3], rest[2::3])), list(values[:kinds])))
    os.close(ready_read)
    wall = max([sample[1] for result in results for sample in result[0]] or [time.perf_counter_ns()]) - started
    samples = [sample for result in results for sample in result[0]]
    completions = sorted(sample[1] for sample in samples)
    window = max(1, min(WINDOW, len(completions) // 10))
    per_request = []
    previous = started
    for end in range(window, len(completions) + 1, window):
        per_request.append((completions[end - 1] - previous) / window)
        previous = completions[end - 1]
    per_request.sort()

    def percentile(values, fraction):
        return values[min(len(values) - 1, int(fraction * len(values)))] / 1e6 if values else float("nan")

    entries = []
    for kind in range(kinds):
        latencies = sorted(sample[0] for sample in samples if sample[2] == kind)
        entries.append({
            "requests": requests, "concurrency": concurrency, "failures": sum(result[1][kind] for result in results),
            "wall_ms": wall / 1e6,
            "per_request_ms": {"median": percentile(per_request, 0.5), "p95": percentile(per_request, 0.95),
                               "mean": wall / 1e6 / max(1, requests * kinds), "window": window,
                               "windows": len(per_request), "of": "one kind" if kinds == 1 else "the pair"},
            "latency_ms": {"median": percentile(latencies, 0.5), "p95": percentile(latencies, 0.95)},
        })
    return entries[0] if kinds == 1 else entries


# MARK: - Run


def main():
    if sys.argv[1:] != ["run"]:
        raise SystemExit(__doc__)
    report = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": {"nproc": os.cpu_count(), "loadavg_start": os.getloadavg()},
              "settings": {"requests": REQUESTS, "process_requests": PROCESS_REQUESTS, "window": WINDOW,
                           "concurrency": CONCURRENCY, "long": LONG, "min_valid": MIN_VALID}}
    agent = start_agent()
    try:
        report["rss_kib"] = {"start": rss_kib(agent.pid)}
        agent_token = documented_client()
        library = oidc_library()
        store_command = [TOOL, "token", "--portal", PORTAL, "--store", STORE]
        store_env = {**E, "PORTAL_AUTH_AGENT": "off"}
        agent_env = {**E, "PORTAL_AUTH_AGENT": SOCKET}
        # The same token every way (and oidc-agent answers), before anything is timed.
        stored = subprocess.run(store_command, capture_output=True, text=True, env=store_env, check=True).stdout.strip()
        through_agent = subprocess.run(store_command, capture_output=True, text=True, env=agent_env,
                                       check=True).stdout.strip()
        if not (stored == through_agent == agent_token({"portal": PORTAL}, MIN_VALID, SOCKET)):
            raise SystemExit("bench: the agent's token is not the stored one")
        if oidc_worker(library)(1)[1] != 0:
            raise SystemExit("bench: liboidc-agent gave no token (is OIDC_SOCK set?)")
        socket_rows = [
            ("agent, AgentProtocol.md client", lambda: doc_worker(agent_token)),
            ("agent, raw loop (bench's own)", raw_worker),
            ("oidc-agent, liboidc-agent", lambda: oidc_worker(library)),
        ]
        paired_labels = ["portal-auth token (store)", "portal-auth token (agent)"]
        process_rows = [
            (paired_labels, lambda: paired_process_worker(store_command, [store_env, agent_env])),
            ("oidc-token", lambda: process_worker(["oidc-token", ACCOUNT])),
        ]
        report["rows"] = {}
        for concurrency in CONCURRENCY:  # every row at one C before the next C: they see the same load
            for label, make in socket_rows:
                log(f"agent section: {label}, {REQUESTS} requests at C={concurrency}")
                report["rows"].setdefault(label, {})[str(concurrency)] = measure(make, REQUESTS, concurrency)
            report["rss_kib"][f"after C={concurrency} socket rows"] = rss_kib(agent.pid)
            if PROCESS_REQUESTS > 0:
                for label, make in process_rows:
                    if isinstance(label, list):
                        log(f"agent section: {' and '.join(label)} paired, {PROCESS_REQUESTS} processes each at "
                            f"C={concurrency}")
                        for name, entry in zip(label, measure(make, PROCESS_REQUESTS, concurrency, kinds=len(label))):
                            report["rows"].setdefault(name, {})[str(concurrency)] = entry
                        continue
                    log(f"agent section: {label}, {PROCESS_REQUESTS} processes at C={concurrency}")
                    report["rows"].setdefault(label, {})[str(concurrency)] = measure(
                        make, PROCESS_REQUESTS, concurrency)
        report["rss_kib"]["after the rows"] = rss_kib(agent.pid)
        if LONG > 0:
            report["long"] = long_run(agent.pid)
        report["rss_kib"]["end"] = rss_kib(agent.pid)
    finally:
        stop_agent(agent)
    report["machine"]["loadavg_end"] = os.getloadavg()
    report["goals"] = goals(report)
    out_dir = ROOT / "bench-results"
    out_dir.mkdir(exist_ok=True)
    out = out_dir / f"agent-{report['started'].replace(':', '')}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(table(report))
    print(f"load average at start {report['machine']['loadavg_start'][0]:.1f}, at end "
          f"{report['machine']['loadavg_end'][0]:.1f} ({os.cpu_count()} cores); results: {out.relative_to(ROOT)}")
    failed = [label for label, by_c in report["rows"].items() for entry in by_c.values() if entry["failures"]]
    if failed:
        print(f"failed requests in: {', '.join(sorted(set(failed)))}")
    missed = [goal["name"] for goal in report["goals"] if goal["met"] is False]
    if missed:
        strict = E.get("BENCH_STRICT") == "1"
        print(f"agent speed goals missed: {'; '.join(missed)}{' (--strict: failing)' if strict else ''}")
        if strict:
            sys.exit(1)
    sys.exit(1 if failed else 0)


def long_run(pid):
    """LONG raw-loop requests at C=16 in ten slices, RSS read before, between and after them."""
    slices, samples = 10, []
    samples.append(rss_kib(pid))
    failures = 0
    started = time.monotonic()
    for index in range(slices):
        result = measure(raw_worker, LONG // slices, 16)
        failures += result["failures"]
        samples.append(rss_kib(pid))
        log(f"long run: {(index + 1) * (LONG // slices)} requests, agent RSS {samples[-1]} KiB")
    return {"requests": LONG // slices * slices, "failures": failures, "seconds": time.monotonic() - started,
            "rss_kib": samples, "start": samples[0], "middle": samples[slices // 2], "end": samples[-1]}


def goals(report):
    rows = report["rows"]
    found = []

    def goal(name, met, detail):
        found.append({"name": name, "met": met, "detail": detail})

    raw = rows.get("agent, raw loop (bench's own)", {}).get("16")
    if raw:
        value = raw["per_request_ms"]["median"]
        goal(f"agent <= {PER_REQUEST_GOAL_MS} ms median per request at C=16 (raw loop)",
             value <= PER_REQUEST_GOAL_MS, f"{value:.3f} ms")
    for concurrency in CONCURRENCY:
        key = str(concurrency)
        ours = rows["agent, AgentProtocol.md client"][key]["per_request_ms"]["median"]
        theirs = rows["oidc-agent, liboidc-agent"][key]["per_request_ms"]["median"]
        goal(f"agent (AgentProtocol.md client) ahead of oidc-agent (liboidc-agent) at C={concurrency}",
             ours < theirs, f"{ours:.3f} vs {theirs:.3f} ms")
        if "portal-auth token (agent)" in rows:
            # Paired rows: the median run time of a process, each kind's over the same moments.
            through_agent = rows["portal-auth token (agent)"][key]["latency_ms"]["median"]
            through_store = rows["portal-auth token (store)"][key]["latency_ms"]["median"]
            goal(f"portal-auth token through the agent no slower than through the store at C={concurrency} "
                 f"(median process run time, paired)",
                 through_agent <= through_store, f"{through_agent:.2f} vs {through_store:.2f} ms")
    rss = report["rss_kib"]
    peak = max(value for value in rss.values())
    if "long" in report:
        long = report["long"]
        peak = max(peak, *long["rss_kib"])
        goal(f"agent RSS flat over {long['requests']:,} requests (middle -> end <= {RSS_FLAT_KIB} KiB)",
             long["end"] - long["middle"] <= RSS_FLAT_KIB,
             f"start {long['start']}, middle {long['middle']}, end {long['end']} KiB")
    goal(f"agent RSS <= {RSS_GOAL_KIB // 1024} MiB", peak <= RSS_GOAL_KIB, f"peak {peak / 1024:.1f} MiB")
    return found


def table(report):
    lines = [f"6. a token through the agent against oidc-agent ({REQUESTS:,} socket requests and {PROCESS_REQUESTS:,} "
             f"processes per row and C; per request = wall / requests in windows, median and p95 of the windows, "
             f"of the pair for the two paired portal-auth token rows (store and agent alternating in every client); "
             f"latency = send to answer, or a process's run time)"]
    lines.append(f"   {'row':36} {'C':>3} {'per request ms':>15} {'p95':>7} {'latency ms':>11} {'p95':>8} {'failed':>7}")
    for label, by_c in report["rows"].items():
        for key, entry in by_c.items():
            lines.append(f"   {label:36} {key:>3} {entry['per_request_ms']['median']:15.3f} "
                         f"{entry['per_request_ms']['p95']:7.3f} {entry['latency_ms']['median']:11.3f} "
                         f"{entry['latency_ms']['p95']:8.3f} {entry['failures']:7}")
    rss = ", ".join(f"{name} {value / 1024:.1f}" for name, value in report["rss_kib"].items())
    lines.append(f"   agent RSS (MiB, /proc VmRSS): {rss}")
    if "long" in report:
        long = report["long"]
        lines.append(f"   long run: {long['requests']:,} raw-loop requests at C=16 in {long['seconds']:.0f} s, "
                     f"{long['failures']} failed; RSS KiB at each tenth: {long['rss_kib']}")
    for goal in report["goals"]:
        lines.append(f"   goal {goal['name']}: {goal['detail']} {'PASS' if goal['met'] else 'FAIL'}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
