#!/usr/bin/env python3
"""ResNet-18 and a small GPT in plain PyTorch, trained as crew's examples/train_resnet.cpp and
examples/train_gpt.cpp train them: the peer for equivalence (step losses from the same initial
weights and data) and for speed and memory. PyTorch is only the peer; crew never needs it.

    /usr/bin/python3 bench/torch_models.py --model resnet18 --synthetic 2048 --steps 30 \
        --warmup 5 --world 2 --metrics m.jsonl
    /usr/bin/python3 bench/torch_models.py --model gpt --text FILE --steps 20 --metrics m.jsonl
    /usr/bin/python3 bench/torch_models.py --model gpt --n-layer 2 --write-init init.safetensors
    python3 bench/torch_models.py --model resnet18 --synthetic 1024 --steps 30 --device cuda   # GPU peer

Weights travel in crew's layout (state_dict keys of crew/nn/models, Linear weights [in, out],
BatchNorm statistics as `_mean` / `_variance`) through safetensors files read and written here
with numpy alone. Training is always sequential: on W ranks step s of rank r takes samples
[s*B*W + r*B, s*B*W + r*B + B) (Paddle's DistributedBatchSampler without shuffle), wrapping
around after an epoch. ResNet: Adam 1e-3, CIFAR-10 binary or random images, ToTensor only.
GPT: AdamW 6e-4, betas (0.9, 0.95), weight decay 0.1 on tensors of 2+ dims, gradient clipping
by global norm 1.0 as Paddle does it (no epsilon). A fresh ResNet has PyTorch's default init;
a fresh GPT has GPT-2's (normal 0.02 weights, zero biases), both seeded by --seed.

--metrics writes JSON lines from rank 0: {"type": "step", "step", "loss"} per step (the loss
averaged over ranks, so W ranks x B/W compare to 1 rank x B), then {"type": "done",
"images_per_s" | "tokens_per_s", "peak_rss_mb"}: the global rate over the steps after the
warm-up, the slowest rank's time; the largest ru_maxrss over ranks.
"""
import argparse
import json
import math
import os
import resource
import socket
import struct
import sys
import tarfile
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn

# --- safetensors, numpy only --------------------------------------------------------------

_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I64": np.int64,
           "I32": np.int32, "U8": np.uint8}


def read_safetensors(path):
    """Returns {name: np.ndarray} of a safetensors file; "__metadata__" is skipped."""
    with open(path, "rb") as f:
        blob = f.read()
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_len])
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype = np.dtype(_DTYPES[info["dtype"]]).newbyteorder("<")
        array = np.frombuffer(blob, dtype=dtype, count=(end - begin) // dtype.itemsize,
                              offset=base + begin)
        tensors[name] = array.reshape(info["shape"]).astype(dtype.newbyteorder("="))
    return tensors


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: float32 array} in name order, the header padded to 8 bytes with spaces."""
    header, chunks, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


# --- models, named as crew's state_dict ------------------------------------------------------

class BasicBlock(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)  # eps 1e-5, momentum 0.1 = Paddle's 0.9
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.downsample = None
        if stride != 1 or c_in != c_out:
            self.downsample = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False),
                                            nn.BatchNorm2d(c_out))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class ResNet18(nn.Module):
    """paddle.vision.models.resnet18: [N, 3, H, W] float32 -> [N, classes] logits."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        widths, c_in = (64, 128, 256, 512), 64
        for i, width in enumerate(widths):
            stride = 1 if i == 0 else 2
            setattr(self, f"layer{i + 1}", nn.Sequential(BasicBlock(c_in, width, stride),
                                                         BasicBlock(width, width, 1)))
            c_in = width
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class Attention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):  # [B, T, C] -> [B, T, C]
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
                   for z in self.c_attn(x).split(c, dim=2))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // self.n_head))
        future = torch.ones(t, t, dtype=torch.bool).triu(1)  # not a buffer: gloo has no bool
        att = att.masked_fill(future, float("-inf")).softmax(dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).reshape(b, t, c))


class Mlp(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))  # exact (erf) GELU


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = Attention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = Mlp(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt(nn.Module):
    """GPT-2 over bytes: [B, T] int64 -> [B, T, 256] logits; the head is wte, tied."""

    def __init__(self, n_layer=4, n_head=4, n_embd=256, block_size=128, vocab=256):
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList(Block(n_embd, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, 0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for block in self.h:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.t()


def build_model(args):
    if args.model == "resnet18":
        return ResNet18(args.num_classes)
    return Gpt(args.n_layer, args.n_head, args.n_embd, args.block_size)


# --- crew's layout -----------------------------------------------------------------------------

_BN_NAMES = {"running_mean": "_mean", "running_var": "_variance"}


def _linear_weights(model):
    return {f"{name}.weight" for name, m in model.named_modules() if isinstance(m, nn.Linear)}


def _crew_name(name):
    head, _, leaf = name.rpartition(".")
    return f"{head}.{_BN_NAMES[leaf]}" if leaf in _BN_NAMES else name


def to_crew(model):
    """{crew key: float32 array}: Linear weights transposed to [in, out], BN stats renamed."""
    linear = _linear_weights(model)
    out = {}
    for name, t in model.state_dict().items():
        if name.endswith("num_batches_tracked"):
            continue
        t = t.t() if name in linear else t
        out[_crew_name(name)] = t.detach().contiguous().numpy().astype(np.float32)
    return out


def from_crew(model, tensors):
    """Loads a to_crew() dict; every key must be present with its shape, and no other."""
    linear = _linear_weights(model)
    state = model.state_dict()
    wanted = {_crew_name(n): n for n in state if not n.endswith("num_batches_tracked")}
    if set(wanted) != set(tensors):
        raise ValueError(f"init: missing {sorted(set(wanted) - set(tensors))[:5]}, "
                         f"unexpected {sorted(set(tensors) - set(wanted))[:5]}")
    for key, name in wanted.items():
        target = state[name].t() if name in linear else state[name]
        if tuple(tensors[key].shape) != tuple(target.shape):
            raise ValueError(f"init: {key} has shape {list(tensors[key].shape)}, "
                             f"expected {list(target.shape)}")
        target.copy_(torch.from_numpy(np.array(tensors[key], dtype=np.float32)))


# --- data ------------------------------------------------------------------------------------

def _cifar_members(data_dir):
    """Yields the bytes of data_batch_1..5 from a .tar.gz or a directory."""
    names = [f"data_batch_{i}.bin" for i in range(1, 6)]
    if os.path.isfile(data_dir):
        with tarfile.open(data_dir) as tar:
            members = {os.path.basename(m.name): m for m in tar.getmembers() if m.isfile()}
            for n in names:
                yield tar.extractfile(members[n]).read()
        return
    folder = os.path.join(data_dir, "cifar-10-batches-bin")
    folder = folder if os.path.isdir(folder) else data_dir
    for n in names:
        with open(os.path.join(folder, n), "rb") as f:
            yield f.read()


def load_cifar(data_dir):
    """CIFAR-10 train split: images uint8 [N, 3, 32, 32], labels int64 [N]."""
    records = np.frombuffer(b"".join(_cifar_members(data_dir)), np.uint8).reshape(-1, 3073)
    return (torch.from_numpy(records[:, 1:].reshape(-1, 3, 32, 32).copy()),
            torch.from_numpy(records[:, 0].astype(np.int64)))


def synthetic_images(n, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 256, (n, 3, 32, 32), generator=g, dtype=torch.uint8),
            torch.randint(0, 10, (n,), generator=g))


class ImageBatches:
    """Batch k of the epoch's sequential order: ToTensor (uint8 / 255) and labels."""

    def __init__(self, images, labels, batch_size):
        self.images, self.labels, self.batch_size = images, labels, batch_size
        self.num_samples = len(labels)

    def get(self, first):
        sl = slice(first, first + self.batch_size)
        return self.images[sl].float().div_(255.0), self.labels[sl]

    def samples_per_step(self):
        return self.batch_size


class TextBatches:
    """Sample k is x = bytes[kT, kT+T), y = bytes[kT+1, kT+T+1); (len - 1) // T samples."""

    def __init__(self, data, batch_size, block_size):
        self.data = torch.from_numpy(data.astype(np.int64))
        self.batch_size, self.block_size = batch_size, block_size
        self.num_samples = (len(data) - 1) // block_size

    def get(self, first):
        starts = torch.arange(first, first + self.batch_size) * self.block_size
        idx = starts[:, None] + torch.arange(self.block_size)
        return self.data[idx], self.data[idx + 1]

    def samples_per_step(self):
        return self.batch_size * self.block_size


def make_batches(args):
    if args.model == "gpt":
        with open(args.text, "rb") as f:
            data = np.frombuffer(f.read(), np.uint8)
        return TextBatches(data, args.batch_size, args.block_size)
    images, labels = (synthetic_images(args.synthetic, args.seed) if args.synthetic
                      else load_cifar(args.data_dir))
    return ImageBatches(images, labels, args.batch_size)


def first_sample(step, rank, world, batches):
    """Paddle's DistributedBatchSampler, no shuffle, the last partial batch dropped."""
    per_step = batches.batch_size * world
    steps_per_epoch = batches.num_samples // per_step
    if steps_per_epoch == 0:
        raise ValueError(f"{batches.num_samples} samples < one step of {per_step}")
    return (step % steps_per_epoch) * per_step + rank * batches.batch_size


# --- training --------------------------------------------------------------------------------

def make_optimizer(model, args):
    if args.model == "resnet18":
        return torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    params = list(model.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=6e-4, betas=(0.9, 0.95), eps=1e-8)


def clip_by_global_norm(params, max_norm=1.0):
    """Paddle's ClipGradByGlobalNorm: grads *= max_norm / max(norm, max_norm)."""
    grads = [p.grad for p in params if p.grad is not None]
    norm = torch.stack([g.square().sum() for g in grads]).sum().sqrt()
    if norm > max_norm:
        scale = max_norm / norm
        for g in grads:
            g.mul_(scale)


def train_step(model, opt, x, y, clip, autocast=None):
    with torch.autocast(x.device.type, dtype=getattr(torch, autocast or "bfloat16"), enabled=autocast is not None):
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if clip:
        clip_by_global_norm(model.parameters())
    opt.step()
    return loss.detach()


def prepare_model(args, world):
    torch.manual_seed(args.seed)
    model = build_model(args)
    if args.init:
        with torch.no_grad():
            from_crew(model, read_safetensors(args.init))
    model.train()
    model.to(args.device)
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    return model


def sync(args):
    if args.device == "cuda":
        torch.cuda.synchronize()


def train(rank, world, args):
    """Runs args.steps steps; returns (per-step losses averaged over ranks, rate, peak RSS MB)."""
    torch.set_num_threads(args.threads)
    batches = make_batches(args)
    model = prepare_model(args, world)
    opt = make_optimizer(model, args)
    losses, start = [], time.perf_counter()
    for step in range(args.steps):
        if step == args.warmup:
            sync(args)
            start = time.perf_counter()
        x, y = batches.get(first_sample(step, rank, world, batches))
        x, y = x.to(args.device, non_blocking=True), y.to(args.device, non_blocking=True)
        losses.append(train_step(model, opt, x, y, clip=args.model == "gpt", autocast=args.autocast))
    sync(args)
    elapsed = time.perf_counter() - start
    timed = args.steps - args.warmup if args.steps > args.warmup else args.steps
    stats = torch.tensor([elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0],
                         dtype=torch.float64)
    losses = torch.stack(losses).cpu() if losses else torch.zeros(0)
    if world > 1:
        dist.all_reduce(stats, op=dist.ReduceOp.MAX)
        dist.all_reduce(losses)
        losses /= world
    rate = timed * batches.samples_per_step() * world / stats[0].item()
    return losses.tolist(), rate, stats[1].item()


def report(args, losses, rate, rss_mb):
    unit = "tokens_per_s" if args.model == "gpt" else "images_per_s"
    if args.metrics:
        with open(args.metrics, "w") as f:
            for step, loss in enumerate(losses):
                f.write(json.dumps({"type": "step", "step": step, "loss": loss}) + "\n")
            f.write(json.dumps({"type": "done", unit: rate, "peak_rss_mb": rss_mb}) + "\n")
    last = f"{losses[-1]:.6f}" if losses else "-"
    gpu = ""
    if args.device == "cuda":
        gpu = (f" device {torch.cuda.get_device_name()} tf32 {int(args.tf32)} "
               f"peak_gpu_mb {torch.cuda.max_memory_allocated() / 2**20:.0f}")
    print(f"torch {torch.__version__} {args.model} world={args.world} threads={args.threads} "
          f"batch={args.batch_size} steps={args.steps} loss {last} {unit} {rate:.1f} "
          f"peak_rss_mb {rss_mb:.0f}{gpu}", flush=True)


def _worker(rank, world, port, args):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    result = train(rank, world, args)
    if rank == 0:
        report(args, *result)
    dist.destroy_process_group()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_init(args):
    torch.manual_seed(args.seed)
    model = build_model(args)
    meta = {"producer": "bench/torch_models.py", "model": args.model, "seed": args.seed}
    write_safetensors(args.write_init, to_crew(model), meta)
    count = sum(p.numel() for p in model.parameters())
    print(f"wrote {args.write_init}: {args.model}, {count} parameters", flush=True)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=["resnet18", "gpt"], default="resnet18")
    p.add_argument("--data-dir", help="cifar-10-binary.tar.gz or a folder of cifar-10-batches-bin")
    p.add_argument("--synthetic", type=int, default=0, help="N random images instead of CIFAR-10")
    p.add_argument("--text", help="GPT: train on the bytes of this file")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5, help="steps before the rate is timed")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads per rank")
    p.add_argument("--world", type=int, default=1, help="ranks (processes, DDP over gloo)")
    p.add_argument("--batch-size", type=int, help="per rank; default 32 (ResNet), 16 (GPT)")
    p.add_argument("--num-classes", type=int, default=10)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=256)
    p.add_argument("--block-size", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--autocast", choices=["bfloat16", "float16"],
                   help='forward and loss under torch.autocast(device, dtype=...)')
    p.add_argument("--init", help="initial weights, safetensors in crew's layout")
    p.add_argument("--write-init", help="write a fresh init in crew's layout and exit")
    p.add_argument("--no-shuffle", action="store_true", help="accepted; always sequential")
    p.add_argument("--metrics", help="JSON lines from rank 0")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="cuda: one rank on GPU 0")
    p.add_argument("--tf32", action="store_true", help="cuda: allow TF32 (off by default, as crew)")
    args = p.parse_args(argv)
    if args.device == "cuda":
        if args.world != 1:
            p.error("--device cuda runs one rank")
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
        torch.backends.cudnn.allow_tf32 = args.tf32
    if args.batch_size is None:
        args.batch_size = 16 if args.model == "gpt" else 32
    if not args.write_init and args.model == "gpt" and not args.text:
        p.error("--model gpt needs --text")
    if not args.write_init and args.model == "resnet18" and not (args.synthetic or args.data_dir):
        p.error("--model resnet18 needs --data-dir or --synthetic N")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.write_init:
        write_init(args)
    elif args.world == 1:
        report(args, *train(0, 1, args))
    else:
        mp.spawn(_worker, args=(args.world, _free_port(), args), nprocs=args.world)


if __name__ == "__main__":
    sys.exit(main())
