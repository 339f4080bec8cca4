package httpsource

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/codemode/codemode/internal/bytesize"
	"github.com/codemode/codemode/openapi"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
)

// anyJSON is the output schema of an operation whose document declares no
// JSON response: its value is the JSON the API answers, or the text of a
// text response, or {mimeType, data} (base64) for a binary one.
const anyJSON = `{}`

// definition is the tool of one operation.
func (s *source) definition(name string, base *url.URL, op *openapi.Operation) registry.RawDefinition {
	desc := op.Description
	if desc == "" {
		desc = op.Summary
	}
	if op.Deprecated {
		desc = "Deprecated: " + desc
	}
	desc = strings.TrimSpace(desc + "\n\n" + op.Method + " " + op.Path)
	output := json.RawMessage(anyJSON)
	if op.OutputSchema != nil {
		// Responses are held to the document's shapes, not its value
		// constraints (openapi.ShapeOnly says why).
		if shape, err := openapi.ShapeOnly(op.OutputSchema); err == nil {
			output = shape
		}
	}
	hints := registry.Hints{Title: op.Summary, ReadOnly: op.ReadOnly}
	yes := true
	if op.Idempotent || op.Method == http.MethodOptions {
		hints.Idempotent = &yes
	}
	if op.Method == http.MethodDelete {
		hints.Destructive = &yes
	}
	def := registry.RawDefinition{
		Name:              name,
		Description:       desc,
		Parameters:        op.InputSchema,
		EnforceParameters: true,
		Output:            output,
		Behavior: registry.Behavior{
			Execute: s.execute(name, base, op),
			Timeout: s.cfg.Timeout.Std(),
			Hints:   hints,
		},
	}
	if op.OutputSchema == nil {
		def.Render = render
	}
	if op.ReadOnly {
		// No effects to order: its calls may overlap.
		def.IsConcurrencySafe = func(frozen.Value) bool { return true }
	}
	return def
}

// execute is an operation's body: build the request from the arguments,
// add the credentials, send it (retrying an idempotent operation), and
// turn the response into the tool's value.
func (s *source) execute(name string, base *url.URL, op *openapi.Operation) registry.ExecuteFunc {
	retries := 0
	if op.Idempotent || op.Method == http.MethodOptions {
		retries = s.cfg.Retries
	}
	return func(ctx context.Context, exec registry.Exec, args frozen.Value) (any, error) {
		req, err := build(base, op, args)
		if err != nil {
			return nil, err
		}
		if key := exec.IdempotencyKey(); key != "" && !op.ReadOnly {
			// The same on every attempt of this call (retries included), so
			// an API that honours the header applies the effect once.
			req.header.Set("Idempotency-Key", key)
		}
		ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout.Std())
		defer cancel()
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, s.fail(registry.Errorf(registry.CodeToolTimeout, "%s: no request slot within %v (max_concurrency %d)", name, s.cfg.Timeout.Std(), s.cfg.MaxConcurrency))
		}
		defer func() { <-s.slots }()
		s.calls.Add(1)
		defer s.calls.Add(-1)
		v, err := s.send(ctx, op, req, retries)
		if err != nil {
			return nil, s.fail(err)
		}
		return v, nil
	}
}

func (s *source) fail(err error) error {
	s.failures.Add(1)
	s.mu.Lock()
	s.lastErr = err.Error()
	s.mu.Unlock()
	return err
}

// send tries the request up to 1+retries times: again after a connection
// failure or a 429, 502, 503 or 504, waiting 200ms, 400ms… or the server's
// Retry-After when that is shorter than the time left.
func (s *source) send(ctx context.Context, op *openapi.Operation, r *request, retries int) (any, error) {
	what := op.Method + " " + r.url.Path
	for attempt := 0; ; attempt++ {
		resp, err := s.roundTrip(ctx, r)
		if err != nil {
			if ctx.Err() != nil || isTimeout(err) {
				return nil, registry.Errorf(registry.CodeToolTimeout, "%s: no answer within %v", what, s.cfg.Timeout.Std())
			}
			if attempt < retries && retriable(err) && s.pause(ctx, attempt, "") {
				continue
			}
			return nil, registry.Errorf(registry.CodeToolFailed, "%s: %s", what, s.secret.redact(describe(err)))
		}
		if attempt < retries && retryStatus(resp.StatusCode) {
			after := resp.Header.Get("Retry-After")
			discard(resp)
			if s.pause(ctx, attempt, after) {
				continue
			}
			return nil, registry.Errorf(registry.CodeToolFailed, "%s: %s, and no time is left to retry", what, resp.Status)
		}
		return s.result(what, op, resp)
	}
}

// roundTrip sends one attempt with the credentials added.
func (s *source) roundTrip(ctx context.Context, r *request) (*http.Response, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	u := *r.url
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if r.body != nil {
		req.Header.Set("Content-Type", r.contentType)
	}
	req.Header.Set("Accept", "application/json, */*;q=0.8")
	req.Header.Set("User-Agent", s.agent)
	if err := s.creds.apply(req); err != nil {
		return nil, err
	}
	s.requests.Add(1)
	return s.client.Do(req)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func retriable(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) && strings.Contains(ue.Err.Error(), "redirect") {
		return false // a refused redirect is final
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

func retryStatus(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusBadGateway ||
		code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout
}

// pause waits before attempt+1; false when the deadline leaves no time.
func (s *source) pause(ctx context.Context, attempt int, retryAfter string) bool {
	wait := 200 * time.Millisecond << attempt
	if secs, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && secs >= 0 {
		wait = time.Duration(secs) * time.Second
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < wait+100*time.Millisecond {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// discard drains a little of a body (so the connection may be reused) and
// closes it.
func discard(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	resp.Body.Close()
}

// describe is an error's text without the request URL (which may carry an
// API key in its query).
func describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// excerptBytes bounds the body quoted in an HTTP error.
const excerptBytes = 1 << 10

// result reads the response (up to max_response_bytes) and makes it the
// tool's value: an error status is a TOOL_FAILED error of kind
// "http_<status>" quoting the body's start; JSON is its value, text its
// string, anything else {mimeType, data} with data in base64.
func (s *source) result(what string, op *openapi.Operation, resp *http.Response) (any, error) {
	defer resp.Body.Close()
	limit := int64(s.cfg.MaxResponseBytes)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, excerptBytes+1))
		return nil, &registry.Error{
			Code:    registry.CodeToolFailed,
			Kind:    "http_" + strconv.Itoa(resp.StatusCode),
			Message: fmt.Sprintf("%s: the API answered %s%s", what, resp.Status, s.excerpt(b)),
		}
	}
	if resp.ContentLength > limit {
		return nil, registry.Errorf(registry.CodeToolFailed, "%s: the response (%d bytes) is larger than max_response_bytes (%s)", what, resp.ContentLength, bytesize.Format(limit))
	}
	b, err := readBounded(resp.Body, limit, "the response")
	if isTooLarge(err) {
		return nil, registry.Errorf(registry.CodeToolFailed, "%s: the response is larger than max_response_bytes (%s); it was not read further", what, bytesize.Format(limit))
	}
	if err != nil {
		return nil, registry.Errorf(registry.CodeToolFailed, "%s: reading the response: %s", what, s.secret.redact(describe(err)))
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case len(b) == 0:
		return frozen.MustParse("null"), nil
	case mediaType == "application/json" || strings.HasSuffix(mediaType, "+json") || (mediaType == "" && json.Valid(b)):
		v, err := frozen.Parse(b)
		if err != nil {
			return nil, registry.Errorf(registry.CodeInvalidToolOutput, "%s: the response is not valid JSON: %v", what, err)
		}
		return v, nil
	case op.OutputSchema != nil:
		return nil, registry.Errorf(registry.CodeInvalidToolOutput, "%s: the API answered %s where the document promises JSON", what, mediaType)
	case strings.HasPrefix(mediaType, "text/") || isTextual(mediaType):
		if !utf8.Valid(b) {
			b = []byte(strings.ToValidUTF8(string(b), "\uFFFD"))
		}
		return string(b), nil
	}
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	return map[string]any{"mimeType": mediaType, "data": base64.StdEncoding.EncodeToString(b)}, nil
}

func isTextual(mediaType string) bool {
	switch mediaType {
	case "application/xml", "application/yaml", "application/javascript", "application/x-www-form-urlencoded":
		return true
	}
	return strings.HasSuffix(mediaType, "+xml")
}

// excerpt quotes the start of an error body, redacted.
func (s *source) excerpt(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	cut := len(b) > excerptBytes
	if cut {
		b = b[:excerptBytes]
	}
	text := strings.ToValidUTF8(strings.TrimSpace(string(b)), "")
	if cut {
		text += "…"
	}
	return ": " + s.secret.redact(text)
}

// render shows a binary value as what it is: an image block for an image,
// an embedded resource for anything else; other values as the default.
func render(_, value frozen.Value) []registry.ContentBlock {
	if value.Kind() == "object" {
		var bin struct {
			MimeType string `json:"mimeType"`
			Data     string `json:"data"`
		}
		if value.Unmarshal(&bin) == nil && bin.MimeType != "" && bin.Data != "" {
			if strings.HasPrefix(bin.MimeType, "image/") {
				return []registry.ContentBlock{registry.Image(bin.MimeType, bin.Data)}
			}
			blob := bin.Data
			return []registry.ContentBlock{{Type: "resource", Resource: &registry.Resource{URI: "data:" + bin.MimeType, MimeType: bin.MimeType, Blob: &blob}}}
		}
	}
	return registry.DefaultRender(value)
}
