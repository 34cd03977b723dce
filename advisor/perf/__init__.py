"""Performance model: roofline × calibration, and the one step model (batch, MoE, KV, offload, multi-GPU).

* :mod:`advisor.perf.step` — :class:`StepModel`: one decode step for ``b`` sequences (MoE expert
  coverage, KV reads, compute, tensor-parallel all-reduces); used by predict, chat, diagnose and compare.
* :mod:`advisor.perf.prediction` — :func:`predict` (keyword) and :func:`predict_situation`
  (a :class:`~advisor.understand.situation.Situation`), the calibration fit on the store.
* :mod:`advisor.perf.moe` — MoE routing figures of catalog models.

The roofline arithmetic lives in :mod:`advisor.roofline`, the efficiency fit in :mod:`advisor.calibration`.
"""

from advisor.perf.moe import with_moe
from advisor.perf.prediction import (
    build_cal_rows,
    calibration_model,
    default_backend,
    engine_accel,
    predict,
    predict_situation,
    predict_step,
    resolve_compute,
)
from advisor.perf.step import StepModel, expert_coverage, tp_comm_s, weight_bytes_step

__all__ = [
    "StepModel",
    "build_cal_rows",
    "calibration_model",
    "default_backend",
    "engine_accel",
    "expert_coverage",
    "predict",
    "predict_situation",
    "predict_step",
    "resolve_compute",
    "tp_comm_s",
    "weight_bytes_step",
    "with_moe",
]
