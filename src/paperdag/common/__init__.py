"""Shared small language-model substrate reused by several papers.

- ``tokenizer``: a byte-level tokenizer (vocabulary 256, lossless for any UTF-8 text).
- ``corpus``: a real-text corpus that needs no download (the Python standard library's own source files), a
  deterministic file-level train/validation split, Parquet round trip, and fixed-length batch sampling.
- ``transformer``: a tiny decoder-only transformer (pre-norm, causal self-attention, MLP) in plain torch.
"""
