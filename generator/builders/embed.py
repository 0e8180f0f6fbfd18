"""Typed core structs (generator/builders/k8s.py, the cdk8s-plus-33 names) rendered to the JSON cdk8s writes,
for embedding in custom resources (a JobSet's Job template, an LWS's pod
templates): the typed classes do the camelCasing (generator/builders/render.py, held to
cdk8s by tests/test_render.py), so no hand-written dict ever reaches a typed
field, and no typed field is lost (field notes, cdk8s)."""
from __future__ import annotations

import itertools

from . import cdk, k8s

_scratch = cdk.new_app()   # never written: only to_json() is used
_ids = itertools.count()


def _chart() -> cdk.Chart:
    return cdk.chart(_scratch, f"embed{next(_ids)}")


def pod_template(template: k8s.PodTemplateSpec) -> dict:
    obj = k8s.KubePodTemplate(_chart(), "t", metadata=k8s.ObjectMeta(name="t"), template=template)
    return obj.to_json()["template"]


def job_template(spec: k8s.JobSpec) -> dict:
    """A JobTemplateSpec body ({"spec": ...}) for JobSet replicatedJobs."""
    obj = k8s.KubeJob(_chart(), "t", metadata=k8s.ObjectMeta(name="t"), spec=spec)
    return {"spec": obj.to_json()["spec"]}
