// expect: limit
// goja parses JSON recursively: 10^6 levels would overflow the Go stack.
return JSON.parse("[".repeat(1e6) + "]".repeat(1e6));
