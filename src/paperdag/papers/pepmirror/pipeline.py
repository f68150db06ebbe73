"""The pepmirror DAG: prepare -> train_<variant> for each variant, train_seq -> verify -> export (full-atom) ->
evaluate.
Imported only by the registry."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

VARIANTS = ("polar", "axial")  # the reflection-equivariant baseline, then the method: one train function, two args
TRAINED = tuple(f"train_{v}" for v in VARIANTS)
TRAIN_OUT = ("model.safetensors", "config.json", "designs.parquet", "loss.png")
EXPORT_OUT = ("candidate_manifest.json", "candidates.fasta", "candidates_three_letter.txt", "order_sheet.csv",
              "order_sheet.parquet", "candidates.sdf", "sdf", "complexes", "fullatom", "fullatom_energies.parquet")

PIPELINE = Pipeline(
    slug="pepmirror",
    title="PepMirror: chirality-aware equivariant peptide design (polar vs polar+axial) and D-peptide export",
    headline=("L_ratio_polar_native_target", "L_ratio_polar_mirrored_target", "L_ratio_axial_mirrored_target",
              "seq_recovery", "seq_perplexity", "fullatom_median_interaction_after", "export_n_pass"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("data",),
              outputs=("examples.parquet", "target_atoms.parquet", "provenance.json")),
        *(Stage(f"train_{v}", "train", "train:train", upstream=("prepare",),
                params=("data", "denoiser", "training", "design"), outputs=TRAIN_OUT, plots=("loss.png",),
                args={"variant": v}, resources=Resources(cpus=1, gpus=0.5)) for v in VARIANTS),
        Stage("train_seq", "train", "train_seq:train_seq", upstream=("prepare",), params=("seqhead",),
              outputs=("seqhead.safetensors", "seq_eval.json")),
        Stage("verify", "verify", "verify:verify", upstream=("prepare", *TRAINED, "train_seq"),
              params=("data", "certificate", "quality", "contact_dist"),
              outputs=("certificates.json", "designs_verified.parquet"), args={"variants": list(VARIANTS)}),
        Stage("export", "export", "export:export", upstream=("prepare", "verify"),
              params=("export", "quality", "fullatom"), outputs=EXPORT_OUT),
        Stage("evaluate", "evaluate", "evaluate:evaluate", upstream=("prepare", "verify", "train_seq", "export"),
              params=("seed", "claims", "certificate", "quality", "contact_dist", "export", "plans"),
              outputs=("metrics.json", "chirality.png", "fullatom.png", "quality.png"),
              plots=("chirality.png", "fullatom.png", "quality.png"),
              args={"variants": list(VARIANTS)}),
    ),
    reverify="reverify:reverify",
)
