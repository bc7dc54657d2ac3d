"""`[pricing]`: what ruscope prices RU/s, RU and storage at (`cosmoscore.billing`, its rules in
docs/reference/pricing.md B1-B16). Every key is optional; an unset one keeps Microsoft's published example
price, and while none is set the figures say "list price example" (`cosmoscore.billing.LIST_PRICE_NOTE`).

| key | unit | default (Microsoft's example, B-row) |
|---|---|---|
| `currency` | ISO 4217 code | "USD" |
| `manual_per_100_ru_s_hour` | currency per 100 RU/s per hour | 0.008 (B1) |
| `autoscale_factor` | x the manual rate | 1.5 (B2) |
| `multi_write_per_100_ru_s_hour` | currency per 100 RU/s per hour | 0.016 (B4) |
| `serverless_per_million_ru` | currency per million RU | 0.25 (B5) |
| `storage_per_gb_month` | currency per GB-month | 0.25 (B6) |
| `discount` | fraction, 0-0.99 | 0 (an agreement's discount on every price, B7) |
| `[[pricing.reservations]]` `ru_s`, `discount` | RU/s (multiples of 100), fraction | none held (B10, B11) |
| `reservation_plan_discount` | fraction | 0.20 (B11: one year, the 100 RU/s units tier up to 999,900 RU/s): what the reservation planner prices a new reservation at |
| `multi_write_accounts` | the store's account names | none (B4: their throughput is billed at the multi-region-write rate) |
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cosmoscore.billing import LIST_CURRENCY, UNIT_RU_S, Prices, Reservation

Price = Annotated[float, Field(ge=0)]
PRICE_KEYS = (
    "manual_per_100_ru_s_hour",
    "multi_write_per_100_ru_s_hour",
    "serverless_per_million_ru",
    "storage_per_gb_month",
)
Fraction = Annotated[float, Field(ge=0, lt=1)]


class ReservationSettings(BaseModel):
    """One reservation held: its RU/s (in 100 RU/s units, B10) and its discount (B11)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ru_s: Annotated[int, Field(ge=UNIT_RU_S)]
    discount: Fraction

    @field_validator("ru_s")
    @classmethod
    def _units(cls, value: int) -> int:
        if value % UNIT_RU_S:
            raise ValueError(f"must be a multiple of {UNIT_RU_S} RU/s (reservations are bought in 100 RU/s units)")
        return value


class PricingSettings(BaseModel):
    """`[pricing]` (the module docstring's table); `prices()` and `reservations()` for `cosmoscore.billing`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = LIST_CURRENCY
    manual_per_100_ru_s_hour: Price | None = None
    autoscale_factor: Annotated[float, Field(ge=1)] | None = None
    multi_write_per_100_ru_s_hour: Price | None = None
    serverless_per_million_ru: Price | None = None
    storage_per_gb_month: Price | None = None
    discount: Fraction = 0.0
    reservations: list[ReservationSettings] = []
    reservation_plan_discount: Fraction = 0.20
    multi_write_accounts: list[str] = []

    @model_validator(mode="after")
    def _priced_in_its_currency(self) -> PricingSettings:
        """Microsoft's example prices are in USD: another currency needs every price given in it."""
        missing = [name for name in PRICE_KEYS if getattr(self, name) is None]
        if self.currency != LIST_CURRENCY and missing:
            raise ValueError(f"currency {self.currency} needs its own prices: set {', '.join(missing)}")
        return self

    def prices(self) -> Prices:
        """The prices, Microsoft's example where a key is unset; `list_example` while any price is the example's."""
        given = {
            name: value for name in (*PRICE_KEYS, "autoscale_factor") if (value := getattr(self, name)) is not None
        }
        example = any(getattr(self, name) is None for name in PRICE_KEYS)
        return Prices(currency=self.currency, discount=self.discount, list_example=example, **given)

    def held(self) -> tuple[Reservation, ...]:
        return tuple(Reservation(ru_s=float(r.ru_s), discount=r.discount) for r in self.reservations)
