"""What a team asks Compare: :class:`CompareRequest` and the constants shared by the engine.

Units are in the names: ``_s`` seconds, ``_tps`` tokens/s, ``_gb`` 10^9 bytes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from advisor.roofline import KV_BYTES_PER_ELEMENT as _KV_BYTES

__all__ = ["DEFAULT_CHUNK_TOKENS", "KV_BYTES_PER_ELEMENT", "MAX_CONCURRENCY_CAP", "SECONDS_PER_YEAR", "SIM_ARRIVALS",
           "SIM_SEED", "SIM_WARMUP", "CompareRequest", "validation_message"]

# Bytes per KV element of the cache types compare offers (advisor.roofline's table, their one home).
KV_BYTES_PER_ELEMENT = {k: _KV_BYTES[k] for k in ("f16", "q8_0", "q4_0")}
SECONDS_PER_YEAR = 365.25 * 86400
MAX_CONCURRENCY_CAP = 4096
SIM_ARRIVALS = 3000
SIM_WARMUP = 300
SIM_SEED = 20240601
DEFAULT_CHUNK_TOKENS = 512  # llama.cpp n_ubatch default; vLLM chunked prefill uses a similar token budget


class CompareRequest(BaseModel):
    """What a team asks: the workload, the targets, the candidates, optional prices.

    ``prices`` maps a hardware id or name to a purchase price in USD; nothing is priced otherwise.
    """

    model_config = ConfigDict(extra="forbid")  # a misspelt field must not be ignored silently

    model: str
    quant: str | None = None
    backend: str | None = None
    prompt_tokens: int = Field(2000, ge=1, le=1_000_000)
    gen_tokens: int = Field(300, ge=1, le=1_000_000)
    # The context each user's KV cache must hold ("16k context each"); None: prompt + answer. Sizes memory only:
    # each step reads the tokens actually in the context (prompt + answer).
    context_tokens: int | None = Field(None, ge=1, le=10_000_000)
    concurrency: int = Field(1, ge=1, le=MAX_CONCURRENCY_CAP)
    requests_per_minute: float | None = Field(None, ge=0, le=10_000)
    ttft_target_s: float | None = Field(None, gt=0, le=1e6)
    tps_per_user: float | None = Field(None, gt=0, le=1e6)
    candidates: list[str] | None = None
    prices: dict[str, float] = Field(default_factory=dict)
    shared_prefix_tokens: int = Field(0, ge=0, le=1_000_000)
    kv_quant: Literal["f16", "q8_0", "q4_0"] = "f16"
    chunk_tokens: int = Field(DEFAULT_CHUNK_TOKENS, ge=16, le=65_536)
    amortisation_years: float = Field(3.0, gt=0, le=30)
    utilisation: float = Field(0.25, gt=0, le=1)
    limit: int = Field(15, ge=1, le=200)

    @field_validator("prices")
    @classmethod
    def _positive_prices(cls, v: dict[str, float]) -> dict[str, float]:
        bad = [k for k, usd in v.items() if not (isinstance(usd, (int, float)) and 0 < usd < 1e9)]
        if bad:
            raise ValueError(f"prices must be positive USD amounts (check {', '.join(bad[:3])})")
        return v

    @field_validator("shared_prefix_tokens")
    @classmethod
    def _prefix_below_prompt(cls, v: int, info: ValidationInfo) -> int:
        p = info.data.get("prompt_tokens")
        if p is not None and v >= p:
            raise ValueError(f"the shared prefix ({v}) must be shorter than the prompt ({p})")
        return v



def validation_message(e: Exception) -> str:
    errs: list[Any] = getattr(e, "errors", list)()
    parts = [f"{'.'.join(str(x) for x in err['loc'])}: {str(err['msg']).removeprefix('Value error, ')}"
             for err in errs[:5]]
    return "invalid input: " + ("; ".join(parts) if parts else str(e))
