"""Cost per million tokens from the prices a person gives (hardware only; no electricity figure)."""

from __future__ import annotations

from typing import Any

from advisor.compare.request import SECONDS_PER_YEAR
from advisor.errors import AdvisorError
from knowledge import catalog
from knowledge.store import Store

__all__ = ["cost_per_million", "resolve_prices"]


def cost_per_million(price_usd: float, tokens_per_s: float, *, years: float, utilisation: float,
                     users: int) -> dict[str, Any]:
    """Purchase price amortised over ``years`` at ``utilisation`` (share of the time generating).

    ``USD per million tokens = price / (tokens/s × utilisation × years × 31 557 600 s) × 10^6``;
    ``USD per user-month = price / users / (12 × years)``. Hardware only: no electricity, no staff.
    """
    tokens = tokens_per_s * utilisation * years * SECONDS_PER_YEAR
    return {"price_usd": price_usd, "amortisation_years": years, "utilisation": utilisation,
            "tokens_per_s": tokens_per_s, "usd_per_million_tokens": price_usd / tokens * 1e6 if tokens else None,
            "usd_per_user_month": price_usd / users / (12 * years),
            "assumption": (f"price amortised over {years:g} years, generating at {tokens_per_s:,.0f} tok/s "
                           f"{utilisation:.0%} of the time; generated tokens only; no electricity or staff")}



def resolve_prices(store: Store, prices: dict[str, float]) -> dict[str, float]:
    out = {}
    for key, usd in prices.items():
        try:
            out[catalog.resolve_hardware(store, key).value.id] = float(usd)
        except AdvisorError:
            out[key.strip().lower()] = float(usd)  # an exact id the resolver does not know stays as written
    return out
