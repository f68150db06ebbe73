"""Stage ``verify``: equivariance/reflection certificates of both denoisers, every training seed's network
(certificates.py; a variant passes when each of its networks does, its errors reported as the worst over seeds), and
the verified record of every generated peptide (records.py)."""

from __future__ import annotations

import pyarrow as pa
import torch

from paperdag.io import load_tensors, read_json, read_table, write_json, write_table
from paperdag.stage import StageContext

from .certificates import design_mirror_deviation, equivariance_errors, judge, worst_errors
from .geometry import CHIRAL_EPS
from .model import Denoiser
from .params import Params
from .prepare import EXAMPLES_FILE
from .records import design_record
from .reverify import CERTIFICATES_FILE, VERIFIED_FILE
from .seqhead import SequenceHead
from .train import CONFIG_FILE, DESIGNS_FILE, WEIGHTS_FILE, seed_weights
from .train_seq import SEQHEAD_FILE


def verify(ctx: StageContext[Params], variants: list[str]) -> dict[str, float]:
    """certificates.json (verdicts with their numbers) and designs_verified.parquet (one row per design)."""
    p = ctx.params
    targets = [r for r in read_table(ctx.input("prepare", EXAMPLES_FILE)).to_pylist() if r["split"] == "target"]
    net = SequenceHead()
    net.load_state_dict(load_tensors(ctx.input("train_seq", SEQHEAD_FILE)))
    net.eval()
    certs, records, summary = {}, [], {}
    for v in variants:
        config = read_json(ctx.input(f"train_{v}", CONFIG_FILE))
        weights = load_tensors(ctx.input(f"train_{v}", WEIGHTS_FILE))
        per_seed = {}
        for s in config["seeds"]:
            model = Denoiser.from_config(config)
            model.load_state_dict(seed_weights(weights, s))
            errors = equivariance_errors(model.to(torch.float64).eval(), targets, p.data.pocket_max, ctx.rng)
            per_seed[str(s)] = errors | judge(errors, config["axial"], p.certificate)
        errors = worst_errors(list(per_seed.values()), config["axial"])
        designs = read_table(ctx.input(f"train_{v}", DESIGNS_FILE)).to_pylist()
        certs[v] = errors | judge(errors, config["axial"], p.certificate) | {
            "design_mirror_deviation_A": design_mirror_deviation(designs, targets),
            "model_versions": config["versions"], "seeds": per_seed}
        records += [design_record(d, targets[d["target_index"]], v, net, p.quality, p.contact_dist) for d in designs]
        summary |= {f"{v}_{k}": errors[k] for k in ("rotation_error", "reflection_error")}
    certs["tolerances"] = p.certificate.model_dump() | {"chirality_eps_A3": CHIRAL_EPS}
    write_json(ctx.output(CERTIFICATES_FILE), certs)
    write_table(ctx.output(VERIFIED_FILE), pa.Table.from_pylist(records))
    return summary | {"all_certificates_pass": float(all(certs[v]["passes"] for v in variants))}
