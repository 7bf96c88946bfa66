#!/usr/bin/env python3
"""table.py RESULTS.json OUTDIR: the fp8-linear-speed table (table.md) and the plot data
(speedup.dat, breakdown.dat) from `fpsim bench gemm --device gpu --linear --json`.

Speedup = BF16 GEMM time / FP8 time of the same layer, both measured in the same run.
"step" quantizes X and W then runs the GEMM (training: weights change every step); "W cached"
quantizes X only (generation between weight refits); "roofline" replaces the measured quantizer
times by the bytes they move at the copy bandwidth measured in the same run (an estimate)."""
import json
import sys


def main():
    res = json.load(open(sys.argv[1]))
    if not res["layers"]:
        sys.exit("table.py: no layer was measured (see the bench's error output)")
    out = sys.argv[2]
    rows = []
    for L in res["layers"]:
        for kind in ("tensor", "block"):
            if L.get(f"{kind}_error"):
                sys.exit(f"table.py: {L['layer']} {kind} failed on the GPU: {L[kind + '_error']}")
        t, b = L["tensor"], L["block"]
        recal = (t["quant_x_ms"] - t["cast_x_ms"]) + (t["quant_w_ms"] - t["cast_w_ms"])
        rows.append({
            "name": L["layer"], "N": L["N"], "K": L["K"], "bf16": L["bf16_ms"],
            "t_gemm": t["gemm_fast_ms"], "t_gemm_nf": t["gemm_nonfast_ms"],
            "t_qx": t["quant_x_ms"], "t_qw": t["quant_w_ms"], "t_recal": recal,
            "t_step": t["step_ms"], "t_cached": t["cached_w_ms"],
            "t_roof": t["gemm_fast_ms"] + t["roofline_quant_x_ms"] + t["roofline_quant_w_ms"],
            "b_gemm": b["gemm_ms"], "b_qx": b["quant_x_ms"], "b_qw": b["quant_w_ms"],
            "b_step": b["step_ms"], "b_cached": b["cached_w_ms"],
            "b_roof": b["gemm_ms"] + b["roofline_quant_x_ms"] + b["roofline_quant_w_ms"],
        })
    total = {k: sum(r[k] for r in rows) for k in rows[0] if k not in ("name", "N", "K")}
    total.update(name="all four", N=0, K=0)
    rows.append(total)

    def x(r, k):
        return r["bf16"] / r[k]

    with open(f"{out}/table.md", "w") as f:
        f.write(f"{res['tokens']} tokens, median of {res['reps']}; device: {res['device']}; "
                f"copy {res['copy_gbps']:.0f} GB/s. Times in ms, speedup vs BF16 GEMM in brackets.\n\n")
        f.write("| layer (N x K) | BF16 GEMM | FP8 tensor GEMM | quant X + W (recal.) | step | W cached "
                "| step, roofline quant. | FP8 block GEMM | quant X + W | step | W cached | step, roofline quant. |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            shape = f" ({r['N']} x {r['K']})" if r["N"] else ""
            f.write(f"| {r['name']}{shape} | {r['bf16']:.3f} | {r['t_gemm']:.3f} ({x(r, 't_gemm'):.2f}x) "
                    f"| {r['t_qx']:.3f} + {r['t_qw']:.3f} ({r['t_recal']:.3f}) "
                    f"| {r['t_step']:.3f} ({x(r, 't_step'):.2f}x) | {r['t_cached']:.3f} ({x(r, 't_cached'):.2f}x) "
                    f"| {x(r, 't_roof'):.2f}x | {r['b_gemm']:.3f} ({x(r, 'b_gemm'):.2f}x) "
                    f"| {r['b_qx']:.3f} + {r['b_qw']:.3f} | {r['b_step']:.3f} ({x(r, 'b_step'):.2f}x) "
                    f"| {r['b_cached']:.3f} ({x(r, 'b_cached'):.2f}x) | {x(r, 'b_roof'):.2f}x |\n")
        a = rows[-1]
        f.write(f"\nPer-tensor recalibration (amax passes + scales) = {a['t_recal']:.3f} ms = "
                f"{100 * a['t_recal'] / a['t_step']:.1f}% of the FP8 step, "
                f"{100 * a['t_recal'] / a['bf16']:.1f}% of the BF16 GEMM time. "
                f"Non-fast per-tensor GEMM: {a['t_gemm_nf']:.3f} ms ({x(a, 't_gemm_nf'):.2f}x).\n")
    with open(f"{out}/speedup.dat", "w") as f:
        f.write("# layer  tensor_gemm tensor_step tensor_cachedW tensor_roofline  "
                "block_gemm block_step block_cachedW block_roofline   (BF16 GEMM time / FP8 time)\n")
        for r in rows:
            vals = [x(r, k) for k in ("t_gemm", "t_step", "t_cached", "t_roof",
                                      "b_gemm", "b_step", "b_cached", "b_roof")]
            f.write(f"\"{r['name']}\" " + " ".join(f"{v:.4f}" for v in vals) + "\n")
    with open(f"{out}/breakdown.dat", "w") as f:
        f.write("# all four layers, ms: kind  gemm quant_x quant_w(incl. recal.)\n")
        a = rows[-1]
        f.write(f"\"BF16\" {a['bf16']:.4f} 0 0\n")
        f.write(f"\"FP8 tensor\" {a['t_gemm']:.4f} {a['t_qx']:.4f} {a['t_qw']:.4f}\n")
        f.write(f"\"FP8 block\" {a['b_gemm']:.4f} {a['b_qx']:.4f} {a['b_qw']:.4f}\n")
    print(open(f"{out}/table.md").read())


if __name__ == "__main__":
    main()
