// expect: limit
// Recursion through native callbacks (forEach), which nests Go frames too.
function down() {
  [1].forEach(down);
}
down();
