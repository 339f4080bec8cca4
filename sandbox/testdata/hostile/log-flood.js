// expect: limit
// Captured logs are bounded.
for (;;) console.log("spam ".repeat(200));
