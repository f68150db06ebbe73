"""The paper's claims restated for our scale: a pure function from measured numbers and per-design records to claims.

- preconditions: each denoiser learned the native hand (its per-design L-residue ratio on native targets is at most
  ``1 - native_hand_min`` below the training hand's ceiling, 1.0: a bound); each designs for the mirrored target
  rather than ignoring its hand (its designs there beat the strongest trivial design on the export's in-silico
  score, paired by target and sample: the ladder is the majority-hand design, baseline.py, and training-data replay);
  the sequence head beats the majority class (then the training composition) in recovery and the composition in NLL;
- evidence: the axial model keeps the requested L hand on mirrored targets while designing for them: ``all_of``
  its L-residue ratio above ``clear_majority`` and its in-silico score above the unmirrored L design's (the
  majority-hand trivial design) of the same (seed, target, sample), paired; at quality non-inferior to the polar
  model's (the ratio axial / polar of each quality mean, clashes polar / axial, above ``quality_ratio_min``, a
  crossed interval of the ratio that carries the polar mean's uncertainty);
- checks: equivariance certificates, the polar model's mirrored designs (reflection equivariance forces them),
  the full-atom minimisation and clashes, the export re-check (implementation invariants, not reproductions).

The unit of every design interval is the (training seed, held-out target) cell: the designs of one target come
from one trained network per variant and share its pocket, so they are one cell, not several. Seeds and targets are
crossed (every network designs for every target) and both random: a method-level claim generalises over networks as
well as pockets, so every design interval is the crossed design's (``paperdag.common.crossed``: two-way
random-effects ANOVA of the cells' means, Satterthwaite df), which carries the seed-to-seed variance that an interval
resampling cells as if independent leaves out. Means and differences are crossed t intervals, hand ratios shares of
residues on their bounded scale (Korn & Graubard at the crossed effective size and df), quality ratios the delta
method's linearisation; every reason prints n as seeds x targets, and an underpowered one the training seeds that
would resolve it at the observed components. The sequence head's intervals are cluster bootstraps over held-out
files (train_seq.py). A claim over several comparisons is ``all_of`` (Holm for fails, intersection-union for holds).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pandas as pd

from paperdag.common.crossed import MAX_SEEDS, Crossed, crossed_mean_ci, crossed_proportion_ci, crossed_ratio_ci
from paperdag.common.stats import Interval
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

from .params import CertificateParams, ClaimParams, Plans
from .summary import QUALITY

VARIANTS = ("polar", "axial")
PAIR = ["train_seed", "target_id", "sample"]  # designs of the two variants pair on these
UNIT = "(seed, target) unit"  # one trained network (per variant) x one held-out pocket
UNDERPOWERED = re.compile(r"underpowered: .*? would resolve it")  # the platform's projection in independent units
HAND_CEILING = "the training hand's ceiling: every residue L, L-residue ratio 1.0"
TRIVIAL_DESIGN = ("the majority-hand trivial design: the variant's own L design for the native target, unmirrored, "
                  "in the mirrored pocket (keeps the L hand by ignoring the target's hand)")
REPLAY = "training-data replay: a length-matched training peptide at its own pocket offset"
MAJORITY_CLASS = "the majority residue type"
COMPOSITION = "the training composition (sampled residue types)"


def _ci(x: Interval | Crossed, digits: int = 4) -> dict[str, object]:
    """An interval as recorded in metrics; a crossed one with its variance components (per cell, on the linearised
    scale) and df."""
    i = x.interval if isinstance(x, Crossed) else x
    row: dict[str, object] = {"mean": round(i.mean, digits), "ci": [round(i.lo, digits), round(i.hi, digits)], "n": i.n}
    return row | ({"components": x.components.row()} if isinstance(x, Crossed) else {})


def by_unit(values: pd.Series | np.ndarray, rows: pd.DataFrame) -> Crossed:
    """The mean of per-design values over (seed, target) cells with its crossed interval (n = cells)."""
    return crossed_mean_ci(values, rows["train_seed"], rows["target_id"], unit=UNIT)


def hand_share(rows: pd.DataFrame, hand: str = "L") -> Crossed:
    """The share of residues of ``hand`` over every residue of the designs: Korn-Graubard at the crossed design's
    effective size, bounded in [0, 1], n = cells."""
    hands = rows["residue_hands"].tolist()
    return crossed_proportion_ci([h.count(hand) for h in hands], [len(h) for h in hands], rows["train_seed"],
                                 rows["target_id"], unit=UNIT)


def in_seeds(j: Judgement, x: Crossed, boundary: float) -> Judgement:
    """An underpowered judgement whose reason says how many training seeds (at the same targets and observed
    components, ``Crossed.seeds_to_resolve``) would resolve it, in place of the platform's count of independent
    units, which a crossed design does not have."""
    if j.cause != "underpowered":
        return j
    seeds = x.seeds_to_resolve(lambda lo, hi: lo > boundary or hi < boundary)  # the side its estimate is on
    t = x.components.targets
    words = (f"underpowered: ~{seeds} training seeds x {t} targets at the observed variance components would "
             "resolve it" if seeds else f"underpowered: not even {MAX_SEEDS} training seeds at these {t} targets "
             "would resolve it (the target term stays)")
    return replace(j, reason=UNDERPOWERED.sub(words, j.reason))


def units_text(rows: pd.DataFrame) -> str:
    """'S seeds x T targets' of the rows' units."""
    s, t = rows["train_seed"].nunique(), rows["target_id"].nunique()
    return f"{s} seed{'s' * (s != 1)} x {t} target{'s' * (t != 1)}"


def counted(j: Judgement, rows: pd.DataFrame) -> Judgement:
    """The judgement with every 'n=N (seed, target) units' of its reason followed by its seeds x targets."""
    tag = f"(seed, target) unit{'s' * (j.n != 1)}"
    return replace(j, reason=j.reason.replace(f"n={j.n} {tag}", f"n={j.n} {tag} = {units_text(rows)}"))


def _designs(designs: pd.DataFrame, variant: str, hand: str) -> pd.DataFrame:
    """One variant's designs on targets of ``hand`` (L native, D mirrored), in (seed, target, sample) order."""
    rows = designs[(designs["variant"] == variant) & (designs["target_hand"] == hand)]
    return rows.sort_values(PAIR).reset_index(drop=True)


def _learned_native_hand(designs: pd.DataFrame, m: dict[str, float], v: str, p: ClaimParams, plans: Plans) -> Claim:
    rows = _designs(designs, v, "L")
    ratio = hand_share(rows)
    return precondition(
        f"{v}_learned_native_hand", f"trained on L-L complexes, the {v} denoiser designs L peptides for held-out "
        f"native targets: its L-residue ratio is at most {1 - p.native_hand_min:g} below the training hand's ceiling "
        "of 1.0 (it learned its task before mirrored targets are judged; residues of a (seed, target) cell "
        "clustered, seeds and targets crossed)",
        HAND_CEILING,
        {"L_ratio": _ci(ratio), "units": units_text(rows), "L_ratio_residues": m[f"L_ratio_{v}_native_target"]},
        counted(in_seeds(noninferiority(ratio.interval, margin=1 - p.native_hand_min, direction="above",
                                        reference=1.0, what=f"{v}'s L-residue ratio on native targets",
                                        plan=plans.targets), ratio, p.native_hand_min), rows))


def _with_replay(paired: pd.DataFrame, replay: pd.DataFrame) -> pd.DataFrame:
    """The paired designs with the replayed training peptide of their (target, sample) (one per (target, sample),
    the same for every training seed)."""
    return paired.merge(replay[["target_id", "sample", "in_silico"]].rename(columns={"in_silico": "in_silico_replay"}),
                        on=["target_id", "sample"], validate="many_to_one")


def _beats_trivial_design(paired: pd.DataFrame, replay: pd.DataFrame, v: str, plans: Plans) -> Claim:
    """The variant's designs on mirrored targets against the strongest rung of the trivial-design ladder (the
    majority-hand design, training-data replay), paired by (seed, target, sample), clustered by (seed, target)."""
    rows = _with_replay(paired, replay)
    rung = {TRIVIAL_DESIGN: "in_silico_trivial", REPLAY: "in_silico_replay"}
    ladder = Ladder.of("higher", {name: by_unit(rows[col], rows).interval for name, col in rung.items()})
    diff = by_unit(rows["in_silico_design"] - rows[rung[ladder.strongest.name]], rows)
    return precondition(
        f"{v}_beats_majority_hand_design", f"on mirrored targets the {v} denoiser designs for the target it is given: "
        "its designs score above the strongest trivial design of the same (seed, target, sample) on the in-silico "
        "score (buried surface - clash_penalty x clashes; paired, 95% crossed CI over (seed, target) cells above 0)",
        ladder.strongest.name,
        {"in_silico_design": _ci(by_unit(rows["in_silico_design"], rows), 2),
         "ladder": {r.name: _ci(r.value, 2) for r in ladder.rungs},
         "difference_vs_strongest": _ci(diff, 2), "units": units_text(rows),
         "native_recovery_design": round(float(rows["native_recovery_design"].mean()), 4),
         "native_recovery_trivial": round(float(rows["native_recovery_trivial"].mean()), 4),
         "L_ratio_design": round(float(rows["L_ratio_design"].mean()), 4),
         "L_ratio_trivial": round(float(rows["L_ratio_trivial"].mean()), 4)},
        counted(in_seeds(superiority(diff.interval, what=f"{v}'s in-silico score minus the strongest trivial "
                                     "design's", plan=plans.targets), diff, 0.0), rows),
        ladder=ladder)


def _requested_hand(designs: pd.DataFrame, paired: pd.DataFrame, m: dict[str, float], p: ClaimParams,
                    plans: Plans) -> tuple[Judgement, dict[str, object]]:
    """The hand claim with its condition: the axial model's L-residue ratio on mirrored targets above
    ``clear_majority`` AND its designs' in-silico score above the unmirrored L design's (the majority-hand trivial
    design, which keeps L by ignoring the target's hand) of the same (seed, target, sample), paired."""
    rows = _designs(designs, "axial", "D")
    ratio = hand_share(rows)
    gain = by_unit(paired["in_silico_design"] - paired["in_silico_trivial"], paired)
    parts = {"L ratio": in_seeds(superiority(ratio.interval, reference=p.clear_majority, what="axial's L-residue "
                                             "ratio on mirrored targets", plan=plans.targets), ratio,
                                 p.clear_majority),
             "designs for the target": in_seeds(superiority(gain.interval, what="axial's in-silico score minus the "
                                                            "unmirrored L design's (paired)", plan=plans.targets),
                                                gain, 0.0)}
    measured = {"L_ratio": _ci(ratio), "in_silico_minus_unmirrored_L": _ci(gain, 2), "units": units_text(rows),
                "L_ratio_residues": m["L_ratio_axial_mirrored_target"],
                "unmirrored_L_design_L_ratio": m["L_ratio_axial_trivial_majority_hand"],
                "raw_L_ratio_mirrored": m["L_ratio_raw_axial_mirrored_target"],
                "raw_undefined_ratio_mirrored": m["undefined_ratio_raw_axial_mirrored_target"],
                "hand_following_baseline_L_ratio": m["L_ratio_polar_mirrored_target"],
                "parts": {k: j.verdict for k, j in parts.items()}}
    return counted(all_of(parts), rows), measured


def _sequence_head(m: dict[str, float], plans: Plans) -> Claim:
    """Recovery gain over the majority class (the strongest of the ladder's counting rungs: the majority class and
    residue types sampled from the training composition) and NLL gain over the composition, with their
    cluster-bootstrap intervals over held-out files (train_seq.py); the NLL gain's estimate is
    log(composition perplexity / perplexity)."""
    n = int(m["seq_n_heldout_files"])
    ladder = Ladder.of("higher", {MAJORITY_CLASS: m["seq_majority_recovery"],
                                  COMPOSITION: m["seq_composition_expected_recovery"]})
    recovery = Interval(m["seq_recovery"] - m["seq_majority_recovery"], m["seq_recovery_gain_ci_low"],
                        m["seq_recovery_gain_ci_high"], n, unit="file", method="bootstrap")
    nll = Interval(math.log(m["seq_composition_perplexity"] / m["seq_perplexity"]), m["seq_nll_gain_ci_low"],
                   m["seq_nll_gain_ci_high"], n, unit="file", method="bootstrap")
    return precondition(
        "sequence_head_beats_trivial", "the sequence head on held-out complexes (native backbone + pocket): native "
        "sequence recovery above the strongest counting predictor's and NLL below the training composition's (95% "
        "cluster-bootstrap intervals over held-out files above 0)", ladder.strongest.name,
        {"recovery": m["seq_recovery"], "ladder_recovery": {r.name: round(r.point(), 4) for r in ladder.rungs},
         "recovery_gain_ci": [m["seq_recovery_gain_ci_low"], m["seq_recovery_gain_ci_high"]],
         "perplexity": m["seq_perplexity"], "composition_perplexity": m["seq_composition_perplexity"],
         "nll_gain_ci": [m["seq_nll_gain_ci_low"], m["seq_nll_gain_ci_high"]],
         "recovery_real_complexes": m["seq_recovery_real_complexes"], "heldout_files": n},
        all_of({"recovery": superiority(recovery, what=f"recovery gain over {MAJORITY_CLASS}", plan=plans.files),
                "NLL": superiority(nll, what="NLL gain over the composition (nats)", plan=plans.files)}),
        ladder=ladder)


def mirrored_pair(designs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The polar and the axial designs on mirrored targets, row i of each the same (seed, target, sample)."""
    polar, axial = _designs(designs, "polar", "D"), _designs(designs, "axial", "D")
    if not polar[PAIR].equals(axial[PAIR]):
        raise ValueError("polar and axial designs on mirrored targets do not pair by (seed, target, sample)")
    return polar, axial


def _oriented(polar: pd.DataFrame, axial: pd.DataFrame, k: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(numerator, denominator) designs of quality metric k's ratio: axial / polar, or polar / axial where lower
    is better (QUALITY's sign -1: clashes)."""
    return (axial, polar) if QUALITY[k] > 0 else (polar, axial)


def quality_ratio(polar: pd.DataFrame, axial: pd.DataFrame, k: str) -> Crossed:
    """Quality metric k's ratio of the cells' means (``_oriented``) with its crossed interval: both arms' means from
    the same cells, so it carries the polar mean's uncertainty and the seed-to-seed variance of both networks."""
    num, den = _oriented(polar, axial, k)
    return crossed_ratio_ci(num[k], den[k], polar["train_seed"], polar["target_id"], unit=UNIT)


def _quality_noninferior(designs: pd.DataFrame, p: ClaimParams, plans: Plans) -> tuple[Judgement, dict[str, object]]:
    """Per quality metric, the ratio axial / polar of the means over (seed, target) units on mirrored targets
    (clashes, where lower is better: polar / axial) above ``quality_ratio_min`` (``quality_ratio``)."""
    polar, axial = mirrored_pair(designs)
    judged, measured = {}, {"units": units_text(polar)}
    for k, sign in QUALITY.items():
        ratio = quality_ratio(polar, axial, k)
        what = "axial / polar" if sign > 0 else "polar / axial"
        judged[k] = in_seeds(noninferiority(ratio.interval, margin=1 - p.quality_ratio_min, direction="above",
                                            reference=1.0, what=f"{what} {k}", plan=plans.targets), ratio,
                             p.quality_ratio_min)
        measured[k] = {"polar": _ci(by_unit(polar[k], polar)), "axial": _ci(by_unit(axial[k], axial)),
                       "ratio": {"of": what} | _ci(ratio), "verdict": judged[k].verdict}
    return counted(all_of(judged), polar), measured


def seed_ratios(designs: pd.DataFrame) -> dict[str, dict[int, float]]:
    """Per quality metric, each training seed's ratio of means over its mirrored targets (``_oriented``): what the
    crossed interval's seed term is made of."""
    polar, axial = mirrored_pair(designs)
    out = {}
    for k in QUALITY:
        num, den = _oriented(polar, axial, k)
        ratio = num.groupby("train_seed")[k].mean() / den.groupby("train_seed")[k].mean()
        out[k] = {int(s): float(r) for s, r in ratio.items()}
    return out


def _checks(m: dict[str, float], passes: dict[str, bool], package: dict[str, int], p: ClaimParams,
            cert: CertificateParams) -> list[Claim]:
    """Certificates, the polar model's forced mirroring, full-atom minimisation and the export re-check."""
    polar_l, polar_d_native = m["L_ratio_polar_mirrored_target"], m["D_ratio_polar_native_target"]
    mirrored = abs(polar_l - polar_d_native) < 1e-12
    fa_problems = [why for bad, why in (
        (m["fullatom_converged_fraction"] < 1,
         f"a minimisation stopped above its tolerance (RMS force {m['fullatom_max_rms_force_after']:.2g})"),
        (m["fullatom_max_clashes_after"] > 0,
         f"a candidate keeps {m['fullatom_max_clashes_after']:g} heavy-atom clash(es) after minimisation"),
        (m["fullatom_max_interaction_after"] >= 0,
         f"a candidate binds unfavourably ({m['fullatom_max_interaction_after']:.0f} kJ/mol)"),
        (m["fullatom_max_mirror_energy_rel_diff"] > p.mirror_energy_rel_tol,
         f"mirror energy differs by {m['fullatom_max_mirror_energy_rel_diff']:.1e} (relative)"),
        (m["fullatom_n"] == 0, "no full-atom candidate"),
        (m.get("fullatom_n_requested", m["fullatom_n"]) > m["fullatom_n"] > 0,
         f"the package is short: {m['fullatom_n']:g} of {m.get('fullatom_n_requested', 0):g} candidates (the eligible "
         "ranked designs ran out, or more than export.max_rejected could not be relaxed)")) if bad]
    n_rej = m.get("fullatom_n_rejected", 0.0)
    replaced = (f"; {n_rej:g} of {m['fullatom_n'] + n_rej:g} ranked designs tried could not be relaxed "
                f"({m.get('fullatom_n_rejected_clash', 0):g} with a clash left, "
                f"{m.get('fullatom_n_rejected_unconverged', 0):g} not converged), each rejected for the next ranked"
                if n_rej else "")
    export_ok = package["n_exported"] > 0 and package["n_pass"] == package["n_exported"]
    return [
        check("equivariance_certificates",
              f"both denoisers rotation-equivariant (rel. error < {cert.equiv_tol:g}); polar satisfies f(Px)=Pf(x), "
              f"axial violates it by > {cert.reflection_min_violation:g}", "by construction",
              {k: m[k] for k in m if k.endswith(("rotation_error", "reflection_error"))},
              exact(passes["polar"] and passes["axial"], "an equivariance certificate failed (see measured)",
                    basis="certificate")),
        check("polar_wrong_hand_on_mirrored_targets",
              "polar-only model on mirrored (D) targets: reflection equivariance with mirrored noise makes its designs "
              "the mirror images of its native-target designs, so its L-residue ratio there equals its native D ratio "
              "(~0 once it learned the native hand: polar_learned_native_hand)", "~0%",
              {"L_ratio_mirrored": polar_l, "D_ratio_native": polar_d_native,
               "L_ratio_native": m["L_ratio_polar_native_target"],
               "design_mirror_deviation_A": m["polar_design_mirror_deviation_A"]},
              exact(mirrored, f"mirrored L ratio {polar_l:.4f} vs the native D ratio {polar_d_native:.4f}, counted "
                    "over every residue of every design", basis="enumeration")),
        check("fullatom_candidates_energy_checked",
              "every exported D-peptide, built full-atom in mirror space and amber14-minimised to convergence (RMS "
              "force below the minimiser's tolerance): no heavy-atom clash, favourable interaction energy (< 0), and "
              f"its mirrored-back complex has the mirror-space energy (rel. diff <= {p.mirror_energy_rel_tol:g}); "
              "the package holds every requested candidate (a ranked design that cannot be relaxed is replaced by "
              "the next, at most export.max_rejected times)",
              "no energy threshold stated: the paper's D-peptide candidates were checked in the wet lab (CD38)",
              {"n": m["fullatom_n"], "clashes_before_max": m["fullatom_max_clashes_before"],
               "clashes_after_max": m["fullatom_max_clashes_after"],
               "interaction_kJ_before_median": m["fullatom_median_interaction_before"],
               "interaction_kJ_after_median": m["fullatom_median_interaction_after"],
               "interaction_kJ_after_max": m["fullatom_max_interaction_after"],
               "buried_surface_after_mean": m["fullatom_mean_buried_surface_after"],
               "hbonds_after_mean": m["fullatom_mean_hbonds_after"],
               "mirror_energy_rel_diff_max": m["fullatom_max_mirror_energy_rel_diff"],
               "converged_fraction": m["fullatom_converged_fraction"],
               "rms_force_after_max_kJ_nm": m["fullatom_max_rms_force_after"],
               "requested": m.get("fullatom_n_requested", m["fullatom_n"]),
               "rejected_not_relaxable": m.get("fullatom_n_rejected", 0.0),
               "replacements": replaced[2:] or "none: every ranked design tried was relaxed"},
              exact(not fa_problems, "; ".join(fa_problems) + replaced if fa_problems else
                    f"every one of the {m['fullatom_n']:g} exported candidates checked{replaced}", basis="enumeration")),
        check("export_checks", "every exported D-peptide passes the chirality (backbone PDB; full-atom PDB and mmCIF, "
              "every stereocentre), CIP and InChIKey (differs from its L-enantiomer) checks re-read from the files",
              "all", package, exact(export_ok, f"{package['n_pass']}/{package['n_exported']} pass",
                                    basis="enumeration")),
    ]


def claims(m: dict[str, float], designs: pd.DataFrame, paired: dict[str, pd.DataFrame], replay: pd.DataFrame,
           passes: dict[str, bool], package: dict[str, int], p: ClaimParams, cert: CertificateParams,
           plans: Plans) -> list[Claim]:
    """From the summary numbers ``m``, the verified ``designs`` (one row per design: variant, target_id,
    target_hand, sample, L_ratio and the QUALITY metrics), each variant's mirrored-target designs ``paired`` with
    its trivial majority-hand designs (baseline.paired_with_mirrored, with in_silico_design / in_silico_trivial),
    the replayed training peptides of every (target, sample) (baseline.replay_designs), the certificate ``passes``,
    the export re-check ``package``, the thresholds and the sample-size plans."""
    learned = {v: _learned_native_hand(designs, m, v, p, plans) for v in VARIANTS}
    designs_for_target = {v: _beats_trivial_design(paired[v], replay, v, plans) for v in VARIANTS}
    hand, hand_measured = _requested_hand(designs, paired["axial"], m, p, plans)
    quality, quality_measured = _quality_noninferior(designs, p, plans)
    all_pre = [c.id for c in (*learned.values(), *designs_for_target.values())]
    return [
        *learned.values(),
        *designs_for_target.values(),
        _sequence_head(m, plans),
        evidence("axial_requested_hand_majority",
                 f"axial model on mirrored (D) targets designs for the target in the requested L hand: its L-residue "
                 f"ratio above {p.clear_majority:g} (95% Korn-Graubard interval, residues clustered by (seed, target)) "
                 "AND its in-silico score above the unmirrored L design's of the same (seed, target, sample), which "
                 "keeps L by ignoring the target's hand (paired, 95% crossed CI above 0); cross-chirality design "
                 "from L-L training", "clear majority", hand_measured, hand, requires=[learned["axial"].id]),
        evidence("axial_quality_noninferior",
                 f"axial designs on mirrored targets at least as good as polar's: the ratio of means over (seed, "
                 f"target) cells axial / polar (polar / axial for clashes) above {p.quality_ratio_min:g} (95% crossed "
                 "interval of the ratio, seeds and targets random) on contacts, buried surface, native CA recovery "
                 "and clashes",
                 "axial >= polar in silico", quality_measured, quality, requires=all_pre),
        *_checks(m, passes, package, p, cert),
    ]
