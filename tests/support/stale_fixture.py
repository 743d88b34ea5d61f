"""The stale-memory dev set: a small fixture repo (committed to a fresh git repo) and memories
labelled stale or fresh against it. Shared by tests/test_stale.py and bench/stale_bench.py."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "stale"


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        check=True,
        capture_output=True,
        timeout=30,
    )


# What the fixture repo had before its last commit removed it: the stale memories name these.
FORMERLY = (
    "src/shopapi/billing.py",
    "scripts/seed_fixtures.sh",
    "config/settings.yaml",
    "frontend/src/store/cart.ts",
    ".github/workflows/test.yml",
)


def make_repo(dest: Path) -> Path:
    """Copy the fixture repo to `dest` and commit it, after a first commit that also had FORMERLY."""
    shutil.copytree(FIXTURE / "repo", dest)
    for name in FORMERLY:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_text("# formerly\n", encoding="utf-8")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "before")
    git(dest, "rm", "-q", *FORMERLY)
    git(dest, "commit", "-q", "-m", "fixture")
    return dest


def labelled_memories() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((FIXTURE / "memories.json").read_text(encoding="utf-8"))
    return data


# A TypeScript shop as a person's machine has it: tracked files, a lockfile never added, a git-ignored
# `.env.local`, installed dev dependencies in node_modules/.bin, and a second commit that removed files.
TS_SHOP_FILES = {
    ".gitignore": "node_modules/\n.env.local\ndist/\n.next/\ncoverage/\n",
    "package.json": json.dumps(
        {
            "name": "acme-store",
            "private": True,
            "scripts": {
                "dev": "next dev",
                "build": "next build",
                "lint": "eslint src",
                "typecheck": "tsc --noEmit",
                "test": "vitest run",
                "gen:api": "openapi-typescript openapi.yaml -o src/api/generated/schema.ts",
                "db:migrate": "prisma migrate deploy",
            },
            "dependencies": {"next": "^15.0.0", "react": "^19.0.0", "zod": "^3.23.0", "@tanstack/react-query": "^5"},
            "devDependencies": {
                "vitest": "^2.1.0",
                "typescript": "^5.6.0",
                "eslint": "^9.0.0",
                "@playwright/test": "^1.48.0",
                "prisma": "^5.20.0",
                "openapi-typescript": "^7.4.0",
            },
        },
        indent=2,
    ),
    "openapi.yaml": "openapi: 3.1.0\n",
    ".env.example": "DATABASE_URL=\nSTRIPE_KEY=\n",
    "prisma/schema.prisma": 'datasource db { provider = "postgresql" }\n',
    "src/app/page.tsx": "export default function Home() { return null }\n",
    "src/app/checkout/page.tsx": "export default function Checkout() { return null }\n",
    "src/components/CheckoutButton.tsx": "export function CheckoutButton() { return null }\n",
    "src/styles/tokens.css": ":root { --color-primary: #0a7; }\n",
    "src/lib/money.ts": "export function formatMoney(cents: number) { return String(cents / 100) }\n",
    "src/lib/money.test.ts": "import { formatMoney } from './money'\n",
    "src/lib/legacy-cart.ts": "export const cart = []\n",
    "src/api/client.ts": "export const api = {}\n",
    "src/api/generated/schema.ts": "// generated\n",
    "db/migrations/0001_init.sql": "create table users (id int);\n",
    "db/migrations/0002_orders.sql": "create table orders (id int);\n",
    "queries/orders.sql": "select * from orders;\n",
    "scripts/seed.ts": "console.log('seed')\n",
    "scripts/reset-db.sh": "#!/bin/sh\n",
    "scripts/seed.js": "console.log('seed')\n",
    "tools/pyproject.toml": '[project]\nname = "acme-tools"\nversion = "0.1.0"\ndependencies = ["httpx"]\n',
    "tools/sync_prices.py": "print('sync')\n",
    "importer/pyproject.toml": '[tool.poetry]\nname = "importer"\n[tool.poetry.scripts]\nimporter = "importer:main"\n',
    "importer/importer/__init__.py": "def main():\n    pass\n",
    "docs-site/package.json": json.dumps(
        {"name": "docs-site", "scripts": {"dev": "astro dev"}, "dependencies": {"astro": "^4"}}
    ),
}
TS_SHOP_REMOVED = (
    "src/lib/legacy-cart.ts",
    "scripts/reset-db.sh",
    "scripts/seed.js",
)  # in the first commit, gone in the second
TS_SHOP_UNTRACKED = {"pnpm-lock.yaml": "lockfileVersion: '9.0'\n", ".env.local": "STRIPE_KEY=sk_test_x\n"}
TS_SHOP_BINS = ("vitest", "tsc", "eslint", "playwright", "prisma", "openapi-typescript", "next")


def make_ts_shop(dest: Path) -> Path:
    """The TypeScript shop: two commits, then the untracked lockfile, the ignored env file and node_modules."""
    for name, text in TS_SHOP_FILES.items():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_text(text, encoding="utf-8")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "shop")
    git(dest, "rm", "-q", *TS_SHOP_REMOVED)
    git(dest, "commit", "-q", "-m", "drop the legacy cart and the reset script")
    for name, text in TS_SHOP_UNTRACKED.items():
        (dest / name).write_text(text, encoding="utf-8")
    bins = dest / "node_modules" / ".bin"
    bins.mkdir(parents=True)
    for name in TS_SHOP_BINS:
        (bins / name).write_text("#!/bin/sh\n", encoding="utf-8")
    (dest / ".next").mkdir()
    return dest


def ts_shop_memories() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((FIXTURE / "ts_shop_memories.json").read_text(encoding="utf-8"))
    return data
