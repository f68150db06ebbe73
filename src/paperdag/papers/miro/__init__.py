"""MIRO: multi-reward conditioned pre-training of a text-to-image generator (ICML 2026 submission; Dufour et al.).

Claim under test: conditioning the generator on a vector of several reward scores during training (instead of
filtering the data by one reward, or conditioning on one) gives higher scores on every reward, keeps diversity,
reaches the baselines' quality in fewer steps (paper: up to 19x) and raises GenEval compositional accuracy
(paper: 0.75), while each reward stays controllable through its target.

Methods (methods.py): MIRO, a conditional flow-matching generator (flow.py; rectified flow, Liu et al. 2023,
Lipman et al. 2023) conditioned on the caption and on all quantile-binned rewards, sampled at the top bins with
guidance against (empty caption, lowest bins); baselines on the same network and budget: no reward conditioning
with classifier-free guidance (Ho & Salimans 2022), aesthetic-style filtering to the top fraction by one reward,
and single-reward conditioning.

Data (scenes.py): procedural 16x16 captioned two-object scenes with web-like imperfect pairs (wrong caption, blur,
noise, dull colours); rewards (rewards.py), each ranking every corruption it can see below clean: a detector trained
here on clean renders (detector.py), a hand-written composition checker, denoised Laplacian sharpness, denoised
contrast + saturation less grain, and a signal-to-noise ratio. GenEval-like checks come from a second detector
trained on disjoint renders (no reward uses it). Nothing is downloaded; prepare records the generator, seed and
sha256 of the dataset in provenance.json.
"""
