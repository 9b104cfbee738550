"""Database selection memory on labelled questions: recall@k, composite questions, set selection and latency.

    relmem bench selection --dbs ../shared/data/spider/database --questions ../shared/data/spider/dev.json --json

Every database under --dbs is embedded (the whole collection), then each question of --questions (a JSON list of
objects with "question" and "db_id" or "db_ids") is ranked against all of them.

recall@k: the share of a question's gold databases among its top k, averaged over questions (for one gold
database: whether it is in the top k). all_in_top5: the share of questions with every gold database in the top 5.
precision / recall / f1: of select_set, micro-averaged over the selected and gold databases of every question.
ms_per_question: one select() call per question (encoding included), one question at a time, after one untimed
question; cpu_ms_per_question: the process's CPU time in those calls (on a shared, loaded host the wall time also
counts the time other processes hold the cores) (the first question after the memory changed recomputes the lexical IDF weights: "first_question_ms").

--composite N adds N two-database questions built from pairs of --questions entries on different databases with
the paper's template ("Which question has a larger number as its answer. Q1: ...; Q2: ..."), reported under
"composite". --natural-composite N adds N questions of --parts K entries on K different databases, written one after
another as plain sentences (no template), reported under "natural_composite"; --oracle-parts also ranks both sets
by the questions each was made of (select_parts), the split a perfect decomposer would give, under "oracle_parts"
of each (the ceiling of an LLM decomposition stage). --synonym-questions adds the
--questions in which schema words could be replaced by WordNet synonyms (relmem.bench.synonyms), replaced, under
"synonym_questions". Composites are drawn by the C++ make_composites, and every metric is computed by the C++
ranking_metrics and set_metrics that the trainer uses.
--calibrate FILE fits select_set's probabilities and threshold on other labelled questions (plus
composite ones built from them) before evaluating; with a --model whose file names its trainer's held-out databases,
only on their questions (questions the model trained on score too well to set its threshold); by default train_spider.json beside --questions is used when it
exists and is not the --questions file itself ("none" disables calibration). Calibration questions whose text is
also an evaluated question are dropped. --calibrate-objective likelihood sets the threshold at 0.5 instead of
at the best set F1 on them; --calibrate-lead adds each candidate's lead over the best other one as a feature.
--synthetic N grows the memory to N databases with vectors made from the real ones (see synthetic_databases) and
reports latency (and recall, now among synthetic look-alikes) there, on the first 500 questions; then it saves the
grown memory and opens it again in a fresh process ("reopened"), which reports the seconds SelectionMemory.load took
(the encoder included; vectors are memory-mapped), the first
question's milliseconds, latency and recall on the same questions, and the process's resident memory (VmRSS) and
peak (VmHWM) after them, the resident bytes split into anonymous memory and mapped file pages. --keep FOLDER keeps
the saved memory; --reopen FOLDER measures only the reopening of a kept one. --column-dtype picks the storage of the
column vectors, --table-dtype that of the table vectors (by default as SelectionMemory.build stores them).
--device cuda[:N] moves the synthetic memory, once grown, and the reopened one to that GPU (SelectionMemory.set_device:
the pool's approximate pass over fp16 card vectors there); "device" in "synthetic" and "reopened". --batch N (with --synthetic) also
times select_batch over the questions in batches of N, after one untimed batch: "ms_per_batch" and
"ms_per_question_in_batch" beside the one-at-a-time "ms_per_question".
"""
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np
from tqdm import tqdm

from .. import Error, RelevanceModel, SelectionMemory, outputs
from ..engines import open_catalog
from .._relmem import LabeledQuestion, load_labeled_questions
from .._relmem import make_composites as _make_composites
from .._relmem import ranking_metrics, set_metrics as _set_metrics
from ..encoders import DEFAULT_CHAIN, default_encoder_name, load_encoder
from .synonyms import synonym_questions

SYNTHETIC_VALUES = 20  # stored values per synthetic database (all of them would take gigabytes at 100k)
CALIBRATION_QUESTIONS = 2000  # ordinary calibration questions sampled from --calibrate (plus a quarter as composites:
#                               half of them 2-part template ones, half 3-part plain ones)


def add_arguments(parser):
    parser.add_argument("--dbs", required=True, help="folder of SQLite databases (e.g. spider/database)")
    parser.add_argument("--questions", required=True, help="JSON list of {question, db_id | db_ids}")
    parser.add_argument("--model", default=None, help="trained relevance model file (default: untrained memory)")
    parser.add_argument("--encoder", default=None, help="encoder spec (default: the model's encoder, else "
                                                        f"{DEFAULT_CHAIN})")
    parser.add_argument("--k", default="1,5,10", help="comma-separated k of recall@k")
    parser.add_argument("--composite", type=int, default=0, help="also evaluate N two-database composite questions "
                                                                 "in the paper's template")
    parser.add_argument("--natural-composite", type=int, default=0,
                        help="also evaluate N questions of --parts questions from different databases, written one "
                             "after another without a template")
    parser.add_argument("--parts", type=int, default=3, help="parts of each --natural-composite question")
    parser.add_argument("--synonym-questions", action="store_true",
                        help="also evaluate --questions with schema words replaced by WordNet synonyms "
                             "(relmem.bench.synonyms)")
    parser.add_argument("--oracle-parts", action="store_true",
                        help="also rank --composite and --natural-composite questions by the questions they were "
                             "made of (select_parts), as a perfect decomposition, an LLM's at best, would split them")
    parser.add_argument("--no-split", action="store_true",
                        help="rank questions whole, not by their sentence parts (marked parts are split either way)")
    parser.add_argument("--no-synonyms", action="store_true",
                        help="no WordNet synonyms of table and column names in the lexical texts")
    parser.add_argument("--calibrate", default="auto",
                        help="labelled questions for select_set's calibration (default: train_spider.json beside "
                             "--questions when present; 'none' to skip)")
    parser.add_argument("--calibrate-objective", default="f1", choices=["f1", "likelihood"],
                        help="what fits select_set's threshold: the best set F1 on the calibration questions, or the "
                             "likelihood alone (threshold 0.5)")
    parser.add_argument("--calibrate-lead", action="store_true",
                        help="calibrate on each candidate's score and its lead over the best other candidate")
    parser.add_argument("--synthetic", type=int, default=0, help="latency at an N-database synthetic collection")
    parser.add_argument("--keep", default=None, metavar="FOLDER",
                        help="with --synthetic: save the grown memory into FOLDER (kept) instead of a temporary one")
    parser.add_argument("--reopen", default=None, metavar="FOLDER",
                        help="only open the memory saved in FOLDER in a fresh process and measure it on --questions "
                             "(the first 500); --dbs is not read")
    defaults = SelectionMemory.option_defaults
    parser.add_argument("--column-dtype", default=defaults["column_dtype"], choices=["int8", "fp16", "fp32"],
                        help="storage of the column vectors")
    parser.add_argument("--table-dtype", default=defaults["table_dtype"], choices=["int8", "fp16", "fp32"],
                        help="storage of the table vectors")
    parser.add_argument("--device", default="cpu",
                        help="with --synthetic or --reopen: where the grown and reopened memories find their pools "
                             "(cpu, cuda or cuda:N)")
    parser.add_argument("--batch", type=int, default=0, metavar="N",
                        help="with --synthetic or --reopen: also time select_batch over batches of N questions")
    parser.add_argument("--limit", type=int, default=None, help="at most this many questions")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")


def load_questions(path, limit=None):
    """[(text, [db, ...])] from a JSON list of {question, db_id | db_ids}, read by the C++ loader the trainer uses."""
    questions = [(q.text, q.databases) for q in load_labeled_questions(path)]
    return questions[:limit] if limit else questions


def make_composites(questions, count, seed, parts=2, style="larger-number", with_parts=False):
    """`count` questions of `parts` single-database questions on different databases, joined in `style`, as
    [(text, [db, ...])]; with_parts: also {text: [the questions it was made of]}."""
    singles = [LabeledQuestion(text, dbs) for text, dbs in questions if len(dbs) == 1]
    made = _make_composites(singles, count, parts, parts, [style], seed) if count > 0 else []
    composites = [(q.text, q.databases) for q in made]
    return (composites, {q.text: q.parts for q in made}) if with_parts else composites


def _bar(iterable, description, enabled, **kwargs):
    return tqdm(iterable, desc=description, disable=not enabled, file=sys.stderr, **kwargs)


def build_memory(catalog, encoder, model, progress, **options):
    """Embeds every database of the catalog with SelectionMemory.build's options; returns (memory, seconds)."""
    start = time.perf_counter()
    memory = SelectionMemory.build(catalog, encoder, model=model, progress=progress, **options)
    return memory, time.perf_counter() - start


def evaluate(memory, questions, ks, progress, description="questions", sets=True, parts_of=None):
    """recall@k, all_in_top5, ms per select() and (with sets) set precision/recall/F1 over [(text, [db, ...])].
    With parts_of ({text: [part, ...]}), each question is ranked by its given parts (select_parts) instead."""
    if not questions:
        return {"n": 0}
    depth = max(max(ks), 5)

    def select(text):
        return memory.select_parts(parts_of[text], depth) if parts_of else memory.select(text, depth)

    select(questions[0][0])  # untimed: the first question after a change recomputes the IDF weights
    ranked = []
    seconds = cpu_seconds = 0.0
    for text, _ in _bar(questions, description, progress, unit="q"):
        start, cpu_start = time.perf_counter(), time.process_time()
        ranked.append([m.database for m in select(text)])
        seconds += time.perf_counter() - start
        cpu_seconds += time.process_time() - cpu_start
    ids = {}
    gold = [[ids.setdefault(db, len(ids)) for db in dbs] for _, dbs in questions]
    metrics = ranking_metrics([[ids.setdefault(db, len(ids)) for db in names] for names in ranked], gold, ks)
    out = {"n": len(questions)}
    out.update({f"recall@{k}": r for k, r in zip(metrics.ks, metrics.recall)})
    out.update({"all_in_top5": metrics.all_in_top5, "ms_per_question": 1e3 * seconds / len(questions),
                "cpu_ms_per_question": 1e3 * cpu_seconds / len(questions)})
    if sets:
        out.update(set_metrics(memory, questions))
    return out


def time_batches(memory, questions, batch, depth):
    """ms per select_batch call of `batch` questions (the last batch may be smaller) and per question in them, after
    one untimed batch."""
    texts = [text for text, _ in questions]
    batches = [texts[i:i + batch] for i in range(0, len(texts), batch)]
    memory.select_batch(batches[0], depth)
    start = time.perf_counter()
    for chunk in batches:
        memory.select_batch(chunk, depth)
    seconds = time.perf_counter() - start
    return {"batch": batch, "batches": len(batches), "ms_per_batch": 1e3 * seconds / len(batches),
            "ms_per_question_in_batch": 1e3 * seconds / len(texts)}


def set_metrics(memory, questions):
    """Micro-averaged precision, recall and F1 of select_set over [(text, [db, ...])]."""
    ids = {}
    gold = [[ids.setdefault(db, len(ids)) for db in dbs] for _, dbs in questions]
    chosen = [[ids.setdefault(m.database, len(ids)) for m in matches]
              for matches in memory.select_set_batch([q[0] for q in questions])]
    metrics = _set_metrics(chosen, gold)
    return {"precision": metrics.precision, "recall": metrics.recall, "f1": metrics.f1}


def calibration_file(option, questions_path):
    if option == "none":
        return None
    if option != "auto":
        return option
    beside = os.path.join(os.path.dirname(os.path.abspath(questions_path)), "train_spider.json")
    if os.path.exists(beside) and os.path.abspath(questions_path) != beside:
        return beside
    return None


def calibrate(memory, path, evaluated, seed, databases=None, objective="f1", lead=False, no_database=(), gate=False):
    """Fits select_set's probabilities and threshold (for `objective`, SelectionMemory.calibrate, with the lead as
    a feature when `lead`, gated by the questions no database answers when `gate`) on `path`'s questions (on
    databases of the memory, none of them an evaluated question; only on `databases` when given) plus composites of
    them, and on `no_database`: questions no database answers; returns what was done."""
    texts = {q[0] for q in evaluated}
    allowed = set(databases) if databases is not None else None
    pool = [q for q in load_questions(path) if q[0] not in texts and all(db in memory for db in q[1])
            and (allowed is None or all(db in allowed for db in q[1]))]
    if not pool:
        raise Error(f"no calibration question of {path} names a database of the collection")
    rng = random.Random(seed)
    chosen = rng.sample(pool, min(CALIBRATION_QUESTIONS, len(pool)))
    chosen += make_composites(chosen, len(chosen) // 8, seed + 1) \
        + make_composites(chosen, len(chosen) // 8, seed + 3, 3, "concatenate")
    no_database = [text for text in no_database if text not in texts]
    metrics = memory.calibrate([q[0] for q in chosen] + no_database, [q[1] for q in chosen] + [[]] * len(no_database),
                               objective=objective, lead=lead, gate=gate)
    out = {"file": path, "questions": len(chosen), "no_database_questions": len(no_database), "objective": objective,
           "fit_f1": metrics.f1, **_calibration(memory)}
    if allowed is not None:
        out["databases"] = len(allowed)
    return out


def model_heldout_databases(model):
    """The training databases a model was not trained on (its trainer's held-out ones, recorded in the file), else
    None: calibrating a model on questions it was trained on sets its threshold too low."""
    names = model.training_info.get("heldout_database_names") if model else None
    return names or None


def encoder_heldout_databases(encoder):
    """The training databases a fine-tuned encoder was not trained on, from the relevance_head.json that
    relmem-train-relevance --classifier card-cosine writes beside it (encoder spec "minilm:DIR"), else None."""
    _, _, folder = encoder.name.partition(":")
    head = os.path.join(folder, "relevance_head.json") if folder else ""
    if not head or not os.path.isfile(head):
        return None
    try:
        with open(head, encoding="utf-8") as f:
            training = json.load(f).get("training", {})
    except (OSError, ValueError, AttributeError) as e:
        raise Error(f"{head}: not a relevance head written by the trainer ({e})") from None
    return training.get("heldout_database_names") or None


def _calibration(memory):
    c = memory.calibration
    out = {"scale": c.scale, "lead": c.lead, "bias": c.bias, "threshold": c.threshold, "fitted": c.fitted}
    if c.gated:
        out.update(gate_scale=c.gate_scale, gate_bias=c.gate_bias)
    return out


def _sparse(row):
    """(indices, values) of a dense row's non-zeros, by index."""
    indices = np.flatnonzero(row)
    return indices.astype(np.int64), row[indices].astype(np.float32)


def _real_vectors(memory):
    """Per database of the memory (by name): card row, table names and rows, column rows, question form rows, stored
    values and (with a lexical encoder) the sparse lexical card and table rows."""
    out = []
    for name in memory.databases:
        stored = memory.vectors(name)
        db = {"card": stored["card"], "table_names": stored["table_names"], "tables": stored["table_vectors"],
              "columns": stored["column_vectors"], "values": stored["values"], "table_columns": stored["table_columns"],
              "forms": stored["form_vectors"]}
        if "lexical_card" in stored:
            db["lexical_dim"] = stored["lexical_card"].shape[0]
            db["lexical_card"] = _sparse(stored["lexical_card"])
            db["lexical_tables"] = [_sparse(row) for row in stored["lexical_table_vectors"]]
        out.append(db)
    return out


def _dense(sparse_rows, dim, keep, rng):
    """Dense rows from sparse ones, keeping each non-zero with probability `keep`."""
    out = np.zeros((len(sparse_rows), dim), dtype=np.float32)
    for row, (indices, values) in zip(out, sparse_rows):
        mask = rng.random(len(indices)) < keep
        row[indices[mask]] = values[mask]
    return out


def synthetic_databases(real, count, seed):
    """Yields (name, add_vectors kwargs) for `count` look-alike databases. Each one blends two real databases: its
    card is 0.7 x one card + 0.3 x another + noise, its tables, columns and question forms are the first one's with
    noise, it stores SYNTHETIC_VALUES of the first one's values at random, and its lexical rows keep a random 70% of
    the first one's non-zeros plus 30% of the second one's card."""
    rng = np.random.default_rng(seed)
    dim = real[0]["card"].shape[0]

    def noise(shape):
        return rng.normal(0.0, 0.3 / np.sqrt(dim), shape).astype(np.float32)

    for i in range(count):
        a, b = (real[j] for j in rng.choice(len(real), 2, replace=False))
        card = 0.7 * a["card"] + 0.3 * b["card"] + noise(dim)
        tables = a["tables"] + noise(a["tables"].shape)
        columns = a["columns"] + noise(a["columns"].shape)
        kept_values = rng.choice(len(a["values"]), min(SYNTHETIC_VALUES, len(a["values"])), replace=False)
        kwargs = {"card": card, "table_names": a["table_names"], "table_vectors": tables, "column_vectors": columns,
                  "table_columns": a["table_columns"], "values": [a["values"][j] for j in kept_values]}
        if "lexical_card" in a:
            lexical_card = _dense([a["lexical_card"]], a["lexical_dim"], 0.7, rng)
            lexical_card += _dense([b["lexical_card"]], a["lexical_dim"], 0.3, rng)
            kwargs["lexical_card"] = lexical_card[0]
            kwargs["lexical_table_vectors"] = _dense(a["lexical_tables"], a["lexical_dim"], 0.7, rng)
        kwargs["form_vectors"] = a["forms"] + noise(a["forms"].shape)
        yield f"synthetic_{i:06d}", kwargs


def grow(memory, count, seed, progress):
    """Adds synthetic databases until the memory holds `count`; returns the seconds it took."""
    extra = count - len(memory)
    if extra <= 0:
        return 0.0
    real = _real_vectors(memory)
    start = time.perf_counter()
    for name, kwargs in _bar(synthetic_databases(real, extra, seed), "synthetic databases", progress, total=extra,
                             unit="db"):
        memory.add_vectors(name, **kwargs)
    return time.perf_counter() - start


def run(args):
    try:
        ks = sorted({int(k) for k in args.k.split(",") if k.strip()})
    except ValueError:
        ks = []
    if not ks or ks[0] < 1:
        raise Error("--k needs positive integers, e.g. 1,5,10")
    if args.batch < 0:
        raise Error("--batch needs a positive number of questions")
    if (args.batch or args.device != "cpu") and not (args.synthetic or args.reopen):
        raise Error("--device and --batch apply to --synthetic and --reopen")
    progress = not args.no_progress
    if args.keep:
        outputs.refuse_overlap(args.keep, {"--dbs": args.dbs, "--questions": args.questions, "--model": args.model},
                               "--keep")
    if args.reopen:
        return {"benchmark": "selection",
                "reopened": _reopen(args.reopen, load_questions(args.questions)[:500], ks, args.device, args.batch)}
    model = RelevanceModel.load(args.model) if args.model else None
    encoder = load_encoder(args.encoder or (model.config.encoder if model and model.config.encoder else None)
                           or default_encoder_name())
    catalog = open_catalog(args.dbs)
    memory, build_seconds = build_memory(catalog, encoder, model, progress, column_dtype=args.column_dtype,
                                         table_dtype=args.table_dtype, synonyms=not args.no_synonyms,
                                         split_sentences=not args.no_split)

    questions = load_questions(args.questions, args.limit)
    unknown = sorted({db for _, dbs in questions for db in dbs if db not in memory})
    if unknown:
        raise Error(f"{len(unknown)} databases named by {args.questions} are not under {args.dbs}: "
                    + ", ".join(unknown[:5]))
    composites, composite_parts = make_composites(questions, args.composite, args.seed, with_parts=True)
    natural, natural_parts = make_composites(questions, args.natural_composite, args.seed + 2, args.parts,
                                             "concatenate", with_parts=True)
    synonyms = [(text, dbs) for text, dbs, _, _ in synonym_questions(questions, catalog, args.seed)] \
        if args.synonym_questions else []

    calibration_path = calibration_file(args.calibrate, args.questions)
    calibration = calibrate(memory, calibration_path, questions + composites + natural + synonyms, args.seed,
                            model_heldout_databases(model) or encoder_heldout_databases(encoder),
                            args.calibrate_objective, args.calibrate_lead) \
        if calibration_path \
        else {"file": None, **_calibration(memory)}

    out = {"benchmark": "selection", "encoder": encoder.name, "lexical_encoder": memory.lexical_encoder,
           "model": os.path.abspath(args.model) if args.model else None, "column_dtype": args.column_dtype,
           "table_dtype": args.table_dtype,
           "synonyms": not args.no_synonyms, "split_sentences": not args.no_split,
           "databases": len(memory),
           "build_seconds": build_seconds}
    out.update(evaluate(memory, questions, ks, progress))
    if composites:
        out["composite"] = evaluate(memory, composites, ks, progress, "composite questions")
    if natural:
        out["natural_composite"] = {"parts": args.parts,
                                    **evaluate(memory, natural, ks, progress, "natural composite questions")}
    if args.oracle_parts:
        for key, made, parts_of in (("composite", composites, composite_parts),
                                    ("natural_composite", natural, natural_parts)):
            if made:
                out[key]["oracle_parts"] = evaluate(memory, made, ks, progress, f"{key} by their parts",
                                                    sets=False, parts_of=parts_of)
    if synonyms:
        out["synonym_questions"] = evaluate(memory, synonyms, ks, progress, "synonym questions")
    out["calibration"] = calibration
    if args.synthetic:
        seconds = grow(memory, args.synthetic, args.seed, progress)
        start = time.perf_counter()
        memory.set_device(args.device)
        to_device = time.perf_counter() - start
        sample = questions[:500]
        start = time.perf_counter()
        memory.select(sample[0][0], 1)
        first_question = time.perf_counter() - start
        synthetic = evaluate(memory, sample, ks, progress, f"questions at {len(memory)} databases", sets=False)
        out["synthetic"] = {"databases": len(memory), "build_seconds": seconds, "n": synthetic["n"],
                            "first_question_ms": 1e3 * first_question,
                            "ms_per_question": synthetic["ms_per_question"],
                            "cpu_ms_per_question": synthetic["cpu_ms_per_question"],
                            **{f"recall@{k}": synthetic[f"recall@{k}"] for k in ks},
                            "process_peak_rss_bytes": _process_memory()["VmHWM"], "device": memory.device,
                            "set_device_seconds": to_device}
        if args.batch:
            out["synthetic"].update(time_batches(memory, sample, args.batch, max(max(ks), 5)))
        with contextlib.ExitStack() as stack:
            folder = args.keep or stack.enter_context(tempfile.TemporaryDirectory(prefix="relmem-synthetic-"))
            start = time.perf_counter()
            memory.save(folder)
            out["synthetic"]["save_seconds"] = time.perf_counter() - start
            del memory
            out["synthetic"]["reopened"] = _reopen(folder, sample, ks, args.device, args.batch)
    return out


def _process_memory():
    """VmRSS, VmHWM, RssAnon and RssFile of this process, in bytes."""
    found = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                found[name] = int(value.split()[0]) * 1024
    return found


def _reopen(folder, questions, ks, device="cpu", batch=0):
    """Opens the saved memory on `device` in a fresh process (so nothing of this one's memory is counted) and
    measures it (select_batch in batches of `batch` questions too, when set)."""
    job = json.dumps({"folder": folder, "questions": questions, "ks": ks, "device": device, "batch": batch})
    done = subprocess.run([sys.executable, "-c", "from relmem.bench.selection import reopened_main; reopened_main()"],
                          input=job, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Error("reopening the saved memory failed: " + done.stderr.strip()[-2000:])
    return json.loads(done.stdout)


def reopened_main():
    """The fresh process of _reopen: job JSON on stdin, measurements JSON on stdout."""
    job = json.loads(sys.stdin.read())
    before = _process_memory()["VmRSS"]
    start = time.perf_counter()
    memory = SelectionMemory.load(job["folder"], device=job["device"])
    load_seconds = time.perf_counter() - start
    questions = [(text, gold) for text, gold in job["questions"]]
    start = time.perf_counter()
    memory.select(questions[0][0], 1)
    first_question = time.perf_counter() - start
    measured = evaluate(memory, questions, job["ks"], False, sets=False)
    if job["batch"]:
        measured.update(time_batches(memory, questions, job["batch"], max(max(job["ks"]), 5)))
    after = _process_memory()
    print(json.dumps({
        "device": memory.device,
        **{key: measured[key] for key in ("batch", "batches", "ms_per_batch", "ms_per_question_in_batch")
           if key in measured},
        "load_seconds": load_seconds, "first_question_ms": 1e3 * first_question,
        "open_and_first_answer_seconds": load_seconds + first_question,
        "ms_per_question": measured["ms_per_question"], "cpu_ms_per_question": measured["cpu_ms_per_question"],
        **{f"recall@{k}": measured[f"recall@{k}"] for k in job["ks"]},
        "rss_bytes_before_load": before, "rss_bytes": after["VmRSS"], "peak_rss_bytes": after["VmHWM"],
        "rss_anon_bytes": after["RssAnon"], "rss_file_bytes": after["RssFile"],
        "memory_bytes": memory.memory_bytes,
    }))
