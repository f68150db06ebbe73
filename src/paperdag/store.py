"""The content-addressed store every run path shares (CLI, Prefect, ``dvc repro``).

Layout under a local artifact root (a remote one, ``s3://bucket/prefix`` or any pyarrow.fs URI, keeps its files
content-addressed: ``paperdag.remote``)::

    .store/<paper>/<stage>/<key>/            a complete output: the stage's files + manifest.json + run.json
    .store/<paper>/<stage>/.tmp-<key>-<id>/  an output being written (never counts)

A scratch folder (``.tmp-*`` and ``.trash-*`` in the store, ``.scratch/.tmp-*`` for a remote store, a view's
``.<stage>.tmp-*``/``.old-*``) exists only while its writer holds the output's lock, and its name starts with the
output's key, so one whose lock nobody holds was left by a killed process: ``prepare``, run before each scheduling
loop, removes those.

An entry counts only when its ``manifest.json`` is well formed (its key, a non-empty ``files`` map of sha256 and
size, every output the stage declares among them) and every file it lists has the recorded sha256, so a crash or
Ctrl-C mid-stage never leaves an output that counts as done, and a corrupted or truncated entry is recomputed.
Entries are written to a temporary folder and renamed into place (manifest written last, so stores without atomic
rename stay safe), their files made read-only. A file lock per (paper, stage, key) keeps concurrent runs from
computing or writing one output twice.

Views heal: each time a run uses an entry, its view must hold exactly the entry's files (a hard link to each where
the view and the store share a filesystem; elsewhere a copy of the same size, hashed again when it is newer than the
entry); a missing, extra, replaced or edited file makes ``materialize`` swap in a fresh view. Views are hard links
rather than copies so that materialising costs no disk and no time whatever the outputs weigh; the entry files are
read-only so an edit through a view fails for ordinary users, and when one happens anyway (root, or a tool that
ignores permissions) the entry's hash check catches it and the entry is recomputed.

``manifest.json`` depends only on what was computed, so a deterministic stage recomputed gives a byte-identical
entry; when and where it ran goes to ``run.json``, which views (``artifacts/<paper>/<stage>``, DVC's outs) leave
out.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from paperdag import remote
from paperdag.remote import StoreUnavailable

MANIFEST = "manifest.json"
DOWNLOADS = ".download"  # under the local dir: a remote root's entries, fetched when used
SCRATCH = ".scratch"  # under the local dir: outputs being computed for a remote root
PROFILE_VIEWS = "profiles"  # under the local dir: other profiles' views, profiles/<profile>/<paper>/<stage>
RUN_FILE = "run.json"  # the facts of the run that produced an entry (time, host, versions): kept out of the views


def sha256_file(path: Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def hash_folder(folder: Path) -> dict[str, dict[str, Any]]:
    """``{relative path: {"sha256", "bytes"}}`` for every file under ``folder`` except the platform's two."""
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel not in (MANIFEST, RUN_FILE):
            files[rel] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
    return files


def manifest_problem(manifest: Any, key: str, outputs: Sequence[str] = ()) -> str | None:
    """Why a manifest cannot make its entry count (None when it can): not a mapping, another key, ``files`` missing,
    empty or malformed (each ``{"sha256": 64 hex digits, "bytes": int >= 0}``), or a declared output (a file, or a
    folder: a prefix) that it does not list."""
    if not isinstance(manifest, dict):
        return "not a JSON object"
    if manifest.get("key") != key:
        return "written for another key"
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return "lists no files"
    for rel, meta in files.items():
        ok = isinstance(meta, dict) and isinstance(meta.get("bytes"), int) and meta["bytes"] >= 0
        digest = meta.get("sha256") if isinstance(meta, dict) else None
        if not (ok and isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
            return f"a malformed entry for {rel!r}"
    missing = [o for o in outputs if o not in files and not any(r.startswith(o.rstrip("/") + "/") for r in files)]
    return f"does not list the declared outputs {missing}" if missing else None


def _is_uri(root: str) -> bool:
    return "://" in root and not root.startswith("file://")


def _not_writable(folder: Path, e: OSError) -> StoreUnavailable:
    return StoreUnavailable(f"{folder} is not writable ({e.strerror or e}): paperdag keeps its locks and outputs "
                            f"there; make it writable or set PAPERDAG_ARTIFACT_ROOT")


def _key_prefix(name: str, marker: str) -> str | None:
    """The 16-hex-digit key prefix after ``marker`` in a scratch folder's name (None: not a name paperdag gives)."""
    _, found, rest = name.partition(marker)
    prefix = rest.split("-", 1)[0]
    ok = found and len(prefix) == 16 and all(c in "0123456789abcdef" for c in prefix)
    return prefix if ok else None


class Store:
    """Stage outputs by (paper, stage, key), on the local disk or a pyarrow filesystem.

    ``local_dir`` is where locks live and where entries of a remote store are downloaded before use.
    """

    def __init__(self, root: str | Path, local_dir: Path):
        root = str(root)
        self.remote = _is_uri(root)
        self.local_dir = Path(local_dir)
        if self.remote:
            self.fs, base = remote.open_filesystem(root)  # only remote stores import pyarrow's filesystems
            self.base = base.rstrip("/") + "/.store"
        else:
            path = Path(root.removeprefix("file://")).resolve()
            self.fs, self.base = None, str(path / ".store")
        self.root = root

    # -- paths ---------------------------------------------------------------------------------------------------
    def entry_path(self, paper: str, stage: str, key: str) -> str:
        """Where the entry lives in the root (a local path, or a path of the remote filesystem)."""
        return f"{self.base}/{paper}/{stage}/{key}"

    def local_path(self, paper: str, stage: str, key: str, progress: Callable[[int], None] | None = None) -> Path:
        """A local folder holding the entry: the entry itself, or for a remote store its copy in the download cache
        (``.download/`` under ``local_dir``), fetched and hashed on first use (``remote.download_entry``)."""
        if not self.remote:
            return Path(self.entry_path(paper, stage, key))
        cached = self.local_dir / DOWNLOADS / paper / stage / key
        if not (cached / MANIFEST).is_file():
            manifest = self._read_json(paper, stage, key, MANIFEST)
            if manifest is None or manifest_problem(manifest, key) is not None:
                raise StoreUnavailable(f"{self.entry_path(paper, stage, key)} is not a complete entry of {self.root!r}")
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{key[:16]}-", dir=cached.parent))
            try:
                remote.download_entry(self.fs, self.base, self.entry_path(paper, stage, key), manifest["files"], tmp,
                                      progress)
                for path in tmp.rglob("*"):
                    if path.is_file():
                        path.chmod(0o444)
                if not (cached / MANIFEST).is_file():
                    shutil.rmtree(cached, ignore_errors=True)
                    os.replace(tmp, cached)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return cached

    # -- reading -------------------------------------------------------------------------------------------------
    def _read_json(self, paper: str, stage: str, key: str, name: str) -> dict[str, Any] | None:
        """A small JSON file of an entry (None when missing or unreadable); a remote root that cannot be reached
        is a ``StoreUnavailable`` line, never a silent "missing" that would recompute what cannot be stored."""
        path = f"{self.entry_path(paper, stage, key)}/{name}"
        if self.remote:
            return remote.read_json(self.fs, path, self.root)
        try:
            return json.loads(Path(path).read_bytes())
        except (OSError, ValueError):
            return None

    def lookup(self, paper: str, stage: str, key: str, verify: bool = True,
               outputs: Sequence[str] = ()) -> dict[str, Any] | None:
        """The manifest of a complete entry (with its ``run.json`` as ``"run"``), or None if missing, incomplete,
        malformed (``manifest_problem``, checked against the stage's declared ``outputs``) or corrupted (hash
        mismatch)."""
        manifest = self._read_json(paper, stage, key, MANIFEST)
        if manifest is None or manifest_problem(manifest, key, outputs) is not None:
            return None
        if self.remote:  # one small read: blobs are hashed when downloaded (remote.download_entry)
            return manifest | {"run": {}}
        if verify and not self.verify(paper, stage, key, manifest):
            return None
        return manifest | {"run": self._read_json(paper, stage, key, RUN_FILE) or {}}

    def run_facts(self, paper: str, stage: str, key: str) -> dict[str, Any]:
        """The entry's ``run.json`` (where, when, in which environment it was computed; {} when it has none)."""
        return self._read_json(paper, stage, key, RUN_FILE) or {}

    def past_runs(self, paper: str, stage: str) -> dict[str, dict[str, Any]]:
        """Key -> ``run.json`` of every entry of a stage on this machine (a local store's entries; for a remote
        root, those in the download cache): what planning estimates durations from. Unreadable ones are left out."""
        folder = self.local_dir / DOWNLOADS / paper / stage if self.remote else Path(self.base) / paper / stage
        found = {}
        for entry in folder.glob("[!.]*"):
            try:
                run = json.loads((entry / RUN_FILE).read_bytes())
            except (OSError, ValueError):
                continue
            if isinstance(run, dict):
                found[entry.name] = run
        return found

    def verify(self, paper: str, stage: str, key: str, manifest: dict[str, Any]) -> bool:
        """True when every file the manifest lists exists with its recorded size and sha256 (a local store)."""
        folder = Path(self.entry_path(paper, stage, key))
        for rel, meta in manifest["files"].items():
            path = folder / rel
            if not path.is_file() or path.stat().st_size != meta["bytes"] or sha256_file(path) != meta["sha256"]:
                return False
        return True

    # -- writing -------------------------------------------------------------------------------------------------
    @contextmanager
    def lock(self, paper: str, stage: str, key: str) -> Iterator[None]:
        """An exclusive file lock for one output, held while it is checked, computed and committed."""
        path = self.local_dir / ".locks" / f"{paper}.{stage}.{key[:24]}.lock"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            lock = FileLock(str(path))
            lock.acquire()
        except OSError as e:  # a read-only or full disk, no permission
            raise _not_writable(path.parent, e) from None
        try:
            yield
        finally:
            lock.release()

    def probe(self) -> None:
        """A remote root: one ``StoreUnavailable`` line unless it can be listed (``remote.probe``)."""
        remote.probe(self.fs, self.base, self.root)

    def prepare(self) -> int:
        """Before a run: one line (``StoreUnavailable``) if the lock folder or a local store is not writable or a
        remote root cannot be listed (``remote.probe``), then ``sweep``; returns how many stale scratch folders were
        removed."""
        if self.remote:
            self.probe()
        for folder in [self.local_dir / ".locks"] + ([] if self.remote else [Path(self.base)]):
            try:
                folder.mkdir(parents=True, exist_ok=True)
                fd, probe = tempfile.mkstemp(prefix=".probe-", dir=folder)
                os.close(fd)
                os.unlink(probe)
            except OSError as e:
                raise _not_writable(folder, e) from None
        return self.sweep()

    def sweep(self) -> int:
        """Remove scratch folders whose writer is gone: no process holds the lock of the output they were for."""
        candidates: list[tuple[Path, str]] = []  # (folder, glob of the lock files it may belong to)
        if not self.remote:
            # A store outside this project's artifacts/ may be shared with other projects, whose locks live in
            # their own folders: there, only scratch older than a day is judged stale.
            shared = not Path(self.base).is_relative_to(self.local_dir.resolve())
            for stage_dir in Path(self.base).glob("*/*"):
                paper, stage = stage_dir.parent.name, stage_dir.name
                for tmp in stage_dir.glob(".*"):
                    prefix = _key_prefix(tmp.name, ".tmp-") or _key_prefix(tmp.name, ".trash-")
                    if not prefix or not tmp.name.startswith((".tmp-", ".trash-")):
                        continue
                    try:
                        if shared and time.time() - tmp.stat().st_mtime < 86400:
                            continue
                    except OSError:
                        continue
                    candidates.append((tmp, f"{paper}.{stage}.{prefix}*.lock"))
        for tmp in (self.local_dir / SCRATCH).glob(".tmp-*"):
            if prefix := _key_prefix(tmp.name, ".tmp-"):
                candidates.append((tmp, f"*.{prefix}*.lock"))
        for tmp in (self.local_dir / DOWNLOADS).glob("*/*/.tmp-*"):  # downloads hold no lock: judged by age
            try:
                if time.time() - tmp.stat().st_mtime > 86400:
                    shutil.rmtree(tmp, ignore_errors=True)
            except OSError:
                continue
        for paper_dir in [*self.local_dir.glob("[!.]*"), *self.local_dir.glob(f"{PROFILE_VIEWS}/*/[!.]*")]:
            for tmp in paper_dir.glob(".*"):
                for marker in (".tmp-", ".old-"):
                    stage = tmp.name[1:].partition(marker)[0]
                    if stage and (prefix := _key_prefix(tmp.name, marker)):
                        candidates.append((tmp, f"{paper_dir.name}.{stage}.{prefix}*.lock"))
                        break
        removed = 0
        for tmp, pattern in candidates:
            if tmp.is_dir() and not self._held(pattern):
                shutil.rmtree(tmp, ignore_errors=True)
                removed += not tmp.exists()
        return removed

    def _held(self, pattern: str) -> bool:
        """Whether some process holds a lock file matching ``pattern`` (each tried once, without waiting)."""
        for path in (self.local_dir / ".locks").glob(pattern):
            lock = FileLock(str(path), timeout=0)
            try:
                lock.acquire()
            except (Timeout, OSError):
                return True  # held, or cannot tell: keep the folder
            lock.release()
        return False

    def scratch(self, paper: str, stage: str, key: str) -> Path:
        """A new empty local folder for a stage to write into (same filesystem as the store when local)."""
        parent = Path(self.entry_path(paper, stage, key)).parent if not self.remote else self.local_dir / SCRATCH
        parent.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=f".tmp-{key[:16]}-", dir=parent))
        folder.chmod(0o755)
        return folder

    def commit(self, folder: Path, manifest: dict[str, Any], run: dict[str, Any] | None = None) -> None:
        """Move a finished scratch folder into the store as a complete entry (manifest written last)."""
        paper, stage, key = manifest["paper"], manifest["stage"], manifest["key"]
        if run is not None:
            (folder / RUN_FILE).write_text(json.dumps(run, indent=2, sort_keys=True))
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
        target = self.entry_path(paper, stage, key)
        for path in folder.rglob("*"):
            if path.is_file():
                path.chmod(0o444)  # the entry is immutable; views hard-link these files
        if self.remote:  # blobs, then run.json, then the manifest; the folder becomes the download cache's copy
            remote.upload_entry(self.fs, self.base, target, folder, manifest["files"], root=self.root)
            cached = self.local_dir / DOWNLOADS / paper / stage / key
            cached.parent.mkdir(parents=True, exist_ok=True)
            if (cached / MANIFEST).is_file():
                shutil.rmtree(folder, ignore_errors=True)
            else:
                shutil.rmtree(cached, ignore_errors=True)
                os.replace(folder, cached)
            return
        if Path(target).exists():  # a stale or corrupted entry: move it aside, then replace
            trash = Path(tempfile.mkdtemp(prefix=f".trash-{key[:16]}-", dir=Path(target).parent))
            os.replace(target, trash / "old")
            shutil.rmtree(trash, ignore_errors=True)
        os.replace(folder, target)


NO_VIEW, OTHER_ENTRY = "no view yet", "the view holds another entry"  # what a first or a changed run finds
IDENTICAL_COPY = "is an identical copy"  # relinked without a word: no damage, just not the entry's own file


def view_differences(entry: Path, view: Path, files: dict[str, dict[str, Any]]) -> list[str]:
    """What ``view`` holds that is not exactly the entry (``files``: its manifest's), one short note each: the
    manifest, a file missing, extra or not a regular file, and a file that is not the entry's own: where view and
    store share a filesystem a different inode (an identical copy, as ``dvc commit`` leaves, or a replaced file,
    told apart by its sha256); elsewhere a different size, or a different sha256 when it is newer than the entry."""
    try:
        if (view / MANIFEST).read_bytes() != (entry / MANIFEST).read_bytes():
            return [OTHER_ENTRY]
        entry_time = (entry / MANIFEST).stat().st_mtime
        linked = view.stat().st_dev == entry.stat().st_dev
    except OSError:
        return [NO_VIEW]
    notes = []
    present = {p.relative_to(view).as_posix() for p in view.rglob("*") if not p.is_dir()} - {MANIFEST}
    notes += [f"{rel} is extra" for rel in sorted(present - set(files))]
    for rel, meta in files.items():
        try:
            got, own = (view / rel).lstat(), (entry / rel).stat()
        except FileNotFoundError:
            notes.append(f"{rel} is missing")
            continue
        if (got.st_ino, got.st_dev) == (own.st_ino, own.st_dev):
            continue
        if not stat.S_ISREG(got.st_mode):
            notes.append(f"{rel} was replaced")
        elif got.st_size != meta["bytes"]:
            notes.append(f"{rel} has {got.st_size} bytes, not {meta['bytes']}")
        elif linked:  # a copy where a link should be (`dvc commit` copies its outs): identical, or replaced
            same = sha256_file(view / rel) == meta["sha256"]
            notes.append(f"{rel} {IDENTICAL_COPY}" if same else f"{rel} was replaced")
        elif got.st_mtime > entry_time and sha256_file(view / rel) != meta["sha256"]:
            notes.append(f"{rel} was edited")
    return notes


def materialize(entry: Path, view: Path, files: dict[str, dict[str, Any]]) -> list[str]:
    """Make ``view`` (e.g. ``artifacts/<paper>/<stage>``) a copy of a store entry without its ``run.json``,
    swapped in atomically, unless it already is one (``view_differences`` is empty); returns the differences it
    repaired ([] when the view was right; ``[NO_VIEW]`` or ``[OTHER_ENTRY]`` when it was simply not this entry's).

    Files are hard-linked when possible (same filesystem), copied otherwise.
    """
    notes = view_differences(entry, view, files)
    if not notes:
        return []
    view.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{view.name}.tmp-{entry.name[:16]}-", dir=view.parent))
    tmp.chmod(0o755)
    try:
        for path in entry.rglob("*"):
            if path.relative_to(entry).as_posix() == RUN_FILE:
                continue
            dest = tmp / path.relative_to(entry)
            if path.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(path, dest)
            except OSError:
                shutil.copy2(path, dest)
        old = None
        if view.exists() or view.is_symlink():
            old = view.with_name(f".{view.name}.old-{entry.name[:16]}-{uuid.uuid4().hex[:8]}")
            os.replace(view, old)
        os.replace(tmp, view)
        if old is not None:
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink(missing_ok=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return notes
