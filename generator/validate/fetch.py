"""`make crds`: download the pinned upstream CRD files of schemas/versions.yaml
(crdFiles) into a CRD directory, checking each sha256 before it is written.
Needs network access to raw.githubusercontent.com; nothing else in the
project downloads anything.

    python -m generator.validate.fetch DEST    (DEST: e.g. build/crds; then CRD_DIR=build/crds)"""
from __future__ import annotations

import hashlib
import os
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

from .. import crds, versions

TIMEOUT_S = 60


class FetchError(Exception):
    pass


def all_pinned() -> list[crds.PinnedFile]:
    return [crds.PinnedFile(rel, e["url"], e["sha256"]) for rel, e in sorted(versions.table()["crdFiles"].items())]


def fetch(dest: Path, files: list[crds.PinnedFile],
          url_for: Callable[[crds.PinnedFile], str] = lambda f: f.url) -> tuple[int, int]:
    """(downloaded, already present). Files whose bytes already match are kept."""
    got = kept = 0
    for f in files:
        target = Path(dest) / f.rel
        if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == f.sha256:
            kept += 1
            continue
        url = url_for(f)
        try:
            with urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:  # noqa: S310 (pinned https URLs)
                data = resp.read()
        except OSError as e:
            raise FetchError(f"{url}: {getattr(e, 'reason', e)}") from None
        digest = hashlib.sha256(data).hexdigest()
        if digest != f.sha256:
            raise FetchError(f"{url}: sha256 {digest} differs from the pin {f.sha256}; not written")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
        got += 1
    return got, kept


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m generator.validate.fetch DEST", file=sys.stderr)
        return 2
    dest = Path(argv[0])
    try:
        got, kept = fetch(dest, all_pinned())
    except FetchError as e:
        print(f"crds: {e}", file=sys.stderr)
        return 2
    print(f"crds: {got} downloaded, {kept} already present and verified, under {dest}/ "
          f"(use it with CRD_DIR={dest} or --crd-dir {dest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
