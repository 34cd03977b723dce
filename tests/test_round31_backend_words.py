"""An API said not used ("without vulkan", "(no Vulkan)", "vulkan off") names no API, and ipex-llm (Intel's
llama.cpp / Ollama build on SYCL) is the SYCL backend of the Intel GPU."""

from __future__ import annotations

import pytest

from advisor.intake._extract import extract
from advisor.understand.engine import classify_engine
from knowledge.store import Store


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


@pytest.mark.parametrize("text, accel", [
    ("ollama without vulkan on my 780m, qwen2.5 7b", "other"),
    ("ollama (no vulkan) on radeon 780m", "other"),
    ("OLLAMA_VULKAN=0 ollama on 780m", "other"),
    ("ollama with vulkan off on my 780m", "other"),
    ("ollama, vulkan disabled, 780m", "other"),
    ("ollama not vulkan, 780m", "other"),
    ("w/o vulkan, ollama on a 780m", "other"),
    ("llama.cpp non-cuda build on RTX 3060", "other"),
    ("ollama vulkan on my 780m", "vulkan"),
    ("OLLAMA_VULKAN=1 ollama on the 890m", "vulkan"),
    ("llama.cpp with CUDA on RTX 3060", "cuda"),
    ("ipex-llm ollama on my arc a770, llama 3.1 8b", "sycl"),
    ("ollama ipex llm on an Arc B580", "sycl"),
    ("llama.cpp ipex_llm on arc b580", "sycl"),
    ("ollama (IPEX-LLM) on the Arc 140V", "sycl"),
])
def test_api_said_or_said_not_used(store: Store, text: str, accel: str) -> None:
    ext = extract(text, store)
    assert ext.backend, text
    assert classify_engine(ext.backend)[1] == accel, (text, ext.backend)
