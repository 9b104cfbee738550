"""Benchmarks: `relmem bench NAME ... --json`. Each module has add_arguments(parser) and run(args) -> dict."""
BENCHMARKS = {
    "index": "relmem.bench.index",
    "encoder": "relmem.bench.encoder",
    "values": "relmem.bench.values",
    "links": "relmem.bench.links",
    "sql": "relmem.bench.sql",
    "similarity": "relmem.bench.similarity",
    "selection": "relmem.bench.selection",
    "mcp": "relmem.bench.mcp",
    "context": "relmem.bench.context",
    "swan": "relmem.bench.swan",
    "llm": "relmem.bench.llm",
}
