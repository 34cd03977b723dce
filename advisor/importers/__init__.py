"""Importers: turn what people's tools printed into :class:`~advisor.models.Measurement` records.

Every format is one record in the registry (:mod:`advisor.importers._registry`): its name, how to
recognise it, how to parse it, the engine it implies and its examples. Each measurement carries
that engine (``engine``) and a ``backend`` label built from it (``llama.cpp-cuda``, ``ollama``,
``mlx``); :func:`engine_for_format` names it. Supported (format → engine):

==========================  ===========================  ==========================================
``llama-bench-md``          llama.cpp                    markdown table (``pp512``, ``tg128``, ``pp512+tg128``, ``@ d4096``)
``llama-bench-csv``         llama.cpp                    ``llama-bench -o csv``
``llama-bench-json``        llama.cpp                    ``llama-bench -o json`` (array)
``llama-bench-jsonl``       llama.cpp                    ``llama-bench -o jsonl`` (one object per line)
``llama-bench-sql``         llama.cpp                    ``llama-bench -o sql``
``batched-bench``           llama.cpp                    llama-batched-bench table or JSONL (one row per batch size B)
``llama-server-log``        llama.cpp                    llama-server ``prompt eval time = ...`` log lines
``llama-server-timings``    llama.cpp                    llama-server ``timings`` JSON
``llama-print-timings``     llama.cpp                    ``llama_print_timings:`` lines (older llama.cpp)
``llama-perf``              llama.cpp                    ``llama_perf_context_print:`` / ``common_perf_print:`` lines;
                                                         llama-cli's ``[ Prompt: X t/s | Generation: Y t/s ]``
``ollama-verbose``          ollama                       ``ollama run --verbose`` statistics (Go durations)
``ollama-api``              ollama                       ``/api/generate``/``/api/chat`` JSON (durations in ns), final chunk
``ollama-ps``               ollama                       ``ollama ps`` table or ``/api/ps`` JSON: placement records, no rates
``mlx-generate``            mlx                          ``mlx_lm.generate --verbose`` (also ``[batch_generate]``)
``mlx-lm-benchmark``        mlx                          ``mlx_lm.benchmark`` (one measurement per configuration)
``lmstudio``                lm-studio                    ``stats`` JSON, ``lms chat --stats``, the chat status line (prefill
                                                         derived from time to first token)
``vllm-bench``              vllm                         ``vllm bench serve`` block or saved JSON, ``vllm bench throughput``
``sglang-bench``            sglang                       ``bench_latency``/``bench_one_batch`` runs, ``bench_serving`` block
``textgen-webui``           text-generation-webui        ``Output generated in ...`` (rate includes prompt time:
                                                         ``decode_includes_prompt``)
``koboldcpp``               koboldcpp                    ``CtxLimit ... Process ... Generate ...`` and ``--benchmark``
``exllamav2``               exllamav2                    ``test_inference.py -ps``/``-s``, the chat summary
``unknown``                 other                        nothing recognised
==========================  ===========================  ==========================================

Before detection every line is normalised (log prefixes, process ids, timestamps, comment and quote
markers, Windows line endings removed; wrapped lines re-joined). Around the results, a shell command
(``-m``, ``-ngl``, ``-t``), the GPU the backend found and llama.cpp's model-loading log fill fields
the results leave empty. Every non-empty line that was not understood is listed in ``unparsed``
(blank lines, table rules and code fences excepted); a row that cannot be read is skipped with a
warning, and the sound rows of the same paste are kept. Every parser is linear in its input.

Example:
    >>> from advisor.importers import parse_output
    >>> r = parse_output("prompt eval rate:     0.66 tokens/s\\neval rate:            8.87 tokens/s")
    >>> r.format, r.measurements[0].decode_tps
    ('ollama-verbose', 8.87)
"""

from __future__ import annotations

from advisor.importers._parse import parse_output
from advisor.importers._registry import engine_for_format
from advisor.importers.detect import FORMATS, detect_format

__all__ = ["FORMATS", "detect_format", "engine_for_format", "parse_output"]
