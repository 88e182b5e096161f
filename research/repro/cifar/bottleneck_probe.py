#!/usr/bin/python3
"""A numpy probe, at 10,000 CIFAR-10 training images, of the one head that
finer pooling might need (research/results/cifar.md, "What a shared bottleneck
adds"): a low-rank map shared by every pooling cell, as Thiry et al. read
their patch maps (a 1 × 1 convolution to R channels, then a linear
classifier over the cells).

The features are layers_probe.py's one-layer map: M2 whitened k-means
templates on 6 × 6 × 3 patches, the soft threshold with the polarity split
(C = 2·M2 channels), averaged with the mirror image, pooled over a G × G grid
of cells (GRID, default 4): φ(x) ∈ R^{G²·C}, read as G² cells of C values.
They are centred and scaled as in layers_probe.py.

Heads, each with λ chosen on 1,000 validation images and tested on 5,000
others (the split of layers_probe.py, same seed):

  ridge        the full-rank ridge on all G²·C features (the reference);
  pca          φ's cells projected on the top R principal directions of the
               cells' C-vectors (one projection for every cell), then ridge
               on the G²·R values: an unsupervised shared bottleneck;
  alternating  starts from pca, then alternates: with the projection P
               (C × R) fixed, the ridge on the G²·R values gives W; with W
               fixed, the scores are linear in P, and P is the ridge
               solution found by conjugate gradients (CG_STEPS steps, warm).
               ROUNDS rounds; validation and test after each.

Usage: /usr/bin/python3 research/repro/cifar/bottleneck_probe.py CIFAR10_DIR
Environment: NTR (10000), M2 (1600), GRID (4), R (128), ROUNDS (4),
CG_STEPS (15), SEED (1), CACHE (a .npy path prefix: features are saved
there and read back when present), SKIP_RIDGE (set: no full-rank ridge),
QUADRANTS (set: also the full-rank ridge on the quadrants, computed from
the cells: the reference the bottleneck has to beat).
Prints RESULT lines.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers_probe as lp  # noqa: E402

ENV = {k: int(os.environ.get(k, v)) for k, v in
       dict(NTR=10000, M2=1600, GRID=4, R=128, ROUNDS=4, CG_STEPS=15, SEED=1).items()}
PATCH = 6  # patch side, as in layers_probe.py
LAMBDAS = [10.0 ** e for e in np.arange(-8, -2.9, 0.5)]


def featurize(x, tr, va, te):
    rng = lp.rng
    stats = x[tr[rng.choice(len(tr), 2000, replace=False)]]
    p1, _ = lp.image_patches(stats, PATCH)
    layer = lp.Layer(p1[rng.choice(len(p1), 100000, replace=False)], ENV['M2'], 1e-3)

    def features(batch):
        r, (b, h, w) = lp.image_patches(batch, PATCH)
        return lp.grid_pool(layer(r).reshape(b, h, w, -1), ENV['GRID'])

    def run(idx):
        return np.concatenate([0.5 * (features(x[idx[i:i + 200]]) +
                                      features(x[idx[i:i + 200], :, ::-1]))
                               for i in range(0, len(idx), 200)])
    return run(tr), run(va), run(te)


def ridge_fit(f, y, n_classes, fva, yva, fte, yte):
    """Ridge over LAMBDAS (λ·n on the diagonal); returns (λ, val, test, W, b)."""
    n = len(f)
    t = -np.ones((n, n_classes))
    t[np.arange(n), y] = 1
    mu, tmu = f.mean(0), t.mean(0)
    fc = (f - mu).astype(np.float32)
    if fc.shape[1] <= n:  # primal: D × D
        w, v = np.linalg.eigh((fc.T @ fc).astype(np.float64))
        vy = v.T @ (fc.T @ (t - tmu))
        solve = lambda lam: v @ (vy / (w + lam * n)[:, None])  # noqa: E731
    else:  # dual: n × n
        w, v = np.linalg.eigh((fc @ fc.T).astype(np.float64))
        vy = v.T @ (t - tmu)
        solve = lambda lam: fc.T @ (v @ (vy / (w + lam * n)[:, None]))  # noqa: E731
    best = None
    for lam in LAMBDAS:
        coef = solve(lam)
        b = tmu - mu @ coef
        acc_va = np.mean(np.argmax(fva @ coef + b, 1) == yva)
        if best is None or acc_va > best[1]:
            acc_te = np.mean(np.argmax(fte @ coef + b, 1) == yte)
            best = (lam, acc_va, acc_te, coef, b)
    return best


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    x, y = lp.load(sys.argv[1])
    rng = lp.rng
    perm = rng.permutation(len(x))
    tr, va, te = perm[:ENV['NTR']], perm[ENV['NTR']:ENV['NTR'] + 1000], perm[-5000:]
    cache = os.environ.get('CACHE')
    t0 = time.time()
    if cache and os.path.exists(cache + '.tr.npy'):
        ftr, fva, fte = (np.load(f'{cache}.{p}.npy') for p in ('tr', 'va', 'te'))
    else:
        ftr, fva, fte = featurize(x, tr, va, te)
        if cache:
            for p, f in (('tr', ftr), ('va', fva), ('te', fte)):
                np.save(f'{cache}.{p}.npy', f)
    cells = ENV['GRID'] ** 2
    c = ftr.shape[1] // cells
    print(f'features: {ftr.shape[1]} ({cells} cells x {c}), {time.time() - t0:.0f} s', flush=True)
    mu = ftr.mean(0)
    scale = np.sqrt(((ftr - mu) ** 2).sum(1).mean())
    ftr, fva, fte = [((f - mu) / scale).astype(np.float32) for f in (ftr, fva, fte)]
    ytr, yva, yte = y[tr], y[va], y[te]

    def report(name, best, extra=''):
        print(f'RESULT {ENV} head={name} lambda={best[0]:g} validation={best[1]:.4f} '
              f'test={best[2]:.4f} {extra}'.rstrip(), flush=True)

    t0 = time.time()
    if not os.environ.get('SKIP_RIDGE'):
        report('ridge', ridge_fit(ftr, ytr, 10, fva, yva, fte, yte),
               f'features={ftr.shape[1]} seconds={time.time() - t0:.0f}')

    if os.environ.get('QUADRANTS') and ENV['GRID'] % 2 == 0:
        # Quadrants from the cells: each quadrant's mean is the mean of its
        # cells weighted by their positions (grid_pool's rounded bounds).
        def quadrants(f):
            side = 32 - PATCH + 1  # positions per side of the response maps
            h = np.diff(np.linspace(0, side, ENV['GRID'] + 1).round().astype(int))
            g, half = ENV['GRID'], ENV['GRID'] // 2
            cube = f.reshape(len(f), g, g, c)
            out = []
            for qi in range(2):
                for qj in range(2):
                    rows, cols = slice(qi * half, (qi + 1) * half), slice(qj * half, (qj + 1) * half)
                    wgt = np.outer(h[rows], h[cols]).astype(np.float32)
                    out.append(np.einsum('nijc,ij->nc', cube[:, rows, cols], wgt / wgt.sum()))
            return np.concatenate(out, 1)
        qtr, qva, qte = quadrants(ftr), quadrants(fva), quadrants(fte)
        report('ridge(quadrants)', ridge_fit(qtr, ytr, 10, qva, yva, qte, yte),
               f'features={qtr.shape[1]}')
        del qtr, qva, qte

    # The cells' C-vectors, one row per (image, cell); grid_pool orders each
    # image's features cell by cell, C values each.
    def cell_rows(f):
        return f.reshape(len(f) * cells, c)

    rtr = cell_rows(ftr)
    cov = (rtr.T @ rtr).astype(np.float64) / len(rtr)
    _, v = np.linalg.eigh(cov)
    p = v[:, ::-1][:, :ENV['R']].astype(np.float32)  # C × R

    def project(f, p):
        return (cell_rows(f) @ p).reshape(len(f), cells * p.shape[1])

    best = ridge_fit(project(ftr, p), ytr, 10, project(fva, p), yva, project(fte, p), yte)
    report('pca', best, f'R={ENV["R"]}')

    n = len(ftr)
    t = -np.ones((n, 10), np.float32)
    t[np.arange(n), ytr] = 1
    r = ENV['R']
    for rnd in range(ENV['ROUNDS']):
        lam_w, _, _, coef, b = best
        wmat = coef.astype(np.float32).reshape(cells, r, 10)  # W[cell, r, class]
        resid_target = t - b.astype(np.float32)
        lam_p = lam_w * n  # the same weight on ‖P‖² as on ‖W‖² (λ·n, as ridge_fit)

        def forward(pm):  # scores of P (without b)
            z = (rtr @ pm).reshape(n, cells, r)
            return np.einsum('nkr,krc->nc', z, wmat)

        def adjoint(e):  # ∂/∂P of ⟨E, forward(P)⟩
            g = np.einsum('nc,krc->nkr', e, wmat).reshape(n * cells, r)
            return rtr.T @ g

        def normal(pm):
            return adjoint(forward(pm)) + lam_p * pm

        rhs = adjoint(resid_target)
        res = rhs - normal(p)
        d = res.copy()
        rs = float((res * res).sum())
        for _ in range(ENV['CG_STEPS']):
            q = normal(d)
            a = rs / float((d * q).sum())
            p = p + a * d
            res = res - a * q
            rs_new = float((res * res).sum())
            d = res + (rs_new / rs) * d
            rs = rs_new
        best = ridge_fit(project(ftr, p), ytr, 10, project(fva, p), yva, project(fte, p), yte)
        report(f'alternating(round={rnd + 1})', best, f'R={r}')


if __name__ == '__main__':
    main()
