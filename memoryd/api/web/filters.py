"""How the pages show times and inline code: Jinja filters, escaped here, so a template never builds HTML.

A time goes out as `<time datetime="…Z">` with a readable UTC text; static/time.js rewrites the text
in the viewer's own time zone (the UTC text stays when scripts are off).
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

from markupsafe import Markup, escape

_TICKS = re.compile(r"`([^`\n]+)`")


def as_utc(value: float | str | datetime | None) -> datetime | None:
    """A Unix time, an ISO 8601 text (with `Z`, an offset, or naive meaning UTC) or a datetime, in UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, (int, float)):
        return datetime.fromtimestamp(float(value), UTC)
    else:
        try:
            moment = datetime.fromisoformat(str(value).strip())
        except ValueError:
            return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def when(value: float | str | datetime | None) -> Markup:
    """A `<time>` element: machine-readable to the second, readable to the minute ("2026-11-27 09:17 UTC")."""
    if isinstance(value, (int, float)) and value:  # the common case (a row per memory): one gmtime, one strftime
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(value))
    else:
        moment = as_utc(value)
        if moment is None:
            return Markup("-") if not value else escape(str(value))  # not a time we can read: shown as it is
        stamp = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    # Digits and fixed words only, nothing to escape.
    return Markup(f'<time datetime="{stamp}">{stamp[:10]} {stamp[11:16]} UTC</time>')


def code(text: str | None) -> Markup:
    """Plain text with its `backticked` spans as code (the stale reasons and the dream notes use them)."""
    escaped = str(escape(text or ""))
    return Markup(_TICKS.sub(lambda m: f"<code>{m.group(1)}</code>", escaped))
