#!/usr/bin/env python3
"""Compare a layer-sequential schedule's figures with the method's reference implementation.

The method's own implementation (the public repository SET-Scheduling-Project/SET-ISCA2023)
costs the layer-sequential tree too: its initial tree ("init") keeps every layer alone on
the whole mesh, one layer after another, which is `T b/1` over all layers here. This script
builds the reference from a snapshot the user gives (`make` in that folder, once), runs it
for a network, batch and core, reads its `<name>_init_summary.txt`, evaluates the same tree
with `tilescope-cli evaluate` and prints both side by side (docs/validation.md, "Against the
reference implementation"):

    scripts/compare_reference.py --ref /path/to/SET-ISCA2023 --batch 1 --batch 2

Components: delay (cycles), DRAM, NoC, MAC, the global buffer (the reference's ubuf) and
the storage inside the tile (its buffers and PE bus; the sum of the template's
tile.levels here), in mJ, the NoC hop-bytes (its NoC energy / pJ per byte-hop), the DRAM
bytes and the hop-bytes per DRAM byte.
`--markdown` prints the table for docs/validation.md.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_reference(ref):
    exe = ref / "build" / "stschedule"
    if not exe.exists():
        subprocess.run(["make", "-C", str(ref)], check=True, stdout=subprocess.DEVNULL)
    return exe


def run_reference(exe, net, batch, core, x, y, stride, bw, work):
    name = f"ref_{net}_b{batch}"
    # cost 1 (energy x delay), one SA round per layer, no IR: only the init tree is read.
    args = [str(exe), "--args", name, net, str(batch), core, str(x), str(y), str(stride),
            str(bw), "1", "1", "0"]
    subprocess.run(args, cwd=work, check=True, stdout=subprocess.DEVNULL)
    figures = {}
    # The scheme's first line sums the tree: "... NoC(hops=H, DRAM acc=A) ...".
    head = (Path(work) / f"{name}_init_scheme.txt").read_text().splitlines()[0]
    figures["DRAM acc"] = float(head.split("DRAM acc=")[1].split(")")[0])
    for line in (Path(work) / f"{name}_init_summary.txt").read_text().splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            try:
                figures[k.strip()] = float(v)
            except ValueError:
                pass
    return figures


def layer_sequential_tree(cli, model, batch, path):
    out = subprocess.run([cli, "inspect", model, "--json"], check=True, capture_output=True,
                         text=True).stdout
    names = [layer["name"] for layer in json.loads(out)["layer_list"]]
    path.write_text(f"T {batch}/1\n" + "".join(f"\t{n} {batch}\n" for n in names))


def run_tilescope(cli, model, hw, batch, work):
    tree = Path(work) / f"ls_b{batch}.txt"
    result = Path(work) / f"ts_b{batch}.json"
    layer_sequential_tree(cli, model, batch, tree)
    subprocess.run([cli, "evaluate", model, "--hw", hw, "--tree", str(tree), "--batch",
                    str(batch), "--json", str(result)], check=True, stdout=subprocess.DEVNULL)
    return json.loads(result.read_text())


def rows(ref, ts):
    """(component, reference, tilescope) with energies in mJ (both report pJ)."""
    b = ts["breakdown_pj"]
    level_names = [lv["name"] for lv in (ts.get("hw") or {}).get("tile", {}).get("levels", [])]
    in_tile = sum(b.get(n, 0.0) for n in level_names)
    pj_per_hop_byte = 8 * ts["hw"]["energy"]["noc_pj_per_bit_hop"]
    mj = 1e-9
    return [
        ("delay (cycles)", ref["Latency"], ts["delay_cycles"]),
        ("total energy (mJ)", ref["Energy"] * mj, ts["energy_pj"] * mj),
        ("DRAM (mJ)", ref["DRAM_energy"] * mj, b["dram"] * mj),
        ("NoC (mJ)", ref["noc_energy"] * mj, b["noc"] * mj),
        ("global buffer (mJ)", ref["ubuf_energy"] * mj, b["buffer"] * mj),
        ("in-tile storage (mJ)", (ref["buf_energy"] + ref.get("bus_energy", 0.0)) * mj,
         in_tile * mj),
        ("MAC (mJ)", ref["mac_energy"] * mj, b["mac"] * mj),
        ("NoC hop-bytes (M)", ref["noc_energy"] / pj_per_hop_byte * 1e-6,
         ts["noc_hop_bytes"] * 1e-6),
        ("DRAM bytes (M)", ref["DRAM acc"] * 1e-6, ts["dram_bytes"] * 1e-6),
        # Every layer of the tree reads and writes DRAM: hops per DRAM byte shows the ports'
        # convention (docs/validation.md, "NoC hop-bytes").
        ("hop-bytes per DRAM byte", ref["noc_energy"] / pj_per_hop_byte / ref["DRAM acc"],
         ts["noc_hop_bytes"] / ts["dram_bytes"]),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", required=True, type=Path, help="snapshot of SET-ISCA2023")
    ap.add_argument("--cli", default=str(ROOT / "build/release/app/tilescope-cli"))
    ap.add_argument("--model", default=str(ROOT / "samples/models/resnet50.onnx"))
    ap.add_argument("--net", default="resnet", help="the reference's name for the network")
    ap.add_argument("--hw", default="edge")
    ap.add_argument("--core", default="polar", help="the reference's core: polar or eyeriss")
    ap.add_argument("--mesh", default="4x4")
    ap.add_argument("--stride", type=int, default=2, help="the reference's placement stride")
    ap.add_argument("--noc-bw", type=float, default=24)
    ap.add_argument("--batch", type=int, action="append")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    x, y = (int(v) for v in a.mesh.split("x"))
    exe = build_reference(a.ref.resolve())
    for batch in a.batch or [1]:
        with tempfile.TemporaryDirectory() as work:
            ref = run_reference(exe, a.net, batch, a.core, x, y, a.stride, a.noc_bw, work)
            ts = run_tilescope(a.cli, a.model, a.hw, batch, work)
        title = f"{Path(a.model).stem}, batch {batch}, layer-sequential, {a.hw} vs {a.core} {a.mesh}"
        if a.markdown:
            print(f"\n| {title} | reference | Tilescope | diff |\n|---|---|---|---|")
        else:
            print(f"\n{title}\n{'':24}{'reference':>14}{'Tilescope':>14}{'diff':>9}")
        for name, r, t in rows(ref, ts):
            diff = f"{(t - r) / r * 100:+.1f}%" if r else "-"
            if a.markdown:
                print(f"| {name} | {r:,.4g} | {t:,.4g} | {diff} |")
            else:
                print(f"{name:24}{r:14.5g}{t:14.5g}{diff:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
