# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--listen's /metrics (docs/metrics-endpoint.md), read as a scraper reads it:

- the counters of a watched cgroup against the kernel's own accounting once its workload has
  ended: cgstat_cpu_seconds_total against the cgroup's cpu.stat, the switches, run-queue waits
  and migrations against the workload's /proc figures (harness.final_counts), as test_accuracy
  checks the CSV;
- the histogram against itself as Prometheus reads it: its _count is the waits counter, its
  _sum lies between the waits' bucket edges, and with the unmeasured waits it makes the stream's
  runqWaits;
- the text is valid by Prometheus's own checker (promtool check metrics), has no timestamp, and
  OpenMetrics is served when Accept asks for it (test_grafana evaluates the dashboard's queries
  against a real Prometheus);
- process_* against the kernel's figures of cgstat's process, and cgstat_build_info;
- hostile clients (slowloris connections, a 4 MiB request, 200 connections at once) neither
  stall the drain (every interval still written) nor grow cgstat's memory beyond the bounds in
  listener.c, and a scraper from another address is still served meanwhile;
- a port in use is one line on stderr and exit 1, before anything is loaded."""

import contextlib
import os
import re
import socket
import subprocess
import time
import urllib.request

import harness as h

INTERVAL_S = 0.5


def scrape(port, openmetrics=False, source="127.0.0.1", timeout=5, host="127.0.0.1"):
    """(status, content type, text) of GET /metrics at host, from source (an address of this
    machine)."""
    conn = socket.create_connection((host, port), timeout, (source, 0))
    accept = ("application/openmetrics-text; version=1.0.0,text/plain;q=0.5" if openmetrics
              else "text/plain")
    conn.sendall(("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: %s\r\nConnection: close\r\n\r\n"
                  % accept).encode())
    data = b""
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    conn.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    ctype = next((l.split(":", 1)[1].strip() for l in lines[1:]
                  if l.lower().startswith("content-type:")), "")
    return status, ctype, body.decode()


def samples(text, stamps=None):
    """{(name, frozenset of label pairs): value} of the text format; each sample's timestamp
    (ms, None where it has none) into stamps under the same key when given."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?[0-9]+)?$', line)
        if not m:
            raise ValueError("not a sample line: %r" % line)
        labels = frozenset(re.findall(r'([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        out[(m.group(1), labels)] = float(m.group(4))
        if stamps is not None:
            stamps[(m.group(1), labels)] = int(m.group(5)) if m.group(5) else None
    return out


def value(got, name, **labels):
    return got.get((name, frozenset(labels.items())))


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def process_figures(pid):
    """What the kernel says of cgstat's process, read by the test right after a scrape: CPU
    seconds (utime + stime), VmRSS bytes, open fds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return {"cpu": (int(fields[11]) + int(fields[12])) / tick,
            "rss": rss_kib(pid) * 1024, "fds": len(os.listdir("/proc/%d/fd" % pid))}


def check_process(got, own, launched):
    """process_* against the kernel's figures of cgstat read just after the scrape."""
    cpu = value(got, "process_cpu_seconds_total")
    rss = value(got, "process_resident_memory_bytes")
    fds = value(got, "process_open_fds")
    start = value(got, "process_start_time_seconds")
    h.check(cpu is not None and own["cpu"] - 0.05 <= cpu <= own["cpu"]
            and rss is not None and abs(rss - own["rss"]) <= 0.1 * own["rss"]
            and fds is not None and abs(fds - own["fds"]) <= 2
            and start is not None and launched - 1 <= start <= launched + 5
            and value(got, "process_max_fds"),
            "process_*: CPU %s s (the kernel's %.2f just after), RSS %s (VmRSS %d), %s fds "
            "(/proc/PID/fd: %d), started %s (the test launched it at %.2f)"
            % (cpu, own["cpu"], rss, own["rss"], fds, own["fds"], start, launched))
    build = [labels for (n, labels) in got if n == "cgstat_build_info"]
    h.check(len(build) == 1 and dict(build[0]).get("version") and
            dict(build[0]).get("libbpf", "").startswith("v1."),
            "cgstat_build_info: %s" % (dict(build[0]) if build else None))


def port_in_use(args):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    start = time.monotonic()
    out = subprocess.run([args.cgstat, "-q", "--listen", str(port)], stderr=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, timeout=30)
    h.no_sanitizer_report("--listen on a port in use", out.stderr)
    took = time.monotonic() - start
    busy.close()
    err = out.stderr.decode(errors="replace").strip().splitlines()
    h.check(out.returncode == 1 and len(err) == 1 and "in use" in err[0],
            "--listen on a port in use: exit %d, %d line(s) (%s), in %.2f s"
            % (out.returncode, len(err), err, took))


def accuracy_and_formats(args):
    port = h.free_port()
    with h.scratch_cgroup("metrics") as cg:
        launched = time.time()
        cgstat = h.Cgstat(args.cgstat, ["-f", "json", "-i", str(INTERVAL_S), "-c",
                                        "load=" + cg, "--listen", "127.0.0.1:%d" % port])
        report = h.run_workload(args.workload, cg, "steady", 3, 2)
        h.settle()
        usage_ms = h.cgroup_usage_ms(cg)
        # the sums once every interval of the load is in: two more written
        cgstat.wait_intervals(time.time() * 1000, 2)
        status, ctype, text = scrape(port)
        own = process_figures(cgstat.proc.pid)
        om_status, om_type, om_text = scrape(port, openmetrics=True)
        other = urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=5).status
        code = cgstat.stop()
    h.check(code == 0 and status == 200 and ctype.startswith("text/plain; version=0.0.4"),
            "GET /metrics: %d, %s (cgstat's exit %d)" % (status, ctype, code))
    stamps = {}
    got = samples(text, stamps)
    cpu_s = value(got, "cgstat_cpu_seconds_total", cgroup="load") or 0
    h.check_cpu_stat("cgstat_cpu_seconds_total", cpu_s * 1000, usage_ms, [report])
    waits = value(got, "cgstat_runqueue_waits_total", cgroup="load")
    unmeasured = value(got, "cgstat_runqueue_unmeasured_waits_total", cgroup="load")
    counts = {
        "voluntarySwitches": value(got, "cgstat_context_switches_total", cgroup="load",
                                   switch="voluntary"),
        "involuntarySwitches": value(got, "cgstat_context_switches_total", cgroup="load",
                                     switch="involuntary"),
        "runqWaits": None if waits is None or unmeasured is None else waits + unmeasured,
        "migrations": value(got, "cgstat_migrations_total", cgroup="load"),
    }
    h.check(all(v is not None for v in counts.values()), "the counters are there: %s" % counts)
    h.check_final_counts("/metrics", {k: int(v or 0) for k, v in counts.items()}, report,
                         ("voluntary", "involuntary", "waits", "migrations"))

    check_process(got, own, launched)
    # off-CPU split by state; the whole under state="sleep_or_blocked" is --light's alone, so
    # that a sum over state counts each second once
    states = sorted(dict(l).get("state") for (n, l) in got
                    if n == "cgstat_offcpu_seconds_total" and dict(l).get("cgroup") == "load")
    h.check(states == ["blocked", "sleep"], "cgstat_offcpu_seconds_total's states: %s, want "
            "blocked and sleep" % states)

    # the histogram: cumulative, ending at its count, which is the waits counter; its sum
    # between the sums of its waits' lower and upper edges
    buckets = sorted(((float(dict(l)["le"]), v) for (n, l), v in got.items()
                      if n == "cgstat_runqueue_wait_duration_seconds_bucket"
                      and dict(l).get("cgroup") == "load"))
    hist_count = value(got, "cgstat_runqueue_wait_duration_seconds_count", cgroup="load")
    hist_sum = value(got, "cgstat_runqueue_wait_duration_seconds_sum", cgroup="load") or 0
    h.check(len(buckets) == 90 and all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:]))
            and buckets[-1] == (float("inf"), hist_count) and 0 < hist_count == waits,
            "the run-queue histogram: 90 buckets, cumulative, +Inf is its count (%s), the "
            "waits counter's (%s)" % (hist_count, waits))
    low = high = 0.0
    for (le0, n0), (le1, n1) in zip([(0.0, 0)] + buckets, buckets):
        if n1 > n0:
            low += (n1 - n0) * le0
            high += (n1 - n0) * le1
    runq_s = value(got, "cgstat_runqueue_wait_seconds_total", cgroup="load") or 0
    h.check(low <= hist_sum <= high and hist_sum <= runq_s,
            "the histogram's _sum %.6f s lies between its waits' edges (%.6f to %.6f s) and "
            "within the run-queue time %.6f s" % (hist_sum, low, high, runq_s))

    # Prometheus's own checker, on the text as served
    lint = subprocess.run(["promtool", "check", "metrics"], input=text.encode(),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    h.check(lint.returncode == 0, "promtool check metrics: exit %d %s"
            % (lint.returncode, lint.stdout.decode(errors="replace").strip()[:300]))
    h.check(om_status == 200 and om_type.startswith("application/openmetrics-text")
            and om_text.endswith("# EOF\n") and "# TYPE cgstat_cpu_seconds counter" in om_text
            and "# UNIT cgstat_cpu_seconds seconds" in om_text,
            "OpenMetrics when Accept asks for it: %d, %s, ends with # EOF" % (om_status, om_type))
    h.check(other == 200, "GET /: %d" % other)

    # the JSON stream went on beside the endpoint, as exact against cpu.stat
    lines = h.read_json_lines(cgstat.stdout_path)
    stream_ms = sum(line["containers"].get("load", {}).get("onCpuMillis", 0) for line in lines)
    h.check_cpu_stat("the stdout stream beside it: its on-CPU sum", stream_ms, usage_ms, [report])
    stream_waits = sum(line["containers"].get("load", {}).get("runqWaits", 0) for line in lines)
    h.check(counts["runqWaits"] == stream_waits,
            "/metrics' measured and unmeasured waits add up to the stream's runqWaits: %s + %s "
            "vs %d" % (waits, unmeasured, stream_waits))
    # no sample carries a timestamp: Prometheus stamps the scrape, and marks what goes stale
    stamped = [k for k, t in stamps.items() if t is not None]
    h.check(not stamped, "no sample has a timestamp (%d have, e.g. %s)"
            % (len(stamped), stamped[:1]))


def hostile_clients(args):
    port = h.free_port()
    with h.scratch_cgroup("metrics-hostile") as cg:
        sleeper = h.spawn_in_cgroup(cg, ["sleep", "1000"])
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", str(INTERVAL_S), "-c", "idle=" + cg,
                                        "--listen", str(port)])
        cgstat.wait_intervals(time.time() * 1000, 1)
        scrape(port)
        rss_before = rss_kib(cgstat.proc.pid)
        start_ms = time.time() * 1000
        # slowloris: 40 connections that send a header byte now and then
        slow = []
        for _ in range(40):
            try:
                s = socket.create_connection(("127.0.0.1", port), 2, ("127.0.0.1", 0))
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                slow.append(s)
            except OSError:
                pass
        # a request of 4 MiB of headers
        huge = socket.create_connection(("127.0.0.1", port), 5, ("127.0.0.3", 0))
        huge_sent = 0
        try:
            huge.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Huge: ")
            for _ in range(64):
                huge.sendall(b"a" * 65536)
                huge_sent += 65536
        except OSError:
            pass
        huge_reply = b""
        try:
            huge_reply = huge.recv(4096)
        except OSError:
            pass
        huge.close()
        # a flood: 200 connections at once
        flood = []
        for _ in range(200):
            try:
                flood.append(socket.create_connection(("127.0.0.1", port), 0.5,
                                                      ("127.0.0.4", 0)))
            except OSError:
                pass
        # a scraper from elsewhere is still served
        served = []
        for second in range(6):
            for s in slow:
                try:
                    s.send(b"a")
                except OSError:
                    pass
            try:
                served.append(scrape(port, source="127.0.0.2")[0])
            except OSError as e:
                served.append(str(e))
            time.sleep(1)
        rss_during = rss_kib(cgstat.proc.pid)
        for s in slow + flood:
            s.close()
        end_ms = time.time() * 1000
        after = scrape(port)[0]
        cgstat.stop()
        sleeper.kill()
        sleeper.wait()
    rows = [r for r in cgstat.rows("sched-stats.csv") if r["container"] == "idle"
            and start_ms + INTERVAL_S * 1000 <= int(r["epochMillis"]) <= end_ms]
    want = int((end_ms - start_ms) / 1000 / INTERVAL_S) - 1
    h.check(len(rows) >= want - 1, "the drain went on under the attack: %d intervals of %.1f s "
            "written in %.1f s (at least %d)" % (len(rows), INTERVAL_S,
                                                  (end_ms - start_ms) / 1000, want - 1))
    h.check(served.count(200) >= 5 and after == 200,
            "a scraper from another address was served meanwhile (%s), and after (%d)"
            % (served, after))
    h.check(not huge_reply.startswith(b"HTTP/1.1 200"),
            "a 4 MiB request was refused (%d bytes sent before the server stopped reading; "
            "reply %r)" % (huge_sent, huge_reply[:40]))
    # 32 connections of 32 KiB at most, and their bookkeeping: 8 MiB is room to spare
    h.check(rss_during - rss_before < 8 * 1024,
            "cgstat's memory under 40 slow, 200 flooding and one huge client: %d KiB, then "
            "%d KiB (+%d KiB, limit 8 MiB)" % (rss_before, rss_during, rss_during - rss_before))


def global_ipv4():
    """An IPv4 address of this machine that is not loopback, or None."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"],
                         stdout=subprocess.PIPE, text=True).stdout.split()
    return out[out.index("inet") + 1].split("/")[0] if "inet" in out else None


def wait_served(port, host, timeout=20):
    """GET /metrics at host:port once cgstat serves its first interval there (cgstat_up 1):
    (status, text); raise if it does not within timeout seconds."""
    deadline = time.monotonic() + timeout
    status, text = None, ""
    while "\ncgstat_up 1\n" not in text:
        if time.monotonic() > deadline:
            raise RuntimeError("%s:%d: no cgstat_up 1 in %d s (status %s)"
                               % (host, port, timeout, status))
        time.sleep(0.05)
        with contextlib.suppress(OSError):
            status, _, text = scrape(port, source=host, host=host)
    return status, text


def addresses(args):
    """--listen ADDR:PORT on every address (0.0.0.0: reached at this machine's own address),
    on IPv6's loopback ([::1]:PORT), and by default on 127.0.0.1 alone: the machine's address
    refused."""
    outside = global_ipv4()
    if outside is None:
        h.skip("--listen 0.0.0.0: this machine has no address beside loopback")
    else:
        port = h.free_port()
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "--listen", "0.0.0.0:%d" % port])
        status, text = wait_served(port, outside)
        cgstat.stop()
        h.check(status == 200 and "\ncgstat_up 1\n" in text,
                "--listen 0.0.0.0:PORT: served at %s (status %d)" % (outside, status))
    try:
        socket.socket(socket.AF_INET6).bind(("::1", 0))
    except OSError as e:
        h.skip("--listen [::1]:PORT: no IPv6 loopback here (%s)" % e)
    else:
        port = h.free_port()
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "--listen", "[::1]:%d" % port])
        status, text = wait_served(port, "::1")
        cgstat.stop()
        h.check(status == 200 and "\ncgstat_up 1\n" in text,
                "--listen [::1]:PORT: served on IPv6's loopback (status %d)" % status)
    if outside is not None:
        port = h.free_port()
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "--listen", str(port)])
        wait_served(port, "127.0.0.1")
        try:
            scrape(port, source=outside, host=outside)
            refused = False
        except ConnectionRefusedError:
            refused = True
        cgstat.stop()
        h.check(refused, "--listen PORT: 127.0.0.1 alone, %s:%d refused" % (outside, port))


def main():
    args = h.parse_args()
    port_in_use(args)
    addresses(args)
    accuracy_and_formats(args)
    hostile_clients(args)
    h.done()


if __name__ == "__main__":
    main()
