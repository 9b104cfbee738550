"""What each LLM stage replies, declared once: the form its prompt asks for, the parser that reads a reply, the
reminder a malformed reply gets, the grammar that enforces the form while decoding, and the writer scripted
stand-ins (the gold simulator, ScriptedLLM rules, tests) use to reply in that form.

    contract = CONTRACTS["plan"]
    contract.form                                  # the prompt's {output_form}
    contract.grammar(schemas={"concert_singer": {"singer": ["Name", "Age"]}})   # GBNF, or None
    contract.parse(text, known_databases=[...])     # the value, or FormatError
    write_plan([Target("count singers", "SELECT COUNT(*) FROM singer", "concert_singer")])

Grammars constrain decoding where the LLM can enforce them (the local llama.cpp model); the parsers stay lenient
about form, so LLMs that ignore grammars are read as before.
"""
import functools
import json
from dataclasses import dataclass
from typing import Callable, Optional

from . import parsers
from .sql_grammar import sql_rules

NO_DATABASE = "No relevant database"
_LINE = r"[^\n]"


def _literal(text):
    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True)
class OutputContract:
    name: str
    form: str                               # the reply's form, as the prompt states it
    reminder: str                           # sent with a malformed reply, once
    parser: Callable                        # text (and keyword context) -> value; raises FormatError
    grammar_of: Optional[Callable] = None   # keyword context -> GBNF text
    json_schema: Optional[dict] = None      # or a JSON schema the reply must be an instance of

    def parse(self, text, **context):
        return self.parser(text, **context)

    def reader(self, **context):
        """The parser with its context bound: what ask_with_format() calls."""
        return functools.partial(self.parser, **context) if context else self.parser

    def grammar(self, **context):
        """The GBNF grammar of this reply form for `context` (e.g. the schemas a SQL may name); None when the
        contract has none or the context lacks what the grammar needs."""
        return self.grammar_of(**context) if self.grammar_of else None

    def constraints(self, **context):
        """The chat() keywords that constrain decoding to this form: {"grammar": ...}, {"json_schema": ...} or {}."""
        grammar = self.grammar(**context)
        if grammar:
            return {"grammar": grammar}
        if self.json_schema:
            return {"json_schema": json.dumps(self.json_schema)}
        return {}


# --- writers: replies in each form ----------------------------------------------------------------------------

def write_sql(sql):
    return f"Begin SQL\n{sql}\nEnd SQL"


def write_target(goal, sql, database):
    return f"Goal: {goal}\n{write_sql(sql)}\nDatabase: {database}"


def write_plan(targets):
    """A plan reply: one block per parsers.Target (or (goal, sql, database)); NO_DATABASE for none."""
    blocks = [write_target(*((t.goal, t.sql, t.database) if isinstance(t, parsers.Target) else t)) for t in targets]
    return "\n".join(blocks) if blocks else NO_DATABASE


def write_verdict(needs_data, reasoning="The question needs stored records."):
    return f"Reasoning: {reasoning}\nAnswer: ({'YES' if needs_data else 'NO'})"


def write_return_type(return_type):
    return f"Return type: ({'SQL' if return_type == parsers.RETURN_SQL_RESULT else 'TEXT'})"


def write_answer(answer):
    return f"Answer: {answer}"


def write_rephrase(question):
    return f"Rephrased: {question}"


def write_parts(parts):
    return "Parts:\n" + "\n".join(f"{i}. {part}" for i, part in enumerate(parts, start=1))


# --- grammars --------------------------------------------------------------------------------------------------

def _sql_reply_grammar(schema=None, dialect="sqlite"):
    """One SQL query between Begin SQL and End SQL in `dialect` (relmem.sql_grammar), naming only the tables and
    columns of `schema`."""
    if not schema:
        return None
    return 'root ::= "Begin SQL\\n" sql-query ";"? "\\nEnd SQL"\n' + sql_rules(schema, "sql", dialect)


def _plan_grammar(schemas=None, dialects=None, may_decline=True):
    """Targets whose SQL names only its own database's tables and columns, followed by that database's name; or
    NO_DATABASE unless not `may_decline`. `schemas`: {database: {table: [column, ...]}} of the candidates the prompt
    shows; `dialects`: {database: engine} ("sqlite" where absent)."""
    if not schemas:
        return None
    names = list(schemas)
    by_database = " | ".join(f'd{i}-query ";"? "\\nEnd SQL\\nDatabase: " {_literal(name)}'
                             for i, name in enumerate(names))
    decline = f" | {_literal(NO_DATABASE)}" if may_decline else ""
    rules = [f'root ::= target ("\\n" target){{0,{max(len(names) - 1, 0)}}}{decline}',
             f'target ::= "Goal: " goal "\\nBegin SQL\\n" ({by_database})',
             f"goal ::= [^\\n]{{1,200}}"]
    return "\n".join(rules) + "\n" + "".join(sql_rules(schemas[name], f"d{i}", (dialects or {}).get(name, "sqlite"))
                                              for i, name in enumerate(names))


def _fixed(grammar):
    return lambda **_: grammar


CONTRACTS = {contract.name: contract for contract in [
    OutputContract(
        "plan",
        form=f"Goal: <what this query retrieves>\nBegin SQL\n<the SQL query>\nEnd SQL\nDatabase: <database name>",
        reminder="Your answer could not be read. Write every target exactly in this form, and nothing else:\n"
                 "Goal: <what this query retrieves>\nBegin SQL\n<one SQLite SELECT query>\nEnd SQL\n"
                 "Database: <database name>\nRepeat the four parts for each database you need, using only the "
                 f"database names given. If no database can help, write: {NO_DATABASE}",
        parser=parsers.parse_plan, grammar_of=_plan_grammar),
    OutputContract(
        "sql",
        form="Begin SQL\n<the SQL query>\nEnd SQL",
        reminder="Your answer could not be read. Write the SQL query alone between the lines `Begin SQL` and "
                 "`End SQL`.",
        parser=parsers.parse_sql, grammar_of=_sql_reply_grammar),
    OutputContract(
        "verdict",
        form="Reasoning: <one short line>\nAnswer: (YES)   or   Answer: (NO)",
        reminder="Your answer could not be read. End your answer with a last line that is exactly (YES) or (NO).",
        parser=parsers.parse_verdict,
        grammar_of=_fixed('root ::= "Reasoning: " [^\\n]{1,300} "\\nAnswer: (" ("YES" | "NO") ")"\n')),
    OutputContract(
        "return_type",
        form="Return type: (SQL)   or   Return type: (TEXT)",
        reminder="Your answer could not be read. End your answer with a last line that is exactly (SQL) or (TEXT).",
        parser=parsers.parse_return_type,
        grammar_of=_fixed('root ::= "Return type: (" ("SQL" | "TEXT") ")"\n')),
    OutputContract(
        "answer",
        form="Answer: <the answer, on one line>",
        reminder="Your answer could not be read. Write the answer after `Answer:` at the end of your reply.",
        parser=parsers.parse_answer,
        grammar_of=_fixed('root ::= "Answer: " [^\\n]{1,1000}\n')),
    OutputContract(
        "rephrase",
        form="Rephrased: <the question, on one line>",
        reminder="Your answer could not be read. Write the rephrased question on one line starting with "
                 "`Rephrased:`.",
        parser=parsers.parse_rephrase,
        grammar_of=_fixed('root ::= "Rephrased: " [^\\n]{1,500}\n')),
    OutputContract(
        "parts",
        form="Parts:\n1. <first part>\n2. <second part, if any>",
        reminder="Your answer could not be read. Write `Parts:` and then each part on its own numbered line "
                 "(1. ..., 2. ...).",
        parser=parsers.parse_parts,
        grammar_of=_fixed('root ::= "Parts:\\n1. " [^\\n]{1,400} ("\\n" [2-6] ". " [^\\n]{1,400}){0,5}\n')),
]}

# The contract each prompt template's {output_form} shows.
PROMPT_CONTRACTS = {"plan": "plan", "correct_values": "sql", "refine": "sql", "self_correct": "sql",
                    "context_switch": "verdict", "return_type": "return_type", "answer_directly": "answer",
                    "generate_output": "answer", "rephrase": "rephrase", "decompose": "parts"}


def contract_of_prompt(prompt):
    """The OutputContract of prompt template `prompt`, or None for templates with their own form."""
    name = PROMPT_CONTRACTS.get(prompt)
    return CONTRACTS[name] if name else None
