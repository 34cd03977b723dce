"""Server probe: measure the LLM server a person runs (Ollama, llama-server, vLLM, SGLang, LM Studio,
mlx_lm.server, any OpenAI-compatible endpoint) with a short streamed benchmark.

Public API::

    discover_servers(*, host="127.0.0.1", ports=DEFAULT_PORTS) -> list[ServerInfo]
    find_servers(url=None, *, allow_remote=False) -> list[ServerInfo]
    measure_server(info, *, model=None, prompt_lengths=(128, 512, 2048), gen_tokens=64,
                   time_budget_s=60.0, concurrency=2, progress=None) -> ServerProbeResult

Method. A warm-up request loads the model and tells how many tokens a prompt word costs. Then one
streamed request per prompt length, each a fresh random word list (so no prompt cache helps), asks
for ``gen_tokens`` tokens at temperature 0. From the stream (our clock, ``time.perf_counter``):
TTFT = first text − request sent; prefill tok/s = prompt tokens / TTFT (so it includes the HTTP
round trip and any queueing, like what a user feels); decode tok/s = (tokens − 1) / (last − first
text); ITL = gaps between streamed chunks (divided by the tokens per chunk when a chunk carries
several). Token counts come from the server when it reports them (Ollama ``prompt_eval_count`` /
``eval_count``, llama-server ``timings``, OpenAI ``usage``), otherwise from the word count (an
estimate, labelled). The server's own rates are compared with the stream's; a gap over
:data:`DISAGREE` is reported. An optional pass with ``concurrency`` simultaneous streams shows
whether the server batches (aggregate decode tok/s rising with streams).
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from advisor.errors import InputError
from advisor.models import Verdict
from advisor.probe.server_engines import (
    DEFAULT_PORTS,
    ServerInfo,
    build_request,
    choose_model,
    display_model,
    identify,
    parse_line,
)
from advisor.probe.server_http import ServerProbeError, check_url, get_json, post_stream

__all__ = ["BatchingPass", "DISAGREE", "ServerProbeResult", "ServerRun", "ServerProbeError", "discover_servers",
           "find_servers", "measure_server"]

#: Text chunks per asked token after which a stream is cut off (servers send one token or more per chunk;
#: one that ignores ``max_tokens`` would otherwise stream forever).
MAX_CHUNKS_PER_TOKEN = 4
#: Relative gap between the stream's and the server's rate above which the report says they disagree.
DISAGREE = 0.25
#: Tokens per word assumed until the server reports a prompt's token count (random 3–8 letter words
#: in BPE vocabularies cost about 2; measured per server by the warm-up request when it can).
DEFAULT_TOKENS_PER_WORD = 2.0
Progress = Callable[[float, str], None]
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_PUNCT = ",.!?"
_SUFFIX = "\n\nWrite a long story that uses the words above."
#: Words the suffix counts as when sizing prompts (9 words and a full stop).
_SUFFIX_WORDS = 10


class ServerRun(BaseModel):
    """One streamed request. Rates in tok/s, times in s, ITL in ms; ``server_*`` as the server reports."""

    prompt_tokens: int
    ttft_s: float
    prefill_tps: float
    gen_tokens: int
    decode_tps: float | None
    itl_p50_ms: float | None
    itl_p95_ms: float | None
    prompt_tokens_estimated: bool = False
    cached_tokens: int = 0
    chunks: int = 0
    server_prefill_tps: float | None = None
    server_decode_tps: float | None = None
    load_s: float | None = None


class BatchingPass(BaseModel):
    """``streams`` simultaneous requests at the shortest prompt: does aggregate decode rise?"""

    streams: int
    aggregate_decode_tps: float
    per_stream_decode_tps: float
    single_stream_decode_tps: float
    speedup: float
    batches: bool
    note: str = ""


class ServerProbeResult(BaseModel):
    """What the server probe measured on one server (see the module docstring for the method)."""

    engine: str
    engine_label: str
    api: str = "openai"
    url: str
    model: str | None
    models: list[str] = Field(default_factory=list)
    server_runs: list[ServerRun] = Field(default_factory=list)
    server_reported: list[dict[str, Any]] = Field(default_factory=list)
    gpu_share: float | None = None
    batching: BatchingPass | None = None
    disagreements: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    duration_s: float = 0.0
    machine: dict[str, Any] = Field(default_factory=dict)
    verdict: Verdict | None = None
    summary: str = ""
    stored_id: str | None = None


def discover_servers(*, host: str = "127.0.0.1", ports: Sequence[int] | None = None,
                     timeout: float = 1.5) -> list[ServerInfo]:
    """The LLM servers answering on loopback default ports (:data:`DEFAULT_PORTS`), in port order."""
    check_url(host)  # loopback only
    found: list[ServerInfo] = []
    for port in ports if ports is not None else [p for p, _ in DEFAULT_PORTS]:
        base = check_url(f"{host}:{port}")
        try:
            info = identify(base, timeout=timeout)
        except ServerProbeError:
            continue
        if info is not None:
            found.append(info)
    return found


def find_servers(url: str | None = None, *, allow_remote: bool = False, ports: Sequence[int] | None = None,
                 timeout: float = 2.0) -> list[ServerInfo]:
    """The server at ``url``, or the loopback servers found on their default ports.

    Raises:
        InputError: ``url`` is malformed or not loopback without ``allow_remote``.
        ServerProbeError: nothing listens at ``url``, it is not an LLM server, or nothing was found.
    """
    if url:
        base = check_url(url, allow_remote=allow_remote)
        info = identify(base, timeout=timeout)
        if info is None:
            raise ServerProbeError(f"{base} answers HTTP but is not an LLM server I know (no Ollama /api/tags, "
                                   "llama-server /props or OpenAI /v1/models)")
        return [info]
    found = discover_servers(ports=ports, timeout=min(timeout, 1.5))
    if not found:
        ps = ", ".join(str(p) for p, _ in DEFAULT_PORTS) if ports is None else ", ".join(map(str, ports))
        raise ServerProbeError(f"no LLM server answers on 127.0.0.1 ports {ps}; start one or pass its address "
                               "(advisor probe --server http://127.0.0.1:PORT)")
    return found


def _prompt(n_words: int, rng: random.Random, vocab: Sequence[str] = ()) -> str:
    """A prompt of random words that no cache can have seen.

    Half the words are random letters; the other half, when ``vocab`` is given, are drawn from words
    the model itself produced in the warm-up (so even a word-level tokenizer, which maps every unknown
    word to one token, sees a sequence no earlier prompt shares), plus random punctuation.
    """
    out = []
    for _ in range(n_words):
        if vocab and rng.random() < 0.5:
            out.append(rng.choice(vocab))
        else:
            out.append("".join(rng.choice(_LETTERS) for _ in range(rng.randint(3, 8))))
        if rng.random() < 0.3:
            out[-1] += rng.choice(_PUNCT)
    return " ".join(out) + _SUFFIX


def _vocab(text: str) -> list[str]:
    """Distinct plain words of a model's output (letters only, 2–20 characters)."""
    words = {w.strip(".,!?;:\"'()[]").lower() for w in text.split()}
    return sorted(w for w in words if 2 <= len(w) <= 20 and w.isalpha())


def _pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _counts(api: str, rep: dict[str, Any]) -> dict[str, Any]:
    """Token counts and rates a server reported for one request.

    Returns keys ``prompt`` (tokens, cached ones included), ``cached`` (tokens served from its prompt
    cache), ``gen`` (tokens), ``prefill_tps`` and ``decode_tps`` (the server's own rates) and ``load_s``;
    a value is None where the server does not say. Ollama durations are nanoseconds.
    """
    if api == "ollama":
        pn, pd = _sane(rep.get("prompt_eval_count"), MAX_COUNT), _sane(rep.get("prompt_eval_duration"), MAX_NS)
        gn, gd = _sane(rep.get("eval_count"), MAX_COUNT), _sane(rep.get("eval_duration"), MAX_NS)
        load = _sane(rep.get("load_duration"), MAX_NS)
        cached = _sane(rep.get("prompt_eval_cached_count"), MAX_COUNT)
        return {"prompt": (pn or 0) + (cached or 0) or None, "cached": cached, "gen": gn,
                "prefill_tps": pn / (pd / 1e9) if pn and pd else None,
                "decode_tps": gn / (gd / 1e9) if gn and gd else None,
                "load_s": load / 1e9 if load is not None else None}
    t: dict[str, Any] = rep["timings"] if isinstance(rep.get("timings"), dict) else {}
    u: dict[str, Any] = rep["usage"] if isinstance(rep.get("usage"), dict) else {}
    details: dict[str, Any] = u["prompt_tokens_details"] if isinstance(u.get("prompt_tokens_details"), dict) else {}
    cache_n = _sane(t.get("cache_n"), MAX_COUNT)
    cached = cache_n if cache_n is not None else _sane(details.get("cached_tokens"), MAX_COUNT)
    if pn := _sane(t.get("prompt_n"), MAX_COUNT):
        pn += cache_n or 0  # llama-server counts only the evaluated tokens
    else:
        pn = _sane(u.get("prompt_tokens"), MAX_COUNT) or _sane(rep.get("tokens_evaluated"), MAX_COUNT)
    gn = (_sane(t.get("predicted_n"), MAX_COUNT) or _sane(u.get("completion_tokens"), MAX_COUNT)
          or _sane(rep.get("tokens_predicted"), MAX_COUNT))
    return {"prompt": pn, "cached": cached, "gen": gn, "prefill_tps": _sane(t.get("prompt_per_second"), MAX_TPS),
            "decode_tps": _sane(t.get("predicted_per_second"), MAX_TPS), "load_s": None}


# What a server reports is untrusted input: a count, duration (ns) or rate outside these is dropped, not used.
MAX_COUNT, MAX_NS, MAX_TPS = 1e8, 1e15, 1e7


def _sane(v: Any, hi: float) -> float | None:
    """A reported number when it is one (not a string or a bool), finite, above 0 and at most ``hi``; else None."""
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or not 0 < v <= hi:
        return None
    return v


class _Stream:
    """The timings of one streamed request."""

    def __init__(self) -> None:
        self.t0 = 0.0
        self.times: list[float] = []
        self.report: dict[str, Any] = {}
        self.model: str | None = None
        self.text: list[str] = []


def _stream(info: ServerInfo, model: str, prompt: str, gen_tokens: int, timeout: float, opts: dict[str, bool],
            temperature: float = 0.0) -> _Stream:
    """One streamed request; ``opts``: ``chat`` (use /v1/chat/completions), ``minimal`` (standard fields only)."""
    path, body = build_request(info, model, prompt, gen_tokens, chat=opts.get("chat", False),
                               minimal=opts.get("minimal", False), temperature=temperature)
    out = _Stream()
    deadline = time.perf_counter() + timeout
    max_chunks = gen_tokens * MAX_CHUNKS_PER_TOKEN + 16
    lines = 0
    for t, line in post_stream(info.url, path, body, timeout=timeout):
        if not line:
            out.t0 = t
            continue
        lines += 1
        if t > deadline or lines > max_chunks * 4:
            # a server that streams forever (or trickles, or sends lines that are not events) must not hang the probe
            raise ServerProbeError(f"{info.label} at {info.url} did not finish an answer of {gen_tokens} tokens within "
                                   f"{timeout:g} s ({lines} lines streamed)")
        ev = parse_line(info.api, line)
        if ev is None:
            continue
        if ev.text:
            out.times.append(t)
            out.text.append(ev.text)
        if ev.report:
            out.report.update(ev.report)
        out.model = out.model or ev.model
        if ev.done and info.api != "openai":
            break
        if len(out.times) >= max_chunks:
            break  # it ignores max_tokens: enough chunks to measure decode; its usage report will not come
    if not out.times:
        raise ServerProbeError(f"{info.label} at {info.url} streamed no text for model {model!r}")
    return out


def _run_of(info: ServerInfo, s: _Stream, words: int, tpw: float) -> ServerRun:
    c = _counts(info.api, s.report)
    est = not c["prompt"]
    prompt_tokens = int(c["prompt"]) if c["prompt"] else max(1, round((words + _SUFFIX_WORDS) * tpw))
    cached = int(c["cached"] or 0)
    chunks = len(s.times)
    gen = int(c["gen"]) if c["gen"] else chunks
    ttft = s.times[0] - s.t0
    span = s.times[-1] - s.times[0]
    decode = (gen - 1) / span if gen > 1 and span > 0 else None
    per_chunk = max(1.0, (gen - 1) / (chunks - 1)) if chunks > 1 else 1.0
    gaps = [(b - a) * 1000 / per_chunk for a, b in zip(s.times, s.times[1:], strict=False)]

    def r(v: float | None, nd: int = 2) -> float | None:
        return None if v is None else round(float(v), nd)

    return ServerRun(prompt_tokens=prompt_tokens, ttft_s=round(ttft, 4),
                     prefill_tps=round(max(1, prompt_tokens - cached) / ttft, 2), gen_tokens=gen,
                     decode_tps=r(decode), itl_p50_ms=r(_pct(gaps, 0.5), 3), itl_p95_ms=r(_pct(gaps, 0.95), 3),
                     prompt_tokens_estimated=est, cached_tokens=cached, chunks=chunks,
                     server_prefill_tps=r(c["prefill_tps"]), server_decode_tps=r(c["decode_tps"]),
                     load_s=r(c["load_s"], 3))


def _disagreements(label: str, runs: list[ServerRun]) -> list[str]:
    """Sentences for each run where the stream's rate and the server's own differ by more than :data:`DISAGREE`."""
    out = []
    for r in runs:
        for phase, ours, theirs in (("prefill", r.prefill_tps, r.server_prefill_tps),
                                    ("decode", r.decode_tps, r.server_decode_tps)):
            if not (ours and theirs) or abs(ours / theirs - 1) <= DISAGREE:
                continue
            if ours < theirs:
                why = ("the stream's TTFT also holds the HTTP round trip, queueing and the first sampled token"
                       if phase == "prefill" else "tokens reach the client slower than the server makes them: "
                       "HTTP, detokenisation or chunked delivery")
            else:
                why = ("the server's own timer covers more than the stream shows (model load, queueing or other "
                       "work inside it), or its figures are not what they claim")
            out.append(f"{phase} at {r.prompt_tokens} prompt tokens: the stream measured {ours:,.1f} tok/s, "
                       f"{label} reports {theirs:,.1f} tok/s ({why}).")
    return out


def _gpu_share(info: ServerInfo, model: str) -> tuple[float | None, dict[str, Any] | None]:
    """Ollama ``/api/ps``: ``size_vram / size`` of the model just measured (it is loaded now)."""
    if info.api != "ollama":
        return None, None
    try:
        ps = get_json(info.url, "/api/ps", timeout=3.0)
    except ServerProbeError:
        return None, None
    models = ps.data.get("models") if isinstance(ps.data, dict) else None
    for m in models or []:
        if isinstance(m, dict) and model in (m.get("name"), m.get("model")):
            size, vram = m.get("size"), m.get("size_vram")
            if isinstance(size, int | float) and size > 0 and isinstance(vram, int | float):
                return round(min(1.0, max(0.0, vram / size)), 3), m
            return None, m
    return None, None


def _batching(info: ServerInfo, model: str, words: int, gen: int, n: int, single: float,
              timeout: float, opts: dict[str, bool], vocab: Sequence[str]) -> BatchingPass | None:
    results: list[_Stream | None] = [None] * n
    rngs = [random.Random() for _ in range(n)]

    def one(i: int) -> None:
        try:
            results[i] = _stream(info, model, _prompt(words, rngs[i], vocab), gen, timeout, opts)
        except Exception:  # noqa: BLE001 - a failed stream just leaves the pass incomplete
            results[i] = None

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout + 5)
    done = [r for r in results if r is not None]
    if len(done) < n:
        return None
    first = min(r.times[0] for r in done)
    last = max(r.times[-1] for r in done)
    toks = sum(max(0, len(r.times) - 1) for r in done)
    if last <= first or toks <= 0:
        return None
    per = [(len(r.times) - 1) / (r.times[-1] - r.times[0]) for r in done if r.times[-1] > r.times[0]]
    agg = toks / (last - first)
    # Chunks, not tokens, were counted: rescale by the tokens each stream reports when it does.
    reported = [_counts(info.api, r.report)["gen"] for r in done]
    if all(reported):
        agg = sum(int(g) - 1 for g in reported) / (last - first)  # type: ignore[arg-type]
        per = [(int(g) - 1) / (r.times[-1] - r.times[0]) for g, r in zip(reported, done, strict=False)  # type: ignore[arg-type]
               if r.times[-1] > r.times[0]]
    speed = agg / single if single else 0.0
    batches = speed >= 1.3
    if batches:
        how = "the server batches requests."
    elif speed >= 1.1:
        how = "the server batches only a little."
    elif speed >= 0.8:
        how = ("the server runs them one after another (no batching; set OLLAMA_NUM_PARALLEL / --parallel, or use "
               "a batching server).")
    else:
        how = "together they are slower than one stream alone: the server time-slices them, or its batched path is slower."
    note = f"{n} streams together decode {agg:,.1f} tok/s in all, {speed:.1f}× one stream: {how}"
    return BatchingPass(streams=n, aggregate_decode_tps=round(agg, 2),
                        per_stream_decode_tps=round(sum(per) / len(per), 2) if per else 0.0,
                        single_stream_decode_tps=round(single, 2), speedup=round(speed, 2), batches=batches, note=note)


def measure_server(
    info: ServerInfo, *, model: str | None = None, prompt_lengths: Sequence[int] = (128, 512, 2048),
    gen_tokens: int = 64, time_budget_s: float = 60.0, concurrency: int = 2, progress: Progress | None = None,
    request_timeout_s: float = 120.0,
) -> ServerProbeResult:
    """Run the streamed benchmark on one identified server (see the module docstring).

    Args:
        model: name of a served model (``--server-model``); None takes the loaded or first one.
        prompt_lengths: prompt sizes in tokens (approximate until the server reports counts), shortest first.
        gen_tokens: answer length asked of every request, tokens.
        time_budget_s: runs whose predicted time would exceed what is left are skipped (noted).
        concurrency: streams of the batching pass (0 or 1: no pass); run only when time is left.
        progress: ``progress(fraction, description)``, fractions rising to 1.0.
        request_timeout_s: bound on every single read of a reply, seconds.

    Raises:
        InputError: bad arguments or an unknown ``model``.
        ServerProbeError: the server failed every request.
    """
    lengths = sorted({int(n) for n in prompt_lengths})
    if not lengths or lengths[0] < 8 or lengths[-1] > 200_000:
        raise InputError("prompt lengths must be between 8 and 200000 tokens")
    if not 2 <= gen_tokens <= 8192:
        raise InputError("gen_tokens must be between 2 and 8192")
    if time_budget_s <= 0:
        raise InputError("the time budget must be positive")
    t_start = time.perf_counter()
    say = progress or (lambda f, d: None)
    chosen = choose_model(info, model)
    shown = display_model(info, chosen)
    notes: list[str] = []
    if info.engine == "mlx" and not info.models:
        notes.append("mlx_lm.server did not list its models (its /v1/models failed); measured the model on its "
                     "command line, which it calls default_model.")
    others = [m for m in dict.fromkeys(info.models) if m != chosen and not (info.engine == "mlx" and display_model(
        info, chosen) == m.rstrip("/").rsplit("/", 1)[-1])]
    if others and model is None:
        notes.append(f"{info.label} also serves {', '.join(others[:8])}{' …' if len(others) > 8 else ''}; measure "
                     "another with --server-model NAME (or the Model box in the app).")
    rng = random.Random()
    opts = {"chat": False, "minimal": False}
    say(0.02, f"warming up {info.label} ({shown})")
    warm_words = 48
    warm = None
    for attempt in range(3):
        try:
            warm = _stream(info, chosen, _prompt(warm_words, rng), 24, request_timeout_s, opts, temperature=1.0)
            break
        except ServerProbeError as e:
            if info.api != "openai" or attempt == 2:
                raise
            if "HTTP 404" in str(e) and not opts["chat"]:
                opts["chat"] = True  # a chat-only server
                notes.append("The server has no /v1/completions; measured through /v1/chat/completions (its chat "
                             "template adds a few prompt tokens).")
            elif ("HTTP 400" in str(e) or "HTTP 422" in str(e)) and not opts["minimal"]:
                opts["minimal"] = True  # a strict server refusing stream_options / ignore_eos
                notes.append("The server refused the optional fields stream_options / ignore_eos; measured with "
                             "standard fields only (token counts may then be estimates).")
            else:
                raise
    assert warm is not None
    pn_warm = _counts(info.api, warm.report)["prompt"]
    tpw = (pn_warm / (warm_words + _SUFFIX_WORDS)) if pn_warm else DEFAULT_TOKENS_PER_WORD
    if not pn_warm:
        notes.append(f"{info.label} does not report prompt token counts here; prompt sizes are estimates "
                     f"({DEFAULT_TOKENS_PER_WORD:g} tokens per random word).")
    warm_run = _run_of(info, warm, warm_words, tpw)
    vocab = _vocab("".join(warm.text))
    if warm_run.load_s and warm_run.load_s > 0.5:
        notes.append(f"The first request loaded the model ({warm_run.load_s:.1f} s); it is not part of the runs.")
    runs: list[ServerRun] = []
    reported: list[dict[str, Any]] = []
    skipped: list[int] = []
    for i, n in enumerate(lengths):
        left = time_budget_s - (time.perf_counter() - t_start)
        ref = runs[-1] if runs else warm_run
        est = n / max(ref.prefill_tps, 1e-6) + gen_tokens / max(ref.decode_tps or 1.0, 1e-6)
        if runs and est > left:
            skipped.append(n)
            continue
        say(0.05 + 0.8 * i / len(lengths), f"prompt of {n} tokens")
        words = max(4, round(n / tpw) - _SUFFIX_WORDS)
        s = _stream(info, chosen, _prompt(words, rng, vocab), gen_tokens, request_timeout_s, opts)
        runs.append(_run_of(info, s, words, tpw))
        reported.append(dict(s.report))
    if skipped:
        notes.append(f"Skipped prompts of {', '.join(map(str, skipped))} tokens: they would not finish within the "
                     f"{time_budget_s:g} s budget.")
    hits = [r for r in runs if r.cached_tokens > 0.1 * r.prompt_tokens]
    if hits:
        notes.append("The server's prompt cache served part of the random prompts ("
                     + ", ".join(f"{r.cached_tokens} of {r.prompt_tokens}" for r in hits)
                     + " tokens); prefill tok/s counts only the tokens it computed.")
    short = [r for r in runs if r.gen_tokens < gen_tokens]
    if short:
        notes.append(f"The model stopped before {gen_tokens} tokens in {len(short)} run(s) (end of answer); decode "
                     "rates use the tokens it did produce.")
    gpu_share, ps_entry = _gpu_share(info, chosen)
    details = dict(info.details)
    if ps_entry is not None:
        details["running"] = ps_entry
        if gpu_share is not None and gpu_share < 0.98:
            notes.append(f"{info.label} keeps {1 - gpu_share:.0%} of {shown} in system RAM (size_vram / size "
                         f"= {gpu_share:.0%}).")
    batching = None
    decodes = sorted(r.decode_tps for r in runs if r.decode_tps)
    single = decodes[len(decodes) // 2] if decodes else None
    left = time_budget_s - (time.perf_counter() - t_start)
    if concurrency >= 2 and single and runs:
        need = runs[0].ttft_s * concurrency + gen_tokens / single
        if need * 1.5 < left:
            say(0.88, f"{concurrency} streams at once")
            batching = _batching(info, chosen, max(4, round(lengths[0] / tpw) - _SUFFIX_WORDS), gen_tokens, concurrency,
                                 single, request_timeout_s, opts, vocab)
        else:
            notes.append("No time left in the budget for the concurrent-streams pass.")
    say(1.0, "done")
    return ServerProbeResult(
        engine=info.engine, engine_label=info.label, api=info.api, url=info.url, model=shown, models=info.models,
        server_runs=runs, server_reported=reported, gpu_share=gpu_share, batching=batching,
        disagreements=_disagreements(info.label, runs), notes=notes, details=details,
        duration_s=round(time.perf_counter() - t_start, 3),
    )
