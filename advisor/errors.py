"""Exception tree of the advisor.

    AdvisorError                 base: every error a user may see; its message is safe to show
    ├── InputError               bad input (validation, absurd numbers, unreadable text)
    ├── NotFoundError            a hardware/model/format name not in the catalog (carries candidates)
    ├── AmbiguousError           a name that matches several catalog entries (carries candidates)
    ├── ProbeError               the probe could not measure
    │   └── BackendUnavailable   a probe backend (mlx, torch) is not installed or has no device
    ├── ImportParseError         pasted tool output could not be read at all
    └── KnowledgeStoreError      the DuckDB store cannot be used
        ├── StoreLockedError     another process holds the store file
        └── StoreVersionError    the store was written by a newer version of the advisor

Catch :class:`AdvisorError` to show a message to a user; anything else is a bug.
"""

from __future__ import annotations

__all__ = [
    "load_json",
    "AdvisorError",
    "AmbiguousError",
    "BackendUnavailable",
    "ImportParseError",
    "InputError",
    "KnowledgeStoreError",
    "NotFoundError",
    "ProbeError",
    "StoreLockedError",
    "StoreVersionError",
]


class AdvisorError(Exception):
    """Base class: the message is meant for the user."""


class InputError(AdvisorError, ValueError):
    """The input is malformed or out of range."""


class ImpossibleRateError(InputError):
    """A measured rate no machine could reach for the model (a typo or another unit): the caller may judge
    the rest without it."""


class _LookupError(AdvisorError, LookupError):
    """``candidates``: what to show the person; ``candidate_ids``: the catalog ids behind them, where the
    resolver knows them (with the device count the text gave: ``nvidia-h100-pciex2``), for callers that match
    ids instead of reading them back out of the shown names."""

    def __init__(self, message: str, candidates: list[str] | None = None,
                 candidate_ids: list[str] | None = None) -> None:
        super().__init__(message)
        self.candidates = candidates or []
        self.candidate_ids = candidate_ids or []


class NotFoundError(_LookupError):
    """A name is not in the catalog; ``candidates`` lists the closest entries."""


class AmbiguousError(_LookupError):
    """A name matches several catalog entries equally well; ``candidates`` lists them."""


class ProbeError(AdvisorError):
    """The probe failed to measure."""


class BackendUnavailable(ProbeError):
    """A probe backend is not installed or finds no device."""


class ImportParseError(AdvisorError):
    """Pasted tool output could not be read at all."""


class KnowledgeStoreError(AdvisorError):
    """The knowledge store cannot be opened or written."""


class StoreLockedError(KnowledgeStoreError):
    """Another process holds the store file."""


class StoreVersionError(KnowledgeStoreError):
    """The store was made by a newer version of the advisor."""


def load_json(text: str, *, what: str = "input", max_chars: int = 2_000_000) -> object:
    """Parse JSON from a user, turning every failure (bad syntax, 10,000 nested brackets, too big) into
    :class:`InputError` with a short message.

    Raises:
        InputError: the text is not usable JSON.
    """
    import json

    if len(text) > max_chars:
        raise InputError(f"The {what} is {len(text):,} characters; the limit is {max_chars:,}.")
    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(f"The {what} is nested too deeply to be a scenario.") from None
    except ValueError as e:
        raise InputError(f"The {what} is not valid JSON ({str(e).split(':')[0]}).") from None
