set terminal svg size 960,660 dynamic noenhanced font 'sans,11' background rgb 'white'
set output 'plots/traffic.svg'
set grid
set xlabel 'UTC, from 2026-01-01'
set xdata time
set timefmt '%s'
set format x '%H:%M:%S'
set xrange ['1767225600.000':'1767225780.000']
set object 1 rect from '1767225670.000', graph 0 to '1767225690.000', graph 1 behind fc rgb '#f3d9b1' fs solid 0.7 noborder
set multiplot layout 3,1
set ylabel 'requests per 5s'
set yrange [0:*]
set ytics 1
set key outside right top
set style fill solid 0.35 noborder
set title 'kv-fixed-window-lua (fail-open)'
unset xlabel
plot 'plots/traffic.dat' index 0 using 1:2 with fillsteps lc rgb '#bbbbbb' title 'offered', 'plots/traffic.dat' index 0 using 1:3 with steps lw 2 lc rgb '#2ca02c' title 'admitted', 'plots/traffic.dat' index 0 using 1:4 with steps lw 1.5 lc rgb '#d62728' title 'denied'
set title 'kv-fixed-window-lua (fail-closed)'
unset xlabel
plot 'plots/traffic.dat' index 1 using 1:2 with fillsteps lc rgb '#bbbbbb' title 'offered', 'plots/traffic.dat' index 1 using 1:3 with steps lw 2 lc rgb '#2ca02c' title 'admitted', 'plots/traffic.dat' index 1 using 1:4 with steps lw 1.5 lc rgb '#d62728' title 'denied'
set title 'kv-fixed-window-lua (circuit-breaker)'
set xlabel 'UTC, from 2026-01-01'
plot 'plots/traffic.dat' index 2 using 1:2 with fillsteps lc rgb '#bbbbbb' title 'offered', 'plots/traffic.dat' index 2 using 1:3 with steps lw 2 lc rgb '#2ca02c' title 'admitted', 'plots/traffic.dat' index 2 using 1:4 with steps lw 1.5 lc rgb '#d62728' title 'denied'
unset multiplot
