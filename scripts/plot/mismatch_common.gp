# mismatch_common.gp: terminal setup shared by the mismatch_*.gp scripts (loaded by each).
if (!exists("fmt")) fmt = 'png'
if (fmt eq 'svg') {
    set terminal svg size 960,600 dynamic enhanced font 'Sans,11'
} else {
    if (fmt eq 'pdf') {
        set terminal pdfcairo size 8in,5in enhanced font 'Sans,10'
    } else {
        set terminal pngcairo size 960,600 enhanced font 'Sans,11'
    }
}
set output outfile
set grid
set key outside right top noenhanced
