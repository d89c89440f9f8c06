# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cgstat --listen scraped by a real Prometheus (Debian's), as a user's dashboard reads it: a
throwaway configuration (scrape every second, storage in a temporary folder, loopback ports)
with two cgstat runs as targets. One is scraped through the test's own exporter, which passes
cgstat's page on as it came and adds the kernel's figure as of the interval the page's values
are of: the spinner's cgroup's cpu.stat usage, read by the test as that interval's JSON line
arrived (harness.Cgstat's sample). Prometheus stores both with the same timestamps. Then
Prometheus's HTTP API:

- rate(cgstat_cpu_seconds_total{cgroup="spin"}) against the rate of the kernel's counter over
  the same windows: within 1 %;
- histogram_quantile(0.99) over each scrape interval that holds exactly one of cgstat's
  (idelta() of the buckets) for a load of known shape (workload slices: 4 ms waits behind a
  SCHED_FIFO thread, and sub-microsecond ones of that thread) against the p99 the CSV gives
  for that interval (the second run, -o): within 25 %, what four buckets an octave allow;
- the waits counter equal to the histogram's _count in every scrape Prometheus stored;
- cgstat stopped: its series are stale at the first scrape that failed (an instant query
  there returns none of them).

Skipped, saying so, only where Debian's prometheus is not installed."""

import csv
import http.server
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import harness as h

LOAD_S = 24
RATE_WINDOW_S = 15
RATE_REL = 0.01
QUANTILE_REL = 0.25


def api(port, path, **params):
    url = "http://127.0.0.1:%d/api/v1/%s?%s" % (port, path, urllib.parse.urlencode(params))
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError("prometheus: %s" % body)
    return body["data"]


def query_all(port, expr, at):
    """An instant query's result at time at (seconds): [(labels, value)]."""
    return [(r["metric"], float(r["value"][1]))
            for r in api(port, "query", query=expr, time="%.3f" % at)["result"]]


def query(port, expr, at):
    """The single value of an instant query at time at (seconds), or None."""
    result = query_all(port, expr, at)
    return result[0][1] if result else None


def raw_samples(port, selector, at, span_s):
    """The samples Prometheus stored of selector in the span_s seconds up to at: {labels as a
    sorted tuple: [(timestamp, value)]}."""
    data = api(port, "query", query="%s[%ds]" % (selector, span_s), time="%.3f" % at)
    return {tuple(sorted(r["metric"].items())): [(float(t), float(v)) for t, v in r["values"]]
            for r in data["result"]}


def wait_ready(port, proc, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("prometheus exited with %d" % proc.returncode)
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/-/ready" % port, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError("prometheus not ready in %d s" % timeout)


def wait_scraped(port, expr, timeout=30):
    """Until an instant query of expr returns something (e.g. the first scrapes are in)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if query_all(port, expr, time.time()):
            return True
        time.sleep(0.5)
    return False


def start_prometheus(work, jobs, port):
    """Debian's prometheus scraping jobs ({job: [host:port]}) every second, its storage in
    work; returns the process once it is ready."""
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n")
        for job, targets in jobs.items():
            f.write("  - job_name: %s\n    static_configs:\n      - targets: [%s]\n"
                    % (job, ", ".join("'%s'" % t for t in targets)))
    prom = subprocess.Popen(["prometheus", "--config.file=" + config,
                             "--storage.tsdb.path=" + os.path.join(work, "data"),
                             "--web.listen-address=127.0.0.1:%d" % port,
                             "--log.level=warn"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_ready(port, prom)
    except Exception:
        stop_prometheus(prom)
        raise
    return prom


def stop_prometheus(prom):
    prom.terminate()
    try:
        prom.wait(20)
    except subprocess.TimeoutExpired:
        prom.kill()
        prom.wait()


def kernel_usage_at(cgstat, end_ms, timeout=2):
    """The cgroup's usage (ms) the test read as the line of the interval ending at end_ms
    arrived, or None. The drain writes the line before it adds the interval to /metrics."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for i in range(len(cgstat.line_times) - 1, -1, -1):
            if json.loads(cgstat.lines[i])["epochMillis"] == end_ms:
                return cgstat.line_samples[i]
        time.sleep(0.01)
    return None


class KernelExporter:
    """The test's own /metrics: cgstat's page at port as it came, then the kernel's figure of
    the interval its values are of (kernel_usage_at()), in seconds."""

    def __init__(self, cgstat, port):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                page, usage = b"", None
                try:
                    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                                timeout=5) as r:
                        page = r.read()
                    end = re.search(rb"^cgstat_last_interval_end_timestamp_seconds (\S+)$",
                                    page, re.M)
                    usage = kernel_usage_at(cgstat, round(float(end.group(1)) * 1000))
                except (OSError, AttributeError):
                    pass
                if usage is None:
                    self.send_response(503)
                    self.end_headers()
                    return
                page += ("# TYPE kernel_cpu_seconds_total counter\n"
                         "kernel_cpu_seconds_total %.6f\n" % (usage / 1000)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def check_rates(prom_port, started, ended):
    """cgstat's rate of the spinner's on-CPU time against the kernel's, same windows."""
    checked = []
    for at in (started + RATE_WINDOW_S + 1.5, ended - 0.5):
        got = query(prom_port, 'rate(cgstat_cpu_seconds_total{cgroup="spin"}[%ds])'
                    % RATE_WINDOW_S, at)
        want = query(prom_port, "rate(kernel_cpu_seconds_total[%ds])" % RATE_WINDOW_S, at)
        checked.append((at - started, got, want))
    h.check(all(g is not None and w and w > 0.1 and abs(g - w) <= RATE_REL * w
                for _, g, w in checked),
            "rate(cgstat_cpu_seconds_total[%ds]) of a spinner against the rate of its cgroup's "
            "cpu.stat usage over the same window (limit %.0f %%): %s"
            % (RATE_WINDOW_S, 100 * RATE_REL,
               ["%.1f s: %s vs %.4f cores (%+.3f %%)"
                % (t, g, w or 0, 100 * (g - w) / w if g is not None and w else 0)
                for t, g, w in checked]))


def check_quantiles(prom_port, out_dir, instance, start, end):
    """histogram_quantile(0.99) of each scrape interval that holds one drain of cgstat's (its
    interval's end moved on by one interval) against the CSV's p99 of that interval."""
    ends = next(iter(raw_samples(prom_port, 'cgstat_last_interval_end_timestamp_seconds{'
                                 'instance="%s"}' % instance, end, int(end - start)).values()),
                [])
    with open(os.path.join(out_dir, "sched-stats.csv"), newline="") as f:
        p99 = {int(r["epochMillis"]): float(r["runqP99Micros"]) for r in csv.DictReader(f)
               if r["container"] == "slices" and r["runqP99Micros"]}
    pairs, worst = [], 0.0
    for (_t0, end0), (t1, end1) in zip(ends, ends[1:]):
        want = p99.get(round(end1 * 1000))
        if not 0.5 < end1 - end0 < 1.5 or not want or want < 1000:
            continue  # not one interval, or one without the load's waits
        got = query(prom_port, "histogram_quantile(0.99, idelta(cgstat_runqueue_wait_duration_"
                    'seconds_bucket{instance="%s",cgroup="slices"}[1500ms]))' % instance, t1)
        pairs.append((end1, got, want))
        worst = max(worst, abs(got * 1e6 - want) / want if got is not None else 1)
    h.check(len(pairs) >= LOAD_S // 2 and worst <= QUANTILE_REL,
            "histogram_quantile(0.99) of each scrape against the CSV's p99 of its interval: "
            "%d intervals, worst %.1f %% off (limit %.0f %%), e.g. %s"
            % (len(pairs), 100 * worst, 100 * QUANTILE_REL,
               ["%.1f vs %.1f us" % (g * 1e6, w) for _e, g, w in pairs[:3] if g is not None]))


def check_count_is_waits(prom_port, at, span_s):
    waits = raw_samples(prom_port, 'cgstat_runqueue_waits_total{cgroup="slices"}', at, span_s)
    count = raw_samples(prom_port, 'cgstat_runqueue_wait_duration_seconds_count{'
                        'cgroup="slices"}', at, span_s)
    w = next(iter(waits.values()), [])
    c = next(iter(count.values()), [])
    differ = [(a, b) for a, b in zip(w, c) if a != b]
    h.check(len(w) >= span_s - 5 and len(w) == len(c) and not differ and w[-1][1] > 0,
            "cgstat_runqueue_waits_total equals the histogram's _count in each of the %d scrapes "
            "stored (%d differ, last %s)" % (len(w), len(differ) + abs(len(w) - len(c)),
                                            w[-1][1] if w else None))


def check_stale(prom_port, cgstat, instance):
    """cgstat stopped: at the first scrape that fails, its series are stale."""
    h.check(cgstat.stop() == 0, "the second cgstat ended with 0")
    stopped = time.time()
    h.check(wait_scraped(prom_port, 'up{instance="%s"} == 0' % instance),
            "prometheus found the stopped cgstat down")
    ups = raw_samples(prom_port, 'up{instance="%s"}' % instance, time.time(), 30)
    down_at = next((t for t, v in next(iter(ups.values()), []) if v == 0 and t >= stopped - 1),
                   None)
    before = query_all(prom_port, 'cgstat_cpu_seconds_total{instance="%s"}' % instance,
                       down_at - 1.5) if down_at else []
    after = query_all(prom_port, '{instance="%s",__name__=~"cgstat_.*"}' % instance,
                      down_at + 0.001) if down_at else [1]
    h.check(down_at is not None and before and not after,
            "cgstat's series are stale from the first failed scrape on (%d series a scrape "
            "before it, %d after it)" % (len(before), len(after)))


def main():
    args = h.parse_args()
    if not shutil.which("prometheus"):
        h.skip("a real Prometheus scraping --listen: Debian's prometheus is not installed "
               "(apt-get install prometheus)")
        h.done()
        return
    spin_port, slices_port, prom_port = h.free_port(), h.free_port(), h.free_port()
    work = h.scratch_path(tempfile.mkdtemp(prefix="cgstat-prometheus-"))
    with h.scratch_cgroup("prom-spin") as spin, h.scratch_cgroup("prom-slices") as slices:
        usage = os.path.join(spin, "cpu.stat")
        spin_run = slices_run = kernel = prom = None
        try:
            spin_run = h.Cgstat(args.cgstat, ["-f", "json", "-i", "0.5", "-c", "spin=" + spin,
                                              "--listen", "127.0.0.1:%d" % spin_port],
                                sample=lambda: h.cpu_stat_usage_ms(usage))
            kernel = KernelExporter(spin_run, spin_port)
            prom = start_prometheus(work, {
                "cgstat": ["127.0.0.1:%d" % slices_port],
                "kernel": ["127.0.0.1:%d" % kernel.port]}, prom_port)
            slices_run = h.Cgstat(args.cgstat, ["-q", "-i", "1", "-c", "slices=" + slices,
                                                "--listen", "127.0.0.1:%d" % slices_port])
            h.check(wait_scraped(prom_port, 'count(cgstat_up == 1) == 2'),
                    "prometheus scrapes both cgstat runs and the kernel's figure")
            started = time.time()
            spinner = h.Workload(args.workload, spin, "spinner", LOAD_S, 1)
            load = h.Workload(args.workload, slices, "slices", LOAD_S)
            spinner.wait()
            load.wait()
            ended = time.time()
            # the last interval of the load in: its end scraped
            h.check(wait_scraped(prom_port, 'cgstat_last_interval_end_timestamp_seconds{'
                                 'instance="127.0.0.1:%d"} > %.3f' % (slices_port, ended + 1)),
                    "prometheus has an interval of the second run after the load")
            check_rates(prom_port, started, ended)
            check_quantiles(prom_port, slices_run.out_dir, "127.0.0.1:%d" % slices_port,
                            started, ended)
            check_count_is_waits(prom_port, time.time(), int(time.time() - started))
            check_stale(prom_port, slices_run, "127.0.0.1:%d" % slices_port)
            h.check(spin_run.stop() == 0, "the first cgstat ended with 0")
        finally:
            for run in (spin_run, slices_run):
                if run and run.proc.poll() is None:
                    run.proc.kill()
                    run.proc.wait()
            if prom:
                stop_prometheus(prom)
            if kernel:
                kernel.close()
    h.done()


if __name__ == "__main__":
    main()
