# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The Grafana dashboard (contrib/grafana/cgstat.json) as Grafana would run it, against a real
Prometheus (Debian's, started by the test: a throwaway configuration scraping every second,
storage in a temporary folder, loopback ports) scraping two cgstat instances as two targets of
one job, each watching cgroups of its own with loads of known shape:

- instance A: `--threads --bpf-stats`, cgroup "app": two spinning threads sharing CPU 1 (hogs:
  each waits while the other runs, so the run-queue waits are the scheduler's slices);
- instance B: cgroup "app" too (the same name on two hosts), one thread at 0.4 of a core
  (steady), and cgroup "thr": a spinner on CPU 0 under a v1 CFS quota of a fifth of a CPU
  (throttled in every period).

First the file itself: `__inputs` (the data source as ${DS_PROMETHEUS}) and `__requires` for a
clean import, the job, instance and cgroup variables, every query's selectors filtered on $job
and $instance (and $cgroup where the metric has a cgroup), every range $__rate_interval or
$__range, every panel's unit one the test knows and a ratio's axis 0 to 1, a rate of a count
never drawn in seconds.

Then, while the loads run, every target's expression with the variables substituted as
Grafana's Prometheus data source does (regex-escaped values, All as the variable's allValue,
$__rate_interval, $__range), evaluated by Prometheus's HTTP API at one instant:
- with every instance: each returns data (the hardware counters' panels only where the host
  can count cycles: skipped, saying so, where not), every value finite and within what its
  panel's unit allows (a percentunit 0 to 1, cores at most the CPUs, threads at most the
  cgroups' threads by the kernel's count, bytes above 0), and the known loads where they
  show: the hogs' p50 and p99 within the tick's reach, the quota's cgroup throttled in most
  periods and most intervals;
- with instance A alone, then B alone, then cgroup "thr" alone: only the series of what was
  chosen, each exactly as the query over every instance gives it (the per-instance panels keep
  the two "app" cgroups apart, never summed); the per-instance heatmap is the instance's waits.
- the variables' own queries (label values) list the jobs, instances and each instance's cgroups.

Skipped, saying so, only where Debian's prometheus is not installed."""

import contextlib
import json
import math
import os
import re
import shutil
import signal
import tempfile
import time
import urllib.parse
import urllib.request

import harness as h
from test_prometheus import api, start_prometheus, stop_prometheus, wait_scraped

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DASHBOARD = os.path.join(REPO, "contrib", "grafana", "cgstat.json")

JOB = "cgstat"
INTERVAL_S = 1
# $__rate_interval: Grafana's is at least four scrape intervals (here 1 s). 10 s is what it
# gives a panel whose step is 9 s, and keeps a rate's error from the drains' phase small: with
# no sample timestamps, a window holds one drain more or fewer than its length when the scrapes
# and the drains (both every second, drifting) come close in phase.
RATE_WINDOW_S = 10
# A rate of one counter against the clock can be off by a drain in the window's span of 9
# scrapes (a ninth); a ratio of two counters of the same drains cannot.
RATE_SLACK = 0.15
EXACT = 1e-9
LOAD_S = 30
# a fifth of a CPU: throttled in every period even when the machine is busy enough that the
# spinner gets only half a CPU
QUOTA_US, PERIOD_US = 20000, 100000
THR_CPU, HOGS_CPU = 0, 1
# the histogram's last finite edge (docs/metrics-endpoint.md): histogram_quantile's most
HIST_LAST_EDGE_S = 4.294967296

# Units the dashboard may use (what a value of each may be: value_limits()).
COUNT_RATE = re.compile(r"^count:[a-z]+/s$")
UNITS = {"percentunit", "suffix:cores", "suffix:threads", "s", "bytes", "short", "none"}

# Metrics without a cgroup label: cgstat itself (docs/metrics-endpoint.md).
OWN = re.compile(r"^(process_\w+|cgstat_(up|build_info|drains_total|drain_seconds_total|"
                 r"interval_seconds|last_interval_end_timestamp_seconds|cpus|cgroups|"
                 r"dropped_events_total|missed_switches_total|unseen_wakeups_total|"
                 r"inconsistencies_total|bpf_program_\w+))$")

# Panels that may return nothing, and when: the probe (a query of the test's own) returns no
# data exactly when the host cannot give the panel any.
MAY_BE_EMPTY = {
    "Instructions per cycle": ('cgstat_perf_events_total{event="cycles"}',
                               "the host counts no cycles (no PMU: a VM)"),
    "LLC misses per kilo-instruction": ('cgstat_perf_events_total{event="cache-misses"}',
                                        "the host counts no cache misses (no PMU: a VM)"),
}

# What the loads and the two instances make of a few panels, beyond their units: (panel's
# title, instance, cgroup label or None) -> (least, most). The hogs' waits: each spinner waits
# while the other runs its slice, which ends at a tick at the latest (HZ 250 here: 4 ms);
# allowed from an eighth of a tick to 50 ticks (the machine busy with more than the test's
# loads: a p99 of 45 ms beside another test). The loads' cores are bounded above by their shapes (one CPU; the quota;
# 2 ms of every 5) and below only loosely: the machine may be shared.


def load_bounds(tick_s, cpus):
    most = 1 + RATE_SLACK
    return {
        ("Cgroups exported", "A", None): (1, 1),
        ("Cgroups exported", "B", None): (2, 2),
        ("CPUs online", "A", None): (cpus, cpus),
        ("CPUs online", "B", None): (cpus, cpus),
        ("On CPU", "A", "app"): (0.05, 1.0 * most),
        ("On CPU", "B", "app"): (0.05, 0.4 * most),
        ("On CPU", "B", "thr"): (0.05, QUOTA_US / PERIOD_US * most),
        ("Busiest thread", "A", "app"): (0.05, 1.0 * most),
        ("Run-queue wait p50", "A", "app"): (tick_s / 8, 50 * tick_s),
        ("Run-queue wait p99", "A", "app"): (tick_s / 8, 50 * tick_s),
        ("Throttled periods", "B", "thr"): (0.5, 1.0),
        ("Pools on CPU (top 10)", "A", "app"): (0.05, 1.0 * most),
        ("Drain time", "A", None): (1e-6, 0.5 * INTERVAL_S),
        ("Drain time", "B", None): (1e-6, 0.5 * INTERVAL_S),
        ("BPF program run time, mean", "A", None): (1e-9, 1e-3),
        ("Interval (measured)", "A", None): (0.9 * INTERVAL_S, 1.5 * INTERVAL_S),
        ("Interval (measured)", "B", None): (0.9 * INTERVAL_S, 1.5 * INTERVAL_S),
        ("cgstat resident memory", "A", None): (1 << 20, 1 << 30),
        ("cgstat resident memory", "B", None): (1 << 20, 1 << 30),
    }


def panels_of(dashboard):
    """Every panel, those inside collapsed rows too."""
    out = []
    for p in dashboard.get("panels", []):
        out.append(p)
        out.extend(p.get("panels", []))
    return out


def targets_of(dashboard):
    """(panel, target) for every query target of every panel."""
    return [(p, t) for p in panels_of(dashboard) if p.get("type") != "row"
            for t in p.get("targets", [])]


SELECTOR = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}")
RANGE = re.compile(r"\[([^\]]*)\]")
RATE_OF = re.compile(r"\b(rate|increase|irate)\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)")


def structure(dashboard):
    """The file's own checks: what an import needs, the variables, every query's filters and
    windows, every panel's unit."""
    inputs = {i.get("name"): i for i in dashboard.get("__inputs", [])}
    ds = inputs.get("DS_PROMETHEUS", {})
    h.check(ds.get("type") == "datasource" and ds.get("pluginId") == "prometheus",
            "__inputs declares DS_PROMETHEUS, a prometheus data source: %s" % ds)
    used_inputs = set(re.findall(r"\$\{(DS_[A-Z0-9_]+)\}", json.dumps(dashboard)))
    h.check(used_inputs and used_inputs <= set(inputs),
            "every ${DS_...} the dashboard uses is an input: %s" % sorted(used_inputs))
    requires = {(r.get("type"), r.get("id")) for r in dashboard.get("__requires", [])}
    types = {p.get("type") for p in panels_of(dashboard)} - {"row"}
    missing = sorted(t for t in types if ("panel", t) not in requires)
    h.check(("grafana", "grafana") in requires and ("datasource", "prometheus") in requires
            and not missing,
            "__requires names Grafana, the prometheus data source and each panel type used "
            "(%s; missing: %s)" % (sorted(types), missing))

    variables = {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}
    h.check({"job", "instance", "cgroup"} <= set(variables),
            "templating has the job, instance and cgroup variables: %s" % sorted(variables))
    for name, needs in (("job", ()), ("instance", ("$job",)),
                        ("cgroup", ("$job", "$instance"))):
        v = variables.get(name, {})
        q = variable_query(v)
        h.check(v.get("type") == "query" and q.startswith("label_values(")
                and all(n in q for n in needs) and v.get("multi") and v.get("includeAll")
                and v.get("datasource", {}).get("uid") == "${DS_PROMETHEUS}",
                "variable %s: multi-value with All, label_values() on ${DS_PROMETHEUS}%s: %s"
                % (name, ", filtered on " + " and ".join(needs) if needs else "", q))

    ids = [p.get("id") for p in panels_of(dashboard)]
    h.check(len(ids) == len(set(ids)) and None not in ids, "panel ids unique: %s" % ids)
    cells = {}
    overlaps = []
    for p in panels_of(dashboard):
        g = p.get("gridPos", {})
        for x in range(g.get("x", 0), g.get("x", 0) + g.get("w", 0)):
            for y in range(g.get("y", 0), g.get("y", 0) + g.get("h", 0)):
                if (x, y) in cells:
                    overlaps.append((cells[(x, y)], p.get("title")))
                cells[(x, y)] = p.get("title")
    h.check(not overlaps and all(0 <= p["gridPos"]["x"] and p["gridPos"]["x"] +
                                 p["gridPos"]["w"] <= 24 for p in panels_of(dashboard)),
            "panels lie on the 24-column grid without overlapping: %s" % sorted(set(overlaps)))

    bad = []
    for p in panels_of(dashboard):
        if p.get("type") == "row":
            continue
        title = p.get("title")
        defaults = p.get("fieldConfig", {}).get("defaults", {})
        unit = defaults.get("unit")
        if p.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
            bad.append("%s: data source %s" % (title, p.get("datasource")))
        if not p.get("targets"):
            bad.append("%s: no query" % title)
        if unit not in UNITS and not COUNT_RATE.match(unit or ""):
            bad.append("%s: unit %r" % (title, unit))
        if unit == "percentunit" and (defaults.get("min") != 0 or defaults.get("max") != 1):
            bad.append("%s: a ratio's axis from %s to %s, not 0 to 1"
                       % (title, defaults.get("min"), defaults.get("max")))
        if p.get("type") == "heatmap" and p.get("options", {}).get("yAxis", {}).get("unit") != "s":
            bad.append("%s: the heatmap's buckets are not in seconds" % title)
        refs = [t.get("refId") for t in p.get("targets", [])]
        if len(refs) != len(set(refs)):
            bad.append("%s: refIds %s" % (title, refs))
        for t in p.get("targets", []):
            bad.extend("%s: %s" % (title, why) for why in target_faults(p, t, unit))
    h.check(not bad, "every panel: the data source input, a known unit (a ratio 0 to 1), "
            "every selector filtered on $job and $instance (and $cgroup), every range "
            "$__rate_interval or $__range, a rate of a count not in seconds, the instance in "
            "each legend (%d panels, %d queries)%s"
            % (len([p for p in panels_of(dashboard) if p.get("type") != "row"]),
               len(targets_of(dashboard)), "".join("\n      " + b for b in bad)))


def target_faults(panel, target, unit):
    """What is wrong with one target's query, by the rules of structure()."""
    expr = target.get("expr", "")
    faults = []
    if target.get("datasource", {}).get("uid") not in (None, "${DS_PROMETHEUS}"):
        faults.append("target %s's data source %s" % (target.get("refId"),
                                                     target.get("datasource")))
    selectors = SELECTOR.findall(expr)
    if not selectors:
        faults.append("no selector in %r" % expr)
    bare = re.findall(r"\b((?:cgstat|process)_\w+)\b(?!\s*\{)", expr)
    if bare:
        faults.append("%s without a selector" % ", ".join(bare))
    for metric, matchers in selectors:
        need = ['job=~"$job"', 'instance=~"$instance"']
        if not OWN.match(metric):
            need.append('cgroup=~"$cgroup"')
        missing = [n for n in need if n not in matchers.replace(" ", "")]
        if missing:
            faults.append("%s{%s} lacks %s" % (metric, matchers, ", ".join(missing)))
    for window in RANGE.findall(expr):
        if window not in ("$__rate_interval", "$__range"):
            faults.append("range [%s], not $__rate_interval or $__range" % window)
    for fn, metric in RATE_OF.findall(expr):
        if not (metric.endswith("_total") or metric.endswith("_bucket")):
            faults.append("%s() of %s, not a counter" % (fn, metric))
        # a rate of a count is a count a second, never seconds; of seconds, a share of time
        if (metric.endswith("_total") and not metric.endswith("_seconds_total")
                and " / " not in expr and unit in ("s", "ms", "percentunit")):
            faults.append("a rate of the count %s drawn as %s" % (metric, unit))
        if (metric.endswith("_seconds_total") and " / " not in expr
                and (unit in ("s", "ms") or COUNT_RATE.match(unit or ""))):
            faults.append("a rate of the time %s drawn as %s" % (metric, unit))
    if "histogram_quantile" in expr and unit != "s":
        faults.append("a quantile of seconds drawn as %s" % unit)
    if panel.get("repeat") != "instance" and "{{instance}}" not in target.get("legendFormat", ""):
        faults.append("the legend %r does not name the instance"
                      % target.get("legendFormat"))
    return faults


def variable_query(v):
    q = v.get("query", "")
    return q.get("query", "") if isinstance(q, dict) else q


def regex_escape(value):
    """A value as Grafana's Prometheus data source puts a multi-value variable's into a regex
    matcher (prometheusSpecialRegexEscape): backslashes and regex metacharacters escaped
    within the PromQL string."""
    value = value.replace("\\", "\\\\\\\\")
    return re.sub(r"[$^*{}\[\]'+?.()|]", lambda m: "\\\\" + m.group(0), value)


ALL = object()


def formatted(variable, chosen):
    """The text Grafana substitutes for a multi-value variable: its allValue for All, else the
    chosen values escaped, alternatives in a group."""
    if chosen is ALL:
        return variable["allValue"]
    values = [regex_escape(v) for v in chosen]
    return values[0] if len(values) == 1 else "(" + "|".join(values) + ")"


VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]")


def interpolate(text, values):
    """text with every variable replaced from values (name -> text); a variable left unknown
    raises KeyError."""
    def one(m):
        return values[m.group(1) or m.group(2) or m.group(3)]
    return VARIABLE.sub(one, text)


def label_values_query(text):
    """label_values(SELECTOR, LABEL) as (SELECTOR, LABEL)."""
    m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\s*\)\s*", text)
    return m.group(1), m.group(2)


def label_values(port, selector, label, start, end):
    url = "http://127.0.0.1:%d/api/v1/label/%s/values?%s" % (
        port, label, urllib.parse.urlencode({"match[]": selector, "start": "%.3f" % start,
                                            "end": "%.3f" % end}))
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    return set(body["data"])


def evaluate(port, expr, at):
    """The instant vector of expr at time at: {frozenset(labels): value}."""
    data = api(port, "query", query=expr, time="%.3f" % at)
    if data["resultType"] == "scalar":
        return {frozenset(): float(data["result"][1])}
    return {frozenset(s["metric"].items()): float(s["value"][1]) for s in data["result"]}


def same(a, b):
    return a.keys() == b.keys() and all(
        a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])) for k in a)


def shown(result, limit=8):
    items = sorted(result.items(), key=lambda kv: sorted(kv[0]))
    text = ", ".join("{%s} %.6g" % (",".join("%s=%s" % kv for kv in sorted(k)
                                             if kv[0] not in ("job",)), v)
                     for k, v in items[:limit])
    return text + (" and %d more" % (len(items) - limit) if len(items) > limit else "")


def value_limits(panel, expr, ref):
    """(least, most, why) a value of panel's unit may take: ref holds the test's own figures
    (the host's CPUs, the most threads the kernel counted in a watched cgroup)."""
    defaults = panel.get("fieldConfig", {}).get("defaults", {})
    unit = defaults.get("unit")
    # a ratio of two counters of the same drains is exact; a rate of one against the clock
    # may be off by a drain in the window
    slack = EXACT if " / " in expr else RATE_SLACK
    if unit == "percentunit":
        return 0.0, 1.0 + slack, "a ratio"
    if unit == "suffix:cores":
        most = ref["cpus"] * (1 + slack)
        if defaults.get("max") is not None:
            most = min(most, defaults["max"] * (1 + slack))
        return 0.0, most, "cores, at most %s" % (defaults.get("max") or "the CPUs")
    if unit == "suffix:threads":
        return 0.0, ref["threads"] * (1 + slack), "threads, at most the %d the kernel " \
            "counted in a cgroup" % ref["threads"]
    if unit == "s":
        if "histogram_quantile" in expr:
            return 0.0, HIST_LAST_EDGE_S, "a quantile of the histogram's waits"
        return 0.0, math.inf, "seconds"
    if unit == "bytes":
        return 1.0, math.inf, "bytes, above 0"
    return 0.0, math.inf, "a count or rate of counts, at least 0"


@contextlib.contextmanager
def prometheus(targets):
    """Debian's prometheus on a loopback port, scraping targets every second as job JOB, its
    configuration and storage in a temporary folder; stopped at the end. Yields its port."""
    port = h.free_port()
    work = h.scratch_path(tempfile.mkdtemp(prefix="cgstat-grafana-"))
    prom = start_prometheus(work, {JOB: targets}, port)
    try:
        yield port
    finally:
        stop_prometheus(prom)


@contextlib.contextmanager
def running(cgstat):
    """cgstat stopped by the test (its exit checked); killed if the test leaves early."""
    try:
        yield cgstat
    finally:
        if cgstat.proc.poll() is None and cgstat.stop_sent is None:
            cgstat.proc.kill()
            cgstat.proc.wait()


def live(args, dashboard):
    mount = h.v1_cpu_mount()
    if not h.precondition(mount is not None,
                          "the host has a v1 cpu hierarchy (cpu.cfs_quota_us) for the quota"):
        return
    ports = {"A": h.free_port(), "B": h.free_port()}
    instance = {k: "127.0.0.1:%d" % p for k, p in ports.items()}
    cgroups_of = {"A": {"app"}, "B": {"app", "thr"}}
    with prometheus(sorted(instance.values())) as prom, \
            h.scratch_cgroup("graf-a") as a_app, h.scratch_cgroup("graf-b") as b_app, \
            h.scratch_cgroup("graf-thr") as b_thr, \
            h.scratch_cgroup("graf-thr", parent=mount) as v1:
        # stopped before cgstat starts: nothing runs before it counts
        thr = h.stopped_quota_spinner(args.workload, b_thr, v1, LOAD_S, THR_CPU, QUOTA_US,
                                      PERIOD_US)
        try:
            with running(h.Cgstat(args.cgstat, [
                    "-q", "-i", str(INTERVAL_S), "--threads", "--bpf-stats",
                    "-c", "app=" + a_app, "--listen", instance["A"]])) as cgstat_a, \
                    running(h.Cgstat(args.cgstat, [
                        "-q", "-i", str(INTERVAL_S), "-c", "app=" + b_app, "-c", "thr=" + b_thr,
                        "--listen", instance["B"]])) as cgstat_b:
                started = time.time()
                thr.send_signal(signal.SIGCONT)
                h.Workload(args.workload, a_app, "hogs", LOAD_S, HOGS_CPU)
                h.Workload(args.workload, b_app, "steady", LOAD_S, 1)
                h.wait_threads(a_app, 3)
                h.wait_threads(b_app, 2)
                threads = max(len(h.cgroup_threads(cg)) for cg in (a_app, b_app, b_thr))
                # Prometheus has scraped both instances a whole window into the loads, and
                # has stored every sample up to the instant of the queries (2 s before)
                ready_at = started + RATE_WINDOW_S + 2
                scraped = h.check(
                    wait_scraped(prom, 'count(timestamp(cgstat_up{job="%s"}) >= %.3f) == 2'
                                 % (JOB, ready_at + 2), timeout=RATE_WINDOW_S + 30),
                    "Prometheus scraped both instances %d s into the loads"
                    % (RATE_WINDOW_S + 4))
                at = time.time() - 2
                if scraped and h.precondition(
                        at + 1 < started + LOAD_S,
                        "the loads still run at the queries' instant (%.1f s of %d)"
                        % (at - started, LOAD_S)):
                    ref = {"cpus": os.sysconf("SC_NPROCESSORS_ONLN"), "threads": threads,
                           "at": at, "range_s": int(at - started)}
                    queries(dashboard, prom, instance, cgroups_of, ref)
                cgstat_a.stop()
                cgstat_b.stop()
        finally:
            h.kill_cgroup_tasks(b_thr)
            thr.wait(10)


def queries(dashboard, prom, instance, cgroups_of, ref):
    at = ref["at"]
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    builtins = {"__rate_interval": "%ds" % RATE_WINDOW_S, "__interval": "%ds" % INTERVAL_S,
                "__interval_ms": str(INTERVAL_S * 1000), "__range": "%ds" % ref["range_s"],
                "__range_s": str(ref["range_s"]), "__range_ms": str(ref["range_s"] * 1000)}

    def values(job=(JOB,), inst=ALL, cgroup=ALL):
        out = dict(builtins)
        out["job"] = formatted(variables["job"], list(job))
        out["instance"] = formatted(variables["instance"], inst if inst is ALL else list(inst))
        out["cgroup"] = formatted(variables["cgroup"], cgroup if cgroup is ALL
                                  else list(cgroup))
        return out

    # the variables' own queries, as Grafana asks them (label values of a series selector)
    start = at - ref["range_s"]
    for name, pick, want in (
            ("job", {}, {JOB}),
            ("instance", {}, set(instance.values())),
            ("cgroup", {}, cgroups_of["A"] | cgroups_of["B"]),
            ("cgroup", {"inst": [instance["A"]]}, cgroups_of["A"]),
            ("cgroup", {"inst": [instance["B"]]}, cgroups_of["B"])):
        selector, label = label_values_query(variable_query(variables[name]))
        selector = interpolate(selector, values(**pick))
        got = label_values(prom, selector, label, start, at)
        h.check(got == want, "variable %s (%s): %s (want %s)"
                % (name, selector, sorted(got), sorted(want)))

    bounds = load_bounds(h.kernel_tick_ms() / 1000, ref["cpus"])
    by_instance = {v: k for k, v in instance.items()}
    found = {}
    for panel, target in targets_of(dashboard):
        title, expr = panel["title"], target["expr"]
        what = "%s [%s]" % (title, target["refId"])
        repeated = panel.get("repeat") == "instance"
        if repeated:
            # Grafana draws one panel per instance, the variable bound to it
            results = {k: evaluate(prom, interpolate(expr, values(inst=[instance[k]])), at)
                       for k in sorted(instance)}
            h.check(all(results.values()), "%s: data for each instance: %s"
                    % (what, {k: len(r) for k, r in results.items()}))
            for k, result in sorted(results.items()):
                check_values(panel, what + " on " + k, expr, result, ref)
                # the instance's own waits: its +Inf bucket is the rate of its waits' count
                inf = [v for labels, v in result.items() if dict(labels).get("le") == "+Inf"]
                want = evaluate(prom, 'sum(rate(cgstat_runqueue_wait_duration_seconds_count{'
                                'job="%s",instance="%s"}[%ds]))'
                                % (JOB, instance[k], RATE_WINDOW_S), at)
                want = list(want.values())
                h.check(len(inf) == 1 and want and abs(inf[0] - want[0]) <= 1e-9 * want[0],
                        "%s on %s: +Inf %s waits/s = the instance's own %s"
                        % (what, k, inf, want))
            continue
        everything = evaluate(prom, interpolate(expr, values()), at)
        if not everything and title in MAY_BE_EMPTY:
            probe, why = MAY_BE_EMPTY[title]
            if not evaluate(prom, probe, at):
                h.skip("%s: no data, as %s" % (what, why))
                continue
        if not h.check(everything, "%s: data with every instance: %s"
                       % (what, shown(everything))):
            print("      query: " + interpolate(expr, values()), flush=True)
            continue
        check_values(panel, what, expr, everything, ref)
        unlabelled = [dict(k) for k in everything if "instance" not in dict(k)]
        h.check(not unlabelled, "%s: every series names its instance (%d series)"
                % (what, len(everything)))
        # the loads' own figures
        for labels, v in everything.items():
            lab = dict(labels)
            key = (title, by_instance.get(lab.get("instance")), lab.get("cgroup"))
            if key in bounds:
                found.setdefault(key, []).append(v)
        # one instance, or one cgroup: exactly the series of what is chosen, as the query
        # over every instance gives them (never the two "app" cgroups summed), and only the
        # cgroups the chosen instance watches
        for choice, name, cgroups in (
                ({"inst": [instance["A"]]}, "instance A", cgroups_of["A"]),
                ({"inst": [instance["B"]]}, "instance B", cgroups_of["B"]),
                ({"cgroup": ["thr"]}, "cgroup thr", {"thr"})):
            got = evaluate(prom, interpolate(expr, values(**choice)), at)
            want = {k: v for k, v in everything.items() if chosen(dict(k), choice)}
            alien = {dict(k).get("cgroup") for k in got} - cgroups - {None}
            h.check(same(got, want) and not alien,
                    "%s with %s alone: %d series, those of every instance's with it (%d), "
                    "of its cgroups %s%s"
                    % (what, name, len(got), len(want), sorted(cgroups),
                       "" if same(got, want) and not alien else
                       ": got " + shown(got) + "; want " + shown(want)))
    for key, (least, most) in sorted(bounds.items(), key=str):
        got = found.get(key, [])
        h.check(got and all(least <= v <= most for v in got),
                "%s, instance %s%s: %s (the load's: %.6g to %.6g)"
                % (key[0], key[1], ", cgroup " + key[2] if key[2] else "",
                   ", ".join("%.6g" % v for v in got) or "none", least, most))
    # the verdicts over the range: the quota's cgroup mostly throttled
    verdicts = [p for p, _ in targets_of(dashboard) if p["title"] == "Verdicts over the time range"]
    if h.check(verdicts, "the dashboard has the panel 'Verdicts over the time range'"):
        expr = verdicts[0]["targets"][0]["expr"]
        result = evaluate(prom, interpolate(expr, values(inst=[instance["B"]], cgroup=["thr"])),
                          at)
        share = {dict(k)["verdict"]: v for k, v in result.items()}
        h.check(share.get("throttled", 0) >= 0.5,
                "the quota's cgroup throttled in most intervals over %d s: %s"
                % (ref["range_s"], share))
    # the BPF programs' panels: instance A's alone (B runs without --bpf-stats)
    bpf = [(p, t) for p, t in targets_of(dashboard) if "cgstat_bpf_program" in t["expr"]]
    got = {p["title"]: {by_instance.get(dict(k).get("instance"))
                        for k in evaluate(prom, interpolate(t["expr"], values()), at)}
           for p, t in bpf}
    h.check(bpf and all(v == {"A"} for v in got.values()),
            "the BPF programs' panels show the instance run with --bpf-stats alone: %s" % got)


def chosen(labels, choice):
    """Whether a series of these labels is one of the instances and cgroups chosen (a series
    without a cgroup label is one of every cgroup's)."""
    return (labels.get("instance") in choice.get("inst", [labels.get("instance")])
            and labels.get("cgroup", None) in choice.get("cgroup", [labels.get("cgroup")]) +
            [None])


def check_values(panel, what, expr, result, ref):
    least, most, why = value_limits(panel, expr, ref)
    bad = {k: v for k, v in result.items() if not (least <= v <= most) or math.isnan(v)}
    h.check(not bad, "%s: %d values, each %s (%.6g to %.6g)%s"
            % (what, len(result), why, least, most, ": not " + shown(bad) if bad else ""))
    if panel.get("type") == "heatmap":
        les = [dict(k).get("le") for k in result]
        ok = all(le == "+Inf" or (le and float(le) > 0) for le in les)
        h.check(ok and len(les) > 2, "%s: %d buckets by their edges in seconds (%s .. %s)"
                % (what, len(les), min(les, key=lambda x: float(x)) if les else None,
                   max(les, key=lambda x: float(x)) if les else None))


def main():
    args = h.parse_args()
    with open(DASHBOARD) as f:
        dashboard = json.load(f)
    structure(dashboard)
    if not shutil.which("prometheus"):
        h.skip("the dashboard's queries against a real Prometheus: Debian's prometheus is not "
               "installed (apt-get install prometheus)")
        h.done()
        return
    live(args, dashboard)
    h.done()


if __name__ == "__main__":
    main()
