"""Reference sentence encoders for parity tests and benchmarks, run in a Python that has torch and
sentence-transformers (and, for the onnx backend, onnxruntime); relmem itself never imports them.

    python sentence_encoder_reference.py embed MODEL_DIR TEXTS.json OUT.npy [TOKENS.json]
    python sentence_encoder_reference.py export MODEL_DIR OUT.onnx
    python sentence_encoder_reference.py bench MODEL_DIR NAME=TEXTS.json... --backend torch|onnx [--onnx FILE]
                                               --batch-sizes 1,64 --threads T --min-seconds S

embed writes sentence-transformers' embeddings (float32, one row per text) on the CPU and, when asked, the token
ids of every text ([CLS] and [SEP] included, after truncation). export writes a float32 ONNX file of the
transformer (inputs input_ids, attention_mask, token_type_ids; output 0 the token states). bench prints one JSON
line with texts per second for every texts file and batch size; the onnx backend runs FILE (an export, or another
file with those inputs and outputs) and pools and normalises with numpy, as sentence-transformers does.
"""
import argparse
import json
import os
import sys
import time


def load_model(model_dir, threads=None):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer
    if threads:
        torch.set_num_threads(threads)
    return SentenceTransformer(model_dir, device="cpu")


def embed(args):
    import numpy as np
    model = load_model(args.model_dir)
    with open(args.texts, encoding="utf-8") as f:
        texts = json.load(f)
    vectors = model.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=False)
    with open(args.out, "xb") as f:
        np.save(f, vectors.astype(np.float32))
    if args.tokens:
        ids = [[int(i) for i, keep in zip(row, mask) if keep]
               for text in texts
               for row, mask in zip(*(model.tokenize([text])[k].tolist() for k in ("input_ids", "attention_mask")))]
        with open(args.tokens, "x", encoding="utf-8") as f:
            json.dump(ids, f)


def export_onnx(model, path):
    import torch
    transformer = model[0].auto_model.eval()
    # A padded example batch, so that the trace keeps the attention mask.
    example = model.tokenize(["an example sentence", "a longer example sentence with more words in it"])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    axes["token_states"] = {0: "batch", 1: "sequence"}

    class Wrapper(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    with torch.no_grad():
        torch.onnx.export(Wrapper(transformer), tuple(example[n] for n in names), path, input_names=names,
                          output_names=["token_states"], dynamic_axes=axes, opset_version=17, dynamo=False)


def onnx_encoder(model, onnx_file, threads):
    import numpy as np
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(onnx_file, options, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in session.get_inputs()}
    modes = model[1].get_config_dict()["pooling_mode"]
    if modes not in ("mean", "cls", ["mean"], ["cls"]):
        raise SystemExit(f"the onnx backend pools by mean or cls only, not {modes}")
    cls = "cls" in modes

    def encode(texts):
        features = model.tokenize(texts)
        feed = {name: features[name].numpy().astype(np.int64) for name in wanted}
        states = session.run(None, feed)[0]
        if cls:
            pooled = states[:, 0]
        else:
            mask = feed["attention_mask"][..., None].astype(np.float32)
            pooled = (states * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    return encode


def measure(encode, texts, batch_size, min_seconds):
    batches = [texts[i:i + batch_size] for i in range(0, len(texts), batch_size)]
    encode(batches[0])  # warm-up
    count, start, elapsed = 0, time.perf_counter(), 0.0
    cpu_start = time.process_time()
    while elapsed < min_seconds:
        for batch in batches:
            encode(batch)
            count += len(batch)
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds:
                break
    return count / elapsed, count / (time.process_time() - cpu_start)


def bench(args):
    import torch
    model = load_model(args.model_dir, args.threads)
    if args.backend == "torch":
        def encode(batch):
            with torch.inference_mode():
                return model.encode(batch, batch_size=len(batch), convert_to_numpy=True, normalize_embeddings=True)
        source = f"sentence-transformers, torch {torch.__version__} (CPU)"
    else:
        import onnxruntime
        if args.onnx is None:
            raise SystemExit("the onnx backend needs --onnx FILE (made by the export command)")
        encode = onnx_encoder(model, args.onnx, args.threads)
        source = f"onnxruntime {onnxruntime.__version__}"
    report = {"implementation": source, "texts_per_s": {}, "texts_per_cpu_s": {}}
    for named in args.texts:
        name, _, path = named.partition("=")
        with open(path, encoding="utf-8") as f:
            texts = json.load(f)
        for batch_size in (int(b) for b in args.batch_sizes.split(",")):
            per_s, per_cpu_s = measure(encode, texts, batch_size, args.min_seconds)
            report["texts_per_s"].setdefault(name, {})[str(batch_size)] = per_s
            report["texts_per_cpu_s"].setdefault(name, {})[str(batch_size)] = per_cpu_s
    print(json.dumps(report))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("embed")
    p.add_argument("model_dir")
    p.add_argument("texts")
    p.add_argument("out")
    p.add_argument("tokens", nargs="?")
    p = sub.add_parser("export")
    p.add_argument("model_dir")
    p.add_argument("out")
    p = sub.add_parser("bench")
    p.add_argument("model_dir")
    p.add_argument("texts", nargs="+", help="NAME=TEXTS.json")
    p.add_argument("--backend", choices=["torch", "onnx"], required=True)
    p.add_argument("--onnx", default=None)
    p.add_argument("--batch-sizes", default="1,64")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--min-seconds", type=float, default=3.0)
    args = parser.parse_args(argv)
    if args.command == "export":
        export_onnx(load_model(args.model_dir), args.out)
    else:
        embed(args) if args.command == "embed" else bench(args)


if __name__ == "__main__":
    sys.exit(main())
