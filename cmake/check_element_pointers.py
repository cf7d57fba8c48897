#!/usr/bin/env python3
"""The element-pointer check (ctest `architecture.element_pointers`).

Above the kernels nothing touches a tensor's elements through pointers. Every source under
crew/ and python/src/ is scanned for the accessors that hand out element addresses
(Tensor::data<T>(), raw_data(), device_data(), layout_data(), Storage::data()) outside the
places that own them:

  crew/tensor/                  the tensor layer: Tensor and Storage own the bytes; its
                                kernels/ and device/ folders are the kernels and the device
                                backends; serialization reads the bytes of host tensors
  crew/distributed/backends/    the collective backends, communication kernels of their
                                devices (shm and Gloo move host memory; NCCL's would be a
                                folder of its own)
  python/src/tensor_numpy.cpp   the NumPy boundary (host tensors only)

A use anywhere else fails with file:line, so that a loop that needs elements goes behind
crew::kernels (crew/tensor/kernels/dispatch.h), where a device backend can replace it.

  check_element_pointers.py <repo root> [dir ...]     (dirs default to crew python/src)
"""
import pathlib
import re
import sys

ALLOWED = (re.compile(r"^crew/tensor/"), re.compile(r"^crew/distributed/backends/"),
           re.compile(r"^python/src/tensor_numpy\.cpp$"))
ACCESSOR = re.compile(r"\.data<[\w:]+>\(|\braw_data\(|\bdevice_data\(|\blayout_data\(|storage->data\(")


def uses(path):
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        code = line.split("//", 1)[0]  # comments may name the accessors
        if ACCESSOR.search(code):
            yield number, line.strip()


def main(argv):
    root = pathlib.Path(argv[1])
    dirs = argv[2:] or ["crew", "python/src"]
    files = sorted(p for d in dirs for p in (root / d).rglob("*") if p.suffix in (".h", ".cpp", ".cu", ".cuh"))
    errors, checked = [], 0
    for path in files:
        rel = path.relative_to(root).as_posix()
        if any(a.search(rel) for a in ALLOWED):
            continue
        checked += 1
        errors += [f"  {rel}:{n}: {line}" for n, line in uses(path)]
    if errors:
        print("element_pointers: element pointers above the kernels (move the loop behind crew::kernels,"
              " crew/tensor/kernels/dispatch.h):\n" + "\n".join(errors))
        return 1
    print(f"element_pointers: {checked} files above the kernels, none touches element pointers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
