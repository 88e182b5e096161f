#!/usr/bin/env python3
"""Static checks of deploy/compose.yaml.

Usage: check_compose.py COMPOSE_YAML PROMETHEUS_YML

Checks that the file parses; that the training service runs invariant-train
from the same image as the server and writes into the volume the server reads;
that the server waits for training to complete successfully and publishes the
gRPC and metrics ports its flags name; and that Prometheus mounts the config
whose static target is the server's service name and metrics port.
Prints one PASS/FAIL line per check; exits 1 if any failed.
"""

import pathlib
import sys

import yaml


def flag(args, name):
    for arg in args or []:
        if str(arg).startswith(f"--{name}="):
            return str(arg).split("=", 1)[1]
    return None


def main(argv):
    if len(argv) != 3:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    compose_path, prom_path = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    failures = 0

    def check(name, ok, why=""):
        nonlocal failures
        print(f"PASS {name}" if ok else f"FAIL {name}: {why}")
        failures += 0 if ok else 1
        return ok

    try:
        compose = yaml.safe_load(compose_path.read_text(encoding="utf-8"))
        prom = yaml.safe_load(prom_path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        print(f"FAIL compose: parse: {e}")
        return 1
    services = compose.get("services", {})
    if not check("compose: services train, invariant-server, prometheus",
                 {"train", "invariant-server", "prometheus"} <= set(services), f"services {sorted(services)}"):
        return 1
    train, server, prometheus = services["train"], services["invariant-server"], services["prometheus"]
    check("compose: train uses the server's image", train.get("image") == server.get("image"),
          f"{train.get('image')} vs {server.get('image')}")
    entry = train.get("entrypoint") or []
    check("compose: train entrypoint is invariant-train", bool(entry) and str(entry[0]).endswith("invariant-train"),
          f"entrypoint {entry}")
    volume_of = lambda svc: {str(v).split(":")[0] for v in svc.get("volumes", []) if ":/models" in str(v)}
    check("compose: train writes the volume the server reads at /models",
          bool(volume_of(train) & volume_of(server)), f"train {volume_of(train)}, server {volume_of(server)}")
    condition = ((server.get("depends_on") or {}).get("train") or {}).get("condition")
    check("compose: server waits for training to complete", condition == "service_completed_successfully",
          f"depends_on.train.condition = {condition}")
    published = {str(p).split(":")[-1] for p in server.get("ports", [])}
    for name in ("port", "http_port", "metrics_port"):
        value = flag(server.get("command"), name)
        check(f"compose: server --{name} is published", value in published, f"--{name}={value}, ports {published}")
    mounts = [str(v) for v in prometheus.get("volumes", [])]
    check("compose: prometheus mounts deploy/prometheus",
          any(m.startswith("./prometheus:/etc/prometheus") for m in mounts), f"volumes {mounts}")
    targets = [t for job in prom.get("scrape_configs", []) for sc in job.get("static_configs", [])
               for t in sc.get("targets", [])]
    expected = f"invariant-server:{flag(server.get('command'), 'metrics_port')}"
    check("compose: prometheus.yml scrapes the compose server", expected in targets,
          f"targets {targets}, expected {expected}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
