#!/usr/bin/env python3
"""A run stopped and resumed from --checkpoint-dir continues exactly: train_gpt's losses.

Usage: resume_check.py BIN_DIR WORK_DIR [TRAIN_GPT_FLAGS...]   (e.g. --amp bf16 --amp-level O2)

Runs 6 steps straight, then 4 steps with a checkpoint every 2 and a second run to step 6 from
that directory; the resumed run must print where it resumed and its steps 4 and 5 must have
the losses of the straight run, bit for bit (same weights, optimizer state, data position).
"""
import json
import os
import shutil
import subprocess
import sys

SIZE = ["--n-layer", "1", "--n-head", "2", "--n-embd", "32", "--block-size", "32", "--batch-size", "4",
        "--threads", "1", "--num-workers", "1", "--epochs", "1"]


def run(bin_dir, metrics, extra):
    cmd = [os.path.join(bin_dir, "train_gpt")] + SIZE + sys.argv[3:] + ["--metrics", metrics] + extra
    return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120).stdout


def losses(path):
    return {r["step"]: r["loss"] for r in map(json.loads, open(path)) if r["type"] == "step"}


def main():
    bin_dir, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ckpt = os.path.join(work, "ckpt")
    run(bin_dir, os.path.join(work, "straight.jsonl"), ["--max-steps", "6"])
    run(bin_dir, os.path.join(work, "first.jsonl"), ["--max-steps", "4", "--checkpoint-dir", ckpt,
                                                      "--checkpoint-every", "2"])
    out = run(bin_dir, os.path.join(work, "second.jsonl"), ["--max-steps", "6", "--checkpoint-dir", ckpt,
                                                             "--checkpoint-every", "2"])
    straight, second = losses(os.path.join(work, "straight.jsonl")), losses(os.path.join(work, "second.jsonl"))
    print(out.strip().splitlines()[0])
    print("straight:", straight, "\nresumed: ", second)
    ok = "resumed from" in out and "(epoch 0, batch 4)" in out and sorted(second) == [4, 5]
    ok = ok and all(second[s] == straight[s] for s in second)
    print("resume:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
