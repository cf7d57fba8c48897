#!/usr/bin/env python3
"""Writes the seed inputs of fuzz/corpus/<target>/seed-*: small valid inputs of each format.

Deterministic (fixed contents, gzip mtime 0), so rerunning it leaves git clean. Inputs that
found a bug live beside the seeds as <target>/regress-<what-it-caught> and are not touched.
    python3 fuzz/make_seeds.py
"""
import gzip
import io
import json
import os
import struct
import tarfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def gz(data):
    return gzip.compress(data, mtime=0)


# --- Object: "CRO" 0x01 then tag-encoded values (crew/distributed/object/object_codec.cpp).
def obj(v):
    if v is None:
        return b"\x00"
    if v is False:
        return b"\x01"
    if v is True:
        return b"\x02"
    if isinstance(v, int):
        return b"\x03" + struct.pack("<q", v)
    if isinstance(v, float):
        return b"\x04" + struct.pack("<d", v)
    if isinstance(v, str):
        b = v.encode()
        return b"\x05" + struct.pack("<I", len(b)) + b
    if isinstance(v, bytes):
        return b"\x06" + struct.pack("<I", len(v)) + v
    if isinstance(v, list):
        return b"\x07" + struct.pack("<I", len(v)) + b"".join(obj(x) for x in v)
    if isinstance(v, dict):
        return b"\x08" + struct.pack("<I", len(v)) + b"".join(obj(k) + obj(x) for k, x in v.items())
    raise TypeError(v)


def objects():
    values = {
        "none": None,
        "int": -12345678901,
        "float": 2.5,
        "nan": float("nan"),
        "str": "héllo",
        "bytes": b"\x00\xff",
        "nested": {"foo": [1, 2, 3], 7: {"x": None, "y": [True, False]}, "b": b"raw"},
        "deep": [[[[[[[[1]]]]]]]],
    }
    for name, v in values.items():
        write("object", name, b"CRO\x01" + obj(v))


# --- Store protocol: frames "CRWS" ver code 0 0 len body (crew/distributed/store/tcp_store_protocol.h).
HELLO, SET, GET, ADD, COMPARE_SET, CHECK, DELETE_KEY, NUM_KEYS, WAIT = range(1, 10)


def frame(code, body):
    return struct.pack("<IBBHI", 0x53575243, 1, code, 0, len(body)) + body


def fb(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack("<I", len(b)) + b


def store():
    hello = frame(HELLO, struct.pack("<I", 1) + fb(""))
    write("store_protocol", "hello", hello)
    write("store_protocol", "hello_token", frame(HELLO, struct.pack("<I", 1) + fb("job-token-123")))
    session = [
        frame(SET, fb("rank/0") + fb("127.0.0.1:29500")),
        frame(GET, struct.pack("<q", 30000) + fb("rank/0")),
        frame(ADD, fb("counter") + struct.pack("<q", 5)),
        frame(COMPARE_SET, fb("leader") + fb("") + fb("0")),
        frame(CHECK, struct.pack("<I", 2) + fb("a") + fb("b")),
        frame(DELETE_KEY, fb("a")),
        frame(NUM_KEYS, b""),
        frame(WAIT, struct.pack("<qI", 1000, 2) + fb("x") + fb("y")),
    ]
    write("store_protocol", "session", hello + b"".join(session))
    for i, f in enumerate(session):
        write("store_protocol", "op%d" % (i + 2), hello + f)


# --- safetensors: u64 header length, JSON header padded to 8, data.
def safetensors(tensors, metadata=None):
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def safetensors_seeds():
    write("safetensors", "f32", safetensors({"w": ("F32", [2, 2], struct.pack("<4f", 1, -2, 0.5, 3))}))
    write("safetensors", "mixed", safetensors({
        "a": ("F64", [1], struct.pack("<d", 1.0 / 3)),
        "b": ("I32", [3], struct.pack("<3i", -1, 0, 7)),
        "c": ("I64", [], struct.pack("<q", 42)),
        "d": ("U8", [2, 1], b"\x07\xff"),
        "e": ("F32", [0, 4], b""),
    }, {"epoch": "3", "note": "q\"\\\n\u00e9"}))
    write("safetensors", "empty", safetensors({}))


# --- IDX (first byte: dims - 1), plain and gzipped.
def idx(dims, data):
    return bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + data


def idx_seeds():
    labels = idx([4], bytes([1, 2, 3, 4]))
    images = idx([2, 3, 3], bytes(range(18)))
    write("idx", "labels", b"\x00" + labels)
    write("idx", "images", b"\x02" + images)
    write("idx", "labels_gz", b"\x00" + gz(labels))
    write("idx", "images_gz", b"\x02" + gz(images))


# --- tar and CIFAR-10 (first byte: 0 train, 1 test).
def tar(members, fmt=tarfile.USTAR_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def record(label, fill):
    return bytes([label]) + bytes([fill]) * 3072


def tar_seeds():
    simple = tar([("a.txt", b"hello\n"), ("dir/b.bin", bytes(range(256)) * 3)])
    write("tar", "ustar", simple)
    write("tar", "ustar_gz", gz(simple))
    write("tar", "gnu_longname", tar([("d/" + "x" * 150 + ".bin", b"long name")], tarfile.GNU_FORMAT))
    members = [("cifar-10-batches-bin/data_batch_%d.bin" % b, record(b, b * 20)) for b in range(1, 6)]
    members.append(("cifar-10-batches-bin/test_batch.bin", record(9, 200) + record(0, 1)))
    archive = tar(members)
    write("cifar10", "train_tar_gz", b"\x00" + gz(archive))
    write("cifar10", "test_tar_gz", b"\x01" + gz(archive))
    write("cifar10", "test_tar", b"\x01" + tar([members[-1]]))


if __name__ == "__main__":
    objects()
    store()
    safetensors_seeds()
    idx_seeds()
    tar_seeds()
