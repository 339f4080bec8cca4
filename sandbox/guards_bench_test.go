package sandbox

import (
	"context"
	"testing"
)

// BenchmarkGuards measures what the built-in guards cost a program that uses the guarded
// built-ins: a trivial program (the guards every program gets), and one that joins,
// searches, maps, spreads and stringifies arrays of 1,000 elements 50 times. The floor,
// guards=off, runs the same compiled program with no guard installed.
func BenchmarkGuards(b *testing.B) {
	programs := map[string]string{
		"trivial":   `return 1`,
		"spread":    `const a = Array.from({length: 1000}, (_, i) => i); let n = 0; for (let i = 0; i < 50; i++) n += [...a].length; return n`,
		"join":      `const a = Array.from({length: 1000}, (_, i) => i); let n = 0; for (let i = 0; i < 50; i++) n += a.join(",").length; return n`,
		"stringify": `const a = Array.from({length: 1000}, (_, i) => i); let n = 0; for (let i = 0; i < 50; i++) n += JSON.stringify(a).length; return n`,
		"arrays": `const a = Array.from({length: 1000}, (_, i) => i);
			let n = 0;
			for (let i = 0; i < 50; i++) {
				n += a.join(",").length + a.indexOf(999) + a.map(x => x + 1).length + [...a].length + JSON.stringify(a).length;
				n += a.includes(-1) ? 1 : 0;
			}
			return n`,
	}
	for name, src := range programs {
		for _, on := range []bool{false, true} {
			compiled, err := Compile(src, JavaScript)
			if err != nil {
				b.Fatal(err)
			}
			p := *compiled // Compile's programs are cached and shared: change a copy
			label := "guards=on"
			if !on {
				p.guards, label = 0, "guards=off"
			}
			b.Run("program="+name+"/"+label, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if res := Run(context.Background(), &p, nil, Options{}); res.Err != nil {
						b.Fatal(res.Err)
					}
				}
			})
		}
	}
}
