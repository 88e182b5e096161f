# The lever study of research/results/patches.md (sourced by ../patches.sh with
# LEVERS=1): Mroueh's protocol at 1,000 images per class on the tuning split
# (train from images 0 .. 39,999, test on 48,000 .. 49,999; the held-out
# images 50,000 .. 59,999 are never seen here). Each row changes one or two
# levers of the base row.
# L LABEL tunepool tunetest PER_CLASS k stride m r group response n range pool whiten [second]
L "base: CDF k6 m100 rot20 r8 n2 s1 pool3" tunepool tunetest 1000 6 1 100 8 rot20 CDF 2 1 3 true
L "threshold a0.25" tunepool tunetest 1000 6 1 100 8 rot20 THRESHOLD 0 0.25 3 true
L "CDF no patch group" tunepool tunetest 1000 6 1 100 1 none CDF 2 1 3 true
L "CDF d4 (turns+flips)" tunepool tunetest 1000 6 1 100 8 d4 CDF 2 1 3 true
L "CDF pool1" tunepool tunetest 1000 6 1 100 8 rot20 CDF 2 1 1 true
L "CDF pool2" tunepool tunetest 1000 6 1 100 8 rot20 CDF 2 1 2 true
L "CDF not whitened" tunepool tunetest 1000 6 1 100 8 rot20 CDF 2 1 3 false
L "CDF s0.5" tunepool tunetest 1000 6 1 100 8 rot20 CDF 2 0.5 3 true
L "CDF s2" tunepool tunetest 1000 6 1 100 8 rot20 CDF 2 2 3 true
L "CDF n1" tunepool tunetest 1000 6 1 100 8 rot20 CDF 1 1 3 true
L "CDF k8" tunepool tunetest 1000 8 1 100 8 rot20 CDF 2 1 3 true
L "CDF stride2" tunepool tunetest 1000 6 2 100 8 rot20 CDF 2 1 3 true
L "CDF m200 pool3" tunepool tunetest 1000 6 1 200 8 rot20 CDF 2 1 3 true
L "threshold m400 pool3" tunepool tunetest 1000 6 1 400 8 rot20 THRESHOLD 0 0.25 3 true
L "CDF pool4" tunepool tunetest 1000 6 1 100 8 rot20 CDF 2 1 4 true
L "CDF r16" tunepool tunetest 1000 6 1 100 16 rot20 CDF 2 1 3 true
L "threshold k8 m400 pool3" tunepool tunetest 1000 8 1 400 8 rot20 THRESHOLD 0 0.25 3 true
L "threshold m400 pool3 no patch group" tunepool tunetest 1000 6 1 400 1 none THRESHOLD 0 0.25 3 true
L "CDF base + 2nd layer 4000 sigma5" tunepool tunetest 1000 6 1 100 8 rot20 CDF 2 1 3 true \
  "second_layer { num_features: 4000 sigma: 5 seed: 13 }"
L "CDF k8 m200 pool3" tunepool tunetest 1000 8 1 200 8 rot20 CDF 2 1 3 true
L "CDF k8 + 2nd layer 4000 sigma5" tunepool tunetest 1000 8 1 100 8 rot20 CDF 2 1 3 true \
  "second_layer { num_features: 4000 sigma: 5 seed: 13 }"
