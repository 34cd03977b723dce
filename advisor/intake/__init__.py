"""Intake: free chat text → :class:`~advisor.models.Scenario`, and what to ask next.

>>> from knowledge.store import Store
>>> store = Store(":memory:")
>>> r = update(None, "MacBook Air M2 with 16 GB, Llama 3.1 8B at 4-bit", store)
>>> r.facts.hardware, r.facts.memory_gb, r.facts.model, r.facts.quant
('MacBook Air M2', 16.0, 'Llama 3.1 8B', '4-bit')

* :func:`extract` reads one message: each fact has a small pattern-based extractor; names are
  checked against the catalog (:mod:`knowledge.catalog`) and kept as the user wrote them. Loose
  lengths, context windows and TTFT are read by ``_vague`` (DESIGN.md's conventions: a sentence ≈ 20
  words, a paragraph ≈ 100–150, a page ≈ 500, words → tokens × 4/3, a range → its middle); GPU count,
  interconnect, tensor parallelism, system RAM, mixed boxes and candidates to compare by ``_machine``
  and ``_hardware``.
* This is the chat-text reader of :mod:`advisor.understand`: its facts (a Scenario) become the
  Situation there (:func:`advisor.understand.understand`), and :func:`missing` asks about
  ``Situation.unresolved``.
* :func:`update` merges a message into the facts so far (corrections override and change only what
  they name: "actually it's the Ti", "what about two of them?", "make it 8k"); ``IntakeResult.changes``
  lists ``(field, old, new)``.
* :func:`missing` / :func:`next_question` say what is still needed and ask one question at a time.
* :func:`defaults_for` lists the values assumed for everything not given, with reasons.

Nothing here raises for bad input: unknown names, absurd numbers and hostile text come back as
messages in ``not_understood`` and ``notes``.
"""

from __future__ import annotations

from advisor.intake._devices import is_listing_line, rewrite_listings
from advisor.intake._dialog import (
    DEFAULT_CONCURRENCY,
    DEFAULT_DEPTH,
    DEFAULT_GEN_TOKENS,
    DEFAULT_PROMPT_TOKENS,
    DEFAULT_QUANT,
    DEFAULT_QUANT_MLX,
    HARDWARE_CHOICES,
    MODEL_CHOICES,
    QUANT_CHOICES,
    defaults_for,
    missing,
    named_machines,
    next_question,
    update,
)
from advisor.intake._extract import extract, words_read
from advisor.intake._paste import looks_like_tool_output
from advisor.intake._paste import prose_lines as own_words
from advisor.intake._schema import FACT_FIELDS, Extraction, IntakeResult, Question
from advisor.intake._text import MAX_CHARS
from advisor.intake._workload import (
    LONG_ANSWER_TOKENS,
    SHORT_ANSWER_TOKENS,
    TOKENS_PER_LINE_OF_CODE,
    WORDS_PER_PAGE,
    WORDS_PER_TOKEN,
)

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_DEPTH",
    "DEFAULT_GEN_TOKENS",
    "DEFAULT_PROMPT_TOKENS",
    "DEFAULT_QUANT",
    "DEFAULT_QUANT_MLX",
    "FACT_FIELDS",
    "HARDWARE_CHOICES",
    "LONG_ANSWER_TOKENS",
    "MAX_CHARS",
    "MODEL_CHOICES",
    "QUANT_CHOICES",
    "SHORT_ANSWER_TOKENS",
    "TOKENS_PER_LINE_OF_CODE",
    "WORDS_PER_PAGE",
    "WORDS_PER_TOKEN",
    "Extraction",
    "IntakeResult",
    "Question",
    "defaults_for",
    "extract",
    "missing",
    "named_machines",
    "looks_like_tool_output",
    "next_question",
    "is_listing_line",
    "own_words",
    "rewrite_listings",
    "update",
    "words_read",
]
