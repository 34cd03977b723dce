"""The calibration fit on the store: which rows it learns from, bounded, cached; the own-machine hook.

* Population rows (what "an RTX 4090 with this model" should do) are the curated seed and results an
  operator pooled on purpose (``origin`` seed / pooled); a person's own results (probe, import, paste)
  never move it (issue 17: made-up imports must not change everyone's predictions). They adjust
  predictions only for the machine they were measured on (:func:`own_machine_factors`).
* The fit is bounded (:func:`advisor.calibration.bounded`: a few rows per source × machine × model
  cell) and cached on the store until the next write.
* Batched decode is calibrated on measured batches (``batch`` > 1): measured ÷ step-model aggregate,
  as a slope per engine family and hardware (:func:`advisor.calibration.fit_batched`).
"""

from __future__ import annotations

import math
import re
import statistics
from typing import Any

from advisor import roofline
from advisor.calibration import (
    V0_HOST_KEY,
    CalibrationModel,
    CalRow,
    attention_flops,
    features,
    fit,
    fit_batched,
)
from advisor.errors import AdvisorError
from advisor.models import Hardware, ModelSpec, Prediction
from advisor.perf.moe import active_bpw, kernel_format, moe_prefill_terms, weights_bpw, with_moe
from knowledge import catalog
from knowledge.cpu_uarch import core_speed
from knowledge.queries import OWN_ORIGINS, POPULATION_ORIGINS, calibration_set
from knowledge.store import Store

__all__ = ["achieved_read_share", "build_cal_rows", "calibration_model", "cpu_core_count", "modelled_batch_tps", "own_machine_factors",
           "bounded_rows", "population_rows", "row_hardware", "row_model"]

# Decode measured with deliberately few threads (the source says so) is not what the machine does.
_THREAD_LIMITED = re.compile(r"with only \d+ threads|not a max-thread|threads column reads 1\b", re.I)
_PURE_DECODE = re.compile(r"llama-batched-bench|\bS_TG\b")  # curated notes of batched-bench rows (decode = S_TG)
_PERF_ACCELS = ("metal", "cuda", "rocm", "vulkan", "sycl", "cpu")  # the APIs the fit has groups for
CELL_ROWS = 8  # rows per source × machine × engine × model × format cell the fit keeps
MAX_FIT_ROWS = 2000  # batch-1 rows the fit keeps at most (the curated seed has about 1,100 usable)
MAX_BATCHED_ROWS = 400  # batched rows (the seed has 173)


def _calibration_rows(store: Store, population: bool) -> list[dict[str, Any]]:
    """Measured rows joined with their hardware, through ``knowledge.queries.calibration_set``:
    the population (seed + pooled) or every row (the person's own included)."""
    return calibration_set(store, scope="population" if population else "own")


def population_rows(store: Store) -> list[dict[str, Any]]:
    """Rows the population fit learns from: origin seed or pooled (case-insensitive)."""
    return [r for r in _calibration_rows(store, True) if str(r.get("origin") or "").lower() in POPULATION_ORIGINS]


def row_model(store: Store, r: dict[str, Any]) -> ModelSpec | None:
    """The model of a result row: its catalog entry, else a generic one sized from ``params_b`` (or the
    size its name gives); None when it cannot be sized (a MoE without its active parameters)."""
    models = catalog.all_models(store)
    if r["model_id"] and r["model_id"] in models:
        m = models[r["model_id"]]
        if r["params_b"] and abs(r["params_b"] - m.params_b) / m.params_b > 0.25 and not m.active_params_b:
            return None
        return m
    name = (r["model"] or "").lower()
    act = re.search(r"a(\d+(?:\.\d+)?)b\b", name)
    if not r["params_b"]:
        size = re.search(r"(?<![a-z\d.])(\d+(?:\.\d+)?)b\b", name)  # "midnight-miqu-70b": the size the name gives
        if not size or act:
            return None
        r = {**r, "params_b": float(size.group(1))}
    if act:
        return catalog.generic_model(store, name, r["params_b"], float(act.group(1)))
    if re.search(r"flash|minimax|moe|deepseek-v|glm", name):
        return None  # likely MoE with unknown active parameters: not usable for calibration
    return catalog.generic_model(store, name, r["params_b"])


def row_engine(r: dict[str, Any]) -> str:
    """The row's engine; the ik_llama.cpp fork apart from mainline (its CPU and long-context kernels differ)."""
    return "ik_llama.cpp" if "ik_llama" in str(r.get("backend") or "").lower() else str(r["engine"])


_YEAR_2023 = re.compile(r"\b(?:Dec|Nov|Oct|Sep|Aug|Jul|Jun|May|Apr|Mar|Feb|Jan)?\s*2023\b")


def row_old_build(r: dict[str, Any]) -> bool:
    """A row measured on a 2023 llama.cpp build (its curated notes or backend say so): multi-GPU splits and
    batched decoding were much slower then; predictions assume a current build."""
    notes, backend = str(r.get("notes") or ""), str(r.get("backend") or "")
    return bool(_YEAR_2023.search(backend) or (_YEAR_2023.search(notes) and re.search(r"snapshot|build", notes)))


_PRE_AUTO_FA = re.compile(r"\b(?:2023|2024|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug)\w*\.?\s+(?:\d{1,2},?\s+)?2025)\b")


def label_flash_attn(text: str | None) -> bool | None:
    """Flash attention as an engine label or command says it (``"llama.cpp-cpu (no FA)"``, ``-fa 1``); None when
    it says nothing (the one reader of it: :func:`advisor.understand.symptoms.flash_attention_said`)."""
    from advisor.understand.symptoms import flash_attention_said

    return flash_attention_said(text)


def row_flash_attn(r: dict[str, Any]) -> bool:
    """Whether a llama.cpp-family row ran with flash attention: as its command or notes say (``-fa 1``,
    ``FA off``, a ``__fa1`` log); otherwise off for builds dated before September 2025 and on after, when
    llama.cpp made ``-fa auto`` the default (llama.cpp PR #15434, "common : set default flash_attn to auto")."""
    text = " ".join(str(r.get(k) or "") for k in ("notes", "backend", "source_url"))
    said = label_flash_attn(text)
    return said if said is not None else not _PRE_AUTO_FA.search(text)


def row_accel(store: Store, r: dict[str, Any]) -> str:
    """The accelerator API of a result row as the prediction path reads it
    (:func:`advisor.understand.engine.engine_accel`): a backend label that names none
    ("llama.cpp (llama-server, via llmfit bench)") runs on the hardware's default (CUDA on an NVIDIA card,
    Metal on a Mac, ROCm on a Radeon), so calibration and prediction put the row in the same group."""
    from advisor.understand.engine import engine_accel

    if r["accel"] in _PERF_ACCELS:
        return str(r["accel"])
    try:
        return engine_accel(r["backend"], row_hardware(store, r))[1]
    except AdvisorError:
        return str(r["accel"])


def _cores(store: Store, r: dict[str, Any]) -> int:
    """CPU cores of a row's machine (0 when the catalog does not give them)."""
    try:
        return cpu_core_count(row_hardware(store, r))
    except AdvisorError:
        return 0


def cpu_core_count(hw: Hardware) -> int:
    """Cores of a catalog CPU (``cpu_cores`` as the spec sheet gives it), 0 when unknown.

    A list of bins ("4;10;12;14", the parts of a laptop family) → the middle one (the lower of two: 10): the
    first is the smallest part (an i3), which put a 14-core i7-12700H at 4 cores; a family range ("8-60",
    server parts from 8 to 60 cores) → its middle (34). The prediction says which was assumed
    (:func:`advisor.perf.prediction.resolve_compute`).
    """
    text = str(hw.cpu_cores or "")
    rng = re.match(r"\s*(\d+)\s*-\s*(\d+)", text)
    if rng:
        return (int(rng.group(1)) + int(rng.group(2))) // 2
    bins = sorted(int(x) for x in re.findall(r"\d+", text)) if ";" in text else []
    if bins:
        return bins[(len(bins) - 1) // 2]
    m = re.match(r"\s*(\d+)", text)
    return int(m.group(1)) if m else 0


_UBATCH = re.compile(r"(?:-ub|--ubatch-size|n_ubatch\s*=?)\s*(\d+)")  # a run's micro-batch, from its command


def _spilled(store: Store, r: dict[str, Any], m: ModelSpec, bpw: float, context: int) -> bool:
    """Whether a row's working set (all weights + the f16 KV cache at its context) exceeds its machine's memory
    (× devices): it did not run from the device's own memory, so it does not say what the device does."""
    try:
        mem = row_hardware(store, r).memory_gb
    except AdvisorError:
        return False
    if not mem:
        return False
    need = roofline.weight_bytes_total(m, bpw) + roofline.kv_bytes(m, context)
    return need > mem * 2**30 * (r["n_devices"] or 1)  # catalog memory: GiB (a "24 GB" card holds 24 GiB)


# A run's host CPU as benchmark harnesses print it beside the card ("..., host CPU Intel(R) Xeon(R) CPU E5-2680 v4
# @ 2.40GHz, linux)": llmfit's community results.
_HOST_CPU = re.compile(r"\bhost CPU\s+(?P<cpu>[^,()]+(?:\([^)]*\)[^,()]*)*)", re.I)
HOST_SHARE = 0.8  # the share of its peak a CPU's memory serves decode at (llama.cpp on CPU cores: 0.6-0.8)
GPU_HALF = 0.5  # a GPU-resident decode below half the card's roofline is unusual (the discrete-GPU rows: 0.6-0.9)


def _host_bandwidth(store: Store, text: str | None, memo: dict[str, float | None]) -> float | None:
    """Peak memory bandwidth (GB/s) of the host CPU a row's hardware text names, None when it names none the
    catalog resolves to a CPU."""
    m = _HOST_CPU.search(text or "")
    if m is None:
        return None
    name = m.group("cpu").strip()
    if name not in memo:
        try:
            hw = catalog.resolve_hardware(store, name).value
            memo[name] = hw.bandwidth_gbs if hw.kind == "cpu" else None
        except AdvisorError:
            memo[name] = None
    return memo[name]


def host_bound(r: dict[str, Any], decode_bytes: float, host_gbs: float | None) -> bool:
    """A discrete card's decode that its host's memory could have served and no GPU-resident run looks like:
    below both ``HOST_SHARE`` × the host CPU's peak and ``GPU_HALF`` × the card's. Such rows say how the host
    ran the model (a build without the GPU backend, ``-ngl 0``), not the card, so they do not calibrate decode.
    Example: 40 llmfit runs of a GTX 1050 Ti (112 GB/s) in an E5-2680 v4 host (quad-channel DDR4-2400, 76.8 GB/s)
    fit 1/tok/s = 7 ms + bytes / 45 GB/s (least squares over 40 models): 45 < 61 and < 56."""
    if not (host_gbs and r.get("decode_tps") and r.get("bandwidth_gbs")) or r.get("kind") not in (
            "discrete_gpu", "datacenter_gpu"):
        return False
    achieved = decode_bytes * r["decode_tps"] / 1e9
    return achieved < min(HOST_SHARE * host_gbs, GPU_HALF * r["bandwidth_gbs"] * (r.get("n_devices") or 1))


def build_cal_rows(store: Store, rows: list[dict[str, Any]] | None = None) -> list[CalRow]:
    """Batch-1 calibration rows with features; rows whose model or format cannot be sized are skipped.

    ``rows`` default: :func:`population_rows`.
    """
    rows = rows if rows is not None else population_rows(store)
    out = []
    hosts: dict[str, float | None] = {}
    for r in rows:
        if not r["bandwidth_gbs"] or (r["batch"] or 1) != 1:
            continue
        m = row_model(store, r)
        if m is None:
            continue
        m = with_moe(m)
        try:
            q = catalog.resolve_quant(store, r["quant"], backend=r["backend"]).value
        except AdvisorError:
            continue
        prompt = r["prompt_tokens"] or 512
        gen = r["gen_tokens"] or 128
        depth = r["depth"] or 0
        after_prompt = r["engine"] != "llama.cpp"  # llama-bench tg runs start from an empty cache
        dbytes, flops = features(model=m, bits_per_weight=active_bpw(m, q), prompt_tokens=prompt,
                                 gen_tokens=gen, depth=depth if not after_prompt else depth)
        if not after_prompt:
            dbytes = roofline.weight_bytes_read_per_token(m, active_bpw(m, q)) + roofline.kv_bytes(m, depth + gen / 2)
        # A CPU backend on a machine with a GPU (Mac, APU) does not run at the GPU's FLOPS spec.
        accel = row_accel(store, r)
        tf = r["fp16_tflops"] if not (accel == "cpu" and r["kind"] != "cpu") else None
        ub = _UBATCH.search(r["notes"] or "")
        share, tokens = moe_prefill_terms(m, prompt, row_engine(r), int(ub.group(1)) if ub else None)
        out.append(CalRow(
            result_id=r["result_id"], hw_id=r["base_hw_id"], kind=r["kind"], family=r["hw_family"] or "",
            accel=accel, engine=row_engine(r), quant=kernel_format(m, q), multi=(r["n_devices"] or 1) > 1,
            bandwidth_gbs=r["bandwidth_gbs"], tflops=tf, decode_bytes=dbytes, prefill_flops=flops,
            decode_tps=None if _THREAD_LIMITED.search(r["notes"] or "") else r["decode_tps"],
            # A prefill rate without its prompt length is not comparable (the rate depends on it).
            prefill_tps=r["prefill_tps"] if r["prompt_tokens"] else None, params_active_b=m.active_b,
            source_set=r["source_set"] or r["origin"], n_devices=r["n_devices"] or 1, prompt_tokens=prompt, moe=m.is_moe,
            prefill_attn_flops=attention_flops(m, prompt, depth), cpu_cores=_cores(store, r),
            cpu_core_speed=core_speed(r["hw_family"], r["base_hw_id"]),
            old_build=row_old_build(r), flash_attn=row_flash_attn(r),
            extra={"model": r["model"], "depth": depth, "generic": m.generic,
                   "spilled": _spilled(store, r, m, weights_bpw(m, q), depth + prompt + gen),
                   "host_bound": host_bound(r, dbytes, _host_bandwidth(store, r.get("hardware"), hosts))},
            expert_tokens=tokens, expert_flop_share=share, ubatch=int(ub.group(1)) if ub else 0,
            n_layers=m.n_layers or 0,
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




def row_hardware(store: Store, r: dict[str, Any]) -> Hardware:
    """The catalog device of a result row; a family-level id (``apple-m1-ultra``) becomes its first bin with
    the row's (family-mean) compute, as :func:`knowledge.queries.calibration_set` resolves it.

    Raises:
        AdvisorError: the id is neither a catalog entry nor a family of bins with one bandwidth.
    """
    hw_id = str(r["hw_id"] or r["base_hw_id"])
    found = catalog.find_hardware(store, hw_id)  # no raise: a NotFoundError ranks suggestions (~5 ms a row)
    if found is not None:
        return found
    bins = sorted((h for k, h in catalog.all_hardware(store).items() if k.startswith(str(r["base_hw_id"]) + "-")),
                  key=lambda h: h.id)
    if not bins or len({h.bandwidth_gbs for h in bins}) != 1:
        return catalog.get_hardware(store, hw_id)  # raises NotFoundError with the closest names
    return bins[0].model_copy(update={"fp16_tflops": r["fp16_tflops"] or bins[0].fp16_tflops})


def modelled_batch_tps(p: Prediction, r: dict[str, Any]) -> float:
    """What a measured batch row reports, from a prediction at its batch: aggregate decode tok/s.

    A tool that reports the batch's prompt rate apart (llama-batched-bench ``S_PP`` / ``S_TG``) gives
    pure decode. A server benchmark that reports only output tok/s (vLLM ``bench serve``, AccelMark
    sustained runs, client-side concurrency sweeps) counts the interleaved prefills too (a llama-batched-bench
    row whose source did not tabulate S_PP is still pure decode: its notes name the tool): every
    request prefills ``P`` tokens per ``g`` generated, so ``1 / (1 / decode + (P / g) / prefill)``.
    """
    if (r.get("prefill_tps") or _PURE_DECODE.search(str(r.get("notes") or ""))
            or not (p.prefill_tps and r.get("prompt_tokens") and r.get("gen_tokens"))):
        return p.decode_tps
    return 1.0 / (1.0 / p.decode_tps + (r["prompt_tokens"] / r["gen_tokens"]) / p.prefill_tps)


def _batched_items(store: Store, rows: list[dict[str, Any]], cal: CalibrationModel) -> list[tuple[dict[str, Any], int, float, str]]:
    """(group fields, batch, measured ÷ step-model aggregate decode, source) per usable batched row."""
    from advisor.perf.prediction import predict  # the step model behind predict; imported here (cycle)

    out = []
    for r in rows:
        b = r["batch"] or 1
        if b <= 1 or not r["decode_tps"] or not r["bandwidth_gbs"] or row_old_build(r):
            continue  # a 2023 build's batches (before the batched-attention kernels) are not today's
        m = row_model(store, r)
        try:
            hw = row_hardware(store, r)
            q = catalog.resolve_quant(store, r["quant"], backend=r["backend"]).value
            if m is None:
                continue
            p = predict(store, hardware=hw, model=m, quant=q, backend=r["backend"], prompt_tokens=r["prompt_tokens"] or 512,
                        gen_tokens=r["gen_tokens"] or 128, depth=r["depth"] or 0, concurrency=b, cal=cal)
        except (AdvisorError, ValueError, KeyError):
            continue
        g = {"engine": row_engine(r), "accel": row_accel(store, r), "kind": r["kind"], "hw_id": r["base_hw_id"], "quant": q.name}
        out.append((g, b, r["decode_tps"] / modelled_batch_tps(p, r), r["source_set"] or r["origin"]))
    return out


_VLLM_VERSION = re.compile(r"\bvllm\W{0,3}v?0\.(\d+)\b", re.I)
V0_HOST_GRID_MS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0)


def vllm_v0(backend: str | None) -> bool:
    """Whether an engine label names vLLM before 0.8 (its V0 engine: ``"vllm 0.7.3"``); an unversioned
    "vllm" is taken as current."""
    m = _VLLM_VERSION.search(str(backend or ""))
    return bool(m and int(m.group(1)) < 8)


def fit_v0_host(store: Store, rows: list[dict[str, Any]], cal: CalibrationModel) -> float:
    """vLLM V0's host work per sequence per step, s (:data:`V0_HOST_GRID_MS`), on the measured V0 batches.

    The value at which the step model (before any batched factor) best matches the V0 rows: least median
    absolute log error of measured ÷ modelled aggregate decode. A cost per sequence is what the batched
    slope ``b ** s`` cannot carry: a 0.5B model at 32 users spends most of its step on the host, an 8B at 8
    users little. Needs V0 rows at two batch × model sizes; else 0. Sets ``cal.t0_s[V0_HOST_KEY]``.
    """
    v0 = [r for r in rows if vllm_v0(r.get("backend")) and (r["batch"] or 1) > 1]
    best = (math.inf, 0.0)
    if len({(r["batch"], r["model"]) for r in v0}) >= 2:
        for ms in V0_HOST_GRID_MS:
            cal.t0_s[V0_HOST_KEY] = ms / 1000
            errs = [abs(math.log(ratio)) for _, _, ratio, _ in _batched_items(store, v0, cal) if 0.1 < ratio < 10]
            if errs:
                best = min(best, (statistics.median(errs), ms / 1000))
    cal.t0_s[V0_HOST_KEY] = best[1]
    return best[1]


def fit_batched_terms(store: Store, rows: list[dict[str, Any]], cal: CalibrationModel) -> CalibrationModel:
    """The batched terms on top of a batch-1 fit, in place: vLLM V0's host cost (:func:`fit_v0_host`),
    then the batched slopes against the step model that uses it (:func:`advisor.calibration.fit_batched`)."""
    fit_v0_host(store, rows, cal)
    cal.batched = fit_batched(_batched_items(store, rows, cal))
    return cal


def calibration_model(store: Store) -> CalibrationModel:
    """The efficiency fit on the population rows (bounded; cached until the next write).

    Batch-1 efficiencies first (:func:`advisor.calibration.fit`), then the batched slopes on the
    measured batches against the step model that uses them.
    """
    def build() -> CalibrationModel:
        rows = population_rows(store)
        single = bounded_rows([r for r in rows if (r["batch"] or 1) == 1], per_cell=CELL_ROWS, total=MAX_FIT_ROWS)
        batched = bounded_rows([r for r in rows if (r["batch"] or 1) > 1], per_cell=2 * CELL_ROWS, total=MAX_BATCHED_ROWS)
        return fit_batched_terms(store, batched, fit(build_cal_rows(store, single)))

    return store.cached("calibration", build)


def bounded_rows(rows: list[dict[str, Any]], *, per_cell: int, total: int) -> list[dict[str, Any]]:
    """At most ``per_cell`` rows per (source, hardware, engine, model, format, prompt and depth octave)
    cell, ``total`` in all.

    The fit's cost then stays bounded whatever the store holds (a 500-point sweep on one machine says
    little more about its efficiency than a few of its points): rows are taken evenly spaced in
    ``result_id`` order, so the sample is deterministic. Same rule as :func:`advisor.calibration.bounded`.
    """
    cells: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for r in rows:
        key = tuple(str(r.get(k)) for k in ("source_set", "base_hw_id", "backend", "model", "quant"))
        # Prompt length and depth by octave: a sweep keeps its shape, not its every point.
        octaves = tuple(str(int(math.log2(max(1, r.get(k) or 1)))) for k in ("prompt_tokens", "depth"))
        cells.setdefault(key + octaves, []).append(r)
    out: list[dict[str, Any]] = []
    for v in cells.values():
        v.sort(key=lambda r: str(r["result_id"]))
        step = max(1.0, len(v) / per_cell)
        out.extend(v[int(i * step)] for i in range(min(per_cell, len(v))))
    if len(out) > total:
        out.sort(key=lambda r: str(r["result_id"]))
        out = [out[int(i * len(out) / total)] for i in range(total)]
    return out


def own_machine_factors(store: Store, hw_id: str, cal: CalibrationModel | None = None) -> dict[str, tuple[float, int]]:
    """Per phase, (factor, rows): the person's own results on ``hw_id`` ÷ the population prediction.

    The median ratio in log space, shrunk toward 1 with weight ``n / (n + 2)`` and clamped to
    0.25–4. Applies to predictions for that machine only; empty when there are no own results.
    """
    from advisor.perf.prediction import predict

    cal = cal or calibration_model(store)
    logs: dict[str, list[float]] = {"decode": [], "prefill": []}
    for r in _calibration_rows(store, False):
        if str(r.get("origin") or "").lower() not in OWN_ORIGINS or r["base_hw_id"] != hw_id or (r["batch"] or 1) != 1:
            continue
        m = row_model(store, r)
        try:
            if m is None:
                continue
            hw = row_hardware(store, r)
            q = catalog.resolve_quant(store, r["quant"], backend=r["backend"]).value
            p = predict(store, hardware=hw, model=m, quant=q, backend=r["backend"], prompt_tokens=r["prompt_tokens"] or 512,
                        gen_tokens=r["gen_tokens"] or 128, depth=r["depth"] or 0, cal=cal)
        except (AdvisorError, ValueError, KeyError):
            continue
        if r["decode_tps"] and p.decode_tps:
            logs["decode"].append(math.log(r["decode_tps"] / p.decode_tps))
        if r["prefill_tps"] and p.prefill_tps:
            logs["prefill"].append(math.log(r["prefill_tps"] / p.prefill_tps))
    out = {}
    for phase, v in logs.items():
        if v:
            f = math.exp(len(v) / (len(v) + 2.0) * statistics.median(v))
            out[phase] = (min(4.0, max(0.25, f)), len(v))
    return out
