// expect: limit
// A backtracking pattern (a backreference sends it to regexp2): the match timeout ends it
// after a second instead of hours, and the run fails rather than answer a wrong "no match".
if (/^(a+)+\1b$/.test("a".repeat(40))) throw new Error("matched");
return "no match";
