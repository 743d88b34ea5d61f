"""Libraries a rule names as products ("MUI", "Font Awesome", "Pillow"): every row of data/products.toml proposes
its packages when a forbidding clause names it, and nothing when a sentence only says the project uses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.guard.acts import Act, commands_of
from memoryd.guard.match import meets
from memoryd.guard.products import rows
from memoryd.guard.propose import propose
from memoryd.guard.rules import Forbid

ROWS = rows().table
SPELLINGS = [(name, p) for p in ROWS for name in p.names]


def _imports(text: str) -> tuple[str, ...]:
    return propose("rule", "", text).imports


def test_table_is_broad_and_each_spelling_names_one_row() -> None:
    assert len(ROWS) >= 60
    spelled = [n.casefold() for p in ROWS for n in p.names]
    assert len(spelled) == len(set(spelled))
    assert {p.ecosystem for p in ROWS} >= {"npm", "pypi"}
    assert all(p.packages and p.names for p in ROWS)


@pytest.mark.parametrize(("name", "product"), SPELLINGS, ids=[n for n, _ in SPELLINGS])
def test_every_spelling_forbidden_proposes_its_packages(name: str, product: object) -> None:
    assert set(_imports(f"Never use {name}.")) >= set(product.packages)  # type: ignore[attr-defined]
    assert set(_imports(f"Don't install {name.upper()} or {name.title()}.")) >= set(product.packages)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("name", "product"), SPELLINGS, ids=[n for n, _ in SPELLINGS])
def test_every_spelling_said_positively_or_not_as_the_object_proposes_nothing(name: str, product: object) -> None:
    assert _imports(f"We use {name} for this.") == ()
    assert _imports(f"The app is built with {name}.") == ()
    assert _imports(f"Never mock {name} internals in tests.") == ()


FORMS = [  # (text, proposed packages), each a form of a forbidding clause that names products
    ("Don't add other state libraries (Redux, MobX, etc.)", {"redux", "@reduxjs", "react-redux", "mobx"}),
    ("Avoid CSS frameworks such as Bootstrap or Bulma.", {"bootstrap", "bulma"}),
    ("Never install or use date libraries (Moment, our-own-dates, Luxon).", {"moment", "luxon"}),
    ("Use Zustand instead of Redux Toolkit.", {"redux", "@reduxjs", "react-redux"}),
    ("Use dayjs, not Moment.js.", {"moment"}),
    ("Do not use Radix primitives directly.", {"@radix-ui"}),
    (
        "Never import Pillow or OpenCV.",
        {"PIL", "pillow", "cv2", "opencv-python", "opencv-contrib-python", "opencv-python-headless"},
    ),
    # the words before the negation use one of a product's packages: that one is never proposed
    ("Use `react-redux` hooks, not Redux Toolkit.", {"redux", "@reduxjs"}),
]

NOT_FORMS = [  # a product named where no clause forbids importing it
    "We migrated from MUI to our own components.",
    "Never use MUI's Grid component for page layout.",
    "Do not write Redux reducers by hand.",
    "Icon libraries we tried: Font Awesome, Heroicons.",
    "Never edit the UI libraries (MUI, Chakra UI) vendored under vendor/.",
    "Don't use underscore or dash in file names.",
    "Never import Pillow or OpenCV in the worker.",  # a place: a trigger would hold every file
]


@pytest.mark.parametrize(("text", "packages"), FORMS)
def test_forms_that_forbid_products(text: str, packages: set[str]) -> None:
    assert set(_imports(text)) == packages


@pytest.mark.parametrize("text", NOT_FORMS)
def test_products_not_forbidden(text: str) -> None:
    assert _imports(text) == ()


def test_no_spelling_is_its_rows_only_package_in_lower_case() -> None:
    """Such a name is a bare name: package_evidence.py judges it ("Avoid lodash" proposes nothing)."""
    assert not [n for p in ROWS for n in p.names if n.islower() and p.packages == (n,)]
    assert _imports("Avoid moment.") == ()
    assert _imports("Avoid Moment.js.") == ("moment",)


@pytest.mark.parametrize("word", sorted(rows().exceptions))
def test_each_exception_after_the_clause_proposes_nothing(word: str) -> None:
    assert _imports(f"Use date-fns instead of Day.js {word} timezones matter.") == ()
    assert _imports(f"Never use icon libraries (Heroicons, Font Awesome) {word} the kit lacks one.") == ()
    assert _imports("Use date-fns instead of Day.js: it is smaller.") == ("dayjs",)  # a reason is no exception


def test_a_product_with_a_js_name_gives_its_row_not_its_name() -> None:
    assert _imports("Never use Day.js.") == ("dayjs",)  # not `day`
    assert _imports("Never use Day.js for new date logic.") == ("dayjs",)  # the name right after the verb
    assert _imports("Never use Moment.js for new date logic.") == ("moment",)


def _bash(root: Path, command: str) -> Act:
    return Act("Bash", str(root), command=command, commands=commands_of(command))


def _edit(root: Path, new: str) -> Act:
    return Act("Edit", str(root), "src/a.tsx", old="", new=new)


def test_a_scope_holds_its_packages_only(tmp_path: Path) -> None:
    forbid = Forbid(imports=("@mui",))
    assert meets(forbid, _edit(tmp_path, 'import { Switch } from "@mui/material";')) is not None
    assert meets(forbid, _edit(tmp_path, 'import S from "@mui/icons-material/Search";')) is not None
    assert meets(forbid, _bash(tmp_path, "pnpm install @mui/x-data-grid@6")) is not None
    assert meets(forbid, _edit(tmp_path, 'import x from "@mui-extra/kit";')) is None
    assert meets(forbid, _edit(tmp_path, 'import x from "@muix/kit";')) is None
    assert meets(forbid, _bash(tmp_path, "pnpm add mui")) is None


def test_end_to_end_a_rule_naming_products_holds_their_installs_and_imports(tmp_path: Path) -> None:
    forbid = propose(
        "UI kit only",
        "Build UI from `@acme/ui`. Do not install or use third-party UI libraries (Chakra UI, Mantine, etc.).",
        "Icons come from the kit too.",
    )
    assert set(forbid.imports) == {"@chakra-ui", "@mantine"}
    assert meets(forbid, _bash(tmp_path, "pnpm add @chakra-ui/react @emotion/react")) is not None
    assert meets(forbid, _edit(tmp_path, 'import { Button } from "@mantine/core";')) is not None
    assert meets(forbid, _edit(tmp_path, 'import { Button } from "@acme/ui";')) is None
    assert meets(forbid, _bash(tmp_path, "pnpm add date-fns")) is None


def test_end_to_end_a_python_product_holds_its_import_name(tmp_path: Path) -> None:
    forbid = propose("images", "Never use Pillow; images go through the `imaging` service.", "")
    write = Act("Write", str(tmp_path), "app/thumbs.py", new="from PIL import Image\n", created=True)
    assert meets(forbid, write) is not None
    assert meets(forbid, _bash(tmp_path, "pip install pillow")) is not None
    assert meets(forbid, _bash(tmp_path, "pip install pillow-heif")) is not None  # a family, as `moment-timezone`
    assert meets(forbid, Act("Write", str(tmp_path), "app/x.py", new="import imaging\n", created=True)) is None
