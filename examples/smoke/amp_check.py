#!/usr/bin/env python3
"""train_cnn, train_resnet and train_gpt train under --amp: losses finite and falling.

Usage: amp_check.py BIN_DIR WORK_DIR

Each tool runs a few steps with --amp bf16 at --amp-level O1 and O2 (and train_gpt with
--amp fp16, which steps through the loss scaler); the configuration line must name the amp
mode, every step's loss must be finite, and the mean loss of the last half of the steps must
be below that of the first half (train_resnet sees one batch again each epoch, so it must
fit it).
Last, train_gpt at O2 on 2 ranks under `crew launch` with --comm-dtype bf16 (16-bit gradient
buckets, and the float32 layer norms' buckets sent in bfloat16).
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


def check(bin_dir, work, tool, amp, level, launch=False):
    metrics = os.path.join(work, f"{tool}-{amp}-{level}{'-launch' if launch else ''}.jsonl")
    cmd = [os.path.join(bin_dir, tool)] + RUNS[tool] + COMMON + ["--amp", amp, "--amp-level", level,
                                                                 "--metrics", metrics]
    if launch:
        cmd = [os.path.join(bin_dir, "crew"), "launch", "--devices=0,1", "--log_dir",
               os.path.join(work, "launch_log")] + cmd + ["--comm-dtype", "bf16"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=240).stdout
    config = next(line for line in out.splitlines() if line.startswith(tool + ": "))
    if launch:
        assert "2 ranks" in config and "gradients sent in bf16" in config, config
    want = f"amp {amp} {level}"
    assert want in config, f"{tool}: configuration line without {want!r}: {config}"
    losses = [r["loss"] for r in map(json.loads, open(metrics)) if r["type"] == "step"]
    assert len(losses) >= 6, f"{tool} {amp} {level}: {len(losses)} steps"
    assert all(math.isfinite(x) for x in losses), f"{tool} {amp} {level}: losses {losses}"
    half = len(losses) // 2
    first, last = sum(losses[:half]) / half, sum(losses[-half:]) / half
    assert last < first, f"{tool} {amp} {level}: loss not falling: {losses}"
    print(f"{tool} --amp {amp} --amp-level {level}: {config.split(', ', 3)[-1]}; loss {first:.4f} -> {last:.4f}")


def main():
    bin_dir, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for case in CASES:
        check(bin_dir, work, *case)
    if os.path.exists(os.path.join(bin_dir, "crew")):
        check(bin_dir, work, "train_gpt", "bf16", "O2", launch=True)
    print("amp_check: ok")


if __name__ == "__main__":
    main()
