# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""contrib/kubernetes/ checked without a cluster (none is at hand), through k8s_pod:

- every document of cgstat-daemonset.yaml (Namespace, DaemonSet, Service) valid against the
  Kubernetes API's schema as python3-kubernetes 22.6's models carry it (k8s_pod.validate:
  every key known to its model, every value of its type, every required field there); the
  documents agree with each other (the DaemonSet's selector and the Service's select the pod's
  labels, the Service's target port and the annotations' port are the container's, both in
  the namespace made) and with what cgstat needs (allowPrivilegeEscalation not false: its
  file capabilities need the exec to grant them);
- cgstat-podmonitor.yaml, a CRD without a schema in the client: said so by validate(), and
  checked by shape (its kind, its selector against the DaemonSet's pod labels, its port a
  port of the container, its namespace);
- validate() is no pretence: copies with an unknown field in the container, hostPID "yes", a
  container without a name, an annotation that is a number, and an unknown field put into
  each object of the pod spec in turn, are each refused, naming the field;
- k8s_pod.docker_run_args() of the DaemonSet's pod gives the flags of the run that
  tests/integration/test_image.py makes of it (--pid=host, --cgroupns=host, --cap-drop ALL,
  --cap-add BPF and PERFMON, --user 65534:65534, --read-only, the host's /sys/fs/cgroup
  read-only, the kubelet's log folders read-only, the limits, seccomp unconfined), the image
  and arguments, the port and probes, and refuses an unknown field put into any object of
  the pod spec (the pod's scheduling fields aside, which it does not read: validate()
  refuses those), a field that exists in Kubernetes but is not translated (hostNetwork), and
  a hostPath of type Directory that is not a directory.

Runs with Debian's /usr/bin/python3, where python3-kubernetes is installed: started with
another python3 that cannot import it (a pyenv one, as CMake may find first), it runs itself
again with /usr/bin/python3. Without python3-kubernetes there either, it fails: a schema check
that cannot run is not a pass.

    /usr/bin/python3 tests/integration/test_k8s_manifest.py [--cgstat PATH --workload PATH]

(--cgstat and --workload, which CTest passes every integration test, are not used.)"""

import argparse
import copy
import os
import shutil
import sys
import tempfile

DEBIAN_PYTHON = "/usr/bin/python3"


def _debian_python_if_needed():
    """Run again with Debian's Python when this one has no python3-kubernetes."""
    try:
        import kubernetes  # noqa: F401
        return
    except ImportError:
        pass
    if (os.path.exists(DEBIAN_PYTHON) and not os.environ.get("CGSTAT_K8S_REEXEC")
            and os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON)):
        print("pre   %s cannot import kubernetes: running again with %s"
              % (sys.executable, DEBIAN_PYTHON), flush=True)
        os.environ["CGSTAT_K8S_REEXEC"] = "1"
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])


_debian_python_if_needed()

import harness as h  # noqa: E402
import k8s_pod  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAEMONSET = os.path.join(REPO, "contrib", "kubernetes", "cgstat-daemonset.yaml")
PODMONITOR = os.path.join(REPO, "contrib", "kubernetes", "cgstat-podmonitor.yaml")
CONTAINER = "cgstat"
BOGUS = "bogusField"


def refused(doc, want_in_message):
    """validate() raises ValueError on doc, and its message names want_in_message."""
    try:
        k8s_pod.validate(doc)
    except ValueError as e:
        return want_in_message in str(e), str(e)
    return False, "accepted"


def translation_refused(spec, want_in_message, **kw):
    try:
        k8s_pod.docker_run_args(spec, CONTAINER, **kw)
    except ValueError as e:
        return want_in_message in str(e), str(e)
    return False, "translated"


def refused_everywhere(who, paths, refuse_at, reads):
    """refuse_at(path) for each path of the pod spec (an unknown field put there): each one
    refused, one failure named per path that is not, and one check for them all."""
    bad = 0
    for path in paths:
        ok, said = refuse_at(path)
        if not ok:
            bad += 1
            h.check(False, "%s refuses %s in the pod spec%s: %s"
                    % (who, BOGUS, "".join("[%r]" % k for k in path), said))
    h.check(len(paths) >= 15 and bad == 0, "%s refuses an unknown field in each of the pod "
            "spec's %d objects%s" % (who, len(paths), reads))


def objects(value, path=()):
    """The path (keys and indexes) of every dict in value, value's own first."""
    if isinstance(value, dict):
        yield path
        for k, v in value.items():
            yield from objects(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from objects(v, path + (i,))


def at(value, path):
    for k in path:
        value = value[k]
    return value


def schema(docs):
    try:
        import kubernetes
    except ImportError as e:
        h.check(False, "python3-kubernetes imports with %s: %s" % (sys.executable, e))
        return False
    h.check(True, "python3-kubernetes %s imports with %s" % (kubernetes.__version__,
                                                              sys.executable))
    kinds = [(d.get("apiVersion"), d.get("kind")) for d in docs]
    h.check(kinds == [("v1", "Namespace"), ("apps/v1", "DaemonSet"), ("v1", "Service")],
            "cgstat-daemonset.yaml holds a Namespace, a DaemonSet and a Service: %s" % kinds)
    for d in docs:
        what = "%s %s" % (d.get("kind"), d.get("metadata", {}).get("name"))
        try:
            ok, why = k8s_pod.validate(d), "no schema for the kind"
        except ValueError as e:
            ok, why = False, str(e)
        h.check(ok is True, "%s valid against the API's schema%s"
                % (what, "" if ok is True else ": " + why))
    return True


def broken_copies(ds):
    """A copy with one thing wrong each: validate() refuses it, naming the field."""
    def copy_with(change):
        d = copy.deepcopy(ds)
        change(d)
        return d

    cases = (
        ("an unknown field in the container",
         lambda d: d["spec"]["template"]["spec"]["containers"][0].update(securityContex={}),
         "$.spec.template.spec.containers[0].securityContex"),
        ('hostPID "yes"',
         lambda d: d["spec"]["template"]["spec"].update(hostPID="yes"),
         "$.spec.template.spec.hostPID"),
        ("a container without a name",
         lambda d: d["spec"]["template"]["spec"]["containers"][0].pop("name"),
         "`name`"),
        ("an annotation that is a number, not a string",
         lambda d: d["spec"]["template"]["metadata"]["annotations"].update(
             {"prometheus.io/port": 9477}),
         "$.spec.template.metadata.annotations.prometheus.io/port"),
        ("a DaemonSet without a selector",
         lambda d: d["spec"].pop("selector"),
         "`selector`"),
    )
    for what, change, want in cases:
        ok, said = refused(copy_with(change), want)
        h.check(ok, "validate() refuses %s: %s" % (what, said))

    # an unknown field in each object of the pod spec: every one refused by the schema, but
    # in nodeSelector, a map of labels whose keys are free
    spec = ds["spec"]["template"]["spec"]

    def with_bogus(path):
        d = copy.deepcopy(ds)
        at(d["spec"]["template"]["spec"], path)[BOGUS] = 1
        return refused(d, BOGUS)

    refused_everywhere("validate()", [p for p in objects(spec) if p[:1] != ("nodeSelector",)],
                       with_bogus, "")


def podmonitor(ds):
    docs = k8s_pod.load(PODMONITOR)
    h.check(len(docs) == 1, "cgstat-podmonitor.yaml holds one document (%d)" % len(docs))
    pm = docs[0]
    got = k8s_pod.validate(pm)
    h.check(got is False, "PodMonitor: not validated: no schema (a CRD; validate() says "
            "%r), checked by its shape instead" % got)
    h.check((pm.get("apiVersion"), pm.get("kind")) == ("monitoring.coreos.com/v1",
                                                       "PodMonitor"),
            "PodMonitor: apiVersion monitoring.coreos.com/v1, kind PodMonitor")
    h.check(pm["metadata"].get("namespace") == ds["metadata"]["namespace"]
            and pm["spec"].get("namespaceSelector", {}).get("matchNames")
            == [ds["metadata"]["namespace"]],
            "PodMonitor: in the DaemonSet's namespace, and selecting pods there")
    labels = ds["spec"]["template"]["metadata"]["labels"]
    match = pm["spec"]["selector"].get("matchLabels", {})
    h.check(match and set(pm["spec"]["selector"]) == {"matchLabels"}
            and all(labels.get(k) == v for k, v in match.items()),
            "PodMonitor: its selector %s selects the DaemonSet's pods %s" % (match, labels))
    port_names = {p["name"] for c in ds["spec"]["template"]["spec"]["containers"]
                  for p in c.get("ports", [])}
    for ep in pm["spec"]["podMetricsEndpoints"]:
        h.check(ep.get("port") in port_names and ep.get("path", "/metrics") == "/metrics",
                "PodMonitor: endpoint port %r is a port of the pod %s, path %s"
                % (ep.get("port"), sorted(port_names), ep.get("path")))


def agreement(docs):
    ns, ds, svc = docs
    name = ns["metadata"]["name"]
    h.check(ds["metadata"].get("namespace") == name and svc["metadata"].get("namespace") == name,
            "the DaemonSet and the Service are in the namespace made, %s" % name)
    labels = ds["spec"]["template"]["metadata"]["labels"]
    match = ds["spec"]["selector"]["matchLabels"]
    h.check(all(labels.get(k) == v for k, v in match.items()),
            "the DaemonSet's selector %s selects its pod template's labels %s" % (match, labels))
    h.check(all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()),
            "the Service's selector %s selects the pods" % svc["spec"]["selector"])
    h.check(svc["spec"].get("clusterIP") == "None", "the Service is headless (clusterIP None)")
    spec = ds["spec"]["template"]["spec"]
    c = [c for c in spec["containers"] if c["name"] == CONTAINER][0]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    for sp in svc["spec"]["ports"]:
        h.check(sp["targetPort"] in ports and sp["port"] == ports[sp["targetPort"]],
                "the Service's port %s targets the container's port %r (%s)"
                % (sp["port"], sp["targetPort"], ports))
    listen = c["args"][c["args"].index("--listen") + 1]
    for what, ann in (("the pod's", ds["spec"]["template"]["metadata"]["annotations"]),
                      ("the Service's", svc["metadata"]["annotations"])):
        h.check(ann.get("prometheus.io/scrape") == "true"
                and ann.get("prometheus.io/port") == str(ports["metrics"])
                and ann.get("prometheus.io/path") == "/metrics"
                and listen.endswith(":%d" % ports["metrics"]),
                "%s prometheus.io annotations: scrape, port %s (cgstat's --listen %s), "
                "/metrics" % (what, ann.get("prometheus.io/port"), listen))
    sc = c["securityContext"]
    h.check(sc.get("allowPrivilegeEscalation", True) is True,
            "allowPrivilegeEscalation unset or true (%r): no_new_privs would keep the exec "
            "from granting cgstat's file capabilities" % sc.get("allowPrivilegeEscalation"))
    h.check(spec.get("hostPID") is True and {t.get("operator") for t in spec["tolerations"]}
            == {"Exists"}, "hostPID, and a toleration of every taint")


def pairs(options):
    """The options as a set of (flag,) and (flag, value) tuples, whichever they are."""
    out, i = set(), 0
    while i < len(options):
        if options[i] in ("--pid=host", "--cgroupns=host", "--read-only", "--privileged"):
            out.add((options[i],))
            i += 1
        else:
            out.add((options[i], options[i + 1]))
            i += 2
    return out


def translation(ds, scratch):
    spec = ds["spec"]["template"]["spec"]
    pods, containers = os.path.join(scratch, "pods"), os.path.join(scratch, "containers")
    os.mkdir(pods)
    os.mkdir(containers)
    paths = {"/var/log/pods": pods, "/var/log/containers": containers}
    run = k8s_pod.docker_run_args(spec, CONTAINER, host_paths_map=paths)
    got = pairs(run.options)
    want = {("--pid=host",), ("--cgroupns=host",), ("--cap-drop", "ALL"), ("--cap-add", "BPF"),
            ("--cap-add", "PERFMON"), ("--user", "65534:65534"), ("--read-only",),
            ("-v", "/sys/fs/cgroup:/sys/fs/cgroup:ro"), ("-v", pods + ":/var/log/pods:ro"),
            ("-v", containers + ":/var/log/containers:ro"), ("--cpus", "0.5"),
            ("--memory", str(256 << 20)), ("--memory-swap", str(256 << 20)),
            ("--cpu-shares", "51"), ("--security-opt", "seccomp=unconfined")}
    h.check(got == want, "docker_run_args: exactly the flags %s%s"
            % (" ".join(run.options), "" if got == want else "; missing %s, more %s"
               % (sorted(want - got), sorted(got - want))))
    h.check(run.image == "cgstat:latest" and run.arguments == ["-q", "--listen", "0.0.0.0:9477"],
            "docker_run_args: image %s, arguments %s" % (run.image, run.arguments))
    h.check(run.ports == [{"name": "metrics", "containerPort": 9477, "protocol": "TCP"}]
            and run.stop_timeout == 30,
            "docker_run_args: ports %s, docker stop -t %s" % (run.ports, run.stop_timeout))
    h.check(set(run.probes) == {"readinessProbe", "livenessProbe"}
            and all(p["path"] == "/metrics" and p["port"] == 9477
                    for p in run.probes.values()),
            "docker_run_args: the probes' GET /metrics on port 9477 (by its name)")
    argv = run.argv("-d", "--name", "cgstat")
    h.check(argv == run.options + ["-d", "--name", "cgstat", "cgstat:latest", "-q", "--listen",
                                   "0.0.0.0:9477"],
            "DockerRun.argv(): options, the caller's, the image, its arguments")
    other = k8s_pod.docker_run_args(spec, CONTAINER, image_override="cgstat:test",
                                    host_paths_map=paths,
                                    cap_substitutes={"BPF": "SYS_ADMIN",
                                                     "PERFMON": "SYS_ADMIN"})
    h.check(other.image == "cgstat:test" and ("--cap-add", "SYS_ADMIN") in pairs(other.options)
            and other.options.count("--cap-add") == 1,
            "image_override and cap_substitutes: %s, --cap-add %s" % (
                other.image, [other.options[i + 1] for i, o in enumerate(other.options)
                              if o == "--cap-add"]))

    # an unknown field in each object of the pod spec, the scheduling fields aside
    def translated_with_bogus(path):
        s = copy.deepcopy(spec)
        at(s, path)[BOGUS] = 1
        return translation_refused(s, BOGUS, host_paths_map=paths)

    refused_everywhere("docker_run_args", [p for p in objects(spec) if not (
        p[:1] and p[0] in k8s_pod.SCHEDULING_FIELDS)], translated_with_bogus, " it reads")
    s = copy.deepcopy(spec)
    s["hostNetwork"] = True
    ok, said = translation_refused(s, "hostNetwork", host_paths_map=paths)
    h.check(ok, "docker_run_args refuses a field Kubernetes knows and it does not translate "
            "(hostNetwork): %s" % said)
    s = copy.deepcopy(spec)
    s["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = False
    run = k8s_pod.docker_run_args(s, CONTAINER, host_paths_map=paths)
    h.check(("--security-opt", "no-new-privileges") in pairs(run.options),
            "allowPrivilegeEscalation false would be --security-opt no-new-privileges")
    missing = os.path.join(scratch, "missing")
    ok, said = translation_refused(spec, "not a directory",
                                   host_paths_map=dict(paths, **{"/var/log/pods": missing}))
    h.check(ok and not os.path.exists(missing),
            "a hostPath of type Directory that is not there is refused, not made: %s" % said)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cgstat")  # passed to every integration test; not used
    p.add_argument("--workload")
    p.parse_args()
    docs = k8s_pod.load(DAEMONSET)
    if schema(docs):
        broken_copies(docs[1])
    agreement(docs)
    podmonitor(docs[1])
    scratch = tempfile.mkdtemp(prefix="cgstat-k8s-")
    try:
        translation(docs[1], scratch)
    finally:
        shutil.rmtree(scratch)
    h.done()


if __name__ == "__main__":
    main()
