"""`relmem bench encoder --compare`: one sentence-transformers model in relmem, in torch (sentence-transformers on
the CPU) and in onnxruntime, side by side in one run, texts per second at each batch size with the same threads.

Every implementation runs in a child process of its own with OMP_NUM_THREADS (and torch's and onnxruntime's thread
counts) set to --threads, so no process sees another's thread pools. torch and onnxruntime run in the reference
Python (--reference-python, default $RELMEM_REFERENCE_PYTHON or the repository's .venv-ref) through
scripts/reference/sentence_encoder_reference.py; relmem never imports them. Each child measures every text length
and batch size; the three run in turn, --repeats times, and each figure is the median of its runs.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ..encoders import installed_model_dir, load_encoder

ROOT = Path(__file__).resolve().parents[3]
REFERENCE_SCRIPT = ROOT / "scripts" / "reference" / "sentence_encoder_reference.py"
MODELS = {"minilm": "minilm"}  # encoder spec -> installed model folder name


def add_arguments(parser):
    parser.add_argument("--compare", action="store_true",
                        help="relmem against torch and onnxruntime on the same model (the encoder must be a "
                             "sentence-transformers model: minilm or bert:/dir)")
    parser.add_argument("--threads", type=int, default=2, help="threads of every implementation, with --compare")
    parser.add_argument("--reference-python", default=None,
                        help="Python with torch, sentence-transformers and onnxruntime, with --compare")
    parser.add_argument("--onnx", default=None,
                        help="an ONNX file of the model for onnxruntime, with --compare (default: a float32 "
                             "export made with torch.onnx at the start of the run)")


def model_dir(spec):
    if spec.startswith("bert:"):
        return spec[len("bert:"):]
    name, _, folder = spec.partition(":")
    if name in MODELS:
        return folder or installed_model_dir(MODELS[name])
    return None


def reference_python(args):
    for python in (args.reference_python, os.environ.get("RELMEM_REFERENCE_PYTHON"),
                   str(ROOT / ".venv-ref" / "bin" / "python")):
        if python and Path(python).exists():
            return python
    return None


def child_environment(threads):
    env = dict(os.environ)
    for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[key] = str(threads)
    return env


def run_child(command, threads):
    proc = subprocess.run(command, capture_output=True, text=True, env=child_environment(threads), timeout=900)
    if proc.returncode != 0:
        return None, proc.stderr.strip()[-800:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), None


def relmem_command(args, texts_files, batch_sizes):
    return [sys.executable, "-m", "relmem.bench.encoder_compare", args.encoder, ",".join(map(str, batch_sizes)),
            str(args.min_seconds), *texts_files]


def reference_command(python, args, directory, texts_files, batch_sizes, backend, onnx_file):
    command = [python, str(REFERENCE_SCRIPT), "bench", directory, *texts_files, "--backend", backend,
               "--batch-sizes", ",".join(map(str, batch_sizes)), "--threads", str(args.threads),
               "--min-seconds", str(args.min_seconds)]
    return command + (["--onnx", onnx_file] if onnx_file else [])


def compare(args, texts_by_size, batch_sizes):
    directory = model_dir(args.encoder)
    if directory is None or not Path(directory).is_dir():
        raise SystemExit(f"--compare needs an installed sentence-transformers model, not '{args.encoder}'")
    python = reference_python(args)
    runs, unavailable = {}, {}
    if python is None:
        unavailable["torch"] = unavailable["onnx"] = "no reference Python (--reference-python or .venv-ref)"
    with tempfile.TemporaryDirectory() as tmp:
        onnx_file = args.onnx
        if python and onnx_file is None:
            onnx_file = os.path.join(tmp, "model.onnx")
            proc = subprocess.run([python, str(REFERENCE_SCRIPT), "export", directory, onnx_file],
                                  capture_output=True, text=True, timeout=900)
            if proc.returncode != 0:
                unavailable["onnx"] = "torch.onnx export failed: " + proc.stderr.strip()[-800:]
        texts_files = []
        for size, texts in texts_by_size.items():
            path = os.path.join(tmp, f"{size}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(texts, f)
            texts_files.append(f"{size}={path}")
        commands = {"relmem": relmem_command(args, texts_files, batch_sizes)}
        if python:
            for backend in ("torch", "onnx"):
                commands[backend] = reference_command(python, args, directory, texts_files, batch_sizes, backend,
                                                      onnx_file)
        for _ in range(max(1, args.repeats)):
            for name, command in commands.items():
                if name in unavailable:
                    continue
                measured, error = run_child(command, args.threads)
                if measured is None:
                    unavailable[name] = error
                else:
                    runs.setdefault(name, []).append(measured)
    figures = {name: {size: {b: statistics.median(run["texts_per_s"][size][b] for run in measured)
                             for b in measured[0]["texts_per_s"][size]}
                      for size in measured[0]["texts_per_s"]}
               for name, measured in runs.items()}
    report = {
        "benchmark": "encoder-compare",
        "encoder": args.encoder,
        "model_dir": directory,
        "onnx": args.onnx or "float32 torch.onnx export",
        "threads": args.threads,
        "repeats": max(1, args.repeats),
        "min_seconds": args.min_seconds,
        "texts_per_size": {size: len(texts) for size, texts in texts_by_size.items()},
        "implementations": {name: measured[0]["implementation"] for name, measured in runs.items()},
        "texts_per_s": figures,
        "runs": runs,
        "unavailable": unavailable,
        "load_average": os.getloadavg()[0],
    }
    if "relmem" in figures:
        report["speedup"] = {other: {size: {b: figures["relmem"][size][b] / value for b, value in by_batch.items()}
                                     for size, by_batch in figures[other].items()}
                             for other in figures if other != "relmem"}
    return report


def worker(spec, batch_sizes, min_seconds, texts_files):
    """The relmem side, run as a child: prints one JSON line like the reference script's."""
    from .encoder import measure
    encoder = load_encoder(spec)
    weights = "fp16" if getattr(encoder, "half_weights", False) else "fp32"
    report = {"implementation": f"relmem {spec} ({weights} weights)", "texts_per_s": {}, "texts_per_cpu_s": {}}
    for named in texts_files:
        size, _, path = named.partition("=")
        with open(path, encoding="utf-8") as f:
            texts = json.load(f)
        for batch_size in batch_sizes.split(","):
            measured = measure(encoder, texts, int(batch_size), min_seconds)
            report["texts_per_s"].setdefault(size, {})[batch_size] = measured["sentences_per_s"]
            report["texts_per_cpu_s"].setdefault(size, {})[batch_size] = measured["sentences_per_cpu_s"]
    print(json.dumps(report))


if __name__ == "__main__":
    worker(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:])
