"""A loaded machine's per-user rates: each user's average decode while other prompts are read, and the queue's wait.

Pure functions of a :class:`~advisor.models.Prediction`; the chat, the fixes and the follow-ups call these, so each
says the same per-user rate.
"""

from __future__ import annotations

import math

from advisor.models import Prediction

__all__ = ["loaded_tps", "queue_wait_s"]


def loaded_tps(p: Prediction) -> float | None:
    """Each user's average decode rate, tok/s, when several users' prompts take more of the machine's time than their
    answers (:func:`advisor.roofline.prompt_load`): the streams stall while other prompts are read, keeping
    :func:`advisor.roofline.served_share` of their rate. None for one user, or when decoding takes longer."""
    from advisor.roofline import prompt_load, served_share

    if p.concurrency <= 1 or prompt_load(p.decode_tps, p.prefill_tps, p.prompt_tokens, p.gen_tokens) is None:
        return None
    return (p.decode_tps_per_seq or p.decode_tps) * served_share(p.decode_tps, p.prefill_tps, p.prompt_tokens,
                                                                 p.gen_tokens)


def queue_wait_s(p: Prediction) -> float | None:
    """When all the users send at once and only ``p.running`` fit (their KV caches), the wait of the last before its
    request starts, s: ``(⌈users ÷ running⌉ − 1)`` × one request's time (first token + the answer at each running
    user's rate, :func:`loaded_tps` when prompts stall the streams). None when every user runs at once."""
    if not p.running or p.running >= p.concurrency:
        return None
    rate = loaded_tps(p) or p.decode_tps_per_seq or p.decode_tps
    if not rate:
        return None
    one = (p.ttft_s or 0.0) + p.gen_tokens / rate
    return (math.ceil(p.concurrency / p.running) - 1) * one
