#!/usr/bin/python3
"""A numpy probe of two questions about CIFAR-10 patch features, asked at
10,000 training images before building either in C++ (research/results/cifar.md,
"What a second layer and a kernel head add"):

  1. Does a second patch layer (a convolutional kernel network of two
     layers: Coates & Ng's layer on the pooled response maps of a first one)
     beat one layer at the same number of features?
  2. Does a Gaussian kernel on the pooled features (the exact kernel that
     Raj's random-Fourier second layer approximates) beat the linear head?

Usage: /usr/bin/python3 research/repro/cifar/layers_probe.py CIFAR10_DIR MODE [options]
  CIFAR10_DIR  a folder of data_batch_{1..5}.bin[.gz]
  MODE         one: one layer of M2 templates (the shipped encoder's steps:
               6 × 6 × 3 patches at stride 1, contrast-normalised, ZCA-whitened,
               spherical k-means templates, soft threshold α = 0.25 with the
               polarity split, quadrant pooling, averaged with the mirror image)
               two: M1 first-layer templates, their 27 × 27 response maps
               average-pooled (POOL1 × POOL1 windows at stride PSTRIDE), then
               the same steps on K2 × K2 patches of the pooled maps with M2
               templates, quadrant pooling, the mirror average.
  --gamma G [G ...]  also fit a Gaussian-kernel ridge head exp(−G‖φ−φ'‖²/2)
               on the centred features scaled to unit mean squared norm.
Environment: NTR (training images, default 10000), M1 (128), M2 (1600),
POOL1 (3), PSTRIDE (2), K2 (3), SEED (1); GRIDS, the final pooling grids,
comma-separated (default 2: quadrants; 4 is a 4 × 4 grid, 1,2 a pyramid).
AUG (default 0): that many more copies of every training image, each
translated by its own random (dx, dy) in ±SHIFT pixels (default 4; the
edge reflected), as rows for the linear head too; the head is then solved
in the primal (D × D), since the rows outnumber the features (linear only:
--gamma is not fitted then).
1,000 images choose λ; 5,000 others are the test set. Prints one RESULT
line per head: validation and test accuracy at the λ best on validation.
"""
import gzip
import os
import sys
import time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view as windows

ENV = {k: int(os.environ.get(k, v)) for k, v in
       dict(NTR=10000, M1=128, M2=1600, POOL1=3, PSTRIDE=2, K2=3, SEED=1, AUG=0,
            SHIFT=4).items()}
ALPHA = 0.25
rng = np.random.default_rng(ENV['SEED'])


def load(folder):
    xs, ys = [], []
    for i in range(1, 6):
        path = os.path.join(folder, f'data_batch_{i}.bin')
        opener = gzip.open if not os.path.exists(path) else open
        with opener(path if os.path.exists(path) else path + '.gz', 'rb') as f:
            b = np.frombuffer(f.read(), np.uint8).reshape(-1, 3073)
        ys.append(b[:, 0].astype(np.int64))
        xs.append(b[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).astype(np.float32) / 255)
    return np.concatenate(xs), np.concatenate(ys)


def translated(batch, shift, gen):  # every image moved by its own (dx, dy), edges reflected
    s = shift
    padded = np.pad(batch, ((0, 0), (s, s), (s, s), (0, 0)), mode='reflect')
    d = gen.integers(-s, s + 1, size=(len(batch), 2))
    h, w = batch.shape[1:3]
    return np.stack([padded[i, s + dy:s + dy + h, s + dx:s + dx + w] for i, (dx, dy) in
                     enumerate(d)])


def normalize(p, eps):
    p = p - p.mean(1, keepdims=True)
    return p / np.sqrt(p.var(1, keepdims=True) + eps)


def whitening(p, eps):
    mu = p.mean(0)
    w, v = np.linalg.eigh(np.cov((p - mu).T.astype(np.float64)))
    return mu.astype(np.float32), ((v / np.sqrt(w + eps)) @ v.T).astype(np.float32)


def spherical_kmeans(p, m, iterations=10):
    p = p / np.maximum(np.linalg.norm(p, axis=1, keepdims=True), 1e-8)
    c = p[rng.choice(len(p), m, replace=False)].copy()
    for _ in range(iterations):
        s = p @ c.T
        a = np.argmax(np.abs(s), 1)
        v = s[np.arange(len(p)), a]
        del s
        c2 = np.zeros_like(c)
        for i in range(0, len(p), 20000):
            onehot = np.zeros((min(20000, len(p) - i), m), np.float32)
            onehot[np.arange(len(onehot)), a[i:i + 20000]] = v[i:i + 20000]
            c2 += onehot.T @ p[i:i + 20000]
        dead = np.linalg.norm(c2, axis=1) < 1e-8
        c2[dead] = p[rng.choice(len(p), dead.sum(), replace=False)]
        c = c2 / np.linalg.norm(c2, axis=1, keepdims=True)
    return c.astype(np.float32)


class Layer:
    """Whitened, k-means templates on patches; soft threshold, polarity split."""

    def __init__(self, patches, m, eps):
        self.eps = eps
        mu, w = whitening(normalize(patches, eps), 0.1)
        c = spherical_kmeans((normalize(patches, eps) - mu) @ w, m)
        self.bank = w @ c.T
        self.bias = -(mu @ w) @ c.T

    def __call__(self, patches):
        z = normalize(patches, self.eps) @ self.bank + self.bias
        return np.concatenate([np.maximum(0, z - ALPHA), np.maximum(0, -z - ALPHA)], -1)


def image_patches(x, k):  # (B, H, W, C) -> (B·P, k·k·C), P = (H−k+1)(W−k+1)
    v = windows(x, (k, k), axis=(1, 2))
    b, h, w = v.shape[:3]
    return v.transpose(0, 1, 2, 4, 5, 3).reshape(b * h * w, -1), (b, h, w)


def grid_pool(maps, g):  # (B, H, W, C) -> (B, g·g·C): means over a g × g grid of cells
    hs = np.linspace(0, maps.shape[1], g + 1).round().astype(int)
    ws = np.linspace(0, maps.shape[2], g + 1).round().astype(int)
    return np.concatenate([maps[:, hs[i]:hs[i + 1], ws[j]:ws[j + 1]].mean((1, 2))
                           for i in range(g) for j in range(g)], 1)


def pooled(maps):  # (B, H, W, C) -> (B, Σ G·G·C) over the grids G in GRIDS (default 2: quadrants)
    return np.concatenate([grid_pool(maps, int(g)) for g in
                           os.environ.get('GRIDS', '2').split(',')], 1)


LINEAR_LAMBDAS = [10.0 ** e for e in np.arange(-8, -3.9, 0.5)]


def standardized(ftr, fva, fte, ytr):
    """The features centred on the training mean and scaled to unit mean
    squared norm, and the ±1 targets of the training rows."""
    mu = ftr.mean(0)
    scale = np.sqrt(((ftr - mu) ** 2).sum(1).mean())
    targets = -np.ones((len(ftr), 10))
    targets[np.arange(len(ftr)), ytr] = 1
    return [(f - mu) / scale for f in (ftr, fva, fte)] + [targets]


def eigen_ridge(name, m, rhs, a_va, a_te, y_va, y_te, n, lambdas, features):
    """Ridge over a λ grid from one eigendecomposition of the symmetric m:
    coef = (m + λnI)⁻¹ rhs, scores a_va @ coef. The dual is m = K, rhs = Y,
    a = the cross kernels; the primal m = FᵀF, rhs = FᵀY, a = the features.
    Prints the RESULT line at the λ best on validation."""
    w, v = np.linalg.eigh(m.astype(np.float64))
    vy = v.T @ rhs
    best = None
    for lam in lambdas:
        coef = v @ (vy / (w + lam * n)[:, None])
        acc_va = np.mean(np.argmax(a_va @ coef, 1) == y_va)
        acc_te = np.mean(np.argmax(a_te @ coef, 1) == y_te)
        if best is None or acc_va > best[1]:
            best = (lam, acc_va, acc_te)
    print(f'RESULT mode={sys.argv[2]} {ENV} head={name} rows={n} features={features} '
          f'lambda={best[0]:g} validation={best[1]:.4f} test={best[2]:.4f}', flush=True)


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ('one', 'two'):
        sys.exit(__doc__)
    gammas = [float(g) for g in sys.argv[sys.argv.index('--gamma') + 1:]] \
        if '--gamma' in sys.argv else []
    two = sys.argv[2] == 'two'
    x, y = load(sys.argv[1])
    perm = rng.permutation(len(x))
    tr, va, te = perm[:ENV['NTR']], perm[ENV['NTR']:ENV['NTR'] + 1000], perm[-5000:]
    stats = x[tr[rng.choice(len(tr), 2000, replace=False)]]
    p1, _ = image_patches(stats, 6)  # 1.46 million patches, 100,000 drawn
    layer1 = Layer(p1[rng.choice(len(p1), 100000, replace=False)],
                   ENV['M1'] if two else ENV['M2'], 1e-3)

    def maps1(batch):
        r, (b, h, w) = image_patches(batch, 6)
        return layer1(r).reshape(b, h, w, -1)

    def pooled_patches(maps):
        pooled = windows(maps, (ENV['POOL1'], ENV['POOL1']), axis=(1, 2))
        pooled = pooled[:, ::ENV['PSTRIDE'], ::ENV['PSTRIDE']].mean((-1, -2))
        return image_patches(pooled, ENV['K2'])

    if two:
        q = np.concatenate([pooled_patches(maps1(stats[i:i + 200]))[0]
                            for i in range(0, len(stats), 200)])
        q = q[rng.choice(len(q), 100000, replace=False)]
        layer2 = Layer(q, ENV['M2'], 1e-3 * float(q.var(1).mean()))

    def features(batch):
        m = maps1(batch)
        if not two:
            return pooled(m)
        r, (b, h, w) = pooled_patches(m)
        return pooled(layer2(r).reshape(b, h, w, -1))

    def featurize(idx, move=None):
        def images(i):
            b = x[idx[i:i + 200]]
            return b if move is None else move(b)
        return np.concatenate([0.5 * (features(b) + features(b[:, :, ::-1]))
                               for b in (images(i) for i in range(0, len(idx), 200))])

    t0 = time.time()
    ftr, fva, fte = featurize(tr), featurize(va), featurize(te)
    ytr = y[tr]
    if ENV['AUG']:
        gen = np.random.default_rng(ENV['SEED'] + 1)
        ftr = np.concatenate([ftr] + [featurize(tr, lambda b: translated(b, ENV['SHIFT'], gen))
                                      for _ in range(ENV['AUG'])])
        ytr = np.tile(ytr, ENV['AUG'] + 1)
    print(f'featurized {len(ftr) + len(fva) + len(fte)} rows in {time.time() - t0:.0f} s, '
          f'{ftr.shape[1]} features', flush=True)
    ftr, fva, fte, targets = standardized(ftr, fva, fte, ytr)
    n, d = ftr.shape
    if ENV['AUG']:  # more rows than features: the primal
        eigen_ridge('linear(primal)', ftr.T @ ftr, ftr.T @ targets, fva, fte, y[va], y[te], n,
                    LINEAR_LAMBDAS, d)
        return
    gram, gva, gte = ftr @ ftr.T, fva @ ftr.T, fte @ ftr.T
    eigen_ridge('linear', gram, targets, gva, gte, y[va], y[te], n, LINEAR_LAMBDAS, d)
    sq = np.diag(gram)
    for g in gammas:
        def rbf(cross, left):
            return np.exp(-g * (left[:, None] + sq[None] - 2 * cross) / 2)
        eigen_ridge(f'gaussian(gamma={g})', rbf(gram, sq), targets, rbf(gva, (fva ** 2).sum(1)),
                    rbf(gte, (fte ** 2).sum(1)), y[va], y[te], n,
                    [10.0 ** e for e in range(-7, -2)], d)


if __name__ == '__main__':
    main()
