from pydantic import Field

from paperdag.params import ParamsModel


class Params(ParamsModel):
    seed: int = Field(ge=0)
    n: int = Field(ge=1)
    scale_a: float
    scale_b: float
    sleep: float = Field(ge=0)
