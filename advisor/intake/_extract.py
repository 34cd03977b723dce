"""``extract``: one chat message → every fact it states (see :class:`Extraction`)."""

from __future__ import annotations

import logging
import re

from advisor.errors import AmbiguousError, NotFoundError
from advisor.intake import (
    _cpu,
    _devices,
    _hardware,
    _machine,
    _memory,
    _money,
    _names,
    _paste,
    _people,
    _vague,
    _workload,
)
from advisor.intake._cpu import DUNNO
from advisor.intake._schema import Extraction
from advisor.intake._text import Msg, fmt, looks_like_junk, sanitize, spell_numbers
from advisor.models import Scenario
from knowledge import catalog
from knowledge.store import Store

log = logging.getLogger(__name__)

EMPTY_HINT = ("Tell me your hardware (e.g. 'MacBook Air M2 with 16 GB' or 'RTX 4090') and the model "
              "(e.g. 'Llama 3.1 8B'), and what you use it for.")
TROUBLE = "I had trouble reading part of that message; please rephrase it if something is missing."
_BARE_NUMBER = re.compile(r"^\s*(?:about\s+|~)?(?P<neg>[-−–]\s?)?(\d+(?:\.\d+)?)\s*(?:gb|g|gigs?)?\s*$", re.I)
# Words around a number given as an answer that only say how sure the person is ("whatever, 32 maybe", "32 i think",
# "probably 64"); the "I don't know" words are intake._hardware.DUNNO.
_HEDGE = re.compile(rf"\b(?:{DUNNO}|maybe|probably|perhaps|possibly|likely|i\s+think|i\s+guess|i\s+believe|i'?d\s+say|"
                    r"i\s+reckon|around|about|roughly|approx(?:imately)?|or\s+so|ish|ok(?:ay)?|so|well|um+|uh+|hmm+|err?|"
                    r"like|it'?s|i\s+have|it\s+has|got)\b|[,;!?~]|\.(?!\d)|\.\.\.", re.I)


_BLOB = re.compile(r"(?<!\S)\S{120,}(?!\S)")  # one "word" of 120+ characters: no word, number or name is that long


def extract(text: str, store: Store, *, context: Scenario | None = None, asked: str | None = None) -> Extraction:
    """Every fact one free-text chat message states, resolved against the catalog.

    Never raises: unknown names go to ``not_understood`` (with ``suggestions``), names that fit
    several catalog entries to ``ambiguous``, absurd values are rejected with a message, and
    unreadable input gives an empty extraction with a friendly note.

    Args:
        text (str): the message as typed (only its first 20,000 characters are read).
        store (Store): the knowledge store (catalog).
        context (Scenario | None): facts known from earlier turns; used to read a bare memory size
            ("actually it's 32 GB") against the hardware already named.
        asked (str | None): the field the last question asked for, so that a bare reply ("16",
            "M2 Pro") is read as that field.

    Returns:
        Extraction: the facts, notes and problems.
    """
    clean, notes = sanitize(text)
    clean, listed = _devices.rewrite_listings(clean)  # nvidia-smi, rocm-smi, system_profiler: the GPUs they name
    ext = Extraction(notes=notes + ([listed] if listed else []))
    if not clean.strip():
        ext.note("The message was empty. " + EMPTY_HINT)
        return ext
    if (blobs := _BLOB.findall(clean)) and not _paste.looks_like_tool_output(clean):
        # a pasted hash, serial or encoded blob beside the words: left out, the words still read
        clean = _BLOB.sub(" ", clean)
        ext.note(f"Left out {len(blobs)} run{'s' if len(blobs) > 1 else ''} of {max(len(b) for b in blobs):,}+ characters "
                 "without spaces (a hash, serial or encoded text); the rest is read.")
    if looks_like_junk(clean) and not _paste.looks_like_tool_output(clean):
        ext.note("That doesn't look like a description I can read (it is mostly not words). " + EMPTY_HINT)
        return ext
    tool = _paste.looks_like_tool_output(clean)
    if tool:
        clean = _paste.prose_lines(clean)  # the person's own words around it; the importer reads the rest
    msg = Msg(spell_numbers(clean))
    steps = (
        lambda: setattr(ext, "looks_like_tool_output", tool),
        lambda: _money.extract_budget(msg, ext),
        lambda: _vague.extract_context_window(msg, ext),
        lambda: _workload.extract_rates(msg, ext),
        lambda: _vague.extract_ttft(msg, ext, after_wait=_waited(context)),
        lambda: _machine.extract_layout(msg, ext),
        lambda: _vague.extract_depth(msg, ext),
        lambda: _vague.extract_vague_lengths(msg, ext),
        lambda: _workload.extract_lengths(msg, ext),
        lambda: _names.extract_backend(msg, ext),
        lambda: _names.extract_model(msg, ext, store),
        lambda: _hardware.extract_hardware(msg, ext, store, known=context.hardware if context else None),
        lambda: _cpu.settle_cpu_only(msg, ext, store, known=context.hardware if context else None),
        lambda: _names.extract_quant(msg, ext, store),
        lambda: _people.extract_users(msg, ext),
        lambda: _vague.mark_aggregate(msg, ext),
        lambda: _workload.extract_use(msg, ext),
        lambda: _bare_reply(clean, ext, store, asked),
    )
    for step in steps:
        try:
            step()
        except Exception:  # a bug in one extractor must not cost the user the rest of the message
            log.exception("intake extractor failed on a message of %d chars", len(clean))
            ext.note(TROUBLE)
    if not ext.facts() and not (ext.not_understood or ext.ambiguous or ext.looks_like_tool_output) \
            and not _knows_setup(context):
        ext.note("I couldn't find any details in that message. " + EMPTY_HINT)
    return ext


_ASKS = re.compile(r"\?|\b(?:slow|sluggish|fast|quick|speed|normal|expected|why|how|ok(?:ay)?|fine|good|bad|wrong|"
                   r"help|should|feels?|takes?|ages|lag\w*)\b", re.I)


def words_read(text: str, store: Store) -> list[str]:
    """The lines of the person's own words around a pasted tool output that say something: a fact
    (hardware, memory, model …), a question or a symptom ("this feels slow, is it normal? RTX 3060 12GB").

    Such lines are read here, so the importer does not list them as not understood; other prose
    ("my cat walked on the keyboard") still is. Lines are returned stripped, in order.
    """
    out = []
    for ln in _paste.prose_lines(text[:20000]).splitlines():
        if _ASKS.search(ln) or extract(ln, store).facts():
            out.append(ln.strip())
    return out


def _waited(context: Scenario | None) -> bool:
    """The conversation so far complains of the wait for the first word ("takes forever to start answering"): a
    follow-up's bare duration ("like 20 seconds after a break") is that wait."""
    return bool(context is not None and context.measured_ttft_s is None and context.question
                and _vague.TTFT_WORDS.search(context.question))


def _knows_setup(context: Scenario | None) -> bool:
    """True when earlier turns (or a pasted output) already gave something to answer about: a message
    without new facts ("is it normal?", "why?") is then a question about that setup, not an empty message."""
    if context is None:
        return False
    return bool(context.hardware or context.model or context.params_b or context.measured_decode_tps
                or context.measured_prefill_tps or context.bandwidth_gbs)


def _bare_reply(text: str, ext: Extraction, store: Store, asked: str | None) -> None:
    """A short answer to the question just asked ("16", "M2 Pro", "llama 3.1 8b")."""
    if asked is None or ext.facts().get(asked) is not None or len(text) > 60:
        return
    if asked == "memory_gb" and any("not a memory size" in n for n in ext.not_understood):
        return  # the size written was already rejected (said once)
    if asked == "memory_gb" and (m := _BARE_NUMBER.match(_HEDGE.sub(" ", text))):
        v = float(m.group(2))
        if m.group("neg"):
            ext.reject(f"-{fmt(v)} is not a memory size (a size cannot be negative); I ignored it.")
        elif 0 < v <= _memory.MAX_MEMORY_GB:
            ext.memory_gb = v
            ext.note(f"Took {fmt(v)} as {fmt(v)} GB of memory.")
        else:
            ext.reject(f"{fmt(v)} GB is not a memory size any machine has; I ignored it.")
    elif asked in ("concurrency", "gpu_cores") and re.fullmatch(r"\s*\d{1,5}\s*", text):
        v = int(text)
        if v >= 1:
            setattr(ext, asked, v)
    elif asked == "hardware" and ext.hardware is None and not ext.ambiguous.get("hardware"):
        phrase = text.strip(" .!?")
        try:
            hit = catalog.resolve_hardware(store, phrase)
        except (AmbiguousError, NotFoundError):
            return
        if hit.confidence >= 0.9:
            ext.hardware, ext.resolved["hardware"] = phrase, hit.value.id
            ext.not_understood = [n for n in ext.not_understood if "hardware" not in n]


def layout_facts(text: str) -> dict[str, object]:
    """Interconnect and tensor parallelism in a name or command line (for JSON/flag input, not chat)."""
    clean, _ = sanitize(text)
    ext = Extraction()
    _machine.extract_layout(Msg(clean[:2000]), ext)
    return {"interconnect": ext.interconnect, "tensor_parallel": ext.tensor_parallel}
