"""crew.text.datasets: labelled texts from local folders, tokenizer-free (Paddle's
paddle.text.Imdb, read without a network).

    root/train/pos/*.txt, root/train/neg/*.txt, root/test/...   (aclImdb's layout)

A text is lowercased, stripped of ASCII punctuation and split on whitespace (Paddle's Imdb
rule). The word dict maps words to ids by descending frequency (ties by the word), then
'<unk>' (words not in the dict) and '<pad>' (padding). An item is (ids int64 [n], label
int64 [1]); with seq_len, ids are truncated or padded with '<pad>' to seq_len, so that a
DataLoader can batch them.
"""
import collections
import os
import re
import string
import tarfile

import numpy as np

from ..io import Dataset

_PUNCT = str.maketrans("", "", string.punctuation)
IMDB_ARCHIVE = "aclImdb_v1.tar.gz"
PADDLE_IMDB_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "paddle", "dataset", "imdb")


def tokenize(text):
    """Lowercase, drop ASCII punctuation, split on whitespace."""
    return text.translate(_PUNCT).lower().split()


def build_word_dict(token_lists, min_freq=1):
    """{word: id} of the words seen at least min_freq times (most frequent first, ties by the
    word), then '<unk>' and '<pad>'."""
    freq = collections.Counter(w for tokens in token_lists for w in tokens)
    words = sorted((w for w, c in freq.items() if c >= min_freq), key=lambda w: (-freq[w], w))
    word_idx = {w: i for i, w in enumerate(words)}
    word_idx["<unk>"] = len(words)
    word_idx["<pad>"] = len(words) + 1
    return word_idx


def _read(path_or_member):
    data = path_or_member if isinstance(path_or_member, bytes) else open(path_or_member, "rb").read()
    return data.decode("utf-8", errors="replace")


def _folder_texts(root, split, classes):
    """[(text, label)] of root/split/<class>/*.txt, classes in the order given."""
    out = []
    for label, cls in enumerate(classes):
        d = os.path.join(root, split, cls)
        if not os.path.isdir(d):
            raise OSError(f"text folder: {d} is not a directory (expected {root}/{split}/<class>/*.txt)")
        out.extend((_read(os.path.join(d, n)), label) for n in sorted(os.listdir(d)) if n.endswith(".txt"))
    return out


def _archive_texts(path, split, classes):
    """The same from a tar archive (aclImdb_v1.tar.gz: aclImdb/<split>/<class>/*.txt)."""
    pattern = re.compile(rf"(^|/){split}/({'|'.join(map(re.escape, classes))})/[^/]*\.txt$")
    found = []
    with tarfile.open(path, "r:*") as tar:
        for m in tar:
            hit = pattern.search(m.name) if m.isfile() else None
            if hit:
                found.append((m.name, _read(tar.extractfile(m).read()), classes.index(hit.group(2))))
    found.sort(key=lambda f: (f[2], f[0]))
    return [(text, label) for _, text, label in found]


class TextFolder(Dataset):
    """TextFolder(root, mode='train', classes=None, word_idx=None, min_freq=1, seq_len=None).

    Texts of root/<mode>/<class>/*.txt (root may also be a tar archive of that tree); classes
    (default: the sorted sub-directories of root/<mode>) give labels 0, 1, ... in their order.
    word_idx: a dict to use (share the training set's with the test set), else one built from
    root/train with min_freq."""

    def __init__(self, root, mode="train", classes=None, word_idx=None, min_freq=1, seq_len=None):
        root = os.path.expanduser(str(root))
        if not os.path.exists(root):
            raise OSError(f"{type(self).__name__}: {root} does not exist")
        self.root, self.mode, self.seq_len = root, mode, seq_len
        if classes is None:
            if not os.path.isdir(os.path.join(root, mode)):
                raise OSError(f"{type(self).__name__}: {root}/{mode} is not a directory; pass classes= for an archive")
            classes = sorted(e.name for e in os.scandir(os.path.join(root, mode)) if e.is_dir())
        self.classes = list(classes)
        texts = self._texts(mode)
        if not texts:
            raise RuntimeError(f"{type(self).__name__}: no .txt files under {root}/{mode}/{{{','.join(self.classes)}}}")
        if word_idx is None:
            train = texts if mode == "train" else self._texts("train")
            word_idx = build_word_dict((tokenize(t) for t, _ in train), min_freq)
        self.word_idx = word_idx
        self.docs, self.labels = self._encode(texts)

    def _texts(self, split):
        if os.path.isdir(self.root):
            return _folder_texts(self.root, split, self.classes)
        return _archive_texts(self.root, split, self.classes)

    def _encode(self, texts):
        unk = self.word_idx["<unk>"]
        docs = [np.array([self.word_idx.get(w, unk) for w in tokenize(t)], dtype=np.int64) for t, _ in texts]
        return docs, [label for _, label in texts]

    def __getitem__(self, idx):
        doc = self.docs[idx]
        if self.seq_len is not None:
            pad = self.word_idx.get("<pad>", self.word_idx["<unk>"])
            doc = np.concatenate([doc[:self.seq_len], np.full(max(0, self.seq_len - len(doc)), pad, np.int64)])
        return doc, np.array([self.labels[idx]], dtype=np.int64)

    def __len__(self):
        return len(self.docs)


class Imdb(TextFolder):
    """Paddle's paddle.text.Imdb(data_file=None, mode='train', cutoff=150, download=True), read
    locally: data_file is aclImdb_v1.tar.gz or a directory of its layout (aclImdb/ or its
    contents); without it, Paddle's cache (~/.cache/paddle/dataset/imdb/) then
    $CREW_DATA_DIR/imdb. Labels: pos 0, neg 1. The dict holds the words seen more than
    `cutoff` times in train and test together (Paddle's rule). seq_len pads/truncates."""

    def __init__(self, data_file=None, mode="train", cutoff=150, download=True, seq_len=None):
        if mode not in ("train", "test"):
            raise ValueError(f"Imdb: mode must be 'train' or 'test', got '{mode}'")
        path = data_file or self._default_path()
        if path is None:
            raise OSError(f"Imdb: no data; crew does not download data sets: put {IMDB_ARCHIVE} in "
                          f"{PADDLE_IMDB_CACHE}/ as Paddle would, or pass data_file= (the archive or a "
                          "folder of train/{pos,neg}/*.txt, test/{pos,neg}/*.txt)")
        inner = os.path.join(str(path), "aclImdb")
        path = inner if os.path.isdir(inner) else path
        self.root, self.classes = os.path.expanduser(str(path)), ["pos", "neg"]
        if not os.path.exists(self.root):
            raise OSError(f"Imdb: data_file {self.root} does not exist")
        both = self._texts("train") + self._texts("test")
        word_idx = build_word_dict((tokenize(t) for t, _ in both), cutoff + 1)
        super().__init__(self.root, mode, self.classes, word_idx, seq_len=seq_len)

    @staticmethod
    def _default_path():
        for d in (PADDLE_IMDB_CACHE, os.path.join(os.environ.get("CREW_DATA_DIR", ""), "imdb")):
            if os.path.exists(os.path.join(d, IMDB_ARCHIVE)):
                return os.path.join(d, IMDB_ARCHIVE)
            if os.path.isdir(os.path.join(d, "aclImdb")):
                return d
        return None


__all__ = ["TextFolder", "Imdb", "tokenize", "build_word_dict"]
