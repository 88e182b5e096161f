# Mroueh's protocol on the held-out images (sourced by ../patches.sh): the
# settings best on the tuning split (levers.sh), CDF pooling and the soft
# threshold, both with 8 × 8 patches under rotations uniform in ±20° and
# 3 × 3 regions (train/configs/mnist_patch_cdf.textproto and
# mnist_patch_local.textproto).
mroueh_run mroueh "CDF k8 m100 rot20 r8 n2 s1 pool3 + 2nd layer 4000 sigma5" pool heldout 1000 \
  8 1 100 8 rot20 CDF 2 1 3 true "second_layer { num_features: 4000 sigma: 5 seed: 13 }"
mroueh_run mroueh "threshold k8 m400 rot20 r8 pool3" pool heldout 1000 8 1 400 8 rot20 THRESHOLD 0 0.25 3 true
if [[ "$HEAVY" == 1 ]]; then
  mroueh_run mroueh "CDF k8 m200 rot20 r8 n2 s1 pool3" pool heldout 1000 8 1 200 8 rot20 CDF 2 1 3 true
fi
