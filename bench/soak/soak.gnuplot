# Plots bench/soak/soak.sh's CSV: gnuplot -e "csv='OUT/soak.csv'; png='OUT/soak.png'" soak.gnuplot
set datafile separator ","
set terminal pngcairo size 1200,800 noenhanced
set output png
set multiplot layout 2,2 title "invariant-server soak (per minute)"
set xlabel "minute"
set key top left
set title "RSS (MiB)"
plot csv using 1:2 skip 1 with linespoints title "rss"
set title "threads and open fds"
plot csv using 1:3 skip 1 with linespoints title "threads", \
     csv using 1:4 skip 1 with linespoints title "fds"
set title "p99 latency (us)"
plot csv using 1:5 skip 1 with linespoints title "loadgen unary", \
     csv using 1:6 skip 1 with linespoints title "loadgen stream", \
     csv using 1:7 skip 1 with linespoints title "chaos valid unary"
set title "requests per minute"
plot csv using 1:8 skip 1 with linespoints title "sent", \
     csv using 1:10 skip 1 with linespoints title "lost", \
     csv using 1:11 skip 1 with linespoints title "bad accepted"
unset multiplot
