// expect: timeout
// One catastrophic match after another: each holds the VM in native code for up to a
// second, past the deadline.
for (;;) /(?=(a+)+b)/.test("a".repeat(40));
