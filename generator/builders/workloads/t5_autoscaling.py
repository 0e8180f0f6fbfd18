"""The T5 autoscaling loop: Managed Prometheus scrapes TorchServe's metrics
port (PodMonitoring), the Custom Metrics Stackdriver Adapter serves the
metric to the HPA, and the HPA scales the Deployment on it.

The metric name lives here and nowhere else; the HPA's external name is
derived from it, and tests compare it with what the image's integration test
asserts TorchServe exposes."""
from __future__ import annotations

from dataclasses import dataclass

from ...kernel import versions
from ...model.kinds.t5 import duration_ms
from .. import cdk, core, k8s

# TorchServe's queue-latency counter (metrics_mode=prometheus in the image's
# config.properties). Managed Prometheus exports it to Cloud Monitoring as
# prometheus.googleapis.com/<name>/counter, which the adapter serves under
# the '|'-separated name below.
QUEUE_LATENCY_METRIC = "ts_queue_latency_microseconds"
HPA_METRIC = f"prometheus.googleapis.com|{QUEUE_LATENCY_METRIC}|counter"



@dataclass(frozen=True)
class PodMonitoring:
    """monitoring.googleapis.com PodMonitoring: one scrape endpoint."""
    name: str
    namespace: str
    selector: dict
    port: str | int
    interval: str
    timeout: str | None = None     # None: Managed Prometheus's default (the interval)
    path: str = "/metrics"
    labels: dict | None = None

    def body(self) -> dict:
        # The CRD's CEL rule (timeout <= interval) is not evaluated by the
        # schema validator, so the builder enforces it.
        if self.timeout is not None and duration_ms(self.timeout) > duration_ms(self.interval):
            raise ValueError(f"PodMonitoring {self.name}: timeout {self.timeout} exceeds interval {self.interval}")
        metadata: dict = {"name": self.name, "namespace": self.namespace}
        if self.labels:
            metadata["labels"] = dict(self.labels)
        endpoint = {"port": self.port, "path": self.path, "timeout": self.timeout, "interval": self.interval}
        return {
            "apiVersion": versions.table()["managedPrometheus"]["api"],
            "kind": "PodMonitoring",
            "metadata": metadata,
            "spec": {
                "selector": {"matchLabels": dict(self.selector)},
                "endpoints": [{k: v for k, v in endpoint.items() if v is not None}],
            },
        }


def queue_latency_hpa(chart, name: str, namespace: str, deployment: str,
                      min_replicas: int, max_replicas: int, target) -> k8s.KubeHorizontalPodAutoscalerV2:
    """HPA on the per-pod average of the queue-latency counter's rate. The
    target Deployment must not set spec.replicas (the HPA owns it)."""
    return pods_metric_hpa(chart, name, namespace, ("apps/v1", "Deployment", deployment),
                           min_replicas, max_replicas, HPA_METRIC, target)


def pods_metric_hpa(chart, name: str, namespace: str, scale_target: tuple[str, str, str],
                    min_replicas: int, max_replicas: int, metric: str, target) -> k8s.KubeHorizontalPodAutoscalerV2:
    """HPA on the per-pod average (AverageValue) of a metric the Custom Metrics Stackdriver
    Adapter serves; scale_target is (apiVersion, kind, name), whose replicas the HPA owns."""
    api_version, kind, target_name = scale_target
    return cdk.typed(k8s.KubeHorizontalPodAutoscalerV2,
        chart, f"HorizontalPodAutoscaler.{namespace}.{name}",
        metadata=core.meta(name, namespace),
        spec=k8s.HorizontalPodAutoscalerSpecV2(
            scale_target_ref=k8s.CrossVersionObjectReferenceV2(api_version=api_version, kind=kind, name=target_name),
            min_replicas=min_replicas,
            max_replicas=max_replicas,
            metrics=[k8s.MetricSpecV2(
                type="Pods",
                pods=k8s.PodsMetricSourceV2(
                    metric=k8s.MetricIdentifierV2(name=metric),
                    target=k8s.MetricTargetV2(type="AverageValue", average_value=core.qty(str(target))),
                ),
            )],
        ),
    )
