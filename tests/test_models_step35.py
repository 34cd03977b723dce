"""Step-3.5-Flash (StepFun's 196.81B / 11B-active MoE, 288 experts top-8 plus a shared one, 3:1 sliding-window
attention) is in the catalog: its config gives the KV cache, the expert coverage of a batch and the MoE prefill."""

import pytest

from advisor import service
from advisor.perf.moe import with_moe
from advisor.perf.step import expert_coverage
from advisor.resolve import resolve_scenario
from knowledge import catalog


@pytest.mark.parametrize("msg", [
    "How fast is Step-3.5-Flash at Q4_K_M on an M3 Ultra 256GB?",
    "step 3.5 flash q3 on a mac studio m3 ultra 512gb",
    "stepfun step3.5 flash on 4x H100 with vllm, 10 users",
])
def test_step35_is_named(store, msg):
    r = service.ask(store, msg)
    m = resolve_scenario(store, r.facts).model
    assert m is not None and m.id == "stepfun-ai/Step-3.5-Flash", (r.facts.model, r.reply[:200])


def test_step35_shape_comes_from_its_config(store):
    m = with_moe(catalog.resolve_model(store, "Step 3.5 Flash").value)
    assert (m.params_b, m.active_params_b, m.n_layers, m.experts, m.experts_per_token) == (196.81, 11.0, 45, 288, 8)
    assert (m.n_kv_heads, m.head_dim, m.sliding_layers, m.sliding_window) == (8, 128, 33, 512)
    # 12 of 45 layers cache the whole context: at 32k tokens, f16, 12 x 2 x 8 x 128 x 2 B x 32768 = 1.61 GB
    # (the 33 sliding layers keep 512 tokens each: 33 x 2 x 8 x 128 x 2 x 512 = 0.035 GB)
    assert m.kv_layers == 12


def test_step35_batch_touches_experts_by_coverage():
    # 8 of 288 per token: 8 tokens touch 1 - (1 - 8/288)^8 = 20.2 % of each MoE layer's experts
    assert expert_coverage(288, 8, 8) == pytest.approx(0.2015, abs=1e-3)


def test_a_step_of_a_guide_is_not_the_model(store):
    r = service.ask(store, "I followed step 3.5 of the guide and now run llama 3.1 8b q4_k_m on an RTX 4090")
    assert resolve_scenario(store, r.facts).model.id == "meta-llama/Llama-3.1-8B"


def test_a_moe_that_does_not_fit_is_swapped_for_one_as_quick(store):
    # Step-3.5-Flash at Q4_K_M (~120 GB) does not fit a 128 GB Mac's default GPU share (96 GB); the model offered
    # instead reads no more than 1.5 x its 11B active parameters per token (not a dense 123B at a tenth of the speed)
    r = service.ask(store, "Step-3.5-Flash Q4_K_M on my M4 Max 128GB with llama.cpp, how fast?")
    fx = [f for f in r.verdict.fixes if f.id == "smaller_model"]
    assert fx and "Mistral Large" not in fx[0].title, fx[0].title
    name = fx[0].title.split(": ", 1)[1].split(" or ")[0].rsplit(" at ", 1)[0]
    m = with_moe(catalog.resolve_model(store, name).value)
    assert m.active_b <= 1.5 * 11.0, (name, m.active_b)
