"""The question-answering pipeline: a list of stages run in order over one State.

    pipeline = Pipeline.default(catalog, llm, selection=memories.selection, values=memories.values,
                                examples=memories.examples, disable={"value_memory"})
    state = pipeline.ask("How many Italian restaurants are in Los Angeles?")
    state.answer, state.results(), state.trace.records

Stages can be replaced (pipeline.replace("plan", MyPlan(...))), removed by name or switch
(pipeline.without("refine"), pipeline.without("value_memory")) or composed by hand
(Pipeline([SelectDatabases(...), Plan(...), Execute(...), GenerateOutput(...)])). Every pipeline is checked when it
is made: each stage's declared reads must be inputs or written by an earlier stage (see Stage.reads).
"""
from dataclasses import fields

from .config import PipelineConfig, check_switches
from .conversation import ConversationMemory
from .state import QueryTarget, State
from .stages.context import AnswerDirectly, AnswerWithoutData, ContextSwitch, Rephrase, SelectionSwitch
from .stages.execution import Execute, SelfCorrect
from .stages.hybrid import HybridAnswer
from .stages.inspection import InspectAndRefine
from .stages.output import DescribeWithoutLLM, GenerateOutput, ReturnType
from .stages.planning import Plan, RetrieveExamples
from .stages.repairs import RepairCounts, RepairJoins, RepairQualifiers
from .stages.schema_context import BuildContext
from .context_builder import ContextBuilder
from .stages.selection import DecomposeQuestion, LinkQuestionValues, SelectDatabases
from .stages.values import CorrectValues, LearnValues, LinkValues, PostProcessValues
from .. import Error


class Pipeline:
    def __init__(self, stages, conversation=None, conversation_turns=3):
        """`stages`: Stage objects, run in order. `conversation`: a ConversationMemory whose last
        `conversation_turns` turns each question gets, and which each answered question extends; None for none.
        Raises relmem.Error when a stage reads what no earlier stage writes, or declares an unknown field."""
        self.stages = list(stages)
        check_dataflow(self.stages)
        self.conversation = conversation
        self.conversation_turns = conversation_turns

    @classmethod
    def default(cls, catalog, llm=None, selection=None, values=None, examples=None, descriptions=None, config=None,
                disable=(), conversation=None, rows=None):
        """The full pipeline over `catalog`. Without `llm`, only the LLM-free stages: database selection and the
        stored values question words match. `selection`: a SelectionMemory (required); `values`: a ValueMemory or
        None (no value stages); `examples`: an ExampleMemory or None; `descriptions`: {database: text} for the
        prompts; `config`: PipelineConfig or a dict of its fields; `disable`: switch names (see SWITCHES), e.g.
        {"value_memory"}, {"refinement"}, {"context_switch"}; `conversation`: a ConversationMemory to continue
        (default: a new one, unless "conversation" is disabled); `rows`: a RowMemory for the example rows of the
        built schema context, or None (config.context chooses the built context or the full DDL)."""
        if selection is None:
            raise Error("Pipeline.default needs a selection memory (relmem.SelectionMemory.build(catalog))")
        config = config if isinstance(config, PipelineConfig) else PipelineConfig.from_dict(config or {})
        off = check_switches(disable)
        use_values = values is not None and "value_memory" not in off
        if llm is None:
            stages = [SelectDatabases(selection, config)]
            if use_values:
                stages.append(LinkQuestionValues(values, config))
            stages.append(DescribeWithoutLLM())
            return cls(stages)
        stages = [Rephrase(llm, config)]
        if config.context_switch == "selection":
            switch = [SelectionSwitch(selection, config), AnswerDirectly(llm, config)]
        else:
            switch = [ContextSwitch(llm, catalog, config, descriptions), AnswerDirectly(llm, config)]
        switch_first = config.context_switch == "selection" or config.switch_view == "collection"
        if switch_first:
            stages += switch
        if config.decompose == "llm":
            stages.append(DecomposeQuestion(llm, config))
        stages.append(SelectDatabases(selection, config))
        if not switch_first:
            stages += switch
        if examples is not None and len(examples):
            stages.append(RetrieveExamples(examples, config))
        builder = ContextBuilder(catalog, selection, values=values if use_values else None, rows=rows,
                                 descriptions=descriptions, mode=config.context, token_budget=config.context_tokens,
                                 rows_per_table=config.context_rows)
        stages += [BuildContext(builder), Plan(llm, catalog, config, descriptions)]
        if config.repair_qualifiers:
            stages.append(RepairQualifiers(catalog))
        if config.repair_joins:
            stages.append(RepairJoins(catalog))
        if config.repair_counts:
            stages.append(RepairCounts(catalog))
        if use_values:
            stages += [LinkValues(values, catalog, config), CorrectValues(llm, catalog, config, descriptions),
                       PostProcessValues(values, catalog, config)]
        stages += [InspectAndRefine(llm, catalog, config, values if use_values else None, descriptions),
                   Execute(catalog, config), SelfCorrect(llm, catalog, config, descriptions),
                   HybridAnswer(llm, catalog, config, config.hybrid_store, descriptions),
                   AnswerWithoutData(llm, config)]
        if use_values:
            stages.append(LearnValues(values, catalog, config))
        stages += [ReturnType(llm, config), GenerateOutput(llm, config)]
        stages = [stage for stage in stages if stage.group not in off]
        if "conversation" not in off and conversation is None:
            conversation = ConversationMemory()
        return cls(stages, None if "conversation" in off else conversation, config.conversation_turns)

    @property
    def names(self):
        return [stage.name for stage in self.stages]

    def stage(self, name):
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise Error(f"no stage '{name}' in this pipeline (its stages: {', '.join(self.names)})")

    def replace(self, name, stage):
        """A pipeline with the stage called `name` replaced by `stage`."""
        self.stage(name)
        return Pipeline([stage if s.name == name else s for s in self.stages], self.conversation,
                        self.conversation_turns)

    def without(self, *names):
        """A pipeline without the named stages or switch groups; names this pipeline does not have are refused."""
        groups = [s.group for s in self.stages if s.group]
        unknown = [name for name in names if name not in self.names and name not in groups]
        if unknown:
            raise Error(f"no stage or switch {', '.join(map(repr, unknown))} in this pipeline (its stages: "
                        f"{', '.join(self.names)}; its switches: {', '.join(dict.fromkeys(groups)) or 'none'})")
        return Pipeline([s for s in self.stages if s.name not in names and s.group not in names], self.conversation,
                        self.conversation_turns)

    def ask(self, question, remember=True):
        """Answers one question; returns its State (answer, results(), trace). With a conversation memory, the
        question sees its last turns and, with remember=True, is added to it."""
        history = self.conversation.recent(self.conversation_turns) if self.conversation is not None else []
        state = self.run(State(question, history=history))
        if remember and self.conversation is not None:
            self.conversation.add_state(state)
        return state

    def run(self, state):
        """Runs the stages over `state` until one stops it (a stage with runs_when_stopped may take it over). An exception a stage lets escape is recorded and ends
        the question with a "could not answer" answer; the trace keeps everything up to there."""
        for stage in self.stages:
            if state.stopped and not getattr(stage, "runs_when_stopped", False):
                continue
            records = len(state.trace)
            try:
                stage.run(state)
            except Exception as error:  # noqa: BLE001 - any failure ends this question, never the caller
                if len(state.trace) == records:
                    with state.trace.step(stage.name) as step:
                        step.fail(f"{type(error).__name__}: {error}")
                state.stop(f"could not answer: stage {stage.name} failed: {error}")
        if not state.stopped:
            state.stop("could not answer: no stage produced an answer")
        return state

    def __repr__(self):
        return f"Pipeline({' -> '.join(self.names)})"


STATE_FIELDS = {f.name for f in fields(State)}
# What stages learn about a target's SQL: written only by the stages that compute it, not by creating the targets.
LEARNT = {"result": "executions", "value_checks": "value_checks_by_sql"}
TARGET_FIELDS = {f.name for f in fields(QueryTarget)} - set(LEARNT.values()) | set(LEARNT)


def check_dataflow(stages):
    """Raises relmem.Error unless every stage has a unique name, declares only fields of State (or
    "targets.<QueryTarget field>") and reads only State.INPUTS and what earlier stages write."""
    seen = set()
    written = set(State.INPUTS)
    for position, stage in enumerate(stages):
        if not stage.name or stage.name in seen:
            raise Error(f"stage {type(stage).__name__} needs a name of its own (got {stage.name!r}; names so far: "
                        f"{', '.join(sorted(seen)) or 'none'})")
        seen.add(stage.name)
        declared = (*stage.reads, *stage.optional_reads, *stage.writes)
        unknown = [name for name in declared if not _known_field(name)]
        if unknown:
            raise Error(f"stage {stage.name} declares unknown state field(s) {', '.join(unknown)} (State fields: "
                        f"{', '.join(sorted(STATE_FIELDS))}; targets.<field> for {', '.join(sorted(TARGET_FIELDS))})")
        for name in stage.reads:
            if not _provided(name, written):
                later = [s.name for s in stages[position + 1:] if _provided(name, s.writes)]
                raise Error(f"stage {stage.name} reads {name}, which no earlier stage writes"
                            + (f" ({', '.join(later)} {'writes' if len(later) == 1 else 'write'} it later)"
                               if later else ""))
        written.update(stage.writes)


def _known_field(name):
    head, _, field = name.partition(".")
    return head in STATE_FIELDS and (not field or (head == "targets" and field in TARGET_FIELDS))


def _provided(name, written):
    """Whether `written` provides `name`: itself, or for a target field set when targets are made, "targets"."""
    head, _, field = name.partition(".")
    return name in written or (head in written and field not in LEARNT)
