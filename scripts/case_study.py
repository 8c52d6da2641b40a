#!/usr/bin/env python3
"""The method's case study: SA against LP on two Inception-ResNet-v1 blocks.

The method shows its resource allocation trees beating a layer pipeline (LP) on two blocks
of Inception-ResNet-v1 at batch 2 on a 16-tile accelerator, with four reductions: delay,
energy, DRAM accesses and NoC traffic (docs/validation.md, "The method's case study").
This script cuts the first two Inception-ResNet-A blocks out of the sample model (their 16
layers, fed by one network input), runs `tilescope-cli compare` on them, exports the SA and
the LP schedules as programs, replays both and prints the four reductions by the estimate
and by the replay:

    scripts/case_study.py [--hw edge] [--batch 2] [--seed 1] [-- compare options]

A reduction is (SA - LP) / LP: negative where SA is better.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = ("/repeat_1/repeat_1.0/", "/repeat_1/repeat_1.1/")


def two_blocks(cli, model):
    """The first two Inception-ResNet-A blocks as a native JSON network."""
    out = subprocess.run([cli, "inspect", str(model), "--json"], check=True,
                         capture_output=True, text=True).stdout
    layers = [l for l in json.loads(out)["layer_list"] if l["name"].startswith(BLOCKS)]
    names = {l["name"] for l in layers}
    first = layers[0]
    input_bytes = first["in"][0] * first["in"][1] * first["in"][2]
    net_layers = []
    for l in layers:
        entry = {"name": l["name"], "kind": l["kind"], "op": l["op"], "in": l["in"],
                 "out": l["out"], "inputs": []}
        if l["kind"] == "conv":
            # Square kernels, stride 1, "same" padding (the blocks keep their 17 x 17):
            # the kernel from the weights (per output channel: in x k x k, plus a bias).
            per_out = (l["weight_bytes"] - l["out"][0]) // (l["in"][0] * l["out"][0])
            k = round(per_out ** 0.5)
            if k * k != per_out or l["in"][1:] != l["out"][1:]:
                sys.exit(f"case_study: unexpected layer {l['name']}: {l}")
            entry.update({"kernel": [k, k], "stride": [1, 1], "pad": [k - 1, k - 1],
                          "weight_bytes": l["weight_bytes"]})
        for src in l["inputs"]:
            if src in names:
                entry["inputs"].append({"layer": src})
            else:  # what comes before the blocks: one network input
                entry["inputs"].append({"input": "x", "bytes": input_bytes})
        net_layers.append(entry)
    consumed = {s for l in layers for s in l["inputs"]}
    return {"format": "tilescope-network", "version": 1, "name": "inception_resnet_a_x2",
            "inputs": {"x": input_bytes},
            "outputs": [l["name"] for l in layers if l["name"] not in consumed],
            "layers": net_layers}


def replay(cli, result, work, tag):
    """Exports a result's schedule and replays it; returns the simulate JSON."""
    path = work / f"{tag}.json"
    path.write_text(json.dumps(result))
    prog = work / f"{tag}.prog"
    subprocess.run([cli, "export-instructions", str(path), "--out", str(prog), "--formats",
                    "bin"], check=True, stdout=subprocess.DEVNULL)
    sim = work / f"{tag}.sim.json"
    subprocess.run([cli, "simulate", str(prog), "--json", str(sim)], check=True,
                   stdout=subprocess.DEVNULL)
    return json.loads(sim.read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default=str(ROOT / "build/release/app/tilescope-cli"))
    ap.add_argument("--model", default=str(ROOT / "samples/models/inception_resnet_v1.onnx"))
    ap.add_argument("--hw", default="edge")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("extra", nargs="*", help="more compare options (after --)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        net = work / "inception_resnet_a_x2.json"
        net.write_text(json.dumps(two_blocks(a.cli, a.model), indent=1))
        cmp_json = work / "compare.json"
        subprocess.run([a.cli, "compare", str(net), "--hw", a.hw, "--batch", str(a.batch),
                        "--seed", str(a.seed), "--json", str(cmp_json)] + a.extra, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        c = json.loads(cmp_json.read_text())
        sims = {m: replay(a.cli, c[m], work, m) for m in ("sa", "lp")}
    print(f"two Inception-ResNet-A blocks (16 layers), batch {a.batch}, {a.hw}, seed {a.seed}")
    print(f"{'':22s} {'LP':>14s} {'SA':>14s} {'reduction':>10s}")
    rows = [("delay (estimate)", "delay_cycles", None), ("delay (replay)", None, "delay_cycles"),
            ("energy (pJ)", "energy_pj", None), ("DRAM bytes", "dram_bytes", None),
            ("NoC hop-bytes", "noc_hop_bytes", None)]
    for label, est_key, sim_key in rows:
        lp = c["lp"][est_key] if est_key else sims["lp"][sim_key]
        sa = c["sa"][est_key] if est_key else sims["sa"][sim_key]
        print(f"{label:22s} {lp:14.6g} {sa:14.6g} {100 * (sa - lp) / lp:+9.1f}%")
    for m in ("lp", "sa"):
        ratio = sims[m]["delay_cycles"] / c[m]["delay_cycles"]
        dram = "exact" if sims[m]["dram_bytes"] == c[m]["dram_bytes"] else "differs"
        print(f"{m.upper()} replay / estimate {ratio:.3f}, DRAM bytes {dram}")


if __name__ == "__main__":
    main()
