"""JAX's and PyTorch's own profilers: programs that profile themselves (jax_mlp, torch_cnn),
each in a venv of its own (build/jax-venv, build/torch-venv; recorded only when asked for by name)."""
from __future__ import annotations

import glob
import os
import shutil

from .common import child_env, run_logged


TORCH_PROGRAM = '''\
import sys
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(0)
torch.set_num_threads(2)
model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(32 * 8 * 8, 64), nn.ReLU(), nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
x, y = torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,))


def train_step(i):
    with record_function("train_step"):
        opt.zero_grad()
        loss = loss_fn(model(x + 0.01 * i), y)
        loss.backward()
        opt.step()
        return float(loss.detach())


def infer(i):
    with torch.no_grad(), record_function("inference"):
        return int(model(torch.randn(16, 3, 32, 32)).argmax(1).sum())


with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True, with_stack=True) as prof:
    for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 8):
        train_step(i)
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(infer, range(12)))
prof.export_chrome_trace(sys.argv[1])
'''


JAX_PROGRAM = '''\
import sys
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp


def mlp(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    return x.sum()


def init(key, sizes):
    params = []
    for m, n in zip(sizes[:-1], sizes[1:]):
        key, k = jax.random.split(key)
        params.append((jax.random.normal(k, (m, n)) / m ** 0.5, jnp.zeros(n)))
    return params


grad = jax.jit(jax.grad(mlp))
key = jax.random.PRNGKey(0)
params = init(key, [256, 512, 512, 256, 10])
x = jax.random.normal(key, (128, 256))


def step(i):
    with jax.profiler.TraceAnnotation("train_step"):
        return jax.tree_util.tree_map(lambda a: a.block_until_ready(), grad(params, x + i))


with jax.profiler.trace(sys.argv[1], create_perfetto_trace=True):
    for i in range(5):
        step(i)
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(step, range(int(sys.argv[2]) if len(sys.argv) > 2 else 12)))
    jnp.linalg.svd(jax.random.normal(key, (300, 300)))[1].block_until_ready()
'''


def run_jax_spec(spec, python: str, argv: list, work: str, out_dir: str, timeout: float) -> dict:
    """Run a JAX program that profiles itself into a log folder; its Chrome JSON (gzipped) is
    ``perfetto_trace.json.gz`` there, kept as ``<name>.json.gz``."""
    logs = os.path.join(work, "profile")
    shutil.rmtree(logs, ignore_errors=True)
    cmd = [python] + argv + [logs]
    rc, log, secs = run_logged(cmd, work, timeout, child_env())
    made = sorted(glob.glob(os.path.join(logs, "plugins", "profile", "*", "perfetto_trace.json.gz")))
    if rc != 0 or not made:
        raise RuntimeError(f"{spec.name}: {' '.join(cmd)} exited {rc}, no perfetto_trace.json.gz:\n{log[-3000:]}")
    return {"cmd": cmd, "log": log, "secs": secs, "tmp": made[-1], "out": os.path.join(out_dir, spec.name + ".json.gz")}


def run_torch_spec(spec, python: str, argv: list, work: str, tmp: str, timeout: float) -> dict:
    """Run a PyTorch program that profiles itself and writes its Chrome JSON to ``tmp``."""
    cmd = [python] + argv + [tmp]
    rc, log, secs = run_logged(cmd, work, timeout, child_env())
    if rc != 0 or not os.path.exists(tmp):
        raise RuntimeError(f"{spec.name}: {' '.join(cmd)} exited {rc}, no trace:\n{log[-3000:]}")
    return {"cmd": cmd, "log": log, "secs": secs}
