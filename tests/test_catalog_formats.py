"""Weight formats people name, each with its bits per weight."""

from __future__ import annotations

import pytest

from advisor.errors import NotFoundError
from knowledge import catalog


@pytest.mark.parametrize(
    "text,name,bpw",
    [
        ("W4A16", "W4A16 g128", 4.125), ("w4a16 group size 64", "W4A16 g64", 4.25), ("W4A16-G32", "W4A16 g32", 4.5),
        ("W8A16", "W8A16", 8.0), ("W8A8", "W8A8 (INT8)", 8.0), ("W8A8-FP8", "FP8 (E4M3)", 8.0),
        ("NVFP4", "NVFP4", 4.5), ("MXFP4", "MXFP4", 4.25), ("MXFP8", "MXFP8", 8.25), ("nf4", "NF4 (bitsandbytes)", 4.5),
        ("IQ1_S", "IQ1_S", 1.56), ("IQ1_M", "IQ1_M", 1.75), ("IQ2_XXS", "IQ2_XXS", 2.0625), ("iq2_xs", "IQ2_XS", 2.31),
        ("IQ2_S", "IQ2_S", 2.5), ("IQ2_M", "IQ2_M", 2.7), ("IQ3_XXS", "IQ3_XXS", 3.0625), ("IQ3_XS", "IQ3_XS", 3.3),
        ("IQ3_S", "IQ3_S", 3.44), ("IQ3_M", "IQ3_M", 3.66), ("IQ4_NL", "IQ4_NL", 4.5), ("IQ4_XS", "IQ4_XS", 4.25),
        ("TQ1_0", "TQ1_0", 1.69), ("Q3_K_S", "Q3_K_S", 3.6429), ("Q3_K_L", "Q3_K_L", 4.2979), ("Q4_K", "Q4_K_M", 4.8944),
        ("Q5_K_S", "Q5_K_S", 5.5704), ("Q6_K", "Q6_K", 6.5625), ("Q4_1", "Q4_1", 5.0), ("GPTQ-Int8", "GPTQ 8-bit g128", 8.156),
        ("exl2 4.65bpw", "EXL2 4.65 bpw", 4.65), ("EXL3 3.0 bpw", "EXL3 3 bpw", 3.0), ("6.0bpw exl2", "EXL2 6 bpw", 6.0),
    ],
)
def test_format_bits_per_weight(store, text, name, bpw):
    q = catalog.resolve_quant(store, text).value
    assert q.name == name and q.bits_per_weight == pytest.approx(bpw)


def test_block_formats_follow_their_definition(store):
    # NVFP4: 4-bit values + one FP8 scale per 16; MXFP4: 4-bit values + one E8M0 scale per 32.
    assert catalog.resolve_quant(store, "NVFP4").value.bits_per_weight == 4 + 8 / 16
    assert catalog.resolve_quant(store, "MXFP4").value.bits_per_weight == 4 + 8 / 32
    assert catalog.resolve_quant(store, "W4A16 g128").value.bits_per_weight == 4 + 16 / 128


@pytest.mark.parametrize("text", ["exl2", "foobar-quant", "Q9_Z"])
def test_unknown_formats_ask_with_candidates(store, text):
    with pytest.raises(NotFoundError) as e:
        catalog.resolve_quant(store, text)
    assert e.value.candidates


def test_every_format_has_a_source(store):
    for q in catalog.all_quants(store).values():
        assert q.source_url and q.bits_per_weight > 0
