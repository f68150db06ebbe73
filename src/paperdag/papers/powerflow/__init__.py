"""PowerFlow (ICML 2026, Chen, Chen, Li & Huang, arXiv 2603.18363): unsupervised fine-tuning as matching the
alpha-power distribution p_alpha(y|q) ~ p_base(y|q)^alpha of the base model with GFlowNet Trajectory Balance.

Claims under test, exactly (by enumeration of every response) on a task small enough to list them all: TB reaches
its own target (KL); alpha > 1 raises accuracy above the base model and the RLIF baselines (10 paired seeds),
approaching supervised GRPO (against PowerFlow's own ceiling, its exact target); alpha < 1 applied to an aligned,
over-sharpened (GRPO-tuned) model raises its entropy keeping its accuracy (a Pareto shift); trajectory-level matching
shortens outputs at alpha > 1 while the length-aware objective keeps the length (judged on two task variants:
``chain``, where length and correctness go together, and ``lengths``, correct answers at every length).

Methods (objectives.py, loops.py): Trajectory Balance (Malkin et al. 2022) in two forms, trajectory-level (the
paper's Eq. 5, learned log Z(q)) and PowerFlow's length-aware LA-TB (Sec. 3.3: Z = Z'(q)^|y|, the log-mismatch
divided by |y|; exact forms and implied targets in objectives.py and exact.py); baselines with GRPO advantages (Shao et al. 2024; Dr. GRPO loss, Liu et al. 2025):
entropy minimisation (EM-RL, trajectory level, Agarwal et al. 2025), self-certainty (Intuitor, Zhao et al. 2025, in
its published GRPO form: per-response token mean, KL penalty to the base policy), both with the recipes' answer
requirement, majority vote (TTRL, Zuo et al. 2025) and supervised GRPO with the true reward. Model: the shared tiny
GPT (paperdag.common).

Data: procedural (task.py): prompts (a, b) in Z_5^2, answer (a + b) mod 5, responses of <= 4 digits then EOS;
the base model is pretrained on a per-prompt mixture of correct worked traces, short (often off-by-one) guesses and
uniform noise; the ``lengths`` variant's base model on responses of uniform length 1..4 whose last digit is the
answer (same mixture of answer kinds, independent of the length). prepare records the generator, seed and sha256
of its tables in provenance.json.
"""
