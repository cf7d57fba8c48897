#!/usr/bin/python3
"""Does bf16 training track float32? (issue 31: over 300 steps the ResNet-18 and GPT losses stay
within 2%, relative, smoothed over 20 steps, of the float32 run from the same weights.)

Runs bin/train_resnet and bin/train_gpt for STEPS steps from the same seed (same initial weights, same batches), float32 and --amp bf16 at each
--amp-level, and prints per model and level the largest relative gap between the 20-step
moving averages of the two loss curves, and the gap at the end. ResNet-18 reads a CIFAR-10
binary archive made here from Fashion-MNIST (Debian's dataset-fashion-mnist: each 28x28 image
padded to 32x32 in all three channels, its label as is), so that its loss falls as on real
data; the GPT reads the fortunes text.

    bench/amp_tracking.py build/release [--steps 300] [--levels O1 O2] [--models resnet18 gpt]
                          [--control]

--control adds a row per model: float32 again, from the same initial weights rounded to bfloat16
(nearest even), i.e. a float32 run whose only difference is the size of perturbation bf16's
rounding brings. Its gap to the float32 run is how far two float32 trajectories drift apart
from that alone: the floor under any bf16 run's gap.
"""
import argparse
import gzip
import io
import json
import os
import struct
import subprocess
import sys
import tarfile
import tempfile

FASHION = "/usr/share/datasets/fashion-mnist"


def fashion_as_cifar(path):
    """Writes Fashion-MNIST as a cifar-10-binary.tar.gz (records: label byte + 3 x 32 x 32)."""
    def idx(name, offset):
        with gzip.open(os.path.join(FASHION, name)) as f:
            return f.read()[offset:]

    def records(images, labels):
        out = bytearray()
        for i, label in enumerate(labels):
            img = images[i * 784:(i + 1) * 784]
            plane = b"".join(b"\0" * 2 + img[r * 28:(r + 1) * 28] + b"\0" * 2 for r in range(28))
            plane = b"\0" * 64 + plane + b"\0" * 64
            out += bytes([label]) + plane * 3
        return bytes(out)

    train = records(idx("train-images-idx3-ubyte.gz", 16), idx("train-labels-idx1-ubyte.gz", 8))
    test = records(idx("t10k-images-idx3-ubyte.gz", 16), idx("t10k-labels-idx1-ubyte.gz", 8))
    rec = 1 + 3072
    files = {f"data_batch_{b + 1}.bin": train[b * 10000 * rec:(b + 1) * 10000 * rec] for b in range(5)}
    files["test_batch.bin"] = test
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo("cifar-10-batches-bin/" + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def losses(path):
    return [json.loads(line)["loss"] for line in open(path) if '"type": "step"' in line]


def smoothed(xs, window):
    return [sum(xs[i - window + 1:i + 1]) / window for i in range(window - 1, len(xs))]


def round_to_bf16(src, dst):
    """Copies a safetensors file with every F32 tensor rounded to the nearest bfloat16 (ties to
    even), kept as float32, without the source's content checksum."""
    import numpy as np
    raw = open(src, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    body = bytearray(raw[8 + n:])
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        a, b = info["data_offsets"]
        u = np.frombuffer(bytes(body[a:b]), dtype=np.uint32).astype(np.uint64)
        r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
        body[a:b] = r.tobytes()
    # crew records a checksum of the content in the metadata: the rounded file is a new one.
    meta = {k: v for k, v in header.get("__metadata__", {}).items() if "checksum" not in k}
    header = {k: v for k, v in header.items() if k != "__metadata__"}
    if meta:
        header["__metadata__"] = meta
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.write(body)
    return dst


def program(bin_dir, model):
    return os.path.join(bin_dir, {"resnet18": "train_resnet", "gpt": "train_gpt"}[model])


def run(bin_dir, model, steps, data, amp, out, init=None):
    cmd = [program(bin_dir, model), *data, "--epochs", "100", "--max-steps", str(steps), "--threads", "1",
           "--num-workers", "1", "--metrics", out, "--log-every", "100000"]
    if amp:
        cmd += ["--amp", "bf16", "--amp-level", amp]
    if init:
        cmd += ["--init", init]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800)
    return losses(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", nargs="?", default="build/release")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--window", type=int, default=20)
    ap.add_argument("--levels", nargs="+", default=["O1", "O2"])
    ap.add_argument("--models", nargs="+", default=["resnet18", "gpt"])
    ap.add_argument("--control", action="store_true",
                    help="also run float32 from the initial weights rounded to bf16")
    a = ap.parse_args()
    bin_dir = os.path.join(os.path.abspath(a.build), "bin")
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        text = subprocess.run([os.path.join(src, "bench", "fortunes_text.sh"), os.path.join(tmp, "fortunes.txt")],
                              check=True, capture_output=True, text=True).stdout.strip()
        cifar = fashion_as_cifar(os.path.join(tmp, "cifar-10-binary.tar.gz"))
        data = {"resnet18": ["--data-dir", cifar], "gpt": ["--text", text]}
        print(f"{a.steps} steps, {a.window}-step moving averages, 1 thread")
        print("| model | level | float32 loss (first, last) | bf16 loss (first, last) | largest gap | gap at the end |")
        print("| --- | --- | --- | --- | ---: | ---: |")
        for model in a.models:
            ref = run(bin_dir, model, a.steps, data[model], None, os.path.join(tmp, f"{model}.f32"))
            others = [(level, level, None) for level in a.levels]
            if a.control:
                init = os.path.join(tmp, f"{model}.init.safetensors")
                subprocess.run([program(bin_dir, model), *data[model], "--epochs", "0", "--save-model", init],
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
                rounded = round_to_bf16(init, os.path.join(tmp, f"{model}.rounded.safetensors"))
                others.append(("float32 from the saved weights (check: 0)", None, init))
                others.append(("float32 from bf16-rounded weights", None, rounded))
            for i, (label, level, init) in enumerate(others):
                low = run(bin_dir, model, a.steps, data[model], level, os.path.join(tmp, f"{model}.{i}"), init)
                n = min(len(ref), len(low))
                r, b = smoothed(ref[:n], a.window), smoothed(low[:n], a.window)
                gaps = [abs(x - y) / abs(x) for x, y in zip(r, b)]
                print(f"| {model} | {label} | {ref[0]:.4f}, {ref[n - 1]:.4f} | {low[0]:.4f}, {low[n - 1]:.4f} | "
                      f"{100 * max(gaps):.2f}% | {100 * gaps[-1]:.2f}% |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
