// expect: limit
// The returned value's JSON is bounded.
return "x".repeat(5 << 20);
