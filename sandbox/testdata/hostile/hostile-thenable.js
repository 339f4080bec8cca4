// expect: timeout
// Returning a thenable makes the runtime call its then, which never returns.
return { then() { for (;;) {} } };
