// expect: limit
// Joining a typed array builds a string of each element's text: 4 characters and a comma each.
return new Uint8Array(2 ** 23).join().length;
