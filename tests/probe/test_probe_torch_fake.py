"""The torch-cuda backend's code, run against a stand-in ``torch`` module (NumPy underneath).

No CUDA device is needed: the stand-in records ``torch.cuda.synchronize`` calls, so the test checks
that every timed call waits for the device, and that the rates are computed from real work.
"""

from __future__ import annotations

import contextlib
import sys
import types

import numpy as np
import pytest

from advisor.errors import BackendUnavailable


class _Tensor:
    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    def sum(self) -> _Tensor:
        return _Tensor(np.asarray(self.a.sum()))

    def numel(self) -> int:
        return self.a.size

    def element_size(self) -> int:
        return self.a.itemsize


def _fake_torch(cuda: bool = True) -> types.ModuleType:
    t = types.ModuleType("torch")
    t.__version__ = "9.9.9"
    t.float16, t.float32, t.bfloat16 = np.float16, np.float32, np.float32
    t.version = types.SimpleNamespace(cuda="12.4")
    t.syncs = 0

    def sync(_device=None) -> None:
        t.syncs += 1

    t.cuda = types.SimpleNamespace(
        is_available=lambda: cuda, synchronize=sync, get_device_name=lambda _d=None: "Fake H200",
        mem_get_info=lambda _d=None: (int(40e9), int(80e9)), empty_cache=lambda: None,
    )
    t.device = lambda name: types.SimpleNamespace(type=name.split(":")[0])
    t.ones = lambda shape, dtype, device: _Tensor(np.ones(shape, dtype=dtype))
    t.full = lambda shape, value, dtype, device: _Tensor(np.full(shape, value, dtype=dtype))
    t.no_grad = contextlib.nullcontext
    linear = lambda x, w: _Tensor(x.a @ w.a.T)  # noqa: E731
    t.nn = types.SimpleNamespace(functional=types.SimpleNamespace(linear=linear))
    return t


@pytest.fixture
def fake_torch(monkeypatch):
    t = _fake_torch()
    monkeypatch.setitem(sys.modules, "torch", t)
    return t


def test_torch_backend_against_stand_in(fake_torch):
    from advisor.probe import run_kernel_probe
    from advisor.probe._torch import TorchCudaBackend

    be = TorchCudaBackend()
    assert be.is_gpu and be.available_bytes() == 40e9
    assert be.device_name() == "Fake H200 (PyTorch CUDA)"
    assert be.engine_version() == "torch 9.9.9 cuda 12.4"
    r = run_kernel_probe(backend=be, time_budget_s=3.0, max_buffer_gb=0.05)
    assert r.backend == "torch-cuda" and r.matmul_dtype == "float16"
    assert r.bandwidth_gbs > 0 and r.matmul_tflops > 0 and set(r.matvec_gbs) == {"fp16"}
    assert fake_torch.syncs >= 20  # each timed call synchronised


def test_torch_without_cuda_is_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(cuda=False))
    from advisor.probe import select_backend

    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        select_backend("torch-cuda")
