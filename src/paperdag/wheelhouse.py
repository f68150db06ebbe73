"""An offline install: a folder of wheels for a node without a package index (``paperdag wheelhouse``).

The wheelhouse holds, for a target interpreter and platform, the wheels of the core (pyproject.toml's
``dependencies``), of the named papers' extras and of what they need, plus a wheel of paperdag itself built from
this checkout; copied to the node, ``pip install --no-index --find-links DIR 'paperdag[<slug>]'`` installs from it.
torch is never downloaded (the node brings its own build, CUDA included), nor what only torch needs (``nvidia-*``,
``triton``, sympy, ...); ``exclude`` leaves out more of what the node already has (e.g. its numpy, scipy, pyarrow).

It takes three pip calls: ``pip install --dry-run --report`` resolves the requirements for the target, with a
dependency-free stand-in wheel for torch so that no torch (and no CUDA wheel) is ever fetched or resolved;
``pip download --no-deps`` fetches the pinned wheels the kept packages need; ``pip wheel --no-deps`` builds
paperdag's from a copy of the checkout's packaged files. ``requirements`` alone (``--dry-run``) reads pyproject.toml and needs no index.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from paperdag.codehash import PACKAGE_ROOT
from paperdag.errors import EnvironmentProblem, UsageError

SOURCE_ROOT = PACKAGE_ROOT.parent.parent
NEVER = ("torch", "triton", "nvidia-*")  # the node's own torch build and its CUDA runtime
STAND_IN = "torch"  # resolved as a dependency-free stand-in, never downloaded
NOT_FOR_NODES = {"dev"}  # the test tools: the node runs papers, not the suite


@dataclass
class Selection:
    """What a wheelhouse is asked to hold: requirements by group (``core``, then each extra), names left out."""

    python: str
    platform: str
    groups: dict[str, list[Requirement]]
    exclude: list[str] = field(default_factory=list)

    def left_out(self, name: str) -> bool:
        """Whether ``name`` is never downloaded: torch and its CUDA stack, or excluded by the caller."""
        name = canonicalize_name(name)
        return any(name == p or (p.endswith("*") and name.startswith(p[:-1])) for p in (*NEVER, *self.exclude))


@dataclass
class Wheelhouse:
    """A built wheelhouse: its folder and, per group (``core``, each extra, ``paperdag``), the wheels it added."""

    folder: Path
    wheels: dict[str, list[Path]]

    def megabytes(self, group: str | None = None) -> float:
        """Total size of one group's wheels, or of all of them, in MB (10^6 bytes)."""
        paths = self.wheels[group] if group else [p for ps in self.wheels.values() for p in ps]
        return sum(p.stat().st_size for p in paths) / 1e6


def _project(root: Path) -> dict:
    path = root / "pyproject.toml"
    if not path.is_file():
        raise EnvironmentProblem(f"paperdag wheelhouse builds from a source checkout: no pyproject.toml in {root}")
    return tomllib.loads(path.read_text())["project"]


def _extra(extras: dict[str, list[str]], name: str, seen: frozenset[str] = frozenset()) -> list[Requirement]:
    """An extra's requirements, with the extras it names of paperdag itself (``paperdag[a,b]``) expanded."""
    found = []
    for line in extras[name]:
        req = Requirement(line)
        if canonicalize_name(req.name) == "paperdag":
            for inner in sorted(req.extras - seen - {name}):
                found += _extra(extras, inner, seen | {name})
        else:
            found.append(req)
    return found


def requirements(papers: Sequence[str], python: str, platform: str, exclude: Iterable[str] = (),
                 root: Path = SOURCE_ROOT) -> Selection:
    """The requirements a wheelhouse for ``papers`` holds (no index needed): the core, then each paper's extra
    (``all``: every paper's), torch and ``exclude`` left out. Unknown papers and Python versions outside
    ``requires-python`` are a ``UsageError``."""
    project = _project(root)
    if not re.fullmatch(r"3\.\d{1,2}", python):
        raise UsageError(f"--python {python!r}: give a CPython version as MAJOR.MINOR, e.g. 3.12")
    if not SpecifierSet(project.get("requires-python", "")).contains(f"{python}.0"):
        raise UsageError(f"--python {python}: paperdag needs Python {project['requires-python']}")
    extras = project.get("optional-dependencies", {})
    known = sorted(set(extras) - NOT_FOR_NODES)
    unknown = [p for p in papers if p not in known]
    if unknown:
        raise UsageError(f"no extra {', '.join(map(repr, unknown))} in pyproject.toml (known: {', '.join(known)})")
    selection = Selection(python, platform, {}, sorted({canonicalize_name(n) for n in exclude}))
    keep = [r for r in map(Requirement, project["dependencies"]) if not selection.left_out(r.name)]
    selection.groups["core"] = keep
    for name in dict.fromkeys(papers):
        selection.groups[name] = [r for r in _extra(extras, name) if not selection.left_out(r.name)]
    return selection


def _pip(args: Sequence[str], what: str) -> None:
    """Run pip; its failure is one ``EnvironmentProblem`` line with pip's own last error."""
    done = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR:")] or done.stderr.splitlines()
        raise EnvironmentProblem(f"pip could not {what}: {errors[-1] if errors else f'exit {done.returncode}'}")


LEGACY_MANYLINUX = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}


def platform_tags(platform: str) -> list[str]:
    """The wheel platform tags a node of ``platform`` installs: a ``manylinux_2_N`` node also takes every older
    glibc's wheels (pip's ``--platform`` does not widen the tag itself)."""
    found = re.fullmatch(r"manylinux_2_(\d+)_(\w+)", platform)
    if not found:
        return [platform]
    newest, arch = int(found.group(1)), found.group(2)
    tags = []
    for minor in range(newest, 4, -1):
        tags.append(f"manylinux_2_{minor}_{arch}")
        if minor in LEGACY_MANYLINUX:
            tags.append(f"{LEGACY_MANYLINUX[minor]}_{arch}")
    return tags


def _target(selection: Selection) -> list[str]:
    platforms = [arg for tag in platform_tags(selection.platform) for arg in ("--platform", tag)]
    return ["--only-binary=:all:", "--python-version", selection.python, *platforms, "--implementation", "cp"]


def stand_in(folder: Path, name: str = STAND_IN) -> Path:
    """A wheel named ``name``, at the version installed here, with no files and no dependencies: it satisfies
    requirements on a package the node brings itself, without fetching or resolving it."""
    try:
        version = re.sub(r"\+.*", "", metadata.version(name))
    except metadata.PackageNotFoundError:
        raise EnvironmentProblem(f"paperdag wheelhouse resolves against this interpreter's {name} version: "
                                 f"install {name} here first") from None
    dist = f"{canonicalize_name(name).replace('-', '_')}-{version}"
    path = folder / f"{dist}-py3-none-any.whl"
    meta = {f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
            f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: paperdag\nRoot-Is-Purelib: true\n"
                                       "Tag: py3-none-any\n"}
    with zipfile.ZipFile(path, "w") as wheel:
        for member, text in meta.items():
            wheel.writestr(member, text)
        record = f"{dist}.dist-info/RECORD"
        wheel.writestr(record, "".join(f"{member},,\n" for member in [*meta, record]))
    return path


def _marker_environment(python: str, platform: str) -> dict[str, str]:
    """The environment markers of CPython ``python`` on a wheel platform tag (linux, macOS or Windows)."""
    env = default_environment()
    env.update(python_version=python, python_full_version=f"{python}.0", implementation_name="cpython",
               platform_python_implementation="CPython")
    machine = re.sub(r"^(many|musl)linux_\d+_\d+_|^linux_|^macosx_\d+_\d+_|^win_?", "", platform)
    if platform.startswith("win"):
        env.update(sys_platform="win32", platform_system="Windows", os_name="nt",
                   platform_machine={"amd64": "AMD64", "": "x86"}.get(machine, machine.upper()))
    elif platform.startswith("macosx"):
        env.update(sys_platform="darwin", platform_system="Darwin", os_name="posix", platform_machine=machine)
    else:
        env.update(sys_platform="linux", platform_system="Linux", os_name="posix", platform_machine=machine)
    return env


@dataclass(frozen=True)
class Resolved:
    version: str
    requires: tuple[Requirement, ...]
    extras: frozenset[str]


def _resolve(selection: Selection, work: Path) -> dict[str, Resolved]:
    """Name -> the version pip resolves for the target, with its dependencies (torch as the stand-in)."""
    report = work / "report.json"
    roots = sorted({str(r) for reqs in selection.groups.values() for r in reqs})
    _pip(["install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report), *_target(selection),
          str(stand_in(work)), *roots],
         f"resolve the wheelhouse for CPython {selection.python} on {selection.platform}")
    found = {}
    for item in json.loads(report.read_text())["install"]:
        meta = item["metadata"]
        found[canonicalize_name(meta["name"])] = Resolved(
            meta["version"], tuple(map(Requirement, meta.get("requires_dist", []))),
            frozenset(item.get("requested_extras", [])))
    return found


def closure(roots: Iterable[Requirement], resolved: dict[str, Resolved], selection: Selection) -> set[str]:
    """The resolved packages ``roots`` need on the target, not descending into what is left out."""
    env = _marker_environment(selection.python, selection.platform)
    todo = [canonicalize_name(r.name) for r in roots]
    kept: set[str] = set()
    while todo:
        name = todo.pop()
        if name in kept or name not in resolved or selection.left_out(name):
            continue
        kept.add(name)
        dist = resolved[name]
        for req in dist.requires:
            if req.marker is None or any(req.marker.evaluate({**env, "extra": e}) for e in {"", *dist.extras}):
                todo.append(canonicalize_name(req.name))
    return kept


PACKAGED = ("pyproject.toml", "README.md", "src", "flows", "tasks")  # what pyproject.toml builds paperdag from


def _build_paperdag(root: Path, work: Path) -> Path:
    """paperdag's wheel, built from a copy of the checkout's packaged files (so no stale ``build/`` of an earlier
    build leaks into it and nothing is written into the checkout); returns its path in ``work``."""
    source = work / "source"
    for name in PACKAGED:
        if (root / name).is_dir():
            shutil.copytree(root / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif (root / name).is_file():
            source.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, source / name)
    _pip(["wheel", "--no-deps", "--no-build-isolation", "--quiet", "--wheel-dir", str(work), str(source)],
         "build paperdag's wheel")
    return next(work.glob("paperdag-*.whl"))


def build(folder: Path, selection: Selection, root: Path = SOURCE_ROOT) -> Wheelhouse:
    """Download the selection's wheels into ``folder`` (kept wheels already there are reused) and build
    paperdag's; returns what each group added."""
    with tempfile.TemporaryDirectory(prefix="paperdag-wheelhouse-") as tmp:
        resolved = _resolve(selection, Path(tmp))
        groups: dict[str, set[str]] = {}
        for group, reqs in selection.groups.items():
            groups[group] = closure(reqs, resolved, selection) - {n for g in groups.values() for n in g}
        pins = sorted(f"{name}=={resolved[name].version}" for names in groups.values() for name in names)
        folder.mkdir(parents=True, exist_ok=True)
        _pip(["download", "--no-deps", "--quiet", "--dest", str(folder), *_target(selection), *pins],
             f"download the wheelhouse's {len(pins)} wheels")
        built = _build_paperdag(root, Path(tmp))
        wheels = {"paperdag": [built.replace(folder / built.name)]}
    for group, names in groups.items():
        wheels[group] = [path for path in sorted(folder.glob("*.whl"))
                         if (w := parse_wheel_filename(path.name))[0] in names
                         and w[1] == Version(resolved[w[0]].version)]
    return Wheelhouse(folder, {group: wheels[group] for group in [*groups, "paperdag"]})


def plan_lines(selection: Selection, root: Path = SOURCE_ROOT) -> list[str]:
    """What a wheelhouse for ``selection`` holds, one line per group (``--dry-run``: nothing resolved)."""
    lines = [f"  {group}: {', '.join(map(str, reqs)) or 'nothing beyond the core'}"
             for group, reqs in selection.groups.items()]
    lines.append(f"  paperdag: its own wheel, built from {root}")
    return [*lines, left_out_line(selection)]


def left_out_line(selection: Selection) -> str:
    """The packages a wheelhouse never holds, and why."""
    excluded = f"; excluded (the node has them): {', '.join(selection.exclude)}" if selection.exclude else ""
    return f"  never downloaded: {', '.join(NEVER)} (the node's own torch) and what only they need{excluded}"


def summary_lines(house: Wheelhouse, selection: Selection) -> list[str]:
    """A built wheelhouse: wheels and MB per group, then the total."""
    width = max(map(len, house.wheels))
    lines = [f"  {group:<{width}} {len(paths):>3} wheel{'s' if len(paths) != 1 else ' '} "
             f"{house.megabytes(group):>7.1f} MB" for group, paths in house.wheels.items()]
    total = sum(map(len, house.wheels.values()))
    return [*lines, left_out_line(selection),
            f"wheelhouse {house.folder}: {total} wheels, {house.megabytes():.1f} MB for CPython {selection.python} "
            f"on {selection.platform}"]
