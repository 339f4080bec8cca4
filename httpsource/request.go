package httpsource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/codemode/codemode/openapi"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
)

// request is one operation call's HTTP request, built once and sent as
// many times as it is tried.
type request struct {
	method      string
	url         *url.URL
	header      http.Header
	body        []byte
	contentType string
}

// build places each argument where the operation declares it: path
// parameters into the path template (escaped, so they can not change the
// path's shape), query and header parameters by their style, and the rest
// into the body. The URL is the base URL's origin and path followed by the
// operation's path; nothing in the arguments can change its origin.
func build(base *url.URL, op *openapi.Operation, args frozen.Value) (*request, error) {
	if args.Kind() != "object" {
		return nil, registry.Errorf(registry.CodeInvalidArgs, "takes a JSON object of arguments, got %s", args.Kind())
	}
	decoded, err := args.Decode()
	if err != nil {
		return nil, registry.Errorf(registry.CodeInvalidArgs, "arguments: %v", err)
	}
	values := decoded.(map[string]any)
	r := &request{method: op.Method, header: http.Header{}}
	path := op.Path
	query := url.Values{}
	fields := map[string]any{}
	var body any
	hasBody := false
	for _, in := range op.Inputs {
		v, ok := values[in.Name]
		if !ok || (v == nil && in.In != openapi.InField && in.In != openapi.InBody) {
			continue
		}
		switch in.In {
		case openapi.InPath:
			s, err := simple(v, in.Explode)
			if err != nil {
				return nil, argError(in.Name, err)
			}
			path = strings.ReplaceAll(path, "{"+in.Name+"}", segment(s))
		case openapi.InQuery:
			if err := addQuery(query, in, v); err != nil {
				return nil, argError(in.Name, err)
			}
		case openapi.InHead:
			s, err := simple(v, in.Explode)
			if err != nil {
				return nil, argError(in.Name, err)
			}
			if strings.ContainsAny(s, "\r\n\x00") {
				return nil, argError(in.Name, fmt.Errorf("a header value can not hold a line break or NUL"))
			}
			r.header.Set(in.Name, s)
		case openapi.InField:
			fields[in.Name] = v
			hasBody = true
		case openapi.InBody:
			body, hasBody = v, true
		}
	}
	if strings.Contains(path, "{") {
		// A template variable the document does not declare as a parameter.
		return nil, registry.Errorf(registry.CodeInvalidArgs, "path %s has a variable no argument fills", op.Path)
	}
	u, err := url.Parse(strings.TrimSuffix(base.EscapedPath(), "/") + path)
	if err != nil || u.Host != "" || u.Scheme != "" {
		return nil, registry.Errorf(registry.CodeInvalidArgs, "path %q is not a URL path", path)
	}
	u.Scheme, u.Host = base.Scheme, base.Host
	u.RawQuery = query.Encode()
	r.url = u
	if hasBody {
		if body == nil && len(fields) > 0 {
			body = fields
		}
		if r.body, r.contentType, err = encodeBody(op.ContentType, body); err != nil {
			return nil, registry.Errorf(registry.CodeInvalidArgs, "request body: %v", err)
		}
	}
	return r, nil
}

// segment escapes a path parameter: every reserved character, and the dot
// segments "." and "..", which would otherwise walk the path.
func segment(s string) string {
	if s == "." || s == ".." {
		return strings.Repeat("%2E", len(s))
	}
	return url.PathEscape(s)
}

func argError(name string, err error) error {
	return registry.Errorf(registry.CodeInvalidArgs, "argument %q: %v", name, err)
}

// scalar is a primitive's text in a URL or header.
func scalar(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("want a string, number or boolean here, got a nested %T", v)
}

// scalars is each element's text (scalar).
func scalars(list []any) ([]string, error) {
	parts := make([]string, len(list))
	for i, e := range list {
		s, err := scalar(e)
		if err != nil {
			return nil, err
		}
		parts[i] = s
	}
	return parts, nil
}

// simple serializes by the simple style: arrays as a,b,c; objects as
// k,v,k2,v2 (exploded: k=v,k2=v2).
func simple(v any, explode bool) (string, error) {
	switch x := v.(type) {
	case []any:
		parts, err := scalars(x)
		if err != nil {
			return "", err
		}
		return strings.Join(parts, ","), nil
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			s, err := scalar(x[k])
			if err != nil {
				return "", err
			}
			if explode {
				parts = append(parts, k+"="+s)
			} else {
				parts = append(parts, k, s)
			}
		}
		return strings.Join(parts, ","), nil
	}
	return scalar(v)
}

// addQuery adds a query parameter by its style: form (exploded arrays
// repeat the name, exploded objects are their own parameters),
// spaceDelimited, pipeDelimited and deepObject (name[key]=value).
func addQuery(q url.Values, in openapi.Input, v any) error {
	switch x := v.(type) {
	case []any:
		parts, err := scalars(x)
		if err != nil {
			return err
		}
		sep := ","
		switch in.Style {
		case "spaceDelimited":
			sep = " "
		case "pipeDelimited":
			sep = "|"
		}
		if in.Explode {
			q[in.Name] = append(q[in.Name], parts...)
		} else {
			q.Add(in.Name, strings.Join(parts, sep))
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			s, err := scalar(x[k])
			if err != nil {
				return err
			}
			switch {
			case in.Style == "deepObject":
				q.Add(in.Name+"["+k+"]", s)
			case in.Explode:
				q.Add(k, s)
			default:
				q.Add(in.Name, k+","+s) // joined below
			}
		}
		if in.Style != "deepObject" && !in.Explode {
			q.Set(in.Name, strings.Join(q[in.Name], ","))
		}
	default:
		s, err := scalar(v)
		if err != nil {
			return err
		}
		q.Add(in.Name, s)
	}
	return nil
}

// encodeBody encodes a body by the operation's media type: JSON (the
// default), a URL-encoded or multipart form of the object's fields, or a
// string sent as it is for any other type.
func encodeBody(mediaType string, body any) ([]byte, string, error) {
	base, _, _ := strings.Cut(mediaType, ";")
	base = strings.TrimSpace(strings.ToLower(base))
	switch {
	case base == "" || base == "application/json" || strings.HasSuffix(base, "+json"):
		b, err := json.Marshal(body)
		if mediaType == "" {
			mediaType = "application/json"
		}
		return b, mediaType, err
	case base == "application/x-www-form-urlencoded":
		obj, ok := body.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("a form body is an object of fields")
		}
		form := url.Values{}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if err := addQuery(form, openapi.Input{Name: k, Style: "form", Explode: true}, formValue(obj[k])); err != nil {
				return nil, "", fmt.Errorf("field %q: %v", k, err)
			}
		}
		return []byte(form.Encode()), mediaType, nil
	case base == "multipart/form-data":
		obj, ok := body.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("a multipart body is an object of fields")
		}
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			s, ok := obj[k].(string)
			if !ok {
				b, err := json.Marshal(obj[k])
				if err != nil {
					return nil, "", err
				}
				s = string(b)
			}
			if err := w.WriteField(k, s); err != nil {
				return nil, "", err
			}
		}
		if err := w.Close(); err != nil {
			return nil, "", err
		}
		return buf.Bytes(), w.FormDataContentType(), nil
	}
	if s, ok := body.(string); ok {
		return []byte(s), mediaType, nil
	}
	b, err := json.Marshal(body)
	return b, mediaType, err
}

// formValue is a form field's value: nested objects as JSON text.
func formValue(v any) any {
	if m, ok := v.(map[string]any); ok {
		b, _ := json.Marshal(m)
		return string(b)
	}
	return v
}
