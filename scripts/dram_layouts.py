#!/usr/bin/env python3
"""DRAM layouts on a template with a run model (docs/cost-model.md §4b, docs/validation.md).

For each model and batch: anneal on the given template with planned layouts, then read the
result's `layout_plan` (the plan's DRAM cycles against each single layout's on the same
tree), evaluate that tree with every layout fixed (the delay each gives), export the
program with its DRAM descriptors, replay it and check that its runs and DRAM bytes are
the estimate's:

    scripts/dram_layouts.py --hw edge --burst 64 --overhead 20 \
        --model resnet50 --model mobilenet_v2 --model googlenet --batch 1 --batch 8

The template is a preset or a .json with `dram.burst_bytes` / `run_overhead_cycles` set
from --burst / --overhead. `--iterations N` makes the runs reproducible (default: the
time budget). `--markdown` prints the table for docs/validation.md.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYOUTS = ["nchw", "nhwc", "chwn", "nchwc"]


def cli(args, exe):
    r = subprocess.run([exe] + args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"tilescope-cli {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def template(hw, burst, overhead, exe, work):
    if hw.endswith(".json"):
        doc = json.loads(Path(hw).read_text())
    else:
        # A preset written out by the CLI's own sample files.
        doc = json.loads(next((ROOT / "samples" / "hw").glob(f"{hw}-*.json")).read_text())
    doc.setdefault("dram", {})
    doc["dram"]["burst_bytes"] = burst
    doc["dram"]["run_overhead_cycles"] = overhead
    doc["name"] = f"{doc.get('name', hw)}-runs"
    path = work / "hw.json"
    path.write_text(json.dumps(doc))
    return str(path)


def program_runs(program_json):
    runs = 0
    for tile in json.loads(Path(program_json).read_text())["tiles"]:
        for ins in tile["instructions"]:
            runs += ins.get("dram", {}).get("runs", 0)
    return runs


def study(model, batch, hw, args, work):
    exe = args.cli
    onnx = str(ROOT / "samples" / "models" / f"{model}.onnx")
    budget = ["--iterations", str(args.iterations)] if args.iterations else []
    res = work / f"{model}-b{batch}.json"
    cli(["anneal", onnx, "--hw", hw, "--batch", str(batch), "--seed", "1", "--json", str(res),
         "--quiet"] + budget, exe)
    r = json.loads(res.read_text())
    plan = r["layout_plan"]
    tree = work / f"{model}-b{batch}.tree"
    tree.write_text(r["tree"])
    delays = {}
    for layout in LAYOUTS:
        out = work / f"{model}-b{batch}-{layout}.json"
        cli(["evaluate", onnx, "--hw", hw, "--tree", str(tree), "--batch", str(batch),
             "--layouts", layout, "--json", str(out)], exe)
        delays[layout] = json.loads(out.read_text())["delay_cycles"]
    prog = work / f"{model}-b{batch}-program"
    cli(["export-instructions", str(res), "--out", str(prog), "--formats", "bin,json"], exe)
    sim = work / f"{model}-b{batch}-sim.json"
    cli(["simulate", str(prog), "--json", str(sim)], exe)
    s = json.loads(sim.read_text())
    est_runs = sum(layer.get("dram_runs", 0) for layer in r["layers"])
    return {
        "model": model, "batch": batch, "delay": r["delay_cycles"],
        "plan": plan["dram_cycles"], "fixed": plan["fixed_dram_cycles"],
        "best_fixed": plan["best_fixed"], "gain": plan["gain_over_best_fixed"],
        "fixed_delay": delays, "replay": s["delay_ratio"],
        "dram_exact": s["dram_bytes"] == s["schedule_dram_bytes"],
        "runs_equal": abs(program_runs(prog / "program.json") - est_runs) < 0.5,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=str(ROOT / "build" / "release" / "app" / "tilescope-cli"))
    ap.add_argument("--hw", default="edge")
    ap.add_argument("--burst", type=int, default=64)
    ap.add_argument("--overhead", type=float, default=20)
    ap.add_argument("--model", action="append")
    ap.add_argument("--batch", type=int, action="append")
    ap.add_argument("--iterations", type=int, default=0)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    models = args.model or ["resnet50", "mobilenet_v2", "googlenet"]
    batches = args.batch or [1, 8]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        hw = template(args.hw, args.burst, args.overhead, args.cli, work)
        rows = [study(m, b, hw, args, work) for m in models for b in batches]
    head = ("| model | batch | plan DRAM cycles | nchw | nhwc | chwn | nchwc | best fixed | "
            "delay: plan vs best fixed | replay / estimate | DRAM bytes | runs |")
    print(head)
    print("|" + "---|" * 12)
    for w in rows:
        ratios = " | ".join(f"x{w['fixed'][l] / w['plan']:.3f}" for l in LAYOUTS)
        best_delay = min(w["fixed_delay"].values())
        print(f"| {w['model']} | {w['batch']} | {w['plan']:,.0f} | {ratios} | {w['best_fixed']} | "
              f"x{best_delay / w['delay']:.3f} | {w['replay']:.3f} | "
              f"{'exact' if w['dram_exact'] else 'DIFFER'} | "
              f"{'equal' if w['runs_equal'] else 'DIFFER'} |")
    bad = [w for w in rows if not (w["dram_exact"] and w["runs_equal"]
                                   and 0.85 <= w["replay"] <= 1.15)]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
