"""Prompt templates, the one folder of them: relmem/prompts/<name>.txt with {slot} placeholders. Each LLM stage has
its own (named as the stage), and the plan's optional context parts have theirs (plan_examples, plan_conversation).
The form a stage's reply must take is its output contract's (relmem.contracts), shown through the slot {output_form}.

A file holds chat sections, each opened by a line `=== system ===`, `=== user ===` or `=== assistant ===`; literal
braces are written {{ and }}. render_prompt("plan", question=..., schemas=...) returns the chat messages and raises
relmem.Error when a slot is left unfilled or an unknown slot is given.
"""
import functools
import re
import string
from pathlib import Path

from ._relmem import Error

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
_SECTION = re.compile(r"^=== (system|user|assistant) ===[ \t]*$", re.M)


class PromptTemplate:
    """A parsed template: `name`, `sections` [(role, text)] and `slots` (names in order of first use)."""

    def __init__(self, name, text):
        self.name = name
        heads = list(_SECTION.finditer(text))
        if not heads or text[:heads[0].start()].strip():
            raise Error(f"prompt '{name}': the text must start with a section line such as '=== system ==='")
        self.sections = [(head.group(1), text[head.end():heads[i + 1].start() if i + 1 < len(heads) else len(text)]
                          .strip("\n")) for i, head in enumerate(heads)]
        self.slots = []
        for _, section in self.sections:
            try:
                parsed = list(string.Formatter().parse(section))
            except ValueError as error:
                raise Error(f"prompt '{name}': {error} (write literal braces as {{{{ and }}}})") from None
            for _, field, spec, conversion in parsed:
                if field is None:
                    continue
                if not field.isidentifier() or spec or conversion:
                    raise Error(f"prompt '{name}': slot {{{field}}} must be a plain name like {{question}}")
                if field not in self.slots:
                    self.slots.append(field)

    def render(self, **values):
        """The chat messages with every slot filled by str(value)."""
        missing = [slot for slot in self.slots if slot not in values]
        unknown = sorted(set(values) - set(self.slots))
        if missing:
            raise Error(f"prompt '{self.name}' is missing slot(s): {', '.join(missing)}")
        if unknown:
            raise Error(f"prompt '{self.name}' has no slot(s) {', '.join(unknown)} "
                        f"(its slots: {', '.join(self.slots)})")
        empty = [slot for slot in self.slots if values[slot] is None]
        if empty:
            raise Error(f"prompt '{self.name}': slot(s) {', '.join(empty)} given None")
        filled = {slot: str(values[slot]) for slot in self.slots}
        return [{"role": role, "content": section.format_map(filled)} for role, section in self.sections]


def available_prompts():
    """Names of the templates shipped in relmem/prompts/."""
    return sorted(path.stem for path in PROMPTS_DIR.glob("*.txt"))


@functools.lru_cache(maxsize=None)
def load_prompt(name):
    """The template relmem/prompts/<name>.txt (parsed once)."""
    path = PROMPTS_DIR / f"{name}.txt"
    if not re.fullmatch(r"[a-z_]+", name) or not path.is_file():
        raise Error(f"no prompt template '{name}' (available: {', '.join(available_prompts())})")
    return PromptTemplate(name, path.read_text(encoding="utf-8"))


def render_prompt(name, **values):
    """load_prompt(name).render(**values): the chat messages for one stage. The slot {output_form}, when the
    template has it and it is not given, is the form of the stage's output contract (relmem.contracts); the dialect
    slots not given are SQLite's (relmem.engines.dialects)."""
    template = load_prompt(name)
    if "output_form" in template.slots and "output_form" not in values:
        from .contracts import contract_of_prompt
        contract = contract_of_prompt(name)
        if contract is not None:
            values["output_form"] = contract.form
    from .engines.dialects import SQLITE_FIELDS
    values.update({slot: SQLITE_FIELDS[slot] for slot in template.slots
                   if slot in SQLITE_FIELDS and slot not in values})
    return template.render(**values)
