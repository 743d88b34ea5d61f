"""The one dependency that reads a memory's text from a form (the edit form, the new-memory form, a review item's)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Form

from memoryd.api.web.conflict import Draft


def memory_form(
    name: str = Form(...), description: str = Form(...), body: str = Form(""), type: str = Form("")
) -> Draft:
    """A memory's text as a form sends it (the edit form, a review item's form); browsers send a textarea's lines
    with CRLF, memory files use LF."""
    return Draft(name=name, description=description, body=body.replace("\r\n", "\n"), type=type)


MemoryFormDep = Annotated[Draft, Depends(memory_form)]
