"""Pieces of the validator: quantities, paths, the secret heuristic, TPU slice
shapes, the CRD pins and their cache, `make crds`, and that every rule's
corpus entry depends on that rule (switch the rule off and its test fails)."""
from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
from decimal import Decimal

import pytest

from generator.kernel import catalog, crd_dirs, quantity, schemacheck, versions
from generator.kernel.credentials import looks_like_token
from generator.kernel.errors import format_path
from generator.kernel.fetch_upstream import FetchError, all_pinned, fetch
from generator.validate.rules import RULES
from generator.validate.rules.tpu import slice_chips
from tests import helpers
from tests.test_validate_corpus import CORPUS, case, expected, found, header, run


# Worked out by hand from the Kubernetes API reference, "Quantity": binary suffixes
# Ki..Ei are powers of 2**10, decimal suffixes n u m k M G T P E powers of 10**3, and
# e/E followed by a number is a decimal exponent ("1E" alone is the exa suffix).
@pytest.mark.parametrize("q, value", [
    ("0", "0"), ("1", "1"), ("500m", "0.5"), ("0.5", "0.5"), ("2.5", "2.5"), ("1Ki", "1024"),
    ("30Gi", "32212254720"), ("1e3", "1000"), ("1E3", "1000"), ("1.5e-3", "0.0015"), ("100M", "100000000"),
    ("1G", "1000000000"), ("2T", "2000000000000"), ("12n", "0.000000012"), ("7u", "0.000007"), ("1k", "1000"),
    ("3Ei", "3458764513820540928"), ("1E", "1000000000000000000"), (".5", "0.5"), ("+4", "4"), (4, "4"),
    (2.5, "2.5"),
])
def test_quantity_values_from_the_api_reference(q, value):
    assert quantity.parse(q) == Decimal(value)


@pytest.mark.parametrize("q", ["", "abc", "1.2.3", "5Gb", True, "1 Gi", "lots", float("nan"), None, [1]])
def test_quantity_rejects(q):
    with pytest.raises(ValueError):
        quantity.parse(q)


def test_quantity_format():
    # Kubernetes' canonical form (apimachinery resource/quantity.go: "1.5 will be serialized as
    # "1500m"", "1.5Gi will be serialized as "1536Mi""; the exponent as large as possible).
    assert [quantity.show("cpu", Decimal(v)) for v in (8, "0.5", "1.5", 1000)] == ["8", "500m", "1500m", "1k"]
    assert quantity.show("memory", Decimal("1.5") * 2**30) == "1536Mi"
    assert quantity.show("memory", Decimal(32 * 2**30)) == "32Gi"


def test_format_path():
    assert format_path(("spec", "template", "metadata", "labels", "kueue.x-k8s.io/queue-name")) == \
        'spec.template.metadata.labels["kueue.x-k8s.io/queue-name"]'
    assert format_path(("spec", "containers", 0, "resources", "requests", "ephemeral-storage")) == \
        "spec.containers[0].resources.requests.ephemeral-storage"


@pytest.mark.parametrize("value, token", [
    ("hf_AbCdEfGh12345678", True), ("0123456789abcdef", True), ("s3cr3t-passw0rd", True),
    ("$(HF_TOKEN)", False), ("${TOKEN}", False), ("<your token>", False), ("/var/run/secrets/key", False),
    ("https://example.com/x", False), ("12345678", False), ("short", False), ("two words here", False), ("false", False),
])
def test_token_heuristic(value, token):
    assert looks_like_token(value) is token
    assert looks_like_token(value, stand_ins_allowed=True) is token   # each of these mixes letters and digits


def test_tpu7x_slice_shapes_come_from_the_catalog():
    tpu = catalog.tpu_generation("tpu7x")
    # TPU7x dynamic slicing codelab: sub-slices 2x2x1 .. 2x4x4, whole 4x4x4 cubes.
    for shape, chips in (("2x2x1", 4), ("2x2x2", 8), ("2x2x4", 16), ("2x4x4", 32)):
        assert slice_chips(tpu, shape) == chips
    assert slice_chips(tpu, "4x4x4") == 64 and slice_chips(tpu, "4x4x8") == 128
    for bad in ("8x4x4", "2x2x3", "2x2", "axbxc"):
        assert slice_chips(tpu, bad) is None, bad
    # pods per slice = chips / chips per VM: 2x2x2 is 2 pods of 4, as the dynamic-slicing codelab runs it
    assert slice_chips(tpu, "2x2x2") // tpu.machines[0].chips == 2


def test_every_pinned_crd_dir_has_files_and_they_match_upstream_copies():
    """Every combination of pinned releases resolves to hash-checked files, with upstream URLs at the tag."""
    root = helpers.CRD_ROOT
    for kueue in versions.known("kueue"):
        for jobset in versions.known("jobset"):
            for lws in versions.known("lws"):
                dirs = crd_dirs.dirs_for(kueue, jobset, lws, root)
                files = crd_dirs.pinned_files([d.relative_to(root).as_posix() for d in dirs])
                assert crd_dirs.verified(root, files)
    for f in all_pinned():
        assert f.url.startswith("https://raw.githubusercontent.com/") and f.url.endswith("/" + f.rel.rsplit("/", 1)[1])
        assert hashlib.sha256((root / f.rel).read_bytes()).hexdigest() == f.sha256
        doc = (root / f.rel).read_text()
        assert "kind: CustomResourceDefinition" in doc


def test_unpinned_dir_is_refused():
    with pytest.raises(crd_dirs.CrdFileError, match="no crdFiles pinned under gateway-api/v1.6.1/experimental/"):
        crd_dirs.pinned_files(["gateway-api/v1.6.1/experimental"])


def test_index_cache_is_keyed_by_content_and_rebuilt_when_bad(tmp_path, monkeypatch):
    monkeypatch.setenv("GENERATOR_CACHE_DIR", str(tmp_path))
    root = helpers.CRD_ROOT
    files = crd_dirs.verified(root, crd_dirs.pinned_files(["kueue/" + versions.default("kueue")]))
    schemacheck._pinned_index.cache_clear()
    first = schemacheck._pinned_index(files)
    (cached,) = tmp_path.glob("crd-index-*.json")
    assert json.loads(cached.read_text())
    schemacheck._pinned_index.cache_clear()
    assert schemacheck._pinned_index(files) == first            # from the cache
    cached.write_text("{not json")
    schemacheck._pinned_index.cache_clear()
    assert schemacheck._pinned_index(files) == first            # rebuilt
    assert json.loads(cached.read_text())
    assert ("kueue.x-k8s.io/v1beta2", "ClusterQueue") in first
    schemacheck._pinned_index.cache_clear()


def test_fetch_downloads_and_checks(tmp_path):
    pins = [f for f in all_pinned() if f.rel.startswith("argo-cd/")]
    local = lambda f: (helpers.CRD_ROOT / f.rel).as_uri()   # noqa: E731  (no network in tests)
    assert fetch(tmp_path, pins, local) == (len(pins), 0)
    for f in pins:
        assert (tmp_path / f.rel).read_bytes() == (helpers.CRD_ROOT / f.rel).read_bytes()
    assert fetch(tmp_path, pins, local) == (0, len(pins))
    wrong = [dataclasses.replace(pins[0], sha256="0" * 64)]
    (tmp_path / pins[0].rel).unlink()
    with pytest.raises(FetchError, match="differs from the pin"):
        fetch(tmp_path, wrong, local)
    assert not (tmp_path / pins[0].rel).exists()
    with pytest.raises(FetchError):
        fetch(tmp_path, [dataclasses.replace(pins[0], rel="x/missing.yaml")],
              lambda f: (tmp_path / "nowhere.yaml").as_uri())


MAX_PAIR_DIFF = 10  # changed lines between a rule's bad.yaml and good.yaml, comments aside


def _lines(path):
    """The lines of a corpus file, or of a group's files (one per cluster) in name order."""
    files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    return [line for f in files for line in f.read_text().splitlines() if not line.lstrip().startswith("#")]


@pytest.mark.parametrize("rule", sorted(r for r in RULES if (CORPUS / r).is_dir()))
def test_each_rule_bites_at_its_threshold(rule):
    """bad.yaml and good.yaml are a minimal pair: a few lines apart (just past the rule's
    threshold and just before it), the rule fires on one with exactly the expected findings
    and is quiet on the other (tests/test_validate_corpus.py checks both reports in full).
    A rule that fires on both, on neither, or only on inputs far apart fails here."""
    bad, good = case(rule, "bad"), case(rule, "good")
    changed = [line for line in difflib.unified_diff(_lines(bad), _lines(good), lineterm="", n=0)
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert 0 < len(changed) <= MAX_PAIR_DIFF, "\n".join(changed)
    args = " ".join(header(bad, "args")).split()
    fired = {f for f in found(run(bad, args)) if f[0] == rule}
    assert fired == expected(bad)
    good_args = " ".join(header(good, "args") or header(bad, "args")).split()
    assert not {f for f in found(run(good, good_args)) if f[0] == rule}


@pytest.mark.parametrize("layer, rules", [("schema", ("SC001", "SC002", "SC003", "SC004"))])
def test_schema_layer_bites(layer, rules, monkeypatch):
    from generator.validate import schema
    monkeypatch.setattr(schema, "check", lambda schemas, obj: [])
    for rule in rules:
        bad = CORPUS / rule / "bad.yaml"
        assert not found(run(bad, [])) & expected(bad), rule


# ------------------------------------------------------------------ speed-ups that must not change findings

_DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                                   "ports": [{"containerPort": 80}],
                                                   "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                                                   "readinessProbe": {"httpGet": {"path": "/", "port": 80}}}]}}}}


def _broken_deployments():
    """(what is wrong, the object): one mistake each, in fields the core schemas define by $ref."""
    def edit(fn):
        o = json.loads(json.dumps(_DEPLOYMENT))
        fn(o)
        return o
    c = lambda o: o["spec"]["template"]["spec"]["containers"][0]   # noqa: E731
    return [
        ("replicas as a string", edit(lambda o: o["spec"].__setitem__("replicas", "2"))),
        ("unknown container field", edit(lambda o: c(o).__setitem__("imagePullPolice", "Always"))),
        ("container without a name", edit(lambda o: c(o).pop("name"))),
        ("a request that is no quantity", edit(lambda o: c(o)["resources"]["requests"].__setitem__("cpu", "lots"))),
        ("probe port as a list", edit(lambda o: c(o)["readinessProbe"]["httpGet"].__setitem__("port", [80]))),
        ("unknown metadata field", edit(lambda o: o["metadata"].__setitem__("lables", {}))),
        ("selector as a list", edit(lambda o: o["spec"].__setitem__("selector", []))),
    ]


def _errors(validator, obj) -> list[tuple]:
    from generator.validate.schema import _message
    return [(tuple(e.absolute_path), e.validator, _message(e))
            for e in sorted(validator.iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path])]


def test_inlined_core_schema_finds_what_its_references_find():
    # schemacheck builds a core kind's validator with the bundled schema's $refs replaced by the
    # definitions they name (schemacheck._inline_refs). The reference: jsonschema resolving the
    # same files' $refs itself, through a registry, as before.
    from referencing import Registry, Resource

    minor = str(versions.table()["kubernetes"]["default"])
    folder = schemacheck._core_dir(minor)
    defs = json.loads((folder / "_definitions.json").read_text())
    defs["$defs"][schemacheck._QUANTITY_DEF][schemacheck.QUANTITY_KEYWORD] = True
    plain = schemacheck._CoreValidator(json.loads((folder / "deployment-apps-v1.json").read_text()),
                                       registry=Resource.from_contents(defs) @ Registry())
    inlined = schemacheck._core_validator(minor, "apps/v1", "Deployment")
    assert "$ref" in plain.schema["properties"]["spec"] and "$ref" not in inlined.schema["properties"]["spec"]
    assert _errors(plain, _DEPLOYMENT) == _errors(inlined, _DEPLOYMENT) == []
    for what, obj in _broken_deployments():
        found = _errors(inlined, obj)
        assert found, what                                   # the mistake is found
        assert found == _errors(plain, obj), what            # as the references find it


def test_folder_context_filtered_once_keeps_the_folder_order_without_the_own_file():
    # Model.context_where (KQ030's Kueue Configuration lookup): the other files' objects that
    # the test keeps, in the folder's order, the file's own objects left out; the same as
    # filtering Model.context.
    from generator.validate.objects import Folder, Model, Obj

    def cm(name, source):
        return Obj(-1, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}, source)
    objs = [cm("a", "d/1.yaml"), cm("kueue-manager-config", "d/2.yaml"), cm("b", "d/2.yaml"),
            cm("kueue-manager-config", "d/3.yaml"), cm("c", "d/4.yaml")]
    folder = Folder(objs)
    keep = lambda o: o.name in ("kueue-manager-config", "c")   # noqa: E731
    for own, want in [("d/1.yaml", [objs[1], objs[3], objs[4]]), ("d/2.yaml", [objs[3], objs[4]]),
                      ("d/4.yaml", [objs[1], objs[3]])]:
        model = Model([o for o in objs if o.source == own], folder=folder, own=own)
        assert model.context_where("test", keep) == want
        assert [o for o in model.context if keep(o)] == want


def test_model_lookup_by_name_and_namespace():
    """Model.get: the first object of the kind with that name (in that namespace when one is
    given), in input order; a namespaced object without one is in the model's namespace."""
    from generator.validate.objects import Model, Obj

    def lq(name, ns=None, queue="cq"):
        meta = {"name": name, **({"namespace": ns} if ns else {})}
        return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue", "metadata": meta,
                "spec": {"clusterQueue": queue}}
    bodies = [lq("lq", "a", "first"), lq("lq", "b"), lq("lq", "a", "second"), lq("other"), lq({"odd": 1}, "a")]
    model = Model([Obj(i, b) for i, b in enumerate(bodies)], namespace="team")
    get = model.get
    assert get("kueue.x-k8s.io", "LocalQueue", "lq", "a").body is bodies[0]
    assert get("kueue.x-k8s.io", "LocalQueue", "lq", "b").body is bodies[1]
    assert get("kueue.x-k8s.io", "LocalQueue", "lq").body is bodies[0]
    assert get("kueue.x-k8s.io", "LocalQueue", "other", "team").body is bodies[3]
    assert get("kueue.x-k8s.io", "LocalQueue", "other", "default") is None
    assert get("kueue.x-k8s.io", "LocalQueue", "lq", "c") is None
    assert get("kueue.x-k8s.io", "ClusterQueue", "lq") is None
    assert get("kueue.x-k8s.io", "LocalQueue", {"odd": 1}, "a").body is bodies[4]   # not a string: looked through
