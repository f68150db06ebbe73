"""diffusearch: MCTS over plan-and-infill slot orders for a masked diffusion LM (ICML 2026 submission).

Claim under test: searching the order in which a masked diffusion model (MDM) infills the slots of a plan with
Monte Carlo Tree Search (PUCT prior = slot confidence, look-ahead greedy completion, reward = the model's own
pseudo-likelihood of the completion) beats fixed-order plan-and-infill (paper: +8.0 pp average) and is at least on
par with autoregressive decoding (paper: +3.2 pp), at LLaDA/Dream-7B scale on MATH500, MBPP and others; larger
exploration constants matter more than more simulations; chosen orders are mostly sequential.
Here: a same-size MDM and AR transformer trained from scratch on straight-line programs mod 10.

Methods: DiffuSearch (mcts.py; PUCT as in Silver et al. 2017; its unstated conventions, the tie-break at N = 0, the Q
of unvisited edges and reward normalisation, are params). Baselines (decoding.py): AR greedy; MDM confidence
unmasking (Chang et al. 2022, MaskGIT; Nie et al. 2025, LLaDA); plan-and-infill with left-to-right, confidence
and random slot orders. MDM training: random-ratio masking (Sahoo et al. 2024, MDLM; common/masked_diffusion.py).
Regime (reference.py, study.py): a statement-count table (the trivial baseline); on fresh held-out programs every
slot order (dependency, best fixed, any-order oracle), forward one-hop and whether the MDM reads infilled operands.

Data: procedural straight-line programs (task.py), checkable by execution; the prepare stage records the
generator, seed and a sha256 of the table in provenance.json.
"""
