package tokens

import (
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		// One BPE merge per common word, not bytes ÷ 4.
		{"The quick brown fox jumps over the lazy dog.", 10},
		{"\xff\xfe", 1}, // invalid UTF-8 still counts
	} {
		if got := Count(c.text); got != c.want {
			t.Errorf("Count(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

func TestPerTool(t *testing.T) {
	ts := "declare class ToolCallError extends Error {}\n" +
		"declare const tools: {\n" +
		"  /** Does it, at length, with many words that cost tokens. */\n" +
		"  \"my-server.tool\"(args: {\n    q: string;\n  }): Promise<{\n    r: number;\n  }>;\n" +
		"  b(args?: X): Promise<Y>;\n" +
		"};\ntype ToolName = keyof typeof tools;\n"
	prompt := "Text.\n```ts\ndeclare const tools: {\n" +
		"/** Does it, at length, with many words that cost tokens. */ \"my-server.tool\"(args: { q: string }): Promise<{ r: number }>;\n" +
		"b(args?: X): Promise<Y>;\n};\n```\n"
	for name, text := range map[string]string{"ts": ts, "prompt": prompt} {
		s := PerTool(text)
		if s.Total != Count(text) {
			t.Errorf("%s: total %d, want %d", name, s.Total, Count(text))
		}
		if len(s.Tools) != 2 || s.Tools["my-server.tool"] <= s.Tools["b"] || s.Tools["b"] == 0 {
			t.Errorf("%s: tools %v: want my-server.tool (documented) above b, both counted", name, s.Tools)
		}
		sum := s.Shared
		for _, n := range s.Tools {
			sum += n
		}
		if sum < s.Total || sum > s.Total+len(s.Tools) {
			t.Errorf("%s: parts %v + shared %d do not add up to %d", name, s.Tools, s.Shared, s.Total)
		}
	}
	if s := PerTool("declare const tools: {};\n"); len(s.Tools) != 0 || s.Total == 0 {
		t.Errorf("an empty tool set: %+v", s)
	}
}

func FuzzPerTool(f *testing.F) {
	f.Add("declare const tools: {\n  a(x: {\n  }): Promise<void>;\n};\n")
	f.Add("declare const tools: {\n  \"\\q\"(\n")
	f.Fuzz(func(t *testing.T, text string) {
		s := PerTool(text)
		if s.Total != Count(text) || s.Shared < 0 {
			t.Fatalf("%+v", s)
		}
	})
}

// BenchmarkCount measures the tokenizer on an SDK-sized text (about 12 KB
// of declarations).
func BenchmarkCount(b *testing.B) {
	text := strings.Repeat("  /** Reads a file of the workspace. */\n  files_read(args: {\n    path: string;\n  }): Promise<{\n    content: string;\n  }>;\n", 100)
	Count("warm up")
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Count(text)
	}
}

func BenchmarkPerTool(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("declare const tools: {\n")
	for i := range 100 {
		sb.WriteString("  /** Reads a file of the workspace. */\n  files_read" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "(args: {\n    path: string;\n  }): Promise<{\n    content: string;\n  }>;\n")
	}
	sb.WriteString("};\n")
	text := sb.String()
	Count("warm up")
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		PerTool(text)
	}
}
