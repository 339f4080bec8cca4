package intl

import (
	"unicode"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/rivo/uniseg"
)

// segmenter is a resolved Intl.Segmenter. Boundaries are Unicode's default rules (UAX
// #29) from github.com/rivo/uniseg; ICU's dictionary-based word breaking of Chinese,
// Japanese and Thai is not available.
type segmenter struct {
	locale, granularity string
}

// segments is the result of segment(): the input and its boundaries in UTF-16 units.
type segments struct {
	seg    *segmenter
	input  goja.Value
	text   []string // each segment
	starts []int    // each segment's start, in UTF-16 units
	length int
}

// maxSegmentInput bounds the strings Segmenter takes, in bytes of UTF-8.
const maxSegmentInput = 1 << 24

func (e *env) installSegmenter() {
	const service = "Intl.Segmenter"
	avail := generalAvailable(mustSupplemental())
	proto := e.localeClass("Segmenter", 0, false, avail, func(args []goja.Value) any {
		r, o := e.resolveArgs(args, service, avail)
		s := &segmenter{locale: r.tag.String()}
		s.granularity = e.stringOption(o, "granularity", service, []string{"grapheme", "word", "sentence"}, "grapheme")
		return s
	})
	stateMethod(e, proto, "Segmenter", "resolvedOptions", 0, func(s *segmenter, call goja.FunctionCall) goja.Value {
		return e.object("locale", s.locale, "granularity", s.granularity)
	})

	segProto := e.rt.NewObject()
	iterProto := e.rt.NewObject()
	stateMethod(e, proto, "Segmenter", "segment", 1, func(s *segmenter, call goja.FunctionCall) goja.Value {
		input := call.Argument(0)
		str := e.toString(input)
		if len(str) > maxSegmentInput {
			e.throwRange("String too long to segment (more than %d bytes)", maxSegmentInput)
		}
		return e.instance("Segments", s.split(e.rt.ToValue(str), str), segProto)
	})
	stateMethod(e, segProto, "Segments", "containing", 1, func(ss *segments, call goja.FunctionCall) goja.Value {
		n := call.Argument(0).ToFloat()
		if n != n {
			n = 0
		}
		if n < 0 || n >= float64(ss.length) {
			return goja.Undefined()
		}
		i := ss.find(int(n))
		return e.segmentData(ss, i)
	})
	must(segProto.DefineDataPropertySymbol(goja.SymIterator, e.fn("[Symbol.iterator]", 0, func(call goja.FunctionCall) goja.Value {
		ss := e.receiver(call, "Segments", "[Symbol.iterator]").state.(*segments)
		return e.instance("SegmentIterator", &segmentIterator{segs: ss}, iterProto)
	}), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	stateMethod(e, iterProto, "SegmentIterator", "next", 0, func(it *segmentIterator, call goja.FunctionCall) goja.Value {
		if it.next >= len(it.segs.text) {
			return e.object("value", goja.Undefined(), "done", true)
		}
		v := e.segmentData(it.segs, it.next)
		it.next++
		return e.object("value", v, "done", false)
	})
	must(iterProto.DefineDataPropertySymbol(goja.SymToStringTag, e.rt.ToValue("Segmenter String Iterator"), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	must(iterProto.DefineDataPropertySymbol(goja.SymIterator, e.fn("[Symbol.iterator]", 0, func(call goja.FunctionCall) goja.Value {
		return call.This
	}), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
}

type segmentIterator struct {
	segs *segments
	next int
}

func (e *env) segmentData(ss *segments, i int) *goja.Object {
	kv := []any{"segment", ss.text[i], "index", ss.starts[i], "input", ss.input}
	if ss.seg.granularity == "word" {
		kv = append(kv, "isWordLike", isWordLike(ss.text[i]))
	}
	return e.object(kv...)
}

// find returns the segment containing UTF-16 index n.
func (ss *segments) find(n int) int {
	lo, hi := 0, len(ss.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ss.starts[mid] <= n {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func (s *segmenter) split(input goja.Value, str string) *segments {
	ss := &segments{seg: s, input: input}
	state := -1
	pos := 0
	for str != "" {
		var piece string
		switch s.granularity {
		case "word":
			piece, str, state = uniseg.FirstWordInString(str, state)
		case "sentence":
			piece, str, state = uniseg.FirstSentenceInString(str, state)
		default:
			piece, str, _, state = uniseg.FirstGraphemeClusterInString(str, state)
		}
		ss.text = append(ss.text, piece)
		ss.starts = append(ss.starts, pos)
		pos += utf16Len(piece)
	}
	ss.length = pos
	return ss
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// isWordLike is ICU's word-like status: the segment has a letter, digit or ideograph.
func isWordLike(s string) bool {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
		s = s[n:]
	}
	return false
}
