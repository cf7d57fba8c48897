"""`crew plot`: curves from crew's metrics files (train_cnn --metrics, MetricsLogger), several
runs overlaid, into a valid PNG; through the Python module and through the `crew` command."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from crew.tools import plot

pytest.importorskip("matplotlib")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write_run(path, epochs=2, steps=5, per_epoch_steps=False, scale=1.0):
    """A metrics file as train_cnn writes it (global steps) or as MetricsLogger writes it
    (steps counted again from 0 in each epoch, samples_per_s, an eval record)."""
    lines, global_step = [], 0
    for e in range(epochs):
        for s in range(steps):
            step = s if per_epoch_steps else global_step
            lines.append({"type": "step", "epoch": e, "step": step, "loss": scale / (1 + global_step),
                          "lr": 0.01})
            global_step += 1
        if per_epoch_steps:
            lines.append({"type": "epoch", "epoch": e, "steps": steps, "samples_per_s": 1000.0 + e,
                          "train_seconds": 1.0, "acc": 0.5 + 0.1 * e})
            lines.append({"type": "eval", "epoch": e, "loss": 0.5, "acc": 0.6 + 0.1 * e})
        else:
            lines.append({"type": "epoch", "epoch": e, "steps": steps, "test_accuracy": 0.8 + 0.05 * e,
                          "test_images": 100, "images_per_s": 5000.0, "train_seconds": 0.5})
    lines.append({"type": "done", "steps": global_step, "images_per_s": 5000.0})
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    return str(path)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == PNG_MAGIC, f"{path} is not a PNG"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_two_runs_overlaid_into_a_png(tmp_path):
    a = write_run(tmp_path / "cnn.jsonl")
    b = write_run(tmp_path / "fit.jsonl", per_epoch_steps=True, scale=2.0)
    out = tmp_path / "out" / "curves.png"
    assert plot.main([a, b, "-o", str(out)]) == 0
    width, height = png_size(out)
    assert width > 100 and height > 100
    from matplotlib import image
    assert image.imread(str(out)).shape[:2] == (height, width)  # decodes as a whole


def test_curves_make_restarting_steps_cumulative(tmp_path):
    run = plot.curves(plot.read_records(write_run(tmp_path / "m.jsonl", per_epoch_steps=True)))
    xs, _ = run["loss"]["train loss"]
    assert xs == list(range(10))
    assert set(run["accuracy"]) == {"acc", "eval acc"}
    assert run["throughput"]["samples_per_s"] == ([0, 1], [1000.0, 1001.0])


def test_bad_files_are_named(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "step", "step": 0, "loss": 1}\nnot json\n')
    assert plot.main([str(bad), "-o", str(tmp_path / "x.png")]) == 1
    assert "bad.jsonl:2: not a JSON line" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"type": "resume", "step": 3}\n')
    assert plot.main([str(empty), "-o", str(tmp_path / "y.png")]) == 1
    assert "no step or epoch records" in capsys.readouterr().err
    assert plot.main([str(tmp_path / "missing.jsonl")]) == 1


def test_the_crew_command_runs_plot(tmp_path):
    bin_dir = os.environ.get("CREW_BIN_DIR")
    crew = os.path.join(bin_dir, "crew") if bin_dir else shutil.which("crew")
    if not crew or not os.access(crew, os.X_OK):
        pytest.skip("the crew command is not built")
    a = write_run(tmp_path / "a.jsonl")
    b = write_run(tmp_path / "b.jsonl", scale=3.0)
    out = tmp_path / "curves.png"
    env = dict(os.environ, CREW_PYTHON=sys.executable)
    r = subprocess.run([crew, "plot", a, b, "-o", str(out), "--title", "two runs"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stdout
    png_size(out)
    r = subprocess.run([crew, "--help"], capture_output=True, text=True, timeout=30)
    assert "plot" in r.stdout
