"""No credential reaches Git from any field (generator/kernel/credentials.py).

The fields are enumerated from the spec model's JSON schema, so a new field is covered
without editing this test: every string field and every key of every map gets each token
kind, and every one is refused with its path; revision hashes, digests and UUIDs are not.
The token samples follow each format's published shape (docs/credentials.md) and are
assembled here from parts, so no scanner mistakes this file for a leak."""
from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

from generator import model as spec
from generator.kernel import credentials, paths, yamlio
from generator.kernel.errors import SpecError, format_path
from generator.model.spec import Platform
from tests import helpers

A = "aB3dE5fG7h"   # 10 mixed letters and digits, repeated to each format's length

# kind -> a value of that kind (the kinds credentials.KNOWN_TOKENS names).
TOKENS = {
    "a Hugging Face token": "hf" + "_" + (A * 4)[:34],
    "a GitHub token": "gh" + "p_" + (A * 4)[:36],
    "a GitHub token (fine-grained)": "github" + "_pat_" + (A * 9)[:82],
    "a GitHub token (app)": "gh" + "s_" + (A * 4)[:36],
    "a GitLab token": "gl" + "pat-" + (A * 2)[:20],
    "an AWS access key": "AK" + "IA" + "QWERTYUI2345ZXCV",
    "an AWS secret access key": "aws_secret_access_key=" + ("wJalrXUtnFEMI/K7MDENG+" + A * 2)[:40],
    "a Google API key": "AI" + "za" + (A * 4)[:35],
    "a Google service account key": '{"type": "service' + '_account", "project_id": "p"}',
    "a Slack token": "xo" + "xb-" + "1234567890-1234567890-" + (A * 3)[:24],
    "a JSON Web Token": "ey" + "JhbGciOiJIUzI1NiJ9." + "ey" + "JzdWIiOiIxMjM0NTY3ODkwIn0." + (A * 3)[:26],
    "a bearer token": "Authorization: Bear" + "er " + (A * 3)[:30],
    "a bearer token in a URL": "https://hub.example/api?access" + "_token=" + (A * 2)[:20],
    "credentials in a URL (user:password@)": "https://user:" + "s3cr3t-" + "pw@git.example/org/repo.git",
    "a private key": "-----BEGIN " + "PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----",
}

# Long random-looking values that are not secrets.
ACCEPTED = {
    "git commit SHA": "0b3e675886829867703d7060b2451d0b7155db7d",
    "image digest": "sha256:" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "UUID": str(uuid.UUID("12345678-1234-5678-1234-567812345678")),
    "base64 of a config": "c2VydmVyOiBodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmM=",
}


# ---------------------------------------------------------------- the fields, from the schema

def _deref(schema: dict, defs: dict) -> dict:
    while "$ref" in schema:
        schema = defs[schema["$ref"].split("/")[-1]]
    return schema


def _fields(schema: dict, defs: dict, path: tuple, seen: frozenset) -> list[tuple[tuple, str]]:
    """(path, "value" | "key") of every string field and every map of the schema below path.
    A list is entered at item 0, a map at the key "k"; recursion stops at a definition already
    on the path."""
    ref = schema.get("$ref", "")
    if ref in seen:
        return []
    seen = seen | {ref} if ref else seen
    schema = _deref(schema, defs)
    out: list[tuple[tuple, str]] = []
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []) + schema.get("allOf", []):
        out += _fields(branch, defs, path, seen)
    kind = schema.get("type")
    if kind == "string" or "const" in schema and isinstance(schema["const"], str):
        out.append((path, "value"))
    if kind == "array" and isinstance(schema.get("items"), dict):
        out += _fields(schema["items"], defs, path + (0,), seen)
    for key, sub in (schema.get("properties") or {}).items():
        out += _fields(sub, defs, path + (key,), seen)
    values = list((schema.get("patternProperties") or {}).values())
    if isinstance(schema.get("additionalProperties"), dict):
        values.append(schema["additionalProperties"])
    if values:
        out.append((path, "key"))
    for sub in values:
        out += _fields(sub, defs, path + ("k",), seen)
    return out


@pytest.fixture(scope="module")
def fields() -> list[tuple[tuple, str]]:
    schema = Platform.model_json_schema(by_alias=True)
    found = sorted(set(_fields(schema, schema.get("$defs", {}), (), frozenset())), key=repr)
    assert len(found) > 150, len(found)   # the model has hundreds of string fields; the walk must see them
    return found


def _plant(raw: dict, path: tuple, value, as_key: bool) -> None:
    """Put value at path in raw (a key named value holding "v" when as_key), making the
    containers the fixture lacks."""
    node: Any = raw
    for part, nxt in zip(path, path[1:] + (None,), strict=True):
        want: type = list if isinstance(nxt, int) else dict
        if nxt is None:
            want = dict if as_key else str
        if isinstance(part, int):
            if not node:
                node.append({} if want is dict else [] if want is list else "")
            if want is not str and not isinstance(node[0], want):
                node[0] = want()
            if nxt is None and not as_key:
                node[0] = value
            node = node[0]
        else:
            if want is not str and not isinstance(node.get(part), want):
                node[part] = want()
            if nxt is None and not as_key:
                node[part] = value
            node = node[part]
    if as_key:
        if not path:
            node = raw
        node[value] = "v"


def _planted(raw, value, path=()) -> set[tuple[tuple, str]]:
    """Where value still is after every plant (a later plant may replace an earlier one's parent)."""
    out = set()
    if isinstance(raw, dict):
        for k, v in raw.items():
            if k == value:
                out.add((path, "key"))
            out |= _planted(v, value, path + (k,))
    elif isinstance(raw, list):
        for i, v in enumerate(raw):
            out |= _planted(v, value, path + (i,))
    elif raw == value:
        out.add((path, "value"))
    return out


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_every_field_and_key_refuses_each_token_kind(kind, fields):
    token = TOKENS[kind]
    left, rounds = list(fields), 0
    while left:   # a field whose parent another plant replaced (a string or an object) gets a round of its own
        rounds += 1
        raw = helpers.fixture_raw()
        for path, what in left:
            _plant(raw, path, token, what == "key")
        planted = _planted(raw, token)
        assert planted and rounds <= 3, left
        with pytest.raises(SpecError) as e:
            spec.from_dict(raw, "spec.yaml")
        reported = {p.path for p in e.value.problems if "(not shown)" in p.message}
        missing = sorted(format_path(path) for path, _ in planted if format_path(path) not in reported)
        assert not missing, f"{len(missing)} of {len(planted)} fields took {kind}: {missing[:10]}"
        shown = e.value.render()
        secret = {"credentials in a URL (user:password@)": "s3cr3t-pw",
                  "a Google service account key": token}.get(kind, token[-10:])
        assert token not in shown and secret not in shown, shown
        left = [f for f in left if f not in planted]


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_no_field_refuses_hashes_digests_uuids(name, fields):
    raw = helpers.fixture_raw()
    for path, what in fields:
        _plant(raw, path, ACCEPTED[name], what == "key")
    assert list(credentials.scan(raw)) == []


def test_a_spec_with_real_hashes_and_digests_loads():
    raw = helpers.fixture_raw()
    raw["images"]["tgi"]["digest"] = ACCEPTED["image digest"]
    raw["workloads"][0].setdefault("labels", {})["model-revision"] = ACCEPTED["git commit SHA"]
    assert not list(credentials.scan(raw))
    assert not [p for p in _problems(raw) if "(not shown)" in p]


def _problems(raw) -> list[str]:
    try:
        spec.from_dict(raw, "spec.yaml")
    except SpecError as e:
        return [p.message for p in e.problems]
    return []


def test_synth_refuses_a_credential_key_and_gitops_field_writing_nothing(tmp_path, capsys):
    # The two leaks the issue found: a label key that is a token, a token as gitops.targetRevision.
    raw = helpers.fixture_raw()
    token = TOKENS["a Hugging Face token"]
    raw["namespaces"][0].setdefault("labels", {})[token] = "x"
    raw.setdefault("gitops", {"repoURL": "https://git.example/org/platform.git", "targetRevision": "main"})
    raw["gitops"]["targetRevision"] = TOKENS["a GitLab token"]
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yamlio.dump(raw))
    code, out, err = helpers.run_cli(capsys, "synth", "--spec", spec_file, "--out", tmp_path / "out")
    assert code == 2, err
    assert not any((tmp_path / "out" / d).exists() for d in paths.OUTPUT_DIRS)
    lines = err.splitlines()
    assert any(":" in line and "gitops.targetRevision: contains a GitLab token (not shown)" in line for line in lines), err
    assert any("namespaces['" in line and ".labels: key #" in line and "Hugging Face token" in line
               for line in lines), err
    assert token not in err and TOKENS["a GitLab token"] not in err


@pytest.mark.parametrize("value", [
    "ghp_short", "hf_", "xoxb-", "Bearer tokens are documented in RFC 6750", "AKIA", "eyJhbGciOi",
    "https://git.example/org/repo.git", "ssh://git@github.com/org/repo.git", "git@github.com:org/repo.git",
])
def test_near_misses_are_not_credentials(value):
    assert credentials.known_token(value) is None


def test_redact_removes_every_kind():
    for kind, token in TOKENS.items():
        assert credentials.known_token(token), kind
        assert token not in credentials.redact(f"x {token} y"), kind


def test_a_copy_of_the_fixture_is_clean():
    assert list(credentials.scan(copy.deepcopy(helpers.fixture_raw()))) == []


def test_synth_guard_refuses_a_credential_in_an_emitted_object():
    # The last guard (generator/validate/guard.py) runs the same check on what synth would write.
    from generator.validate import guard
    token = TOKENS["a Slack token"]
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "llm",
                                                               "labels": {"app": "x"}},
          "data": {"webhook": f"curl -H 'Authorization: Bearer {TOKENS['a JSON Web Token']}'", "token": token}}
    found = guard.problems({"base/configmap_c.yaml": yamlio.dump(cm)})
    assert [p.path for p in found] == ["base/ConfigMap/c", "base/ConfigMap/c"], found
    assert all("SE003" in p.message and token not in p.message for p in found)


def test_a_manifest_the_spec_names_is_checked_too(tmp_path):
    # A team's own manifest (kind `manifest`, read relative to the spec) is a file the spec points at.
    raw = helpers.fixture_raw()
    raw["workloads"].append({"name": "mine", "kind": "manifest", "file": "job.yaml", "profiles": ["l4-standard"],
                             "namespace": "llm", "queue": "lq", "priority": "medium"})
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "mine", "namespace": "llm"},
           "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
               {"name": "c", "image": "registry.example/trainer:1.0.0",
                "env": [{"name": "UPLOAD", "value": TOKENS["a bearer token in a URL"]}],
                "resources": {"requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}}}]}}}}
    (tmp_path / "job.yaml").write_text(yamlio.dump(job))
    source = str(tmp_path / "spec.yaml")
    job["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] = "https://hub.example/api"
    (tmp_path / "job.yaml").write_text(yamlio.dump(job))
    assert not [p for p in _problems_at(raw, source) if "(not shown)" in p]   # the clean file is accepted
    job["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] = TOKENS["a bearer token in a URL"]
    (tmp_path / "job.yaml").write_text(yamlio.dump(job))
    found = [p for p in _problems_at(raw, source) if "(not shown)" in p]
    assert found == [f"workloads[{len(raw['workloads']) - 1}].file: job.yaml: document 1 (Job/mine): "
                     "spec.template.spec.containers[0].env[0].value: contains a bearer token in a URL (not shown); "
                     + credentials.HOW], found


def _problems_at(raw, source) -> list[str]:
    try:
        spec.from_dict(copy.deepcopy(raw), source)
    except SpecError as e:
        return [f"{p.path}: {p.message}" for p in e.problems]
    return []


def _manifest_problems(tmp_path, *docs) -> list[str]:
    raw = helpers.fixture_raw()
    raw["workloads"].append({"name": "mine", "kind": "manifest", "file": "job.yaml", "profiles": ["l4-standard"],
                             "namespace": "llm", "queue": "lq", "priority": "medium"})
    (tmp_path / "job.yaml").write_text(yamlio.dump_all(list(docs)))
    return [p for p in _problems_at(raw, str(tmp_path / "spec.yaml")) if "job.yaml" in p]


def _job(env: list[dict], args: list[str] | None = None) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "mine", "namespace": "llm"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "registry.example/trainer:1.0.0", "env": env, "args": args or [],
                 "resources": {"requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}}}]}}}}


def test_a_literal_secret_in_a_manifest_file_is_refused(tmp_path):
    # A Secret's data/stringData are its values (core/v1 Secret); committed, they are in Git for good.
    # No published token format is needed: "hunter2" would pass `scan`, and is still a password.
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "llm"},
              "stringData": {"password": "hunter2"}}
    ref = [{"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}]
    assert _manifest_problems(tmp_path, _job(ref)) == []   # a reference by name is the way
    found = _manifest_problems(tmp_path, _job(ref), secret)
    assert len(found) == 1 and "document 2 (Secret/db): stringData: a Secret with literal values" in found[0], found
    assert "hunter2" not in found[0] and "secretKeyRef" in found[0] and "external secret store" in found[0]
    secret = {**secret, "data": {"password": "aHVudGVyMg=="}}
    del secret["stringData"]
    assert len(_manifest_problems(tmp_path, _job(ref), secret)) == 1


def test_credential_named_env_and_flags_in_a_manifest_file_are_refused(tmp_path):
    # The spec's own env and args go through credentials.in_env / in_argument; a manifest's containers too.
    literal = [{"name": "DB_PASSWORD", "value": "s3cr3tPassw0rd"}]
    found = _manifest_problems(tmp_path, _job(literal, ["--hf-token=abc123def456"]))
    assert sorted(f.split(": ", 4)[3] for f in found) == [
        "spec.template.spec.containers[0].args[0]", "spec.template.spec.containers[0].env[0].value"], found
    assert all("s3cr3tPassw0rd" not in f and "abc123def456" not in f for f in found)
    assert _manifest_problems(tmp_path, _job([{"name": "DB_PASSWORD", "value": "$(FROM_SECRET)"}],
                                             ["--hf-token=$(HF_TOKEN)"])) == []


def test_redaction_is_linear_in_the_length_of_the_text():
    # A 9 MB invalid name used to spend seconds here: every pattern over the whole value, and the
    # URL pattern searched again from each word start of "a-a-a-..." (quadratic). Minutes if it
    # were still quadratic; the bound only guards against that.
    import time

    from generator.kernel.errors import show
    assert set(credentials.ANCHORS) == {what for what, _ in credentials.KNOWN_TOKENS}
    start = time.monotonic()
    assert len(show("a-" * 4_500_000)) <= 200
    credentials.redact("a-" * 1_000_000 + "://")
    assert credentials.known_token("x" * 9_000_000) is None
    assert time.monotonic() - start < 20
    # The negative half: what the anchors let through is still found, at any place in a long text.
    for what, token in TOKENS.items():
        text = "a-" * 100_000 + " " + token + " " + "a-" * 100_000
        assert "<redacted>" in credentials.redact(text), what
        assert credentials.known_token(text) is not None, what
