"""exllamav2: ``test_inference.py -ps`` (prompt speed), ``-s`` (generation speed) and the chat
example's summary.

* ``** Length   512 tokens:   359.8 t/s`` → ``prefill_tps``, ``prompt_tokens`` 512, ``gen_tokens`` 0;
* ``** Position   128 + 128 tokens:   31.2 t/s`` → ``decode_tps`` over 128 tokens generated from
  position 128 (``depth`` 128, ``prompt_tokens`` 0);
* ``(Context: 1200 tokens, response: 300 tokens, 25.10 tokens/second)`` → ``decode_tps`` of the reply,
  ``prompt_tokens`` = the context;
* tabbyAPI's ``Metrics (ID: …): 206 tokens generated in 6.3 seconds (…, Process: 512 cached tokens and
  1024 new tokens at 1500.12 T/s, Generate: 40.23 T/s, Context: 1536 tokens)`` → prefill and decode,
  ``prompt_tokens`` = the new tokens, ``depth`` = the cached ones.
The model comes from ``-- Model: <folder>`` (its quant from ``4.0bpw`` in the name).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from advisor.importers._registry import Example, Importer, signature
from advisor.importers._util import NUM, Outcome, parse_number, to_int

__all__ = ["IMPORTERS", "parse_text"]

_LENGTH = re.compile(rf"^\s*\*\*\s*Length\s+(?P<n>\d+)\s*tokens?\s*:\s*(?P<tps>{NUM})\s*t/s\s*$", re.I)
_POSITION = re.compile(
    rf"^\s*\*\*\s*Position\s+(?P<pos>\d+)\s*\+\s*(?P<n>\d+)\s*tokens?\s*:\s*(?P<tps>{NUM})\s*t/s\s*$", re.I
)
_CHAT = re.compile(
    rf"\(\s*Context\s*:\s*(?P<ctx>\d+)\s*tokens?\s*,\s*response\s*:\s*(?P<n>\d+)\s*tokens?\s*,\s*"
    rf"(?P<tps>{NUM})\s*tokens?\s*/\s*s(?:ec(?:ond)?)?\s*\)",
    re.I,
)
# tabbyAPI (the exllamav2 server) logs one line per request.
_TABBY = re.compile(
    rf"\bMetrics(?:\s*\(ID:\s*[^)]{{0,80}}\))?\s*:\s*(?P<gen>\d+)\s*tokens generated in\s*(?P<secs>{NUM})\s*seconds?"
    rf"\s*\((?:\s*Queue:\s*{NUM}\s*s\s*,)?\s*Process:\s*(?P<cached>\d+)\s*cached tokens and\s*(?P<new>\d+)\s*new tokens"
    rf"\s*at\s*(?P<pp>{NUM})\s*T/s\s*,\s*Generate:\s*(?P<tg>{NUM})\s*T/s(?:\s*,\s*Context:\s*(?P<ctx>\d+)\s*tokens?)?",
    re.I,
)
_MODEL = re.compile(r"^\s*--\s*Model\s*:\s*(?P<path>\S.*?)\s*$")
_BPW = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*bpw", re.I)
_CHATTER = re.compile(
    r"^\s*--\s*(?:Options|Loading|Loaded|Warmup|Measuring|Prompt|Response|Generating|Tokenizer)\b.*$", re.I
)


def _model(path: str) -> tuple[str, str | None]:
    name = PurePosixPath(path.replace("\\", "/").rstrip("/")).name or path
    bpw = _BPW.search(name)
    return name, f"EXL2 {bpw.group(1)} bpw" if bpw else None


def parse_text(lines: Sequence[str]) -> Outcome:
    """Read ``** Length``, ``** Position`` and ``(Context: …, response: …, … tokens/second)`` lines."""
    out = Outcome("exllamav2")
    model: str | None = None
    quant: str | None = None
    for i, line in enumerate(lines):
        if m := _MODEL.match(line):
            model, quant = _model(m.group("path"))
            out.consumed.add(i)
            continue
        if _CHATTER.match(line):
            out.consumed.add(i)
            continue
        length, position, chat = _LENGTH.match(line), _POSITION.match(line), _CHAT.search(line)
        fields: dict[str, Any]
        if length:
            fields = {
                "prefill_tps": parse_number(length.group("tps")),
                "prompt_tokens": to_int(length.group("n")),
                "gen_tokens": 0,
            }
        elif position:
            fields = {
                "decode_tps": parse_number(position.group("tps")),
                "prompt_tokens": 0,
                "gen_tokens": to_int(position.group("n")),
                "depth": to_int(position.group("pos")),
            }
        elif tabby := _TABBY.search(line):
            new_tokens = to_int(tabby.group("new"))
            fields = {
                "prefill_tps": parse_number(tabby.group("pp")) if new_tokens else None,
                "decode_tps": parse_number(tabby.group("tg")),
                "prompt_tokens": new_tokens,
                "gen_tokens": to_int(tabby.group("gen")),
                "depth": to_int(tabby.group("cached")),
                "cached_tokens": to_int(tabby.group("cached")),
            }
        elif chat:
            fields = {
                "decode_tps": parse_number(chat.group("tps")),
                "prompt_tokens": to_int(chat.group("ctx")),
                "gen_tokens": to_int(chat.group("n")),
            }
        else:
            continue
        fields.update(model=model, quant=quant)
        if out.add(i, fields, f"line {i + 1}"):
            out.consumed.add(i)
    return out


IMPORTERS = (
    Importer(
        name="exllamav2",
        engine="exllamav2",
        describe="exllamav2 test_inference.py -ps / -s (** Length …, ** Position …) and the chat summary",
        signature=signature(
            r"^\s*\*\*\s*(?:Length\s+\d+\s*tokens?|Position\s+\d+\s*\+\s*\d+\s*tokens?)\s*:"
            r"|\(\s*Context\s*:\s*\d+\s*tokens?\s*,\s*response\s*:"
            r"|\bMetrics\b.*\btokens generated in\b.*\bcached tokens and\b",
            re.I,
        ),
        parse_text=parse_text,
        order=62,
        examples=(
            Example(
                " -- Model: /data/models/exl2/Meta-Llama-3-70B-Instruct-4.0bpw-h6-exl2/\n"
                " -- Measuring prompt speed...\n"
                " ** Length   128 tokens:    154.0550 t/s\n"
                " ** Length   512 tokens:    359.8361 t/s",
                (
                    {"prefill_tps": 154.055, "prompt_tokens": 128, "gen_tokens": 0, "quant": "EXL2 4.0 bpw"},
                    {"prefill_tps": 359.8361, "prompt_tokens": 512, "engine": "exllamav2"},
                ),
                "-ps",
            ),
            Example(
                " -- Measuring token speed...\n"
                " ** Position     1 + 127 tokens:   31.2345 t/s\n"
                " ** Position   128 + 128 tokens:   30.1000 t/s",
                (
                    {"decode_tps": 31.2345, "gen_tokens": 127, "prompt_tokens": 0, "depth": 1},
                    {"decode_tps": 30.1, "gen_tokens": 128, "depth": 128},
                ),
                "-s",
            ),
            Example(
                "INFO:     Metrics (ID: 7d1f0c2a): 206 tokens generated in 6.3 seconds (Queue: 0.0 s, Process: 512 "
                "cached tokens and 1024 new tokens at 1500.12 T/s, Generate: 40.23 T/s, Context: 1536 tokens)",
                (
                    {
                        "prefill_tps": 1500.12,
                        "decode_tps": 40.23,
                        "prompt_tokens": 1024,
                        "gen_tokens": 206,
                        "depth": 512,
                    },
                ),
                "tabbyAPI metrics line",
            ),
            Example(
                "(Context: 1200 tokens, response: 300 tokens, 25.10 tokens/second)",
                ({"decode_tps": 25.1, "prompt_tokens": 1200, "gen_tokens": 300},),
                "chat example",
            ),
        ),
    ),
)
