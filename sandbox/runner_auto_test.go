package sandbox

import "testing"

func TestCompileAutoCachesTheLanguageThatWorked(t *testing.T) {
	src := "const n: number = 41\nreturn n + 1 // cache test"
	p1, err := CompileAuto(src)
	if err != nil {
		t.Fatal(err)
	}
	if p1.Lang() != TypeScript {
		t.Fatalf("compiled as %v", p1.Lang())
	}
	p2, err := CompileAuto(src)
	if err != nil || p2 != p1 {
		t.Fatal("the second CompileAuto did not come from the cache")
	}
	js, err := CompileAuto("return 1 // plain")
	if err != nil || js.Lang() != JavaScript {
		t.Fatalf("plain JavaScript compiled as %v (%v)", js.Lang(), err)
	}
	if _, err := CompileAuto("return ("); err == nil {
		t.Fatal("a syntax error compiled")
	}
}
