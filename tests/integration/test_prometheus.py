# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cgstat --listen scraped by a real Prometheus (Debian's), as a user's dashboard reads it: a
throwaway configuration (scrape every second, storage in a temporary folder, loopback ports),
a workload of known shape (two threads at 0.4 of a core each), then Prometheus's HTTP API:

- rate(cgstat_cpu_seconds_total{container="load"}[5s]) over the load's steady middle against
  the CSV's cores of the intervals inside each window, within 2 %;
- the voluntary switches' counter, once the load is over, against the CSV's sum of
  voluntarySwitches: equal, the same counts having reached Prometheus.

Skipped, saying so, only where Debian's prometheus is not installed."""

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import harness as h

INTERVAL_S = 1
LOAD_S = 14
# rate() over 5 s windows of the load's steady middle against the CSV's intervals that lie
# inside each window: cgstat stamps each sample with the end of its interval, so rate() is
# those intervals' own average, whatever the phase of the scrapes; 2 % is the issue's limit
# (16); 0.5 % here, where 0.04 % was the largest error seen in 6 runs (cpuCores has 4 decimals)
CORES_REL = 0.005
WINDOW_S = 5


def api(port, path, **params):
    url = "http://127.0.0.1:%d/api/v1/%s?%s" % (port, path, urllib.parse.urlencode(params))
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError("prometheus: %s" % body)
    return body["data"]


def query(port, expr, at):
    """The single value of an instant query at time at (seconds), or None."""
    result = api(port, "query", query=expr, time="%.3f" % at)["result"]
    return float(result[0]["value"][1]) if result else None


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
    """Until Prometheus has a sample of expr (its first scrapes of cgstat are in)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if query(port, expr, time.time()) is not None:
            return True
        time.sleep(0.5)
    return False


def main():
    args = h.parse_args()
    if not shutil.which("prometheus"):
        h.skip("a real Prometheus scraping --listen: Debian's prometheus is not installed "
               "(apt-get install prometheus)")
        h.done()
        return
    cg_port, prom_port = h.free_port(), h.free_port()
    work = h.scratch_path(tempfile.mkdtemp(prefix="cgstat-prometheus-"))
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: cgstat\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % cg_port)
    prom = subprocess.Popen(["prometheus", "--config.file=" + config,
                             "--storage.tsdb.path=" + os.path.join(work, "data"),
                             "--web.listen-address=127.0.0.1:%d" % prom_port,
                             "--log.level=warn"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_ready(prom_port, prom)
        with h.scratch_cgroup("prom") as cg:
            cgstat = h.Cgstat(args.cgstat, ["-q", "-i", str(INTERVAL_S), "-c", "load=" + cg,
                                            "--listen", "127.0.0.1:%d" % cg_port])
            h.check(wait_scraped(prom_port, 'cgstat_up{job="cgstat"} == 1'),
                    "prometheus scrapes cgstat (cgstat_up 1)")
            started = time.time()
            report = h.run_workload(args.workload, cg, "steady", LOAD_S, 2)
            ended = time.time()
            h.settle()
            # the last intervals written and scraped
            cgstat.wait_intervals(time.time() * 1000, 2)
            time.sleep(2.5)
            final_at = time.time()
            cgstat.stop()
        rows = [r for r in cgstat.rows("container-stats.csv") if r["container"] == "load"]
        sched = [r for r in cgstat.rows("sched-stats.csv") if r["container"] == "load"]

        # cores: Prometheus's rate over 5 s windows wholly inside the load (its start, where the
        # counter leaves 0 and rate() stops extrapolating, left out) against the CSV's
        ends = [int(r["epochMillis"]) for r in rows]
        spans = [(start, end, float(r["cpuCores"]))
                 for start, end, r in zip(ends, ends[1:], rows[1:])]
        checked = []
        for at in (started + WINDOW_S + 1.5, started + LOAD_S / 2 + 2.5, ended - 1):
            got = query(prom_port, 'rate(cgstat_cpu_seconds_total{container="load"}[%ds])'
                        % WINDOW_S, at)
            # the CSV rows whose intervals lie inside the window (epochMillis: their end; their
            # start: the row before's end)
            inside = [(end - start, cores) for start, end, cores in spans
                      if at - WINDOW_S <= start / 1000 and end / 1000 <= at]
            span_ms = sum(ms for ms, _ in inside)
            want = sum(ms * cores for ms, cores in inside) / span_ms if span_ms else 0
            checked.append((at - started, got, want, len(inside)))
        h.check(all(g is not None and w > 0 and n >= WINDOW_S - 2 and abs(g - w) <= CORES_REL * w
                    for _, g, w, n in checked),
                "rate(cgstat_cpu_seconds_total[%ds]) against the CSV's cores of the intervals "
                "inside the window (limit %.1f %%): %s" % (WINDOW_S, 100 * CORES_REL,
                                                         ["%.1f s: %s vs %.4f (%d rows)"
                                                          % (t, g, w, n)
                                                          for t, g, w, n in checked]))
        # the kernel says what the load was: 2 threads at 0.4 of a core
        exec_s = h.kernel_totals(report)["exec_ns"] / 1e9
        h.check(0.7 <= exec_s / LOAD_S <= 0.9,
                "the load ran %.3f cores by the kernel's sum_exec_runtime" % (exec_s / LOAD_S))

        # the switches: every count reached Prometheus
        vcsw = query(prom_port, 'cgstat_context_switches_total{container="load",'
                     'kind="voluntary"}', final_at)
        csv_vcsw = sum(int(r["voluntarySwitches"]) for r in sched)
        h.check(vcsw is not None and int(vcsw) == csv_vcsw and csv_vcsw > 1000,
                "the voluntary switches' counter in Prometheus after the load: %s, the CSV's sum "
                "%d" % (vcsw, csv_vcsw))
        inc = query(prom_port, 'increase(cgstat_context_switches_total{container="load",'
                    'kind="voluntary"}[%ds])' % int(final_at - started + 3), final_at)
        h.check(inc is not None and abs(inc - csv_vcsw) <= 0.05 * csv_vcsw,
                "increase() over the run, Prometheus's extrapolation: %s against %d"
                % (inc, csv_vcsw))
        # the stamps were all taken: a stamp scraped twice came with the same value, and none
        # went back (Prometheus's own counters of the samples it refused)
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % prom_port, timeout=10) as r:
            own = r.read().decode()
        refused = {name: sum(float(line.split()[-1]) for line in own.splitlines()
                             if line.startswith(name + " ") or line.startswith(name + "{"))
                   for name in ("prometheus_target_scrapes_sample_duplicate_timestamp_total",
                                "prometheus_target_scrapes_sample_out_of_order_total",
                                "prometheus_target_scrapes_sample_out_of_bounds_total")}
        h.check(all(v == 0 for v in refused.values()) and len(refused) == 3
                and all(n in own for n in refused),
                "Prometheus refused none of the stamped samples: %s" % refused)
    finally:
        prom.terminate()
        try:
            prom.wait(20)
        except subprocess.TimeoutExpired:
            prom.kill()
    h.done()


if __name__ == "__main__":
    main()
