"""A DAG of trivial stages (a fan-out of independent stages into one evaluate) for the overhead benchmark."""

from paperdag.claims import Claim, write_metrics
from paperdag.dag import Pipeline, Stage
from paperdag.params import ParamsModel

WIDTH = 20


class Params(ParamsModel):
    seed: int = 0


def work(ctx) -> dict[str, float]:
    (ctx.out / "out.txt").write_text(ctx.label)
    return {}


def evaluate(ctx) -> dict[str, float]:
    write_metrics(ctx.out, {"stages": len(ctx.inputs)}, [Claim("ran", "all stages ran", WIDTH, len(ctx.inputs),
                                                               len(ctx.inputs) == WIDTH)])
    return {}


STAGES = tuple(Stage(f"s{i:02d}", "train", "trivial_pipeline:work") for i in range(WIDTH))
PIPELINE = Pipeline(
    slug="bench_trivial", title="Trivial stages", params_model=Params, package="benchmarks",
    stages=(*STAGES, Stage("evaluate", "evaluate", "trivial_pipeline:evaluate", tuple(s.name for s in STAGES))),
)
