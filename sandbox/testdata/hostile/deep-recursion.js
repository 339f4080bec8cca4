// expect: limit
// Runaway recursion that nothing catches ends at the call-stack depth limit.
function down(n) {
  return down(n + 1) + 1;
}
return down(0);
