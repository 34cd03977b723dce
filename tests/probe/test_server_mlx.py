"""Server probe against a real ``mlx_lm.server`` serving the tiny random-weight model of the suite.

The server is started on a free loopback port for this module and stopped after it.
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from typer.testing import CliRunner

from advisor.cli import app
from advisor.probe.server import find_servers

pytestmark = [pytest.mark.mlx, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def mlx_server(tiny_model_dir, tmp_path_factory):
    """``mlx_lm.server --model TINY`` on 127.0.0.1:PORT; yields its URL, then stops it."""
    port = _free_port()
    hf = tmp_path_factory.mktemp("hf-cache")  # an empty HF cache: /v1/models lists only the served path
    env = {**os.environ, "HF_HUB_CACHE": str(hf), "HF_HUB_OFFLINE": "1"}
    log = open(tmp_path_factory.mktemp("mlx-log") / "server.log", "w+")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "mlx_lm", "server", "--model", tiny_model_dir, "--host",
                             "127.0.0.1", "--port", str(port), "--log-level", "WARNING"],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=1) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            proc.kill()
            pytest.fail("mlx_lm.server did not start: " + log.read()[-2000:])
        time.sleep(0.2)
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
    log.close()


@pytest.fixture(scope="module")
def probe_json(mlx_server, tmp_path_factory):
    store = tmp_path_factory.mktemp("store") / "s.duckdb"
    t0 = time.monotonic()
    r = CliRunner().invoke(app, ["probe", "--server", mlx_server, "--server-prompts", "64,256",
                                 "--server-gen-tokens", "32", "--server-budget", "30", "--store", str(store),
                                 "--json"])
    elapsed = time.monotonic() - t0
    assert r.exit_code == 0, r.output
    line = [x for x in r.stdout.splitlines() if x.startswith("{")][-1]
    return json.loads(line), elapsed, store


def test_identifies_mlx_lm_server(mlx_server, tiny_model_dir):
    [info] = find_servers(mlx_server)
    assert info.engine == "mlx" and info.api == "openai"
    assert os.path.realpath(tiny_model_dir) in info.models


def test_two_sound_runs_at_different_prompt_lengths(probe_json):
    out, elapsed, _ = probe_json
    assert out["engine"] == "mlx" and out["engine_label"] == "mlx_lm.server"
    assert out["model"] == os.path.basename(out["models"][-1])
    runs = out["server_runs"]
    assert len(runs) == 2
    assert runs[0]["prompt_tokens"] < runs[1]["prompt_tokens"]
    for want, r in zip((64, 256), runs, strict=True):
        # The warm-up measured tokens per word; the server's own count lands near the asked length.
        assert 0.7 * want <= r["prompt_tokens"] <= 1.4 * want
        assert r["prompt_tokens_estimated"] is False
        assert r["gen_tokens"] == 32  # usage.completion_tokens
        for k in ("ttft_s", "prefill_tps", "decode_tps", "itl_p50_ms", "itl_p95_ms"):
            assert math.isfinite(r[k]) and r[k] > 0, k
        assert r["prefill_tps"] > r["decode_tps"]
        # Consistent with the counts and times: prefill rate × TTFT = tokens computed.
        computed = r["prompt_tokens"] - r["cached_tokens"]
        assert r["prefill_tps"] * r["ttft_s"] == pytest.approx(computed, rel=0.02)
        assert r["cached_tokens"] < 0.2 * r["prompt_tokens"]  # random prompts: the prompt cache barely helps
        # The inter-token gaps and the decode rate describe the same stream: the mean gap is 1000 / decode
        # (tokens may arrive in pairs, so the median can sit below the mean, but not far above it).
        mean_gap_ms = 1000 / r["decode_tps"]
        assert r["itl_p50_ms"] <= 3.0 * mean_gap_ms and mean_gap_ms <= 3.0 * r["itl_p95_ms"]
        assert r["itl_p95_ms"] >= r["itl_p50_ms"]
    assert out["server_reported"][1]["usage"]["prompt_tokens"] == runs[1]["prompt_tokens"]
    assert elapsed < 60


def test_verdict_and_storage(probe_json):
    from knowledge.store import Store

    out, _, store = probe_json
    v = out["verdict"]
    assert v is not None and v["bottleneck"] in ("prefill", "decode")
    # The verdict judges the stream's own numbers (the longest prompt's prefill, the median decode).
    longest = max(out["server_runs"], key=lambda r: r["prompt_tokens"])
    assert v["measured"]["prefill_tps"] == longest["prefill_tps"]
    decodes = sorted(r["decode_tps"] for r in out["server_runs"])
    assert v["measured"]["decode_tps"] == pytest.approx(sum(decodes) / 2, rel=1e-3)
    assert out["summary"].startswith("mlx_lm.server serves ")
    st = Store(str(store))
    rows = st.query("SELECT backend, model, prompt_tokens, decode_tps, batch, source_set FROM results "
                    "WHERE source_set = 'import:server-probe:mlx' ORDER BY batch, prompt_tokens")
    singles = [r for r in rows if r["batch"] == 1]
    assert [r["prompt_tokens"] for r in singles] == [x["prompt_tokens"] for x in out["server_runs"]]
    assert all(r["backend"] == "mlx" and r["model"] == out["model"] for r in rows)
    imp = st.query("SELECT format, machine_json FROM imports WHERE format = 'server-probe:mlx'")
    assert len(imp) == 1 and json.loads(imp[0]["machine_json"]).get("os")


def test_server_model_that_the_server_lacks_is_one_clear_line(mlx_server):
    r = CliRunner().invoke(app, ["probe", "--server", mlx_server, "--server-model", "no-such-model", "--json"])
    assert r.exit_code == 2
    err = json.loads(r.stdout.strip().splitlines()[-1])["error"]
    assert "no-such-model" in err and "\n" not in err
