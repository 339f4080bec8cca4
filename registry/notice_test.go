package registry_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/codemode/codemode/registry"
)

func TestNotifyReachesEveryLayer(t *testing.T) {
	var got []string
	ctx := context.Background()
	if registry.HasNotifier(ctx) {
		t.Fatal("a bare context has a notifier")
	}
	registry.Notify(ctx, registry.Notice{Kind: registry.NoticeLog}) // no notifier: nothing happens
	outer := registry.WithNotifier(ctx, registry.NotifierFunc(func(_ context.Context, n registry.Notice) { got = append(got, "outer:"+n.Message) }))
	panicky := registry.WithNotifier(outer, registry.NotifierFunc(func(context.Context, registry.Notice) { panic("boom") }))
	inner := registry.WithNotifier(panicky, registry.NotifierFunc(func(_ context.Context, n registry.Notice) { got = append(got, "inner:"+n.Message) }))
	if registry.WithNotifier(inner, nil) != inner {
		t.Fatal("a nil notifier changed the context")
	}
	registry.Notify(inner, registry.Notice{Kind: registry.NoticeProgress, Progress: 1, Message: "half"})
	registry.Notify(outer, registry.Notice{Kind: registry.NoticeLog, Message: "only outer", Data: json.RawMessage(`"x"`)})
	want := []string{"outer:half", "inner:half", "outer:only outer"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestCloneContentIsDeep(t *testing.T) {
	text, size := "body", int64(4)
	orig := []registry.ContentBlock{{
		Type: "resource", Size: &size, Annotations: `{"priority":1}`,
		Resource: &registry.Resource{URI: "file:///a", Text: &text, Meta: `{"k":1}`},
	}}
	c := registry.CloneContent(orig)
	*c[0].Size = 9
	*c[0].Resource.Text = "changed"
	c[0].Resource.URI = "file:///b"
	if *orig[0].Size != 4 || *orig[0].Resource.Text != "body" || orig[0].Resource.URI != "file:///a" {
		t.Fatalf("the clone shares memory with the original: %+v %+v", orig[0], *orig[0].Resource)
	}
	if plain := registry.Text("hi"); registry.CloneContent([]registry.ContentBlock{plain})[0] != plain {
		t.Fatal("a block without pointers is not equal to its clone")
	}
}

func TestRawJSON(t *testing.T) {
	var b registry.ContentBlock
	if err := json.Unmarshal([]byte(`{"type":"text","text":"x","annotations":{ "priority" : 0.5 },"_meta":null}`), &b); err != nil {
		t.Fatal(err)
	}
	if b.Annotations != `{"priority":0.5}` || b.Meta != "" {
		t.Fatalf("decoded %+v", b)
	}
	out, err := json.Marshal(b)
	if err != nil || string(out) != `{"type":"text","text":"x","annotations":{"priority":0.5}}` {
		t.Fatalf("encoded %s, %v", out, err)
	}
	if _, err := json.Marshal(registry.ContentBlock{Type: "text", Meta: "{not json"}); err == nil {
		t.Fatal("invalid RawJSON encoded")
	}
}
