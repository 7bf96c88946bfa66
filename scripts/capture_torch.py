#!/usr/bin/env python3
"""capture_torch.py: run one PyTorch training step of fpsim's model and write it to HDF5.

The model is fpsim's Llama-style decoder (sim/fpsim_model.h) written again in PyTorch, float32:
token embedding, per block RMSNorm -> QKV -> RoPE ("rotate half", Hugging Face Llama) -> causal
softmax attention with grouped-query heads -> output projection -> residual, RMSNorm -> SwiGLU
(gate | up rows of one matrix) -> down -> residual; final RMSNorm, untied LM head, cross-entropy
averaged over the tokens whose mask is 1. Every weight is stored with fpsim's name and shape
(layer-stacked), so fpsim can load it without any reshaping. Schema: docs/model.md, "Capture".

Usage: capture_torch.py --out capture.h5 [--model SPEC] [--seed S]
SPEC is fpsim's "key=value,..." model spec (keys layers d heads kv_heads ffn vocab seq batch
rope_theta eps init_std seed); the defaults are a tiny model. --seed seeds the weights and batch.
"""
import argparse
import math
import os
import sys

DEFAULTS = dict(layers=2, d=32, heads=4, kv_heads=2, ffn=64, vocab=64, seq=16, batch=2,
                rope_theta=10000.0, eps=1e-5, init_std=0.02, seed=1234)
INT_KEYS = ("layers", "d", "heads", "kv_heads", "ffn", "vocab", "seq", "batch", "seed")
PARAM_NAMES = ("wte", "ln1w", "qkvw", "attprojw", "ln2w", "gateupw", "downw", "lnfw", "lmheadw")
SCHEMA_VERSION = 1


def fail(msg):
    print("capture_torch: " + msg, file=sys.stderr)
    sys.exit(2)


def parse_spec(spec):
    cfg = dict(DEFAULTS)
    for item in filter(None, (spec or "").split(",")):
        key, sep, val = item.partition("=")
        if not sep or key not in cfg:
            fail("unknown model key '%s' (valid: %s)" % (key, " ".join(DEFAULTS)))
        try:
            cfg[key] = int(val) if key in INT_KEYS else float(val)
        except ValueError:
            fail("bad value for '%s': '%s'" % (key, val))
    if cfg["d"] % cfg["heads"] or cfg["heads"] % cfg["kv_heads"] or (cfg["d"] // cfg["heads"]) % 2:
        fail("model: d must divide into heads of even width, heads into kv_heads")
    return cfg


def spec_text(cfg):
    return ",".join("%s=%s" % (k, repr(cfg[k]) if isinstance(cfg[k], float) else cfg[k])
                    for k in DEFAULTS)


def make_params(torch, cfg, gen):
    L, C, V, F = cfg["layers"], cfg["d"], cfg["vocab"], cfg["ffn"]
    hd = C // cfg["heads"]
    qkv = (cfg["heads"] + 2 * cfg["kv_heads"]) * hd
    std, out_std = cfg["init_std"], cfg["init_std"] / math.sqrt(2 * L)

    def normal(shape, s):
        return torch.randn(shape, generator=gen, dtype=torch.float32) * s

    # Norm weights are 1 plus a little noise, so their gradients are tested against non-trivial
    # scales (fpsim's own init uses exactly 1).
    p = dict(wte=normal((V, C), std), ln1w=1 + normal((L, C), 0.1), qkvw=normal((L, qkv, C), std),
             attprojw=normal((L, C, C), out_std), ln2w=1 + normal((L, C), 0.1),
             gateupw=normal((L, 2 * F, C), std), downw=normal((L, C, F), out_std),
             lnfw=1 + normal((C,), 0.1), lmheadw=normal((V, C), std))
    return {k: v.contiguous().requires_grad_(True) for k, v in p.items()}


def rmsnorm(torch, x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(torch, x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


def forward(torch, cfg, p, tokens, targets, mask):
    B, T, C, F = cfg["batch"], cfg["seq"], cfg["d"], cfg["ffn"]
    H, KV = cfg["heads"], cfg["kv_heads"]
    hd, eps = C // H, cfg["eps"]
    # Angles pos * theta^(-2i/hd) in float64 as fpsim computes them, then float32 as a Llama
    # implementation stores its rotary cache.
    inv = cfg["rope_theta"] ** (-2.0 * torch.arange(hd // 2, dtype=torch.float64) / hd)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos = torch.cat((ang.cos(), ang.cos()), -1).float()
    sin = torch.cat((ang.sin(), ang.sin()), -1).float()
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    acts = {}
    x = p["wte"][tokens]
    acts["embed"] = x
    block_out = []
    for l in range(cfg["layers"]):
        h = rmsnorm(torch, x, p["ln1w"][l], eps)
        qkv = h @ p["qkvw"][l].T
        q = qkv[..., :H * hd].reshape(B, T, H, hd).transpose(1, 2)
        k = qkv[..., H * hd:(H + KV) * hd].reshape(B, T, KV, hd).transpose(1, 2)
        v = qkv[..., (H + KV) * hd:].reshape(B, T, KV, hd).transpose(1, 2)
        q, k = rope(torch, q, cos, sin), rope(torch, k, cos, sin)
        k = k.repeat_interleave(H // KV, dim=1)  # query head h reads kv head h / (H / KV)
        v = v.repeat_interleave(H // KV, dim=1)
        scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(hd))
        att = scores.masked_fill(~causal, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + y @ p["attprojw"][l].T
        gu = rmsnorm(torch, x, p["ln2w"][l], eps) @ p["gateupw"][l].T
        x = x + (torch.nn.functional.silu(gu[..., :F]) * gu[..., F:]) @ p["downw"][l].T
        block_out.append(x)
    acts["block_out"] = torch.stack(block_out)
    lnf = rmsnorm(torch, x, p["lnfw"], eps)
    logits = lnf @ p["lmheadw"].T
    acts["final_norm"], acts["logits"] = lnf, logits
    nll = torch.nn.functional.cross_entropy(logits.reshape(B * T, -1), targets.reshape(-1),
                                            reduction="none")
    m = mask.reshape(-1).float()
    loss = (nll * m).sum() / m.sum()
    return loss, acts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="HDF5 file to write (temp name, then rename)")
    ap.add_argument("--model", default="", help="fpsim model spec key=value,... (tiny default)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the weights and batch")
    args = ap.parse_args()
    try:
        import h5py
        import numpy as np
        import torch
    except ImportError as e:
        fail("needs torch, numpy and h5py: %s" % e)
    cfg = parse_spec(args.model)
    torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(args.seed)
    p = make_params(torch, cfg, gen)
    B, T, V = cfg["batch"], cfg["seq"], cfg["vocab"]
    tokens = torch.randint(0, V, (B, T), generator=gen)
    targets = torch.randint(0, V, (B, T), generator=gen)
    mask = (torch.rand((B, T), generator=gen) < 0.75).to(torch.uint8)
    mask[0, 0] = 1  # at least one token in the loss
    loss, acts = forward(torch, cfg, p, tokens, targets, mask)
    loss.backward()

    tmp = "%s.tmp%d" % (args.out, os.getpid())
    try:
        with h5py.File(tmp, "w") as f:
            f.attrs["kind"] = "fpsim-capture"
            f.attrs["schema_version"] = np.int64(SCHEMA_VERSION)
            f.attrs["model"] = spec_text(cfg)
            f.attrs["seed"] = np.int64(args.seed)
            f.attrs["producer"] = "scripts/capture_torch.py, torch %s" % torch.__version__
            for name in PARAM_NAMES:
                f["params/" + name] = p[name].detach().numpy()
                f["grads/" + name] = p[name].grad.numpy()
            f["batch/tokens"] = tokens.numpy().astype(np.int32)
            f["batch/targets"] = targets.numpy().astype(np.int32)
            f["batch/mask"] = mask.numpy()
            for name, t in acts.items():
                f["acts/" + name] = t.detach().reshape(*t.shape[:-3], B * T, t.shape[-1]).numpy()
            f["loss"] = np.array([loss.item()], dtype=np.float32)
        os.replace(tmp, args.out)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    print("capture_torch: wrote %s (model %s, loss %.6f)" % (args.out, spec_text(cfg), loss.item()))


if __name__ == "__main__":
    main()
