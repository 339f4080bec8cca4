// expect: limit
// goja's join walks all 10^8 holes natively, ignoring Interrupt, for about 14 s.
return Array(1e8).join("x").length;
