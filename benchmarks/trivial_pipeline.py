"""DAGs of trivial stages (independent stages fanning into one evaluate) for the overhead benchmark: ``PIPELINE``
with 20 of them and ``SMALL`` with 5, so the per-stage cost can be told apart from a flow run's fixed cost."""

from paperdag.claims import write_metrics
from paperdag.common.verdicts import check
from paperdag.dag import Pipeline, Stage
from paperdag.params import ParamsModel


class Params(ParamsModel):
    seed: int


def work(ctx) -> dict[str, float]:
    ctx.output("out.txt").write_text(ctx.label)
    return {}


def evaluate(ctx) -> dict[str, float]:
    write_metrics(ctx.out, {"stages": len(ctx.inputs)}, [check("ran", "every stage ran", None, len(ctx.inputs), True)])
    return {}


def fan_in(slug: str, width: int) -> Pipeline:
    """``width`` independent trivial stages feeding one evaluate stage."""
    stages = tuple(Stage(f"s{i:02d}", "train", "trivial_pipeline:work", outputs=("out.txt",)) for i in range(width))
    return Pipeline(slug=slug, title=f"{width} trivial stages", params_model=Params, package="benchmarks", stages=(
        *stages, Stage("evaluate", "evaluate", "trivial_pipeline:evaluate", tuple(s.name for s in stages),
                       outputs=("metrics.json",))))


PIPELINE = fan_in("bench_trivial", 20)
SMALL = fan_in("bench_small", 5)
