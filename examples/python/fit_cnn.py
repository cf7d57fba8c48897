# The seed's MyNet trained with paddle.Model.fit (Paddle 2.x's high-level API) instead of a
# hand-written loop: under the launcher fit shards the data with a DistributedBatchSampler,
# wraps the network in DataParallel and logs on rank 0 by itself. Same work as bin/train_cnn:
# batch 32 per rank, Adam lr 0.001, Fashion-MNIST (or CIFAR-10 where an archive is found).
#
#   python3 -m crew.distributed.launch --devices=0,1 examples/python/fit_cnn.py --epochs 2
#
# After each epoch rank 0 prints "epoch E: N images/s" (all ranks' images over the epoch's
# wall time, as bin/train_cnn counts them); at the end "test accuracy: A" from Model.evaluate.
import argparse
import os
import time

import crew as paddle
import crew.distributed as dist
from crew.vision.transforms import ToTensor

from train_cnn import MyNet, dataset


class Throughput(paddle.callbacks.Callback):
    """Prints every epoch's images/s over all ranks on rank 0."""

    def __init__(self, batch_size):
        super().__init__()
        self.batch_size = batch_size

    def on_epoch_begin(self, epoch=None, logs=None):
        self.start, self.steps = time.perf_counter(), 0

    def on_train_batch_end(self, step, logs=None):
        self.steps += 1

    def on_epoch_end(self, epoch=None, logs=None):
        images = self.steps * self.batch_size * dist.get_world_size()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: {images / (time.perf_counter() - self.start):.0f} images/s", flush=True)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--num-iters", type=int, default=None, help="stop after this many steps")
    parser.add_argument("--data-file", default=os.environ.get("CREW_CIFAR10"))
    args = parser.parse_args()
    dist.init_parallel_env()
    train_set, channels, size = dataset(args, ToTensor())
    test_set = dataset(args, ToTensor(), 'test')[0]
    net = MyNet(num_classes=10, in_channels=channels, image_size=size)
    model = paddle.Model(net)
    model.prepare(paddle.optimizer.Adam(learning_rate=0.001, parameters=model.parameters()),
                  paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    model.fit(train_set, epochs=args.epochs, batch_size=args.batch_size, drop_last=True,
              num_workers=args.num_workers, verbose=0, callbacks=[Throughput(args.batch_size)],
              num_iters=args.num_iters)
    result = model.evaluate(test_set, batch_size=256, verbose=0)
    if dist.get_rank() == 0:
        print("test accuracy: {:.4f}".format(result["acc"]))
