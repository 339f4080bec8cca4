// expect: limit
// A typed view of a large buffer allocates nothing, but has an element for each byte to
// expand: Array.from would make 64 million values of 16 bytes each.
return Array.from(new Uint8Array(new ArrayBuffer(2 ** 26))).length;
