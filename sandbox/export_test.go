package sandbox

// AbandonGrace is abandonGrace, for the tests of package sandbox_test.
const AbandonGrace = abandonGrace
