// expect: limit
// Runaway recursion ends at the call-stack depth limit, uncatchably.
function down(n) {
  return down(n + 1) + 1;
}
try {
  return down(0);
} catch (e) {
  return "caught";
}
