#!/usr/bin/env python3
"""Static checks of the invariant-serve Kubernetes manifests.

Usage: check_k8s.py [--dockerfile=PATH] K8S_DIR

Parses every *.yaml under K8S_DIR (multi-document files allowed) and checks the
fields a broken rollout would otherwise only reveal in a cluster:
  * every object has apiVersion, kind and metadata.name;
  * kustomization.yaml lists files that exist;
  * the Deployment has gRPC liveness/readiness probes (readiness on the
    "invariant.v1.FeatureService" health service) on a declared port, cpu and
    memory requests <= limits, a preStop sleep, terminationGracePeriodSeconds
    above preStop + --drain_seconds, --max_connection_age_seconds set, and every
    $(VAR) in its args defined (env or a ConfigMap that exists);
  * --port / --http_port / --metrics_port match the named container ports (and the
    Dockerfile's EXPOSE when --dockerfile is given);
  * Services, PDB and PodMonitor/ServiceMonitor select the Deployment's pod
    labels and name ports that exist; one Service is headless;
  * the HPA (autoscaling/v2) targets the Deployment and scales on CPU;
  * the Indexed Job is Indexed, passes $(JOB_COMPLETION_INDEX) as the shard and
    its shard count agrees with completions and with the reduce Job;
  * all containers use one image; PVCs referenced by pods exist.
Prints one "PASS <check>" or "FAIL <check>: <why>" line per check and exits 1
if any check failed, 2 on a usage or parse error.
"""

import pathlib
import re
import sys

import yaml

READY_SERVICE = "invariant.v1.FeatureService"


class Checker:
    def __init__(self):
        self.failures = 0

    def check(self, name, ok, why=""):
        if ok:
            print(f"PASS {name}")
        else:
            self.failures += 1
            print(f"FAIL {name}: {why}")
        return ok


def load_objects(k8s_dir):
    objects = []
    for path in sorted(pathlib.Path(k8s_dir).glob("*.yaml")):
        with open(path, encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if doc is not None:
                    objects.append((path.name, doc))
    return objects


def flag_value(args, flag):
    """Value of --flag=VALUE in an args list, or None."""
    for arg in args or []:
        if isinstance(arg, str) and arg.startswith(f"--{flag}="):
            return arg.split("=", 1)[1]
    return None


def quantity(value):
    """Kubernetes cpu/memory quantity as a float in base units."""
    text = str(value)
    suffixes = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
                "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
    for suffix in sorted(suffixes, key=len, reverse=True):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * suffixes[suffix]
    return float(text)


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def pod_spec(obj):
    return obj.get("spec", {}).get("template", {}).get("spec", {})


def container_env(container, configmaps):
    """Environment a container sees: env entries plus envFrom ConfigMap keys."""
    env = {}
    for ref in container.get("envFrom", []):
        name = ref.get("configMapRef", {}).get("name")
        env.update(configmaps.get(name, {}).get("data", {}))
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = str(item["value"])
        else:
            env[item["name"]] = None  # valueFrom: defined, value unknown here
    return env


def expand(text, env):
    return re.sub(r"\$\((\w+)\)", lambda m: str(env.get(m.group(1)) or m.group(0)), text)


def check_all(k8s_dir, dockerfile=None):
    c = Checker()
    try:
        objects = load_objects(k8s_dir)
    except yaml.YAMLError as e:
        print(f"FAIL parse: {e}")
        return 2
    c.check("parse: every manifest is YAML", bool(objects), f"no *.yaml objects under {k8s_dir}")

    by_kind = {}
    for filename, obj in objects:
        name = (obj.get("metadata") or {}).get("name")
        label = f"{filename}:{obj.get('kind')}/{name or '-'}"
        missing = [f for f, v in (("apiVersion", obj.get("apiVersion")), ("kind", obj.get("kind")),
                                  ("metadata.name", name)) if not v]
        if obj.get("kind") == "Kustomization":
            missing = [m for m in missing if m != "metadata.name"]
        c.check(f"fields: {label} has apiVersion, kind, metadata.name", not missing,
                f"missing {', '.join(missing)}")
        by_kind.setdefault(obj.get("kind"), []).append(obj)

    for kust in by_kind.get("Kustomization", []):
        absent = [r for r in kust.get("resources", []) if not (pathlib.Path(k8s_dir) / r).exists()]
        c.check("kustomization: every resource file exists", not absent, f"missing {absent}")

    configmaps = {o["metadata"]["name"]: o for o in by_kind.get("ConfigMap", [])}
    deployments = by_kind.get("Deployment", [])
    if not c.check("deployment: exactly one Deployment", len(deployments) == 1,
                   f"found {len(deployments)}"):
        return 1
    deploy = deployments[0]
    deploy_name = deploy["metadata"]["name"]
    spec = pod_spec(deploy)
    pod_labels = deploy["spec"]["template"]["metadata"].get("labels", {})
    c.check("deployment: selector matches pod labels",
            selects(deploy["spec"].get("selector", {}).get("matchLabels"), pod_labels),
            f"selector {deploy['spec'].get('selector')} vs labels {pod_labels}")
    server = spec["containers"][0]
    env = container_env(server, configmaps)
    args = [expand(a, env) for a in server.get("args", [])]
    ports = {p.get("name"): p["containerPort"] for p in server.get("ports", [])}

    for ref in server.get("envFrom", []):
        name = ref.get("configMapRef", {}).get("name")
        c.check(f"deployment: envFrom ConfigMap '{name}' exists", name in configmaps,
                f"ConfigMaps: {sorted(configmaps)}")
    unresolved = [a for a in args if re.search(r"\$\(\w+\)", a)]
    c.check("deployment: every $(VAR) in args is defined", not unresolved, f"unresolved {unresolved}")

    for probe_name in ("livenessProbe", "readinessProbe"):
        probe = server.get(probe_name) or {}
        grpc = probe.get("grpc")
        c.check(f"deployment: {probe_name} uses the grpc probe type", grpc is not None,
                f"{probe_name} = {probe}")
        if grpc is not None:
            c.check(f"deployment: {probe_name} port is a container port",
                    grpc.get("port") in ports.values(), f"port {grpc.get('port')} not in {ports}")
    readiness = (server.get("readinessProbe") or {}).get("grpc") or {}
    c.check("deployment: readinessProbe checks the FeatureService health service",
            readiness.get("service") == READY_SERVICE,
            f"service '{readiness.get('service')}', expected '{READY_SERVICE}'")

    resources = server.get("resources", {})
    for res in ("cpu", "memory"):
        req = resources.get("requests", {}).get(res)
        lim = resources.get("limits", {}).get(res)
        if c.check(f"deployment: {res} request and limit set", req is not None and lim is not None,
                   f"requests={req} limits={lim}"):
            c.check(f"deployment: {res} request <= limit", quantity(req) <= quantity(lim),
                    f"request {req} > limit {lim}")

    grace = spec.get("terminationGracePeriodSeconds")
    drain = flag_value(args, "drain_seconds")
    pre_stop = ((server.get("lifecycle") or {}).get("preStop") or {})
    sleep_cmd = (pre_stop.get("exec") or {}).get("command", [])
    pre_stop_seconds = float(sleep_cmd[-1]) if sleep_cmd and "sleep" in sleep_cmd[0] else None
    if "sleep" in pre_stop:
        pre_stop_seconds = float(pre_stop["sleep"].get("seconds", 0))
    c.check("deployment: preStop sleep present", pre_stop_seconds is not None, f"preStop = {pre_stop}")
    if c.check("deployment: terminationGracePeriodSeconds and --drain_seconds set",
               grace is not None and drain is not None, f"grace={grace} drain={drain}"):
        budget = float(drain) + (pre_stop_seconds or 0)
        c.check("deployment: grace period > preStop + drain", float(grace) > budget,
                f"grace {grace} s <= preStop {pre_stop_seconds} s + drain {drain} s")
    age = flag_value(args, "max_connection_age_seconds")
    c.check("deployment: --max_connection_age_seconds set (> 0)",
            age is not None and float(age) > 0, f"value {age}")

    for flag, port_name in (("port", "grpc"), ("http_port", "http"), ("metrics_port", "metrics")):
        value = flag_value(args, flag)
        c.check(f"ports: --{flag} equals container port '{port_name}'",
                value is not None and port_name in ports and int(value) == ports[port_name],
                f"--{flag}={value}, container ports {ports}")
    if dockerfile:
        exposed = set()
        for line in pathlib.Path(dockerfile).read_text(encoding="utf-8").splitlines():
            if line.strip().upper().startswith("EXPOSE"):
                exposed.update(int(p.split("/")[0]) for p in line.split()[1:])
        c.check("ports: container ports are EXPOSEd by the Dockerfile",
                set(ports.values()) <= exposed, f"ports {sorted(ports.values())}, EXPOSE {sorted(exposed)}")

    services = by_kind.get("Service", [])
    c.check("services: at least one ClusterIP and one headless Service",
            any(s["spec"].get("clusterIP") == "None" for s in services)
            and any(s["spec"].get("clusterIP") != "None" for s in services),
            f"clusterIPs {[s['spec'].get('clusterIP') for s in services]}")
    for svc in services:
        name = svc["metadata"]["name"]
        c.check(f"service {name}: selects the Deployment's pods",
                selects(svc["spec"].get("selector"), pod_labels),
                f"selector {svc['spec'].get('selector')} vs pod labels {pod_labels}")
        for p in svc["spec"].get("ports", []):
            target = p.get("targetPort", p.get("port"))
            ok = target in ports if isinstance(target, str) else target in ports.values()
            c.check(f"service {name}: targetPort {target} is a container port", ok, f"container ports {ports}")

    hpas = by_kind.get("HorizontalPodAutoscaler", [])
    c.check("hpa: one HorizontalPodAutoscaler", len(hpas) == 1, f"found {len(hpas)}")
    for hpa in hpas:
        ref = hpa["spec"].get("scaleTargetRef", {})
        c.check("hpa: apiVersion autoscaling/v2", hpa["apiVersion"] == "autoscaling/v2", hpa["apiVersion"])
        c.check("hpa: targets the Deployment",
                ref.get("kind") == "Deployment" and ref.get("name") == deploy_name, f"scaleTargetRef {ref}")
        c.check("hpa: scales on cpu",
                any((m.get("resource") or {}).get("name") == "cpu" for m in hpa["spec"].get("metrics", [])),
                "no cpu Resource metric")
        c.check("hpa: minReplicas <= maxReplicas",
                hpa["spec"].get("minReplicas", 1) <= hpa["spec"].get("maxReplicas", 0),
                f"{hpa['spec'].get('minReplicas')} > {hpa['spec'].get('maxReplicas')}")

    for pdb in by_kind.get("PodDisruptionBudget", []):
        c.check("pdb: selects the Deployment's pods",
                selects(pdb["spec"].get("selector", {}).get("matchLabels"), pod_labels),
                f"selector {pdb['spec'].get('selector')}")
    monitors = by_kind.get("PodMonitor", []) + by_kind.get("ServiceMonitor", [])
    c.check("monitor: a PodMonitor or ServiceMonitor exists", bool(monitors), "none found")
    for mon in monitors:
        kind = mon["kind"]
        selector = mon["spec"].get("selector", {}).get("matchLabels")
        if kind == "PodMonitor":
            endpoints = mon["spec"].get("podMetricsEndpoints", [])
            c.check("monitor: PodMonitor selects the Deployment's pods", selects(selector, pod_labels),
                    f"selector {selector}")
            c.check("monitor: scrapes a named container port",
                    all(e.get("port") in ports for e in endpoints) and bool(endpoints), f"endpoints {endpoints}")
        else:
            endpoints = mon["spec"].get("endpoints", [])
            svc_ports = {p.get("name") for s in services if selects(selector, s["metadata"].get("labels", {}))
                         for p in s["spec"].get("ports", [])}
            c.check("monitor: ServiceMonitor selects a Service port",
                    bool(endpoints) and all(e.get("port") in svc_ports for e in endpoints), f"endpoints {endpoints}")

    jobs = by_kind.get("Job", [])
    workloads = deployments + jobs
    images = {ct.get("image") for w in workloads for ct in pod_spec(w).get("containers", [])}
    c.check("images: every Deployment/Job container uses the same image", len(images) == 1, f"images {images}")
    pvcs = {o["metadata"]["name"] for o in by_kind.get("PersistentVolumeClaim", [])}
    for w in workloads:
        for vol in pod_spec(w).get("volumes", []):
            claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
            if claim:
                c.check(f"volumes: {w['metadata']['name']} claim '{claim}' exists", claim in pvcs, f"PVCs {pvcs}")

    indexed = [j for j in jobs if j["spec"].get("completionMode") == "Indexed"]
    if c.check("jobs: an Indexed Job exists", len(indexed) == 1, f"found {len(indexed)} Indexed Jobs"):
        job = indexed[0]
        ct = pod_spec(job)["containers"][0]
        job_env = container_env(ct, configmaps)
        job_env["JOB_COMPLETION_INDEX"] = "i"
        shard = flag_value([expand(a, job_env) for a in ct.get("args", [])], "shard")
        raw_shard = flag_value(ct.get("args", []), "shard") or ""
        completions = job["spec"].get("completions")
        c.check("jobs: Indexed Job passes $(JOB_COMPLETION_INDEX) as --shard=i/n",
                "$(JOB_COMPLETION_INDEX)" in raw_shard and shard is not None and shard.startswith("i/"),
                f"--shard={raw_shard}")
        n = shard.split("/", 1)[1] if shard and "/" in shard else None
        c.check("jobs: shard count n equals completions", n is not None and n.isdigit() and int(n) == completions,
                f"n={n} completions={completions}")
        reducers = [j for j in jobs if "reduce" in (pod_spec(j)["containers"][0].get("args") or [])]
        if c.check("jobs: a reduce Job exists", len(reducers) == 1, f"found {len(reducers)}"):
            shards = flag_value(pod_spec(reducers[0])["containers"][0].get("args"), "shards")
            c.check("jobs: reduce --shards equals completions", shards is not None and int(shards) == completions,
                    f"--shards={shards} completions={completions}")
    for job in jobs:
        c.check(f"jobs: {job['metadata']['name']} restartPolicy Never/OnFailure",
                pod_spec(job).get("restartPolicy") in ("Never", "OnFailure"),
                f"restartPolicy {pod_spec(job).get('restartPolicy')}")
    return 1 if c.failures else 0


def main(argv):
    dockerfile = None
    rest = []
    for arg in argv[1:]:
        if arg.startswith("--dockerfile="):
            dockerfile = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    if len(rest) != 1:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    return check_all(rest[0], dockerfile)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
