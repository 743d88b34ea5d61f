"""A memory body as HTML people like to read: CommonMark (headings, lists, code, tables) with
`[[links]]` to other memories, then sanitised by nh3 (Rust's ammonia) so nothing a body holds
can run: no script, no event attributes, no `javascript:` links. Raw HTML in a body is shown as text."""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

from markupsafe import Markup

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
    """Turn `[[Name]]` / `[[file.md|label]]` in text (never in code) into links; env["resolve"] maps a target to a URL or None."""
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


def render(body: str, resolve: Callable[[str], str | None] = lambda target: None) -> Markup:
    """Sanitised HTML of a Markdown body; `resolve` gives the URL of a `[[link]]`'s memory (None: left as text)."""
    return sanitize(_parser().render(body, {"resolve": resolve}))


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
