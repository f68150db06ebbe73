"""Shared substrate reused by several papers: a small language-model stack and across-seed statistics.

- ``tokenizer``: a byte-level tokenizer (vocabulary 256, lossless for any UTF-8 text).
- ``corpus``: a real-text corpus that needs no download (the Python standard library's own source files), a
  deterministic file-level train/validation split, Parquet round trip, and fixed-length batch sampling.
- ``transformer``: a tiny decoder-only transformer (pre-norm, causal self-attention, MLP) in plain torch.
- ``stats``: means over seeds with Student-t confidence intervals (``mean_ci``, ``paired_diff_ci``).
"""
