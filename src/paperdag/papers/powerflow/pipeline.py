"""The powerflow DAG: prepare -> train_base -> finetune_<method> for each method and replicate_<method> (more seeds)
for each method of the RLIF comparison and GRPO (in parallel); finetune_grpo, replicate_grpo -> flatten_aligned; the
``lengths`` task variant: prepare_lengths -> train_base_lengths -> finetune_<method>_lengths for the two sharpening
TB forms; the ``diverse`` variant (diverse.py): prepare_diverse -> train_base_diverse -> finetune_<method>_diverse for
alpha < 1 trajectory-level TB and GRPO; all -> evaluate. The runner starts ready stages in declaration order, so
the longest work is declared first: GRPO's chain (the longest path), then the replicate stages (7 seeds each), then the 3-seed stages."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

# name -> (objective, power): the two TB variants (Eq. 5's trajectory-level TB and PowerFlow's LA-TB, objectives.py)
# at alpha > 1 and alpha < 1, then the RLIF baselines and GRPO
METHODS = {
    **{f"tb_{kind}_{power}": (kind, power) for power in ("sharpen", "flatten") for kind in ("traj", "length")},
    **{name: (name, "none") for name in ("entropy", "self_certainty", "majority", "grpo")},
}
COMPARED = ("tb_length_sharpen", "entropy", "self_certainty", "majority")  # on power.seeds paired seeds
REPLICATED = ("grpo", *COMPARED)  # GRPO too: the reference PowerFlow approaches and flatten_aligned's aligned model
LENGTHS = ("tb_traj_sharpen", "tb_length_sharpen")  # also run on the ``lengths`` task variant (task.py)
BASE = ("task", "model")
LANE = Resources(cpus=1, gpus=0.5)
DIVERSE = {"tb_traj_flatten": "traj", "grpo": "grpo"}  # the diverse variant's runs (diverse.py): name -> objective


def power_params(name: str) -> tuple[str, ...]:
    """``alpha`` for a TB method (its target's power), nothing for an RLIF baseline or GRPO."""
    return ("alpha",) if METHODS[name][1] != "none" else ()


def finetune_stage(name: str) -> Stage:
    """finetune_<name>: finetune.seeds seeds of one method on the chain task, with exact training curves."""
    kind, power = METHODS[name]
    return Stage(f"finetune_{name}", "train", "finetune:finetune", upstream=("prepare", "train_base"),
                 params=(*BASE, "finetune", *power_params(name)),
                 outputs=("weights.safetensors", "curve.parquet", "final.parquet"),
                 args={"objective": kind, "power": power}, resources=LANE)


def replicate_stage(name: str) -> Stage:
    """replicate_<name>: the seeds finetune.seeds .. power.seeds - 1 of one method."""
    kind, power = METHODS[name]
    return Stage(f"replicate_{name}", "train", "replicate:replicate", upstream=("prepare", "train_base"),
                 params=(*BASE, "finetune", "power", *power_params(name)),
                 outputs=("weights.safetensors", "final.parquet"), args={"objective": kind, "power": power},
                 resources=LANE)


PIPELINE = Pipeline(
    slug="powerflow",
    title="PowerFlow: trajectory-balance matching of alpha-power targets, exactly evaluated on an enumerable task",
    headline=("acc_base", "acc_tb_length_sharpen", "acc_grpo", "kl_tb_length_sharpen"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("task",),
              outputs=("data.parquet", "prompts.parquet", "provenance.json")),
        Stage("train_base", "train", "pretrain:pretrain", upstream=("prepare",), params=(*BASE, "pretrain"),
              outputs=("base.safetensors",), resources=LANE),
        finetune_stage("grpo"),
        replicate_stage("grpo"),
        Stage("flatten_aligned", "train", "aligned:flatten_aligned",
              upstream=("prepare", "finetune_grpo", "replicate_grpo"), params=(*BASE, "finetune", "power", "alpha"),
              outputs=("final.parquet",), resources=LANE),
        *(replicate_stage(name) for name in COMPARED),
        *(finetune_stage(name) for name in METHODS if name != "grpo"),
        Stage("prepare_lengths", "prepare", "prepare:prepare", params=("task",),
              outputs=("data.parquet", "prompts.parquet", "provenance.json"), args={"variant": "lengths"}),
        Stage("train_base_lengths", "train", "pretrain:pretrain", upstream=("prepare_lengths",),
              params=(*BASE, "pretrain"), outputs=("base.safetensors",), args={"variant": "lengths"}, resources=LANE),
        *(Stage(f"finetune_{name}_lengths", "train", "finetune:finetune",
                upstream=("prepare_lengths", "train_base_lengths"), params=(*BASE, "finetune", "alpha"),
                outputs=("weights.safetensors", "curve.parquet", "final.parquet"),
                args={"objective": METHODS[name][0], "power": METHODS[name][1], "variant": "lengths"}, resources=LANE)
          for name in LENGTHS),
        Stage("prepare_diverse", "prepare", "diverse:prepare", params=("diverse",),
              outputs=("data.parquet", "prompts.parquet", "provenance.json")),
        Stage("train_base_diverse", "train", "diverse:pretrain", upstream=("prepare_diverse",),
              params=("diverse", "model", "pretrain"), outputs=("base.safetensors",), resources=LANE),
        *(Stage(f"finetune_{name}_diverse", "train", "diverse:finetune",
                upstream=("prepare_diverse", "train_base_diverse"), params=("diverse", "model", "finetune", "alpha"),
                outputs=("weights.safetensors", "final.parquet"), args={"objective": objective}, resources=LANE)
          for name, objective in DIVERSE.items()),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("prepare", "train_base", *(f"finetune_{m}" for m in METHODS),
                        *(f"replicate_{m}" for m in REPLICATED), "flatten_aligned", "prepare_lengths",
                        "train_base_lengths", *(f"finetune_{m}_lengths" for m in LENGTHS), "prepare_diverse",
                        "train_base_diverse", *(f"finetune_{m}_diverse" for m in DIVERSE)),
              params=(*BASE, "finetune", "alpha", "claims", "plans", "diverse"),
              outputs=("metrics.json", "methods.parquet", "kl_curves.png", "pareto.png", "lengths.png", "diverse.png"),
              plots=("kl_curves.png", "pareto.png", "lengths.png", "diverse.png"),
              args={"methods": list(METHODS), "replicated": list(REPLICATED), "lengths": list(LENGTHS),
                    "diverse_runs": list(DIVERSE)}),
    ),
)
