// expect: limit
// inproc: skip (goja's parser recurses once per level: 200,000 levels take seconds and a
// gigabyte in process, and deeper ones overflow the Go stack, which kills the process)
return eval("[".repeat(200000) + "]".repeat(200000)).length;
