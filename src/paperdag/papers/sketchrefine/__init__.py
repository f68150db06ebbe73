"""EditableSketch / SketchRefine (ICML 2026 submission): editable proof sketches for automated theorem proving.

Claim under test: refining a proof sketch by local, in-place edits that keep proved subgoals (SketchRefine) costs
fewer tokens than rebuilding immutable sketches and than Hilbert-like recursive regeneration, at an equal or better
pass rate (paper: 76.0% on FormalMath-Lite, +14.1 pp over DeepSeek-Prover-V2-671B whole-proof generation).

Methods: EditableSketch (sketch.py) and SketchRefine (search.py); baselines in search.py: whole-proof sampling
(pass@k), immutable sketches regenerated from scratch on any failure (Draft-Sketch-Prove style), Hilbert-like
recursive subtree regeneration (Varambally et al. 2025). One seeded stochastic proposer with controlled error rates,
whose repair is conditioned on the checker's counterexample (proposer.py), and one token budget for all; tokens are
counted emitted and emitted + read per call. This measures the sketch/edit framework, not a language model's skill.

Checker: z3 (z3-solver, nonlinear real arithmetic) with a deterministic resource limit (rlimit) per step, so that
goals need decomposition into lemmas (checker.py); every reported proof is re-checked from scratch (proofcheck.py),
again from the verify folder alone by ``paperdag verify sketchrefine`` (reverify.py).

Data: procedural theorems (theorems.py, benchmark.py): bounds on a DAG of definitions y_i = a_i b_i + c_i with a
hidden chain of interval lemmas, graded by chain length; kept only if z3 cannot prove the goal alone but proves
every reference step. prepare records the generator, seed, rejections, z3 version and the table's sha256.
"""
