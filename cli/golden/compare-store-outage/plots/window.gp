set terminal svg size 960,600 dynamic noenhanced font 'sans,11' background rgb 'white'
set output 'plots/window.svg'
set grid
set xlabel 'UTC, from 2026-01-01'
set xdata time
set timefmt '%s'
set format x '%H:%M:%S'
set xrange ['1767225600.000':'1767225780.000']
set object 1 rect from '1767225670.000', graph 0 to '1767225690.000', graph 1 behind fc rgb '#f3d9b1' fs solid 0.7 noborder
set multiplot layout 3,1
set ylabel 'most for one key in 1m'
set yrange [0:19]
set key outside right top
set title 'kv-fixed-window-lua (fail-open)'
unset xlabel
plot 'plots/window.dat' index 0 using 1:2 with steps lw 2 lc rgb '#1f77b4' title 'admitted', 5 with lines dt 2 lw 2 lc rgb 'black' title 'limit 5'
set title 'kv-fixed-window-lua (fail-closed)'
unset xlabel
plot 'plots/window.dat' index 1 using 1:2 with steps lw 2 lc rgb '#d62728' title 'admitted', 5 with lines dt 2 lw 2 lc rgb 'black' title 'limit 5'
set title 'kv-fixed-window-lua (circuit-breaker)'
set xlabel 'UTC, from 2026-01-01'
plot 'plots/window.dat' index 2 using 1:2 with steps lw 2 lc rgb '#2ca02c' title 'admitted', 5 with lines dt 2 lw 2 lc rgb 'black' title 'limit 5'
unset multiplot
