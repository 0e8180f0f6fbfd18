"""Several clusters working as one through Kueue's MultiKueue: a manager
profile holds the queues users submit to, and its MultiKueue admission check
dispatches each admitted Job or JobSet to a worker profile that can run it
(Kueue docs: concepts/multikueue, tasks/manage/setup_multikueue).

Worker credentials are a kubeconfig Secret in the manager's Kueue namespace,
referenced by name; its content never enters the spec or the output."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..kernel.kueue_api import INTEGRATIONS, Integration
from .fields import DnsLabel, DnsSubdomain, SpecModel

# The integrations MultiKueue can dispatch in every pinned release (adapters in
# pkg/controller/jobs/{job,jobset}/*_multikueue_adapter.go at v0.12.3, v0.17.4, v0.19.2).
DISPATCHABLE = tuple(INTEGRATIONS.values())
# Kueue's built-in dispatchers (apis/config/v1beta2 configuration_types.go, from v0.13).
DISPATCHERS = {"all-at-once": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
               "incremental": "kueue.x-k8s.io/multikueue-dispatcher-incremental"}


class Worker(SpecModel):
    profile: DnsLabel = Field(description="A profile (one cluster) that runs what the manager dispatches.")
    kubeconfig_secret: DnsSubdomain = Field(description="Secret in the manager's kueue-system namespace whose "
                                                        "`kubeconfig` key reaches this worker (created out of band).")


class MultiKueueGroup(SpecModel):
    """A manager and its workers."""
    # Also the MultiKueueConfig's and the AdmissionCheck's name: AdmissionCheck parameters.name
    # is a DNS label of at most 63 characters (the CRD's pattern).
    name: DnsLabel
    manager: DnsLabel = Field(description="The profile users submit to; it holds no accelerators of its own.")
    workers: list[Worker] = Field(min_length=1, max_length=10,
                                  description="In dispatch preference order (Kueue v0.12 allows 10 per config).")
    job_kinds: list[Integration] = Field(
        default_factory=lambda: list(DISPATCHABLE), min_length=1,
        description="Kueue integrations dispatched to the workers (at least one: a group dispatches jobs).")
    dispatcher: Literal["all-at-once", "incremental"] = Field(
        "all-at-once", description="How workers are nominated (Kueue v0.13 and later; v0.12 always all at once).")

    @property
    def worker_profiles(self) -> list[str]:
        return [w.profile for w in self.workers]
