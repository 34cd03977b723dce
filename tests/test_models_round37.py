"""Popular models people name that the catalog lacked (GLM-4.6, Magistral, DeepSeek V3.1/V3.2, Mistral Large 2,
Command A, DeepSeek-Coder-V2-Lite, Hunyuan-A13B, Granite 4.0 H Small, Jamba Mini, GLM-4.5V), each sized from its
config, and the names written with spaces or hyphens alike."""

import pytest

from advisor import service
from advisor.perf.moe import with_moe
from advisor.resolve import resolve_scenario
from knowledge import catalog


@pytest.mark.parametrize("msg, model_id", [
    ("How fast is GLM-4.6 at Q4_K_M on 4x RTX 3090?", "zai-org/GLM-4.6"),
    ("glm 4.6 on a mac studio m3 ultra 512gb, q3", "zai-org/GLM-4.6"),
    ("can my 4090 run magistral small q4_k_m?", "mistralai/Mistral-Small-3.1-24B-Instruct-2503"),
    ("Magistral-Small-2509 Q8_0 on an M4 Max 64GB", "mistralai/Mistral-Small-3.1-24B-Instruct-2503"),
    ("DeepSeek V3.1 q4 on 8x H100", "deepseek-ai/DeepSeek-V3"),
    ("deepseek-v3.2-exp on 2x EPYC 9654 with 768GB, Q4_K_M", "deepseek-ai/DeepSeek-V3"),
    ("mistral large 2 at q4_k_m on two RTX 6000 Ada", "mistralai/Mistral-Large-Instruct-2407"),
    ("mistral-large:123b on an M2 Ultra 192GB", "mistralai/Mistral-Large-Instruct-2407"),
    ("Command A q4 on 2x A100 80GB for 10 users", "CohereLabs/c4ai-command-a-03-2025"),
    ("deepseek coder v2 lite q4_k_m on a 3060 12gb", "deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct"),
    ("ollama deepseek-coder-v2:16b on my macbook air m2 16gb", "deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct"),
    ("Hunyuan-A13B Q4_K_M on an RTX 5090", "tencent/Hunyuan-A13B-Instruct"),
    ("granite 4.0 h small on a ryzen ai max+ 395 128gb", "ibm-granite/granite-4.0-h-small"),
    ("granite-4.0-h-small Q8_0 on a 4090", "ibm-granite/granite-4.0-h-small"),
    ("jamba 1.7 mini on an a100 80gb with vllm", "ai21labs/AI21-Jamba-Mini-1.7"),
    ("GLM-4.5V q4 on a mac studio 128gb", "zai-org/GLM-4.5-Air"),
    # the new name words do not steal other mentions
    ("I command a small team of 5; we run Llama 3.1 8B Q4_K_M on an RTX 4090", "meta-llama/Llama-3.1-8B"),
    ("qwen3 8b on an h100, 4 users", "Qwen/Qwen3-8B"),
    ("command-a on 2x A100 80GB", "CohereLabs/c4ai-command-a-03-2025"),
])
def test_named_models_resolve(store, msg, model_id):
    r = service.ask(store, msg)
    m = resolve_scenario(store, r.facts).model
    assert m is not None and m.id == model_id, (r.facts.model, r.reply[:200])


@pytest.mark.parametrize("name, shape", [
    ("GLM-4.6", (355.0, 32.0, 92, 160, 8)),
    ("Hunyuan A13B", (80.0, 13.0, 32, 64, 8)),
    ("granite-4.0-h-small", (32.0, 9.0, 40, 72, 10)),
    ("DeepSeek Coder V2 Lite", (15.7, 2.4, 27, 64, 6)),
    ("Jamba Mini 1.7", (52.0, 12.0, 32, 16, 2)),
])
def test_moe_shapes_come_from_the_configs(store, name, shape):
    m = with_moe(catalog.resolve_model(store, name).value)
    assert (m.params_b, m.active_params_b, m.n_layers, m.experts, m.experts_per_token) == shape


def test_dense_shapes_come_from_the_configs(store):
    large = catalog.resolve_model(store, "Mistral Large 2").value
    assert (large.params_b, large.n_layers, large.hidden_size, large.n_kv_heads, large.active_params_b) == (
        123.0, 88, 12288, 8, None)
    cmd = catalog.resolve_model(store, "Command A").value
    assert (cmd.params_b, cmd.n_layers, cmd.sliding_layers, cmd.sliding_window) == (111.0, 64, 48, 4096)


def test_hybrid_models_cache_only_their_attention_layers(store):
    # Granite 4.0 H Small: 4 of 40 layers keep a KV cache (the rest are Mamba-2): the cache of 32k tokens at f16 is
    # 4 layers x 2 (K, V) x 8 KV heads x 128 x 2 bytes x 32768 = 0.54 GB, a tenth of a 40-layer transformer's.
    m = catalog.resolve_model(store, "granite 4.0 h small").value
    assert m.kv_layers == 4


@pytest.mark.parametrize("text", ["DeepSeek V3.1", "deepseek v3.1", "DeepSeek-V3.1", "deepseek_v3.1"])
def test_names_with_spaces_or_hyphens_match_the_same_alias(store, text):
    assert catalog.resolve_model(store, text).value.id == "deepseek-ai/DeepSeek-V3"

