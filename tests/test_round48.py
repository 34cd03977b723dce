"""Round 48: what a new user's expert trial and a breaker found (prefix caching on by default in servers,
ECC memory on data-centre GDDR cards, ...)."""

import pytest

from advisor import service
from advisor.models import Hardware
from advisor.roofline import ECC_SHARE, default_usable_fraction
from knowledge.store import Store


def _ask(tmp_path, msg, facts=None):
    return service.ask(Store(str(tmp_path / "s.duckdb")), msg, facts)


def _hw(hid, mem, kind="datacenter_gpu"):
    return Hardware(id=hid, name=hid, kind=kind, family="F", bandwidth_gbs=300, memory_gb=mem)


@pytest.mark.parametrize("hid, mem, shown", [("nvidia-l4", 24, "22.5"), ("nvidia-tesla-t4", 16, "15.0"),
                                             ("nvidia-l40s", 48, "45.0"), ("nvidia-a10g", 24, "22.5")])
def test_ecc_on_gddr_data_centre_cards_holds_a_sixteenth(hid, mem, shown):
    frac, why = default_usable_fraction(_hw(hid, mem), mem)
    assert frac == pytest.approx(1 - ECC_SHARE - 0.5 / mem)
    assert "ECC" in why and f"nvidia-smi shows {shown} GiB" in why


@pytest.mark.parametrize("hid, kind", [("nvidia-a100-80gb-sxm", "datacenter_gpu"), ("nvidia-rtx-a6000", "datacenter_gpu"),
                                       ("nvidia-rtx-4090", "discrete_gpu")])
def test_hbm_workstation_and_consumer_cards_keep_their_full_size(hid, kind):
    frac, why = default_usable_fraction(_hw(hid, 48, kind), 48)
    assert frac == pytest.approx(1 - 0.5 / 48) and "ECC" not in why


def test_an_l4_answer_counts_the_ecc_reserve(tmp_path):
    r = _ask(tmp_path, "Llama 3.1 8B in BF16 with vLLM on one L4 for one user, 2000-token prompts")
    assert "ECC" in r.reply and "22.5 GiB" in r.reply


@pytest.mark.parametrize("engine", ["vLLM", "SGLang"])
def test_a_server_with_prefix_caching_on_by_default_is_told_to_make_it_hit(tmp_path, engine):
    r = _ask(tmp_path, f"We serve Llama 3.1 8B with {engine} on one L40S for 10 users; every request starts "
                       "with the same 6000-token system prompt and the first token takes 3 seconds")
    assert f"Make the prefix cache actually hit ({engine} caches repeated prefixes by default)" in r.reply
    assert "--enable-prefix-caching" not in r.reply


def test_llama_server_is_still_told_to_turn_prompt_caching_on(tmp_path):
    r = _ask(tmp_path, "llama-server on a 4090 with Llama 3.1 8B Q4_K_M for 10 users; every request starts with "
                       "the same 6000-token system prompt and the first token takes 3 seconds")
    assert "of the repeated prompt prefix (prompt caching)" in r.reply and "by default" not in r.reply
