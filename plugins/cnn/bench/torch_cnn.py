#!/usr/bin/python3
"""PyTorch peer of tesbo's Go CNN (plugins/cnn/nn), for the throughput comparison.

Same architecture as plugins/cnn/nn.NewModel: two blocks of
[3x3 conv (padding 1) -> ReLU -> 2x2 max-pool], then a dense layer with ReLU
and inverted dropout, then a 10-way linear layer and softmax cross-entropy.
He-normal initialisation, SGD with momentum 0.9, L2 penalty (lambda/2)*||W||^2
on the weight matrices (not the biases), learning rate lr/(1 + decay*step).

Modes:
  throughput  train on random tensors of the dataset's shape and print images/s
  train       train on the real Fashion-MNIST files and print test accuracy

See README.md beside this file for the exact commands.
"""
import argparse
import gzip
import json
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class CNN(nn.Module):
    def __init__(self, channels, size, filters, dense, dropout, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, filters, 3, padding=1)
        self.conv2 = nn.Conv2d(filters, filters, 3, padding=1)
        flat = filters * (size // 4) * (size // 4)
        self.fc1 = nn.Linear(flat, dense)
        self.fc2 = nn.Linear(dense, classes)
        self.dropout = dropout
        for m in (self.conv1, self.conv2, self.fc1, self.fc2):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, self.dropout, self.training)
        return self.fc2(x)


def make_optimizer(model, lr, l2, decay):
    weights = [m.weight for m in (model.conv1, model.conv2, model.fc1, model.fc2)]
    biases = [m.bias for m in (model.conv1, model.conv2, model.fc1, model.fc2)]
    opt = torch.optim.SGD(
        [{"params": weights, "weight_decay": l2}, {"params": biases, "weight_decay": 0.0}],
        lr=lr,
        momentum=0.9,
    )
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0 / (1.0 + decay * step))
    return opt, sched


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4 : 4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_fashion(data_dir, n_train, n_test):
    xtr = read_idx(os.path.join(data_dir, "train-images-idx3-ubyte.gz"))[:n_train]
    ytr = read_idx(os.path.join(data_dir, "train-labels-idx1-ubyte.gz"))[:n_train]
    xte = read_idx(os.path.join(data_dir, "t10k-images-idx3-ubyte.gz"))[:n_test]
    yte = read_idx(os.path.join(data_dir, "t10k-labels-idx1-ubyte.gz"))[:n_test]
    # Standardize with the training subset's pixel mean and deviation, as
    # the Go objective does.
    mean, std = (xtr / 255.0).mean(), (xtr / 255.0).std()
    conv = lambda x: torch.from_numpy(((x / 255.0 - mean) / std).astype(np.float32)).unsqueeze(1)
    return conv(xtr), torch.from_numpy(ytr.astype(np.int64)), conv(xte), torch.from_numpy(yte.astype(np.int64))


def throughput(args):
    channels, size = (1, 28) if args.shape == "fashion" else (3, 32)
    model = CNN(channels, size, args.filters, args.dense, args.dropout)
    opt, sched = make_optimizer(model, args.lr, args.l2, args.decay)
    g = torch.Generator().manual_seed(args.seed)
    x = torch.rand(args.batch, channels, size, size, generator=g)
    y = torch.randint(0, 10, (args.batch,), generator=g)
    model.train()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()

    for _ in range(args.warmup):
        step()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(args.steps):
        step()
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    ips = args.steps * args.batch / dt
    print(json.dumps({"mode": "throughput", "shape": args.shape, "threads": torch.get_num_threads(),
                      "filters": args.filters, "dense": args.dense, "batch": args.batch,
                      "steps": args.steps, "seconds": round(dt, 3), "images_per_s": round(ips, 1),
                      "images_per_cpu_s": round(args.steps * args.batch / cpu, 1)}))


def train(args):
    xtr, ytr, xte, yte = load_fashion(args.data_dir, args.train, args.test)
    model = CNN(1, 28, args.filters, args.dense, args.dropout)
    opt, sched = make_optimizer(model, args.lr, args.l2, args.decay)
    g = torch.Generator().manual_seed(args.seed)
    t0 = time.perf_counter()
    for _ in range(args.epochs):
        model.train()
        perm = torch.randperm(len(xtr), generator=g)
        for i in range(0, len(xtr), args.batch):
            idx = perm[i : i + args.batch]
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(xtr[idx]), ytr[idx]).backward()
            opt.step()
            sched.step()
    train_s = time.perf_counter() - t0
    model.eval()
    with torch.no_grad():
        pred = torch.cat([model(xte[i : i + 1000]).argmax(1) for i in range(0, len(xte), 1000)])
    acc = (pred == yte).float().mean().item()
    print(json.dumps({"mode": "train", "train": len(xtr), "test": len(xte), "epochs": args.epochs,
                      "accuracy": round(acc, 4), "train_s": round(train_s, 2)}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["throughput", "train"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--shape", choices=["fashion", "cifar"], default="fashion")
    p.add_argument("--filters", type=int, default=64)
    p.add_argument("--dense", type=int, default=512)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--dropout", type=float, default=0.25)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--l2", type=float, default=1e-5)
    p.add_argument("--decay", type=float, default=1e-4)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--train", type=int, default=3000)
    p.add_argument("--test", type=int, default=2000)
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.mode == "throughput":
        throughput(args)
    else:
        train(args)


if __name__ == "__main__":
    sys.exit(main())
