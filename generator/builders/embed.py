"""Typed core structs (generator/builders/k8s.py, cdk8s-plus-33's classes) rendered by cdk8s
for embedding in custom resources (a JobSet's Job template, an LWS's pod templates):
cdk8s-plus-33 does the camelCasing and key order, so no hand-written dict ever reaches a
typed field, and no typed field is lost (field notes, cdk8s).

Each distinct template is one object in a scratch chart, and all of them are rendered
together when the app renders (generator/builders/cdk.py, `embedded`): a chart and a
to_json() per template cost two more calls to Node each and a validation of the whole app
(docs/design.md); equal templates (a team's copies of a workload) share one rendering. The
dict returned is filled in then; put it in a body, do not read it."""
from __future__ import annotations

from collections.abc import Callable

import constructs

from . import cdk, k8s

_META = k8s.ObjectMeta(name="t")


def _template(hole: dict, rendered: dict) -> None:
    hole.update(rendered["template"])


def _job(hole: dict, rendered: dict) -> None:
    hole["spec"] = rendered["spec"]


def _pod_template(template: k8s.PodTemplateSpec) -> Callable[[constructs.Construct, str], k8s.KubePodTemplate]:
    return lambda scope, id_: cdk.typed(k8s.KubePodTemplate, scope, id_, metadata=_META, template=template)


def pod_template(template: k8s.PodTemplateSpec) -> dict:
    return cdk.embedded(_pod_template(template), _template, ("PodTemplate", cdk.props_key(template)))


def pod_template_now(template: k8s.PodTemplateSpec) -> dict:
    """A pod template's JSON at once, to merge into a dict the builder edits (cdk.rendered_now)."""
    return dict(cdk.rendered_now(_pod_template(template))["template"])


def job_template(spec: k8s.JobSpec) -> dict:
    """A JobTemplateSpec body ({"spec": ...}) for JobSet replicatedJobs."""
    return cdk.embedded(lambda scope, id_: cdk.typed(k8s.KubeJob, scope, id_, metadata=_META, spec=spec), _job,
                        ("Job", cdk.props_key(spec)))
