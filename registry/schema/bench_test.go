package schema

import "testing"

func BenchmarkValidate(b *testing.B) {
	s := mustCompile(b, Params(map[string]*Node{
		"path":  String("").MinLen(1),
		"limit": Integer("").Min(1).Max(1000),
		"force": Boolean(""),
	}, "path"), Parameters)
	v := decode(b, `{"path":"/tmp/x","limit":10,"force":true}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if vs := s.Validate(v); vs != nil {
			b.Fatal(vs)
		}
	}
}

func BenchmarkValidateInvalid(b *testing.B) {
	s := mustCompile(b, toolParams(), Parameters)
	v := decode(b, `{"limit":0,"mode":"write","filters":[{"neg":1}],"target":7}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if vs := s.Validate(v); len(vs) == 0 {
			b.Fatal("valid")
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		mustCompile(b, toolParams(), Parameters)
	}
}
