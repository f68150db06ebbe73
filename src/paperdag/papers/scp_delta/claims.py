"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

Over seeds every comparison is a Student-t interval (paperdag.common.stats) judged by a shared rule
(paperdag.common.verdicts). Preconditions, before a claim is judged:

- competence: each fine-tuned model (q1, q2, q_full) beats the count byte bigram of its own training bytes on
  held-out records (paperdag.common.ngram, the strongest trivial baseline of a byte language model);
- the base model p0, which SCP-Delta_r falls back to, is in the private domain: it beats the count bigram of the
  private shards on held-out records (an out-of-domain p0 makes every fallback pay for the domain, not for SCP);
- the mechanism can act: each shard model memorised its own canaries (there is something to protect);
- headroom: CP-Delta's certificate is above the minimax lower bound -log Z that binds every method by the claimed
  factor (analysis.py; by the minimax argument it is 1, so the shard-safe tightness claim cannot be judged).
"""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import Interval, mean_ci, paired_diff_ci
from paperdag.common.verdicts import (
    Claim,
    all_of,
    check,
    evidence,
    noninferiority,
    precondition,
    superiority,
)

from .params import ClaimParams

BIGRAM = "the count byte bigram (add-one or Witten-Bell, the better) of the model's training bytes"
PAPER_BOUND = "orders of magnitude better NAF bounds than CP-Delta (LLM fine-tuning)"
FINE_TUNED = ("q1", "q2", "q_full")


def _nats(v: np.ndarray) -> dict[str, float | list[float]]:
    return mean_ci(v).rounded()


def preconditions(iv: dict[str, Interval], nll: dict[str, np.ndarray], headroom: np.ndarray, leak: float,
                  p: ClaimParams) -> list[Claim]:
    """Competence of the fine-tuned models and of the base model in the private domain, memorisation, headroom."""
    own = {q: iv[f"exposure_{q}_own"] for q in ("q1", "q2")}
    return [
        precondition("fine_tuned_models_beat_bigram", "q1, q2 and q_full each have a lower held-out record NLL than "
                     "the count bigram of their own training shards (paired over seeds)", BIGRAM,
                     {m: {"model_nll": _nats(nll[m]), "bigram_nll": _nats(nll[f"bigram_{m}"])} for m in FINE_TUNED},
                     all_of({m: superiority(paired_diff_ci(nll[m], nll[f"bigram_{m}"]), direction="below",
                                              what=f"{m} - bigram NLL") for m in FINE_TUNED})),
        precondition("base_model_in_domain", "the base model p0 (the safe model SCP-Delta_r falls back to) has a "
                     "lower held-out record NLL than the count bigram of the private shards (paired over seeds)",
                     "the count byte bigram of both private shards (an in-domain trivial model)",
                     {"p0_nll": _nats(nll["p0"]), "bigram_nll": _nats(nll["bigram_q_full"])},
                     superiority(paired_diff_ci(nll["p0"], nll["bigram_q_full"]), direction="below",
                                 what="p0 - bigram NLL")),
        precondition("shard_models_memorise_own_canaries", f"each shard model's exposure of its own canaries is "
                     f"above {p.leak_fraction:g} log2 |space| = {leak:.3f} bits: there is something to protect",
                     "the leak threshold (a fraction of the code space)",
                     {q: v.rounded() for q, v in own.items()} | {"threshold": round(leak, 3)},
                     all_of({q: superiority(v, reference=leak, what=f"{q} own-canary exposure")
                               for q, v in own.items()})),
        precondition("cp_delta_bound_headroom", f"CP-Delta's worst-case Delta_max certificate is at least "
                     f"{p.min_bound_ratio:g} x the minimax lower bound -log Z that binds every method (held-out "
                     "records, per seed)", "the minimax lower bound sum_t -log sum_v min(q1, q2)",
                     {"cp_delta_over_minimax": mean_ci(headroom).rounded(6)},
                     superiority(mean_ci(headroom), reference=p.min_bound_ratio, what="CP-Delta / minimax bound")),
    ]


def claims(m: dict[str, float], iv: dict[str, Interval], nll: dict[str, np.ndarray], ratios: dict[str, np.ndarray],
           headroom: np.ndarray, p: ClaimParams) -> list[Claim]:
    """``m``: scalar metrics; ``iv``: intervals over seeds (exposures, perplexities); ``nll``: per-seed held-out NLL
    of every model and ``bigram_<model>`` of the bigram of its training shards; ``ratios[div]``: per-seed median
    CP-Delta / SCP-Delta_r certificate (``dmax``: shard models as safe, ``dmax_base``: p0 as safe); ``headroom``:
    per-seed CP-Delta certificate over the minimax bound."""
    leak = p.leak_fraction * m["log2_canary_space"]
    exp_single = {k: iv[f"exposure_{k}_single"] for k in ("q_full", "cp_delta", "scp_delta_r")}
    exp_dup = {k: iv[f"exposure_{k}_dup"] for k in ("cp_delta", "scp_delta_r")}
    gap, diff = iv["ppl_gap_scp_vs_q_full"], iv["ppl_diff_scp_minus_cp_delta"]
    bound = {div: mean_ci(r) for div, r in ratios.items()}
    competent, protect = ["fine_tuned_models_beat_bigram"], ["fine_tuned_models_beat_bigram",
                                                            "shard_models_memorise_own_canaries"]
    return [
        *preconditions(iv, nll, headroom, leak, p),
        evidence("bound_tighter_than_cp_delta", f"per seed, median summed Delta_max certificate of CP-Delta / "
                 f"SCP-Delta_r >= {p.min_bound_ratio:g} (shard models as safe; single-shard canaries and generic "
                 "prompts, exact enumeration)", PAPER_BOUND,
                 {"ratio": bound["dmax"].rounded(), "cp_delta": round(m["dmax_median_cp_delta"], 4),
                  "scp_delta_r": round(m["dmax_median_scp_delta_r"], 4)},
                 superiority(bound["dmax"], reference=p.min_bound_ratio, what="CP-Delta / SCP-Delta_r bound"),
                 requires=[*competent, "cp_delta_bound_headroom"]),
        evidence("bound_tighter_with_base_model_as_safe", f"nearest form: with the access-free base model p0 as the "
                 f"safe model, per seed, median summed Delta_max of CP-Delta / SCP-Delta_r >= {p.min_bound_ratio:g}",
                 PAPER_BOUND, {"ratio": bound["dmax_base"].rounded(),
                               "cp_delta": round(m["dmax_base_median_cp_delta"], 4),
                               "scp_delta_r": round(m["dmax_base_median_scp_delta_r"], 4)},
                 superiority(bound["dmax_base"], reference=p.min_bound_ratio, what="CP-Delta / SCP-Delta_r bound"),
                 requires=[*competent, "base_model_in_domain"]),
        evidence("q_full_leaks_single_shard_canaries", f"unprotected q_full: exposure of single-shard canaries "
                 f"above {p.leak_fraction:g} log2 |space| (CI over seeds)",
                 "fine-tuned model without defence is extractable (TDE attacks succeed)",
                 {"exposure_bits": exp_single["q_full"].rounded(), "threshold": round(leak, 3),
                  "greedy_rate": round(m["greedy_q_full_single"], 4)},
                 superiority(exp_single["q_full"], reference=leak, what="q_full exposure"), requires=competent),
        *(evidence(f"{k}_near_chance", f"{k}: exposure of single-shard canaries below {p.chance_bits:g} bits (CI "
                   "over seeds; chance ~ log2 e = 1.44)",
                   "strong empirical protection against TDE attacks" if k == "scp_delta_r"
                   else "CP-Delta protects non-duplicated items (Vyas et al. 2023)",
                   {"exposure_bits": exp_single[k].rounded(), "greedy_rate": round(m[f"greedy_{k}_single"], 4),
                    "p_extract": round(m[f"p_extract_{k}_single"], 6)},
                   superiority(exp_single[k], direction="below", reference=p.chance_bits, what=f"{k} exposure"),
                   requires=protect + (["base_model_in_domain"] if k == "scp_delta_r" else []))
          for k in ("cp_delta", "scp_delta_r")),
        evidence("duplicated_canaries_leak_under_both", f"canaries in both shards: exposure above "
                 f"{p.leak_fraction:g} log2 |space| under CP-Delta and SCP-Delta_r (the NAF failure mode, reproduced)",
                 "NAF protects only items absent from one shard (known limitation)",
                 {k: v.rounded() for k, v in exp_dup.items()} | {"threshold": round(leak, 3)},
                 all_of({k: superiority(v, reference=leak, what=f"{k} exposure") for k, v in exp_dup.items()}),
                 requires=protect),
        evidence("utility_close_to_q_full", f"held-out perplexity of SCP-Delta_r at most (1 + {p.max_ppl_gap:g}) x "
                 "q_full's (per-seed relative gap, CI)", "minimal performance loss",
                 {"relative_gap": gap.rounded()},
                 noninferiority(gap, margin=p.max_ppl_gap, what="SCP-Delta_r / q_full perplexity - 1"),
                 requires=[*competent, "base_model_in_domain"]),
        evidence("utility_better_than_cp_delta", "held-out perplexity of SCP-Delta_r below CP-Delta's (paired CI < 0)",
                 "SCP-Delta_r degrades utility less than existing NAF methods", {"ppl_scp_minus_cp": diff.rounded()},
                 superiority(diff, direction="below", what="SCP-Delta_r - CP-Delta perplexity"),
                 requires=[*competent, "base_model_in_domain"]),
        check("shift_is_sparse", "median fraction of tokens carrying the kl_mass of KL(q_full || p0) <= "
              f"{p.max_sparse_fraction:g} (true of any confident model, 1/256 being the minimum: a check, not "
              "evidence)",
              "a small subset of influential token-level deviations suffices",
              {"fraction": round(m["kl_carrier_fraction_median"], 4),
               "scp_kept_fraction": round(m["scp_kept_fraction_mean"], 4)},
              m["kl_carrier_fraction_median"] <= p.max_sparse_fraction,
              f"{m['kl_carrier_fraction_median']:.4f} > {p.max_sparse_fraction:g}"),
    ]
