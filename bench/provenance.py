"""What a result was measured on, and whether the code it measured has changed since.

`bench.common.save` adds `record(name)` to every result: the commit, a digest of each code path
the benchmark measures (`bench.measured` declares them, narrowly: a change elsewhere leaves the
figure current), the settings that matter with the values the run had, the `MEMORY_ENGINE_*`
variables it ran with and the versions of the packages its figures depend on. `drift(result)`
compares a saved result with the checkout: the paths whose files differ now (or are gone), the
settings whose default is no longer what the run used, or that nothing was recorded (a result
saved before records existed). `bench.report` marks those figures and `--check` fails on them.

A path's digest covers the names and contents of its files as git would commit them (tracked
and untracked-but-not-ignored; a walk of the folder where there is no git), so a rebuilt cache
or a `__pycache__` changes nothing, and an uncommitted edit does.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.measured import Measures, measures

ROOT = Path(__file__).resolve().parents[1]
GONE = "gone"  # the digest of a path that no longer exists
MIXED = "mixed"  # a path whose rows in one result were measured on different code
# Variables whose value is a secret: their names are recorded, never their values.
_SECRET_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD")


@dataclass(frozen=True)
class Drift:
    """How a saved result stands against the checkout."""

    recorded: bool  # False: saved before records existed; its code is unknown
    code: list[str] = field(default_factory=list)  # measured paths whose files changed or are gone
    settings: list[str] = field(default_factory=list)  # "name <as measured> → <default now>"

    @property
    def current(self) -> bool:
        return self.recorded and not self.code and not self.settings

    def reasons(self) -> list[str]:
        """What makes the result stale, in words; empty while it is current."""
        if not self.recorded:
            return ["no record of the code it measured (saved before records existed)"]
        reasons = []
        if self.code:
            reasons.append(f"code changed since: {', '.join(self.code)}")
        if self.settings:
            reasons.append(f"default changed since: {', '.join(self.settings)}")
        return reasons


def record(name: str, root: Path = ROOT) -> dict[str, Any]:
    """Provenance for a result of benchmark `name`, measured now in the checkout at `root`."""
    declared = measures(name)
    paths = [*declared.paths, *_running_script(root)] if declared else _undeclared(name, root)
    paths = list(dict.fromkeys(paths))
    settings = _settings((declared or Measures(())).settings)
    return {
        "commit": commit(root),
        "uncommitted": _uncommitted(paths, root),
        "declared": declared is not None,
        "code": digests(paths, root),
        "settings": settings,
        "not_default": _not_default(settings),
        "environment": environment(),
        "packages": _packages((declared or Measures(())).packages),
    }


def kept_origin(before: Mapping[str, Any] | None) -> dict[str, Any]:
    """What to record of an earlier run whose rows a new result keeps: its commit and its code
    (None: no record), that run's own kept rows' code merged in."""
    if not isinstance(before, Mapping):
        return {"commit": None, "code": None}
    return {"commit": before.get("commit"), "code": _with_kept(before)}


def drift(result: Mapping[str, Any], root: Path = ROOT) -> Drift:
    """How `result` stands against the code at `root` now."""
    saved = result.get("provenance")
    recorded = _with_kept(saved) if isinstance(saved, Mapping) else None
    if saved is None or recorded is None:
        return Drift(recorded=False)
    now = digests(recorded, root)
    changed = [path for path, digest in recorded.items() if now[path] != digest]
    return Drift(recorded=True, code=changed, settings=_defaults_moved(saved))


def _with_kept(saved: Mapping[str, Any]) -> dict[str, str] | None:
    """A result's measured code with that of the rows it kept from an earlier run: a path `mixed`
    where the two differ (it matches no checkout); None where either was not recorded."""
    if not isinstance(saved.get("code"), Mapping):
        return None
    code = dict(saved["code"])
    kept = saved.get("kept_rows_from")
    if kept is None:
        return code
    if not isinstance(kept, Mapping) or not isinstance(kept.get("code"), Mapping):
        return None
    for path, digest in kept["code"].items():
        code[path] = digest if code.get(path, digest) == digest else MIXED
    return code


def digests(paths: Iterable[str], root: Path = ROOT) -> dict[str, str]:
    """Each repository-relative path's digest: of the names and contents of its files."""
    listed = _files(root)
    out = {}
    for path in paths:
        inside = [f for f in listed if f == path or f.startswith(path.rstrip("/") + "/")]
        if not inside:
            out[path] = GONE
            continue
        sha = hashlib.sha256()
        for relative in inside:
            sha.update(relative.encode() + b"\0" + _content(root, relative))
        out[path] = sha.hexdigest()[:16]
    return out


def commit(root: Path = ROOT) -> str | None:
    """The checkout's commit, short; None outside git."""
    done = _git(root, "rev-parse", "--short", "HEAD")
    return done.strip() if done else None


def environment() -> dict[str, str]:
    """The `MEMORY_ENGINE_*` variables set for the run: secrets by name only, paths by their last part
    (results are committed: no machine's paths in them)."""
    out = {}
    for name in sorted(os.environ):
        if not name.startswith("MEMORY_ENGINE_"):
            continue
        value = os.environ[name]
        if any(word in name for word in _SECRET_WORDS):
            value = "[set]"
        elif os.path.isabs(value):
            value = f".../{Path(value).name}"
        out[name] = value
    return out


def clear() -> None:
    """Forget the listed files and their digests (a test that edits a checkout between two records)."""
    _files.cache_clear()
    _content.cache_clear()


@cache
def _content(root: Path, relative: str) -> bytes:
    return hashlib.sha256((root / relative).read_bytes()).digest()


@cache
def _files(root: Path) -> tuple[str, ...]:
    """Every file of the checkout as git would commit it, sorted; a walk where git cannot say."""
    listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if listed is not None:
        return tuple(sorted({name for name in listed.split("\0") if name and (root / name).is_file()}))
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        found += [os.path.relpath(os.path.join(folder, n), root) for n in names if not n.endswith(".pyc")]
    return tuple(sorted(name.replace(os.sep, "/") for name in found))


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def _uncommitted(paths: list[str], root: Path) -> list[str]:
    """The measured paths holding changes not in the commit (the digest still says what ran)."""
    status = _git(root, "status", "--porcelain", "-z", "--untracked-files=all", "--", *paths) or ""
    touched = [entry[3:] for entry in status.split("\0") if len(entry) > 3]
    return [p for p in paths if any(t == p or t.startswith(p.rstrip("/") + "/") for t in touched)]


def _running_script(root: Path) -> list[str]:
    """The benchmark's own module (`python -m bench....`): how it measures is part of the figure."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    if not main:
        return []
    path = Path(main).resolve()
    return [path.relative_to(root).as_posix()] if path.is_relative_to(root / "bench") else []


def _undeclared(name: str, root: Path) -> list[str]:
    print(
        f"warning: bench/measured.py declares no code for {name!r}: recording the whole engine as measured "
        "(any change to it will mark the figure stale; declare the paths it measures)",
        file=sys.stderr,
    )
    return ["layers/core/memory_engine", "memory_engine_app", "functions", *_running_script(root)]


def _settings(names: tuple[str, ...]) -> dict[str, Any]:
    """The named settings as the run's environment gave them."""
    if not names:
        return {}
    out: dict[str, Any] = {}
    for piece in setting_pieces():
        try:
            values = piece()
        except ValueError as error:  # an incomplete configuration: the defaults are what ran
            print(f"warning: settings not read ({error}); recording the defaults", file=sys.stderr)
            values = piece.model_construct()
        out.update({name: _plain(getattr(values, name)) for name in names if name in piece.model_fields})
    return {name: out[name] for name in names if name in out}


def setting_pieces() -> tuple[type[Any], ...]:
    """Where a measured setting lives: the shared settings, or a provider's own piece (read when
    that provider is chosen, e.g. EmbeddingGemma's dimension)."""
    from memory_engine.composition.providers.embedders import GemmaSettings
    from memory_engine.settings import Settings

    return (Settings, GemmaSettings)


def _not_default(settings: Mapping[str, Any]) -> list[str]:
    """The recorded settings the run had at another value than the default of its code."""
    return [name for name, value in settings.items() if value != _default(name)]


def _defaults_moved(saved: Mapping[str, Any]) -> list[str]:
    """The settings a run used at their default whose default is another value now (a run that set
    a value of its own says so in `not_default`, whatever the default does)."""
    own = set(saved.get("not_default") or ())
    moved = []
    for name, value in (saved.get("settings") or {}).items():
        now = _default(name)
        if name not in own and now != value:
            moved.append(f"{name} {value!r} → {now!r}")
    return moved


def _default(name: str) -> Any:
    for piece in setting_pieces():
        found = piece.model_fields.get(name)
        if found is not None:
            return _plain(found.default)
    return GONE


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Path):
        return f".../{value.name}"
    return str(value)


def _packages(names: tuple[str, ...]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out
