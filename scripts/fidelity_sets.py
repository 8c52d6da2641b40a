#!/usr/bin/env python3
"""Model-agreement sets (docs/validation.md): anneals each model on each mesh of a
named set as `tilescope-cli anneal --batch 8 --beta 20 --seed S` does (bench_codegen
anneal: one chain, EDP), generates the program, replays it and prints, per set, how many
rows have replay / estimate within [0.85, 1.15], the mean |log(ratio)|, the rows outside
and whether every program moved exactly the schedule's DRAM bytes.

    scripts/fidelity_sets.py [--bench build/release/tests/bench/bench_codegen]
        [--sets untuned,six,matrix,fresh1,fresh2,fresh3] [--seed 1] [--markdown] [--save-trees DIR]
    scripts/fidelity_sets.py --replay DIR [DIR ...]
    scripts/fidelity_sets.py --cli build/release/app/tilescope-cli --sets fresh7 [--seed 1]

Sets: "untuned" and "six" (meshes and variants the delay model was not fitted on),
"matrix" (the 90-tree matrix: test chip and edge, batches 2/4/8, seeds 1-3, --beta 3),
"fresh1" to "fresh7" (held-out meshes: each set was added with meshes used for nothing
before and first run only after the model change it checks, so it measures how the model
generalises, not how well it was fitted). Meshes "NxM" take the
defaults for their size; "+fastlinks" 96 B/cycle links, "+slowdram" a quarter of the DRAM
bandwidth, "+4sides" DRAM on all four sides. Re-run it after any change to the evaluator,
the generator or the simulator; it needs only python3 and a Release build (a set takes
20-60 s on one core).

--save-trees keeps every annealed tree (model-mesh-bB-sS.json); --replay replays the trees
saved in DIR(s) with the current build instead of annealing anew. --cli runs each set as a
user does, through tilescope-cli (anneal with its default portfolio and objective,
export-instructions, simulate), on a hardware template it writes for each mesh (the cloud
preset's, resized; in a temporary directory it names), so its trees are the CLI's, not
bench_codegen's single chain's. Annealing under a changed
cost model picks other trees, so its set figures mix how well the model predicts with which
trees it picks; a fixed pool of trees, replayed before and after the change, measures the
model alone (docs/validation.md).
"""
import argparse
import concurrent.futures
import glob
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = "resnet50,googlenet,mobilenet_v2,transformer"
# The meshes of each set, one set a line: its name, a colon, then its meshes.
SET_LINES = """
untuned: 6x6 16x16 4x8 12x12+slowdram 8x8+fastlinks 10x10+4sides 6x6+slowdram 14x14
six: cloud 8x8 6x6+4sides cloud+fastlinks 8x8+slowdram 10x10
matrix: testchip edge
fresh1: 5x5 7x7 9x9 11x11 8x8+4sides 12x12+fastlinks 10x10+slowdram 5x10
fresh2: 3x3 9x9+4sides 13x13 6x12 4x4+slowdram 7x7+fastlinks 16x16+slowdram 10x10+fastlinks+4sides
fresh3: 4x6 7x9 11x13 15x15 6x10+slowdram 9x12+fastlinks 14x14+4sides 3x8
fresh4: 5x7 8x10 12x16 6x9+4sides 10x14+slowdram 4x12+fastlinks 13x15 7x8+slowdram+4sides
fresh5: 6x8 9x11 12x14 3x12 5x9+slowdram 8x12+4sides 11x11+fastlinks 14x10+slowdram+4sides
fresh6: 4x10 7x11 10x13 15x12 6x7+slowdram 9x10+fastlinks+4sides 12x12+slowdram+4sides 16x8
fresh7: 5x6 8x9 11x14 13x11 7x12+slowdram 10x11+4sides 6x14+fastlinks 15x9+slowdram+4sides
"""
SETS = {name: meshes.split()
        for name, meshes in (line.split(":") for line in SET_LINES.strip().splitlines())}


def find_bench():
    for d in ("build/release", "build", "build/dev"):
        p = os.path.join(ROOT, d, "tests", "bench", "bench_codegen")
        if os.access(p, os.X_OK):
            return p
    sys.exit("bench_codegen not found; build Release or pass --bench PATH")


def run_set(bench, name, seed, save=None):
    if name == "matrix":
        args = ["--hw", ",".join(SETS[name]), "--batches", "2,4,8", "--seeds", "1,2,3", "--beta", "3"]
    else:
        args = ["--hw", ",".join(SETS[name]), "--models", MODELS, "--batches", "8", "--seeds",
                str(seed), "--beta", "20"]
    if save:
        os.makedirs(save, exist_ok=True)
        args += ["--save-trees", save]
    out = subprocess.run([bench, "anneal"] + args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{bench} failed on set {name}: {out.stderr.strip()}")
    rows = []
    for line in out.stdout.splitlines():
        p = line.split()
        # model hw SA bB sS (n S) instr dram_prog dram_sched diff% sim eval ratio speedup gen sim
        if len(p) < 12 or p[0] == "model" or p[2] != "SA":
            continue
        rows.append((p[0], p[1], p[3], p[4]) + ratio_and_diff(p))
    return rows


def ratio_and_diff(p):
    """replay / estimate and the DRAM bytes' difference (%) of a bench_codegen row."""
    try:
        return float(p[-4]), float(p[-7])
    except ValueError:
        return float("nan"), float("nan")


def tally(rows):
    """rows: (label, ratio, diff). Rows within 15%, mean |log(ratio)| of those that replayed,
    whether DRAM bytes were exact in all of them, the count below / above, the labels outside."""
    good = [r for r in rows if r[1] == r[1]]
    inside = sum(1 for r in good if 0.85 <= r[1] <= 1.15)
    mean = sum(abs(math.log(r[1])) for r in good) / max(1, len(good))
    exact = all(abs(r[2]) < 1e-3 for r in good)
    low = sum(1 for r in good if r[1] < 0.85)
    high = sum(1 for r in good if r[1] > 1.15)
    out = " ".join(f"{n}:{r:.3f}" for n, r, _ in rows if not (0.85 <= r <= 1.15))
    return inside, mean, exact, low, high, len(rows) - len(good), out


def replay_pool(bench, dirs):
    files = [f for d in dirs for f in sorted(glob.glob(os.path.join(d, "*.json")))]
    if not files:
        sys.exit(f"no saved trees (*.json) in {', '.join(dirs)}")

    failed = {}  # path -> why it did not replay

    def one(path):
        name = os.path.basename(path)[:-len(".json")]
        parts = name.split("-")
        if len(parts) < 4:
            failed[path] = "not named model-mesh-bB-sS.json as --save-trees names trees"
            return (name, float("nan"), float("nan"))
        model, hw = parts[0], parts[1]
        out = subprocess.run([bench, "--tree", path, "--models", model, "--hw", hw],
                             capture_output=True, text=True)
        for line in out.stdout.splitlines():
            p = line.split()
            if len(p) >= 12 and p[0] == model and p[2] == "tree":
                return (name,) + ratio_and_diff(p)
        # bench_codegen names the file and the reason on either stream (its header aside)
        said = [ln for ln in (out.stdout + "\n" + out.stderr).splitlines()
                if ln.strip() and not ln.startswith("model ")]
        failed[path] = said[-1] if said else f"{bench} printed no row (exit {out.returncode})"
        return (name, float("nan"), float("nan"))

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as ex:
        rows = list(ex.map(one, files))
    for path in sorted(failed):
        why = failed[path]
        print(why if why.startswith(path) else f"{path}: {why}", file=sys.stderr)
    inside, mean, exact, low, high, nfailed, out = tally(rows)
    print(f"replay of {len(rows)} saved trees: {inside}/{len(rows)} within 15% "
          f"({low} below 0.85, {high} above 1.15, {nfailed} failed), "
          f"mean |log| {mean:.4f}, DRAM bytes {'exact' if exact else 'NOT exact'}; "
          f"outside: {out or 'none'}")
    ok = sorted(r for _, r, _ in rows if r == r)
    if ok:
        # The signed mean says which side the estimate leans to (and, for a change to the
        # generator or the simulator alone, how much faster or slower the programs got).
        signed = sum(math.log(r) for r in ok) / len(ok)
        print(f"  mean log(replay / estimate) {signed:+.4f}, median ratio {ok[len(ok) // 2]:.3f}, "
              f"quartiles {ok[len(ok) // 4]:.3f} {ok[3 * len(ok) // 4]:.3f}")


def template(spec, tmp):
    """A hardware-template file for a mesh spec of SETS (what a user writes for the CLI):
    the cloud preset's template (samples/hw/cloud-12x12.json) resized to NxM, its DRAM at
    the default for the size (0.5 B/cycle per TOPS: macs x tiles / 1000), then the
    variants. A preset name with no variant is passed as it is."""
    base, *variants = spec.split("+")
    if base in ("cloud", "edge", "testchip", "cim", "chiplet") and not variants:
        return base
    files = {"cloud": "cloud-12x12", "edge": "edge-4x4", "testchip": "testchip-2x2",
             "cim": "cim-4x4"}
    with open(os.path.join(ROOT, "samples", "hw", files.get(base, "cloud-12x12") + ".json")) as f:
        hw = json.load(f)
    if base not in files:
        try:
            x, y = (int(v) for v in base.split("x"))
        except ValueError:
            sys.exit(f"{spec}: --cli writes templates for presets cloud, edge, testchip, cim "
                     f"and meshes NxM, not {base!r}")
        hw["mesh"]["x"], hw["mesh"]["y"] = x, y
        hw["dram"]["bytes_per_cycle"] = hw["tile"]["macs"] * x * y / 1000.0
    for v in variants:
        if v == "fastlinks":
            hw["noc"]["link_bytes_per_cycle"] = 96.0
        elif v == "slowdram":
            hw["dram"]["bytes_per_cycle"] /= 4
        elif v == "4sides":
            hw["dram"]["sides"] = ["west", "east", "north", "south"]
        else:
            sys.exit(f"unknown variant {v!r} in {spec}")
    hw["name"] = spec
    path = os.path.join(tmp, spec + ".json")
    with open(path, "w") as f:
        json.dump(hw, f, indent=1)
    return path


def run_set_cli(cli, name, seed, tmp):
    """The set as a user runs it: `anneal MODEL --hw TEMPLATE --batch 8 --beta 20 --seed S`
    (the default portfolio and objective), `export-instructions`, `simulate`."""
    if name == "matrix":
        sys.exit("--cli runs the mesh sets, not the matrix")

    # One template per mesh, written before the runs that read it start.
    hws = {spec: template(spec, tmp) for spec in SETS[name]}

    def one(job):
        model, spec = job
        hw = hws[spec]
        d = os.path.join(tmp, f"{model}-{spec}")
        os.makedirs(d, exist_ok=True)
        steps = [[cli, "anneal", os.path.join(ROOT, "samples", "models", model + ".onnx"), "--hw",
                  hw, "--batch", "8", "--beta", "20", "--seed", str(seed), "--json",
                  os.path.join(d, "r.json"), "--quiet"],
                 [cli, "export-instructions", os.path.join(d, "r.json"), "--out",
                  os.path.join(d, "p")],
                 [cli, "simulate", os.path.join(d, "p"), "--json", os.path.join(d, "s.json")]]
        for step in steps:
            out = subprocess.run(step, capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{model} {spec}: {step[1]} failed: {out.stderr.strip()}", file=sys.stderr)
                return (model, spec, "b8", f"s{seed}", float("nan"), float("nan"))
        with open(os.path.join(d, "r.json")) as f:
            r = json.load(f)
        with open(os.path.join(d, "s.json")) as f:
            sim = json.load(f)
        diff = 100.0 * (sim["dram_bytes"] - r["dram_bytes"]) / max(1.0, r["dram_bytes"])
        return (model, spec, "b8", f"s{seed}", sim["delay_cycles"] / r["delay_cycles"], diff)

    jobs = [(m, h) for h in SETS[name] for m in MODELS.split(",")]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as ex:
        return list(ex.map(one, jobs))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=None)
    ap.add_argument("--sets", default="untuned,six,matrix,fresh1,fresh2")
    ap.add_argument("--seed", type=int, default=1, help="the annealing seed (not for matrix)")
    ap.add_argument("--markdown", action="store_true", help="also print each set as a table")
    ap.add_argument("--save-trees", default=None, metavar="DIR",
                    help="keep each annealed tree in DIR (replay one with bench_codegen --tree)")
    ap.add_argument("--replay", nargs="+", default=None, metavar="DIR",
                    help="replay the trees saved in DIR(s) (--save-trees) instead of annealing")
    ap.add_argument("--cli", default=None, metavar="TILESCOPE_CLI",
                    help="run the sets through tilescope-cli (anneal, export-instructions, "
                         "simulate) on hardware templates written for each mesh, as a user would")
    a = ap.parse_args()
    if a.cli:
        tmp = tempfile.mkdtemp(prefix="fidelity_cli_")
        print(f"templates, results and programs in {tmp}", file=sys.stderr)
    bench = a.bench or (None if a.cli and not a.replay else find_bench())
    if a.replay:
        replay_pool(bench, a.replay)
        return
    total = within_all = 0
    for name in a.sets.split(","):
        if name not in SETS:
            sys.exit(f"unknown set {name!r} (sets: {', '.join(SETS)})")
        rows = (run_set_cli(a.cli, name, a.seed, tmp) if a.cli else
                run_set(bench, name, a.seed, a.save_trees))
        inside, mean, exact, _, _, _, out = tally(
            [(f"{m}/{h}/{b}/{s}", r, d) for m, h, b, s, r, d in rows])
        print(f"{name}: {inside}/{len(rows)} within 15%, mean |log| {mean:.3f}, "
              f"DRAM bytes {'exact' if exact else 'NOT exact'}; outside: {out or 'none'}")
        total += len(rows)
        within_all += inside
        if a.markdown and name != "matrix":
            hws = SETS[name]
            print("| model | " + " | ".join(hws) + " |")
            print("|---|" + "---|" * len(hws))
            for m in MODELS.split(","):
                cells = []
                for h in hws:
                    r = next((x[4] for x in rows if x[0] == m and x[1] == h), float("nan"))
                    cell = f"{r:.3f}"
                    cells.append(cell if 0.85 <= r <= 1.15 else f"**{cell}**")
                print(f"| {m} | " + " | ".join(cells) + " |")
    print(f"total: {within_all}/{total} within 15%")


if __name__ == "__main__":
    main()
