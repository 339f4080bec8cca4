// expect: limit
// Splitting makes an array with an element per piece: 16 Mi commas are 16 Mi + 1 pieces.
return ",".repeat(1 << 24).split(",").length;
