"""A pasted run whose API cannot run on the machine of the conversation (CUDA on a Mac, ROCm on a GeForce) is not
compared with that machine: the advisor says why and asks which machine it was (it had called a CUDA
llama-bench "faster than usual" for a MacBook Air)."""

from __future__ import annotations

import pytest

from advisor import service
from advisor.models import Hardware, Scenario
from advisor.understand.engine import accel_conflict
from knowledge import catalog
from knowledge.store import Store

BENCH = ("| model | size | params | backend | ngl | test | t/s |\n| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
         "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | {b} | 99 | pp512 | 4210.33 ± 20.1 |\n"
         "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | {b} | 99 | tg128 | 127.4 ± 0.5 |\n")


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def _hw(store: Store, name: str) -> Hardware:
    return catalog.resolve_hardware(store, name).value


@pytest.mark.parametrize("backend, machine, clash", [
    ("CUDA", "MacBook Air M2", "NVIDIA"),
    ("llama.cpp-cuda", "Ryzen 9 7950X", "NVIDIA"),
    ("SYCL", "Core Ultra 7 155H", None),  # its Arc iGPU ran it
    ("ROCm", "Ryzen 7 7840HS", None),  # its Radeon 780M ran it
    ("ROCm", "RTX 4090", "AMD"),
    ("HIP", "RTX 3060", "AMD"),
    ("Metal,BLAS", "RTX 4090", "Apple"),
    ("SYCL", "RX 7900 XTX", "Intel"),
    ("CUDA", "DGX Spark", None),
    ("CUDA", "Jetson AGX Orin", None),
    ("ROCm", "Strix Halo", None),
    ("Vulkan", "MacBook Air M2", None),
    ("Vulkan", "RTX 4090", None),
    ("CPU", "MacBook Air M2", None),
    ("Metal", "Mac Studio M2 Ultra", None),
    ("ollama", "RTX 4090", None),
])
def test_accel_conflict(store: Store, backend: str, machine: str, clash: str | None) -> None:
    got = accel_conflict(backend, _hw(store, machine))
    if clash is None:
        assert got is None
    else:
        assert got is not None and clash in got[0]


def test_cuda_paste_on_a_mac_is_not_judged_for_the_mac(store: Store) -> None:
    sc = Scenario(hardware="MacBook Air M2", memory_gb=16)
    out = service.import_output(store, BENCH.format(b="CUDA"), scenario=sc, save=False)
    assert out.verdict is None  # no "faster than usual for this hardware"
    assert "CUDA runs only on NVIDIA GPUs" in out.message and "which machine was it" in out.message
    assert out.facts is not None and out.facts.hardware is None and out.facts.memory_gb is None
    assert out.facts.measured_decode_tps == pytest.approx(127.4)


def test_a_paste_that_fits_the_machine_is_still_judged(store: Store) -> None:
    out = service.import_output(store, BENCH.format(b="CUDA"), hardware="RTX 4090", save=False)
    assert out.verdict is not None
    assert "which machine was it" not in out.message
    out = service.import_output(store, BENCH.format(b="Metal"), scenario=Scenario(hardware="MacBook Pro M3 Max"),
                                save=False)
    assert out.verdict is not None and "which machine" not in out.message


def test_the_chat_session_forgets_the_machine_a_clashing_paste_did_not_run_on(store: Store) -> None:
    from ui.turns import paste_turn

    facts = {"hardware": "MacBook Air M2", "memory_gb": 16, "model": "llama 3.1 8b"}
    view, _ = paste_turn(store, BENCH.format(b="CUDA"), None, None, [], facts)
    assert view.facts["hardware"] is None and view.facts["memory_gb"] is None
    assert view.facts["measured_decode_tps"] == pytest.approx(127.4)
    assert "which machine was it" in view.history[-1]["content"]
    view, _ = paste_turn(store, BENCH.format(b="Metal"), None, None, [], facts)  # a Mac's run keeps the Mac
    assert view.facts["hardware"] == "MacBook Air M2" and view.verdict is not None
