"""The fitted matcher's judge: what a person or a model wrote in `applies_to` is met with certainty (probability
1), whatever the fitted weights say; an act outside it is left to the model."""

from __future__ import annotations

from memoryd.recall.ranker import LexicalIndex, analyse
from memoryd.relevance.applies import AppliesTo
from memoryd.relevance.judge import judge
from memoryd.relevance.memory import command_act, edit_act, memory, prompt_act
from memoryd.relevance.triggers import Triggers

MEMS = {
    "feedback_ask.md": ("Ask before deploying", "Ask the team first", ""),
    "feedback_tabs.md": ("Indentation", "Tabs in Makefiles", ""),
}
WRITTEN = {"feedback_ask.md": AppliesTo(paths=("infra/**",), commands=("kubectl",), explicit=True)}


def judged(act_name: str, *args: str) -> dict[str, float]:
    mems = {fn: memory(n, d, b, "feedback") for fn, (n, d, b) in MEMS.items()}
    index = LexicalIndex()
    for fn, (n, d, b) in MEMS.items():
        index.put(analyse(fn, n, d, b))
    act = {"edit": edit_act, "command": command_act, "prompt": prompt_act}[act_name](*args)
    return {m.memory: m.probability for m in judge(act, mems, Triggers.of(mems), index, written=WRITTEN)}


def test_an_act_under_a_written_applies_to_is_certain() -> None:
    assert judged("edit", "infra/prod/main.tf", "")["feedback_ask.md"] == 1.0
    assert judged("command", "kubectl apply -f infra/prod.yaml")["feedback_ask.md"] == 1.0


def test_an_act_outside_it_is_left_to_the_model() -> None:
    assert judged("edit", "src/app.ts", "").get("feedback_ask.md", 0.0) < 1.0
    assert judged("command", "ls -la").get("feedback_ask.md", 0.0) < 1.0
    assert judged("prompt", "deploy infra/prod now").get("feedback_ask.md", 0.0) < 1.0  # prompts: scored
