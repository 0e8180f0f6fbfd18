"""Which rules run and how loud they are: `--disable RULE`, `--enable RULE`, and
a config file in the repository (`.validate.yaml`, or `--config FILE`):

    disable: [PD002, SE]        # rule ids, or families (their two letters)
    enable: []                  # wins over disable for the ids or families it names
    severity: {PD001: error}    # error, warning or info

The command line wins over the file: `--enable X` turns on what the file disables,
`--disable X` turns off what it enables. Inline `# validate: ignore=RULE reason`
comments (generator/validate/loader.py) silence one object's findings."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..kernel import paths, userinput
from ..kernel.errors import SpecError
from .context import UsageError
from .findings import SEVERITIES

CONFIG_NAME = ".validate.yaml"
_KEYS = {"disable", "enable", "severity"}


@dataclass
class Selection:
    disabled: set[str] = field(default_factory=set)     # ids and families
    enabled: set[str] = field(default_factory=set)
    severities: dict[str, str] = field(default_factory=dict)
    source: str | None = None                           # the config file read, if any

    def on(self, rule: str) -> bool:
        """A rule id beats its family; at the same level, enable beats disable."""
        if rule in self.enabled:
            return True
        if rule in self.disabled:
            return False
        return rule[:2] in self.enabled or rule[:2] not in self.disabled

    def severity(self, rule: str, default: str) -> str:
        return self.severities.get(rule) or self.severities.get(rule[:2]) or default


def _names(value, where: str, known: set[str]) -> set[str]:
    if value is None:
        return set()
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split() if v]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where}: a list of rule ids (for example [PD002, SE])")
    out = {v.strip().upper() for v in value}
    unknown = sorted(v for v in out if v not in known and v not in {k[:2] for k in known})
    if unknown:
        raise UsageError(f"{where}: unknown rule {', '.join(unknown)} (gke-ml-platform validate --list-rules)")
    return out


def find_config(explicit: str | None) -> Path | None:
    if explicit:
        return Path(explicit)
    dirs = [Path.cwd()]
    try:   # then the platform repository's (the folder of the spec found from here upwards)
        dirs.append(paths.platform_dir())
    except paths.NoPlatform:
        pass
    for d in dirs:
        if (d / CONFIG_NAME).is_file():
            return d / CONFIG_NAME
    return None


def load(config: str | None, enable: list[str], disable: list[str], known: set[str]) -> Selection:
    sel = Selection()
    path = find_config(config)
    if path is not None:
        try:
            raw = userinput.load_mapping(path, "validate config")
        except SpecError as e:
            raise UsageError("\n".join(f"{e.source}: {p.message}" for p in e.problems)) from None
        extra = sorted(set(raw) - _KEYS)
        if extra:
            raise UsageError(f"{path}: unknown key {', '.join(extra)} (allowed: {', '.join(sorted(_KEYS))})")
        sel.source = str(path)
        sel.disabled = _names(raw.get("disable"), f"{path}: disable", known)
        sel.enabled = _names(raw.get("enable"), f"{path}: enable", known)
        sev = raw.get("severity") or {}
        if not isinstance(sev, dict):
            raise UsageError(f"{path}: severity: a mapping of rule id to error, warning or info")
        for rule, level in sev.items():
            _names([str(rule)], f"{path}: severity", known)
            if level not in SEVERITIES:
                raise UsageError(f"{path}: severity.{rule}: {level!r} is not one of {', '.join(SEVERITIES)}")
            sel.severities[str(rule).upper()] = level
    cli_enable = _names(list(enable or []), "--enable", known)
    cli_disable = _names(list(disable or []), "--disable", known)
    sel.disabled = (sel.disabled - cli_enable) | cli_disable
    sel.enabled = (sel.enabled - cli_disable) | cli_enable
    return sel
