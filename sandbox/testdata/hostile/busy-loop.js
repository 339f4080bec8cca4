// expect: timeout
// A plain busy loop: Interrupt stops it at the deadline.
for (;;) {}
