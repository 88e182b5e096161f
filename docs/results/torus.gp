set terminal pngcairo size 1100,700
set output '/work/main/docs/results/torus.png'
set logscale xy
set xlabel 'n (training points)'
set ylabel 'test MSE vs f*'
set title 'Soleymani et al. §6: d = 10, sign flips {±1}^10, mean of 10 seeds'
set key outside right font ',8'
plot for [i=0:14] '/work/main/docs/results/torus_curves.dat' index i using 1:2 with linespoints title columnheader(1)
