# Mroueh's protocol on the held-out images (sourced by ../patches.sh): the
# settings chosen by the lever study (levers.sh) on the tuning split.
mroueh_run mroueh "CDF k6 m100 rot20 r8 n2 s1 pool3" pool heldout 1000 6 1 100 8 rot20 CDF 2 1 3 true
