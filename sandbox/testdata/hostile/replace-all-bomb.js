// expect: limit
// The files_edit attack inside the sandbox: every "a" of a 1 MiB string replaced by the
// string itself is 1 TiB, built in one native step.
const s = "a".repeat(1 << 20);
return s.replaceAll("a", s).length;
