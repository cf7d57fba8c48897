#!/usr/bin/env python3
"""Compares train_cnn --metrics traces (JSON lines): the first N step losses of a run against
a reference within a relative tolerance, or the final test accuracy at least the reference's
less a margin. Prints a table; exits 1 on a mismatch.

    compare_traces.py losses REF.jsonl RUN.jsonl [N [RTOL]]
    compare_traces.py accuracy REF.jsonl RUN.jsonl [MARGIN]
    compare_traces.py weights A.safetensors B.safetensors [RTOL]   (float32 tensors)
"""
import array
import json
import struct
import sys


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        a, b = info["data_offsets"]
        out[name] = array.array("f", blob[8 + n + a:8 + n + b])
    return out


def compare_weights(a_path, b_path, rtol):
    a, b = read_safetensors(a_path), read_safetensors(b_path)
    if sorted(a) != sorted(b):
        print(f"FAIL: different tensors: {sorted(a)} vs {sorted(b)}")
        return 1
    worst, bad = 0.0, 0
    for name in sorted(a):
        scale = max(max((abs(v) for v in a[name]), default=0.0), 1e-30)
        diff = max((abs(x - y) for x, y in zip(a[name], b[name])), default=0.0) / scale
        worst = max(worst, diff)
        bad += diff > rtol
        print(f"{name:<24} max |a - b| / max |a| = {diff:.2e}")
    print(("FAIL" if bad else "OK") + f": {len(a) - bad}/{len(a)} tensors within {rtol} (worst {worst:.2e})")
    return 1 if bad else 0


def lines(path, kind):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rec = json.loads(line)
                if rec.get("type") == kind:
                    out.append(rec)
    return out


def main():
    mode, ref_path, run_path = sys.argv[1:4]
    if mode == "weights":
        return compare_weights(ref_path, run_path, float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4)
    if mode == "losses":
        n = int(sys.argv[4]) if len(sys.argv) > 4 else 20
        rtol = float(sys.argv[5]) if len(sys.argv) > 5 else 1e-4
        ref = [r["loss"] for r in lines(ref_path, "step")][:n]
        run = [r["loss"] for r in lines(run_path, "step")][:n]
        if len(ref) < n or len(run) < n:
            print(f"FAIL: {len(ref)} reference and {len(run)} run losses, {n} wanted")
            return 1
        bad = 0
        print(f"{'step':>4} {'reference':>12} {'run':>12} {'rel diff':>10}")
        for i, (a, b) in enumerate(zip(ref, run)):
            rel = abs(a - b) / max(abs(a), 1e-30)
            bad += rel > rtol
            print(f"{i:>4} {a:>12.7g} {b:>12.7g} {rel:>10.2e}{'  <-- over ' + str(rtol) if rel > rtol else ''}")
        print(("FAIL" if bad else "OK") + f": {n - bad}/{n} losses within {rtol} (relative)")
        return 1 if bad else 0
    margin = float(sys.argv[4]) if len(sys.argv) > 4 else 0.01
    ref = [r["test_accuracy"] for r in lines(ref_path, "epoch")]
    run = [r["test_accuracy"] for r in lines(run_path, "epoch")]
    if not ref or not run:
        print("FAIL: no epoch lines")
        return 1
    ok = run[-1] >= ref[-1] - margin
    print(f"{'OK' if ok else 'FAIL'}: final test accuracy {run[-1]:.4f} vs reference {ref[-1]:.4f} (margin {margin})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
