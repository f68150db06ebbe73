"""The scp_delta DAG: prepare -> train_p0 -> {train_q1, train_q2, train_q_full} -> verify -> evaluate."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

SHARD_MODELS = ("q1", "q2", "q_full")  # fine-tuned from p0 on shard 1, shard 2 and both: one function, fanned out
TRAINED = ("train_p0", *(f"train_{m}" for m in SHARD_MODELS))
DATA = ("n_seeds", "public", "records")
SCP = ("keep_mass", "sparsity_grid")
GPU = Resources(cpus=1, gpus=0.5)
PLOTS = ("bounds.png", "exposure.png", "utility.png", "sparsity.png")

PIPELINE = Pipeline(
    slug="scp_delta",
    title="SCP-Delta_r: near-access-free protection against training-data extraction, certified by enumeration",
    params_model=Params,
    reverify="reverify:reverify",
    headline=("excess_fraction", "base_ratio", "exposure_q_full_single", "exposure_scp_delta_r_single",
              "ppl_gap_scp_vs_q_full"),
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=DATA,
              outputs=("public.parquet", "private.parquet", "canaries.parquet", "provenance.json")),
        Stage("train_p0", "train", "train:train", upstream=("prepare",), params=("model", "pretrain"),
              outputs=("p0.safetensors",), args={"model": "p0"}, resources=GPU),
        *(Stage(f"train_{m}", "train", "train:train", upstream=("prepare", "train_p0"),
                params=("n_seeds", "model", "finetune", *(("q_full_steps",) if m == "q_full" else ())),
                outputs=("weights",), args={"model": m}, resources=GPU)
          for m in SHARD_MODELS),
        Stage("verify", "verify", "verify:verify", upstream=("prepare", *TRAINED),
              params=("n_seeds", "model", "records", *SCP),
              outputs=("certificates.parquet", "certificate.json", "models"), resources=GPU),
        Stage("evaluate", "evaluate", "evaluate:evaluate", upstream=("prepare", *TRAINED, "verify"),
              params=("n_seeds", "model", "records", *SCP, "ngram_orders", "claims", "plans"),
              outputs=("metrics.json", "extraction.parquet", *PLOTS), plots=PLOTS, resources=GPU),
    ),
)
