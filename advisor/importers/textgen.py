"""text-generation-webui (oobabooga): one line per reply.

``Output generated in 15.34 seconds (33.24 tokens/s, 510 tokens, context 3200, seed 925476152)``.
The rate is generated tokens ÷ the whole call, prompt processing included, so it is kept as the
tool labels it (``decode_tps``) with ``decode_includes_prompt`` set: a lower bound on the decode
rate. ``context`` is the prompt length (``prompt_tokens``); there is no prefill rate. Older builds
print no ``seed``, some no ``context``, the oldest ``it/s`` for the rate.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from advisor.importers._registry import Example, Importer, signature
from advisor.importers._util import (
    NUM,
    Outcome,
    derive_rate,
    guess_decimal_comma,
    is_rate,
    parse_number,
    to_int,
)

__all__ = ["IMPORTERS", "parse_text"]

_LINE = re.compile(
    rf"\bOutput generated in\s*(?P<secs>{NUM})\s*seconds?\s*\(\s*(?P<tps>{NUM})\s*(?:tokens?/s(?:ec)?|it/s|t/s)"
    rf"(?:\s*,\s*(?P<n>{NUM})\s*tokens?)?(?:\s*,\s*context\s*(?P<ctx>{NUM}))?(?:\s*,\s*seed\s*(?P<seed>-?\d+))?\s*\)",
    re.I,
)
_START = re.compile(r"\bOutput generated in\b", re.I)
_NOTE = (
    "text-generation-webui: tokens/s is generated tokens over the whole call, prompt processing "
    "included; a lower bound on the decode rate"
)


def parse_text(lines: Sequence[str]) -> Outcome:
    """One measurement per ``Output generated in ...`` line."""
    out = Outcome("textgen-webui")
    for i, line in enumerate(lines):
        m = _LINE.search(line)
        if not m:
            if _START.search(line):
                out.warnings.append(
                    f"line {i + 1}: text-generation-webui line not readable (cut or garbled); skipped"
                )
            continue
        comma = guess_decimal_comma([m.group("secs"), m.group("tps")])
        tps, secs = parse_number(m.group("tps"), comma), parse_number(m.group("secs"), comma)
        n_gen = to_int(parse_number(m.group("n"))) if m.group("n") else None
        if not is_rate(tps):
            tps = derive_rate(n_gen, secs)
        fields = {
            "decode_tps": tps,
            "gen_tokens": n_gen,
            "prompt_tokens": to_int(parse_number(m.group("ctx"))) if m.group("ctx") else None,
            "decode_includes_prompt": True,
            "notes": [_NOTE],
        }
        if out.add(i, fields, f"line {i + 1}"):
            out.consumed.add(i)
    return out


IMPORTERS = (
    Importer(
        name="textgen-webui",
        engine="text-generation-webui",
        describe="text-generation-webui: Output generated in … (… tokens/s, … tokens, context …); rate includes prompt time",
        signature=signature(r"\bOutput generated in\s*[\d.,]+\s*seconds?\s*\(", re.I),
        parse_text=parse_text,
        order=60,
        examples=(
            Example(
                "Output generated in 15.34 seconds (33.24 tokens/s, 510 tokens, context 3200, seed 925476152)",
                (
                    {
                        "decode_tps": 33.24,
                        "prefill_tps": None,
                        "gen_tokens": 510,
                        "prompt_tokens": 3200,
                        "decode_includes_prompt": True,
                        "engine": "text-generation-webui",
                    },
                ),
            ),
            Example(
                "Output generated in 4.42 seconds (5.88 tokens/s, 26 tokens, context 36)",
                ({"decode_tps": 5.88, "gen_tokens": 26, "prompt_tokens": 36},),
                "no seed",
            ),
            Example(
                "Output generated in 2.10 seconds (47.62 tokens/s, 100 tokens)\n"
                "Output generated in 9.80 seconds (51.02 tokens/s, 500 tok",
                ({"decode_tps": 47.62, "gen_tokens": 100},),
                "a line cut short is skipped, the whole one kept",
            ),
            Example(
                "12:01:33-417237 INFO     Output generated in 2.10 seconds (47.62 tokens/s, 100 tokens)",
                ({"decode_tps": 47.62, "gen_tokens": 100, "prompt_tokens": None},),
                "log prefix, no context",
            ),
        ),
    ),
)
