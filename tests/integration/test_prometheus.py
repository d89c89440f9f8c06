# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cgstat --listen scraped by a real Prometheus (Debian's), as a user's dashboard reads it: a
throwaway configuration (scrape every second, storage in a temporary folder, loopback ports),
a workload of known shape (two threads at 0.4 of a core each), then Prometheus's HTTP API:

- rate(cgstat_cpu_seconds_total{container="load"}[5s]) over the load's steady middle against
  the kernel's: the cgroup's cpu.stat usage, read by the test as each interval's line arrives,
  over the intervals whose stamped samples lie in the window;
- the voluntary switches' counter, once the load is over, against the workload's own
  nvcsw (the kernel's count, with what its threads' exits add); no reset over the run, and a
  sample of every interval.

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
# rate() over 5 s windows of the load's steady middle: cgstat stamps each sample with the end
# of its interval, so rate() is the slope between the first and last interval ends in the window,
# whatever the phase of the scrapes. The test reads cpu.stat as those intervals' lines arrive: the
# two edges differ by the change in the lines' lag (h.LINE_LAG_MS) and by a tick of staleness
# of each running thread's runtime, allowed on top of CORES_REL (cpuCores has 4 decimals; 0.04 %
# was the largest error against the CSV in 6 runs, 2026-11).
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
            usage = os.path.join(cg, "cpu.stat")
            cgstat = h.Cgstat(args.cgstat, ["-f", "json", "-i", str(INTERVAL_S), "-c",
                                            "load=" + cg, "--listen", "127.0.0.1:%d" % cg_port],
                              sample=lambda: (time.monotonic(), h.cpu_stat_usage_ms(usage)))
            h.check(wait_scraped(prom_port, 'cgstat_up{job="cgstat"} == 1'),
                    "prometheus scrapes cgstat (cgstat_up 1)")
            started = time.time()
            report = h.run_workload(args.workload, cg, "steady", LOAD_S, 2)
            ended = time.time()
            # an interval wholly after the load, written and scraped: the counters are final
            n = len(cgstat.line_times)
            cgstat.wait_lines(n + 2)
            last_end = json.loads(cgstat.lines[n + 1])["epochMillis"]
            h.check(wait_scraped(prom_port, 'timestamp(cgstat_context_switches_total{container='
                                 '"load",kind="voluntary"}) >= %.3f' % (last_end / 1000)),
                    "prometheus has the sample of the interval ending at %d" % last_end)
            final_at = time.time()
            cgstat.stop()
        lines = [json.loads(line) for line in cgstat.stdout_text().splitlines()]
        edges = [(line["epochMillis"] / 1000, t, used)
                 for line, (t, used) in zip(lines, cgstat.line_samples)]

        # cores: Prometheus's rate over 5 s windows wholly inside the load (its start, where the
        # counter leaves 0 and rate() stops extrapolating, left out) against the kernel's over
        # the intervals whose ends are the window's samples
        lag_ms = 2 * (h.LINE_LAG_MS + 2 * h.kernel_tick_ms())
        checked = []
        for at in (started + WINDOW_S + 1.5, started + LOAD_S / 2 + 2.5, ended - 1):
            got = query(prom_port, 'rate(cgstat_cpu_seconds_total{container="load"}[%ds])'
                        % WINDOW_S, at)
            inside = [e for e in edges if at - WINDOW_S < e[0] <= at]
            want = span = 0
            if len(inside) >= 2:
                span = (inside[-1][1] - inside[0][1]) * 1000
                want = (inside[-1][2] - inside[0][2]) / span
            checked.append((at - started, got, want, len(inside),
                            CORES_REL * want + lag_ms / span if span else 0))
        h.check(all(g is not None and w > 0 and n >= WINDOW_S - 1 and abs(g - w) <= limit
                    for _, g, w, n, limit in checked),
                "rate(cgstat_cpu_seconds_total[%ds]) against the cgroup's cpu.stat over the "
                "intervals stamped in the window (limit %.1f %% and %.0f ms of edges): %s"
                % (WINDOW_S, 100 * CORES_REL, lag_ms,
                   ["%.1f s: %s vs %.4f (%d samples, limit %.4f)" % c for c in checked]))
        # the kernel says what the load was: 2 threads at 0.4 of a core
        exec_s = h.kernel_totals(report)["exec_ns"] / 1e9
        h.precondition(0.7 <= exec_s / LOAD_S <= 0.9,
                       "the load ran %.3f cores by the kernel's sum_exec_runtime"
                       % (exec_s / LOAD_S))

        # the switches: every count reached Prometheus
        vcsw = query(prom_port, 'cgstat_context_switches_total{container="load",'
                     'kind="voluntary"}', final_at)
        h.check(vcsw is not None, "the voluntary switches' counter is in Prometheus")
        h.check_final_counts("Prometheus's counter of", {"voluntarySwitches": int(vcsw or 0)},
                             report, figures=("voluntary",))
        # over the run, as increase() and rate() read it: no reset, and a sample of every
        # interval (they are stamped with its end, so one each, whatever the scrapes' phase).
        # increase() itself extrapolates to the range's ends by up to 1.1 scrape intervals on
        # each side (+3 to +6 % here), which no reference can pin.
        span = int(final_at - started + 3)
        resets = query(prom_port, 'resets(cgstat_context_switches_total{container="load",'
                       'kind="voluntary"}[%ds])' % span, final_at)
        samples = query(prom_port, 'count_over_time(cgstat_context_switches_total{container='
                        '"load",kind="voluntary"}[%ds])' % span, final_at)
        intervals = int((final_at - started) / INTERVAL_S)
        h.check(resets == 0 and samples is not None and samples >= intervals - 1,
                "over the run's %d s: resets() %s, %s samples (the test's clock: %d intervals)"
                % (span, resets, samples, intervals))
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
