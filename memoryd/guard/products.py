"""Libraries a rule names as products ("MUI", "Font Awesome", "scikit-learn"), read from data/products.toml: a list
item that is a product's spelling gives the packages code imports and managers install for it (`@mui`, `bs4`).

It does NOT find the forbidding clause nor its list (`propose.py`); it only says what one list item names.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from memoryd.relevance.lexicon import shared_rows


@dataclass(frozen=True)
class Product:
    """One row: the spellings prose uses, the package names or scopes, and the ecosystem they come from."""

    names: tuple[str, ...]
    packages: tuple[str, ...]
    ecosystem: str


@dataclass(frozen=True)
class ProductRows:
    by_name: dict[str, Product]  # each spelling, casefolded
    tails: tuple[str, ...]  # words that may trail a product in an item ("Radix primitives directly")
    rest: frozenset[str]  # items that stand for the rest of a list ("etc.")
    exceptions: tuple[str, ...]  # words after a clause that make it conditional ("unless")
    table: tuple[Product, ...]


@cache
def rows() -> ProductRows:
    text = resources.files("memoryd.guard").joinpath("data", "products.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    table = tuple(Product(tuple(r["names"]), tuple(r["packages"]), r["ecosystem"]) for r in data["product"])
    cues = shared_rows("library_cues", "guard")["words"]
    return ProductRows(
        {name.casefold(): p for p in table for name in p.names},
        tuple(data["items"]["tails"]) + tuple(cues),
        frozenset(data["items"]["rest"]),
        tuple(data["items"]["exceptions"]),
        table,
    )


def main_package(name: str) -> str:
    """The first package of the product a name spells (`Day.js` -> dayjs, `Moment.js` -> moment), "" for none."""
    product = rows().by_name.get(name.strip().casefold())
    return product.packages[0] if product is not None else ""


def product_of(item: str, leads: frozenset[str]) -> Product | None:
    """The product one list item names: the item is a spelling once the `leads` before it ("use", "the") and any
    tail words after it ("directly", "library") are dropped; any other word makes it no product ("MUI's Grid")."""
    words = item.strip(" .;:*").split()
    while words and words[0].casefold() in leads:
        words = words[1:]
    while words:
        said = " ".join(words)
        product = rows().by_name.get(said.casefold())
        if product is not None and said.islower() and product.packages == (said,):
            return None  # "lodash": a bare name, judged by package_evidence.py; "Lodash" is the product
        if product is not None or len(words) == 1 or words[-1].casefold().strip(".") not in rows().tails:
            return product  # a spelling may end in a tail word itself ("Material Icons")
        words = words[:-1]
    return None


def listed_products(text: str, leads: frozenset[str], *, whole: bool) -> list[Product]:
    """The products a list said in prose names ("Font Awesome, Heroicons, or Material Icons, etc."); `/` stays in
    an item (`shadcn/ui` is one name). `whole`: every item must be a product (the clause's own list: "don't use MUI
    or Chakra in the worker" names a place too), else none; otherwise other items are examples skipped."""
    out = []
    for item in re.split(r"\s*(?:,|\bor\b|\band\b|\bnor\b)\s*", text):
        words = item.strip(" .;:*").casefold().split()
        if " ".join(words) in rows().rest or all(w in leads for w in words):
            continue  # "etc.", or the verbs of the clause ("install or use MUI")
        product = product_of(item, leads)
        if product is None and whole:
            return []
        out += [product] if product is not None else []
    return out


def conditional(after: str) -> bool:
    """The text after a clause starts with an exception ("unless timezone handling is needed"): the clause forbids
    less than every import of what it names."""
    words = re.findall(r"[a-z]+", after.casefold())
    return bool(words) and words[0] in rows().exceptions
