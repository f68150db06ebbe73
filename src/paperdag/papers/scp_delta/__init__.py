"""scp_delta (ICML 2026 submission): SCP-Delta_r, a near-access-free (NAF) defence against training-data extraction.

Claim under test: keeping the min-combined relative shift q_i / p0 only on a few influential tokens and smoothing
the rest back to a base model p0 gives much tighter NAF bounds than CP-Delta (paper: orders of magnitude), strong
protection against extraction, and little utility loss. Tightness: a model k-NAF against both shard models has
p <= e^k q_j for j = 1, 2, so k >= -log sum min(q1, q2), which CP-Delta attains token by token (certificate.py): no
method is tighter there. The claim is judged where it can hold: the excess over the sequence-level minimax bound
and the certificate against p0. Every certificate is exact: the 10^D codes of each canary prompt enumerated
(certify.py), stored with the weights and redone by ``paperdag verify scp_delta`` (reverify.py).

Methods: SCP-Delta_r (combine.py, our documented construction); baselines CP-Delta and CP-k (Vyas, Kakade & Barak
2023, ICML) and the unprotected q_full; attacks: exposure (Carlini et al. 2019, USENIX Security), greedy and sampled
completion (extraction.py).

Data (records.py, procedural, no download): private set = templated records plus secret D-digit canaries in two
disjoint shards, a few duplicated in both, and fresh held-out records in templates only the private set has (utility
with headroom over p0); public corpus = records and
canary-format lines of the same templates with names and codes disjoint from every private one, which pretrains p0
(in domain, never a private item).
prepare records the generators, seeds and sha256 hashes in provenance.json.
"""
