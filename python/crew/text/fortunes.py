"""Builds an Imdb-like text folder from Debian's fortune files (package fortunes-min /
fortunes), so that text classifiers have data without a network:

    python3 -m crew.text.fortunes OUT [--pos computers] [--neg politics] [--test-every 5]

writes OUT/{train,test}/{pos,neg}/NNNNN.txt, one fortune per file: the fortunes of the --pos
file are 'pos', those of --neg 'neg'; every --test-every'th fortune goes to test. Then
crew.text.datasets.Imdb(data_file=OUT) or TextFolder(OUT) reads it.
"""
import argparse
import os
import sys

FORTUNE_DIR = "/usr/share/games/fortunes"


def read_fortunes(path):
    """The fortunes of one fortune file (texts between lines holding '%'), stripped, non-empty."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    parts, current = [], []
    for line in text.splitlines():
        if line.strip() == "%":
            parts.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    parts.append("\n".join(current).strip())
    return [p for p in parts if p]


def _source(name, fortune_dir):
    path = name if os.path.sep in name else os.path.join(fortune_dir, name)
    if not os.path.isfile(path):
        raise OSError(f"fortunes: {path} does not exist (install Debian's fortunes-min, or pass a path)")
    return path


def build_fortune_folder(out, pos="computers", neg="politics", test_every=5, limit=None,
                         fortune_dir=FORTUNE_DIR):
    """Writes the folder; returns {(split, label): count}. limit caps the fortunes per label."""
    if test_every < 2:
        raise ValueError(f"fortunes: test_every must be >= 2, got {test_every}")
    counts = {}
    for label, name in (("pos", pos), ("neg", neg)):
        texts = read_fortunes(_source(name, fortune_dir))[:limit]
        for split in ("train", "test"):
            os.makedirs(os.path.join(out, split, label), exist_ok=True)
        for i, text in enumerate(texts):
            split = "test" if i % test_every == test_every - 1 else "train"
            with open(os.path.join(out, split, label, f"{i:05d}.txt"), "w", encoding="utf-8") as f:
                f.write(text + "\n")
            counts[(split, label)] = counts.get((split, label), 0) + 1
    return counts


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--pos", default="computers", help="fortune file (name or path) for label pos")
    p.add_argument("--neg", default="politics", help="fortune file (name or path) for label neg")
    p.add_argument("--test-every", type=int, default=5)
    p.add_argument("--limit", type=int, default=None, help="at most this many fortunes per label")
    a = p.parse_args(argv)
    counts = build_fortune_folder(a.out, a.pos, a.neg, a.test_every, a.limit)
    for (split, label), n in sorted(counts.items()):
        print(f"{split}/{label}: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
