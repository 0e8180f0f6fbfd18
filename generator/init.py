"""`gke-ml-platform init [--example NAME] [DIR]`: a new platform repository.

It holds the user's spec (a copy of one of the tool's examples), the
scenarios whose expectations hold for that spec, the tool's source in
requirements.txt (--tool-source), a CI workflow, a .gitignore and a short
README, rendered from the Jinja2 templates of generator/template/. The
examples are the flat files examples/<name>.yaml of this repository, their
scenarios examples/scenarios/<name>/<profile>/*.yaml: a new example needs no
code here. init writes sources only and runs no synth: it stays instant,
offline and Node-free, and `gke-ml-platform synth` is the first command of the
new repository (its README and the CI say so)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import __version__, toolsource
from .kernel import paths

# One GKE Standard cluster with on-demand H100s serving and Spot L4s fine-tuning behind one
# ClusterQueue: the common mixed training-and-serving platform, and one that needs neither a TPU
# reservation nor a second cluster to try. Its scenario shows serving scaling up within its quota.
DEFAULT_EXAMPLE = "h100-l4-spot"
TEMPLATE = paths.PACKAGE / "template"
WORKFLOW = ".github/workflows/platform.yaml"
# The files rendered from generator/template/<name>.j2, by the path they get in the repository.
TEMPLATES = {"requirements.txt": "requirements.txt.j2", WORKFLOW: "ci.yaml.j2", ".gitignore": "gitignore.j2",
             "README.md": "README.md.j2"}


class InitError(Exception):
    """Cannot init: one line, exit 2."""


def examples() -> dict[str, Path]:
    """Every example spec by name (examples/<name>.yaml)."""
    return {p.stem: p for p in sorted(paths.EXAMPLES.glob("*.yaml"))}


def scenarios_of(name: str) -> Path:
    return paths.EXAMPLES / "scenarios" / name


def _spec_files(spec_text: str) -> list[str]:
    """The files the spec names relative to itself (the `file` of `manifest` workloads), kept inside the repository."""
    from .kernel import stamp, yamlio
    return stamp.named_files(yamlio.load_strict(spec_text))


def _summary(spec: Path) -> str:
    """The first sentence of the example's opening comment: what it shows."""
    words = []
    for line in spec.read_text().splitlines():
        # The opening paragraph only: a blank comment line or an indented one (a table) ends it.
        if not line.startswith("#") or not line.lstrip("#").strip() or line.startswith(("#  ", "#\t")):
            break
        words.append(line.lstrip("#").strip())
    text = " ".join(w for w in words if w)
    # A sentence ends at a full stop before a capital letter (or a `command`), not at an abbreviation (i.e., e.g.).
    end = re.search(r"(?<!\bi\.e)(?<!\be\.g)\.\s+(?=[A-Z`])", text)
    return text if end is None else text[:end.start() + 1]


CONSTRUCTS = "constructs/example.py"


def render(template: str, **values) -> str:
    """One template, every variable it uses given (StrictUndefined: a missing one is an error)."""
    import jinja2
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False)
    return env.get_template(template).render(**values)


def files(example: str, name: str = "platform", source: toolsource.ToolSource | None = None,
          constructs: bool = False) -> dict[str, str]:
    """The new repository's files, relative path -> text; `name`: the repository's (its folder's);
    with `constructs`, an example constructs file named in the spec (docs/constructs.md)."""
    known = examples()
    if example not in known:
        raise InitError(f"no example {example!r}; the examples are: {', '.join(known)} (init --list-examples)")
    out = {paths.SPEC_NAME: known[example].read_text()}
    for rel in _spec_files(out[paths.SPEC_NAME]):   # a `manifest` workload's file, beside the spec
        out[rel] = (paths.EXAMPLES / rel).read_text()
    scen = scenarios_of(example)
    for f in sorted(scen.glob("*/*.yaml")):
        out[f"{paths.SCENARIOS}/{f.relative_to(scen).as_posix()}"] = f.read_text()
    values = {"version": __version__, "example": example, "name": name, "source": source or toolsource.placeholder()}
    for rel, template in TEMPLATES.items():
        out[rel] = render(template, **values)
    if constructs:
        out[CONSTRUCTS] = (TEMPLATE / "constructs.py").read_text()
        out[paths.SPEC_NAME] = (out[paths.SPEC_NAME].rstrip("\n") + "\n\n# Your own cdk8s constructs, added to "
                                f"the generator's app (documentation page 'Your own constructs').\nconstructs: [{CONSTRUCTS}]\n")
    return out


def create(target: Path, example: str, git: bool = True, source: toolsource.ToolSource | None = None,
           constructs: bool = False) -> list[str]:
    """Write the repository into `target` (new, or an empty folder); nothing half-written on failure."""
    target = target.absolute()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        what = "is not a folder" if not target.is_dir() else f"is not empty (it has {next(iter(sorted(os.listdir(target))))})"
        raise InitError(f"{target} {what}; init writes a new platform repository into a new or empty folder only")
    content = files(example, target.name, source, constructs)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.init-", dir=target.parent))
    try:
        for rel, text in content.items():
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).write_text(text)
        if target.exists():   # empty, checked above (perhaps the working directory): fill it
            for entry in sorted(os.listdir(staging)):
                os.rename(staging / entry, target / entry)
            staging.rmdir()
        else:
            umask = os.umask(0)
            os.umask(umask)
            staging.chmod(0o777 & ~umask)   # mkdtemp's folder is private; the repository is an ordinary one
            os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if git and shutil.which("git") and not _inside_git(target):
        subprocess.run(["git", "init", "-q", str(target)], check=False, capture_output=True)
        subprocess.run(["git", "-C", str(target), "symbolic-ref", "HEAD", "refs/heads/main"],
                       check=False, capture_output=True)
    return sorted(content)


def _inside_git(d: Path) -> bool:
    r = subprocess.run(["git", "-C", str(d), "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True,
                       check=False)
    return r.returncode == 0 and r.stdout.strip() == "true"


def register(sub) -> None:
    p = sub.add_parser("init", help="create a new platform repository (spec, scenarios, CI) from an example",
                       description=__doc__.split("\n\n", 1)[1])
    p.add_argument("dir", nargs="?", default=".", metavar="DIR", help="new or empty folder (default: this one)")
    p.add_argument("--example", default=DEFAULT_EXAMPLE, metavar="NAME",
                   help=f"example spec to start from (default: {DEFAULT_EXAMPLE}; --list-examples shows them)")
    p.add_argument("--list-examples", action="store_true", help="list the examples and exit")
    p.add_argument("--tool-source", metavar="SOURCE",
                   help="where CI installs the tool from, written to requirements.txt: a wheel file, an https URL of "
                   "a wheel (with #sha256=HEX), git+https://HOST/REPO.git@TAG, pypi, or a package index's https URL "
                   "(default: a placeholder that synth warns about)")
    p.add_argument("--no-git", action="store_true", help="do not run `git init` in the new folder")
    p.add_argument("--constructs", action="store_true",
                   help=f"also write {CONSTRUCTS}, your own cdk8s constructs, and name it in the spec")
    p.set_defaults(func=command)


def command(args) -> int:
    if args.list_examples:
        for name, spec in examples().items():
            default = " (default)" if name == DEFAULT_EXAMPLE else ""
            print(f"{name}{default}: {_summary(spec)}")
        return 0
    try:
        source = toolsource.parse(args.tool_source)
        written = create(Path(args.dir), args.example, git=not args.no_git, source=source,
                         constructs=args.constructs)
    except (InitError, toolsource.SourceError) as e:
        print(f"init: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"init: cannot write {args.dir}: {e.strerror or e}", file=sys.stderr)
        return 2
    where = paths.shown(Path(args.dir).absolute())
    print(f"init: wrote a platform repository from example {args.example} in {where}/: {', '.join(written)}")
    if source.placeholder:
        print(f"init: warning: requirements.txt names no source for the tool yet (a placeholder CI cannot install); "
              f"put yours there ({toolsource.FORMS}), or run init with --tool-source", file=sys.stderr)
    cd = "" if where == "." else f"cd {where} && "
    print(f"next: {cd}gke-ml-platform synth && gke-ml-platform validate && gke-ml-platform plan")
    return 0
