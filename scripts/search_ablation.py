#!/usr/bin/env python3
"""Ablation of the Set portfolio (docs/search.md): what each ingredient contributes.

For every sample x preset at one seed it runs `compare` at the default settings (the LS
and LP references), then SA variants, and prints per variant the median of
SA / min(LS, LP) and how often SA <= min(LS, LP):

  beta100-plain   compare --beta 100 --chains 1 --no-portfolio (the old default)
  time-plain      compare --no-portfolio: 4 s, chains from the layer-sequential start
  time-seeded     compare (default): SA chain 0 from the layer-sequential start, chain 1
                  from the best of the LS, LP and dp-lp results
  anneal-plain    anneal --no-portfolio: 4 s from the layer-sequential start
  anneal-default  anneal (default): chain 0 from the start, chain 1 from the best of the
                  LS / greedy-LP / dp-lp trees
  anneal-warmup   anneal --warmup 0.25: LS / LP warm-up chains first (25% of the budget)

The anneal variants are compared with the default compare's LS and LP, which had the
same 4 s each.

    scripts/search_ablation.py [--cli PATH] [--seed 1] [--models ...] [--presets ...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from search_quality import MODELS, find_cli  # noqa: E402


def run(cmd, out):
    r = subprocess.run(cmd + ["--json", out, "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return json.load(open(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=None)
    ap.add_argument("--seed", default="1")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--presets", default="edge,cloud")
    a = ap.parse_args()
    cli = a.cli or find_cli()
    compare_variants = {"beta100-plain": ["--beta", "100", "--chains", "1", "--no-portfolio"],
                        "time-plain": ["--no-portfolio"], "time-seeded": []}
    anneal_variants = {"anneal-plain": ["--no-portfolio"], "anneal-default": [],
                       "anneal-warmup": ["--warmup", "0.25"]}
    ratios = {k: [] for k in list(compare_variants) + list(anneal_variants)}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        for preset in a.presets.split(","):
            for model in a.models.split(","):
                base = [os.path.join(ROOT, "samples", "models", model + ".onnx"), "--hw", preset,
                        "--batch", "8", "--seed", a.seed]
                ref = None
                for name, extra in compare_variants.items():
                    j = run([cli, "compare"] + base + extra, out)
                    r = j["sa"]["cost"] / min(j["ls"]["cost"], j["lp"]["cost"])
                    ratios[name].append(r)
                    if name == "time-seeded":
                        ref = min(j["ls"]["cost"], j["lp"]["cost"])
                    print(f"{model:13s} {preset:5s} {name:15s} SA/min(LS,LP) {r:.3f}", file=sys.stderr)
                for name, extra in anneal_variants.items():
                    j = run([cli, "anneal"] + base + extra, out)
                    r = j["cost"] / ref
                    ratios[name].append(r)
                    print(f"{model:13s} {preset:5s} {name:15s} SA/min(LS,LP) {r:.3f}", file=sys.stderr)
    print("| variant | median SA / min(LS, LP) | SA <= min(LS, LP) | worst |")
    print("|--|--|--|--|")
    for name, v in ratios.items():
        wins = sum(1 for x in v if x <= 1.0 + 1e-12)
        print(f"| {name} | {statistics.median(v):.3f} | {wins}/{len(v)} | {max(v):.3f} |")


if __name__ == "__main__":
    main()
