"""A memory body as HTML people like to read: CommonMark (headings, lists, code, tables) with
`[[links]]` to other memories, then sanitised by nh3 (Rust's ammonia) so nothing a body holds
can run: no script, no event attributes, no `javascript:` links. Raw HTML in a body is shown as text."""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

from markupsafe import Markup, escape

from memoryd.base import limits

WIKILINK = re.compile(r"\[\[([^\[\]\n|]+)(?:\|([^\[\]\n]+))?\]\]")
ALLOWED_TAGS = frozenset(
    {
        "a",
        "p",
        "br",
        "hr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "ul",
        "ol",
        "li",
        "blockquote",
        "pre",
        "code",
        "em",
        "strong",
        "s",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "img",
    }
)
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title", "class"},
    "code": {"class"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})


@functools.cache
def _parser() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    md.core.ruler.push("wikilinks", _wikilinks)
    return md


def _wikilinks(state: Any) -> None:
    """Turn `[[Name]]` / `[[file.md|label]]` in text (never in code) into links; env["resolve"] maps a target to a URL
    or None."""
    from markdown_it.token import Token

    resolve: Callable[[str], str | None] = state.env.get("resolve") or (lambda target: None)
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        out: list[Token] = []
        for tok in block.children:
            if tok.type != "text" or "[[" not in tok.content:
                out.append(tok)
                continue
            pos = 0
            for m in WIKILINK.finditer(tok.content):
                if m.start() > pos:
                    out.append(_text(Token, tok.content[pos : m.start()]))
                target, label = m.group(1).strip(), (m.group(2) or m.group(1)).strip()
                url = resolve(target)
                if url is None:
                    out.append(_text(Token, m.group(0)))
                else:
                    link = Token("link_open", "a", 1)
                    link.attrs = {"href": url, "class": "wikilink"}
                    out += [link, _text(Token, label), Token("link_close", "a", -1)]
                pos = m.end()
            if pos < len(tok.content):
                out.append(_text(Token, tok.content[pos:]))
        block.children = out


def _text(token_class: Any, content: str) -> Any:
    tok = token_class("text", "", 0)
    tok.content = content
    return tok


def render(body: str, resolve: Callable[[str], str | None] = lambda target: None, *, raw_url: str = "") -> Markup:
    """Sanitised HTML of a Markdown body; `resolve` gives the URL of a `[[link]]`'s memory (None: left as text).

    Bounded (issue 41: 900 KB of `[` took 10-48 s and held /v1/health; issue 52): the first
    MARKDOWN_RENDER_MAX_CHARS are rendered, then a note links to the whole text (`raw_url`); a body is rendered block
    by block (blank-line separated, code fences kept whole); a block over MARKDOWN_BLOCK_MAX_CHARS or with more than
    MARKDOWN_BLOCK_MAX_DELIMITERS of the characters that cost the parser (`[`, `*`, `_`, ...), and every block once
    MARKDOWN_RENDER_BUDGET_SECONDS are spent, is shown as escaped plain text instead. Pages call this on the
    server's worker threads, never on its event loop (/v1/health answers there); running renders one at a time
    was tried (issue 52) and only slowed four views at once 2x, /v1/health the same."""
    shown, cut = _head(body, limits.MARKDOWN_RENDER_MAX_CHARS)
    html = _render(shown, {"resolve": resolve}, _parser())
    if cut > 0:
        whole = f'<a href="{escape(raw_url)}">the whole text</a>' if raw_url else "the file itself"
        html += f"<p><em>… {cut:,} more characters not shown: read {whole}.</em></p>"
    return sanitize(html)


def _head(body: str, limit: int) -> tuple[str, int]:
    """The body's first `limit` characters, cut at the last line end within them when there is one, and how many
    characters are left out."""
    if len(body) <= limit:
        return body, 0
    head = body[:limit]
    head = head[: head.rfind("\n") + 1] or head
    return head, len(body) - len(head)


def _render(body: str, env: dict[str, Any], parser: Any) -> str:
    """Markdown's HTML of the body, block by block within the time budget (unsanitised)."""
    if _cheap(body):
        return str(parser.render(body, env))
    html, deadline = [], time.perf_counter() + limits.MARKDOWN_RENDER_BUDGET_SECONDS
    for block in _blocks(body):
        if not _cheap(block) or time.perf_counter() > deadline:
            html.append(f"<pre>{escape(block)}</pre>")
        else:
            html.append(parser.render(block, env))
    return "".join(html)


_DELIMITERS = "[]!*_`<"


def _cheap(text: str) -> bool:
    """Renders in a few ms at most: markdown-it's cost grows with the delimiters it must match, ~40 µs each."""
    return len(text) <= limits.MARKDOWN_BLOCK_MAX_CHARS and (
        len(text) <= limits.MARKDOWN_BLOCK_MAX_DELIMITERS
        or sum(map(text.count, _DELIMITERS)) <= limits.MARKDOWN_BLOCK_MAX_DELIMITERS
    )


def _blocks(body: str) -> Iterator[str]:
    """The body cut at blank lines outside fenced code: pieces Markdown renders the same apart as together
    (but for a loose list split in two and a reference link defined in another block)."""
    lines: list[str] = []
    fence = ""
    for line in body.splitlines(keepends=True):
        stripped = line.lstrip()
        if fence and stripped.startswith(fence):
            fence = ""
        elif not fence and stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        if not fence and not line.strip() and lines:
            yield "".join(lines)
            lines = []
            continue
        lines.append(line)
    if lines:
        yield "".join(lines)


def sanitize(html: str) -> Markup:
    """Only the tags and attributes rendered Markdown needs, links to http(s)/mailto or relative URLs."""
    import nh3

    return Markup(
        nh3.clean(
            html,
            tags=set(ALLOWED_TAGS),
            attributes={k: set(v) for k, v in ALLOWED_ATTRIBUTES.items()},
            url_schemes=set(URL_SCHEMES),
            link_rel="noopener noreferrer",
        )
    )


def link_resolver(headers: list[Any], url_of: Callable[[str], str]) -> Callable[[str], str | None]:
    """`[[…]]` names a memory by its file name (with or without .md) or its name, case-insensitively."""
    by_key: dict[str, str] = {}
    for h in headers:
        for key in (h.filename, h.filename.removesuffix(".md"), h.name):
            by_key.setdefault(key.casefold(), h.filename)

    def resolve(target: str) -> str | None:
        filename = by_key.get(target.casefold())
        return url_of(filename) if filename else None

    return resolve
