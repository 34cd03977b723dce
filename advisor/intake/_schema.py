"""Result types of intake: what one message says, the merged facts, and the next question."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from advisor.models import Scenario

# Scenario fields that intake reads out of chat text (``raw_output`` is the importers' business).
FACT_FIELDS: tuple[str, ...] = (
    "hardware", "memory_gb", "gpu_cores", "cpu_cores", "bandwidth_gbs", "tflops", "model", "params_b", "active_params_b", "quant", "backend",
    "prompt_tokens", "gen_tokens", "depth", "shared_prefix_tokens", "concurrency", "requests_per_minute", "use",
    "measured_prefill_tps", "measured_decode_tps", "n_gpu_layers",
    "gpu_count", "interconnect", "system_ram_gb", "host_bandwidth_gbs", "cpu_moe_layers", "kv_cache_type", "context_window", "measured_ttft_s", "compare_hardware",
    "compare_models", "compare_quants", "prompt_range", "hardware_kind", "tensor_parallel", "measured_is_aggregate", "target_ttft_s",
    "target_decode_tps",
)
assert set(FACT_FIELDS) <= set(Scenario.model_fields)


class Extraction(BaseModel):
    """Everything one chat message says, with what was converted, assumed or not understood.

    The fact fields have the names and units of :class:`~advisor.models.Scenario`; ``None`` means
    the message does not say. Names (``hardware``, ``model``, ``quant``) hold the user's phrase,
    tidied (``"a 3090"`` → ``"RTX 3090"``), and are only set when the catalog resolves them.

    Attributes:
        notes (list[str]): conversions and assumptions in plain words ("500 words ≈ 667 tokens ...").
        not_understood (list[str]): names not in the catalog and values rejected as absurd, each a
            sentence to show the user.
        ambiguous (dict[str, list[str]]): field → the catalog entries a phrase could mean.
        suggestions (dict[str, list[str]]): field → closest catalog entries for a name not found.
        resolved (dict[str, str]): field → catalog id the phrase resolved to (``"apple-m2-10gpu"``).
        looks_like_tool_output (bool): the message contains pasted output of llama-bench, ollama, ...
        cpu_only_said (str | None): why ``n_gpu_layers`` is 0 without a number: ``"run"`` ("CPU only", "on the
            CPU") or ``"machine"`` ("no GPU": said of a computer, which may not be the one named).
    """

    hardware: str | None = None
    memory_gb: float | None = None
    gpu_cores: int | None = None
    cpu_cores: int | None = None
    bandwidth_gbs: float | None = None
    tflops: float | None = None
    model: str | None = None
    params_b: float | None = None
    active_params_b: float | None = None
    quant: str | None = None
    backend: str | None = None
    prompt_tokens: int | None = None
    gen_tokens: int | None = None
    depth: int | None = None
    shared_prefix_tokens: int | None = None
    concurrency: int | None = None
    requests_per_minute: float | None = None
    use: str | None = None
    measured_prefill_tps: float | None = None
    measured_decode_tps: float | None = None
    n_gpu_layers: int | None = None
    gpu_count: int | None = None
    interconnect: str | None = None
    system_ram_gb: float | None = None
    host_bandwidth_gbs: float | None = None
    cpu_moe_layers: int | None = None
    kv_cache_type: str | None = None
    context_window: int | None = None
    measured_ttft_s: float | None = None
    compare_hardware: list[str] | None = None
    compare_models: list[str] | None = None
    compare_quants: list[str] | None = None
    prompt_range: tuple[int, int] | None = None
    hardware_kind: str | None = None
    tensor_parallel: int | None = None
    measured_is_aggregate: bool | None = None
    target_ttft_s: float | None = None
    target_decode_tps: float | None = None
    notes: list[str] = Field(default_factory=list)
    not_understood: list[str] = Field(default_factory=list)
    ambiguous: dict[str, list[str]] = Field(default_factory=dict)
    suggestions: dict[str, list[str]] = Field(default_factory=dict)
    resolved: dict[str, str] = Field(default_factory=dict)
    looks_like_tool_output: bool = False
    cpu_only_said: str | None = None

    def facts(self) -> dict[str, Any]:
        """The fact fields this message set, as a dict ready for :class:`Scenario`."""
        return {f: getattr(self, f) for f in FACT_FIELDS if getattr(self, f) is not None}

    def note(self, text: str) -> None:
        """Add a note once."""
        if text and text not in self.notes:
            self.notes.append(text)

    def reject(self, text: str) -> None:
        """Add a not-understood / rejected message once."""
        if text and text not in self.not_understood:
            self.not_understood.append(text)


class IntakeResult(BaseModel):
    """The facts after one chat turn.

    Attributes:
        facts (Scenario): the merged scenario (new facts override old ones).
        changed (list[str]): Scenario fields whose value changed this turn.
        changes (list[tuple[str, Any, Any]]): the same as ``(field, old, new)``, for the reply to say what changed.
        notes, not_understood, ambiguous, suggestions, resolved, looks_like_tool_output: as in
            :class:`Extraction`, for this turn's message.
    """

    facts: Scenario
    changed: list[str] = Field(default_factory=list)
    changes: list[tuple[str, Any, Any]] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    not_understood: list[str] = Field(default_factory=list)
    ambiguous: dict[str, list[str]] = Field(default_factory=dict)
    suggestions: dict[str, list[str]] = Field(default_factory=dict)
    resolved: dict[str, str] = Field(default_factory=dict)
    looks_like_tool_output: bool = False


class Question(BaseModel):
    """One short question for the user, with quick replies that intake understands when sent back.

    Attributes:
        field (str): the Scenario field it asks for (``"hardware"``, ``"memory_gb"``, ``"model"``, ...).
        text (str): the question, one sentence.
        choices (list[str]): quick-reply strings, e.g. ``["8 GB", "16 GB", "24 GB"]``.
    """

    field: str
    text: str
    choices: list[str] = Field(default_factory=list)
