"""Byte-level tokenizer: token id = UTF-8 byte value, so the vocabulary is exactly 256 and decoding is lossless."""

from __future__ import annotations

import numpy as np

VOCAB_SIZE = 256


def encode(text: str) -> np.ndarray:
    """Token ids of ``text``: its UTF-8 bytes as a uint8 array."""
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8).copy()


def decode(ids: np.ndarray | list[int]) -> str:
    """Inverse of ``encode`` (invalid byte sequences are replaced, which only happens for sampled ids)."""
    return bytes(np.asarray(ids, dtype=np.uint8).tolist()).decode("utf-8", errors="replace")
