"""No function in memoryd/ is over 80 lines (docs/development.md): a longer one is split into named steps."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 80


def long_functions(root: Path = ROOT) -> list[str]:
    """`path:line name (n lines)` of every function in memoryd/ longer than MAX_LINES."""
    found = []
    for path in sorted((root / "memoryd").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lines = (node.end_lineno or node.lineno) - start + 1
                if lines > MAX_LINES:
                    found.append(f"{rel}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_is_over_80_lines() -> None:
    assert long_functions() == [], "split these into named steps:\n" + "\n".join(long_functions())


if __name__ == "__main__":
    print("\n".join(long_functions()) or "none")
