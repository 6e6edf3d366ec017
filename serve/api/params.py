"""Query-parameter validation shared by every route (docs/decisions.md: where the contract is silent)."""

from __future__ import annotations

import datetime as dt
import re

from starlette.requests import Request

from foundations.problem_details import ProblemError
from public.openapi import BLANK_CHARACTERS, MAX_FILTER_LENGTH

# Longer than any limit can be: digits beyond this are clamped without being converted.
_LIMIT_DIGITS = 9
# A character that is neither white space nor NUL (the document's REQUIRED_TEXT_PATTERN).
_NOT_BLANK = re.compile(f"[^\\u0000{BLANK_CHARACTERS}]")


def bad(name: str, message: str) -> ProblemError:
    return ProblemError(400, f"Query parameter '{name}' {message}.", errors=[{"parameter": name, "message": message}])


def required_text(request: Request, name: str, max_length: int) -> str:
    value = request.query_params.get(name)
    if value is None or not _NOT_BLANK.search(value):
        raise bad(name, "is required")
    if len(value) > max_length:
        raise bad(name, f"is longer than {max_length} characters")
    if "\x00" in value:
        raise bad(name, "contains a NUL character")
    return value


def optional_text(request: Request, name: str, max_length: int = MAX_FILTER_LENGTH) -> str | None:
    value = request.query_params.get(name)
    if value is None or value == "":
        return None
    if len(value) > max_length or "\x00" in value:
        raise bad(name, f"must be at most {max_length} characters of text")
    return value


def limit(request: Request, default: int, maximum: int) -> int:
    """A non-negative integer; above ``maximum`` it is clamped to the maximum."""
    raw = request.query_params.get("limit")
    if raw is None:
        return default
    if not raw.isascii() or not raw.isdigit():
        raise bad("limit", f"must be a whole number from 0 (default {default}, maximum {maximum})")
    if len(raw.lstrip("0")) > _LIMIT_DIGITS:
        return maximum
    return min(int(raw), maximum)


def _parse_moment(raw: str) -> dt.datetime:
    if len(raw) == 10:
        return dt.datetime.combine(dt.date.fromisoformat(raw), dt.time(), dt.UTC)
    try:
        return dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        # An unencoded '+' of a UTC offset arrives as a space: 2026-05-01T12:00:00 02:00.
        head, _, offset = raw.rpartition(" ")
        if not head:
            raise
        return dt.datetime.fromisoformat(f"{head}+{offset}")


def since(request: Request) -> dt.datetime | None:
    """An ISO 8601 date or date-time; a date means its midnight UTC, a naive time is UTC."""
    raw = request.query_params.get("since")
    if raw is None:
        return None
    try:
        moment = _parse_moment(raw)
        moment = moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
        return moment.astimezone(dt.UTC)  # an offset at the edge of the calendar overflows here
    except (ValueError, OverflowError) as error:
        raise bad("since", "must be an ISO 8601 date (2026-05-01) or date-time (2026-05-01T12:00:00Z)") from error
