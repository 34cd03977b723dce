"""Cost per million tokens from the prices a person gives (hardware only; no electricity figure)."""

from __future__ import annotations

from typing import Any

from advisor.compare.request import SECONDS_PER_YEAR
from advisor.errors import AdvisorError, AmbiguousError
from knowledge import catalog
from knowledge.seed import split_hw_id
from knowledge.store import Store

__all__ = ["cost_per_million", "match_prices", "resolve_prices"]


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



def _price_hits(store: Store, name: str) -> tuple[list[str], int | None]:
    """(catalog ids the name may mean, count written or None), read by the hardware resolver (counts, plurals
    and versions as everywhere else): "2x 4090" → (["nvidia-rtx-4090"], 2); "H100" → both H100 versions."""
    key = name.strip().lower()
    if key in catalog.all_hardware(store) or split_hw_id(key)[0] in catalog.all_hardware(store):
        ids = [key]
    else:
        try:
            ids = [catalog.resolve_hardware(store, name).value.id]
        except AmbiguousError as e:  # "H100": any of its versions; a name that fits several cards: any of them
            ids = e.candidate_ids
        except AdvisorError:  # not a catalog machine (its closest entries are no match)
            ids = []
    counts = {split_hw_id(i)[1] for i in ids}
    n = counts.pop() if len(counts) == 1 else None
    return list(dict.fromkeys(split_hw_id(i)[0] for i in ids)), (n if n and n > 1 else None)


def match_prices(store: Store, prices: dict[str, float], hardware_ids: list[str]) -> tuple[dict[str, float],
                                                                                           list[str]]:
    """Price names → the candidates' ids, resolved the way candidate names are; (matched, unmatched names).

    A name matches a candidate when it is its id, or names the same machine as a person would write it
    ("4090", "RTX 4090", "2x 4090" for ``nvidia-rtx-4090x2``; "H100" for ``nvidia-h100-pcie``); a count
    written ("2x") must agree with the candidate's; without one, the single-card build wins when several
    builds of that card are candidates. A name that matches no
    candidate, or several, is returned unmatched (the caller says so; it never stops the comparison).

    >>> from knowledge.store import Store
    >>> match_prices(Store(":memory:"), {"4090": 4500, "potato": 1}, ["nvidia-rtx-4090x2"])
    ({'nvidia-rtx-4090x2': 4500.0}, ['potato'])
    """
    ids = list(dict.fromkeys(i.strip().lower() for i in hardware_ids))
    out: dict[str, float] = {}
    unmatched: list[str] = []
    for name, usd in prices.items():
        key = name.strip().lower()
        if key in ids:
            out[key] = float(usd)
            continue
        roots, n = _price_hits(store, name)
        same = [i for i in ids if split_hw_id(i)[0] in roots]
        if n is not None:
            same = [i for i in same if split_hw_id(i)[1] == n]  # "4x 4090" is not the 2× build
        elif len(same) > 1:
            single = [i for i in same if split_hw_id(i)[1] == 1]
            same = single if len(single) == 1 else same
        if len(same) == 1:
            out[same[0]] = float(usd)
        else:
            unmatched.append(name)
    return out, unmatched


def resolve_prices(store: Store, prices: dict[str, float]) -> dict[str, float]:
    out = {}
    for key, usd in prices.items():
        try:
            out[catalog.resolve_hardware(store, key).value.id] = float(usd)
        except AdvisorError:
            out[key.strip().lower()] = float(usd)  # an exact id the resolver does not know stays as written
    return out
