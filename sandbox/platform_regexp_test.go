package sandbox

import "testing"

func TestRegexpTranslation(t *testing.T) {
	runValueCases(t, []valueCase{
		{"property escape", `return [/\p{L}/u.test("é"), /\p{L}/u.test("{}"), /^\p{Lu}+$/u.test("ABC"), /\p{Script=Greek}/u.test("α"), /\P{L}/u.test("a")]`, `[true,false,true,true,false]`},
		{"property in a class", `return "a1-β_".replace(/[\p{L}\p{Nd}]/gu, "x")`, `"xx-x_"`},
		{"long names and gc=", `return [/\p{Letter}/u.test("x"), /\p{gc=Nd}/u.test("٣"), /\p{General_Category=Uppercase_Letter}/u.test("a")]`, `[true,true,false]`},
		{"emoji", `return "hi 👋 there 🎉".match(/\p{Extended_Pictographic}/gu)`, `["👋","🎉"]`},
		{"binary properties", `return [/\p{Alphabetic}/u.test("ß"), /\p{White_Space}/u.test("\u00a0"), /^\p{ASCII}+$/u.test("abc"), /\p{Any}/u.test("\u{10FFFF}")]`, `[true,true,true,true]`},
		{"source and flags stay the model's", `const r = /\p{L}+/giu; return [r.source, r.flags, String(r), r.unicode, r.global]`, `["\\p{L}+","giu","/\\p{L}+/giu",true,true]`},
		{"RegExp constructor", `const r = new RegExp("\\p{N}+", "u"); return ["a12b".match(r)[0], new RegExp(r).source, RegExp("\\p{L}", "u").test("z")]`, `["12","\\p{N}+",true]`},
		{"with lookahead (regexp2)", `return "ab1 cd".match(/\p{L}+(?=\d)/u)[0]`, `"ab"`},
		{"d flag indices", `const m = /a(?<x>b)?(c)/d.exec("zabc"); return [m.indices[0], m.indices[1], m.indices[2], m.indices.groups.x, /x/d.hasIndices, /x/.hasIndices]`, `[[1,4],[2,3],[3,4],[2,3],true,false]`},
		{"d flag non-participating group", `const m = /(a)|(b)/d.exec("b"); return [m.indices[1] === undefined, m.indices[2]]`, `[true,[0,1]]`},
		{"v flag set operations", `return [/[\p{L}--[a-z]]/v.test("a"), /[\p{L}--[a-z]]/v.test("B"), /[[a-z]&&[aeiou]]/v.test("e"), /[[a-z]&&[aeiou]]/v.test("b"), /x/v.flags, /x/v.unicodeSets, /x/v.unicode]`, `[false,true,true,false,"v",true,false]`},
		{"v flag nested class", `return "a-b_c".replace(/[[a-z][_]]/gv, "")`, `"-"`},
		{"unknown property", `try { new RegExp("\\p{Nope}", "u") } catch (e) { return e.name }`, `"SyntaxError"`},
		{"property of strings", `try { new RegExp("\\p{RGI_Emoji}", "v") } catch (e) { return e.message.includes("Extended_Pictographic") }`, `true`},
		{"plain patterns untouched", `return ["aXb".replace(/x/i, "-"), /\p/.test("p")]`, `["a-b",true]`},
	})
}

func TestRegexpTimeoutFailsTheRun(t *testing.T) {
	for _, src := range []string{
		`return /(?=(a+)+b)/.test("a".repeat(40))`,
		`const re = /^(a+)+\1b$/; return re.exec("a".repeat(40))`,
		`return "a".repeat(40).replace(/^(a+)+\1b$/, "x")`,
		`try { return /(?=(a+)+b)/.test("a".repeat(40)) } catch (e) { return "caught" }`,
	} {
		res := runJS(t, src, nil)
		wantFailure(t, res, KindLimit, "match limit", "catastrophic backtracking")
	}
}

func TestRegexpSyntaxMessage(t *testing.T) {
	tests := []struct{ source, flags, goja, want string }{
		{"(", "", "Unterminated group", "Invalid regular expression: /(/: Unterminated group"},
		{"(", "g", "Unterminated group", "Invalid regular expression: /(/g: Unterminated group"},
		{"a**", "", "Invalid regular expression (re2): a** (error parsing regexp: invalid nested repetition operator: `**`)", "Invalid regular expression: /a**/: Nothing to repeat"},
		{"a{2,1}", "", "Invalid regular expression (regexp2): a{2,1} (Invalid regular expression (regexp2): a{2,1} (error parsing regexp: invalid repeat count in `a{2,1}`))", "Invalid regular expression: /a{2,1}/: numbers out of order in {} quantifier"},
		{`\`, "", "Invalid regular expression (re2): \\ (error parsing regexp: trailing backslash at end of expression: ``)", `Invalid regular expression: /\/: \ at end of pattern`},
		{"a", "gg", "Invalid flags supplied to RegExp constructor 'gg'", "Invalid flags supplied to RegExp constructor 'gg'"},
		{`\p{Nope}`, "u", `Invalid regular expression: /\p{Nope}/u: invalid property name`, `Invalid regular expression: /\p{Nope}/u: Invalid property name`},
		{"x", "", "Invalid regular expression (re2): x (error parsing regexp: something new: `x`)", "Invalid regular expression: /x/: something new: `x`"},
	}
	for _, tt := range tests {
		if got := regexpSyntaxMessage(tt.source, tt.flags, tt.goja); got != tt.want {
			t.Errorf("regexpSyntaxMessage(%q, %q, %q) = %q, want %q", tt.source, tt.flags, tt.goja, got, tt.want)
		}
	}
}
