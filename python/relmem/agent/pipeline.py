"""The question-answering pipeline: a list of stages run in order over one State.

    pipeline = Pipeline.default(catalog, llm, selection=memories.selection, values=memories.values,
                                examples=memories.examples, disable={"value_memory"})
    state = pipeline.ask("How many Italian restaurants are in Los Angeles?")
    state.answer, state.results(), state.trace.records

Stages can be replaced (pipeline.replace("plan", MyPlan(...))), removed (pipeline.without("refine")) or composed
by hand (Pipeline([SelectDatabases(...), Plan(...), Execute(...), GenerateOutput(...)])).
"""
from .config import PipelineConfig, check_switches
from .conversation import ConversationMemory
from .state import State
from .stages.context import AnswerDirectly, ContextSwitch, Rephrase
from .stages.execution import Execute, SelfCorrect
from .stages.hybrid import HybridAnswer
from .stages.inspection import InspectAndRefine
from .stages.output import DescribeWithoutLLM, GenerateOutput, ReturnType
from .stages.planning import Plan, RetrieveExamples
from .stages.selection import LinkQuestionValues, SelectDatabases
from .stages.values import CorrectValues, LinkValues, PostProcessValues
from .. import Error


class Pipeline:
    def __init__(self, stages, conversation=None, conversation_turns=3):
        """`stages`: Stage objects, run in order. `conversation`: a ConversationMemory whose last
        `conversation_turns` turns each question gets, and which each answered question extends; None for none."""
        self.stages = list(stages)
        self.conversation = conversation
        self.conversation_turns = conversation_turns

    @classmethod
    def default(cls, catalog, llm=None, selection=None, values=None, examples=None, descriptions=None, config=None,
                disable=(), conversation=None):
        """The full pipeline over `catalog`. Without `llm`, only the LLM-free stages: database selection and the
        stored values question words match. `selection`: a SelectionMemory (required); `values`: a ValueMemory or
        None (no value stages); `examples`: an ExampleMemory or None; `descriptions`: {database: text} for the
        prompts; `config`: PipelineConfig or a dict of its fields; `disable`: switch names (see SWITCHES), e.g.
        {"value_memory"}, {"refinement"}, {"context_switch"}; `conversation`: a ConversationMemory to continue
        (default: a new one, unless "conversation" is disabled)."""
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
        stages = [Rephrase(llm, config), ContextSwitch(llm, catalog, config, descriptions),
                  AnswerDirectly(llm, config), SelectDatabases(selection, config)]
        if examples is not None and len(examples):
            stages.append(RetrieveExamples(examples, config))
        stages.append(Plan(llm, catalog, config, descriptions))
        if use_values:
            stages += [LinkValues(values, catalog, config), CorrectValues(llm, catalog, config, descriptions),
                       PostProcessValues(values, catalog, config)]
        stages += [InspectAndRefine(llm, catalog, config, values if use_values else None, descriptions),
                   Execute(catalog, config), SelfCorrect(llm, catalog, config, descriptions),
                   HybridAnswer(llm, catalog, config, config.hybrid_store, descriptions),
                   ReturnType(llm, config), GenerateOutput(llm, config)]
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
        """A pipeline without the named stages or switch groups."""
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
