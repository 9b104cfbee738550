"""Pipeline settings, and the names by which stages are switched off."""
from dataclasses import dataclass, fields

from .. import Error


@dataclass
class PipelineConfig:
    top_k: int = 5                    # databases the selection stage proposes; their schemas go into planning
    candidates: str = "top_k"         # which of them: "top_k" (all K, the LLM prunes) or "selected" (those of
    #                                   the selection memory's calibrated set, at least the first)
    keep_candidates: bool = False     # the plan must use the candidates (its grammar has no "No relevant
    #                                   database"): selection without the LLM's refinement
    conversation_turns: int = 3       # earlier turns given to rephrasing and planning
    example_k: int = 3                # few-shot examples at most
    example_threshold: float = 0.6    # least cosine similarity of an example to the question
    value_candidates: int = 5         # stored values shown per literal
    question_value_links: int = 5     # stored values linked to question words per database (no-LLM mode)
    refine_rounds: int = 2            # Tool-SQL refinement rounds per query
    self_correct_retries: int = 4     # repairs of a query that failed to execute
    timeout: float = 10.0             # seconds per query
    max_rows: int = 1000              # rows kept per query
    answer_rows: int = 50             # rows per result given to the LLM for the answer
    temperature: float = 0.0
    context: str = "built"            # the SQL prompts' schemas: "built" (ContextBuilder) or "full_ddl" (ablation)
    context_tokens: int = 2000        # token budget of one built context (relmem.agent.context_builder.count_tokens)
    context_rows: int = 1             # example rows per kept table in a built context
    hybrid_store: str = ""            # fill store of LLM-filled virtual columns ("": $RELMEM_HOME/hybrid_fills.sqlite)
    constrained: bool = True          # LLM replies decoded under their output contract's grammar, where the LLM
    #                                   enforces grammars (the local llama.cpp model); SQL names only shown tables
    repair_qualifiers: bool = True    # a column qualified by a FROM item that lacks it moves to the one other
    #                                   FROM item of its SELECT that has it, before the planned SQL first runs
    repair_joins: bool = True         # a column of a table missing from FROM gets that table joined, when one
    #                                   foreign key says how (relmem.sql.repair_joins), before the SQL first runs
    repair_counts: bool = True        # a count of one row per row of a table counts the rows of the one table that
    #                                   references it (relmem.sql.repair_counts), before the SQL first runs
    context_switch: str = "llm"       # who decides whether a question needs the databases: "llm" (a prompt) or
    #                                   "selection" (the gate below on the selection memory's scores, no LLM call)
    switch_view: str = "collection"   # the databases the LLM context switch is shown: "collection" (the
    #                                   collection's overview) or "candidates" (the selection memory's top K)
    switch_gate: tuple | None = None  # the selection gate (w_s, w_m, b) of SelectionSwitch; None: the one fitted
    #                                   for the selection memory's encoder (SWITCH_GATES)
    plan_parts: bool = False          # a question of parts set apart (Q1: ...; Q2: ..., a list, the decompose
    #                                   stage's parts) is planned part by part, one plan call each
    decompose: str = "rules"          # who splits a question into parts for selection: "rules" (the selection
    #                                   memory's sentence and clause rules) or "llm" (the decompose stage)

    @classmethod
    def from_dict(cls, values):
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise Error(f"unknown pipeline setting(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        return cls(**values)

    def __post_init__(self):
        if self.decompose not in DECOMPOSERS:
            raise Error(f"unknown decompose setting {self.decompose!r} (known: {', '.join(DECOMPOSERS)})")
        if self.candidates not in CANDIDATES:
            raise Error(f"unknown candidates setting {self.candidates!r} (known: {', '.join(CANDIDATES)})")
        if self.context_switch not in CONTEXT_SWITCHES:
            raise Error(f"unknown context_switch setting {self.context_switch!r} (known: "
                        f"{', '.join(CONTEXT_SWITCHES)})")
        if self.switch_gate is not None:
            if len(self.switch_gate) != 3:
                raise Error(f"switch_gate takes 3 numbers (score weight, margin weight, bias), got "
                            f"{self.switch_gate!r}")
            self.switch_gate = tuple(float(x) for x in self.switch_gate)
        if self.switch_view not in SWITCH_VIEWS:
            raise Error(f"unknown switch_view setting {self.switch_view!r} (known: {', '.join(SWITCH_VIEWS)})")


# The settings measured best with the local models (chosen with Qwen2.5 Coder 0.5B, docs/llm.md, the gate at the
# full set sizes; the 1.5B default measured with them; parts planned apart chosen with the 1.5B model on double-DB
# questions of train_spider.json): the selection memory decides whether a question needs the databases (its gate)
# and which ones the plan uses (its calibrated set), and the small model writes the SQL, part by part where the
# asker set the parts apart.
SELECTION_LED = {"candidates": "selected", "keep_candidates": True, "context_switch": "selection", "plan_parts": True}

# The selection gate per encoder: needs data when sigmoid(w_s * s1 + w_m * (s1 - s10) + b) >= 0.5, s1 and s10 the
# scores of the best and the tenth database. Each fitted on a memory of every Spider database with that encoder, on
# 1,000 train_spider.json questions against 1,000 zero_db questions outside docs/eval/llm/set.jsonl
# (scripts/fit_switch_gate.py; docs/llm.md).
SWITCH_GATES = {"use-lite": (2.33, 27.58, -6.57), "minilm": (6.47, 21.54, -9.66)}


def fitted_switch_gate(encoder_name):
    """The selection gate fitted for an encoder; an encoder without one is an error."""
    if encoder_name not in SWITCH_GATES:
        raise Error(f"no selection gate is fitted for encoder {encoder_name!r} (fitted: {', '.join(SWITCH_GATES)}): "
                    f"fit one with scripts/fit_switch_gate.py and set switch_gate, or use context_switch='llm'")
    return SWITCH_GATES[encoder_name]


def measured_settings(encoder_name):
    """SELECTION_LED for a memory whose encoder has a fitted gate; else {} (the LLM decides)."""
    return dict(SELECTION_LED) if encoder_name in SWITCH_GATES else {}


DECOMPOSERS = ("rules", "llm")
CANDIDATES = ("top_k", "selected")
SWITCH_VIEWS = ("collection", "candidates")
CONTEXT_SWITCHES = ("llm", "selection")


# Switch names: each stage belongs to one group; disabling a group removes its stages from Pipeline.default.
SWITCHES = {
    "context_switch": "decide whether the question needs the databases at all",
    "conversation": "earlier turns: rephrasing of follow-up questions and conversation context in planning",
    "examples": "few-shot question-SQL examples and terminology in planning",
    "value_memory": "value linking, LLM value correction and LLM-free value post-processing",
    "refinement": "Tool-SQL inspection (database retriever + error detector) and refinement",
    "self_correction": "repairing queries that fail to execute, with SQLite's error message",
    "return_type": "deciding between showing the rows and writing a text answer (off: always text)",
    "hybrid": "virtual columns an LLM fills when the databases lack facts the question needs",
}


def check_switches(names):
    unknown = sorted(set(names) - set(SWITCHES))
    if unknown:
        raise Error(f"unknown stage switch(es): {', '.join(unknown)} (known: {', '.join(SWITCHES)})")
    return set(names)
