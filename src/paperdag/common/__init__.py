"""Shared substrate reused by several papers: a small language-model stack, its trivial baselines, across-seed
statistics and the claim model.

- ``tokenizer``: a byte-level tokenizer (vocabulary 256, lossless for any UTF-8 text).
- ``corpus``: a real-text corpus that needs no download (the Python standard library's own source files), a
  deterministic file-level train/validation split, Parquet round trip, and fixed-length batch sampling.
- ``transformer``: a tiny decoder-only transformer (pre-norm, causal self-attention, MLP) in plain torch.
- ``masked_diffusion``: a masked-diffusion language model's forward corruption and loss.
- ``ngram``: count bigram models (add-one, interpolated Witten-Bell), the strong trivial baseline of a byte-level
  language model.
- ``stats``: means over seeds with Student-t confidence intervals (``mean_ci``, ``paired_diff_ci``).
- ``verdicts``: the claim model (evidence, checks, preconditions) and the shared decision rules (superiority,
  non-inferiority, equivalence, trend, exact) every paper's ``claims.py`` uses.
"""
