// expect: limit
// Splitting into characters makes an array with an element per character.
return "x".repeat(1 << 24).split("").length;
