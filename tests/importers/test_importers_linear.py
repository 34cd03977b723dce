"""Every parser, the detector and the normaliser take time linear in their input.

A paste reaches the importers from the API, the paste box and the CLI; one quadratic scan on 200k
hostile characters held the interpreter for minutes (issue 17). Each check times the same kind of
hostile input at two sizes, ten times apart, and requires the time to grow well under 30-fold (a
quadratic scan grows ~100-fold). Times under a floor are not compared: there the clock's noise
dominates, and a quadratic scan of the larger input is far above it.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

import pytest

from advisor.importers import detect_format, parse_output
from advisor.importers._json import find_json, loads_lenient, scrape_pairs
from advisor.importers._normalise import normalise_lines
from advisor.importers._registry import importers

MAX_RATIO = 30.0
FLOOR_S = 0.03


def _rep(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


# Inputs that made scans restart or backtrack: unfinished strings, escapes, long runs, many openers.
HOSTILE: dict[str, Callable[[int], str]] = {
    "unfinished JSON string": lambda n: '{"k": "' + "x" * n,
    "escaped quotes, never closed": lambda n: '{"' + _rep('a\\"', n),
    "key, colon, quote": lambda n: _rep('a:"', n),
    "key, colon, single quote": lambda n: _rep("a:'", n),
    "one long word": lambda n: "x" * n,
    "tabs": lambda n: "\t" * n,
    "spaces between words": lambda n: "a" + " " * n + "b",
    "pipes and tabs": lambda n: _rep("|\t", n),
    "many numbers": lambda n: _rep("1.5 ", n),
    "decimal commas": lambda n: _rep("1,", n),
    "unclosed arrays, one per line": lambda n: _rep("[1,1,1,\n", n),
    "unclosed objects, one per line": lambda n: _rep('{"a": 1,\n', n),
    "unclosed strings, one per line": lambda n: _rep('{"a": "b\n', n),
    "brackets": lambda n: "[" * n,
    "braces": lambda n: "{" * n,
    "newlines": lambda n: "\n" * n,
    "blank lines in an object": lambda n: "{\n" + "\n" * n + "x",
    "commas and newlines": lambda n: _rep(",\n", n),
    "elisions": lambda n: _rep("[...", n),
    "open parentheses": lambda n: _rep("(a\n)b\n", n),
    "lines at a terminal width": lambda n: _rep("y" * 80 + "\n", n),
    "log prefixes": lambda n: _rep("[1] 1.00.000.000 I ", n),
    "quote markers": lambda n: _rep("> ", n),
    "timing fragments": lambda n: _rep("prompt eval time = 1 ms / ", n),
    "textgen fragments": lambda n: _rep("Output generated in 1 seconds (", n),
    "koboldcpp fragments": lambda n: _rep("CtxLimit: 1/2, Process:1s (", n),
    "ollama repr fragments": lambda n: _rep("eval_count=1 eval_duration=", n),
    "table header, endless row": lambda n: "| test | t/s |" + _rep("|", n),
    "benchmark block, endless keys": lambda n: (
        "============ Serving Benchmark Result ============\n" + _rep("Max reqeuest concurrency: 1\n", n)
    ),
    "llama-bench JSON cut short": lambda n: (
        "[\n" + _rep('  {"avg_ts": 1, "n_prompt": 512, "n_gen": 0},\n', n)
    ),
}


def _seconds(fn: Callable[[str], object], text: str, repeat: int) -> float:
    """The best CPU time of ``repeat`` runs, garbage collection paused (other processes and the
    collector only add noise)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            t0 = time.process_time()
            fn(text)
            best = min(best, time.process_time() - t0)
    finally:
        gc.enable()
    return best


def _assert_linear(fn: Callable[[str], object], make: Callable[[int], str], small: int) -> None:
    """Fails when 10x the input takes ``MAX_RATIO`` times as long, three measurements in a row (a
    busy machine can spoil one; a quadratic scan fails every one)."""
    a, b = make(small), make(10 * small)
    fn(a)  # warm caches (compiled patterns, the registry)
    ratios = []
    for _ in range(3):
        t_small, t_big = _seconds(fn, a, 3), _seconds(fn, b, 1)
        if t_big <= FLOOR_S or t_big / max(t_small, 1e-6) < MAX_RATIO:
            return
        ratios.append(f"{t_small:.4f} s -> {t_big:.4f} s")
    raise AssertionError(f"not linear: {'; '.join(ratios)} for 10x the input")


def _parse(text: str) -> object:
    return parse_output(text, max_bytes=10_000_000)


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_parse_output_is_linear(kind: str) -> None:
    _assert_linear(_parse, HOSTILE[kind], 10_000)


@pytest.mark.parametrize(
    "fn",
    [normalise_lines, lambda t: find_json(t.split("\n")), scrape_pairs, loads_lenient, detect_format],
    ids=["normalise", "find_json", "scrape_pairs", "loads_lenient", "detect_format"],
)
@pytest.mark.parametrize(
    "kind",
    [
        "unfinished JSON string",
        "escaped quotes, never closed",
        "key, colon, quote",
        "unclosed strings, one per line",
    ],
)
def test_json_and_normalising_helpers_are_linear(fn: Callable[[str], object], kind: str) -> None:
    _assert_linear(fn, HOSTILE[kind], 20_000)


_RECORDS = [r for r in importers() if r.parse_text is not None and r.examples]


@pytest.mark.parametrize("record", _RECORDS, ids=[r.name for r in _RECORDS])
def test_each_text_parser_is_linear_on_its_own_format(record) -> None:
    """The format's own example, repeated, and flattened into one endless line."""
    example = record.examples[0].text
    parser = record.parse_text
    _assert_linear(lambda t: parser(normalise_lines(t)), lambda n: _rep(example + "\n", n), 10_000)
    flat = example.replace("\n", " ")
    _assert_linear(lambda t: parser(t.split("\n")), lambda n: _rep(flat, n), 10_000)


def test_the_timing_check_can_fail() -> None:
    """The check itself: a quadratic function is caught."""

    def quadratic(text: str) -> int:
        return sum(text.count("x", 0, i) for i in range(0, len(text), 4))

    with pytest.raises(AssertionError):
        _assert_linear(quadratic, lambda n: "x" * n, 10_000)  # big enough to clear FLOOR_S on a fast machine
