"""Kubernetes' container environment, restated for tests (independent of the generator):

- kubernetes/kubernetes third_party/forked/golang/expansion/expand.go: Expand and
  MappingFuncFor ($(VAR) is replaced when the mapping knows VAR; $$ escapes; anything else
  passes through);
- pkg/kubelet/kubelet_pods.go makeEnvironmentVariables: env entries are taken in order, each
  value expanded with the variables defined *earlier in the list* and the service
  environment (mapping := expansion.MappingFuncFor(tmpEnv, serviceEnv)); valueFrom.fieldRef
  reads the pod (metadata.annotations['k'] among others); command and args are expanded
  afterwards with the whole environment (ExpandContainerCommandAndArgs);
- pkg/controller/job/indexed_job_utils.go addCompletionIndexEnvVariable: the Job controller
  appends JOB_COMPLETION_INDEX (a fieldRef on the completion-index annotation) after the
  container's own entries, unless the container names it already."""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"   # batch/v1 JobCompletionIndexAnnotation


def mapping_for(*contexts: Mapping[str, str]) -> Callable[[str], str]:
    def mapping(name: str) -> str:
        for c in contexts:
            if name in c:
                return c[name]
        return f"$({name})"
    return mapping


def _read_name(rest: str) -> tuple[str, bool, int]:
    """tryReadVariableName: (content read, whether it is a variable name, bytes consumed)."""
    if rest[0] == "$":
        return rest[0], False, 1
    if rest[0] == "(":
        end = rest.find(")", 1)
        if end != -1:
            return rest[1:end], True, end + 1
        return "$(", False, 1
    return "$" + rest[0], False, 1


def expand(text: str, mapping: Callable[[str], str]) -> str:
    out, checkpoint, cursor = [], 0, 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            read, is_var, advance = _read_name(text[cursor + 1:])
            out.append(mapping(read) if is_var else read)   # not a variable: the bytes read, as they are
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(out) + text[checkpoint:]


_FIELD = re.compile(r"^metadata\.(annotations|labels)\['([^']+)'\]$")


def _field(pod_meta: Mapping, path: str) -> str:
    m = _FIELD.match(path)
    if m is None:
        raise ValueError(f"fieldRef {path!r} is not restated here")
    return str((pod_meta.get(m.group(1)) or {}).get(m.group(2), ""))


def as_job_controller_creates(container: dict) -> dict:
    """The container as the Job controller writes it into an Indexed Job's pods."""
    env = list(container.get("env") or [])
    if not any(e.get("name") == "JOB_COMPLETION_INDEX" for e in env):
        env.append({"name": "JOB_COMPLETION_INDEX",
                    "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{COMPLETION_INDEX}']"}}})
    return {**container, "env": env}


def environment(container: Mapping, pod_meta: Mapping, service_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """What the container's processes see, by makeEnvironmentVariables' rules."""
    declared: dict[str, str] = {}
    service = dict(service_env or {})
    for e in container.get("env") or []:
        if "value" in e:
            declared[e["name"]] = expand(str(e["value"]), mapping_for(declared, service))
        elif "fieldRef" in (e.get("valueFrom") or {}):
            declared[e["name"]] = _field(pod_meta, e["valueFrom"]["fieldRef"]["fieldPath"])
        else:
            declared[e["name"]] = ""
    return {**service, **declared}


def command(container: Mapping, env: Mapping[str, str]) -> list[str]:
    mapping = mapping_for(env)
    return [expand(x, mapping) for x in [*(container.get("command") or []), *(container.get("args") or [])]]
