#!/usr/bin/env python3
"""Writes a small MNIST-format data set (what tests/launch/idx_test_data.h writes: a bright
6x6 square whose place is the label, on noise) for train_cnn runs without the real data.

    make_idx.py DIR [TRAIN_COUNT [TEST_COUNT]]
"""
import struct
import sys


def write_set(d, prefix, count, seed):
    state = seed
    img = bytearray(struct.pack(">IIII", 0x803, count, 28, 28))
    lab = bytearray(struct.pack(">II", 0x801, count))
    for i in range(count):
        label = (i * 7 + seed) % 10
        lab.append(label)
        row, col = 2 + (label // 5) * 12, 2 + (label % 5) * 5
        for y in range(28):
            for x in range(28):
                state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
                v = state >> 26
                if row <= y < row + 6 and col <= x < col + 6:
                    v += 180
                img.append(v)
    with open(f"{d}/{prefix}-images-idx3-ubyte", "wb") as f:
        f.write(img)
    with open(f"{d}/{prefix}-labels-idx1-ubyte", "wb") as f:
        f.write(lab)


if __name__ == "__main__":
    out = sys.argv[1]
    train = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    test = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    write_set(out, "train", train, 11)
    write_set(out, "t10k", test, 23)
