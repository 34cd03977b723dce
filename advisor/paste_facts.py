"""A pasted tool output's facts merged into the conversation's: measured rates, the run's own lengths, model and
format, serving benchmarks as a loaded server's run, and the checks that the output ran on the machine named.

:func:`advisor.service.import_output` calls these; they hold the importer's merge rules in one place.
"""

from __future__ import annotations

from typing import Any

from advisor.diagnose import FOREIGN_X
from advisor.errors import AdvisorError
from advisor.models import Measurement, Scenario
from advisor.understand.symptoms import read_symptoms
from knowledge.store import Store

__all__ = ["SERVING_FORMATS", "backend_clash", "foreign_rate", "merge_measurements"]

_RUN_FIELDS = ("model", "quant", "params_b")  # what a run's output says about the model it ran
# Tools whose rates are one stream running alone (a benchmark or a one-shot CLI run, not a shared server).
_ALONE_FORMATS = ("llama-bench", "llama-cli", "llama-simple", "llama-run", "llama-perf", "llama-print-timings",
                  "mlx-generate", "mlx-lm-benchmark", "mlx_lm.generate", "mlx_lm.benchmark")


def _model_size(store: Store | None, s: Scenario) -> float | None:
    """Total parameters (billions) of the scenario's model: stated, else the catalog's (None when unknown)."""
    if s.params_b or not s.model or store is None:
        return s.params_b
    from knowledge import catalog

    try:
        return catalog.resolve_model(store, s.model).value.params_b
    except AdvisorError:
        return None


def _other_model(store: Store | None, s: Scenario, ms: list[Measurement]) -> bool:
    """The output ran another model than the one the conversation named: both sizes known, more than 25 %
    apart ("gpt-oss 120b" in the chat, a llama-bench table of ``qwen3moe 30B.A3B``). A generic name of the
    same model ("llama 8B" for "Llama 3.1 8B") is the same model, and the person's name for it is kept."""
    run = next((m.params_b for m in ms if m.params_b), None)
    said = _model_size(store, s) if s.model else None
    return bool(run and said and abs(run - said) > 0.25 * max(run, said))


def merge_measurements(s: Scenario, ms: list[Measurement], fmt: str = "", *, store: Store | None = None) -> Scenario:
    """Fill the scenario's measured rates and counts from parsed tool output (first sound values).

    A measured rate is compared with the expectation at its own prompt length, so the measurement's
    prompt and answer lengths replace the scenario's. Aggregate serving-benchmark rates (vLLM) are
    not single-stream rates and are not used as such. When the output ran another model than the one the
    conversation named (:func:`_other_model`), the run's model, format and size replace the conversation's:
    the rates belong to the model that produced them.
    """
    upd: dict[str, Any] = {}
    if fmt.startswith(SERVING_FORMATS):
        return _merge_serving(s, ms, log=fmt.startswith(LOG_FORMATS))
    deep = max((m.depth or 0 for m in ms), default=0)
    if deep and read_symptoms(s.question).long_context:
        # "why is prompt processing slow at 16k?" over a table with `pp512 @ d16384` rows: judge the deep rows
        ms = [m for m in ms if (m.depth or 0) == deep] + [m for m in ms if (m.depth or 0) != deep]
    if _other_model(store, s, ms):
        s = s.model_copy(update=dict.fromkeys(_RUN_FIELDS))
    if fmt.startswith(_ALONE_FORMATS) and any(
            (m.batch or 1) == 1 and (m.decode_tps or m.prefill_tps) for m in ms):
        upd["measured_streams"] = 1
    for m in ms:
        if m.decode_tps and "measured_decode_tps" not in upd and (m.batch or 1) == 1:
            upd["measured_decode_tps"] = m.decode_tps
            if m.gen_tokens:
                upd["gen_tokens"] = m.gen_tokens
            if m.depth:
                upd["depth"] = m.depth
            if m.decode_includes_prompt and m.prompt_tokens:
                # the rate divides by the prompt's time too: the prompt it read is the run's length (textgen's
                # "context 3200" is that prompt, not a window setting)
                upd["prompt_tokens"] = m.prompt_tokens
                if s.context_window == m.prompt_tokens:
                    upd["context_window"] = None
        if m.prefill_tps and "measured_prefill_tps" not in upd and (m.batch or 1) == 1:
            upd["measured_prefill_tps"] = m.prefill_tps
            if m.prompt_tokens:
                upd["prompt_tokens"] = m.prompt_tokens
        for f_src, f_dst in (("model", "model"), ("quant", "quant"), ("backend", "backend"),
                             ("n_gpu_layers", "n_gpu_layers"), ("params_b", "params_b"), ("depth", "depth"),
                             ("gpu_fraction", "gpu_fraction")):
            v = getattr(m, f_src)
            # The format the tool printed is the run's own (the file it loaded): it replaces one said earlier
            # in the conversation ("what if Q4_K_M?" before a paste of an IQ3_M run is not what was measured).
            if v is not None and f_dst not in upd and (getattr(s, f_dst) is None or f_dst == "quant"
                                                       or f_dst == "backend" and _names_the_api(s.backend, v)):
                upd[f_dst] = v
    return s.model_copy(update=upd)


def _names_the_api(said: str | None, printed: str) -> bool:
    """The tool printed the engine the person named, with the API it ran on ("llama.cpp" said, ``llama.cpp-cpu``
    printed): the printed label is the run's own and says more."""
    from advisor.understand.engine import classify_engine

    e_said, a_said = classify_engine(said)
    e_run, a_run = classify_engine(printed)
    return e_said == e_run and a_said == "other" and a_run != "other"


SERVING_FORMATS = ("vllm-bench", "sglang-bench", "vllm-metrics")
LOG_FORMATS = ("vllm-metrics",)  # a running server's log: its requests in flight, not a benchmark's set concurrency  # a loaded server's run: totals over many requests at once


# The users named and the streams a run's Little's law gives (output tok/s × mean TPOT) agree when within this
# factor; beyond it the run's own figure counts (queueing and ramp-up move it a little, not 1.5×).
LITTLE_AGREES = 1.5


def _merge_serving(s: Scenario, ms: list[Measurement], *, log: bool = False) -> Scenario:
    """A serving benchmark's run as the person's workload (vLLM ``bench serve``, SGLang ``bench_serving``).

    Its output throughput is summed over the requests in flight (``measured_is_aggregate``) at the run's max
    concurrency, else the users the person named unless the concurrency it implies differs by over
    :data:`LITTLE_AGREES` × (Little's law: output tok/s × mean TPOT, s = requests decoding at once), else that;
    its token totals ÷ completed requests are one request's
    prompt and answer; its mean TTFT (queueing included) is the wait each request saw.
    """
    m = next((x for x in ms if x.decode_tps), None)
    if m is None or m.decode_tps is None:
        return s
    upd: dict[str, Any] = {"measured_decode_tps": m.decode_tps, "measured_is_aggregate": True,
                           "backend": s.backend or m.engine or m.backend}
    n = m.batch or s.concurrency
    if n and m.requests:
        n = min(n, m.requests)  # no more requests in flight than the run sent ("concurrency 100000", 100 requests)
    little = max(1, round(m.decode_tps * m.tpot_s)) if m.tpot_s else None
    if little and not m.batch and (not n or not 1 / LITTLE_AGREES <= little / n <= LITTLE_AGREES):
        n = little  # the run's own streams: the users named were not what it ran ("16 users", 852 tok/s at 31 ms)
    if n:
        # a server's own log counts the requests decoding together (the rest wait): those are the streams judged
        upd["concurrency"] = n if log else (s.concurrency or n)
        upd["measured_streams"] = n
    if m.requests:
        for src, dst in (("prompt_tokens", "prompt_tokens"), ("gen_tokens", "gen_tokens")):
            total = getattr(m, src)
            if total and total >= m.requests:
                upd[dst] = max(1, round(total / m.requests))
    if m.ttft_s:
        upd["measured_ttft_s"] = m.ttft_s
    if m.tpot_s:
        upd["measured_tpot_ms"] = round(m.tpot_s * 1000, 3)
    if m.model and s.model is None:
        upd["model"] = m.model
    return s.model_copy(update=upd)


def backend_clash(measurements: list[Any], hw: Any) -> tuple[str, str, str] | None:
    """(why, an example machine, the named machine) when a measurement's API cannot run on the named machine
    (:func:`advisor.understand.engine.accel_conflict`: CUDA on a Mac, Metal on a GeForce), else None."""
    from advisor.understand.engine import accel_conflict

    if hw is None:
        return None
    for m in measurements:
        c = accel_conflict(m.backend, hw) if m.backend else None
        if c:
            return c[0], c[1], str(hw.name)
    return None


# A single-stream decode this far over the spec roofline is not stored as the machine's result (the calibration must
# not learn from it); a speculative run or a spec sheet's rounding stays under it.
STORE_OVER_ROOFLINE = 1.15


def foreign_rate(res: Any, measurements: list[Any], factor: float = FOREIGN_X,
                 streams: int | None = None) -> tuple[float, float] | None:
    """(measured decode tok/s, this machine's roofline ceiling) when a pasted single-stream decode is over
    ``factor`` (:data:`FOREIGN_X`) × what the named machine's memory can deliver for the model (bandwidth × devices ÷ weight bytes
    per token; :func:`advisor.roofline.decode_ceiling_tps`), or a serving run's total over ``streams`` × that: numbers
    from another machine, a smaller model or an edited line. None
    otherwise, or when the machine, model or format is not known."""
    from advisor import roofline
    from advisor.perf.moe import active_bpw

    hw, model, quant = res.hardware, res.model, res.quant
    if hw is None or model is None or quant is None or not hw.bandwidth_gbs:
        return None
    top = roofline.decode_ceiling_tps(hw.bandwidth_gbs * max(1, hw.n_devices or 1),
                                      roofline.weight_bytes_read_per_token(model, active_bpw(model, quant)))
    for m in measurements:
        # a batch's total: each of its streams at most one stream's ceiling (``streams``: a serving run's own count)
        n = max(1, m.batch or streams or 1) if (m.batch or 1) > 1 or streams else 1
        if (streams or (m.batch or 1) <= 1) and m.decode_tps and top and m.decode_tps > factor * top * n:
            return float(m.decode_tps), float(top * n)
    return None


def foreign_prefill(res: Any, measurements: list[Any], factor: float = FOREIGN_X) -> tuple[float, float] | None:
    """(measured prefill tok/s, this machine's compute ceiling) when a benchmark's prefill is over ``factor`` × what the
    named machine can compute for the model even in INT8 (:data:`advisor.perf.machine.PREFILL_EFF_CAP` × FP16 TFLOPS ×
    devices ÷ 2 FLOPs per active parameter; attention left out, so the ceiling is generous): another machine's or
    model's number, or an edited line (a benchmark reads its whole prompt, so no prompt cache explains it). None
    otherwise, or when the machine has no compute figure or the model is not known."""
    from advisor.perf.machine import PREFILL_EFF_CAP

    hw, model = res.hardware, res.model
    if hw is None or model is None or not hw.fp16_tflops or not model.active_b:
        return None
    top = PREFILL_EFF_CAP * hw.fp16_tflops * max(1, hw.n_devices or 1) * 1e12 / (2 * model.active_b * 1e9)
    for m in measurements:
        if m.prefill_tps and m.prefill_tps > factor * top:
            return float(m.prefill_tps), float(top)
    return None
