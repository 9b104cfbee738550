"""A scripted stand-in for an LLM: rules map a request's stage and prompt text to a fixed or computed reply.

It is not a language model and writes nothing of its own: tests, notebooks and examples use it to drive the
pipeline's machinery where no LLM is available. Figures it produces say nothing about any LLM's accuracy.

    from relmem.llm import ScriptedLLM, ScriptRule
    llm = ScriptedLLM([ScriptRule(stage="context_switch", reply="Answer: (YES)"),
                       ScriptRule(stage="plan", contains="singer", reply=PLAN_TEXT),
                       ScriptRule(reply=lambda request: "echo " + request.messages[-1]["content"])])
    pipeline = Pipeline.default(catalog, llm, ...)
    llm.stages()            # the stage of every request so far, in order
    llm.requests[0].prompt  # every request: stage, messages, params, prompt

Rules are tried in order; the first whose `stage` (None: any) equals the request's stage and whose `contains`
(None: anything) occurs in some message answers it; `times` limits how often a rule may answer. A request no rule
matches fails with relmem.Error naming its stage, as an LLM call that failed.
"""
import threading
from dataclasses import dataclass, field
from typing import Callable, Optional, Union

from ._relmem import llm as _core


@dataclass
class ScriptedRequest:
    stage: str
    messages: list  # [{"role", "content"}]
    params: dict  # temperature, max_tokens, stop when set

    @property
    def prompt(self):
        """Every message's content, one after another: what `contains` is looked up in."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)


@dataclass
class ScriptRule:
    """Answers requests of `stage` (None: any) whose prompt holds `contains` (None: any) with `reply`: a str, or a
    function of the request (anything with stage, messages and prompt) returning one; at most `times` times."""
    reply: Union[str, Callable] = ""
    stage: Optional[str] = None
    contains: Optional[str] = None
    times: Optional[int] = None
    used: int = field(default=0, init=False)

    def matches(self, request):
        return ((self.times is None or self.used < self.times)
                and (self.stage is None or request.stage == self.stage)
                and (self.contains is None or self.contains in request.prompt))

    def text(self, request):
        return self.reply(request) if callable(self.reply) else self.reply


def first_match(rules, request):
    """The first rule that matches `request`, counted as used; None when none does."""
    rule = next((r for r in rules if r.matches(request)), None)
    if rule is not None:
        rule.used += 1
    return rule


class ScriptedLLM(_core.CallableLLM):
    """A relmem LLM (cacheable, meterable like any) that answers by `rules`; see the module docstring."""

    def __init__(self, rules, name="scripted"):
        super().__init__(self._answer, name=name)
        self.rules = list(rules)
        self.requests = []
        self._lock = threading.Lock()

    def stages(self):
        return [request.stage for request in self.requests]

    def _answer(self, messages, stage="", **params):
        request = ScriptedRequest(stage, messages, params)
        with self._lock:
            self.requests.append(request)
            rule = first_match(self.rules, request)
        if rule is None:
            raise LookupError(f"scripted LLM: no rule answers stage {stage!r}")
        return rule.text(request)
