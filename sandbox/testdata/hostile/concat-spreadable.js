// expect: limit
return [].concat({ length: 2 ** 32 - 1, [Symbol.isConcatSpreadable]: true }).length;
