#!/usr/bin/env python3
"""Search quality report (docs/search.md): runs `tilescope-cli compare` over the sample
models x presets x seeds at the default settings (or with extra compare arguments) and
prints, per run, SA/LS, SA/LP and SA/DP-LP in the run's objective and in EDP, the wall
time, then the medians and how often SA <= min(LS, LP) and SA < DP-LP.

    scripts/search_quality.py [--cli build/release/app/tilescope-cli] [--seeds 1,2,3]
        [--models resnet50,...] [--presets edge,cloud] [--markdown] [-- COMPARE ARGS...]

Re-run it after any change to the evaluator or the search; it needs only python3.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["resnet50", "googlenet", "inception_v3", "mobilenet_v2", "transformer"]


def find_cli():
    for d in ("build/release", "build", "build/dev"):
        p = os.path.join(ROOT, d, "app", "tilescope-cli")
        if os.access(p, os.X_OK):
            return p
    sys.exit("tilescope-cli not found; pass --cli PATH")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=None)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--presets", default="edge,cloud")
    ap.add_argument("--batch", default="8")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--json", default=None, help="also write every run's figures here")
    ap.add_argument("extra", nargs="*", help="more compare arguments (after --)")
    a = ap.parse_args()
    cli = a.cli or find_cli()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for preset in a.presets.split(","):
            for model in a.models.split(","):
                for seed in a.seeds.split(","):
                    out = os.path.join(tmp, "cmp.json")
                    cmd = [cli, "compare", os.path.join(ROOT, "samples", "models", model + ".onnx"),
                           "--hw", preset, "--batch", a.batch, "--seed", seed, "--json", out,
                           "--quiet"] + a.extra
                    t0 = time.monotonic()
                    cpu0 = os.times()
                    r = subprocess.run(cmd, capture_output=True, text=True)
                    wall = time.monotonic() - t0
                    cpu1 = os.times()
                    cpu = (cpu1.children_user - cpu0.children_user) + (cpu1.children_system - cpu0.children_system)
                    if r.returncode != 0:
                        print(f"{model} {preset} seed {seed}: exit {r.returncode}: {r.stderr.strip()}",
                              file=sys.stderr)
                        continue
                    j = json.load(open(out))
                    ra = j["ratios"]
                    cost = {k: j[k]["cost"] for k in ("ls", "lp", "dp-lp", "sa")}
                    rows.append({
                        "model": model, "preset": preset, "seed": int(seed),
                        "objective": j["objective"],
                        "sa_ls": ra["sa_over_ls"], "sa_lp": ra["sa_over_lp"], "sa_dplp": ra["sa_over_dp_lp"],
                        "sa_chiplet": ra.get("sa_over_chiplet", float("nan")),
                        "edp_sa_ls": ra["edp_sa_over_ls"], "edp_sa_lp": ra["edp_sa_over_lp"],
                        "edp_sa_dplp": ra["edp_sa_over_dp_lp"],
                        "wins": cost["sa"] <= min(cost["ls"], cost["lp"]),
                        "beats_dplp": cost["sa"] < cost["dp-lp"],
                        "wall": wall, "cpu": cpu,
                    })
                    x = rows[-1]
                    print(f"{model:13s} {preset:5s} seed {seed}: SA/LS {x['sa_ls']:.3f} SA/LP {x['sa_lp']:.3f} "
                          f"SA/DP-LP {x['sa_dplp']:.3f} SA/chiplet {x['sa_chiplet']:.3f} (EDP {x['edp_sa_ls']:.3f} {x['edp_sa_lp']:.3f} "
                          f"{x['edp_sa_dplp']:.3f}) {wall:.1f} s wall {cpu:.1f} s CPU", file=sys.stderr)
    if not rows:
        sys.exit("no runs")

    sep = "|" if a.markdown else " "
    hdr = ["model", "hw", "seed", "SA/LS", "SA/LP", "SA/DP-LP", "SA/chiplet", "EDP SA/LS", "EDP SA/LP", "EDP SA/DP-LP", "wall s"]
    if a.markdown:
        print("| " + " | ".join(hdr) + " |")
        print("|" + "|".join("--" for _ in hdr) + "|")
    else:
        print(" ".join(f"{h:>12s}" for h in hdr))
    for x in rows:
        cells = [x["model"], x["preset"], str(x["seed"])] + [
            f"{x[k]:.3f}" for k in ("sa_ls", "sa_lp", "sa_dplp", "sa_chiplet", "edp_sa_ls", "edp_sa_lp", "edp_sa_dplp")
        ] + [f"{x['wall']:.1f}"]
        print(("| " + " | ".join(cells) + " |") if a.markdown else " ".join(f"{c:>12s}" for c in cells))
    med = lambda k: statistics.median(x[k] for x in rows)
    n = len(rows)
    print()
    print(f"runs {n}; SA <= min(LS, LP) in {sum(x['wins'] for x in rows)}/{n}; "
          f"SA < DP-LP in {sum(x['beats_dplp'] for x in rows)}/{n}")
    print(f"median SA/LS {med('sa_ls'):.3f}, SA/LP {med('sa_lp'):.3f}, SA/DP-LP {med('sa_dplp'):.3f} "
          f"(EDP {med('edp_sa_ls'):.3f}, {med('edp_sa_lp'):.3f}, {med('edp_sa_dplp'):.3f})")
    for preset in a.presets.split(","):
        sub = [x for x in rows if x["preset"] == preset]
        if sub:
            print(f"  {preset}: median SA/LS {statistics.median(x['sa_ls'] for x in sub):.3f}, "
                  f"SA/DP-LP {statistics.median(x['sa_dplp'] for x in sub):.3f}, "
                  f"SA/chiplet {statistics.median(x['sa_chiplet'] for x in sub):.3f}")
    print(f"wall per run: median {med('wall'):.1f} s, max {max(x['wall'] for x in rows):.1f} s; "
          f"CPU per run: median {med('cpu'):.1f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
