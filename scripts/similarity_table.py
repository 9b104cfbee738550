"""Prints `relmem bench similarity --json` reports as one line per batch size and algorithm."""
import json
import sys

for path in sys.argv[1:]:
    try:
        report = json.load(open(path))
    except (OSError, ValueError) as error:
        print(f"{path}: {error}")
        continue
    gpu = report["gpu"]
    print(gpu["device"]["name"], "peak GB/s", gpu["peak"]["memory_bandwidth_gbs"], "peak TFLOP/s", gpu["peak"]["tflops"])
    for e in gpu["results"]:
        print(f'{e["queries"]:>5} {e["algorithm"]:<12} {e["ms_per_batch"]:9.3f} ms {e["achieved_gbs"]:7.0f} GB/s '
              f'bw {e["bandwidth_fraction_of_peak"] or 0:.2f} tc {e["compute_fraction_of_peak"] or 0:.3f} '
              f'agree {e.get("agreement_with_cpu", float("nan")):.3f}')
