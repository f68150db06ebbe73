"""``paperdag verify scp_delta [FOLDER]``: redo every stored certificate row from the verify folder alone.

The folder holds certificates.parquet, certificate.json (model shape, code digits) and models/ (the weights). For
each (seed, prompt) the enumeration of certify.py runs again on the stored weights in float64 and every row must
hold: its k_x is at least the recomputed max_o log P(o) / Q(o) (the bound is valid) and equals it within TOL (the
exact value, not a loose one), its witness outcome attains it, its minimax bound is reproduced, and every model the
prompt's enumeration certifies has its rows. A folder without these files or asking for a model or a code space
beyond the paper's bounds (params.py) is REFUSED before any forward pass; a row that does not hold is REFUTED;
``--budget`` counts canary prompts.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import torch

from paperdag.io import read_json, read_table
from paperdag.verification import Outcome, Refused, Result, Work, require_files

from .certify import CERTIFICATE_FILE, META_FILE, MODELS_DIR, log_ratios
from .lm import model_config
from .models import Models
from .params import ModelParams, RecordParams

TOL = 1e-9  # nats: float64 round-off of the enumeration (a factor 1 + 1e-9 on a probability)
Key = tuple[str, float | None, str]


def row_problems(row: dict, diff: torch.Tensor, minimax: float) -> list[str]:
    """What is wrong with one stored row given the recomputed log-ratios of its (method, keep_mass, safe)."""
    k, k_new = float(row["k"]), float(diff.max())
    problems = []
    if not k >= k_new - TOL:
        problems.append(f"bound violated: stored k {k:.6g} < recomputed {k_new:.6g}")
    elif not abs(k - k_new) <= TOL:
        problems.append(f"not exact: stored k {k:.6g}, recomputed {k_new:.6g}")
    w = int(row["witness"])
    if not (0 <= w < len(diff) and abs(float(diff[w]) - k_new) <= TOL):
        problems.append(f"witness {w} does not attain k")
    if not abs(float(row["minimax"]) - minimax) <= TOL:
        problems.append(f"minimax stored {float(row['minimax']):.6g}, recomputed {minimax:.6g}")
    return problems


def _key(row: dict) -> Key:
    km = float(row["keep_mass"])
    return row["method"], None if math.isnan(km) else km, row["safe"]


def prompt_problems(models: Models, rows: list[dict], digits: int) -> list[str]:
    """Every problem of the stored rows of one (seed, prompt)."""
    masses = sorted({km for _, km, _ in map(_key, rows) if km is not None})
    ratios, minimax = log_ratios(models, rows[0]["prompt"], digits, masses)
    fresh = {(m, None if math.isnan(km) else km, q): diff for (m, km, q), diff in ratios.items()}
    where = f"seed {rows[0]['seed']} {rows[0]['canary']}"
    found = [f"{where}: {key} recomputed but not stored" for key in fresh.keys() - set(map(_key, rows))]
    for row in rows:
        key = _key(row)
        if key not in fresh:
            found.append(f"{where}: {key} is no model the enumeration certifies")
        else:
            found += [f"{where} {key}: {p}" for p in row_problems(row, fresh[key], minimax)]
    return found


def reverify(folder: Path, work: Work) -> Result:
    """Every certificate row of the folder redone (module docstring)."""
    folder = Path(folder)
    require_files(folder, META_FILE, CERTIFICATE_FILE, MODELS_DIR)
    meta = read_json(folder / META_FILE)
    try:
        cfg = model_config(ModelParams.model_validate(meta["model"]))
    except (KeyError, ValueError) as e:
        raise Refused("model", f"{META_FILE} states no model within the paper's bounds ({type(e).__name__})") from None
    bound = next(m.le for m in RecordParams.model_fields["code_digits"].metadata if getattr(m, "le", None))
    digits = int(meta.get("code_digits", 0))
    if not 1 <= digits <= bound:
        raise Refused("code_digits", f"{digits} outside the paper's bound 1..{bound}")
    rows = read_table(folder / CERTIFICATE_FILE).to_pylist()
    if not rows:
        raise Refused(CERTIFICATE_FILE, "the certificate has no rows")
    by_prompt: dict[tuple[int, str], list[dict]] = defaultdict(list)
    for r in rows:
        by_prompt[(int(r["seed"]), r["prompt"])].append(r)
    found: list[str] = []
    models, loaded = None, None
    for (seed, _), prompt_rows in work.each(sorted(by_prompt.items()), "canary prompts"):
        if loaded != seed:
            paths = {"p0": folder / MODELS_DIR / "p0.safetensors"}
            paths |= {m: folder / MODELS_DIR / f"seed{seed}" / f"{m}.safetensors" for m in ("q1", "q2", "q_full")}
            models, loaded = Models.load(cfg, paths, "cpu"), seed
        found += prompt_problems(models, prompt_rows, digits)
    if found:
        return Result(Outcome.REFUTED, f"{len(found)} problem(s) in {len(rows)} rows; first: {found[0]}")
    return Result(Outcome.VERIFIED, f"{len(rows)} certificate rows of {len(by_prompt)} canary prompts redone: every "
                                    f"k_x is the exact max-divergence over the codes (tol {TOL:g} nats)")
