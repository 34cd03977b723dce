"""The one step model: how long one decode step takes for ``b`` sequences decoding together.

Used by :func:`advisor.perf.predict` (chat, CLI, diagnose) and by :mod:`advisor.compare`, so a team
gets one answer. Units are in the names (``_s`` seconds, ``_bytes`` bytes, ``_per_s`` per second).

A decode step at batch ``b`` (DESIGN.md, "The physics"):

* reads the dense weights once (attention, dense layers, shared experts, LM head) plus, for a
  mixture-of-experts model, the routed experts that at least one of the ``b`` tokens picked. With
  ``E`` experts and ``k`` picked per token (independently, uniformly — the load-balancing objective
  of MoE training pushes routing toward it), the expected share of a MoE layer's experts touched is
  ``coverage(b) = 1 − (1 − k/E)^b`` (Fedus et al. 2022, Switch Transformer, and the standard
  occupancy argument). ``coverage(1) = k/E``: batch 1 reads only the active parameters; a large batch
  reads nearly every expert, so MoE batches stop being cheap sooner than dense ones;
* reads every sequence's KV cache (``b × K`` bytes);
* computes ``2 × P_active`` FLOPs per token, for ``b`` tokens;
* on tensor parallel, all-reduces the activations twice per layer over the interconnect
  (Megatron-LM, Shoeybi et al. 2019: one after attention, one after the MLP), see :func:`tp_comm_s`.

``t(b) = max(bytes(b) / X + t0, b · 2·P_active / C) + comm(b)`` with achieved bandwidth ``X`` and
compute ``C`` (spec × calibrated efficiency), divided by the calibrated batched factor for ``b > 1``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from advisor import roofline
from advisor.models import ModelSpec

__all__ = [
    "ACT_BYTES",
    "LINK_GBS",
    "StepModel",
    "expert_coverage",
    "default_interconnect",
    "expert_offload_share",
    "host_link_gbs",
    "offload_prefill_tps",
    "interconnect_gbs",
    "moe_split_bytes",
    "tp_comm_s",
    "weight_bytes_step",
]

ACT_BYTES = 2.0  # activations all-reduced in 16-bit (fp16/bf16), bytes per element
# Per-direction link bandwidth, GB/s. PCIe: 8/16/32 GT/s per lane with 128b/130b coding
# (PCI-SIG spec: ~0.985 / 1.969 / 3.938 GB/s per lane). NVLink: RTX 3090 bridge 56.25 GB/s per
# direction (NVIDIA GA102 whitepaper, 112.5 GB/s total), A100 300 GB/s and H100 450 GB/s per
# direction (NVIDIA A100/H100 datasheets: 600 / 900 GB/s total).
LINK_GBS_PER_LANE = {"pcie3": 0.985, "pcie4": 1.969, "pcie5": 3.938}
LINK_GBS = {"nvlink-3090": 56.25, "nvlink": 300.0, "nvlink-a100": 300.0, "nvlink-h100": 450.0,
            "nvlink-b200": 900.0, "infinity-fabric": 64.0}  # B200: NVLink 5, 1.8 TB/s total (NVIDIA HGX B200 page)
# SXM/HGX boards join their GPUs with NVLink of their generation (NVIDIA A100/H100/B200 datasheets); a PCIe card
# or an unknown board keeps the PCIe default.
_NVLINK_BY_FAMILY = {"NVIDIA Ampere": "nvlink-a100", "NVIDIA Hopper": "nvlink-h100", "NVIDIA Blackwell": "nvlink-b200"}
# ESTIMATES (no single source; NCCL's own tests put small-message all-reduce latency in this range):
# achieved share of the link in a ring all-reduce and the fixed latency per all-reduce.
LINK_EFFICIENCY = 0.7
ALLREDUCE_LATENCY_S = {"pcie": 15e-6, "nvlink": 6e-6}
UNKNOWN_MOE_K_OVER_E = 8 / 128  # ESTIMATE for an MoE without a catalog entry: Qwen3-style 8 of 128


def expert_coverage(experts: int, experts_per_token: int, batch: int) -> float:
    """Expected share of a MoE layer's routed experts touched by ``batch`` tokens: ``1 − (1 − k/E)^b``.

    Example: gpt-oss-20b (E = 32, k = 4) at b = 8: ``1 − 0.875^8 = 0.656``.

    Raises:
        ValueError: ``experts < 1``, ``experts_per_token`` outside 1..experts, or ``batch < 1``.
    """
    if experts < 1 or not (1 <= experts_per_token <= experts) or batch < 1:
        raise ValueError(f"need 1 <= k ({experts_per_token}) <= E ({experts}) and batch >= 1 (got {batch})")
    return 1.0 - (1.0 - experts_per_token / experts) ** batch


def _k_over_e(model: ModelSpec) -> float | None:
    if not model.active_params_b or model.active_params_b >= model.params_b:
        return None
    if model.experts and model.experts_per_token:
        return model.experts_per_token / model.experts
    return UNKNOWN_MOE_K_OVER_E


def moe_split_bytes(model: ModelSpec, bits_per_weight: float, expert_bits: float | None = None,
                    ) -> tuple[float, float, float]:
    """(dense bytes read every step, bytes of ALL routed experts, k/E) for one decode step, B.

    From total ``P`` and active ``A`` parameters and ``k/E``: routed experts hold
    ``R = (P − A) / (1 − k/E)`` parameters and every token reads ``A = D + R·k/E``, so the dense part
    is ``D = A − R·k/E``. A dense model returns ``(weights read per token, 0, 0)``.
    Example: gpt-oss-20b (P 20.91B, A 3.6B, 4 of 32): R = 17.31 / 0.875 = 19.78B, D = 3.6 − 2.47 = 1.13B.
    """
    w1 = roofline.weight_bytes_read_per_token(model, bits_per_weight)
    ke = _k_over_e(model)
    if ke is None or ke >= 1.0:
        return w1, 0.0, 0.0
    # (``bits_per_weight``: over the parameters a token reads; ``expert_bits``: the routed experts' own, when a build
    # stores them apart, advisor.perf.moe.expert_dense_bits)
    routed = (model.params_b - model.active_b) * 1e9 / (1.0 - ke) * (expert_bits or bits_per_weight) / 8
    dense = max(0.0, w1 - routed * ke)
    return dense, routed, ke


def weight_bytes_step(model: ModelSpec, bits_per_weight: float, batch: int) -> float:
    """Weight bytes one decode step reads for ``batch`` tokens, B (dense: the same for any batch)."""
    dense, routed, ke = moe_split_bytes(model, bits_per_weight)
    if not routed:
        return dense
    return dense + routed * (1.0 - (1.0 - ke) ** max(1, batch))


def expert_offload_share(model: ModelSpec, bits_per_weight: float, gpu_share: float) -> float:
    """The share of one token's weight bytes read from the GPU when a MoE that does not fit keeps its routed experts
    in system RAM (llama.cpp ``--n-cpu-moe N`` / ``-ot exps=CPU``) instead of whole layers.

    The GPU holds the same bytes as the layer split (``gpu_share`` of all weights), but the dense part every token
    reads (attention, shared experts, dense layers) goes there first, then as many experts as fit. With dense bytes
    ``D``, routed bytes ``R`` and ``k/E`` (:func:`moe_split_bytes`): experts on the GPU ``e = (s·(D+R) − D) / R``
    (clamped to 0–1), bytes from system RAM per token ``R·k/E·(1 − e)`` of ``D + R·k/E``.

    Returns:
        The equivalent GPU share of one token's bytes (for :func:`advisor.perf.predict`'s ``gpu_share``); the
        layer split's ``gpu_share`` for a dense model.

    >>> m = ModelSpec(id="x", params_b=117.0, active_params_b=5.1, n_layers=36, hidden_size=2880, n_heads=64,
    ...               n_kv_heads=8, head_dim=64, vocab_size=201088, max_context=131072, experts=128, experts_per_token=4)
    >>> round(expert_offload_share(m, 4.25, 0.36), 2)  # gpt-oss-120b, 36 % of its 62 GB on the GPU
    0.54

    (R = 111.9B / 0.969 = 115.5B = 61.4 GB, D ≈ 0.79 GB a token; e = (22.4 − 0.79) / 61.4 = 0.35; from system RAM
    1.92 × 0.65 = 1.24 of 2.71 GB a token: 0.54 on the GPU against 0.36 as a layer split.)
    """
    dense, routed, ke = moe_split_bytes(model, bits_per_weight)
    if not routed:
        return gpu_share
    e = min(1.0, max(0.0, (gpu_share * (dense + routed) - dense) / routed))
    per_token = dense + routed * ke
    return 1.0 - routed * ke * (1.0 - e) / per_token


def expert_layers_share(model: ModelSpec, bits_per_weight: float, cpu_layers: int) -> float:
    """The share of one token's weight bytes read from the GPU when the routed experts of ``cpu_layers`` of the
    model's layers sit in system RAM (llama.cpp ``--n-cpu-moe N``; ``cpu_layers`` ≥ the layer count for
    ``--cpu-moe`` / ``-ot exps=CPU``) and everything else is on the GPU.

    Experts on the GPU ``e = 1 − N / n_layers`` (clamped to 0–1); with dense bytes ``D``, routed bytes ``R`` and
    ``k/E`` (:func:`moe_split_bytes`), bytes from system RAM per token ``R·k/E·(1 − e)`` of ``D + R·k/E``.

    >>> m = ModelSpec(id="x", params_b=117.0, active_params_b=5.1, n_layers=36, hidden_size=2880, n_heads=64,
    ...               n_kv_heads=8, head_dim=64, vocab_size=201088, max_context=131072, experts=128, experts_per_token=4)
    >>> round(expert_layers_share(m, 4.25, 36), 2), round(expert_layers_share(m, 4.25, 24), 2)  # all; 24 of 36
    (0.29, 0.53)
    """
    dense, routed, ke = moe_split_bytes(model, bits_per_weight)
    if not routed or not model.n_layers:
        return 1.0
    e = min(1.0, max(0.0, 1.0 - cpu_layers / model.n_layers))
    return 1.0 - routed * ke * (1.0 - e) / (dense + routed * ke)


# llama.cpp's default micro-batch (-ub / --ubatch-size 512; Ollama's num_batch default 512) and the chunk vLLM V1
# schedules per step by default (--max-num-batched-tokens 2048 for online serving): the prompt tokens each pass over
# weights held in system RAM carries (llama.cpp tools/server README; vLLM engine arguments).
DEFAULT_UBATCH = {"llama": 512, "server": 2048}
# ESTIMATE: share of the PCIe link a host-to-device copy of pinned weights reaches (CUDA bandwidthTest on PCIe 4.0
# x16 reads ~25 of 31.5 GB/s).
HOST_COPY_EFFICIENCY = 0.8


def host_link_gbs(release_year: int | None) -> tuple[float, str]:
    """(GB/s per direction, words) of the PCIe link between a graphics card and its host, by the card's year:
    PCIe 5.0 x16 from 2025 (GeForce RTX 50, Radeon RX 9070 and AI PRO R9700), PCIe 4.0 x16 from 2020 (Ampere, RDNA2),
    PCIe 3.0 x16 before. ESTIMATE: the slot and the card's lanes (an RTX 4060 has x8) are not in the catalog, and a
    PCIe 5.0 card in a PCIe 4.0 board runs at 4.0."""
    year = release_year or 2020
    key = "pcie5" if year >= 2025 else "pcie4" if year >= 2020 else "pcie3"
    gbs = LINK_GBS_PER_LANE[key] * 16
    return gbs, f"PCIe {key[4]}.0 x16 ({gbs:.0f} GB/s; assumed for a card of its year)"


def offload_prefill_tps(gpu_prefill_tps: float, host_bytes: float, link_bytes_per_s: float, ubatch: int) -> float:
    """Prefill tok/s when part of the weights sits in system RAM and the GPU computes the prompt anyway.

    llama.cpp (and vLLM's ``--cpu-offload-gb``) copy the weights held in system RAM over PCIe to the GPU for every
    micro-batch of the prompt (llama.cpp offloads any matrix multiply of 32 tokens or more to the GPU), so each
    micro-batch of ``ubatch`` tokens pays the copy once: ``t = ubatch / gpu_prefill + host_bytes / link``, rate
    ``ubatch / t``. A larger ``-ub`` spreads the copy over more tokens.

    Args:
        gpu_prefill_tps: prefill rate with every weight on the GPU, tok/s.
        host_bytes: bytes of weights in system RAM, B.
        link_bytes_per_s: achieved host-to-device copy rate, B/s.
        ubatch: prompt tokens per micro-batch.

    Returns:
        Prefill tok/s; ``gpu_prefill_tps`` when nothing is in system RAM.

    >>> round(offload_prefill_tps(2000.0, 40e9, 25e9, 512))  # 512 / (0.256 s + 1.6 s)
    276
    """
    if host_bytes <= 0 or link_bytes_per_s <= 0 or gpu_prefill_tps <= 0:
        return gpu_prefill_tps
    return ubatch / (ubatch / gpu_prefill_tps + host_bytes / link_bytes_per_s)


def default_interconnect(hw_id: str, name: str, family: str | None) -> str | None:
    """The link an SXM/HGX board's GPUs share (NVLink of the family's generation), None for PCIe cards.

    ``nvidia-h100-sxm``, "H200 SXM", "B200 (HGX/DGX)" → NVLink; "H100 PCIe", an RTX card → None (PCIe default).
    """
    text = f"{hw_id} {name}".lower()
    if "pcie" in text or not re.search(r"sxm|hgx|dgx|\b(?:h200|b200|b100|gh200|gb200)\b|-(?:h200|b200|b100|gh200|gb200)", text):
        return None
    return _NVLINK_BY_FAMILY.get(family or "")


def interconnect_gbs(interconnect: str | None, pcie_lanes: int | None = None) -> tuple[float, str]:
    """Per-direction GB/s of the link between GPUs and how it was read (default PCIe 4.0 x16).

    ``interconnect``: ``pcie3``/``pcie4``/``pcie5``, ``nvlink`` (A100-class), ``nvlink-3090``,
    ``nvlink-h100``, ``infinity-fabric``; ``pcie_lanes``: lanes per GPU (x16 default).
    """
    key = (interconnect or "pcie4").lower().replace(" ", "").replace(".0", "").replace("gen", "")
    if key.startswith("pcie"):
        lanes = pcie_lanes or 16
        per = LINK_GBS_PER_LANE.get(key[:5], LINK_GBS_PER_LANE["pcie4"])
        return per * lanes, f"PCIe {key[4:5] or '4'}.0 x{lanes} ({per * lanes:.0f} GB/s per direction)"
    gbs = LINK_GBS.get(key, LINK_GBS["nvlink"] if "nvlink" in key else LINK_GBS_PER_LANE["pcie4"] * 16)
    return gbs, f"{interconnect} ({gbs:g} GB/s per direction)"


def tp_comm_s(model: ModelSpec, tokens: int, n_devices: int, link_gbs: float, *, nvlink: bool = False) -> float:
    """Seconds of tensor-parallel all-reduces for one forward pass over ``tokens`` tokens.

    Two all-reduces per layer of ``tokens × hidden × 2 B``; a ring all-reduce moves
    ``2 (N − 1) / N`` of the message over each link (Patarasuk & Yuan 2009), plus a fixed latency
    per all-reduce (ESTIMATE, :data:`ALLREDUCE_LATENCY_S`). 0 for one device or an unknown shape.
    Example: 80 layers, hidden 8192, 512 tokens, 2 GPUs on PCIe 4.0 x16 (31.5 GB/s × 0.7):
    ``160 × (15 µs + 8.39 MB / 22.05 GB/s) ≈ 63 ms``.
    """
    if n_devices <= 1 or not (model.n_layers and model.hidden_size) or link_gbs <= 0:
        return 0.0
    msg = tokens * model.hidden_size * ACT_BYTES * 2 * (n_devices - 1) / n_devices
    lat = ALLREDUCE_LATENCY_S["nvlink" if nvlink else "pcie"]
    return 2 * model.n_layers * (lat + msg / (link_gbs * roofline.GB * LINK_EFFICIENCY))


@dataclass(frozen=True)
class StepModel:
    """Decode step time against the number of sequences decoding together.

    Attributes:
        dense_bytes: weight bytes read every step (all of a dense model), B.
        routed_bytes: bytes of all routed experts of a MoE (0 for dense), B.
        expert_fraction: ``k / E`` (0 for dense).
        kv_bytes_per_seq: KV-cache bytes read per sequence per step (mean decode context), B.
        bw_bytes_per_s: achieved bandwidth of the device(s) holding the weights, B/s.
        t0_s: fixed per-step cost (kernel launches, sampling, synchronisation), s.
        flops_per_seq: ``2 × P_active`` FLOPs per sequence per step.
        flops_per_s: achieved compute, FLOP/s (0: unknown).
        host_share: share of the bytes read from system RAM (partial offload), 0–1.
        host_bw_bytes_per_s: achieved system-RAM bandwidth for that share, B/s.
        comm_s_per_step: tensor-parallel latency per step (all-reduce latencies), s.
        comm_s_per_seq: tensor-parallel transfer time per sequence per step, s.
        batched_slope: calibrated slope ``s``: measured ÷ modelled aggregate decode is ``b ** s`` for
            ``b > 1`` (0 = physics only; clamped to 0.35–2), :meth:`batched_factor`.
        batched_max_batch: largest batch the slope was fitted on (0: no cap); the factor is held there.
        b1_compute_share: a CPU in a codebook format: share of ``flops_per_s`` its batch-1 (matrix-vector)
            step reaches, 0–1 (0: no compute bound at batch 1, GPUs), :meth:`physics_s`.
        host_s_per_seq: the engine's host (CPU) work per sequence per step that the GPU waits for, s
            (vLLM's V0 engine, before 0.8: :data:`advisor.calibration.V0_HOST_KEY`; 0 elsewhere).
    """

    dense_bytes: float
    routed_bytes: float
    expert_fraction: float
    kv_bytes_per_seq: float
    bw_bytes_per_s: float
    t0_s: float
    flops_per_seq: float
    flops_per_s: float
    host_share: float = 0.0
    host_bw_bytes_per_s: float = 1.0
    comm_s_per_step: float = 0.0
    comm_s_per_seq: float = 0.0
    batched_slope: float = 0.0
    batched_max_batch: int = 0
    b1_compute_share: float = 0.0  # a CPU: share of flops_per_s a batch-1 step reaches (0: no compute bound)
    host_s_per_seq: float = 0.0

    def batched_factor(self, b: int) -> float:
        """Calibrated measured ÷ modelled aggregate decode at batch ``b`` (1 at ``b = 1``).

        Beyond the largest batch the calibration measured (``batched_max_batch``) the factor is held at
        its value there: the physics carries larger batches, the fit does not extrapolate.
        """
        if b <= 1 or not self.batched_slope:
            return 1.0
        b_fit = min(b, self.batched_max_batch) if self.batched_max_batch > 1 else b
        return min(2.0, max(0.35, b_fit ** self.batched_slope))

    def weight_bytes(self, b: int) -> float:
        """Weight bytes read in a step of ``b`` tokens (MoE: dense + routed × coverage), B."""
        if not self.routed_bytes:
            return self.dense_bytes
        return self.dense_bytes + self.routed_bytes * (1.0 - (1.0 - self.expert_fraction) ** max(1, b))

    def _read_s(self, nbytes: float) -> float:
        gpu = nbytes * (1.0 - self.host_share) / self.bw_bytes_per_s
        return gpu + (nbytes * self.host_share / self.host_bw_bytes_per_s if self.host_share else 0.0)

    def bandwidth_s(self, b: int) -> float:
        """Seconds to read the weights ``b`` tokens touch and ``b`` KV caches, plus the fixed cost."""
        return self._read_s(self.weight_bytes(b) + b * self.kv_bytes_per_seq) + self.t0_s

    def compute_s(self, b: int) -> float:
        """Seconds of matrix work for ``b`` tokens (0 when compute is unknown)."""
        return b * self.flops_per_seq / self.flops_per_s if self.flops_per_s else 0.0

    def comm_s(self, b: int) -> float:
        """Tensor-parallel all-reduce time of a step of ``b`` tokens, s."""
        return self.comm_s_per_step + b * self.comm_s_per_seq if b else 0.0

    def physics_s(self, b: int) -> float:
        """The uncalibrated step: ``max(bandwidth, compute) + communication``, s.

        At ``b = 1`` the bandwidth term alone on GPUs: the single-stream fit measured it that way (its
        efficiency already absorbs what little compute a matrix-vector step costs). A CPU's matrix-vector
        kernels can bind at batch 1 (codebook formats such as IQ3_S): there the step is at least
        ``compute_s(1) / b1_compute_share`` (:data:`advisor.perf.prediction.CPU_DECODE_COMPUTE_SHARE`).
        """
        t = self.bandwidth_s(b)
        return max(t, self.compute_s(b) if b > 1 else self.b1_compute_s()) + self.comm_s(b) + b * self.host_s_per_seq

    def b1_compute_s(self) -> float:
        """Seconds of arithmetic in a batch-1 step where it can bind (a CPU in a codebook format), else 0."""
        return self.compute_s(1) / self.b1_compute_share if self.b1_compute_share else 0.0

    def step_s(self, b: int) -> float:
        """One decode step for ``b`` sequences, s (calibrated batched factor for ``b > 1``).

        Never shorter than one sequence's step: a batch reads at least the same weights and computes more, so
        no stream of a batch decodes faster than a stream alone (the fitted factor ``b ** s`` with ``s > 0`` would
        otherwise lift each stream above it: vLLM on an H100 at 8 users, 134 tok/s each vs 114 alone).
        """
        one = self.physics_s(1) / self.batched_factor(1)
        return max(self.physics_s(b) / self.batched_factor(b), one) if b > 1 else one

    def aggregate_tps(self, b: int) -> float:
        """Tokens per second over all ``b`` sequences."""
        return b / self.step_s(b)

    def per_seq_tps(self, b: int) -> float:
        """Tokens per second each of ``b`` sequences sees."""
        return 1.0 / self.step_s(b)

    def mixed_s(self, b: int, chunk_tokens: int, prefill_tps: float) -> float:
        """One iteration carrying ``b`` decode tokens and a prompt chunk, s.

        The weights are read once; the chunk's compute (``chunk / pp``) adds to the decode tokens'.
        """
        work = chunk_tokens / prefill_tps + self.compute_s(b)
        return max(self.bandwidth_s(b) if b else 0.0, work)

    def knee(self) -> float:
        """Batch where the per-sequence cost (compute, KV reads, expert reads) equals the shared cost.

        ``shared / per_seq`` with the shared step cost ``S = dense/X + t0`` and, per sequence, the
        larger of compute and KV reads, plus for a MoE the experts one more token adds at batch 1
        (``routed × k/E / X``): MoE models reach it sooner.
        """
        shared = self._read_s(self.dense_bytes) + self.t0_s + self.comm_s_per_step
        per_seq = max(self.flops_per_seq / self.flops_per_s if self.flops_per_s else 0.0,
                      self._read_s(self.kv_bytes_per_seq + self.routed_bytes * self.expert_fraction))
        return shared / per_seq if per_seq else math.inf

    def ceiling_tps(self, b: int, bw_spec_bytes_per_s: float, flops_spec: float | None) -> float:
        """Roofline aggregate decode at ``b`` on spec figures (no efficiency, no fixed cost), tok/s."""
        t = (self.weight_bytes(b) + b * self.kv_bytes_per_seq) / bw_spec_bytes_per_s
        if flops_spec:
            t = max(t, b * self.flops_per_seq / flops_spec)
        return b / t
