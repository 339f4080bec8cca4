// expect: limit
return Reflect.construct(Array, { length: 2 ** 32 - 1 }).length;
