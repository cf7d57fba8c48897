"""`crew plot metrics.jsonl [more.jsonl ...] -o curves.png`: training curves from crew's
metrics files, several runs overlaid.

The files are the JSON lines train_cnn/train_resnet/train_gpt write with --metrics and
crew.callbacks.MetricsLogger writes from Model.fit: {"type": "step", "epoch", "step", "loss",
"lr", ...} per logged step, {"type": "epoch", "epoch", ..., "<unit>_per_s", "test_accuracy"
or "acc", ...} per epoch and {"type": "eval", "epoch", "loss", "acc", ...} per evaluation.
The figure has one panel per quantity found: loss per step, accuracy per epoch, throughput
(images/samples/tokens per second) per epoch, learning rate per step. Matplotlib's Agg
backend draws it; no display is needed.

    python3 -m crew.tools.plot run1/metrics.jsonl run2/metrics.jsonl -o curves.png
"""
import argparse
import json
import os
import sys


class MetricsError(ValueError):
    """A metrics file that cannot be read (names the file and line)."""


def read_records(path):
    """The JSON objects of one metrics file, in order; MetricsError naming path:line for a bad line."""
    records = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    raise MetricsError(f"{path}:{n}: not a JSON line ({e.msg})") from None
                if not isinstance(rec, dict):
                    raise MetricsError(f"{path}:{n}: expected a JSON object, got {type(rec).__name__}")
                records.append(rec)
    except OSError as e:
        raise MetricsError(f"{path}: {e.strerror}") from None
    return records


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def curves(records):
    """{panel: {series: ([x], [y])}} of one run. Panels: "loss" and "lr" per step, "accuracy"
    and "throughput" per epoch. Steps that restart at each epoch (MetricsLogger's batch
    index) are made cumulative; a "resume" record keeps the global count going."""
    out = {"loss": {}, "lr": {}, "accuracy": {}, "throughput": {}}

    def add(panel, series, x, y):
        xs, ys = out[panel].setdefault(series, ([], []))
        xs.append(x)
        ys.append(y)

    offset, last_raw, last_x = 0, None, None
    for rec in records:
        kind = rec.get("type")
        if kind == "step" and _number(rec.get("step")):
            raw = rec["step"]
            if last_raw is not None and raw <= last_raw and last_x is not None:
                offset = last_x + 1 - raw  # the count restarted (a new epoch of batch indices)
            last_raw, x = raw, raw + offset
            last_x = x
            loss = rec.get("global_loss", rec.get("loss"))
            if _number(loss):
                add("loss", "train loss", x, loss)
            if _number(rec.get("lr")):
                add("lr", "lr", x, rec["lr"])
        elif kind in ("epoch", "eval") and _number(rec.get("epoch")):
            prefix = "eval " if kind == "eval" else ""
            for key, value in rec.items():
                if not _number(value):
                    continue
                if "acc" in key:
                    add("accuracy", prefix + key, rec["epoch"], value)
                elif key.endswith("_per_s"):
                    add("throughput", key, rec["epoch"], value)
    return out


_PANELS = [("loss", "step", "loss"), ("accuracy", "epoch", "accuracy"), ("throughput", "epoch", "per second"),
           ("lr", "step", "learning rate")]


def run_labels(paths):
    """Short distinct labels: the file names, or their parent folders when the names repeat."""
    names = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    if len(set(names)) == len(names):
        return names
    parents = [os.path.basename(os.path.dirname(os.path.abspath(p))) or p for p in paths]
    if len(set(parents)) == len(parents):
        return parents
    return list(paths)


def plot(paths, output, labels=None, title=None):
    """Draws the runs in `paths` into `output` (PNG, SVG or PDF by its suffix); returns the
    names of the panels drawn. MetricsError when no file holds a step or epoch record."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    labels = list(labels) if labels else run_labels(paths)
    if len(labels) != len(paths):
        raise MetricsError(f"{len(labels)} labels for {len(paths)} files")
    runs = [(label, curves(read_records(p))) for label, p in zip(labels, paths)]
    panels = [p for p in _PANELS if any(run[p[0]] for _, run in runs)]
    if not panels:
        raise MetricsError("no step or epoch records with numbers in " + ", ".join(paths))
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 3.2 * len(panels)), squeeze=False)
    for ax, (panel, xlabel, ylabel) in zip(axes[:, 0], panels):
        for label, run in runs:
            for series, (xs, ys) in sorted(run[panel].items()):
                name = label if len(run[panel]) == 1 else f"{label}: {series}"
                ax.plot(xs, ys, marker="o" if xlabel == "epoch" else None, markersize=3, label=name)
        ax.set_xlabel(xlabel)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out_dir = os.path.dirname(os.path.abspath(output))
    os.makedirs(out_dir, exist_ok=True)
    fig.savefig(output, dpi=100)
    plt.close(fig)
    return [p[0] for p in panels]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="crew plot", description="Draw loss, accuracy and throughput curves from crew metrics files "
        "(train_cnn --metrics, crew.callbacks.MetricsLogger), several runs overlaid.")
    parser.add_argument("files", nargs="+", metavar="metrics.jsonl", help="metrics files, one run each")
    parser.add_argument("-o", "--output", default="curves.png", help="image to write (.png, .svg, .pdf; "
                        "default curves.png)")
    parser.add_argument("--labels", help="comma-separated run names for the legend (default: the file names)")
    parser.add_argument("--title", help="figure title")
    args = parser.parse_args(argv)
    labels = args.labels.split(",") if args.labels else None
    try:
        panels = plot(args.files, args.output, labels=labels, title=args.title)
    except MetricsError as e:
        print(f"crew plot: {e}", file=sys.stderr)
        return 1
    print(f"crew plot: wrote {args.output} ({', '.join(panels)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
