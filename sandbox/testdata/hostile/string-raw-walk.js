// expect: limit
return String.raw({ raw: { length: 2 ** 53 - 1 } }).length;
