# Run in the directory of torus_curves.dat: gnuplot torus.gp
set terminal pngcairo size 1500,1150 noenhanced font ',10'
set output 'torus.png'
set multiplot layout 2,1
set linetype 9 lc rgb 'dark-red' pt 4
set linetype 10 lc rgb 'olive' pt 6
set linetype 11 lc rgb 'dark-magenta' pt 8
set linetype 12 lc rgb 'brown' pt 10
set linetype 13 lc rgb 'dark-cyan' pt 12
set linetype 14 lc rgb 'orange-red' pt 14
set linetype 15 lc rgb 'black' pt 5
set linetype 16 lc rgb 'gray40' pt 7
set linetype cycle 16
set logscale xy
set grid
set xlabel 'n (training points)'
set key outside right top font ',9'
set ylabel 'test MSE against f* (mean of 10 seeds)'
set title 'Soleymani et al. 6: d = 10, {+-1}^10, f*(x) = (1/d) sum i x_i^2. Test error vs n; KRR dashed, spectral solid'
plot for [i=0:5] 'torus_curves.dat' index i using 1:2 with linespoints dt 2 lw 1.5 title columnheader(1), \
     for [i=6:21] 'torus_curves.dat' index i using 1:2 with linespoints dt 1 lw 1.5 title columnheader(1)
unset logscale y
set yrange [0:*]
set ylabel 'ID = max |f(x) - f(g.x)| (mean over seeds)'
set title 'Invariance discrepancy over 100 test points x 1024 group elements'
plot for [i=0:5] 'torus_curves.dat' index i using 1:3 with linespoints dt 2 lw 1.5 title columnheader(1), \
     'torus_curves.dat' index 22 using 1:3 with linespoints lw 3 lc 'black' title columnheader(1)
unset multiplot
