// expect: limit
// inproc: skip (as deep-eval-nesting, through the Function constructor)
return new Function("return " + "(".repeat(300000) + "1" + ")".repeat(300000))();
