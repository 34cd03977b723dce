"""Small readers of text for the front ends: compare price lists, "is this a paste?".

Part of understanding: front ends and the service call these instead of matching strings themselves.

>>> parse_prices("nvidia-h200=32,000, apple-m3-ultra-80gpu=$9499")
{'nvidia-h200': 32000.0, 'apple-m3-ultra-80gpu': 9499.0}
>>> looks_pasted("ok\\nprompt eval rate: 45 tokens/s")
True
"""

from __future__ import annotations

import re

from advisor.errors import InputError

__all__ = ["looks_pasted", "parse_prices", "split_stated_memory"]

_PRICE = re.compile(r"\s*([^=,;\n]+?)\s*=\s*\$?\s*(\d[\d_,]*(?:\.\d+)?)\s*(?:[,;\n]|$)")
_PASTE_MARKERS = ("| model", "llama_print_timings", "prompt eval rate", "eval rate:", "tokens-per-sec", "pp512",
                  "tg128", "\"avg_ts\"", "avg_ts,stddev_ts", "build_commit,", "prompt_per_second", "Serving Benchmark Result", "tokensPerSecond",
                  "llama_perf_context_print", "prompt_eval_duration")

# A tool's whole record on one line, pasted inside a sentence: text-generation-webui's "Output generated in 15.34
# seconds (33.24 tokens/s, 510 tokens, context 3200" and LM Studio's "7.12 tok/sec • 612 tokens • 38.40s to first
# token", koboldcpp's "Process:48.31s (3.45ms/T = 289.81T/s), Generate:…" (FORMATS.md §7, §8): read by their importers, whose fields say which count is the prompt.
_ONE_LINE_PASTE = re.compile(r"\bOutput generated in\s*[\d.,]+\s*seconds?\s*\(\s*[\d.,]+\s*(?:tokens?/s|t/s|it/s)|"
                             r"tok/sec\s*[•·]\s*[\d,]+\s*tokens\s*[•·]\s*[\d.,]+\s*s\s*to\s+first\s+token|"
                             # koboldcpp's timed phases ("Process:48.31s (… = 289.81T/s), Generate:14.06s (…")
                             r"\bProcess(?:ing)?\s*:\s*[\d.,]+\s*s\s*\([^)]*\)\s*,\s*Generat(?:e|ion)\s*:\s*[\d.,]+\s*s\s*\(|"
                             # vLLM's metrics line (advisor.importers.vllm_log)
                             r"\bAvg prompt throughput:\s*[\d.]+\s*tokens/s,\s*Avg generation throughput:", re.I)


def parse_prices(text: str | None) -> dict[str, float]:
    """``"nvidia-h200=32,000, apple-m3-ultra-80gpu=$9499"`` → {name: USD}.

    Pairs are ``ID=USD`` separated by commas, semicolons or new lines; thousands separators and a
    ``$`` are allowed. Raises InputError on anything else.
    """
    text, out, pos = (text or "").strip(), {}, 0
    while pos < len(text):
        m = _PRICE.match(text, pos)
        if not m:
            bad = re.split(r"[;\n]", text[pos:])[0].strip()
            raise InputError(f"Prices are written ID=USD, e.g. nvidia-h100-pcie=30000 (could not read {bad!r}).")
        out[m.group(1).strip()] = float(m.group(2).replace(",", "").replace("_", ""))
        pos = m.end()
    return out


def looks_pasted(text: str) -> bool:
    """True when a chat message carries a tool's output (llama-bench table, ollama --verbose, server JSON)."""
    low = text.lower()
    return (text.count("\n") >= 1 and any(m.lower() in low for m in _PASTE_MARKERS)) or bool(_ONE_LINE_PASTE.search(text))


_STATED_MEMORY = re.compile(r"\s(\d{1,4}(?:\.\d+)?)\s*GB\b", re.I)


def split_stated_memory(name: str) -> tuple[str, float | None]:
    """A machine name without the memory size written after it, and that size in GB.

    >>> split_stated_memory("apple-m3-ultra-80gpu 96GB")
    ('apple-m3-ultra-80gpu', 96.0)
    >>> split_stated_memory("RTX 4090")
    ('RTX 4090', None)
    """
    m = _STATED_MEMORY.search(name)
    if not m:
        return name, None
    return _STATED_MEMORY.sub(" ", name).strip(), float(m.group(1))
