"""Remedies for a model split between a graphics card and system RAM (llama.cpp's partial offload, a MoE's experts
kept in system RAM with ``--n-cpu-moe``): how the split runs best, each effect a :func:`what_if` through the same
prediction code as the expectation. Registered into :data:`advisor.diagnose.remedies.REGISTRY`.
"""

from __future__ import annotations

import math

from advisor.diagnose.context import Ctx
from advisor.diagnose.remedies import fix, register, today_tg, what_if
from advisor.models import Fix
from advisor.render.markdown import fmt_s
from advisor.understand.engine import LLAMA_SERVER_ENGINES

__all__ = ["deliberate_split", "experts_on_cpu"]


# --- a model larger than the card: how it is split -------------------------------------------------------------

_LLAMA_FAMILY = (*LLAMA_SERVER_ENGINES, "ollama")
def _spilled_card(c: Ctx) -> bool:
    """A graphics card holding only part of the weights (the rest in system RAM), on the llama.cpp family."""
    p = c.pred
    return (p is not None and p.memory.gpu_share < 1.0 and c.kind in ("discrete_gpu", "datacenter_gpu")
            and (c.sit.engine or "llama.cpp") in _LLAMA_FAMILY)


def experts_on_cpu(c: Ctx) -> bool:
    """The run already keeps its experts in system RAM (:attr:`Symptoms.experts_on_cpu`); never on Ollama, which has
    no such setting."""
    return c.sit.engine != "ollama" and c.sit.symptoms.experts_on_cpu


def deliberate_split(c: Ctx) -> bool:
    """A split between the card and system RAM run on purpose: the experts placed on the CPU (``--n-cpu-moe``), or a
    measured decode at the split's expected speed with the question about reading the prompt. Its fixes are
    how to run the split better, not first a smaller model."""
    if not _spilled_card(c):
        return False
    if experts_on_cpu(c):
        return True
    e = c.expected_tg
    return bool(c.tg and e and c.tg >= 0.8 * e and "prefill" in c.sit.symptoms.asks_about)


@register("moe_expert_offload", "fit_in_memory", 0,
          lambda c: _spilled_card(c) and c.sit.model is not None and c.sit.model.is_moe)
def _moe_expert_offload(c: Ctx) -> Fix | None:
    """A MoE larger than the card: keep attention and the dense layers on the GPU and only the routed experts in
    system RAM (:func:`advisor.perf.step.expert_offload_share`), instead of whole layers."""
    from advisor.perf.moe import with_moe
    from advisor.perf.step import expert_offload_share

    p, sit = c.pred, c.sit
    if p is None or sit.model is None or sit.quant is None or experts_on_cpu(c):
        return None
    share = expert_offload_share(with_moe(sit.model), sit.quant.bits_per_weight, p.memory.gpu_share)
    new = what_if(c, gpu_share=share, host_weights_gb=p.memory.weights_gb * (1.0 - p.memory.gpu_share))
    now = today_tg(c)
    if new is None or not now or new.decode_tps < 1.1 * now:
        return None
    how = ("switch to llama.cpp's llama-server (or LM Studio's \"force MoE weights onto CPU\"): Ollama splits whole "
           "layers" if sit.engine == "ollama" else "llama.cpp: -ngl 99 --n-cpu-moe N, raising N until it loads; LM "
           "Studio: \"force MoE weights onto CPU\"")
    return fix("moe_expert_offload", f"Keep only the experts in system RAM: {how}",
               f"decode ≈ {now:.1f} → {new.decode_tps:.1f} tok/s (≈ {new.decode_tps / now:.1f}×)",
               "Each token reads all of the attention and dense weights but only a few experts: with those on the GPU "
               "and just the experts in system RAM, far fewer of a token's bytes cross the slow memory than when "
               "whole layers sit there.", speedup=new.decode_tps / now, new_decode_tps=new.decode_tps)


@register("micro_batch", "chunked_prefill", 0,
          lambda c: _spilled_card(c) and (c.sit.symptoms.ubatch or 512) < 4096 and (
              c.sit.workload.prompt_tokens >= 1000 or "prefill" in c.sit.symptoms.asks_about))
def _micro_batch(c: Ctx) -> Fix | None:
    """Weights in system RAM cross PCIe once per prompt micro-batch (:func:`advisor.perf.step.offload_prefill_tps`):
    a larger ``-ub`` reads a long prompt several times faster, for some GPU memory for the larger compute buffer."""
    p = c.pred
    new = what_if(c, ubatch=4096)
    now = c.pp if (c.pp and not c.cache_hit) else (p.prefill_tps if p else None)
    if p is None or new is None or not now or not new.prefill_tps or new.prefill_tps < 1.3 * now:
        return None
    ub = c.sit.symptoms.ubatch or 512
    knob = ("num_batch 4096 (a Modelfile PARAMETER or the API's options)" if c.sit.engine == "ollama"
            else "-b 4096 -ub 4096")
    w = c.sit.workload
    t_now, t_new = w.prompt_tokens / now, w.prompt_tokens / new.prefill_tps
    return fix("micro_batch", f"Read the prompt in larger micro-batches: {knob} (today {ub})",
               f"prefill ≈ {now:,.0f} → {new.prefill_tps:,.0f} tok/s; first word for {w.prompt_tokens:,} tokens "
               f"{fmt_s(t_now)} → {fmt_s(t_new)}",
               "With weights in system RAM the GPU still reads the prompt, copying those weights over PCIe once per "
               f"micro-batch: {ub} tokens per copy today, 4,096 with this. It takes some more GPU memory for the "
               "larger compute buffer; move one more layer to the CPU if it no longer loads.",
               speedup=new.prefill_tps / now, new_ttft_s=t_new)


@register("more_experts_on_gpu", "fit_in_memory", 0,
          lambda c: experts_on_cpu(c) and bool(c.sit.symptoms.cpu_moe_layers) and c.sit.model is not None
          and c.sit.model.is_moe)
def _more_experts_on_gpu(c: Ctx) -> Fix | None:
    """Experts of fewer layers in system RAM (``--n-cpu-moe N`` lowered, or ``--cpu-moe`` replaced by it) when the
    card has room for more: the fewest layers whose experts must stay off the card, from the memory fit (the card's
    share of all weights, :func:`advisor.perf.step.expert_offload_share`'s ``e``), each layer's experts taken as an
    equal share of the routed weights."""
    from advisor.perf.moe import with_moe
    from advisor.perf.step import expert_layers_share, moe_split_bytes

    p, sit = c.pred, c.sit
    now = c.expected_tg
    if p is None or sit.model is None or sit.quant is None or not now:
        return None
    model = with_moe(sit.model)
    n_layers, said = model.n_layers, sit.symptoms.cpu_moe_layers or 0
    dense, routed, _ = moe_split_bytes(model, sit.quant.bits_per_weight)
    if not routed or not n_layers:
        return None
    on_gpu = min(1.0, max(0.0, (p.memory.gpu_share * (dense + routed) - dense) / routed))
    fit_n = math.ceil(n_layers * (1.0 - on_gpu) - 1e-9)
    if fit_n >= min(said, n_layers):
        return None
    new = what_if(c, gpu_share=expert_layers_share(model, sit.quant.bits_per_weight, fit_n),
                  host_weights_gb=routed / 1e9 * fit_n / n_layers)
    if new is None or new.decode_tps < 1.05 * now:
        return None
    today = "every layer's experts" if said >= n_layers else f"{said} layers' experts"
    how = (f"--n-cpu-moe {fit_n}" if fit_n else "no --n-cpu-moe / --cpu-moe at all (the model fits the GPU)")
    return fix("moe_expert_offload", f"Put more experts on the GPU: {how} (today {today} of {n_layers} are in system RAM)",
               f"decode ≈ {now:.1f} → {new.decode_tps:.1f} tok/s (≈ {new.decode_tps / now:.1f}×)",
               "The card has room for more of the experts: every expert moved there is read at the card's bandwidth "
               "instead of system RAM's. Lower N until it no longer loads, then step back one (the KV cache and compute "
               "buffer need some room too).", speedup=new.decode_tps / now, new_decode_tps=new.decode_tps)
