#!/usr/bin/env python3
"""train_cnn, train_resnet and train_gpt train under --amp: losses finite and falling.

Usage: amp_check.py BIN_DIR WORK_DIR

Each tool runs a few steps with --amp bf16 at --amp-level O1 and O2 (and train_gpt with
--amp fp16, which steps through the loss scaler); the configuration line must name the amp
mode, every step's loss must be finite, and the mean loss of the last half of the steps must
be below that of the first half (train_resnet sees one batch again each epoch, so it must
fit it).
"""
import json
import math
import os
import shutil
import subprocess
import sys

RUNS = {
    "train_cnn": ["--epochs", "1", "--max-steps", "12", "--test-samples", "100", "--seed", "3"],
    "train_resnet": ["--synthetic", "8", "--batch-size", "8", "--epochs", "6", "--no-shuffle"],
    "train_gpt": ["--n-layer", "1", "--n-head", "2", "--n-embd", "32", "--block-size", "32", "--batch-size", "4",
                  "--max-steps", "8", "--lr", "3e-3"],
}
COMMON = ["--num-workers", "0", "--threads", "1"]
CASES = [(tool, "bf16", level) for tool in RUNS for level in ("O1", "O2")] + [("train_gpt", "fp16", "O1")]


def check(bin_dir, work, tool, amp, level):
    metrics = os.path.join(work, f"{tool}-{amp}-{level}.jsonl")
    cmd = [os.path.join(bin_dir, tool)] + RUNS[tool] + COMMON + ["--amp", amp, "--amp-level", level,
                                                                 "--metrics", metrics]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=240).stdout
    config = out.splitlines()[0]
    want = f"amp {amp} {level}"
    assert want in config, f"{tool}: configuration line without {want!r}: {config}"
    losses = [r["loss"] for r in map(json.loads, open(metrics)) if r["type"] == "step"]
    assert len(losses) >= 6, f"{tool} {amp} {level}: {len(losses)} steps"
    assert all(math.isfinite(x) for x in losses), f"{tool} {amp} {level}: losses {losses}"
    half = len(losses) // 2
    first, last = sum(losses[:half]) / half, sum(losses[-half:]) / half
    assert last < first, f"{tool} {amp} {level}: loss not falling: {losses}"
    print(f"{tool} --amp {amp} --amp-level {level}: {config.split(', ')[-1]}; loss {first:.4f} -> {last:.4f}")


def main():
    bin_dir, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for case in CASES:
        check(bin_dir, work, *case)
    print("amp_check: ok")


if __name__ == "__main__":
    main()
