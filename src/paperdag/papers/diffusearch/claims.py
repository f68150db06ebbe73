"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

Preconditions (the regime), each judged against the strongest rung of its trivial ladder (the next rung recorded
beside it). Competence: the MDM's forward one-hop (each value slot with only the slots before it in dependency
order filled; the answer slot, a copy of the query's value, excluded) and the AR's value-slot one-hop against the
statement-count table on the same value slots (reference.py: reads a statement's text but never a variable's value),
then the majority digit, every seed on its own (paired over the order study's held-out programs); each compared
decoder's answer accuracy against the count table's answer accuracy, then the majority answer digit (the random
order is reported, not required). Mechanism: on out-of-order programs the MDM's accuracy on a value slot with its
operand slots filled minus masked exceeds ``mechanism_gain`` for every seed (else it does not read what an order
infills). Headroom: the dependency order beats the best fixed slot order (of all S!) by more than ``headroom``.
Evidence: the abstract's findings, each from a shared interval rule, gated by the preconditions it names. Check:
search costs forward passes (true by construction: it scores look-ahead rows on top of the rows a fixed order
scores).

Intervals over seeds are t intervals over training seeds (unit ``seed``: one trained (MDM, AR) pair, its test
tasks averaged first) under the ``seeds`` plan; per-seed intervals are over held-out programs (unit ``program``)
under the ``programs`` and ``out_of_order`` plans. The count table and the majority digits are fitted on the
training programs without a seed and scored on fixed test sets (numbers, not intervals).
"""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import mean_ci, paired_diff_ci
from paperdag.common.verdicts import (
    Claim,
    Judgement,
    Ladder,
    all_of,
    check,
    evidence,
    exact,
    noninferiority,
    precondition,
    superiority,
)

from .analysis import UNIT, StudySummary, Summary
from .experiment import POLICIES, random_sequential_expectation
from .params import ClaimParams, Plans

SLOT_LADDER = ("the statement-count table on the value slots (a slot's most frequent training value given its "
               "statement's text)", "the majority digit (the training value slots' most frequent value)")
ANSWER_LADDER = ("the statement-count table's answer (the query statement's most frequent training value)",
                 "the majority answer digit (the training answers' most frequent value)")
FIXED_ORDERS = {f"pi_{o}": f"plan-and-infill in a fixed {o} order" for o in POLICIES if o != "random"}
ORDER_LADDER = ("the best fixed slot order (one of the S! orders for every program, the best on the study programs)",
                "plan-and-infill left to right")
MASKED = "the same value slot with its operand slots masked (what the MDM predicts without reading infilled values)"


def _slot_ladder(st: StudySummary) -> Ladder:
    return Ladder.of("higher", {SLOT_LADDER[0]: st.count_value, SLOT_LADDER[1]: st.majority_value})


def _answer_ladder(base: dict) -> Ladder:
    return Ladder.of("higher", {ANSWER_LADDER[0]: base["count_answer_accuracy"],
                                ANSWER_LADDER[1]: base["majority_answer_accuracy"]})


def _beat(per_seed: dict[str, np.ndarray], ladder: Ladder, plans: Plans, what: str) -> Judgement:
    """Every named per-seed accuracy lies above the ladder's strongest rung (superiority of each t interval over
    seeds; ``all_of``: Holm for fails, intersection-union for holds)."""
    return all_of({n: superiority(mean_ci(v, unit=UNIT), reference=ladder.strongest.point(), what=f"{n} {what}",
                                  plan=plans.seeds) for n, v in per_seed.items()})


def _per_seed(st: StudySummary, intervals: list, plan, what: str, margin: float = 0.0) -> Judgement:
    """Every seed's interval over programs lies above ``margin`` (``all_of`` over seeds: every seed must pass)."""
    return all_of({f"seed {seed}": superiority(x, margin=margin, what=f"seed {seed} {what}", plan=plan)
                   for seed, x in zip(st.seeds, intervals, strict=True)})


def _rows(intervals: list, seeds: list[int]) -> dict[str, dict]:
    return {f"seed {s}": x.rounded() | {"n": x.n} for s, x in zip(seeds, intervals, strict=True)}


def _orders_row(st: StudySummary) -> dict[str, dict[str, list[float]]]:
    return {stratum: {o: [round(float(v), 4) for v in a] for o, a in d.items()} for stratum, d in st.acc.items()}


def _preconditions(s: Summary, st: StudySummary, base: dict, p: ClaimParams, plans: Plans) -> list[Claim]:
    """Competence of both models (forward one-hop on the study programs, answer copy excluded) and of every compared
    decoder against their trivial ladders, the mechanism (the MDM reads infilled operands), and order headroom of
    the dependency order over the best fixed order."""
    answers, slots = _answer_ladder(base), _slot_ladder(st)
    count_answer = answers.strongest
    mcts = {d: v for d, v in s.per_seed.items() if d.startswith("mcts_")}
    fixed = {d: s.per_seed[d] for d in FIXED_ORDERS}
    dep, best = st.acc["all"]["dependency"], st.acc["all"]["best_fixed"]
    orders = Ladder.of("higher", {ORDER_LADDER[0]: mean_ci(best, unit=UNIT),
                                  ORDER_LADDER[1]: mean_ci(st.acc["all"]["l2r"], unit=UNIT)})
    headroom = paired_diff_ci(dep, best, unit=UNIT)
    ladder_row = {r.name: round(r.point(), 4) for r in slots.rungs}
    return [
        precondition("mdm_forward_one_hop_beats_count_table", "the MDM's forward one-hop accuracy (each value slot "
                     "predicted with only the slots before it in dependency order filled with true values; the "
                     "answer slot, a copy of the query's value, excluded) is above the count table's on the same "
                     "value slots, for every seed (paired over held-out programs)", slots.strongest.name,
                     {"forward_one_hop": _rows(st.forward, st.seeds),
                      "forward_minus_count_table": _rows(st.forward_vs_count, st.seeds), "ladder": ladder_row},
                     _per_seed(st, st.forward_vs_count, plans.programs, "forward one-hop - count table accuracy"),
                     ladder=slots),
        precondition("ar_one_hop_beats_count_table", "the AR's one-hop accuracy on the value slots (each predicted "
                     "from the true prefix; the answer slot, a copy, excluded) is above the count table's on the "
                     "same value slots, for every seed (paired over held-out programs)", slots.strongest.name,
                     {"one_hop": _rows(st.ar_value, st.seeds), "one_hop_minus_count_table": _rows(st.ar_vs_count,
                                                                                                  st.seeds),
                      "ladder": ladder_row},
                     _per_seed(st, st.ar_vs_count, plans.programs, "AR one-hop - count table accuracy"),
                     ladder=slots),
        precondition("mdm_reads_infilled_operands", f"on out-of-order programs a value slot's accuracy with its "
                     f"operand slots filled (true values) exceeds its accuracy with them masked by more than "
                     f"{p.mechanism_gain:g}, for every seed: the MDM reads the values an order infills (else no "
                     "order, searched or not, can act)", MASKED,
                     {"gain_out_of_order": _rows(st.gain, st.seeds),
                      "gain_operand_listed_right": _rows(st.gain_right, st.seeds),
                      "gain_in_order": _rows(st.gain_in_order, st.seeds)},
                     _per_seed(st, st.gain, plans.out_of_order, "filled - masked accuracy", p.mechanism_gain)),
        precondition("mcts_beats_count_answer", "every DiffuSearch grid point's exact-match accuracy is above the "
                     "strongest trivial answer predictor's", count_answer.name,
                     {"accuracy": {d: s.grid[d].rounded() for d in mcts},
                      "ladder": {r.name: round(r.point(), 4) for r in answers.rungs}},
                     _beat(mcts, answers, plans, "accuracy"), ladder=answers),
        precondition("fixed_orders_beat_count_answer", "every fixed-order plan-and-infill decoder compared "
                     "(left-to-right, confidence; the random order is reported, not required) has exact-match "
                     "accuracy above the strongest trivial answer predictor's", count_answer.name,
                     {"accuracy": {d: s.accuracy[d].rounded() for d in fixed},
                      "random_order_reported": s.accuracy["pi_random"].rounded(),
                      "ladder": {r.name: round(r.point(), 4) for r in answers.rungs}},
                     _beat(fixed, answers, plans, "accuracy"), ladder=answers),
        precondition("ar_beats_count_answer", "AR greedy's exact-match accuracy is above the strongest trivial "
                     "answer predictor's", count_answer.name,
                     {"accuracy": s.accuracy["ar"].rounded(),
                      "ladder": {r.name: round(r.point(), 4) for r in answers.rungs}},
                     _beat({"ar": s.per_seed["ar"]}, answers, plans, "accuracy"), ladder=answers),
        precondition("order_headroom", f"decoding the MDM in the dependency order beats the best fixed slot order "
                     f"by more than {p.headroom:g} (paired over seeds, on the order study's programs): what order "
                     "search can add over the search ladder's strongest rung", orders.strongest.name,
                     {"dependency_minus_best_fixed": headroom.rounded() | {"n": headroom.n},
                      "best_fixed_order": {f"seed {sd}": list(o) for sd, o in zip(st.seeds, st.best_order,
                                                                                  strict=True)},
                      "any_order_oracle_minus_best_fixed": paired_diff_ci(st.acc["all"]["any_order"], best,
                                                                          unit=UNIT).rounded(),
                      "accuracy_per_seed": _orders_row(st),
                      "programs": st.programs, "out_of_order_programs": st.out_of_order},
                     superiority(headroom, margin=p.headroom, what="dependency - best fixed order accuracy",
                                 plan=plans.seeds),
                     ladder=orders),
    ]


def claims(s: Summary, st: StudySummary, sanity: dict[str, dict], base: dict, p: ClaimParams,
           plans: Plans) -> list[Claim]:
    """The preconditions, then the abstract's findings (accuracy gains, c vs simulations, orders) and the cost check.
    ``st``: the order study; ``sanity``: per model kind, its per-seed one-hop slot accuracy (the true rest given,
    reported beside the AR comparison); ``base``: the baselines stage's numbers."""
    main = next(d for d in s.accuracy if d.startswith("mcts_"))
    fixed = [d for d in s.cost if d.startswith("pi_")]
    hop = ["mdm_forward_one_hop_beats_count_table"]
    mdm = [*hop, "mcts_beats_count_answer"]
    vs_fixed = [*mdm, "fixed_orders_beat_count_answer", "mdm_reads_infilled_operands", "order_headroom"]
    random_share = random_sequential_expectation(base["slots"])
    return [
        *_preconditions(s, st, base, p, plans),
        evidence("mcts_beats_plan_infill", "DiffuSearch's exact-match accuracy exceeds plan-and-infill's, the "
                 "paper's baseline (slots infilled in confidence order): the paired gain's interval lies above 0",
                 "+8.0 pp average over plan-and-infill (LLaDA/Dream-7B; MBPP +19.5, MATH500 +4.9)",
                 {"gain": s.gain_vs_confidence.rounded(), "mcts": s.accuracy[main].rounded(),
                  "plan_infill_confidence": s.accuracy["pi_confidence"].rounded()},
                 superiority(s.gain_vs_confidence, what="MCTS - confidence-order accuracy", plan=plans.seeds),
                 requires=vs_fixed),
        evidence("mcts_beats_best_fixed_order", "DiffuSearch's exact-match accuracy exceeds that of the best fixed "
                 "slot order (left-to-right, confidence or random, whichever has the highest mean): the paired "
                 "gain's interval lies above 0",
                 "+8.0 pp over plan-and-infill (the paper compares no other fixed order)",
                 {"gain": s.gain_vs_best_fixed.rounded(), "best_fixed": s.best_fixed,
                  "mcts": s.accuracy[main].rounded(), "best_fixed_accuracy": s.accuracy[s.best_fixed].rounded()},
                 superiority(s.gain_vs_best_fixed, what=f"MCTS - {s.best_fixed} accuracy", plan=plans.seeds),
                 requires=vs_fixed),
        evidence("mcts_at_least_on_par_with_ar", f"DiffuSearch's accuracy is no more than {p.par_tol:g} below AR "
                 "greedy's (same size, data and budget; non-inferiority of the paired difference)",
                 "+3.2 pp average over AR baselines",
                 {"gain": s.gain_vs_ar.rounded(), "ar": s.accuracy["ar"].rounded(), "mcts": s.accuracy[main].rounded(),
                  "model_gap_one_hop_mdm_minus_ar": paired_diff_ci(sanity["mdm"]["slot_accuracy"],
                                                                   sanity["ar"]["slot_accuracy"], unit=UNIT).rounded(),
                  "decoding_gain_mcts_minus_l2r": s.gain_vs_l2r.rounded()},
                 noninferiority(s.gain_vs_ar, margin=p.par_tol, direction="above", what="MCTS - AR accuracy",
                                plan=plans.seeds),
                 requires=[*mdm, "ar_one_hop_beats_count_table", "ar_beats_count_answer"]),
        evidence("exploration_beats_simulations", "raising c from the grid's min to max gains accuracy, and more than "
                 "raising the simulations from min to max (each averaged over the other axis; both intervals above 0)",
                 "larger exploration constants, not more simulations, overcome confidence bias",
                 {"effect_c": s.effect_c.rounded(), "effect_sims": s.effect_sims.rounded(),
                  "c_minus_sims": s.c_over_sims.rounded()},
                 all_of({"effect of c": superiority(s.effect_c, what="effect of c", plan=plans.seeds),
                         "c over simulations": superiority(s.c_over_sims, what="effect of c - effect of simulations",
                                                           plan=plans.seeds)}),
                 requires=[*mdm, "mdm_reads_infilled_operands", "order_headroom"]),
        evidence("orders_mostly_sequential", f"at least {p.mostly:g} of DiffuSearch's free commits (the forced last "
                 "one excluded) take the leftmost open slot, and more than a uniformly random order's expected "
                 "(H_S - 1) / (S - 1) (per-seed share, interval above both)",
                 "predominantly sequential (the chosen orders)",
                 {"sequential_share": s.sequential_share.rounded(),
                  "random_order_share": s.random_sequential_share.rounded(),
                  "random_order_expected": round(random_share, 4)},
                 all_of({"mostly": superiority(s.sequential_share, reference=p.mostly, what="sequential share",
                                               plan=plans.seeds),
                         "above random": superiority(s.sequential_share, reference=random_share,
                                                     what="sequential share", plan=plans.seeds)}), requires=mdm),
        evidence("deviations_beat_left_to_right", "on the tasks where DiffuSearch leaves the left-to-right order it "
                 "beats left-to-right infilling (paired over seeds, interval above 0)",
                 "non-sequential generation is essential",
                 {"deviated_share": round(s.deviated_share, 4), "deviated_mcts": s.deviated_mcts.rounded(),
                  "deviated_l2r": s.deviated_l2r.rounded(), "deviated_gain": s.deviated_gain.rounded()},
                 superiority(s.deviated_gain, what="MCTS - l2r accuracy on deviated tasks", plan=plans.seeds),
                 requires=vs_fixed),
        check("search_costs_forward_passes", "DiffuSearch spends more forward passes per solved task than every "
              "fixed-order plan-and-infill decoder (by construction: look-ahead rows on top of its commits)",
              "look-ahead simulations cost extra inference compute (no number given)",
              {d: round(v, 2) for d, v in s.cost.items()},
              exact(s.cost[main] > max(s.cost[d] for d in fixed), f"{main} {s.cost[main]:.2f} forward passes per "
                    f"solved task vs the fixed orders' most, {max(s.cost[d] for d in fixed):.2f}: forward passes "
                    "counted over every decoded test task", basis="fixed set")),
    ]
