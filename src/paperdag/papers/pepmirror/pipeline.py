"""PepMirror DAG: prepare -> (train_polar | train_axial | train_seq) -> verify -> export -> evaluate."""

from paperdag.dag import Pipeline, Resources, Stage
from paperdag.papers.pepmirror.params import Params

DATA = ("pocket_radius", "pocket_max", "min_pocket", "seg_min_len", "seg_max_len", "seg_stride", "heldout_every",
        "n_segment_targets", "max_train_examples")
MODEL = ("hidden", "vec_channels", "n_layers", "diffusion_steps", "coord_scale", "pocket_max", "train_steps",
         "batch_size", "lr", "n_samples", "refine_iters")
TRAIN_OUT = ("model.safetensors", "config.json", "designs.parquet", "loss.png")

PIPELINE = Pipeline(
    slug="pepmirror",
    title="PepMirror: chirality-aware equivariant peptide design (polar vs polar+axial) and D-peptide export",
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=DATA,
              outputs=("examples.parquet", "target_atoms.parquet", "provenance.json")),
        Stage("train_polar", "train", "train:train_polar", upstream=("prepare",), params=MODEL, outputs=TRAIN_OUT,
              plots=("loss.png",), resources=Resources(cpus=1, gpus=0.5)),
        Stage("train_axial", "train", "train:train_axial", upstream=("prepare",), params=MODEL, outputs=TRAIN_OUT,
              plots=("loss.png",), resources=Resources(cpus=1, gpus=0.5)),
        Stage("train_seq", "train", "seqhead:train_seq", upstream=("prepare",),
              params=("contact_dist", "seq_train_steps", "seq_lr"), outputs=("seqhead.safetensors",)),
        Stage("verify", "verify", "verify:verify", upstream=("prepare", "train_polar", "train_axial", "train_seq"),
              params=("pocket_max", "equiv_tol", "reflection_min_violation", "contact_dist", "clash_dist",
                      "recovery_dist"),
              outputs=("certificates.json", "designs_verified.parquet")),
        Stage("export", "export", "export:export", upstream=("prepare", "verify"),
              params=("n_export", "per_target_export"),
              outputs=("candidate_manifest.json", "candidates.fasta", "candidates_three_letter.txt", "order_sheet.csv",
                       "order_sheet.parquet", "candidates.sdf")),
        Stage("evaluate", "evaluate", "evaluate:evaluate", upstream=("verify", "export"),
              params=("near_zero", "clear_majority", "noninferiority_margin", "equiv_tol",
                      "reflection_min_violation"),
              outputs=("metrics.json", "chirality.png"), plots=("chirality.png",)),
    ),
    reverify="evaluate:reverify",
)
