# The seed's DistributedBatchSampler program (section 4), with its import lines changed to
# crew. The data set line takes CIFAR-10 where an archive is found (Paddle's cache
# ~/.cache/paddle/dataset/cifar/, $CREW_DATA_DIR/cifar10, or --data-file) and Fashion-MNIST
# (Debian's dataset-fashion-mnist) otherwise; MyNet's first convolution and first linear
# layer follow the images' channels and size (3x32x32: 1024 features, as the seed; 1x28x28:
# 576).
#
#   python3 -m crew.distributed.launch --devices=0,1 examples/python/train_cnn.py
#   python3 examples/python/train_cnn.py --epochs 1 --max-steps 100     # one process
#
# Options beyond the seed's program (for tests and benchmarks): --epochs, --max-steps,
# --num-workers, --init (safetensors weights, train_cnn's keys), --losses FILE (one loss per
# line, rank 0), --data-file. After each epoch rank 0 prints "epoch E: N images/s" (all
# ranks' images over the epoch's wall time, as bin/train_cnn counts them), at the end the
# test split's accuracy.
import argparse
import os
import time

import crew as paddle
import crew.nn as nn  # noqa: F401
import crew.nn.functional as F
import crew.optimizer as opt  # noqa: F401
import crew.distributed as dist
from tqdm import tqdm
import numpy as np  # noqa: F401
from crew.io import Dataset, DistributedBatchSampler  # noqa: F401
from crew.vision.transforms import ToTensor
from crew.io import DataLoader


class MyNet(paddle.nn.Layer):
    def __init__(self, num_classes=1, in_channels=3, image_size=32):
        super(MyNet, self).__init__()
        self.conv1 = paddle.nn.Conv2D(in_channels=in_channels, out_channels=32, kernel_size=(3, 3))
        self.pool1 = paddle.nn.MaxPool2D(kernel_size=2, stride=2)
        self.conv2 = paddle.nn.Conv2D(in_channels=32, out_channels=64, kernel_size=(3, 3))
        self.pool2 = paddle.nn.MaxPool2D(kernel_size=2, stride=2)
        self.conv3 = paddle.nn.Conv2D(in_channels=64, out_channels=64, kernel_size=(3, 3))
        self.flatten = paddle.nn.Flatten()
        s = ((image_size - 2) // 2 - 2) // 2 - 2
        self.linear1 = paddle.nn.Linear(in_features=64 * s * s, out_features=64)
        self.linear2 = paddle.nn.Linear(in_features=64, out_features=num_classes)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.pool1(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = self.pool2(x)
        x = self.conv3(x)
        x = F.relu(x)
        x = self.flatten(x)
        x = self.linear1(x)
        x = F.relu(x)
        x = self.linear2(x)
        return x


def train(model, opt, train_loader, args):
    epoch_num = args.epochs
    losses = open(args.losses, "w") if args.losses and dist.get_rank() == 0 else None
    step = 0
    for epoch in tqdm(range(epoch_num)):
        model.train()
        start, images = time.perf_counter(), 0
        for batch_id, data in enumerate(train_loader()):
            x_data = data[0]
            y_data = paddle.to_tensor(data[1])
            y_data = paddle.unsqueeze(y_data, 1)
            logits = model(x_data)
            loss = F.cross_entropy(logits, y_data)
            if batch_id % 1000 == 0:
                print("epoch: {}, batch_id: {}, loss is: {}".format(epoch, batch_id, loss.numpy()))
            loss.backward()
            opt.step()
            opt.clear_grad()
            images += x_data.shape[0] * dist.get_world_size()
            if losses:
                losses.write(f"{loss.item():.9g}\n")
            step += 1
            if args.max_steps and step >= args.max_steps:
                break
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: {images / (time.perf_counter() - start):.0f} images/s", flush=True)
        if args.max_steps and step >= args.max_steps:
            break
    if losses:
        losses.close()


def evaluate(model, test_set):
    """Accuracy over the test split (the seed's commented-out valid_loader), on rank 0."""
    model.eval()
    correct = 0
    with paddle.no_grad():
        for x, y in DataLoader(test_set, batch_size=256, num_workers=2):
            pred = paddle.argmax(model(x), axis=1)
            correct += int((pred.numpy() == y.numpy()).sum())
    return correct / len(test_set)


def dataset(args, transform, mode='train'):
    try:
        return paddle.vision.datasets.Cifar10(data_file=args.data_file, mode=mode, download=True,
                                              transform=transform), 3, 32
    except OSError:
        if args.data_file:
            raise
        return paddle.vision.datasets.FashionMNIST(mode=mode, transform=transform), 1, 28


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--max-steps", type=int, default=0)
    parser.add_argument("--num-workers", type=int, default=4)
    parser.add_argument("--init", default="")
    parser.add_argument("--losses", default="")
    parser.add_argument("--data-file", default=os.environ.get("CREW_CIFAR10"))
    args = parser.parse_args()
    # 1. initialize parallel environment
    dist.init_parallel_env()
    # init with dataset
    transform = ToTensor()
    cifar10_train, channels, size = dataset(args, transform)
    # 构建分布式训练使用的数据集
    train_sampler = DistributedBatchSampler(cifar10_train, 32, shuffle=True, drop_last=True)
    train_loader = DataLoader(cifar10_train, batch_sampler=train_sampler, num_workers=args.num_workers,
                              use_shared_memory=True)
    model = MyNet(num_classes=10, in_channels=channels, image_size=size)
    if args.init:
        model.set_state_dict(paddle.load(args.init))
    # 三、构建分布式训练使用的网络模型
    model = paddle.DataParallel(model)
    learning_rate = 0.001
    opt = paddle.optimizer.Adam(learning_rate=learning_rate, parameters=model.parameters())
    train(model, opt, train_loader, args)
    if dist.get_rank() == 0:
        print("test accuracy: {:.4f}".format(evaluate(model, dataset(args, transform, 'test')[0])))
