"""The `memoryd` command for people: human output by default, `--json` for scripts.

Commands talk to the daemon over HTTP (`memoryd.client`); only `serve` builds a daemon.
Exit codes (the same with --json, where errors are `{"error": {"code", "message"}}` on stdout):
0 ok; 1 the daemon refused, a check failed, or grep found nothing; 2 bad usage or config;
3 the daemon is not running. Command modules import only what parsing needs, so `--help`,
`--version` and the commands that only call the daemon start fast (bench/startup_bench.py); the
hook that runs on every tool call loads no parser at all (cli/hook_forward.py).
"""

from __future__ import annotations

import sys

from memoryd.integrations.hook_protocol import AWAIT_MODEL_ARG

# Every tool call's hook starts in this module: nothing more is imported at run time than the hook needs
# (typing alone costs ~9 ms, collections.abc ~1.5 ms); type checkers read the annotation's import below.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

HOOK_ARGS = ["hook", "claude-code"]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:2] == HOOK_ARGS and args[2:] in ([], [AWAIT_MODEL_ARG]):
        from memoryd.cli.hook_forward import main as forward

        return forward(await_model=args[2:] == [AWAIT_MODEL_ARG])
    from memoryd.cli.app import run

    return run(args)
