"""Sentence encoder throughput: sentences/s for short, medium and long texts at several batch sizes, peak memory,
and, for USE-lite, the TensorFlow.js reference (node) on the same short texts, measured in the same run.

On a machine shared with other work, throughput drifts within minutes, so the short texts, where the two are
compared, are measured --repeats times with the reference run between our measurements; each figure is the median
of its runs, and every run is in the JSON ("short_runs").

The reference is scripts/reference/use_lite_reference.mjs with the npm packages that
`scripts/install_models.sh --with-reference` installs; without node or those packages it is reported as null with
the reason.

With --compare, a sentence-transformers model (minilm) in relmem, torch and onnxruntime instead: encoder_compare.
"""
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from . import encoder_compare
from ..encoders import load_encoder, relmem_home

REFERENCE_SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "reference" / "use_lite_reference.mjs"

# Common English words (about one SentencePiece token each) and database-flavoured nouns.
WORDS = (
    "the of and to in is was for on are with as by at from that this which who what how many much show list find "
    "give return count number name names total average maximum minimum all each every most least more than less "
    "between after before during year years city cities country countries state department employee employees "
    "student students teacher course courses singer singers song songs concert stadium capacity age ages salary "
    "price prices order orders customer customers product products store stores flight flights airport airline "
    "city team teams player players game games match date dates time money budget rank ranking id code type status "
    "people person manager company companies school schools room rooms book books author authors movie movies film "
    "director rating ratings album track tracks artist artists genre music car cars model models maker engine weight "
    "pet pets dog dogs owner owners address street town region market sales revenue profit cost level grade class "
    "first last new old big small high low long short open closed active has have had do does did not only also "
    "their its his her them they we you our your one two three four five ten hundred per over under near"
).split()

SIZES = {"short": (4, 9), "medium": (48, 54), "long": (230, 250)}  # words per text (tokens: <=16, ~64, >=256)


def add_arguments(parser):
    parser.add_argument("--encoder", default="use-lite", help="encoder spec, as for relmem.load_encoder")
    parser.add_argument("--batch-sizes", default=None,
                        help="comma-separated batch sizes (default 1,32,256; with --compare 1,64)")
    parser.add_argument("--texts", type=int, default=1024, help="distinct texts per length")
    parser.add_argument("--min-seconds", type=float, default=2.0, help="time spent per measurement")
    parser.add_argument("--reference-dir", default=None,
                        help="node reference packages (default $RELMEM_USE_LITE_REFERENCE_DIR or "
                             "$RELMEM_HOME/reference/use-lite)")
    parser.add_argument("--reference-seconds", type=float, default=5.0, help="time spent per reference measurement")
    parser.add_argument("--no-reference", action="store_true", help="skip the node reference")
    parser.add_argument("--repeats", type=int, default=3,
                        help="measurements of the short texts (alternating with the reference); figures are medians")
    parser.add_argument("--seed", type=int, default=0)
    encoder_compare.add_arguments(parser)


def make_texts(size, count, seed):
    rng = random.Random(f"{seed}-{size}")
    low, high = SIZES[size]
    texts = []
    for _ in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
        sentences, start = [], 0
        while start < len(words):  # sentences of 6-14 words
            end = min(len(words), start + rng.randint(6, 14))
            sentence = " ".join(words[start:end])
            sentences.append(sentence[0].upper() + sentence[1:] + rng.choice(".?"))
            start = end
        texts.append(" ".join(sentences))
    return texts


def measure(encoder, texts, batch_size, min_seconds):
    batches = [texts[i:i + batch_size] for i in range(0, len(texts), batch_size)]
    encoder.encode(batches[0])  # warm-up
    sentences, start, cpu_start, elapsed = 0, time.perf_counter(), time.process_time(), 0.0
    while elapsed < min_seconds:
        for batch in batches:
            encoder.encode(batch)
            sentences += len(batch)
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds:
                break
    cpu_seconds = time.process_time() - cpu_start
    return {"sentences_per_s": sentences / elapsed, "sentences_per_cpu_s": sentences / cpu_seconds}


def reference_dir(args):
    if args.reference_dir:
        return Path(args.reference_dir)
    if os.environ.get("RELMEM_USE_LITE_REFERENCE_DIR"):
        return Path(os.environ["RELMEM_USE_LITE_REFERENCE_DIR"])
    return Path(relmem_home()) / "reference" / "use-lite"


def run_reference(args, command, texts, extra=()):
    """Runs the node reference script; returns (parsed JSON, None) or (None, reason)."""
    node = shutil.which("node")
    if node is None:
        return None, "node is not installed"
    ref_dir = reference_dir(args)
    if not (ref_dir / "node_modules" / "@energetic-ai" / "embeddings").is_dir():
        return None, f"reference packages not installed in {ref_dir} (scripts/install_models.sh --with-reference)"
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(texts, f)
    try:
        proc = subprocess.run([node, str(REFERENCE_SCRIPT), command, f.name, "--reference-dir", str(ref_dir), *extra],
                              capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None, "the node reference timed out"
    finally:
        os.unlink(f.name)
    if proc.returncode != 0:
        return None, f"the node reference failed: {proc.stderr.strip()[-500:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), None


def median_run(runs):
    """The median of each figure over runs (dicts with the same numeric keys)."""
    return {key: statistics.median(run[key] for run in runs) for key in ("sentences_per_s", "sentences_per_cpu_s")}


def reference_status(args, encoder):
    """None when the node reference can run for this encoder, else the reason it does not."""
    if not encoder.name.startswith("use-lite"):
        return "the node reference exists for use-lite (and use-lite-int8) only"
    if args.no_reference:
        return "skipped (--no-reference)"
    return None


def measure_short(args, encoder, texts, batch_sizes, repeats, with_reference):
    """Ours and, when asked, the reference's runs on the short texts, alternating; (ours, reference, reason)."""
    ours = {str(b): [] for b in batch_sizes}
    reference = {str(b): [] for b in batch_sizes} if with_reference else None
    reason = None
    for _ in range(repeats):
        for b in batch_sizes:
            ours[str(b)].append(measure(encoder, texts, b, args.min_seconds))
            if reference is None:
                continue
            measured, reason = run_reference(args, "bench", texts,
                                             ["--batch-size", str(b), "--min-seconds", str(args.reference_seconds)])
            if measured is None:
                reference = None
                continue
            reference[str(b)].append(measured)
    return ours, reference, reason


def run(args):
    default_batch_sizes = "1,64" if args.compare else "1,32,256"
    batch_sizes = [int(b) for b in (args.batch_sizes or default_batch_sizes).split(",")]
    if args.compare:
        texts = {size: make_texts(size, args.texts, args.seed) for size in ("short", "medium")}
        return encoder_compare.compare(args, texts, batch_sizes)
    texts = {size: make_texts(size, args.texts, args.seed) for size in SIZES}
    load_before = os.getloadavg()[0]
    rss_before_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    encoder = load_encoder(args.encoder)
    load_seconds = time.perf_counter() - start

    repeats = max(1, args.repeats)
    unavailable = reference_status(args, encoder)
    short_runs, reference_runs, reason = measure_short(args, encoder, texts["short"], batch_sizes, repeats,
                                                       unavailable is None)
    unavailable = unavailable or reason
    results = {"short": {b: median_run(runs) for b, runs in short_runs.items()}}
    for size in ("medium", "long"):
        results[size] = {str(b): measure(encoder, texts[size], b, args.min_seconds) for b in batch_sizes}
    peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    report = {
        "benchmark": "encoder",
        "encoder": encoder.name,
        "dim": encoder.dim,
        "half_weights": getattr(encoder, "half_weights", None),  # a BERT encoder's dense weights as fp16; else None
        "threads": int(os.environ.get("OMP_NUM_THREADS", os.cpu_count())),
        "load_seconds": load_seconds,
        "texts_per_length": args.texts,
        "words_per_text": {size: list(bounds) for size, bounds in SIZES.items()},
        "repeats_short": repeats,
        "sentences_per_s": {size: {b: r["sentences_per_s"] for b, r in by_batch.items()}
                            for size, by_batch in results.items()},
        # Throughput per second of CPU time (all threads): comparable on a machine shared with other work.
        "sentences_per_cpu_s": {size: {b: r["sentences_per_cpu_s"] for b, r in by_batch.items()}
                                for size, by_batch in results.items()},
        "short_runs": short_runs,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg()[0],
        "peak_rss_mib": peak_rss_mib,
        "rss_before_load_mib": rss_before_mib,
        "tokens_per_text": None,
        "reference": None,
        "reference_unavailable": unavailable,
    }
    if reference_runs is None:
        return report

    tokens = {}
    for size in SIZES:
        stats, _ = run_reference(args, "tokens", texts[size])
        if stats is None:
            break
        tokens[size] = stats
    report["tokens_per_text"] = tokens or None
    reference = {b: median_run(runs) for b, runs in reference_runs.items()}
    first = next(iter(reference_runs.values()))[0]
    report["reference"] = {
        "implementation": "@energetic-ai/embeddings (TensorFlow.js, %s backend)" % first["backend"],
        "short_sentences_per_s": {b: r["sentences_per_s"] for b, r in reference.items()},
        "short_sentences_per_cpu_s": {b: r["sentences_per_cpu_s"] for b, r in reference.items()},
        "short_runs": reference_runs,
        "speedup_short": {b: results["short"][b]["sentences_per_s"] / r["sentences_per_s"]
                          for b, r in reference.items()},
        "speedup_short_per_cpu_s": {b: results["short"][b]["sentences_per_cpu_s"] / r["sentences_per_cpu_s"]
                                    for b, r in reference.items()},
    }
    best = max(report["sentences_per_s"]["short"].values())
    report["reference"]["speedup_best_short"] = best / max(r["sentences_per_s"] for r in reference.values())
    return report
