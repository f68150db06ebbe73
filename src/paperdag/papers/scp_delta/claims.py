"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

Every comparison is over seeds (one seed: one draw of records, canaries and shards and one fine-tuning of q1, q2,
q_full; unit ``seed``), a Student-t interval (paired where both arms share the seed; paperdag.common.stats) judged by
a shared rule (paperdag.common.verdicts) under the ``seeds`` plan declared in params.yaml: a group-sequential plan
(the seed count was raised after a look at fewer seeds, those seeds kept), so every interval is taken at its final
look's nominal level. Preconditions, before a claim is judged:

- competence, judged against the strongest rung of the fine-tuning ladder (``../shared/papers.md``: the base model
  itself, then the trivial count models): each fine-tuned model (q1, q2, q_full) keeps the utility of p0, the model it
  was fine-tuned from: its held-out perplexity is at most (1 + ``max_ppl_gap``) x p0's (the private lines share p0's
  templates, so fine-tuning adds private items, not skill; a fine-tuned model worse than its starting point is
  damaged, and every comparison built on it, certificates included, measures the damage); the Kneser-Ney n-grams of
  each model's own training bytes (ladder.py) are the next rungs, recorded beside it;
- the base model p0, which SCP-Delta_r falls back to, is in the private domain: on held-out private records it beats
  the strongest count model of its own public corpus (Kneser-Ney n-grams, the order chosen on held-out public
  records, and the count bigram), and its perplexity on held-out public records is within ``base_ppl_factor`` of
  q_full's on held-out private records;
- the mechanism can act: each shard model memorised its own canaries (there is something to protect);
- headroom: CP-Delta's sequence-level certificate lies more than ``cert_slack_nats`` above the minimax bound K*_x,
  so a tighter method is possible at all (at the token level CP-Delta sits on the bound: analysis.py).

The paper's "orders of magnitude tighter than CP-Delta" cannot hold against the shard models at the token level
(the minimax argument, a check here); it is judged in the two forms that can hold: the excess over the sequence
minimax bound, and the certificate against the access-free base model p0. The checks are exact: closed forms against
enumerated certificates at every held-out position.
"""

from __future__ import annotations

import numpy as np

from paperdag.common.plans import SamplePlan
from paperdag.common.stats import Interval, mean_ci, paired_diff_ci
from paperdag.common.verdicts import (
    Claim,
    Ladder,
    all_of,
    check,
    evidence,
    exact,
    noninferiority,
    precondition,
    superiority,
)

from .params import ClaimParams, Plans

BASE = "p0, the base model (not fine-tuned)"
PAPER_BOUND = "orders of magnitude better NAF bounds than CP-Delta (LLM fine-tuning)"
FINE_TUNED = ("q1", "q2", "q_full")
ROUNDOFF = 1e-9  # nats: float64 round-off of an enumerated certificate


def _seeds(v: np.ndarray) -> Interval:
    return mean_ci(v, unit="seed")


def _nats(v: np.ndarray) -> dict[str, float | list[float]]:
    return _seeds(v).rounded()


def _ladder(rungs: dict[str, np.ndarray]) -> Ladder:
    """Held-out NLL (nats/byte, lower is stronger) of each rung, an interval over seeds."""
    return Ladder.of("lower", {name: _seeds(v) for name, v in rungs.items()})


def tuning_rungs(nll: dict[str, np.ndarray], count: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The fine-tuning ladder's rungs by name, per-seed held-out NLL: p0 and the chosen Kneser-Ney n-gram of each
    fine-tuned model's own training bytes (``count``: model -> per-seed NLL)."""
    return {BASE: nll["p0"]} | {f"KN n-gram of {q}'s training bytes (order chosen on validation)": count[q]
                                for q in FINE_TUNED}


def preconditions(m: dict[str, float], iv: dict[str, Interval], nll: dict[str, np.ndarray],
                  seeds: dict[str, np.ndarray], rungs: dict[str, dict[str, np.ndarray]], leak: float, p: ClaimParams,
                  plan: SamplePlan) -> list[Claim]:
    """Competence of the fine-tuned models (against the fine-tuning ladder, p0 on top) and of the base model in the
    private domain (against the count models of its corpus), memorisation, headroom."""
    own = {q: iv[f"exposure_{q}_own"] for q in ("q1", "q2")}
    tuning = tuning_rungs(nll, rungs["fine_tuning"])
    tuning_ladder = _ladder(tuning)
    top = tuning_ladder.strongest.name
    vs_top = {q: _seeds(np.exp(nll[q] - tuning[top]) - 1.0) for q in FINE_TUNED}
    public_ladder = _ladder(rungs["public"])
    counted = public_ladder.strongest.name
    p0_gain = paired_diff_ci(rungs["public"][counted], nll["p0"], unit="seed")
    ratio = _seeds(seeds["p0_ppl_ratio"])
    return [
        precondition("fine_tuning_keeps_utility", f"q1, q2 and q_full each have a held-out perplexity at most "
                     f"(1 + {p.max_ppl_gap:g}) x that of the strongest rung of the fine-tuning ladder: p0, the model "
                     "they were fine-tuned from, then the Kneser-Ney n-grams of their own training bytes (the order "
                     "chosen on held-out public records); per seed", top,
                     {"model_nll": {q: _nats(nll[q]) for q in FINE_TUNED}}
                     | {q: {"ppl_over_strongest_minus_1": v.rounded()} for q, v in vs_top.items()}
                     | {"margin": p.max_ppl_gap},
                     all_of({q: noninferiority(v, margin=p.max_ppl_gap, what=f"{q} perplexity / {top}'s - 1",
                                               plan=plan) for q, v in vs_top.items()}), ladder=tuning_ladder),
        precondition("base_model_in_domain", f"the base model p0 (SCP-Delta_r's fallback) has a lower NLL on held-out "
                     "private records than the strongest count model of its public corpus (Kneser-Ney n-grams, the "
                     "order chosen on held-out public records, and the count bigram; paired over seeds), and its "
                     f"perplexity on held-out public records is at most {p.base_ppl_factor:g} x q_full's on held-out "
                     "private records (per seed)", counted,
                     {"p0_nll": _nats(nll["p0"]), "strongest_count_model_minus_p0_nll": p0_gain.rounded(),
                      "p0_public_nll": round(m["p0_public_nll"], 4), "p0_over_q_full_ppl": ratio.rounded(),
                      "factor": p.base_ppl_factor},
                     all_of({"count models": superiority(p0_gain, what=f"{counted} - p0 NLL", plan=plan),
                             "factor": superiority(ratio, direction="below", reference=p.base_ppl_factor,
                                                   what="p0 / q_full perplexity", plan=plan)}),
                     ladder=public_ladder),
        precondition("shard_models_memorise_own_canaries", f"each shard model's exposure of its own canaries is "
                     f"above {p.leak_fraction:g} log2 |space| = {leak:.3f} bits: there is something to protect",
                     "the leak threshold (a fraction of the code space)",
                     {q: v.rounded() for q, v in own.items()} | {"threshold": round(leak, 3)},
                     all_of({q: superiority(v, reference=leak, what=f"{q} own-canary exposure", plan=plan)
                             for q, v in own.items()})),
        precondition("minimax_headroom", f"CP-Delta's sequence-level certificate on single-shard canary prompts "
                     f"exceeds the minimax bound K*_x by more than {p.cert_slack_nats:g} nats (per-seed median): a "
                     "tighter method is possible", "the minimax bound K*_x = -log sum_o min(Q1, Q2) (every method)",
                     {"cp_delta_excess_nats": _nats(seeds["excess_cp_delta"]),
                      "minimax_nats": _nats(seeds["minimax"])},
                     superiority(_seeds(seeds["excess_cp_delta"]), reference=p.cert_slack_nats,
                                 what="CP-Delta k_x - K*_x", plan=plan)),
    ]


def claims(m: dict[str, float], iv: dict[str, Interval], nll: dict[str, np.ndarray], seeds: dict[str, np.ndarray],
           rungs: dict[str, dict[str, np.ndarray]], p: ClaimParams, plans: Plans) -> list[Claim]:
    """``m``: scalar metrics; ``iv``: intervals over seeds (exposures, perplexities); ``nll``: per-seed held-out NLL
    of every model; ``seeds``: per-seed values (summary.py): excess_fraction, excess_cp_delta, minimax, base_ratio,
    sparse_fraction, p0_ppl_ratio; ``rungs``: per-seed held-out NLL of the trivial rungs (ladder.py), "fine_tuning"
    (model -> its own training bytes' chosen Kneser-Ney n-gram) and "public" (rung name -> the public corpus' count
    models); ``plans``: the sample-size plans."""
    plan = plans.seeds
    leak = p.leak_fraction * m["log2_canary_space"]
    exp_single = {k: iv[f"exposure_{k}_single"] for k in ("q_full", "cp_delta", "scp_delta_r")}
    exp_dup = {k: iv[f"exposure_{k}_dup"] for k in ("cp_delta", "scp_delta_r")}
    gap, diff = iv["ppl_gap_scp_vs_q_full"], iv["ppl_diff_scp_minus_cp_delta"]
    competent = ["fine_tuning_keeps_utility"]
    protect = [*competent, "shard_models_memorise_own_canaries"]
    in_domain = [*competent, "base_model_in_domain"]
    fraction = 1 / p.min_bound_ratio
    excess, base_ratio, sparse = (_seeds(seeds[k]) for k in ("excess_fraction", "base_ratio", "sparse_fraction"))
    return [
        *preconditions(m, iv, nll, seeds, rungs, leak, p, plan),
        evidence("bound_tighter_than_cp_delta", f"restated against the minimax bound: on single-shard canary "
                 f"prompts SCP-Delta_r's sequence-level certificate keeps at most 1/{p.min_bound_ratio:g} of "
                 "CP-Delta's excess over K*_x (per-seed medians, exact enumeration of the codes)", PAPER_BOUND,
                 {"excess_fraction": excess.rounded(),
                  "excess_nats": {"cp_delta": round(m["excess_cp_delta"], 4),
                                  "scp_delta_r": round(m["excess_scp_delta_r"], 4)},
                  "k_nats": {k: round(m[f"k_{k}"], 4) for k in ("q_full", "cp_delta", "cp_k", "scp_delta_r")},
                  "minimax_nats": round(m["minimax"], 4)},
                 superiority(excess, direction="below", reference=fraction,
                             what="SCP-Delta_r / CP-Delta excess over K*", plan=plan),
                 requires=[*in_domain, "minimax_headroom"]),
        evidence("bound_tighter_with_base_model_as_safe", f"with the access-free base model p0 as the safe model, "
                 f"median sequence-level certificate of CP-Delta / SCP-Delta_r >= {p.min_bound_ratio:g} (single-shard "
                 "canary prompts, per seed)", PAPER_BOUND,
                 {"ratio": base_ratio.rounded(),
                  "k_base_nats": {k: round(m[f"k_base_{k}"], 4) for k in ("q_full", "cp_delta", "scp_delta_r")}},
                 superiority(base_ratio, reference=p.min_bound_ratio, what="CP-Delta / SCP-Delta_r certificate",
                             plan=plan),
                 requires=in_domain),
        evidence("q_full_leaks_single_shard_canaries", f"unprotected q_full: exposure of single-shard canaries "
                 f"above {p.leak_fraction:g} log2 |space| (CI over seeds)",
                 "fine-tuned model without defence is extractable (TDE attacks succeed)",
                 {"exposure_bits": exp_single["q_full"].rounded(), "threshold": round(leak, 3),
                  "greedy_rate": round(m["greedy_q_full_single"], 4)},
                 superiority(exp_single["q_full"], reference=leak, what="q_full exposure", plan=plan),
                 requires=competent),
        *(evidence(f"{k}_near_chance", f"{k}: exposure of single-shard canaries below {p.chance_bits:g} bits (CI "
                   "over seeds; chance ~ log2 e = 1.44)",
                   "strong empirical protection against TDE attacks" if k == "scp_delta_r"
                   else "CP-Delta protects non-duplicated items (Vyas et al. 2023)",
                   {"exposure_bits": exp_single[k].rounded(), "greedy_rate": round(m[f"greedy_{k}_single"], 4),
                    "p_extract": round(m[f"p_extract_{k}_single"], 6)},
                   superiority(exp_single[k], direction="below", reference=p.chance_bits, what=f"{k} exposure",
                               plan=plan),
                   requires=protect + (["base_model_in_domain"] if k == "scp_delta_r" else []))
          for k in ("cp_delta", "scp_delta_r")),
        evidence("duplicated_canaries_leak_under_both", f"canaries in both shards: exposure above "
                 f"{p.leak_fraction:g} log2 |space| under CP-Delta and SCP-Delta_r (the NAF failure mode, reproduced)",
                 "NAF protects only items absent from one shard (known limitation)",
                 {k: v.rounded() for k, v in exp_dup.items()} | {"threshold": round(leak, 3)},
                 all_of({k: superiority(v, reference=leak, what=f"{k} exposure", plan=plan)
                         for k, v in exp_dup.items()}),
                 requires=protect),
        evidence("utility_close_to_q_full", f"held-out perplexity of SCP-Delta_r at most (1 + {p.max_ppl_gap:g}) x "
                 "q_full's (per-seed relative gap, CI)", "minimal performance loss",
                 {"relative_gap": gap.rounded()},
                 noninferiority(gap, margin=p.max_ppl_gap, what="SCP-Delta_r / q_full perplexity - 1", plan=plan),
                 requires=in_domain),
        evidence("utility_better_than_cp_delta", "held-out perplexity of SCP-Delta_r below CP-Delta's (paired CI < 0)",
                 "SCP-Delta_r degrades utility less than existing NAF methods", {"ppl_scp_minus_cp": diff.rounded()},
                 superiority(diff, direction="below", what="SCP-Delta_r - CP-Delta perplexity", plan=plan),
                 requires=in_domain),
        evidence("sparse_shift_suffices", f"the smallest kept fraction |S| / V on the keep_mass sweep whose "
                 f"certificate is at most {p.cert_slack_nats:g} nats above the full shift's and whose perplexity is at "
                 f"most (1 + {p.max_ppl_gap:g}) x the full shift's is below {p.max_sparse_fraction:g} (per seed)",
                 "a small subset of influential token-level deviations suffices",
                 {"kept_fraction": sparse.rounded(), "keep_mass": [float(v) for v in seeds["sparse_keep_mass"]]},
                 superiority(sparse, direction="below", reference=p.max_sparse_fraction,
                             what="smallest preserving kept fraction", plan=plan),
                 requires=in_domain),
        check("cp_delta_on_token_minimax_bound", "at every held-out position CP-Delta's token certificate max_j "
              "Delta_max(p || q_j) equals -log sum_v min(q1, q2) and no method is below it: with the shard models as "
              "safe, no method is tighter than CP-Delta token by token", "(the minimax argument)",
              {"cp_delta_gap": m["cp_minimax_gap"], "min_margin": m["min_above_minimax"],
               "scp_over_minimax": round(m["scp_over_minimax"], 4)},
              exact(m["cp_minimax_gap"] <= ROUNDOFF and m["min_above_minimax"] >= -ROUNDOFF,
                    f"CP-Delta off the bound by {m['cp_minimax_gap']:.3g} nats, the lowest method above it by "
                    f"{m['min_above_minimax']:.3g} (round-off {ROUNDOFF:g})", basis="closed form")),
        check("closed_forms_match_enumeration", "the enumerated token certificates of CP-Delta, SCP-Delta_r (Delta_max) "
              "and CP-k (KL) equal their closed forms at every held-out position", "(derived closed forms)",
              {"max_abs_err": m["closed_form_err"]},
              exact(m["closed_form_err"] <= ROUNDOFF,
                    f"largest gap {m['closed_form_err']:.3g} nats (round-off {ROUNDOFF:g})", basis="enumeration")),
    ]
