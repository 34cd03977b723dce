"""The ``advisor`` command line (typer). Every command takes ``--json`` and then prints one JSON object.

Errors the user can fix print one clear line on stderr and exit with status 2; no traceback.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from typer.core import TyperGroup

from advisor.cli_db import db_app
from advisor.cli_support import JSON_OPT, STORE_OPT, emit, fail, guard, json_default, open_store, say
from advisor.errors import load_json
from advisor.render.options import DEFAULT_TPS_TARGET, DEFAULT_TTFT_TARGET_S
from advisor.report import json_safe


class _Commands(TyperGroup):
    """The command group; lets ``probe --server`` stand without a URL (see :func:`server_argv`).

    With ``--json`` a wrong flag or value (``--concurrency abc``, a missing argument) is also one JSON
    object, ``{"error": ...}``, exit status 2. A failure that is the advisor's own (a bug) is one line,
    exit status 1, never a traceback (``ADVISOR_LOG=DEBUG`` logs it).
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta["advisor_json"] = "--json" in args
        return super().parse_args(ctx, server_argv(args))

    def invoke(self, ctx: Any) -> Any:
        as_json = bool(ctx.meta.get("advisor_json"))
        try:
            return super().invoke(ctx)
        except Exception as e:  # noqa: BLE001 - last resort: one line, never a traceback
            kinds = {c.__name__ for c in type(e).__mro__}  # click's classes, or those typer vendors
            if "UsageError" in kinds and as_json:
                typer.echo(json.dumps({"error": f"{e.format_message()} (see --help)"},  # type: ignore[attr-defined]
                                      ensure_ascii=False))
                raise typer.Exit(getattr(e, "exit_code", 2)) from None
            if kinds & {"ClickException", "Exit", "Abort"}:
                raise
            if isinstance(e, BrokenPipeError):  # "advisor compare | head": the reader stopped; not a failure
                try:
                    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - Python flushes stdout at exit
                except OSError:
                    pass
                raise typer.Exit(0) from None
            import logging

            logging.getLogger("advisor").debug("unexpected error", exc_info=True)
            fail(f"the advisor failed on its own ({type(e).__name__}); this is a bug, not a problem with "
                  "your input. ADVISOR_LOG=DEBUG shows the details.", as_json, code=1)


app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, cls=_Commands,
                  help="Why is my local language model slow, and what should I buy or change?")
app.add_typer(db_app, name="db")

#: ``--server`` given without a URL: probe the servers found on the loopback default ports.
SERVER_FOUND = "auto"


def _scenario(**kw: Any) -> Any:
    from advisor.models import Scenario
    from advisor.understand.engine import check_backend

    check_backend(kw.get("backend"))
    return Scenario(**{k: v for k, v in kw.items() if v is not None})


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to bind; 0.0.0.0 exposes the app to the network."),
    port: int = typer.Option(7860, help="Port."),
    store: Optional[str] = STORE_OPT,
    allow_probe: bool = typer.Option(False, "--allow-probe", help="Allow remote visitors to run the probe."),
    share: bool = typer.Option(False, "--share", help="Create a public Gradio share link (off by default)."),
) -> None:
    """Launch the chat app (Gradio) on http://HOST:PORT."""
    from ui.server import launch

    if not 1 <= port <= 65535:
        fail(f"--port must be between 1 and 65535 (got {port})", False)
    problem = _host_problem(host)
    if problem:
        fail(f"cannot serve on {host}: {problem}", False)
    try:
        launch(store, host=host, port=port, allow_probe=allow_probe or None, share=share)
    except KeyboardInterrupt:
        return
    except Exception as e:  # noqa: BLE001 - a server that cannot start says why in one line
        from advisor.errors import AdvisorError

        msg = str(e).splitlines()[0] if isinstance(e, AdvisorError) else f"cannot serve on {host}:{port}: {str(e).splitlines()[0][:200]}"
        fail(msg, False)


def _host_problem(host: str) -> str | None:
    """Why ``host`` cannot be bound (not an address or a name this computer resolves), or None."""
    import ipaddress
    import socket

    h = (host or "").strip().strip("[]")
    if not h:
        return "the host is empty (use 127.0.0.1, or 0.0.0.0 for every interface)"
    try:
        ipaddress.ip_address(h)
        return None
    except ValueError:
        pass
    if all(c.isdigit() or c == "." for c in h):
        return "not a valid IPv4 address (each of the four numbers is 0-255)"
    try:
        socket.getaddrinfo(h, None)
    except (OSError, UnicodeError):
        return "not an IP address or a host name this computer can resolve"
    return None


# A message may start with a dash ("-5 tok/s after the update?"): text that is not one of ask's options is the message.
@app.command(context_settings={"ignore_unknown_options": True})
def ask(
    text: str = typer.Argument(..., help="What you would write in the chat."),
    facts: Optional[str] = typer.Option(None, "--facts", help="JSON of facts from a previous turn (its 'facts')."),
    store: Optional[str] = STORE_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """One chat turn from the terminal (same engine as the app)."""
    from advisor import service
    from advisor.models import parse_scenario

    def run() -> Any:
        f = parse_scenario(load_json(facts, what="--facts"), what="--facts JSON") if facts else None
        return service.ask(open_store(store), text, f)

    r = guard(run, as_json)
    text_out = r.reply
    if r.question is not None and r.question.choices:  # the app shows them as buttons; a terminal lists them
        text_out += ("\n\nFor example: " + " · ".join(r.question.choices) + "\n\nTo answer, run `advisor ask --json` "
                     f"and pass its facts on: `advisor ask \"{r.question.choices[0]}\" --facts '<its facts JSON>'`")
    say(r, as_json, text_out)


@app.command()
def predict(
    hardware: Optional[str] = typer.Option(None, "--hardware", "-h", help="Catalog id or name, e.g. 'M2 Max 38-core'."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Model id or name, e.g. 'llama 3.1 8b'."),
    quant: Optional[str] = typer.Option(None, "--quant", "-q", help="Weight format, e.g. Q4_K_M, '4-bit', F16."),
    backend: Optional[str] = typer.Option(None, "--backend", "-e", help="Engine: llama.cpp, ollama, mlx, vllm ..."),
    prompt_tokens: Optional[int] = typer.Option(None, "--prompt-tokens"),
    gen_tokens: Optional[int] = typer.Option(None, "--gen-tokens"),
    depth: Optional[int] = typer.Option(None, "--depth", min=0, help="Tokens already in the KV cache."),
    concurrency: Optional[int] = typer.Option(None, "--concurrency"),
    params_b: Optional[float] = typer.Option(None, "--params-b", help="Model size in billions (unknown models)."),
    memory_gb: Optional[float] = typer.Option(None, "--memory-gb"),
    bandwidth_gbs: Optional[float] = typer.Option(None, "--bandwidth-gbs", help="Memory bandwidth of hardware not in the catalog."),
    tflops: Optional[float] = typer.Option(None, "--tflops", help="FP16 TFLOPS of hardware not in the catalog."),
    input: Optional[Path] = typer.Option(None, "--input", help="CSV or JSONL: one prediction per row."),
    store: Optional[str] = STORE_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """Predicted prefill/decode tok/s, TTFT and memory fit."""
    from advisor import report, service

    st = guard(lambda: open_store(store), as_json)
    if input is not None:
        given = [f for f, v in (("--hardware", hardware), ("--model", model), ("--quant", quant), ("--backend", backend),
                                ("--params-b", params_b), ("--memory-gb", memory_gb), ("--prompt-tokens", prompt_tokens),
                                ("--gen-tokens", gen_tokens), ("--concurrency", concurrency)) if v is not None]
        if given:
            fail(f"--input predicts the rows of the file; {', '.join(given)} would be ignored: put them in the file's "
                  "columns, or leave --input out", as_json)
        _predict_rows(st, input, as_json)
        return
    sc = guard(lambda: _scenario(hardware=hardware, model=model, quant=quant, backend=backend,
                                  prompt_tokens=prompt_tokens, gen_tokens=gen_tokens, depth=depth,
                                  concurrency=concurrency, params_b=params_b, memory_gb=memory_gb,
                                  bandwidth_gbs=bandwidth_gbs, tflops=tflops), as_json)
    p = guard(lambda: service.predict_scenario(st, sc), as_json)
    say(p, as_json, report.plain_answer(p) + "\n\n" + report.prediction_markdown(p)
         + ("\n\n**Assumptions**\n\n" + "\n".join(f"- {report.tidy(a)}" for a in p.assumptions)
            if p.assumptions else ""))


def _row_error(e: Exception) -> str:
    from pydantic import ValidationError

    if isinstance(e, ValidationError):
        from advisor.compare.request import validation_message

        return validation_message(e).removeprefix("invalid input: ")
    return str(e).splitlines()[0][:300]


def _predict_rows(st: Any, path: Path, as_json: bool) -> None:
    """One JSON object per row, in order; exit status 2 when no row could be predicted."""
    from advisor.cli_input import read_rows, row_measured, row_scenario

    rows = guard(lambda: read_rows(path), as_json)
    if not rows:
        fail(f"{path} has no rows to predict (expected a CSV header and rows, or JSON lines)", as_json)
    done = 0
    errs: dict[str, list[float]] = {"prefill": [], "decode": []}
    for i, r in enumerate(rows, 1):
        if "_error" in r:
            typer.echo(json.dumps({"row": i, "error": r["_error"]}))
            continue
        try:
            measured = row_measured(r, f"row {i}")
            p = _predict_row(st, row_scenario(r, f"scenario of row {i}"), r.get("hw_id"))
            out = json_safe(p.model_dump(mode="json"))
            out["row"] = i
            for phase in ("prefill", "decode"):
                m, pred = measured.get(f"{phase}_tps"), out.get(f"{phase}_tps")
                if m:
                    out[f"measured_{phase}_tps"] = m
                    if phase == "prefill" and str(r.get("prompt_tokens") or "").strip() in ("", "0", "0.0"):
                        # a prefill rate depends on the prompt length: without it the two are not comparable
                        out["prefill_error_pct"] = None
                    elif pred:
                        out[f"{phase}_error_pct"] = round((pred / m - 1) * 100, 1)
                        errs[phase].append(abs(pred / m - 1) * 100)
            done += 1
        except Exception as e:  # noqa: BLE001 - one bad row must not stop the others
            out = {"row": i, "error": _row_error(e)}
        typer.echo(json.dumps(out, default=json_default))
    if any(errs.values()):  # a table of measured results: how far the predictions are, on stderr (stdout stays rows)
        import statistics

        typer.echo("; ".join(f"{ph}: median |error| {statistics.median(v):.1f} % over {len(v)} measured rows"
                             for ph, v in errs.items() if v), err=True)
    if not done:
        raise typer.Exit(2)


def _predict_row(st: Any, scenario: Any, hw_id: Any) -> Any:
    """Predict one table row; a hardware name that does not resolve falls back to the row's catalog ``hw_id``."""
    from advisor import service
    from advisor.errors import AdvisorError
    from advisor.understand.resolve import resolve_scenario

    try:
        return service.predict_scenario(st, scenario)
    except AdvisorError:
        hw_id = hw_id.strip() if isinstance(hw_id, str) else ""
        if not hw_id or scenario.hardware == hw_id or resolve_scenario(st, scenario).hardware is not None:
            raise
        try:
            p = service.predict_scenario(st, scenario.model_copy(update={"hardware": hw_id}))
        except AdvisorError:
            raise AdvisorError(f"neither the hardware {str(scenario.hardware)[:80]!r} nor the hw_id {hw_id[:80]!r} "
                               "is in the catalog") from None
        said = (f"The hardware {str(scenario.hardware)[:80]!r} is not in the catalog; predicted for the row's hw_id "
                f"{hw_id[:80]!r} ({p.hardware.get('name', hw_id)}).") if scenario.hardware else \
            f"Hardware from the row's hw_id {hw_id[:80]!r}."
        return p.model_copy(update={"assumptions": [said, *p.assumptions]})


@app.command()
def diagnose(
    input: Optional[Path] = typer.Option(None, "--input", help="Scenario JSON (or a case file with a 'scenario')."),
    hardware: Optional[str] = typer.Option(None, "--hardware"),
    model: Optional[str] = typer.Option(None, "--model"),
    quant: Optional[str] = typer.Option(None, "--quant"),
    backend: Optional[str] = typer.Option(None, "--backend"),
    prompt_tokens: Optional[int] = typer.Option(None, "--prompt-tokens"),
    gen_tokens: Optional[int] = typer.Option(None, "--gen-tokens"),
    depth: Optional[int] = typer.Option(None, "--depth"),
    concurrency: Optional[int] = typer.Option(None, "--concurrency"),
    params_b: Optional[float] = typer.Option(None, "--params-b"),
    memory_gb: Optional[float] = typer.Option(None, "--memory-gb"),
    bandwidth_gbs: Optional[float] = typer.Option(None, "--bandwidth-gbs"),
    tflops: Optional[float] = typer.Option(None, "--tflops"),
    measured_prefill_tps: Optional[float] = typer.Option(None, "--measured-prefill-tps"),
    measured_decode_tps: Optional[float] = typer.Option(None, "--measured-decode-tps"),
    store: Optional[str] = STORE_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """The verdict: bottleneck, normal or not, ranked fixes."""
    from advisor import report, service
    from advisor.models import parse_scenario

    def build() -> Any:
        if input is not None:
            from advisor.cli_input import read_input_file

            data = load_json(read_input_file(input), what=str(input))
            if not isinstance(data, dict):
                raise ValueError("the input file must hold a JSON object")
            sc_data = data.get("scenario", data)
            if not isinstance(sc_data, dict):
                raise ValueError("'scenario' must be a JSON object")
            if "question" in data and "question" not in sc_data:
                sc_data = {**sc_data, "question": data["question"]}
            return parse_scenario(sc_data, what=f"scenario in {input.name}")
        return _scenario(hardware=hardware, model=model, quant=quant, backend=backend, prompt_tokens=prompt_tokens,
                         gen_tokens=gen_tokens, depth=depth, concurrency=concurrency, params_b=params_b,
                         memory_gb=memory_gb, bandwidth_gbs=bandwidth_gbs, tflops=tflops,
                         measured_prefill_tps=measured_prefill_tps, measured_decode_tps=measured_decode_tps)

    sc = guard(build, as_json)
    st = guard(lambda: open_store(store), as_json)
    v = guard(lambda: service.diagnose_scenario(st, sc), as_json)
    say(v, as_json, report.verdict_markdown(v, facts=sc))


@app.command("import")
def import_cmd(
    file: str = typer.Argument(..., help="A file with llama-bench / ollama / mlx-lm / ... output, or - for stdin."),
    hardware: Optional[str] = typer.Option(None, "--hardware", help="The machine the output came from."),
    no_save: bool = typer.Option(False, "--no-save", help="Parse and diagnose without storing."),
    store: Optional[str] = STORE_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """Parse another tool's output, store it, print the verdict."""
    from advisor import report, service

    def read() -> str:
        from advisor.cli_input import MAX_IMPORT_BYTES, decode_text, read_text_file

        expects = "the text a benchmark or server printed (llama-bench, ollama --verbose, ...)"
        if file == "-":
            raw = sys.stdin.buffer.read(MAX_IMPORT_BYTES + 1)
            if len(raw) > MAX_IMPORT_BYTES:
                raise ValueError(f"the input is over {MAX_IMPORT_BYTES // 1_000_000} MB; tool output over that "
                                 "is not read")
            return decode_text(raw, "the input", expects)
        return read_text_file(Path(file), limit=MAX_IMPORT_BYTES, what="tool output", expects=expects)

    text = guard(read, as_json)
    st = guard(lambda: open_store(store), as_json)
    out = guard(lambda: service.import_output(st, text, hardware=hardware, save=not no_save), as_json)
    if not out.measurements:
        fail(out.message, as_json)
    if as_json:
        d = out.model_dump(mode="json", exclude={"measurements", "facts"})
        d["measurements"] = [m.model_dump(mode="json", include={
            "prefill_tps", "decode_tps", "blended_tps", "prompt_tokens", "gen_tokens", "depth", "batch", "backend",
            "model", "quant", "n_gpu_layers", "threads"}) for m in out.measurements]
        emit(d, True)
    else:
        from advisor.render.reply import answer_markdown

        body = report.name_tools(out.message) + "\n\n| model | prompt | answer | prefill tok/s | decode tok/s |\n|---|--:|--:|--:|--:|\n"
        body += "\n".join(
            f"| {' '.join(x for x in (m.model, m.quant) if x) or '?'} | {m.prompt_tokens or 0}"
            + (f" @ depth {m.depth}" if m.depth else "") + f" | {m.gen_tokens or 0}"
            + (f" ×{m.batch}" if m.batch and m.batch > 1 else "")
            + f" | {report.fmt_rate(m.prefill_tps) if m.prefill_tps else '–'}"
            f" | {report.fmt_rate(m.decode_tps) if m.decode_tps else '–'} |" for m in out.measurements[:30])
        if out.verdict:
            body += "\n\n" + answer_markdown(out.verdict, facts=out.facts)
        say(out, False, body)


@app.command()
def probe(
    kernels_only: bool = typer.Option(False, "--kernels-only", help="Only the kernel probe (no model)."),
    model: Optional[str] = typer.Option(None, "--model", help="Local mlx-lm model folder for the model probe."),
    budget: float = typer.Option(15.0, "--budget", help="Time budget for the kernel probe, seconds."),
    server: Optional[str] = typer.Option(
        None, "--server", metavar="[URL]",
        help="Measure the LLM server running here (Ollama, llama-server, vLLM, SGLang, LM Studio, mlx_lm.server) "
        "instead: the one at URL, or those found on the loopback default ports."),
    server_model: Optional[str] = typer.Option(None, "--server-model", help="Which served model to measure."),
    server_budget: float = typer.Option(60.0, "--server-budget", help="Time budget per server, seconds."),
    server_prompts: str = typer.Option("128,512,2048", "--server-prompts", help="Prompt lengths, tokens."),
    server_gen: int = typer.Option(64, "--server-gen-tokens", help="Answer length of every request, tokens."),
    server_streams: int = typer.Option(2, "--server-streams", help="Concurrent streams of the batching pass (0: none)."),
    store: Optional[str] = STORE_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """Measure this machine (memory bandwidth, matmul throughput; a model with --model) and store it."""
    from advisor import report, service
    from advisor.render.terminal import progress_bar

    if server is not None or server_model is not None:
        url = None if server in (None, "", SERVER_FOUND) else server
        _server_probe(lambda: open_store(store), url, server_model, server_budget, server_prompts, server_gen,
                      server_streams, as_json)
        return

    def check_model() -> None:
        if model is None:
            return
        from advisor.probe import resolve_model_path

        p = resolve_model_path(model)  # a folder or a cached Hugging Face repo id; raises ProbeError
        if not (p / "config.json").is_file():
            raise ValueError(f"--model {model}: no config.json in it, so it is not an mlx-lm model folder")

    guard(check_model, as_json)  # before the ~14 s kernel probe, not after it
    st = guard(lambda: open_store(store), as_json)
    with progress_bar(enabled=not as_json) as progress:
        r = guard(lambda: service.run_probe(st, progress=progress, kernels_only=kernels_only or model is None,
                                             model_path=model, time_budget_s=budget), as_json)
    say(r, as_json, report.probe_markdown(r, st))


def _server_probe(open_store: Any, url: str | None, model: str | None, budget: float, prompts: str, gen: int,
                  streams: int, as_json: bool) -> None:
    """``advisor probe --server [URL]``: progress on stderr, one JSON object (``servers`` when several)."""
    from advisor import service
    from advisor.probe.server_report import result_markdown

    def lengths() -> tuple[int, ...]:
        try:
            return tuple(int(x) for x in prompts.split(",") if x.strip())
        except ValueError:
            raise ValueError(f"--server-prompts must be comma-separated token counts, got {prompts!r}") from None

    def progress(frac: float, desc: str) -> None:
        sys.stderr.write(f"[{frac:4.0%}] {desc[:70]}\n")
        sys.stderr.flush()

    def check() -> None:
        import math

        if not (math.isfinite(budget) and 0 < budget <= 3600):
            raise ValueError(f"--server-budget must be a number of seconds between 0 and 3600, got {budget:g}")
        if streams < 0:
            raise ValueError(f"--server-streams must be 0 (no batching pass) or more, got {streams}")

    guard(check, as_json)
    results = guard(lambda: service.run_server_probe(
        open_store, url=url, model=model, allow_remote=bool(url), progress=progress, time_budget_s=budget,
        prompt_lengths=lengths(), gen_tokens=gen, concurrency=streams), as_json)
    if as_json:
        objs = [r.model_dump(mode="json", exclude={"machine"}) for r in results]
        out = dict(objs[0])
        out["machine"] = results[0].machine
        if len(objs) > 1:
            out["servers"] = objs
        emit(out, True)
        return
    emit(None, False, "\n\n".join(result_markdown(r, r.verdict) for r in results))


@app.command()
def compare(
    model: str = typer.Option(..., "--model", help="Model id or name, e.g. 'llama 3.3 70b'."),
    quant: Optional[str] = typer.Option(None, "--quant", help="Weight format (default as in the chat: Q4_K_M; "
                                        "MXFP4 for gpt-oss, MLX 4-bit for mlx, BF16 for vLLM/SGLang)."),
    prompt_tokens: int = typer.Option(2000, "--prompt-tokens"),
    gen_tokens: int = typer.Option(300, "--gen-tokens"),
    concurrency: int = typer.Option(1, "--concurrency", min=1, help="Users (sequences in flight at once, at most)."),
    requests_per_minute: Optional[float] = typer.Option(None, "--requests-per-minute", min=0,
                                                        help="Requests per minute per user (Poisson arrivals)."),
    ttft_target: Optional[float] = typer.Option(
        DEFAULT_TTFT_TARGET_S, "--ttft-target",
        help=f"Target TTFT p95, seconds (0 = no target). Default {DEFAULT_TTFT_TARGET_S:g}, as in the app."),
    tps_per_user: Optional[float] = typer.Option(
        DEFAULT_TPS_TARGET, "--tps-per-user", help=f"Target decode tok/s per user (0 = no target). Default "
        f"{DEFAULT_TPS_TARGET:g} (about twice reading speed), as in the app."),
    candidates: Optional[str] = typer.Option(None, "--candidates", help="Comma-separated hardware ids or names."),
    price: Optional[str] = typer.Option(None, "--price", help="Purchase prices, ID=USD,... (e.g. 'nvidia-h200=32000, 2x 4090=3800')."),
    shared_prefix_tokens: int = typer.Option(0, "--shared-prefix-tokens", min=0,
                                             help="Prompt prefix shared by every request (prefix caching)."),
    kv_quant: str = typer.Option("f16", "--kv-quant", help="KV-cache type: f16, q8_0 or q4_0."),
    backend: Optional[str] = typer.Option(None, "--backend", help="Engine: llama.cpp (default), mlx, vllm ..."),
    chunk_tokens: int = typer.Option(512, "--chunk-tokens", min=16, help="Chunked-prefill chunk, tokens."),
    amortisation_years: float = typer.Option(3.0, "--amortisation-years", help="Years to spread the price over."),
    utilisation: float = typer.Option(0.25, "--utilisation", help="Share of the time generating (for cost)."),
    limit: int = typer.Option(15, "--limit", min=1, help="Candidates to show."),
    store: Optional[str] = STORE_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """Rank hardware for a workload with many users (TTFT under load, batched decode, memory, cost)."""
    from advisor import compare as cmp

    def run() -> Any:
        from advisor.understand.engine import check_backend

        check_backend(backend)
        prices = cmp.parse_prices(price)
        cands = [c.strip() for c in candidates.split(",") if c.strip()] if candidates else None
        return cmp.compare(st, model=model, quant=quant, prompt_tokens=prompt_tokens, gen_tokens=gen_tokens,
                           concurrency=concurrency, requests_per_minute=requests_per_minute,
                           ttft_target_s=ttft_target or None, tps_per_user=tps_per_user or None, candidates=cands, prices=prices,
                           shared_prefix_tokens=shared_prefix_tokens, kv_quant=kv_quant.lower(), backend=backend,
                           chunk_tokens=chunk_tokens, amortisation_years=amortisation_years,
                           utilisation=utilisation, limit=limit)

    st = guard(lambda: open_store(store), as_json)
    out = guard(run, as_json)
    say(out, as_json, cmp.table_markdown(out) + "\n\n" + cmp.notes_markdown(out))


def server_argv(argv: list[str]) -> list[str]:
    """``--server`` without a URL (last, or before another option) → ``--server=auto`` (find servers).

    Typer options always take a value; this keeps ``advisor probe --server [URL]`` as DESIGN.md writes it.
    """
    out = list(argv)
    for i, a in enumerate(out):
        if a == "--server" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out[i] = f"--server={SERVER_FOUND}"
    return out


def main() -> None:
    import os

    level = os.environ.get("ADVISOR_LOG", "WARNING").upper()
    handler = logging.StreamHandler()
    handler.setFormatter(_LogLine("%(asctime)s %(name)s %(message)s", tracebacks=level == "DEBUG"))
    try:
        logging.basicConfig(level=level, handlers=[handler])
    except ValueError:  # ADVISOR_LOG=LOUD: not a level
        logging.basicConfig(level="WARNING", handlers=[handler])
    app()


class _LogLine(logging.Formatter):
    """Log records as one line each; the traceback of a logged exception only with ``ADVISOR_LOG=DEBUG``."""

    def __init__(self, fmt: str, *, tracebacks: bool) -> None:
        super().__init__(fmt)
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_info and not self.tracebacks:
            exc = record.exc_info[1]
            record = logging.makeLogRecord({**record.__dict__, "exc_info": None, "exc_text": None})
            record.msg = f"{record.getMessage()} ({type(exc).__name__}; ADVISOR_LOG=DEBUG shows the traceback)"
            record.args = None
        return super().format(record)


if __name__ == "__main__":
    main()
