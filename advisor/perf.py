"""Predictions per phase: roofline ceilings × calibrated efficiency, memory fit, placement.

``predict()`` is the one function the CLI, the chat, diagnosis and comparison call.
"""

from __future__ import annotations

import math
import re
from typing import Any

from advisor import roofline
from advisor.calibration import (
    CalibrationModel,
    CalRow,
    accel_class,
    attention_flops,
    features,
    fit,
    pipeline_speedup,
    t0_key,
)
from advisor.errors import AdvisorError, InputError
from advisor.models import Hardware, ModelSpec, Prediction, QuantFormat
from knowledge import catalog
from knowledge.queries import calibration_set
from knowledge.store import Store

__all__ = ["build_cal_rows", "calibration_model", "default_backend", "engine_accel", "predict", "resolve_compute"]

DEFAULT_HOST_BW_GBS = 89.6  # dual-channel DDR5-5600, catalog id cpu-ddr5-5600-2ch


def engine_accel(backend: str | None, hw: Hardware) -> tuple[str, str, str]:
    """(engine, accelerator API, label) for a backend as written, defaulting by hardware kind.

    Ollama and LM Studio (GGUF) run llama.cpp; "mlx"/"mlx-lm" run on Metal.
    """
    b = (backend or "").lower()
    if "mlx" in b:
        return "mlx", "metal", "mlx"
    if "vllm" in b:
        return "vllm", "cuda" if hw.vendor.lower() == "nvidia" else "rocm", "vllm"
    engine = "llama.cpp"
    accel = default_accel(hw)
    for key, val in (("metal", "metal"), ("cuda", "cuda"), ("cublas", "cuda"), ("rocm", "rocm"), ("hip", "rocm"),
                     ("vulkan", "vulkan"), ("sycl", "sycl"), ("cpu", "cpu"), ("ngl 0", "cpu")):
        if key in b:
            accel = val
            break
    label = f"{engine}-{accel}"
    if "ollama" in b:
        label = f"ollama ({label})"
    elif "lm studio" in b or "lmstudio" in b:
        label = f"LM Studio ({label})"
    return engine, accel, label


def default_accel(hw: Hardware) -> str:
    if hw.kind == "apple_soc":
        return "metal"
    if hw.kind == "cpu":
        return "cpu"
    v = hw.vendor.lower()
    if "nvidia" in v:
        return "cuda"
    if "amd" in v:
        return "vulkan" if hw.kind == "apu" else "rocm"
    if "intel" in v:
        return "vulkan"
    return "cpu"


def default_backend(hw: Hardware) -> str:
    """The engine most people run on this hardware (llama.cpp via Ollama/LM Studio)."""
    return f"llama.cpp-{default_accel(hw)}"


def resolve_compute(hw: Hardware, accel: str, cal: CalibrationModel) -> tuple[float | None, str]:
    """FP16 TFLOP/s to use for the prefill ceiling, and where it came from.

    The spec (or the catalog's labelled estimate) when the hardware has one; otherwise an ESTIMATE
    from the memory bandwidth × the median achieved-compute-per-bandwidth of measured machines of
    the same kind (the prefill efficiency is then ~1 by construction).
    """
    if hw.fp16_tflops:
        return hw.fp16_tflops, "spec estimate" if hw.fp16_tflops_is_estimate else "spec"
    key = f"{hw.kind}:{accel_class(accel)}"
    ratio = cal.compute_per_bw.get(key)
    if ratio:
        return ratio * hw.bandwidth_gbs, (
            f"ESTIMATE: no FLOPS spec; bandwidth × median achieved compute per GB/s of measured {hw.kind} machines"
        )
    return None, "no compute figure"


def _model_for_row(store: Store, r: dict[str, Any]) -> ModelSpec | None:
    models = catalog.all_models(store)
    if r["model_id"] and r["model_id"] in models:
        m = models[r["model_id"]]
        if r["params_b"] and abs(r["params_b"] - m.params_b) / m.params_b > 0.25 and not m.active_params_b:
            return None
        return m
    name = (r["model"] or "").lower()
    act = re.search(r"a(\d+(?:\.\d+)?)b\b", name)
    if not r["params_b"]:
        return None
    if act:
        return catalog.generic_model(store, name, r["params_b"], float(act.group(1)))
    if re.search(r"flash|minimax|moe|deepseek-v|glm", name):
        return None  # likely MoE with unknown active parameters: not usable for calibration
    return catalog.generic_model(store, name, r["params_b"])


def build_cal_rows(store: Store, rows: list[dict[str, Any]] | None = None) -> list[CalRow]:
    """Calibration rows with features; rows whose model or format cannot be sized are skipped."""
    rows = rows if rows is not None else calibration_set(store)
    out = []
    for r in rows:
        if not r["bandwidth_gbs"] or (r["batch"] or 1) != 1:
            continue
        m = _model_for_row(store, r)
        if m is None:
            continue
        try:
            q = catalog.resolve_quant(store, r["quant"], backend=r["backend"]).value
        except AdvisorError:
            continue
        prompt = r["prompt_tokens"] or 512
        gen = r["gen_tokens"] or 128
        depth = r["depth"] or 0
        after_prompt = r["engine"] != "llama.cpp"  # llama-bench tg runs start from an empty cache
        dbytes, flops = features(model=m, bits_per_weight=q.bits_per_weight, prompt_tokens=prompt,
                                 gen_tokens=gen, depth=depth if not after_prompt else depth)
        if not after_prompt:
            dbytes = roofline.weight_bytes_read_per_token(m, q.bits_per_weight) + roofline.kv_bytes(m, depth + gen / 2)
        tf = r["fp16_tflops"]
        out.append(CalRow(
            result_id=r["result_id"], hw_id=r["base_hw_id"], kind=r["kind"], family=r["hw_family"] or "",
            accel=r["accel"], engine=r["engine"], quant=q.name, multi=(r["n_devices"] or 1) > 1,
            bandwidth_gbs=r["bandwidth_gbs"], tflops=tf, decode_bytes=dbytes, prefill_flops=flops,
            decode_tps=r["decode_tps"],
            # A prefill rate without its prompt length is not comparable (the rate depends on it).
            prefill_tps=r["prefill_tps"] if r["prompt_tokens"] else None, params_active_b=m.active_b,
            source_set=r["source_set"] or r["origin"], n_devices=r["n_devices"] or 1, prompt_tokens=prompt,
            prefill_attn_flops=attention_flops(m, prompt, depth),
            old_build=bool(re.search(r"\b(?:Dec|Nov|Oct|Sep|Aug|Jul|Jun|May|Apr|Mar|Feb|Jan)?\s*2023\b", r["notes"] or "")
                           and re.search(r"snapshot|build", r["notes"] or "")), extra={"model": r["model"], "depth": depth},
        ))
    return out


def achieved_read_share(store: Store) -> float:
    """Median achieved/spec memory-read share of the lab machines (1.0 when none is recorded)."""
    def build() -> float:
        rows = store.query("SELECT l.achieved_bandwidth_gbs / h.bandwidth_gbs AS r FROM lab_machines l "
                           "JOIN hardware h ON h.hw_id = l.hw_id WHERE l.achieved_bandwidth_gbs > 0")
        vals = sorted(r["r"] for r in rows)
        return vals[len(vals) // 2] if vals else 1.0

    return float(store.cached("read_share", build))


def calibration_model(store: Store) -> CalibrationModel:
    """The efficiency fit on every measured row of the store (cached until the next write)."""
    return store.cached("calibration", lambda: fit(build_cal_rows(store)), scope="population")


def predict(
    store: Store,
    *,
    hardware: Hardware,
    model: ModelSpec,
    quant: QuantFormat,
    backend: str | None = None,
    prompt_tokens: int = 512,
    gen_tokens: int = 128,
    depth: int = 0,
    concurrency: int = 1,
    gpu_share: float | None = None,
    host_bandwidth_gbs: float | None = None,
    cal: CalibrationModel | None = None,
) -> Prediction:
    """Predict prefill and decode rates, TTFT, answer time and memory fit for one scenario.

    Args:
        prompt_tokens, gen_tokens, depth: tokens [count]; depth = tokens already in the KV cache.
        concurrency: parallel sequences; rates are then aggregate (llama-batched-bench convention).
        gpu_share: share of the weights on the GPU (partial offload); default from the memory fit.
        host_bandwidth_gbs: system-RAM bandwidth for offloaded layers (default dual-channel DDR5-5600).

    Returns:
        Prediction with ceilings, calibrated rates, 10–90 % ranges and the calibration used.
    """
    cal = cal or calibration_model(store)
    engine, accel, label = engine_accel(backend, hardware)
    assumptions: list[str] = []
    bw = hardware.bandwidth_gbs
    tflops, tf_source = resolve_compute(hardware, accel, cal)
    probe_used = hardware.measured
    read_share = 1.0
    if probe_used:
        # Efficiencies are fitted against spec sheets; a probe measures what the memory really delivers.
        # Divide by the achieved/spec read share of the lab machines (knowledge: lab_machines) so the
        # measured bandwidth is not discounted twice.
        read_share = achieved_read_share(store)
        tf_source = "probe"
        assumptions.append(
            f"Using this machine's probe: {bw:.0f} GB/s read, {tflops or 0:.2f} TFLOP/s matmul; decode efficiency "
            f"rescaled by the lab machines' achieved/spec read share ({read_share:.0%}); prefill keeps the spec-fitted "
            "efficiency on the measured matmul rate (a conservative estimate).")
    if "ESTIMATE" in tf_source:
        assumptions.append(f"Compute {tflops:.1f} TFLOP/s is an {tf_source}.") if tflops else None
    bpw = quant.bits_per_weight
    ctx = depth + prompt_tokens + gen_tokens
    fitm = roofline.memory_fit(hardware, model, bpw, context_tokens=ctx, concurrency=concurrency)
    wbytes = roofline.weight_bytes_read_per_token(model, bpw)
    kv_tok = roofline.kv_bytes_per_token(model)
    if model.generic:
        assumptions.append(f"{model.id}: {model.notes}.")
    dbytes, flops = features(model=model, bits_per_weight=bpw, prompt_tokens=prompt_tokens or 1,
                             gen_tokens=gen_tokens, depth=depth)
    scen = {"kind": hardware.kind, "multi": hardware.n_devices > 1, "accel": accel, "engine": engine,
            "family": hardware.family, "hw_id": hardware.id.split("x")[0] if hardware.n_devices > 1 else hardware.id,
            "quant": quant.name, "bandwidth_gbs": bw, "tflops": tflops, "decode_bytes": dbytes,
            "prefill_flops": flops, "n_devices": hardware.n_devices, "params_active_b": model.active_b,
            "prompt_tokens": prompt_tokens or 1, "prefill_attn_flops": attention_flops(model, prompt_tokens or 1, depth),
            "old_build": False}
    if hardware.n_devices > 1:
        scen["hw_id"] = re.sub(r"x\d+$", "", hardware.id)
        assumptions.append(
            f"{hardware.n_devices} GPUs with the layers split between them (llama.cpp default): capacity adds "
            "up, single-stream speed does not."
        )
    dec_cal = cal.efficiency("decode", scen)
    pre_cal = cal.efficiency("prefill", scen)
    eff_d = min(1.0, dec_cal.efficiency / read_share)
    eff_p = pre_cal.efficiency
    t0 = cal.t0_s.get(t0_key(scen), cal.t0_s.get(accel_class(accel), 0.0))
    decode_ceiling = roofline.decode_ceiling_tps(bw, dbytes)
    # Placement: partial offload runs the CPU share of the weights at system-RAM speed.
    share = gpu_share if gpu_share is not None else fitm.gpu_share
    host_bw = host_bandwidth_gbs or hardware.host_bandwidth_gbs or DEFAULT_HOST_BW_GBS
    t_tok = dbytes * share / (bw * roofline.GB * eff_d) + t0
    if share < 1.0:
        host_eff = cal.efficiency("decode", {**scen, "kind": "cpu", "accel": "cpu", "multi": False}).efficiency
        t_tok += dbytes * (1 - share) / (host_bw * roofline.GB * host_eff)
        assumptions.append(
            f"Only {share:.0%} of the weights fit in GPU memory; the rest run from system RAM at ~{host_bw:g} GB/s "
            "(assumed dual-channel DDR5 unless stated)."
        )
    decode1 = 1.0 / t_tok
    pipe = pipeline_speedup(hardware.n_devices, prompt_tokens or 1, engine=engine)
    prefill_ceiling = roofline.prefill_ceiling_tps(tflops, flops) * pipe if tflops else None
    prefill1 = cal.prefill_tps({**scen, "tflops": tflops}, eff=eff_p) if tflops else None
    if prefill1 and share < 1.0:
        prefill1 *= 0.5 + 0.5 * share  # weights streamed over PCIe for the offloaded share (rough)
    # Batched decode: one step reads the weights once plus every sequence's KV cache; past the
    # ridge point the step is compute-bound.
    b = max(1, concurrency)
    decode_tps = decode1
    per_seq = decode1
    ridge = roofline.ridge_point(tflops, bw) if tflops else None
    if b > 1:
        kv_b = dbytes - wbytes
        t_bw = (wbytes + b * kv_b) * share / (bw * roofline.GB * eff_d) + t0
        if share < 1.0:
            host_eff = cal.efficiency("decode", {**scen, "kind": "cpu", "accel": "cpu", "multi": False}).efficiency
            t_bw += (wbytes + b * kv_b) * (1 - share) / (host_bw * roofline.GB * host_eff)
        t_cmp = (b * 2 * model.active_b * 1e9 / (tflops * 1e12 * eff_p)) if tflops else 0.0
        step = max(t_bw, t_cmp)
        decode_tps = b / step
        per_seq = 1.0 / step
    if not fitm.fits and hardware.kind not in ("discrete_gpu", "datacenter_gpu"):
        assumptions.append(
            f"The model needs {fitm.required_gb:.1f} GB but only {fitm.usable_gb:.1f} GB is usable: "
            "the numbers assume it runs anyway, which it will not do well (swapping)."
        )
    if not (math.isfinite(per_seq) and per_seq > 0 and math.isfinite(decode_tps)):
        raise InputError("These numbers give no usable speed (bandwidth, compute or size out of any real range).")
    ttft = (prompt_tokens / prefill1) if prefill1 and prompt_tokens else (0.0 if not prompt_tokens else None)
    dec_s = gen_tokens / per_seq if gen_tokens else 0.0
    if b > 1:
        # Aggregate ceiling of a batch: weights once plus every sequence's KV cache per step, or compute.
        kv_b = dbytes - wbytes
        decode_ceiling = b * bw * roofline.GB / (wbytes + b * kv_b)
        if tflops:
            decode_ceiling = min(decode_ceiling, tflops * 1e12 / (2 * model.active_b * 1e9))
    # Ranges come from the fit's residuals; nothing is predicted above the roofline.
    rng_d = (decode_tps * dec_cal.p10_ratio, min(decode_tps * dec_cal.p90_ratio, decode_ceiling))
    rng_p = ((prefill1 * pre_cal.p10_ratio, min(prefill1 * pre_cal.p90_ratio, prefill_ceiling or float("inf")))
             if prefill1 else None)
    return Prediction(
        prefill_tps=prefill1, decode_tps=decode_tps, prefill_ceiling_tps=prefill_ceiling,
        decode_ceiling_tps=decode_ceiling, prefill_tps_range=rng_p, decode_tps_range=rng_d, ttft_s=ttft,
        decode_s=dec_s, total_s=(ttft or 0.0) + dec_s, decode_tps_per_seq=per_seq, concurrency=b,
        prompt_tokens=prompt_tokens, gen_tokens=gen_tokens, depth=depth, bits_per_weight=bpw, quant=quant.name,
        weight_bytes_per_token_gb=wbytes / roofline.GB, kv_bytes_per_token_gb=kv_tok / roofline.GB,
        flops_per_token_g=flops / 1e9, ridge_point_flop_per_byte=ridge, bandwidth_gbs=bw, tflops=tflops,
        tflops_is_estimate="ESTIMATE" in tf_source or "estimate" in tf_source, memory=fitm,
        hardware={"id": hardware.id, "name": hardware.name, "kind": hardware.kind, "memory_gb": fitm.total_gb,
                  "n_devices": hardware.n_devices, "source_url": hardware.source_url},
        model={"id": model.id, "params_b": model.params_b, "active_params_b": model.active_params_b,
               "generic": model.generic},
        backend=label, calibration=[dec_cal, pre_cal], assumptions=[a for a in assumptions if a],
        probe_used=probe_used,
    )
