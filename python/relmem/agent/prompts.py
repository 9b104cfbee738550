"""The agent's own prompt templates (agent/prompts/*.txt, same format as relmem/prompts): the direct answer and the
planning context; the stage prompts themselves come from relmem.prompt_templates."""
import functools
from pathlib import Path

from .. import Error
from ..prompt_templates import PromptTemplate

AGENT_PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"


@functools.lru_cache(maxsize=None)
def load_agent_prompt(name):
    path = AGENT_PROMPTS_DIR / f"{name}.txt"
    if not path.is_file():
        raise Error(f"no agent prompt template '{name}' in {AGENT_PROMPTS_DIR}")
    return PromptTemplate(name, path.read_text(encoding="utf-8"))


def render_agent_prompt(name, **values):
    return load_agent_prompt(name).render(**values)
