"""Model probe through the real mlx-lm path, on a tiny model saved to disk by the test suite."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from advisor.errors import InputError, ProbeError
from advisor.probe import probe_model, resolve_model_path, run_model_probe, run_probe

pytestmark = pytest.mark.mlx


@pytest.fixture(scope="module")
def runs(tiny_model_dir):
    calls: list[tuple[float, str]] = []
    result = run_model_probe(tiny_model_dir, prompt_lengths=(64, 256), gen_tokens=32,
                             progress=lambda f, d: calls.append((f, d)))
    return result, calls


def test_tiny_model_dir_is_a_real_mlx_lm_directory(tiny_model_dir):
    names = {p.name for p in Path(tiny_model_dir).iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
            "special_tokens_map.json"} <= names


def test_model_probe_runs(runs):
    result, _ = runs
    assert [r.prompt_tokens for r in result] == [64, 256]
    for r in result:
        assert r.gen_tokens == 32
        for v in (r.prefill_tps, r.decode_tps, r.ttft_s, r.peak_memory_gb):
            assert v is not None and math.isfinite(v) and v > 0
        assert r.prefill_tps > r.decode_tps
        # TTFT (our clock) and prefill rate (mlx-lm's) describe the same interval.
        assert 0.3 < r.ttft_s / (r.prompt_tokens / r.prefill_tps) < 3.0
        assert r.peak_memory_gb < 1.0


def test_model_probe_progress(runs):
    _, calls = runs
    fracs = [f for f, _ in calls]
    assert fracs == sorted(fracs) and fracs[-1] == 1.0 and fracs[0] == 0.0


def test_model_probe_restores_offline_env(tiny_model_dir, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    run_model_probe(tiny_model_dir, prompt_lengths=(16,), gen_tokens=4)
    assert "HF_HUB_OFFLINE" not in os.environ


def test_budget_skips_long_prompts_but_runs_the_shortest(tiny_model_dir):
    out = probe_model(tiny_model_dir, prompt_lengths=(512, 32), gen_tokens=8, time_budget_s=1e-3)
    assert [r.prompt_tokens for r in out.runs] == [32]
    assert out.skipped == [512]
    assert any("skipped" in n for n in out.notes)
    assert out.info["model_type"] == "llama" and out.info["load_s"] >= 0
    assert out.info["weights_gb"] > 0


def test_trials(tiny_model_dir):
    result = run_model_probe(tiny_model_dir, prompt_lengths=(32,), gen_tokens=4, trials=2)
    assert len(result) == 2 and all(r.prompt_tokens == 32 and r.gen_tokens == 4 for r in result)


def test_missing_model_is_a_probe_error(tmp_path):
    with pytest.raises(ProbeError, match="never downloads"):
        run_model_probe(str(tmp_path / "nope"))
    with pytest.raises(ProbeError, match="not in the local Hugging Face cache"):
        resolve_model_path("nobody-xyz/definitely-not-a-cached-model")
    f = tmp_path / "file.bin"
    f.write_bytes(b"x")
    with pytest.raises(ProbeError, match="is a file"):
        resolve_model_path(str(f))


def test_directory_without_model_is_a_probe_error(tmp_path):
    with pytest.raises(ProbeError, match="could not load"):
        run_model_probe(str(tmp_path), prompt_lengths=(8,), gen_tokens=2)


@pytest.mark.parametrize("kwargs", [
    {"prompt_lengths": ()}, {"prompt_lengths": (0,)}, {"gen_tokens": 1}, {"trials": 0}, {"time_budget_s": -1},
])
def test_bad_arguments(tiny_model_dir, kwargs):
    with pytest.raises(InputError):
        run_model_probe(tiny_model_dir, **kwargs)


def test_run_probe_with_model(tiny_model_dir):
    fracs: list[float] = []
    r = run_probe(model_path=tiny_model_dir, backend="numpy", time_budget_s=4.0, max_buffer_gb=0.2,
                  prompt_lengths=(64,), gen_tokens=16, progress=lambda f, d: fracs.append(f))
    assert [m.prompt_tokens for m in r.model_runs] == [64]
    assert any("llama" in n for n in r.notes)
    assert fracs == sorted(fracs) and fracs[-1] == 1.0
    with pytest.raises(InputError):
        run_probe(model_path=tiny_model_dir, kernels_only=True)


def test_run_probe_kernels_only():
    r = run_probe(kernels_only=True, backend="numpy", time_budget_s=3.0, max_buffer_gb=0.2)
    assert r.model_runs == [] and r.bandwidth_gbs > 0


def test_repo_id_resolves_from_the_local_hf_cache_only(tiny_model_dir, tmp_path, monkeypatch):
    import shutil

    import huggingface_hub.constants as hf_constants

    repo = tmp_path / "hub" / "models--tester--tiny"
    shutil.copytree(tiny_model_dir, repo / "snapshots" / "abc123")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert resolve_model_path("tester/tiny") == repo / "snapshots" / "abc123"
    result = run_model_probe("tester/tiny", prompt_lengths=(16,), gen_tokens=4)
    assert result[0].prompt_tokens == 16 and result[0].gen_tokens == 4
    with pytest.raises(ProbeError, match="not in the local Hugging Face cache"):
        resolve_model_path("tester/other")
