"""Benchmarks: `relmem bench NAME ... --json`. Each module has add_arguments(parser) and run(args) -> dict."""
BENCHMARKS = {
    "index": "relmem.bench.index",
}
