// expect: ok
// A backtracking pattern (a backreference sends it to regexp2): the match timeout ends it
// as "no match" after a second instead of hours.
if (/^(a+)+\1b$/.test("a".repeat(40))) throw new Error("matched");
return "no match";
