"""The content-addressed store every run path shares (CLI, Prefect, ``dvc repro``).

Layout under the artifact root (a local folder or any pyarrow.fs URI such as ``s3://bucket/prefix``)::

    .store/<paper>/<stage>/<key>/            a complete output: the stage's files + manifest.json + run.json
    .store/<paper>/<stage>/.tmp-<key>-<id>/  an output being written (never counts)

An entry counts only when its ``manifest.json`` exists and every file it lists has the recorded sha256, so a crash
or Ctrl-C mid-stage never leaves an output that counts as done, and a corrupted output is recomputed. Entries are
written to a temporary folder and renamed into place (manifest written last, so stores without atomic rename stay
safe). A file lock per (paper, stage, key) keeps concurrent runs from computing or writing one output twice.

``manifest.json`` depends only on what was computed, so a deterministic stage recomputed gives a byte-identical
entry; when and where it ran goes to ``run.json``, which views (``artifacts/<paper>/<stage>``, DVC's outs) leave
out.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from filelock import FileLock

MANIFEST = "manifest.json"
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


def _is_uri(root: str) -> bool:
    return "://" in root and not root.startswith("file://")


class Store:
    """Stage outputs by (paper, stage, key), on the local disk or a pyarrow filesystem.

    ``local_dir`` is where locks live and where entries of a remote store are downloaded before use.
    """

    def __init__(self, root: str | Path, local_dir: Path):
        root = str(root)
        self.remote = _is_uri(root)
        self.local_dir = Path(local_dir)
        if self.remote:
            import pyarrow.fs as pafs  # only remote stores need pyarrow's filesystems (local ones stay import-light)

            self.fs, base = pafs.FileSystem.from_uri(root)
            self.base = base.rstrip("/") + "/.store"
        else:
            path = Path(root.removeprefix("file://")).resolve()
            self.fs, self.base = None, str(path / ".store")
        self.root = root

    # -- paths ---------------------------------------------------------------------------------------------------
    def _entry(self, paper: str, stage: str, key: str) -> str:
        return f"{self.base}/{paper}/{stage}/{key}"

    def local_path(self, paper: str, stage: str, key: str) -> Path:
        """A local folder holding the entry (the entry itself, or a downloaded copy for remote stores)."""
        if not self.remote:
            return Path(self._entry(paper, stage, key))
        cached = self.local_dir / "download" / paper / stage / key
        if not (cached / MANIFEST).is_file():
            tmp = cached.with_name(f".tmp-{key}-{uuid.uuid4().hex[:8]}")
            tmp.mkdir(parents=True)
            import pyarrow.fs as pafs

            pafs.copy_files(self._entry(paper, stage, key), str(tmp), source_filesystem=self.fs,
                            destination_filesystem=pafs.LocalFileSystem())
            if not (cached / MANIFEST).is_file():
                shutil.rmtree(cached, ignore_errors=True)
                os.replace(tmp, cached)
            else:
                shutil.rmtree(tmp, ignore_errors=True)
        return cached

    # -- reading -------------------------------------------------------------------------------------------------
    def _read_json(self, paper: str, stage: str, key: str, name: str) -> dict[str, Any] | None:
        path = f"{self._entry(paper, stage, key)}/{name}"
        try:
            if not self.remote:
                return json.loads(Path(path).read_bytes())
            with self.fs.open_input_stream(path) as f:
                return json.loads(f.read())
        except (FileNotFoundError, OSError, json.JSONDecodeError):
            return None

    def lookup(self, paper: str, stage: str, key: str, verify: bool = True) -> dict[str, Any] | None:
        """The manifest of a complete entry (with its ``run.json`` as ``"run"``), or None if missing, incomplete or
        corrupted (hash mismatch)."""
        manifest = self._read_json(paper, stage, key, MANIFEST)
        if manifest is None or manifest.get("key") != key:
            return None
        if verify and not self.verify(paper, stage, key, manifest):
            return None
        return manifest | {"run": self._read_json(paper, stage, key, RUN_FILE) or {}}

    def verify(self, paper: str, stage: str, key: str, manifest: dict[str, Any]) -> bool:
        """True when every file the manifest lists exists with its recorded size and sha256."""
        if self.remote:  # sizes only: hashing a remote object means downloading it
            infos = self.fs.get_file_info([f"{self._entry(paper, stage, key)}/{rel}" for rel in manifest["files"]])
            return all(i.size == meta["bytes"] for i, meta in zip(infos, manifest["files"].values()))
        folder = Path(self._entry(paper, stage, key))
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
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path)):
            yield

    def scratch(self, paper: str, stage: str, key: str) -> Path:
        """A new empty local folder for a stage to write into (same filesystem as the store when local)."""
        parent = Path(self._entry(paper, stage, key)).parent if not self.remote else self.local_dir / "scratch"
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
        target = self._entry(paper, stage, key)
        if self.remote:
            self._upload(folder, target)
            shutil.rmtree(folder, ignore_errors=True)
            return
        if Path(target).exists():  # a stale or corrupted entry: move it aside, then replace
            trash = Path(tempfile.mkdtemp(prefix=f".trash-{key[:16]}-", dir=Path(target).parent))
            os.replace(target, trash / "old")
            shutil.rmtree(trash, ignore_errors=True)
        os.replace(folder, target)

    def _upload(self, folder: Path, target: str) -> None:
        import pyarrow.fs as pafs

        local = pafs.LocalFileSystem()
        self.fs.create_dir(target, recursive=True)
        for path in sorted(folder.rglob("*"), key=lambda p: p.name == MANIFEST):  # manifest last
            if path.is_file():
                dest = f"{target}/{path.relative_to(folder).as_posix()}"
                self.fs.create_dir(dest.rpartition("/")[0], recursive=True)
                pafs.copy_files(str(path), dest, source_filesystem=local, destination_filesystem=self.fs)


def materialize(entry: Path, view: Path) -> None:
    """Make ``view`` (e.g. ``artifacts/<paper>/<stage>``) a copy of a store entry without its ``run.json``,
    swapped in atomically.

    Files are hard-linked when possible (same filesystem), copied otherwise. Skipped when the view already holds
    this entry's manifest.
    """
    manifest_text = (entry / MANIFEST).read_text()
    if (view / MANIFEST).is_file() and (view / MANIFEST).read_text() == manifest_text:
        return
    view.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{view.name}.tmp-", dir=view.parent))
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
        if view.exists():
            old = view.with_name(f".{view.name}.old-{uuid.uuid4().hex[:8]}")
            os.replace(view, old)
        os.replace(tmp, view)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
