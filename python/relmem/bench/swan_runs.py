"""Who fills in `relmem bench swan`, and the per-question records it writes as it goes.

--llm oracle-filler: the scripted filler answering from SWAN's original databases (measures relmem's machinery).
--llm model: a real LLM chosen by the usual LLM flags (default: the local llama.cpp model), its fill requests
constrained to their reply schema (relmem.hybrid.fill_contract).

--results FILE: one JSON line per finished question and mode (and one for HQDL's up-front fill), written and
flushed as each finishes, so an interrupted run keeps what it did. --resume FILE: the finished lines of an earlier
--results file are reused (copied into the new --results) and those questions are not run again; a question whose
LLM failed (`llm_failed`) runs again. The fill stores are new, so a resumed lazy run may fill again what the earlier
run filled.
"""
import json
import os

from .. import llm as llm_module
from .. import outputs
from .._relmem import Error
from ..eval import OracleFiller
from ..hybrid import fill_contract

ORACLE = "oracle-filler"
MODEL = "model"
ORACLE_DESCRIPTION = ("oracle-filler (scripted: answers from the original databases; measures relmem's machinery, "
                      "not an LLM)")
UPFRONT = "(upfront fill)"  # the record id of HQDL's fill of every row before its questions


def add_arguments(parser):
    parser.add_argument("--llm", default=ORACLE, choices=(ORACLE, MODEL),
                        help="who fills: the scripted oracle filler (default), or a real LLM (the LLM flags below; "
                             "default the local llama.cpp model)")
    parser.add_argument("--results", default=None, metavar="FILE",
                        help="new JSON-lines file: one line per finished question and mode, written as it finishes")
    parser.add_argument("--resume", default=None, metavar="FILE",
                        help="an earlier --results file: its finished questions are reused, not run again")
    llm_module.add_llm_arguments(parser)


def filler(args, sources):
    """(the LLM the sessions fill through, a line naming it, the OracleFiller or None)."""
    if args.llm == ORACLE:
        oracle = OracleFiller(sources, error_rate=args.fill_error, seed=args.seed)
        return oracle, ORACLE_DESCRIPTION, oracle
    if args.fill_error:
        raise Error("--fill-error makes the oracle filler's values wrong; a real LLM (--llm model) makes its own")
    model = llm_module.from_args(args)
    if model is None:
        raise Error("--llm model: no LLM is configured: install the local model (make llm), pass --llm-gguf, or "
                    "--llm-base-url and --llm-model")
    return fill_contract.constrained(model), llm_module.describe(model), None


def _read(path):
    done = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                key = (record["mode"], record["question_id"])
            except (json.JSONDecodeError, KeyError, TypeError):
                raise Error(f"{path}, line {number} is not a SWAN result; not resuming from it") from None
            if not record.get("row", {}).get("llm_failed"):
                done[key] = record
    return done


class Records:
    """The --results file, and the rows an earlier one (--resume) finished."""

    def __init__(self, path=None, resume=None):
        if path and resume and os.path.realpath(path) == os.path.realpath(resume):
            raise Error("--results must be a new file: --resume reads the earlier one, which is left as it is")
        self.done = _read(resume) if resume else {}
        self.file = outputs.open_new_for_append(path, "--results") if path else None
        self.reused = 0

    def finished(self, mode, question_id):
        """The row an earlier run finished for this question and mode (recorded again here), or None."""
        record = self.done.get((mode, question_id))
        if record is None:
            return None
        self.reused += 1
        self._write(record)
        return dict(record["row"])

    def write(self, mode, question_id, row):
        self._write({"mode": mode, "question_id": question_id, "row": row})

    def _write(self, record):
        if self.file is None:
            return
        self.file.write(json.dumps(record, sort_keys=True) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())

    def close(self):
        if self.file is not None:
            self.file.close()
