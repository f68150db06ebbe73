from pydantic import Field

from paperdag.params import ParamsModel


class Params(ParamsModel):
    seed: int = 0
    n: int = Field(100, ge=1)
    scale_a: float = 1.0
    scale_b: float = 2.0
    sleep: float = Field(0.0, ge=0)
