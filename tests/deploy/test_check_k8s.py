#!/usr/bin/env python3
"""Tests that check_k8s.py and check_compose.py reject broken manifests.

Each case copies the real deploy/k8s (or compose.yaml) into a temporary
directory, breaks one thing, and asserts the checker exits non-zero with the
expected FAIL line, while the untouched copy passes.
Run: python3 tests/deploy/test_check_k8s.py
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
K8S = REPO / "deploy" / "k8s"
# The built trainer, for the memory checks (invariant-train plan); ctest and
# deploy/check-deploy.sh set it when it is built.
TRAIN_BIN = os.environ.get("INVARIANT_TRAIN") or None


def run(args):
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout


class CheckK8sTest(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="check_k8s_test."))
        self.k8s = self.tmp / "k8s"
        shutil.copytree(K8S, self.k8s)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edit(self, filename, old, new):
        path = self.k8s / filename
        text = path.read_text(encoding="utf-8")
        self.assertIn(old, text, f"fixture drifted: '{old}' not in {filename}")
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    def checker_args(self):
        bin_arg = [f"--train_bin={TRAIN_BIN}"] if TRAIN_BIN else []
        return [str(HERE / "check_k8s.py"), f"--dockerfile={REPO / 'Dockerfile'}", *bin_arg, str(self.k8s)]

    def assert_fails(self, expected_line):
        code, out = run(self.checker_args())
        self.assertEqual(code, 1, out)
        fails = [line for line in out.splitlines() if line.startswith("FAIL")]
        self.assertTrue(any(expected_line in line for line in fails), f"no FAIL '{expected_line}' in:\n{out}")

    def test_real_manifests_pass(self):
        code, out = run(self.checker_args())
        self.assertEqual(code, 0, out)
        self.assertNotIn("FAIL", out)

    def test_admin_token_missing(self):
        self.edit("deployment.yaml", "            - --admin_token_file=/etc/invariant/admin/token\n", "")
        self.assert_fails("--admin_token_file set")

    def test_admin_token_not_from_a_secret(self):
        self.edit("deployment.yaml", "          secret:\n            secretName: invariant-admin-token\n"
                  "            defaultMode: 0440", "          emptyDir: {}")
        self.assert_fails("admin token file is mounted from a Secret volume")

    def test_admin_token_secret_undefined(self):
        self.edit("kustomization.yaml", "  - name: invariant-admin-token\n", "  - name: other-secret\n")
        self.assert_fails("secret: 'invariant-admin-token' is a Secret or a kustomization secretGenerator")

    def test_insecure_admin_rejected(self):
        self.edit("deployment.yaml", "            - --admin_token_file=/etc/invariant/admin/token\n",
                  "            - --insecure_admin\n")
        self.assert_fails("deployment: no --insecure_admin")

    def test_grace_period_not_above_drain(self):
        self.edit("deployment.yaml", "terminationGracePeriodSeconds: 40", "terminationGracePeriodSeconds: 20")
        self.assert_fails("grace period > preStop + drain")

    def test_readiness_on_liveness_service(self):
        self.edit("deployment.yaml", "service: invariant.v1.FeatureService", 'service: ""')
        self.assert_fails("readinessProbe checks the FeatureService health service")

    def test_http_probe_rejected(self):
        self.edit("deployment.yaml", "livenessProbe:\n            grpc:\n              port: 8500\n              service: \"\"",
                  "livenessProbe:\n            httpGet:\n              port: 8500\n              path: /")
        self.assert_fails("livenessProbe uses the grpc probe type")

    def test_missing_memory_limit(self):
        self.edit("deployment.yaml", "memory: 1Gi", "")
        self.assert_fails("memory request and limit set")

    def test_request_above_limit(self):
        self.edit("deployment.yaml", "memory: 640Mi", "memory: 2Gi")
        self.assert_fails("memory request <= limit")

    def test_service_selects_other_pods(self):
        self.edit("service.yaml", "selector:\n    app.kubernetes.io/name: invariant-server",
                  "selector:\n    app.kubernetes.io/name: other")
        self.assert_fails("service invariant-server: selects the Deployment's pods")

    def test_hpa_targets_other_deployment(self):
        self.edit("hpa.yaml", "kind: Deployment\n    name: invariant-server", "kind: Deployment\n    name: other")
        self.assert_fails("hpa: targets the Deployment")

    def test_hpa_custom_metric_not_served_by_the_adapter(self):
        self.edit("hpa.yaml", "name: invariant_inflight_requests", "name: invariant_inflight_rows")
        self.assert_fails("hpa: custom metric invariant_inflight_rows is served by an adapter rule")

    def test_adapter_rule_reads_a_series_the_server_does_not_export(self):
        self.edit("autoscaling/prometheus-adapter-rules.yaml", "- sum by (<<.GroupBy>>) (grpc_server_handled_total",
                  "- sum by (<<.GroupBy>>) (grpc_server_finished_total")
        self.assert_fails("autoscaling: adapter rule invariant_inflight_requests reads exported series")

    def test_keda_threshold_disagrees_with_the_hpa(self):
        self.edit("autoscaling/keda-scaledobject.yaml", 'threshold: "16"', 'threshold: "32"')
        self.assert_fails("keda: threshold equals the hpa's target")

    def test_metrics_port_mismatch(self):
        self.edit("deployment.yaml", "--metrics_port=9100", "--metrics_port=9200")
        self.assert_fails("--metrics_port equals container port 'metrics'")

    def test_undefined_configmap_variable(self):
        self.edit("configmap.yaml", '  THREADS: "2"\n', "")
        self.assert_fails("every $(VAR) in args is defined")

    def test_job_not_indexed(self):
        self.edit("train-sharded.yaml", "completionMode: Indexed", "completionMode: NonIndexed")
        self.assert_fails("an Indexed Job exists")

    def test_completions_leave_no_reduce_index(self):
        self.edit("train-sharded.yaml", "completions: 5", "completions: 4")
        self.assert_fails("completions is --shards + 1")

    def test_shards_disagree_with_completions(self):
        self.edit("train-sharded.yaml", 'value: "4"', 'value: "8"')
        self.assert_fails("completions is --shards + 1")

    def test_no_per_index_backoff(self):
        self.edit("train-sharded.yaml", "  backoffLimitPerIndex: 2\n", "")
        self.assert_fails("backoffLimitPerIndex and maxFailedIndexes set")

    def test_memory_exit_code_retried(self):
        self.edit("train-sharded.yaml", "values: [2, 3]", "values: [2]")
        self.assert_fails("fails the index on exit 3")

    def test_shard_dir_shared_between_runs(self):
        self.edit("train-sharded.yaml", "--shard_dir=/models/default/shards/$(JOB_UID)",
                  "--shard_dir=/models/default/shards")
        self.assert_fails("--shard_dir is the run's own folder")

    def test_memory_limit_below_the_plan(self):
        if TRAIN_BIN is None:
            self.fail("set INVARIANT_TRAIN to a built invariant-train (ctest does)")
        self.edit("train-sharded.yaml", "              memory: 4Gi", "              memory: 8Mi")
        self.assert_fails("memory limit holds the plan's shard and reduce peaks")

    def test_mixed_images(self):
        self.edit("train-job.yaml", "image: invariant-serve:0.1.0", "image: invariant-serve:0.0.9")
        self.assert_fails("every Deployment/Job container uses the same image")

    def test_missing_metadata_name(self):
        self.edit("pdb.yaml", "  name: invariant-server\n", "")
        self.assert_fails("has apiVersion, kind, metadata.name")


class CheckComposeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="check_compose_test."))
        self.compose = self.tmp / "compose.yaml"
        shutil.copy(REPO / "deploy" / "compose.yaml", self.compose)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_check(self):
        return run([str(HERE / "check_compose.py"), str(self.compose),
                    str(REPO / "deploy" / "prometheus" / "prometheus.yml")])

    def test_real_compose_passes(self):
        code, out = self.run_check()
        self.assertEqual(code, 0, out)

    def test_server_not_waiting_for_training(self):
        text = self.compose.read_text(encoding="utf-8")
        self.assertIn("service_completed_successfully", text)
        self.compose.write_text(text.replace("service_completed_successfully", "service_started"), encoding="utf-8")
        code, out = self.run_check()
        self.assertEqual(code, 1, out)
        self.assertIn("FAIL compose: server waits for training to complete", out)


if __name__ == "__main__":
    unittest.main(verbosity=1)
