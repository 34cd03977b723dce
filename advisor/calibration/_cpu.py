"""CPU compute: achieved prefill compute per core, with weight-format and engine factors paired within machines."""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict

from advisor.calibration._model import SHRINK_K, CalibrationModel, CalRow, engine_family

# ik_llama.cpp's CPU prefill speed over mainline llama.cpp when no machine in the fit has measured both:
# ik_llama.cpp PR #533 (github.com/ikawrakow/ik_llama.cpp/pull/533, June 2025), LLaMA-3.1-8B PP-512 on a
# Ryzen 7950X: its IQK quants reach 353-372 t/s where mainline's fastest quant (Q4_0) reaches 170 t/s,
# about 2.1x. A published figure, used as the prior; factors paired within measured machines replace it.
ENGINE_CPU_PRIOR = {"ik_llama.cpp": 2.1}


def cpu_qclass(quant: str | None) -> str:
    """Weight-format class by CPU matmul kernel speed: ``legacy`` (Q4_0/Q4_1/Q5_x/Q8_0/IQ4_NL: simple
    blocks, repacked int8 paths), ``kquant`` (Q2_K…Q6_K), ``iq`` (IQ1…IQ3, IQ4_XS: codebook lookups),
    ``float`` (F16/BF16/F32), ``other``. ik_llama.cpp's repacked ``_R4``/``_R8`` count as their base."""
    q = re.sub(r"_r\d+$", "", (quant or "").lower().removeprefix("ud-"))
    if q in ("f16", "bf16", "f32", "fp16"):
        return "float"
    if re.fullmatch(r"q[458]_[01]|iq4_nl", q):
        return "legacy"
    if re.fullmatch(r"q[2-6]_k(_[sml]|_xl)?", q):
        return "kquant"
    if re.fullmatch(r"iq[1-3]_\w+|iq4_xs", q):
        return "iq"
    return "other"


def _machine_ratio(items: list[tuple[str, str, float]]) -> dict[str, float]:
    """Per label, the median over machines of (machine's median rate with that label ÷ machine's median
    rate over all its labels): paired within machines, so each machine's own speed cancels.
    ``items``: (machine, label, rate)."""
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for hw, lab, x in items:
        per[hw][lab].append(x)
    ratios: dict[str, list[float]] = defaultdict(list)
    for labs in per.values():
        if len(labs) < 2:
            continue
        centre = statistics.median(statistics.median(v) for v in labs.values())
        for lab, v in labs.items():
            ratios[lab].append(statistics.median(v) / centre)
    return {lab: statistics.median(v) for lab, v in ratios.items()}


def _fit_cpu_per_core(rows: list[CalRow]) -> dict[str, float]:
    """Achieved prefill compute per reference CPU core (TFLOP/s) and its factors by engine and weight format.

    CPU matmul throughput scales with cores × each core's SIMD peak (FMA width × clock,
    :func:`knowledge.cpu_uarch.core_speed`; a core is counted in reference cores), not with memory bandwidth, and depends on the
    format's kernel (Q4_0 and IQ4_NL have repacked int8 paths; IQ2/IQ3 decode codebooks) and on the
    engine (ik_llama.cpp's CPU kernels run several times mainline's). Factors are paired within
    machines (:func:`_machine_ratio`; an engine no machine pairs takes its published figure,
    :data:`ENGINE_CPU_PRIOR`); the base (``cpu-per-core:base``) is the median over machines of
    each machine's median rate with the factors divided out; a prediction uses base × factors for prefill
    and for the compute of a decode step alike. ``cpu-per-core`` (the median of all rows pooled) is the
    figure when format and engine are not known. Factor keys: ``cpu-per-core:q:<class>``,
    ``cpu-per-core:e:<engine family>``.
    """
    if not rows:
        return {}
    rate = [r.prefill_tps * r.prefill_flops / 1e12 / (r.cpu_cores * r.cpu_core_speed)  # type: ignore[operator]
            for r in rows]
    main = [(r.hw_id, cpu_qclass(r.quant), x) for r, x in zip(rows, rate, strict=True)
            if engine_family(r.engine) == "llama.cpp"]
    fq = _machine_ratio(main)
    eng = [(r.hw_id + "|" + cpu_qclass(r.quant), engine_family(r.engine), x) for r, x in zip(rows, rate, strict=True)]
    fe_raw = _machine_ratio(eng)
    base_e = fe_raw.get("llama.cpp", 1.0)
    fe = {e: v / base_e for e, v in fe_raw.items() if e != "llama.cpp"}
    for e, prior in ENGINE_CPU_PRIOR.items():
        fe.setdefault(e, prior)
    per_hw: dict[str, list[float]] = defaultdict(list)
    for r, x in zip(rows, rate, strict=True):
        if engine_family(r.engine) != "llama.cpp" and engine_family(r.engine) not in fe:
            continue  # an engine with no factor paired within a machine would set the base at its own speed
        per_hw[r.hw_id].append(x / fq.get(cpu_qclass(r.quant), 1.0) / fe.get(engine_family(r.engine), 1.0))
    if not per_hw:  # only engines without a paired factor: their rows are all there is
        for r, x in zip(rows, rate, strict=True):
            per_hw[r.hw_id].append(x / fq.get(cpu_qclass(r.quant), 1.0))
    out = {"cpu-per-core": statistics.median(rate),  # all rows pooled: format and engine unknown
           "cpu-per-core:base": statistics.median(statistics.median(v) for v in per_hw.values())}
    base = out["cpu-per-core:base"]
    for hw, v in per_hw.items():  # a measured machine's own rate, shrunk toward the base like a group level
        n = len(v)
        out[f"cpu-per-core:hw:{hw}"] = math.exp((n * math.log(statistics.median(v)) + SHRINK_K * math.log(base))
                                                / (n + SHRINK_K))
    out.update({f"cpu-per-core:q:{k}": v for k, v in fq.items()})
    out.update({f"cpu-per-core:e:{k}": v for k, v in fe.items()})
    return out


def cpu_compute_factor(cal: CalibrationModel, quant: str | None, engine: str | None) -> float:
    """Format × engine factor on the fitted per-core CPU compute (1 where the fit has none)."""
    c = cal.compute_per_bw
    return c.get(f"cpu-per-core:q:{cpu_qclass(quant)}", 1.0) * c.get(f"cpu-per-core:e:{engine_family(engine)}", 1.0)
