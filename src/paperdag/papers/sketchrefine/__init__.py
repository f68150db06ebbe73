"""EditableSketch / SketchRefine (ICML 2026 submission): editable proof sketches for automated theorem proving.

Claim under test: refining a proof sketch by local, in-place edits that keep proved subgoals (SketchRefine) costs
fewer tokens than rebuilding immutable sketches and than Hilbert-like recursive regeneration, at an equal or better
pass rate (paper: 76.0% on FormalMath-Lite, +14.1 pp over DeepSeek-Prover-V2-671B whole-proof generation).

Methods: EditableSketch (sketch.py) and SketchRefine (search.py); baselines in search.py: whole-proof sampling
(pass@k), immutable sketches regenerated from scratch on any failure (Draft-Sketch-Prove style), Hilbert-like
recursive subtree regeneration (Varambally et al. 2025). One proposer for all, a seeded error model, not an LLM
(proposer.py: controlled error rates, repair conditioned on the checker's counterexample), and one token budget for
all; tokens are counted emitted (the paper's unit) and emitted + read, every claim judged in both (claims.py). Every
claim is re-judged over a one-at-a-time grid of the three error rates (grid.py, x0.5 and x2). This measures the
sketch/edit framework, not a language model's skill: no offline proposer writes z3-checkable lemmas.

Checker: z3 (z3-solver, nonlinear real arithmetic) with a deterministic resource limit (rlimit) per step, so that
goals need decomposition into lemmas (checker.py); every reported proof is re-checked from scratch (proofcheck.py),
again from the verify folder alone by ``paperdag verify sketchrefine`` (reverify.py).

Data: procedural theorems (theorems.py, benchmark.py) graded by chain length, lemma range from the pilot sweep
(pilot.py, pilot.json); kept only if z3 cannot prove the goal alone but proves every reference step. prepare records
the generator, seed, rejections, z3 version and the table's sha256.
"""
