package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ContentBlock is one piece of model-facing content: what a model sees of a
// result. Its JSON is MCP's content block. Type is
//   - "text": Text set;
//   - "image" or "audio": Data is base64, MimeType set;
//   - "resource_link": URI and Name set, with optional Title, Description,
//     MimeType and Size;
//   - "resource": an embedded resource, Resource set.
//
// Annotations and Meta carry MCP's annotations (audience, priority,
// lastModified) and _meta of the block, verbatim JSON objects, so content
// that came from an MCP server reaches an MCP client whole.
type ContentBlock struct {
	Type        string    `json:"type"`
	Text        string    `json:"text,omitempty"`
	Data        string    `json:"data,omitempty"`
	MimeType    string    `json:"mimeType,omitempty"`
	URI         string    `json:"uri,omitempty"`
	Name        string    `json:"name,omitempty"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description,omitempty"`
	Size        *int64    `json:"size,omitempty"`
	Resource    *Resource `json:"resource,omitempty"`
	Annotations RawJSON   `json:"annotations,omitempty"`
	Meta        RawJSON   `json:"_meta,omitempty"`
}

// Resource is the contents of an embedded resource: text, or base64 Blob.
type Resource struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
	Meta     RawJSON `json:"_meta,omitempty"`
}

// RawJSON is a JSON value kept verbatim. It is a string, so a block that
// holds one stays comparable and immutable; "" is absent (and encodes as
// null where it is not omitted).
type RawJSON string

// MarshalJSON implements json.Marshaler.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if r == "" {
		return []byte("null"), nil
	}
	if !json.Valid([]byte(r)) {
		return nil, fmt.Errorf("registry.RawJSON holds invalid JSON")
	}
	return []byte(r), nil
}

// UnmarshalJSON implements json.Unmarshaler: it keeps the value, compacted.
func (r *RawJSON) UnmarshalJSON(b []byte) error {
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		return err
	}
	if c.String() == "null" {
		*r = ""
		return nil
	}
	*r = RawJSON(c.String())
	return nil
}

// Text returns a text content block.
func Text(s string) ContentBlock { return ContentBlock{Type: "text", Text: s} }

// Image returns an image content block holding base64 data.
func Image(mimeType, base64Data string) ContentBlock {
	return ContentBlock{Type: "image", MimeType: mimeType, Data: base64Data}
}

// IsImage reports whether the block carries an image.
func (b ContentBlock) IsImage() bool { return b.Type == "image" }

// Images returns copies of the image blocks of blocks, in order (nil when
// there are none).
func Images(blocks []ContentBlock) []ContentBlock {
	var images []ContentBlock
	for _, b := range blocks {
		if b.IsImage() {
			images = append(images, b)
		}
	}
	return CloneContent(images)
}

// CloneContent returns an independent copy of blocks (nil stays nil).
func CloneContent(blocks []ContentBlock) []ContentBlock {
	if blocks == nil {
		return nil
	}
	out := append([]ContentBlock(nil), blocks...)
	for i := range out {
		b := &out[i]
		if b.Size != nil {
			n := *b.Size
			b.Size = &n
		}
		if r := b.Resource; r != nil {
			c := *r
			if r.Text != nil {
				t := *r.Text
				c.Text = &t
			}
			if r.Blob != nil {
				d := *r.Blob
				c.Blob = &d
			}
			b.Resource = &c
		}
	}
	return out
}

// Context is a control signal carried on a result: a message the agent loop
// commits as a user/context event at the next step, keeping its source.
// Content carries non-text parts (images a Code Mode sub-call produced).
type Context struct {
	Source  string         `json:"source"`
	Text    string         `json:"text,omitempty"`
	Content []ContentBlock `json:"content,omitempty"`
}

// CloneContexts returns an independent copy of contexts, their content
// included (nil stays nil).
func CloneContexts(contexts []Context) []Context {
	if contexts == nil {
		return nil
	}
	out := make([]Context, len(contexts))
	for i, c := range contexts {
		c.Content = CloneContent(c.Content)
		out[i] = c
	}
	return out
}

// Code classifies a failed result.
type Code string

// The result codes. Every failed result carries exactly one.
const (
	CodeUnknownTool           Code = "UNKNOWN_TOOL"
	CodeInvalidArgs           Code = "INVALID_ARGS"
	CodeInvalidToolOutput     Code = "INVALID_TOOL_OUTPUT"
	CodeDenied                Code = "DENIED"
	CodeApprovalRejected      Code = "APPROVAL_REJECTED"
	CodeToolTimeout           Code = "TOOL_TIMEOUT"
	CodeAborted               Code = "ABORTED"
	CodeAbortedBeforeDispatch Code = "ABORTED_BEFORE_DISPATCH"
	CodeToolFailed            Code = "TOOL_FAILED"
	CodeCodeRunFailed         Code = "CODE_RUN_FAILED"
	CodeInternal              Code = "INTERNAL"
	// CodeSuspended: the call's ask was not answered within its hold; its
	// run suspends (runtime.ApprovalSuspended). A suspended run_code call
	// has no result yet: it resumes once its asks are answered.
	CodeSuspended Code = "SUSPENDED"
	// CodeReplayDiverged: a resumed run_code program did otherwise than the
	// log of its earlier execution says.
	CodeReplayDiverged Code = "REPLAY_DIVERGED"
)

// Error is a structured failure. A body, hook or wrapper returns one to
// choose the code (and, for CODE_RUN_FAILED, the kind) of its failure; any
// other error becomes TOOL_FAILED (or INTERNAL outside the body). Content,
// when set, replaces the default content (the message as text).
type Error struct {
	Code    Code
	Kind    string
	Message string
	Content []ContentBlock
}

func (e *Error) Error() string {
	if e.Kind != "" {
		return fmt.Sprintf("%s (%s): %s", e.Code, e.Kind, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
