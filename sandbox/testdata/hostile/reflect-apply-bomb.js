// expect: limit
// Reflect.apply does what apply does, and String.fromCharCode would then build the string.
return Reflect.apply(String.fromCharCode, null, { length: 2 ** 31 }).length;
