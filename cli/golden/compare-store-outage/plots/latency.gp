set terminal svg size 960,360 dynamic noenhanced font 'sans,11' background rgb 'white'
set output 'plots/latency.svg'
set grid
set xlabel 'decision latency (ms)'
set ylabel 'fraction of decisions'
set yrange [0:1]
set key outside right top
plot 'plots/latency.dat' index 0 using 2:1 with lines lw 2 dt 1 lc rgb '#1f77b4' title 'kv-fixed-window-lua (fail-open)', 'plots/latency.dat' index 0 using 3:1 with lines lw 2 dt 2 lc rgb '#d62728' title 'kv-fixed-window-lua (fail-closed)', 'plots/latency.dat' index 0 using 4:1 with lines lw 2 dt 3 lc rgb '#2ca02c' title 'kv-fixed-window-lua (circuit-breaker)'
