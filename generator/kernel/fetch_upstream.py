"""`gke-ml-platform crds` (the pinned CRDs) and `make crds` (also the tests'
files): download pinned upstream files of schemas/versions.yaml (crdFiles,
and testFiles) into the upstream data cache, checking each sha256
before it is written. Files already there with the pinned bytes are kept, so
the download happens once. Needs raw.githubusercontent.com, or a mirror with
the same paths in $UPSTREAM_BASE_URL; nothing else in the project downloads.

    python -m generator.kernel.fetch_upstream [DEST]    DEST: default $UPSTREAM_CACHE, else the per-user cache
    python -m generator.kernel.fetch_upstream --ensure  what `make test` runs first: use ../shared when
                                                 it is there, else fill the cache, else stop with
                                                 one line saying what is missing and how to get it"""
from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from . import crd_dirs, diskcache, upstream, versions

# Per socket operation: a machine without network access is told so within
# a minute, not after the default timeout of every file in turn.
TIMEOUT_S = 20
PARALLEL = 8

P = TypeVar("P", crd_dirs.PinnedFile, upstream.PinnedFile)


class FetchError(Exception):
    pass


def all_pinned() -> list[crd_dirs.PinnedFile]:
    """The CRD files the validator loads, relative to the CRD root."""
    return [crd_dirs.PinnedFile(rel, e["url"], e["sha256"]) for rel, e in sorted(versions.table()["crdFiles"].items())]


def _download(url: str, sha256: str) -> bytes:
    import urllib.request  # here, not at the top: every command registers `crds` (the http client is 10 ms)

    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:  # pinned URLs, sha256-checked below
            data = resp.read()
    except (OSError, ValueError) as e:   # URLError, HTTPError, timeouts; ValueError: a malformed URL
        raise FetchError(f"{url}: {getattr(e, 'reason', None) or e}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise FetchError(f"{url}: sha256 {digest} differs from the pin {sha256}; not written")
    return data


def fetch(dest: Path, files: Sequence[P], url_for: Callable[[P], str] = lambda f: f.url) -> tuple[int, int]:
    """(downloaded, already present). Files whose bytes already match are kept;
    the first failure stops the run (FetchError) with nothing wrong written."""
    from concurrent.futures import ThreadPoolExecutor, as_completed  # only when something is fetched

    todo = [f for f in files if not _matches(Path(dest) / f.rel, f.sha256)]

    def one(f: P) -> None:
        data = _download(url_for(f), f.sha256)
        diskcache.write_atomically(Path(dest) / f.rel, data)   # readers never see a partial file

    pool = ThreadPoolExecutor(PARALLEL)
    try:
        for future in as_completed([pool.submit(one, f) for f in todo]):
            future.result()
    finally:
        # On the first failure, drop the queued downloads instead of waiting
        # for each of them to time out as well.
        pool.shutdown(wait=True, cancel_futures=True)
    return len(todo), len(files) - len(todo)


def _matches(path: Path, sha256: str) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    except OSError:
        return False


def fill(dest: Path) -> tuple[int, int]:
    return fetch(dest, upstream.pinned(), upstream.download_url)


def ensure() -> int:
    """Exit status for `make test`: 0 when every pinned file is at hand (after
    downloading what the cache lacks), 2 with one line when it cannot be."""
    files = upstream.pinned()
    root = upstream.data_root()
    shared = upstream.shared_dir()
    if shared is not None and upstream.uses_shared():
        bad = upstream.not_present(root, files)
        if bad:
            print(f"upstream data: {len(bad)} of {len(files)} pinned files are missing from {root} or differ "
                  f"from their sha256 in schemas/versions.yaml (first: {bad[0].rel}); update that folder, or "
                  f"move it away (unset {upstream.SHARED_ENV}) so `make crds` fills {upstream.cache_dir()}",
                  file=sys.stderr)
            return 2
        print(f"upstream data: {len(files)} pinned files verified in {root}")
        return 0
    try:
        got, kept = fill(root)
    except FetchError as e:
        print(f"upstream data missing: {len(upstream.not_present(root, files))} of {len(files)} pinned CRD and "
              f"tutorial files are not in {root} and downloading them failed ({e}); either put the shared data "
              f"folder at {shared or '../shared'} (or set {upstream.SHARED_ENV}=DIR), or run `make crds` where "
              f"raw.githubusercontent.com is reachable (or set {upstream.BASE_URL_ENV} to a mirror)",
              file=sys.stderr)
        return 2
    print(f"upstream data: {got} downloaded, {kept} already in {root}, all sha256-verified")
    return 0


def register(sub) -> None:
    p = sub.add_parser("crds", help="download the pinned upstream CRDs into the per-user cache (sha256-checked, once)",
                       description="Download the upstream CRD files pinned in the tool's versions table (by URL and "
                       "sha256) into the per-user cache that validate and diff read, so that later runs work offline. "
                       "Files already there with the pinned bytes are kept. Downloads go to raw.githubusercontent.com, "
                       f"or to ${upstream.BASE_URL_ENV} in its place (a mirror with the same paths).")
    p.add_argument("dest", nargs="?", metavar="DIR",
                   help="data folder to fill (crds/ inside it; default: $UPSTREAM_CACHE, else the per-user cache)")
    p.add_argument("--all", action="store_true",
                   help="also the upstream test files this tool's own test suite compares with")
    p.set_defaults(func=command)


def command(args) -> int:
    dest = Path(args.dest) if args.dest else upstream.cache_dir()
    files = upstream.pinned() if args.all else upstream.pinned_crds()
    try:
        got, kept = fetch(dest, files, upstream.download_url)
    except FetchError as e:
        print(f"crds: {e}; nothing wrong was written. Retry where raw.githubusercontent.com is reachable, or set "
              f"{upstream.BASE_URL_ENV} to a mirror with its paths", file=sys.stderr)
        return 2
    print(f"crds: {got} downloaded, {kept} already present, all sha256-verified, under {dest / 'crds'}/")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--ensure"]:
        return ensure()
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print("usage: python -m generator.kernel.fetch_upstream [DEST] | --ensure", file=sys.stderr)
        return 2
    dest = Path(argv[0]) if argv else upstream.cache_dir()
    try:
        got, kept = fill(dest)
    except FetchError as e:
        print(f"crds: {e}", file=sys.stderr)
        return 2
    print(f"crds: {got} downloaded, {kept} already present, all sha256-verified, under {dest}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
