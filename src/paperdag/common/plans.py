"""Sample-size plans: how many units (seeds, targets, tasks) a judged comparison gets, declared in params.yaml before
the run.

A plan has a ``basis``:

- ``power``: the effect of interest d, the target power 1 - b and the spread s of one unit's value in a pilot whose
  units the judged run never reuses; n must reach the one-sample t test's requirement at one-sided level a = 0.025
  (the rules' 95% intervals), in Guenther's form n >= ((z_{1-a} + z_{1-b}) s / d)^2 + z_{1-a}^2 / 2;
- ``design``: n is fixed by the design (every cell of a grid, every target of a fixed set), argued in ``why``;
- ``budget``: n is what the compute budget affords, argued in ``why`` (the verdict's power is then what it is: an
  inconclusive verdict says how many units would resolve it);
- ``sequential``: units are added after looks at the data, under a declared group-sequential rule: ``looks``
  equally spaced analyses with Pocock or O'Brien-Fleming boundaries at two-sided 5% (Jennison & Turnbull 2000,
  tables 2.1 and 2.3); the final look's interval is then taken at the nominal level 2 Phi(c_K) - 1 (``confidence``).

Extra units are always fresh: a unit seen at a look stays in the analysis, a unit of a pilot never enters it.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any, Literal

from pydantic import Field, model_validator

from paperdag.params import ParamsModel

ALPHA = 0.05  # two-sided; 0.025 per side, the level of the rules' one-sided decisions
# Final-look critical values c_K at two-sided 5% for K = 2..5 equally spaced looks (Jennison & Turnbull 2000, tables
# 2.1 and 2.3); the final look is judged at the nominal level 2 Phi(c_K) - 1.
FINAL_BOUNDARY = {"pocock": {2: 2.178, 3: 2.289, 4: 2.361, 5: 2.413},
                  "obrien_fleming": {2: 1.977, 3: 2.004, 4: 2.024, 5: 2.040}}


def required_n(effect: float, sd: float, power: float, alpha: float = ALPHA) -> int:
    """The units a one-sample (or paired) t test at one-sided level alpha / 2 needs to detect ``effect`` with
    ``power`` when one unit's value has spread ``sd``: ceil(((z_{1-a/2} + z_{power}) sd / effect)^2 + z_{1-a/2}^2 / 2)
    (Guenther 1981), at least 2."""
    if effect <= 0 or sd <= 0 or not 0 < power < 1:
        raise ValueError(f"required_n needs effect > 0, sd > 0 and 0 < power < 1 (got {effect}, {sd}, {power})")
    z = NormalDist().inv_cdf
    za = z(1 - alpha / 2)
    return max(2, math.ceil(((za + z(power)) * sd / effect) ** 2 + za**2 / 2))


class SamplePlan(ParamsModel):
    """One comparison's sample-size plan (module docstring); ``n`` is the number of units each judged interval
    is planned to have."""

    unit: str = Field(min_length=1, max_length=40, description="what one value is: seed, target, task, prompt, cell")
    n: int = Field(ge=2, le=100_000, description="planned units per judged interval")
    basis: Literal["power", "design", "budget", "sequential"] = Field(description="how n was chosen")
    effect: float | None = Field(gt=0, description="effect of interest, in the claim's units (basis power)")
    power: float | None = Field(ge=0.5, lt=1, description="target power at the effect of interest (basis power)")
    pilot_n: int = Field(ge=0, le=100_000, description="units of the pilot the spread comes from (0: none)")
    pilot_sd: float | None = Field(gt=0, description="one unit's spread in the pilot (basis power)")
    looks: int = Field(ge=1, le=5, description="analyses of the data, the final one included (1: a fixed n)")
    spending: Literal["none", "pocock", "obrien_fleming"] = Field(description="group-sequential boundary")
    why: str = Field(min_length=10, max_length=600, description="the plan's argument, written before the run")

    @model_validator(mode="after")
    def _consistent(self) -> SamplePlan:
        if self.basis == "power":
            missing = [k for k in ("effect", "power", "pilot_sd") if getattr(self, k) is None]
            if missing or self.pilot_n < 2:
                raise ValueError(f"a power plan needs effect, power, pilot_sd and pilot_n >= 2 (missing {missing})")
            need = required_n(self.effect, self.pilot_sd, self.power)
            if self.n < need:
                raise ValueError(f"n = {self.n} is below the {need} units the plan's power needs (effect "
                                 f"{self.effect:g}, pilot sd {self.pilot_sd:g}, power {self.power:g})")
        if (self.looks > 1) != (self.spending != "none") or (self.looks > 1) != (self.basis == "sequential"):
            raise ValueError("a plan with looks > 1 is basis sequential with a spending rule (pocock or "
                             "obrien_fleming); a fixed plan has looks 1 and spending none")
        return self

    @property
    def confidence(self) -> float:
        """The level of the final look's interval: 0.95 for a fixed n, 2 Phi(c_K) - 1 for a sequential plan."""
        if self.looks == 1:
            return 1 - ALPHA
        return 2 * NormalDist().cdf(FINAL_BOUNDARY[self.spending][self.looks]) - 1

    def row(self) -> dict[str, Any]:
        """The plan as recorded beside a claim in metrics/<slug>.json."""
        return {"planned_n": self.n, "basis": self.basis, "effect": self.effect, "power": self.power,
                "pilot_n": self.pilot_n, "pilot_sd": self.pilot_sd, "looks": self.looks, "spending": self.spending,
                "confidence": round(self.confidence, 4), "why": self.why}
