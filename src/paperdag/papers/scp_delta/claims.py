"""The paper's claims restated for our scale: a pure function from measured numbers to ``Claim``s."""

from __future__ import annotations

import numpy as np

from paperdag.claims import Claim
from paperdag.common.stats import Interval

from .params import ClaimParams

MINIMAX = ("for Delta_max w.r.t. both shard models, any p with p <= e^k q1 and p <= e^k q2 has 1 <= e^k Z, so "
           "k >= -log Z = CP-Delta's bound: CP-Delta is minimax-optimal and no method can beat it 10x on a context "
           "whose safe model is either shard")


def _iv(iv: Interval) -> dict[str, float | list[float]]:
    return iv.rounded(4)


def claims(m: dict[str, float], iv: dict[str, Interval], p: ClaimParams) -> list[Claim]:
    """Bound tightness, leakage of q_full, protection by CP-Delta and SCP-Delta_r, the duplicated-canary failure
    mode, utility, sparsity of the shift, and the sanity of every trained model."""
    leak = p.leak_fraction * m["log2_canary_space"]
    ratio = m["bound_ratio_cp_over_scp"]
    exp_single = {k: iv[f"exposure_{k}_single"] for k in ("q_full", "cp_delta", "scp_delta_r")}
    exp_dup = {k: iv[f"exposure_{k}_dup"] for k in ("cp_delta", "scp_delta_r")}
    gap, diff = iv["ppl_gap_scp_vs_q_full"], iv["ppl_diff_scp_minus_cp_delta"]
    own = min(iv["exposure_q1_own"].mean, iv["exposure_q2_own"].mean)
    return [
        Claim("bound_tighter_than_cp_delta",
              f"median summed Delta_max certificate of CP-Delta / SCP-Delta_r >= {p.min_bound_ratio:g} "
              "(single-shard canaries and generic prompts, exact enumeration)",
              paper_value="orders of magnitude better NAF bounds than CP-Delta (LLM fine-tuning)",
              measured={"ratio": round(ratio, 4), "cp_delta": round(m["dmax_median_cp_delta"], 4),
                        "scp_delta_r": round(m["dmax_median_scp_delta_r"], 4)},
              holds=bool(ratio >= p.min_bound_ratio), reason="" if ratio >= p.min_bound_ratio else MINIMAX),
        Claim("bound_tighter_with_base_model_as_safe",
              f"nearest form: with the access-free base model p0 as the safe model, median summed Delta_max of "
              f"CP-Delta / SCP-Delta_r >= {p.min_bound_ratio:g}",
              paper_value="orders of magnitude better NAF bounds than CP-Delta (LLM fine-tuning)",
              measured={"ratio": round(m["base_bound_ratio_cp_over_scp"], 4),
                        "cp_delta": round(m["dmax_base_median_cp_delta"], 4),
                        "scp_delta_r": round(m["dmax_base_median_scp_delta_r"], 4)},
              holds=bool(m["base_bound_ratio_cp_over_scp"] >= p.min_bound_ratio)),
        Claim("q_full_leaks_single_shard_canaries",
              f"unprotected q_full: mean exposure of single-shard canaries >= {p.leak_fraction:g} log2 |space|",
              paper_value="fine-tuned model without defence is extractable (TDE attacks succeed)",
              measured={"exposure_bits": _iv(exp_single["q_full"]), "threshold": round(leak, 3),
                        "greedy_rate": round(m["greedy_q_full_single"], 4)},
              holds=exp_single["q_full"].mean >= leak),
        *(Claim(f"{k}_near_chance", f"{k}: mean exposure of single-shard canaries <= {p.chance_bits:g} bits "
                "(chance ~ log2 e = 1.44)",
                paper_value="strong empirical protection against TDE attacks" if k == "scp_delta_r"
                else "CP-Delta protects non-duplicated items (Vyas et al. 2023)",
                measured={"exposure_bits": _iv(exp_single[k]), "greedy_rate": round(m[f"greedy_{k}_single"], 4),
                          "p_extract": round(m[f"p_extract_{k}_single"], 6)},
                holds=exp_single[k].mean <= p.chance_bits) for k in ("cp_delta", "scp_delta_r")),
        Claim("duplicated_canaries_leak_under_both",
              f"canaries in both shards: mean exposure >= {p.leak_fraction:g} log2 |space| under CP-Delta and "
              "SCP-Delta_r (the NAF failure mode, reproduced)",
              paper_value="NAF protects only items absent from one shard (known limitation)",
              measured={k: _iv(v) for k, v in exp_dup.items()},
              holds=all(v.mean >= leak for v in exp_dup.values())),
        Claim("utility_close_to_q_full",
              f"held-out perplexity of SCP-Delta_r <= (1 + {p.max_ppl_gap:g}) x q_full's (mean over seeds)",
              paper_value="minimal performance loss", measured={"relative_gap": _iv(gap)},
              holds=gap.mean <= p.max_ppl_gap),
        Claim("utility_better_than_cp_delta", "held-out perplexity of SCP-Delta_r below CP-Delta's (paired CI < 0)",
              paper_value="SCP-Delta_r degrades utility less than existing NAF methods",
              measured={"ppl_scp_minus_cp": _iv(diff)}, holds=diff.hi < 0),
        Claim("shift_is_sparse",
              f"median fraction of tokens carrying the kl_mass of KL(q_full || p0) <= {p.max_sparse_fraction:g}",
              paper_value="a small subset of influential token-level deviations suffices",
              measured={"fraction": round(m["kl_carrier_fraction_median"], 4),
                        "scp_kept_fraction": round(m["scp_kept_fraction_mean"], 4)},
              holds=m["kl_carrier_fraction_median"] <= p.max_sparse_fraction),
        Claim("models_learned", "sanity: p0 beats the uniform byte model on held-out records, q_full beats p0, and "
              "each shard model memorised its own canaries (exposure >= the leak threshold)",
              paper_value="every trained model learns its task",
              measured={"p0_nll": round(m["p0_nll_heldout"], 4), "uniform_nll": round(float(np.log(256)), 4),
                        "q_full_ppl": round(m["ppl_q_full"], 4), "p0_ppl": round(m["ppl_p0"], 4),
                        "own_canary_exposure_min": round(own, 3)},
              holds=m["p0_nll_heldout"] < np.log(256) and m["ppl_q_full"] < m["ppl_p0"] and own >= leak),
    ]
