"""crew.text.datasets (TextFolder, Imdb) over local folders and archives, and the fortunes
script that builds such a folder: tokens, the word dict, padding, labels, DataLoader batches,
and a small classifier that learns from it."""
import os
import subprocess
import sys
import tarfile

import numpy as np
import pytest

import crew as paddle
from crew import nn
from crew.io import DataLoader
from crew.text.datasets import Imdb, TextFolder, build_word_dict, tokenize

FORTUNES = "/usr/share/games/fortunes/computers"
TEXTS = {("train", "pos"): ["A good, good film!", "Good fun."], ("train", "neg"): ["Bad film; bad acting."],
         ("test", "pos"): ["good"], ("test", "neg"): ["Awful film", "bad bad unknownword"]}


def write_tree(root):
    for (split, label), texts in TEXTS.items():
        os.makedirs(root / split / label, exist_ok=True)
        for i, text in enumerate(texts):
            (root / split / label / f"{i}.txt").write_text(text)


def test_tokenize_and_word_dict():
    assert tokenize("A good, GOOD film!\n It's") == ["a", "good", "good", "film", "its"]
    d = build_word_dict([["b", "a", "b"], ["c", "a", "b"]], min_freq=2)
    assert d == {"b": 0, "a": 1, "<unk>": 2, "<pad>": 3}


def test_text_folder_labels_ids_and_padding(tmp_path):
    write_tree(tmp_path)
    train = TextFolder(str(tmp_path), mode="train", seq_len=4)
    assert train.classes == ["neg", "pos"] and len(train) == 3
    w = train.word_idx  # train counts: good 3, bad 2, film 2, a/acting/fun 1
    assert [w["good"], w["bad"], w["film"], w["a"]] == [0, 1, 2, 3] and w["<unk>"] == 6 and w["<pad>"] == 7
    ids, label = train[0]  # neg/0.txt: "bad film bad acting"
    assert ids.dtype == np.int64 and label.tolist() == [0]
    np.testing.assert_array_equal(ids, [1, 2, 1, w["acting"]])
    ids, label = train[2]  # pos/1.txt "good fun" padded
    np.testing.assert_array_equal(ids, [0, w["fun"], 7, 7])
    assert label.tolist() == [1]
    test = TextFolder(str(tmp_path), mode="test", word_idx=train.word_idx, seq_len=2)
    np.testing.assert_array_equal(test[1][0], [1, 1])  # truncated
    assert test[0][0][0] == w["<unk>"]  # "awful" was not in train
    raw = TextFolder(str(tmp_path), mode="test", min_freq=2)  # dict from train, min_freq 2
    assert "acting" not in raw.word_idx and raw[1][0].tolist() == [1, 1, raw.word_idx["<unk>"]]
    with pytest.raises(OSError, match="does not exist"):
        TextFolder(str(tmp_path / "missing"))


def test_imdb_reads_a_folder_and_an_archive_alike(tmp_path):
    write_tree(tmp_path / "aclImdb")
    archive = tmp_path / "aclImdb_v1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "aclImdb", arcname="aclImdb")
    a = Imdb(data_file=str(tmp_path), mode="test", cutoff=1)
    b = Imdb(data_file=str(archive), mode="test", cutoff=1)
    assert a.word_idx == b.word_idx and len(a) == len(b) == 3
    # words seen more than once in train and test together: bad 4, good 4, film 3
    assert a.word_idx == {"bad": 0, "good": 1, "film": 2, "<unk>": 3, "<pad>": 4}
    for i in range(3):
        np.testing.assert_array_equal(a[i][0], b[i][0])
        assert a[i][1].tolist() == b[i][1].tolist()
    assert [a[i][1][0] for i in range(3)] == [0, 1, 1]  # Paddle's labels: pos 0, neg 1
    np.testing.assert_array_equal(a[2][0], [0, 0, 3])
    with pytest.raises(ValueError, match="mode"):
        Imdb(data_file=str(archive), mode="valid")


def test_imdb_says_where_to_put_the_archive(tmp_path):
    code = "import crew; crew.text.Imdb()"
    env = dict(os.environ, HOME=str(tmp_path), CREW_DATA_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "aclImdb_v1.tar.gz" in r.stderr and "does not download" in r.stderr


@pytest.fixture(scope="module")
def fortune_folder(tmp_path_factory):
    if not os.path.exists(FORTUNES):
        pytest.skip("Debian's fortunes are not installed")
    out = tmp_path_factory.mktemp("fortunes")
    r = subprocess.run([sys.executable, "-m", "crew.text.fortunes", str(out), "--limit", "400"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:4] == ["test/neg: 80", "test/pos: 80", "train/neg: 320", "train/pos: 320"]
    return out


def test_fortune_folder_batches_through_workers(fortune_folder):
    ds = Imdb(data_file=str(fortune_folder), mode="train", cutoff=2, seq_len=32)
    assert len(ds) == 640 and len(ds.word_idx) > 500
    labels = []
    for x, y in DataLoader(ds, batch_size=64, num_workers=2):
        assert x.shape == [64, 32] and x.dtype == paddle.int64 and y.shape == [64, 1]
        labels.extend(y.numpy().reshape(-1).tolist())
    assert labels == [0] * 320 + [1] * 320


class BagOfWords(nn.Layer):
    def __init__(self, vocab, pad):
        super().__init__()
        self.emb = nn.Embedding(vocab, 16, padding_idx=pad)
        self.fc = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc(paddle.mean(self.emb(x), axis=1))


def test_a_classifier_learns_computers_from_politics(fortune_folder):
    paddle.seed(0)
    train = Imdb(data_file=str(fortune_folder), mode="train", cutoff=1, seq_len=40)
    test = Imdb(data_file=str(fortune_folder), mode="test", cutoff=1, seq_len=40)
    model = BagOfWords(len(train.word_idx), train.word_idx["<pad>"])
    opt = paddle.optimizer.Adam(learning_rate=0.02, parameters=model.parameters())
    for _ in range(6):
        for x, y in DataLoader(train, batch_size=32, shuffle=True, num_workers=2):
            loss = nn.functional.cross_entropy(model(x), paddle.reshape(y, [-1]))
            loss.backward()
            opt.step()
            opt.clear_grad()
    model.eval()
    correct = 0
    for x, y in DataLoader(test, batch_size=80):
        correct += int((model(x).numpy().argmax(1) == y.numpy().reshape(-1)).sum())
    assert correct / len(test) > 0.75, correct
