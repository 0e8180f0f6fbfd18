"""Upstream data from wherever it is: ../shared when present, else the cache
`make crds` fills from the pinned URLs (a local HTTP mirror on 127.0.0.1
stands in for raw.githubusercontent.com here), else one line saying what is
missing and the two ways to provide it, before any test runs."""
from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from generator.kernel import fetch_upstream, paths, upstream, versions
from tests import helpers


def _env(tmp_path: Path, base_url: str | None) -> dict:
    """No shared-data folder (SHARED_DIR names an empty one), an empty cache."""
    (tmp_path / "no-shared").mkdir(exist_ok=True)
    env = dict(os.environ, SHARED_DIR=str(tmp_path / "no-shared"), UPSTREAM_CACHE=str(tmp_path / "cache"))
    env.pop("CRD_DIR", None)
    if base_url:
        env["UPSTREAM_BASE_URL"] = base_url
    return env


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/"   # nothing listens once closed


def _ensure(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "generator.kernel.fetch_upstream", "--ensure"], env=env, cwd=paths.ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def test_every_pinned_file_is_pinned_once_with_an_upstream_url():
    files = upstream.pinned()
    assert len({f.rel for f in files}) == len(files)
    assert all(f.url.startswith(upstream.UPSTREAM_BASE) and len(f.sha256) == 64 for f in files)
    # The golden tests' inputs and the validator's CRDs are all there.
    rels = {f.rel for f in files}
    assert "reference/kubernetes-engine-samples/ai-ml/mix-train-and-inference/workloads/cluster-queue.yaml" in rels
    assert {f"crds/{r}" for r in versions.table()["crdFiles"]} <= rels


def test_the_data_in_use_matches_every_pin():
    """What the suite reads (../shared here) is byte for byte what the pins download."""
    root = upstream.data_root()
    for f in upstream.pinned():
        assert hashlib.sha256((root / f.rel).read_bytes()).hexdigest() == f.sha256, f.rel


def test_data_root_prefers_a_shared_folder_with_crds(tmp_path, monkeypatch):
    monkeypatch.setenv("SHARED_DIR", str(tmp_path / "shared"))
    monkeypatch.setenv("UPSTREAM_CACHE", str(tmp_path / "cache"))
    assert upstream.data_root() == tmp_path / "cache"          # no shared folder
    (tmp_path / "shared").mkdir()
    assert upstream.data_root() == tmp_path / "cache"          # a folder without crds/ is not one
    (tmp_path / "shared" / "crds").mkdir()
    assert upstream.data_root() == tmp_path / "shared"
    monkeypatch.delenv("SHARED_DIR")
    monkeypatch.delenv("UPSTREAM_CACHE")
    assert upstream.shared_dir() == paths.ROOT.parent / "shared"      # run from this checkout
    monkeypatch.setenv("GENERATOR_CACHE_DIR", str(tmp_path / "user-cache"))
    assert upstream.cache_dir() == tmp_path / "user-cache" / "upstream"   # the per-user cache
    monkeypatch.setattr(paths, "INSTALLED", True)
    assert upstream.shared_dir() is None                                  # an installed tool never looks beside itself


def test_mirror_url_replaces_only_the_upstream_host(monkeypatch):
    f = upstream.PinnedFile("crds/x.yaml", "https://raw.githubusercontent.com/org/repo/v1/x.yaml", "0" * 64)
    monkeypatch.delenv("UPSTREAM_BASE_URL", raising=False)
    assert upstream.download_url(f) == f.url
    monkeypatch.setenv("UPSTREAM_BASE_URL", "http://127.0.0.1:8000/mirror/")
    assert upstream.download_url(f) == "http://127.0.0.1:8000/mirror/org/repo/v1/x.yaml"


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> tuple[Path, list[subprocess.CompletedProcess]]:
    """`make test`'s data step twice, with no shared folder and a mirror for the downloads."""
    tmp = tmp_path_factory.mktemp("filled")
    with helpers.upstream_mirror() as base:
        env = _env(tmp, base)
        return tmp, [_ensure(env), _ensure(env)]


def test_without_shared_data_the_cache_is_filled_once_from_the_pinned_urls(filled):
    tmp, (first, second) = filled
    n = len(upstream.pinned())
    assert first.returncode == 0, first.stderr
    assert first.stdout == f"upstream data: {n} downloaded, 0 already in {tmp / 'cache'}, all sha256-verified\n"
    assert second.stdout == f"upstream data: 0 downloaded, {n} already in {tmp / 'cache'}, all sha256-verified\n"
    assert upstream.not_present(tmp / "cache") == []


def test_a_download_that_is_not_the_pinned_bytes_is_refused(tmp_path):
    victim = upstream.pinned()[0]
    path = victim.url[len(upstream.UPSTREAM_BASE):]
    edited = (helpers.SHARED / victim.rel).read_bytes() + b"# edited\n"
    with helpers.upstream_mirror({path: edited}) as base, pytest.raises(fetch_upstream.FetchError) as e:
        fetch_upstream.fetch(tmp_path, [victim], lambda f: base + path)
    assert str(e.value).endswith(f"differs from the pin {victim.sha256}; not written")
    assert not (tmp_path / victim.rel).exists()


def test_offline_without_shared_data_make_stops_with_one_line(tmp_path):
    env = _env(tmp_path, _closed_port())
    venv = Path(sys.executable).parent.parent
    # -o: this suite's venv stands for the installed one; never reinstall into it from here.
    result = subprocess.run(["make", "-s", "--no-print-directory", "-o", f"{venv}/.generator", "upstream-data",
                             f"VENV={venv}"],
                            env=env, cwd=paths.ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode != 0
    (line,) = [x for x in result.stderr.splitlines() if not x.startswith("make")]
    n = len(upstream.pinned())
    assert line.startswith(f"upstream data missing: {n} of {n} pinned CRD and tutorial files are not in "
                           f"{tmp_path / 'cache'} and downloading them failed (")
    assert line.endswith(f"either put the shared data folder at {tmp_path / 'no-shared'} (or set SHARED_DIR=DIR), "
                         "or run `make crds` where raw.githubusercontent.com is reachable "
                         "(or set UPSTREAM_BASE_URL to a mirror)")


def test_pytest_alone_stops_before_collecting(tmp_path):
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_upstream.py"],
                            env=_env(tmp_path, None), cwd=paths.ROOT, capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "upstream data: 134 pinned files missing" in result.stderr.replace(str(len(upstream.pinned())), "134")
    assert "run `make crds`" in result.stderr and "passed" not in result.stdout


def test_validate_reads_crds_from_the_cache(filled, capsys, monkeypatch):
    """With no shared folder, `validate` finds the CRDs where `make crds` put them."""
    tmp, _ = filled
    monkeypatch.setenv("SHARED_DIR", str(tmp / "no-shared"))
    monkeypatch.setenv("UPSTREAM_CACHE", str(tmp / "cache"))
    monkeypatch.delenv("CRD_DIR", raising=False)
    good = paths.ROOT / "tests" / "validate_corpus" / "KQ001" / "good.yaml"
    code, out, err = helpers.run_cli(capsys, "validate", "--spec", helpers.FIXTURE_SPEC, good)
    assert code == 0, out + err
    monkeypatch.setenv("UPSTREAM_CACHE", str(tmp / "empty-cache"))
    monkeypatch.setenv("UPSTREAM_BASE_URL", _closed_port())   # offline
    code, _, err = helpers.run_cli(capsys, "validate", "--spec", helpers.FIXTURE_SPEC, good)
    n = len(upstream.pinned_crds())
    (line,) = err.splitlines()
    assert code == 2 and line.startswith(f"validate: upstream CRDs missing: {n} of {n} pinned CRD files are not in "
                                         f"{tmp / 'empty-cache' / 'crds'} and downloading them failed (")
    assert line.endswith("run `gke-ml-platform crds` where raw.githubusercontent.com is reachable (or set "
                         "UPSTREAM_BASE_URL to a mirror with its paths), or pass --crd-dir DIR (or set CRD_DIR) to a "
                         "folder holding them")
    assert not (tmp / "empty-cache" / "crds").exists() or not any((tmp / "empty-cache" / "crds").rglob("*.yaml"))


def test_validate_fills_an_empty_cache_once_when_online(tmp_path, capsys, monkeypatch):
    """The README's quick start runs no `crds`: the first validate downloads the pinned CRDs itself."""
    _env(tmp_path, None)
    monkeypatch.setenv("SHARED_DIR", str(tmp_path / "no-shared"))
    monkeypatch.setenv("UPSTREAM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CRD_DIR", raising=False)
    good = paths.ROOT / "tests" / "validate_corpus" / "KQ001" / "good.yaml"
    with helpers.upstream_mirror() as base:
        monkeypatch.setenv("UPSTREAM_BASE_URL", base)
        code, out, err = helpers.run_cli(capsys, "validate", "--spec", helpers.FIXTURE_SPEC, good)
    assert code == 0, out + err
    n = len(upstream.pinned_crds())
    assert err == f"upstream data: downloaded {n} pinned CRD files (sha256-checked) into {tmp_path / 'cache' / 'crds'}\n"
    assert upstream.not_present(tmp_path / "cache", upstream.pinned_crds()) == []
    monkeypatch.setenv("UPSTREAM_BASE_URL", _closed_port())   # the second run needs no network
    code, out, err = helpers.run_cli(capsys, "validate", "--spec", helpers.FIXTURE_SPEC, good)
    assert code == 0 and err == "", out + err


def test_crds_command_fills_the_cache_with_the_pinned_crds(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("UPSTREAM_CACHE", str(tmp_path / "cache"))
    n = len(upstream.pinned_crds())
    with helpers.upstream_mirror() as base:
        monkeypatch.setenv("UPSTREAM_BASE_URL", base)
        assert helpers.run_cli(capsys, "crds")[:2] == (0, f"crds: {n} downloaded, 0 already present, all "
                                                          f"sha256-verified, under {tmp_path / 'cache' / 'crds'}/\n")
        assert helpers.run_cli(capsys, "crds")[1].startswith(f"crds: 0 downloaded, {n} already present")
    assert upstream.not_present(tmp_path / "cache", upstream.pinned_crds()) == []
    assert not (tmp_path / "cache" / "reference").exists()   # the tests' files only with --all
    monkeypatch.setenv("UPSTREAM_BASE_URL", _closed_port())
    (tmp_path / "cache" / upstream.pinned_crds()[0].rel).unlink()
    code, out, err = helpers.run_cli(capsys, "crds")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and err.startswith("crds: http://127.0.0.1:")


def test_fetch_fills_a_named_folder(tmp_path, monkeypatch, capsys):
    some = upstream.pinned()[:3]
    monkeypatch.setattr(upstream, "pinned", lambda: some)
    with helpers.upstream_mirror() as base:
        monkeypatch.setenv("UPSTREAM_BASE_URL", base)
        assert fetch_upstream.main([str(tmp_path / "dest")]) == 0
    assert upstream.not_present(tmp_path / "dest", some) == []
    assert capsys.readouterr().out == f"crds: 3 downloaded, 0 already present, all sha256-verified, under {tmp_path / 'dest'}/\n"
    assert fetch_upstream.main(["--bogus"]) == 2
