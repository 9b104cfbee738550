"""The question-answering agent: a pipeline of composable stages over one state and trace.

    from relmem.agent import Memories, Pipeline
    memories = Memories.build(catalog)                       # or Memories.load(folder)
    pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values, memories.examples)
    state = pipeline.ask("How many Italian restaurants are in Los Angeles?")
    print(state.answer); state.to_dict()                     # answer, results, trace
"""
from .config import SELECTION_LED, SWITCHES, PipelineConfig, measured_settings
from .conversation import ConversationMemory
from .memories import Memories
from .pipeline import Pipeline
from .stages.base import Stage
from .stages.context import AnswerDirectly, AnswerWithoutData, ContextSwitch, Rephrase, SelectionSwitch
from .stages.execution import Execute, SelfCorrect
from .stages.inspection import InspectAndRefine
from .stages.output import DescribeWithoutLLM, GenerateOutput, ReturnType
from .stages.planning import Plan, RetrieveExamples
from .stages.selection import DecomposeQuestion, LinkQuestionValues, SelectDatabases
from .stages.values import CorrectValues, LearnValues, LinkValues, PostProcessValues
from .state import Candidate, QueryTarget, State, Turn
from .trace import Trace, format_trace

__all__ = [
    "AnswerDirectly", "AnswerWithoutData", "Candidate", "ContextSwitch", "ConversationMemory", "CorrectValues", "DecomposeQuestion",
    "DescribeWithoutLLM",
    "Execute", "GenerateOutput", "InspectAndRefine", "LinkQuestionValues", "LinkValues", "Memories", "Pipeline",
    "LearnValues", "PipelineConfig", "Plan", "PostProcessValues", "QueryTarget", "Rephrase", "RetrieveExamples", "ReturnType",
    "SELECTION_LED", "SWITCHES", "SelectDatabases", "SelectionSwitch", "SelfCorrect", "Stage", "State", "Trace", "Turn",
    "format_trace", "measured_settings",
]
