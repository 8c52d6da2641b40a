#!/usr/bin/env python3
"""Search modes side by side (docs/search.md "Genetic search"): runs `tilescope-cli anneal`
with each mode at the same budget over sample models x presets x batches x seeds and prints
each run's best cost per mode and the ratio of every mode to the first, then the medians;
with several seeds also each mode's spread over them (the run-to-run variance).

    scripts/search_modes.py [--cli build/release/app/tilescope-cli] [--modes set,ga]
        [--models resnet50,...] [--presets edge] [--batches 8] [--seeds 1,2,3]
        [--markdown] [-- ANNEAL ARGS...]          (e.g. -- --time 2, -- --iterations 2000)

Default budget: anneal's (4 s per run). It needs only python3 and a built tilescope-cli.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from search_quality import MODELS, find_cli  # noqa: E402


def run(cli, model, preset, batch, seed, mode, extra, tmp):
    out = os.path.join(tmp, "r.json")
    cmd = [cli, "anneal", os.path.join(ROOT, "samples", "models", model + ".onnx"), "--hw", preset,
           "--batch", str(batch), "--seed", str(seed), "--mode", mode, "--json", out, "--quiet"] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(" ".join(cmd) + ": " + r.stderr.strip())
    j = json.load(open(out))
    return j["cost"], j.get("iterations_run", 0)


def table(header, rows, markdown):
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)] if rows else []
        print("  ".join(h.rjust(w[i]) for i, h in enumerate(header)))
        for r in rows:
            print("  ".join(c.rjust(w[i]) for i, c in enumerate(r)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=None)
    ap.add_argument("--modes", default="set,ga")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--presets", default="edge")
    ap.add_argument("--batches", default="8")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    ap.add_argument("extra", nargs="*", help="more anneal arguments (after --)")
    a = ap.parse_args()
    cli = a.cli or find_cli()
    modes = a.modes.split(",")

    rows, ratios = [], {m: [] for m in modes[1:]}
    spread = []
    with tempfile.TemporaryDirectory() as tmp:
        for preset in a.presets.split(","):
            for batch in a.batches.split(","):
                for model in a.models.split(","):
                    per_mode = {m: [] for m in modes}
                    for seed in a.seeds.split(","):
                        cost = {}
                        its = {}
                        for m in modes:
                            cost[m], its[m] = run(cli, model, preset, batch, seed, m, a.extra, tmp)
                            per_mode[m].append(cost[m])
                        row = [model, preset, batch, seed]
                        row += ["%.4g" % cost[m] for m in modes]
                        for m in modes[1:]:
                            ratios[m].append(cost[m] / cost[modes[0]])
                            row.append("%.3f" % (cost[m] / cost[modes[0]]))
                        row += [str(its[m]) for m in modes]
                        rows.append(row)
                    if len(per_mode[modes[0]]) > 1:
                        r = [model, preset, batch]
                        for m in modes:
                            v = per_mode[m]
                            mean = statistics.mean(v)
                            r += ["%.4g" % min(v), "%.4g" % mean,
                                  "%.3f" % (statistics.stdev(v) / mean if mean else math.nan)]
                        spread.append(r)
    header = ["model", "hw", "batch", "seed"] + ["cost " + m for m in modes]
    header += ["%s/%s" % (m, modes[0]) for m in modes[1:]] + ["iterations " + m for m in modes]
    table(header, rows, a.markdown)
    print()
    for m in modes[1:]:
        v = ratios[m]
        better = sum(1 for x in v if x < 1)
        print("median %s/%s %.3f (geometric mean %.3f); %s better in %d of %d runs"
              % (m, modes[0], statistics.median(v), math.exp(statistics.mean(math.log(x) for x in v)),
                 m, better, len(v)))
    if spread:
        print()
        h = ["model", "hw", "batch"]
        for m in modes:
            h += ["best " + m, "mean " + m, "cv " + m]
        table(h, spread, a.markdown)


if __name__ == "__main__":
    main()
