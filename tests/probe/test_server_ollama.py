"""Server probe against the Ollama stand-in (tests/probe/ollama_standin.py): known speeds, known answers."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from advisor import service
from advisor.cli import app
from advisor.errors import InputError
from advisor.probe.server import find_servers, measure_server
from knowledge.store import Store

from .ollama_standin import OllamaStandIn, StandInModel

RTX_4070 = {"os": "Linux", "gpu_name": "NVIDIA GeForce RTX 4070", "gpu_memory_gb": 12.0, "memory_total_gb": 64.0}
FAST = {"prompt_lengths": (64, 256), "gen_tokens": 16, "concurrency": 0}


@pytest.fixture(scope="module")
def store():
    return Store(":memory:")


def test_identifies_ollama_and_lists_models():
    models = [StandInModel(name="qwen2.5:7b"), StandInModel(name="llama3.1:8b")]
    with OllamaStandIn(models=models) as s:
        [info] = find_servers(s.url)
        assert (info.engine, info.api, info.label) == ("ollama", "ollama", "Ollama")
        assert info.models == ["qwen2.5:7b", "llama3.1:8b"]
        assert info.details["version"] == "0.12.6"
        assert info.details["tags"]["llama3.1:8b"]["quantization_level"] == "Q4_K_M"


def test_stream_measures_the_configured_speeds():
    with OllamaStandIn(prefill_tps=2000.0, decode_tps=200.0) as s:
        [info] = find_servers(s.url)
        r = measure_server(info, **FAST)
    assert [x.prompt_tokens for x in r.server_runs][0] < r.server_runs[1].prompt_tokens
    for run in r.server_runs:
        assert run.prompt_tokens_estimated is False and run.gen_tokens == 16
        # The stand-in sleeps for its work and the clock starts before the request is sent, so TTFT
        # cannot be shorter than the prefill sleep: prefill is never faster than configured. A busy
        # machine can only slow things down (and can delay reading the first token, so decode gets a margin).
        # (Lower bounds are loose for a loaded CI machine; a unit or count mistake is off by 10× or more.)
        assert 0.35 * 2000.0 <= run.prefill_tps <= 1.01 * 2000.0
        assert 0.35 * 200.0 <= run.decode_tps <= 1.25 * 200.0
        assert 4.0 <= run.itl_p50_ms <= 15.0 and run.itl_p95_ms >= run.itl_p50_ms
        assert 0.35 * 2000.0 <= run.server_prefill_tps <= 1.01 * 2000.0
        # The stream's TTFT holds the server's prompt evaluation, so its prefill rate is never the higher one.
        assert run.prefill_tps <= 1.01 * run.server_prefill_tps
        # eval_count (16) over eval_duration (15 sleeps after the first token)
        assert 0.35 * 200.0 * 16 / 15 <= run.server_decode_tps <= 1.01 * 200.0 * 16 / 15
    assert r.disagreements == []
    raw = r.server_reported[0]
    assert {"prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration", "load_duration"} <= set(raw)
    assert raw["prompt_eval_count"] == r.server_runs[0].prompt_tokens


def test_prompts_are_random_so_no_two_requests_repeat():
    with OllamaStandIn() as s:
        [info] = find_servers(s.url)
        measure_server(info, **FAST)
        prompts = [q["prompt"] for q in s.requests]
    assert len(prompts) == 3 and len(set(p[:40] for p in prompts)) == 3  # warm-up + two runs


def test_disagreement_between_stream_and_server_is_reported():
    with OllamaStandIn(report_factor=2.0) as s:  # reports twice the durations it took
        [info] = find_servers(s.url)
        r = measure_server(info, **FAST)
    assert any(d.startswith("decode at ") and "Ollama reports" in d for d in r.disagreements)
    assert any(d.startswith("prefill at ") for d in r.disagreements)
    assert r.server_runs[0].server_decode_tps == pytest.approx(r.server_runs[0].decode_tps / 2, rel=0.2)


@pytest.mark.parametrize(("parallel", "batches"), [(1, False), (4, True)])
def test_concurrent_pass_tells_batching(parallel, batches):
    with OllamaStandIn(parallel=parallel, decode_tps=150.0) as s:
        [info] = find_servers(s.url)
        r = measure_server(info, prompt_lengths=(32,), gen_tokens=24, concurrency=3, time_budget_s=30)
    assert r.batching is not None and r.batching.streams == 3
    assert r.batching.batches is batches
    if batches:
        assert r.batching.speedup > 2.0 and "batches requests" in r.batching.note
    else:
        assert r.batching.speedup < 1.3  # the probe's own "batches" threshold; a serial stand-in is ~1.0 (timing noise under load)
        assert "OLLAMA_NUM_PARALLEL" in r.batching.note or "slower than one stream alone" in r.batching.note


def test_partial_gpu_offload_is_diagnosed_with_the_prediction_for_this_gpu(store):
    with OllamaStandIn(models=[StandInModel(gpu_share=0.6)], decode_tps=30.0, prefill_tps=1500.0) as s:
        [r] = service.run_server_probe(store, url=s.url, machine=RTX_4070, **FAST)
    assert r.gpu_share == 0.6
    assert r.details["running"]["size_vram"] == int(0.6 * 6_000_000_000)
    v = r.verdict
    assert v is not None and v.bottleneck == "memory_fit"
    assert v.fixes[0].id == "fit_in_memory"
    assert v.prediction is not None and v.prediction.hardware["id"] == "nvidia-rtx-4070"
    assert v.prediction.model["params_b"] == pytest.approx(8.0, rel=0.05)
    assert v.prediction.quant == "Q4_K_M"
    from advisor.probe.server_report import scenario_of

    sc = scenario_of(r, hardware="nvidia-rtx-4070", system_ram_gb=64.0, gpu_count=1)
    assert (sc.context_window, sc.gpu_fraction, sc.system_ram_gb, sc.backend) == (4096, 0.6, 64.0, "ollama")
    assert sc.measured_ttft_s == max(r.server_runs, key=lambda x: x.prompt_tokens).ttft_s
    dec = sorted(x.decode_tps for x in r.server_runs)
    assert r.summary == (f"Ollama runs 40% of llama3.1:8b on the CPU: decode {sum(dec) / 2:.1f} tok/s, this machine "
                         f"gives about {v.prediction.decode_tps:.0f} with every layer on the GPU; set num_gpu (or lower "
                         "num_ctx so the KV cache fits).")
    assert any("40% of llama3.1:8b in system RAM" in n for n in r.notes)
    from advisor.probe.server_report import result_markdown

    md = result_markdown(r, v)
    assert f"Prediction for this machine ({v.prediction.hardware['name']}, Q4_K_M, " in md
    assert f"decode ≈ {v.prediction.decode_tps:,.1f} tok/s" in md and "On the GPU: 60% of the model" in md


def test_result_is_stored_with_engine_model_and_machine(store):
    with OllamaStandIn() as s:
        [r] = service.run_server_probe(store, url=s.url, machine=RTX_4070, **FAST)
    rows = store.query("SELECT backend, model, quant, params_b, prompt_tokens, prefill_tps, decode_tps, hw_id, "
                       "origin FROM results WHERE source_url = ? ORDER BY prompt_tokens", [f"import:{r.stored_id}"])
    assert [x["prompt_tokens"] for x in rows] == [x.prompt_tokens for x in r.server_runs]
    assert {(x["backend"], x["model"], x["quant"], x["origin"]) for x in rows} == {
        ("ollama", "llama3.1:8b", "Q4_K_M", "import")}
    assert rows[0]["decode_tps"] == r.server_runs[0].decode_tps and rows[0]["hw_id"] == "nvidia-rtx-4070"
    imp = store.query("SELECT format, engine, raw_text, machine_json FROM imports WHERE import_id = ?", [r.stored_id])
    assert imp[0]["format"] == "server-probe:ollama" and imp[0]["engine"] == "ollama"
    assert json.loads(imp[0]["machine_json"])["gpu_name"] == RTX_4070["gpu_name"]
    assert json.loads(imp[0]["raw_text"])["server_runs"][0]["prompt_tokens"] == r.server_runs[0].prompt_tokens


def test_server_model_picks_one_of_several():
    models = [StandInModel(name="qwen2.5:7b", parameter_size="7.6B"), StandInModel(name="llama3.1:8b")]
    with OllamaStandIn(models=models) as s:
        [info] = find_servers(s.url)
        r = measure_server(info, model="llama3.1", **FAST)
        assert r.model == "llama3.1:8b"
        assert {q["model"] for q in s.requests} == {"llama3.1:8b"}
        with pytest.raises(InputError, match="qwen2.5:7b, llama3.1:8b"):
            measure_server(info, model="mistral", **FAST)
        # Without --server-model the model already in memory (/api/ps) is measured.
        s.loaded.add("qwen2.5:7b")
        s.loaded.discard("llama3.1:8b")
        [info] = find_servers(s.url)
        assert measure_server(info, **FAST).model == "qwen2.5:7b"


def test_cli_json_contract(tmp_path):
    with OllamaStandIn() as s:
        r = CliRunner().invoke(app, ["probe", "--server", s.url, "--server-prompts", "64,256", "--server-gen-tokens",
                                     "16", "--server-streams", "0", "--store", str(tmp_path / "s.duckdb"), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads([x for x in r.stdout.splitlines() if x.startswith("{")][-1])
    assert {"engine", "url", "model", "server_runs", "server_reported", "gpu_share", "verdict"} <= set(out)
    assert (out["engine"], out["url"], out["model"], out["gpu_share"]) == ("ollama", s.url, "llama3.1:8b", 1.0)
    assert {"prompt_tokens", "ttft_s", "prefill_tps", "gen_tokens", "decode_tps", "itl_p50_ms",
            "itl_p95_ms"} <= set(out["server_runs"][0])
    assert "servers" not in out
    assert "[" in r.stderr and "%]" in r.stderr  # progress on stderr


def test_several_servers_one_object_each_first_at_top(monkeypatch, tmp_path):
    import advisor.probe.server as server_mod

    with OllamaStandIn() as a, OllamaStandIn(models=[StandInModel(name="gemma3:4b", parameter_size="4.3B")]) as b:
        ports = [int(a.url.rsplit(":", 1)[1]), int(b.url.rsplit(":", 1)[1])]
        monkeypatch.setattr(server_mod, "DEFAULT_PORTS", tuple((p, "stand-in") for p in ports))
        r = CliRunner().invoke(app, ["probe", "--server", "auto", "--server-prompts", "64", "--server-gen-tokens", "8",
                                     "--server-streams", "0", "--store", str(tmp_path / "s.duckdb"), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads([x for x in r.stdout.splitlines() if x.startswith("{")][-1])
    assert [x["url"] for x in out["servers"]] == [a.url, b.url]
    assert [x["model"] for x in out["servers"]] == ["llama3.1:8b", "gemma3:4b"]
    assert out["url"] == a.url and out["server_runs"] == out["servers"][0]["server_runs"]


def test_other_served_models_are_named_when_none_was_chosen():
    models = [StandInModel(name="llama3.1:8b"), StandInModel(name="qwen2.5:7b")]
    with OllamaStandIn(models=models) as s:
        [info] = find_servers(s.url)
        r = measure_server(info, **FAST)
    assert r.model == "llama3.1:8b"
    assert "Ollama also serves qwen2.5:7b; measure another with --server-model NAME" in " ".join(r.notes)
