"""A shared artifact root on an object store (``s3://bucket/prefix``, or any other pyarrow.fs URI), the layout of
its entries and moving them in and out.

Layout under ``<root>/.store/``::

    <paper>/<stage>/<key>/manifest.json   the entry: written last, one small object
    <paper>/<stage>/<key>/run.json        where and when it was computed
    .blobs/<sha256[:2]>/<sha256>          the files, content-addressed, each one object written whole

An entry counts once its manifest exists. Every blob a manifest names is written before it, and a blob's name is
its content's sha256, so writers of the same key on two machines never mix their files: each manifest names blobs
that exist, and the last manifest written wins whole. A lookup is one small read (the manifest); a stage's files are
downloaded into the local cache (``artifacts/.download``) and hashed when something needs them.

S3 options come from the URI's query (``region``, ``scheme``, ``endpoint_override``, ``access_key``,
``secret_key``, ``session_token``, ``anonymous``) or the usual AWS variables; every request is bounded by
``PAPERDAG_STORE_TIMEOUT_S`` (default 10 s, two attempts), so an endpoint that does not answer costs seconds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from paperdag.errors import PaperdagError, env_seconds

BLOBS = ".blobs"
TIMEOUT_S = 10.0  # default of PAPERDAG_STORE_TIMEOUT_S
S3_OPTIONS = {"region", "scheme", "endpoint_override", "access_key", "secret_key", "session_token", "anonymous"}


class StoreUnavailable(PaperdagError):
    """The artifact root cannot be used: an unknown URI scheme, an unreachable filesystem, a bucket that does not
    exist, wrong credentials, a read-only folder (exit code 2: fix the environment and rerun; nothing was written)."""

    exit_code = 2


class DamagedEntry(PaperdagError):
    """A shared entry whose blob does not match its manifest (exit code 1): recompute it with ``--force``."""


def _first(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:200]


def open_filesystem(root: str) -> tuple[Any, str]:
    """The pyarrow filesystem and base path of a URI root, its errors as one line naming it. ``s3://`` gets bounded
    timeouts and retries (``PAPERDAG_STORE_TIMEOUT_S``); other schemes go through ``FileSystem.from_uri``."""
    import pyarrow.fs as pafs

    where = f"artifact root {root!r} (PAPERDAG_ARTIFACT_ROOT)"
    try:
        if root.startswith("s3://"):
            return _s3(root)
        return pafs.FileSystem.from_uri(root)
    except PaperdagError:
        raise
    except Exception as e:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ValueError for a bad root
        if "Unrecognized filesystem type" in _first(e):
            raise StoreUnavailable(f"{where} has an unknown scheme {root.split('://', 1)[0]!r}: use a folder or a "
                                   "pyarrow.fs URI (s3://, gs://, hdfs://, abfs://)") from None
        raise StoreUnavailable(f"{where} cannot be opened: {_first(e)}") from None


def _s3(root: str) -> tuple[Any, str]:
    import pyarrow.fs as pafs

    parts = urlsplit(root)
    options: dict[str, Any] = dict(parse_qsl(parts.query))
    unknown = set(options) - S3_OPTIONS
    if unknown or not parts.netloc:
        why = f"unknown option {sorted(unknown)[0]!r} (known: {', '.join(sorted(S3_OPTIONS))})" if unknown else \
            "no bucket"
        raise StoreUnavailable(f"artifact root {root!r} (PAPERDAG_ARTIFACT_ROOT): {why}")
    if "anonymous" in options:
        options["anonymous"] = options["anonymous"].lower() in ("1", "true", "yes")
    timeout = env_seconds("PAPERDAG_STORE_TIMEOUT_S", TIMEOUT_S)
    fs = pafs.S3FileSystem(**options, connect_timeout=timeout, request_timeout=timeout,
                           retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=2))
    return fs, f"{parts.netloc}{parts.path}".rstrip("/")


def probe(fs: Any, base: str, root: str) -> None:
    """One line (exit 2) unless the root can be listed: the bucket exists, the credentials are accepted, the
    endpoint answers within the timeout."""
    import pyarrow.fs as pafs

    bucket = base.split("/", 1)[0]
    try:
        info = fs.get_file_info(bucket)
    except OSError as e:
        raise unavailable(root, "cannot be listed", e) from None
    if info.type == pafs.FileType.NotFound:
        raise StoreUnavailable(f"artifact root {root!r} (PAPERDAG_ARTIFACT_ROOT): bucket {bucket!r} does not exist")


def unavailable(root: str, doing: str, e: BaseException) -> StoreUnavailable:
    """One line naming the root and what went wrong: refused credentials, an endpoint that does not answer, or
    the error itself (pyarrow's OSError carries the AWS error name in its text)."""
    text, where = _first(e), f"artifact root {root!r} (PAPERDAG_ARTIFACT_ROOT)"
    if any(w in text for w in ("ACCESS_DENIED", "InvalidAccessKeyId", "SignatureDoesNotMatch", "HTTP response code 403")):
        return StoreUnavailable(f"{where}: the credentials were refused ({text})")
    if any(w in text for w in ("NETWORK_CONNECTION", "curlCode", "timed out", "Timeout")):
        return StoreUnavailable(f"{where}: the endpoint does not answer ({text})")
    return StoreUnavailable(f"{where} {doing}: {text}")


def blob_path(base: str, sha256: str) -> str:
    return f"{base}/{BLOBS}/{sha256[:2]}/{sha256}"


def _put(fs: Any, path: str, data: bytes) -> None:
    with fs.open_output_stream(path) as out:
        out.write(data)


def upload_entry(fs: Any, base: str, entry: str, folder: Path, files: dict[str, dict[str, Any]],
                 progress: Callable[[int], None] | None = None, root: str = "") -> int:
    """Publish the local entry ``folder`` at ``entry``: the blobs the root lacks, then ``run.json``, then the
    manifest (last, so the entry never counts half-written); returns the bytes uploaded. The root out of reach
    midway is one ``StoreUnavailable`` line naming it (and no manifest was written)."""
    try:
        return _upload(fs, base, entry, folder, files, progress)
    except OSError as e:
        raise unavailable(root or base, f"did not take {entry} (nothing of it counts)", e) from None


def _upload(fs: Any, base: str, entry: str, folder: Path, files: dict[str, dict[str, Any]],
            progress: Callable[[int], None] | None) -> int:
    import pyarrow.fs as pafs

    paths = {rel: blob_path(base, meta["sha256"]) for rel, meta in files.items()}
    infos = {i.path: i for i in fs.get_file_info(list(dict.fromkeys(paths.values())))}
    sent = 0
    for rel, path in paths.items():
        info = infos[path]
        if info.type == pafs.FileType.File and info.size == files[rel]["bytes"]:
            continue  # content-addressed: already there
        fs.create_dir(path.rpartition("/")[0], recursive=True)
        pafs.copy_files(str(folder / rel), path, source_filesystem=pafs.LocalFileSystem(), destination_filesystem=fs)
        infos[path] = fs.get_file_info(path)
        sent += files[rel]["bytes"]
        if progress:
            progress(files[rel]["bytes"])
    fs.create_dir(entry, recursive=True)
    for name in ("run.json", "manifest.json"):
        if (folder / name).is_file():
            _put(fs, f"{entry}/{name}", (folder / name).read_bytes())
    return sent


def read_json(fs: Any, path: str, root: str) -> Any:
    """A small JSON object of the root (None when missing or not JSON); the root out of reach is one
    ``StoreUnavailable`` line naming it."""
    try:
        with fs.open_input_stream(path) as f:
            return json.loads(f.read())
    except (FileNotFoundError, ValueError):
        return None
    except OSError as e:
        raise unavailable(root, "cannot be read", e) from None


def download_entry(fs: Any, base: str, entry: str, files: dict[str, dict[str, Any]], dest: Path,
                   progress: Callable[[int], None] | None = None) -> int:
    """The entry's files (each blob, checked against its sha256), ``run.json`` and the manifest (last) into the
    empty folder ``dest``; returns the bytes downloaded. A blob that does not match is a ``DamagedEntry``."""
    got = 0
    for rel, meta in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        h = hashlib.sha256()
        try:
            with fs.open_input_stream(blob_path(base, meta["sha256"])) as src, open(target, "wb") as out:
                while block := src.read(1 << 20):
                    h.update(block)
                    out.write(block)
        except FileNotFoundError:
            raise DamagedEntry(f"{entry}: the blob of {rel} is missing; recompute it with `paperdag run ... "
                               "--force`") from None
        except OSError as e:
            raise StoreUnavailable(f"{entry}: downloading {rel} failed ({_first(e)})") from None
        if h.hexdigest() != meta["sha256"]:
            raise DamagedEntry(f"{entry}: {rel} does not match its sha256; recompute it with `paperdag run ... --force`")
        got += meta["bytes"]
        if progress:
            progress(meta["bytes"])
    for name in ("run.json", "manifest.json"):
        try:
            with fs.open_input_stream(f"{entry}/{name}") as src:
                (dest / name).write_bytes(src.read())
        except FileNotFoundError:
            if name == "manifest.json":
                raise
    return got
