// expect: limit
// BigInt.asUintN computes with 2**bits: 2**53 bits is a petabyte.
return String(BigInt.asUintN(2 ** 53 - 1, 1n)).length;
