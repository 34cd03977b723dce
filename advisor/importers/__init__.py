"""Importers: turn what people's tools printed into :class:`~advisor.models.Measurement` records.

Supported (format names as reported in :attr:`ImportResult.format <advisor.models.ImportResult>`):

==========================  ===============================================================
``llama-bench-md``          llama-bench markdown table (``pp512``, ``tg128``, ``pp512+tg128``, ``@ d4096``)
``llama-bench-csv``         ``llama-bench -o csv``
``llama-bench-json``        ``llama-bench -o json`` (array)
``llama-bench-jsonl``       ``llama-bench -o jsonl`` (one object per line)
``llama-bench-sql``         ``llama-bench -o sql``
``batched-bench``           llama-batched-bench table or JSONL (one row per batch size B)
``llama-server-timings``    llama-server ``timings`` JSON, or its ``prompt eval time = ...`` log lines
``llama-print-timings``     ``llama_print_timings:`` lines (older llama.cpp)
``llama-perf``              ``llama_perf_context_print:`` lines; llama-cli's ``[ Prompt: X t/s | Generation: Y t/s ]``
``ollama-verbose``          ``ollama run --verbose`` statistics (Go durations)
``ollama-api``              ``/api/generate``/``/api/chat`` JSON (durations in ns), final chunk
``ollama-ps``               ``ollama ps`` table or ``/api/ps`` JSON: placement records, no rates
``mlx-generate``            ``mlx_lm.generate --verbose`` (also ``[batch_generate]``)
``mlx-lm-benchmark``        ``mlx_lm.benchmark`` (one measurement per configuration, from Averages)
``lmstudio``                LM Studio ``stats`` JSON, ``lms chat --stats``, the chat status line (prefill
                            derived from time to first token)
``vllm-bench``              ``vllm bench serve`` block or saved JSON, ``vllm bench throughput`` line
                            (aggregate throughput; ``batch`` = max concurrency when set)
``unknown``                 nothing recognised
==========================  ===============================================================

Around the results, a shell command (``-m``, ``-ngl``, ``-t``), the GPU the backend found and
llama.cpp's model-loading log fill fields the results leave empty. Every non-empty line that was not
understood is listed in ``unparsed`` (blank lines, table rules and code fences excepted).

Example:
    >>> from advisor.importers import parse_output
    >>> r = parse_output("prompt eval rate:     0.66 tokens/s\\neval rate:            8.87 tokens/s")
    >>> r.format, r.measurements[0].decode_tps
    ('ollama-verbose', 8.87)
"""

from __future__ import annotations

from advisor.importers._parse import parse_output
from advisor.importers.detect import FORMATS, detect_format

__all__ = ["FORMATS", "detect_format", "parse_output"]
