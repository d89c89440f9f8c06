# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""contrib/kubernetes/ without a cluster: its manifests read (load), checked against the
Kubernetes API's schema as the Python client's models carry it (validate), and the DaemonSet's
pod spec turned into the `docker run` of the same image with the same user, capabilities,
namespaces, mounts, limits and arguments (docker_run_args), so that a test can run on one
machine what a node would run.

validate() needs Debian's python3-kubernetes (22.6: models generated from the OpenAPI spec of
Kubernetes 1.22), which is installed for Debian's own Python, /usr/bin/python3: a pyenv
python3 earlier in PATH may not have it. It is imported when first needed, and its absence is
an ImportError that says so; the caller decides what that means (test_k8s_manifest fails).

docker_run_args() knows exactly the fields the manifest uses, each with what it means for
docker or why it has no meaning there; any other field is a ValueError naming its path, so
that the manifest cannot grow a field the test does not run."""

import os
import re
import sys
from typing import NamedTuple


def load(path):
    """The documents of a multi-document YAML file, in order (empty documents left out).
    PyYAML (python3-yaml) is imported here, so that docker_run_args() needs nothing."""
    import yaml

    with open(path) as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]


# --- validate ------------------------------------------------------------------------------

# (apiVersion, kind) -> the client's model class name: the kinds the manifests use. A kind not
# here (a CRD such as the Prometheus Operator's PodMonitor) has no schema in the client:
# validate() says so rather than passing it.
KINDS = {
    ("v1", "Namespace"): "V1Namespace",
    ("v1", "Service"): "V1Service",
    ("apps/v1", "DaemonSet"): "V1DaemonSet",
}

_LIST = re.compile(r"^list\[(.+)\]$")
_DICT = re.compile(r"^dict\(str, (.+)\)$")


def _client():
    """kubernetes.client, or an ImportError that says where it is to be found."""
    try:
        import kubernetes.client
    except ImportError as e:
        raise ImportError("the Kubernetes schema needs Debian's python3-kubernetes, installed "
                          "for /usr/bin/python3 (this is %s): %s"
                          % (sys.executable, e)) from e
    return kubernetes.client


def _check(value, type_name, path, client, config):
    """value (parsed YAML) as the model's type type_name says: what the model's constructor
    takes for it (a model object for a model's dict), or ValueError naming path."""
    def wrong(what):
        return ValueError("%s: %s, want %s" % (path, what, type_name))

    m = _LIST.match(type_name)
    if m:
        if not isinstance(value, list):
            raise wrong("of type %s" % type(value).__name__)
        return [_check(v, m.group(1), "%s[%d]" % (path, i), client, config)
                for i, v in enumerate(value)]
    m = _DICT.match(type_name)
    if m:
        if not isinstance(value, dict):
            raise wrong("of type %s" % type(value).__name__)
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError("%s: key %r is not a string" % (path, k))
            out[k] = _check(v, m.group(1), "%s.%s" % (path, k), client, config)
        return out
    if type_name == "str":
        ok = isinstance(value, str)
    elif type_name == "int":  # a YAML true is a Python bool, which is an int: not one here
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif type_name == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif type_name == "bool":
        ok = isinstance(value, bool)
    elif type_name == "datetime":  # YAML reads a bare timestamp as a datetime
        import datetime
        ok = isinstance(value, (str, datetime.datetime, datetime.date))
    elif type_name == "object":
        # the spec's IntOrString (ports, maxUnavailable) and free-form JSON: the models do not
        # tell them apart, so any value passes here (as the client itself lets it)
        ok = True
    else:
        cls = getattr(client, type_name, None)
        if cls is None or not hasattr(cls, "openapi_types"):
            raise ValueError("%s: the client has no model %s" % (path, type_name))
        return _model(value, cls, path, client, config)
    if not ok:
        raise wrong("%r, of type %s" % (value, type(value).__name__))
    return value


def _model(value, cls, path, client, config):
    """A dict as model cls: each key one the model knows (attribute_map), each value of its
    type (openapi_types), then the object made with its constructor, which raises ValueError
    on a required field left out (client_side_validation, on by default)."""
    if not isinstance(value, dict):
        raise ValueError("%s: a %s, want an object (%s)" % (path, type(value).__name__,
                                                           cls.__name__))
    by_json = {json_key: attr for attr, json_key in cls.attribute_map.items()}
    kwargs = {}
    for key, v in value.items():
        attr = by_json.get(key)
        if attr is None:
            raise ValueError("%s.%s: not a field of %s" % (path, key, cls.__name__))
        kwargs[attr] = _check(v, cls.openapi_types[attr], "%s.%s" % (path, key), client,
                              config)
    try:
        return cls(local_vars_configuration=config, **kwargs)
    except ValueError as e:
        raise ValueError("%s: %s: %s" % (path, cls.__name__, e)) from e


def validate(doc):
    """Check one document against the Kubernetes API's schema as python3-kubernetes 22.6's
    models have it: True once it passes; False for a kind without a schema there (not
    validated: no schema); ValueError naming the JSON path of the first field the model does
    not know, of a value of the wrong type, or of a required field left out.

    Stricter than the API server in one way: a quantity (resources' cpu, memory) must be a
    string, as the model says, where the server also takes a bare number; quote them."""
    if not isinstance(doc, dict):
        raise ValueError("$: a %s, want an object" % type(doc).__name__)
    name = KINDS.get((doc.get("apiVersion"), doc.get("kind")))
    if name is None:
        return False
    client = _client()
    config = client.Configuration()
    config.client_side_validation = True
    _model(doc, getattr(client, name), "$", client, config)
    return True


# --- docker_run_args ---------------------------------------------------------------------

class DockerRun(NamedTuple):
    """What docker_run_args() makes of a pod's container: `docker run` OPTIONS IMAGE ARGS."""
    options: list  # the flags, in the pod spec's order, before the image
    image: str
    arguments: list  # after the image: the container's command[1:] and args
    ports: list  # [{"name", "containerPort", "protocol"}]: the caller publishes them (-p)
    probes: dict  # {"readinessProbe": {"path", "port" (a number), timing fields...}, ...}
    stop_timeout: int  # terminationGracePeriodSeconds: `docker stop -t` (Kubernetes' 30)

    def argv(self, *extra_options):
        """Everything after `docker run`, with the caller's own options (-d, --name, -p, a
        network) before the image."""
        return list(self.options) + list(extra_options) + [self.image] + list(self.arguments)


# Pod fields that choose a node or an account, which have no meaning for one docker run.
SCHEDULING_FIELDS = {"tolerations", "nodeSelector", "priorityClassName", "serviceAccountName"}
PROBE_TIMING = {"initialDelaySeconds", "periodSeconds", "timeoutSeconds", "failureThreshold",
                "successThreshold"}
BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
DECIMAL = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def _only(d, known, path):
    """d is a dict whose keys are all in known, else ValueError naming the first other."""
    if not isinstance(d, dict):
        raise ValueError("%s: a %s, want an object" % (path, type(d).__name__))
    for key in d:
        if key not in known:
            raise ValueError("%s.%s: a field the docker translation does not know"
                             % (path, key))
    return d


def _cpu(q, path):
    """A CPU quantity ("500m", "1", "0.5") in cores."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(m?)", str(q))
    if not m:
        raise ValueError("%s: CPU quantity %r not understood" % (path, q))
    return float(m.group(1)) / (1000 if m.group(2) else 1)


def _bytes(q, path):
    """A memory quantity ("256Mi", "64M", "1000") in bytes."""
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti|k|M|G|T|)", str(q))
    if not m:
        raise ValueError("%s: memory quantity %r not understood" % (path, q))
    return int(m.group(1)) * BINARY.get(m.group(2), DECIMAL.get(m.group(2)))


def _resources(res, path):
    out = []
    _only(res, {"limits", "requests"}, path)
    limits = _only(res.get("limits", {}), {"cpu", "memory"}, path + ".limits")
    requests = _only(res.get("requests", {}), {"cpu", "memory"}, path + ".requests")
    if "cpu" in limits:
        # the kubelet's CFS quota: cpu cores a 100 ms period, as --cpus sets it
        out += ["--cpus", "%g" % _cpu(limits["cpu"], path + ".limits.cpu")]
    if "memory" in limits:
        # the kubelet gives a container no swap: memory+swap limited to the same bytes
        b = str(_bytes(limits["memory"], path + ".limits.memory"))
        out += ["--memory", b, "--memory-swap", b]
    if "cpu" in requests:
        # the kubelet's cpu.shares (cpu.weight on v2, converted from these) for a request:
        # MilliCPUToShares, milli-cores * 1024 / 1000, at least 2
        milli = int(round(_cpu(requests["cpu"], path + ".requests.cpu") * 1000))
        out += ["--cpu-shares", str(max(2, milli * 1024 // 1000))]
    if "memory" in requests:
        # a request of memory is for the scheduler alone (memory.min only with the MemoryQoS
        # feature gate, off by default): nothing to set
        _bytes(requests["memory"], path + ".requests.memory")
    return out


def _security(sc, path, cap_substitutes):
    out = []
    _only(sc, {"runAsUser", "runAsGroup", "runAsNonRoot", "capabilities",
               "readOnlyRootFilesystem", "privileged", "allowPrivilegeEscalation",
               "seccompProfile"}, path)
    if "runAsGroup" in sc and "runAsUser" not in sc:
        raise ValueError("%s.runAsGroup without runAsUser: docker's --user names a user first"
                         % path)
    if "runAsUser" in sc:
        out += ["--user", "%d:%d" % (sc["runAsUser"], sc["runAsGroup"]) if "runAsGroup" in sc
                else str(sc["runAsUser"])]
    if sc.get("runAsNonRoot"):
        # the kubelet refuses to start the container as uid 0; docker has no such check: the
        # uid must be given here, to be seen to be another
        if sc.get("runAsUser", 0) == 0:
            raise ValueError("%s.runAsNonRoot: needs a runAsUser other than 0 here (the "
                             "kubelet would check the image's USER)" % path)
    caps = _only(sc.get("capabilities", {}), {"drop", "add"}, path + ".capabilities")
    for cap in caps.get("drop", []):
        out += ["--cap-drop", cap]
    added = []
    for cap in caps.get("add", []):
        # an engine that knows no CAP_BPF (Docker 20.10 as Debian 12 builds it) is given what
        # the caller substitutes (SYS_ADMIN, which the kernel accepts for BPF and PERFMON)
        cap = (cap_substitutes or {}).get(cap, cap)
        if cap not in added:
            added.append(cap)
    for cap in added:
        out += ["--cap-add", cap]
    if sc.get("readOnlyRootFilesystem"):
        out.append("--read-only")
    if sc.get("privileged"):
        out.append("--privileged")
    if sc.get("allowPrivilegeEscalation") is False:
        # no_new_privs, which keeps exec from granting file capabilities: cgstat's
        out += ["--security-opt", "no-new-privileges"]
    if "seccompProfile" in sc:
        kind = _only(sc["seccompProfile"], {"type"}, path + ".seccompProfile").get("type")
        if kind == "Unconfined":
            out += ["--security-opt", "seccomp=unconfined"]
        elif kind != "RuntimeDefault":  # RuntimeDefault: docker's own default profile
            raise ValueError("%s.seccompProfile.type %r: not translated" % (path, kind))
    return out


def _probe(probe, path, ports):
    _only(probe, {"httpGet"} | PROBE_TIMING, path)
    get = _only(probe.get("httpGet"), {"path", "port", "scheme"}, path + ".httpGet")
    if get.get("scheme", "HTTP") != "HTTP":
        raise ValueError("%s.httpGet.scheme: only HTTP is translated" % path)
    port = get["port"]
    if isinstance(port, str):
        named = [p["containerPort"] for p in ports if p.get("name") == port]
        if not named:
            raise ValueError("%s.httpGet.port %r: no container port of that name"
                             % (path, port))
        port = named[0]
    out = {"path": get.get("path", "/"), "port": port}
    out.update({k: v for k, v in probe.items() if k in PROBE_TIMING})
    return out


def docker_run_args(pod_spec, container_name, image_override=None, host_paths_map=None, *,
                    cap_substitutes=None):
    """The `docker run` of container container_name of pod_spec (a DaemonSet's
    spec.template.spec, as parsed from YAML): a DockerRun. image_override replaces the image;
    host_paths_map ({hostPath: path}) mounts another folder in a hostPath's place (a test's
    scratch /var/log/pods); cap_substitutes ({"BPF": "SYS_ADMIN", ...}) gives an engine that
    does not know a capability another in its place.

    Not translated, and left to the caller: the container's name, -d, the network and the
    publishing of ports (returned), labels. Raises ValueError, naming its path, on any field
    that is not translated below, and on a hostPath of type Directory that is not a directory
    here (the kubelet would refuse to start the pod; docker would make one)."""
    host_paths_map = host_paths_map or {}
    _only(pod_spec, {"containers", "volumes", "hostPID", "terminationGracePeriodSeconds",
                     "automountServiceAccountToken"} | SCHEDULING_FIELDS, "spec")
    options = []
    if pod_spec.get("hostPID"):
        options.append("--pid=host")
    # No pod field says which cgroup namespace: the runtime decides. Where the cpu controller
    # is cgroup v1 (a v1 or hybrid node, as this VM), containerd and CRI-O leave a pod in the
    # host's, as --cgroupns=host does, which is what cgstat expects (its labels and -c paths
    # the host's, no line on stderr about it). On a cgroup v2 node they give the pod one of
    # its own, which this translation does not reproduce: contrib/kubernetes/README.md says
    # what changes then.
    options.append("--cgroupns=host")
    if pod_spec.get("automountServiceAccountToken", False) is not False:
        raise ValueError("spec.automountServiceAccountToken: the kubelet would mount an API "
                         "token, docker has none to mount: set it false")
    containers = [c for c in pod_spec.get("containers", []) if c.get("name") == container_name]
    if len(containers) != 1:
        raise ValueError("spec.containers: no one container named %r" % container_name)
    c = containers[0]
    at = "spec.containers[%s]" % container_name
    _only(c, {"name", "image", "imagePullPolicy", "command", "args", "env", "ports",
              "securityContext", "volumeMounts", "resources", "readinessProbe",
              "livenessProbe"}, at)
    policy = c.get("imagePullPolicy", "IfNotPresent")
    if policy == "Always":
        options += ["--pull", "always"]
    elif policy == "Never":
        options += ["--pull", "never"]
    elif policy != "IfNotPresent":  # docker run's own default: pulled when missing
        raise ValueError("%s.imagePullPolicy %r" % (at, policy))
    for i, env in enumerate(c.get("env", [])):
        _only(env, {"name", "value"}, "%s.env[%d]" % (at, i))
        options += ["-e", "%s=%s" % (env["name"], env.get("value", ""))]
    options += _security(c.get("securityContext", {}), at + ".securityContext",
                         cap_substitutes)
    volumes = {}
    for i, v in enumerate(pod_spec.get("volumes", [])):
        vp = "spec.volumes[%d]" % i
        _only(v, {"name", "hostPath"}, vp)
        hp = _only(v.get("hostPath"), {"path", "type"}, vp + ".hostPath")
        host = host_paths_map.get(hp["path"], hp["path"])
        kind = hp.get("type", "")
        if kind == "Directory":
            if not os.path.isdir(host):
                raise ValueError("%s.hostPath: %s is not a directory here (type Directory: "
                                 "the kubelet would not start the pod)" % (vp, host))
        elif kind != "":
            raise ValueError("%s.hostPath.type %r: not translated" % (vp, kind))
        volumes[v["name"]] = host
    for i, mount in enumerate(c.get("volumeMounts", [])):
        mp = "%s.volumeMounts[%d]" % (at, i)
        _only(mount, {"name", "mountPath", "readOnly"}, mp)
        if mount["name"] not in volumes:
            raise ValueError("%s: no volume %r" % (mp, mount["name"]))
        options += ["-v", "%s:%s%s" % (volumes[mount["name"]], mount["mountPath"],
                                       ":ro" if mount.get("readOnly") else "")]
    options += _resources(c.get("resources", {}), at + ".resources")
    ports = []
    for i, p in enumerate(c.get("ports", [])):
        _only(p, {"name", "containerPort", "protocol"}, "%s.ports[%d]" % (at, i))
        ports.append({"name": p.get("name"), "containerPort": p["containerPort"],
                      "protocol": p.get("protocol", "TCP")})
    probes = {kind: _probe(c[kind], "%s.%s" % (at, kind), ports)
              for kind in ("readinessProbe", "livenessProbe") if kind in c}
    # Kubernetes' command is the image's ENTRYPOINT and args its CMD; --entrypoint takes one
    # word, so the rest of a command goes before the args. (Either one given replaces the
    # image's CMD, in both.)
    arguments = list(c.get("args", []))
    if "command" in c:
        options += ["--entrypoint", c["command"][0]]
        arguments = list(c["command"][1:]) + arguments
    return DockerRun(options=options, image=image_override or c["image"], arguments=arguments,
                     ports=ports, probes=probes,
                     stop_timeout=pod_spec.get("terminationGracePeriodSeconds", 30))
