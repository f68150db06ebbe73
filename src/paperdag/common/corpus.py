"""A real-text corpus that ships with Python itself: the source files of a few standard-library packages.

No download: the files come from the running interpreter's standard library (``sysconfig.get_paths()["stdlib"]``),
so the corpus is fixed by the Python version, which ``collect_stdlib_corpus`` records together with a sha256 of the
text. Documents are whole files; a file goes to validation when the first 8 hex digits of sha256(relative path),
read as a fraction of 16**8, fall below ``val_fraction`` (deterministic and independent of the file list).
"""

from __future__ import annotations

import hashlib
import platform
import sysconfig
from pathlib import Path

import numpy as np
import torch

from paperdag.common.tokenizer import encode
from paperdag.io import read_table, write_table

DOC_SEPARATOR = "\n\n"


def stdlib_root() -> Path:
    """Folder of the running interpreter's standard library."""
    return Path(sysconfig.get_paths()["stdlib"])


def stdlib_files(packages: list[str], max_bytes: int) -> list[Path]:
    """Sorted ``*.py`` files of the given stdlib packages (or single modules), in package order, until ``max_bytes``.

    Test folders are skipped so the text is library code and docstrings. The file that crosses ``max_bytes`` is
    not included, so the total stays at most ``max_bytes``.
    """
    root = stdlib_root()
    chosen: list[Path] = []
    total = 0
    for name in packages:
        target = root / name
        files = sorted(target.rglob("*.py")) if target.is_dir() else [target.with_suffix(".py")]
        for f in files:
            if "test" in f.relative_to(root).parts[:-1] or not f.is_file():
                continue
            size = f.stat().st_size
            if total + size > max_bytes:
                return chosen
            chosen.append(f)
            total += size
    return chosen


def is_validation(rel_path: str, val_fraction: float) -> bool:
    """True when int(sha256(rel_path)[:8], 16) / 16**8 < val_fraction."""
    return int(hashlib.sha256(rel_path.encode()).hexdigest()[:8], 16) / 16**8 < val_fraction


def collect_stdlib_corpus(packages: list[str], max_bytes: int, val_fraction: float) -> dict[str, list]:
    """Columns ``path, split, text, n_bytes`` of the corpus documents (one row per source file)."""
    root = stdlib_root()
    rows: dict[str, list] = {"path": [], "split": [], "text": [], "n_bytes": []}
    for f in stdlib_files(packages, max_bytes):
        rel = f.relative_to(root).as_posix()
        text = f.read_text(encoding="utf-8")
        rows["path"].append(rel)
        rows["split"].append("val" if is_validation(rel, val_fraction) else "train")
        rows["text"].append(text)
        rows["n_bytes"].append(len(text.encode("utf-8")))
    return rows


def corpus_provenance(columns: dict[str, list]) -> dict[str, object]:
    """Where the corpus came from and a sha256 over (path, text) of every document, for the manifest."""
    h = hashlib.sha256()
    for path, text in zip(columns["path"], columns["text"], strict=True):
        h.update(path.encode() + b"\0" + text.encode("utf-8") + b"\0")
    return {
        "source": "CPython standard library source files (ships with the interpreter; no download)",
        "python_version": platform.python_version(),
        "stdlib_root": str(stdlib_root()),
        "n_documents": len(columns["path"]),
        "sha256": h.hexdigest(),
    }


def write_corpus(path: Path, columns: dict[str, list]) -> None:
    """Write the document table to Parquet."""
    write_table(path, columns)


def load_split_tokens(path: Path, split: str) -> np.ndarray:
    """All documents of ``split`` in table order, joined by a blank line, as byte-token ids (uint8)."""
    table = read_table(path).to_pydict()
    texts = [t for t, s in zip(table["text"], table["split"], strict=True) if s == split]
    if not texts:
        raise ValueError(f"{path}: no documents in split {split!r}")
    return encode(DOC_SEPARATOR.join(texts))


def sample_batch(
    tokens: np.ndarray, batch_size: int, context: int, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random windows: x = tokens[i : i + T], y = tokens[i + 1 : i + T + 1] for ``batch_size`` offsets i ~ U."""
    starts = torch.randint(0, len(tokens) - context - 1, (batch_size,), generator=gen)
    idx = starts[:, None] + torch.arange(context + 1)[None, :]
    window = torch.from_numpy(tokens)[idx].long()
    return window[:, :-1], window[:, 1:]


def fixed_batches(
    tokens: np.ndarray, n_batches: int, batch_size: int, context: int, seed: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``n_batches`` batches of random windows drawn once from a generator seeded with ``seed`` (a fixed eval set)."""
    gen = torch.Generator().manual_seed(seed)
    return [sample_batch(tokens, batch_size, context, gen) for _ in range(n_batches)]
