"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

Over seeds every comparison is a Student-t interval (paperdag.common.stats) judged by a shared rule
(paperdag.common.verdicts). Preconditions, before a claim is judged:

- competence: each fine-tuned model (q1, q2, q_full) beats the count byte bigram of its own training bytes on
  held-out records (paperdag.common.ngram, the strongest trivial baseline of a byte language model), and keeps the
  utility of the model it was fine-tuned from: its held-out perplexity is at most (1 + ``max_ppl_gap``) x p0's (the
  private lines share p0's templates, so fine-tuning adds private items, not skill; a fine-tuned model worse than
  its starting point is damaged, and every comparison built on it, certificates included, measures the damage);
- the base model p0, which SCP-Delta_r falls back to, is in the private domain: it beats the bigram of its own
  public corpus on held-out public records, and its perplexity there is within ``base_ppl_factor`` of q_full's on
  held-out private records;
- the mechanism can act: each shard model memorised its own canaries (there is something to protect);
- headroom: CP-Delta's sequence-level certificate lies more than ``cert_slack_nats`` above the minimax bound K*_x,
  so a tighter method is possible at all (at the token level CP-Delta sits on the bound: analysis.py).

The paper's "orders of magnitude tighter than CP-Delta" cannot hold against the shard models at the token level
(the minimax argument, a check here); it is judged in the two forms that can hold: the excess over the sequence
minimax bound, and the certificate against the access-free base model p0.
"""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import Interval, mean_ci, paired_diff_ci
from paperdag.common.verdicts import (
    Claim,
    all_of,
    check,
    evidence,
    exact,
    noninferiority,
    precondition,
    superiority,
)

from .params import ClaimParams

BIGRAM = "the count byte bigram (add-one or Witten-Bell, the better) of the model's training bytes"
PAPER_BOUND = "orders of magnitude better NAF bounds than CP-Delta (LLM fine-tuning)"
FINE_TUNED = ("q1", "q2", "q_full")
ROUNDOFF = 1e-9  # nats: float64 round-off of an enumerated certificate


def _nats(v: np.ndarray) -> dict[str, float | list[float]]:
    return mean_ci(v).rounded()


def preconditions(m: dict[str, float], iv: dict[str, Interval], nll: dict[str, np.ndarray],
                  seeds: dict[str, np.ndarray], leak: float, p: ClaimParams) -> list[Claim]:
    """Competence of the fine-tuned models (against the bigram and against p0) and of the base model in the
    private domain, memorisation, headroom."""
    own = {q: iv[f"exposure_{q}_own"] for q in ("q1", "q2")}
    vs_p0 = {q: mean_ci(np.exp(nll[q] - nll["p0"]) - 1.0) for q in FINE_TUNED}
    p0, p0_bigram, ratio = m["p0_public_nll"], m["bigram_public_nll"], mean_ci(seeds["p0_ppl_ratio"])
    return [
        precondition("fine_tuned_models_beat_bigram", "q1, q2 and q_full each have a lower held-out record NLL than "
                     "the count bigram of their own training shards (paired over seeds)", BIGRAM,
                     {q: {"model_nll": _nats(nll[q]), "bigram_nll": _nats(nll[f"bigram_{q}"])} for q in FINE_TUNED},
                     all_of({q: superiority(paired_diff_ci(nll[q], nll[f"bigram_{q}"]), direction="below",
                                              what=f"{q} - bigram NLL") for q in FINE_TUNED})),
        precondition("fine_tuning_keeps_utility", f"q1, q2 and q_full each have a held-out perplexity at most "
                     f"(1 + {p.max_ppl_gap:g}) x that of p0, the model they were fine-tuned from (per seed)",
                     "p0, the starting point of fine-tuning (not fine-tuning at all)",
                     {q: {"ppl_over_p0_minus_1": v.rounded()} for q, v in vs_p0.items()} | {"margin": p.max_ppl_gap},
                     all_of({q: noninferiority(v, margin=p.max_ppl_gap, what=f"{q} / p0 perplexity - 1")
                             for q, v in vs_p0.items()})),
        precondition("base_model_in_domain", f"the base model p0 (SCP-Delta_r's fallback) beats the bigram of its "
                     f"public corpus on held-out public records, and its perplexity there is at most "
                     f"{p.base_ppl_factor:g} x q_full's on held-out private records (per seed)",
                     "the count byte bigram of the public corpus; q_full's held-out private perplexity",
                     {"p0_nll": round(p0, 4), "bigram_nll": round(p0_bigram, 4),
                      "p0_over_q_full_ppl": ratio.rounded(), "factor": p.base_ppl_factor},
                     all_of({"bigram": exact(p0 < p0_bigram, f"p0 NLL {p0:.4g} vs bigram {p0_bigram:.4g} nats/byte"),
                             "factor": superiority(ratio, direction="below", reference=p.base_ppl_factor,
                                                   what="p0 / q_full perplexity")})),
        precondition("shard_models_memorise_own_canaries", f"each shard model's exposure of its own canaries is "
                     f"above {p.leak_fraction:g} log2 |space| = {leak:.3f} bits: there is something to protect",
                     "the leak threshold (a fraction of the code space)",
                     {q: v.rounded() for q, v in own.items()} | {"threshold": round(leak, 3)},
                     all_of({q: superiority(v, reference=leak, what=f"{q} own-canary exposure")
                               for q, v in own.items()})),
        precondition("minimax_headroom", f"CP-Delta's sequence-level certificate on single-shard canary prompts "
                     f"exceeds the minimax bound K*_x by more than {p.cert_slack_nats:g} nats (per-seed median): a "
                     "tighter method is possible", "the minimax bound K*_x = -log sum_o min(Q1, Q2) (every method)",
                     {"cp_delta_excess_nats": _nats(seeds["excess_cp_delta"]),
                      "minimax_nats": _nats(seeds["minimax"])},
                     superiority(mean_ci(seeds["excess_cp_delta"]), reference=p.cert_slack_nats,
                                 what="CP-Delta k_x - K*_x")),
    ]


def claims(m: dict[str, float], iv: dict[str, Interval], nll: dict[str, np.ndarray], seeds: dict[str, np.ndarray],
           p: ClaimParams) -> list[Claim]:
    """``m``: scalar metrics; ``iv``: intervals over seeds (exposures, perplexities); ``nll``: per-seed held-out NLL
    of every model and ``bigram_<q>`` of the bigram of its training shards; ``seeds``: per-seed values
    (summary.py): excess_fraction, excess_cp_delta, minimax, base_ratio, sparse_fraction, p0_ppl_ratio."""
    leak = p.leak_fraction * m["log2_canary_space"]
    exp_single = {k: iv[f"exposure_{k}_single"] for k in ("q_full", "cp_delta", "scp_delta_r")}
    exp_dup = {k: iv[f"exposure_{k}_dup"] for k in ("cp_delta", "scp_delta_r")}
    gap, diff = iv["ppl_gap_scp_vs_q_full"], iv["ppl_diff_scp_minus_cp_delta"]
    competent = ["fine_tuned_models_beat_bigram", "fine_tuning_keeps_utility"]
    protect = [*competent, "shard_models_memorise_own_canaries"]
    in_domain = [*competent, "base_model_in_domain"]
    fraction = 1 / p.min_bound_ratio
    return [
        *preconditions(m, iv, nll, seeds, leak, p),
        evidence("bound_tighter_than_cp_delta", f"restated against the minimax bound: on single-shard canary "
                 f"prompts SCP-Delta_r's sequence-level certificate keeps at most 1/{p.min_bound_ratio:g} of "
                 "CP-Delta's excess over K*_x (per-seed medians, exact enumeration of the codes)", PAPER_BOUND,
                 {"excess_fraction": mean_ci(seeds["excess_fraction"]).rounded(),
                  "excess_nats": {"cp_delta": round(m["excess_cp_delta"], 4),
                                  "scp_delta_r": round(m["excess_scp_delta_r"], 4)},
                  "k_nats": {k: round(m[f"k_{k}"], 4) for k in ("q_full", "cp_delta", "cp_k", "scp_delta_r")},
                  "minimax_nats": round(m["minimax"], 4)},
                 superiority(mean_ci(seeds["excess_fraction"]), direction="below", reference=fraction,
                             what="SCP-Delta_r / CP-Delta excess over K*"),
                 requires=[*in_domain, "minimax_headroom"]),
        evidence("bound_tighter_with_base_model_as_safe", f"with the access-free base model p0 as the safe model, "
                 f"median sequence-level certificate of CP-Delta / SCP-Delta_r >= {p.min_bound_ratio:g} (single-shard "
                 "canary prompts, per seed)", PAPER_BOUND,
                 {"ratio": mean_ci(seeds["base_ratio"]).rounded(),
                  "k_base_nats": {k: round(m[f"k_base_{k}"], 4) for k in ("q_full", "cp_delta", "scp_delta_r")}},
                 superiority(mean_ci(seeds["base_ratio"]), reference=p.min_bound_ratio,
                             what="CP-Delta / SCP-Delta_r certificate"),
                 requires=in_domain),
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
                 requires=in_domain),
        evidence("utility_better_than_cp_delta", "held-out perplexity of SCP-Delta_r below CP-Delta's (paired CI < 0)",
                 "SCP-Delta_r degrades utility less than existing NAF methods", {"ppl_scp_minus_cp": diff.rounded()},
                 superiority(diff, direction="below", what="SCP-Delta_r - CP-Delta perplexity"), requires=in_domain),
        evidence("sparse_shift_suffices", f"the smallest kept fraction |S| / V on the keep_mass sweep whose "
                 f"certificate is at most {p.cert_slack_nats:g} nats above the full shift's and whose perplexity is at "
                 f"most (1 + {p.max_ppl_gap:g}) x the full shift's is below {p.max_sparse_fraction:g} (per seed)",
                 "a small subset of influential token-level deviations suffices",
                 {"kept_fraction": mean_ci(seeds["sparse_fraction"]).rounded(),
                  "keep_mass": [float(v) for v in seeds["sparse_keep_mass"]]},
                 superiority(mean_ci(seeds["sparse_fraction"]), direction="below", reference=p.max_sparse_fraction,
                             what="smallest preserving kept fraction"),
                 requires=in_domain),
        check("cp_delta_on_token_minimax_bound", "at every held-out position CP-Delta's token certificate max_j "
              "Delta_max(p || q_j) equals -log sum_v min(q1, q2) and no method is below it: with the shard models as "
              "safe, no method is tighter than CP-Delta token by token", "(the minimax argument)",
              {"cp_delta_gap": m["cp_minimax_gap"], "min_margin": m["min_above_minimax"],
               "scp_over_minimax": round(m["scp_over_minimax"], 4)},
              m["cp_minimax_gap"] <= ROUNDOFF and m["min_above_minimax"] >= -ROUNDOFF,
              f"CP-Delta off the bound by {m['cp_minimax_gap']:.3g} or a method below it by {m['min_above_minimax']:.3g}"),
        check("closed_forms_match_enumeration", "the enumerated token certificates of CP-Delta, SCP-Delta_r (Delta_max) "
              "and CP-k (KL) equal their closed forms at every held-out position", "(derived closed forms)",
              {"max_abs_err": m["closed_form_err"]}, m["closed_form_err"] <= ROUNDOFF,
              f"largest gap {m['closed_form_err']:.3g} nats"),
    ]
