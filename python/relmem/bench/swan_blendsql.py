"""SWAN's BlendSQL baseline run by BlendSQL itself (`relmem bench swan --mode blendsql`), with the same GGUF model
as relmem's modes, scored by the same execution accuracy.

BlendSQL is no dependency of relmem: scripts/install_blendsql.sh installs pinned versions into a separate
environment ($RELMEM_HOME/blendsql-venv), whose Python runs relmem/bench/blendsql_worker.py; without it the mode is
skipped with the reason. SWAN's queries are written in an older BlendSQL syntax ('T::column', options='a;b' or
(T::column), a subquery as LLMQA's second argument); they are rewritten into the installed version's syntax with the
same tolerances as relmem's translation (relmem.hybrid.blendsql). BlendSQL fills no table, so there is no factuality
to measure: its LLM answers function calls, not cells of the dropped columns.
"""
import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

from .. import outputs
from .._relmem import Error
from ..encoders import relmem_home
from ..hybrid import blendsql as relmem_blendsql
from ..llm import local

MODE = "blendsql"
ENV_PYTHON = "RELMEM_BLENDSQL_PYTHON"
WORKER = Path(__file__).with_name("blendsql_worker.py")
_CALL = re.compile(r"\s*(LLMMap|LLMQA)\s*\((.*)\)\s*$", re.S)  # no SWAN query calls LLMJoin


def python_path():
    """The BlendSQL environment's Python: $RELMEM_BLENDSQL_PYTHON, else the one install_blendsql.sh made."""
    return os.environ.get(ENV_PYTHON) or os.path.join(relmem_home(), "blendsql-venv", "bin", "python")


def _identifier(name):
    return name if re.fullmatch(r"[A-Za-z_]\w*", name) else '"' + name.replace('"', '""') + '"'


def _reference(text, name_of):
    """'T::column' -> T.column, T written as it is known where the call sits."""
    named = relmem_blendsql._column_name(text)
    if named is None:
        return None
    return f"{_identifier(name_of(named[0]))}.{_identifier(named[1])}"


def _options(value, name_of):
    kind, text = value
    reference = _reference(text.strip().strip("()"), name_of)
    if reference:
        return reference
    return "(" + ", ".join(relmem_blendsql._literal(o.strip()) for o in text.split(";") if o.strip()) + ")"


def write_call(call, connection, name_of):
    """One SWAN BlendSQL call in the installed BlendSQL's syntax (a relmem.hybrid.blendsql.translate writer)."""
    match = _CALL.match(call)
    if not match:
        raise Error(f"not an LLMMap or LLMQA call: {call.strip()[:80]}")
    name, body = match.groups()
    positional, keywords = relmem_blendsql._arguments(body)
    instruction = positional[0][1] if positional and positional[0][0] == "str" else None
    rest = positional[1:] or ([keywords["context"]] if "context" in keywords else [])
    if instruction is None or not rest:
        raise Error(f"{name} needs an instruction and a column or a subquery: {call.strip()[:80]}")
    source = rest[0][1]
    column = _reference(source, name_of)
    if name == "LLMMap" and column is None:
        raise Error(f"LLMMap needs a 'table::column' reference: {call.strip()[:80]}")
    options = f", options={_options(keywords['options'], name_of)}" if "options" in keywords else ""
    if name == "LLMMap":
        return f"{{{{LLMMap({relmem_blendsql._literal(instruction)}, {column}{options})}}}}"
    if column is not None:
        table, col = relmem_blendsql._column_name(source)
        source = f"SELECT {_identifier(col)} FROM {_identifier(name_of(table))}"
    context = source.strip().rstrip(";")
    return f"{{{{LLMQA({relmem_blendsql._literal(instruction)}, context=({context}){options})}}}}"


def rewrite(sql, connection):
    """A SWAN BlendSQL query in the installed BlendSQL's syntax."""
    rewritten = relmem_blendsql.translate(sql, connection, write_call)
    return "SELECT " + rewritten if rewritten.startswith("{{") else rewritten


def model_path(args):
    """The GGUF BlendSQL runs: the one relmem's modes run (--llm-gguf, $RELMEM_LLM_GGUF, the installed default)."""
    if args.llm != "model":
        raise Error("--mode blendsql runs BlendSQL with a real model: pass --llm model")
    if args.llm_base_url or args.llm_model:
        raise Error("--mode blendsql runs a GGUF model in process (BlendSQL's LlamaCpp); an endpoint is not used")
    path = args.llm_gguf or local.default_gguf()
    if not path or not os.path.isfile(path):
        raise Error("--mode blendsql: no GGUF model: install the local model (make llm) or pass --llm-gguf")
    return path


def describe_gguf(path):
    """The model's name and quantization as relmem's local LLM names them, read from the GGUF's metadata."""
    from llama_cpp import Llama
    try:
        vocabulary = Llama(model_path=str(path), vocab_only=True, verbose=False)
    except (ValueError, RuntimeError) as error:
        raise Error(f"llama.cpp could not read {path}: {error}") from None
    metadata = vocabulary.metadata or {}
    vocabulary.close()  # now, not at interpreter exit, when llama.cpp's bindings are gone
    quantization = local.FILE_TYPES.get(int(metadata.get("general.file_type", -1)), "unknown")
    return f"{metadata.get('general.name') or os.path.basename(path)} ({quantization}, llama.cpp)"


def unavailable():
    """Why BlendSQL cannot run here, or None."""
    python = python_path()
    if not os.path.isfile(python):
        return f"BlendSQL is not installed ({python} is absent): run scripts/install_blendsql.sh"
    return None


class Worker:
    """The BlendSQL process: one model load, then one query at a time."""

    def __init__(self, gguf, work):
        cache = Path(work) / "blendsql-cache"
        outputs.refuse_existing(cache, "--work")  # a cache from an earlier run would answer for the model
        outputs.make_folder(cache, "--work")
        environment = dict(os.environ, XDG_CACHE_HOME=str(cache))  # BlendSQL's response cache lands in --work
        self.process = subprocess.Popen([python_path(), str(WORKER), "--gguf", str(gguf)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
        ready = self._read()
        if not ready.get("ready"):
            raise Error(f"BlendSQL did not start: {ready.get('error', '')}")
        self.versions = {k: v for k, v in ready.items() if k != "ready"}

    def _read(self):
        line = self.process.stdout.readline()
        if not line:
            error = self.process.stderr.read()[-1500:]
            raise Error(f"the BlendSQL process exited: {error.strip()}")
        return json.loads(line)

    def ask(self, question_id, db, query):
        self.process.stdin.write(json.dumps({"id": question_id, "db": str(db), "query": query}) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=60)


def run(args, questions, prepared, gold, work, same_rows, records):
    """Each question's BlendSQL query through BlendSQL on the curated database: (rows, summary extras)."""
    worker = Worker(model_path(args), work)
    rows = []
    try:
        for q in questions:
            row = records.finished(MODE, q.id)
            if row is None:
                row = _question(worker, q, prepared[q.database][0], gold[q.id], same_rows)
                records.write(MODE, q.id, row)
            rows.append(row)
    finally:
        worker.close()
    return rows, {"versions": worker.versions}


def _question(worker, q, curated, gold, same_rows):
    with sqlite3.connect(f"file:{curated}?mode=ro", uri=True) as connection:
        try:
            query = rewrite(q.hybrid_sql, connection)
        except Error as error:
            return {"ok": False, "correct": False, "error": f"rewriting: {error}", "tokens": 0, "prompt_tokens": 0,
                    "completion_tokens": 0, "calls": 0, "rows_filled": 0, "seconds": 0.0, "database": q.database}
    answer = worker.ask(q.id, curated, query)
    row = {"ok": "error" not in answer, "database": q.database, "sql": query, "seconds": answer["seconds"],
           "prompt_tokens": answer.get("prompt_tokens", 0), "completion_tokens": answer.get("completion_tokens", 0),
           "calls": answer.get("calls", 0), "rows_filled": 0}
    row["tokens"] = row["prompt_tokens"] + row["completion_tokens"]
    row["correct"] = bool(row["ok"] and gold.ok and same_rows(answer["rows"], gold.rows))
    if not row["ok"]:
        row["error"] = f"BlendSQL: {answer['error']}"
    elif not row["correct"]:
        row["error"] = f"wrong result: {len(answer['rows'])} rows, gold {len(gold.rows)}"
    return row
