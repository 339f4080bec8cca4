// expect: limit
// padEnd allocates its whole result at once.
return "".padEnd(2 ** 30, "ab").length;
