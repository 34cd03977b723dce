"""The CLI contracts of DESIGN.md, through the real entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from advisor.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def _json(args: list[str]) -> dict:
    r = runner.invoke(app, args + ["--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output.strip().splitlines()[-1])


def test_predict_json_fields():
    d = _json(["predict", "--hardware", "M2 Max 38-core", "--model", "llama 3.1 8b", "--quant", "q4_k_m",
               "--prompt-tokens", "2000", "--gen-tokens", "300"])
    for k in ("prefill_tps", "decode_tps", "prefill_ceiling_tps", "decode_ceiling_tps", "ttft_s", "decode_s",
              "bits_per_weight", "memory", "hardware", "model", "calibration"):
        assert k in d
    assert d["hardware"]["id"] == "apple-m2-max-38gpu" and d["model"]["id"] == "meta-llama/Llama-3.1-8B"
    assert d["bits_per_weight"] == pytest.approx(4.8944)
    assert set(d["memory"]) >= {"required_gb", "usable_gb", "fits"}
    assert d["ttft_s"] == pytest.approx(2000 / d["prefill_tps"])
    assert d["decode_s"] == pytest.approx(300 / d["decode_tps"])
    assert d["decode_tps"] < d["decode_ceiling_tps"]


def test_predict_custom_hardware_by_numbers():
    d = _json(["predict", "--bandwidth-gbs", "900", "--tflops", "100", "--memory-gb", "48", "--model",
               "llama 3.1 8b", "--quant", "Q8_0", "--gen-tokens", "128", "--prompt-tokens", "1"])
    # Bytes per token: (8e9 params - 128256 x 4096 input-embedding rows) x 8.5 bits / 8 = 7.942 GB,
    # plus the KV cache at a mean context of 1 + 128/2 tokens (131072 B each) = 8.5 MB.
    expected = 900e9 / ((8e9 - 128256 * 4096) * 8.5 / 8 + 131072 * 65)
    assert d["decode_ceiling_tps"] == pytest.approx(expected, rel=1e-6)
    assert expected == pytest.approx(113.2, abs=0.1)
    assert d["memory"]["fits"] is True


def test_predict_concurrency_reports_aggregate_and_per_seq():
    d = _json(["predict", "--hardware", "RTX 4090", "--model", "llama 3.1 8b", "--concurrency", "8"])
    assert d["decode_tps"] == pytest.approx(d["decode_tps_per_seq"] * 8)
    single = _json(["predict", "--hardware", "RTX 4090", "--model", "llama 3.1 8b"])
    assert single["decode_tps"] < d["decode_tps"] < 8 * single["decode_tps"]


def test_predict_input_rows_in_order(tmp_path):
    f = tmp_path / "rows.csv"
    f.write_text("hardware,model,params_b,quant,backend,prompt_tokens,gen_tokens,depth,batch\n"
                 "RTX 4090,llama 3.1 8b,,Q4_K_M,,512,128,0,1\n"
                 "M2 Max 38-core,some-new-model,13,Q4_K_M,,512,128,0,1\n"
                 "Toaster 9000,llama 3.1 8b,,Q4_K_M,,512,128,0,1\n")
    r = runner.invoke(app, ["predict", "--input", str(f), "--json"])
    assert r.exit_code == 0
    lines = [json.loads(x) for x in r.output.strip().splitlines()]
    assert [x["row"] for x in lines] == [1, 2, 3]
    assert lines[0]["hardware"]["id"] == "nvidia-rtx-4090"
    assert lines[1]["model"]["generic"] is True and lines[1]["model"]["params_b"] == 13
    assert "error" in lines[2]


def test_predict_input_row_without_a_prompt_is_a_decode_only_run(tmp_path):
    # llama-bench "tg128" rows have prompt_tokens 0: predicted as decode from an empty cache, not an error.
    f = tmp_path / "rows.csv"
    f.write_text("hardware,model,quant,prompt_tokens,gen_tokens,depth,batch\n"
                 "RTX 4090,llama 3.1 8b,Q4_K_M,0,128,0,1\nRTX 4090,llama 3.1 8b,Q4_K_M,1,128,0,1\n")
    r = runner.invoke(app, ["predict", "--input", str(f), "--json"])
    a, b = (json.loads(x) for x in r.output.strip().splitlines())
    assert "error" not in a and a["decode_tps"] == pytest.approx(b["decode_tps"])
    assert 80 < a["decode_tps"] < 200  # 4.9 GB of weights at 1008 GB/s


def test_diagnose_input_file(tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"scenario": {"hardware": "RTX 3060", "memory_gb": 12, "model": "deepseek r1 14b",
                                          "params_b": 14.8, "measured_decode_tps": 4.8}}))
    d = _json(["diagnose", "--input", str(f)])
    assert d["bottleneck"] == "memory_fit"
    assert {"bottleneck", "status", "fixes", "prediction", "explanation"} <= set(d)
    assert all({"id", "title", "predicted_effect", "why"} <= set(x) for x in d["fixes"])


def test_ask_json_contract():
    d = _json(["ask", "I have a MacBook Air M2 with 16 GB. Can I run Llama 3.1 8B at 4-bit for chat? "
                      "My prompts are about 500 words."])
    assert {"reply", "verdict", "facts", "missing"} <= set(d)
    assert d["verdict"] is not None and d["verdict"]["prediction"]["memory"]["fits"] is True


@pytest.mark.parametrize("args", [
    ["predict", "--hardware", "Quantum Toaster 9000", "--model", "llama 3.1 8b"],
    ["predict", "--hardware", "Mac Studio", "--model", "llama 3.1 8b"],  # which chip?
    ["predict", "--hardware", "RTX 4090", "--model", "no-such-model-at-all"],
    ["predict", "--hardware", "RTX 4090", "--model", "llama 3.1 8b", "--memory-gb", "-3"],
    ["predict", "--hardware", "RTX 4090", "--model", "llama 3.1 8b", "--memory-gb", "999000000"],
])
def test_bad_input_is_a_clear_error_and_stores_nothing(args):
    store = os.environ["ADVISOR_STORE"]
    before = None
    r = runner.invoke(app, args + ["--json"])
    assert r.exit_code == 2
    msg = json.loads(r.output.strip().splitlines()[-1])["error"]
    assert msg and "Traceback" not in r.output
    if os.path.exists(store):
        from knowledge.store import Store

        before = Store(store).stats()["tables"]
        assert before["imports"] == 0 and before["probes"] == 0


def test_console_script_help_is_fast_and_clean():
    out = subprocess.run([sys.executable, "-m", "advisor", "--help"], capture_output=True, text=True, cwd=ROOT,
                         timeout=60)
    assert out.returncode == 0 and "predict" in out.stdout and "serve" in out.stdout


def test_json_output_has_no_infinity():
    r = runner.invoke(app, ["predict", "--bandwidth-gbs", "120", "--tflops", "8", "--model", "qwen3 30b a3b", "--json"])
    assert r.exit_code == 0 and "Infinity" not in r.output and "NaN" not in r.output
    assert json.loads(r.output)["memory"]["usable_gb"] is None


def test_jsonl_bad_line_does_not_stop_the_batch(tmp_path):
    f = tmp_path / "rows.jsonl"
    f.write_text('{"hardware": "RTX 4090", "model": "llama 3.1 8b"}\n{bad\n')
    r = runner.invoke(app, ["predict", "--input", str(f), "--json"])
    lines = [json.loads(x) for x in r.output.strip().splitlines()]
    assert r.exit_code == 0 and "decode_tps" in lines[0] and lines[1]["row"] == 2 and "error" in lines[1]
